//! Measurements as domain values: what ran ([`MeasuredOp`] and its operand precisions), on which device and
//! backend, how long it took (seconds) and under which conditions ([`Measurement`]); and the prediction a
//! measurement is shown beside ([`PredictedPoint`]).
//!
//! Backends produce a [`MeasuredPoint`]; the endpoint's use cases, its store and the page carry it, validation
//! and device matching consume it. The seed-compatible `wire::RooflinePoint` (µs, TFLOP/s, an `MxNxK` label)
//! is converted to and from both in `wire` only.

use crate::ops::{GemmShape, OpKind, OperandPrecisions, Operator};
use crate::roofline::{Bound, Prediction};
use roofline_base::hardware::Mode;
use roofline_base::precision::{ActivationScale, Precision};

/// What really ran for a measured point, and under which conditions.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Measurement {
    /// Backend that ran it.
    pub backend: BackendKind,
    /// Library, e.g. `cuBLASLt 12.8.4`, `NVRTC`, `gemm 0.19 (CPU)`.
    pub library: String,
    /// Kernel or algorithm that ran, e.g. `cublasLt algo 21`, `W4A16-dequant`.
    pub kernel: String,
    /// Device name.
    pub device_name: String,
    /// Catalog key of the device that ran it (`h100_sxm`), when the device was detected as a catalog entry
    /// (the `matched_key` of `GET /api/device`); absent on the CPU and fake backends, on unknown GPUs and in
    /// older records.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub device_key: Option<String>,
    /// Version strings: driver, CUDA, cuBLAS, … (name → version).
    #[cfg_attr(feature = "serde", serde(default))]
    pub versions: Vec<(String, String)>,
    /// Median of the timed samples, in seconds.
    pub median_s: f64,
    /// 10th percentile, in seconds.
    pub p10_s: f64,
    /// 90th percentile, in seconds.
    pub p90_s: f64,
    /// Number of timed samples.
    pub samples: u32,
    /// Whether the L2 cache was flushed between samples.
    pub l2_flushed: bool,
    /// Whether the output was checked against a reference before timing.
    pub verified: bool,
    /// Padding applied to the shape, if any.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub padding: Option<String>,
    /// Median SM clock during the run, in MHz.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub sm_clock_mhz: Option<f64>,
    /// Median power during the run, in W.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub power_w: Option<f64>,
    /// Maximum temperature during the run, in °C.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub temperature_c: Option<f64>,
    /// Throttle reasons seen during the run.
    #[cfg_attr(feature = "serde", serde(default))]
    pub throttle_reasons: Vec<String>,
    /// Unix time of the measurement, in seconds.
    #[cfg_attr(feature = "serde", serde(default))]
    pub timestamp_unix_s: f64,
}

impl Measurement {
    /// Whether the record says what ran (a backend, device, library or kernel); the record an older import
    /// without one reads as says nothing.
    #[must_use]
    pub fn says_what_ran(&self) -> bool {
        self.backend != BackendKind::Unknown
            || [&self.device_name, &self.library, &self.kernel]
                .iter()
                .any(|s| !s.is_empty())
    }
}

/// The measurement backend of an endpoint: the GPU through CUDA, the host CPU, or the fake backend of tests;
/// `unknown` for a value a newer endpoint sends that this build does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BackendKind {
    /// NVIDIA GPU through the CUDA driver, cuBLASLt and NVRTC.
    Cuda,
    /// The host CPU (the `gemm` crate and plain loops).
    Cpu,
    /// Tests' fake backend: sleeps, never measures.
    Fake,
    /// Not said, or not known to this build.
    #[default]
    #[cfg_attr(feature = "serde", serde(other))]
    Unknown,
}

impl BackendKind {
    /// `cuda`, `cpu`, `fake` or `unknown`: the wire spelling.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Cpu => "cpu",
            BackendKind::Fake => "fake",
            BackendKind::Unknown => "unknown",
        }
    }
}

impl From<&str> for BackendKind {
    /// Reads the wire spelling; anything else is [`BackendKind::Unknown`], as in JSON.
    fn from(name: &str) -> Self {
        match name {
            "cuda" => BackendKind::Cuda,
            "cpu" => BackendKind::Cpu,
            "fake" => BackendKind::Fake,
            _ => BackendKind::Unknown,
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a measured point ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeasuredOp {
    /// A GEMM, or a GEMV when `m` is 1 (batch 1).
    Matmul(GemmShape),
    /// Any other operator (a model step's norm, attention, KV-cache copy, …): its kind and the analysis' shape
    /// label, e.g. `1x2048`.
    Other {
        /// Kind of the operator.
        kind: OpKind,
        /// Shape label as the analysis writes it.
        shape: String,
    },
}

impl MeasuredOp {
    /// The operator's kind: GEMV (M ≤ 1) or GEMM for a matmul.
    #[must_use]
    pub fn kind(&self) -> OpKind {
        match self {
            MeasuredOp::Matmul(shape) if shape.m <= 1 => OpKind::Gemv,
            MeasuredOp::Matmul(_) => OpKind::Gemm,
            MeasuredOp::Other { kind, .. } => *kind,
        }
    }

    /// The shape label: `MxNxK` for a matmul, the analysis' label otherwise.
    #[must_use]
    pub fn shape_label(&self) -> String {
        match self {
            MeasuredOp::Matmul(shape) => shape.to_string(),
            MeasuredOp::Other { shape, .. } => shape.clone(),
        }
    }
}

/// One measured operator: what ran, its work, and the record of the run, in base units.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPoint {
    /// What ran.
    pub op: MeasuredOp,
    /// Weight, activation and output precisions of what ran (W4A16: INT4 group-128 weights, FP16
    /// activations).
    pub operands: OperandPrecisions,
    /// The format the point is labelled with: what really ran (the compute precision, or a weight-only
    /// kernel's weight format), never a stand-in.
    pub precision: Precision,
    /// Display label, e.g. `GEMV 1x4096x4096 [INT4_G128 W4A16-dequant] measured`.
    pub label: String,
    /// Operations the operator performs, in FLOP (OP for integer paths).
    pub flops: f64,
    /// DRAM bytes it moves, in bytes.
    pub bytes: f64,
    /// The record: device name, catalog key and backend, library and kernel, times in seconds, samples,
    /// clocks, power and versions.
    pub measurement: Measurement,
    /// Whether the timing includes quantizing the layer's input (a framework's "FP8 Linear", a "+quant"
    /// benchmark column): `Some(scale)` when it does, from the output format with that scale, `None` when it
    /// timed the GEMM alone (every point this project's backends measure).
    pub activation_quantization: Option<ActivationScale>,
    /// The bound of the prediction it was measured beside, `None` without one.
    pub bound: Option<Bound>,
}

impl MeasuredPoint {
    /// The point of `op` measured as `measurement`, labelled with `precision` (what really ran) and the kernel
    /// variant `variant` (e.g. ` W4A16-dequant`, empty for none).
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::measurement::{MeasuredOp, MeasuredPoint, Measurement};
    /// use roofline_base::Precision;
    /// use roofline_analysis::{GemmShape, Operator};
    /// // y[4096] = W[4096, 4096] · x[4096] in FP16: 33,554,432 FLOP and 33,570,816 B, measured at 20 µs.
    /// let op = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
    /// let measurement = Measurement { median_s: 20e-6, ..Measurement::default() };
    /// let p = MeasuredPoint::of_operator(&op, Precision::Fp16, "", measurement);
    /// assert_eq!(p.op, MeasuredOp::Matmul(GemmShape { batch: 1, m: 1, n: 4096, k: 4096 }));
    /// assert_eq!(p.label, "GEMV 1x4096x4096 [FP16] measured");
    /// assert!((p.achieved_bytes_per_s() - 33_570_816.0 / 20e-6).abs() < 1e-3);
    /// ```
    #[must_use]
    pub fn of_operator(
        op: &Operator,
        precision: Precision,
        variant: &str,
        measurement: Measurement,
    ) -> MeasuredPoint {
        let measured_op = match op.gemm {
            Some(shape) if matches!(op.kind, OpKind::Gemm | OpKind::Gemv) => MeasuredOp::Matmul(shape),
            _ => MeasuredOp::Other {
                kind: op.kind,
                shape: op.shape.clone(),
            },
        };
        MeasuredPoint {
            op: measured_op,
            operands: op.precisions,
            precision,
            label: format!("{} [{precision}{variant}] measured", op.name),
            flops: op.flops,
            bytes: op.bytes(),
            measurement,
            activation_quantization: None,
            bound: None,
        }
    }

    /// The measured time: the median of the timed samples, in seconds.
    #[must_use]
    pub fn time_s(&self) -> f64 {
        self.measurement.median_s
    }

    /// Achieved throughput, in FLOP/s.
    #[must_use]
    pub fn achieved_flop_per_s(&self) -> f64 {
        self.flops / self.time_s()
    }

    /// Achieved DRAM bandwidth, in bytes/s.
    #[must_use]
    pub fn achieved_bytes_per_s(&self) -> f64 {
        self.bytes / self.time_s()
    }

    /// Arithmetic intensity of what ran, in FLOP/byte.
    #[must_use]
    pub fn arithmetic_intensity(&self) -> f64 {
        self.flops / self.bytes
    }
}

/// The prediction of an operator as a point beside a measurement, in base units: what was predicted and the
/// figures a roofline chart and the endpoint's answers show.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictedPoint {
    /// Display label, e.g. `GEMV 1x4096x4096 [FP16]`.
    pub label: String,
    /// Shape label of the operator, e.g. `1x4096x4096`.
    pub shape: String,
    /// Kind of the operator.
    pub kind: OpKind,
    /// Weight, activation and output precisions.
    pub operands: OperandPrecisions,
    /// The format the point is labelled with: the compute precision, a weight-only GEMM's weight format, or
    /// the precision of the measured point it pairs with.
    pub precision: Precision,
    /// Arithmetic intensity, in FLOP/byte.
    pub arithmetic_intensity: f64,
    /// Attainable throughput, in FLOP/s.
    pub attainable_flop_per_s: f64,
    /// Predicted time, in seconds.
    pub time_s: f64,
    /// DRAM traffic, in bytes.
    pub bytes: f64,
    /// Which roof limits it.
    pub bound: Bound,
    /// The ceilings it comes from.
    pub mode: Mode,
}

impl PredictedPoint {
    /// The point of `prediction` for `op`. A weight-only GEMM (W4A16) is labelled as one and carries its
    /// weight format, never its activations' (FP16) as if it were an FP16 GEMM.
    #[must_use]
    pub fn of(op: &Operator, prediction: &Prediction) -> PredictedPoint {
        let operands = op.precisions;
        let (precision, label) = if operands.is_weight_only() {
            (
                operands.weight,
                format!(
                    "{} [{} weight-only: {} weights, {} activations]",
                    op.name,
                    operands.width_label(),
                    operands.weight,
                    operands.activation
                ),
            )
        } else {
            let precision = operands.compute();
            (precision, format!("{} [{precision}]", op.name))
        };
        PredictedPoint {
            label,
            shape: op.shape.clone(),
            kind: op.kind,
            operands,
            precision,
            arithmetic_intensity: prediction.arithmetic_intensity,
            attainable_flop_per_s: prediction.attainable_flop_per_s,
            time_s: prediction.time_s,
            bytes: prediction.bytes,
            bound: prediction.bound,
            mode: prediction.mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_ran_keeps_its_kind_shape_and_work() {
        let measurement = |median_s| Measurement {
            median_s,
            ..Measurement::default()
        };
        // 64×256×128 FP16 GEMM: 2·64·256·128 = 4,194,304 FLOP; 2·(64·128 + 128·256 + 64·256) = 114,688 B.
        let gemm = Operator::gemm(64, 256, 128, Precision::Fp16.into()).unwrap();
        let p = MeasuredPoint::of_operator(&gemm, Precision::Fp16, "", measurement(1e-6));
        assert_eq!(
            (p.op.kind(), p.op.shape_label().as_str()),
            (OpKind::Gemm, "64x256x128")
        );
        assert_eq!((p.flops, p.bytes), (4_194_304.0, 114_688.0));
        assert!((p.achieved_flop_per_s() - 4.194_304e12).abs() < 1.0);
        assert!((p.arithmetic_intensity() - 4_194_304.0 / 114_688.0).abs() < 1e-12);
        // Batched GEMMs (MoE experts) are no plain matmul: they keep their kind and label.
        let experts = Operator::batched_gemm(8, 4, 16, 32, Precision::Bf16.into()).unwrap();
        let p = MeasuredPoint::of_operator(&experts, Precision::Bf16, "", measurement(1e-6));
        assert_eq!(
            p.op,
            MeasuredOp::Other {
                kind: OpKind::BatchedGemm,
                shape: "8x4x16x32".into()
            }
        );
        assert_eq!(p.op.kind(), OpKind::BatchedGemm);
    }
}
