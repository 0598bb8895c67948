//! One answer from the advice: the fastest config that fits in device memory for this workload, or, when
//! nothing fits, what to change; and the memory breakdown behind the fit (weights, KV cache, headroom).

use crate::advisor::{Advice, Candidate};
use crate::serving::{Engine, engine_support, engines_running, matrices_cover};
use roofline_analysis::analysis::{ModelAnalysis, Workload, analyze_model_parallel};
use roofline_analysis::corrections::Corrections;
use roofline_analysis::memory::device_capacity_bytes;
use roofline_analysis::model::ModelConfig;
use roofline_analysis::parallel::Parallelism;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;

/// The advisor's one answer for a model step.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Recommendation {
    /// Switch to `config`: the fastest config that fits.
    Switch(Pick),
    /// Keep the current config: it fits and no config that fits is faster.
    Keep(Pick),
    /// No supported config fits in device memory under this workload.
    NothingFits {
        /// Memory of the config that needs least, in bytes.
        smallest_bytes: f64,
        /// What the engine may use of one device (capacity times the rule's fraction), in bytes.
        capacity_bytes: f64,
        /// What would make it fit, most direct first (narrower weights, shorter context, fewer sequences,
        /// more devices).
        changes: Vec<String>,
    },
}

/// A recommended config with the numbers that justify it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Pick {
    /// Config key.
    pub config: String,
    /// Config display name.
    pub name: String,
    /// Predicted step time, in seconds.
    pub time_s: f64,
    /// Baseline (BF16, else FP16) step time / this time.
    pub speedup: f64,
    /// Memory needed (one GPU's weights, profiled activations and KV cache), in bytes.
    pub memory_bytes: f64,
    /// What the engine may use of one device: the reported capacity times the rule's fraction, in bytes.
    pub capacity_bytes: f64,
    /// Why, from the numbers.
    pub reason: String,
}

/// The fastest config that fits in `hardware`'s memory for `workload`, among `advice`'s candidates and the
/// current config; when none fits, what to change. `advice` must come from
/// [`advise_model`](crate::advisor::advise_model) with the same arguments.
///
/// # Errors
/// What [`roofline_analysis::analysis::analyze_model`] returns for the current config other than [`Error::Unsupported`] (an unsupported
/// current config is simply not a choice).
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-70b").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let advice = advise_model(h100, model, &decode, "bf16", &Corrections::NONE).unwrap();
/// // 141 GB of BF16 weights do not fit in 80 GB: the answer is a narrower config that does.
/// match recommend_model(h100, model, &decode, &Corrections::NONE, &advice).unwrap() {
///     Recommendation::Switch(p) => assert!(p.memory_bytes <= 80e9 && p.speedup > 1.0),
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn recommend_model(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    corrections: &Corrections,
    advice: &Advice,
) -> Result<Recommendation, Error> {
    recommend_model_parallel(
        hardware,
        model,
        workload,
        &Parallelism::SINGLE,
        corrections,
        advice,
    )
}

/// [`recommend_model`] with the step split over GPUs as `parallelism` says (`advice` from
/// [`crate::advisor::advise_model_parallel`] with the same degrees): memory and fit are those of one GPU.
///
/// # Errors
/// An unknown current config, or anything [`analyze_model_parallel`] rejects other than an unsupported format.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-70b").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let four = Parallelism::tensor(4);
/// let advice = advise_model_parallel(h100, model, &decode, &four, "bf16", &Corrections::NONE).unwrap();
/// // Over four GPUs BF16 fits (about 35 GB of weights each): it is no longer a config that does not fit.
/// let r = recommend_model_parallel(h100, model, &decode, &four, &Corrections::NONE, &advice).unwrap();
/// assert!(!matches!(r, Recommendation::NothingFits { .. }));
/// ```
pub fn recommend_model_parallel(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    parallelism: &Parallelism,
    corrections: &Corrections,
    advice: &Advice,
) -> Result<Recommendation, Error> {
    recommend_model_for_engine(hardware, model, workload, parallelism, corrections, advice, None)
}

/// [`recommend_model_parallel`] for a serving engine: only the configs `engine` runs natively on the
/// device's architecture ([`Candidate::engines`], the engines' documented support matrices) are choices, or
/// with `None` those any of vLLM, SGLang and TensorRT-LLM runs (every config on an architecture the
/// matrices do not cover, [`matrices_cover`]); the reason says which engines run the pick and names a faster
/// config that fits but needs another engine (or that no engine lists), with the chosen engine's matrix cell.
///
/// # Errors
/// As [`recommend_model_parallel`].
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h100 = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let p = Parallelism::SINGLE;
/// let advice = advise_model_parallel(h100, model, &decode, &p, "bf16", &Corrections::REALISTIC).unwrap();
/// let r = recommend_model_for_engine(h100, model, &decode, &p, &Corrections::REALISTIC, &advice,
///     Some(Engine::Sglang)).unwrap();
/// match r {
///     Recommendation::Switch(pick) => {
///         let config = find_quant_config(&pick.config).unwrap();
///         assert!(engines_running(config, Architecture::Hopper).contains(&Engine::Sglang));
///         assert!(pick.reason.contains("SGLang"), "{}", pick.reason);
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn recommend_model_for_engine(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    parallelism: &Parallelism,
    corrections: &Corrections,
    advice: &Advice,
    engine: Option<Engine>,
) -> Result<Recommendation, Error> {
    let arch = hardware.arch;
    if !matrices_cover(arch) {
        return recommend(hardware, model, workload, parallelism, corrections, advice, None);
    }
    let runs = |engines: &[Engine]| engine.map_or(!engines.is_empty(), |e| engines.contains(&e));
    let who = engine.map_or("no listed engine (vLLM, SGLang, TensorRT-LLM)", Engine::name);
    let current_runs = model
        .config(&advice.current)
        .is_ok_and(|c| runs(&engines_running(&c, arch)));
    let served = Advice {
        candidates: advice
            .candidates
            .iter()
            .filter(|c| runs(&c.engines))
            .cloned()
            .collect(),
        ..advice.clone()
    };
    let excluded = (!current_runs).then(|| {
        let not = if engine.is_some() {
            " does not run"
        } else {
            " runs"
        };
        format!("{who}{not} the current config on {}", arch.name())
    });
    let mut answer = recommend(
        hardware,
        model,
        workload,
        parallelism,
        corrections,
        &served,
        excluded,
    )?;
    let fastest = advice
        .candidates
        .iter()
        .filter(|c| c.fits_in_memory)
        .min_by(|a, b| a.time_s.total_cmp(&b.time_s));
    let engine_list = |engines: &[Engine]| engines.iter().map(|e| e.name()).collect::<Vec<_>>().join(" or ");
    let elsewhere = |c: &Candidate| -> String {
        if c.engines.is_empty() {
            return format!(
                "no engine's support matrix (vLLM, SGLang, TensorRT-LLM) lists it on {}",
                arch.name()
            );
        }
        let why = engine
            .and_then(|e| {
                let q = model.config(&c.config).ok()?;
                engine_support(&q, arch).into_iter().find(|s| s.engine == e)
            })
            .map_or_else(String::new, |s| format!("; {}: {}", s.engine.name(), s.basis));
        format!("it needs {} on {}{why}", engine_list(&c.engines), arch.name())
    };
    match &mut answer {
        Recommendation::Switch(p) | Recommendation::Keep(p) => {
            let engines = model
                .config(&p.config)
                .map(|q| engines_running(&q, arch))
                .unwrap_or_default();
            p.reason
                .push_str(&format!("; {} runs it on {}", engine_list(&engines), arch.name()));
            if let Some(f) = fastest.filter(|f| f.config != p.config && f.time_s < p.time_s) {
                p.reason.push_str(&format!(
                    "; {} would be {:.2}x faster, but {}",
                    f.name,
                    p.time_s / f.time_s,
                    elsewhere(f)
                ));
            }
        }
        Recommendation::NothingFits { changes, .. } => {
            if let Some(f) = fastest.filter(|f| !runs(&f.engines)) {
                changes.insert(
                    0,
                    format!("Another engine: {} fits, but {}", f.name, elsewhere(f)),
                );
            }
        }
    }
    Ok(answer)
}

/// The recommendation among `advice`'s candidates and the current config, unless `current_excluded` says
/// why the current config is no choice.
fn recommend(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    parallelism: &Parallelism,
    corrections: &Corrections,
    advice: &Advice,
    current_excluded: Option<String>,
) -> Result<Recommendation, Error> {
    let capacity = usable_bytes(hardware, corrections);
    let current = match model
        .config(&advice.current)
        .and_then(|c| analyze_model_parallel(hardware, model, &c, workload, parallelism, corrections))
    {
        Ok(_) if current_excluded.is_some() => None,
        Ok(a) => Some(a),
        Err(Error::Unsupported { .. }) => None,
        Err(e) => return Err(e),
    };
    // Baseline time from any candidate (speedup = baseline / time), else the current config is the baseline.
    let baseline_s = advice
        .candidates
        .first()
        .map(|c| c.time_s * c.speedup)
        .or_else(|| current.as_ref().map(|a| a.total_time_s))
        .unwrap_or(f64::NAN);
    let best = advice
        .candidates
        .iter()
        .filter(|c| c.fits_in_memory)
        .min_by(|a, b| a.time_s.total_cmp(&b.time_s));
    let current_fits = current.as_ref().filter(|a| a.fits_in_memory);
    let pick = |config: &str, name: &str, time_s: f64, memory_bytes: f64, reason: String| Pick {
        config: config.to_owned(),
        name: name.to_owned(),
        time_s,
        speedup: baseline_s / time_s,
        memory_bytes,
        capacity_bytes: capacity,
        reason,
    };
    let keep = current_fits.filter(|cur| best.is_none_or(|b| cur.total_time_s <= b.time_s));
    match (keep, best) {
        (Some(cur), next) => {
            let name = config_name(model, &cur.config);
            let fits = format!(
                "{name} fits ({} of {})",
                gb(cur.memory_required_bytes),
                gb(capacity)
            );
            let reason = match next {
                Some(b) => format!(
                    "{fits} and no config that fits is faster ({} is next, {:.2}x slower)",
                    b.name,
                    b.time_s / cur.total_time_s
                ),
                None => format!("{fits} and is the only config that does"),
            };
            Ok(Recommendation::Keep(pick(
                &cur.config,
                &name,
                cur.total_time_s,
                cur.memory_required_bytes,
                reason,
            )))
        }
        (None, Some(b)) => {
            let versus = match (current_fits, current.as_ref()) {
                (Some(c), _) => format!("{:.2}x faster than the current config", c.total_time_s / b.time_s),
                (None, Some(c)) => format!(
                    "the current config does not fit ({} of {})",
                    gb(c.memory_required_bytes),
                    gb(capacity)
                ),
                (None, None) => current_excluded
                    .clone()
                    .unwrap_or_else(|| "the current config does not run on this device".to_owned()),
            };
            Ok(Recommendation::Switch(pick(
                &b.config,
                &b.name,
                b.time_s,
                b.memory_bytes,
                format!(
                    "the fastest config that fits: {} of {}, {:.2}x vs {}; {versus}",
                    gb(b.memory_bytes),
                    gb(capacity),
                    b.time_s.recip() * baseline_s,
                    advice.baseline
                ),
            )))
        }
        (None, None) => Ok(nothing_fits(
            hardware,
            model,
            workload,
            parallelism,
            corrections,
            advice,
            current.as_ref(),
        )),
    }
}

/// What to change when no config fits: the config that needs least memory, then the context and batch that
/// would fit with it, then the fewest GPUs a config fits on when split (or how many devices' memory it needs).
fn nothing_fits(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    workload: &Workload,
    parallelism: &Parallelism,
    corrections: &Corrections,
    advice: &Advice,
    current: Option<&ModelAnalysis>,
) -> Recommendation {
    let capacity = usable_bytes(hardware, corrections);
    let smallest_candidate = advice
        .candidates
        .iter()
        .min_by(|a, b| a.memory_bytes.total_cmp(&b.memory_bytes));
    // The least-memory config's own analysis gives its weight / KV split.
    let smallest = match (smallest_candidate, current) {
        (Some(c), Some(cur)) if cur.memory_required_bytes <= c.memory_bytes => Some(cur.clone()),
        (Some(c), _) => model
            .config(&c.config)
            .and_then(|q| analyze_model_parallel(hardware, model, &q, workload, parallelism, corrections))
            .ok(),
        (None, cur) => cur.cloned(),
    };
    let Some(s) = smallest else {
        return Recommendation::NothingFits {
            smallest_bytes: f64::NAN,
            capacity_bytes: capacity,
            changes: vec!["no supported config runs this model on this device".to_owned()],
        };
    };
    let name = config_name(model, &s.config);
    let mut changes = vec![format!(
        "Smaller weights: the narrowest supported config, {name}, still needs {} (weights {} + activations {} + KV cache {}) of {} usable",
        gb(s.memory_required_bytes),
        gb(s.weight_bytes_per_gpu),
        gb(s.activation_bytes_per_gpu),
        gb(s.kv_cache_bytes_per_gpu),
        gb(capacity)
    )];
    let (batch, context) = (f64::from(workload.batch), f64::from(workload.context));
    let kv_per_token = s.kv_cache_bytes_per_gpu / (batch * context);
    let room = s.memory_usable_bytes - s.weight_bytes_per_gpu - s.activation_bytes_per_gpu;
    if room > 0.0 && kv_per_token > 0.0 {
        let max_context = (room / (batch * kv_per_token)).floor();
        if max_context >= 1.0 {
            changes.push(format!(
                "Shorter context: at most {max_context:.0} tokens at batch {} fits with {name}",
                workload.batch
            ));
        }
        let max_batch = (room / (context * kv_per_token)).floor();
        if max_batch >= 1.0 {
            changes.push(format!(
                "Fewer sequences: at most {max_batch:.0} at context {} fits with {name}",
                workload.context
            ));
        }
    } else {
        changes.push(format!(
            "The weights and activations alone ({}) exceed the {} usable: no context or batch makes it fit",
            gb(s.weight_bytes_per_gpu + s.activation_bytes_per_gpu),
            gb(capacity)
        ));
    }
    // More GPUs: the fewest tensor-parallel GPUs any config fits on (the advisor's `min_gpus`).
    let split = advice
        .candidates
        .iter()
        .filter_map(|c| c.min_gpus.map(|n| (n, c)))
        .min_by(|(n, a), (m, b)| n.cmp(m).then(a.time_s.total_cmp(&b.time_s)));
    changes.push(match split {
        Some((n, c)) => format!(
            "More GPUs: {} fits split tensor-parallel over {n} of these GPUs (per-GPU weights and KV cache)",
            c.name
        ),
        None => format!(
            "More devices: no config fits even split over one scale-up domain; {name} needs the memory of at least {:.0} of these devices",
            (s.memory_required_bytes * f64::from(s.gpus) / capacity).ceil()
        ),
    });
    Recommendation::NothingFits {
        smallest_bytes: s.memory_required_bytes,
        capacity_bytes: capacity,
        changes,
    }
}

fn config_name(model: &ModelConfig, key: &str) -> String {
    model.config(key).map_or_else(|_| key.to_owned(), |c| c.name)
}

/// What the engine may use of one device: the reported capacity times the rule's fraction (exact for vLLM's
/// rule, where weights, activations and the KV cache share capacity · f), in bytes.
fn usable_bytes(hardware: &HardwareSpec, corrections: &Corrections) -> f64 {
    device_capacity_bytes(hardware) * corrections.memory.value()
}

fn gb(bytes: f64) -> String {
    roofline_base::format::capacity(bytes)
}

/// The memory of one GPU of a model step against its memory, for a bar: every share is of `scale_bytes`, the
/// larger of what is needed and what the device has, so an over-capacity step shows how far over it is.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MemoryFit {
    /// GPUs the step is split over (the figures are those of one).
    pub gpus: u32,
    /// Weight bytes one GPU holds.
    pub weight_bytes: f64,
    /// Activation bytes one GPU reserves (the engine's profiling step).
    pub activation_bytes: f64,
    /// KV-cache bytes one GPU holds.
    pub kv_cache_bytes: f64,
    /// Memory of one device as the driver reports it, in bytes.
    pub capacity_bytes: f64,
    /// What the engine's rule lets weights, activations and the KV cache take, in bytes.
    pub usable_bytes: f64,
    /// Usable − needed, in bytes; negative when over.
    pub headroom_bytes: f64,
    /// Whether it fits.
    pub fits: bool,
    /// Weights / scale.
    pub weight_share: f64,
    /// Activations / scale.
    pub activation_share: f64,
    /// KV cache / scale.
    pub kv_share: f64,
    /// Usable / scale: where the engine's limit falls.
    pub usable_share: f64,
    /// Capacity / scale (1 when it fits).
    pub capacity_share: f64,
}

/// The memory breakdown of one GPU of `a`: its weights, the activations its engine reserves and its KV
/// cache against what the engine's rule lets it use and the device's reported capacity. On one GPU these
/// are the whole model's.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-70b").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let a = analyze_model(h100, model, find_quant_config("bf16").unwrap(), &decode, &Corrections::NONE).unwrap();
/// let fit = memory_fit(&a);
/// assert!(!fit.fits && fit.headroom_bytes < 0.0 && fit.capacity_share < 1.0);
/// ```
#[must_use]
pub fn memory_fit(a: &ModelAnalysis) -> MemoryFit {
    let (weights, activations, kv) = (
        a.weight_bytes_per_gpu,
        a.activation_bytes_per_gpu,
        a.kv_cache_bytes_per_gpu,
    );
    let needed = weights + activations + kv;
    let scale = needed.max(a.memory_capacity_bytes);
    MemoryFit {
        gpus: a.gpus,
        weight_bytes: weights,
        activation_bytes: activations,
        kv_cache_bytes: kv,
        capacity_bytes: a.memory_capacity_bytes,
        usable_bytes: a.memory_usable_bytes,
        headroom_bytes: a.memory_usable_bytes - needed,
        fits: a.fits_in_memory,
        weight_share: weights / scale,
        activation_share: activations / scale,
        kv_share: kv / scale,
        usable_share: a.memory_usable_bytes.max(0.0) / scale,
        capacity_share: a.memory_capacity_bytes / scale,
    }
}

#[cfg(test)]
mod tests;
