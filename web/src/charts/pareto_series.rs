//! The serving Pareto chart's data: one series per precision config × GPU layout (output tokens/s per GPU
//! against tokens/s per user at the SLA's percentile, or E2E-normalized interactivity, along the
//! concurrency grid), shown by default when it reaches the front or holds the answer, toggled from the
//! legend; the front of the configs the engine serves and of each compared device, labelled with its device;
//! the SLA limits on the x axis; the recommended and fewest-GPU points; the measured runs; and where each
//! curve stops and why. Pure and natively testable.

use std::collections::BTreeMap;

use roofline_core::{
    LatencyMetric, Load, Parallelism, Percentile, ServingPoint, Sizing, Sla, Sweep, layout_name,
};

use crate::charts::axis::Scale;
use crate::charts::series::Marker;
use crate::format;
use crate::palette::Rgb;
use crate::serving::measured::{Compared, MeasuredRow};
use crate::serving::{config_order, config_rgb, load_words};
use crate::serving_inputs::XAxis;
use crate::summary::config_name;

/// What the x axis shows at statistic `at`: its name on the chart and its CSV column.
#[must_use]
pub fn x_axis_name(axis: XAxis, at: Percentile) -> (String, String) {
    match axis {
        XAxis::TokensPerUser => (
            format!("tokens/s per user (1 / {} TPOT)", at.name()),
            format!("tokens_per_s_per_user_{}", at.key()),
        ),
        XAxis::Interactivity => (
            "E2E-normalized interactivity, tokens/s (1 / P90 of E2E / OSL)".to_owned(),
            "normalized_interactivity".to_owned(),
        ),
    }
}

/// A predicted point's x on `axis` at statistic `at`.
#[must_use]
pub fn point_x(p: &ServingPoint, axis: XAxis, at: Percentile) -> f64 {
    match axis {
        XAxis::TokensPerUser => p.tokens_per_s_per_user_at(at),
        XAxis::Interactivity => p.normalized_interactivity,
    }
}

/// A measured run's x on `axis` at statistic `at`, and whether it is that statistic: 1 / its TPOT at `at`
/// (its mean TPOT when the file has not that percentile), or its OSL over its P90 E2E (none without both).
fn measured_x(row: &MeasuredRow, axis: XAxis, at: Percentile) -> Option<(f64, bool)> {
    let m = &row.run.measured;
    match axis {
        XAxis::TokensPerUser => Some(match m.measured(LatencyMetric::Tpot, at) {
            Some(t) => (1.0 / t, true),
            None => (1.0 / m.tpot_s, at == Percentile::Mean),
        }),
        XAxis::Interactivity => {
            let e2e = m.measured(LatencyMetric::E2e, Percentile::P90)?;
            let osl = row.comparison.as_ref().map(|c| f64::from(c.workload.osl)).ok()?;
            Some((osl / e2e, true))
        }
    }
}

/// What a point on the Pareto chart is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A predicted operating point of the scenario's device.
    Predicted {
        /// On the front of the configs the engine serves (drawn larger, ringed).
        front: bool,
        /// Meets the TTFT limit (or there is none); a point that misses it is drawn hollow.
        meets_ttft: bool,
        /// The SLA's recommendation (ringed twice and tagged).
        recommended: bool,
        /// The fewest GPUs meeting the SLA (tagged).
        fewest: bool,
    },
    /// A point on a compared device's front.
    Compared,
    /// A measured run (a cross in its config's colour).
    Measured,
}

/// One marker.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    /// Tokens/s per user (1 / TPOT).
    pub x: f64,
    /// Output tokens/s per GPU.
    pub y: f64,
    /// Its colour.
    pub color: Rgb,
    /// Its shape.
    pub marker: Marker,
    /// What it is.
    pub kind: PointKind,
    /// Tooltip lines, already formatted.
    pub tooltip: Vec<String>,
}

/// One config on one layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// `fp8@2`, `fp8-block@8ep8`: the legend's key of a series.
    pub id: String,
    /// Config key.
    pub config: String,
    /// The config's name.
    pub label: String,
    /// The layout.
    pub layout: Parallelism,
    /// The config's colour.
    pub color: Rgb,
    /// The layout's shape: circle 1 GPU, square 2, triangle 4, diamond 8.
    pub marker: Marker,
    /// Drawn dashed: the experts divided between the GPUs (EP).
    pub dashed: bool,
    /// The engine serves the config.
    pub served: bool,
    /// Drawn (its default, or the legend's choice).
    pub visible: bool,
    /// Its points in concurrency order, (tokens/s per user, output tokens/s per GPU).
    pub line: Vec<(f64, f64)>,
    /// The concurrency of each point of `line`.
    pub concurrency: Vec<f64>,
}

/// A Pareto front over every series of one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Front {
    /// `front · NVIDIA B200`.
    pub label: String,
    /// Its colour (the chart's foreground for the scenario's device).
    pub color: Rgb,
    /// The scenario's device (a wide, faint band); a compared one is a dashed line.
    pub primary: bool,
    /// Its points by tokens/s per user.
    pub line: Vec<(f64, f64)>,
}

/// A vertical SLA line: points left of it miss the limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// Tokens/s per user at the limit.
    pub x: f64,
    /// E.g. `TPOT ≤ 20.0 ms`.
    pub label: String,
}

/// Everything the drawing code needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoData {
    /// Mode, device and model.
    pub title: String,
    /// The x axis's name, and its CSV column.
    pub x_name: (String, String),
    /// Every series, shown or not, config by config.
    pub series: Vec<Series>,
    /// The scenario's front, then the compared devices'.
    pub fronts: Vec<Front>,
    /// Markers drawn: the shown series', the compared fronts', then the measured runs (on top).
    pub points: Vec<ParetoPoint>,
    /// SLA limits on tokens/s per user (TPOT ≤ t is 1/t; TTFT has no place on these axes, nor any limit on
    /// the interactivity axis).
    pub limits: Vec<Limit>,
    /// Tokens/s per user, or interactivity.
    pub x: Scale,
    /// Output tokens/s per GPU.
    pub y: Scale,
    /// Where each shown curve stops and why, e.g. `FP8 E4M3 on 1 GPU stops at 9 users: the KV cache is full`.
    pub stops: Vec<String>,
}

impl Default for ParetoData {
    fn default() -> Self {
        let scale = Scale {
            lo: 0.0,
            hi: 10.0,
            log: false,
        };
        ParetoData {
            title: String::new(),
            x_name: x_axis_name(XAxis::TokensPerUser, Percentile::P90),
            series: Vec::new(),
            fronts: Vec::new(),
            points: Vec::new(),
            limits: Vec::new(),
            x: scale,
            y: scale,
            stops: Vec::new(),
        }
    }
}

/// A device beside the scenario's: its label, sweep and sizing.
pub type Other<'a> = (&'a str, &'a Sweep, &'a Sizing);

/// What the chart is built from.
#[derive(Debug, Clone, Copy)]
pub struct ChartInputs<'a> {
    /// The scenario's sweep.
    pub sweep: &'a Sweep,
    /// Its sizing.
    pub sizing: &'a Sizing,
    /// The measured runs against it.
    pub measured: &'a Compared,
    /// Mode and device, e.g. `reference · NVIDIA H100 SXM5 80GB`.
    pub device: &'a str,
    /// The chart's title.
    pub title: &'a str,
    /// Log axes.
    pub log: bool,
    /// What the x axis shows (at the sizing's percentile).
    pub x_axis: XAxis,
    /// Series shown or hidden from the legend, by id.
    pub shown: &'a BTreeMap<String, bool>,
    /// GPU counts the answer may use (empty: all).
    pub allowed: &'a [u32],
    /// The compared devices.
    pub others: &'a [Other<'a>],
    /// Per config, the unmeasured ceilings its ranking rests on.
    pub caveats: &'a BTreeMap<String, String>,
}

/// The series id of `config` on `layout`.
#[must_use]
pub fn series_id(config: &str, layout: &Parallelism) -> String {
    if layout.expert > 1 {
        format!("{config}@{}ep{}", layout.tensor, layout.expert)
    } else {
        format!("{config}@{}", layout.tensor)
    }
}

/// The shape of a layout's markers.
const fn layout_marker(gpus: u32) -> Marker {
    match gpus {
        1 => Marker::Circle,
        2 => Marker::Square,
        4 => Marker::Triangle,
        _ => Marker::Diamond,
    }
}

/// The Pareto front of `points` (fitting ones) on x = `x`: those no other beats in both coordinates, by x.
fn front<'a>(
    points: impl Iterator<Item = &'a ServingPoint>,
    x: impl Fn(&ServingPoint) -> f64,
) -> Vec<&'a ServingPoint> {
    let mut all: Vec<&ServingPoint> = points.filter(|p| p.fits).collect();
    all.sort_by(|a, b| {
        x(b).total_cmp(&x(a)).then(
            b.output_tokens_per_s_per_gpu
                .total_cmp(&a.output_tokens_per_s_per_gpu),
        )
    });
    let mut best = f64::NEG_INFINITY;
    let mut out: Vec<&ServingPoint> = all
        .into_iter()
        .filter(|p| {
            let on = p.output_tokens_per_s_per_gpu > best;
            best = best.max(p.output_tokens_per_s_per_gpu);
            on
        })
        .collect();
    out.reverse();
    out
}

/// Tooltip lines of a predicted point: config, layout and load, latencies at statistic `at`, throughput,
/// interactivity, memory, regime, the mode and device, and what marks it.
fn predicted_tooltip(
    p: &ServingPoint,
    at: Percentile,
    device: &str,
    sla: &Sla,
    notes: &[&str],
) -> Vec<String> {
    let mut lines = vec![
        format!(
            "{} · {} · {}",
            config_name(&p.config),
            layout_name(&p.parallelism),
            load_words(p.load)
        ),
        format!(
            "{at} TTFT {} · {at} TPOT {}",
            format::duration(p.ttft_at(at)),
            format::duration(p.tpot_at(at)),
            at = at.name()
        ),
        format!(
            "{} output tok/s per GPU · {} tok/s per user ({}) · interactivity {}",
            format::number(p.output_tokens_per_s_per_gpu),
            format::number(p.tokens_per_s_per_user_at(at)),
            at.name(),
            format::number(p.normalized_interactivity)
        ),
        format!(
            "memory per GPU {} · {}",
            format::capacity(p.memory_used_bytes_per_gpu),
            p.regime.name()
        ),
        device.to_owned(),
    ];
    if let Some(limit) = sla.ttft_max_s.filter(|l| p.ttft_at(at) > *l) {
        lines.push(format!(
            "misses TTFT ≤ {} at {}",
            format::duration(limit),
            at.name()
        ));
    }
    lines.extend(notes.iter().map(|n| (*n).to_owned()));
    lines
}

/// Tooltip lines of a measured run: what ran, its figures and their error against the prediction, and
/// whether its x is the statistic the axis shows.
fn measured_tooltip(row: &MeasuredRow, exact: bool) -> Vec<String> {
    let (run, m) = (&row.run, &row.run.measured);
    let ratio = |r: Option<f64>| r.map_or_else(|| "—".to_owned(), |r| format!("{r:.2}×"));
    let mut lines = vec![
        format!(
            "measured · {}:{} · {}",
            run.file,
            m.line,
            config_name(&run.ran_on.config)
        ),
        match (m.concurrency, m.request_rate) {
            (Some(n), _) => load_words(Load::Concurrency(n)),
            (None, Some(r)) => load_words(Load::Rate(r)),
            (None, None) => String::new(),
        },
    ];
    if let Ok(c) = &row.comparison {
        lines.push(format!(
            "TTFT {} ({} predicted) · TPOT {} ({})",
            format::duration(m.ttft_s),
            ratio(c.ttft_ratio),
            format::duration(m.tpot_s),
            ratio(c.tpot_ratio)
        ));
        lines.push(format!(
            "{} output tok/s per GPU ({} predicted)",
            format::number(run.output_tokens_per_s_per_gpu()),
            ratio(c.output_throughput_ratio)
        ));
    }
    if !exact {
        lines.push("placed at its mean TPOT: the file has not this percentile".to_owned());
    }
    lines.push(format!("ran on {}", run.ran_on.label()));
    lines
}

/// Where the curve of `series` ends and why: the KV cache is full, or the engine runs no more at once.
fn stop_words(sweep: &Sweep, series: &Series) -> Option<String> {
    let fit = sweep
        .fits
        .iter()
        .find(|f| f.config == series.config && f.parallelism == series.layout)?;
    let last = sweep
        .points
        .iter()
        .filter(|p| p.config == series.config && p.parallelism == series.layout)
        .map(|p| p.concurrency)
        .fold(0.0, f64::max);
    let (fits, engine) = (fit.memory.max_sequences, fit.preset.in_flight.max_seqs);
    let why = if fits <= engine {
        format!("the KV cache holds {fits} requests of ISL + OSL")
    } else {
        format!(
            "{} runs {engine} at once (max_seqs); more only queue",
            fit.preset.engine.name()
        )
    };
    Some(format!(
        "{} on {} stops at {} users: {why}",
        series.label,
        layout_name(&series.layout),
        format::number(last)
    ))
}

/// The measured runs at the view's lengths onto `data` (`order`: the sweep's configs, for their colours),
/// at x on `axis` read at `at`; those the axis cannot place are counted in a note.
fn push_measured(data: &mut ParetoData, measured: &Compared, order: &[&str], axis: XAxis, at: Percentile) {
    let mut unplaced = 0;
    for row in measured.rows.iter().filter(|r| r.on_chart) {
        let index = order
            .iter()
            .position(|c| *c == row.run.ran_on.config)
            .unwrap_or(0);
        let Some((x, exact)) = measured_x(row, axis, at) else {
            unplaced += 1;
            continue;
        };
        data.points.push(ParetoPoint {
            x,
            y: row.run.output_tokens_per_s_per_gpu(),
            color: config_rgb(index),
            marker: Marker::Circle,
            kind: PointKind::Measured,
            tooltip: measured_tooltip(row, exact),
        });
    }
    if unplaced > 0 {
        data.stops.push(format!(
            "{unplaced} measured run(s) not drawn on the interactivity axis: the file has no P90 E2E latency"
        ));
    }
}

/// The chart of `inputs`.
#[must_use]
pub fn pareto_data(inputs: &ChartInputs<'_>) -> ParetoData {
    let ChartInputs { sweep, sizing, .. } = *inputs;
    let (sla, at, axis) = (&sizing.outcome.sla, sizing.outcome.percentile, inputs.x_axis);
    let x = |p: &ServingPoint| point_x(p, axis, at);
    let allowed = |gpus: u32| inputs.allowed.is_empty() || inputs.allowed.contains(&gpus);
    let served = |config: &str| !sizing.not_served.iter().any(|n| n.config == config);
    let own_front = front(
        sweep
            .points
            .iter()
            .filter(|p| served(&p.config) && allowed(p.gpus)),
        x,
    );
    let on_front = |p: &ServingPoint| own_front.iter().any(|f| std::ptr::eq(*f, p));
    let (recommended, fewest) = (sizing.outcome.recommendation.as_ref(), sizing.fewest.as_ref());
    let order = config_order(sweep);
    let mut data = ParetoData {
        title: inputs.title.to_owned(),
        x_name: x_axis_name(axis, at),
        ..ParetoData::default()
    };
    for fit in sweep.fits.iter().filter(|f| f.memory.fits() && allowed(f.gpus)) {
        let index = order.iter().position(|c| *c == fit.config).unwrap_or(0);
        let points: Vec<&ServingPoint> = sweep
            .points
            .iter()
            .filter(|p| p.config == fit.config && p.parallelism == fit.parallelism && p.fits)
            .collect();
        let holds = |q: Option<&ServingPoint>| q.is_some_and(|q| points.contains(&q));
        let default = points.iter().any(|p| on_front(p)) || holds(recommended) || holds(fewest);
        let id = series_id(&fit.config, &fit.parallelism);
        let visible = inputs.shown.get(&id).copied().unwrap_or(default);
        let series = Series {
            label: config_name(&fit.config),
            config: fit.config.clone(),
            layout: fit.parallelism,
            color: config_rgb(index),
            marker: layout_marker(fit.gpus),
            dashed: fit.parallelism.expert > 1,
            served: served(&fit.config),
            visible,
            line: points
                .iter()
                .map(|p| (x(p), p.output_tokens_per_s_per_gpu))
                .collect(),
            concurrency: points.iter().map(|p| p.concurrency).collect(),
            id,
        };
        if visible {
            let mut notes: Vec<&str> = Vec::new();
            if !series.served {
                notes.push("not served by the engine: never recommended");
            }
            if let Some(caveat) = inputs.caveats.get(&fit.config) {
                notes.push(caveat);
            }
            for p in &points {
                let mut tooltip = predicted_tooltip(p, at, inputs.device, sla, &notes);
                if on_front(p) {
                    tooltip.push("on the front".to_owned());
                }
                data.points.push(ParetoPoint {
                    x: x(p),
                    y: p.output_tokens_per_s_per_gpu,
                    color: series.color,
                    marker: series.marker,
                    kind: PointKind::Predicted {
                        front: on_front(p),
                        meets_ttft: sla.ttft_max_s.is_none_or(|l| p.ttft_at(at) <= l),
                        recommended: recommended == Some(*p),
                        fewest: fewest == Some(*p) && recommended != Some(*p),
                    },
                    tooltip,
                });
            }
            data.stops.extend(stop_words(sweep, &series));
        }
        data.series.push(series);
    }
    let xy = |p: &&ServingPoint| (x(p), p.output_tokens_per_s_per_gpu);
    data.fronts.push(Front {
        label: format!("front · {}", inputs.device),
        color: (0x33, 0x41, 0x55),
        primary: true,
        line: own_front.iter().map(xy).collect(),
    });
    const COMPARED_RGB: [Rgb; 2] = [(0x0f, 0x17, 0x2a), (0x7c, 0x2d, 0x12)];
    for (i, (label, other, other_sizing)) in inputs.others.iter().enumerate() {
        let theirs = |c: &str| !other_sizing.not_served.iter().any(|n| n.config == c);
        let line = front(
            other
                .points
                .iter()
                .filter(|p| theirs(&p.config) && allowed(p.gpus)),
            x,
        );
        let color = COMPARED_RGB[i % COMPARED_RGB.len()];
        for p in &line {
            data.points.push(ParetoPoint {
                x: x(p),
                y: p.output_tokens_per_s_per_gpu,
                color,
                marker: layout_marker(p.gpus),
                kind: PointKind::Compared,
                tooltip: predicted_tooltip(p, at, label, &other_sizing.outcome.sla, &["on the front"]),
            });
        }
        data.fronts.push(Front {
            label: format!("front · {label}"),
            color,
            primary: false,
            line: line.iter().map(xy).collect(),
        });
    }
    push_measured(&mut data, inputs.measured, &order, axis, at);
    if axis == XAxis::TokensPerUser {
        data.limits = [
            sla.tpot_max_s
                .map(|t| (1.0 / t, format!("TPOT ≤ {} ({})", format::duration(t), at.name()))),
            sla.tokens_per_user_min
                .map(|u| (u, format!("≥ {} tok/s/user ({})", format::number(u), at.name()))),
        ]
        .into_iter()
        .flatten()
        .map(|(x, label)| Limit { x, label })
        .collect();
    }
    let front_points = || data.fronts.iter().flat_map(|f| f.line.iter().copied());
    let xs = data.points.iter().map(|p| p.x).chain(front_points().map(|p| p.0));
    data.x = Scale::around(xs.chain(data.limits.iter().map(|l| l.x)), inputs.log);
    data.y = Scale::around(
        data.points.iter().map(|p| p.y).chain(front_points().map(|p| p.1)),
        inputs.log,
    );
    data
}

#[cfg(test)]
mod tests;
