//! Precision configs: which format the weights, activations, KV cache and attention of a model run in.
//!
//! The table keeps the original toolkit's 16 configs (seed-inventory §3) under stable keys, plus W8A8 INT8
//! and W8A16 FP8, and `fp32` (FP32 throughout, what a CPU runs natively). The matrix unit runs on the
//! activation format; a weight-only config (weights narrower than activations) dequantizes its weights to
//! the activation format first.

use std::sync::LazyLock;

use crate::error::Error;
use crate::hardware::HardwareSpec;
use crate::ops::OperandPrecisions;
use crate::precision::{ComputePath, Precision};

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
}

impl QuantConfig {
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

    /// Whether weights are stored narrower than the activations and dequantized before the multiply.
    #[must_use]
    pub fn is_weight_only(&self) -> bool {
        self.weights != self.activations && self.weights.effective_bits() < self.activations.effective_bits()
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

    /// Checks that `hardware` runs this config natively: the activation, attention and hidden formats on
    /// its matrix units, and the weight and KV formats as stored formats.
    ///
    /// # Errors
    /// [`Error::Unsupported`] naming the first format and the architecture that lacks it.
    pub fn check_support(&self, hardware: &HardwareSpec) -> Result<(), Error> {
        self.check_linear_support(hardware)?;
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
        hardware.dense_peak_for(self.activations)?;
        hardware.dense_peak_for(self.hidden())?;
        if self.is_weight_only() && self.activations.effective_bits() >= 16.0 {
            Ok(())
        } else {
            hardware.check_storage(self.weights)
        }
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

const ROWS: [Row; 19] = {
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
            },
        )
        .collect()
});

/// Every precision config, baselines first.
///
/// # Examples
/// ```
/// let keys: Vec<_> = roofline_core::quant_configs().iter().map(|c| c.key.as_str()).collect();
/// assert_eq!(&keys[..3], ["bf16", "fp16", "fp8"]);
/// assert_eq!(keys.len(), 19);
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
/// use roofline_core::{find_quant_config, Precision};
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
mod tests {
    use super::*;
    use crate::hardware::find_hardware;

    #[test]
    fn required_keys_exist_and_are_unique() {
        for key in [
            "bf16",
            "fp16",
            "fp8",
            "w8a8-int8",
            "w4a16-int4",
            "nvfp4-w4a16",
            "nvfp4-w4a4",
            "mxfp4-w4a4",
        ] {
            assert_eq!(find_quant_config(key).unwrap().key, key);
        }
        let mut keys: Vec<_> = quant_configs().iter().map(|c| c.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 19);
        assert!(
            matches!(find_quant_config("int3"), Err(Error::UnknownConfig { valid, .. }) if valid.len() == 19)
        );
    }

    fn check(hw: &str, key: &str, supported: bool) {
        let result = find_quant_config(key)
            .unwrap()
            .check_support(find_hardware(hw).unwrap());
        assert_eq!(result.is_ok(), supported, "{key} on {hw}: {result:?}");
        if let Err(e) = result {
            assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        }
    }

    #[test]
    fn support_follows_the_architecture() {
        check("a100_sxm_80gb", "bf16", true);
        check("a100_sxm_80gb", "w4a16-int4", true);
        check("a100_sxm_80gb", "w4a16-nf4", true);
        check("a100_sxm_80gb", "w8a8-int8", true);
        check("a100_sxm_80gb", "fp8", false);
        // Weight-only FP4/FP8 with 16-bit activations: dequantized in software on any FP16/BF16 path.
        check("a100_sxm_80gb", "nvfp4-w4a16", true);
        check("a100_sxm_80gb", "w8a16-fp8", true);
        check("h100_sxm", "w4a16-mxfp4", true);
        check("h200_sxm", "nvfp4-w4a16", true);
        check("l40s", "w4a16-mxfp4", true);
        // FP4 weights into FP8 activations need Blackwell's FP4 matrix operands.
        check("h100_sxm", "nvfp4-w4a8", false);
        check("b200", "nvfp4-w4a8", true);
        check("h100_sxm", "fp8", true);
        check("h100_sxm", "nvfp4-w4a4", false);
        check("h100_sxm", "w4a8-int4-fp8", true);
        check("b200", "nvfp4-w4a4", true);
        check("b200", "mxfp4-w-mxfp6-a", true);
        check("mi355x", "mxfp4-w4a4", true);
        check("mi355x", "nvfp4-w4a16", true);
        check("mi355x", "nvfp4-w4a4", false);
        check("tpu_v6e", "fp16", false);
        check("tpu_v6e", "bf16", true);
        // FP32 wherever the device publishes an FP32 peak.
        check("h100_sxm", "fp32", true);
        check("tpu_v6e", "fp32", false);
    }

    #[test]
    fn weight_only_means_narrower_weights() {
        let weight_only: Vec<_> = quant_configs()
            .iter()
            .filter(|c| c.is_weight_only())
            .map(|c| c.key.as_str())
            .collect();
        assert_eq!(
            weight_only,
            [
                "w4a16-nf4",
                "w4a16-int4",
                "w4a16-mxfp4",
                "nvfp4-w4a16",
                "nvfp4-w4a8",
                "nvfp4-w4a8-fp4kv",
                "mxfp4-w-mxfp6-a",
                "w4a8-int4-fp8",
                "w8a16-fp8"
            ]
        );
    }
}
