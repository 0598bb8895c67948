//! The binary embeds roofline-cli's prediction subcommands (tested in full in `core/cli/tests`): the
//! measuring subcommands' own outputs are inputs of the embedded `predict --spec` and `validate`.

use crate::common::run_binary;

/// Stdout of a run that must succeed, as JSON.
fn json(args: &[&str]) -> serde_json::Value {
    let out = run_binary(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn the_fake_calibration_and_bench_feed_the_embedded_predict_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let calibration = json(&[
        "calibrate",
        "--backend",
        "fake",
        "--hardware",
        "h100_sxm",
        "--json",
        "--precisions",
        "FP16",
        "--data-dir",
        data,
    ]);
    // The fake GEMV runs at exactly its bytes over the fake's copy bandwidth: no overhead.
    assert_eq!(calibration["kernel_overhead"]["shape"], "1x2048x2048");
    let overhead_s = |field: &str| calibration[field]["kernel_overhead_s"].as_f64().unwrap();
    assert!(overhead_s("kernel_overhead").abs() < 1e-12);
    // Vector kernels have their own figure: a one-row RMSNorm of 256 FP32 elements (2 KB), also exactly its
    // bytes over the copy bandwidth on the fake.
    assert_eq!(calibration["vector_kernel_overhead"]["shape"], "256");
    assert!(overhead_s("vector_kernel_overhead").abs() < 1e-12);
    assert_eq!(calibration["spec"]["kernel_overhead_s"], 0.0);
    // 2 × 256 MB copied at the fake's 1 TB/s.
    let bandwidth = calibration["bandwidth_bytes_per_s"].as_f64().unwrap();
    assert!((bandwidth - 1e12).abs() < 1e-3, "{bandwidth}");
    let calibrated = dir.path().join("calibration.json");
    std::fs::write(&calibrated, calibration.to_string()).unwrap();
    let calibrated = calibrated.to_str().unwrap();

    let predicted = json(&[
        "predict",
        "--model",
        "llama-3.1-8b",
        "--config",
        "fp16",
        "--json",
        "--spec",
        calibrated,
    ]);
    assert_eq!(predicted["mode"], "calibrated");
    assert_eq!(predicted["hardware"], "h100_sxm_measured");

    // The fake FP16 GEMV 1x4096x4096 moves 33,570,816 B: 33.57 µs at 1 TB/s, which the calibrated spec
    // predicts exactly.
    let bench = run_binary(&[
        "bench",
        "--backend",
        "fake",
        "--json",
        "--no-store",
        "--shapes",
        "1x4096x4096",
        "--precisions",
        "FP16",
    ]);
    assert!(bench.status.success());
    let measured = dir.path().join("bench.json");
    std::fs::write(&measured, bench.stdout).unwrap();
    let validated = json(&[
        "validate",
        "--hardware",
        "h100_sxm",
        "--measured",
        measured.to_str().unwrap(),
        "--calibration",
        calibrated,
        "--json",
    ]);
    let row = &validated["rows"][0];
    assert!(
        (row["measured_s"].as_f64().unwrap() - 33.570_816e-6).abs() < 1e-12,
        "{row}"
    );
    assert!(
        row["calibrated"]["error_pct"].as_f64().unwrap().abs() < 0.5,
        "{row}"
    );
}
