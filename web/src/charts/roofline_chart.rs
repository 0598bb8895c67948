//! The roofline canvas: redraws whenever its data or the window size changes, with hover tooltips and export.

use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use plotters_svg::SVGBackend;
use wasm_bindgen::JsCast;

use crate::browser;
use crate::charts::draw::{Hit, NARROW_CSS_PX, Theme, draw, draw_captioned};
use crate::charts::series::PlotData;

/// Hover radius in CSS pixels.
const HIT_RADIUS: f64 = 10.0;

fn theme() -> Theme {
    if browser::prefers_dark() {
        Theme::DARK
    } else {
        Theme::LIGHT
    }
}

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
    let canvas_ref = NodeRef::<Canvas>::new();
    let frame_ref = NodeRef::<Div>::new();
    let redraw = RwSignal::new(0u32);
    let hits = StoredValue::new(Vec::<Hit>::new());
    let hover = RwSignal::new(None::<(i32, i32, usize)>);
    let error = RwSignal::new(None::<String>);
    // The frame's width is measured only on the first draw and on resize: reading it on every redraw would
    // force a synchronous layout of the whole page after each slider move.
    let width = StoredValue::new(None::<u32>);
    // Narrow charts list their legend below the canvas instead of over the data.
    let narrow = RwSignal::new(false);
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
        let css_width = width.get_value().unwrap_or_else(|| {
            let measured = frame.client_width().max(320) as u32;
            width.set_value(Some(measured));
            measured
        });
        let is_narrow = f64::from(css_width) < NARROW_CSS_PX;
        if narrow.get_untracked() != is_narrow {
            narrow.set(is_narrow);
        }
        let scale = browser::device_pixel_ratio();
        let w = (f64::from(css_width) * scale).round() as u32;
        if canvas.width() != w {
            canvas.set_width(w);
            canvas.set_height(w * 3 / 5);
        }
        let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
            return;
        };
        let result = data.with(|d| draw(&backend.into_drawing_area(), d, &theme(), scale));
        match result {
            Ok(h) => {
                hits.set_value(h);
                browser::record_draw();
            }
            Err(e) => leptos::logging::error!("roofline draw failed: {e}"),
        }
    });

    let on_move = move |ev: leptos::ev::MouseEvent| {
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        let scale = f64::from(canvas.width()) / f64::from(canvas.client_width().max(1));
        let (x, y) = (
            (f64::from(ev.offset_x()) * scale) as i32,
            (f64::from(ev.offset_y()) * scale) as i32,
        );
        let nearest = hits.with_value(|hs| {
            hs.iter()
                .map(|h| ((h.x - x).pow(2) + (h.y - y).pow(2), h))
                .filter(|(d2, _)| f64::from(*d2) <= (HIT_RADIUS * scale).powi(2))
                .min_by_key(|(d2, _)| *d2)
                .map(|(_, h)| (ev.offset_x(), ev.offset_y(), h.index))
        });
        if hover.get_untracked() != nearest {
            hover.set(nearest);
        }
    };
    // PNG export: an offscreen canvas at twice the device pixel ratio or more, with the caption under the
    // chart (`data-testid="png-export"` keeps the last export's size in `data-width`/`data-height`).
    let exported = RwSignal::new(None::<(u32, u32)>);
    let export_png = move |_| {
        let Some(canvas) = canvas_ref.get_untracked() else {
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
        let Some(canvas) = canvas_ref.get_untracked() else {
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
    let tooltip = move || {
        let (x, y, i) = hover.get()?;
        let lines = data.with(|d| d.points.get(i).map(|p| p.tooltip.clone()))?;
        Some(view! {
            <div class="tooltip" role="status" style=format!("left:{}px;top:{}px", x + 14, y + 14)>
                {lines.into_iter().map(|l| view! { <div>{l}</div> }).collect_view()}
            </div>
        })
    };

    view! {
        <div class="chart">
            <div class="chart-frame" node_ref=frame_ref>
                <canvas
                    node_ref=canvas_ref
                    data-testid="roofline-canvas"
                    role="img"
                    aria-label="Roofline chart: arithmetic intensity against FLOP/s, log-log"
                    on:mousemove=on_move
                    on:mouseleave=move |_| hover.set(None)
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
