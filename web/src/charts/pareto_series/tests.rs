//! The Pareto chart's data: fronts, series, limits and measured runs, on both x axes.

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
            percentile: roofline_core::Percentile::P90,
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
        x_axis: XAxis::TokensPerUser,
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
    let sizing = Sizing::new(
        &sweep,
        model,
        &hw,
        &SizingSpec {
            sla,
            percentile: roofline_core::Percentile::P90,
            gpus: &[],
        },
    );
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
    // At P90 (the sizing's): every drawn point sits at 1 / its P90 TPOT.
    assert_eq!(data.x_name.0, "tokens/s per user (1 / P90 TPOT)");
    assert!(data.series.iter().all(|s| s.line.iter().all(|&(x, y)| {
        sweep
            .points
            .iter()
            .any(|p| p.output_tokens_per_s_per_gpu == y && x == 1.0 / p.tpot_p90_s)
    })));
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
fn the_interactivity_axis_places_points_at_inferencexs_figure_without_limits() {
    let (s, hw) = h100_llama();
    let (_, sweep) = swept(&s, &hw);
    let model = find_model("llama-3.1-8b").unwrap();
    let sla = Sla {
        tpot_max_s: Some(0.025),
        ..Sla::default()
    };
    let sizing = Sizing::new(
        &sweep,
        model,
        &hw,
        &SizingSpec {
            sla,
            percentile: Percentile::P90,
            gpus: &[],
        },
    );
    let (none, shown) = (Compared::default(), BTreeMap::new());
    let data = pareto_data(&ChartInputs {
        sweep: &sweep,
        sizing: &sizing,
        measured: &none,
        device: "d",
        title: "t",
        log: false,
        x_axis: XAxis::Interactivity,
        shown: &shown,
        allowed: &[],
        others: &[],
        caveats: &BTreeMap::new(),
    });
    assert_eq!(data.x_name.1, "normalized_interactivity");
    assert!(data.limits.is_empty(), "a TPOT limit has no place on this axis");
    let predicted: Vec<&ParetoPoint> = data
        .points
        .iter()
        .filter(|p| matches!(p.kind, PointKind::Predicted { .. }))
        .collect();
    assert!(!predicted.is_empty());
    // 1 / P90(E2E / OSL) of core's point, and about 1 / (TPOT + TTFT / OSL) (core's definition).
    for point in predicted {
        let p = sweep
            .points
            .iter()
            .find(|p| p.output_tokens_per_s_per_gpu == point.y && p.normalized_interactivity == point.x)
            .unwrap();
        assert!(p.normalized_interactivity < p.tokens_per_s_per_user_at(Percentile::P50) * 1.01);
    }
    // The front is undominated on this axis too.
    let line = &data.fronts[0].line;
    assert!(
        line.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1),
        "{line:?}"
    );
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
