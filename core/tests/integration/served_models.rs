//! The models served in 2026 from their published `config.json` (issue 35): Qwen3-Next, Qwen3.5 and Qwen3.6
//! (Gated DeltaNet hybrids), DeepSeek-V3.2 and GLM-5 (MLA with DeepSeek Sparse Attention), GLM-4.x, MiniMax-M2.5
//! and Kimi-K2.5; their parameter counts against the published ones, their per-sequence state and cache bytes
//! against hand derivations, and their checkpoints, NVIDIA ModelOpt's `hf_quant_config.json` included.
#![cfg(feature = "serde")]

use crate::edits::edited;
use crate::hf_config::{assert_same_structure, module_formats, parse};
use roofline_core::{Error, ModelConfig, Module, Precision};
use serde_json::json;

/// A fixture of `tests/data/hf` (see its README for the source of each file).
macro_rules! hf {
    ($file:literal) => {
        include_str!(concat!("../data/hf/", $file))
    };
}

const QWEN3_NEXT: &str = hf!("qwen3-next-80b-a3b.json");
const QWEN3_5: &str = hf!("qwen3.5-397b-a17b.json");
const QWEN3_5_DENSE: &str = hf!("qwen3.5-27b.json");
const QWEN3_6: &str = hf!("qwen3.6-35b-a3b.json");
const DEEPSEEK_V3_2: &str = hf!("deepseek-v3.2.json");
const GLM_5: &str = hf!("glm-5.json");
const GLM_5_FP8: &str = hf!("glm-5-fp8.json");
const GLM_4: &str = hf!("glm-4.7.json");
const MINIMAX: &str = hf!("minimax-m2.5.json");
const KIMI_K2_5: &str = hf!("kimi-k2.5.json");

#[test]
fn published_configs_parse_to_the_presets() {
    // GLM-4.7's file as AIC transcribes it omits `num_nextn_predict_layers`; GLM-4.5 has 1 MTP layer (GLM-5
    // report, Table 1).
    let glm4 = edited(GLM_4, |v| v["num_nextn_predict_layers"] = json!(1));
    for (json, preset) in [
        (QWEN3_NEXT, "qwen3-next-80b-a3b"),
        (QWEN3_5, "qwen3.5-397b-a17b"),
        (QWEN3_6, "qwen3.6-35b-a3b"),
        (DEEPSEEK_V3_2, "deepseek-v3.2"),
        (GLM_5_FP8, "glm-5"),
        (&glm4, "glm-4.6"),
        (MINIMAX, "minimax-m2.5"),
        (KIMI_K2_5, "kimi-k2.5"),
    ] {
        assert_same_structure(&parse(json), preset);
    }
    // GLM-5 in BF16 is the FP8 file's structure without a checkpoint format.
    assert_eq!(
        parse(GLM_5),
        ModelConfig {
            checkpoint: None,
            ..parse(GLM_5_FP8)
        }
    );
}

#[test]
fn parameter_counts_match_the_published_sizes_within_2_percent() {
    // Published totals (sources in each preset): Qwen3-Next 80B; Qwen3.5-397B-A17B 397B and Qwen3.6-35B-A3B
    // 35B with their vision encoders (27 layers of 4·1152² + 2·1152·4304 ≈ 0.41B, not modelled); Qwen3.5-27B
    // 27B; DeepSeek-V3.2 685B with its 14B MTP module; GLM-5 744B and GLM-4.5 355B (GLM-5 report, Table 1);
    // MiniMax-M2.5 230B; Kimi K2's 1.04T (its report, arXiv:2507.20534; K2.5's text model is K2's).
    let vision = 27.0 * (4.0 * 1152.0 * 1152.0 + 2.0 * 1152.0 * 4304.0);
    for (name, json, published) in [
        ("Qwen3-Next-80B-A3B", QWEN3_NEXT, 80e9),
        ("Qwen3.5-397B-A17B", QWEN3_5, 397e9 - vision),
        ("Qwen3.5-27B", QWEN3_5_DENSE, 27e9 - vision),
        ("Qwen3.6-35B-A3B", QWEN3_6, 35e9 - vision),
        ("DeepSeek-V3.2", DEEPSEEK_V3_2, 685e9 - 14e9),
        ("GLM-5", GLM_5, 744e9),
        ("GLM-4.5/4.6/4.7", GLM_4, 355e9),
        ("MiniMax-M2.5", MINIMAX, 230e9),
        ("Kimi-K2.5", KIMI_K2_5, 1.04e12),
    ] {
        let total = parse(json).parameters().total;
        assert!(
            (total / published - 1.0).abs() < 0.02,
            "{name}: {:.2}B against the published {:.2}B",
            total / 1e9,
            published / 1e9
        );
    }
}

#[test]
fn linear_attention_keeps_a_constant_state_per_sequence() {
    // Qwen3.5-397B-A17B: 45 of 60 layers Gated DeltaNet (3 of every 4), 64 value heads of 128 × 128 in FP32:
    // 45 · 64 · 128 · 128 · 4 B = 188,743,680 B (the "189 MB"), plus the convolution window of
    // (2 · 16 · 128 + 64 · 128) channels · 3 taps · 2 B = 73,728 B a layer, 3,317,760 B in all.
    let qwen = parse(QWEN3_5);
    assert_eq!(qwen.linear_attention.unwrap().layers, 45);
    assert_eq!(qwen.state_bytes_per_sequence(), 188_743_680.0 + 3_317_760.0);
    // Its 15 full-attention layers cache 2 · 2 KV heads · 256 · 2 B = 2048 B a token each: 30,720 B.
    assert_eq!(qwen.kv_bytes_per_token(Precision::Bf16), 30_720.0);
    // A sequence of 4096 tokens holds both: 4096 · 30,720 + 192,061,440 B.
    assert_eq!(
        qwen.kv_cache_bytes(Precision::Bf16, 4096),
        4096.0 * 30_720.0 + 192_061_440.0
    );
    // Qwen3.5-27B (dense): 48 of 64 layers, 48 value heads: 48 · (48 · 128² · 4 + (4096 + 6144) · 3 · 2) B.
    let dense = parse(QWEN3_5_DENSE);
    assert!(dense.moe.is_none());
    assert_eq!(dense.state_bytes_per_sequence(), 48.0 * (3_145_728.0 + 61_440.0));
    // Qwen3-Next has no layer_types: full_attention_interval 4 makes 36 of 48 layers linear.
    let next = parse(QWEN3_NEXT);
    assert_eq!(
        next.state_bytes_per_sequence(),
        36.0 * (32.0 * 16_384.0 * 4.0 + 8192.0 * 6.0)
    );
    // layer_types and the interval agree.
    let from_interval = edited(QWEN3_5, |v| {
        v["text_config"].as_object_mut().unwrap().remove("layer_types");
    });
    assert_eq!(parse(&from_interval), qwen);
}

#[test]
fn sparse_attention_caches_an_index_key_per_token() {
    // DeepSeek-V3.2 in an FP8 KV cache: 61 layers · (512 + 64) MLA elements · 1 B, plus the indexer's 128
    // FP8 elements and one FP32 scale (132 B) a layer: 61 · 708 = 43,188 B a token.
    let deepseek = parse(DEEPSEEK_V3_2);
    let indexer = deepseek.sparse_indexer.unwrap();
    assert_eq!((indexer.heads, indexer.head_dim, indexer.top_k), (64, 128, 2048));
    assert_eq!(deepseek.kv_bytes_per_token(Precision::Fp8E4M3), 43_188.0);
    assert_eq!(
        deepseek.kv_cache_bytes(Precision::Fp8E4M3, 4096),
        4096.0 * 43_188.0
    );
    // GLM-5: 78 layers · (576 · 2 B + 132 B) = 100,152 B a token in BF16; 32 indexer heads.
    let glm = parse(GLM_5);
    assert_eq!(glm.sparse_indexer.unwrap().heads, 32);
    assert_eq!(glm.kv_bytes_per_token(Precision::Bf16), 100_152.0);
    // The other families cache plain GQA or MLA: MiniMax-M2.5 62 · 2 · 8 · 128 · 2 B, GLM-4.x 92 · 2 · 8 ·
    // 128 · 2 B, Kimi-K2.5 61 · 576 · 2 B.
    for (json, bytes) in [(MINIMAX, 253_952.0), (GLM_4, 376_832.0), (KIMI_K2_5, 70_272.0)] {
        assert_eq!(parse(json).kv_bytes_per_token(Precision::Bf16), bytes);
    }
}

#[test]
fn multi_token_prediction_layers_are_read() {
    for (json, mtp) in [
        (QWEN3_5, 1),
        (DEEPSEEK_V3_2, 1),
        (GLM_5, 1),
        (MINIMAX, 3),
        (KIMI_K2_5, 0),
        (QWEN3_NEXT, 0),
    ] {
        assert_eq!(parse(json).mtp_layers, mtp);
    }
}

#[test]
fn published_checkpoints_are_read_module_by_module() {
    use Module as M;
    use Precision as P;
    // Kimi-K2.5: INT4 groups of 32 on the routed experts only, BF16 elsewhere, as the composed Kimi-K2.5-style
    // file (`hf_config.rs`) read its copy of this quantization_config; here its names are the text model's,
    // where it sits under `text_config`.
    let kimi = module_formats(&parse(KIMI_K2_5));
    assert_eq!(kimi, module_formats(&parse(hf!("kimi-k2.5-style.json"))));
    assert!(kimi.contains(&(M::RoutedExperts, P::Int4G32, P::Bf16)));
    // GLM-5-FP8: 128×128 blocks everywhere; its 712 modules_to_not_convert entries name norms, the indexer's
    // weights_proj, the routers and the MTP layer layer by layer, none of the projections.
    let glm = parse(GLM_5_FP8).checkpoint.unwrap();
    assert_eq!((glm.weights, glm.modules.len()), (P::Fp8Block128, 0));
    // MiniMax-M2.5: the same format, `fmt` written as the torch dtype.
    assert_eq!(parse(MINIMAX).checkpoint.unwrap().weights, P::Fp8Block128);
}

const QWEN3_5_NVFP4: &str = hf!("modelopt/qwen3.5-397b-a17b-nvfp4-hf_quant_config.json");
const GLM_5_NVFP4: &str = hf!("modelopt/glm-5-nvfp4-hf_quant_config.json");
const MINIMAX_NVFP4: &str = hf!("modelopt/minimax-m2.5-nvfp4-hf_quant_config.json");
const DEEPSEEK_NVFP4: &str = hf!("modelopt/deepseek-v3.2-nvfp4-hf_quant_config.json");

fn with_quant_file(config: &str, quant: &str) -> Result<ModelConfig, Error> {
    ModelConfig::from_hf_files("nvfp4", &[config, quant])
}

/// `config` without its own `quantization_config`, imported with `quant`: its checkpoint.
fn quantized_by(config: &str, quant: &str) -> roofline_core::QuantConfig {
    let plain = edited(config, |v| {
        v.as_object_mut().unwrap().remove("quantization_config");
    });
    with_quant_file(&plain, quant).unwrap().checkpoint.unwrap()
}

#[test]
fn modelopt_hf_quant_config_beside_config_json() {
    use Module as M;
    use Precision as P;
    // Qwen3.5-397B-A17B-NVFP4: every linear_attn and self_attn, the shared experts and the head excluded
    // (BF16 beside FP16 for the FP4 activations' hidden format), the routed experts NVFP4, an FP8 KV cache.
    // Its names are the multimodal wrapper's (`model.language_model.layers.…`), as the file's globs say.
    let qwen = with_quant_file(QWEN3_5, QWEN3_5_NVFP4).unwrap();
    let config = qwen.checkpoint.clone().unwrap();
    assert_eq!((config.weights, config.kv_cache), (P::Nvfp4, P::Fp8E4M3));
    for module in [M::Attention, M::SharedExperts, M::Head] {
        assert_eq!(config.format(module).weights, P::Fp16, "{module}");
    }
    // Either order.
    assert_eq!(
        ModelConfig::from_hf_files("nvfp4", &[QWEN3_5_NVFP4, QWEN3_5]).unwrap(),
        qwen
    );
    // GLM-5-NVFP4: attention and its indexer excluded layer by layer (78 · 6 globs and names); the dense
    // layers and all experts NVFP4.
    let glm = with_quant_file(GLM_5, GLM_5_NVFP4).unwrap();
    assert_eq!(
        module_formats(&glm)
            .into_iter()
            .filter(|m| m.1 == P::Nvfp4)
            .map(|m| m.0)
            .collect::<Vec<_>>(),
        [M::DenseMlp, M::RoutedExperts, M::SharedExperts]
    );
    // MiniMax-M2.5's own config.json holds its FP8 quantization_config: with the NVFP4 file too, an error
    // (give one of them); without it, the NVFP4 file reads: attention excluded, experts NVFP4.
    let message = with_quant_file(MINIMAX, MINIMAX_NVFP4).unwrap_err().to_string();
    assert!(message.contains("own quantization_config"), "{message}");
    let minimax = quantized_by(MINIMAX, MINIMAX_NVFP4);
    assert_eq!(minimax.format(M::RoutedExperts).weights, P::Nvfp4);
    assert_eq!(minimax.format(M::Attention).weights, P::Fp16);
    // DeepSeek-V3.2-NVFP4 (NVIDIA's config.json has no quantization_config of its own) excludes q_a, q_b,
    // kv_a, kv_b and the indexer but not o_proj: the attention's output projection is stored apart, NVFP4.
    let deepseek = quantized_by(DEEPSEEK_V3_2, DEEPSEEK_NVFP4);
    assert_eq!(deepseek.format(M::Attention).weights, P::Fp16);
    assert_eq!(deepseek.format(M::AttentionOutput).weights, P::Nvfp4);
    assert_eq!(deepseek.format(M::DenseMlp).weights, P::Nvfp4);
}

#[test]
fn unusable_file_pairs_and_formats_are_errors_naming_them() {
    let field = |result: Result<ModelConfig, Error>| match result {
        Err(Error::InvalidModelConfig { field, message }) => (field, message),
        other => panic!("expected InvalidModelConfig, got {other:?}"),
    };
    let (name, message) = field(ModelConfig::from_hf_files("x", &[QWEN3_5, QWEN3_5]));
    assert_eq!(name, "hf_quant_config.json");
    assert!(message.contains("two config.json"), "{message}");
    let (_, message) = field(ModelConfig::from_hf_files("x", &[QWEN3_5_NVFP4, GLM_5_NVFP4]));
    assert!(message.contains("two ModelOpt files"), "{message}");
    assert!(
        field(ModelConfig::from_hf_files("x", &[]))
            .1
            .contains("not 0 files")
    );
    // ModelOpt's MIXED_PRECISION without its per-layer `quantized_layers` is refused, naming them.
    let mixed = edited(QWEN3_5_NVFP4, |v| {
        v["quantization"]["quant_algo"] = json!("MIXED_PRECISION")
    });
    let (name, message) = field(with_quant_file(QWEN3_5, &mixed));
    assert_eq!(name, "quantization_config.quantized_layers");
    assert!(message.contains("MIXED_PRECISION"), "{message}");
    // An unknown architecture lists the new ones among those supported.
    let unknown = edited(QWEN3_NEXT, |v| {
        v["architectures"] = json!(["KimiLinearForCausalLM"])
    });
    let message = ModelConfig::from_hf_config_json("x", &unknown)
        .unwrap_err()
        .to_string();
    for known in [
        "Qwen3NextForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
        "DeepseekV32ForCausalLM",
        "GlmMoeDsaForCausalLM",
        "Glm4MoeForCausalLM",
        "MiniMaxM2ForCausalLM",
        "KimiK25ForConditionalGeneration",
    ] {
        assert!(message.contains(known), "{known} missing from: {message}");
    }
}
