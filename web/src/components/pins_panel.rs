//! Pinned scenarios: pin, unpin, compare.

use leptos::prelude::*;
use roofline_core::{Error, ModelAnalysis};

use crate::format;
use crate::palette::{PIN_RGB, css};
use crate::presets::resolve_hardware;
use crate::scenario::Scenario;
use crate::state::use_app;
use crate::storage::MAX_PINS;

/// Up to four pinned scenarios, each analysed on its own hardware in its own mode and drawn faintly on the
/// chart when on the selected device (never against another device's roofs), with a comparison table (mode,
/// TPOT/TTFT, tokens/s, bound, fit) against the current scenario; each row's `data-mode` and `data-device`
/// are its own, and its label names the device, model and config.
#[component]
pub fn PinsPanel() -> impl IntoView {
    let app = use_app();
    let (scenario, pins, custom, models) = (app.scenario, app.pins, app.custom, app.models);
    let (current, pinned) = (app.analyses.analysis, app.analyses.pinned);
    let pin = move |_| {
        let s = scenario.get_untracked();
        pins.update(|p| {
            if p.len() < MAX_PINS && !p.contains(&s) {
                p.push(s);
            }
        });
    };
    let label = move |s: &Scenario| custom.with(|c| models.with(|m| s.label(c, m)));
    let device = move |s: &Scenario| {
        custom.with(|c| resolve_hardware(&s.hardware, c).map_or_else(|| s.hardware.clone(), |h| h.name))
    };
    let row = move |s: &Scenario, label: String, colour: Option<String>, a: &Result<ModelAnalysis, Error>| {
        let mode = a.as_ref().map_or("", |a| a.mode.name());
        let cells = match a {
            Ok(a) => view! {
                <td>{a.mode.name()}</td>
                <td class="num">{a.tpot_s.or(a.ttft_s).map_or("—".to_owned(), format::duration)}</td>
                <td class="num">{format::tokens_per_s(a.tokens_per_s)}</td>
                <td>{a.bound.name()}</td>
                <td>{if a.fits_in_memory { "yes" } else { "no" }}</td>
            }
            .into_any(),
            Err(e) => view! { <td colspan="5" class="hint">{format::failure(e)}</td> }.into_any(),
        };
        let swatch = colour.map(|c| view! { <span class="swatch" style=format!("background:{c}")></span> });
        view! { <tr data-mode=mode data-device=device(s)><td>{swatch}{label}</td>{cells}</tr> }
    };
    let table = move || {
        let list = pins.get();
        (!list.is_empty()).then(|| {
            let pinned_rows = pinned.with(|all| {
                list.iter()
                    .zip(all)
                    .enumerate()
                    .map(|(i, (s, a))| {
                        let remove = move |_| pins.update(|p| { p.remove(i); });
                        view! {
                            <tr class="pin-actions"><td colspan="6">
                                <button type="button" class="link" on:click=move |_| scenario.set(list_get(pins, i))>"load"</button>
                                <button type="button" class="link" aria-label=format!("Remove pin {}", i + 1) on:click=remove>"✕ remove"</button>
                            </td></tr>
                            {row(s, label(s), Some(css(PIN_RGB[i % PIN_RGB.len()])), a)}
                        }
                    })
                    .collect_view()
            });
            view! {
                <div class="table-box">
                <table class="pins" data-testid="pins">
                    <caption>"Pinned scenarios (drawn faintly on the chart when on the selected device)"</caption>
                    <thead><tr><th>"Scenario"</th><th>"Mode"</th><th class="num">"TPOT/TTFT"</th><th class="num">"tok/s"</th><th>"Bound"</th><th>"Fits"</th></tr></thead>
                    <tbody>
                        {current.with(|a| scenario.with(|s| row(s, format!("current: {}", label(s)), None, a)))}
                        {pinned_rows}
                    </tbody>
                </table>
                </div>
            }
        })
    };
    view! {
        <div class="pins-panel">
            <button
                type="button"
                data-testid="pin-current"
                on:click=pin
                disabled=move || pins.with(|p| p.len() >= MAX_PINS)
            >
                {move || format!("Pin current ({}/{MAX_PINS})", pins.with(Vec::len))}
            </button>
            {table}
        </div>
    }
}

/// The pin at `i`, or the default scenario if it vanished meanwhile.
fn list_get(pins: RwSignal<Vec<Scenario>>, i: usize) -> Scenario {
    pins.with_untracked(|p| p.get(i).cloned()).unwrap_or_default()
}
