//! The serving view: the inputs, the answer (most output per GPU, fewest GPUs, per GPU count, the commands to
//! run it), what the chart ranges over and the devices compared, the Pareto chart, the notes on where curves
//! stop, the per-config table and the measured runs, for the scenario's device, model and mode over every
//! GPU layout its domain holds.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::charts::ParetoChart;
use crate::charts::pareto_series::{ChartInputs, Other, ParetoData, pareto_data};
use crate::components::serving_answer::ServingAnswer;
use crate::components::serving_compare::ServingCompare;
use crate::components::serving_form::ServingForm;
use crate::components::serving_import::ServingImport;
use crate::components::serving_table::ServingTable;
use crate::serving::answer::{config_rows, unmeasured_ceilings};
use crate::serving::config_order;
use crate::state::use_app;

/// The serving view (`serving-view`; `data-sweeps` = sweeps run in this page, a cached one not counted):
/// inputs, the answer, the chart's range and compared devices, the Pareto chart, the notes on what is not
/// drawn and where curves stop (`serving-notes`), the per-config table and the measured runs.
#[component]
pub fn ServingView() -> impl IntoView {
    let app = use_app();
    let (hardware, state, scenario, models) = (app.device.hardware, app.serving, app.scenario, app.models);
    let context = Memo::new(move |_| {
        state
            .key
            .with(|k| k.as_ref().map(|k| k.context()).unwrap_or_default())
    });
    // Which configs rest on unmeasured ceilings: per sweep, not per slider move.
    let caveats = Memo::new(move |_| {
        state.sweep.with(|s| {
            let Ok(sweep) = s.as_ref() else {
                return BTreeMap::new();
            };
            hardware.with(|hw| {
                models.with(|m| {
                    scenario.with_untracked(|sc| {
                        config_order(sweep)
                            .into_iter()
                            .filter_map(|c| unmeasured_ceilings(sc, hw, m, c).map(|why| (c.to_owned(), why)))
                            .collect()
                    })
                })
            })
        })
    });
    let view_inputs =
        Memo::new(move |_| scenario.with(|s| (s.serving.log_axes, s.serving.gpus.clone(), s.serving.x_axis)));
    let percentile = Memo::new(move |_| scenario.with(|s| s.serving.percentile));
    // The table reads the GPU counts allowed only: an axis change leaves its rows as they are.
    let allowed = Memo::new(move |_| scenario.with(|s| s.serving.gpus.clone()));
    let data = Memo::new(move |_| {
        state.sweep.with(|s| {
            let Ok(sweep) = s.as_ref() else {
                return ParetoData::default();
            };
            state.sizing.with(|z| {
                let Some(sizing) = z else {
                    return ParetoData::default();
                };
                let title = state
                    .key
                    .with(|k| k.as_ref().map(|k| k.title()).unwrap_or_default());
                let device = hardware.with(crate::calibration::mode_label);
                state.devices.with(|devices| {
                    let others: Vec<Other<'_>> = devices
                        .iter()
                        .filter_map(|d| {
                            Some((
                                d.label.as_str(),
                                d.sweep.as_ref().as_ref().ok()?,
                                d.sizing.as_ref()?,
                            ))
                        })
                        .collect();
                    view_inputs.with(|(log, allowed, x_axis)| {
                        state.shown.with(|shown| {
                            state.compared.with(|measured| {
                                caveats.with(|caveats| {
                                    pareto_data(&ChartInputs {
                                        sweep,
                                        sizing,
                                        measured,
                                        device: &device,
                                        title: &title,
                                        log: *log,
                                        x_axis: *x_axis,
                                        shown,
                                        allowed,
                                        others: &others,
                                        caveats,
                                    })
                                })
                            })
                        })
                    })
                })
            })
        })
    });
    let rows = Memo::new(move |_| {
        state.sweep.with(|s| {
            s.as_ref().as_ref().ok().map_or_else(Vec::new, |sweep| {
                state.sizing.with(|z| {
                    z.as_ref().map_or_else(Vec::new, |z| {
                        allowed.with(|allowed| {
                            caveats.with(|c| config_rows(sweep, z, allowed, |config| c.get(config).cloned()))
                        })
                    })
                })
            })
        })
    });
    let unsupported = Memo::new(move |_| {
        state.sweep.with(|s| {
            s.as_ref()
                .as_ref()
                .map(|s| s.unsupported.clone())
                .unwrap_or_default()
        })
    });
    let notes = move || {
        let no_fit: Vec<String> = rows.with(|r| {
            r.iter()
                .filter(|r| r.top.is_none())
                .map(|r| r.name.clone())
                .collect()
        });
        let mut lines = Vec::new();
        if !no_fit.is_empty() {
            lines.push(format!(
                "Not drawn, no request fits the KV cache on the GPU counts allowed: {} (the table says why).",
                no_fit.join(", ")
            ));
        }
        lines.extend(data.with(|d| d.stops.clone()));
        (!lines.is_empty()).then(|| {
            view! {
                <details class="serving-notes" data-testid="serving-notes">
                    <summary>"Where the curves stop, and what is not drawn"</summary>
                    {lines.into_iter().map(|l| view! { <p class="hint">{l}</p> }).collect_view()}
                </details>
            }
        })
    };
    view! {
        <section class="centre serving-view" aria-label="Serving" data-testid="serving-view" id="main-view" tabindex="-1"
            data-sweeps=move || { state.sweep.track(); state.sweeps_run().to_string() }>
            <h2 class="sr-only">"Serving"</h2>
            <ServingForm />
            <ServingAnswer caveats=caveats />
            <ServingCompare />
            <ParetoChart data=data caption=context shown=state.shown />
            {notes}
            <ServingTable rows=rows percentile=percentile unsupported=unsupported context=context />
            <ServingImport />
        </section>
    }
}
