//! The serving Pareto canvas: redraws when its data, the window size or the colour scheme changes, with a
//! tooltip for the point under the pointer and the legend of configs and markers below it.

use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;

use crate::browser;
use crate::charts::canvas::{ChartCanvas, theme};
use crate::charts::pareto_draw::draw_pareto;
use crate::charts::pareto_series::ParetoData;
use crate::palette::css;

/// Output tokens/s per GPU against tokens/s per user, log-log, on a canvas (`data-testid="serving-canvas"`,
/// `data-points` = the markers drawn) that fills its container's width; each finished draw is recorded as
/// `window.__roofline_serving_*_draw_*` for the timing script. The legend (`serving-legend`) lists the
/// configs in their colours and the marker styles.
#[component]
pub fn ParetoChart(
    /// What to draw.
    #[prop(into)]
    data: Signal<ParetoData>,
) -> impl IntoView {
    let chart = ChartCanvas::new();
    Effect::new(move |_| {
        let Some((canvas, scale)) = chart.prepare() else {
            return;
        };
        let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
            return;
        };
        match data.with(|d| draw_pareto(&backend.into_drawing_area(), d, &theme(), scale)) {
            Ok(h) => {
                chart.hits.set_value(h);
                browser::record_draw_of("roofline_serving");
            }
            Err(e) => leptos::logging::error!("serving chart draw failed: {e}"),
        }
    });
    // Each point's tooltip names its mode and device.
    let tooltip =
        move || chart.tooltip(|i| data.with(|d| d.points.get(i).map(|p| (p.tooltip.clone(), None))));
    let legend = move || {
        data.with(|d| {
            d.curves
                .iter()
                .map(|c| {
                    view! {
                        <li data-config=c.config.clone() class:dashed=c.dashed>
                            <i class="line" style=format!("border-color:{}", css(c.color))></i>
                            {c.label.clone()}
                        </li>
                    }
                })
                .collect_view()
        })
    };

    view! {
        <div class="chart serving-chart">
            {chart.frame_view(
                "serving-canvas",
                "Serving Pareto chart: tokens/s per user against output tokens/s per GPU, one curve per precision config, log-log",
                move || data.with(|d| d.points.len().to_string()),
                tooltip,
            )}
            <ul class="roof-legend shown" data-testid="serving-legend">{legend}</ul>
            <p class="marker-legend hint">
                <span>"● predicted (shape per config of one colour)"</span>
                <span>"◯ ringed: Pareto-optimal"</span>
                <span>"○ hollow: misses TTFT"</span>
                <span>"★ recommended"</span>
                <span>"✕ measured"</span>
                <span>"shaded: misses TPOT or tokens/s per user"</span>
            </p>
        </div>
    }
}
