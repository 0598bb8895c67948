//! Hugging Face `config.json` import: the published files in `tests/data/hf` parse to the presets' structure
//! and to the published parameter counts; unknown architectures and missing fields are errors naming the field;
//! a checkpoint's `quantization_config` gives its own precisions, module by module, or an error naming it.
#![cfg(feature = "serde")]

use crate::checkpoint_bounds::import_bounded;
use crate::edits::edited;
use roofline_core::{ActivationScale, Error, ModelConfig, Module, Precision, find_model};
use serde_json::{Value, json};

/// The published `config.json` files (see `tests/data/hf/README.md` for their sources) and the preset each
/// describes.
const FILES: [(&str, &str, &str); 7] = [
    ("qwen3-8b", "qwen3-8b", include_str!("../data/hf/qwen3-8b.json")),
    (
        "qwen3-30b-a3b",
        "qwen3-30b-a3b",
        include_str!("../data/hf/qwen3-30b-a3b.json"),
    ),
    (
        "gpt-oss-20b",
        "gpt-oss-20b",
        include_str!("../data/hf/gpt-oss-20b.json"),
    ),
    (
        "deepseek-v3",
        "deepseek-v3",
        include_str!("../data/hf/deepseek-v3.json"),
    ),
    (
        "mistral-7b",
        "mistral-7b",
        include_str!("../data/hf/mistral-7b.json"),
    ),
    (
        "gemma-3-27b",
        "gemma-3-27b",
        include_str!("../data/hf/gemma-3-27b.json"),
    ),
    (
        "llama-4-scout",
        "llama-4-scout",
        include_str!("../data/hf/llama-4-scout.json"),
    ),
];

pub fn parse(json: &str) -> ModelConfig {
    ModelConfig::from_hf_config_json("imported", json).unwrap()
}

/// `imported` with the preset's identity and published figures, so the two compare on structure alone.
pub fn assert_same_structure(imported: &ModelConfig, preset_key: &str) {
    let preset = find_model(preset_key).unwrap();
    let structure = ModelConfig {
        key: preset.key.clone(),
        name: preset.name.clone(),
        published_params: preset.published_params,
        published_active_params: preset.published_active_params,
        source: preset.source.clone(),
        ..imported.clone()
    };
    assert_eq!(&structure, preset, "{preset_key}");
}

fn field_error(json: &str) -> String {
    match ModelConfig::from_hf_config_json("x", json) {
        Err(Error::InvalidModelConfig { field, .. }) => field,
        other => panic!("expected InvalidModelConfig, got {other:?}"),
    }
}

#[test]
fn published_configs_parse_to_the_presets() {
    for (_, preset, json) in FILES {
        assert_same_structure(&parse(json), preset);
    }
}

#[test]
fn parameter_counts_match_the_model_cards() {
    // Published totals: Qwen3-8B 8.2B and Qwen3-30B-A3B 30.5B (3.3B active) per their model cards;
    // gpt-oss-20b 20.91B (gpt-oss model card, arXiv:2508.10925); DeepSeek-V3 671B (technical report, MTP
    // excluded); Mistral 7B 7.24B; Gemma 3 27B's text model 1,416M + 25,600M (Gemma 3 report, Table 1).
    let published = [
        ("qwen3-8b", 8.2e9),
        ("qwen3-30b-a3b", 30.5e9),
        ("gpt-oss-20b", 20.91e9),
        ("deepseek-v3", 671e9),
        ("mistral-7b", 7.24e9),
        ("gemma-3-27b", 27.016e9),
        // Llama 4 Scout's card says 109B including the vision encoder: 34 layers · (4·1408² + 2·1408·5632)
        // and the 4096 → 5120 projector of its vision_config, 0.83B, which the text model lacks.
        (
            "llama-4-scout",
            109e9 - (34.0 * (4.0 * 1408.0 * 1408.0 + 2.0 * 1408.0 * 5632.0) + 4096.0 * 5120.0),
        ),
    ];
    for ((name, _, json), (key, total)) in FILES.iter().zip(published) {
        assert_eq!(*name, key);
        let params = parse(json).parameters();
        assert!(
            (params.total / total - 1.0).abs() < 0.01,
            "{name}: {:.4e} vs {total:.4e}",
            params.total
        );
    }
    // Qwen3-30B-A3B: 3.3B active (the card counts the input embedding).
    let active = parse(FILES[1].2).parameters().active;
    assert!((active / 3.3e9 - 1.0).abs() < 0.02, "{active:.4e}");
}

#[test]
fn sibling_configs_parse_to_their_presets() {
    let [qwen3, _, gpt_oss, deepseek, _, gemma, scout] = FILES.map(|(_, _, json)| json);
    // Llama 4 Maverick: Scout's text model with 128 experts on every other layer.
    let maverick = edited(scout, |v| {
        v["text_config"]["num_local_experts"] = json!(128);
        v["text_config"]["interleave_moe_layer_step"] = json!(2);
    });
    assert_same_structure(&parse(&maverick), "llama-4-maverick");
    // Kimi K2: the DeepSeek-V3 architecture with 384 experts, 64 heads, one dense layer, a 163,840 vocabulary.
    let kimi = edited(deepseek, |v| {
        for (field, value) in [
            ("n_routed_experts", 384),
            ("num_attention_heads", 64),
            ("num_key_value_heads", 64),
            ("first_k_dense_replace", 1),
            ("vocab_size", 163_840),
            ("num_nextn_predict_layers", 0),
        ] {
            v[field] = json!(value);
        }
    });
    assert_same_structure(&parse(&kimi), "kimi-k2");
    // gpt-oss-120b: 36 layers, 128 experts, the window on alternate layers.
    let big_oss = edited(gpt_oss, |v| {
        v["num_hidden_layers"] = json!(36);
        v["num_local_experts"] = json!(128);
        let types: Vec<_> = (0..36)
            .map(|i| {
                if i % 2 == 0 {
                    "sliding_attention"
                } else {
                    "full_attention"
                }
            })
            .collect();
        v["layer_types"] = json!(types);
    });
    assert_same_structure(&parse(&big_oss), "gpt-oss-120b");
    // Without layer_types gpt-oss's class default alternates the same way.
    let no_types = edited(gpt_oss, |v| {
        v.as_object_mut().unwrap().remove("layer_types");
    });
    assert_eq!(parse(&no_types), parse(gpt_oss));
    // Gemma 3 written by newer transformers lists layer_types: the same 52 sliding layers.
    let with_types = edited(gemma, |v| {
        let types: Vec<_> = (0..62)
            .map(|i| {
                if (i + 1) % 6 == 0 {
                    "full_attention"
                } else {
                    "sliding_attention"
                }
            })
            .collect();
        v["text_config"]["layer_types"] = json!(types);
    });
    assert_eq!(parse(&with_types), parse(gemma));
    // Gemma3ForCausalLM keeps the text fields at the top level.
    let flat = edited(gemma, |v| {
        let mut text = v["text_config"].clone();
        text["architectures"] = json!(["Gemma3ForCausalLM"]);
        *v = text;
    });
    let (flat, nested) = (parse(&flat), parse(gemma));
    assert_eq!(flat.source, "Hugging Face config.json (Gemma3ForCausalLM)");
    assert_eq!(
        ModelConfig {
            source: nested.source.clone(),
            ..flat
        },
        nested
    );
    // Qwen3 with the sliding window switched on slides from max_window_layers on.
    let sliding = edited(qwen3, |v| {
        v["use_sliding_window"] = json!(true);
        v["sliding_window"] = json!(4096);
        v["max_window_layers"] = json!(28);
    });
    let window = parse(&sliding).sliding_window.unwrap();
    assert_eq!((window.window, window.layers), (4096, 8));
    // Qwen3-MoE's mlp_only_layers and decoder_sparse_step make dense layers.
    let sparse = edited(FILES[1].2, |v| {
        v["decoder_sparse_step"] = json!(2);
        v["mlp_only_layers"] = json!([1]);
    });
    assert_eq!(parse(&sparse).moe.unwrap().dense_layers, 25);
}

#[test]
fn unknown_architectures_and_missing_fields_name_the_field() {
    let qwen3 = FILES[0].2;
    let mamba = edited(qwen3, |v| v["architectures"] = json!(["MambaForCausalLM"]));
    assert_eq!(field_error(&mamba), "architectures");
    let message = ModelConfig::from_hf_config_json("x", &mamba)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("MambaForCausalLM") && message.contains("Qwen3ForCausalLM"),
        "{message}"
    );
    let no_architectures = edited(qwen3, |v| {
        v.as_object_mut().unwrap().remove("architectures");
    });
    assert_eq!(field_error(&no_architectures), "architectures");
    let no_hidden = edited(qwen3, |v| {
        v.as_object_mut().unwrap().remove("hidden_size");
    });
    assert_eq!(field_error(&no_hidden), "hidden_size");
    let message = ModelConfig::from_hf_config_json("x", &no_hidden)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("hidden_size") && message.contains("missing"),
        "{message}"
    );
    let nested = edited(FILES[5].2, |v| {
        v["text_config"].as_object_mut().unwrap().remove("hidden_size");
    });
    assert_eq!(field_error(&nested), "text_config.hidden_size");
    let null_layers = edited(qwen3, |v| v["num_hidden_layers"] = Value::Null);
    assert_eq!(field_error(&null_layers), "num_hidden_layers");
    let text_layers = edited(qwen3, |v| v["num_hidden_layers"] = json!("36"));
    assert_eq!(field_error(&text_layers), "num_hidden_layers");
    let no_experts = edited(FILES[1].2, |v| {
        v.as_object_mut().unwrap().remove("num_experts");
    });
    assert_eq!(field_error(&no_experts), "num_experts");
    let lite = edited(FILES[3].2, |v| v["q_lora_rank"] = Value::Null);
    assert_eq!(field_error(&lite), "q_lora_rank");
    let short_types = edited(FILES[2].2, |v| v["layer_types"] = json!(["full_attention"]));
    assert_eq!(field_error(&short_types), "layer_types");
    assert_eq!(field_error("{not json"), "config.json");
    assert_eq!(field_error("[1, 2]"), "config.json");
    // A structurally inconsistent config is refused by validation (heads not a multiple of KV heads).
    let odd = edited(qwen3, |v| v["num_key_value_heads"] = json!(5));
    assert!(matches!(
        ModelConfig::from_hf_config_json("x", &odd),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn imported_models_are_named_and_carry_no_published_count() {
    let model = ModelConfig::from_hf_config_json("my-qwen", FILES[0].2).unwrap();
    assert_eq!((model.key.as_str(), model.name.as_str()), ("my-qwen", "my-qwen"));
    assert_eq!(model.published_params, 0.0);
    assert!(model.source.contains("Qwen3ForCausalLM"), "{}", model.source);
    let named = edited(FILES[0].2, |v| v["_name_or_path"] = json!("Qwen/Qwen3-8B"));
    assert_eq!(parse(&named).name, "Qwen/Qwen3-8B");
}

/// A checkpoint's `quantization_config` read module by module: (module, weight format, activation format).
fn modules_of(json: &str) -> Vec<(Module, Precision, Precision)> {
    module_formats(&parse(json))
}

/// (module, weight format, activation format) of every module of `model`'s checkpoint.
pub fn module_formats(model: &ModelConfig) -> Vec<(Module, Precision, Precision)> {
    let config = model.checkpoint.clone().expect("a quantized checkpoint");
    model
        .modules()
        .into_iter()
        .map(|m| {
            let f = config.format(m);
            (m, f.weights, f.activations)
        })
        .collect()
}

#[test]
fn checkpoints_are_read_module_by_module() {
    use Module as M;
    use Precision as P;
    // gpt-oss-120b: MXFP4 experts (W4A16), everything else BF16 (modules_to_not_convert).
    let gpt_oss = parse(include_str!("../data/hf/gpt-oss-120b.json"));
    assert_eq!(
        modules_of(include_str!("../data/hf/gpt-oss-120b.json")),
        [
            (M::Attention, P::Bf16, P::Bf16),
            (M::RoutedExperts, P::Mxfp4, P::Bf16),
            (M::Router, P::Bf16, P::Bf16),
            (M::Embeddings, P::Bf16, P::Bf16),
            (M::Head, P::Bf16, P::Bf16),
        ]
    );
    // Its weights: 36 layers · 128 experts of 3 · 2880² MXFP4 elements at 4 bits + one E8M0 byte per 32
    // (13,219,200 B each), attention 36 · 26,542,080 BF16 parameters, routers 36 · 2880 · 128, embedding and
    // head 2 · 201,088 · 2880, norms 73 · 2880: about 65 GB; all in BF16, 116.79B parameters · 2 B ≈ 234 GB.
    let checkpoint = gpt_oss.checkpoint.clone().unwrap();
    let expected = 4608.0 * 13_219_200.0
        + 36.0 * 26_542_080.0 * 2.0
        + 36.0 * 2880.0 * 128.0 * 2.0
        + 2.0 * 201_088.0 * 2880.0 * 2.0
        + 73.0 * 2880.0 * 2.0;
    assert_eq!(gpt_oss.weight_bytes(&checkpoint), expected);
    assert!((expected / 1e9 - 65.17).abs() < 0.01, "{expected}");
    let bf16 = gpt_oss.weight_bytes(roofline_core::find_quant_config("bf16").unwrap());
    assert!((bf16 / 1e9 - 233.58).abs() < 0.01, "{bf16}");
    // Qwen3-32B-FP8: every decoder linear layer block-scaled FP8, the head at the hidden precision.
    let qwen = parse(include_str!("../data/hf/qwen3-32b-fp8.json"));
    let config = qwen.checkpoint.clone().unwrap();
    assert_eq!(
        (config.weights, config.activations, config.modules.len()),
        (P::Fp8Block128, P::Fp8Group128, 0)
    );
    // Kimi-K2.5 style: INT4 routed experts only; MLA attention, the dense layer, the shared expert and the
    // head stay BF16 (the `ignore` regular expressions).
    assert_eq!(
        modules_of(include_str!("../data/hf/kimi-k2.5-style.json")),
        [
            (M::Attention, P::Bf16, P::Bf16),
            (M::DenseMlp, P::Bf16, P::Bf16),
            (M::RoutedExperts, P::Int4G32, P::Bf16),
            (M::SharedExperts, P::Bf16, P::Bf16),
            (M::Router, P::Bf16, P::Bf16),
            (M::Embeddings, P::Bf16, P::Bf16),
            (M::Head, P::Bf16, P::Bf16),
        ]
    );
    // A config.json without quantization_config has no checkpoint precisions: it runs in BF16.
    assert_eq!(parse(include_str!("../data/hf/qwen3-8b.json")).checkpoint, None);
}

#[test]
fn other_methods_and_their_exclusions() {
    use Module as M;
    use Precision as P;
    let qwen3 = include_str!("../data/hf/qwen3-8b.json");
    let with = |config: Value| edited(qwen3, |v| v["quantization_config"] = config);
    // compressed-tensors NVFP4 (docs/research/low-precision.md §4): W4A4 everywhere but the ignored head;
    // with `ignore: []` the head too.
    let nvfp4 = |ignore: Value| {
        with(json!({
            "quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"],
                "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16,
                            "dynamic": false},
                "input_activations": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                      "group_size": 16, "dynamic": "local"}}},
            "ignore": ignore
        }))
    };
    let head = |json: &str| modules_of(json).into_iter().find(|m| m.0 == M::Head).unwrap();
    // (The hidden precision of FP8/FP4 activations is FP16, `Precision::default_output`.)
    assert_eq!(head(&nvfp4(json!(["lm_head"]))), (M::Head, P::Fp16, P::Fp16));
    assert_eq!(head(&nvfp4(json!([]))), (M::Head, P::Nvfp4, P::Nvfp4));
    // ModelOpt FP8 with an FP8 KV cache; static per-tensor activation scales.
    let modelopt = parse(&with(json!({
        "quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
        "exclude_modules": ["lm_head"]
    })));
    let c = modelopt.checkpoint.unwrap();
    assert_eq!((c.weights, c.kv_cache), (P::Fp8E4M3, P::Fp8E4M3));
    assert_eq!(c.activation_scale, ActivationScale::StaticPerTensor);
    // AWQ (TheBloke/Mistral-7B-OpenOrca-AWQ): INT4 groups of 128 with zero points, FP16 activations.
    let awq = parse(&with(
        json!({"quant_method": "awq", "zero_point": true, "group_size": 128, "bits": 4,
                                 "version": "gemm"}),
    ));
    let c = awq.checkpoint.unwrap();
    assert_eq!((c.weights, c.activations), (P::Int4G128Zp, P::Fp16));
    // compressed-tensors INT8 W8A8 with per-token dynamic activations (nm-testing W8A8 configs).
    let int8 = parse(&with(json!({
        "quant_method": "compressed-tensors", "format": "int-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
            "input_activations": {"num_bits": 8, "type": "int", "strategy": "token", "dynamic": true}}},
        "ignore": ["lm_head"]
    })));
    let c = int8.checkpoint.unwrap();
    assert_eq!((c.weights, c.activations), (P::Int8, P::Int8));
    assert_eq!(c.activation_scale, ActivationScale::DynamicPerToken);
}

#[test]
fn unknown_or_partial_quantization_is_an_error_naming_it() {
    let qwen3 = include_str!("../data/hf/qwen3-8b.json");
    let error = |config: Value| match ModelConfig::from_hf_config_json(
        "x",
        &edited(qwen3, |v| v["quantization_config"] = config),
    ) {
        Err(Error::InvalidModelConfig { field, message }) => (field, message),
        other => panic!("expected InvalidModelConfig, got {other:?}"),
    };
    // An unknown method names the field and the value, never a silent BF16.
    let (field, message) = error(json!({"quant_method": "hqq", "nbits": 4}));
    assert_eq!(field, "quantization_config.quant_method");
    assert!(message.contains("'hqq'"), "{message}");
    // A scheme the crate does not model names its field.
    let (field, _) = error(json!({"quant_method": "fp8", "weight_block_size": [64, 64]}));
    assert_eq!(field, "quantization_config.weight_block_size");
    let (field, _) = error(json!({"quant_method": "awq", "bits": 3, "group_size": 128}));
    assert_eq!(field, "quantization_config.bits");
    // Excluding one layer's attention leaves the module in two formats: an error, not a guess.
    let (field, message) = error(json!({"quant_method": "fp8", "weight_block_size": [128, 128],
                                        "modules_to_not_convert": ["model.layers.0.self_attn"]}));
    assert_eq!(field, "quantization_config.quant_method");
    assert!(message.contains("attention"), "{message}");
}

#[test]
fn hostile_counts_are_refused_or_counted_without_iterating() {
    // 2^32 − 1 layers fits a u32: refused before anything counts layers, naming the field and the limit.
    let qwen3_moe = FILES[1].2;
    let deep = edited(qwen3_moe, |v| v["num_hidden_layers"] = json!(u32::MAX));
    match import_bounded(&deep) {
        Err(Error::InvalidModelConfig { field, message }) => {
            assert_eq!(field, "num_hidden_layers");
            assert!(message.contains("16777216"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // At the limit (2^24 layers) every per-layer count is a closed form. Gemma 3 slides on 5 of every 6
    // layers: 2^24 − ⌊2^24 / 6⌋ = 16,777,216 − 2,796,202 = 13,981,014.
    let gemma = edited(FILES[5].2, |v| {
        v["text_config"]["num_hidden_layers"] = json!(1u64 << 24);
        v["text_config"].as_object_mut().unwrap().remove("layer_types");
    });
    let model = import_bounded(&gemma).unwrap();
    assert_eq!(model.sliding_window.unwrap().layers, 13_981_014);
    // A 10^6-entry mlp_only_layers on 2^24 layers (the old importer scanned the list once per layer: 10^13
    // comparisons): each named layer loses its experts, repeats counted once. Entries 0, 1, …, 9 repeated
    // 10^5 times with decoder_sparse_step 1 make 10 dense layers.
    let exempt: Vec<u64> = (0..1_000_000u64).map(|i| i % 10).collect();
    let long_list = edited(qwen3_moe, |v| {
        v["num_hidden_layers"] = json!(1u64 << 24);
        v["mlp_only_layers"] = json!(exempt);
    });
    let model = import_bounded(&long_list).unwrap();
    assert_eq!(model.moe.unwrap().dense_layers, 10);
    // A list longer than the layers is refused before it is read.
    let too_long = edited(qwen3_moe, |v| v["mlp_only_layers"] = json!(vec![0; 1000]));
    assert_eq!(field_error(&too_long), "mlp_only_layers");
}

#[test]
fn control_characters_are_stripped_from_every_name_read() {
    // An ESC sequence that would clear a terminal and retitle it, a BEL and a C1 CSI (U+009B).
    let hostile = "\u{1b}[2J\u{1b}]0;pwned\u{7}Qwen/\u{9b}31mQwen3-8B\n";
    let json = edited(FILES[0].2, |v| {
        v["_name_or_path"] = json!(hostile);
    });
    let model = import_bounded(&json).unwrap();
    assert_eq!(model.name, "[2J]0;pwnedQwen/31mQwen3-8B");
    let key = ModelConfig::from_hf_config_json("my\u{1b}[31m-qwen", &json)
        .unwrap()
        .key;
    assert_eq!(key, "my[31m-qwen");
    let architecture = edited(FILES[0].2, |v| {
        v["architectures"] = json!(["Evil\u{1b}[2JForCausalLM"])
    });
    let message = ModelConfig::from_hf_config_json("x", &architecture)
        .unwrap_err()
        .to_string();
    assert!(
        !message.chars().any(char::is_control) && message.contains("Evil[2JForCausalLM"),
        "{message:?}"
    );
}
