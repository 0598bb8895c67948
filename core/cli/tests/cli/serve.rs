//! `roofline serve`: the JSON points against roofline-core's own serving model, the concurrency grid up to
//! what fits, the SLA recommendation and its explanation, the measured comparison, the table, and usage
//! errors (exit 2 naming the field or listing the valid keys).

use crate::common::{roofline, stdout};
use roofline_core::{
    BenchClient, Corrections, Engine, Load, Mode, Parallelism, SchedulerKind, ServingModel, ServingWorkload,
    find_hardware_in, find_model, find_quant_config,
};
use serde_json::Value;

const LLAMA_8B_ON_H100: [&str; 9] = [
    "serve",
    "--hardware",
    "h100_sxm",
    "--model",
    "llama-3.1-8b",
    "--isl",
    "1024",
    "--osl",
    "1024",
];

fn serve_json(extra: &[&str]) -> Value {
    let args = [&LLAMA_8B_ON_H100[..], extra, &["--json"]].concat();
    serde_json::from_str(&stdout(&args)).expect("JSON")
}

/// Core's prediction of Llama-3.1-8B on one H100 SXM in reference mode with vLLM's defaults and `vllm bench
/// serve`'s client.
fn core_point(config: &str, clients: u32) -> roofline_core::ServingPoint {
    core_point_of(config, clients, BenchClient::default())
}

fn core_point_of(config: &str, clients: u32, client: BenchClient) -> roofline_core::ServingPoint {
    let hardware = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    let scenario = Engine::Vllm.preset(hardware, &Parallelism::SINGLE).scenario(
        hardware,
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config(config).unwrap(),
        Parallelism::SINGLE,
        Corrections::REALISTIC,
        SchedulerKind::InFlight,
    );
    let mut model = ServingModel::new(scenario, ServingWorkload { isl: 1024, osl: 1024 })
        .unwrap()
        .with_client(client)
        .unwrap();
    model
        .predict(Load::Concurrency(clients))
        .unwrap()
        .steady()
        .unwrap()
}

fn point<'a>(json: &'a Value, config: &str, concurrency: f64) -> &'a Value {
    json["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["config"] == config && p["concurrency"].as_f64() == Some(concurrency))
        .unwrap_or_else(|| panic!("no {config} point at {concurrency}"))
}

#[test]
fn json_points_carry_core_numbers_in_base_units() {
    let json = serve_json(&["--config", "fp8", "--concurrency", "1,64"]);
    assert_eq!(json["points"].as_array().unwrap().len(), 2);
    for clients in [1, 64] {
        let p = point(&json, "fp8", f64::from(clients));
        let expected = core_point("fp8", clients);
        for (key, value) in [
            ("ttft_s", expected.ttft_s),
            ("tpot_s", expected.tpot_s),
            (
                "output_tokens_per_s_per_gpu",
                expected.output_tokens_per_s_per_gpu,
            ),
            (
                "input_output_tokens_per_s_per_gpu",
                expected.input_output_tokens_per_s_per_gpu,
            ),
            ("tokens_per_s_per_user", expected.tokens_per_s_per_user),
            ("requests_per_s", expected.requests_per_s),
        ] {
            // JSON carries the shortest decimal of each f64; reading it back may differ in the last bit.
            let read = p[key].as_f64().unwrap();
            assert!(
                (read / value - 1.0).abs() < 1e-15,
                "{key} at {clients}: {read} vs {value}"
            );
        }
        assert_eq!(p["fits"], true);
        assert_eq!(p["gpus"], 1);
        assert!(p["pareto"].is_boolean());
        assert!(p["memory_used_bytes_per_gpu"].as_f64().unwrap() > 9e9);
    }
    // One user decodes at the isolated decode step: 1 / TPOT tokens/s, and output = input here (1k/1k).
    let one = point(&json, "fp8", 1.0);
    let tpot = one["tpot_s"].as_f64().unwrap();
    assert!((one["tokens_per_s_per_user"].as_f64().unwrap() - 1.0 / tpot).abs() < 1e-9);
    assert!(
        (one["input_output_tokens_per_s_per_gpu"].as_f64().unwrap()
            - 2.0 * one["output_tokens_per_s_per_gpu"].as_f64().unwrap())
        .abs()
            < 1e-9
    );
    // Every metric is defined once, with its unit.
    let metrics = json["metrics"].as_array().unwrap();
    assert!(metrics.iter().any(|m| m["key"] == "tpot_s" && m["unit"] == "s"));
    assert_eq!(json["engine"], "vllm");
    assert_eq!(json["mode"], "reference");
}

#[test]
fn without_a_concurrency_the_grid_runs_to_what_fits_and_unsupported_configs_are_listed() {
    let json = serve_json(&[]);
    // BF16 on one H100 (79.22 GiB reported, vLLM's 0.92) holds 225 sequences of 2048 tokens
    // (core/crates/analysis/src/memory.rs derives it by hand): the grid 1 … 192, then 225.
    let bf16: Vec<f64> = json["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["config"] == "bf16")
        .map(|p| p["concurrency"].as_f64().unwrap())
        .collect();
    assert_eq!(bf16.len(), 16);
    assert_eq!(bf16.last(), Some(&225.0));
    let fit = json["fits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["config"] == "bf16")
        .unwrap();
    assert_eq!(fit["memory"]["max_sequences"], 225);
    // --memory-fraction 0.5 (vLLM's rule): KV = 85,061,827,297.28 B reported × 0.5 − 16,060,522,496 B of
    // weights − 1,626,865,664 B of activations = 24,843,525,488.64 B, 92.5 sequences of 268,435,456 B.
    let half = serve_json(&["--config", "bf16", "--memory-fraction", "0.5"]);
    let memory = &half["fits"][0]["memory"];
    assert_eq!(memory["fraction"]["of_capacity"], 0.5);
    assert!((memory["kv_cache_bytes"].as_f64().unwrap() - 24_843_525_488.64).abs() < 1.0);
    assert_eq!(memory["max_sequences"], 92);
    // Hopper runs no FP4: listed with the architecture.
    let unsupported = json["unsupported"].as_array().unwrap();
    let nvfp4 = unsupported.iter().find(|u| u["config"] == "nvfp4-w4a4").unwrap();
    assert!(nvfp4["reason"].as_str().unwrap().contains("Hopper"));
    assert!(
        json["points"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["pareto"] == true)
    );
}

#[test]
fn the_sla_recommends_the_most_output_per_gpu_or_explains_why_nothing_meets_it() {
    let json = serve_json(&["--configs", "bf16,fp8", "--sla-tpot-ms", "20"]);
    let sla = &json["sla"];
    let best = &sla["recommendation"];
    // The recommendation meets the limit and no point meeting it has more output per GPU.
    assert!(best["tpot_s"].as_f64().unwrap() <= 0.020);
    let top = json["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["tpot_s"].as_f64().unwrap() <= 0.020)
        .map(|p| p["output_tokens_per_s_per_gpu"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(
        best["output_tokens_per_s_per_gpu"].as_f64(),
        Some(top),
        "the same JSON number"
    );
    assert_eq!(best["config"], "fp8");
    // TPOT ≤ 1 ms: even one user decodes slower (FP8's TPOT at concurrency 1 on the H100 at 1k/1k, the
    // sweep's own point).
    let impossible = serve_json(&["--configs", "bf16,fp8", "--sla-tpot-ms", "1"]);
    assert_eq!(impossible["sla"]["recommendation"], Value::Null);
    let reason = impossible["sla"]["reason"].as_str().unwrap();
    let one_user = impossible["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["config"] == "fp8" && p["concurrency"] == 1.0)
        .unwrap()["tpot_s"]
        .as_f64()
        .unwrap();
    assert!(
        reason.contains(&format!(
            "TPOT at concurrency 1 is {:.2} ms > 1.00 ms",
            one_user * 1e3
        )),
        "{reason}"
    );
    assert!(
        reason.contains("even one user is too slow on h100_sxm in fp8"),
        "{reason}"
    );
    let text = stdout(
        &[
            &LLAMA_8B_ON_H100[..],
            &["--configs", "bf16,fp8", "--sla-tpot-ms", "1"],
        ]
        .concat(),
    );
    assert!(
        text.contains("no recommendation") && text.contains("no config meets the SLA"),
        "{text}"
    );
}

#[test]
fn measured_runs_compare_at_their_own_load_and_lengths() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/serving/vllm_bench_serve.json"
    );
    let json = serve_json(&["--config", "bf16", "--concurrency", "16", "--measured", file]);
    let row = &json["measured"][0];
    assert_eq!(row["measured"]["format"], "vllm_bench_serve");
    assert_eq!(row["workload"]["isl"], 1024);
    let predicted = &row["predicted"]["steady"];
    // The file's run: 160 requests from 16 clients, mean TPOT 11.62 ms, 1361.4 output tokens/s on the one
    // GPU; simulated with the same client (vllm bench serve's rules, 160 requests).
    assert_eq!(row["client"]["requests"], 160);
    let tpot = predicted["tpot_s"].as_f64().unwrap();
    let client = BenchClient {
        requests: Some(160),
        range_ratio: Some(0.0),
        ..BenchClient::default()
    };
    assert!((tpot / core_point_of("bf16", 16, client).tpot_s - 1.0).abs() < 1e-15);
    assert!((row["tpot_ratio"].as_f64().unwrap() - 0.01162 / tpot).abs() < 1e-12);
    let throughput = predicted["output_tokens_per_s_per_gpu"].as_f64().unwrap();
    assert!((row["output_throughput_ratio"].as_f64().unwrap() - 1361.4 / throughput).abs() < 1e-12);
    let text = stdout(
        &[
            &LLAMA_8B_ON_H100[..],
            &["--config", "bf16", "--concurrency", "16", "--measured", file],
        ]
        .concat(),
    );
    assert!(text.contains("measured ÷ simulated"), "{text}");
    assert!(
        text.contains("line 1 percentiles ÷ simulated: P50 TTFT"),
        "{text}"
    );
}

#[test]
fn the_table_fits_120_columns_and_marks_the_front() {
    let text = stdout(
        &[
            &LLAMA_8B_ON_H100[..],
            &[
                "--configs",
                "bf16,fp8,nvfp4-w4a4",
                "--tp",
                "1,2",
                "--rate",
                "2,200",
            ],
        ]
        .concat(),
    );
    for needle in [
        "TTFT",
        "TPOT",
        "tok/s/user",
        "out tok/s/GPU",
        "★",
        "unsustainable",
        "not native here",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
}

#[test]
fn bad_input_exits_2_naming_the_field() {
    let without_osl = &LLAMA_8B_ON_H100[..7];
    for (extra, needle) in [
        (&["--osl", "1"][..], "osl must be at least 2"),
        (&["--osl", "64", "--config", "fp7"][..], "valid keys: bf16"),
        (
            &["--osl", "64", "--concurrency", "4", "--rate", "2"][..],
            "cannot be used with",
        ),
        (
            &["--osl", "64", "--rate=-1"][..],
            "not a positive number of requests/s",
        ),
        (&["--osl", "64", "--sla-ttft-ms", "0"][..], "ttft_max_s"),
        (&["--osl", "64", "--tp", "3"][..], "query heads"),
        (&["--osl", "64", "--engine", "tgi"][..], "vllm"),
        (
            &["--osl", "64", "--memory-fraction", "1.5"][..],
            "memory fraction must be in (0, 1], got 1.5",
        ),
    ] {
        let out = roofline(&[without_osl, extra].concat());
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
    let dir = std::env::temp_dir().join(format!("roofline-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bench.csv");
    let header = "concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus";
    for (row, needle) in [
        ("4,12,abc,100,1", "line 2: field `tpot_ms`"),
        // 2-GPU runs against a 1-GPU prediction compare nothing: said, not silently empty.
        ("4,12,8,100,2", "the runs are on 2 GPU(s)"),
    ] {
        std::fs::write(&file, format!("{header}\n{row}\n")).unwrap();
        let measured = ["--config", "bf16", "--measured", file.to_str().unwrap()];
        let out = roofline(&[&LLAMA_8B_ON_H100[..], &measured].concat());
        assert_eq!(out.status.code(), Some(2), "{row}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("bench.csv") && err.contains(needle), "{row}: {err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_checkpoint_and_the_engine_support_are_shown() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/hf/gpt-oss-120b.json");
    let args = [
        "serve",
        "--hardware",
        "h100_sxm",
        "--model-file",
        file,
        "--isl",
        "1024",
        "--osl",
        "128",
        "--concurrency",
        "1",
    ];
    // --config checkpoint: the file's own precisions, module by module.
    let text = stdout(&[&args[..], &["--config", "checkpoint"]].concat());
    assert!(
        text.contains(
            "checkpoint: precisions: attention, router, embeddings, head: BF16 · routed experts: MXFP4 weights, BF16 activations"
        ),
        "{text}"
    );
    // Without --config the checkpoint joins every config of the table.
    let json: Value = serde_json::from_str(&stdout(&[&args[..], &["--json"]].concat())).unwrap();
    assert!(
        json["points"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["config"] == "checkpoint")
    );
    // A config the device runs but the chosen engine does not: NVFP4 weight-only on Hopper runs only in
    // vLLM (FP4-Marlin).
    let text = stdout(
        &[
            &LLAMA_8B_ON_H100[..],
            &["--config", "nvfp4-w4a16", "--engine", "trtllm"],
        ]
        .concat(),
    );
    assert!(
        text.contains("note: trtllm does not run nvfp4-w4a16 on Hopper; engines that do: vllm"),
        "{text}"
    );
}

#[test]
fn list_flags_are_bounded_and_their_repeats_dropped() {
    // The probe's 10,000 `--tp` values (23–27 s and 577 MiB of sweeping before): refused before any work.
    let tp = vec!["1"; 10_000].join(",");
    for (flag, values) in [("--tp", tp.as_str()), ("--concurrency", &vec!["8"; 65].join(","))] {
        let out = roofline(&[&LLAMA_8B_ON_H100[..], &[flag, values]].concat());
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        let given = values.split(',').count();
        assert!(
            err.starts_with(&format!("error: {flag} takes at most 64 values, got {given}")),
            "{err}"
        );
    }
    // Repeats are swept once: the same points as the list without them.
    let points = |extra: &[&str]| serve_json(extra)["points"].clone();
    let once = points(&["--config", "bf16", "--tp", "1,2", "--rate", "1,4"]);
    assert_eq!(once.as_array().map(Vec::len), Some(4));
    let repeated = points(&[
        "--configs",
        "bf16,bf16",
        "--tp",
        "1,2,1,2,2",
        "--rate",
        "1,4,1,4.0",
    ]);
    assert_eq!(repeated, once);
}

#[test]
fn the_recommended_point_comes_with_its_launch_and_bench_lines() {
    // Llama-3.1-70B on H100s at TP 2: the SLA's pick in FP8 is served by vLLM with the split, limits, memory
    // fraction and precisions the prediction used.
    let args = [
        "serve",
        "--hardware",
        "h100_sxm",
        "--model",
        "llama-3.1-70b",
        "--isl",
        "1024",
        "--osl",
        "1024",
        "--tp",
        "2",
        "--configs",
        "fp8",
        "--sla-tokens-per-user",
        "20",
    ];
    let json: Value = serde_json::from_str(&stdout(&[&args[..], &["--json"]].concat())).unwrap();
    let best = &json["sla"]["recommendation"];
    let plan = &json["launch"]["Ok"];
    assert_eq!(plan["engine"], "vllm");
    let value = |command: &str, flag: &str| {
        plan[command]["args"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["flag"] == flag)
            .map(|a| a["value"].as_str().unwrap().to_owned())
    };
    assert_eq!(value("serve", "--tensor-parallel-size").as_deref(), Some("2"));
    assert_eq!(
        value("serve", "--gpu-memory-utilization").as_deref(),
        Some("0.92")
    );
    assert_eq!(value("serve", "--quantization").as_deref(), Some("fp8"));
    assert_eq!(value("serve", "--kv-cache-dtype").as_deref(), Some("fp8"));
    assert_eq!(
        value("bench", "--max-concurrency"),
        Some(best["concurrency"].as_f64().unwrap().to_string())
    );
    let text = stdout(&args);
    assert!(
        text.contains(
            "serve it (vllm):\n  vllm serve \\\n    meta-llama/Llama-3.1-70B \\\n    --tensor-parallel-size 2 \\\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("measure it:\n  vllm bench serve \\\n    --backend vllm \\\n"),
        "{text}"
    );
}
