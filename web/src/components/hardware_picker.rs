//! Device picker over the catalog and the user's custom devices.

use leptos::prelude::*;
use roofline_core::{HardwareSpec, Mode};

use crate::format;
use crate::state::{Scenario, all_hardware};

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
                {options}
            </select>
            <p class="hint">{facts}</p>
        </div>
    }
}
