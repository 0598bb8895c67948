//! One point on the roofline ([`RooflinePoint`], the seed-compatible shape in µs, TFLOP/s and an `MxNxK`
//! label) and its conversions: from a prediction, and to and from the domain [`MeasuredPoint`] (the only place
//! those units appear).

use serde::{Deserialize, Serialize};

use roofline_analysis::measurement::{MeasuredOp, MeasuredPoint, Measurement};
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
    /// A simulated point from a prediction. A weight-only GEMM (W4A16) is labelled as one and carries its
    /// weight format, never its activations' (FP16) as if it were an FP16 GEMM.
    #[must_use]
    pub fn simulated(op: &Operator, prediction: &Prediction) -> RooflinePoint {
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
        RooflinePoint {
            ai: prediction.arithmetic_intensity,
            tflops: prediction.attainable_flop_per_s / TERA,
            time_us: prediction.time_s / MICRO,
            precision,
            shape: op.shape.clone(),
            kind: Some(op.kind),
            label,
            source: PointSource::Simulated,
            bottleneck: prediction.bound.into(),
            bandwidth_gb_s: Some(prediction.bytes / prediction.time_s / 1e9),
            operands: Some(op.precisions),
            measurement: None,
            mode: Some(prediction.mode),
            activation_quantization: None,
        }
    }

    /// The wire point of a measurement, with the bound of its prediction (`unknown` without one): time in
    /// µs, achieved TFLOP/s and GB/s, the `MxNxK` label of a matmul.
    #[must_use]
    pub fn measured(point: &MeasuredPoint, bottleneck: Bottleneck) -> RooflinePoint {
        RooflinePoint {
            ai: point.arithmetic_intensity(),
            tflops: point.achieved_flop_per_s() / TERA,
            time_us: point.time_s() / MICRO,
            precision: point.precision,
            shape: point.op.shape_label(),
            kind: Some(point.op.kind()),
            label: point.label.clone(),
            source: PointSource::Measured,
            bottleneck,
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
    /// `precision` with its default output where the record does not list them; FLOPs and bytes come from
    /// the achieved TFLOP/s and GB/s (or the arithmetic intensity) times the time; a record without a
    /// measurement (a simulated point, an older import) has only its `time_us` as the median and no device.
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
        let time_s = p.time_us * MICRO;
        let flops = p.tflops * TERA * time_s;
        let bytes = match p.bandwidth_gb_s {
            Some(gb_s) => gb_s * GIGA * time_s,
            None if p.ai > 0.0 => flops / p.ai,
            None => 0.0,
        };
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bottlenecks_keep_the_original_spelling_and_read_unknown_values() {
        for (b, text) in [
            (Bottleneck::Memory, "\"memory\""),
            (Bottleneck::Compute, "\"compute\""),
            (Bottleneck::Unknown, "\"unknown\""),
        ] {
            assert_eq!(serde_json::to_string(&b).unwrap(), text);
            assert_eq!(serde_json::from_str::<Bottleneck>(text).unwrap(), b);
        }
        // A value from a newer endpoint is not an error: it reads as unknown.
        assert_eq!(
            serde_json::from_str::<Bottleneck>("\"l2\"").unwrap(),
            Bottleneck::Unknown
        );
        assert_eq!(Bottleneck::from(Bound::Compute), Bottleneck::Compute);
    }

    /// A measured point as `gpu-endpoint bench --json` wrote it (docs/validation/data/h100-sxm/ours.json, the
    /// first point): an H100 SXM FP16 GEMV through cuBLASLt.
    const H100_GEMV: &str = r#"{"ai":0.9995119570522206,"tflops":1.913459917596005,"time_us":17.535999417304993,"precision":"FP16","shape":"1x4096x4096","label":"GEMV 1x4096x4096 [FP16] measured","source":"measured","bottleneck":"memory","bandwidth_gb_s":1914.3942241963935,"operands":{"weight":"FP16","activation":"FP16","output":"FP16"},"measurement":{"backend":"cuda","library":"cuBLASLt 13.1.0","kernel":"cublasLtMatmul FP16, FP32 accumulate algo id 66 (best of 8 heuristic results, rank 1), TN, compute CUBLAS_COMPUTE_32F","device_name":"NVIDIA H100 80GB HBM3","versions":[["endpoint","0.1.0"],["driver","580.159.04"]],"median_s":1.753599941730499e-5,"p10_s":1.7376000061631202e-5,"p90_s":5.503999814391136e-5,"samples":1000,"l2_flushed":true,"verified":true,"sm_clock_mhz":1980.0,"power_w":158.879,"temperature_c":39.0,"throttle_reasons":[],"timestamp_unix_s":1795426063.3701894}}"#;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    }

    #[test]
    fn todays_json_reads_and_writes_back_unchanged() {
        let point: RooflinePoint = serde_json::from_str(H100_GEMV).unwrap();
        let written: serde_json::Value = serde_json::to_value(&point).unwrap();
        assert_eq!(
            written,
            serde_json::from_str::<serde_json::Value>(H100_GEMV).unwrap()
        );
    }

    #[test]
    fn a_wire_point_is_a_measured_matmul_in_base_units() {
        let wire: RooflinePoint = serde_json::from_str(H100_GEMV).unwrap();
        let point = MeasuredPoint::from(&wire);
        assert_eq!(
            point.op,
            MeasuredOp::Matmul(GemmShape {
                batch: 1,
                m: 1,
                n: 4096,
                k: 4096
            })
        );
        assert_eq!(point.op.kind(), OpKind::Gemv);
        assert_eq!(point.time_s(), 1.753599941730499e-5);
        // y[4096] = W[4096, 4096] · x[4096] in FP16: 2·4096² = 33,554,432 FLOP and 33,570,816 B.
        assert!(
            (point.flops - 33_554_432.0).abs() < 1e-3 * 33_554_432.0,
            "{}",
            point.flops
        );
        assert!(
            (point.bytes - 33_570_816.0).abs() < 1e-3 * 33_570_816.0,
            "{}",
            point.bytes
        );
        assert!(close(point.achieved_flop_per_s(), 1.913459917596005e12));
        assert_eq!(point.measurement.device_name, "NVIDIA H100 80GB HBM3");
        // And back: the same point on the wire, up to the last bit of the unit conversions.
        let back = RooflinePoint::measured(&point, Bottleneck::Memory);
        assert!(close(back.time_us, wire.time_us) && close(back.tflops, wire.tflops));
        assert!(close(back.ai, wire.ai));
        assert!(close(back.bandwidth_gb_s.unwrap(), wire.bandwidth_gb_s.unwrap()));
        assert_eq!(
            (
                &back.shape,
                &back.label,
                back.precision,
                back.operands,
                &back.measurement
            ),
            (
                &wire.shape,
                &wire.label,
                wire.precision,
                wire.operands,
                &wire.measurement
            )
        );
        assert_eq!(
            (back.kind, back.source, back.mode),
            (Some(OpKind::Gemv), PointSource::Measured, None)
        );
    }

    #[test]
    fn measured_points_survive_the_wire() {
        // A W4A16 GEMV: INT4 group-128 weights, FP16 activations, labelled with its weight format.
        let operands = OperandPrecisions {
            weight: Precision::Int4G128,
            activation: Precision::Fp16,
            output: Precision::Fp16,
        };
        let op = Operator::gemv(4096, 4096, operands).unwrap();
        let measurement = Measurement {
            median_s: 12e-6,
            device_name: "NVIDIA H100 80GB HBM3".into(),
            ..Measurement::default()
        };
        let point = MeasuredPoint::of_operator(&op, Precision::Int4G128, " W4A16-dequant", measurement);
        assert_eq!(point.label, "GEMV 1x4096x4096 [INT4_G128 W4A16-dequant] measured");
        let json = serde_json::to_string(&RooflinePoint::measured(&point, Bottleneck::Memory)).unwrap();
        let back = MeasuredPoint::from(&serde_json::from_str::<RooflinePoint>(&json).unwrap());
        assert!(close(back.flops, point.flops) && close(back.bytes, point.bytes));
        assert_eq!(
            (
                back.op,
                back.operands,
                back.precision,
                back.label,
                back.measurement
            ),
            (
                point.op,
                point.operands,
                point.precision,
                point.label,
                point.measurement
            )
        );
    }

    #[test]
    fn other_operators_and_older_records_keep_what_they_say() {
        let wire: RooflinePoint = serde_json::from_str(H100_GEMV).unwrap();
        // A model step's attention over 32 heads × 256 cached tokens × 64 dims: its label reads like a matmul
        // shape, but it is no GEMM.
        let attention = RooflinePoint {
            kind: Some(OpKind::Attention),
            shape: "32x256x64".into(),
            ..wire.clone()
        };
        assert_eq!(
            MeasuredPoint::from(&attention).op,
            MeasuredOp::Other {
                kind: OpKind::Attention,
                shape: "32x256x64".into()
            }
        );
        // An older record: no kind, no operands, no measurement: a matmul in `precision`, timed by `time_us`.
        let old = RooflinePoint {
            kind: None,
            operands: None,
            measurement: None,
            precision: Precision::Fp8E4M3,
            ..wire
        };
        let point = MeasuredPoint::from(&old);
        assert_eq!(point.op.kind(), OpKind::Gemv);
        assert_eq!(point.operands, OperandPrecisions::from(Precision::Fp8E4M3));
        assert!(close(point.time_s(), old.time_us * 1e-6));
        assert_eq!(point.measurement.device_name, "");
    }

    #[test]
    fn a_point_says_whether_its_time_includes_the_activation_quantization() {
        // Absent in every older record (H100_GEMV): the GEMM alone.
        let wire: RooflinePoint = serde_json::from_str(H100_GEMV).unwrap();
        assert_eq!(wire.activation_quantization, None);
        assert_eq!(MeasuredPoint::from(&wire).activation_quantization, None);
        // A framework's FP8 Linear: the time includes the dynamic per-tensor quantization of its input.
        let mut json: serde_json::Value = serde_json::from_str(H100_GEMV).unwrap();
        json["activation_quantization"] = "dynamic_per_tensor".into();
        let linear: RooflinePoint = serde_json::from_value(json.clone()).unwrap();
        let point = MeasuredPoint::from(&linear);
        assert_eq!(
            point.activation_quantization,
            Some(ActivationScale::DynamicPerTensor)
        );
        assert_eq!(
            serde_json::to_value(RooflinePoint::measured(&point, Bottleneck::Memory)).unwrap()["activation_quantization"],
            json["activation_quantization"]
        );
    }

    /// Whether `value` holds a JSON `null` anywhere (what serde_json writes for a non-finite `f64`).
    fn has_null(value: &serde_json::Value) -> bool {
        match value {
            serde_json::Value::Null => true,
            serde_json::Value::Array(items) => items.iter().any(has_null),
            serde_json::Value::Object(fields) => fields.values().any(has_null),
            _ => false,
        }
    }

    /// A valid spec anywhere in the physical ranges: a catalog device whose bandwidth, peaks, memory and
    /// kernel overhead are replaced by log-uniform draws inside `HardwareSpec::check`'s ranges.
    fn ranged_spec() -> impl proptest::strategy::Strategy<Value = roofline_base::hardware::HardwareSpec> {
        use proptest::prelude::*;
        (
            prop::sample::select(roofline_base::hardware::catalog()),
            6.0f64..=15.0,
            prop::collection::vec(6.0f64..=19.0, 16),
            6.0f64..=15.0,
            0.0f64..1.0,
        )
            .prop_map(|(mut spec, bandwidth_exp, peak_exps, memory_exp, overhead_s)| {
                spec.dram_bandwidth_bytes_per_s = 10f64.powf(bandwidth_exp);
                for (peak, exp) in spec.peaks.iter_mut().zip(peak_exps) {
                    peak.dense_flop_per_s = 10f64.powf(exp);
                    peak.sparse_flop_per_s = None;
                    peak.kernel_overhead_s = Some(overhead_s);
                }
                spec.memory_bytes = 10f64.powf(memory_exp);
                spec.kernel_overhead_s = overhead_s;
                spec.interconnect = None;
                spec
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Every predicted point of a random valid spec goes on the wire with finite numbers: no f64 field
        /// serializes as `null`, whatever the operator's size (GEMM dimensions up to core's limit, attention,
        /// a norm) and whatever the ceilings inside the physical ranges.
        #[test]
        fn predictions_of_any_valid_spec_serialize_without_null(
            spec in ranged_spec(),
            dims in proptest::prelude::prop::array::uniform3(1u64..=roofline_analysis::ops::MAX_DIM),
            attention in proptest::prelude::prop::array::uniform4(1u64..=4096),
            precision in proptest::prelude::prop::sample::select(Precision::ALL.to_vec()),
        ) {
            spec.check().unwrap();
            let [m, n, k] = dims;
            let [batch, query_len, kv_len, heads] = attention;
            let shape = roofline_analysis::ops::AttentionShape {
                batch, query_len: query_len.min(kv_len), kv_len, heads, kv_heads: 1, head_dim: 128,
                causal: true, fused: true,
                shared_kv: false, window: None,
            };
            let mut ops = vec![Operator::gemm(m, n, k, precision.into()).unwrap()];
            ops.extend(Operator::attention(&shape, precision.into()).unwrap());
            ops.push(Operator::norm(roofline_analysis::ops::Norm::RmsNorm, m, n, precision).unwrap());
            for op in ops {
                // A path the device lacks is an error, never a number.
                if let Ok(prediction) = roofline_analysis::roofline::predict(&spec, &op) {
                    let json = serde_json::to_value(RooflinePoint::simulated(&op, &prediction)).unwrap();
                    proptest::prop_assert!(!has_null(&json), "{json}");
                }
            }
        }
    }
}
