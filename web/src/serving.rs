//! The serving view's evaluation through `roofline_core`'s serving model, the same as `roofline serve`: the
//! sweep of every precision config over the concurrency grid for the scenario's device (in its mode), model,
//! GPU split and serving inputs ([`SweepKey`], kept in a small [`SweepCache`]), the SLA's recommendation in
//! words ([`verdict`]) and the per-config table ([`config_rows`]). Pure and natively tested;
//! `measured.rs` holds the imported serving runs and `state.rs` the page's memos over both.

pub mod measured;
pub mod state;

use std::collections::VecDeque;
use std::sync::Arc;

use roofline_core::{
    BenchClient, Corrections, Engine, EngineFeatures, EnginePreset, Error, HardwareSpec, Load, ModelConfig,
    Parallelism, QuantConfig, SchedulerKind, ServingPoint, ServingWorkload, Sla, SlaOutcome, Sweep,
    SweepSpec, find_quant_config, quant_configs, sweep,
};

use crate::calibration::mode_label;
use crate::format;
use crate::models::resolve_model;
use crate::palette::{Rgb, precision_rgb};
use crate::scenario::Scenario;
use crate::serving_inputs::{engine_name, scheduler_name};
use crate::summary::config_name;

/// Everything a sweep depends on, and nothing else: the device spec in its mode, the model, the GPU split,
/// the request lengths, the engine, its scheduler and limits, and the corrections of the mode. Every
/// precision config is swept (those the device cannot run are listed as unsupported).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepKey {
    /// The device, in the mode predictions use.
    pub hardware: HardwareSpec,
    /// The model.
    pub model: ModelConfig,
    /// How one replica is split over GPUs.
    pub parallelism: Parallelism,
    /// ISL and OSL.
    pub workload: ServingWorkload,
    /// Whose defaults.
    pub engine: Engine,
    /// In-flight or static batching.
    pub scheduler: SchedulerKind,
    /// Token budget replacing the engine's default.
    pub token_budget: Option<u32>,
    /// Max running requests replacing the engine's default.
    pub max_seqs: Option<u32>,
    /// The engine's memory fraction replacing its default ([`Scenario::serving_memory_fraction`]).
    pub memory_fraction: Option<f64>,
    /// The corrections of every step.
    pub corrections: Corrections,
}

impl SweepKey {
    /// The key of scenario `s` on `hw` (its effective spec), `models` being the imported models.
    ///
    /// # Errors
    /// An unknown model key.
    pub fn of(s: &Scenario, hw: &HardwareSpec, models: &[ModelConfig]) -> Result<SweepKey, Error> {
        Ok(SweepKey {
            hardware: hw.clone(),
            model: resolve_model(&s.model, models)?.clone(),
            parallelism: s.parallelism(),
            workload: ServingWorkload {
                isl: s.serving.isl,
                osl: s.serving.osl,
            },
            engine: s.serving_engine(),
            scheduler: s.serving.scheduler,
            token_budget: s.serving.token_budget,
            max_seqs: s.serving.max_seqs,
            memory_fraction: s.serving_memory_fraction(),
            corrections: s.core_corrections(hw),
        })
    }

    /// Runs the sweep: every config × the concurrency grid up to what fits, as `roofline serve` with
    /// `--configs all` and no loads.
    ///
    /// # Errors
    /// What `roofline_core::sweep` rejects: an invalid workload, limit or GPU split.
    pub fn sweep(&self) -> Result<Sweep, Error> {
        let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
        sweep(&SweepSpec {
            hardware: &self.hardware,
            model: &self.model,
            configs: &configs,
            parallelisms: std::slice::from_ref(&self.parallelism),
            workload: self.workload,
            loads: &[],
            engine: self.engine,
            token_budget: self.token_budget,
            max_seqs: self.max_seqs,
            memory_fraction: self.memory_fraction,
            scheduler: self.scheduler,
            corrections: self.corrections,
            client: BenchClient::default(),
            features: EngineFeatures::default(),
        })
    }

    /// The engine's own defaults on this device and split (the limits the inputs' placeholders name).
    #[must_use]
    pub fn engine_defaults(&self) -> EnginePreset {
        self.engine.preset(&self.hardware, &self.parallelism)
    }

    /// The chart's title: mode, device, model and GPUs, e.g. `reference · NVIDIA H100 SXM5 80GB · Llama 3.1
    /// 8B · 1 GPU`.
    #[must_use]
    pub fn title(&self) -> String {
        format!(
            "{} · {} · {}",
            mode_label(&self.hardware),
            self.model.name,
            self.gpus()
        )
    }

    /// `1 GPU`, `4 GPUs (TP 4)` or `8 GPUs (TP 8, EP 8)`.
    fn gpus(&self) -> String {
        match (self.parallelism.gpus(), self.parallelism.expert) {
            (1, _) => "1 GPU".to_owned(),
            (n, 1) => format!("{n} GPUs (TP {n})"),
            (n, e) => format!("{n} GPUs (TP {n}, EP {e})"),
        }
    }

    /// What every number of the view is about: mode, device, model, GPUs, request lengths, engine and
    /// scheduler, e.g. `reference · NVIDIA H100 SXM · Llama-3.1-8B · 1 GPU · ISL 1024 / OSL 1024 · vLLM,
    /// in-flight batching`.
    #[must_use]
    pub fn context(&self) -> String {
        format!(
            "{} · ISL {} / OSL {} · {}, {}",
            self.title(),
            self.workload.isl,
            self.workload.osl,
            engine_name(self.engine),
            scheduler_name(self.scheduler)
        )
    }
}

/// Sweeps kept, most recently used first: switching back to an earlier ISL, engine or device is instant.
pub const CACHE_SIZE: usize = 8;

/// The last [`CACHE_SIZE`] sweeps by key, and how many sweeps ran.
#[derive(Debug, Default)]
pub struct SweepCache {
    entries: VecDeque<(SweepKey, Arc<Result<Sweep, Error>>)>,
    runs: usize,
}

impl SweepCache {
    /// The sweep of `key`: the kept one, or a new run (which evicts the least recently used beyond
    /// [`CACHE_SIZE`]).
    pub fn get(&mut self, key: &SweepKey) -> Arc<Result<Sweep, Error>> {
        let kept = self
            .entries
            .iter()
            .position(|(k, _)| k == key)
            .and_then(|i| self.entries.remove(i));
        let (key, sweep) = kept.unwrap_or_else(|| {
            self.runs += 1;
            (key.clone(), Arc::new(key.sweep()))
        });
        self.entries.push_front((key, Arc::clone(&sweep)));
        self.entries.truncate(CACHE_SIZE);
        sweep
    }

    /// Sweeps run so far (cache hits not counted).
    #[must_use]
    pub fn runs(&self) -> usize {
        self.runs
    }
}

/// The colour of a config's curve: its weight format's precision colour.
#[must_use]
pub fn config_rgb(config: &str) -> Rgb {
    find_quant_config(config).map_or((0x64, 0x74, 0x8b), |c| precision_rgb(c.weights))
}

/// The load of a point in words: `concurrency 96`, or `2.5 requests/s`.
#[must_use]
pub fn load_words(load: Load) -> String {
    match load {
        Load::Concurrency(n) => format!("concurrency {n}"),
        Load::Rate(r) => format!("{} requests/s", format::number(r)),
    }
}

/// The limits of `sla` in words, e.g. `["TTFT ≤ 1.00 s", "≥ 30 tok/s/user"]`.
#[must_use]
pub fn sla_words(sla: &Sla) -> Vec<String> {
    [
        sla.ttft_max_s.map(|v| format!("TTFT ≤ {}", format::duration(v))),
        sla.tpot_max_s.map(|v| format!("TPOT ≤ {}", format::duration(v))),
        sla.tokens_per_user_min
            .map(|v| format!("≥ {} tok/s/user", format::number(v))),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A point in words: `fp8 at concurrency 96: 6.54k output tokens/s per GPU, TPOT 14.7 ms, TTFT 39.0 ms`.
#[must_use]
pub fn point_words(p: &ServingPoint) -> String {
    format!(
        "{} at {}: {} output tokens/s per GPU, TPOT {}, TTFT {}",
        p.config,
        load_words(p.load),
        format::number(p.output_tokens_per_s_per_gpu),
        format::duration(p.tpot_s),
        format::duration(p.ttft_s)
    )
}

/// The configs speedups are told against, in order: BF16, else FP16 (the advisor's baseline).
const BASELINES: [&str; 2] = ["bf16", "fp16"];

/// The SLA's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The point with the most output tokens/s per GPU that meets the SLA, and the sentence saying so (with
    /// the baseline config's best beside it).
    Recommended {
        /// The point.
        point: Box<ServingPoint>,
        /// The sentence.
        text: String,
    },
    /// Why nothing meets the SLA: the limit the closest config breaks (core's reason).
    NothingMeets(String),
}

/// The SLA's recommendation in words from `outcome` (core's [`Sla::evaluate`]).
#[must_use]
pub fn verdict(outcome: &SlaOutcome) -> Verdict {
    let Some(point) = &outcome.recommendation else {
        let reason = outcome
            .reason
            .clone()
            .unwrap_or_else(|| "nothing meets the SLA".to_owned());
        return Verdict::NothingMeets(capitalized(&reason));
    };
    let limits = sla_words(&outcome.sla);
    let meets = if limits.is_empty() {
        "the most output tokens/s per GPU (no SLA set)".to_owned()
    } else {
        format!("meets {}", limits.join(" and "))
    };
    let mut text = format!("{} — {meets}", point_words(point));
    let baseline = BASELINES
        .iter()
        .find_map(|key| outcome.picks.iter().find(|p| p.config == *key));
    if let Some(base) = baseline.filter(|b| b.config != point.config) {
        match (&base.best, &base.reason) {
            (Some(b), _) => text.push_str(&format!(
                "; {} best: {}, {} output tokens/s per GPU, TPOT {}, TTFT {} ({} serves {:.2}× as many per GPU)",
                base.config,
                load_words(b.load),
                format::number(b.output_tokens_per_s_per_gpu),
                format::duration(b.tpot_s),
                format::duration(b.ttft_s),
                point.config,
                point.output_tokens_per_s_per_gpu / b.output_tokens_per_s_per_gpu,
            )),
            (None, Some(reason)) => text.push_str(&format!("; {}: {reason}", base.config)),
            (None, None) => {}
        }
    }
    Verdict::Recommended {
        point: Box::new(point.clone()),
        text,
    }
}

/// `text` with its first letter in upper case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// One config's row of the table under the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigRow {
    /// Config key.
    pub config: String,
    /// Display name.
    pub name: String,
    /// Curve colour.
    pub color: Rgb,
    /// The point with the most output tokens/s per GPU that meets the SLA.
    pub best: Option<ServingPoint>,
    /// Why no point meets it (core's reason), or why the config has no point.
    pub why_none: Option<String>,
    /// The point with the most output tokens/s per GPU at all.
    pub top: Option<ServingPoint>,
    /// Sequences of ISL + OSL tokens the KV cache of one GPU holds (0: the model does not fit).
    pub max_fit: u32,
    /// Requests the engine runs at once (its `max_seqs`).
    pub engine_max_seqs: u32,
    /// Weights one GPU holds, bytes.
    pub weight_bytes: f64,
    /// KV cache one GPU gets, bytes.
    pub kv_cache_bytes: f64,
    /// Whether this config holds the recommendation.
    pub recommended: bool,
}

/// One row per config that ran (in the sweep's order), from the sweep and its SLA outcome.
#[must_use]
pub fn config_rows(sweep: &Sweep, outcome: &SlaOutcome) -> Vec<ConfigRow> {
    sweep
        .fits
        .iter()
        .map(|fit| {
            let pick = outcome
                .picks
                .iter()
                .find(|p| p.config == fit.config && p.gpus == fit.gpus);
            let top = sweep
                .points
                .iter()
                .filter(|p| p.config == fit.config && p.parallelism == fit.parallelism && p.fits)
                .max_by(|a, b| {
                    a.output_tokens_per_s_per_gpu
                        .total_cmp(&b.output_tokens_per_s_per_gpu)
                })
                .cloned();
            ConfigRow {
                config: fit.config.clone(),
                name: config_name(&fit.config),
                color: config_rgb(&fit.config),
                best: pick.and_then(|p| p.best.clone()),
                why_none: pick.and_then(|p| p.reason.clone()),
                top,
                max_fit: fit.memory.max_sequences,
                engine_max_seqs: fit.preset.in_flight.max_seqs,
                weight_bytes: fit.memory.weight_bytes,
                kv_cache_bytes: fit.memory.kv_cache_bytes,
                recommended: outcome
                    .recommendation
                    .as_ref()
                    .is_some_and(|r| r.config == fit.config && r.parallelism == fit.parallelism),
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use roofline_core::MemoryFraction;

    use crate::presets::resolve_hardware;
    use crate::serving_inputs::View;

    /// Llama-3.1-8B on one H100 SXM in reference mode, vLLM defaults, ISL 1024 / OSL 1024: the scenario of
    /// core's sweep tests and docs/validation/serving.md §2.
    pub(crate) fn h100_llama() -> (Scenario, HardwareSpec) {
        let s = Scenario {
            hardware: "h100_sxm".into(),
            model: "llama-3.1-8b".into(),
            config: "fp8".into(),
            view: View::Serving,
            ..Scenario::default()
        };
        let hw = resolve_hardware("h100_sxm", &[]).unwrap().reference().unwrap();
        (s, hw)
    }

    /// The key and the sweep of `s` on `hw`.
    pub(crate) fn swept(s: &Scenario, hw: &HardwareSpec) -> (SweepKey, Sweep) {
        let key = SweepKey::of(s, hw, &[]).unwrap();
        let sweep = key.sweep().unwrap();
        (key, sweep)
    }

    #[test]
    fn the_page_sweeps_what_roofline_serve_sweeps() {
        let (s, hw) = h100_llama();
        let key = SweepKey::of(&s, &hw, &[]).unwrap();
        assert_eq!(key.corrections, Corrections::REALISTIC);
        let page = key.sweep().unwrap();
        // `roofline serve --hardware h100_sxm --model llama-3.1-8b --isl 1024 --osl 1024` in core terms.
        let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
        let core = sweep(&SweepSpec::new(
            &hw,
            roofline_core::find_model("llama-3.1-8b").unwrap(),
            &configs,
            ServingWorkload { isl: 1024, osl: 1024 },
        ))
        .unwrap();
        assert_eq!(page, core);
        // BF16 holds 225 sequences of 2048 tokens (docs/validation/serving.md §2).
        let bf16 = page.fits.iter().find(|f| f.config == "bf16").unwrap();
        assert_eq!(bf16.memory.max_sequences, 225);
        assert_eq!(
            key.context(),
            "reference · NVIDIA H100 SXM5 80GB · Llama 3.1 8B · 1 GPU · ISL 1024 / OSL 1024 · vLLM, in-flight batching"
        );
    }

    #[test]
    fn the_cache_runs_each_key_once_and_keeps_the_latest() {
        let (s, hw) = h100_llama();
        let mut cache = SweepCache::default();
        let key = SweepKey::of(&s, &hw, &[]).unwrap();
        let first = cache.get(&key);
        let again = cache.get(&key);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(cache.runs(), 1);
        let mut other = key.clone();
        for isl in 0..CACHE_SIZE as u32 {
            other.workload.isl = 100 + isl;
            cache.get(&other);
        }
        assert_eq!(cache.runs(), 1 + CACHE_SIZE);
        // The first key was pushed out by CACHE_SIZE newer ones: it runs again.
        cache.get(&key);
        assert_eq!(cache.runs(), 2 + CACHE_SIZE);
    }

    #[test]
    fn the_pages_memory_setting_is_vllms_fraction_in_the_sweep() {
        let (mut s, hw) = h100_llama();
        let fraction = |s: &Scenario| {
            let sweep = SweepKey::of(s, &hw, &[]).unwrap().sweep().unwrap();
            let fit = sweep.fits.iter().find(|f| f.config == "bf16").unwrap();
            (fit.preset.fraction, fit.memory.max_sequences)
        };
        // vLLM's default 0.92: 225 sequences of 2048 tokens on one H100 (core's sweep tests derive it).
        assert_eq!(fraction(&s), (MemoryFraction::OfCapacity(0.92), 225));
        // 0.5: (85,061,827,297.28 × 0.5 − 16,060,522,496 − 1,626,865,664) B / 268,435,456 B = 92.5.
        s.memory_fraction = 0.5;
        assert_eq!(fraction(&s), (MemoryFraction::OfCapacity(0.5), 92));
        // SGLang's own rule and default: the setting is vLLM's.
        s.engine = Some(Engine::Sglang);
        assert_eq!(s.serving_memory_fraction(), None);
        assert!(matches!(fraction(&s).0, MemoryFraction::StaticOfCapacity(f) if f != 0.5));
    }

    #[test]
    fn an_invalid_limit_is_cores_error() {
        let (mut s, hw) = h100_llama();
        s.serving.token_budget = Some(512);
        let err = SweepKey::of(&s, &hw, &[])
            .unwrap()
            .sweep()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("token_budget (512) must be at least max_seqs (1024)"),
            "{err}"
        );
    }

    #[test]
    fn the_verdict_names_the_point_the_limits_and_the_baseline() {
        let (s, hw) = h100_llama();
        let (_, sweep) = swept(&s, &hw);
        let sla = Sla {
            ttft_max_s: Some(1.0),
            tpot_max_s: None,
            tokens_per_user_min: Some(30.0),
        };
        let outcome = sla.evaluate(&sweep);
        let best = outcome.recommendation.clone().unwrap();
        let Verdict::Recommended { point, text } = verdict(&outcome) else {
            panic!("an 8B model on an H100 meets 30 tok/s/user");
        };
        assert_eq!(*point, best);
        assert!(
            text.starts_with(&format!(
                "{} at {}: {} output tokens/s per GPU",
                best.config,
                load_words(best.load),
                format::number(best.output_tokens_per_s_per_gpu)
            )),
            "{text}"
        );
        assert!(
            text.contains("— meets TTFT ≤ 1.00 s and ≥ 30 tok/s/user"),
            "{text}"
        );
        let bf16 = outcome.picks.iter().find(|p| p.config == "bf16").unwrap();
        let bf16_best = bf16.best.as_ref().unwrap();
        assert!(
            text.contains(&format!(
                "; bf16 best: {}, {} output tokens/s per GPU, TPOT {}, TTFT {} ({} serves {:.2}× as many per GPU)",
                load_words(bf16_best.load),
                format::number(bf16_best.output_tokens_per_s_per_gpu),
                format::duration(bf16_best.tpot_s),
                format::duration(bf16_best.ttft_s),
                best.config,
                best.output_tokens_per_s_per_gpu / bf16_best.output_tokens_per_s_per_gpu
            )),
            "{text}"
        );
        // No SLA: the most output per GPU over every config.
        let open = Sla::default().evaluate(&sweep);
        let Verdict::Recommended { text, .. } = verdict(&open) else {
            panic!()
        };
        assert!(text.contains("(no SLA set)"), "{text}");
        // An impossible limit: core's reason, capitalized.
        let tight = Sla {
            tpot_max_s: Some(1e-4),
            ..Sla::default()
        }
        .evaluate(&sweep);
        let Verdict::NothingMeets(why) = verdict(&tight) else {
            panic!()
        };
        assert!(
            why.starts_with("No config meets the SLA; the closest: TPOT at concurrency 1 is "),
            "{why}"
        );
        // The closest config is the one with the shortest TPOT for one user.
        let fastest = sweep
            .points
            .iter()
            .filter(|p| p.load == Load::Concurrency(1))
            .min_by(|a, b| a.tpot_s.total_cmp(&b.tpot_s))
            .unwrap();
        assert!(
            why.ends_with(&format!(
                "{} > 100 µs: even one user is too slow on h100_sxm in {}",
                format::duration(fastest.tpot_s),
                fastest.config
            )),
            "{why}"
        );
    }

    #[test]
    fn config_rows_hold_the_best_the_top_and_what_fits() {
        let (s, hw) = h100_llama();
        let (_, sweep) = swept(&s, &hw);
        let sla = Sla {
            tpot_max_s: Some(0.02),
            ..Sla::default()
        };
        let outcome = sla.evaluate(&sweep);
        let rows = config_rows(&sweep, &outcome);
        assert_eq!(rows.len(), sweep.fits.len());
        assert_eq!(rows.iter().filter(|r| r.recommended).count(), 1);
        let bf16 = rows.iter().find(|r| r.config == "bf16").unwrap();
        assert_eq!((bf16.max_fit, bf16.engine_max_seqs), (225, 1024));
        // The top point is the highest-concurrency one (throughput rises along the grid), 225 for BF16.
        assert_eq!(bf16.top.as_ref().unwrap().load, Load::Concurrency(225));
        let best = bf16.best.as_ref().unwrap();
        assert!(
            best.tpot_s <= 0.02
                && best.output_tokens_per_s_per_gpu <= bf16.top.as_ref().unwrap().output_tokens_per_s_per_gpu
        );
        assert_eq!(bf16.color, precision_rgb(roofline_core::Precision::Bf16));
    }
}
