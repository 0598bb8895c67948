//! The checkpoint reader bounded before any work that grows with the input (issue 37): a `config.json` of
//! 2^24 layers with a `quantization_config`, and lists of 10,000 patterns, are read or refused within 256 MiB,
//! because each pattern is evaluated per layer class, never per layer × pattern. Their time is a benchmark
//! (`cargo bench -p roofline-core --bench imports`), not a test.
#![cfg(feature = "serde")]
// The one unsafe: a counting global allocator, so the test can state the reader's peak memory.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::edits::{edited, nvfp4_ignoring};
use roofline_core::{Error, MAX_CONFIG_JSON_BYTES, ModelConfig, Module, Precision};
use serde_json::json;

/// The system allocator, counting the bytes this thread holds and their peak.
struct Counting;

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call goes to the system allocator unchanged; the counters only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = HELD.try_with(|held| {
            held.set(held.get() + layout.size());
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(held.get())));
        });
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = HELD.try_with(|held| held.set(held.get().saturating_sub(layout.size())));
        // SAFETY: `ptr` was allocated by `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Imports `json` and returns the result, asserting it held under 256 MiB on this thread beyond the text
/// itself (the JSON values it is read into included).
pub(crate) fn import_bounded(json: &str) -> Result<ModelConfig, Error> {
    let held = HELD.with(Cell::get);
    PEAK.with(|p| p.set(held));
    let result = ModelConfig::from_hf_config_json("bounded", json);
    let peak = PEAK.with(Cell::get) - held;
    assert!(peak < 256 << 20, "import held {} MiB (limit 256 MiB)", peak >> 20);
    result
}

const KIMI: &str = include_str!("../data/hf/kimi-k2.5-style.json");
const QWEN3_8B: &str = include_str!("../data/hf/qwen3-8b.json");

fn error_of(result: Result<ModelConfig, Error>) -> (String, String) {
    match result {
        Err(Error::InvalidModelConfig { field, message }) => (field, message),
        other => panic!("expected InvalidModelConfig, got {other:?}"),
    }
}

#[test]
fn a_checkpoint_of_2_pow_24_layers_is_read_not_walked() {
    // Kimi-K2.5's INT4 experts (its `ignore` regular expressions) on 2^24 layers: read, not walked.
    let deep = edited(KIMI, |v| v["num_hidden_layers"] = json!(1u64 << 24));
    let model = import_bounded(&deep).unwrap();
    let config = model.checkpoint.unwrap();
    assert_eq!(config.format(Module::RoutedExperts).weights, Precision::Int4G32);
    assert_eq!(config.format(Module::Attention).weights, Precision::Bf16);
    // GLM-5-FP8's kind of list, naming the attention of its 78 layers one by one, on 2^24 layers: layer 78
    // on is quantized, so the attention is in two formats, an error naming a layer of each.
    let named: Vec<String> = (0..78)
        .map(|i| format!("model.layers.{i}.self_attn.q_a_proj"))
        .collect();
    let per_layer = edited(&deep, |v| {
        v["quantization_config"] = json!({
            "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
            "weight_block_size": [128, 128], "modules_to_not_convert": named
        });
    });
    let (field, message) = error_of(import_bounded(&per_layer));
    assert_eq!(field, "quantization_config.quant_method");
    assert!(
        message.contains("model.layers.0.self_attn.q_a_proj") && message.contains("attention"),
        "{message}"
    );
}

#[test]
fn ten_thousand_ignore_entries_at_36_layers_are_read_per_layer_class() {
    // Qwen3-8B with the attention of layers 0..2500 ignored one projection at a time: 10,000 entries, the
    // 36 layers' attention BF16 (FP16 beside FP4 activations), the MLP NVFP4.
    let ignore: Vec<String> = (0..2500)
        .flat_map(|i| ["q", "k", "v", "o"].map(|p| format!("model.layers.{i}.self_attn.{p}_proj")))
        .collect();
    assert_eq!(ignore.len(), 10_000);
    let json = edited(QWEN3_8B, |v| v["quantization_config"] = nvfp4_ignoring(ignore));
    let config = import_bounded(&json).unwrap().checkpoint.unwrap();
    assert_eq!(config.format(Module::DenseMlp).weights, Precision::Nvfp4);
    assert_eq!(config.format(Module::Attention).weights, Precision::Fp16);
    // Half the layers named: the attention in two formats, an error.
    let half: Vec<String> = (0..18).map(|i| format!("model.layers.{i}.self_attn")).collect();
    let json = edited(QWEN3_8B, |v| v["quantization_config"] = nvfp4_ignoring(half));
    let (_, message) = error_of(import_bounded(&json));
    assert!(
        message.contains("model.layers.0.self_attn") && message.contains("model.layers.35.self_attn"),
        "{message}"
    );
}

#[test]
fn lists_and_files_past_their_caps_are_refused_naming_the_cap() {
    // 10,000 regular expressions: each would be tried on a sample of layers; more than 256 is refused.
    let regexes: Vec<String> = (0..10_000).map(|i| format!("re:.*layers\\.{i}\\..*")).collect();
    let json = edited(QWEN3_8B, |v| v["quantization_config"] = nvfp4_ignoring(regexes));
    let (field, message) = error_of(import_bounded(&json));
    assert_eq!(field, "quantization_config.ignore");
    assert!(message.contains("10000") && message.contains("256"), "{message}");
    // A file over 16 MiB is refused before it is parsed.
    let padded = format!("{QWEN3_8B}{}", " ".repeat(MAX_CONFIG_JSON_BYTES));
    let (field, message) = error_of(import_bounded(&padded));
    assert_eq!(field, "config.json");
    assert!(message.contains("16777216"), "{message}");
}
