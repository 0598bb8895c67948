//! The quantization advisor's ranked candidates for the current scenario.

use leptos::prelude::*;
use roofline_core::{Advice, Error, Mode, Pick, Recommendation};

use crate::calibration::mode_label;
use crate::format;
use crate::state::derived::Applied;
use crate::state::use_app;

/// The recommended config's line: name, speedup vs the baseline, step time and memory.
fn pick_line(p: &Pick) -> String {
    format!("{} · {}", p.name, crate::summary::pick_figures(p, "baseline"))
}

/// When nothing fits on the scenario's GPUs: the fastest config among those that fit on the fewest more
/// GPUs of the domain, as (config, name, GPUs).
pub(crate) fn fit_offer(advice: &Advice, gpus: u32) -> Option<(String, String, u32)> {
    let fewest = advice
        .candidates
        .iter()
        .filter_map(|c| c.min_gpus.filter(|n| *n > gpus))
        .min()?;
    advice
        .candidates
        .iter()
        .filter(|c| c.min_gpus == Some(fewest))
        .min_by(|a, b| a.time_s.total_cmp(&b.time_s))
        .map(|c| (c.config.clone(), c.name.clone(), fewest))
}

/// The offer of more GPUs when nothing fits (`fit-offer`, `data-config`, `data-gpus`; its button
/// `fit-use-gpus` sets the config and the GPU count).
pub(crate) fn offer_view(offer: Option<(String, String, u32)>) -> Option<impl IntoView + use<>> {
    let scenario = use_app().scenario;
    offer.map(|(config, name, gpus)| {
        let key = config.clone();
        view! {
            <p class="fit-offer" data-testid="fit-offer" data-config=config data-gpus=gpus.to_string()>
                {format!("{name} fits on {gpus} GPUs. ")}
                <button type="button" data-testid="fit-use-gpus" on:click=move |_| scenario.update(|s| {
                    s.config.clone_from(&key);
                    s.set_gpus(gpus);
                })>{format!("Use {name} on {gpus} GPUs")}</button>
            </p>
        }
    })
}

/// The one answer at the top (`recommendation`, `data-kind` = `switch`, `keep` or `nothing-fits`,
/// `data-config` = the recommended config): switch (with `apply-recommendation`, which sets the scenario's
/// config), keep, or what to change when nothing fits (`fit-change` items), first the offer of the fewest
/// more GPUs a config fits on (`offer`).
fn recommendation_view(
    r: Result<Recommendation, Error>,
    applied: Applied,
    offer: Option<(String, String, u32)>,
) -> AnyView {
    match r {
        Err(e) => view! { <p class="error" data-testid="recommendation">{format::failure(&e)}</p> }.into_any(),
        Ok(Recommendation::Switch(p)) => {
            let config = p.config.clone();
            view! {
                <div class="recommendation" data-testid="recommendation" data-kind="switch" data-config=p.config.clone()>
                    <h3>"Recommended: " {p.name.clone()}</h3>
                    <p class="pick">{pick_line(&p)}</p>
                    <p class="hint">{p.reason.clone()}</p>
                    <button type="button" data-testid="apply-recommendation"
                        on:click=move |_| applied.apply(config.clone())>
                        {format!("Apply {}", p.name)}
                    </button>
                </div>
            }
            .into_any()
        }
        Ok(Recommendation::Keep(p)) => view! {
            <div class="recommendation" data-testid="recommendation" data-kind="keep" data-config=p.config.clone()>
                <h3>"Recommended: keep " {p.name.clone()}</h3>
                <p class="pick">{pick_line(&p)}</p>
                <p class="hint">{p.reason.clone()}</p>
            </div>
        }
        .into_any(),
        Ok(Recommendation::NothingFits { smallest_bytes, capacity_bytes, changes }) => view! {
            <div class="recommendation over" data-testid="recommendation" data-kind="nothing-fits" data-config="">
                <h3>"Nothing fits in device memory"</h3>
                {offer_view(offer)}
                <p class="pick">{format!("The smallest config needs {} of {} usable. What would fit:",
                    format::capacity(smallest_bytes), format::capacity(capacity_bytes))}</p>
                <ul>{changes.into_iter().map(|c| view! { <li data-testid="fit-change">{c}</li> }).collect_view()}</ul>
            </div>
        }
        .into_any(),
    }
}

/// The mode and device of every number (`advisor-context`, also the tab's `data-mode` and `data-device`),
/// the recommendation, then the ranked precision configs from `roofline_core::advise_model_parallel` with
/// speedup, memory, the fewest GPUs each fits on (`min-gpus`, `data-value` empty when none within the
/// domain), break-even batch and the reason for each; configs the device cannot run are listed as skipped
/// with why.
#[component]
pub fn AdvisorTab() -> impl IntoView {
    let app = use_app();
    let (advice, recommendation, hardware) = (
        app.analyses.advice,
        app.analyses.recommendation,
        app.device.hardware,
    );
    let top = move || {
        let gpus = app.scenario.with(|s| s.gpus);
        let offer = advice.with(|a| a.as_ref().ok().and_then(|a| fit_offer(a, gpus)));
        recommendation_view(recommendation.get(), app.applied, offer)
    };
    let ranked = move || match advice.get() {
        Err(e) => view! { <p class="error">{format::failure(&e)}</p> }.into_any(),
        Ok(a) => {
            let candidates = a
                .candidates
                .into_iter()
                .map(|c| {
                    let break_even = c.break_even_batch.map_or("—".to_owned(), |b| format!("B ≥ {b}"));
                    let min_gpus = match c.min_gpus {
                        Some(1) => "fits on 1 GPU".to_owned(),
                        Some(n) => format!("fits on {n} GPUs"),
                        None => "does not fit in one scale-up domain".to_owned(),
                    };
                    let min_gpus_value = c.min_gpus.map_or(String::new(), |n| n.to_string());
                    view! {
                        <li class="candidate" data-config=c.config.clone()>
                            <div class="candidate-head">
                                <strong>{c.name}</strong>
                                <span>{format!("{:.2}× vs baseline", c.speedup)}</span>
                                <span>{format::duration(c.time_s)}</span>
                                <span class=format!("bound {}", c.bound.name())>{c.bound.name()}</span>
                                <span class="min-gpus" data-testid="min-gpus" data-value=min_gpus_value>{min_gpus}</span>
                            </div>
                            <div class="hint">
                                {format!("memory {} (saves {}) · {} · break-even {break_even}",
                                    format::capacity(c.memory_bytes), format::capacity(c.memory_saved_bytes),
                                    if c.fits_in_memory { "fits" } else { "does not fit" })}
                            </div>
                            <p>{c.reason}</p>
                            {c.caveats.into_iter().map(|w| view! { <p class="hint">"⚠ " {w}</p> }).collect_view()}
                        </li>
                    }
                })
                .collect_view();
            let skipped = a
                .skipped
                .into_iter()
                .map(|s| view! { <li>{crate::summary::config_name(&s.config)}": "{s.reason}</li> })
                .collect_view();
            view! {
                <div class="advisor">
                    <p class="hint">{format!("Baseline {}, current {}", crate::summary::config_name(&a.baseline), crate::summary::config_name(&a.current))}</p>
                    {a.warnings.into_iter().map(|w| view! { <p class="warning">{w}</p> }).collect_view()}
                    <ol class="candidates">{candidates}</ol>
                    <details>
                        <summary>"Skipped configs"</summary>
                        <ul class="hint">{skipped}</ul>
                    </details>
                </div>
            }
            .into_any()
        }
    };
    view! {
        <div class="advisor-tab" data-mode=move || hardware.with(|h| Mode::of(h).name())
            data-device=move || hardware.with(|h| h.name.clone())>
            <p class="hint" data-testid="advisor-context">
                {move || format!("Predicted in {}: step times, speedups and memory per GPU under the engine's memory rule.", hardware.with(mode_label))}
            </p>
            {top}
            {ranked}
        </div>
    }
}
