//! Operators of the analysed step, slowest first.

use leptos::prelude::*;
use roofline_core::{Error, ModelAnalysis};

use crate::format;
use crate::palette::{css, precision_rgb};

/// Operators sorted by total time (count × time): op, count, AI, GFLOP, MB, µs and share of the step, bound.
#[component]
pub fn OperatorTable(
    /// The analysis, or why there is none (then the table is empty).
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
) -> impl IntoView {
    let rows = move || {
        analysis.with(|a| {
            let Ok(a) = a else { return Vec::new() };
            let mut ops: Vec<_> = a.ops.iter().collect();
            ops.sort_by(|x, y| y.total_time_s().total_cmp(&x.total_time_s()));
            ops.into_iter()
                .map(|op| {
                    let count = f64::from(op.count);
                    let swatch = format!("background:{}", css(precision_rgb(op.precision)));
                    view! {
                        <tr data-op=op.name.clone()>
                            <td><span class="swatch" style=swatch></span>{op.name.clone()}</td>
                            <td class="num">{op.count}</td>
                            <td class="num">{format::intensity(op.arithmetic_intensity)}</td>
                            <td class="num">{format::gflop(op.flops * count)}</td>
                            <td class="num">{format::megabytes(op.bytes * count)}</td>
                            <td class="num">{format::micros_fixed(op.total_time_s())}</td>
                            <td class="num">{format::percent(op.total_time_s() / a.total_time_s)}</td>
                            <td class=format!("bound {}", op.bound.name())>{op.bound.name()}</td>
                        </tr>
                    }
                })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <table class="ops" data-testid="operators">
            <caption>"Operators by time"</caption>
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
            <tbody>{rows}</tbody>
        </table>
    }
}
