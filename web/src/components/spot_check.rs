//! Kernel Spot Check against the endpoint: the shape of the Kernel tab measured in one precision, the ticked
//! set or all of the original toolkit's precisions, with each measurement beside its prediction.

use leptos::prelude::*;
use roofline_core::wire::AnalyzeRequest;
use roofline_core::{HardwareSpec, Mode, Precision};

use crate::api::ApiError;
use crate::calibration::mode_label;
use crate::components::not_compared::NotComparedRow;
use crate::format;
use crate::palette::{css, precision_rgb};
use crate::state::jobs::{Analysis, RunSet, SpotCheck as SpotCheckState};
use crate::state::use_app;
use crate::validation;

/// The results of one spot check, predicted on `hardware` (`spot-results`, in a box that scrolls on its own; `data-mode`/`data-device`
/// of its predictions; one `spot-row` per measured point: predicted and measured time, error %; points from
/// another device in one `not-compared` row with its action) and every failure with its reason
/// (`spot-failures`).
fn results_view(r: Analysis, hardware: Memo<HardwareSpec>) -> impl IntoView {
    let points = r.measured.clone();
    let rows = r
        .measured
        .iter()
        .map(|p| {
            let m = &p.measurement;
            let what = if m.says_what_ran() { format!("{} · {}", m.library, m.kernel) } else { String::new() };
            let measured_s = p.time_s();
            let swatch = format!("background:{}", css(precision_rgb(p.precision)));
            let (predicted, error, class) = hardware.with(|hw| validation::cells(p, hw));
            view! {
                <tr data-testid="spot-row" data-precision=p.precision.name()>
                    <td class="nowrap"><span class="swatch" style=swatch></span>{p.precision.name()}</td>
                    <td><span class="nowrap">{p.op.shape_label()}</span><br /><small class="what">{what}</small></td>
                    <td class="num">{predicted}</td>
                    <td class="num" data-testid="measured-time" data-value=measured_s.to_string()>
                        {format::duration(measured_s)}
                    </td>
                    <td class=format!("num {class}") data-testid="spot-error-pct">{error}</td>
                </tr>
            }
        })
        .collect_view();
    let failures = r
        .failed
        .iter()
        .map(|f| view! { <li data-precision=f.precision.name()><strong>{f.precision.name()}</strong> " " <code>{f.code.to_string()}</code> " — " {f.message.clone()}</li> })
        .collect_view();
    view! {
        <div class="table-box" data-mode=move || hardware.with(|h| Mode::of(h).name()) data-device=move || hardware.with(|h| h.name.clone())>
        <table class="spot-results" data-testid="spot-results">
            <caption>{format!("Measured on the endpoint, predicted in {}", hardware.with(mode_label))}</caption>
            <thead>
                <tr>
                    <th scope="col">"Precision"</th>
                    <th scope="col">"Shape, what ran"</th>
                    <th scope="col" class="num">{format!("Predicted ({})", hardware.with(|h| Mode::of(h).name()))}</th>
                    <th scope="col" class="num">"Measured"</th>
                    <th scope="col" class="num">"Error"</th>
                </tr>
            </thead>
            <tbody>
                <NotComparedRow points=points hardware=hardware colspan=5 />
                {rows}
            </tbody>
        </table>
        </div>
        <ul class="failures" data-testid="spot-failures">{failures}</ul>
    }
}

/// The spot check (`analyze-button`, `spot-precision`, and one radio group: `spot-one`, `run-all-precisions`
/// = what the endpoint measures, `spot-custom` = the scenario's ticked precisions) and its results
/// ([`results_view`]). Measured points join the plot and the validation tab.
#[component]
pub fn SpotCheck() -> impl IntoView {
    let app = use_app();
    let (endpoint, scenario, hardware) = (app.endpoint, app.scenario, app.device.hardware);
    let SpotCheckState {
        analyze,
        chosen,
        run_set,
    } = app.spot;
    let measurable = move || {
        endpoint
            .device
            .get()
            .flatten()
            .map(|d| d.measurable_precisions)
            .unwrap_or_default()
    };
    // Until the user picks one: the first precision the endpoint measures natively and the selected device
    // has a roof for, so the measurement comes with a prediction.
    let precision = move || {
        chosen.get().unwrap_or_else(|| {
            let measurable = measurable();
            let predictable =
                hardware.with(|hw| measurable.iter().copied().find(|p| hw.dense_peak_for(*p).is_ok()));
            predictable
                .or(measurable.first().copied())
                .unwrap_or(Precision::Fp16)
        })
    };
    let on_analyze = move |_| {
        let (m, n, k) = scenario.with_untracked(|s| (s.kernel.m, s.kernel.n, s.kernel.k));
        let precisions = match run_set.get_untracked() {
            RunSet::One => None,
            RunSet::All => Some(measurable()),
            RunSet::Ticked => Some(scenario.with_untracked(|s| s.kernel.precisions.clone())),
        };
        let request = AnalyzeRequest {
            m,
            n,
            k,
            precision: precision(),
            precisions,
        };
        analyze.dispatch(request);
    };
    let all_label = move || {
        let names: Vec<&str> = measurable().into_iter().map(Precision::name).collect();
        if names.is_empty() {
            "Every precision the endpoint measures (none known yet)".to_owned()
        } else {
            format!("Every precision the endpoint measures ({})", names.join(", "))
        }
    };
    let radio = move |set: RunSet, testid: &'static str, label: Signal<String>, disabled: Signal<bool>| {
        view! {
            <label class="check">
                <input type="radio" name="spot-run" data-testid=testid prop:checked=move || run_set.get() == set
                    disabled=move || disabled.get() on:change=move |_| run_set.set(set) />
                {move || label.get()}
            </label>
        }
    };
    let options = Precision::ALL
        .into_iter()
        .map(|p| view! { <option value=p.name() selected=move || precision() == p>{p.name()}</option> })
        .collect_view();
    let result = move || {
        analyze
            .value()
            .get()
            .map(|r: Result<Analysis, ApiError>| match r {
                Err(e) => view! { <p class="error" data-testid="spot-error">{e.to_string()}</p> }.into_any(),
                Ok(r) => results_view(r, hardware).into_any(),
            })
    };
    view! {
        <fieldset class="spot-check">
            <legend>"Kernel Spot Check on the endpoint"</legend>
            <div class="row">
                <label for="spot-precision">"Precision"</label>
                <select
                    id="spot-precision"
                    data-testid="spot-precision"
                    on:change=move |ev| chosen.set(event_target_value(&ev).parse().ok())
                >
                    {options}
                </select>
            </div>
            <div role="radiogroup" aria-label="Precisions to measure" class="spot-run">
                {radio(RunSet::One, "spot-one", Signal::derive(|| "The precision above".to_owned()), Signal::derive(|| false))}
                {radio(RunSet::All, "run-all-precisions", Signal::derive(all_label), Signal::derive(move || measurable().is_empty()))}
                {radio(RunSet::Ticked, "spot-custom", Signal::derive(|| "The ticked precisions (custom set)".to_owned()), Signal::derive(|| false))}
            </div>
            <button
                type="button"
                data-testid="analyze-button"
                on:click=on_analyze
                disabled=move || analyze.pending().get() || !endpoint.is_online()
            >
                {move || if analyze.pending().get() { "Measuring…" } else { "Analyze GEMM" }}
            </button>
            {move || (!endpoint.is_online()).then(|| view! { <p class="hint">"Measuring needs the endpoint; the predictions above work without it."</p> })}
            {result}
        </fieldset>
    }
}
