//! What the serving chart and answer range over: the GPU counts the answer may use, linear or log axes, and
//! the devices compared beside the scenario's, with their answers side by side.

use leptos::prelude::*;
use roofline_core::{Parallelism, ServingPoint, Sizing, layout_name};

use crate::format;
use crate::presets::all_hardware;
use crate::serving::load_words;
use crate::serving_inputs::MAX_COMPARED;
use crate::state::use_app;
use crate::summary::config_name;

/// A point in a comparison cell: config, layout, output per GPU and load.
fn cell(p: Option<&ServingPoint>) -> String {
    p.map_or_else(
        || "nothing meets the SLA".to_owned(),
        |p| {
            format!(
                "{} · {} · {} out tok/s/GPU at {}",
                config_name(&p.config),
                layout_name(&p.parallelism),
                format::number(p.output_tokens_per_s_per_gpu),
                load_words(p.load)
            )
        },
    )
}

/// One comparison row (`tr[data-device]`, `data-value` = the recommendation's output tokens/s per GPU,
/// `data-gpus` = the fewest GPUs meeting the SLA).
fn row(key: &str, label: &str, sizing: Option<&Sizing>, notice: Option<String>) -> impl IntoView + use<> {
    let best = sizing.and_then(|z| z.outcome.recommendation.as_ref());
    let fewest = sizing.and_then(|z| z.fewest.as_ref());
    view! {
        <tr data-device=key.to_owned()
            data-value=best.map(|p| p.output_tokens_per_s_per_gpu.to_string()).unwrap_or_default()
            data-gpus=fewest.map(|p| p.gpus.to_string()).unwrap_or_default()>
            <td>{label.to_owned()}{notice.map(|n| view! { <div class="hint">{n}</div> })}</td>
            <td>{cell(best)}</td>
            <td>{cell(fewest)}</td>
        </tr>
    }
}

/// The controls (`serving-gpus` with one `input[data-gpus]` per GPU count swept, `serving-log`,
/// `serving-compare-add` and a `serving-compare-remove` per compared device) and, with a device compared,
/// the answers side by side (`serving-compare`), the scenario's device first.
#[component]
pub fn ServingCompare() -> impl IntoView {
    let app = use_app();
    let (scenario, state, custom) = (app.scenario, app.serving, app.custom);
    let counts = Memo::new(move |_| {
        state.key.with(|k| {
            let mut c: Vec<u32> = k
                .as_ref()
                .map(|k| k.layouts.iter().map(Parallelism::gpus).collect())
                .unwrap_or_default();
            c.dedup();
            c
        })
    });
    let toggle_count = move |gpus: u32| {
        scenario.update(|s| {
            let all = counts.get_untracked();
            let mut on: Vec<u32> = if s.serving.gpus.is_empty() {
                all.clone()
            } else {
                s.serving.gpus.clone()
            };
            if on.contains(&gpus) {
                on.retain(|g| *g != gpus);
            } else {
                on.push(gpus);
                on.sort_unstable();
            }
            // None left or every one on: every count.
            s.serving.gpus = if on.is_empty() || all.iter().all(|g| on.contains(g)) {
                Vec::new()
            } else {
                on
            };
        });
    };
    let boxes = move || {
        counts
            .get()
            .into_iter()
            .map(|g| {
                let checked =
                    move || scenario.with(|s| s.serving.gpus.is_empty() || s.serving.gpus.contains(&g));
                view! {
                    <label class="check"><input type="checkbox" data-gpus=g.to_string() prop:checked=checked
                        on:change=move |_| toggle_count(g) />{g.to_string()}</label>
                }
            })
            .collect_view()
    };
    // The devices on offer change with the device and those compared only, not with each serving input.
    let taken = Memo::new(move |_| scenario.with(|s| (s.hardware.clone(), s.serving.compare.clone())));
    let options = move || {
        custom.with(|c| {
            taken.with(|(own, compared)| {
                all_hardware(c)
                    .filter(|h| h.key != *own && !compared.contains(&h.key))
                    .map(|h| view! { <option value=h.key.clone()>{h.name.clone()}</option> })
                    .collect_view()
            })
        })
    };
    let chips = move || {
        state.devices.with(|d| {
            d.iter()
                .map(|device| {
                    let key = device.key.clone();
                    view! {
                        <span class="compare-chip">{device.label.clone()}" "
                            <button type="button" class="link" data-testid="serving-compare-remove" data-device=key.clone()
                                aria-label=format!("stop comparing {}", device.label)
                                on:click=move |_| scenario.update(|s| s.serving.compare.retain(|k| *k != key))>"✕"</button>
                        </span>
                    }
                })
                .collect_view()
        })
    };
    let full = move || scenario.with(|s| s.serving.compare.len() >= MAX_COMPARED);
    let table = move || {
        state.devices.with(|devices| {
            (!devices.is_empty()).then(|| {
                let own = state.key.with(|k| k.as_ref().map(|k| k.title()).unwrap_or_default());
                let own_key = scenario.with(|s| s.hardware.clone());
                let first = state.sizing.with(move |z| row(&own_key, &own, z.as_ref(), None));
                let rest = devices
                    .iter()
                    .map(|d| {
                        let notice = d.notice.clone().or_else(|| d.sweep.as_ref().as_ref().err().map(format::failure));
                        row(&d.key, &d.label, d.sizing.as_ref(), notice)
                    })
                    .collect_view();
                view! {
                    <div class="table-wrap"><table class="serving-compare" data-testid="serving-compare">
                        <caption>"The same model, workload, engine and SLA on each device"</caption>
                        <thead><tr><th>"device"</th><th>"most output per GPU"</th><th>"fewest GPUs"</th></tr></thead>
                        <tbody>{first}{rest}</tbody>
                    </table></div>
                }
            })
        })
    };
    view! {
        <div class="serving-controls" data-testid="serving-controls">
            <fieldset class="inline" data-testid="serving-gpus">
                <legend>"GPUs per replica"</legend>
                {boxes}
            </fieldset>
            <label class="check"><input type="checkbox" data-testid="serving-log"
                prop:checked=move || scenario.with(|s| s.serving.log_axes)
                on:change=move |ev| scenario.update(|s| s.serving.log_axes = event_target_checked(&ev)) />"log axes"</label>
            <div class="field compare-field">
                <label for="serving-compare-add">"Compare on"</label>
                <select id="serving-compare-add" data-testid="serving-compare-add" prop:disabled=full
                    on:change=move |ev| {
                        let key = event_target_value(&ev);
                        if !key.is_empty() {
                            scenario.update(|s| if s.serving.compare.len() < MAX_COMPARED { s.serving.compare.push(key) });
                        }
                    }>
                    <option value="" selected=true>{move || if full() { "two devices compared" } else { "another device…" }}</option>
                    {options}
                </select>
                {chips}
            </div>
            {table}
        </div>
    }
}
