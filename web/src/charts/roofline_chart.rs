//! The roofline canvas: redraws whenever its data or the window size changes, with hover tooltips and export.

use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use plotters_svg::SVGBackend;
use wasm_bindgen::JsCast;

use crate::browser;
use crate::charts::canvas::{ChartCanvas, theme};
use crate::charts::draw::{NARROW_CSS_PX, draw, draw_captioned};
use crate::charts::series::PlotData;

/// A log-log roofline drawn on a canvas (`data-testid="roofline-canvas"`) that fills its container's width
/// and redraws on resize and on a light/dark switch, with a tooltip for the point under the pointer and
/// PNG/SVG export buttons.
#[component]
pub fn RooflineChart(
    /// What to draw.
    #[prop(into)]
    data: Signal<PlotData>,
    /// What the chart shows (device, model, config, mode), printed under an exported PNG.
    #[prop(into)]
    caption: Signal<String>,
) -> impl IntoView {
    let chart = ChartCanvas::new();
    let error = RwSignal::new(None::<String>);
    // Narrow charts list their legend below the canvas instead of over the data.
    let narrow = RwSignal::new(false);

    Effect::new(move |_| {
        let Some((canvas, css_width, scale)) = chart.prepare() else {
            return;
        };
        let is_narrow = f64::from(css_width) < NARROW_CSS_PX;
        if narrow.get_untracked() != is_narrow {
            narrow.set(is_narrow);
        }
        let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
            return;
        };
        let result = data.with(|d| draw(&backend.into_drawing_area(), d, &theme(), scale));
        match result {
            Ok(h) => {
                chart.hits.set_value(h);
                browser::record_draw();
            }
            Err(e) => leptos::logging::error!("roofline draw failed: {e}"),
        }
    });

    // PNG export: an offscreen canvas at twice the device pixel ratio or more, with the caption under the
    // chart (`data-testid="png-export"` keeps the last export's size in `data-width`/`data-height`).
    let exported = RwSignal::new(None::<(u32, u32)>);
    let export_png = move |_| {
        let Some(canvas) = chart.canvas.get_untracked() else {
            return;
        };
        let scale = browser::device_pixel_ratio().max(2.0);
        let css = (
            f64::from(canvas.client_width().max(320)),
            f64::from(canvas.client_height().max(192)),
        );
        let (w, h) = (
            (css.0 * scale).round() as u32,
            ((css.1 + 26.0) * scale).round() as u32,
        );
        let Some(offscreen) = document()
            .create_element("canvas")
            .ok()
            .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            return;
        };
        offscreen.set_width(w);
        offscreen.set_height(h);
        let Some(backend) = CanvasBackend::with_canvas_object(offscreen.clone()) else {
            return;
        };
        let text = caption.get_untracked();
        let result =
            data.with_untracked(|d| draw_captioned(&backend.into_drawing_area(), d, &theme(), scale, &text));
        match result
            .map_err(|e| e.to_string())
            .and_then(|()| offscreen.to_data_url().map_err(|e| format!("{e:?}")))
        {
            Ok(url) => {
                exported.set(Some((w, h)));
                browser::download_url(&url, "roofline.png");
            }
            Err(e) => error.set(Some(e)),
        }
    };
    let export_svg = move |_| {
        let Some(canvas) = chart.canvas.get_untracked() else {
            return;
        };
        let size = (
            canvas.client_width().max(320) as u32,
            canvas.client_height().max(192) as u32,
        );
        let mut svg = String::new();
        let result = data.with_untracked(|d| {
            draw(
                &SVGBackend::with_string(&mut svg, size).into_drawing_area(),
                d,
                &theme(),
                1.0,
            )
        });
        match result {
            Ok(_) => browser::download_text(&svg, "roofline.svg", "image/svg+xml"),
            Err(e) => error.set(Some(e.to_string())),
        }
    };
    let tooltip = move || chart.tooltip(|i| data.with(|d| d.points.get(i).map(|p| p.tooltip.clone())));

    view! {
        <div class="chart">
            <div class="chart-frame" node_ref=chart.frame>
                <canvas
                    node_ref=chart.canvas
                    data-testid="roofline-canvas"
                    role="img"
                    aria-label="Roofline chart: arithmetic intensity against FLOP/s, log-log"
                    on:mousemove=move |ev| chart.on_move(&ev)
                    on:mouseleave=move |_| chart.hover.set(None)
                ></canvas>
                {tooltip}
            </div>
            <ul class="roof-legend" class:shown=move || narrow.get() data-testid="roof-legend">
                {move || data.with(|d| {
                    let slopes = d.slopes.iter().map(|sl| view! {
                        <li class:dashed=sl.dashed><i class="line"></i>{sl.label.clone()}</li>
                    }).collect_view();
                    let roofs = d.roofs.iter().map(|r| view! {
                        <li class:dashed=r.dashed><i class="line" style=format!("border-color:rgb({},{},{})", r.color.0, r.color.1, r.color.2)></i>{r.label.clone()}</li>
                    }).collect_view();
                    view! { {slopes} {roofs} }
                })}
            </ul>
            <p class="marker-legend hint" data-testid="marker-legend">
                <span>"● matmul"</span><span>"◆ attention"</span><span>"▲ KV cache / embedding"</span>
                <span>"■ elementwise"</span><span>"◉ kernel spot check (outlined)"</span>
                <span>"○ measured (M)"</span><span>"faint: pins"</span>
            </p>
            <div class="chart-actions">
                <button on:click=export_png data-testid="png-export"
                    data-width=move || exported.get().map(|e| e.0.to_string())
                    data-height=move || exported.get().map(|e| e.1.to_string())>"Export PNG"</button>
                <button on:click=export_svg>"Export SVG"</button>
                {move || error.get().map(|e| view! { <span class="error">{e}</span> })}
            </div>
        </div>
    }
}
