//! Device picker over the catalog and the user's custom devices.

use leptos::prelude::*;
use roofline_core::{HardwareSpec, Mode};

use crate::format;
use crate::presets::{all_hardware, resolve_hardware};
use crate::scenario::Scenario;

/// A labelled `<select>` (`data-testid="hardware-select"`) listing every catalogued device, then custom ones,
/// with the chosen device's architecture, bandwidth (in the mode predictions use) and memory underneath.
#[component]
pub fn HardwarePicker(
    /// The scenario whose device is picked.
    scenario: RwSignal<Scenario>,
    /// The spec predictions use.
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// User-defined devices.
    #[prop(into)]
    custom: Signal<Vec<HardwareSpec>>,
) -> impl IntoView {
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
                "{} · {} {} · {}",
                h.arch_label,
                Mode::of(h),
                format::bandwidth(h.dram_bandwidth_bytes_per_s),
                format::capacity(h.memory_bytes)
            )
        })
    };
    view! {
        <div class="field">
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
            <p class="hint">{facts}</p>
        </div>
    }
}
