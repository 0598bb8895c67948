//! The serving Pareto canvas: redraws when its data, the window size or the colour scheme changes, with a
//! tooltip for the point under the pointer (or the keyboard's), a legend that shows and hides series, and
//! PNG, SVG and CSV export.

use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;

use crate::browser;
use crate::charts::canvas::{ChartCanvas, theme};
use crate::charts::export::{export_png, export_svg};
use crate::charts::pareto_csv::chart_csv;
use crate::charts::pareto_draw::draw_pareto;
use crate::charts::pareto_series::{ParetoData, Series};
use crate::palette::css;

/// The x labels drawn, as `data-x-labels` holds them: `[[text, left, right], …]` in CSS pixels.
fn labels_json(labels: &[(String, f64, f64)]) -> String {
    let items: Vec<String> = labels
        .iter()
        .map(|(t, l, r)| format!("[{},{l:.1},{r:.1}]", serde_json::to_string(t).unwrap_or_default()))
        .collect();
    format!("[{}]", items.join(","))
}

/// The legend: per config its name (toggles all its layouts) and one chip per layout (`button[data-series]`,
/// `aria-pressed` = shown), a config the engine does not serve marked so.
fn legend(series: &[Series], toggle: impl Fn(Vec<String>, bool) + Copy + Send + Sync + 'static) -> AnyView {
    let mut configs: Vec<&str> = Vec::new();
    for s in series {
        if !configs.contains(&s.config.as_str()) {
            configs.push(&s.config);
        }
    }
    configs
        .into_iter()
        .map(|config| {
            let mine: Vec<&Series> = series.iter().filter(|s| s.config == config).collect();
            let ids: Vec<String> = mine.iter().map(|s| s.id.clone()).collect();
            let any_shown = mine.iter().any(|s| s.visible);
            let first = mine[0];
            let chips = mine
                .iter()
                .map(|s| {
                    let id = s.id.clone();
                    let shown = s.visible;
                    let text = match (s.layout.tensor, s.layout.expert) {
                        (t, 1) => format!("{t}"),
                        (t, e) => format!("{t} EP{e}"),
                    };
                    view! {
                        <button type="button" class="chip" data-series=s.id.clone() aria-pressed=shown.to_string()
                            title=format!("{} on {}", s.label, roofline_core::layout_name(&s.layout))
                            on:click=move |_| toggle(vec![id.clone()], !shown)>
                            {text}
                        </button>
                    }
                })
                .collect_view();
            view! {
                <li data-config=config.to_owned() class:dashed=first.dashed class:not-served=!first.served
                    data-shown=any_shown.to_string()>
                    <button type="button" class="link legend-name" aria-pressed=any_shown.to_string()
                        title=if first.served { "show or hide every layout" } else { "not served by the engine: never recommended" }
                        on:click=move |_| toggle(ids.clone(), !any_shown)>
                        <i class="line" style=format!("border-color:{}", css(first.color))></i>
                        {first.label.clone()}
                    </button>
                    " " {chips}
                </li>
            }
        })
        .collect_view()
        .into_any()
}

/// Output tokens/s per GPU against tokens/s per user on a canvas (`data-testid="serving-canvas"`,
/// `data-points` = the markers drawn, `data-x-labels` = the x labels drawn, `data-x-range` = the axis's
/// `lo,hi`, `data-log`) that fills its container's width, under its title (`serving-chart-title`: text, so
/// it wraps instead of being clipped); each finished draw is recorded as `window.__roofline_serving_*` for
/// the timing script. The legend (`serving-legend`) shows and hides series; `serving-show-all` and
/// `serving-show-default` set them all; `serving-export-png`, `-svg` and `-csv` download the chart with
/// `caption` (`serving-chart-actions`' `data-exported` says what the last one held).
#[component]
pub fn ParetoChart(
    /// What to draw.
    #[prop(into)]
    data: Signal<ParetoData>,
    /// What the chart is about beyond its title (lengths, engine, GPUs), printed under an export.
    #[prop(into)]
    caption: Signal<String>,
    /// Series shown or hidden by the legend, by id.
    shown: RwSignal<std::collections::BTreeMap<String, bool>>,
) -> impl IntoView {
    let chart = ChartCanvas::new();
    let x_labels = RwSignal::new(Vec::<(String, f64, f64)>::new());
    Effect::new(move |_| {
        let Some((canvas, scale)) = chart.prepare() else {
            return;
        };
        let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
            return;
        };
        match data.with(|d| draw_pareto(&backend.into_drawing_area(), d, &theme(), scale)) {
            Ok(drawn) => {
                chart.hits.set_value(drawn.hits);
                x_labels.set(drawn.x_labels);
                browser::record_draw_of("roofline_serving");
            }
            Err(e) => leptos::logging::error!("serving chart draw failed: {e}"),
        }
    });
    let tooltip =
        move || chart.tooltip(|i| data.with(|d| d.points.get(i).map(|p| (p.tooltip.clone(), None))));
    let toggle = move |ids: Vec<String>, on: bool| {
        shown.update(|m| {
            for id in ids {
                m.insert(id, on);
            }
        });
    };
    let show_all = move |_| {
        let ids: Vec<String> = data.with_untracked(|d| d.series.iter().map(|s| s.id.clone()).collect());
        toggle(ids, true);
    };
    // The legend reads the series without their lines: an SLA change that moves points redraws no chip.
    let legend_series = Memo::new(move |_| {
        data.with(|d| {
            d.series
                .iter()
                .map(|s| Series {
                    line: Vec::new(),
                    concurrency: Vec::new(),
                    ..s.clone()
                })
                .collect::<Vec<_>>()
        })
    });
    let fronts = Memo::new(move |_| {
        data.with(|d| {
            d.fronts
                .iter()
                .map(|f| (f.label.clone(), f.color))
                .collect::<Vec<_>>()
        })
    });
    let error = RwSignal::new(None::<String>);
    // What the last export held (`data-exported`): its kind, size and whether the caption is in it.
    let exported = RwSignal::new(String::new());
    let export = move |kind: &'static str| {
        let Some(canvas) = chart.canvas.get_untracked() else {
            return;
        };
        let text = caption.get_untracked();
        let result = data.with_untracked(|d| match kind {
            "png" => export_png(&canvas, d, &text, "serving.png").map(|(w, h)| format!("png {w}x{h}")),
            "svg" => export_svg(&canvas, d, &text, "serving.svg")
                .map(|svg| format!("svg caption={}", svg.contains(&text))),
            _ => {
                let csv = chart_csv(d, &format!("{} · {text}", d.title));
                browser::download_text(&csv, "serving.csv", "text/csv");
                Ok(format!(
                    "csv rows={} caption={}",
                    csv.lines().count() - 1,
                    csv.contains(&text)
                ))
            }
        });
        match result {
            Ok(what) => exported.set(what),
            Err(e) => error.set(Some(e.to_string())),
        }
    };
    view! {
        <div class="chart serving-chart">
            <p class="chart-title" data-testid="serving-chart-title">{move || data.with(|d| d.title.clone())}</p>
            <div class="chart-frame-wrap"
                data-x-labels=move || x_labels.with(|l| labels_json(l))
                data-x-range=move || data.with(|d| format!("{},{}", d.x.lo, d.x.hi))
                data-log=move || data.with(|d| d.x.log.to_string())>
                {chart.frame_view(
                    "serving-canvas",
                    "Serving Pareto chart: tokens/s per user against output tokens/s per GPU, one curve per precision config and GPU layout; arrow keys step through the points",
                    move || data.with(|d| d.points.len().to_string()),
                    tooltip,
                )}
            </div>
            <div class="chart-actions" data-testid="serving-chart-actions" data-exported=move || exported.get()>
                <button type="button" data-testid="serving-show-default" on:click=move |_| shown.set(Default::default())>"Front and answer only"</button>
                <button type="button" data-testid="serving-show-all" on:click=show_all>"Show all"</button>
                <button type="button" data-testid="serving-export-png" on:click=move |_| export("png")>"Export PNG"</button>
                <button type="button" data-testid="serving-export-svg" on:click=move |_| export("svg")>"Export SVG"</button>
                <button type="button" data-testid="serving-export-csv" on:click=move |_| export("csv")>"Export CSV"</button>
                {move || error.get().map(|e| view! { <span class="error">{e}</span> })}
            </div>
            <ul class="roof-legend shown serving-legend" data-testid="serving-legend">
                {move || legend_series.with(|s| legend(s, toggle))}
                {move || fronts.with(|f| f.iter().map(|(label, color)| view! {
                    <li class="front" data-front=label.clone()>
                        <i class="line" style=format!("border-color:{}", css(*color))></i>{label.clone()}
                    </li>
                }).collect_view())}
            </ul>
            <p class="marker-legend hint">
                <span>"colour: config · shape: GPUs (● 1, ■ 2, ▲ 4, ◆ 8) · dashed: experts split (EP)"</span>
                <span>"◯ ringed: on the front"</span>
                <span>"hollow: misses TTFT"</span>
                <span>"★ recommended"</span>
                <span>"✕ measured"</span>
                <span>"shaded: misses TPOT or tokens/s per user"</span>
            </p>
        </div>
    }
}
