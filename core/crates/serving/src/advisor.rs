//! Quantization advice: the precision configs a device runs natively, ranked by predicted time.
//!
//! Candidates are every config that passes [`QuantConfig::check_support`] on the device, except the one the
//! user already runs. Speedups are against the BF16 baseline (FP16 where the device lacks BF16, FP32 where it
//! has neither, as a CPU). Caveats (accuracy, memory fit) are warnings on the result, never errors. For a
//! model, every candidate also says the smallest tensor-parallel group (1, 2, 4 or 8 GPUs within the device's scale-up domain) whose per-GPU
//! weights and KV cache fit ([`Candidate::min_gpus`]).

use crate::serving::{Engine, engines_running};
use roofline_analysis::analysis::{Workload, analyze_model_parallel};
use roofline_analysis::corrections::{Corrections, analyze_linear};
use roofline_analysis::memory::{MemoryFraction, device_capacity_bytes, step_memory};
use roofline_analysis::model::ModelConfig;
use roofline_analysis::ops::GemmShape;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::{QuantConfig, quant_configs};
use roofline_analysis::roofline::Bound;
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Mode};

/// Tensor-parallel degrees the advisor tries for memory fit, smallest first.
pub const TENSOR_PARALLEL_DEGREES: [u32; 4] = [1, 2, 4, 8];

/// One ranked candidate config.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Candidate {
    /// Config key.
    pub config: String,
    /// Config display name.
    pub name: String,
    /// Predicted time (model: the step; operator: the GEMM), in seconds.
    pub time_s: f64,
    /// Baseline time / this time.
    pub speedup: f64,
    /// Current config's time / this time (`None` when the current config does not run on the device).
    pub speedup_vs_current: Option<f64>,
    /// Memory needed (model: one GPU's weights, profiled activations and KV cache; operator: weights), in
    /// bytes.
    pub memory_bytes: f64,
    /// Baseline memory − this memory, in bytes (negative when it needs more).
    pub memory_saved_bytes: f64,
    /// Whether it fits under the engine's memory rule ([`roofline_analysis::memory::step_memory`]; operator: weights within the
    /// device's memory).
    pub fits_in_memory: bool,
    /// Model advice: the smallest tensor-parallel degree of [`TENSOR_PARALLEL_DEGREES`] within the device's
    /// scale-up domain whose per-GPU weights and KV cache fit (`None`: none does, or operator advice).
    pub min_gpus: Option<u32>,
    /// The roof that limits it.
    pub bound: Bound,
    /// For weight-only configs: the batch (tokens per GEMM) at which the largest weight GEMM crosses the
    /// ridge point and becomes compute-bound; beyond it the narrow weights stop saving time.
    pub break_even_batch: Option<u32>,
    /// Why it ranks where it does, from the numbers.
    pub reason: String,
    /// Caveats specific to this candidate.
    pub caveats: Vec<String>,
    /// The serving engines that run it natively on the device's architecture ([`engines_running`]).
    pub engines: Vec<Engine>,
}

/// A config that was not considered, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Skipped {
    /// Config key.
    pub config: String,
    /// The reason (the device's missing format).
    pub reason: String,
}

/// Quantization advice: candidates fastest first, the configs skipped, and warnings.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Advice {
    /// The ceilings the times come from ([`Mode::of`] the spec).
    pub mode: Mode,
    /// Baseline config key the speedups refer to (`bf16`, or `fp16` without BF16).
    pub baseline: String,
    /// The config the user runs now (never a candidate).
    pub current: String,
    /// Predicted time of the current config, in seconds, when the device runs it.
    pub current_time_s: Option<f64>,
    /// Supported configs other than the current one, fastest first.
    pub candidates: Vec<Candidate>,
    /// Configs the device cannot run natively.
    pub skipped: Vec<Skipped>,
    /// Caveats about the advice as a whole.
    pub warnings: Vec<String>,
}

/// What the advisor needs to know about one config on the device.
struct Evaluation {
    time_s: f64,
    memory_bytes: f64,
    fits: bool,
    bound: Bound,
    min_gpus: Option<u32>,
}

/// The smallest degree of [`TENSOR_PARALLEL_DEGREES`] that `model` under `config` may be split into on
/// `hardware` ([`Parallelism::check`]) and whose per-GPU memory fits under the engine's `fraction`
/// ([`step_memory`], the analysis's own rule).
fn smallest_fitting_group(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    workload: &Workload,
    fraction: MemoryFraction,
) -> Option<u32> {
    TENSOR_PARALLEL_DEGREES.into_iter().find(|&t| {
        let p = Parallelism::tensor(t);
        p.check(model, hardware).is_ok() && {
            let (_, kv) = p.memory_per_gpu_bytes(model, config, workload.batch, workload.context);
            step_memory(hardware, &p.shard(model), model.vocab, config, fraction, kv).fits()
        }
    })
}

/// The GEMM whose ridge crossing decides a weight-only config's break-even batch.
struct RidgeGemm {
    n: u64,
    k: u64,
    /// Tokens that must enter the step for one GEMM to see one more row (MoE: experts / top_k).
    tokens_per_row: f64,
}

/// Advice for a whole model on `hardware` under `workload`, excluding `current_config`: every precision config
/// of the table and, for a model with one, its checkpoint's own (`checkpoint`).
///
/// # Errors
/// [`Error::UnknownConfig`] for an unknown `current_config`; [`Error::InvalidInput`] for an invalid
/// workload or model; [`Error::Unsupported`] when the device runs neither BF16 nor FP16 nor the current
/// config (no baseline).
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let a100 = find_hardware("a100_sxm_80gb").unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let advice = advise_model(a100, model, &decode, "bf16", &Corrections::NONE).unwrap();
/// // Weight-only 4-bit wins memory-bound decode on Ampere; FP8 compute is never offered there (no FP8
/// // path), while FP4 weights dequantized to FP16 are.
/// let best = find_quant_config(&advice.candidates[0].config).unwrap();
/// assert!(best.is_weight_only() && best.weights.effective_bits() < 5.0);
/// assert!(advice.candidates.iter().all(|c| c.config != "fp8"));
/// assert!(advice.candidates.iter().any(|c| c.config == "w4a16-mxfp4"));
/// ```
pub fn advise_model(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    current_config: &str,
    corrections: &Corrections,
) -> Result<Advice, Error> {
    advise_model_parallel(
        hardware,
        model,
        workload,
        &Parallelism::SINGLE,
        current_config,
        corrections,
    )
}

/// [`advise_model`] with the step split over GPUs as `parallelism` says: times, memory and fit are per GPU
/// ([`roofline_analysis::analysis::analyze_model_parallel`]); [`Candidate::min_gpus`] is independent of `parallelism`.
///
/// # Errors
/// As [`advise_model`], and the errors of [`Parallelism::check`].
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h200 = find_hardware("h200_sxm").unwrap();
/// let model = find_model("deepseek-v3").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let advice = advise_model(h200, model, &decode, "bf16", &Corrections::NONE).unwrap();
/// // 671B parameters in FP8 need ~84 GB per GPU on 8 GPUs, more than 141 GB on 4.
/// let fp8 = advice.candidates.iter().find(|c| c.config == "fp8").unwrap();
/// assert_eq!(fp8.min_gpus, Some(8));
/// ```
pub fn advise_model_parallel(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    parallelism: &Parallelism,
    current_config: &str,
    corrections: &Corrections,
) -> Result<Advice, Error> {
    let ridge_gemm = match model.moe {
        Some(m) if model.moe_layers() > 0 => RidgeGemm {
            n: if model.gated_ffn {
                2 * m.expert_ffn
            } else {
                m.expert_ffn
            },
            k: model.hidden,
            tokens_per_row: m.experts as f64 / m.top_k as f64,
        },
        _ => RidgeGemm {
            n: if model.gated_ffn {
                2 * model.ffn_dim
            } else {
                model.ffn_dim
            },
            k: model.hidden,
            tokens_per_row: 1.0,
        },
    };
    let configs = model.candidate_configs();
    // A model without checkpoint precisions is stored in BF16.
    let current_config = match current_config.trim() {
        c if c.eq_ignore_ascii_case("checkpoint") && model.checkpoint.is_none() => "bf16",
        c => c,
    };
    advise(hardware, &configs, current_config, &ridge_gemm, |config| {
        let a = analyze_model_parallel(hardware, model, config, workload, parallelism, corrections)?;
        Ok(Evaluation {
            time_s: a.total_time_s,
            memory_bytes: a.memory_required_bytes,
            fits: a.fits_in_memory,
            bound: a.bound,
            min_gpus: smallest_fitting_group(hardware, model, config, workload, corrections.memory),
        })
    })
}

/// Advice for one linear layer (a GEMM or batched GEMM of `shape`) on `hardware`, excluding
/// `current_config`: each config's time is its GEMM plus, with the activation-quantization correction, the
/// kernels that quantize its input ([`analyze_linear`]). Memory is the layer's weight bytes.
///
/// # Errors
/// As [`advise_model`], and [`Error::InvalidInput`] for a zero or oversized dimension.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let gemv = GemmShape { batch: 1, m: 1, n: 4096, k: 4096 };
/// let advice = advise_operator(h100, gemv, "bf16", &Corrections::NONE).unwrap();
/// assert!(advice.candidates[0].speedup > 3.0);
/// let awq = advice.candidates.iter().find(|c| c.config == "w4a16-int4").unwrap();
/// // 4-bit weights stop paying off once ~90 tokens share each weight read (H100 ridge 295 FLOP/B).
/// assert_eq!(awq.break_even_batch, Some(90));
/// ```
pub fn advise_operator(
    hardware: &HardwareSpec,
    shape: GemmShape,
    current_config: &str,
    corrections: &Corrections,
) -> Result<Advice, Error> {
    let ridge_gemm = RidgeGemm {
        n: shape.n,
        k: shape.k,
        tokens_per_row: 1.0,
    };
    advise(hardware, quant_configs(), current_config, &ridge_gemm, |config| {
        config.check_linear_support(hardware)?;
        let a = analyze_linear(
            hardware,
            shape,
            config.linear(),
            config.hidden(),
            config.activation_scale,
            corrections,
        )?;
        Ok(Evaluation {
            time_s: a.time_s,
            memory_bytes: a.gemm.weight_bytes,
            fits: a.gemm.weight_bytes <= device_capacity_bytes(hardware),
            bound: a.gemm.bound,
            min_gpus: None,
        })
    })
}

fn advise(
    hardware: &HardwareSpec,
    configs: &[QuantConfig],
    current_config: &str,
    ridge_gemm: &RidgeGemm,
    evaluate: impl Fn(&QuantConfig) -> Result<Evaluation, Error>,
) -> Result<Advice, Error> {
    let wanted = current_config.trim().to_ascii_lowercase().replace('_', "-");
    let current = configs
        .iter()
        .find(|c| c.key == wanted)
        .ok_or_else(|| Error::UnknownConfig {
            key: current_config.to_owned(),
            valid: configs.iter().map(|c| c.key.clone()).collect(),
        })?;
    let mut evaluated = Vec::with_capacity(configs.len());
    let mut skipped = Vec::new();
    for config in configs {
        match evaluate(config) {
            Ok(e) => evaluated.push((config, e)),
            Err(Error::Unsupported {
                precision,
                path,
                arch,
                ..
            }) => skipped.push(Skipped {
                config: config.key.clone(),
                reason: format!("{precision} ({path}) is not native on {arch}"),
            }),
            Err(e) => return Err(e),
        }
    }
    let find = |key: &str| evaluated.iter().find(|(c, _)| c.key == key);
    let (baseline, base) = find("bf16")
        .or_else(|| find("fp16"))
        .or_else(|| find("fp32"))
        .or_else(|| find(&current.key))
        .ok_or_else(|| hardware.unsupported(roofline_base::precision::Precision::Bf16))?;
    let current_time_s = find(&current.key).map(|(_, e)| e.time_s);
    let mut warnings = vec![
        "Accuracy is not modelled: validate every candidate on your task (4-bit and W4A4 formats need calibration)."
            .to_owned(),
    ];
    match find(&current.key) {
        None => warnings.push(format!(
            "The current config {} does not run natively on the {}.",
            current.name, hardware.name
        )),
        Some((_, e)) if !e.fits => warnings.push(format!(
            "The current config {} needs {}; the {} has {}.",
            current.name,
            roofline_base::format::capacity(e.memory_bytes),
            hardware.name,
            roofline_base::format::capacity(device_capacity_bytes(hardware))
        )),
        Some(_) => {}
    }
    if baseline.key != "bf16" {
        // A path the architecture has without a figure in the catalog is unknown, not missing.
        let arch = hardware.arch;
        let why = if arch != roofline_base::precision::Architecture::Custom
            && arch.runs_path(roofline_base::precision::ComputePath::Bf16)
        {
            "no published BF16 figure"
        } else {
            "no BF16 path"
        };
        warnings.push(format!(
            "The {} has {why}; speedups are against {}.",
            hardware.name, baseline.name
        ));
    }
    let mut candidates: Vec<Candidate> = evaluated
        .iter()
        .filter(|(c, _)| c.key != current.key)
        .map(|(config, e)| {
            let break_even_batch = if config.is_weight_only() {
                break_even_batch(hardware, config, ridge_gemm)
            } else {
                None
            };
            candidate(hardware, config, e, base, current_time_s, break_even_batch)
        })
        .collect();
    candidates.sort_by(|a, b| {
        a.time_s
            .total_cmp(&b.time_s)
            .then(a.memory_bytes.total_cmp(&b.memory_bytes))
    });
    if let Some(current_time) = current_time_s
        && candidates.first().is_none_or(|c| c.time_s >= current_time)
    {
        warnings.push(format!(
            "No supported config is faster than '{}' here.",
            current.key
        ));
    }
    Ok(Advice {
        mode: Mode::of(hardware),
        baseline: baseline.key.clone(),
        current: current.key.clone(),
        current_time_s,
        candidates,
        skipped,
        warnings,
    })
}

fn candidate(
    hardware: &HardwareSpec,
    config: &QuantConfig,
    e: &Evaluation,
    base: &Evaluation,
    current_time_s: Option<f64>,
    break_even_batch: Option<u32>,
) -> Candidate {
    let speedup = base.time_s / e.time_s;
    let memory_saved_bytes = base.memory_bytes - e.memory_bytes;
    let fits_in_memory = e.fits;
    let mut reason = format!(
        "{speedup:.2}x vs baseline ({} vs {}), {}-bound; weights {:.3} b/elem, {} {}",
        roofline_base::format::duration(e.time_s),
        roofline_base::format::duration(base.time_s),
        e.bound.name(),
        config.weights.effective_bits(),
        if memory_saved_bytes >= 0.0 {
            "saves"
        } else {
            "needs an extra"
        },
        roofline_base::format::bytes(memory_saved_bytes.abs()),
    );
    if let Some(batch) = break_even_batch {
        reason.push_str(&format!("; weight-only gains stop at batch ~{batch}"));
    }
    if let Some(gpus) = e.min_gpus.filter(|&g| g > 1) {
        reason.push_str(&format!("; fits on {gpus} GPUs (tensor parallel)"));
    }
    let mut caveats = Vec::new();
    if !fits_in_memory {
        let group = match e.min_gpus {
            Some(gpus) => format!("; fits on {gpus}× {} with tensor parallel {gpus}", hardware.name),
            None => String::new(),
        };
        caveats.push(format!(
            "needs {}, the device has {}{group}",
            roofline_base::format::capacity(e.memory_bytes),
            roofline_base::format::capacity(device_capacity_bytes(hardware))
        ));
    }
    if config.activations.effective_bits() < 8.0 {
        caveats.push(format!(
            "{}-bit activations: accuracy depends on calibration or QAT",
            config.activations.element_bits()
        ));
    }
    if config.kv_cache.effective_bits() < 8.0 {
        caveats.push("4-bit KV cache: check long-context accuracy".to_owned());
    }
    Candidate {
        config: config.key.clone(),
        name: config.name.clone(),
        time_s: e.time_s,
        speedup,
        speedup_vs_current: current_time_s.map(|t| t / e.time_s),
        memory_bytes: e.memory_bytes,
        memory_saved_bytes,
        fits_in_memory,
        min_gpus: e.min_gpus,
        bound: e.bound,
        break_even_batch,
        reason,
        caveats,
        engines: engines_running(config, hardware.arch),
    }
}

/// Tokens per GEMM at which a weight-only GEMM's arithmetic intensity reaches the ridge point R:
/// 2·M·N·K / (w·N·K + M·(a·K + o·N)) = R, so M = R·w·N·K / (2·N·K − R·(a·K + o·N)), with w, a, o the
/// bytes per element of weights, activations and output. `None` when the GEMM never crosses it.
fn break_even_batch(hardware: &HardwareSpec, config: &QuantConfig, gemm: &RidgeGemm) -> Option<u32> {
    let ridge = hardware.ridge_point(config.compute()).ok()?;
    let (n, k) = (gemm.n as f64, gemm.k as f64);
    let (w, a, o) = (
        config.weights.effective_bytes(),
        config.activations.effective_bytes(),
        config.hidden().effective_bytes(),
    );
    let denominator = 2.0 * n * k - ridge * (a * k + o * n);
    if denominator <= 0.0 {
        return None;
    }
    let tokens = (ridge * w * n * k / denominator * gemm.tokens_per_row).ceil();
    (tokens <= f64::from(u32::MAX)).then_some(tokens as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_analysis::analysis::Phase;
    use roofline_analysis::model::find_model;
    use roofline_analysis::quant_config::find_quant_config;
    use roofline_base::hardware::find_hardware;

    fn decode_advice(hw: &str, model: &str, current: &str, batch: u32) -> Advice {
        let w = Workload {
            phase: Phase::Decode,
            batch,
            context: 4096,
        };
        advise_model(
            find_hardware(hw).unwrap(),
            find_model(model).unwrap(),
            &w,
            current,
            &Corrections::NONE,
        )
        .unwrap()
    }

    #[test]
    fn never_recommends_the_current_config_or_a_missing_path() {
        let a = decode_advice("a100_sxm_80gb", "llama-3.1-8b", "w4a16-int4", 1);
        assert!(a.candidates.iter().all(|c| c.config != "w4a16-int4"));
        for c in &a.candidates {
            let config = find_quant_config(&c.config).unwrap();
            // FP4/FP8 weights only as weight-only storage, decoded to 16-bit activations in software.
            if matches!(
                config.weights.compute_path(),
                roofline_base::precision::ComputePath::Fp8
                    | roofline_base::precision::ComputePath::Fp4
                    | roofline_base::precision::ComputePath::Fp6
            ) {
                assert!(
                    config.is_weight_only() && config.activations.effective_bits() >= 16.0,
                    "{}",
                    c.config
                );
            }
            for p in [config.activations, config.kv_cache, config.attention] {
                let path = p.compute_path();
                assert!(
                    !matches!(
                        path,
                        roofline_base::precision::ComputePath::Fp8
                            | roofline_base::precision::ComputePath::Fp4
                            | roofline_base::precision::ComputePath::Fp6
                    ),
                    "{}",
                    c.config
                );
            }
        }
        assert!(
            a.skipped
                .iter()
                .any(|s| s.config == "fp8" && s.reason.contains("Ampere"))
        );
        assert!(a.current_time_s.is_some());
        assert!(a.warnings.iter().any(|w| w.contains("Accuracy")));
        // Llama-3.1-70B in BF16 (141 GB) does not fit an 80 GB A100: a warning, not an error.
        let big = decode_advice("a100_sxm_80gb", "llama-3.1-70b", "bf16", 1);
        assert!(
            big.warnings.iter().any(|w| w.contains("needs")),
            "{:?}",
            big.warnings
        );
        assert!(big.candidates[0].fits_in_memory && big.candidates[0].speedup > 3.0);
    }

    #[test]
    fn candidates_are_ranked_with_speedups_against_bf16() {
        let a = decode_advice("b200", "llama-3.1-70b", "bf16", 1);
        assert_eq!(a.baseline, "bf16");
        assert!(a.candidates.windows(2).all(|w| w[0].time_s <= w[1].time_s));
        let best = &a.candidates[0];
        // Memory-bound decode: a ~4-bit weight config wins with > 2.5x and saves > 90 GB of 141 GB.
        assert!(
            best.config.contains("fp4") || best.config.contains("int4") || best.config.contains("nf4"),
            "{}",
            best.config
        );
        assert!(best.speedup > 2.5 && best.memory_saved_bytes > 90e9, "{best:?}");
        assert!(best.reason.contains("memory-bound"));
        let fp16 = a.candidates.iter().find(|c| c.config == "fp16").unwrap();
        assert!((fp16.speedup - 1.0).abs() < 1e-9);
    }

    #[test]
    fn weight_only_break_even_batch_matches_the_ridge() {
        // H100 FP16 ridge 989.4e12 / 3.35e12 = 295.3 FLOP/B. AWQ 4096×4096 (w 0.5195 B, a = o = 2 B):
        // M = 295.3·0.5195·4096² / (2·4096² − 295.3·4·4096) = 2.574e9 / 2.872e7 ≈ 89.6 → 90.
        let h100 = find_hardware("h100_sxm").unwrap();
        let awq = find_quant_config("w4a16-int4").unwrap();
        let m = break_even_batch(
            h100,
            awq,
            &RidgeGemm {
                n: 4096,
                k: 4096,
                tokens_per_row: 1.0,
            },
        )
        .unwrap();
        let ridge: f64 = 989.4e12 / 3.35e12;
        let expected =
            ridge * 0.519_531_25 * 4096.0 * 4096.0 / (2.0 * 4096.0 * 4096.0 - ridge * 4.0 * 4096.0);
        assert_eq!(m, expected.ceil() as u32);
        assert_eq!(m, 90);
        // A GEMM too narrow to ever reach the ridge has no break-even batch.
        assert_eq!(
            break_even_batch(
                h100,
                awq,
                &RidgeGemm {
                    n: 64,
                    k: 64,
                    tokens_per_row: 1.0
                }
            ),
            None
        );
        let a = decode_advice("h100_sxm", "llama-3.1-8b", "bf16", 1);
        assert!(
            a.candidates
                .iter()
                .filter(|c| c.break_even_batch.is_some())
                .all(|c| find_quant_config(&c.config).unwrap().is_weight_only())
        );
    }

    #[test]
    fn unknown_current_config_is_an_error_and_compute_bound_work_prefers_fast_paths() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let gemm = GemmShape {
            batch: 1,
            m: 8192,
            n: 8192,
            k: 8192,
        };
        assert!(matches!(
            advise_operator(h100, gemm, "int3", &Corrections::NONE),
            Err(Error::UnknownConfig { .. })
        ));
        let a = advise_operator(h100, gemm, "bf16", &Corrections::NONE).unwrap();
        let best = &a.candidates[0];
        assert_eq!(
            find_quant_config(&best.config).unwrap().compute_path(),
            roofline_base::precision::ComputePath::Fp8,
            "{best:?}"
        );
        assert!((best.speedup - 2.0).abs() < 0.05, "{}", best.speedup);
    }

    #[test]
    fn a_device_with_only_fp32_is_advised_against_fp32() {
        // A calibrated host CPU: 20 GB/s, FP32 only, 24 GB. BF16 and FP16 do not run, so FP32 is the baseline
        // and the one candidate; Llama-3.1-8B in FP32 is 8,030,261,248 · 4 B = 32.1 GB > 24 GB: no fit.
        let host = roofline_base::hardware::HardwareSpec::uncatalogued("cpu_host", "a CPU", "x86-64", 24e9)
            .calibrated(&roofline_base::hardware::Calibration {
                device_name: "a CPU".into(),
                dram_bandwidth_bytes_per_s: 20e9,
                kernel_overhead_s: 5e-6,
                vector_kernel_overhead_s: None,
                peaks: vec![(roofline_base::precision::ComputePath::Fp32, 1e11)],
                weight_only: Vec::new(),
                source: "test".into(),
                quality: None,
            })
            .unwrap();
        let model = find_model("llama-3.1-8b").unwrap();
        let w = Workload {
            phase: Phase::Decode,
            batch: 1,
            context: 4096,
        };
        let a = advise_model_parallel(
            &host,
            model,
            &w,
            &Parallelism::SINGLE,
            "bf16",
            &Corrections::REALISTIC,
        )
        .unwrap();
        assert_eq!(a.baseline, "fp32");
        let configs: Vec<&str> = a.candidates.iter().map(|c| c.config.as_str()).collect();
        assert_eq!(configs, ["fp32"]);
        assert!(!a.candidates[0].fits_in_memory);
        assert!(
            a.warnings
                .iter()
                .any(|w| w.contains("no BF16 path; speedups are against FP32")),
            "{:?}",
            a.warnings
        );
        assert!(
            a.warnings.iter().any(|w| w.contains("does not run natively")),
            "{:?}",
            a.warnings
        );
    }
}
