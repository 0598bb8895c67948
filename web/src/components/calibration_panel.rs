//! Calibration against the endpoint: measured bandwidth and peaks become a calibrated spec, and predictions
//! switch to the calibrated mode.

use leptos::prelude::*;
use roofline_core::Mode;
use roofline_core::hardware::CalibrationQuality;
use roofline_core::wire::{CalibrateRequest, CalibrationResult};

use crate::api::{self, ApiError};
use crate::calibration::{DeviceSpecs, age, upsert, with_spread};
use crate::format;
use crate::state::use_app;

/// The Calibrate button (`data-testid="calibrate-button"`, POST `/api/calibrate` starting from the detected
/// catalog device). The calibrated spec is kept among the custom devices and the detected device switches to
/// the calibrated mode (`mode-select` switches back); a device with no datasheet (a host CPU) is offered as
/// its own device (`use-calibrated-device`), in the calibrated mode. The result (`calibration-result`, its
/// `data-mode="calibrated"` and `data-device`) gives the measured figures; the quality of the selected
/// device's calibration, else of the one just measured ([`quality_view`]), stays under it across device
/// switches and reloads.
#[component]
pub fn CalibrationPanel() -> impl IntoView {
    let app = use_app();
    let (endpoint, measured, scenario, custom) = (app.endpoint, app.measured, app.scenario, app.custom);
    let calibrate = Action::new_local(move |(): &()| {
        let base = endpoint.base_now();
        let hardware_key = endpoint
            .device
            .get_untracked()
            .flatten()
            .and_then(|d| d.matched_key);
        async move {
            let result = api::calibrate(
                &base,
                &CalibrateRequest {
                    precisions: None,
                    hardware_key: hardware_key.clone(),
                },
            )
            .await;
            if let Ok(r) = &result {
                // The calibration's own measurements are stored on the endpoint too.
                measured.refresh_history();
                match r.spec.check() {
                    Ok(()) => {
                        custom.update(|c| upsert(c, r.spec.clone()));
                        // The detected device now predicts in the calibrated mode.
                        if let Some(base) = hardware_key {
                            scenario.update(|s| {
                                s.hardware = base;
                                s.corrections.mode = Mode::Calibrated;
                            });
                        }
                    }
                    Err(e) => leptos::logging::warn!("the endpoint's calibrated spec is invalid: {e}"),
                }
            }
            result
        }
    });
    // The calibration whose spread is shown: the selected device's (it outlives the result, across device
    // switches and reloads), else the one just measured.
    let quality = move || {
        let selected = app.device.listed.with(|d| d.calibrated.clone());
        let fresh = || {
            calibrate
                .value()
                .with(|r| r.as_ref().and_then(|r| r.as_ref().ok()).map(|r| r.spec.clone()))
        };
        let spec = selected.filter(|s| s.calibration.is_some()).or_else(fresh)?;
        spec.calibration.map(|q| quality_view(spec.name, q))
    };
    let result = move || {
        calibrate.value().get().map(|r: Result<CalibrationResult, ApiError>| match r {
            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
            Ok(r) => {
                let peaks = r
                    .peaks
                    .iter()
                    .map(|p| format!("{} {}", p.precision, format::flop_rate(p.achieved_flop_per_s)))
                    .chain(r.weight_only.iter().map(|w| {
                        let (width, rate) = (w.operands.width_label(), format::bandwidth(w.bandwidth_bytes_per_s));
                        format!("{} as {width} weight-only GEMV {rate} (no compute peak)", w.precision)
                    }))
                    .chain(r.failed.iter().map(|f| format!("{}: {}", f.precision, f.message)))
                    .collect::<Vec<_>>()
                    .join(" · ");
                let key = r.spec.key.clone();
                // A device without a datasheet (a host CPU) is offered as its own device.
                let offer = move || {
                    let key = key.clone();
                    let own_device = custom.with(|c| DeviceSpecs::of(&key, c).datasheet.is_none());
                    (own_device && scenario.with(|s| s.hardware != key)).then(|| view! {
                        <button type="button" data-testid="use-calibrated-device" on:click=move |_| scenario.update(|s| {
                            s.hardware = key.clone();
                            s.corrections.mode = Mode::Calibrated;
                        })>
                            "Predict on this calibrated device"
                        </button>
                    })
                };
                view! {
                    <div class="calibration-result" data-testid="calibration-result" data-mode="calibrated" data-device=r.spec.name.clone()>
                        <p class="hint">
                            {format!(
                                "{}: DRAM {} · kernel overhead {} (matrix), {} (vector) · {peaks}. {}",
                                r.spec.name,
                                format::bandwidth(r.bandwidth_bytes_per_s),
                                format::duration(r.kernel_overhead.as_ref().map_or(0.0, |o| o.kernel_overhead_s)),
                                format::duration(r.spec.kernel_overhead_s),
                                r.spec.notes
                            )}
                        </p>
                    </div>
                    {offer}
                }
                .into_any()
            }
        })
    };
    view! {
        <fieldset class="calibration">
            <legend>"Calibration"</legend>
            <button
                type="button"
                data-testid="calibrate-button"
                on:click=move |_| { calibrate.dispatch(()); }
                disabled=move || calibrate.pending().get() || !endpoint.is_online()
            >
                {move || if calibrate.pending().get() { "Calibrating…" } else { "Calibrate on the endpoint" }}
            </button>
            <p class="hint">"Calibrating switches predictions to the " <em>"Calibrated"</em> " mode; pick " <em>"Datasheet"</em> ", " <em>"Reference"</em> " or " <em>"Calibrated"</em> " under Mode."</p>
            {result}
            {quality}
        </fieldset>
    }
}

/// A calibration's quality (`calibration-quality`, `data-mode="calibrated"` and `data-device` = `device`):
/// when it was measured (`calibration-age`, `data-value` = Unix seconds), each figure as the median of its
/// runs with their range (`calibration-spread`), and each warning about its spread or the host's load
/// (`calibration-warning`).
fn quality_view(device: String, q: CalibrationQuality) -> impl IntoView {
    let mut lines = vec![format!("DRAM {}", with_spread(&q.bandwidth, format::bandwidth))];
    if let Some(o) = &q.kernel_overhead {
        lines.push(format!(
            "matrix-kernel overhead {}",
            with_spread(o, format::duration)
        ));
    }
    if let Some(o) = &q.vector_kernel_overhead {
        lines.push(format!(
            "vector-kernel overhead {}",
            with_spread(o, format::duration)
        ));
    }
    lines.extend(
        q.peaks
            .iter()
            .map(|(path, s)| format!("{path} {}", with_spread(s, format::flop_rate))),
    );
    if let Some(load) = q.host_load_per_cpu {
        lines.push(format!("host load {load:.2} per CPU when it started"));
    }
    let at = q.measured_at_unix_s;
    view! {
        <div class="calibration-quality" data-testid="calibration-quality" data-mode="calibrated" data-device=device.clone()>
            <p class="hint" data-testid="calibration-age" data-value=at.to_string()>
                {format!("{device} measured {} (the median of each figure's runs is used):", age(at, js_sys::Date::now() / 1e3))}
            </p>
            <ul class="hint" data-testid="calibration-spread">
                {lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
            </ul>
            {q.warnings.into_iter().map(|w| view! { <p class="warning" data-testid="calibration-warning">{w}</p> }).collect_view()}
        </div>
    }
}
