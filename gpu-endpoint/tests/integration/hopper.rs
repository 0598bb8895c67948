//! A Hopper GPU (the fake shaped like an H200, `--backend fake-h200`: sm_90, INT4 only as the W4A16 GEMV):
//! `calibrate` with its defaults succeeds with INT4 as a weight-only ceiling, and the INT4 W4A16 GEMV it
//! measures is predicted by `analyze`, `bench` and `validate`, as the weight-only kernel it is.

use crate::common::{run_binary, state_with};
use actix_web::App;
use actix_web::test as actix_test;
use gpu_endpoint::backend::select::{BackendChoice, BackendOptions, select};
use gpu_endpoint::http::app::configure;
use roofline_core::wire::{AnalyzeResponse, Bottleneck, CalibrationResult};
use roofline_core::{ComputePath, GemmFamily, Mode, OperandPrecisions, Precision};
use serde_json::json;

/// Bytes of the W4A16 GEMV 1×4096×4096: 4096² weights × 4.125 bits (INT4 and an FP16 scale per 128) / 8 =
/// 8 650 752, plus x and y, 4096 FP16 each: 8 667 136 B.
const W4A16_BYTES: f64 = 8_667_136.0;

/// Stdout of a binary run that must succeed.
fn stdout_of(args: &[&str]) -> String {
    let out = run_binary(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[actix_web::test]
async fn analyze_predicts_the_int4_w4a16_gemv_it_measures_on_hopper() {
    let selected = select(BackendChoice::FakeH200, &BackendOptions::default()).unwrap();
    let (state, _dir) = state_with(selected, None);
    let app = actix_test::init_service(App::new().configure(configure(state.clone()))).await;
    let req = actix_test::TestRequest::post()
        .uri("/api/analyze?hardware_key=h200_sxm")
        .set_json(json!({"M":1,"N":4096,"K":4096,"precision":"INT4"}));
    let resp: AnalyzeResponse = actix_test::call_and_read_body_json(&app, req.to_request()).await;
    assert!(resp.failed.is_empty(), "{:?}", resp.failed);
    let [predicted] = resp.simulated.as_slice() else {
        panic!("one prediction: {:?}", resp.simulated)
    };
    assert_eq!(predicted.precision, Precision::Int4);
    assert_eq!(predicted.operands, Some(OperandPrecisions::W4A16_INT4));
    assert_eq!(predicted.mode, Some(Mode::Reference));
    assert!(
        predicted.label.contains("W4A16 weight-only"),
        "{}",
        predicted.label
    );
    // Reference mode on h200_sxm (core's test derives it): the H100's measured weight-only small-M DRAM
    // fraction 0.495 × 0.81 / 0.899 of 4.8 TB/s, plus the 6.7 µs weight-only floor: 10.749 µs.
    let reference_us = (W4A16_BYTES / (4.8e12 * 0.495 * 0.81 / 0.899) + 6.7e-6) * 1e6;
    assert!(
        (predicted.time_us - reference_us).abs() < 1e-3,
        "predicted {} µs, hand-derived {reference_us} µs",
        predicted.time_us
    );
    // The fake H200 "measures" the W4A16 GEMV at its bytes over 1 TB/s, beside that prediction's bound.
    let [measured] = resp.measured.as_slice() else {
        panic!("one measurement: {:?}", resp.measured)
    };
    assert_eq!(measured.precision, Precision::Int4);
    assert_eq!(measured.operands, Some(OperandPrecisions::W4A16_INT4));
    assert_eq!(measured.bottleneck, Bottleneck::Memory);
    assert!((measured.time_us - W4A16_BYTES / 1e12 * 1e6).abs() < 1e-9);
    assert!(measured.label.contains("W4A16-dequant"), "{}", measured.label);

    // Calibrating with the defaults succeeds: INT4 is a weight-only bandwidth, not a peak.
    let req = actix_test::TestRequest::post().uri("/api/calibrate");
    let result: CalibrationResult = actix_test::call_and_read_body_json(&app, req.to_request()).await;
    assert_eq!(result.spec.key, "h200_sxm_measured");
    assert!(result.failed.is_empty(), "{:?}", result.failed);
    assert!(result.peaks.iter().all(|p| p.precision != Precision::Int4));
    assert_eq!(result.weight_only.len(), 1);
    let bandwidth = result.weight_only[0].bandwidth_bytes_per_s;
    assert!((bandwidth - 1e12).abs() < 1.0, "{bandwidth}");
    let ceiling = result
        .spec
        .gemm_family(GemmFamily::WeightOnly, ComputePath::Fp16)
        .expect("a calibrated weight-only ceiling");
    assert_eq!(ceiling.bandwidth_bytes_per_s, bandwidth);
}

#[test]
fn calibrate_with_defaults_on_a_hopper_then_bench_and_validate_int4() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let base = [
        "calibrate",
        "--backend",
        "fake-h200",
        "--hardware",
        "h200_sxm",
        "--data-dir",
        data,
    ];
    let json_out = stdout_of(&[&base[..], &["--json"]].concat());
    let calibration: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(calibration["spec"]["key"], "h200_sxm_measured");
    assert_eq!(calibration["failed"], json!([]));
    let weight_only = &calibration["weight_only"][0];
    assert_eq!(weight_only["precision"], "INT4");
    assert_eq!(weight_only["operands"]["weight"], "INT4_G128");
    assert_eq!(weight_only["shape"], "1x4096x4096");
    let peaks: Vec<&str> = calibration["peaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["precision"].as_str().unwrap())
        .collect();
    assert_eq!(
        peaks,
        ["FP32", "TF32", "FP16", "BF16", "FP8_E4M3", "FP8_E5M2", "INT8"]
    );
    // The text report says what INT4 calibrated and each peak's spread.
    let text = stdout_of(&base);
    assert!(
        text.contains("W4A16 weight-only GEMV 1x4096x4096 streams")
            && text.contains("the FP16 weight-only ceiling, no compute peak for INT4")
            && text.contains("runs within 0.0 %"),
        "{text}"
    );
    let calibrated = dir.path().join("calibration.json");
    std::fs::write(&calibrated, json_out).unwrap();

    let bench = [
        "bench",
        "--backend",
        "fake-h200",
        "--json",
        "--no-store",
        "--shapes",
        "1x4096x4096",
        "--precisions",
        "INT4",
    ];
    let measured = dir.path().join("bench.json");
    std::fs::write(&measured, stdout_of(&bench)).unwrap();
    let validate = [
        "validate",
        "--hardware",
        "h200_sxm",
        "--measured",
        measured.to_str().unwrap(),
        "--calibration",
        calibrated.to_str().unwrap(),
        "--json",
    ];
    let validated: serde_json::Value = serde_json::from_str(&stdout_of(&validate)).unwrap();
    let row = &validated["rows"][0];
    assert_eq!(row["precision"], "INT4");
    // Datasheet: the W4A16 bytes at 4.8 TB/s; the fake took them at 1 TB/s, (4.8 − 1) / 1 = 380 % slower.
    let error = |mode: &str| {
        row[mode]["error_pct"]
            .as_f64()
            .unwrap_or_else(|| panic!("{mode}: {row}"))
    };
    assert!((error("datasheet") - 380.0).abs() < 1e-6, "{row}");
    assert!(error("reference").is_finite(), "{row}");
    // The calibrated spec's weight-only ceiling is the fake's 1 TB/s with no overhead: the point exactly.
    assert!(error("calibrated").abs() < 1e-6, "{row}");
}
