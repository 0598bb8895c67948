//! The serving Pareto chart's data: one series per precision config × GPU layout (output tokens/s per GPU
//! against tokens/s per user along the concurrency grid), shown by default when it reaches the front or
//! holds the answer, toggled from the legend; the front of the configs the engine serves and of each
//! compared device, labelled with its device; the SLA limits on the x axis; the recommended and fewest-GPU
//! points; the measured runs; and where each curve stops and why. Pure and natively testable.

use std::collections::BTreeMap;

use roofline_core::{Load, Parallelism, ServingPoint, Sizing, Sla, Sweep, layout_name};

use crate::charts::axis::Scale;
use crate::charts::series::Marker;
use crate::format;
use crate::palette::Rgb;
use crate::serving::measured::{Compared, MeasuredRow};
use crate::serving::{config_order, config_rgb, load_words};
use crate::summary::config_name;

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
    /// Every series, shown or not, config by config.
    pub series: Vec<Series>,
    /// The scenario's front, then the compared devices'.
    pub fronts: Vec<Front>,
    /// Markers drawn: the shown series', the compared fronts', then the measured runs (on top).
    pub points: Vec<ParetoPoint>,
    /// SLA limits on tokens/s per user (TPOT ≤ t is 1/t; TTFT has no place on these axes).
    pub limits: Vec<Limit>,
    /// Tokens/s per user.
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

/// The Pareto front of `points` (fitting ones): those no other beats in both coordinates, by x.
fn front<'a>(points: impl Iterator<Item = &'a ServingPoint>) -> Vec<&'a ServingPoint> {
    let mut all: Vec<&ServingPoint> = points.filter(|p| p.fits).collect();
    all.sort_by(|a, b| {
        b.tokens_per_s_per_user.total_cmp(&a.tokens_per_s_per_user).then(
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

/// Tooltip lines of a predicted point: config, layout and load, latencies, throughput, memory, regime, the
/// mode and device, and what marks it.
fn predicted_tooltip(p: &ServingPoint, device: &str, sla: &Sla, notes: &[&str]) -> Vec<String> {
    let mut lines = vec![
        format!(
            "{} · {} · {}",
            config_name(&p.config),
            layout_name(&p.parallelism),
            load_words(p.load)
        ),
        format!(
            "TTFT {} · TPOT {}",
            format::duration(p.ttft_s),
            format::duration(p.tpot_s)
        ),
        format!(
            "{} output tok/s per GPU · {} tok/s per user",
            format::number(p.output_tokens_per_s_per_gpu),
            format::number(p.tokens_per_s_per_user)
        ),
        format!(
            "memory per GPU {} · {}",
            format::capacity(p.memory_used_bytes_per_gpu),
            p.regime.name()
        ),
        device.to_owned(),
    ];
    if let Some(limit) = sla.ttft_max_s.filter(|l| p.ttft_s > *l) {
        lines.push(format!("misses TTFT ≤ {}", format::duration(limit)));
    }
    lines.extend(notes.iter().map(|n| (*n).to_owned()));
    lines
}

/// Tooltip lines of a measured run: what ran, its figures and their error against the prediction.
fn measured_tooltip(row: &MeasuredRow) -> Vec<String> {
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

/// The chart of `inputs`.
#[must_use]
pub fn pareto_data(inputs: &ChartInputs<'_>) -> ParetoData {
    let ChartInputs { sweep, sizing, .. } = *inputs;
    let sla = &sizing.outcome.sla;
    let allowed = |gpus: u32| inputs.allowed.is_empty() || inputs.allowed.contains(&gpus);
    let served = |config: &str| !sizing.not_served.iter().any(|n| n.config == config);
    let own_front = front(
        sweep
            .points
            .iter()
            .filter(|p| served(&p.config) && allowed(p.gpus)),
    );
    let on_front = |p: &ServingPoint| own_front.iter().any(|f| std::ptr::eq(*f, p));
    let (recommended, fewest) = (sizing.outcome.recommendation.as_ref(), sizing.fewest.as_ref());
    let order = config_order(sweep);
    let mut data = ParetoData {
        title: inputs.title.to_owned(),
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
                .map(|p| (p.tokens_per_s_per_user, p.output_tokens_per_s_per_gpu))
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
                let mut tooltip = predicted_tooltip(p, inputs.device, sla, &notes);
                if on_front(p) {
                    tooltip.push("on the front".to_owned());
                }
                data.points.push(ParetoPoint {
                    x: p.tokens_per_s_per_user,
                    y: p.output_tokens_per_s_per_gpu,
                    color: series.color,
                    marker: series.marker,
                    kind: PointKind::Predicted {
                        front: on_front(p),
                        meets_ttft: sla.ttft_max_s.is_none_or(|l| p.ttft_s <= l),
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
    let xy = |p: &&ServingPoint| (p.tokens_per_s_per_user, p.output_tokens_per_s_per_gpu);
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
        );
        let color = COMPARED_RGB[i % COMPARED_RGB.len()];
        for p in &line {
            data.points.push(ParetoPoint {
                x: p.tokens_per_s_per_user,
                y: p.output_tokens_per_s_per_gpu,
                color,
                marker: layout_marker(p.gpus),
                kind: PointKind::Compared,
                tooltip: predicted_tooltip(p, label, &other_sizing.outcome.sla, &["on the front"]),
            });
        }
        data.fronts.push(Front {
            label: format!("front · {label}"),
            color,
            primary: false,
            line: line.iter().map(xy).collect(),
        });
    }
    for row in inputs.measured.rows.iter().filter(|r| r.on_chart) {
        let index = order
            .iter()
            .position(|c| *c == row.run.ran_on.config)
            .unwrap_or(0);
        data.points.push(ParetoPoint {
            x: 1.0 / row.run.measured.tpot_s,
            y: row.run.output_tokens_per_s_per_gpu(),
            color: config_rgb(index),
            marker: Marker::Circle,
            kind: PointKind::Measured,
            tooltip: measured_tooltip(row),
        });
    }
    data.limits = [
        sla.tpot_max_s
            .map(|t| (1.0 / t, format!("TPOT ≤ {}", format::duration(t)))),
        sla.tokens_per_user_min
            .map(|u| (u, format!("≥ {} tok/s/user", format::number(u)))),
    ]
    .into_iter()
    .flatten()
    .map(|(x, label)| Limit { x, label })
    .collect();
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
mod tests {
    use super::*;
    use roofline_core::{SizingSpec, find_model};

    use crate::serving::measured::{RanOn, add, compare, read};
    use crate::serving::tests::{h100_llama, swept};

    /// Llama-3.1-8B's sizing over `sweep` with no SLA.
    fn open_sizing(sweep: &Sweep, hw: &roofline_core::HardwareSpec) -> Sizing {
        let model = find_model("llama-3.1-8b").unwrap();
        Sizing::new(
            sweep,
            model,
            hw,
            &SizingSpec {
                sla: Sla::default(),
                gpus: &[],
            },
        )
    }

    fn chart(sweep: &Sweep, sizing: &Sizing, shown: &BTreeMap<String, bool>, log: bool) -> ParetoData {
        chart_with(sweep, sizing, shown, log, &Compared::default())
    }

    fn chart_with(
        sweep: &Sweep,
        sizing: &Sizing,
        shown: &BTreeMap<String, bool>,
        log: bool,
        measured: &Compared,
    ) -> ParetoData {
        pareto_data(&ChartInputs {
            sweep,
            sizing,
            measured,
            device: "reference · NVIDIA H100",
            title: "title",
            log,
            shown,
            allowed: &[],
            others: &[],
            caveats: &BTreeMap::new(),
        })
    }

    #[test]
    fn series_per_config_and_layout_with_the_front_shown_and_the_rest_toggled() {
        let (s, hw) = h100_llama();
        let (_, sweep) = swept(&s, &hw);
        let sla = Sla {
            ttft_max_s: Some(0.2),
            tpot_max_s: Some(0.025),
            tokens_per_user_min: Some(30.0),
        };
        let model = find_model("llama-3.1-8b").unwrap();
        let sizing = Sizing::new(&sweep, model, &hw, &SizingSpec { sla, gpus: &[] });
        let data = chart(&sweep, &sizing, &BTreeMap::new(), false);
        let fitting = sweep.fits.iter().filter(|f| f.memory.fits()).count();
        assert_eq!(data.series.len(), fitting);
        // Shown by default: the series that reach the front or hold the answer; the others are listed.
        let shown: Vec<&Series> = data.series.iter().filter(|s| s.visible).collect();
        assert!(
            !shown.is_empty() && shown.len() < data.series.len(),
            "{}",
            shown.len()
        );
        let drawn: usize = shown.iter().map(|s| s.line.len()).sum();
        assert_eq!(data.points.len(), drawn);
        let best = sizing.outcome.recommendation.clone().unwrap();
        assert!(
            shown
                .iter()
                .any(|s| s.id == series_id(&best.config, &best.parallelism))
        );
        // TPOT ≤ 25 ms is 40 tokens/s per user; the tokens/s limit is drawn where it is.
        let xs: Vec<f64> = data.limits.iter().map(|l| l.x).collect();
        assert!((xs[0] - 40.0).abs() < 1e-9 && xs[1] == 30.0, "{xs:?}");
        // Exactly one recommended point, the SLA's; a linear x axis from 0.
        let picked = data
            .points
            .iter()
            .filter(|p| {
                matches!(
                    p.kind,
                    PointKind::Predicted {
                        recommended: true,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(picked, 1);
        assert_eq!(data.x.lo, 0.0);
        // Hiding the recommended series from the legend drops its points; showing a hidden one adds its own.
        let hidden_id = series_id(&best.config, &best.parallelism);
        let off = BTreeMap::from([(hidden_id.clone(), false)]);
        let without = chart(&sweep, &sizing, &off, false);
        let n = data.series.iter().find(|s| s.id == hidden_id).unwrap().line.len();
        assert_eq!(without.points.len(), data.points.len() - n);
        let extra = data.series.iter().find(|s| !s.visible).unwrap();
        let on = BTreeMap::from([(extra.id.clone(), true)]);
        assert_eq!(
            chart(&sweep, &sizing, &on, false).points.len(),
            data.points.len() + extra.line.len()
        );
        // The CSV holds every drawn series point and the front, each with the caption.
        let csv = crate::charts::pareto_csv::chart_csv(&data, "reference · NVIDIA H100");
        assert_eq!(csv.lines().count(), 1 + drawn + data.fronts[0].line.len());
        assert!(
            csv.lines()
                .skip(1)
                .all(|l| l.ends_with("reference · NVIDIA H100"))
        );
        // Every shown curve says where it stops.
        assert_eq!(data.stops.len(), shown.len());
        assert!(
            data.stops.iter().all(|s| s.contains(" stops at ")),
            "{:?}",
            data.stops
        );
        // Layouts take shapes; series of one config share its colour.
        let bf16: Vec<&Series> = data.series.iter().filter(|s| s.config == "bf16").collect();
        assert!(bf16.len() >= 2 && bf16[0].marker != bf16[1].marker && bf16[0].color == bf16[1].color);
    }

    #[test]
    fn the_front_is_undominated_and_log_axes_hold_every_point() {
        let (s, hw) = h100_llama();
        let (_, sweep) = swept(&s, &hw);
        let sizing = open_sizing(&sweep, &hw);
        let data = chart(&sweep, &sizing, &BTreeMap::new(), true);
        let line = &data.fronts[0].line;
        assert!(
            line.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1),
            "{line:?}"
        );
        assert!(
            data.points
                .iter()
                .all(|p| { (data.x.lo..data.x.hi).contains(&p.x) && (data.y.lo..data.y.hi).contains(&p.y) })
        );
    }

    #[test]
    fn measured_runs_sit_at_their_own_figures() {
        let (mut s, hw) = h100_llama();
        s.config = "bf16".into();
        let (key, sweep) = swept(&s, &hw);
        let mut runs = Vec::new();
        add(
            &mut runs,
            &read("run.json", crate::serving::measured::tests::VLLM, &s).unwrap(),
        );
        let compared = compare(&runs, &RanOn::of(&s), &key, &sweep);
        let sizing = open_sizing(&sweep, &hw);
        let data = chart_with(&sweep, &sizing, &BTreeMap::new(), false, &compared);
        let measured: Vec<_> = data
            .points
            .iter()
            .filter(|p| p.kind == PointKind::Measured)
            .collect();
        assert_eq!(measured.len(), 1);
        // 1 / 11.62 ms = 86.06 tokens/s per user; 1361.4 tokens/s on one GPU.
        assert!((measured[0].x - 1.0 / 0.01162).abs() < 1e-9);
        assert_eq!(measured[0].y, 1361.4);
        assert!(
            measured[0].tooltip[2].starts_with("TTFT 85.3 ms ("),
            "{:?}",
            measured[0].tooltip
        );
    }
}
