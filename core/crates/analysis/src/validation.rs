//! Prediction error of measured points: each point's operator predicted on a device (datasheet, reference or calibrated),
//! the signed error, its band, and median / p90 |error| by precision and regime. Used by the page's
//! Validation tab and by `gpu-endpoint validate` (docs/validation). It works on domain
//! [`MeasuredPoint`]s; `wire` converts the JSON points to them.

use crate::corrections::{Corrections, analyze_linear};
use crate::measurement::{MeasuredOp, MeasuredPoint};
use crate::ops::{GemmShape, OpKind};
use crate::roofline::Bound;
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Mode};
use roofline_base::precision::Precision;

/// GEMV (M = 1) or GEMM (`GEMV` / `GEMM` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "UPPERCASE"))]
pub enum Regime {
    /// Matrix-vector product (M ≤ 1): memory-bound on every current device.
    Gemv,
    /// Matrix-matrix product.
    Gemm,
}

impl Regime {
    /// `GEMV` or `GEMM`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Regime::Gemv => "GEMV",
            Regime::Gemm => "GEMM",
        }
    }
}

/// How close a prediction came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    /// |error| < 10 %.
    Good,
    /// 10 % ≤ |error| ≤ 25 %.
    Fair,
    /// |error| > 25 %.
    Poor,
}

impl Band {
    /// Of a signed error in percent.
    #[must_use]
    pub fn of(error_pct: f64) -> Band {
        match error_pct.abs() {
            e if e < 10.0 => Band::Good,
            e if e <= 25.0 => Band::Fair,
            _ => Band::Poor,
        }
    }
}

/// A prediction of a measured point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    /// Predicted time, in s.
    pub predicted_s: f64,
    /// Whether the prediction is memory- or compute-bound.
    pub bound: Bound,
    /// (measured − predicted) / predicted, in percent.
    pub error_pct: f64,
}

/// One measured point with its predictions.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationRow {
    /// Precision that ran.
    pub precision: Precision,
    /// GEMV or GEMM.
    pub regime: Regime,
    /// Shape `MxNxK`.
    pub shape: String,
    /// Device the point was measured on.
    pub device: String,
    /// Measured median time, in s.
    pub measured_s: f64,
    /// Prediction on the datasheet spec, or why there is none.
    pub spec: Result<Check, Error>,
    /// Prediction in reference mode ([`HardwareSpec::reference`] of the datasheet spec), or why there is none.
    pub reference: Result<Check, Error>,
    /// Prediction on the calibrated spec, when there is one.
    pub calibrated: Option<Result<Check, Error>>,
}

/// Parses a list of shapes (`1x4096x4096, 64×256×256`: commas, spaces or new lines between them), each as
/// [`GemmShape`] reads it, as `[M, N, K]` (a benchmark request's shapes).
///
/// # Errors
/// [`Error::InvalidInput`] for the first unreadable shape, or an empty list.
pub fn parse_shapes(text: &str) -> Result<Vec<[u64; 3]>, Error> {
    let shapes = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<GemmShape>().map(|g| [g.m, g.n, g.k]))
        .collect::<Result<Vec<_>, _>>()?;
    if shapes.is_empty() {
        return Err(Error::InvalidInput("no shape given".into()));
    }
    Ok(shapes)
}

/// (measured − predicted) / predicted, in percent (the endpoint's `error_pct`).
#[must_use]
pub fn error_pct(measured_s: f64, predicted_s: f64) -> f64 {
    (measured_s - predicted_s) / predicted_s * 100.0
}

/// Predicts the matmul of `p` on `hw` with the corrections of its mode ([`Corrections::for_mode`] of
/// [`Mode::of`] the spec) and compares, in the operand precisions that ran (e.g. W4A16: INT4 group-128
/// weights, FP16 activations). A point whose time includes its input's quantization
/// ([`MeasuredPoint::activation_quantization`]) is compared with the quantization kernels plus the GEMM
/// ([`analyze_linear`], from the output format), whatever the mode's corrections say; any other point with the
/// GEMM alone.
///
/// # Errors
/// [`Error::InvalidInput`] for a point that is no GEMM or GEMV `MxNxK`, or core's reason for having no
/// prediction (e.g. the precision is unsupported).
pub fn check(p: &MeasuredPoint, hw: &HardwareSpec) -> Result<Check, Error> {
    let MeasuredOp::Matmul(shape) = &p.op else {
        return Err(Error::InvalidInput(format!(
            "{} '{}' is not a GEMM or GEMV shape MxNxK",
            p.op.kind().name(),
            p.op.shape_label()
        )));
    };
    let corrections = Corrections {
        activation_quantization: p.activation_quantization.is_some(),
        ..Corrections::for_mode(Mode::of(hw))
    };
    let prediction = analyze_linear(
        hw,
        *shape,
        p.operands,
        p.operands.output,
        p.activation_quantization.unwrap_or_default(),
        &corrections,
    )?;
    let predicted_s = prediction.time_s;
    Ok(Check {
        predicted_s,
        bound: prediction.gemm.bound,
        error_pct: error_pct(p.time_s(), predicted_s),
    })
}

/// One row per GEMM or GEMV point, predicted on the datasheet `spec`, on its reference spec and, when given,
/// on `calibrated`. Points of other operators (a model step's norms, attention, …) have no row: they are
/// compared with their prediction where they were measured, in the step.
#[must_use]
pub fn rows(
    points: &[MeasuredPoint],
    spec: &HardwareSpec,
    calibrated: Option<&HardwareSpec>,
) -> Vec<ValidationRow> {
    let reference = spec.reference();
    points
        .iter()
        .filter(|p| matches!(p.op.kind(), OpKind::Gemm | OpKind::Gemv))
        .map(|p| ValidationRow {
            precision: p.precision,
            regime: match p.op.kind() {
                OpKind::Gemv => Regime::Gemv,
                _ => Regime::Gemm,
            },
            shape: p.op.shape_label(),
            device: p.measurement.device_name.clone(),
            measured_s: p.time_s(),
            spec: check(p, spec),
            reference: reference.as_ref().map_err(Clone::clone).and_then(|r| check(p, r)),
            calibrated: calibrated.map(|hw| check(p, hw)),
        })
        .collect()
}

/// The `q`-quantile (0..=1) of sorted values, linearly interpolated; `None` when empty.
#[must_use]
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

/// Median and p90 of |error| of one precision in one regime.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ErrorStats {
    /// Precision.
    pub precision: Precision,
    /// GEMV or GEMM.
    pub regime: Regime,
    /// Points with a prediction.
    pub n_points: usize,
    /// Median |error|, in percent.
    pub median_abs_pct: f64,
    /// 90th percentile of |error|, in percent.
    pub p90_abs_pct: f64,
}

/// Statistics of the errors `pick` returns (rows without one are left out), by precision then regime.
#[must_use]
pub fn stats(rows: &[ValidationRow], pick: impl Fn(&ValidationRow) -> Option<f64>) -> Vec<ErrorStats> {
    let mut groups: Vec<((usize, Regime), Precision, Vec<f64>)> = Vec::new();
    for row in rows {
        let Some(e) = pick(row) else { continue };
        let order = (
            Precision::ALL
                .iter()
                .position(|p| *p == row.precision)
                .unwrap_or(usize::MAX),
            row.regime,
        );
        match groups.iter_mut().find(|(o, _, _)| *o == order) {
            Some((_, _, errors)) => errors.push(e.abs()),
            None => groups.push((order, row.precision, vec![e.abs()])),
        }
    }
    groups.sort_by_key(|(order, _, _)| *order);
    groups
        .into_iter()
        .filter_map(|((_, regime), precision, mut errors)| {
            errors.sort_by(f64::total_cmp);
            Some(ErrorStats {
                precision,
                regime,
                n_points: errors.len(),
                median_abs_pct: quantile(&errors, 0.5)?,
                p90_abs_pct: quantile(&errors, 0.9)?,
            })
        })
        .collect()
}

/// The datasheet error of a row, if it has a prediction.
#[must_use]
pub fn spec_error(row: &ValidationRow) -> Option<f64> {
    row.spec.as_ref().ok().map(|c| c.error_pct)
}

/// The reference-mode error of a row, if it has a prediction.
#[must_use]
pub fn reference_error(row: &ValidationRow) -> Option<f64> {
    row.reference.as_ref().ok().map(|c| c.error_pct)
}

/// The calibrated error of a row, if it has one.
#[must_use]
pub fn calibrated_error(row: &ValidationRow) -> Option<f64> {
    row.calibrated.as_ref()?.as_ref().ok().map(|c| c.error_pct)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::Measurement;
    use crate::ops::OperandPrecisions;
    use crate::ops::Operator;
    use roofline_base::hardware::find_hardware;

    /// A measured matmul of `shape` in `precision` with median `median_s`, stamped `at` (Unix s).
    fn measured_point(shape: &str, precision: Precision, median_s: f64, at: f64) -> MeasuredPoint {
        let g: GemmShape = shape.parse().unwrap();
        let op = Operator::matmul(g.m, g.n, g.k, precision.into()).unwrap();
        let measurement = Measurement {
            median_s,
            device_name: "test device".into(),
            timestamp_unix_s: at,
            ..Measurement::default()
        };
        MeasuredPoint::of_operator(&op, precision, "", measurement)
    }

    #[test]
    fn shape_lists_parse_strictly() {
        assert_eq!(
            parse_shapes("1x4096x4096, 64×256×256\n2x2x2").unwrap(),
            [[1, 4096, 4096], [64, 256, 256], [2, 2, 2]]
        );
        assert!(parse_shapes(" , ").unwrap_err().to_string().contains("no shape"));
        assert!(
            parse_shapes("1x1x1, 1x0x4")
                .unwrap_err()
                .to_string()
                .contains("1x0x4")
        );
    }

    #[test]
    fn only_gemm_and_gemv_points_are_validated_as_matmuls() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let gemv = measured_point("1x4096x4096", Precision::Fp16, 20e-6, 0.0);
        // A model step's attention over 32 heads × 256 cached tokens × 64 dims: the label reads like a
        // matmul shape, but it is no GEMM and must not be predicted as one.
        let attention = MeasuredPoint {
            op: MeasuredOp::Other {
                kind: OpKind::Attention,
                shape: "32x256x64".into(),
            },
            ..measured_point("32x256x64", Precision::Fp16, 20e-6, 0.0)
        };
        let gemm = measured_point("64x256x256", Precision::Fp16, 20e-6, 0.0);
        assert!(matches!(check(&attention, h100), Err(Error::InvalidInput(_))));
        let table = rows(&[gemv, attention, gemm], h100, None);
        let shapes: Vec<&str> = table.iter().map(|r| r.shape.as_str()).collect();
        assert_eq!(shapes, ["1x4096x4096", "64x256x256"]);
    }

    #[test]
    fn bands_split_at_10_and_25_percent() {
        assert_eq!(Band::of(-9.9), Band::Good);
        assert_eq!(Band::of(10.0), Band::Fair);
        assert_eq!(Band::of(-25.0), Band::Fair);
        assert_eq!(Band::of(25.1), Band::Poor);
    }

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[4.0], 0.9), Some(4.0));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert!((quantile(&[0.0, 10.0], 0.9).unwrap() - 9.0).abs() < 1e-12);
    }

    #[test]
    fn a_point_measured_at_twice_the_prediction_is_100_percent_slow() {
        let hw = find_hardware("gb10").unwrap().clone();
        let op = Operator::matmul(1, 4096, 4096, Precision::Fp16.into()).unwrap();
        let predicted = crate::roofline::predict(&hw, &op).unwrap().time_s;
        let p = measured_point("1x4096x4096", Precision::Fp16, 2.0 * predicted, 0.0);
        let rows = rows(&[p], &hw, Some(&hw));
        assert_eq!(rows[0].regime, Regime::Gemv);
        assert!((rows[0].spec.as_ref().unwrap().error_pct - 100.0).abs() < 1e-9);
        assert_eq!(calibrated_error(&rows[0]), spec_error(&rows[0]));
        // Reference mode: 33,570,816 B at 89.9 % of 273 GB/s (the catalog's median measured DRAM fraction;
        // GB10 has none of its own) = 136.78 µs, plus the 5 µs matrix-kernel floor.
        let reference = rows[0].reference.as_ref().unwrap().predicted_s;
        assert!(
            (reference - (33_570_816.0 / (0.899 * 273e9) + 5e-6)).abs() < 1e-12,
            "{reference}"
        );
    }

    #[test]
    fn a_w4a16_point_is_predicted_from_the_operands_that_ran() {
        // INT4 alone has no Hopper path; INT4 g128 weights × FP16 activations run on the FP16 path.
        // Bytes: 4096·4096·4.125/8 = 8 650 752 weights + 8 192 x + 8 192 y = 8 667 136 B at 3.35e12 B/s.
        let hw = find_hardware("h100_sxm").unwrap();
        let mut p = measured_point("1x4096x4096", Precision::Int4, 1e-5, 0.0);
        assert!(matches!(check(&p, hw), Err(Error::Unsupported { .. })));
        p.operands = OperandPrecisions {
            weight: Precision::Int4G128,
            activation: Precision::Fp16,
            output: Precision::Fp16,
        };
        let c = check(&p, hw).unwrap();
        assert_eq!(c.bound, Bound::Memory);
        assert!((c.predicted_s - 8_667_136.0 / 3.35e12).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn an_int4_gemv_on_h200_is_predicted_as_the_w4a16_weight_only_kernel_in_reference_mode() {
        // Hopper has no INT4 matrix path: INT4 runs as W4A16 (INT4 g128 weights, FP16 activations, FP16 path).
        let h200 = find_hardware("h200_sxm").unwrap();
        let operands = OperandPrecisions::run_on(Precision::Int4, h200.arch);
        assert_eq!(operands, OperandPrecisions::W4A16_INT4);
        let op = Operator::matmul(1, 4096, 4096, operands).unwrap();
        // Bytes: 4096·4096 weights × 4.125 bits (4 + an FP16 scale per 128) / 8 = 8 650 752, plus x and y
        // 4096 × 2 B each: 8 667 136 B. Never the 33.6 MB of an FP16 GEMV.
        assert_eq!(op.bytes(), 8_667_136.0);
        // Reference ceilings of the weight-only family on h200_sxm (catalog): no H200 measurement, so the
        // H100 SXM's Marlin W4A16 small-M DRAM fraction 0.495 × the H200's DRAM fraction 0.81 / the H100's
        // 0.899 = 0.44600 of 4.8 TB/s = 2.14080 TB/s; floor 6.7 µs (WEIGHT_ONLY_GEMM_FLOOR_S).
        // Time = 8 667 136 / 2.14080e12 + 6.7e-6 = 4.0486 + 6.7 = 10.7486 µs, memory-bound.
        let bandwidth = 4.8e12 * 0.495 * 0.81 / 0.899;
        let expected_s = 8_667_136.0 / bandwidth + 6.7e-6;
        let reference = h200.reference().unwrap();
        let predicted = crate::roofline::predict(&reference, &op).unwrap();
        assert_eq!(predicted.bound, Bound::Memory);
        assert!(
            (predicted.time_s - expected_s).abs() < 1e-3 * expected_s,
            "predicted {} s, hand-derived {expected_s} s",
            predicted.time_s
        );
        // The measured point the endpoint reports (INT4, W4A16 operands) gets that prediction in validation
        // (the page's Spot Check and `validate`), with the reference mode's corrections.
        let mut p = measured_point("1x4096x4096", Precision::Int4, 12e-6, 0.0);
        p.operands = operands;
        let c = check(&p, &reference).unwrap();
        assert!(
            (c.predicted_s - expected_s).abs() < 1e-3 * expected_s,
            "validation predicted {} s, hand-derived {expected_s} s",
            c.predicted_s
        );
    }

    #[test]
    fn unsupported_precisions_have_a_reason_and_no_statistics() {
        let hw = find_hardware("gb10").unwrap().clone();
        let rows = rows(
            &[measured_point("64x256x256", Precision::Int4, 1e-5, 0.0)],
            &hw,
            None,
        );
        assert!(
            matches!(rows[0].spec, Err(Error::Unsupported { .. })),
            "{:?}",
            rows[0].spec
        );
        assert!(stats(&rows, spec_error).is_empty());
    }

    #[test]
    fn statistics_group_by_precision_and_regime() {
        let hw = find_hardware("gb10").unwrap().clone();
        let predicted = |m, p: Precision| {
            crate::roofline::predict(&hw, &Operator::matmul(m, 256, 256, p.into()).unwrap())
                .unwrap()
                .time_s
        };
        // An M×256×256 point of `p` measured at `factor` times its prediction.
        let point = |m: u64, p: Precision, factor: f64, at: f64| {
            measured_point(&format!("{m}x256x256"), p, predicted(m, p) * factor, at)
        };
        let points = [
            point(64, Precision::Fp32, 1.1, 1.0),
            point(64, Precision::Fp32, 0.7, 2.0),
            point(1, Precision::Fp32, 1.5, 3.0),
            point(64, Precision::Fp16, 1.2, 4.0),
        ];
        let all = stats(&rows(&points, &hw, None), spec_error);
        let summary: Vec<_> = all.iter().map(|s| (s.precision, s.regime, s.n_points)).collect();
        assert_eq!(
            summary,
            [
                (Precision::Fp32, Regime::Gemv, 1),
                (Precision::Fp32, Regime::Gemm, 2),
                (Precision::Fp16, Regime::Gemm, 1)
            ]
        );
        let fp32_gemm = &all[1];
        assert!((fp32_gemm.median_abs_pct - 20.0).abs() < 1e-6, "{fp32_gemm:?}");
        assert!((fp32_gemm.p90_abs_pct - 28.0).abs() < 1e-6, "{fp32_gemm:?}");
    }
}
