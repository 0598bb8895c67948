//! Operators of the analysed step, slowest first.

use leptos::prelude::*;
use roofline_core::{Mode, ModelAnalysis, OpKind};

use crate::format;
use crate::palette::{css, precision_rgb};
use crate::state::use_app;
use crate::step::StepComparison;
use crate::validation::{Band, band_class};

/// One formatted table row.
#[derive(Debug, Clone, PartialEq, Default)]
struct Row {
    name: String,
    swatch: String,
    cells: [String; 6],
    bound: &'static str,
    measured: Measured,
}

/// The measured cells of a row: count × measured time, the error against the prediction, the error's
/// colour class, the title (what ran, or why nothing did), and the measured time in seconds for tests.
#[derive(Debug, Clone, PartialEq, Default)]
struct Measured {
    time: String,
    error: String,
    class: &'static str,
    title: String,
    seconds: Option<f64>,
}

/// The measured cells of the operator `name` run `count` times: `…` while the step is measured, `—` with the
/// reason when it has no measurement.
fn measured(c: &StepComparison, name: &str, count: u32) -> Measured {
    match (c.rows.get(name), c.failures.get(name)) {
        (Some(r), _) => Measured {
            time: format::duration(f64::from(count) * r.time_s),
            error: r.error_pct.map_or_else(|| "—".to_owned(), format::signed_percent),
            class: r.error_pct.map_or("", |e| band_class(Band::of(e))),
            title: r.ran.clone(),
            seconds: Some(r.time_s),
        },
        (None, Some(why)) => Measured {
            time: "—".to_owned(),
            error: "—".to_owned(),
            title: why.clone(),
            ..Measured::default()
        },
        (None, None) => Measured {
            time: "…".to_owned(),
            ..Measured::default()
        },
    }
}

/// Formats the operators, slowest (count × time) first, with their measurements when the step was measured.
fn rows(a: &ModelAnalysis, step: Option<&StepComparison>) -> Vec<Row> {
    let mut ops: Vec<_> = a.ops.iter().collect();
    ops.sort_by(|x, y| y.total_time_s().total_cmp(&x.total_time_s()));
    ops.into_iter()
        .map(|op| {
            let count = f64::from(op.count);
            Row {
                name: op.name.clone(),
                swatch: format!("background:{}", css(precision_rgb(op.precision))),
                cells: [
                    op.count.to_string(),
                    // A collective's bytes cross the link, not DRAM: it has no place on the roofline.
                    if op.kind == OpKind::Collective {
                        "—".to_owned()
                    } else {
                        format::intensity(op.arithmetic_intensity)
                    },
                    format::gflop(op.flops * count),
                    format::megabytes(op.bytes * count),
                    format::duration(op.total_time_s()),
                    format::percent(op.total_time_s() / a.total_time_s),
                ],
                bound: op.bound.name(),
                measured: step.map(|c| measured(c, &op.name, op.count)).unwrap_or_default(),
            }
        })
        .collect()
}

/// Operators sorted by total time (count × time): op, count, AI, GFLOP, MB, time (adaptive unit) and share
/// of the step, bound, under a caption naming the mode and device (also the table's `data-mode` and
/// `data-device`), in a box that scrolls sideways on its own. Collectives (multi-GPU) have no FLOPs and no AI (`—`), their
/// MB are the bytes one GPU sends over the link, and they are bound by the interconnect. When the step was
/// measured, two more columns: count × measured time (`op-measured`, `data-value` = one instance in
/// seconds) and its error against the prediction (`op-error`). Rows are keyed by position and update their
/// text in place while a slider moves.
#[component]
pub fn OperatorTable() -> impl IntoView {
    let app = use_app();
    let (analysis, hardware, step) = (app.analyses.shown, app.device.hardware, app.step.comparison);
    let (mode, fallback) = (app.device.caption, app.analyses.fallback);
    // The mode and device of the numbers, e.g. `reference · NVIDIA GB10`, and the config when it is the
    // recommended one shown in place of the scenario's.
    let caption = move || match fallback.get() {
        Some(f) => format!("{} — {}, the recommended config", mode.get(), f.name),
        None => mode.get(),
    };
    let table = Memo::new(move |_| {
        step.with(|c| analysis.with(|a| a.as_ref().map(|a| rows(a, c.as_ref())).unwrap_or_default()))
    });
    let shown = move || step.with(Option::is_some);
    let len = Memo::new(move |_| table.with(Vec::len));
    let row = move |i: usize| {
        let get = move |f: fn(&Row) -> String| move || table.with(|t| t.get(i).map(f).unwrap_or_default());
        let cell = move |c: usize| {
            view! { <td class="num">{move || table.with(|t| t.get(i).map(|r| r.cells[c].clone()).unwrap_or_default())}</td> }
        };
        view! {
            <tr data-op=get(|r| r.name.clone())>
                <td><span class="swatch" style=get(|r| r.swatch.clone())></span>{get(|r| r.name.clone())}</td>
                {(0..6).map(cell).collect_view()}
                <td class=get(|r| format!("bound {}", r.bound))>{get(|r| r.bound.to_owned())}</td>
                <Show when=shown>
                    <td
                        class="num"
                        data-testid="op-measured"
                        data-value=move || table.with(|t| t.get(i).and_then(|r| r.measured.seconds).map(|s| s.to_string()))
                        title=get(|r| r.measured.title.clone())
                    >
                        {get(|r| r.measured.time.clone())}
                    </td>
                    <td class=get(|r| format!("num {}", r.measured.class)) data-testid="op-error">
                        {get(|r| r.measured.error.clone())}
                    </td>
                </Show>
            </tr>
        }
    };
    view! {
        <div class="table-box" data-mode=move || hardware.with(|h| Mode::of(h).name()) data-device=move || hardware.with(|h| h.name.clone())>
        <table class="ops" data-testid="operators">
            <caption>{move || format!("Operators by time — {}", caption())}</caption>
            <thead>
                <tr>
                    <th scope="col">"Op"</th>
                    <th scope="col" class="num">"×"</th>
                    <th scope="col" class="num">"AI"</th>
                    <th scope="col" class="num">"GFLOP"</th>
                    <th scope="col" class="num">"MB"</th>
                    <th scope="col" class="num">"Time"</th>
                    <th scope="col" class="num">"% time"</th>
                    <th scope="col">"Bound"</th>
                    <Show when=shown>
                        <th scope="col" class="num" title="count × measured time of one instance">"Measured"</th>
                        <th scope="col" class="num" title="measured ÷ predicted − 1">"error"</th>
                    </Show>
                </tr>
            </thead>
            <tbody>
                <For each=move || 0..len.get() key=|i| *i let:i>
                    {row(i)}
                </For>
            </tbody>
        </table>
        </div>
    }
}
