//! Validation: every measured point against its prediction in each mode the device has (datasheet,
//! reference, calibrated), with error statistics by precision and regime.

use leptos::prelude::*;
use roofline_core::{HardwareSpec, Mode};

use crate::calibration::{DeviceSpecs, mode_explanation, mode_title};
use crate::components::CalibrationPanel;
use crate::format;
use crate::measured::{on_device, use_measured};
use crate::scenario::Scenario;
use crate::validation::{self, Band, Check, ErrorStats, check_in, error_in};

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

/// The Validation tab: calibration controls, an intro saying what each column's mode is
/// (`validation-intro`), `data-testid="validation-table"` (one `validation-row` per measured point, the
/// device it ran on in its title: measured time, then prediction and error in each mode the device has —
/// Datasheet and Reference, and Calibrated once calibrated; errors coloured < 10 %, 10–25 %, > 25 %), and
/// median / p90 |error| by precision and regime per mode (`validation-stats`).
#[component]
pub fn ValidationTab(
    /// The scenario (selected device).
    scenario: RwSignal<Scenario>,
    /// Custom devices (calibrated specs among them).
    custom: RwSignal<Vec<HardwareSpec>>,
) -> impl IntoView {
    let measured = use_measured();
    let specs = Memo::new(move |_| scenario.with(|s| custom.with(|c| DeviceSpecs::of(&s.hardware, c))));
    // Only points measured on this device are compared with its predictions; the rest are counted in a note.
    let table = Memo::new(move |_| {
        specs.with(|d| {
            measured.shown.with(|m| {
                let mine = d.own().map(|h| on_device(m, h)).unwrap_or_default();
                validation::table(&mine, d)
            })
        })
    });
    let elsewhere = Memo::new(move |_| {
        specs.with(|d| {
            measured
                .shown
                .with(|m| m.len() - d.own().map_or(0, |h| on_device(m, h).len()))
        })
    });
    let modes = Memo::new(move |_| table.with(|t| t.0.clone()));
    // `Datasheet: NVIDIA GB10` — the spec behind a column.
    let column_name = move |mode: Mode| {
        specs.with(|d| {
            let spec = if mode == Mode::Calibrated {
                &d.calibrated
            } else {
                &d.datasheet
            };
            format!(
                "{}: {}",
                mode_title(mode),
                spec.as_ref().map_or("", |h| h.name.as_str())
            )
        })
    };
    let device = move || specs.with(|d| d.own().map(|h| h.name.clone()));
    let intro = move || {
        modes
            .get()
            .into_iter()
            .map(|m| view! { <li><strong>{mode_title(m)}</strong>": " {mode_explanation(m)}</li> })
            .collect_view()
    };
    let body = move || {
        let modes = modes.get();
        table.with(|(_, rows)| {
            rows.iter()
                .map(|r| {
                    view! {
                        <tr
                            data-testid="validation-row"
                            data-precision=r.precision.name()
                            title=format!("measured on {}", r.device)
                        >
                            <td>{r.precision.name()}</td>
                            <td>{r.shape.clone()} " " <small class="what">{r.regime.name()}</small></td>
                            <td class="num">{format::duration(r.measured_s)}</td>
                            {modes.iter().map(|&m| check_cells(m, check_in(r, m))).collect_view()}
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    let stats = move || {
        modes
            .get()
            .into_iter()
            .map(|m| {
                let stats = table.with(|(_, rows)| validation::stats(rows, |r| error_in(r, m)));
                view! {
                    <tr><th colspan="5" scope="rowgroup">{column_name(m)}</th></tr>
                    {stats_rows(stats)}
                }
            })
            .collect_view()
    };
    view! {
        <div class="validation-tab">
            <CalibrationPanel scenario=scenario custom=custom />
            <ul class="hint" data-testid="validation-intro">{intro}</ul>
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
                <tbody>{body}</tbody>
            </table>
            {move || (elsewhere.get() > 0).then(|| view! {
                <p class="measured-note" data-testid="validation-other-note" data-value=elsewhere.get().to_string()>
                    {format!("{} measured point(s) from other devices are not listed: a measurement is only compared with predictions for the device that ran it.", elsewhere.get())}
                </p>
            })}
            {move || table.with(|t| t.1.is_empty()).then(|| view! {
                <p class="hint">"No measured points yet: run the Kernel Spot Check or a benchmark job on the endpoint, or import results."</p>
            })}
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
                <tbody>{stats}</tbody>
            </table>
        </div>
    }
}
