//! Precision configs: which format the weights, activations, KV cache and attention of a model run in.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use std::fmt;
use std::sync::LazyLock;

use crate::ops::OperandPrecisions;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;
use roofline_base::precision::{ActivationScale, ComputePath, Precision};

/// A group of a transformer's matrices that a checkpoint quantizes as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Module {
    /// Attention projections (Q, K, V, O; MLA's low-rank projections; linear attention's).
    Attention,
    /// The attention's output projection (`o_proj`, linear attention's `out_proj`), where a checkpoint stores
    /// it apart from the other projections (NVIDIA's DeepSeek NVFP4 checkpoints); otherwise in
    /// [`Module::Attention`]'s format.
    AttentionOutput,
    /// The FFN of dense layers (a dense model's every layer, an MoE model's dense layers).
    DenseMlp,
    /// Shared experts every token passes through (DeepSeek, Kimi, Llama 4).
    SharedExperts,
    /// Routed experts.
    RoutedExperts,
    /// The MoE router (gate).
    Router,
    /// The input embedding table.
    Embeddings,
    /// The logits head (`lm_head`).
    Head,
}

impl Module {
    /// Every module, in a layer's order.
    pub const ALL: [Module; 8] = [
        Module::Embeddings,
        Module::Attention,
        Module::AttentionOutput,
        Module::DenseMlp,
        Module::Router,
        Module::SharedExperts,
        Module::RoutedExperts,
        Module::Head,
    ];

    /// The display name, e.g. `routed experts`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Module::Attention => "attention",
            Module::AttentionOutput => "attention output",
            Module::DenseMlp => "dense MLP",
            Module::SharedExperts => "shared experts",
            Module::RoutedExperts => "routed experts",
            Module::Router => "router",
            Module::Embeddings => "embeddings",
            Module::Head => "head",
        }
    }

    /// Whether the module is a linear layer of the decoder (quantized by a config's `weights`), as opposed
    /// to the router, embeddings and head, which stay at the hidden precision by default.
    #[must_use]
    pub const fn is_decoder_linear(self) -> bool {
        matches!(
            self,
            Module::Attention
                | Module::AttentionOutput
                | Module::DenseMlp
                | Module::SharedExperts
                | Module::RoutedExperts
        )
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The format of a linear layer: weights, activations (the compute path) and how a narrow activation's scale
/// is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LinearFormat {
    /// Weight format.
    pub weights: Precision,
    /// Input activation format; the matrix-unit path.
    pub activations: Precision,
    /// How an FP8 or INT8 activation scale is found at run time.
    #[cfg_attr(feature = "serde", serde(default))]
    pub activation_scale: ActivationScale,
}

impl LinearFormat {
    /// Both operands in `p` (an unquantized layer).
    #[must_use]
    pub const fn plain(p: Precision) -> LinearFormat {
        LinearFormat {
            weights: p,
            activations: p,
            activation_scale: ActivationScale::DynamicPerTensor,
        }
    }

    /// `BF16`, `FP8_E4M3 W8A8`, `MXFP4 weights, BF16 activations`: what the layer stores and computes in.
    #[must_use]
    pub fn label(&self) -> String {
        if self.weights == self.activations {
            self.weights.name().to_owned()
        } else {
            format!("{} weights, {} activations", self.weights, self.activations)
        }
    }
}

/// One module whose format differs from its config's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ModuleFormat {
    /// The module.
    pub module: Module,
    /// Its format.
    pub format: LinearFormat,
}

/// Module formats grouped by format, in the order given: `attention, head: BF16 · routed experts: MXFP4
/// weights, BF16 activations` (what [`crate::ModelAnalysis::modules`] lists, as one line).
#[must_use]
pub fn summarize_modules(formats: &[ModuleFormat]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for m in formats {
        let label = m.format.label();
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, names)) => names.push(m.module.name()),
            None => groups.push((label, vec![m.module.name()])),
        }
    }
    groups
        .iter()
        .map(|(label, names)| format!("{}: {label}", names.join(", ")))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A precision config for a whole model.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct QuantConfig {
    /// Stable key, e.g. `nvfp4-w4a16`.
    pub key: String,
    /// Display name, e.g. `NVFP4 W4A16`.
    pub name: String,
    /// Format of the linear-layer weights (embeddings and the logits head stay at the hidden precision).
    pub weights: Precision,
    /// Format of the linear-layer input activations; also the matrix-unit compute path.
    pub activations: Precision,
    /// Format of the KV cache.
    pub kv_cache: Precision,
    /// Format the attention matmuls (QKᵀ, P·V) run in.
    pub attention: Precision,
    /// How such a checkpoint is usually produced, e.g. `AWQ`, `native FP4`.
    pub method: String,
    /// How an FP8 or INT8 activation scale is found at run time (block formats carry theirs); configs stored
    /// before the field existed read as dynamic per-tensor.
    #[cfg_attr(feature = "serde", serde(default))]
    pub activation_scale: ActivationScale,
    /// Modules whose format differs from `weights` × `activations` (decoder linear layers) or from the
    /// hidden precision (router, embeddings, head); empty for a uniform config.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub modules: Vec<ModuleFormat>,
}

impl QuantConfig {
    /// The config of a published checkpoint (key `checkpoint`): its decoder linear layers in `base` unless
    /// `modules` says otherwise, the KV cache (and the attention matmuls) in `kv_cache`, or at the hidden
    /// precision when the checkpoint leaves it alone; `method` says how it was produced.
    #[must_use]
    pub fn checkpoint(
        method: &str,
        base: LinearFormat,
        kv_cache: Option<Precision>,
        modules: Vec<ModuleFormat>,
    ) -> QuantConfig {
        let kv_cache = kv_cache.unwrap_or_else(|| base.activations.default_output());
        QuantConfig {
            key: "checkpoint".to_owned(),
            name: format!("checkpoint: {method}"),
            weights: base.weights,
            activations: base.activations,
            kv_cache,
            attention: kv_cache,
            method: format!("{method}, as the checkpoint's quantization_config says"),
            activation_scale: base.activation_scale,
            modules,
        }
    }

    /// The formats of `modules`, grouped: `attention, head: BF16 · routed experts: MXFP4 weights, BF16
    /// activations` (modules sharing a format listed together, in the order given).
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::{find_model, find_quant_config};
    /// let gpt_oss = find_model("gpt-oss-120b").unwrap();
    /// let summary = gpt_oss.checkpoint_config().module_summary(&gpt_oss.modules());
    /// assert_eq!(summary, "attention, router, embeddings, head: BF16 · routed experts: MXFP4 weights, BF16 activations");
    /// ```
    #[must_use]
    pub fn module_summary(&self, modules: &[Module]) -> String {
        let formats: Vec<ModuleFormat> = modules
            .iter()
            .map(|&module| ModuleFormat {
                module,
                format: self.format(module),
            })
            .collect();
        summarize_modules(&formats)
    }

    /// The precision the matrix unit runs linear layers on (the activation format).
    #[must_use]
    pub const fn compute(&self) -> Precision {
        self.activations
    }

    /// The compute path of the linear layers.
    #[must_use]
    pub const fn compute_path(&self) -> ComputePath {
        self.activations.compute_path()
    }

    /// Precision of the residual stream, elementwise operators, embeddings and the logits head: the GEMM
    /// output format of the activations ([`Precision::default_output`]: BF16 stays BF16, narrower
    /// formats give FP16).
    #[must_use]
    pub const fn hidden(&self) -> Precision {
        self.activations.default_output()
    }

    /// Whether weights are stored narrower than the activations and dequantized before the multiply (fewer
    /// bits per element; block scales aside, so FP8 128×128 weights with 1×128 activations are not).
    #[must_use]
    pub fn is_weight_only(&self) -> bool {
        self.weights.element_bits() < self.activations.element_bits()
    }

    /// Operand precisions of a linear layer: weights, activations, output at [`QuantConfig::hidden`].
    #[must_use]
    pub const fn linear(&self) -> OperandPrecisions {
        OperandPrecisions {
            weight: self.weights,
            activation: self.activations,
            output: self.hidden(),
        }
    }

    /// The format of the decoder's linear layers unless a module says otherwise.
    #[must_use]
    pub const fn default_linear(&self) -> LinearFormat {
        LinearFormat {
            weights: self.weights,
            activations: self.activations,
            activation_scale: self.activation_scale,
        }
    }

    /// The format `module` runs in: its entry in [`QuantConfig::modules`], else (the attention output) the
    /// attention's, else the default linear format for decoder linear layers and the hidden precision for
    /// the router, embeddings and head.
    #[must_use]
    pub fn format(&self, module: Module) -> LinearFormat {
        match self.modules.iter().find(|m| m.module == module) {
            Some(m) => m.format,
            None if module == Module::AttentionOutput => self.format(Module::Attention),
            None => self.default_format(module),
        }
    }

    /// The format of `module` without module entries.
    fn default_format(&self, module: Module) -> LinearFormat {
        if module.is_decoder_linear() {
            self.default_linear()
        } else {
            LinearFormat::plain(self.hidden())
        }
    }

    /// Operand precisions of `module`'s matrices: its [`QuantConfig::format`], output at the hidden precision.
    #[must_use]
    pub fn linear_for(&self, module: Module) -> OperandPrecisions {
        let f = self.format(module);
        OperandPrecisions {
            weight: f.weights,
            activation: f.activations,
            output: self.hidden(),
        }
    }

    /// Whether every decoder linear layer runs in the default format and the router, embeddings and head at
    /// the hidden precision.
    #[must_use]
    pub fn is_uniform(&self) -> bool {
        self.modules
            .iter()
            .all(|m| m.format == self.default_format(m.module))
    }

    /// Checks that `hardware` runs this config natively: the activation, attention and hidden formats on
    /// its matrix units, and the weight and KV formats as stored formats.
    ///
    /// # Errors
    /// [`Error::Unsupported`] naming the first format and the architecture that lacks it.
    pub fn check_support(&self, hardware: &HardwareSpec) -> Result<(), Error> {
        self.check_linear_support(hardware)?;
        for m in &self.modules {
            check_format_support(&m.format, self.hidden(), hardware)?;
        }
        hardware.dense_peak_for(self.attention)?;
        hardware.check_storage(self.kv_cache)
    }

    /// Checks the linear layers alone: activation and hidden formats on the matrix units, and the weight format
    /// stored. Support follows the compute path: weight-only configs with 16-bit activations (W4A16, W8A16)
    /// decode their weights to the activation format in software before the multiply, so any weight format
    /// works on any device with that path (MXFP4 weights on Hopper, as engines serve gpt-oss); with narrower
    /// activations (W4A8) the matrix units take the weights, so the architecture must know their format.
    ///
    /// # Errors
    /// [`Error::Unsupported`] naming the first format and the architecture that lacks it.
    pub fn check_linear_support(&self, hardware: &HardwareSpec) -> Result<(), Error> {
        check_format_support(&self.default_linear(), self.hidden(), hardware)
    }
}

/// [`QuantConfig::check_linear_support`] of one linear format with outputs in `hidden`.
fn check_format_support(
    format: &LinearFormat,
    hidden: Precision,
    hardware: &HardwareSpec,
) -> Result<(), Error> {
    hardware.dense_peak_for(format.activations)?;
    hardware.dense_peak_for(hidden)?;
    let weight_only = format.weights.element_bits() < format.activations.element_bits();
    if weight_only && format.activations.effective_bits() >= 16.0 {
        Ok(())
    } else {
        hardware.check_storage(format.weights)
    }
}

/// One table row: key, name, weights, activations, KV cache, attention, method.
type Row = (
    &'static str,
    &'static str,
    Precision,
    Precision,
    Precision,
    Precision,
    &'static str,
);

/// How each config's FP8 or INT8 activations are scaled where it is not the default, dynamic per-tensor (the
/// `fp8` method of vLLM and of DeepSeek-style checkpoints, `activation_scheme: dynamic`): W8A8 INT8 as
/// SmoothQuant checkpoints run in vLLM and SGLang, per token (compressed-tensors W8A8 `strategy: token`,
/// nm-testing W8A8 configs, docs/research/low-precision.md §4).
const SCALES: [(&str, ActivationScale); 1] = [("w8a8-int8", ActivationScale::DynamicPerToken)];

const ROWS: [Row; 21] = {
    use Precision::*;
    [
        ("bf16", "BF16 baseline", Bf16, Bf16, Bf16, Bf16, "none"),
        ("fp16", "FP16", Fp16, Fp16, Fp16, Fp16, "none"),
        (
            "fp8",
            "FP8 E4M3",
            Fp8E4M3,
            Fp8E4M3,
            Fp8E4M3,
            Fp8E4M3,
            "native FP8 (PTQ)",
        ),
        (
            "fp8-nvfp4-kv",
            "FP8 + NVFP4 KV",
            Fp8E4M3,
            Fp8E4M3,
            Nvfp4,
            Fp8E4M3,
            "native FP8, FP4 KV cache",
        ),
        (
            "mxfp8",
            "MXFP8 E4M3",
            Mxfp8E4M3,
            Mxfp8E4M3,
            Mxfp8E4M3,
            Fp8E4M3,
            "native MXFP8",
        ),
        (
            "w4a16-nf4",
            "W4A16 NF4 (bitsandbytes)",
            Nf4,
            Fp16,
            Fp16,
            Fp16,
            "bitsandbytes NF4",
        ),
        (
            "w4a16-int4",
            "W4A16 INT4 (AWQ)",
            Int4G128Zp,
            Fp16,
            Fp16,
            Fp16,
            "AWQ",
        ),
        (
            "w4a16-mxfp4",
            "W4A16 MXFP4",
            Mxfp4,
            Fp16,
            Fp16,
            Fp16,
            "MXFP4 weight-only",
        ),
        (
            "nvfp4-w4a16",
            "NVFP4 W4A16",
            Nvfp4,
            Fp16,
            Fp16,
            Fp16,
            "NVFP4 weight-only",
        ),
        (
            "nvfp4-w4a4",
            "NVFP4 W4A4",
            Nvfp4,
            Nvfp4,
            Nvfp4,
            Fp8E4M3,
            "native FP4",
        ),
        (
            "nvfp4-w4a8",
            "NVFP4 W4A8",
            Nvfp4,
            Fp8E4M3,
            Fp8E4M3,
            Fp8E4M3,
            "NVFP4 weights, dynamic FP8 activations",
        ),
        (
            "nvfp4-w4a8-fp4kv",
            "NVFP4 W4A8 + FP4 KV",
            Nvfp4,
            Fp8E4M3,
            Nvfp4,
            Fp8E4M3,
            "NVFP4 weights, FP8 activations",
        ),
        (
            "mxfp4-w4a4",
            "MXFP4 W4A4",
            Mxfp4,
            Mxfp4,
            Mxfp4,
            Fp8E4M3,
            "native MXFP4",
        ),
        (
            "mxfp6-e3m2",
            "MXFP6 E3M2",
            Mxfp6E3M2,
            Mxfp6E3M2,
            Mxfp6E3M2,
            Fp8E4M3,
            "native MXFP6",
        ),
        (
            "mxfp4-w-mxfp6-a",
            "MXFP4 weights, MXFP6 activations",
            Mxfp4,
            Mxfp6E3M2,
            Fp8E4M3,
            Fp8E4M3,
            "mixed MX",
        ),
        (
            "w4a8-int4-fp8",
            "INT4 weights, FP8 activations",
            Int4G128,
            Fp8E4M3,
            Fp8E4M3,
            Fp8E4M3,
            "W4A8 (AWQ)",
        ),
        (
            "w8a8-int8",
            "W8A8 INT8 (SmoothQuant)",
            Int8,
            Int8,
            Fp16,
            Fp16,
            "SmoothQuant",
        ),
        (
            "w8a16-fp8",
            "W8A16 FP8 weight-only",
            Fp8E4M3,
            Fp16,
            Fp16,
            Fp16,
            "FP8 weight-only",
        ),
        // FP32 throughout: what a CPU (or an FP32-only path) runs natively, e.g. the CPU backend's model steps.
        ("fp32", "FP32", Fp32, Fp32, Fp32, Fp32, "none"),
        // DeepSeek-V3 / Qwen3-FP8 checkpoints: FP32 scales per 128×128 weight block and per 1×128 activation
        // group (DeepSeek-V3 README_WEIGHTS.md); engines keep the KV cache at the model's 16-bit type unless
        // told otherwise (vLLM `kv_cache_dtype` "auto"), or FP8 with `--kv-cache-dtype fp8`.
        (
            "fp8-block",
            "FP8 block-scaled (128×128 / 1×128)",
            Fp8Block128,
            Fp8Group128,
            Fp16,
            Fp16,
            "FP8 block-scaled checkpoint (DeepSeek-V3, Qwen3-FP8)",
        ),
        (
            "fp8-block-fp8kv",
            "FP8 block-scaled + FP8 KV",
            Fp8Block128,
            Fp8Group128,
            Fp8E4M3,
            Fp8E4M3,
            "FP8 block-scaled checkpoint, FP8 KV cache",
        ),
    ]
};

static CONFIGS: LazyLock<Vec<QuantConfig>> = LazyLock::new(|| {
    ROWS.iter()
        .map(
            |&(key, name, weights, activations, kv_cache, attention, method)| QuantConfig {
                key: key.to_owned(),
                name: name.to_owned(),
                weights,
                activations,
                kv_cache,
                attention,
                method: method.to_owned(),
                activation_scale: SCALES
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map_or(ActivationScale::DynamicPerTensor, |&(_, s)| s),
                modules: Vec::new(),
            },
        )
        .collect()
});

/// Every precision config, baselines first.
///
/// # Examples
/// ```
/// let keys: Vec<_> = roofline_analysis::quant_configs().iter().map(|c| c.key.as_str()).collect();
/// assert_eq!(&keys[..3], ["bf16", "fp16", "fp8"]);
/// assert_eq!(keys.len(), 21);
/// ```
#[must_use]
pub fn quant_configs() -> &'static [QuantConfig] {
    &CONFIGS
}

/// Looks a precision config up by key (case-insensitive; `_` and `-` are interchangeable).
///
/// # Errors
/// [`Error::UnknownConfig`] listing every valid key.
///
/// # Examples
/// ```
/// use roofline_base::Precision;
/// use roofline_analysis::find_quant_config;
/// let awq = find_quant_config("w4a16-int4").unwrap();
/// assert_eq!((awq.weights, awq.compute()), (Precision::Int4G128Zp, Precision::Fp16));
/// assert!(awq.is_weight_only());
/// ```
pub fn find_quant_config(key: &str) -> Result<&'static QuantConfig, Error> {
    let wanted = key.trim().to_ascii_lowercase().replace('_', "-");
    quant_configs()
        .iter()
        .find(|c| c.key == wanted)
        .ok_or_else(|| Error::UnknownConfig {
            key: key.to_owned(),
            valid: quant_configs().iter().map(|c| c.key.clone()).collect(),
        })
}

#[cfg(test)]
mod tests;
