//! One point on the roofline ([`RooflinePoint`], the seed-compatible shape in µs, TFLOP/s and an `MxNxK`
//! label) and its conversions to and from the domain's [`MeasuredPoint`] and [`PredictedPoint`] (the only
//! place those units appear), exact both ways: a point written here reads back as the point it was.

use serde::{Deserialize, Serialize};

use roofline_analysis::measurement::{MeasuredOp, MeasuredPoint, Measurement, PredictedPoint};
use roofline_analysis::ops::{GemmShape, OpKind, OperandPrecisions, Operator};
use roofline_analysis::roofline::{Bound, Prediction};
use roofline_base::hardware::Mode;
use roofline_base::precision::{ActivationScale, Precision};
use roofline_base::units::{GIGA, MICRO, TERA};

/// Whether a point was predicted or measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointSource {
    /// Predicted by roofline-core.
    Simulated,
    /// Measured on a live device.
    Measured,
}

/// What limits a point: the original toolkit's `bottleneck` values (`memory`, `compute`), `interconnect` for
/// a collective, and `unknown` for a measurement with no prediction beside it (and any value a newer
/// endpoint sends that this build does not know).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bottleneck {
    /// Bytes / bandwidth ≥ FLOPs / peak.
    Memory,
    /// FLOPs / peak > bytes / bandwidth.
    Compute,
    /// A collective, limited by the GPU-to-GPU link.
    Interconnect,
    /// Not predicted.
    #[serde(other)]
    Unknown,
}

impl Bottleneck {
    /// `memory`, `compute`, `interconnect` or `unknown`: the wire spelling.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Bottleneck::Memory => "memory",
            Bottleneck::Compute => "compute",
            Bottleneck::Interconnect => "interconnect",
            Bottleneck::Unknown => "unknown",
        }
    }

    /// The bound it names; `None` for [`Bottleneck::Unknown`].
    #[must_use]
    pub const fn bound(self) -> Option<Bound> {
        match self {
            Bottleneck::Memory => Some(Bound::Memory),
            Bottleneck::Compute => Some(Bound::Compute),
            Bottleneck::Interconnect => Some(Bound::Interconnect),
            Bottleneck::Unknown => None,
        }
    }
}

impl From<Bound> for Bottleneck {
    fn from(bound: Bound) -> Self {
        match bound {
            Bound::Memory => Bottleneck::Memory,
            Bound::Compute => Bottleneck::Compute,
            Bound::Interconnect => Bottleneck::Interconnect,
        }
    }
}

impl std::fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One point on the roofline (the original toolkit's `RooflinePoint`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    /// Arithmetic intensity, in FLOP/byte.
    pub ai: f64,
    /// Achieved (measured) or attainable (simulated) throughput, in TFLOP/s (1e12 FLOP/s).
    pub tflops: f64,
    /// Time, in µs.
    pub time_us: f64,
    /// Precision that ran (for a measured point: what really ran, never a stand-in).
    pub precision: Precision,
    /// Shape label of the operator: `MxNxK` for a GEMM or GEMV, the operator's own label otherwise (e.g.
    /// `1x2048` for a norm over one token).
    pub shape: String,
    /// Kind of the operator that ran or was predicted. Absent from older records, which are all GEMMs or
    /// GEMVs of shape `MxNxK`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OpKind>,
    /// Display label, e.g. `GEMV 1x4096x4096 [FP16]`.
    pub label: String,
    /// Simulated or measured.
    pub source: PointSource,
    /// The bound of its prediction; `unknown` for a measurement with no prediction beside it.
    pub bottleneck: Bottleneck,
    /// Effective DRAM bandwidth = bytes / time, in GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gb_s: Option<f64>,
    /// Weight, activation and output precisions of the operator that ran or was predicted (W4A16: INT4
    /// group-128 weights, FP16 activations). Absent from older records, where all are `precision` with its
    /// default output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operands: Option<OperandPrecisions>,
    /// For measured points: what ran and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<Measurement>,
    /// For simulated points: the ceilings of the prediction (absent from measured points and older
    /// records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// For measured points whose time includes quantizing the layer's input (`dynamic_per_tensor`,
    /// `static_per_tensor` or `dynamic_per_token`): validation then compares it with the quantization kernels
    /// plus the GEMM. Absent (the default, and every older record): the GEMM alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_quantization: Option<ActivationScale>,
}

impl RooflinePoint {
    /// A simulated point from a prediction ([`PredictedPoint::of`]).
    #[must_use]
    pub fn simulated(op: &Operator, prediction: &Prediction) -> RooflinePoint {
        RooflinePoint::from(&PredictedPoint::of(op, prediction))
    }
}

impl From<&PredictedPoint> for RooflinePoint {
    /// The wire point of a prediction: time in µs, attainable TFLOP/s and GB/s.
    fn from(p: &PredictedPoint) -> RooflinePoint {
        RooflinePoint {
            ai: p.arithmetic_intensity,
            tflops: p.attainable_flop_per_s / TERA,
            time_us: p.time_s / MICRO,
            precision: p.precision,
            shape: p.shape.clone(),
            kind: Some(p.kind),
            label: p.label.clone(),
            source: PointSource::Simulated,
            bottleneck: p.bound.into(),
            bandwidth_gb_s: Some(p.bytes / p.time_s / GIGA),
            operands: Some(p.operands),
            measurement: None,
            mode: Some(p.mode),
            activation_quantization: None,
        }
    }
}

impl From<&MeasuredPoint> for RooflinePoint {
    /// The wire point of a measurement, with the bound of its prediction (`unknown` without one): time in
    /// µs, achieved TFLOP/s and GB/s, the `MxNxK` label of a matmul.
    fn from(point: &MeasuredPoint) -> RooflinePoint {
        RooflinePoint {
            ai: point.arithmetic_intensity(),
            tflops: point.achieved_flop_per_s() / TERA,
            time_us: point.time_s() / MICRO,
            precision: point.precision,
            shape: point.op.shape_label(),
            kind: Some(point.op.kind()),
            label: point.label.clone(),
            source: PointSource::Measured,
            bottleneck: point.bound.map_or(Bottleneck::Unknown, Bottleneck::from),
            bandwidth_gb_s: Some(point.achieved_bytes_per_s() / GIGA),
            operands: Some(point.operands),
            measurement: Some(point.measurement.clone()),
            mode: None,
            activation_quantization: point.activation_quantization,
        }
    }
}

impl From<&RooflinePoint> for MeasuredPoint {
    /// Reads a wire point as a measurement. A GEMM or GEMV point (or an older record without a kind) whose
    /// shape is `MxNxK` is a [`MeasuredOp::Matmul`]; anything else keeps its kind and label. The operands are
    /// `precision` with its default output where the record does not list them. The time is the
    /// measurement's median; FLOPs and bytes are those whose achieved TFLOP/s, GB/s and arithmetic intensity
    /// are the record's to the bit (what [`RooflinePoint::from`] wrote reads back as the point it was), else
    /// the figures times the time. A record without a measurement (a simulated point, an older import) has
    /// only its `time_us` as the median and no device.
    fn from(p: &RooflinePoint) -> MeasuredPoint {
        let matmul = match p.kind {
            None | Some(OpKind::Gemm | OpKind::Gemv) => p.shape.parse::<GemmShape>().ok(),
            Some(_) => None,
        };
        let op = matmul.map_or_else(
            || MeasuredOp::Other {
                kind: p.kind.unwrap_or(OpKind::Gemm),
                shape: p.shape.clone(),
            },
            MeasuredOp::Matmul,
        );
        let time_s = p.measurement.as_ref().map_or_else(
            || nearest(p.time_us * MICRO, p.time_us, |t| t / MICRO),
            |m| m.median_s,
        );
        let (flops, bytes) = measured_work(p, time_s);
        MeasuredPoint {
            op,
            operands: p.operands.unwrap_or_else(|| p.precision.into()),
            precision: p.precision,
            label: p.label.clone(),
            flops,
            bytes,
            measurement: p.measurement.clone().unwrap_or_else(|| Measurement {
                median_s: time_s,
                ..Measurement::default()
            }),
            activation_quantization: p.activation_quantization,
            bound: p.bottleneck.bound(),
        }
    }
}

impl From<&RooflinePoint> for PredictedPoint {
    /// Reads a wire point as a prediction: time, attainable FLOP/s and bytes those whose µs, TFLOP/s and GB/s
    /// are the record's to the bit (what [`RooflinePoint::from`] wrote reads back as the point it was). An
    /// older record without a kind is a GEMM (a GEMV when `M` is 1), without operands `precision` with its
    /// default output, without a mode or a bound the defaults (reference, memory).
    fn from(p: &RooflinePoint) -> PredictedPoint {
        let attainable_flop_per_s = nearest(p.tflops * TERA, p.tflops, |f| f / TERA);
        let time_s = p.time_us * MICRO;
        // Time and bytes together: not every time whose µs are the record's has bytes giving its GB/s.
        let (time_s, bytes) = match p.bandwidth_gb_s {
            Some(gb_s) => preimages(time_s, p.time_us, |t| t / MICRO)
                .find_map(|t| {
                    preimages(gb_s * GIGA * t, gb_s, |b| b / t / GIGA)
                        .next()
                        .map(|b| (t, b))
                })
                .unwrap_or((time_s, gb_s * GIGA * time_s)),
            None => (time_s, attainable_flop_per_s * time_s / p.ai),
        };
        let kind = p.kind.unwrap_or(match p.shape.parse::<GemmShape>() {
            Ok(shape) if shape.m <= 1 => OpKind::Gemv,
            _ => OpKind::Gemm,
        });
        PredictedPoint {
            label: p.label.clone(),
            shape: p.shape.clone(),
            kind,
            operands: p.operands.unwrap_or_else(|| p.precision.into()),
            precision: p.precision,
            arithmetic_intensity: p.ai,
            attainable_flop_per_s,
            time_s,
            bytes,
            bound: p.bottleneck.bound().unwrap_or(Bound::Memory),
            mode: p.mode.unwrap_or_default(),
        }
    }
}

/// (measured − predicted) / predicted time, in percent, from the two times in µs as the wire sends them: the
/// `error_pct` of a benchmark point, the same to the bit as the endpoint has always computed it.
#[must_use]
pub fn wire_error_pct(measured_s: f64, predicted_s: f64) -> f64 {
    let (measured_us, predicted_us) = (measured_s / MICRO, predicted_s / MICRO);
    (measured_us - predicted_us) / predicted_us * 100.0
}

/// How far from a figure converted back to base units [`preimages`] looks, in ULPs each way: the two
/// conversions of a figure (to the seed unit and back) are each a few roundings, a handful of ULPs at most.
const ULPS: usize = 16;

/// The values near `approx` whose figure `forward` is `target` to the bit, nearest first: the nearest whole
/// number (an operator's FLOPs and bytes mostly are), then `approx` and its neighbours up to [`ULPS`] away.
fn preimages(approx: f64, target: f64, forward: impl Fn(f64) -> f64) -> impl Iterator<Item = f64> {
    let mut candidates = vec![approx.round(), approx];
    let (mut up, mut down) = (approx, approx);
    for _ in 0..ULPS {
        (up, down) = (up.next_up(), down.next_down());
        candidates.extend([up, down]);
    }
    candidates.into_iter().filter(move |&x| forward(x) == target)
}

/// The first of [`preimages`], else `approx`.
fn nearest(approx: f64, target: f64, forward: impl Fn(f64) -> f64) -> f64 {
    preimages(approx, target, forward).next().unwrap_or(approx)
}

/// FLOPs and bytes of the measured wire point `p` taking `time_s`: a pair whose achieved TFLOP/s, GB/s and
/// arithmetic intensity are the record's to the bit, else the figures times the time (bytes from the
/// arithmetic intensity in an older record without the bandwidth).
fn measured_work(p: &RooflinePoint, time_s: f64) -> (f64, f64) {
    let flops = p.tflops * TERA * time_s;
    let Some(gb_s) = p.bandwidth_gb_s else {
        return (flops, if p.ai > 0.0 { flops / p.ai } else { 0.0 });
    };
    let bytes = gb_s * GIGA * time_s;
    let bytes_candidates: Vec<f64> = preimages(bytes, gb_s, |b| b / time_s / GIGA).collect();
    preimages(flops, p.tflops, |f| f / time_s / TERA)
        .find_map(|f| bytes_candidates.iter().find(|&&b| f / b == p.ai).map(|&b| (f, b)))
        .unwrap_or((flops, bytes))
}

#[cfg(test)]
mod tests;
