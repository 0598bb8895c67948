//! Headline numbers of the analysed model step, with the mode and device they come from, the advisor's one
//! answer, and, when the device cannot run the chosen config, the recommended config's numbers instead.

use leptos::prelude::*;
use roofline_core::{Mode, ModelAnalysis, Recommendation, StepLaunch};

use crate::calibration::{age, mode_label};
use crate::components::advisor_tab::{fit_offer, offer_view};
use crate::components::memory_bar::MemoryBar;
use crate::format;
use crate::scenario::{CeilingValue, UsedCeiling, gpus_label};
use crate::state::use_app;
use crate::summary::{config_name, headline, with_ideal};

/// One summary cell: the caption, the formatted figure and its raw base-unit value (`data-value`), with its
/// ideal datasheet bound's raw value (`data-ideal`) when it has one; a rate the device cannot reach because the
/// step does not fit (`over`) is struck through with "does not fit" (`<testid>-fit`) and `data-fits`.
#[component]
fn Stat(
    /// Caption.
    label: &'static str,
    /// Test id (the figure's element).
    testid: &'static str,
    /// Text and raw value.
    #[prop(into)]
    cell: Signal<(String, String)>,
    /// The raw value of the ideal bound beside it (empty when there is none).
    #[prop(optional, into)]
    ideal: Option<Signal<String>>,
    /// Whether the step does not fit in the device's memory, for a figure that needs it to.
    #[prop(default = None)]
    over: Option<Signal<bool>>,
) -> impl IntoView {
    // Only a figure that is shown can be marked (TTFT in decode is `—`).
    let marked = move || over.is_some_and(|o| o.get()) && cell.with(|c| !c.1.is_empty());
    view! {
        <div class="stat" class:over=marked>
            <span class="stat-label">{label}</span>
            <span
                class="stat-value"
                data-testid=(!testid.is_empty()).then_some(testid)
                data-value=move || cell.with(|c| c.1.clone())
                data-ideal=move || ideal.map(|i| i.get())
                data-fits=move || over.is_some().then(|| (!marked()).to_string())
            >
                {move || cell.with(|c| c.0.clone())}
            </span>
            {move || marked().then(|| view! {
                <span class="does-not-fit" data-testid=format!("{testid}-fit")>"does not fit"</span>
            })}
        </div>
    }
}

/// A reference ceiling's figure: `89.9 % of datasheet` or `5.00 µs per kernel`.
fn ceiling_value(v: CeilingValue) -> String {
    match v {
        CeilingValue::Fraction(f) => format!("{} of datasheet", format::percent(f)),
        CeilingValue::Seconds(s) => format!("{} per kernel", format::duration(s)),
    }
}

/// The reference ceilings behind the numbers (`reference-ceilings`), one row per figure: its value, whether
/// it is measured or derived (`ceiling-provenance`), and its basis (the source, or the rule).
fn ceilings_view(rows: Vec<UsedCeiling>) -> impl IntoView {
    let rows = rows
        .into_iter()
        .map(|r| {
            view! {
                <tr>
                    <th scope="row">{r.what.clone()}</th>
                    <td class="num">{ceiling_value(r.value)}</td>
                    <td class="provenance" data-testid="ceiling-provenance">{r.provenance()}</td>
                    <td class="hint">{r.basis.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <details class="ceilings" data-testid="reference-ceilings">
            <summary>"Reference ceilings used"</summary>
            <div class="table-box"><table><tbody>{rows}</tbody></table></div>
        </details>
    }
}

/// The mode badge (`mode-badge`, e.g. `reference · NVIDIA GB10`, `data-value` = the mode), why the mode asked
/// for cannot be had when it cannot (`mode-notice`), and a calibrated spec's age (`calibration-age-badge`).
#[component]
fn ModeLine() -> impl IntoView {
    let device = use_app().device;
    let hardware = device.hardware;
    let badge = Memo::new(move |_| hardware.with(|h| (Mode::of(h).name(), mode_label(h))));
    view! {
        <div class="mode-line">
            <span class="badge mode" data-testid="mode-badge" data-value=move || badge.with(|b| b.0)>
                {move || badge.with(|b| b.1.clone())}
            </span>
            {move || device.notice.get().map(|n| view! { <span class="warning" role="status" data-testid="mode-notice">{n}</span> })}
            {move || hardware.with(|h| h.calibration.clone()).map(|q| {
                let when = age(q.measured_at_unix_s, js_sys::Date::now() / 1e3);
                let text = match q.warnings.len() {
                    0 => format!("calibrated {when}"),
                    n => format!("calibrated {when} · {n} warning(s): see Validation"),
                };
                view! {
                    <span class=if q.warnings.is_empty() { "hint" } else { "warning" } data-testid="calibration-age-badge"
                        data-value=q.measured_at_unix_s.to_string()>{text}</span>
                }
            })}
        </div>
    }
}

/// The advisor's one answer (`summary-advice`, `data-kind` switch/keep/nothing-fits, Apply `summary-apply`);
/// when the device cannot run the config, the recommended config shown instead with why
/// (`summary-fallback`, `data-config`) and its Apply (`fallback-apply`); after an Apply, Undo
/// (`undo-apply`).
#[component]
fn AdviceLines() -> impl IntoView {
    let app = use_app();
    let (analyses, applied) = (app.analyses, app.applied);
    let advice = Memo::new(move |_| {
        analyses.recommendation.with(|r| {
            let (kind, switch_to) = match r {
                Ok(Recommendation::Switch(p)) => ("switch", Some((p.config.clone(), p.name.clone()))),
                Ok(Recommendation::Keep(_)) => ("keep", None),
                Ok(Recommendation::NothingFits { .. }) => ("nothing-fits", None),
                Err(_) => ("", None),
            };
            // Speedups are against the advice's baseline config.
            let baseline = analyses
                .advice
                .with(|a| a.as_ref().map(|a| a.baseline.clone()).unwrap_or_default());
            (kind, headline(r, &baseline), switch_to)
        })
    });
    let advice_line = move || {
        advice.with(|(kind, text, switch_to)| {
            text.clone().map(|text| {
                // The fallback already shows the switch's numbers; its own Apply is beside it.
                let apply_button = switch_to.clone().filter(|_| analyses.fallback.with(Option::is_none)).map(|(config, name)| view! {
                    <button type="button" data-testid="summary-apply" on:click=move |_| applied.apply(config.clone())>
                        {format!("Apply {name}")}
                    </button>
                });
                view! {
                    <p class="summary-advice" data-testid="summary-advice" data-kind=*kind>
                        <strong>"Advisor: "</strong>{text}" " {apply_button}
                    </p>
                }
            })
        })
    };
    let fallback_line = move || {
        analyses.fallback.get().map(|f| {
            let config = f.config.clone();
            view! {
                <p class="warning summary-fallback" role="status" data-testid="summary-fallback" data-config=f.config.clone()>
                    {f.reason.clone()} " "
                    <button type="button" data-testid="fallback-apply" on:click=move |_| applied.apply(config.clone())>
                        {format!("Apply {}", f.name)}
                    </button>
                </p>
            }
        })
    };
    let undo_line = move || {
        applied.undoable().map(|previous| {
            view! {
                <p class="hint" data-testid="undo-apply">
                    {format!("Config applied (was {}). ", config_name(&previous))}
                    <button type="button" class="link" on:click=move |_| applied.undo()>"Undo"</button>
                </p>
            }
        })
    };
    // Nothing fits on these GPUs: the fewest more a config fits on, with its button.
    let offer_line = move || {
        (advice.with(|(kind, ..)| *kind == "nothing-fits")).then(|| {
            let gpus = app.scenario.with(|s| s.gpus);
            let offer = analyses
                .advice
                .with(|a| a.as_ref().ok().and_then(|a| fit_offer(a, gpus)));
            offer_view(offer)
        })
    };
    view! { {advice_line} {offer_line} {fallback_line} {undo_line} }
}

/// The step's figures: aggregate AI, FLOPs, bytes, step time (`summary-step-time`), the step's launch
/// overhead and how it is launched when there is one (`summary-launch`), TTFT and TPOT (`summary-ttft`,
/// `summary-tpot`) and tokens/s (`summary-tokens-per-s`), each beside its ideal datasheet bound in reference
/// and calibrated mode (`data-ideal`, seconds or tokens/s), bound, weight and KV bits, GPUs
/// (`summary-gpus`, e.g. `8 GPUs (TP 8, EP 8)`), weights (`summary-weights`), weights and KV cache per GPU
/// (`summary-weights-per-gpu`, `summary-kv-per-gpu`), the communication share on several GPUs
/// (`summary-communication`) and memory per GPU (`summary-memory-fit`, `true`/`false`) under the engine's
/// rule. An analysis that cannot run (a GPU count the model or device cannot take) shows core's reason
/// (`analysis-error`) instead.
#[component]
fn Figures() -> impl IntoView {
    let analyses = use_app().analyses;
    let (analysis, ideal) = (analyses.shown, analyses.ideal);
    let error = Memo::new(move |_| analysis.with(|a| a.as_ref().err().map(format::failure)));
    let over = Signal::derive(move || analysis.with(|a| a.as_ref().is_ok_and(|a| !a.fits_in_memory)));
    // Text and raw value of a figure of the analysis, empty without one.
    let cell = move |f: fn(&ModelAnalysis) -> (String, String)| {
        Signal::derive(move || analysis.with(|a| a.as_ref().map(f).unwrap_or_default()))
    };
    // A duration or rate beside its ideal bound: (text, raw value, raw ideal).
    let bounded_stat = move |label: &'static str,
                             testid: &'static str,
                             get: fn(&ModelAnalysis) -> Option<f64>,
                             show: fn(f64) -> String,
                             fit: bool| {
        let m = Memo::new(move |_| {
            analysis.with(|a| {
                let Some(v) = a.as_ref().ok().and_then(get) else {
                    return ("—".to_owned(), String::new(), String::new());
                };
                let i = ideal.with(|i| i.as_ref().and_then(get));
                (
                    with_ideal(v, i, show),
                    v.to_string(),
                    i.map(|i| i.to_string()).unwrap_or_default(),
                )
            })
        });
        view! {
            <Stat label testid cell=Signal::derive(move || m.with(|c| (c.0.clone(), c.1.clone())))
                ideal=Signal::derive(move || m.with(|c| c.2.clone())) over=fit.then_some(over) />
        }
    };
    let has =
        move |f: fn(&ModelAnalysis) -> bool| Memo::new(move |_| analysis.with(|a| a.as_ref().is_ok_and(f)));
    let has_launch = has(|a| a.launch_overhead_s > 0.0);
    let several_gpus = has(|a| a.gpus > 1);
    view! {
        <div class="summary-area">
        {move || error.get().map(|e| view! { <div class="error-strip" data-testid="analysis-error">{e}</div> })}
        <div class="summary" class:hidden=move || error.with(Option::is_some)>
            {bounded_stat("Step time", "summary-step-time", |a| Some(a.total_time_s), format::duration, false)}
            {bounded_stat("TTFT", "summary-ttft", |a| a.ttft_s, format::duration, true)}
            {bounded_stat("TPOT", "summary-tpot", |a| a.tpot_s, format::duration, true)}
            {bounded_stat("Throughput", "summary-tokens-per-s", |a| Some(a.tokens_per_s), format::tokens_per_s, true)}
            {move || has_launch.get().then(|| view! {
                <Stat label="Step launch" testid="summary-launch" cell=cell(|a| (
                    format!("{} ({})", format::duration(a.launch_overhead_s), match a.corrections.step_launch {
                        StepLaunch::Eager => "one host launch per kernel",
                        _ => "one CUDA graph per step",
                    }),
                    a.launch_overhead_s.to_string(),
                )) />
            })}
            <Stat label="Bound" testid="summary-bound" cell=cell(|a| (format!("{} ({} mem)", a.bound.name(), format::percent(a.memory_bound_fraction)), a.bound.name().to_owned())) />
            <Stat label="Aggregate AI" testid="" cell=cell(|a| (format!("{} FLOP/B", format::intensity(a.aggregate_arithmetic_intensity)), a.aggregate_arithmetic_intensity.to_string())) />
            <Stat label="Work" testid="" cell=cell(|a| (format::flops(a.total_flops), a.total_flops.to_string())) />
            <Stat label="Traffic" testid="" cell=cell(|a| (format::bytes(a.total_bytes), a.total_bytes.to_string())) />
            <Stat label="W bits/elem" testid="" cell=cell(|a| (format::bits(a.weight_bits_per_element), a.weight_bits_per_element.to_string())) />
            <Stat label="KV bits/elem" testid="" cell=cell(|a| (format::bits(a.kv_bits_per_element), a.kv_bits_per_element.to_string())) />
            <Stat label="GPUs" testid="summary-gpus" cell=cell(|a| (
                gpus_label(a.gpus, a.parallelism.expert).unwrap_or_else(|| "1 GPU".to_owned()),
                a.gpus.to_string(),
            )) />
            <Stat label="Weights" testid="summary-weights" cell=cell(|a| (format::capacity(a.weight_bytes), a.weight_bytes.to_string())) />
            <Stat label="Weights per GPU" testid="summary-weights-per-gpu" cell=cell(|a| (format::capacity(a.weight_bytes_per_gpu), a.weight_bytes_per_gpu.to_string())) />
            <Stat label="KV cache per GPU" testid="summary-kv-per-gpu" cell=cell(|a| (format::capacity(a.kv_cache_bytes_per_gpu), a.kv_cache_bytes_per_gpu.to_string())) />
            {move || several_gpus.get().then(|| view! {
                <Stat label="Communication" testid="summary-communication" cell=cell(|a| (
                    format!("{} ({} of step)", format::duration(a.communication_time_s), format::percent(a.communication_fraction)),
                    a.communication_fraction.to_string(),
                )) />
            })}
            <Stat label="Memory per GPU" testid="summary-memory-fit" cell=cell(memory_text) />
        </div>
        </div>
    }
}

/// One GPU's memory need against what it can use, and whether the step fits.
fn memory_text(a: &ModelAnalysis) -> (String, String) {
    (
        format!(
            "{} of {} usable — {}",
            format::capacity(a.memory_required_bytes),
            format::capacity(a.memory_usable_bytes),
            if a.fits_in_memory { "fits" } else { "does not fit" }
        ),
        a.fits_in_memory.to_string(),
    )
}

/// The summary box, whose `data-mode` and `data-device` give every number in it its context: the mode line,
/// the advisor's answer, the step's figures (the scenario's, or the recommended config's when the device
/// cannot run it), the format of each module (`summary-precisions`: attention, MLP, experts, router,
/// embeddings, head), the memory bar and, in reference mode, the ceilings used, each measured or derived,
/// with its basis.
#[component]
pub fn SummaryStrip() -> impl IntoView {
    let app = use_app();
    let (analysis, hardware, ceilings) = (app.analyses.shown, app.device.hardware, app.analyses.ceilings);
    view! {
        <div class="summary-box" data-testid="summary-box"
            data-mode=move || hardware.with(|h| Mode::of(h).name()) data-device=move || hardware.with(|h| h.name.clone())>
            <ModeLine />
            <AdviceLines />
            <Figures />
            {move || analysis.with(|a| a.as_ref().ok().map(|a| {
                let line = roofline_core::summarize_modules(&a.modules);
                view! { <p class="precisions" data-testid="summary-precisions">"Precisions: " {line}</p> }
            }))}
            <MemoryBar analysis=analysis />
            {move || ceilings.get().map(ceilings_view)}
        </div>
    }
}
