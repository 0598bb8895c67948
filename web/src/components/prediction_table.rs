//! Table of the kernel spot check's predictions.

use leptos::prelude::*;

use roofline_core::Mode;

use crate::calibration::mode_label;
use crate::format;
use crate::palette::{css, precision_rgb};
use crate::scenario::KernelRow;
use crate::state::use_app;

/// The operator name shared by the rows, e.g. `GEMV 1x4096x4096`.
fn caption(rows: &[KernelRow]) -> String {
    rows.iter()
        .find_map(|r| r.op.as_ref().ok())
        .map_or_else(|| "invalid shape".to_owned(), |op| op.name.clone())
}

/// One row per requested precision (`data-precision`) under a caption naming the operator, mode and device
/// (also the box's `data-mode` and `data-device`), with AI, time (`data-testid="time-us"`, adaptive unit,
/// raw seconds in `data-value`; the launch floor and wave quantization when on), FLOP/s and bound. A precision without a prediction keeps its row
/// and says why (`data-supported="false"`), e.g. "unsupported on Hopper sm_90 (no FP4 path)".
#[component]
pub fn PredictionTable() -> impl IntoView {
    let app = use_app();
    let (rows, hardware) = (app.analyses.rows, app.device.hardware);
    let body = move || {
        rows.get()
            .into_iter()
            .map(|r| {
                let name = r.precision.name();
                let swatch = format!("background:{}", css(precision_rgb(r.precision)));
                let label = view! { <td><span class="swatch" style=swatch></span>{name}</td> };
                match (&r.op, &r.prediction) {
                    (Ok(_), Ok(p)) => view! {
                        <tr data-precision=name data-supported="true">
                            {label}
                            <td class="num" data-testid="ai" data-value=p.arithmetic_intensity.to_string()>
                                {format::intensity(p.arithmetic_intensity)}
                            </td>
                            <td class="num" data-testid="time-us" data-value=p.time_s.to_string()>
                                {format::duration(p.time_s)}
                            </td>
                            <td class="num">{format::flop_rate(p.attainable_flop_per_s)}</td>
                            <td class=format!("bound {}", p.bound.name())>{p.bound.name()}</td>
                        </tr>
                    }
                    .into_any(),
                    (_, Err(e)) | (Err(e), _) => view! {
                        <tr data-precision=name data-supported="false" class="unsupported">
                            {label}
                            <td colspan="4" data-testid="failure">{format::failure(e)}</td>
                        </tr>
                    }
                    .into_any(),
                }
            })
            .collect_view()
    };
    view! {
        <div class="table-box" data-mode=move || hardware.with(|h| Mode::of(h).name()) data-device=move || hardware.with(|h| h.name.clone())>
        <table class="predictions" data-testid="predictions">
            <caption>{move || format!("Kernel predictions — {} — {}", caption(&rows.read()), hardware.with(mode_label))}</caption>
            <thead>
                <tr>
                    <th scope="col">"Precision"</th>
                    <th scope="col" class="num">"AI (FLOP/B)"</th>
                    <th scope="col" class="num">"Time"</th>
                    <th scope="col" class="num">"Throughput"</th>
                    <th scope="col">"Bound"</th>
                </tr>
            </thead>
            <tbody>{body}</tbody>
        </table>
        </div>
    }
}
