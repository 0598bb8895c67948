//! Device picker over the catalog and the user's custom devices.

use leptos::prelude::*;
use roofline_core::Mode;

use crate::format;
use crate::presets::{all_hardware, resolve_hardware};
use crate::state::use_app;

/// A labelled `<select>` (`data-testid="hardware-select"`) listing every catalogued device, then custom ones,
/// with the chosen device's architecture, bandwidth (in the mode predictions use) and memory underneath.
#[component]
pub fn HardwarePicker() -> impl IntoView {
    let app = use_app();
    let (scenario, hardware, custom) = (app.scenario, app.device.hardware, app.custom);
    let options = move || {
        custom.with(|c| {
            all_hardware(c)
                .map(|h| {
                    let k = h.key.clone();
                    let selected = move || scenario.with(|s| s.hardware == k);
                    view! { <option value=h.key.clone() selected=selected>{h.name.clone()}</option> }
                })
                .collect_view()
        })
    };
    // A key that names no device (an old link, a removed custom device) stays visible as what was asked for;
    // the numbers shown are the fallback device's, and the notice says which.
    let unknown = Memo::new(move |_| {
        scenario.with(|s| {
            custom.with(|c| {
                resolve_hardware(&s.hardware, c)
                    .is_none()
                    .then(|| s.hardware.clone())
            })
        })
    });
    let facts = move || {
        hardware.with(|h| {
            format!(
                "{} · {} DRAM {} · {} as the device reports it",
                h.arch_label,
                Mode::of(h),
                format::bandwidth(h.dram_bandwidth_bytes_per_s),
                format::capacity(roofline_core::device_capacity_bytes(h))
            )
        })
    };
    view! {
        <div class="field hardware-field">
            <label for="hardware-select">"Hardware"</label>
            <select
                id="hardware-select"
                data-testid="hardware-select"
                prop:value=move || scenario.with(|s| s.hardware.clone())
                on:change=move |ev| scenario.update(|s| s.hardware = event_target_value(&ev))
            >
                {move || unknown.get().map(|k| view! { <option value=k.clone() disabled=true selected=true>{format!("unknown device: {k}")}</option> })}
                {options}
            </select>
            {move || unknown.get().map(|k| view! {
                <p class="error" role="alert" data-testid="unknown-device" data-value=k.clone()>
                    {format!("No device '{k}' in the catalog or among your custom devices. The numbers below are for {} until you pick a device.", hardware.with(|h| h.name.clone()))}
                </p>
            })}
            <p class="hint" data-mode=move || hardware.with(|h| Mode::of(h).name()) data-device=move || hardware.with(|h| h.name.clone())>{facts}</p>
        </div>
    }
}
