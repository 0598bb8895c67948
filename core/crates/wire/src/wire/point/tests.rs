//! Tests of the wire point: the seed's spelling, the conversions to and from the domain points, exact both
//! ways, and finite numbers for any prediction.

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
    let back = RooflinePoint::from(&point);
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
    let json = serde_json::to_string(&RooflinePoint::from(&point)).unwrap();
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
        serde_json::to_value(RooflinePoint::from(&point)).unwrap()["activation_quantization"],
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

/// `point` on the wire, read back and written again: the JSON both times.
fn measured_twice(point: &MeasuredPoint) -> (String, String) {
    let json = serde_json::to_string(&RooflinePoint::from(point)).unwrap();
    let read = MeasuredPoint::from(&serde_json::from_str::<RooflinePoint>(&json).unwrap());
    (json, serde_json::to_string(&RooflinePoint::from(&read)).unwrap())
}

#[test]
fn a_point_of_an_older_record_reads_as_the_figures_say() {
    // The H100 GEMV was written by an older endpoint: its FLOPs and bytes are the whole numbers of the
    // operator, and the point it reads as writes the record's figures again.
    let wire: RooflinePoint = serde_json::from_str(H100_GEMV).unwrap();
    let point = MeasuredPoint::from(&wire);
    assert_eq!((point.flops, point.bytes), (33_554_432.0, 33_570_816.0));
    assert_eq!(point.bound, Some(Bound::Memory));
    let (json, again) = measured_twice(&point);
    assert_eq!(json, again);
}

#[test]
fn predictions_read_back_as_the_point_they_were() {
    // An H100 W4A16 GEMV: a weight-only label, its weight format, reference ceilings.
    let h100 = roofline_base::hardware::find_hardware("h100_sxm")
        .unwrap()
        .reference()
        .unwrap();
    let op = Operator::gemv(4096, 4096, OperandPrecisions::W4A16_INT4).unwrap();
    let predicted = PredictedPoint::of(&op, &roofline_analysis::roofline::predict(&h100, &op).unwrap());
    assert_eq!(predicted.precision, Precision::Int4G128);
    let json = serde_json::to_string(&RooflinePoint::from(&predicted)).unwrap();
    let read = PredictedPoint::from(&serde_json::from_str::<RooflinePoint>(&json).unwrap());
    assert_eq!(read, predicted);
    assert_eq!(serde_json::to_string(&RooflinePoint::from(&read)).unwrap(), json);
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

    /// Any measured point goes on the wire and reads back as the same wire point, to the bit: whole-number
    /// work (an operator's) or not, times from 100 ns to 100 s.
    #[test]
    fn measured_points_read_back_to_the_bit(
        flops in 1.0f64..1e16,
        bytes in 1.0f64..1e13,
        whole in proptest::prelude::any::<bool>(),
        exp in -7.0f64..2.0,
        bound in proptest::prelude::prop::sample::select(vec![None, Some(Bound::Memory), Some(Bound::Compute)]),
    ) {
        let (flops, bytes) = if whole { (flops.round(), bytes.round()) } else { (flops, bytes) };
        let op = Operator::gemm(64, 256, 128, Precision::Fp16.into()).unwrap();
        let measurement = Measurement { median_s: 10f64.powf(exp), ..Measurement::default() };
        let point = MeasuredPoint {
            flops, bytes, bound, ..MeasuredPoint::of_operator(&op, Precision::Fp16, "", measurement)
        };
        let (json, again) = measured_twice(&point);
        proptest::prop_assert_eq!(&json, &again);
        let read = MeasuredPoint::from(&serde_json::from_str::<RooflinePoint>(&json).unwrap());
        if whole && flops < 1e14 && bytes < 1e14 {
            // Whole numbers read back as themselves (below 1e14, where the next one has other figures).
            proptest::prop_assert_eq!((read.flops, read.bytes), (flops, bytes));
        }
    }

    /// Any prediction of a valid spec reads back as the point it was.
    #[test]
    fn predicted_points_read_back_as_themselves(
        spec in ranged_spec(),
        dims in proptest::prelude::prop::array::uniform3(1u64..=65536),
        precision in proptest::prelude::prop::sample::select(Precision::ALL.to_vec()),
    ) {
        let [m, n, k] = dims;
        let op = Operator::gemm(m, n, k, precision.into()).unwrap();
        if let Ok(prediction) = roofline_analysis::roofline::predict(&spec, &op) {
            let predicted = PredictedPoint::of(&op, &prediction);
            let json = serde_json::to_string(&RooflinePoint::from(&predicted)).unwrap();
            let read = PredictedPoint::from(&serde_json::from_str::<RooflinePoint>(&json).unwrap());
            proptest::prop_assert_eq!(serde_json::to_string(&RooflinePoint::from(&read)).unwrap(), json);
        }
    }
}
