//! Kernel Spot Check against the endpoint: the shape of the Kernel tab measured in one precision, the ticked
//! set or all of the original toolkit's precisions, with each measurement beside its prediction.

use leptos::prelude::*;
use roofline_core::measured_device::{PointDevice, catalog_key_of_spec, same_device};
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::{AnalyzeRequest, AnalyzeResponse};
use roofline_core::{HardwareSpec, Precision};

use crate::api::{self, ApiError};
use crate::calibration::mode_label;
use crate::endpoint::use_endpoint;
use crate::format;
use crate::measured::use_measured;
use crate::palette::{css, precision_rgb};
use crate::scenario::Scenario;
use crate::validation::{self, Band};

/// The catalog key the endpoint predicts on: the selected device, the datasheet of a calibrated one, else
/// the endpoint's default.
fn catalog_key(spec: &HardwareSpec) -> String {
    catalog_key_of_spec(spec).unwrap_or("gb10").to_owned()
}

/// What the spot check sends (run all precisions?, the request) and gets back.
type SpotCheckAction = Action<(bool, AnalyzeRequest), Result<AnalyzeResponse, ApiError>>;

/// The spot check's choices and its POST `/api/analyze`, owned by a parent that outlives tab switches so
/// both stay on screen.
#[derive(Clone, Copy)]
pub struct SpotCheckState {
    analyze: SpotCheckAction,
    /// The precision picked; `None` until the user picks one.
    chosen: RwSignal<Option<Precision>>,
    run_all: RwSignal<bool>,
    use_ticked: RwSignal<bool>,
}

/// Creates the state. Measured points join the page's measured points, and their precisions are ticked so
/// their predictions are plotted beside them.
pub fn spot_check_state(scenario: RwSignal<Scenario>, hardware: Signal<HardwareSpec>) -> SpotCheckState {
    let endpoint = use_endpoint();
    let measured = use_measured();
    let analyze = Action::new_local(move |(run_all, request): &(bool, AnalyzeRequest)| {
        let (run_all, request) = (*run_all, request.clone());
        let base = endpoint.base_now();
        let key = hardware.with_untracked(catalog_key);
        async move {
            let response = api::analyze(&base, &key, run_all, &request).await;
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
        run_all: RwSignal::new(false),
        use_ticked: RwSignal::new(false),
    }
}

/// The spot check (`analyze-button`, `spot-precision`, `run-all-precisions`, `spot-custom`): results in
/// `data-testid="spot-results"` (one `spot-row` per measured point: predicted and measured time, error %) and
/// every failure with its reason in `spot-failures`. Measured points join the plot and the validation tab.
#[component]
pub fn SpotCheck(
    /// The scenario whose kernel shape is measured (its ticked precisions are the custom set).
    scenario: RwSignal<Scenario>,
    /// The device predictions are made on.
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// The choices and the request, from [`spot_check_state`].
    state: SpotCheckState,
) -> impl IntoView {
    let endpoint = use_endpoint();
    let SpotCheckState {
        analyze,
        chosen,
        run_all,
        use_ticked,
    } = state;
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
        let precisions = use_ticked
            .get_untracked()
            .then(|| scenario.with_untracked(|s| s.kernel.precisions.clone()));
        let request = AnalyzeRequest {
            m,
            n,
            k,
            precision: precision(),
            precisions,
        };
        analyze.dispatch((run_all.get_untracked(), request));
    };

    let options = Precision::ALL
        .into_iter()
        .map(|p| view! { <option value=p.name() selected=move || precision() == p>{p.name()}</option> })
        .collect_view();
    let result = move || {
        analyze.value().get().map(|r: Result<AnalyzeResponse, ApiError>| match r {
        Err(e) => view! { <p class="error" data-testid="spot-error">{e.to_string()}</p> }.into_any(),
        Ok(r) => {
            let rows = r
                .measured
                .iter()
                .map(|p| {
                    let what = p.measurement.as_ref().map_or_else(String::new, |m| format!("{} · {}", m.library, m.kernel));
                    let point = MeasuredPoint::from(p);
                    let measured_s = point.time_s();
                    let swatch = format!("background:{}", css(precision_rgb(p.precision)));
                    // A point from another device than the selected one gets no prediction and no error.
                    let (predicted, error, class) = hardware.with(|hw| {
                        if !same_device(&point, hw) {
                            return (format!("measured on {}; not compared with {}", PointDevice::of(&point).label(), hw.name), String::new(), "other-device");
                        }
                        match validation::check(&point, hw) {
                            Ok(c) => (format::duration(c.predicted_s), format::signed_percent(c.error_pct), validation::band_class(Band::of(c.error_pct))),
                            Err(e) => (format::failure(&e), String::new(), ""),
                        }
                    });
                    view! {
                        <tr data-testid="spot-row" data-precision=p.precision.name()>
                            <td><span class="swatch" style=swatch></span>{p.precision.name()}</td>
                            <td>{p.shape.clone()}<br /><small class="what">{what}</small></td>
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
                <table class="spot-results" data-testid="spot-results">
                    <caption>{format!("Measured on the endpoint, predicted in {}", hardware.with(mode_label))}</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Precision"</th>
                            <th scope="col">"Shape, what ran"</th>
                            <th scope="col" class="num">"Predicted"</th>
                            <th scope="col" class="num">"Measured"</th>
                            <th scope="col" class="num">"Error"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
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
            <label class="check">
                <input type="checkbox" data-testid="run-all-precisions" prop:checked=move || run_all.get() on:change=move |ev| run_all.set(event_target_checked(&ev)) />
                "Run all precisions (FP16, FP8, NVFP4, INT8, INT4)"
            </label>
            <label class="check">
                <input type="checkbox" data-testid="spot-custom" prop:checked=move || use_ticked.get() on:change=move |ev| use_ticked.set(event_target_checked(&ev)) />
                "Run the ticked precisions (custom set)"
            </label>
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
