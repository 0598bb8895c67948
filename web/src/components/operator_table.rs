//! Operators of the analysed step, slowest first.

use leptos::prelude::*;
use roofline_core::{Error, ModelAnalysis, OpKind};

use crate::format;
use crate::palette::{css, precision_rgb};

/// One formatted table row.
#[derive(Debug, Clone, PartialEq, Default)]
struct Row {
    name: String,
    swatch: String,
    cells: [String; 6],
    bound: &'static str,
}

/// Formats the operators, slowest (count × time) first.
fn rows(a: &ModelAnalysis) -> Vec<Row> {
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
                    format::micros_fixed(op.total_time_s()),
                    format::percent(op.total_time_s() / a.total_time_s),
                ],
                bound: op.bound.name(),
            }
        })
        .collect()
}

/// Operators sorted by total time (count × time): op, count, AI, GFLOP, MB, µs and share of the step, bound,
/// under a caption naming the mode and device. Collectives (multi-GPU) have no FLOPs and no AI (`—`), their
/// MB are the bytes one GPU sends over the link, and they are bound by the interconnect. Rows are keyed by position and update their text in place
/// while a slider moves.
#[component]
pub fn OperatorTable(
    /// The analysis, or why there is none (then the table is empty).
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
    /// The mode and device of the numbers, e.g. `reference · NVIDIA GB10`.
    #[prop(into)]
    caption: Signal<String>,
) -> impl IntoView {
    let table = Memo::new(move |_| analysis.with(|a| a.as_ref().map(rows).unwrap_or_default()));
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
            </tr>
        }
    };
    view! {
        <table class="ops" data-testid="operators">
            <caption>{move || format!("Operators by time — {}", caption.read())}</caption>
            <thead>
                <tr>
                    <th scope="col">"Op"</th>
                    <th scope="col" class="num">"×"</th>
                    <th scope="col" class="num">"AI"</th>
                    <th scope="col" class="num">"GFLOP"</th>
                    <th scope="col" class="num">"MB"</th>
                    <th scope="col" class="num">"µs"</th>
                    <th scope="col" class="num">"% time"</th>
                    <th scope="col">"Bound"</th>
                </tr>
            </thead>
            <tbody>
                <For each=move || 0..len.get() key=|i| *i let:i>
                    {row(i)}
                </For>
            </tbody>
        </table>
    }
}
