//! The serving view's answer in words and rows, from core's sizing ([`roofline_core::Sizing`]): the
//! recommended point and the fewest GPUs that meet the SLA in names and GiB, what would meet an SLA nothing
//! meets, the per-config table, and which rankings rest on reference ceilings no measurement backs.

use roofline_core::{
    Alternative, ConfigFit, HardwareSpec, ModelConfig, Percentile, ServingPoint, Sizing, Sla, Sweep,
    layout_name,
};

use crate::format;
use crate::palette::Rgb;
use crate::scenario::Scenario;
use crate::serving::{config_order, config_rgb, load_words, sla_words};
use crate::summary::config_name;

/// A point in words at statistic `at`, names not keys: `FP8 E4M3 on 2 GPUs (TP 2): 2175 output tokens/s per
/// GPU at 192 users, P90: 22.7 tokens/s per user, TTFT 133 ms, TPOT 44.1 ms`.
#[must_use]
pub fn point_words(p: &ServingPoint, at: Percentile) -> String {
    format!(
        "{} on {}: {} output tokens/s per GPU at {}, {}: {} tokens/s per user, TTFT {}, TPOT {}",
        config_name(&p.config),
        layout_name(&p.parallelism),
        format::number(p.output_tokens_per_s_per_gpu),
        load_words(p.load),
        at.name(),
        format::number(p.tokens_per_s_per_user_at(at)),
        format::duration(p.ttft_at(at)),
        format::duration(p.tpot_at(at))
    )
}

/// The SLA's answer in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The point with the most output tokens/s per GPU meeting the SLA, and its sentence.
    pub recommended: Option<(ServingPoint, String)>,
    /// The fewest GPUs that meet the SLA (when fewer than the recommendation's), and its sentence.
    pub fewest: Option<(ServingPoint, String)>,
    /// When nothing meets the SLA: the headline, core's reason for the closest config, and what would.
    pub nothing: Option<(String, String, Vec<String>)>,
}

/// The answer of `sizing` (over `gpus`, the GPU counts swept, e.g. `1, 2, 4 or 8 GPUs`) in words, at the
/// statistic its SLA was checked at.
#[must_use]
pub fn answer(sizing: &Sizing, gpus: &str) -> Answer {
    let (sla, at) = (&sizing.outcome.sla, sizing.outcome.percentile);
    let limits = sla_words(sla);
    let meets = if limits.is_empty() {
        "the most output tokens/s per GPU (no SLA set)".to_owned()
    } else {
        format!("meets {} at {}", limits.join(" and "), at.name())
    };
    let recommended = sizing
        .outcome
        .recommendation
        .clone()
        .map(|p| (p.clone(), format!("{} — {meets}", point_words(&p, at))));
    let fewest = sizing
        .fewest
        .clone()
        .filter(|f| recommended.as_ref().is_none_or(|(r, _)| f.gpus < r.gpus))
        .map(|p| {
            let text = format!(
                "{}: {} output tokens/s per GPU at {} in {} — {meets}",
                layout_name(&p.parallelism),
                format::number(p.output_tokens_per_s_per_gpu),
                load_words(p.load),
                config_name(&p.config)
            );
            (p, text)
        });
    let nothing = recommended.is_none().then(|| {
        let headline = format!(
            "Nothing the engine serves on {gpus} meets {} at {}",
            limits.join(" and "),
            at.name()
        );
        let reason = sizing.outcome.reason.clone().unwrap_or_default();
        let what = sizing.alternatives.iter().map(alternative_words).collect();
        (headline, reason, what)
    });
    Answer {
        recommended,
        fewest,
        nothing,
    }
}

/// An alternative in the page's words (config names, layouts).
fn alternative_words(a: &Alternative) -> String {
    let at = |p: &ServingPoint| {
        format!(
            "{} on {} at {} ({} output tokens/s per GPU)",
            config_name(&p.config),
            layout_name(&p.parallelism),
            load_words(p.load),
            format::number(p.output_tokens_per_s_per_gpu)
        )
    };
    match a {
        Alternative::OtherLayout(p) => format!("More GPUs: {}", at(p)),
        Alternative::NotServed { point, reason } => format!("Another engine: {} — but {reason}", at(point)),
        Alternative::LooserLimit { point, .. } => {
            let words = a.words();
            let limit = words.split(" would be met by").next().unwrap_or_default();
            format!("A looser limit: {limit} is met by {}", at(point))
        }
    }
}

/// One config's row of the table under the chart: its best point under the SLA over the GPU counts
/// allowed, its most output per GPU at all, and the memory of the layout those are on.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigRow {
    /// Config key.
    pub config: String,
    /// Display name.
    pub name: String,
    /// Curve colour.
    pub color: Rgb,
    /// Why the engine does not serve it (never recommended), if it does not.
    pub not_served: Option<String>,
    /// The point with the most output tokens/s per GPU that meets the SLA.
    pub best: Option<ServingPoint>,
    /// Why no point meets it (core's reason), or why the config has no point.
    pub why_none: Option<String>,
    /// The point with the most output tokens/s per GPU at all.
    pub top: Option<ServingPoint>,
    /// The layout the row's memory is of: the best point's, else the top's, else the smallest swept.
    pub fit: ConfigFit,
    /// Whether this config holds the recommendation.
    pub recommended: bool,
    /// The reference ceilings its ranking rests on that no measurement backs, if any.
    pub unmeasured: Option<String>,
}

/// One row per config that ran (in the sweep's order) over the GPU counts `allowed` (empty: all);
/// `unmeasured` says which unmeasured ceilings a config rests on.
#[must_use]
pub fn config_rows(
    sweep: &Sweep,
    sizing: &Sizing,
    allowed: &[u32],
    unmeasured: impl Fn(&str) -> Option<String>,
) -> Vec<ConfigRow> {
    let (sla, at): (&Sla, Percentile) = (&sizing.outcome.sla, sizing.outcome.percentile);
    let in_scope = |gpus: u32| allowed.is_empty() || allowed.contains(&gpus);
    let most = |points: &mut dyn Iterator<Item = &ServingPoint>| {
        points
            .max_by(|a, b| {
                a.output_tokens_per_s_per_gpu
                    .total_cmp(&b.output_tokens_per_s_per_gpu)
            })
            .cloned()
    };
    config_order(sweep)
        .into_iter()
        .enumerate()
        .filter_map(|(index, config)| {
            let fits: Vec<&ConfigFit> = sweep
                .fits
                .iter()
                .filter(|f| f.config == config && in_scope(f.gpus))
                .collect();
            let points = || {
                sweep
                    .points
                    .iter()
                    .filter(move |p| p.config == config && in_scope(p.gpus) && p.fits)
            };
            let best = most(&mut points().filter(|p| sla.meets_at(p, at)));
            let top = most(&mut points());
            let layout = best.as_ref().or(top.as_ref()).map(|p| p.parallelism);
            let fit = fits
                .iter()
                .find(|f| Some(f.parallelism) == layout)
                .or(fits.first())
                .copied()?
                .clone();
            let not_served = sizing
                .not_served
                .iter()
                .find(|n| n.config == config)
                .map(|n| n.reason.clone());
            let why_none = best.is_none().then(|| {
                sizing
                    .outcome
                    .picks
                    .iter()
                    .rev()
                    .find(|p| p.config == config && in_scope(p.gpus))
                    .and_then(|p| p.reason.clone())
                    .or_else(|| not_served.clone())
                    .unwrap_or_else(|| "no point meets the SLA".to_owned())
            });
            Some(ConfigRow {
                config: config.to_owned(),
                name: config_name(config),
                color: config_rgb(index),
                recommended: sizing
                    .outcome
                    .recommendation
                    .as_ref()
                    .is_some_and(|r| r.config == config),
                not_served,
                best,
                why_none,
                top,
                fit,
                unmeasured: unmeasured(config),
            })
        })
        .collect()
}

/// The GEMM ceilings behind `config` on `hw` (a reference spec) that are derived rather than measured on
/// the device, e.g. `NVFP4 GEMM on FP4`; `None` when every one is measured or `hw` is not in reference mode.
#[must_use]
pub fn unmeasured_ceilings(
    s: &Scenario,
    hw: &HardwareSpec,
    models: &[ModelConfig],
    config: &str,
) -> Option<String> {
    let scenario = Scenario {
        config: config.to_owned(),
        ..s.clone()
    };
    let derived: Vec<String> = scenario
        .used_reference_ceilings(hw, models)?
        .into_iter()
        .filter(|c| c.provenance() == "derived" && (c.what.contains("GEMM") || c.what.contains("small-M")))
        .map(|c| c.what)
        .collect();
    (!derived.is_empty()).then(|| {
        format!(
            "Rests on reference ceilings derived, not measured, on {}: {} (the Kernel tab's reference ceilings give each basis)",
            hw.name,
            derived.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::{Mode, SizingSpec, find_hardware_in};

    use crate::serving::tests::swept;

    /// Llama-3.1-70B on H100 SXMs (reference) over every layout, as the view sweeps it.
    fn llama_70b() -> (Scenario, HardwareSpec, Sweep) {
        let s = Scenario {
            hardware: "h100_sxm".into(),
            model: "llama-3.1-70b".into(),
            ..Scenario::default()
        };
        let hw = find_hardware_in("h100_sxm", Mode::Reference).unwrap().clone();
        let (_, sweep) = swept(&s, &hw);
        (s, hw, sweep)
    }

    fn sizing(s: &Scenario, hw: &HardwareSpec, sweep: &Sweep, sla: Sla, gpus: &[u32]) -> Sizing {
        let model = roofline_core::find_model(&s.model).unwrap();
        Sizing::new(
            sweep,
            model,
            hw,
            &SizingSpec {
                sla,
                percentile: roofline_core::Percentile::P90,
                gpus,
            },
        )
    }

    #[test]
    fn the_answer_speaks_in_names_and_layouts_and_names_the_fewest_gpus() {
        let (s, hw, sweep) = llama_70b();
        let sla = Sla {
            tokens_per_user_min: Some(20.0),
            ..Sla::default()
        };
        let z = sizing(&s, &hw, &sweep, sla, &[]);
        let a = answer(&z, "1, 2, 4 or 8 GPUs");
        let (best, text) = a.recommended.unwrap();
        assert!(text.starts_with(&config_name(&best.config)), "{text}");
        assert!(
            text.contains(&format!("on {}:", layout_name(&best.parallelism))),
            "{text}"
        );
        assert!(text.ends_with("— meets ≥ 20 tok/s/user at P90"), "{text}");
        let p90 = format!("P90: {} tokens/s per user", format::number(1.0 / best.tpot_p90_s));
        assert!(text.contains(&p90), "{text}");
        assert!(
            !text.contains(&best.config) || config_name(&best.config) == best.config,
            "{text}"
        );
        let (fewest, words) = a.fewest.unwrap();
        assert!(fewest.gpus < best.gpus);
        assert!(words.starts_with("1 GPU: "), "{words}");
        assert!(a.nothing.is_none());
    }

    #[test]
    fn nothing_meeting_the_sla_lists_what_would() {
        let (s, hw, sweep) = llama_70b();
        let sla = Sla {
            tokens_per_user_min: Some(100.0),
            ..Sla::default()
        };
        let a = answer(&sizing(&s, &hw, &sweep, sla, &[1, 2]), "1 or 2 GPUs");
        let (headline, _, what) = a.nothing.unwrap();
        assert_eq!(
            headline,
            "Nothing the engine serves on 1 or 2 GPUs meets ≥ 100 tok/s/user at P90"
        );
        assert!(what.iter().any(|w| w.starts_with("More GPUs: ")), "{what:?}");
        assert!(
            what.iter().any(|w| w.starts_with("A looser limit: ≥ ")),
            "{what:?}"
        );
    }

    #[test]
    fn rows_hold_each_configs_best_layout_and_whether_it_is_served() {
        let (s, hw, sweep) = llama_70b();
        let z = sizing(&s, &hw, &sweep, Sla::default(), &[]);
        let rows = config_rows(&sweep, &z, &[], |_| None);
        assert_eq!(rows.len(), config_order(&sweep).len());
        assert_eq!(rows.iter().filter(|r| r.recommended).count(), 1);
        let bf16 = rows.iter().find(|r| r.config == "bf16").unwrap();
        // 141 GB of BF16 weights need two GPUs: its best is on more than one.
        assert!(bf16.fit.gpus > 1 && bf16.best.is_some());
        assert_eq!(bf16.fit.parallelism, bf16.best.as_ref().unwrap().parallelism);
        // Only one GPU allowed: BF16 does not fit there.
        let one = config_rows(&sweep, &z, &[1], |_| None);
        let bf16 = one.iter().find(|r| r.config == "bf16").unwrap();
        assert!(bf16.best.is_none() && bf16.top.is_none() && bf16.fit.memory.max_sequences == 0);
    }

    #[test]
    fn a_derived_ceiling_is_named_where_a_ranking_rests_on_it() {
        // B200's FP4 GEMM peak fraction is derived (no published measurement of it).
        let s = Scenario::default();
        let b200 = find_hardware_in("b200", Mode::Reference).unwrap();
        let why = unmeasured_ceilings(&s, b200, &[], "nvfp4-w4a4").unwrap();
        assert!(
            why.starts_with("Rests on reference ceilings derived, not measured, on NVIDIA B200")
                && why.contains("FP4 GEMM peak"),
            "{why}"
        );
        // A datasheet spec has no reference ceilings to rest on.
        let datasheet = roofline_core::find_hardware("b200").unwrap();
        assert_eq!(unmeasured_ceilings(&s, datasheet, &[], "nvfp4-w4a4"), None);
    }
}
