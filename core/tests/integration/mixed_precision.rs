//! NVIDIA ModelOpt `MIXED_PRECISION` checkpoints: a format per layer name in `quantized_layers`, read per
//! module class (NVIDIA's MiniMax-M3 NVFP4: NVFP4 routed experts, MXFP8 elsewhere), a class whose layers
//! disagree an error naming one layer of each format, and a map of 100,000 entries read within the bound;
//! NVIDIA's DeepSeek-V4 NVFP4 (DeepSeek's block FP8 with ModelOpt's `moe_quant_algo` for the routed experts).
#![cfg(feature = "serde")]

use crate::checkpoint_bounds::import_bounded;
use crate::edits::edited;
use crate::hf_config::{assert_same_structure, parse};
use roofline_core::{Error, ModelConfig, Module, Precision, QuantConfig};
use serde_json::{Value, json};

const MINIMAX_M3: &str = include_str!("../data/hf/minimax-m3.json");
const MINIMAX_M3_NVFP4: &str = include_str!("../data/hf/modelopt/minimax-m3-nvfp4-hf_quant_config.json");
const QWEN3_8B: &str = include_str!("../data/hf/qwen3-8b.json");
const DSV4_NVFP4: &str = include_str!("../data/hf/deepseek-v4-flash-nvfp4.json");
const DSV4_NVFP4_QUANT: &str =
    include_str!("../data/hf/modelopt/deepseek-v4-flash-nvfp4-hf_quant_config.json");

/// NVIDIA's MiniMax-M3 NVFP4 `config.json` as far as the importer reads it: the published text config
/// inside its multimodal wrapper.
fn minimax_m3_wrapped() -> String {
    json!({
        "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
        "text_config": serde_json::from_str::<Value>(MINIMAX_M3).unwrap(),
    })
    .to_string()
}

fn import(quant: &str) -> Result<ModelConfig, Error> {
    ModelConfig::from_hf_files("minimax-m3-nvfp4", &[&minimax_m3_wrapped(), quant])
}

fn message_of(result: Result<ModelConfig, Error>) -> String {
    match result {
        Err(Error::InvalidModelConfig { message, .. }) => message,
        other => panic!("expected InvalidModelConfig, got {other:?}"),
    }
}

/// The fixture with `edit` applied to its `quantized_layers` map.
fn with_layers(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
    edited(MINIMAX_M3_NVFP4, |v| {
        edit(v["quantization"]["quantized_layers"].as_object_mut().unwrap())
    })
}

/// `config` holds NVFP4 (W4A4) routed experts, `others` in `(weights, activations)`, the head and the KV
/// cache unquantized in NVFP4's hidden format (FP16), and a name containing `name`.
fn assert_nvfp4_experts(
    config: &QuantConfig,
    others: &[Module],
    (weights, activations): (Precision, Precision),
    name: &str,
) {
    let experts = config.format(Module::RoutedExperts);
    assert_eq!(
        (experts.weights, experts.activations),
        (Precision::Nvfp4, Precision::Nvfp4)
    );
    for &module in others {
        let format = config.format(module);
        assert_eq!(
            (format.weights, format.activations),
            (weights, activations),
            "{module}"
        );
    }
    assert_eq!(config.format(Module::Head).weights, Precision::Fp16);
    assert_eq!(config.kv_cache, Precision::Fp16);
    assert!(config.name.contains(name), "{}", config.name);
}

const LAYERS: &str = "language_model.model.layers";

#[test]
fn nvidia_minimax_m3_nvfp4_reads_nvfp4_experts_and_mxfp8_elsewhere() {
    use Module as M;
    use Precision as P;
    let model = import(MINIMAX_M3_NVFP4).unwrap();
    let config = model.checkpoint.clone().unwrap();
    // The file: 3 × 128 experts × 57 layers `{"quant_algo": "NVFP4", "group_size": 16}`, the q/k/v/o and
    // index projections of all 60 layers, the shared experts of 57 and the dense FFN of 3 `MXFP8`; the
    // head (`lm_head` excluded, listed nowhere) and the KV cache (`kv_cache_quant_algo` null) unquantized,
    // in NVFP4's hidden format (FP16), as for every NVFP4 checkpoint read here.
    let others = [M::Attention, M::AttentionOutput, M::SharedExperts, M::DenseMlp];
    assert_nvfp4_experts(&config, &others, (P::Mxfp8E4M3, P::Mxfp8E4M3), "MIXED_PRECISION");
    // The fixture keeps experts 0 and 127 of each layer; the published map lists all 128 (22,422 entries).
    // Restored, it reads the same.
    let full = with_layers(|map| {
        for layer in 3..60 {
            for expert in 1..127 {
                for w in ["w1", "w2", "w3"] {
                    map.insert(
                        format!("{LAYERS}.{layer}.block_sparse_moe.experts.{expert}.{w}"),
                        json!({"quant_algo": "NVFP4", "group_size": 16}),
                    );
                }
            }
        }
        assert_eq!(map.len(), 22_422);
    });
    assert_eq!(import(&full).unwrap().checkpoint, Some(config));
    // NVIDIA's copy of the text config leaves out `moe_intermediate_size` (its `intermediate_size`, 3072 in
    // both files, is the experts' width) and `first_k_dense_replace` (`moe_layer_freq` says it): the same
    // structure.
    let nvidia = edited(&minimax_m3_wrapped(), |v| {
        let text = v["text_config"].as_object_mut().unwrap();
        text.remove("moe_intermediate_size");
        text.remove("first_k_dense_replace");
    });
    assert_same_structure(&parse(&nvidia), "minimax-m3");
}

#[test]
fn a_class_whose_layers_disagree_is_an_error_naming_a_layer_of_each() {
    // Layer 30's routed experts in MXFP8 beside the others' NVFP4.
    let experts = with_layers(|map| {
        for expert in [0, 127] {
            for w in ["w1", "w2", "w3"] {
                map.insert(
                    format!("{LAYERS}.30.block_sparse_moe.experts.{expert}.{w}"),
                    json!({"quant_algo": "MXFP8"}),
                );
            }
        }
    });
    let message = message_of(import(&experts));
    assert!(message.contains("routed experts"), "{message}");
    assert!(
        message.contains(&format!("{LAYERS}.3.block_sparse_moe.experts.0.w1: NVFP4")),
        "{message}"
    );
    assert!(
        message.contains(&format!("{LAYERS}.30.block_sparse_moe.experts.0.w1: MXFP8")),
        "{message}"
    );
    // Layer 40's shared expert left out of the map: BF16 beside MXFP8.
    let unlisted = with_layers(|map| {
        for p in ["gate_proj", "up_proj", "down_proj"] {
            map.remove(&format!("{LAYERS}.40.block_sparse_moe.shared_experts.{p}"));
        }
    });
    let message = message_of(import(&unlisted));
    assert!(
        message.contains(&format!(
            "{LAYERS}.40.block_sparse_moe.shared_experts.gate_proj: BF16"
        )),
        "{message}"
    );
    // A format the analysis does not model, and a map naming none of the model's layers (DeepSeek's own
    // `layers.0.ffn.experts` against the transformers names), are errors naming them.
    let int4 = with_layers(|map| {
        map.insert(
            format!("{LAYERS}.0.self_attn.q_proj"),
            json!({"quant_algo": "W4A8_AWQ"}),
        );
    });
    assert!(message_of(import(&int4)).contains("'W4A8_AWQ' is not modelled"));
    let foreign = with_layers(|map| {
        map.clear();
        map.insert(
            "layers.0.ffn.experts".to_owned(),
            json!({"quant_algo": "NVFP4", "group_size": 16}),
        );
    });
    let message = message_of(import(&foreign));
    assert!(
        message.contains("layers.0.ffn.experts") && message.contains(LAYERS),
        "{message}"
    );
}

#[test]
fn a_map_of_100_000_entries_is_read_within_the_bound() {
    // Qwen3-8B (36 dense layers) with 50,000 layers' attention FP8 and FFN NVFP4 by their parents' names:
    // every layer the map names is looked up by name, the 49,964 past the model's 36 never evaluated.
    let mut layers = serde_json::Map::new();
    for i in 0..50_000 {
        layers.insert(
            format!("model.layers.{i}.self_attn"),
            json!({"quant_algo": "FP8"}),
        );
        layers.insert(
            format!("model.layers.{i}.mlp"),
            json!({"quant_algo": "NVFP4", "group_size": 16}),
        );
    }
    let json = edited(QWEN3_8B, |v| {
        v["quantization_config"] = json!({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
            "quantized_layers": layers, "exclude_modules": ["lm_head"]});
    });
    let config = import_bounded(&json).unwrap().checkpoint.unwrap();
    assert_eq!(config.format(Module::DenseMlp).weights, Precision::Nvfp4);
    assert_eq!(config.format(Module::Attention).weights, Precision::Fp8E4M3);
    // Past 2^18 entries the map is refused, naming the cap.
    let many: serde_json::Map<String, Value> = (0..(1 << 18) + 1)
        .map(|i| (format!("x{i}"), json!({"quant_algo": "FP8"})))
        .collect();
    let json = edited(QWEN3_8B, |v| {
        v["quantization_config"] = json!({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
            "quantized_layers": many});
    });
    let message = message_of(import_bounded(&json));
    assert!(message.contains("262144"), "{message}");
}

/// NVIDIA's DeepSeek-V4-Flash NVFP4 `config.json` with `edit` applied to its `quantization_config`.
fn dsv4_quant(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
    edited(DSV4_NVFP4, |v| {
        edit(v["quantization_config"].as_object_mut().unwrap())
    })
}

#[test]
fn nvidia_deepseek_v4_nvfp4_reads_nvfp4_experts_and_block_fp8_elsewhere() {
    use Module as M;
    use Precision as P;
    // The file: `quant_method` fp8 with 128 × 128 blocks (DeepSeek's format), `moe_quant_algo` NVFP4 and the
    // 43 layers' `layers.{i}.ffn.experts` NVFP4 in groups of 16, `ignore` the attention, the shared experts,
    // the head and the MTP layer: those stay in the block FP8 the base checkpoint ships (the head in the
    // hidden format, FP16 for NVFP4 as for every NVFP4 checkpoint here), the KV cache unquantized.
    let model = ModelConfig::from_hf_config_json("dsv4-nvfp4", DSV4_NVFP4).unwrap();
    let config = model.checkpoint.clone().unwrap();
    let others = [M::Attention, M::AttentionOutput, M::SharedExperts];
    assert_nvfp4_experts(
        &config,
        &others,
        (P::Fp8Block128, P::Fp8Group128),
        "NVFP4 routed experts",
    );
    // With its hf_quant_config.json beside it (the same map, `quant_algo` MIXED_PRECISION in both): the same.
    let both = ModelConfig::from_hf_files("dsv4-nvfp4", &[DSV4_NVFP4, DSV4_NVFP4_QUANT]).unwrap();
    assert_eq!(both.checkpoint, Some(config));
    // Without `quantized_layers`, `moe_quant_algo` alone gives the experts the same format.
    let bare = dsv4_quant(|q| {
        q.remove("quantized_layers");
    });
    assert_eq!(parse(&bare).checkpoint, model.checkpoint);
    // The architecture is DeepSeek-V4-Flash's, only the checkpoint differs.
    let preset = roofline_core::find_model("deepseek-v4-flash").unwrap();
    let structure = ModelConfig {
        checkpoint: preset.checkpoint.clone(),
        ..model
    };
    assert_same_structure(&structure, "deepseek-v4-flash");
}

#[test]
fn a_deepseek_v4_class_whose_layers_disagree_is_an_error_naming_a_layer_of_each() {
    // Layer 20's routed experts in FP8 beside the others' NVFP4.
    let experts = dsv4_quant(|q| {
        q["quantized_layers"]["layers.20.ffn.experts"] = json!({"quant_algo": "FP8"});
    });
    let message = message_of(import_bounded(&experts));
    assert!(message.contains("routed experts"), "{message}");
    assert!(message.contains("layers.0.ffn.experts.0.w1: NVFP4"), "{message}");
    assert!(message.contains("layers.20.ffn.experts.0.w1: FP8"), "{message}");
    // Layer 7's attention out of `ignore` and listed NVFP4: the other layers' stay block FP8.
    let attention = dsv4_quant(|q| {
        q["ignore"] = json!(["*.ffn.shared_experts.*", "head", "mtp.*"]);
        q["quantized_layers"]["layers.7.attn"] = json!({"quant_algo": "NVFP4", "group_size": 16});
    });
    let message = message_of(import_bounded(&attention));
    assert!(message.contains("layers.0.attn.wq_a: FP8_BLOCK128"), "{message}");
    assert!(message.contains("layers.7.attn.wq_a: NVFP4"), "{message}");
    // An expert format the analysis does not model is an error naming the field.
    let int4 = dsv4_quant(|q| q["moe_quant_algo"] = json!("W4A8_AWQ"));
    let message = message_of(import_bounded(&int4));
    assert!(message.contains("'W4A8_AWQ' is not modelled"), "{message}");
    // Past 2^18 entries the map is refused, naming the cap, as for MIXED_PRECISION.
    let many = dsv4_quant(|q| {
        q["quantized_layers"] = (0..(1 << 18) + 1)
            .map(|i| (format!("layers.{i}.ffn.experts"), json!({"quant_algo": "NVFP4"})))
            .collect::<serde_json::Map<_, _>>()
            .into();
    });
    let message = message_of(import_bounded(&many));
    assert!(message.contains("262144"), "{message}");
}
