//! `roofline predict --tp N [--ep N]` and `advise`: collectives in the table, per-GPU memory, the
//! communication share, and usage errors for degrees the model or device cannot take.

use crate::common::{roofline, stdout};

const LLAMA_70B_ON_H100: [&str; 8] = [
    "predict",
    "--hardware",
    "h100_sxm",
    "--model",
    "llama-3.1-70b",
    "--config",
    "bf16",
    "--json",
];

#[test]
fn tensor_parallel_lists_the_collectives_and_per_gpu_memory() {
    let text = stdout(&[&LLAMA_70B_ON_H100[..7], &["--tp", "4"]].concat());
    for needle in [
        "×4 (TP 4)",
        "attn_all_reduce",
        "ffn_all_reduce",
        "logits_all_gather",
        "interconnect",
        "weights, KV cache per GPU",
        "fits in memory (per GPU)",
        "% of the step",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
    let one: serde_json::Value = serde_json::from_str(&stdout(&LLAMA_70B_ON_H100)).unwrap();
    let four: serde_json::Value =
        serde_json::from_str(&stdout(&[&LLAMA_70B_ON_H100[..], &["--tp", "4"]].concat())).unwrap();
    // 141 GB of BF16 weights: not on one 80 GB H100, 35 GB per GPU on four.
    assert_eq!(one["fits_in_memory"], false);
    assert_eq!(four["fits_in_memory"], true);
    assert_eq!(four["gpus"], 4);
    let per_gpu = four["weight_bytes_per_gpu"].as_f64().unwrap();
    assert!((per_gpu / 1e9 - 35.3).abs() < 0.3, "{per_gpu}");
    let share = four["communication_fraction"].as_f64().unwrap();
    assert!(share > 0.0 && share < 0.5, "{share}");
    assert_eq!(one["communication_time_s"], 0.0);
}

#[test]
fn invalid_degrees_are_usage_errors_naming_the_problem() {
    for (extra, needle) in [
        (&["--tp", "16"][..], "scale-up domain"),
        (&["--tp", "3"][..], "query heads"),
        (&["--tp", "2", "--ep", "2"][..], "dense"),
    ] {
        let out = roofline(&[&LLAMA_70B_ON_H100[..], extra].concat());
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
    let out = roofline(&[
        "predict",
        "--hardware",
        "rtx_4090",
        "--model",
        "llama-3.1-8b",
        "--config",
        "bf16",
        "--tp",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no scale-up interconnect figure"));
}

#[test]
fn advice_shows_the_smallest_gpu_count_that_fits() {
    let text = stdout(&[
        "advise",
        "--hardware",
        "h200_sxm",
        "--model",
        "deepseek-v3",
        "--json",
    ]);
    let advice: serde_json::Value = serde_json::from_str(&text).unwrap();
    let fp8 = advice["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["config"] == "fp8")
        .unwrap();
    // DeepSeek-V3 in FP8: ~84 GB per GPU on 8 H200s (141 GB each), ~170 GB on 4.
    assert_eq!(fp8["min_gpus"], 8);
    assert!(fp8["reason"].as_str().unwrap().contains("fits on 8 GPUs"));
    let table = stdout(&["advise", "--hardware", "h200_sxm", "--model", "deepseek-v3"]);
    assert!(table.contains("min GPUs"), "{table}");
}

#[test]
fn the_hardware_listing_shows_each_scale_up_link() {
    let text = stdout(&["hardware"]);
    // H100 SXM: NVLink 4, 900 GB/s bidirectional = 450 each way, 8 GPUs per HGX board (cells may wrap).
    assert!(text.contains("NVLink 4 450"), "{text}");
    assert!(text.contains("one direction"), "{text}");
}
