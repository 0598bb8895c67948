//! `roofline predict`, `advise` and `validate`: the offline command line, checked against hand-derived
//! values. The measured inputs of `validate` and `predict --spec` are what `gpu-endpoint bench --json` and
//! `calibrate --json` print for its fake device, built here from core's wire types.

use roofline_core::hardware::Calibration;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::{
    BackendKind, BenchReport, BenchmarkPointEvent, CalibratedPeak, CalibrationResult, Measurement,
    RooflinePoint,
};
use roofline_core::{Operator, Precision, find_hardware};

use crate::common::{roofline as run, stdout};

/// gpu-endpoint's fake device (`gpu-endpoint/src/backend/fake.rs`): 1 TB/s of copy bandwidth, 100 TFLOP/s on
/// every path, every kernel exactly max(FLOPs / peak, bytes / bandwidth), so its calibration measures no
/// per-kernel overhead.
const FAKE_BANDWIDTH: f64 = 1e12;
/// The fake device's peak, in FLOP/s.
const FAKE_PEAK: f64 = 100e12;
/// The fake device's name.
const FAKE_NAME: &str = "Fake Device (tests)";

/// A record of the fake device taking `time_s`.
fn fake_measurement(kernel: &str, time_s: f64) -> Measurement {
    Measurement {
        backend: BackendKind::Fake,
        library: "fake".into(),
        kernel: kernel.into(),
        device_name: FAKE_NAME.into(),
        median_s: time_s,
        p10_s: time_s,
        p90_s: time_s,
        samples: 10,
        ..Measurement::default()
    }
}

/// `gpu-endpoint calibrate --backend fake --hardware h100_sxm --precisions P --json` as JSON: the H100 SXM
/// calibrated at the fake's bandwidth (a 2 × 256 MB copy in 512 µs), without kernel overhead, `precision` at
/// the fake's peak (a 4096³ GEMM).
fn fake_h100_calibration(precision: Precision) -> String {
    let copy_bytes = 2.0 * 256e6;
    let gemm = Operator::matmul(4096, 4096, 4096, precision.into()).unwrap();
    let spec = find_hardware("h100_sxm")
        .unwrap()
        .calibrated(&Calibration {
            device_name: FAKE_NAME.into(),
            dram_bandwidth_bytes_per_s: FAKE_BANDWIDTH,
            kernel_overhead_s: 0.0,
            vector_kernel_overhead_s: Some(0.0),
            peaks: vec![(precision.compute_path(), FAKE_PEAK)],
            weight_only: Vec::new(),
            source: "the fake device of gpu-endpoint's tests".into(),
            quality: None,
        })
        .unwrap();
    let result = CalibrationResult {
        bandwidth_bytes_per_s: FAKE_BANDWIDTH,
        bandwidth_measurement: fake_measurement("fake-copy", copy_bytes / FAKE_BANDWIDTH),
        peaks: vec![CalibratedPeak {
            precision,
            achieved_flop_per_s: FAKE_PEAK,
            shape: gemm.shape.clone(),
            measurement: fake_measurement("fake-gemm", gemm.flops / FAKE_PEAK),
        }],
        weight_only: Vec::new(),
        kernel_overhead: None,
        vector_kernel_overhead: None,
        failed: Vec::new(),
        spec,
    };
    serde_json::to_string(&result).unwrap()
}

/// `gpu-endpoint bench --backend fake --json --shapes 1x4096x4096 --precisions FP16`: the GEMV moves
/// 4096·4096·2 + 4096·2 + 4096·2 = 33,570,816 B, so the fake "takes" 33.57 µs.
fn fake_fp16_gemv_bench() -> String {
    let gemv = Operator::matmul(1, 4096, 4096, Precision::Fp16.into()).unwrap();
    assert_eq!(gemv.bytes(), 33_570_816.0);
    let measured = MeasuredPoint::of_operator(
        &gemv,
        Precision::Fp16,
        "",
        fake_measurement("fake-gemv", gemv.bytes() / FAKE_BANDWIDTH),
    );
    let report = BenchReport {
        points: vec![BenchmarkPointEvent {
            job_id: "cli-0".into(),
            index: 0,
            total: 1,
            point: RooflinePoint::from(&measured),
            predicted: None,
            error_pct: None,
        }],
        failed: Vec::new(),
    };
    serde_json::to_string(&report).unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout(args)).expect("JSON on stdout")
}

#[test]
fn h100_llama_8b_bf16_decode_is_bounded_by_weights_and_kv_over_bandwidth() {
    let mut args = vec!["predict", "--mode", "datasheet"];
    args.extend(LLAMA_DECODE);
    args.push("h100_sxm");
    let v = json(&args);
    // KV cache: 2 (K, V) · 32 layers · 8 KV heads · 128 head dim · 2 B · 4096 tokens = 536,870,912 B.
    assert_eq!(v["kv_cache_bytes"], 536_870_912.0);
    // Weights read per decode step (published config): per layer q, o 4096² + k, v 1024·4096 + gate, up, down
    // 3·14336·4096 + 2 norms · 4096 = 218,112,000 params; · 32 layers + untied lm_head 128,256·4096 + final
    // norm 4096 = 7,504,924,672 params (the embedding table is gathered, one row per token) · 2 B.
    let weights_read = 7_504_924_672.0 * 2.0;
    let floor_s = (weights_read + 536_870_912.0) / 3.35e12;
    let tpot = v["tpot_s"].as_f64().unwrap();
    assert!(
        tpot >= floor_s * (1.0 - 1e-9),
        "TPOT {tpot} below the bandwidth floor {floor_s}"
    );
    assert!(
        tpot <= floor_s * 1.15,
        "TPOT {tpot} more than 15% above {floor_s}"
    );
    assert_eq!(v["ttft_s"], serde_json::Value::Null);
    assert!((v["tokens_per_s"].as_f64().unwrap() - 1.0 / tpot).abs() < 1e-9);
    assert_eq!(v["fits_in_memory"], true);
    let ops = v["ops"].as_array().unwrap();
    for field in ["name", "flops", "bytes", "time_s", "bound"] {
        assert!(ops.iter().all(|op| !op[field].is_null()), "every op has {field}");
    }
    // The step is the sum of per-operator times.
    let sum: f64 = ops
        .iter()
        .map(|op| op["time_s"].as_f64().unwrap() * op["count"].as_f64().unwrap())
        .sum();
    assert!((sum - tpot).abs() < 1e-12);
    assert_eq!(v["mode"], "datasheet");
}

/// Llama-3.1-8B BF16 decode, batch 1, context 4096 on an H100 SXM (the scenario above).
const LLAMA_DECODE: [&str; 12] = [
    "--model",
    "llama-3.1-8b",
    "--config",
    "bf16",
    "--phase",
    "decode",
    "--batch",
    "1",
    "--context",
    "4096",
    "--json",
    "--hardware",
];

#[test]
fn reference_mode_is_the_default_and_adds_what_real_engines_pay() {
    let mut args = vec!["predict"];
    args.extend(LLAMA_DECODE);
    args.push("h100_sxm");
    let v = json(&args);
    assert_eq!(v["mode"], "reference");
    // Bytes as above at 89.9 % of 3.35 TB/s, plus at least the 2 µs vector floor per kernel and one CUDA
    // graph launch (15 µs); matrix kernels pay 5 µs, so the sum stays below 5 µs per kernel.
    let bytes = 7_504_924_672.0 * 2.0 + 536_870_912.0;
    let kernels = v["kernel_launches"].as_f64().unwrap();
    let lower = bytes / (0.899 * 3.35e12) + kernels * 2e-6 + 15e-6;
    let upper = bytes / (0.899 * 3.35e12) * 1.01 + kernels * 5e-6 + 15e-6;
    let tpot = v["tpot_s"].as_f64().unwrap();
    assert!((lower..=upper).contains(&tpot), "{lower} <= {tpot} <= {upper}");
    assert_eq!(v["launch_overhead_s"], 15e-6);
    // Eager launches: 6.4 µs of host time per kernel bounds the step from below.
    args.extend(["--launch", "eager"]);
    let eager = json(&args);
    assert!(eager["tpot_s"].as_f64().unwrap() >= kernels * 6.4e-6);
}

#[test]
fn fp8_configs_quantize_activations_in_their_own_kernels() {
    let mut args = vec!["predict"];
    args.extend(LLAMA_DECODE);
    args.push("h100_sxm");
    let config = args.iter().position(|a| *a == "bf16").unwrap();
    args[config] = "fp8";
    let v = json(&args);
    let quantize: Vec<&serde_json::Value> = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["name"].as_str().unwrap().starts_with("quantize"))
        .collect();
    // One per linear input of a layer: attention in (4096), o_proj in (4096), FFN in (4096), down in (14336).
    assert_eq!(quantize.len(), 4);
    let down = quantize
        .iter()
        .find(|op| op["name"] == "quantize_down_in")
        .unwrap();
    // Read 14,336 FP16 values, write 14,336 FP8 values: 3 B per element.
    assert_eq!(down["bytes"], 14_336.0 * 3.0);
    assert_eq!(down["count"], 32);
}

#[test]
fn a_calibrate_output_is_a_spec_for_calibrated_predictions() {
    let dir = tempfile::tempdir().unwrap();
    let calibration = fake_h100_calibration(Precision::Bf16);
    let path = dir.path().join("calibration.json");
    std::fs::write(&path, calibration).unwrap();
    let mut args = vec!["predict"];
    args.extend(&LLAMA_DECODE[..11]);
    args.extend(["--spec", path.to_str().unwrap()]);
    let v = json(&args);
    // The fake device streams at 1 TB/s: TPOT at least the bytes over that.
    assert_eq!(v["mode"], "calibrated");
    assert_eq!(v["hardware"], "h100_sxm_measured");
    assert!(v["tpot_s"].as_f64().unwrap() >= (7_504_924_672.0 * 2.0 + 536_870_912.0) / 1e12);
    // A datasheet spec cannot give calibrated predictions: the error says how to get one.
    let mut args = vec!["predict", "--mode", "calibrated"];
    args.extend(LLAMA_DECODE);
    args.push("h100_sxm");
    let out = run(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("calibrate"));
}

#[test]
fn prefill_reports_ttft_and_batch_tokens_per_second() {
    let v = json(&[
        "predict",
        "--hardware",
        "gb10",
        "--model",
        "llama-3.2-1b",
        "--config",
        "nvfp4-w4a4",
        "--phase",
        "prefill",
        "--batch",
        "4",
        "--context",
        "512",
        "--json",
    ]);
    let ttft = v["ttft_s"].as_f64().unwrap();
    // Prefill throughput counts every prompt token of the batch: 4 · 512 / TTFT.
    assert!((v["tokens_per_s"].as_f64().unwrap() - 2048.0 / ttft).abs() < 1e-6 * 2048.0 / ttft);
    assert_eq!(v["tpot_s"], serde_json::Value::Null);
}

#[test]
fn advise_never_offers_fp8_or_fp4_compute_on_a100() {
    let v = json(&[
        "advise",
        "--hardware",
        "a100_sxm_80gb",
        "--model",
        "llama-3.1-8b",
        "--current",
        "bf16",
        "--json",
    ]);
    let candidates = v["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty());
    let configs = json(&["configs", "--json"]);
    let activations = |key: &str| {
        configs
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == key)
            .map(|c| c["activations"].as_str().unwrap().to_owned())
            .unwrap()
    };
    for c in candidates {
        let key = c["config"].as_str().unwrap();
        // Ampere has no FP8/FP6/FP4 matrix path: such weights only as weight-only storage (W4A16, W8A16).
        let a = activations(key);
        assert!(
            !["FP8", "FP6", "FP4", "MX"].iter().any(|f| a.contains(f)),
            "A100 offered {key} ({a})"
        );
        assert_ne!(key, "bf16", "the current config is never recommended back");
        for field in ["time_s", "speedup", "fits_in_memory"] {
            assert!(!c[field].is_null(), "{key} has {field}");
        }
    }
    let times: Vec<f64> = candidates.iter().map(|c| c["time_s"].as_f64().unwrap()).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "ranked fastest first: {times:?}"
    );
}

#[test]
fn unknown_keys_exit_2_listing_the_valid_ones() {
    for (args, valid) in [
        (
            vec![
                "predict",
                "--hardware",
                "h999",
                "--model",
                "llama-3.1-8b",
                "--config",
                "bf16",
            ],
            "h100_sxm",
        ),
        (
            vec![
                "predict",
                "--hardware",
                "gb10",
                "--model",
                "llama-9",
                "--config",
                "bf16",
            ],
            "llama-3.1-70b",
        ),
        (
            vec![
                "advise",
                "--hardware",
                "gb10",
                "--model",
                "llama-3.1-8b",
                "--current",
                "fp3",
            ],
            "nvfp4-w4a16",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(valid),
            "{args:?} stderr lists valid keys: {stderr}"
        );
    }
}

#[test]
fn a_config_the_device_cannot_run_is_refused_naming_the_architecture() {
    let out = run(&[
        "predict",
        "--hardware",
        "h100_sxm",
        "--model",
        "llama-3.1-8b",
        "--config",
        "nvfp4-w4a4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Hopper"));
}

#[test]
fn validate_predicts_saved_points_on_the_datasheet_and_the_calibrated_spec() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("bench.json");
    std::fs::write(&measured, fake_fp16_gemv_bench()).unwrap();
    // The calibration of the same fake device: its spec has the fake's 1 TB/s.
    let calibrated = dir.path().join("calibration.json");
    std::fs::write(&calibrated, fake_h100_calibration(Precision::Fp16)).unwrap();

    let v = json(&[
        "validate",
        "--hardware",
        "h100_sxm",
        "--measured",
        measured.to_str().unwrap(),
        "--calibration",
        calibrated.to_str().unwrap(),
        "--json",
    ]);
    let row = &v["rows"][0];
    assert_eq!(row["regime"], "GEMV");
    // H100 SXM datasheet: 33,570,816 B / 3.35e12 B/s = 10.021 µs; 33.571 / 10.021 − 1 = +235 %.
    let datasheet = &row["datasheet"];
    assert!((datasheet["predicted_s"].as_f64().unwrap() - 33_570_816.0 / 3.35e12).abs() < 1e-12);
    assert!(
        (datasheet["error_pct"].as_f64().unwrap() - (3.35 - 1.0) * 100.0).abs() < 0.5,
        "{datasheet}"
    );
    assert_eq!(datasheet["bound"], "memory");
    // Calibrated at the fake's own bandwidth, the prediction is the measurement: 0 %.
    assert!(
        row["calibrated"]["error_pct"].as_f64().unwrap().abs() < 0.5,
        "{row}"
    );
    assert_eq!(v["stats"]["datasheet"][0]["n_points"], 1);
    // Reference: 33,570,816 B at 89.9 % of 3.35 TB/s = 11.147 µs, plus the 5 µs matrix floor.
    let reference = row["reference"]["predicted_s"].as_f64().unwrap();
    assert!(
        (reference - (33_570_816.0 / (0.899 * 3.35e12) + 5e-6)).abs() < 1e-12,
        "{reference}"
    );

    let unknown = run(&[
        "validate",
        "--hardware",
        "h100_sxm",
        "--measured",
        "/nonexistent.json",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("cannot read /nonexistent.json"));
}

#[test]
fn validate_reads_a_repeated_file_once_and_at_most_256_files() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("bench.json");
    std::fs::write(&measured, fake_fp16_gemv_bench()).unwrap();
    let path = measured.to_str().unwrap();
    let args = |copies: usize| {
        let mut args = vec!["validate", "--hardware", "h100_sxm", "--json"];
        for _ in 0..copies {
            args.extend(["--measured", path]);
        }
        args
    };
    // The same file three times: its one point once.
    assert_eq!(json(&args(3))["stats"]["datasheet"][0]["n_points"], 1);
    let out = run(&args(257));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "error: --measured takes at most 256 values, got 257"
    );
}
