//! `roofline serve`'s simulation options: the InferenceX scenarios and client, the statistic tables and SLAs
//! read, speculative decoding, the prefix cache, the new measured formats, and the bounds on lists and files
//! (exit 2 with one `error:` line).

use crate::common::{roofline, stdout};
use serde_json::Value;

/// `serve` of Llama-3.1-8B FP8 on one H200, before the options of a test.
const FP8_ON_H200: [&str; 7] = [
    "serve",
    "--hardware",
    "h200_sxm",
    "--model",
    "llama-3.1-8b",
    "--config",
    "fp8",
];

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout(&[&FP8_ON_H200[..], &["--json"], args].concat())).expect("JSON")
}

fn only_point(json: &Value) -> &Value {
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{json}");
    &points[0]
}

#[test]
fn a_scenario_runs_the_inferencex_client_and_reports_every_percentile() {
    let j = json(&["--scenario", "8k1k", "--concurrency", "16", "--percentile", "99"]);
    assert_eq!(j["percentile"], "p99");
    assert_eq!(j["client"]["kind"], "inferencex");
    assert_eq!(
        (j["workload"]["isl"].as_u64(), j["workload"]["osl"].as_u64()),
        (Some(8192), Some(1024))
    );
    let p = only_point(&j);
    // InferenceX counts 10 × concurrency requests.
    assert_eq!(p["requests"], 160);
    for metric in ["ttft", "tpot", "itl", "e2e"] {
        let mean = p[format!("{metric}_s")].as_f64().unwrap();
        let (p50, p90, p99) = (
            p[format!("{metric}_p50_s")].as_f64().unwrap(),
            p[format!("{metric}_p90_s")].as_f64().unwrap(),
            p[format!("{metric}_p99_s")].as_f64().unwrap(),
        );
        assert!(
            mean > 0.0 && p50 <= p90 && p90 <= p99,
            "{metric}: {mean} {p50} {p90} {p99}"
        );
    }
    // The table reads the chosen statistic.
    let options = ["--scenario", "1k1k", "--concurrency", "4", "--percentile", "50"];
    let text = stdout(&[&FP8_ON_H200[..], &options].concat());
    assert!(
        text.contains("P50 TTFT") && text.contains("InferenceX benchmark_serving.py"),
        "{text}"
    );
}

#[test]
fn speculative_decoding_takes_the_published_acceptance_and_speeds_decoding() {
    let one_user = [
        "--isl",
        "1024",
        "--osl",
        "512",
        "--concurrency",
        "1",
        "--requests",
        "4",
    ];
    let plain = json(&one_user);
    let mtp = json(
        &[
            &one_user[..],
            &["--spec-method", "mtp", "--spec-draft-tokens", "3"],
        ]
        .concat(),
    );
    // DeepSeek-V4-Pro's golden acceptance length at 3 MTP drafts (InferenceX): 2.49 tokens per step.
    assert_eq!(mtp["speculative"]["acceptance_length"], 2.49);
    let (a, b) = (only_point(&plain), only_point(&mtp));
    let speedup = a["tpot_s"].as_f64().unwrap() / b["tpot_s"].as_f64().unwrap();
    assert!(speedup > 1.5 && speedup < 2.49, "{speedup}");
    // ITL is the gap between streamed chunks: one verify step, about 2.49 tokens.
    assert!(b["itl_s"].as_f64().unwrap() > 2.0 * b["tpot_s"].as_f64().unwrap());
}

#[test]
fn a_prefix_cache_hit_skips_prefill() {
    let ttft = |rate: &str| {
        let j = json(&[
            "--isl",
            "8192",
            "--osl",
            "64",
            "--concurrency",
            "1",
            "--requests",
            "3",
            "--prefix-hit-rate",
            rate,
        ]);
        only_point(&j)["ttft_s"].as_f64().unwrap()
    };
    // Half the prompt cached: about half the prefill (attention over the cached half still runs).
    let ratio = ttft("0.5") / ttft("0");
    assert!(ratio > 0.4 && ratio < 0.7, "{ratio}");
}

#[test]
fn new_measured_formats_compare_percentile_by_percentile() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/serving/");
    for (file, format, stats) in [
        // AIPerf: mean, P50, P90, P99 of TTFT, TPOT (its ITL) and E2E; SGLang: those of TTFT, TPOT and
        // E2E, ITL's mean, median and P99; vLLM's sweep and InferenceX: mean, median and P99 of all four.
        ("aiperf_profile_export.json", "aiperf", 12),
        ("sglang_benchmark_serving.jsonl", "sglang_bench_serving", 15),
        ("vllm_sweep_summary.csv", "vllm_sweep", 12),
        ("inferencex_agg_bmk.json", "inferencex", 12),
    ] {
        let path = format!("{data}{file}");
        let j = json(&["--isl", "1024", "--osl", "1024", "--measured", &path]);
        let row = &j["measured"][0];
        assert_eq!(row["measured"]["format"], format, "{file}");
        assert_eq!(
            row["percentiles"].as_array().unwrap().len(),
            stats,
            "{file}: {row}"
        );
    }
}

#[test]
fn lists_files_and_speculation_are_bounded_with_one_error_line() {
    let many: Vec<String> = (1..=65).map(|n| n.to_string()).collect();
    let dir = std::env::temp_dir().join(format!("roofline-serve-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let huge = dir.join("huge.jsonl");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let base = [&FP8_ON_H200[..], &["--isl", "64", "--osl", "8"]].concat();
    for (extra, needle) in [
        (
            vec!["--concurrency", &many.join(",")],
            "--concurrency takes at most 64 values, got 65",
        ),
        (
            vec!["--spec-method", "ngram"],
            "no published acceptance length for ngram",
        ),
        (
            vec!["--spec-method", "mtp", "--spec-acceptance", "9"],
            "spec acceptance length must be in [1, 4]",
        ),
        (
            vec!["--spec-method", "draft_model", "--spec-acceptance", "2"],
            "draft_model needs a draft model",
        ),
        (
            vec!["--prefix-hit-rate", "1"],
            "prefix hit rate must be in [0, 1), got 1",
        ),
        (
            vec!["--random-range-ratio", "1"],
            "random range ratio must be in [0, 1) for vllm bench serve",
        ),
        (
            vec!["--measured", huge.to_str().unwrap()],
            "measured serving files are read up to 64 MiB",
        ),
    ] {
        let out = roofline(&[&base[..], &extra].concat());
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{extra:?}: {err}"
        );
    }
    // Repeats are dropped: three values given twice run three points.
    let twice: Vec<String> = (1..=3).chain(1..=3).map(|n| n.to_string()).collect();
    let j = json(&[
        "--isl",
        "64",
        "--osl",
        "8",
        "--requests",
        "8",
        "--concurrency",
        &twice.join(","),
    ]);
    assert_eq!(j["points"].as_array().unwrap().len(), 3);
    std::fs::remove_dir_all(dir).unwrap();
}
