//! The one row a measured table shows for points from another device than the selected one: which devices,
//! that they are not compared, and the action that makes them comparable (show them on their own device, or
//! calibrate it when the page has no spec for it).

use leptos::prelude::*;
use roofline_core::HardwareSpec;
use roofline_core::measured_device::{PointDevice, same_device};
use roofline_core::measurement::MeasuredPoint;

use crate::presets::all_hardware;
use crate::state::{Tab, use_app};

/// The devices of `points` that are not `selected`, each with the key of a spec the page has for it (a
/// catalog device, a custom one or a calibration), in order of first appearance.
#[must_use]
pub fn other_devices(
    points: &[MeasuredPoint],
    selected: &HardwareSpec,
    custom: &[HardwareSpec],
) -> Vec<(String, Option<String>)> {
    let mut devices: Vec<(String, Option<String>)> = Vec::new();
    for p in points.iter().filter(|p| !same_device(p, selected)) {
        let label = PointDevice::of(p).label();
        if devices.iter().any(|(l, _)| *l == label) {
            continue;
        }
        // A calibration of the device predicts in its own terms; else its catalog entry.
        let key = custom
            .iter()
            .find(|h| h.calibrated_base().is_some() && same_device(p, h))
            .or_else(|| all_hardware(custom).find(|h| same_device(p, h)))
            .map(|h| h.key.clone());
        devices.push((label, key));
    }
    devices
}

/// `tr.not-compared` (`data-testid="not-compared"`, `data-value` = how many points) spanning `colspan`
/// columns, when some `points` were measured on another device than `hardware`: they are listed but never
/// compared with its predictions; per device, `show-on-device` switches to it (a spec the page has) or
/// `calibrate-device` opens the Validation tab's calibration. Nothing when every point is the device's.
#[component]
pub fn NotComparedRow(
    /// The table's measured points.
    #[prop(into)]
    points: Signal<Vec<MeasuredPoint>>,
    /// The selected device's spec.
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// Columns to span.
    colspan: u32,
) -> impl IntoView {
    let app = use_app();
    let (scenario, custom, tab) = (app.scenario, app.custom, app.tab);
    let others =
        Memo::new(move |_| points.with(|p| hardware.with(|h| custom.with(|c| other_devices(p, h, c)))));
    let n_others =
        move || points.with(|p| hardware.with(|h| p.iter().filter(|q| !same_device(q, h)).count()));
    move || {
        let list = others.get();
        (!list.is_empty()).then(|| {
            let name = hardware.with(|h| h.name.clone());
            let actions = list
                .into_iter()
                .map(|(device, key)| match key {
                    Some(key) => view! {
                        <button type="button" data-testid="show-on-device"
                            on:click=move |_| scenario.update(|s| s.hardware = key.clone())>
                            {format!("Show on {device}")}
                        </button>
                    }
                    .into_any(),
                    None => view! {
                        <button type="button" data-testid="calibrate-device" on:click=move |_| tab.set(Tab::Validation)>
                            {format!("Calibrate {device}")}
                        </button>
                    }
                    .into_any(),
                })
                .collect_view();
            view! {
                <tr class="not-compared" data-testid="not-compared" data-value=n_others().to_string()>
                    <td colspan=colspan.to_string()>
                        {format!("{} measured on another device: not compared with {name}'s predictions. ", n_others())}
                        {actions}
                    </td>
                </tr>
            }
        })
    }
}
