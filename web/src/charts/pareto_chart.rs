//! The serving Pareto canvas: redraws when its data, the window size or the colour scheme changes, with a
//! tooltip for the point under the pointer and the legend of configs and markers below it.

use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;

use crate::browser;
use crate::charts::canvas::{fit_canvas, nearest_hit, theme};
use crate::charts::draw::Hit;
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
    let canvas_ref = NodeRef::<Canvas>::new();
    let frame_ref = NodeRef::<Div>::new();
    let redraw = RwSignal::new(0u32);
    let hits = StoredValue::new(Vec::<Hit>::new());
    let hover = RwSignal::new(None::<(i32, i32, usize)>);
    let width = StoredValue::new(None::<u32>);
    let _ = window_event_listener(leptos::ev::resize, move |_| {
        width.set_value(None);
        redraw.update(|n| *n += 1);
    });
    browser::on_theme_change(move || redraw.update(|n| *n += 1));

    Effect::new(move |_| {
        redraw.track();
        let (Some(canvas), Some(frame)) = (canvas_ref.get(), frame_ref.get()) else {
            return;
        };
        let (_, scale) = fit_canvas(&canvas, &frame, width);
        let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
            return;
        };
        match data.with(|d| draw_pareto(&backend.into_drawing_area(), d, &theme(), scale)) {
            Ok(h) => {
                hits.set_value(h);
                browser::record_draw_of("roofline_serving");
            }
            Err(e) => leptos::logging::error!("serving chart draw failed: {e}"),
        }
    });

    let on_move = move |ev: leptos::ev::MouseEvent| {
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        let nearest = hits.with_value(|hs| nearest_hit(hs, &canvas, &ev));
        if hover.get_untracked() != nearest {
            hover.set(nearest);
        }
    };
    let tooltip = move || {
        let (x, y, i) = hover.get()?;
        let lines = data.with(|d| d.points.get(i).map(|p| p.tooltip.clone()))?;
        Some(view! {
            <div class="tooltip" role="status" data-testid="serving-tooltip"
                style=format!("left:{}px;top:{}px", x + 14, y + 14)>
                {lines.into_iter().map(|l| view! { <div>{l}</div> }).collect_view()}
            </div>
        })
    };
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
            <div class="chart-frame" node_ref=frame_ref>
                <canvas
                    node_ref=canvas_ref
                    data-testid="serving-canvas"
                    data-points=move || data.with(|d| d.points.len().to_string())
                    role="img"
                    aria-label="Serving Pareto chart: tokens/s per user against output tokens/s per GPU, one curve per precision config, log-log"
                    on:mousemove=on_move
                    on:mouseleave=move |_| hover.set(None)
                ></canvas>
                {tooltip}
            </div>
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
