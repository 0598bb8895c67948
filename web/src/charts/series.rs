//! Turns `roofline_core` results into plain plot data: roofs, points, axis ranges. Pure and natively testable.

use roofline_core::measurement::MeasuredPoint;
use roofline_core::{Bound, HardwareSpec, Mode, ModelAnalysis, OpAnalysis, OpKind, Precision};

use crate::calibration::mode_label;
use crate::format;
use crate::palette::{Rgb, precision_rgb};
use crate::scenario::KernelRow;
use crate::step::StepComparison;

/// How a point is drawn; the shape tells the operator type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Matrix multiplies (GEMM, GEMV).
    Circle,
    /// Attention score and value products.
    Diamond,
    /// Softmax.
    Triangle,
    /// Elementwise operators (norms, activations, residuals).
    Square,
}

/// One point on the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPoint {
    /// Arithmetic intensity, FLOP/byte.
    pub ai: f64,
    /// Height on the chart, FLOP/s.
    pub flop_per_s: f64,
    /// Fill or stroke colour.
    pub color: Rgb,
    /// Shape.
    pub marker: Marker,
    /// Predicted points are filled, measured ones hollow.
    pub filled: bool,
    /// Pinned scenarios are drawn faintly.
    pub faint: bool,
    /// Kernel spot-check points get an outline so they stand out from model operators.
    pub outlined: bool,
    /// Tooltip lines, already formatted.
    pub tooltip: Vec<String>,
    /// A short label drawn beside the marker (`M` on measured points).
    pub tag: Option<&'static str>,
}

/// Which kinds of points the chart draws (the legend's toggles); all by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointKinds {
    /// The model step's operators.
    pub model: bool,
    /// The Kernel tab's spot-check predictions.
    pub kernel: bool,
    /// Measured points (and a measured step's twins).
    pub measured: bool,
    /// Pinned scenarios.
    pub pinned: bool,
}

impl Default for PointKinds {
    fn default() -> Self {
        PointKinds {
            model: true,
            kernel: true,
            measured: true,
            pinned: true,
        }
    }
}

/// A horizontal compute ceiling, starting at its ridge point.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    /// The compute paths sharing this peak, e.g. `FP16·BF16`.
    pub paths: String,
    /// Legend text: the mode, the precisions sharing this peak and the peak itself.
    pub label: String,
    /// Peak, FLOP/s.
    pub peak: f64,
    /// Ridge point = peak / bandwidth, FLOP/byte.
    pub ridge: f64,
    /// Colour of the first precision in the group.
    pub color: Rgb,
    /// Roofs drawn beside the ones predictions use are dashed.
    pub dashed: bool,
}

/// The memory slope of one spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Slope {
    /// The mode of the spec it belongs to.
    pub mode: Mode,
    /// DRAM bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Legend text.
    pub label: String,
    /// Slopes drawn beside the one predictions use are dashed.
    pub dashed: bool,
    /// Where the slope ends: the highest ridge point of its spec, FLOP/byte.
    pub ridge: f64,
}

/// Everything the drawing code needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotData {
    /// Caption: the mode, device and architecture.
    pub title: String,
    /// The mode of the spec predictions use.
    pub mode: Mode,
    /// The device's name.
    pub device: String,
    /// Memory slopes: the spec predictions use, then the one drawn beside it ([`with_other`]).
    pub slopes: Vec<Slope>,
    /// Ceilings, lowest peak first.
    pub roofs: Vec<Roof>,
    /// Points, faint ones first so the current scenario is drawn on top.
    pub points: Vec<PlotPoint>,
    /// Axis range of arithmetic intensity (decades).
    pub x: (f64, f64),
    /// Axis range of FLOP/s (decades).
    pub y: (f64, f64),
}

/// Legend prefix of a spec's roofs and slope: its mode, `ideal (datasheet)` for datasheet roofs drawn
/// beside others.
fn legend_prefix(hw: &HardwareSpec, beside: bool) -> &'static str {
    match (Mode::of(hw), beside) {
        (Mode::Datasheet, true) => "ideal (datasheet)",
        (mode, _) => mode.name(),
    }
}

/// One ceiling per distinct peak among the precisions `hw` supports, dashed when drawn `beside` the ones
/// predictions use. Precisions with the same peak (FP16 and BF16, FP8 and INT8, NVFP4 and MXFP4) share one
/// line, labelled with the mode, their compute paths and the peak, so lines never hide each other.
#[must_use]
pub fn roofs(hw: &HardwareSpec, beside: bool) -> Vec<Roof> {
    let mut groups: Vec<(f64, Vec<Precision>)> = Vec::new();
    for p in hw.supported_precisions() {
        let Ok(peak) = hw.dense_peak_for(p) else { continue };
        match groups.iter_mut().find(|(q, _)| *q == peak) {
            Some((_, members)) => members.push(p),
            None => groups.push((peak, vec![p])),
        }
    }
    groups.sort_by(|a, b| a.0.total_cmp(&b.0));
    groups
        .into_iter()
        .map(|(peak, members)| Roof {
            paths: path_names(&members),
            label: format!(
                "{} {} {}",
                legend_prefix(hw, beside),
                path_names(&members),
                format::flop_rate(peak)
            ),
            peak,
            ridge: peak / hw.dram_bandwidth_bytes_per_s,
            color: precision_rgb(members[0]),
            dashed: beside,
        })
        .collect()
}

/// `FP8·INT8`: the distinct compute paths of `precisions`, in order.
fn path_names(precisions: &[Precision]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in precisions {
        let name = p.compute_path().name();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join("·")
}

/// Tooltip lines of a predicted kernel.
#[must_use]
pub fn prediction_tooltip(name: &str, p: &OpAnalysis) -> Vec<String> {
    vec![
        name.to_owned(),
        format!("AI {} FLOP/B", format::intensity(p.arithmetic_intensity)),
        format!("roof {}", format::flop_rate(p.flops / p.ideal_time_s)),
        format!("predicted {}", format::flop_rate(p.attainable_flop_per_s)),
        format!("time {}", format::duration(p.time_s)),
        format!(
            "{}-bound{}",
            p.bound.name(),
            if p.launch_bound { ", launch floor" } else { "" }
        ),
    ]
}

/// One legend entry per compute path: the roof predictions use and, when drawn, its dashed twin of the
/// other spec (the datasheet's ideal bound beside reference and calibrated roofs), e.g. `FP16·BF16 101
/// TFLOP/s (datasheet 125 TFLOP/s)`; the DRAM slope first.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// The entry's text.
    pub label: String,
    /// Line colour.
    pub color: Rgb,
    /// Only the dashed roof exists (a path the other spec has and this one lacks).
    pub dashed_only: bool,
}

/// The legend of `data`: the slope, then one entry per compute path, lowest peak first, and what solid and
/// dashed lines mean (`solid = reference, dashed = datasheet (ideal bound)`).
#[must_use]
pub fn legend(data: &PlotData) -> (Vec<LegendEntry>, String) {
    let other_mode = data.slopes.iter().find(|s| s.dashed).map(|s| s.mode.name());
    let twin_text = |mode: Option<&str>, value: String| match mode {
        Some(m) => format!(" ({m} {value})"),
        None => String::new(),
    };
    let mut entries: Vec<LegendEntry> = data
        .slopes
        .iter()
        .filter(|s| !s.dashed)
        .map(|s| {
            let twin = data
                .slopes
                .iter()
                .find(|t| t.dashed)
                .map(|t| format::bandwidth(t.bandwidth));
            LegendEntry {
                label: format!(
                    "DRAM {}{}",
                    format::bandwidth(s.bandwidth),
                    twin.map_or(String::new(), |t| twin_text(other_mode, t))
                ),
                color: (100, 116, 139),
                dashed_only: false,
            }
        })
        .collect();
    for r in data.roofs.iter().filter(|r| !r.dashed) {
        let twin = data.roofs.iter().find(|t| t.dashed && t.paths == r.paths);
        entries.push(LegendEntry {
            label: format!(
                "{} {}{}",
                r.paths,
                format::flop_rate(r.peak),
                twin.map_or(String::new(), |t| twin_text(
                    other_mode,
                    format::flop_rate(t.peak)
                ))
            ),
            color: r.color,
            dashed_only: false,
        });
    }
    for t in data
        .roofs
        .iter()
        .filter(|t| t.dashed && !data.roofs.iter().any(|r| !r.dashed && r.paths == t.paths))
    {
        entries.push(LegendEntry {
            label: format!(
                "{} {} ({} only)",
                t.paths,
                format::flop_rate(t.peak),
                other_mode.unwrap_or("")
            ),
            color: t.color,
            dashed_only: true,
        });
    }
    let key = match other_mode {
        Some("datasheet") => format!("solid = {}, dashed = datasheet (the ideal bound)", data.mode),
        Some(other) => format!("solid = {}, dashed = {other}", data.mode),
        None => format!("solid = {}", data.mode),
    };
    (entries, key)
}

/// Measured points from another device than the selected one: grey, faint, and saying so (never compared).
#[must_use]
pub fn other_device_points(points: &[MeasuredPoint]) -> Vec<PlotPoint> {
    measured_points(points)
        .into_iter()
        .zip(points)
        .map(|(mut p, r)| {
            p.color = (148, 163, 184);
            p.faint = true;
            p.tag = None;
            let device = roofline_core::measured_device::PointDevice::of(r).label();
            p.tooltip
                .insert(1, format!("measured on {device}: another device, not compared"));
            p
        })
        .collect()
}

/// Predicted points of the kernel view; rows without a prediction have no point.
#[must_use]
pub fn kernel_points(rows: &[KernelRow]) -> Vec<PlotPoint> {
    rows.iter()
        .filter_map(|r| {
            let (op, p) = (r.op.as_ref().ok()?, r.prediction.as_ref().ok()?);
            Some(PlotPoint {
                ai: p.arithmetic_intensity,
                flop_per_s: p.attainable_flop_per_s,
                color: precision_rgb(r.precision),
                marker: Marker::Circle,
                filled: true,
                faint: false,
                outlined: true,
                tooltip: prediction_tooltip(&format!("{} [{}]", op.name, r.precision), p),
                tag: None,
            })
        })
        .collect()
}

/// The marker of an operator kind: matrix products circles, attention diamonds, KV-cache and embedding
/// traffic triangles, elementwise squares.
#[must_use]
pub const fn marker_for(kind: OpKind) -> Marker {
    match kind {
        OpKind::Attention => Marker::Diamond,
        OpKind::KvCache | OpKind::Embedding => Marker::Triangle,
        OpKind::Elementwise => Marker::Square,
        _ => Marker::Circle,
    }
}

/// Points of a model step, one per distinct operator, coloured by precision. A pinned scenario passes its
/// colour and label and is drawn faintly. Operators without FLOPs (pure data movement) have no place on a
/// log-log roofline and are left to the operator table.
#[must_use]
pub fn analysis_points(a: &ModelAnalysis, pin: Option<(Rgb, &str)>) -> Vec<PlotPoint> {
    a.ops
        .iter()
        .filter(|op| op.arithmetic_intensity > 0.0 && op.attainable_flop_per_s > 0.0)
        .map(|op| {
            let title = match pin {
                Some((_, label)) => format!(
                    "{} ×{} [{}] — pin {label} · {}",
                    op.name, op.count, op.precision, a.mode
                ),
                None => format!("{} ×{} [{}]", op.name, op.count, op.precision),
            };
            PlotPoint {
                ai: op.arithmetic_intensity,
                flop_per_s: op.attainable_flop_per_s,
                color: pin.map_or(precision_rgb(op.precision), |(c, _)| c),
                marker: marker_for(op.kind),
                filled: true,
                faint: pin.is_some(),
                outlined: false,
                tooltip: vec![
                    title,
                    format!("AI {} FLOP/B", format::intensity(op.arithmetic_intensity)),
                    format!("roof {}", format::flop_rate(op.flops / op.ideal_time_s)),
                    format!("predicted {}", format::flop_rate(op.attainable_flop_per_s)),
                    format!(
                        "time {} each, {} total",
                        format::duration(op.time_s),
                        format::duration(op.total_time_s())
                    ),
                    format!(
                        "{}-bound{}",
                        op.bound.name(),
                        if op.launch_bound { ", launch floor" } else { "" }
                    ),
                ],
                tag: None,
            }
        })
        .collect()
}

/// The measured twins of a model step's points: hollow, with the marker and colour of the operator's
/// predicted point, at the measured FLOP/s (same AI: the same operator ran), tagged `M`.
#[must_use]
pub fn step_points(a: &ModelAnalysis, c: &StepComparison) -> Vec<PlotPoint> {
    a.ops
        .iter()
        .filter(|op| op.arithmetic_intensity > 0.0)
        .filter_map(|op| c.rows.get(&op.name).map(|r| (op, r)))
        .filter(|(_, r)| r.flop_per_s > 0.0)
        .map(|(op, r)| PlotPoint {
            ai: op.arithmetic_intensity,
            flop_per_s: r.flop_per_s,
            color: precision_rgb(op.precision),
            marker: marker_for(op.kind),
            filled: false,
            faint: false,
            outlined: false,
            tooltip: [
                format!(
                    "{} ×{} [{}] (measured in the step)",
                    op.name, op.count, op.precision
                ),
                format!("measured {}", format::flop_rate(r.flop_per_s)),
                format!("predicted {}", format::flop_rate(op.attainable_flop_per_s)),
                format!(
                    "time {} each, predicted {}",
                    format::duration(r.time_s),
                    format::duration(op.time_s)
                ),
            ]
            .into_iter()
            .chain(
                r.error_pct
                    .map(|e| format!("error {}", format::signed_percent(e))),
            )
            .chain((!r.ran.is_empty()).then(|| r.ran.clone()))
            .collect(),
            tag: Some("M"),
        })
        .collect()
}

/// Measured points: hollow, tagged `M`, with what ran in the tooltip.
#[must_use]
pub fn measured_points(points: &[MeasuredPoint]) -> Vec<PlotPoint> {
    points
        .iter()
        .map(|p| PlotPoint {
            ai: p.arithmetic_intensity(),
            flop_per_s: p.achieved_flop_per_s(),
            color: precision_rgb(p.precision),
            marker: Marker::Circle,
            filled: false,
            faint: false,
            outlined: false,
            tooltip: vec![
                format!("{} (measured)", p.label),
                format!("AI {} FLOP/B", format::intensity(p.arithmetic_intensity())),
                format!("measured {}", format::flop_rate(p.achieved_flop_per_s())),
                format!("time {}", format::duration(p.time_s())),
                format!("{}-bound", p.bound.map_or("unknown", Bound::name)),
            ]
            .into_iter()
            .chain(ran(p))
            .collect(),
            tag: Some("M"),
        })
        .collect()
}

/// Device, library and kernel of a measured point; `None` for an import that does not say.
fn ran(p: &MeasuredPoint) -> Option<String> {
    let m = &p.measurement;
    m.says_what_ran()
        .then(|| format!("{} · {} · {}", m.device_name, m.library, m.kernel))
}

/// Rounds a range outwards to whole decades.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    (10f64.powf(lo.log10().floor()), 10f64.powf(hi.log10().ceil()))
}

/// The slope of `hw`, dashed when drawn `beside` the one predictions use.
fn slope(hw: &HardwareSpec, beside: bool) -> Slope {
    let bw = hw.dram_bandwidth_bytes_per_s;
    Slope {
        mode: Mode::of(hw),
        bandwidth: bw,
        label: format!("{} DRAM {}", legend_prefix(hw, beside), format::bandwidth(bw)),
        dashed: beside,
        ridge: roofs(hw, beside).iter().map(|r| r.ridge).fold(0.0, f64::max),
    }
}

/// Adds the dashed roofs and slope of `other` (the datasheet's ideal bound beside reference or calibrated
/// roofs, the calibrated ones beside the datasheet's), widening the axes to cover them.
#[must_use]
pub fn with_other(mut data: PlotData, other: &HardwareSpec) -> PlotData {
    let extra = roofs(other, true);
    for r in &extra {
        data.x = decades(data.x.0, data.x.1.max(r.ridge * 4.0));
        data.y = decades(data.y.0.min(r.peak / 3.0), data.y.1.max(r.peak * 2.0));
    }
    let other_slope = slope(other, true);
    data.y = decades(data.y.0.min(other_slope.bandwidth * data.x.0), data.y.1);
    data.roofs.extend(extra);
    data.slopes.push(other_slope);
    data
}

/// Assembles the chart for `hw` with `points`; the axes cover every ridge point and every point.
#[must_use]
pub fn plot_data(hw: &HardwareSpec, points: Vec<PlotPoint>) -> PlotData {
    let roofs = roofs(hw, false);
    let bw = hw.dram_bandwidth_bytes_per_s;
    let finite = |v: &f64| v.is_finite() && *v > 0.0;
    let ais = points
        .iter()
        .map(|p| p.ai)
        .chain(roofs.iter().map(|r| r.ridge))
        .filter(finite);
    let (ai_lo, ai_hi) = ais.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // A margin of a factor of three keeps markers off the axes.
    let (ai_lo, ai_hi) = if ai_hi > 0.0 {
        ((ai_lo / 3.0).min(0.1), ai_hi * 4.0)
    } else {
        (0.1, 1e4)
    };
    let x = decades(ai_lo, ai_hi);
    let ys = points
        .iter()
        .map(|p| p.flop_per_s)
        .chain(roofs.iter().map(|r| r.peak))
        .filter(finite);
    let (y_lo, y_hi) = ys.fold((f64::INFINITY, bw * x.0), |(lo, hi), v| {
        (lo.min(v / 3.0), hi.max(v))
    });
    let mut sorted = points;
    sorted.sort_by_key(|p| !p.faint);
    PlotData {
        title: format!("{} — {}", mode_label(hw), hw.arch_label),
        mode: Mode::of(hw),
        device: hw.name.clone(),
        slopes: vec![slope(hw, false)],
        roofs,
        points: sorted,
        x,
        y: decades(y_lo.min(bw * x.0), y_hi * 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::resolve_hardware;
    use crate::scenario::KernelSpec;

    #[test]
    fn roofs_beside_are_dashed_labelled_and_inside_the_axes() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let calibrated = HardwareSpec {
            key: "gb10_measured".into(),
            provenance: roofline_core::Provenance::Measured,
            dram_bandwidth_bytes_per_s: 1e9,
            ..hw.clone()
        };
        let data = with_other(plot_data(&hw, Vec::new()), &calibrated);
        assert_eq!(
            data.slopes.iter().map(|s| s.dashed).collect::<Vec<_>>(),
            [false, true]
        );
        assert_eq!(
            data.roofs.iter().filter(|r| r.dashed).count(),
            roofs(&hw, false).len()
        );
        assert!(
            data.roofs
                .iter()
                .all(|r| r.ridge <= data.x.1 && data.y.0 <= r.peak && r.peak <= data.y.1)
        );
        assert!(
            data.roofs
                .iter()
                .any(|r| r.dashed && r.label.starts_with("calibrated "))
        );
        // Reference predictions with the datasheet's ideal bound beside them.
        let reference = hw.reference().unwrap();
        let data = with_other(plot_data(&reference, Vec::new()), &hw);
        assert!(
            data.title.starts_with(&format!("reference · {}", hw.name)),
            "{}",
            data.title
        );
        assert!(
            data.roofs
                .iter()
                .all(|r| r.dashed == r.label.starts_with("ideal (datasheet) "))
        );
        assert!(data.roofs.iter().any(|r| r.label.starts_with("reference FP4 ")));
        assert_eq!(data.slopes[1].label, "ideal (datasheet) DRAM 273 GB/s");
    }

    #[test]
    fn gb10_roofs_group_equal_peaks() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let labels: Vec<_> = roofs(&hw, false).into_iter().map(|r| r.label).collect();
        assert_eq!(
            labels,
            [
                "datasheet FP32 31.0 TFLOP/s",
                "datasheet FP16·BF16 125 TFLOP/s",
                "datasheet FP8·INT8 250 TFLOP/s",
                "datasheet FP4 500 TFLOP/s"
            ]
        );
    }

    #[test]
    fn axes_cover_points_and_ridges() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let rows = KernelSpec::default().evaluate(&hw, &roofline_core::Corrections::NONE);
        let data = plot_data(&hw, kernel_points(&rows));
        assert_eq!(
            data.points.len(),
            5,
            "INT4 is unsupported on GB10 and has no point"
        );
        for p in &data.points {
            assert!(
                data.x.0 <= p.ai && p.ai <= data.x.1 && data.y.0 <= p.flop_per_s && p.flop_per_s <= data.y.1
            );
        }
        assert!(
            data.roofs
                .iter()
                .all(|r| r.ridge <= data.x.1 && r.peak <= data.y.1)
        );
    }
}
