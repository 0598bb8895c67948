//! The serving Pareto chart's data: one curve per precision config (output tokens/s per GPU against
//! tokens/s per user along the concurrency grid), the Pareto front, the SLA limits that fall on the x axis,
//! the recommended point and the measured runs. Pure and natively testable.

use roofline_core::{Load, ServingPoint, Sla, SlaOutcome, Sweep};

use crate::charts::series::Marker;
use crate::format;
use crate::palette::Rgb;
use crate::serving::measured::{Compared, MeasuredRow};
use crate::serving::{config_rgb, load_words};
use crate::summary::config_name;

/// What a point on the Pareto chart is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A predicted operating point.
    Predicted {
        /// On the Pareto front of the whole sweep (drawn larger, ringed).
        pareto: bool,
        /// Meets the TTFT limit (or there is none); a point that misses it is drawn hollow.
        meets_ttft: bool,
        /// The SLA's recommendation (ringed twice and tagged).
        recommended: bool,
    },
    /// A measured run (a cross in its config's colour).
    Measured,
}

/// One marker.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    /// Tokens/s per user (1 / TPOT).
    pub tokens_per_s_per_user: f64,
    /// Output tokens/s per GPU.
    pub output_tokens_per_s_per_gpu: f64,
    /// Index into [`ParetoData::curves`]: the config.
    pub curve: usize,
    /// What it is.
    pub kind: PointKind,
    /// Tooltip lines, already formatted.
    pub tooltip: Vec<String>,
}

/// One config's curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Config key.
    pub config: String,
    /// Legend text: the config's name.
    pub label: String,
    /// Its weight format's precision colour.
    pub color: Rgb,
    /// Shape of its predicted markers: configs sharing a colour get different shapes and dashed lines.
    pub marker: Marker,
    /// Drawn dashed (a second config of the same colour).
    pub dashed: bool,
    /// Its predicted points in concurrency order, (tokens/s per user, output tokens/s per GPU).
    pub line: Vec<(f64, f64)>,
}

/// A vertical SLA line: points left of it miss the limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// Tokens/s per user at the limit.
    pub tokens_per_s_per_user: f64,
    /// E.g. `TPOT ≤ 20.0 ms`.
    pub label: String,
}

/// Everything the drawing code needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParetoData {
    /// Caption: mode, device, model and GPUs.
    pub title: String,
    /// Configs with points, in the sweep's order.
    pub curves: Vec<Curve>,
    /// Predicted points, then measured ones (drawn on top).
    pub points: Vec<ParetoPoint>,
    /// The Pareto front over every config, by tokens/s per user.
    pub front: Vec<(f64, f64)>,
    /// SLA limits on tokens/s per user (TPOT ≤ t is 1/t; TTFT has no place on these axes).
    pub limits: Vec<Limit>,
    /// Axis range of tokens/s per user (log).
    pub x: (f64, f64),
    /// Axis range of output tokens/s per GPU (log).
    pub y: (f64, f64),
    /// Points beyond what fits the KV cache, left out (the default grid has none).
    pub omitted: usize,
}

/// Marker shapes in the order configs of one colour take them.
const SHAPES: [Marker; 4] = [Marker::Circle, Marker::Square, Marker::Triangle, Marker::Diamond];

/// Tooltip lines of a predicted point: config and load, latencies, throughput, memory, regime, and the
/// mode and device they are predicted in.
fn predicted_tooltip(p: &ServingPoint, device: &str, sla: &Sla) -> Vec<String> {
    let mut lines = vec![
        format!("{} · {}", config_name(&p.config), load_words(p.load)),
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
        format!("{} · {device} · {} GPU(s)", p.mode.name(), p.gpus),
    ];
    if p.pareto {
        lines.push("Pareto-optimal".to_owned());
    }
    if let Some(limit) = sla.ttft_max_s.filter(|l| p.ttft_s > *l) {
        lines.push(format!("misses TTFT ≤ {}", format::duration(limit)));
    }
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

/// A log axis range around `values`: a quarter decade of room on each side.
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi <= 0.0 {
        return (1.0, 10.0);
    }
    let pad = 10f64.powf(0.25);
    (lo / pad, hi * pad)
}

/// The chart of `sweep` under `outcome`, with the measured runs of `compared` that ran at the sweep's ISL
/// and OSL; `device` is the device's name, `title` the caption (mode, device, model, GPUs).
#[must_use]
pub fn pareto_data(
    sweep: &Sweep,
    outcome: &SlaOutcome,
    compared: &Compared,
    device: &str,
    title: &str,
) -> ParetoData {
    let sla = &outcome.sla;
    let mut data = ParetoData {
        title: title.to_owned(),
        ..ParetoData::default()
    };
    for fit in sweep.fits.iter().filter(|f| f.memory.fits()) {
        let color = config_rgb(&fit.config);
        let same_colour = data.curves.iter().filter(|c| c.color == color).count();
        data.curves.push(Curve {
            config: fit.config.clone(),
            label: config_name(&fit.config),
            color,
            marker: SHAPES[same_colour % SHAPES.len()],
            dashed: same_colour > 0,
            line: Vec::new(),
        });
    }
    let recommended = outcome.recommendation.as_ref();
    for p in &sweep.points {
        let Some(curve) = data.curves.iter().position(|c| c.config == p.config) else {
            continue;
        };
        if !p.fits {
            data.omitted += 1;
            continue;
        }
        let at = (p.tokens_per_s_per_user, p.output_tokens_per_s_per_gpu);
        data.curves[curve].line.push(at);
        if p.pareto {
            data.front.push(at);
        }
        data.points.push(ParetoPoint {
            tokens_per_s_per_user: at.0,
            output_tokens_per_s_per_gpu: at.1,
            curve,
            kind: PointKind::Predicted {
                pareto: p.pareto,
                meets_ttft: sla.ttft_max_s.is_none_or(|l| p.ttft_s <= l),
                recommended: recommended.is_some_and(|r| r == p),
            },
            tooltip: predicted_tooltip(p, device, sla),
        });
    }
    data.front.sort_by(|a, b| a.0.total_cmp(&b.0));
    for row in compared.rows.iter().filter(|r| r.on_chart) {
        let Some(curve) = data.curves.iter().position(|c| c.config == row.run.ran_on.config) else {
            continue;
        };
        data.points.push(ParetoPoint {
            tokens_per_s_per_user: 1.0 / row.run.measured.tpot_s,
            output_tokens_per_s_per_gpu: row.run.output_tokens_per_s_per_gpu(),
            curve,
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
    .map(|(x, label)| Limit {
        tokens_per_s_per_user: x,
        label,
    })
    .collect();
    data.x = log_range(
        data.points
            .iter()
            .map(|p| p.tokens_per_s_per_user)
            .chain(data.limits.iter().map(|l| l.tokens_per_s_per_user)),
    );
    data.y = log_range(data.points.iter().map(|p| p.output_tokens_per_s_per_gpu));
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::measured::{RanOn, add, compare, read};
    use crate::serving::tests::{h100_llama, swept};

    #[test]
    fn one_curve_per_config_that_fits_with_the_front_the_limits_and_the_pick() {
        let (s, hw) = h100_llama();
        let (_, sweep) = swept(&s, &hw);
        let sla = Sla {
            ttft_max_s: Some(0.2),
            tpot_max_s: Some(0.025),
            tokens_per_user_min: Some(30.0),
        };
        let outcome = sla.evaluate(&sweep);
        let data = pareto_data(&sweep, &outcome, &Compared::default(), &hw.name, "title");
        let fitting = sweep.fits.iter().filter(|f| f.memory.fits()).count();
        assert_eq!(data.curves.len(), fitting);
        assert_eq!(data.points.len(), sweep.points.len());
        assert_eq!(data.front.len(), sweep.points.iter().filter(|p| p.pareto).count());
        // TPOT ≤ 25 ms is 40 tokens/s per user; the tokens/s limit is drawn where it is.
        let xs: Vec<f64> = data.limits.iter().map(|l| l.tokens_per_s_per_user).collect();
        assert!((xs[0] - 40.0).abs() < 1e-9 && xs[1] == 30.0, "{xs:?}");
        assert_eq!(data.limits[0].label, "TPOT ≤ 25.0 ms");
        // Exactly one recommended point, the SLA's, and the points missing TTFT are those over 200 ms.
        let picked: Vec<_> = data
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
            .collect();
        assert_eq!(picked.len(), 1);
        let r = outcome.recommendation.unwrap();
        assert_eq!(
            picked[0].output_tokens_per_s_per_gpu,
            r.output_tokens_per_s_per_gpu
        );
        let missing = data
            .points
            .iter()
            .filter(|p| {
                matches!(
                    p.kind,
                    PointKind::Predicted {
                        meets_ttft: false,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(missing, sweep.points.iter().filter(|p| p.ttft_s > 0.2).count());
        // Every point is inside the axes; configs of one colour get other shapes, dashed.
        assert!(data.points.iter().all(|p| {
            (data.x.0..data.x.1).contains(&p.tokens_per_s_per_user)
                && (data.y.0..data.y.1).contains(&p.output_tokens_per_s_per_gpu)
        }));
        let fp8: Vec<&Curve> = data
            .curves
            .iter()
            .filter(|c| c.color == config_rgb("fp8"))
            .collect();
        assert!(fp8.len() >= 2 && fp8[1].dashed && fp8[0].marker != fp8[1].marker);
        assert!(data.points[0].tooltip[0].starts_with("BF16 baseline · concurrency 1"));
        assert!(data.points[0].tooltip[4].starts_with("reference · NVIDIA H100"));
    }

    #[test]
    fn measured_runs_sit_at_their_own_figures_in_their_configs_colour() {
        let (mut s, hw) = h100_llama();
        s.config = "bf16".into();
        let (key, sweep) = swept(&s, &hw);
        let mut runs = Vec::new();
        add(
            &mut runs,
            &read("run.json", crate::serving::measured::tests::VLLM, &s).unwrap(),
        );
        let compared = compare(&runs, &RanOn::of(&s), &key, &sweep);
        let outcome = Sla::default().evaluate(&sweep);
        let data = pareto_data(&sweep, &outcome, &compared, &hw.name, "");
        let measured: Vec<_> = data
            .points
            .iter()
            .filter(|p| p.kind == PointKind::Measured)
            .collect();
        assert_eq!(measured.len(), 1);
        // 1 / 11.62 ms = 86.06 tokens/s per user; 1361.4 tokens/s on one GPU.
        assert!((measured[0].tokens_per_s_per_user - 1.0 / 0.01162).abs() < 1e-9);
        assert_eq!(measured[0].output_tokens_per_s_per_gpu, 1361.4);
        assert_eq!(data.curves[measured[0].curve].config, "bf16");
        assert!(
            measured[0].tooltip[2].starts_with("TTFT 85.3 ms ("),
            "{:?}",
            measured[0].tooltip
        );
    }
}
