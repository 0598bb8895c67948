//! The sizing answer over a sweep of several GPU layouts ([`Sizing::new`]): under an SLA and among the configs
//! the engine serves ([`super::serves`]), the point with the most output tokens/s per GPU, the fewest GPUs
//! that meet the SLA, the best point of each GPU count, and, when nothing meets it, what would: another
//! layout, a config another engine serves, or a looser limit.

use roofline_analysis::model::ModelConfig;
use roofline_base::format;
use roofline_base::hardware::HardwareSpec;

use super::{ConfigFit, Engine, Percentile, ServingPoint, Sla, SlaOutcome, Sweep, matrices_cover, serves};

/// A config the device runs but the engine does not serve: drawn and tabled, never recommended.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct NotServed {
    /// Precision config key.
    pub config: String,
    /// Why, naming the engine, the scheme or cache and the architecture ([`super::serves`]).
    pub reason: String,
}

/// The best point of one GPU count under the SLA.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GpuCountBest {
    /// GPUs of the replica.
    pub gpus: u32,
    /// The point with the most output tokens/s per GPU that meets the SLA on this many GPUs, if any.
    pub best: Option<ServingPoint>,
}

/// An SLA limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SlaLimit {
    /// Largest TTFT.
    Ttft,
    /// Largest TPOT.
    Tpot,
    /// Smallest tokens/s per user.
    TokensPerUser,
}

/// What would meet the SLA when nothing in scope does.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Alternative {
    /// A layout left out of the answer meets it (the fewest GPUs that do).
    OtherLayout(ServingPoint),
    /// A config the engine does not serve meets it.
    NotServed {
        /// The best such point.
        point: ServingPoint,
        /// Why the engine does not serve it.
        reason: String,
    },
    /// Relaxing one limit to `value` (the others kept) lets `point` meet it.
    LooserLimit {
        /// Which limit.
        limit: SlaLimit,
        /// The value it would need (s for TTFT and TPOT, tokens/s per user) at `percentile`.
        value: f64,
        /// The statistic the limits are checked against.
        percentile: Percentile,
        /// The point that meets the relaxed SLA with the most output tokens/s per GPU.
        point: ServingPoint,
    },
}

impl Alternative {
    /// The alternative in words, e.g. `TPOT ≤ 52.1 ms (P90) would be met by fp8 on 8 GPUs at 1 requests`.
    #[must_use]
    pub fn words(&self) -> String {
        let at = |p: &ServingPoint| {
            format!(
                "{} on {} GPU{} at {} requests",
                p.config,
                p.gpus,
                if p.gpus == 1 { "" } else { "s" },
                format::number(p.concurrency)
            )
        };
        match self {
            Alternative::OtherLayout(p) => format!("{} GPUs meet it: {}", p.gpus, at(p)),
            Alternative::NotServed { point, reason } => format!("{} meets it, but {reason}", at(point)),
            Alternative::LooserLimit {
                limit,
                value,
                percentile,
                point,
            } => {
                let limit = match limit {
                    SlaLimit::Ttft => format!("TTFT ≤ {}", format::duration(*value)),
                    SlaLimit::Tpot => format!("TPOT ≤ {}", format::duration(*value)),
                    SlaLimit::TokensPerUser => format!("≥ {} tok/s/user", format::number(*value)),
                };
                format!("{limit} ({}) would be met by {}", percentile.name(), at(point))
            }
        }
    }
}

/// What the answer may use: the SLA, the statistic it is checked against, and the GPU counts (empty: every
/// count the sweep ran).
#[derive(Debug, Clone, Copy)]
pub struct SizingSpec<'a> {
    /// The limits.
    pub sla: Sla,
    /// The statistic of each point the limits are checked against (P90 in `roofline serve` and the page).
    pub percentile: Percentile,
    /// GPU counts the answer may pick from; empty: all.
    pub gpus: &'a [u32],
}

/// The sizing answer.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Sizing {
    /// The SLA over the configs the engine serves on the GPU counts allowed: per config and layout, the
    /// recommendation (most output tokens/s per GPU), or why nothing meets it.
    pub outcome: SlaOutcome,
    /// The fewest GPUs that meet the SLA: of those points, the one with the most output tokens/s per GPU.
    pub fewest: Option<ServingPoint>,
    /// The best point of each GPU count allowed, fewest first.
    pub by_gpus: Vec<GpuCountBest>,
    /// Configs the device runs that the engine does not serve.
    pub not_served: Vec<NotServed>,
    /// When nothing meets the SLA: what would.
    pub alternatives: Vec<Alternative>,
}

/// The point of `points` with the most output tokens/s per GPU.
fn most_output<'a>(points: impl Iterator<Item = &'a ServingPoint>) -> Option<&'a ServingPoint> {
    points.max_by(|a, b| {
        a.output_tokens_per_s_per_gpu
            .total_cmp(&b.output_tokens_per_s_per_gpu)
    })
}

/// `sweep` with only the configs and layouts `keep` accepts.
fn subset(sweep: &Sweep, keep: impl Fn(&str, u32) -> bool) -> Sweep {
    Sweep {
        points: sweep
            .points
            .iter()
            .filter(|p| keep(&p.config, p.gpus))
            .cloned()
            .collect(),
        fits: sweep
            .fits
            .iter()
            .filter(|f: &&ConfigFit| keep(&f.config, f.gpus))
            .cloned()
            .collect(),
        // Field by field: `..sweep.clone()` would clone every point and fit only to drop them.
        hardware: sweep.hardware.clone(),
        model: sweep.model.clone(),
        workload: sweep.workload,
        unstable: sweep.unstable.clone(),
        unsupported: sweep.unsupported.clone(),
    }
}

impl Sizing {
    /// The answer over `sweep` of `model` on `hardware` (the spec it ran on) as `spec` asks; the engine is the
    /// sweep's. Where the support matrices have no column for the architecture, every config counts as served.
    #[must_use]
    pub fn new(sweep: &Sweep, model: &ModelConfig, hardware: &HardwareSpec, spec: &SizingSpec<'_>) -> Sizing {
        let engine = sweep.fits.first().map_or(Engine::Vllm, |f| f.preset.engine);
        let mut not_served: Vec<NotServed> = Vec::new();
        if matrices_cover(hardware.arch) {
            // Each config once, not once per layout: the SLA's every change sizes again.
            let mut seen: Vec<&str> = Vec::new();
            for fit in &sweep.fits {
                if seen.contains(&fit.config.as_str()) {
                    continue;
                }
                seen.push(&fit.config);
                let verdict = model
                    .config(&fit.config)
                    .map_err(|e| e.to_string())
                    .and_then(|c| serves(engine, &c, hardware.arch).map_err(|u| u.0));
                if let Err(reason) = verdict {
                    not_served.push(NotServed {
                        config: fit.config.clone(),
                        reason,
                    });
                }
            }
        }
        let served = |config: &str| !not_served.iter().any(|n| n.config == config);
        let allowed = |gpus: u32| spec.gpus.is_empty() || spec.gpus.contains(&gpus);
        let scope = subset(sweep, |c, g| served(c) && allowed(g));
        let at = spec.percentile;
        let outcome = spec.sla.evaluate_at(&scope, at);
        let meeting: Vec<&ServingPoint> = scope.points.iter().filter(|p| spec.sla.meets_at(p, at)).collect();
        let fewest_gpus = meeting.iter().map(|p| p.gpus).min();
        let fewest = most_output(meeting.iter().copied().filter(|p| Some(p.gpus) == fewest_gpus)).cloned();
        let mut counts: Vec<u32> = scope.fits.iter().map(|f| f.gpus).collect();
        counts.sort_unstable();
        counts.dedup();
        let by_gpus = counts
            .into_iter()
            .map(|gpus| GpuCountBest {
                gpus,
                best: most_output(meeting.iter().copied().filter(|p| p.gpus == gpus)).cloned(),
            })
            .collect();
        let alternatives = if outcome.recommendation.is_some() {
            Vec::new()
        } else {
            alternatives(sweep, &spec.sla, at, &not_served, &served, &allowed)
        };
        Sizing {
            outcome,
            fewest,
            by_gpus,
            not_served,
            alternatives,
        }
    }
}

/// What would meet `sla` at statistic `at` when nothing served on the allowed layouts does: the fewest GPUs
/// among the layouts left out, the best config the engine does not serve, and each limit relaxed alone to
/// what the best point meeting the other limits reaches.
fn alternatives(
    sweep: &Sweep,
    sla: &Sla,
    at: Percentile,
    not_served: &[NotServed],
    served: &dyn Fn(&str) -> bool,
    allowed: &dyn Fn(u32) -> bool,
) -> Vec<Alternative> {
    let mut out = Vec::new();
    let meets = |p: &&ServingPoint| sla.meets_at(p, at);
    let other_layouts = sweep
        .points
        .iter()
        .filter(|p| served(&p.config) && !allowed(p.gpus))
        .filter(meets);
    if let Some(fewest) = other_layouts.min_by(|a, b| {
        a.gpus.cmp(&b.gpus).then(
            b.output_tokens_per_s_per_gpu
                .total_cmp(&a.output_tokens_per_s_per_gpu),
        )
    }) {
        out.push(Alternative::OtherLayout(fewest.clone()));
    }
    let unserved = sweep
        .points
        .iter()
        .filter(|p| !served(&p.config) && allowed(p.gpus))
        .filter(meets);
    if let Some(point) = most_output(unserved) {
        let reason = not_served
            .iter()
            .find(|n| n.config == point.config)
            .map(|n| n.reason.clone())
            .unwrap_or_default();
        out.push(Alternative::NotServed {
            point: point.clone(),
            reason,
        });
    }
    let candidates: Vec<&ServingPoint> = sweep
        .points
        .iter()
        .filter(|p| served(&p.config) && allowed(p.gpus) && p.fits)
        .collect();
    let relaxations = [
        (SlaLimit::Ttft, sla.ttft_max_s.is_some()),
        (SlaLimit::Tpot, sla.tpot_max_s.is_some()),
        (SlaLimit::TokensPerUser, sla.tokens_per_user_min.is_some()),
    ];
    for (limit, set) in relaxations {
        if !set {
            continue;
        }
        let others = match limit {
            SlaLimit::Ttft => Sla {
                ttft_max_s: None,
                ..*sla
            },
            SlaLimit::Tpot => Sla {
                tpot_max_s: None,
                ..*sla
            },
            SlaLimit::TokensPerUser => Sla {
                tokens_per_user_min: None,
                ..*sla
            },
        };
        let value = |p: &ServingPoint| match limit {
            SlaLimit::Ttft => p.ttft_at(at),
            SlaLimit::Tpot => p.tpot_at(at),
            SlaLimit::TokensPerUser => p.tokens_per_s_per_user_at(at),
        };
        let closest = candidates
            .iter()
            .filter(|p| others.meets_at(p, at))
            .min_by(|a, b| match limit {
                SlaLimit::TokensPerUser => value(b).total_cmp(&value(a)),
                _ => value(a).total_cmp(&value(b)),
            });
        let Some(closest) = closest else { continue };
        let needed = value(closest);
        let relaxed = match limit {
            SlaLimit::Ttft => Sla {
                ttft_max_s: Some(needed),
                ..*sla
            },
            SlaLimit::Tpot => Sla {
                tpot_max_s: Some(needed),
                ..*sla
            },
            SlaLimit::TokensPerUser => Sla {
                tokens_per_user_min: Some(needed),
                ..*sla
            },
        };
        if let Some(point) = most_output(candidates.iter().copied().filter(|p| relaxed.meets_at(p, at))) {
            out.push(Alternative::LooserLimit {
                limit,
                value: needed,
                percentile: at,
                point: point.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::serving::{SweepSpec, layouts, sweep};
    use roofline_analysis::model::find_model;
    use roofline_analysis::quant_config::{QuantConfig, quant_configs};
    use roofline_base::hardware::{Mode, find_hardware_in};

    use crate::serving::ServingWorkload;

    /// `model` on `device` (reference) over every layout and config, vLLM, ISL 1024 / OSL 1024.
    pub(crate) fn layout_sweep(
        model: &str,
        device: &str,
    ) -> (Sweep, &'static ModelConfig, &'static HardwareSpec) {
        let hardware = find_hardware_in(device, Mode::Reference).unwrap();
        let model = find_model(model).unwrap();
        let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
        let parallelisms = layouts(model, hardware);
        let s = sweep(&SweepSpec {
            parallelisms: &parallelisms,
            ..SweepSpec::new(
                hardware,
                model,
                &configs,
                ServingWorkload { isl: 1024, osl: 1024 },
            )
        })
        .unwrap();
        (s, model, hardware)
    }

    /// `run` (a [`layout_sweep`]) sized for `sla` read at `percentile` on the GPU counts `gpus` (all when empty).
    fn sized(
        run: &(Sweep, &ModelConfig, &HardwareSpec),
        sla: Sla,
        percentile: Percentile,
        gpus: &[u32],
    ) -> Sizing {
        Sizing::new(
            &run.0,
            run.1,
            run.2,
            &SizingSpec {
                sla,
                percentile,
                gpus,
            },
        )
    }

    #[test]
    fn the_answer_names_the_fewest_gpus_and_the_most_output_per_gpu() {
        let run = layout_sweep("llama-3.1-70b", "h100_sxm");
        let sweep = &run.0;
        let sla = Sla {
            tokens_per_user_min: Some(20.0),
            ..Sla::default()
        };
        let sizing = sized(&run, sla, Percentile::Mean, &[]);
        let best = sizing.outcome.recommendation.clone().unwrap();
        // Every point meeting the SLA on a served config: the recommendation has the most output per GPU,
        // the fewest-GPU answer the smallest replica.
        let meeting: Vec<&ServingPoint> = sweep
            .points
            .iter()
            .filter(|p| sla.meets(p) && !sizing.not_served.iter().any(|n| n.config == p.config))
            .collect();
        let top = meeting
            .iter()
            .map(|p| p.output_tokens_per_s_per_gpu)
            .fold(0.0, f64::max);
        assert_eq!(best.output_tokens_per_s_per_gpu, top);
        let fewest = sizing.fewest.clone().unwrap();
        assert_eq!(fewest.gpus, meeting.iter().map(|p| p.gpus).min().unwrap());
        assert!(fewest.gpus < best.gpus, "{} vs {}", fewest.gpus, best.gpus);
        // One row per GPU count, each its own best; the recommendation is the best of them.
        assert_eq!(
            sizing.by_gpus.iter().map(|g| g.gpus).collect::<Vec<_>>(),
            [1, 2, 4, 8]
        );
        let of = |n: u32| sizing.by_gpus.iter().find(|g| g.gpus == n).unwrap();
        assert_eq!(of(best.gpus).best.as_ref(), Some(&best));
        assert!(sizing.alternatives.is_empty());
        // Only 4 and 8 GPUs allowed: the recommendation comes from them.
        let some = sized(&run, sla, Percentile::Mean, &[4, 8]);
        let r = some.outcome.recommendation.unwrap();
        assert!(r.gpus == 4 || r.gpus == 8);
        assert_eq!(some.by_gpus.len(), 2);
    }

    #[test]
    fn the_answer_checks_the_sla_at_the_percentile_asked() {
        let run = layout_sweep("llama-3.1-70b", "h100_sxm");
        let sweep = &run.0;
        // TTFT ≤ 500 ms and ≥ 20 tokens/s per user, checked on P90 then on P99 of each point.
        let sla = Sla {
            ttft_max_s: Some(0.5),
            tokens_per_user_min: Some(20.0),
            ..Sla::default()
        };
        for at in [Percentile::P90, Percentile::P99] {
            let sizing = sized(&run, sla, at, &[]);
            assert_eq!(sizing.outcome.percentile, at);
            // Independently: the served points whose P90 (P99) TTFT and 1 / TPOT meet the limits.
            let served = |c: &str| !sizing.not_served.iter().any(|n| n.config == c);
            let meeting: Vec<&ServingPoint> = sweep
                .points
                .iter()
                .filter(|p| served(&p.config) && p.ttft_at(at) <= 0.5 && 1.0 / p.tpot_at(at) >= 20.0)
                .collect();
            let best = sizing.outcome.recommendation.clone().unwrap();
            let top = meeting
                .iter()
                .map(|p| p.output_tokens_per_s_per_gpu)
                .fold(0.0, f64::max);
            assert_eq!(best.output_tokens_per_s_per_gpu, top, "{}", at.name());
            assert!(best.ttft_at(at) <= 0.5 && best.tokens_per_s_per_user_at(at) >= 20.0);
            let fewest = sizing.fewest.unwrap();
            assert_eq!(fewest.gpus, meeting.iter().map(|p| p.gpus).min().unwrap());
        }
        // A limit nothing meets at P99: the looser limit is what the best point reaches at P99, and says so.
        let strict = Sla {
            tokens_per_user_min: Some(1000.0),
            ..Sla::default()
        };
        let sizing = sized(&run, strict, Percentile::P99, &[]);
        let (value, point) = sizing
            .alternatives
            .iter()
            .find_map(|a| match a {
                Alternative::LooserLimit { value, point, .. } => Some((*value, point.clone())),
                _ => None,
            })
            .unwrap();
        let fastest = sweep
            .points
            .iter()
            .filter(|p| p.fits && !sizing.not_served.iter().any(|n| n.config == p.config))
            .map(|p| 1.0 / p.tpot_p99_s)
            .fold(0.0, f64::max);
        assert_eq!(value, fastest);
        assert!(point.tokens_per_s_per_user_at(Percentile::P99) >= value);
        let words: Vec<String> = sizing.alternatives.iter().map(Alternative::words).collect();
        assert!(
            words
                .iter()
                .any(|w| w.contains("tok/s/user (P99) would be met by")),
            "{words:?}"
        );
    }

    #[test]
    fn configs_the_engine_does_not_serve_are_never_recommended() {
        // DeepSeek-R1 on B200s: MXFP6 runs on the device, but no engine serves it natively.
        let run = layout_sweep("deepseek-r1", "b200");
        let sizing = sized(&run, Sla::default(), Percentile::P90, &[]);
        let mxfp6 = sizing
            .not_served
            .iter()
            .find(|n| n.config == "mxfp6-e3m2")
            .unwrap();
        assert!(
            mxfp6.reason.starts_with("vLLM does not serve MXFP6 E3M2"),
            "{}",
            mxfp6.reason
        );
        let r = sizing.outcome.recommendation.unwrap();
        assert!(
            !sizing.not_served.iter().any(|n| n.config == r.config),
            "{}",
            r.config
        );
    }

    #[test]
    fn nothing_meeting_the_sla_says_what_would() {
        let run = layout_sweep("llama-3.1-70b", "h100_sxm");
        let sweep = &run.0;
        // 100 tokens/s per user: more than any point reaches at these lengths on one, two or four GPUs.
        let sla = Sla {
            tokens_per_user_min: Some(100.0),
            ..Sla::default()
        };
        let fastest = |gpus: &[u32]| {
            sweep
                .points
                .iter()
                .filter(|p| gpus.contains(&p.gpus))
                .map(|p| p.tokens_per_s_per_user)
                .fold(0.0, f64::max)
        };
        let allowed = [1, 2, 4];
        assert!(
            fastest(&allowed) < 100.0 && fastest(&[8]) > 100.0,
            "{}",
            fastest(&[8])
        );
        let sizing = sized(&run, sla, Percentile::Mean, &allowed);
        assert!(sizing.outcome.recommendation.is_none() && sizing.fewest.is_none());
        let words: Vec<String> = sizing.alternatives.iter().map(Alternative::words).collect();
        // More GPUs: the fewest that meet it, left out by the layouts allowed.
        assert!(
            matches!(&sizing.alternatives[0], Alternative::OtherLayout(p) if p.gpus == 8),
            "{words:?}"
        );
        // A looser limit: what the fastest allowed point reaches.
        let looser = sizing
            .alternatives
            .iter()
            .find_map(|a| match a {
                Alternative::LooserLimit { value, .. } => Some(*value),
                _ => None,
            })
            .unwrap();
        assert_eq!(looser, fastest(&allowed));
        assert!(
            words
                .iter()
                .any(|w| w.contains("tok/s/user (mean) would be met by")),
            "{words:?}"
        );
    }

    #[test]
    fn the_grid_reaches_the_engines_limit_when_more_fit() {
        // Llama-3.1-8B in FP8 on a B200: more than 1024 sequences of 2048 tokens fit in 0.92 of 178 GiB, so
        // the curve runs to vLLM's max_num_seqs (1024), past the old grid's 512; SGLang runs 2048.
        let configs = [roofline_analysis::quant_config::find_quant_config("fp8").unwrap()];
        let b200 = find_hardware_in("b200", Mode::Reference).unwrap();
        let run = |engine| {
            sweep(&SweepSpec {
                engine,
                ..SweepSpec::new(
                    b200,
                    find_model("llama-3.1-8b").unwrap(),
                    &configs,
                    ServingWorkload { isl: 1024, osl: 1024 },
                )
            })
            .unwrap()
        };
        let vllm = run(crate::serving::Engine::Vllm);
        assert!(
            vllm.fits[0].memory.max_sequences > 1024,
            "{}",
            vllm.fits[0].memory.max_sequences
        );
        assert_eq!(
            vllm.points.last().unwrap().load,
            crate::serving::Load::Concurrency(1024)
        );
        let sglang = run(crate::serving::Engine::Sglang);
        let top = sglang.points.last().unwrap().concurrency;
        assert!(top > 1024.0 && top <= 2048.0, "{top}");
    }
}
