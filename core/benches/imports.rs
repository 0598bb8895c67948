//! Hostile `config.json` imports (issues 27 and 37): counts and lists that once took seconds to hours are
//! read per layer class in closed form. Targets: each ≤ 1 s (2^24 layers) and 10,000 ignore entries ≤ 0.5 s.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_core::ModelConfig;
use serde_json::json;

#[path = "../tests/integration/edits.rs"]
mod edits;
use edits::{edited, nvfp4_ignoring};

const QWEN3_8B: &str = include_str!("../tests/data/hf/qwen3-8b.json");
const QWEN3_MOE: &str = include_str!("../tests/data/hf/qwen3-30b-a3b.json");
const KIMI: &str = include_str!("../tests/data/hf/kimi-k2.5-style.json");

fn imports(c: &mut Criterion) {
    let cases = [
        (
            "Kimi-K2.5 INT4 checkpoint on 2^24 layers",
            edited(KIMI, |v| v["num_hidden_layers"] = json!(1u64 << 24)),
        ),
        (
            "Qwen3-MoE, 2^24 layers, 10^6-entry mlp_only_layers",
            edited(QWEN3_MOE, |v| {
                v["num_hidden_layers"] = json!(1u64 << 24);
                v["mlp_only_layers"] = json!((0..1_000_000u64).map(|i| i % 10).collect::<Vec<_>>());
            }),
        ),
        (
            "Qwen3-8B NVFP4 ignoring 10,000 attention projections",
            edited(QWEN3_8B, |v| {
                let ignore: Vec<String> = (0..2500)
                    .flat_map(|i| {
                        ["q", "k", "v", "o"].map(|p| format!("model.layers.{i}.self_attn.{p}_proj"))
                    })
                    .collect();
                v["quantization_config"] = nvfp4_ignoring(ignore);
            }),
        ),
    ];
    for (name, json) in &cases {
        c.bench_function(name, |b| {
            b.iter(|| black_box(ModelConfig::from_hf_config_json("hostile", json).is_ok()))
        });
    }
}

criterion_group!(benches, imports);
criterion_main!(benches);
