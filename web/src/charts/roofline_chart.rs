//! The roofline canvas: redraws whenever its data or the window size changes, with hover tooltips and export.

use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;

use crate::browser;
use crate::charts::canvas::{ChartCanvas, theme};
use crate::charts::draw::draw;
use crate::charts::export::{export_png, export_svg};
use crate::charts::series::{PlotData, PointKinds, legend};

/// A log-log roofline drawn on a canvas (`data-testid="roofline-canvas"`, `data-points` = the points drawn) that fills its frame (at least
/// 240 px tall) and redraws on resize and on a light/dark switch, under its title (`chart-title`, which
/// wraps instead of being clipped) and beside its legend (`roof-legend`: one entry per compute path with
/// the other spec's peak in brackets, what solid and dashed mean, and toggles for model, kernel, measured
/// and pinned points, `points-<kind>`), with a tooltip for the point under the pointer and PNG/SVG export
/// buttons (both with the caption and legend under the chart). The chart's `data-mode` and `data-device`
/// are those of every number in it and its tooltips.
#[component]
pub fn RooflineChart(
    /// What to draw.
    #[prop(into)]
    data: Signal<PlotData>,
    /// What the chart shows (device, model, config, mode), printed under an exported PNG or SVG.
    #[prop(into)]
    caption: Signal<String>,
    /// Which kinds of points are drawn.
    kinds: RwSignal<PointKinds>,
) -> impl IntoView {
    let chart = ChartCanvas::new();
    let error = RwSignal::new(None::<String>);

    Effect::new(move |_| {
        let Some((canvas, scale)) = chart.prepare() else {
            return;
        };
        let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
            return;
        };
        let result = data.with(|d| draw(&backend.into_drawing_area(), d, &theme(), scale, false));
        match result {
            Ok(h) => {
                chart.hits.set_value(h);
                browser::record_draw();
            }
            Err(e) => leptos::logging::error!("roofline draw failed: {e}"),
        }
    });

    // The last PNG export's size (`png-export`'s `data-width`/`data-height`).
    let exported = RwSignal::new(None::<(u32, u32)>);
    let on_png = move |_| {
        let Some(canvas) = chart.canvas.get_untracked() else {
            return;
        };
        let text = caption.get_untracked();
        match data.with_untracked(|d| export_png(&canvas, d, &text, "roofline.png")) {
            Ok(size) => exported.set(Some(size)),
            Err(e) => error.set(Some(e.to_string())),
        }
    };
    // The last SVG export, kept for the page's tests (`svg-export`'s `data-caption` says whether it has one).
    let exported_svg = RwSignal::new(None::<String>);
    let on_svg = move |_| {
        let Some(canvas) = chart.canvas.get_untracked() else {
            return;
        };
        let text = caption.get_untracked();
        match data.with_untracked(|d| export_svg(&canvas, d, &text, "roofline.svg")) {
            Ok(svg) => exported_svg.set(Some(svg)),
            Err(e) => error.set(Some(e.to_string())),
        }
    };
    // The tooltip says the mode and device of its numbers on its last line.
    let tooltip = move || {
        chart.tooltip(|i| {
            data.with(|d| {
                let context = format!("{} · {}", d.mode, d.device);
                d.points.get(i).map(|p| (p.tooltip.clone(), Some(context)))
            })
        })
    };
    let toggle = move |label: &'static str,
                       testid: &'static str,
                       get: fn(&PointKinds) -> bool,
                       set: fn(&mut PointKinds, bool)| {
        view! {
            <label class="check">
                <input type="checkbox" data-testid=testid prop:checked=move || kinds.with(get)
                    on:change=move |ev| kinds.update(|k| set(k, event_target_checked(&ev))) />
                {label}
            </label>
        }
    };

    view! {
        <div class="chart" data-testid="chart" data-mode=move || data.with(|d| d.mode.name())
            data-device=move || data.with(|d| d.device.clone())>
            <p class="chart-title" data-testid="chart-title">{move || data.with(|d| d.title.clone())}</p>
            <div class="chart-body">
                {chart.frame_view(
                    "roofline-canvas",
                    "Roofline chart: arithmetic intensity against FLOP/s, log-log",
                    move || data.with(|d| d.points.len().to_string()),
                    tooltip,
                )}
                <div class="chart-side">
                    <p class="hint" data-testid="roof-key">{move || data.with(|d| legend(d).1)}</p>
                    <ul class="roof-legend" data-testid="roof-legend">
                        {move || data.with(|d| legend(d).0.into_iter().map(|e| view! {
                            <li class:dashed=e.dashed_only>
                                <i class="line" style=format!("border-color:rgb({},{},{})", e.color.0, e.color.1, e.color.2)></i>
                                {e.label}
                            </li>
                        }).collect_view())}
                    </ul>
                    <fieldset class="point-kinds" data-testid="point-kinds">
                        <legend>"Points"</legend>
                        {toggle("model operators", "points-model", |k| k.model, |k, on| k.model = on)}
                        {toggle("kernel spot check", "points-kernel", |k| k.kernel, |k, on| k.kernel = on)}
                        {toggle("measured", "points-measured", |k| k.measured, |k, on| k.measured = on)}
                        {toggle("pinned", "points-pinned", |k| k.pinned, |k, on| k.pinned = on)}
                    </fieldset>
                    <p class="marker-legend hint" data-testid="marker-legend">
                        <span>"● matmul"</span><span>"◆ attention"</span><span>"▲ KV cache / embedding"</span>
                        <span>"■ elementwise"</span><span>"◉ kernel spot check (outlined)"</span>
                        <span>"○ measured (M)"</span><span>"faint: pins"</span>
                    </p>
                </div>
            </div>
            <div class="chart-actions">
                <button on:click=on_png data-testid="png-export"
                    data-width=move || exported.get().map(|e| e.0.to_string())
                    data-height=move || exported.get().map(|e| e.1.to_string())>"Export PNG"</button>
                <button on:click=on_svg data-testid="svg-export"
                    data-caption=move || exported_svg.with(|s| s.as_ref().map(|svg| caption.with_untracked(|c| svg.contains(c.as_str())).to_string()))>
                    "Export SVG"
                </button>
                {move || error.get().map(|e| view! { <span class="error">{e}</span> })}
            </div>
        </div>
    }
}
