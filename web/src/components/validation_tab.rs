//! Validation: every measured point against its prediction on the datasheet and the calibrated spec, with
//! error statistics by precision and regime.

use leptos::prelude::*;
use roofline_core::{HardwareSpec, Provenance};

use crate::calibration::datasheet_and_calibrated;
use crate::components::CalibrationPanel;
use crate::format;
use crate::measured::use_measured;
use crate::state::Scenario;
use crate::validation::{self, Band, Check, ErrorStats, calibrated_error, spec_error};

/// A prediction cell and its error cell, coloured by band.
fn check_cells(check: &Result<Check, roofline_core::Error>) -> AnyView {
    match check {
        Err(e) => view! { <td colspan="2" class="unsupported">{format::failure(e)}</td> }.into_any(),
        Ok(c) => view! {
            <td class="num">{format::duration(c.predicted_s)}</td>
            <td class=format!("num {}", validation::band_class(Band::of(c.error_pct))) data-testid="error-pct" data-value=c.error_pct.to_string()>
                {format::signed_percent(c.error_pct)}
            </td>
        }
        .into_any(),
    }
}

/// `Calibrated` or `Datasheet`: where a spec's numbers come from.
fn kind(spec: &HardwareSpec) -> &'static str {
    if spec.provenance == Provenance::Measured {
        "Calibrated"
    } else {
        "Datasheet"
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

/// The Validation tab: calibration controls, `data-testid="validation-table"` (one `validation-row` per
/// measured point, the device it ran on in its title: measured time, datasheet prediction and error,
/// calibrated prediction and error; errors coloured < 10 %, 10–25 %, > 25 %), and median / p90 |error| by
/// precision and regime (`validation-stats`).
#[component]
pub fn ValidationTab(
    /// The scenario (selected device).
    scenario: RwSignal<Scenario>,
    /// Custom devices (calibrated specs among them).
    custom: RwSignal<Vec<HardwareSpec>>,
) -> impl IntoView {
    let measured = use_measured();
    let specs =
        Memo::new(move |_| scenario.with(|s| custom.with(|c| datasheet_and_calibrated(&s.hardware, c))));
    let rows = Memo::new(move |_| {
        specs.with(|(datasheet, calibrated)| {
            datasheet.as_ref().map_or_else(Vec::new, |d| {
                measured
                    .shown
                    .with(|m| validation::rows(m, d, calibrated.as_ref()))
            })
        })
    });
    // `Datasheet: <name>` of the first spec (a host CPU's calibration is its only spec), `Calibrated: <name>`.
    let names = move || {
        specs.with(|(d, c)| {
            (
                d.as_ref()
                    .map_or_else(String::new, |h| format!("{}: {}", kind(h), h.name)),
                c.as_ref().map(|h| format!("{}: {}", kind(h), h.name)),
            )
        })
    };
    let first_kind = move || specs.with(|(d, _)| d.as_ref().map_or("Datasheet", kind));
    let body = move || {
        rows.get()
            .into_iter()
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
                        {check_cells(&r.spec)}
                        {r.calibrated.as_ref().map(check_cells)}
                    </tr>
                }
            })
            .collect_view()
    };
    let stats = move |calibrated: bool| {
        let pick = if calibrated { calibrated_error } else { spec_error };
        rows.with(|r| validation::stats(r, pick))
    };
    view! {
        <div class="validation-tab">
            <CalibrationPanel scenario=scenario custom=custom />
            <table class="validation" data-testid="validation-table">
                <caption>{move || format!("Measured vs predicted ({})", names().0)}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Precision"</th>
                        <th scope="col">"Shape"</th>
                        <th scope="col" class="num">"Measured"</th>
                        <th scope="col" class="num">{first_kind}</th>
                        <th scope="col" class="num">"Error"</th>
                        {move || names().1.map(|_| view! {
                            <th scope="col" class="num">"Calibrated"</th>
                            <th scope="col" class="num">"Error"</th>
                        })}
                    </tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
            {move || rows.with(Vec::is_empty).then(|| view! {
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
                <tbody>
                    <tr><th colspan="5" scope="rowgroup">{move || names().0}</th></tr>
                    {move || stats_rows(stats(false))}
                    {move || names().1.map(|name| view! { <tr><th colspan="5" scope="rowgroup">{name}</th></tr> })}
                    {move || stats_rows(stats(true))}
                </tbody>
            </table>
        </div>
    }
}
