//! The serving view: the inputs, the recommendation in words, the Pareto chart, the per-config table and
//! the measured runs, for the scenario's device, model, GPU split and mode.

use leptos::prelude::*;
use roofline_core::Load;

use crate::charts::ParetoChart;
use crate::charts::pareto_series::{ParetoData, pareto_data};
use crate::components::serving_form::ServingForm;
use crate::components::serving_import::ServingImport;
use crate::components::serving_table::ServingTable;
use crate::format;
use crate::serving::state::ServingState;
use crate::serving::{Verdict, config_rows, verdict};
use crate::state::use_app;

/// The answer above the chart (`serving-recommendation`): `data-kind` `recommended` (with `data-config`,
/// `data-concurrency`, and `data-value` = its output tokens/s per GPU), `none` (core's reason why nothing
/// meets the SLA) or `error` (why there is no sweep: an invalid input, named by core).
#[component]
fn VerdictLine(
    /// The serving state.
    state: ServingState,
) -> impl IntoView {
    move || {
        let sweep_error = state
            .sweep
            .with(|s| s.as_ref().as_ref().err().map(format::failure));
        if let Some(e) = sweep_error {
            return view! {
                <div class="recommendation over" data-testid="serving-recommendation" data-kind="error">
                    <h3>"No serving prediction"</h3>
                    <p class="error" role="alert">{e}</p>
                </div>
            }
            .into_any();
        }
        match state.outcome.with(|o| o.as_ref().map(verdict)) {
            Some(Verdict::Recommended { point, text }) => {
                let concurrency = match point.load {
                    Load::Concurrency(n) => n.to_string(),
                    Load::Rate(_) => String::new(),
                };
                view! {
                    <div class="recommendation" data-testid="serving-recommendation" data-kind="recommended"
                        data-config=point.config.clone() data-concurrency=concurrency
                        data-value=point.output_tokens_per_s_per_gpu.to_string()
                        data-tpot=point.tpot_s.to_string() data-ttft=point.ttft_s.to_string()>
                        <h3>"Recommended operating point"</h3>
                        <p class="pick">{text}</p>
                    </div>
                }
                .into_any()
            }
            Some(Verdict::NothingMeets(why)) => view! {
                <div class="recommendation over" data-testid="serving-recommendation" data-kind="none">
                    <h3>"Nothing meets the SLA"</h3>
                    <p class="pick">{why}</p>
                </div>
            }
            .into_any(),
            None => ().into_any(),
        }
    }
}

/// The serving view (`serving-view`; `data-sweeps` = sweeps run in this page, a cached one not counted):
/// inputs, the context line every number is in (`serving-context`: mode, device, model, GPUs, lengths,
/// engine), the recommendation, the Pareto chart, the notes on what is not drawn, the per-config table and
/// the measured runs.
#[component]
pub fn ServingView() -> impl IntoView {
    let app = use_app();
    let (hardware, state) = (app.device.hardware, app.serving);
    let context = Memo::new(move |_| {
        state
            .key
            .with(|k| k.as_ref().map(|k| k.context()).unwrap_or_default())
    });
    let title = Memo::new(move |_| {
        state
            .key
            .with(|k| k.as_ref().map(|k| k.title()).unwrap_or_default())
    });
    let data = Memo::new(move |_| {
        state.sweep.with(|s| {
            let Ok(sweep) = s.as_ref() else {
                return ParetoData::default();
            };
            state.outcome.with(|o| {
                o.as_ref().map_or_else(ParetoData::default, |o| {
                    state
                        .compared
                        .with(|c| hardware.with(|h| title.with(|t| pareto_data(sweep, o, c, &h.name, t))))
                })
            })
        })
    });
    let rows = Memo::new(move |_| {
        state.sweep.with(|s| {
            s.as_ref().as_ref().ok().map_or_else(Vec::new, |sweep| {
                state
                    .outcome
                    .with(|o| o.as_ref().map(|o| config_rows(sweep, o)).unwrap_or_default())
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
                .filter(|r| r.max_fit == 0)
                .map(|r| r.config.clone())
                .collect()
        });
        let omitted = data.with(|d| d.omitted);
        let mut lines = Vec::new();
        if !no_fit.is_empty() {
            lines.push(format!(
                "Not drawn, no request fits the KV cache: {} (the table says why).",
                no_fit.join(", ")
            ));
        }
        if omitted > 0 {
            lines.push(format!(
                "{omitted} point(s) beyond what fits the KV cache are not drawn."
            ));
        }
        (!lines.is_empty()).then(|| {
            view! {
                <div class="serving-notes" data-testid="serving-notes">
                    {lines.into_iter().map(|l| view! { <p class="hint">{l}</p> }).collect_view()}
                </div>
            }
        })
    };
    view! {
        <section class="centre serving-view" aria-label="Serving" data-testid="serving-view"
            data-sweeps=move || { state.sweep.track(); state.sweeps_run().to_string() }>
            <ServingForm />
            <div class="serving-answer">
                <p class="serving-context" data-testid="serving-context">{move || context.get()}</p>
                <VerdictLine state=state />
            </div>
            <ParetoChart data=data />
            {notes}
            <ServingTable rows=rows unsupported=unsupported context=context />
            <ServingImport />
        </section>
    }
}
