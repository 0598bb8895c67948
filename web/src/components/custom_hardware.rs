//! Custom devices: import as JSON, export any device as JSON, remove.

use leptos::prelude::*;
use roofline_core::{HardwareSpec, Provenance, find_hardware};

use crate::browser;
use crate::presets::DEFAULT_HARDWARE;
use crate::state::use_app;

/// Editor for user-defined devices. Pasted JSON goes through `HardwareSpec::from_json` (which checks it);
/// a key that collides with the catalog is refused. The chosen device, as catalogued or entered (never its
/// reference spec: importing one would scale its ceilings twice), can be exported as a template.
#[component]
pub fn CustomHardware() -> impl IntoView {
    let app = use_app();
    let (scenario, custom, hardware) = (app.scenario, app.custom, app.device.own);
    let text = RwSignal::new(String::new());
    let message = RwSignal::new(None::<(bool, String)>);
    let import = move |_| {
        let result = HardwareSpec::from_json(&text.get_untracked())
            .map_err(|e| e.to_string())
            .and_then(|mut spec| {
                if find_hardware(&spec.key).is_ok() {
                    return Err(format!(
                        "key '{}' is a catalog device; choose another key",
                        spec.key
                    ));
                }
                spec.provenance = Provenance::Custom;
                Ok(spec)
            });
        match result {
            Ok(spec) => {
                let key = spec.key.clone();
                custom.update(|c| {
                    c.retain(|h| h.key != key);
                    c.push(spec);
                });
                scenario.update(|s| s.hardware = key.clone());
                message.set(Some((true, format!("Added '{key}'."))));
            }
            Err(e) => message.set(Some((false, e))),
        }
    };
    let export = move |_| {
        hardware.with_untracked(|h| {
            browser::download_text(&h.to_json(), &format!("{}.json", h.key), "application/json")
        });
    };
    let template = move |_| {
        let mut h = hardware.get_untracked();
        h.key = format!("{}_custom", h.key);
        h.name = format!("{} (custom)", h.name);
        text.set(h.to_json());
    };
    let remove = move |_| {
        let key = scenario.with_untracked(|s| s.hardware.clone());
        custom.update(|c| c.retain(|h| h.key != key));
        // Never leave the page on a device that no longer exists.
        let fallback = roofline_core::find_hardware(DEFAULT_HARDWARE)
            .map_or_else(|_| DEFAULT_HARDWARE.to_owned(), |h| h.name.clone());
        scenario.update(|s| s.hardware = DEFAULT_HARDWARE.to_owned());
        message.set(Some((true, format!("Removed '{key}'; now showing {fallback}."))));
    };
    let is_custom = move || hardware.with(|h| h.provenance == Provenance::Custom);
    view! {
        <details class="custom-hw">
            <summary>"Custom hardware"</summary>
            <label for="custom-json">"Device JSON (base units: bytes, bytes/s, FLOP/s)"</label>
            <textarea id="custom-json" rows="6" prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="row">
                <button type="button" on:click=template>"Start from current"</button>
                <button type="button" on:click=import>"Import"</button>
                <button type="button" on:click=export>"Export current"</button>
                <button type="button" on:click=remove disabled=move || !is_custom()>"Remove current"</button>
            </div>
            {move || message.get().map(|(ok, m)| view! { <p class=if ok { "hint" } else { "error" } role="status">{m}</p> })}
        </details>
    }
}
