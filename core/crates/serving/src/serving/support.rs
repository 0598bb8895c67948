//! Which engines run a precision config on an architecture: the documented quantization support matrices of
//! vLLM, SGLang and TensorRT-LLM, per linear-layer scheme and architecture ([`engine_support`]).
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use crate::serving::Engine;
use roofline_analysis::quant_config::{LinearFormat, Module, QuantConfig};
use roofline_base::precision::{Architecture, Precision};

/// A linear-layer scheme as the engines' support matrices list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Scheme {
    /// Unquantized BF16 or FP16.
    Plain16,
    /// Unquantized FP32.
    Fp32,
    /// FP8 weights and activations, per-tensor (or per-channel / per-token) scales.
    Fp8Tensor,
    /// FP8 with 128×128 weight blocks and 1×128 activation groups.
    Fp8Block,
    /// MXFP8 weights and activations.
    Mxfp8,
    /// INT8 weights and activations (SmoothQuant).
    Int8W8A8,
    /// 8-bit weights (FP8 or INT8), 16-bit activations.
    W8A16,
    /// 4-bit integer weights (AWQ, GPTQ), 16-bit activations.
    W4A16Int,
    /// 4-bit weights, FP8 activations.
    W4A8,
    /// NVFP4 weights and activations.
    Nvfp4W4A4,
    /// NVFP4 weights, 16-bit activations.
    Nvfp4W4A16,
    /// MXFP4 weights and activations.
    Mxfp4W4A4,
    /// MXFP4 weights, 16-bit activations (gpt-oss as engines serve it).
    Mxfp4W4A16,
    /// bitsandbytes NF4 weights, 16-bit activations.
    Nf4,
    /// Any scheme none of the three matrices lists (MXFP6, MXFP4 weights with MXFP6 activations, INT2, …).
    Unlisted,
}

impl Scheme {
    /// The scheme of one linear format.
    #[must_use]
    pub const fn of(format: &LinearFormat) -> Scheme {
        use Precision as P;
        let (w, a) = (format.weights, format.activations);
        match a {
            P::Bf16 | P::Fp16 => match w {
                P::Bf16 | P::Fp16 => Scheme::Plain16,
                P::Int4 | P::Int4G128 | P::Int4G128Zp | P::Int4G32 => Scheme::W4A16Int,
                P::Fp8E4M3 | P::Fp8E5M2 | P::Fp8Block128 | P::Int8 => Scheme::W8A16,
                P::Nvfp4 => Scheme::Nvfp4W4A16,
                P::Mxfp4 => Scheme::Mxfp4W4A16,
                P::Nf4 | P::Nf4Dq => Scheme::Nf4,
                _ => Scheme::Unlisted,
            },
            P::Fp32 if matches!(w, P::Fp32) => Scheme::Fp32,
            P::Fp8E4M3 | P::Fp8E5M2 => match w {
                P::Fp8E4M3 | P::Fp8E5M2 => Scheme::Fp8Tensor,
                P::Int4 | P::Int4G128 | P::Int4G128Zp | P::Int4G32 | P::Nvfp4 | P::Mxfp4 => Scheme::W4A8,
                _ => Scheme::Unlisted,
            },
            P::Fp8Group128 => Scheme::Fp8Block,
            P::Mxfp8E4M3 | P::Mxfp8E5M2 => Scheme::Mxfp8,
            P::Int8 if matches!(w, P::Int8) => Scheme::Int8W8A8,
            P::Nvfp4 if matches!(w, P::Nvfp4) => Scheme::Nvfp4W4A4,
            P::Mxfp4 if matches!(w, P::Mxfp4) => Scheme::Mxfp4W4A4,
            _ => Scheme::Unlisted,
        }
    }

    /// The display name, e.g. `W4A8`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Scheme::Plain16 => "BF16/FP16",
            Scheme::Fp32 => "FP32",
            Scheme::Fp8Tensor => "FP8 per-tensor",
            Scheme::Fp8Block => "FP8 block-scaled",
            Scheme::Mxfp8 => "MXFP8",
            Scheme::Int8W8A8 => "INT8 W8A8",
            Scheme::W8A16 => "W8A16",
            Scheme::W4A16Int => "INT4 W4A16",
            Scheme::W4A8 => "W4A8",
            Scheme::Nvfp4W4A4 => "NVFP4 W4A4",
            Scheme::Nvfp4W4A16 => "NVFP4 W4A16",
            Scheme::Mxfp4W4A4 => "MXFP4 W4A4",
            Scheme::Mxfp4W4A16 => "MXFP4 W4A16",
            Scheme::Nf4 => "NF4 W4A16",
            Scheme::Unlisted => "unlisted scheme",
        }
    }
}

/// The architectures the matrices have columns for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Sm80,
    Sm89,
    Sm90,
    Sm100,
    Sm120,
    Gfx942,
    Gfx950,
}

impl Column {
    const fn of(arch: Architecture) -> Option<Column> {
        match arch {
            Architecture::Ampere => Some(Column::Sm80),
            Architecture::Ada => Some(Column::Sm89),
            Architecture::Hopper => Some(Column::Sm90),
            Architecture::Blackwell | Architecture::BlackwellUltra => Some(Column::Sm100),
            Architecture::BlackwellRtx => Some(Column::Sm120),
            Architecture::Cdna3 => Some(Column::Gfx942),
            Architecture::Cdna4 => Some(Column::Gfx950),
            _ => None,
        }
    }
}

use Column::{Gfx942, Gfx950, Sm80, Sm89, Sm90, Sm100, Sm120};

const NVIDIA: &[Column] = &[Sm80, Sm89, Sm90, Sm100, Sm120];
const ALL_GPUS: &[Column] = &[Sm80, Sm89, Sm90, Sm100, Sm120, Gfx942, Gfx950];
const FP8_GPUS: &[Column] = &[Sm89, Sm90, Sm100, Sm120, Gfx942, Gfx950];

/// One row: scheme, engine, the columns it runs natively on, and where that is said.
type Row = (Scheme, Engine, &'static [Column], &'static str);

/// The support matrix (sources: docs/design/core.md).
const ROWS: &[Row] = &[
    (Scheme::Plain16, Engine::Vllm, ALL_GPUS, "vLLM supported hardware"),
    (
        Scheme::Plain16,
        Engine::Sglang,
        ALL_GPUS,
        "SGLang platform compatibility",
    ),
    (
        Scheme::Plain16,
        Engine::TrtLlm,
        NVIDIA,
        "TensorRT-LLM support matrix (NVIDIA only)",
    ),
    (Scheme::Fp32, Engine::Vllm, ALL_GPUS, "vLLM --dtype float32"),
    (Scheme::Fp32, Engine::Sglang, ALL_GPUS, "SGLang --dtype float32"),
    (
        Scheme::Fp8Tensor,
        Engine::Vllm,
        FP8_GPUS,
        "vLLM docs (Ada, Hopper, AMD), CUTLASS SM100 #19566, SM120 #17280; W8A16 only on Ampere",
    ),
    (
        Scheme::Fp8Tensor,
        Engine::Sglang,
        FP8_GPUS,
        "SGLang platform compatibility",
    ),
    (
        Scheme::Fp8Tensor,
        Engine::TrtLlm,
        &[Sm89, Sm90, Sm100, Sm120],
        "TensorRT-LLM hardware support matrix",
    ),
    (
        Scheme::Fp8Block,
        Engine::Vllm,
        &[Sm90, Sm100, Sm120, Gfx942, Gfx950],
        "vLLM CUTLASS/DeepGEMM (sm_90+, #58241; SM120 #37970), Triton on AMD (#13919); Marlin W8A16 below sm_90",
    ),
    (
        Scheme::Fp8Block,
        Engine::Sglang,
        &[Sm89, Sm90, Sm100, Sm120, Gfx942, Gfx950],
        "SGLang --fp8-gemm-backend (Triton on sm_89/sm_120, aiter on AMD)",
    ),
    (
        Scheme::Fp8Block,
        Engine::TrtLlm,
        &[Sm90, Sm100],
        "TensorRT-LLM support matrix (FP32 scales on Hopper, the MXFP8 recipe on Blackwell)",
    ),
    (
        Scheme::Mxfp8,
        Engine::Vllm,
        &[Sm100],
        "vLLM FlashInfer mm_mxfp8, SM100/103 (#46393)",
    ),
    (
        Scheme::Mxfp8,
        Engine::TrtLlm,
        &[Sm100],
        "TensorRT-LLM support matrix (FP8 block scaling = MXFP8 on Blackwell)",
    ),
    (
        Scheme::Int8W8A8,
        Engine::Vllm,
        &[Sm80, Sm89, Sm90],
        "vLLM docs; CUTLASS has no INT8 on SM100/SM120 (#25935, #54311) and AMD (docs)",
    ),
    (
        Scheme::Int8W8A8,
        Engine::Sglang,
        &[Sm80, Sm89, Sm90, Gfx942, Gfx950],
        "SGLang w8a8_int8 (not stated for Blackwell)",
    ),
    (
        Scheme::Int8W8A8,
        Engine::TrtLlm,
        &[Sm80, Sm89, Sm90],
        "TensorRT-LLM legacy TensorRT backend only (support-matrix.md @03dad628)",
    ),
    (
        Scheme::W8A16,
        Engine::Vllm,
        NVIDIA,
        "vLLM Marlin (capability >= 80; Blackwell by code, no docs column)",
    ),
    (
        Scheme::W8A16,
        Engine::TrtLlm,
        &[Sm80, Sm89, Sm90],
        "TensorRT-LLM legacy TensorRT backend only",
    ),
    (
        Scheme::W4A16Int,
        Engine::Vllm,
        NVIDIA,
        "vLLM Marlin/Machete (capability >= 80; Blackwell by code; not on AMD per the docs)",
    ),
    (
        Scheme::W4A16Int,
        Engine::Sglang,
        ALL_GPUS,
        "SGLang awq/gptq/*_marlin (Triton dequantization on AMD)",
    ),
    (
        Scheme::W4A16Int,
        Engine::TrtLlm,
        &[Sm80, Sm89, Sm90],
        "TensorRT-LLM support matrix (W4A16 AWQ/GPTQ)",
    ),
    (
        Scheme::W4A8,
        Engine::Vllm,
        &[Sm90],
        "vLLM CutlassW4A8/Machete need capability 90 (#35439)",
    ),
    (
        Scheme::W4A8,
        Engine::Sglang,
        &[Sm90, Gfx942, Gfx950],
        "SGLang W4AFP8 on Hopper (#23754); quark_int4fp8_moe on CDNA3/4 (MoE experts only)",
    ),
    (
        Scheme::W4A8,
        Engine::TrtLlm,
        &[Sm89, Sm90],
        "TensorRT-LLM support matrix (W4A8 AWQ/GPTQ)",
    ),
    (
        Scheme::Nvfp4W4A4,
        Engine::Vllm,
        &[Sm100, Sm120],
        "vLLM CUTLASS/FlashInfer NVFP4 (FP4-Marlin W4A16 elsewhere)",
    ),
    (
        Scheme::Nvfp4W4A4,
        Engine::Sglang,
        &[Sm100, Sm120],
        "SGLang modelopt_fp4 (Blackwell; petit emulation on CDNA3)",
    ),
    (
        Scheme::Nvfp4W4A4,
        Engine::TrtLlm,
        &[Sm100, Sm120],
        "TensorRT-LLM support matrix",
    ),
    (
        Scheme::Nvfp4W4A16,
        Engine::Vllm,
        NVIDIA,
        "vLLM FP4-Marlin (is_fp4_marlin_supported: capability >= 80)",
    ),
    (
        Scheme::Nvfp4W4A16,
        Engine::Sglang,
        &[Gfx942],
        "SGLang petit_nvfp4 on MI250/MI300X/MI325X (NVFP4 weights dequantized)",
    ),
    (
        Scheme::Mxfp4W4A16,
        Engine::Vllm,
        ALL_GPUS,
        "vLLM mxfp4.py: Marlin (sm_80/89/120), Triton matmul_ogs (sm_90, AMD), FlashInfer MXFP4×BF16 (SM100)",
    ),
    (
        Scheme::Mxfp4W4A16,
        Engine::Sglang,
        ALL_GPUS,
        "SGLang mxfp4 (Triton, FlashInfer, Marlin; Aiter on CDNA3/4)",
    ),
    (
        Scheme::Mxfp4W4A16,
        Engine::TrtLlm,
        &[Sm90, Sm100, Sm120],
        "TensorRT-LLM support matrix (Blackwell); OpenAI Triton MoE kernels on Hopper (#7101)",
    ),
    (
        Scheme::Nf4,
        Engine::Vllm,
        &[Sm80, Sm89, Sm90],
        "vLLM supported hardware (bitsandbytes: NVIDIA up to Hopper, not AMD)",
    ),
    (
        Scheme::Mxfp4W4A4,
        Engine::Vllm,
        &[Gfx950],
        "vLLM Quark OCP MX (quark_ocp_mx.py): native MXFP4 x MXFP4 through AITER on gfx95x (supports_mx), \
         emulated elsewhere",
    ),
    (
        Scheme::Mxfp4W4A4,
        Engine::Sglang,
        &[Gfx950],
        "SGLang Quark W4A4 MXFP4 (quark_w4a4_mxfp4.py): AITER gemm_afp4wfp4, HIP only",
    ),
];

/// Why no engine row lists MXFP6 (either operand): vLLM emulates it, the others have no such scheme.
const UNLISTED_BASIS: &str = "no engine serves it natively: vLLM's Quark OCP MX scheme dequantizes MXFP6 \
     weights and quantize-dequantizes activations around a BF16 GEMM (quark_ocp_mx.py: kernels for MXFP6 \
     are not yet integrated); SGLang and TensorRT-LLM list no MXFP6 scheme";

/// One KV-cache row: engine, the cache format, the engine's setting for it, the columns it runs on, and
/// where that is said.
type KvRow = (Engine, Precision, &'static str, &'static [Column], &'static str);

/// The KV-cache formats each engine stores beyond the model's own 16-bit type (`auto`).
const KV_ROWS: &[KvRow] = &[
    (
        Engine::Vllm,
        Precision::Fp8E4M3,
        "fp8",
        FP8_GPUS,
        "vLLM --kv-cache-dtype (vllm/config/cache.py CacheDType; fp8 = E4M3)",
    ),
    (
        Engine::Vllm,
        Precision::Fp8E5M2,
        "fp8_e5m2",
        NVIDIA,
        "vLLM --kv-cache-dtype (CacheDType; E5M2 on CUDA only)",
    ),
    (
        Engine::Vllm,
        Precision::Nvfp4,
        "nvfp4",
        &[Sm100, Sm120],
        "vLLM --kv-cache-dtype nvfp4 (CacheDType @002f10e; FP4 needs Blackwell)",
    ),
    (
        Engine::Sglang,
        Precision::Fp8E4M3,
        "fp8_e4m3",
        FP8_GPUS,
        "SGLang --kv-cache-dtype (server_args.py)",
    ),
    (
        Engine::Sglang,
        Precision::Fp8E5M2,
        "fp8_e5m2",
        NVIDIA,
        "SGLang --kv-cache-dtype (server_args.py; CUDA 11.8+)",
    ),
    (
        Engine::Sglang,
        Precision::Mxfp4,
        "fp4_e2m1",
        &[Sm100, Sm120],
        "SGLang --kv-cache-dtype fp4_e2m1 (server_args.py: MXFP4 only, CUDA 12.8+)",
    ),
    (
        Engine::TrtLlm,
        Precision::Fp8E4M3,
        "fp8",
        &[Sm89, Sm90, Sm100, Sm120],
        "TensorRT-LLM KvCacheConfig.dtype (llmapi/llm_args.py)",
    ),
    (
        Engine::TrtLlm,
        Precision::Nvfp4,
        "nvfp4",
        &[Sm100, Sm120],
        "TensorRT-LLM KvCacheConfig.dtype nvfp4 (features/quantization.md, Blackwell)",
    ),
];

/// The value of `engine`'s KV-cache setting that stores a cache of `kv` on `arch`, and where the engine
/// lists it: `auto` (the model's own type) for a 16- or 32-bit cache; `None` when the engine has no such
/// cache there.
///
/// # Examples
/// ```
/// use roofline_base::{Architecture, Precision};
/// use roofline_serving::{Engine, kv_cache_dtype};
/// assert_eq!(kv_cache_dtype(Engine::Vllm, Precision::Fp8E4M3, Architecture::Hopper).unwrap().0, "fp8");
/// assert_eq!(kv_cache_dtype(Engine::Sglang, Precision::Bf16, Architecture::Hopper).unwrap().0, "auto");
/// // NVFP4 KV needs Blackwell; SGLang's FP4 cache is MXFP4.
/// assert!(kv_cache_dtype(Engine::Vllm, Precision::Nvfp4, Architecture::Hopper).is_none());
/// assert!(kv_cache_dtype(Engine::Sglang, Precision::Nvfp4, Architecture::Blackwell).is_none());
/// ```
#[must_use]
pub fn kv_cache_dtype(
    engine: Engine,
    kv: Precision,
    arch: Architecture,
) -> Option<(&'static str, &'static str)> {
    if matches!(kv, Precision::Bf16 | Precision::Fp16 | Precision::Fp32) {
        return Some(("auto", "the model's own type (every engine's default)"));
    }
    let column = Column::of(arch)?;
    KV_ROWS
        .iter()
        .find(|(e, p, _, columns, _)| *e == engine && *p == kv && columns.contains(&column))
        .map(|(_, _, value, _, source)| (*value, *source))
}

/// Why an engine does not serve a config: the sentence naming the engine, the scheme or cache and the
/// architecture, with the matrix cell behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unserved(pub String);

impl std::fmt::Display for Unserved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unserved {}

/// Whether `engine` serves `config` on `arch`: every linear scheme natively and its KV cache.
///
/// # Errors
/// [`Unserved`]: why not.
pub fn serves(engine: Engine, config: &QuantConfig, arch: Architecture) -> Result<(), Unserved> {
    for scheme in schemes(config) {
        if !runs_scheme(engine, scheme, arch) {
            let basis = match row_for(engine, scheme) {
                Some((.., source)) => (*source).to_owned(),
                None if scheme == Scheme::Unlisted => UNLISTED_BASIS.to_owned(),
                None => format!("no {} row for {}", engine.name(), scheme.name()),
            };
            return Err(Unserved(format!(
                "{} does not serve {} ({}) on {}: {basis}",
                engine.name(),
                config.name,
                scheme.name(),
                arch.name()
            )));
        }
    }
    let kv = config.kv_cache;
    if kv_cache_dtype(engine, kv, arch).is_none() {
        return Err(Unserved(format!(
            "{} has no {} KV cache on {} ({} keeps {} in it)",
            engine.name(),
            kv.name(),
            arch.name(),
            config.name,
            kv.name()
        )));
    }
    Ok(())
}

/// Whether one engine runs a config on an architecture, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EngineSupport {
    /// The engine.
    pub engine: Engine,
    /// Whether it runs every linear scheme of the config natively on the architecture.
    pub runs: bool,
    /// The matrix cells behind the verdict, one per scheme of the config.
    pub basis: String,
}

/// Whether the engines' support matrices have a column for `arch` (NVIDIA Ampere to Blackwell, AMD CDNA3
/// and CDNA4); elsewhere no engine verdict is known.
#[must_use]
pub const fn matrices_cover(arch: Architecture) -> bool {
    Column::of(arch).is_some()
}

/// The distinct linear schemes of `config`: its default format, and each module entry (head included).
#[must_use]
pub fn schemes(config: &QuantConfig) -> Vec<Scheme> {
    let mut out = vec![Scheme::of(&config.default_linear())];
    for m in &config.modules {
        let scheme = Scheme::of(&m.format);
        if !out.contains(&scheme) && (m.module.is_decoder_linear() || m.module == Module::Head) {
            out.push(scheme);
        }
    }
    out
}

fn row_for(engine: Engine, scheme: Scheme) -> Option<&'static Row> {
    ROWS.iter().find(|(s, e, ..)| *s == scheme && *e == engine)
}

/// Whether `engine` runs `scheme` natively on `arch`.
#[must_use]
pub fn runs_scheme(engine: Engine, scheme: Scheme, arch: Architecture) -> bool {
    match (Column::of(arch), row_for(engine, scheme)) {
        (Some(column), Some((_, _, columns, _))) => columns.contains(&column),
        _ => false,
    }
}

/// Each engine's verdict on `config` on `arch`, in [`Engine::ALL`] order.
///
/// # Examples
/// ```
/// use roofline_base::Architecture;
/// use roofline_analysis::find_quant_config;
/// use roofline_serving::{engine_support, Engine};
/// // W4A8 (INT4 weights, FP8 activations) on Hopper: vLLM and TensorRT-LLM, and SGLang.
/// let w4a8 = find_quant_config("w4a8-int4-fp8").unwrap();
/// let hopper = engine_support(w4a8, Architecture::Hopper);
/// assert!(hopper.iter().all(|s| s.runs));
/// // On Blackwell none of them lists it.
/// assert!(engine_support(w4a8, Architecture::Blackwell).iter().all(|s| !s.runs));
/// ```
#[must_use]
pub fn engine_support(config: &QuantConfig, arch: Architecture) -> Vec<EngineSupport> {
    let schemes = schemes(config);
    Engine::ALL
        .into_iter()
        .map(|engine| {
            let runs = schemes.iter().all(|&s| runs_scheme(engine, s, arch));
            let basis = schemes
                .iter()
                .map(|&s| {
                    let cell = match row_for(engine, s) {
                        Some((.., source)) if runs_scheme(engine, s, arch) => format!("yes ({source})"),
                        Some((.., source)) => format!("not on {} ({source})", arch.name()),
                        None if s == Scheme::Unlisted => format!("not listed: {UNLISTED_BASIS}"),
                        None => "not listed".to_owned(),
                    };
                    format!("{}: {cell}", s.name())
                })
                .collect::<Vec<_>>()
                .join("; ");
            EngineSupport { engine, runs, basis }
        })
        .collect()
}

/// The engines that run `config` natively on `arch`, in [`Engine::ALL`] order.
#[must_use]
pub fn engines_running(config: &QuantConfig, arch: Architecture) -> Vec<Engine> {
    engine_support(config, arch)
        .into_iter()
        .filter(|s| s.runs)
        .map(|s| s.engine)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_analysis::quant_config::{ModuleFormat, find_quant_config};

    fn engines(config: &str, arch: Architecture) -> Vec<Engine> {
        engines_running(find_quant_config(config).unwrap(), arch)
    }

    #[test]
    fn configs_map_to_the_matrices_cells() {
        use Architecture as A;
        use Engine as E;
        // docs/research/low-precision.md §3: (config, architecture, engines that run it).
        let cases: [(&str, Architecture, &[Engine]); 14] = [
            ("bf16", A::Hopper, &[E::Vllm, E::Sglang, E::TrtLlm]),
            ("bf16", A::Cdna3, &[E::Vllm, E::Sglang]),
            // FP8 W8A8 is no Ampere path: vLLM runs such checkpoints as W8A16.
            ("fp8", A::Ampere, &[]),
            ("fp8", A::Ada, &[E::Vllm, E::Sglang, E::TrtLlm]),
            ("fp8-block", A::Ada, &[E::Sglang]),
            ("fp8-block", A::Blackwell, &[E::Vllm, E::Sglang, E::TrtLlm]),
            ("w8a8-int8", A::Blackwell, &[]),
            ("w8a8-int8", A::Cdna3, &[E::Sglang]),
            ("w4a8-int4-fp8", A::Ada, &[E::TrtLlm]),
            ("nvfp4-w4a4", A::Blackwell, &[E::Vllm, E::Sglang, E::TrtLlm]),
            ("nvfp4-w4a4", A::Hopper, &[]),
            ("nvfp4-w4a16", A::Hopper, &[E::Vllm]),
            ("w4a16-mxfp4", A::Cdna4, &[E::Vllm, E::Sglang]),
            ("mxfp6-e3m2", A::Cdna4, &[]),
        ];
        for (config, arch, expected) in cases {
            assert_eq!(engines(config, arch), expected, "{config} on {arch:?}");
        }
        // Architectures outside the matrices run none.
        assert!(engines("bf16", A::Tpu).is_empty());
    }

    #[test]
    fn mx_formats_are_served_only_where_an_engine_has_kernels() {
        use Architecture as A;
        // MXFP4 x MXFP4: AITER on gfx950 (vLLM's and SGLang's Quark schemes); no NVIDIA engine lists it.
        assert_eq!(engines("mxfp4-w4a4", A::Cdna4), [Engine::Vllm, Engine::Sglang]);
        assert!(engines("mxfp4-w4a4", A::Blackwell).is_empty());
        // MXFP6 on either side: vLLM emulates it, so no engine serves it, and the reason says so.
        let mxfp6 = find_quant_config("mxfp6-e3m2").unwrap();
        let why = serves(Engine::Vllm, mxfp6, A::Blackwell).unwrap_err().0;
        assert!(
            why.starts_with("vLLM does not serve MXFP6 E3M2 (unlisted scheme) on Blackwell")
                && why.contains("dequantizes MXFP6"),
            "{why}"
        );
        let vllm = engine_support(mxfp6, A::Cdna4).remove(0);
        assert!(
            vllm.basis.contains("not listed: no engine serves it natively"),
            "{}",
            vllm.basis
        );
        assert!(engines("mxfp4-w-mxfp6-a", A::Cdna4).is_empty());
    }

    #[test]
    fn serving_needs_the_kv_cache_too() {
        use Architecture as A;
        let fp8 = find_quant_config("fp8").unwrap();
        assert_eq!(serves(Engine::Vllm, fp8, A::Hopper), Ok(()));
        // FP8 + NVFP4 KV: vLLM and TensorRT-LLM store NVFP4 caches on Blackwell; SGLang's FP4 cache is MXFP4.
        let fp4_kv = find_quant_config("fp8-nvfp4-kv").unwrap();
        assert_eq!(serves(Engine::Vllm, fp4_kv, A::Blackwell), Ok(()));
        assert_eq!(serves(Engine::TrtLlm, fp4_kv, A::Blackwell), Ok(()));
        let why = serves(Engine::Sglang, fp4_kv, A::Blackwell).unwrap_err().0;
        assert_eq!(
            why,
            "SGLang has no NVFP4 KV cache on Blackwell (FP8 + NVFP4 KV keeps NVFP4 in it)"
        );
        // The linear layers are checked first: W8A8 INT8 on Blackwell has no CUTLASS kernel in vLLM.
        let int8 = find_quant_config("w8a8-int8").unwrap();
        let why = serves(Engine::Vllm, int8, A::Blackwell).unwrap_err().0;
        assert!(why.contains("#25935"), "{why}");
    }

    #[test]
    fn a_mixed_checkpoint_needs_every_scheme() {
        // BF16 with MXFP4 W4A16 experts (gpt-oss) on Hopper: all three engines; with NVFP4 W4A4 experts none
        // on Hopper, and TensorRT-LLM's NVIDIA-only rows leave it out on CDNA.
        let mut gpt_oss = find_quant_config("bf16").unwrap().clone();
        gpt_oss.modules.push(ModuleFormat {
            module: Module::RoutedExperts,
            format: LinearFormat {
                weights: Precision::Mxfp4,
                ..LinearFormat::plain(Precision::Bf16)
            },
        });
        assert_eq!(schemes(&gpt_oss), [Scheme::Plain16, Scheme::Mxfp4W4A16]);
        assert_eq!(
            engines_running(&gpt_oss, Architecture::Hopper),
            [Engine::Vllm, Engine::Sglang, Engine::TrtLlm]
        );
        let verdicts = engine_support(&gpt_oss, Architecture::Cdna3);
        let trt = verdicts.iter().find(|s| s.engine == Engine::TrtLlm).unwrap();
        assert!(!trt.runs && trt.basis.contains("not on CDNA3"), "{}", trt.basis);
    }
}
