//! Kernel Spot Check against the endpoint: the shape of the Kernel tab measured in one precision, the ticked
//! set or all of the original toolkit's precisions, with each measurement beside its prediction.

use leptos::prelude::*;
use roofline_core::measured_device::{catalog_key_of_spec, same_device};
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::{AnalyzeRequest, AnalyzeResponse};
use roofline_core::{HardwareSpec, Mode, Precision};

use crate::api::{self, ApiError};
use crate::calibration::mode_label;
use crate::components::not_compared::NotComparedRow;
use crate::endpoint::use_endpoint;
use crate::format;
use crate::measured::use_measured;
use crate::palette::{css, precision_rgb};
use crate::scenario::Scenario;
use crate::validation::{self, Band};

/// Which precisions one spot check measures: one radio group, so only one can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSet {
    /// The precision picked (`spot-one`).
    One,
    /// Every precision the endpoint measures natively (`run-all-precisions`; disabled when it measures none).
    All,
    /// The precisions ticked above (`spot-custom`).
    Ticked,
}

/// The catalog key the endpoint predicts on: the selected device, the datasheet of a calibrated one, else
/// the endpoint's default.
fn catalog_key(spec: &HardwareSpec) -> String {
    catalog_key_of_spec(spec).unwrap_or("gb10").to_owned()
}

/// What the spot check sends and gets back.
type SpotCheckAction = Action<AnalyzeRequest, Result<AnalyzeResponse, ApiError>>;

/// The spot check's choices and its POST `/api/analyze`, owned by a parent that outlives tab switches so
/// both stay on screen.
#[derive(Clone, Copy)]
pub struct SpotCheckState {
    analyze: SpotCheckAction,
    /// The precision picked; `None` until the user picks one.
    chosen: RwSignal<Option<Precision>>,
    run_set: RwSignal<RunSet>,
}

/// Creates the state. Measured points join the page's measured points, and their precisions are ticked so
/// their predictions are plotted beside them.
pub fn spot_check_state(scenario: RwSignal<Scenario>, hardware: Signal<HardwareSpec>) -> SpotCheckState {
    let endpoint = use_endpoint();
    let measured = use_measured();
    let analyze = Action::new_local(move |request: &AnalyzeRequest| {
        let request = request.clone();
        let base = endpoint.base_now();
        let key = hardware.with_untracked(catalog_key);
        async move {
            // The precisions are always listed (the endpoint's own "run all" set holds formats a CPU
            // backend cannot measure).
            let response = api::analyze(&base, &key, &request).await;
            if let Ok(r) = &response {
                scenario.update(|s| {
                    for p in &r.measured {
                        if !s.kernel.precisions.contains(&p.precision) {
                            s.kernel.toggle(p.precision);
                        }
                    }
                });
                measured.add(r.measured.clone());
                measured.refresh_history();
            }
            response
        }
    });
    SpotCheckState {
        analyze,
        chosen: RwSignal::new(None),
        run_set: RwSignal::new(RunSet::One),
    }
}

/// The spot check (`analyze-button`, `spot-precision`, and one radio group: `spot-one`, `run-all-precisions`
/// = what the endpoint measures, `spot-custom` = the ticked set): results in `data-testid="spot-results"`
/// (in a box that scrolls on its own; `data-mode`/`data-device` of its predictions; one `spot-row` per
/// measured point: predicted and measured time, error %; points from another device in one `not-compared`
/// row with its action) and every failure with its reason in `spot-failures`. Measured points join the plot
/// and the validation tab.
#[component]
pub fn SpotCheck(
    /// The scenario whose kernel shape is measured (its ticked precisions are the custom set).
    scenario: RwSignal<Scenario>,
    /// The device predictions are made on.
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// The choices and the request, from [`spot_check_state`].
    state: SpotCheckState,
    /// The right panel's open tab (the not-compared row's calibrate action).
    tab: RwSignal<usize>,
    /// Custom devices and calibrations.
    custom: RwSignal<Vec<HardwareSpec>>,
) -> impl IntoView {
    let endpoint = use_endpoint();
    let SpotCheckState {
        analyze,
        chosen,
        run_set,
    } = state;
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
            let measurable = endpoint
                .device
                .get()
                .flatten()
                .map(|d| d.measurable_precisions)
                .unwrap_or_default();
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
        analyze.value().get().map(|r: Result<AnalyzeResponse, ApiError>| match r {
        Err(e) => view! { <p class="error" data-testid="spot-error">{e.to_string()}</p> }.into_any(),
        Ok(r) => {
            let points: Vec<MeasuredPoint> = r.measured.iter().map(MeasuredPoint::from).collect();
            let rows = r
                .measured
                .iter()
                .map(|p| {
                    let what = p.measurement.as_ref().map_or_else(String::new, |m| format!("{} · {}", m.library, m.kernel));
                    let point = MeasuredPoint::from(p);
                    let measured_s = point.time_s();
                    let swatch = format!("background:{}", css(precision_rgb(p.precision)));
                    // A point from another device than the selected one gets no prediction and no error (the
                    // table's not-compared row says why and what to do).
                    let (predicted, error, class) = hardware.with(|hw| {
                        if !same_device(&point, hw) {
                            return ("—".to_owned(), "—".to_owned(), "other-device");
                        }
                        match validation::check(&point, hw) {
                            Ok(c) => (format::duration(c.predicted_s), format::signed_percent(c.error_pct), validation::band_class(Band::of(c.error_pct))),
                            Err(e) => (format::failure(&e), String::new(), ""),
                        }
                    });
                    view! {
                        <tr data-testid="spot-row" data-precision=p.precision.name()>
                            <td class="nowrap"><span class="swatch" style=swatch></span>{p.precision.name()}</td>
                            <td><span class="nowrap">{p.shape.clone()}</span><br /><small class="what">{what}</small></td>
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
                        <NotComparedRow points=points hardware=hardware scenario=scenario custom=custom tab=tab colspan=5 />
                        {rows}
                    </tbody>
                </table>
                </div>
                <ul class="failures" data-testid="spot-failures">{failures}</ul>
            }
            .into_any()
        }
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
