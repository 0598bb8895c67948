//! `gpu-endpoint predict`, `advise` and `validate`: the offline command line, checked against hand-derived
//! values.

use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpu-endpoint"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// Stdout of a run that must succeed.
fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&stdout_of(args)).expect("JSON on stdout")
}

#[test]
fn h100_llama_8b_bf16_decode_is_bounded_by_weights_and_kv_over_bandwidth() {
    let v = json(&[
        "predict",
        "--hardware",
        "h100_sxm",
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
    ]);
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
fn advise_never_offers_fp8_or_fp4_on_a100() {
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
    for c in candidates {
        let key = c["config"].as_str().unwrap();
        assert!(
            !["fp8", "fp4", "fp6", "mx"].iter().any(|f| key.contains(f)),
            "A100 offered {key}"
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
    // The fake backend runs at 1 TB/s and 100 TFLOP/s: a 1x4096x4096 FP16 GEMV moves
    // 4096·4096·2 + 4096·2 + 4096·2 = 33,570,816 B, so it "takes" 33.57 µs.
    let bench = stdout_of(&[
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
    let measured = dir.path().join("bench.json");
    std::fs::write(&measured, bench).unwrap();
    // The calibration of the same fake device: its spec has the fake's 1 TB/s.
    let calibration = stdout_of(&[
        "calibrate",
        "--backend",
        "fake",
        "--hardware",
        "h100_sxm",
        "--json",
        "--precisions",
        "FP16",
    ]);
    let overhead: serde_json::Value = serde_json::from_slice(&calibration).unwrap();
    // The fake GEMV runs at exactly its bytes over the fake's copy bandwidth: no overhead.
    assert_eq!(overhead["kernel_overhead"]["shape"], "1x2048x2048");
    assert!(
        overhead["kernel_overhead"]["kernel_overhead_us"]
            .as_f64()
            .unwrap()
            .abs()
            < 1e-6
    );
    assert_eq!(overhead["spec"]["kernel_overhead_s"], 0.0);
    let calibrated = dir.path().join("calibration.json");
    std::fs::write(&calibrated, &calibration).unwrap();

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
