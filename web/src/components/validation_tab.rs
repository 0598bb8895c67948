//! Validation: every measured point against its prediction in each mode the device has (datasheet,
//! reference, calibrated), with error statistics by precision and regime.

use leptos::prelude::*;
use roofline_core::Mode;

use crate::calibration::{DeviceSpecs, mode_explanation, mode_title};
use crate::components::calibration_panel::CalibrationPanel;
use crate::components::not_compared::NotComparedRow;
use crate::format;
use crate::measured::on_device;
use crate::state::use_app;
use crate::validation::{self, Band, Check, ErrorStats, ValidationRow, above_roof, check_in, error_in};

/// A prediction cell and its error cell, coloured by band; `data-mode` names the column's mode.
fn check_cells(mode: Mode, check: Option<&Result<Check, roofline_core::Error>>) -> AnyView {
    match check {
        None => view! { <td colspan="2"></td> }.into_any(),
        Some(Err(e)) => {
            view! { <td colspan="2" class="unsupported" data-mode=mode.name()>{format::failure(e)}</td> }
                .into_any()
        }
        Some(Ok(c)) => view! {
            <td class="num" data-mode=mode.name()>{format::duration(c.predicted_s)}</td>
            <td class=format!("num {}", validation::band_class(Band::of(c.error_pct))) data-testid="error-pct"
                data-mode=mode.name() data-value=c.error_pct.to_string()>
                {format::signed_percent(c.error_pct)}
            </td>
        }
        .into_any(),
    }
}

/// Rows of a statistics table.
fn stats_rows(stats: Vec<ErrorStats>) -> impl IntoView {
    stats
        .into_iter()
        .map(|s| {
            view! {
                <tr>
                    <td>{s.precision.name()}</td>
                    <td>{s.regime.name()}</td>
                    <td class="num">{s.n_points}</td>
                    <td class=format!("num {}", validation::band_class(Band::of(s.median_abs_pct)))>{format::percent(s.median_abs_pct / 100.0)}</td>
                    <td class=format!("num {}", validation::band_class(Band::of(s.p90_abs_pct)))>{format::percent(s.p90_abs_pct / 100.0)}</td>
                </tr>
            }
        })
        .collect_view()
}

/// `Datasheet: NVIDIA GB10` — the spec behind the column of `mode`.
fn column_name(specs: &DeviceSpecs, mode: Mode) -> String {
    let spec = if mode == Mode::Calibrated {
        &specs.calibrated
    } else {
        &specs.datasheet
    };
    format!(
        "{}: {}",
        mode_title(mode),
        spec.as_ref().map_or("", |h| h.name.as_str())
    )
}

/// One `validation-row` per point of `rows`, the device it ran on in its title: measured time
/// (`data-mode="measured"`, flagged `above-roof` when `above` says it lies above the calibrated roof), then
/// prediction and error in each of `modes`.
fn body_rows(modes: &[Mode], rows: &[ValidationRow], above: &[Option<f64>]) -> impl IntoView + use<> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let flag = above.get(i).copied().flatten().map(|excess| view! {
                <small class="err-poor" data-testid="above-roof" data-value=excess.to_string()>
                    {format!(" above the calibrated roof (+{})", format::percent(excess))}
                </small>
            });
            view! {
                <tr
                    data-testid="validation-row"
                    data-precision=r.precision.name()
                    title=format!("measured on {}", r.device)
                >
                    <td class="nowrap">{r.precision.name()}</td>
                    <td><span class="nowrap">{r.shape.clone()}</span> " " <small class="what">{r.regime.name()}</small></td>
                    <td class="num" data-mode="measured">{format::duration(r.measured_s)}{flag}</td>
                    {modes.iter().map(|&m| check_cells(m, check_in(r, m))).collect_view()}
                </tr>
            }
        })
        .collect_view()
}

/// The Validation tab: calibration controls, an intro saying what each column's mode is
/// (`validation-intro`), `data-testid="validation-table"` (in a box that scrolls on its own, `data-device`
/// the device; rows from [`body_rows`] in each mode the device has — Datasheet and Reference, and Calibrated
/// once calibrated, each cell with its `data-mode`; errors coloured < 10 %, 10–25 %, > 25 %; points
/// measured on other devices in one `not-compared` row with its action), and median / p90 |error| by
/// precision and regime per mode (`validation-stats`).
#[component]
pub fn ValidationTab() -> impl IntoView {
    let app = use_app();
    let (measured, specs) = (app.measured, app.device.listed);
    // Only points measured on this device are compared with its predictions; the rest are counted in a note.
    let mine = Memo::new(move |_| {
        specs.with(|d| {
            measured
                .shown
                .with(|m| d.own().map(|h| on_device(m, h)).unwrap_or_default())
        })
    });
    let table = Memo::new(move |_| specs.with(|d| mine.with(|m| validation::table(m, d))));
    let elsewhere = Memo::new(move |_| measured.shown.with(Vec::len) - mine.with(Vec::len));
    let modes = Memo::new(move |_| table.with(|t| t.0.clone()));
    let device = move || specs.with(|d| d.own().map(|h| h.name.clone()));
    let own = Signal::derive(move || {
        specs.with(|d| d.own().cloned()).unwrap_or_else(|| {
            roofline_core::find_hardware(crate::presets::DEFAULT_HARDWARE)
                .cloned()
                .expect("the catalog has the default device")
        })
    });
    let all_points = Signal::derive(move || measured.shown.get());
    // How far each of this device's points lies above the calibrated roof, in table order.
    let above = Memo::new(move |_| {
        specs.with(|d| {
            let Some(calibrated) = &d.calibrated else {
                return Vec::new();
            };
            mine.with(|m| m.iter().map(|p| above_roof(p, calibrated)).collect::<Vec<_>>())
        })
    });
    let intro = move || {
        modes
            .get()
            .into_iter()
            .map(|m| view! { <li><strong>{mode_title(m)}</strong>": " {mode_explanation(m)}</li> })
            .collect_view()
    };
    let body = move || {
        let modes = modes.get();
        table.with(|(_, rows)| above.with(|above| body_rows(&modes, rows, above)))
    };
    let stats = move || {
        modes
            .get()
            .into_iter()
            .map(|m| {
                let stats = table.with(|(_, rows)| validation::stats(rows, |r| error_in(r, m)));
                view! {
                    <tbody data-mode=m.name()>
                        <tr><th colspan="5" scope="rowgroup">{specs.with(|d| column_name(d, m))}</th></tr>
                        {stats_rows(stats)}
                    </tbody>
                }
            })
            .collect_view()
    };
    view! {
        <div class="validation-tab">
            <CalibrationPanel />
            {move || {
                let n = above.with(|a| a.iter().flatten().count());
                (n > 0).then(|| view! {
                    <p class="warning" data-testid="above-roof-note" data-value=n.to_string()>
                        {format!("{n} measured point(s) lie above the calibrated roofs: the calibration underestimates this device (a noisy or busy run); calibrate again.")}
                    </p>
                })
            }}
            <ul class="hint" data-testid="validation-intro">{intro}</ul>
            <div class="table-box" data-device=move || device().unwrap_or_default()>
            <table class="validation" data-testid="validation-table">
                <caption>{move || format!("Measured vs predicted on {}", device().unwrap_or_default())}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Precision"</th>
                        <th scope="col">"Shape"</th>
                        <th scope="col" class="num">"Measured"</th>
                        {move || modes.get().into_iter().map(|m| view! {
                            <th scope="col" class="num" data-mode=m.name()>{mode_title(m)}</th>
                            <th scope="col" class="num">"Error"</th>
                        }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    <NotComparedRow points=all_points hardware=own colspan=9 />
                    {body}
                </tbody>
            </table>
            </div>
            {move || (elsewhere.get() > 0).then(|| view! {
                <p class="measured-note" data-testid="validation-other-note" data-value=elsewhere.get().to_string()>
                    {format!("{} measured point(s) from other devices are not listed: a measurement is only compared with predictions for the device that ran it.", elsewhere.get())}
                </p>
            })}
            // Points measured elsewhere are not "no points": say which device has none.
            {move || table.with(|t| t.1.is_empty()).then(|| {
                let text = if elsewhere.get() > 0 {
                    format!(
                        "No point measured on {} yet: run the Kernel Spot Check or a benchmark job on it, or import its results.",
                        device().unwrap_or_default()
                    )
                } else {
                    "No measured points yet: run the Kernel Spot Check or a benchmark job on the endpoint, or import results.".to_owned()
                };
                view! { <p class="hint" data-testid="validation-empty">{text}</p> }
            })}
            <div class="table-box" data-device=move || device().unwrap_or_default()>
            <table class="validation-stats" data-testid="validation-stats">
                <caption>"|Error| by precision and regime (median, p90)"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Precision"</th>
                        <th scope="col">"Regime"</th>
                        <th scope="col" class="num">"Points"</th>
                        <th scope="col" class="num">"Median"</th>
                        <th scope="col" class="num">"p90"</th>
                    </tr>
                </thead>
                {stats}
            </table>
            </div>
        </div>
    }
}
