//! The serving view's evaluation through `roofline_core`'s serving model, the same as `roofline serve`: the
//! sweep of every precision config over every GPU layout the device's domain holds and the concurrency grid
//! ([`SweepKey`], kept in a small [`SweepCache`]), the colour of each config, and words for loads and limits.
//! Pure and natively tested; `answer.rs` turns core's sizing into the view's sentences and rows,
//! `measured.rs` holds the imported serving runs and `state.rs` the page's memos over both.

pub mod answer;
pub mod measured;
pub mod state;

use std::collections::VecDeque;
use std::sync::Arc;

use roofline_core::{
    BenchClient, Corrections, Engine, EngineFeatures, EnginePreset, Error, HardwareSpec, Load, ModelConfig,
    Parallelism, QuantConfig, SchedulerKind, ServingWorkload, Sla, SpecDecoding, SpecMethod, Sweep,
    SweepSpec, layouts, quant_configs, sweep,
};

use crate::calibration::mode_label;
use crate::format;
use crate::models::resolve_model;
use crate::palette::Rgb;
use crate::scenario::Scenario;
use crate::serving_inputs::{engine_name, method_name, scheduler_name};

/// Everything a sweep depends on, and nothing else: the device spec in its mode, the model, its layouts on
/// the device, the request lengths, the engine, its scheduler and limits, speculative decoding and the
/// prefix cache, and the corrections of the mode. Every precision config is swept (those the device cannot
/// run are listed as unsupported). The SLA, its percentile and the chart's axes are not in it: changing them
/// runs no simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepKey {
    /// The device, in the mode predictions use.
    pub hardware: HardwareSpec,
    /// The model.
    pub model: ModelConfig,
    /// How one replica may be split over GPUs: every layout of [`roofline_core::layouts`].
    pub layouts: Vec<Parallelism>,
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
    /// Speculative decoding, if on.
    pub speculative: Option<SpecDecoding>,
    /// The draft model of [`SpecMethod::DraftModel`].
    pub draft_model: Option<ModelConfig>,
    /// Share of every prompt served from the prefix cache.
    pub prefix_hit_rate: f64,
}

impl SweepKey {
    /// The key of scenario `s` on `hw` (its effective spec, or a compared device's), `models` being the
    /// imported models.
    ///
    /// # Errors
    /// An unknown model or draft model key, or core's refusal of the speculative settings (no published
    /// acceptance length for the method and none typed).
    pub fn of(s: &Scenario, hw: &HardwareSpec, models: &[ModelConfig]) -> Result<SweepKey, Error> {
        let model = resolve_model(&s.model, models)?.clone();
        let spec = s.serving.speculative.as_ref();
        let draft_model = match spec.filter(|p| p.method == SpecMethod::DraftModel) {
            Some(p) => Some(
                resolve_model(p.draft_model.as_deref().unwrap_or_default(), models)
                    .map_err(|_| {
                        Error::InvalidInput("speculative method draft model: choose the draft model".into())
                    })?
                    .clone(),
            ),
            None => None,
        };
        Ok(SweepKey {
            speculative: spec.map(|p| p.decoding()).transpose()?,
            draft_model,
            prefix_hit_rate: s.serving.prefix_hit_rate,
            hardware: hw.clone(),
            layouts: layouts(&model, hw),
            model,
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

    /// Runs the sweep: every config × every layout × the concurrency grid up to what fits or the engine
    /// runs, as `roofline serve --configs all --tp 1,2,4,8` with no loads.
    ///
    /// # Errors
    /// What `roofline_core::sweep` rejects: an invalid workload or limit.
    pub fn sweep(&self) -> Result<Sweep, Error> {
        let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
        sweep(&SweepSpec {
            hardware: &self.hardware,
            model: &self.model,
            configs: &configs,
            parallelisms: &self.layouts,
            workload: self.workload,
            loads: &[],
            engine: self.engine,
            token_budget: self.token_budget,
            max_seqs: self.max_seqs,
            memory_fraction: self.memory_fraction,
            scheduler: self.scheduler,
            corrections: self.corrections,
            client: BenchClient::default(),
            features: self.features(),
        })
    }

    /// Speculative decoding and the prefix cache, as core's sweep takes them.
    #[must_use]
    pub fn features(&self) -> EngineFeatures<'_> {
        EngineFeatures {
            speculative: self.speculative,
            draft_model: self.draft_model.as_ref(),
            prefix_hit_rate: self.prefix_hit_rate,
        }
    }

    /// Speculative decoding and the prefix cache in words, e.g. `MTP, 3 drafts, acceptance 2.49 · prefix
    /// cache 50 %`; empty when neither is on.
    #[must_use]
    pub fn features_words(&self) -> String {
        let spec = self.speculative.map(|p| {
            let method = match &self.draft_model {
                Some(m) if p.method == SpecMethod::DraftModel => format!("draft model {}", m.name),
                _ => method_name(p.method).to_owned(),
            };
            format!(
                "{method}, {} drafts, acceptance {}",
                p.draft_tokens,
                format::number(p.acceptance_length)
            )
        });
        let prefix = (self.prefix_hit_rate > 0.0)
            .then(|| format!("prefix cache {} %", format::number(self.prefix_hit_rate * 100.0)));
        [spec, prefix]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// The engine's own defaults on this device on one GPU (the limits the inputs' placeholders name).
    #[must_use]
    pub fn engine_defaults(&self) -> EnginePreset {
        self.engine.preset(&self.hardware, &Parallelism::SINGLE)
    }

    /// The chart's title: mode, device and model, e.g. `reference · NVIDIA H100 SXM5 80GB · Llama 3.1 8B`.
    #[must_use]
    pub fn title(&self) -> String {
        format!("{} · {}", mode_label(&self.hardware), self.model.name)
    }

    /// The GPU counts swept, e.g. `1, 2, 4 or 8 GPUs`, or `1 GPU`.
    #[must_use]
    pub fn gpus(&self) -> String {
        let mut counts: Vec<u32> = self.layouts.iter().map(Parallelism::gpus).collect();
        counts.dedup();
        match counts.as_slice() {
            [] | [1] => "1 GPU".to_owned(),
            [.., last] => {
                let head: Vec<String> = counts[..counts.len() - 1].iter().map(u32::to_string).collect();
                format!("{} or {last} GPUs", head.join(", "))
            }
        }
    }

    /// What every number of the view is about: mode, device, model, GPU counts, request lengths, engine and
    /// scheduler, then speculative decoding and the prefix cache when on, e.g. `reference · NVIDIA H100 SXM · Llama-3.1-8B · 1, 2, 4 or 8 GPUs · ISL 1024 / OSL
    /// 1024 · vLLM, in-flight batching`.
    #[must_use]
    pub fn context(&self) -> String {
        let features = self.features_words();
        format!(
            "{} · {} · ISL {} / OSL {} · {}, {}{}{features}",
            self.title(),
            self.gpus(),
            self.workload.isl,
            self.workload.osl,
            engine_name(self.engine),
            scheduler_name(self.scheduler),
            if features.is_empty() { "" } else { " · " }
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

/// Twelve colours told apart by most eyes (Tableau 10 and two more), one per config in the sweep's order;
/// a config past the twelfth takes a darker shade of one.
const SERIES_RGB: [Rgb; 12] = [
    (0x1f, 0x77, 0xb4),
    (0xff, 0x7f, 0x0e),
    (0x2c, 0xa0, 0x2c),
    (0xd6, 0x27, 0x28),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
    (0xe3, 0x77, 0xc2),
    (0x7f, 0x7f, 0x7f),
    (0xbc, 0xbd, 0x22),
    (0x17, 0xbe, 0xcf),
    (0x39, 0x3b, 0x79),
    (0xad, 0x49, 0x4a),
];

/// The colour of the `index`-th config of a sweep.
#[must_use]
pub fn config_rgb(index: usize) -> Rgb {
    let (r, g, b) = SERIES_RGB[index % SERIES_RGB.len()];
    if index < SERIES_RGB.len() {
        (r, g, b)
    } else {
        let dark = |c: u8| (f64::from(c) * 0.55).round() as u8;
        (dark(r), dark(g), dark(b))
    }
}

/// The configs of `sweep` in order, each once: the index of a config's colour.
#[must_use]
pub fn config_order(sweep: &Sweep) -> Vec<&str> {
    let mut order: Vec<&str> = Vec::new();
    for fit in &sweep.fits {
        if !order.contains(&fit.config.as_str()) {
            order.push(&fit.config);
        }
    }
    order
}

/// The load of a point in words: `192 users` (closed loop), or `2.5 requests/s`.
#[must_use]
pub fn load_words(load: Load) -> String {
    match load {
        Load::Concurrency(1) => "1 user".to_owned(),
        Load::Concurrency(n) => format!("{n} users"),
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
        // `roofline serve --hardware h100_sxm --model llama-3.1-8b --isl 1024 --osl 1024 --tp 1,2,4,8` in
        // core terms.
        let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
        let model = roofline_core::find_model("llama-3.1-8b").unwrap();
        let tp = [1, 2, 4, 8].map(Parallelism::tensor);
        let core = sweep(&SweepSpec {
            parallelisms: &tp,
            ..SweepSpec::new(&hw, model, &configs, ServingWorkload { isl: 1024, osl: 1024 })
        })
        .unwrap();
        assert_eq!(page, core);
        // BF16 holds 225 sequences of 2048 tokens on one GPU (docs/validation/serving.md §2).
        let bf16 = page.fits.iter().find(|f| f.config == "bf16").unwrap();
        assert_eq!((bf16.gpus, bf16.memory.max_sequences), (1, 225));
        assert_eq!(
            key.context(),
            "reference · NVIDIA H100 SXM5 80GB · Llama 3.1 8B · 1, 2, 4 or 8 GPUs · ISL 1024 / OSL 1024 · vLLM, \
             in-flight batching"
        );
    }

    #[test]
    fn speculative_decoding_and_the_prefix_cache_are_swept_as_core_sweeps_them() {
        use crate::serving_inputs::SpecInputs;
        let (mut s, hw) = h100_llama();
        s.serving.speculative = Some(SpecInputs::of(SpecMethod::Mtp));
        s.serving.prefix_hit_rate = 0.5;
        let key = SweepKey::of(&s, &hw, &[]).unwrap();
        // `roofline serve … --tp 1,2,4,8 --spec-method mtp --prefix-hit-rate 0.5`: k = 3 drafts at InferenceX's
        // golden 2.49.
        let spec = SpecDecoding::new(SpecMethod::Mtp, 3, None).unwrap();
        assert_eq!(spec.acceptance_length, 2.49);
        let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
        let model = roofline_core::find_model("llama-3.1-8b").unwrap();
        let tp = [1, 2, 4, 8].map(Parallelism::tensor);
        let core = sweep(&SweepSpec {
            parallelisms: &tp,
            features: EngineFeatures {
                speculative: Some(spec),
                draft_model: None,
                prefix_hit_rate: 0.5,
            },
            ..SweepSpec::new(&hw, model, &configs, ServingWorkload { isl: 1024, osl: 1024 })
        })
        .unwrap();
        assert_eq!(key.sweep().unwrap(), core);
        assert!(
            key.context()
                .ends_with("vLLM, in-flight batching · MTP, 3 drafts, acceptance 2.49 · prefix cache 50 %"),
            "{}",
            key.context()
        );
        // n-gram has no published acceptance: core says so until one is typed; a draft model must be chosen.
        s.serving.speculative = Some(SpecInputs::of(SpecMethod::Ngram));
        let err = SweepKey::of(&s, &hw, &[]).unwrap_err().to_string();
        assert!(err.contains("no published acceptance length for ngram"), "{err}");
        s.serving.speculative = Some(SpecInputs {
            acceptance: Some(1.5),
            ..SpecInputs::of(SpecMethod::DraftModel)
        });
        let err = SweepKey::of(&s, &hw, &[]).unwrap_err().to_string();
        assert!(err.contains("choose the draft model"), "{err}");
        s.serving.speculative.as_mut().unwrap().draft_model = Some("llama-3.2-1b".into());
        let key = SweepKey::of(&s, &hw, &[]).unwrap();
        assert_eq!(key.draft_model.as_ref().unwrap().key, "llama-3.2-1b");
        assert!(
            key.context()
                .contains("draft model Llama 3.2 1B, 3 drafts, acceptance 1.5"),
            "{}",
            key.context()
        );
    }

    #[test]
    fn colours_are_distinct_for_the_first_twelve_configs_then_darker() {
        let first: Vec<Rgb> = (0..12).map(config_rgb).collect();
        for (i, a) in first.iter().enumerate() {
            assert!(first[i + 1..].iter().all(|b| b != a));
        }
        assert_ne!(config_rgb(12), config_rgb(0));
        assert!(config_rgb(12).0 < config_rgb(0).0);
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
}
