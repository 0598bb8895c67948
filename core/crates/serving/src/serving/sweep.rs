//! Sweeps over precision configs, GPU counts and loads ([`sweep`]), the Pareto front of tokens/s per user
//! against output tokens/s per GPU (the chart InferenceX, AIConfigurator and `vllm bench sweep
//! plot_pareto` draw), and the SLA filter ([`Sla`]): the best point under latency limits, or why none
//! meets them.

use roofline_analysis::corrections::Corrections;
use roofline_analysis::memory::MemoryBudget;
use roofline_analysis::model::ModelConfig;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::format;
use roofline_base::hardware::HardwareSpec;

use super::{
    BenchClient, Engine, EngineFeatures, EnginePreset, Load, Percentile, SchedulerKind, ServingModel,
    ServingOutcome, ServingPoint, ServingWorkload, Unstable,
};

/// Concurrencies a sweep visits: 1 to 2048 in steps of about √2, the grid serving benchmarks use
/// (InferenceX and `vllm bench sweep` run powers of two; the halves between them resolve the knee), up to
/// SGLang's and TensorRT-LLM's default of 2048 running requests.
pub const CONCURRENCY_GRID: [u32; 22] = [
    1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
];

/// The grid capped at, and including, `max_fit` (the most sequences that fit): every grid value below it,
/// then `max_fit` itself when it is under the grid's top. Empty when nothing fits.
///
/// # Examples
/// ```
/// assert_eq!(roofline_serving::concurrency_grid(20), [1, 2, 3, 4, 6, 8, 12, 16, 20]);
/// assert_eq!(roofline_serving::concurrency_grid(0), Vec::<u32>::new());
/// ```
#[must_use]
pub fn concurrency_grid(max_fit: u32) -> Vec<u32> {
    let top = max_fit.min(CONCURRENCY_GRID[CONCURRENCY_GRID.len() - 1]);
    let mut grid: Vec<u32> = CONCURRENCY_GRID.iter().copied().filter(|&n| n < top).collect();
    if top > 0 {
        grid.push(top);
    }
    grid
}

/// What a sweep covers.
#[derive(Debug, Clone, Copy)]
pub struct SweepSpec<'a> {
    /// The device.
    pub hardware: &'a HardwareSpec,
    /// The model.
    pub model: &'a ModelConfig,
    /// Precision configs to try (each checked against the device).
    pub configs: &'a [&'a QuantConfig],
    /// GPU splits of one replica to try.
    pub parallelisms: &'a [Parallelism],
    /// ISL and OSL.
    pub workload: ServingWorkload,
    /// Loads to predict; empty: the concurrency grid up to the most that fit or the engine runs at once,
    /// whichever is fewer ([`concurrency_grid`]).
    pub loads: &'a [Load],
    /// Whose defaults to take.
    pub engine: Engine,
    /// Token budget replacing the engine's default.
    pub token_budget: Option<u32>,
    /// Max running requests replacing the engine's default.
    pub max_seqs: Option<u32>,
    /// The engine's memory fraction replacing its default value, in (0, 1]
    /// ([`EnginePreset::with_memory_fraction`]).
    pub memory_fraction: Option<f64>,
    /// In-flight or static batching.
    pub scheduler: SchedulerKind,
    /// Corrections of every step.
    pub corrections: Corrections,
    /// The benchmark client whose run is simulated.
    pub client: BenchClient,
    /// Speculative decoding and prefix caching.
    pub features: EngineFeatures<'a>,
}

impl<'a> SweepSpec<'a> {
    /// A sweep of `configs` at `workload`'s lengths with `roofline serve`'s defaults for the rest: one GPU,
    /// the concurrency grid up to what fits (no loads), vLLM's limits, in-flight batching,
    /// [`Corrections::REALISTIC`], `vllm bench serve`'s client and no speculation or prefix cache. Set a field
    /// to change one of them.
    #[must_use]
    pub fn new(
        hardware: &'a HardwareSpec,
        model: &'a ModelConfig,
        configs: &'a [&'a QuantConfig],
        workload: ServingWorkload,
    ) -> Self {
        SweepSpec {
            hardware,
            model,
            configs,
            parallelisms: &[Parallelism::SINGLE],
            workload,
            loads: &[],
            engine: Engine::Vllm,
            token_budget: None,
            max_seqs: None,
            memory_fraction: None,
            scheduler: SchedulerKind::InFlight,
            corrections: Corrections::REALISTIC,
            client: BenchClient::default(),
            features: EngineFeatures::default(),
        }
    }
}

/// A config the device cannot run, never skipped silently.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UnsupportedConfig {
    /// Precision config key.
    pub config: String,
    /// Why, naming the architecture.
    pub reason: String,
}

/// One config on one GPU split: the engine limits it ran with and its memory.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ConfigFit {
    /// Precision config key.
    pub config: String,
    /// The split.
    pub parallelism: Parallelism,
    /// GPUs of the replica.
    pub gpus: u32,
    /// The engine's defaults (with the caller's limits).
    pub preset: EnginePreset,
    /// One GPU's memory; `max_sequences` 0 when the model does not fit.
    pub memory: MemoryBudget,
}

/// Every point of a sweep, and what had none.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Sweep {
    /// Device key.
    pub hardware: String,
    /// Model key.
    pub model: String,
    /// ISL and OSL.
    pub workload: ServingWorkload,
    /// Simulated runs, config by config, GPU count by GPU count, load by load, Pareto-marked.
    pub points: Vec<ServingPoint>,
    /// Rates the engine cannot sustain.
    pub unstable: Vec<Unstable>,
    /// Configs the device cannot run.
    pub unsupported: Vec<UnsupportedConfig>,
    /// Every config and split that ran, with its memory (those that do not fit have no points).
    pub fits: Vec<ConfigFit>,
}

/// Predicts every config of `spec` the device runs, on each GPU split, at each load, and marks the Pareto
/// front over all points that fit (x = tokens/s per user, y = output tokens/s per GPU: a point is on it when
/// no other is at least as good in both and better in one).
///
/// # Errors
/// [`Error::InvalidInput`] for an invalid workload, limits or split (e.g. a tensor degree that does not
/// divide the heads), or a load the model refuses.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// let h100 = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
/// let spec = SweepSpec::new(h100, model, &configs, ServingWorkload { isl: 1024, osl: 1024 });
/// let s = sweep(&spec).unwrap();
/// // Hopper runs no FP4 and no MX formats: those configs are listed, with the architecture.
/// assert!(s.unsupported.iter().any(|u| u.config == "nvfp4-w4a4" && u.reason.contains("Hopper")));
/// assert!(s.points.iter().any(|p| p.pareto));
/// ```
pub fn sweep(spec: &SweepSpec<'_>) -> Result<Sweep, Error> {
    spec.workload.check()?;
    let mut out = Sweep {
        hardware: spec.hardware.key.clone(),
        model: spec.model.key.clone(),
        workload: spec.workload,
        points: Vec::new(),
        unstable: Vec::new(),
        unsupported: Vec::new(),
        fits: Vec::new(),
    };
    let mut jobs = Vec::new();
    for parallelism in spec.parallelisms {
        parallelism.check(spec.model, spec.hardware)?;
        let preset = spec
            .engine
            .preset(spec.hardware, parallelism)
            .with_limits(spec.token_budget, spec.max_seqs)
            .with_memory_fraction(spec.memory_fraction);
        preset.fraction.check()?;
        for &config in spec.configs {
            match config.check_support(spec.hardware) {
                Ok(()) => jobs.push((preset, *parallelism, config)),
                Err(e) if parallelism == &spec.parallelisms[0] => {
                    out.unsupported.push(UnsupportedConfig {
                        config: config.key.clone(),
                        reason: e.to_string(),
                    });
                }
                Err(_) => {}
            }
        }
    }
    let runs = each(&jobs, |&(preset, parallelism, config)| {
        run_config(spec, preset, parallelism, config)
    });
    for run in runs {
        let (fit, outcomes) = run?;
        out.fits.push(fit);
        for outcome in outcomes {
            match outcome {
                ServingOutcome::Steady(point) => out.points.push(point),
                ServingOutcome::Unstable(u) => out.unstable.push(u),
            }
        }
    }
    mark_pareto(&mut out.points);
    Ok(out)
}

/// One config on one split: its fit and, when it fits, its outcome at every load.
fn run_config(
    spec: &SweepSpec<'_>,
    preset: EnginePreset,
    parallelism: Parallelism,
    config: &QuantConfig,
) -> Result<(ConfigFit, Vec<ServingOutcome>), Error> {
    let scenario = super::ServingScenario {
        features: spec.features,
        ..preset.scenario(
            spec.hardware,
            spec.model,
            config,
            parallelism,
            spec.corrections,
            spec.scheduler,
        )
    };
    let mut model = ServingModel::new(scenario, spec.workload)?.with_client(spec.client)?;
    let memory = *model.memory();
    let fit = ConfigFit {
        config: config.key.clone(),
        parallelism,
        gpus: parallelism.gpus(),
        preset,
        memory,
    };
    if !memory.fits() {
        return Ok((fit, Vec::new()));
    }
    let grid: Vec<Load>;
    let loads = if spec.loads.is_empty() {
        // Beyond the engine's max_seqs requests only queue: more concurrency adds TTFT, not output.
        grid = concurrency_grid(memory.max_sequences.min(preset.in_flight.max_seqs))
            .into_iter()
            .map(Load::Concurrency)
            .collect();
        &grid
    } else {
        spec.loads
    };
    let outcomes = loads
        .iter()
        .map(|&load| model.predict(load))
        .collect::<Result<_, _>>()?;
    Ok((fit, outcomes))
}

/// `f` of every item, in order. Natively the items are spread over the machine's threads (a sweep's
/// configs are independent simulations, each deterministic); on wasm, where a page has one thread, they
/// run one after another.
fn each<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let threads = std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .min(items.len());
        if threads > 1 {
            let next = AtomicUsize::new(0);
            let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
            std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut done = Vec::new();
                            loop {
                                let i = next.fetch_add(1, Ordering::Relaxed);
                                let Some(item) = items.get(i) else {
                                    return done;
                                };
                                done.push((i, f(item)));
                            }
                        })
                    })
                    .collect();
                for worker in workers {
                    let done = worker
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    for (i, r) in done {
                        results[i] = Some(r);
                    }
                }
            });
            return results.into_iter().flatten().collect();
        }
    }
    items.iter().map(f).collect()
}

/// Marks the points that fit and that no other fitting point dominates in tokens/s per user and output
/// tokens/s per GPU. Points beyond what fits only add queueing to a fitting point, so they are never on the
/// front.
fn mark_pareto(points: &mut [ServingPoint]) {
    let keys: Vec<Option<(f64, f64)>> = points
        .iter()
        .map(|p| {
            p.fits
                .then_some((p.tokens_per_s_per_user, p.output_tokens_per_s_per_gpu))
        })
        .collect();
    for (point, key) in points.iter_mut().zip(&keys) {
        point.pareto = key.is_some_and(|(x, y)| {
            !keys
                .iter()
                .flatten()
                .any(|&(ox, oy)| ox >= x && oy >= y && (ox > x || oy > y))
        });
    }
}

/// Service-level limits; any subset.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Sla {
    /// Largest TTFT, in s.
    pub ttft_max_s: Option<f64>,
    /// Largest TPOT, in s.
    pub tpot_max_s: Option<f64>,
    /// Smallest tokens/s per user (1 / TPOT).
    pub tokens_per_user_min: Option<f64>,
}

/// The best point of one config and split under an SLA, or why it has none.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SlaPick {
    /// Precision config key.
    pub config: String,
    /// GPUs of the replica.
    pub gpus: u32,
    /// The point with the most output tokens/s per GPU among those meeting the SLA.
    pub best: Option<ServingPoint>,
    /// Why no point meets it: the limit it breaks at the least-loaded point (None when `best` is some).
    pub reason: Option<String>,
}

/// The SLA over a sweep: per config and split, the overall recommendation, or why nothing meets it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SlaOutcome {
    /// The limits.
    pub sla: Sla,
    /// The statistic of each point the limits were checked against.
    pub percentile: Percentile,
    /// Each config and split that ran.
    pub picks: Vec<SlaPick>,
    /// The point with the most output tokens/s per GPU over every config meeting the SLA.
    pub recommendation: Option<ServingPoint>,
    /// When nothing meets the SLA: the closest config's reason.
    pub reason: Option<String>,
}

impl Sla {
    /// Whether no limit is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ttft_max_s.is_none() && self.tpot_max_s.is_none() && self.tokens_per_user_min.is_none()
    }

    /// Checks the limits are positive and finite.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the limit.
    pub fn check(&self) -> Result<(), Error> {
        for (name, value) in [
            ("ttft_max_s", self.ttft_max_s),
            ("tpot_max_s", self.tpot_max_s),
            ("tokens_per_user_min", self.tokens_per_user_min),
        ] {
            if let Some(v) = value
                && !(v.is_finite() && v > 0.0)
            {
                return Err(Error::InvalidInput(format!(
                    "SLA limit {name} must be positive and finite, got {v}"
                )));
            }
        }
        Ok(())
    }

    /// Each limit `point` breaks at statistic `p`, as (how far over: value/limit ≥ 1, the sentence saying
    /// so).
    fn breaches(&self, point: &ServingPoint, p: Percentile) -> Vec<(f64, String)> {
        let at = match point.load {
            Load::Concurrency(n) => format!("at concurrency {n}"),
            Load::Rate(r) => format!("at {} requests/s", format::number(r)),
        };
        let time = format::duration as fn(f64) -> String;
        let (ttft, tpot, user) = match p {
            Percentile::Mean => ("TTFT", "TPOT", "tokens/s per user"),
            Percentile::P50 => ("median TTFT", "median TPOT", "median tokens/s per user"),
            Percentile::P90 => ("P90 TTFT", "P90 TPOT", "P90 tokens/s per user"),
            Percentile::P99 => ("P99 TTFT", "P99 TPOT", "P99 tokens/s per user"),
        };
        // (limit, value, the limit is an upper bound, name, formatter)
        let checks = [
            (self.ttft_max_s, point.ttft_at(p), true, ttft, time),
            (self.tpot_max_s, point.tpot_at(p), true, tpot, time),
            (
                self.tokens_per_user_min,
                point.tokens_per_s_per_user_at(p),
                false,
                user,
                format::number as fn(f64) -> String,
            ),
        ];
        checks
            .into_iter()
            .filter_map(|(limit, value, upper, name, show)| {
                let limit = limit?;
                let (over, sign) = if upper {
                    (value / limit, ">")
                } else {
                    (limit / value, "<")
                };
                (over > 1.0).then(|| {
                    (
                        over,
                        format!("{name} {at} is {} {sign} {}", show(value), show(limit)),
                    )
                })
            })
            .collect()
    }

    /// Whether `point` meets every limit with its means.
    #[must_use]
    pub fn meets(&self, point: &ServingPoint) -> bool {
        self.meets_at(point, Percentile::Mean)
    }

    /// Whether `point` meets every limit at statistic `p` (tokens/s per user is 1 / TPOT at `p`).
    #[must_use]
    pub fn meets_at(&self, point: &ServingPoint, p: Percentile) -> bool {
        self.breaches(point, p).is_empty()
    }

    /// [`Sla::evaluate_at`] the means.
    #[must_use]
    pub fn evaluate(&self, sweep: &Sweep) -> SlaOutcome {
        self.evaluate_at(sweep, Percentile::Mean)
    }

    /// The best point per config and split of `sweep` whose statistic `p` meets the limits, the overall
    /// recommendation (most output tokens/s per GPU), or why nothing meets them: the limit the closest config
    /// breaks at its least-loaded point.
    #[must_use]
    pub fn evaluate_at(&self, sweep: &Sweep, p: Percentile) -> SlaOutcome {
        let mut picks = Vec::with_capacity(sweep.fits.len());
        let mut closest: Option<(f64, String)> = None;
        for fit in &sweep.fits {
            let points: Vec<&ServingPoint> = sweep
                .points
                .iter()
                .filter(|p| p.config == fit.config && p.parallelism == fit.parallelism)
                .collect();
            let best = points
                .iter()
                .filter(|point| self.meets_at(point, p))
                .max_by(|a, b| {
                    a.output_tokens_per_s_per_gpu
                        .total_cmp(&b.output_tokens_per_s_per_gpu)
                })
                .map(|p| (*p).clone());
            let where_ = if fit.gpus > 1 {
                format!("{}× {} in {}", fit.gpus, sweep.hardware, fit.config)
            } else {
                format!("{} in {}", sweep.hardware, fit.config)
            };
            let reason = if best.is_some() {
                None
            } else if let Some(least) = points
                .iter()
                .min_by(|a, b| a.concurrency.total_cmp(&b.concurrency))
            {
                let breaches = self.breaches(least, p);
                let worst = breaches.iter().map(|b| b.0).fold(1.0, f64::max);
                let texts: Vec<&str> = breaches.iter().map(|b| b.1.as_str()).collect();
                let who = if least.load == Load::Concurrency(1) {
                    "even one user is"
                } else {
                    "even the least load is"
                };
                let text = format!("{}: {who} too slow on {where_}", texts.join("; "));
                if closest.as_ref().is_none_or(|c| worst < c.0) {
                    closest = Some((worst, text.clone()));
                }
                Some(text)
            } else {
                Some(format!(
                    "{where_} does not fit: {} of weights and {} of activations leave no KV cache",
                    format::bytes(fit.memory.weight_bytes),
                    format::bytes(fit.memory.activation_bytes)
                ))
            };
            picks.push(SlaPick {
                config: fit.config.clone(),
                gpus: fit.gpus,
                best,
                reason,
            });
        }
        let recommendation = picks
            .iter()
            .filter_map(|p| p.best.as_ref())
            .max_by(|a, b| {
                a.output_tokens_per_s_per_gpu
                    .total_cmp(&b.output_tokens_per_s_per_gpu)
            })
            .cloned();
        let reason = recommendation.is_none().then(|| match closest {
            Some((_, text)) => format!("no config meets the SLA; the closest: {text}"),
            None => "no config meets the SLA: none has a point".to_owned(),
        });
        SlaOutcome {
            sla: *self,
            percentile: p,
            picks,
            recommendation,
            reason,
        }
    }
}

#[cfg(test)]
mod tests;
