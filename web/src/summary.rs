//! What the summary says beside core's numbers, as plain text: the advisor's one answer as a headline, the
//! recommended config shown in place of one the device cannot run (never an empty summary), and a mode's
//! figure beside the ideal datasheet bound (`6.40 ms (ideal 4.60 ms)`). Pure.

use roofline_core::{Advice, Error, ModelAnalysis, Pick, Recommendation, find_quant_config};

use crate::format;

/// The config the summary shows instead of one the device cannot run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Fallback {
    /// The config shown (its key).
    pub config: String,
    /// Its display name.
    pub name: String,
    /// One line: what cannot run, why, and what is shown instead.
    pub reason: String,
}

/// A config's display name, or its key when unknown.
#[must_use]
pub fn config_name(key: &str) -> String {
    find_quant_config(key).map_or_else(|_| key.to_owned(), |c| c.name.clone())
}

/// The fallback of a scenario whose own config's `analysis` failed because the device cannot run a format
/// of it: the advisor's recommendation when it switches, else (nothing fits) the fastest config the device
/// runs. `None` when the analysis succeeded, failed for another reason, or no config runs at all.
#[must_use]
pub fn fallback(
    analysis: &Result<ModelAnalysis, Error>,
    advice: &Result<Advice, Error>,
    recommendation: &Result<Recommendation, Error>,
    current_config: &str,
    device_name: &str,
) -> Option<Fallback> {
    let Err(Error::Unsupported { arch, path, .. }) = analysis else {
        return None;
    };
    let (config, why) = match recommendation {
        Ok(Recommendation::Switch(p)) => (p.config.clone(), "the recommended config"),
        _ => (
            advice.as_ref().ok()?.candidates.first()?.config.clone(),
            "the fastest config it runs (none fits in memory)",
        ),
    };
    let name = config_name(&config);
    Some(Fallback {
        reason: format!(
            "{} does not run on the {device_name} ({arch} has no {path} path): showing {why}, {name}.",
            config_name(current_config)
        ),
        config,
        name,
    })
}

/// A recommended config's figures, e.g. `1.85× vs BF16, 3.10 ms per step, fits (20.1 of 72.9 GiB usable)`:
/// its speedup over `versus`, its step time and its memory.
#[must_use]
pub fn pick_figures(p: &Pick, versus: &str) -> String {
    format!(
        "{:.2}× vs {versus}, {} per step, fits ({} of {} usable)",
        p.speedup,
        format::duration(p.time_s),
        format::capacity(p.memory_bytes),
        format::capacity(p.capacity_bytes)
    )
}

/// The advisor's one answer as one line, e.g. `Switch to FP8 W8A8: 1.85× vs BF16, 3.10 ms per step, fits
/// (20.1 of 72.9 GiB usable)`; `None` for a recommendation that is an error.
#[must_use]
pub fn headline(recommendation: &Result<Recommendation, Error>, baseline: &str) -> Option<String> {
    let pick_line =
        |verb: &str, p: &Pick| format!("{verb} {}: {}", p.name, pick_figures(p, &config_name(baseline)));
    Some(match recommendation.as_ref().ok()? {
        Recommendation::Switch(p) => pick_line("Switch to", p),
        Recommendation::Keep(p) => pick_line("Keep", p),
        Recommendation::NothingFits {
            smallest_bytes,
            capacity_bytes,
            ..
        } => format!(
            "Nothing fits: the smallest config needs {} of {} usable (see the Advisor tab for what to change)",
            format::capacity(*smallest_bytes),
            format::capacity(*capacity_bytes)
        ),
    })
}

/// A duration in the mode beside the ideal bound, e.g. `6.40 ms (ideal 4.60 ms)`; just the value without
/// an ideal or when they are equal (datasheet mode).
#[must_use]
pub fn with_ideal(value: f64, ideal: Option<f64>, show: fn(f64) -> String) -> String {
    match ideal {
        Some(i) if i.is_finite() && (i - value).abs() > 1e-12 * value.abs() => {
            format!("{} (ideal {})", show(value), show(i))
        }
        _ => show(value),
    }
}

#[cfg(test)]
mod tests {
    use roofline_core::{
        Corrections, Phase, Workload, advise_model, analyze_model, find_hardware, find_model,
        find_quant_config, recommend_model,
    };

    use super::*;

    #[test]
    fn an_unsupported_config_falls_back_to_the_recommendation_and_says_why() {
        // NVFP4 W4A4 on an H100: Hopper has no FP4 path.
        let h100 = find_hardware("h100_sxm").unwrap().reference().unwrap();
        let model = find_model("llama-3.1-8b").unwrap();
        let w = Workload {
            phase: Phase::Decode,
            batch: 1,
            context: 4096,
        };
        let c = Corrections::REALISTIC;
        let analysis = analyze_model(&h100, model, find_quant_config("nvfp4-w4a4").unwrap(), &w, &c);
        let advice = advise_model(&h100, model, &w, "nvfp4-w4a4", &c);
        let recommendation = recommend_model(&h100, model, &w, &c, advice.as_ref().unwrap());
        let Ok(Recommendation::Switch(pick)) = &recommendation else {
            panic!("{recommendation:?}");
        };
        let f = fallback(&analysis, &advice, &recommendation, "nvfp4-w4a4", &h100.name).unwrap();
        assert_eq!(f.config, pick.config);
        assert!(
            f.reason.starts_with("NVFP4 W4A4 does not run on the NVIDIA H100")
                && f.reason.contains("Hopper sm_90 has no FP4 path")
                && f.reason
                    .ends_with(&format!("showing the recommended config, {}.", pick.name)),
            "{}",
            f.reason
        );
        // A config the device runs needs no fallback.
        let bf16 = analyze_model(&h100, model, find_quant_config("bf16").unwrap(), &w, &c);
        assert_eq!(
            fallback(&bf16, &advice, &recommendation, "bf16", &h100.name),
            None
        );
        let line = headline(&recommendation, "bf16").unwrap();
        assert!(
            line.starts_with(&format!("Switch to {}: ", pick.name)) && line.contains(" vs BF16"),
            "{line}"
        );
    }

    #[test]
    fn a_figure_sits_beside_its_ideal_bound() {
        assert_eq!(
            with_ideal(6.4e-3, Some(4.6e-3), format::duration),
            "6.40 ms (ideal 4.60 ms)"
        );
        assert_eq!(with_ideal(6.4e-3, Some(6.4e-3), format::duration), "6.40 ms");
        assert_eq!(with_ideal(6.4e-3, None, format::duration), "6.40 ms");
    }
}
