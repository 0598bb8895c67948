//! The next wave of served models (issue 35, item 4) from their published `config.json`: DeepSeek-V4 Flash
//! and Pro (compressed sparse and heavily compressed attention beside a sliding window), Kimi-K3 (Kimi Delta
//! Attention beside gated MLA, LatentMoE), MiniMax-M3 (MiniMax Sparse Attention); their parameter counts
//! against the published ones and their per-sequence cache bytes against hand derivations.
#![cfg(feature = "serde")]

use crate::edits::edited;
use crate::hf_config::{assert_same_structure, module_formats, parse};
use roofline_core::{Error, ModelConfig, Module, Precision};
use serde_json::json;

const DEEPSEEK_V4_FLASH: &str = include_str!("../data/hf/deepseek-v4-flash.json");
const DEEPSEEK_V4_PRO: &str = include_str!("../data/hf/deepseek-v4-pro.json");
const KIMI_K3: &str = include_str!("../data/hf/kimi-k3.json");
const MINIMAX_M3: &str = include_str!("../data/hf/minimax-m3.json");

#[test]
fn deepseek_v4_configs_parse_to_the_presets_with_fp4_experts() {
    for (json, preset) in [
        (DEEPSEEK_V4_FLASH, "deepseek-v4-flash"),
        (DEEPSEEK_V4_PRO, "deepseek-v4-pro"),
    ] {
        let model = parse(json);
        assert_same_structure(&model, preset);
        // `quantization_config` fp8 blocks, `expert_dtype` fp4 for the routed experts.
        let formats = module_formats(&model);
        assert!(formats.contains(&(Module::RoutedExperts, Precision::Mxfp4, Precision::Bf16)));
        assert!(formats.contains(&(Module::Attention, Precision::Fp8Block128, Precision::Fp8Group128)));
        assert_eq!(model.mtp_layers, 1);
    }
    // Flash: layers 0 and 1 slide only, then 4 and 128 alternate (the last entry is the MTP layer's).
    let flash = parse(DEEPSEEK_V4_FLASH).compressed_attention.unwrap();
    assert_eq!((flash.csa_layers, flash.hca_layers), (21, 20));
}

#[test]
fn deepseek_v4_parameter_counts_match_the_model_cards_within_2_percent() {
    // The model cards (huggingface.co/deepseek-ai/DeepSeek-V4-Flash, -Pro): "284B" total, "13B" activated;
    // "1.6T" total, "49B" activated. The MTP layer is not counted (nor in DeepSeek-V3's 671B).
    for (json, total, active) in [(DEEPSEEK_V4_FLASH, 284e9, 13e9), (DEEPSEEK_V4_PRO, 1.6e12, 49e9)] {
        let p = parse(json).parameters();
        assert!(
            (p.total / total - 1.0).abs() < 0.02,
            "{} against {total}",
            p.total
        );
        // Active includes the 1.06B (Flash) or 1.85B (Pro) embedding and head.
        assert!(
            (p.active / active - 1.0).abs() < 0.07,
            "{} against {active}",
            p.active
        );
    }
}

#[test]
fn deepseek_v4_flash_caches_a_window_and_compressed_entries() {
    let flash = parse(DEEPSEEK_V4_FLASH);
    // One constant state: CSA's compressors keep 2 (kv, gate) · 4 tokens · 2 series · (512 + 128) · 4 B =
    // 40,960 B on each of 21 layers, HCA's 2 · 128 · 512 · 4 B = 524,288 B on each of 20.
    let state = 21.0 * 40_960.0 + 20.0 * 524_288.0;
    assert_eq!(flash.state_bytes_per_sequence(), state);
    // At 1M tokens in FP8: 43 layers · 128 window tokens, 21 · 262,144 CSA entries and 20 · 8192 HCA
    // entries, 512 B each, and 21 · 262,144 index keys of 128 FP8 and a 4 B scale.
    let context = 1_048_576;
    let entries = 43.0 * 128.0 + 21.0 * 262_144.0 + 20.0 * 8192.0;
    assert_eq!(
        flash.kv_cache_bytes(Precision::Fp8E4M3, context),
        entries * 512.0 + 21.0 * 262_144.0 * 132.0 + state
    );
    // Within the window every layer holds every token: 100 tokens, 25 CSA entries, no HCA entry yet.
    assert_eq!(
        flash.kv_cache_bytes(Precision::Bf16, 100),
        (43.0 * 100.0 + 21.0 * 25.0) * 1024.0 + 21.0 * 25.0 * 132.0 + state
    );
}

/// The field the import of `json` edited by `edit` names in its error.
fn error_field(json: &str, edit: fn(&mut serde_json::Value)) -> String {
    match ModelConfig::from_hf_config_json("x", &edited(json, edit)) {
        Err(Error::InvalidModelConfig { field, .. }) => field,
        other => panic!("{other:?}"),
    }
}

#[test]
fn deepseek_v4_without_its_fields_is_an_error_naming_them() {
    let error = |edit| error_field(DEEPSEEK_V4_FLASH, edit);
    assert_eq!(error(|v| v["compress_ratios"] = json!([0, 4])), "compress_ratios");
    assert_eq!(error(|v| v["compress_ratios"][5] = json!(64)), "compress_ratios");
    assert_eq!(
        error(|v| {
            v.as_object_mut().unwrap().remove("o_groups");
        }),
        "o_groups"
    );
    assert_eq!(error(|v| v["expert_dtype"] = json!("int2")), "expert_dtype");
}

#[test]
fn kimi_k3_config_parses_to_the_preset_with_mxfp4_experts() {
    let model = parse(KIMI_K3);
    assert_same_structure(&model, "kimi-k3");
    // 69 KDA layers (`kda_layers`, numbered from 1), 24 MLA layers; layer 1 dense (first_k_dense_replace).
    assert_eq!(
        (model.linear_attention_layers(), model.attention_layers()),
        (69, 24)
    );
    assert_eq!((model.dense_layers(), model.moe_layers()), (1, 92));
    // compressed-tensors mxfp4-pack-quantized on every Linear but `ignore`'s attention, shared experts,
    // dense MLP and head: MXFP4 routed experts with BF16 activations.
    assert_eq!(
        module_formats(&model),
        [
            (Module::Attention, Precision::Bf16, Precision::Bf16),
            (Module::DenseMlp, Precision::Bf16, Precision::Bf16),
            (Module::RoutedExperts, Precision::Mxfp4, Precision::Bf16),
            (Module::SharedExperts, Precision::Bf16, Precision::Bf16),
            (Module::Router, Precision::Bf16, Precision::Bf16),
            (Module::Embeddings, Precision::Bf16, Precision::Bf16),
            (Module::Head, Precision::Bf16, Precision::Bf16),
        ]
    );
}

#[test]
fn kimi_k3_parameter_count_matches_the_published_size_within_2_percent() {
    // "Kimi K3 2.8T" (SemiAnalysisAI/InferenceX README, 2026/07; aiconfigurator 095f58a kimi_k3.py "2.8T").
    // By hand: embedding and head 2 · 163,840 · 7168 = 2,348,810,240; dense layer 3 · 7168 · 33,792 =
    // 726,663,168; 92 MoE layers of 896 experts 3 · 3584 · 3072 (2,722,740,830,208), 2 shared 3 · 7168 ·
    // 3072 (12,155,092,992), router and latent pair 7168 · (896 + 2 · 3584) (5,317,853,184), latent norm
    // 3584 (329,728); 69 KDA layers of 7168 · (4 · 12,288 + 96 + 128) in, 128 · 12,288 f_b, 12,288 · 7168
    // out, 36,864 · 4 conv + 96 + 12,288 + 128 (30,618,086,496); 24 MLA layers of 232,194,048 with the
    // 7168 → 12,288 gate, and 2048 of norms (5,572,706,304); 93 · 2 · 7168 + 7168 norms (1,340,416).
    // No active count is published; 16 of 896 experts: 105.4B.
    assert_parameters(KIMI_K3, (2_779_481_712_736.0, 105_361_254_496.0), (2.8e12, None));
}

/// `json`'s parameter counts are `derived` (total, active) exactly, within 2 % of `published`.
fn assert_parameters(json: &str, derived: (f64, f64), published: (f64, Option<f64>)) {
    let p = parse(json).parameters();
    assert_eq!((p.total, p.active), derived);
    assert!((p.total / published.0 - 1.0).abs() < 0.02, "{}", p.total);
    if let Some(active) = published.1 {
        assert!((p.active / active - 1.0).abs() < 0.02, "{}", p.active);
    }
}

#[test]
fn kimi_k3_keeps_kda_state_and_an_mla_latent_per_token() {
    let k3 = parse(KIMI_K3);
    // Each of 69 KDA layers: 96 heads · 128 · 128 FP32 = 6,291,456 B of state and q, k, v's 3 · 12,288
    // channels · 3 taps · 2 B = 221,184 B of convolution window (vLLM kda_state_shape; aiconfigurator's
    // per-slot figure): 449,372,160 B a sequence.
    assert_eq!(k3.state_bytes_per_sequence(), 69.0 * (6_291_456.0 + 221_184.0));
    // 24 MLA layers cache 512 + 64 elements a token: 27,648 B in BF16.
    assert_eq!(k3.kv_bytes_per_token(Precision::Bf16), 27_648.0);
    assert_eq!(
        k3.kv_cache_bytes(Precision::Bf16, 131_072),
        131_072.0 * 27_648.0 + 449_372_160.0
    );
}

#[test]
fn kimi_k3_without_its_fields_is_an_error_naming_them() {
    let error = |edit| error_field(KIMI_K3, edit);
    assert_eq!(
        error(|v| {
            v["text_config"]["linear_attn_config"].take();
        }),
        "text_config.linear_attn_config"
    );
    assert_eq!(
        error(|v| v["text_config"]["linear_attn_config"]["use_full_rank_gate"] = json!(false)),
        "text_config.linear_attn_config.use_full_rank_gate"
    );
    // Layer 93 in both lists (full_attn_layers names it second), then layer 94 beyond the 93.
    assert_eq!(
        error(|v| v["text_config"]["linear_attn_config"]["kda_layers"][0] = json!(93)),
        "text_config.linear_attn_config.full_attn_layers"
    );
    assert_eq!(
        error(|v| v["text_config"]["linear_attn_config"]["full_attn_layers"][23] = json!(94)),
        "text_config.linear_attn_config.full_attn_layers"
    );
}

#[test]
fn minimax_m3_config_parses_to_the_preset_inside_its_multimodal_wrapper_too() {
    let model = parse(MINIMAX_M3);
    assert_same_structure(&model, "minimax-m3");
    assert_eq!(
        (model.dense_layers(), model.moe_layers(), model.mtp_layers),
        (3, 57, 7)
    );
    // NVIDIA's NVFP4 release names the text model `MiniMaxM3SparseForCausalLM` inside
    // `MiniMaxM3SparseForConditionalGeneration` (aiconfigurator's nvidia--MiniMax-M3-NVFP4_config.json); the
    // same fields there parse to the same structure.
    let wrapped = json!({
        "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
        "text_config": serde_json::from_str::<serde_json::Value>(MINIMAX_M3).unwrap(),
    });
    assert_same_structure(&parse(&wrapped.to_string()), "minimax-m3");
    // Its checkpoint (ModelOpt MIXED_PRECISION) is read in mixed_precision.rs.
}

#[test]
fn minimax_m3_parameter_counts_match_the_published_ones_within_2_percent() {
    // "427B/26B-active" (SemiAnalysisAI/InferenceX benchmarks, from the vLLM recipe; the model card says
    // "~428B" and "~23B" activated, the latter without the embedding and head). By hand: embedding and head
    // 2 · 200,064 · 6144 = 2,458,386,432; 60 attention layers of 6144 · (64 + 2 · 4) · 128 + 8192 · 6144
    // (6,417,285,120); 57 MSA indexers of 6144 · (4 + 1) · 128 (224,133,120); 3 dense FFNs 3 · 6144 · 12,288
    // (679,477,248); 57 layers of 128 experts 3 · 6144 · 3072 (413,122,166,784), one shared
    // (3,227,516,928) and the router 6144 · 128 (44,826,624); 60 · 2 · 6144 + 6144 norms (743,424).
    // 4 of 128 experts: 25.96B active, 23.50B without the embedding and head.
    assert_parameters(
        MINIMAX_M3,
        (426_174_535_680.0, 25_962_436_608.0),
        (427e9, Some(26e9)),
    );
}

#[test]
fn minimax_m3_caches_gqa_keys_and_an_index_key_per_token() {
    let m3 = parse(MINIMAX_M3);
    // 60 layers of 2 (K, V) · 4 KV heads · 128 BF16 = 122,880 B, and on the 57 MSA layers one index key of
    // 128 FP8 and a 4 B scale (DSA's format; MSA's own is not published): 7,524 B a token. No constant state.
    assert_eq!(m3.kv_bytes_per_token(Precision::Bf16), 122_880.0 + 7_524.0);
    assert_eq!(m3.state_bytes_per_sequence(), 0.0);
    assert_eq!(m3.kv_cache_bytes(Precision::Bf16, 131_072), 131_072.0 * 130_404.0);
}

#[test]
fn minimax_m3_without_its_fields_is_an_error_naming_them() {
    let error = |edit| error_field(MINIMAX_M3, edit);
    assert_eq!(
        error(|v| v["sparse_attention_config"]["sparse_attention_freq"] = json!([1, 0])),
        "sparse_attention_config.sparse_attention_freq"
    );
    assert_eq!(error(|v| v["moe_layer_freq"][0] = json!(2)), "moe_layer_freq");
    assert_eq!(
        error(|v| {
            v.as_object_mut().unwrap().remove("dense_intermediate_size");
        }),
        "dense_intermediate_size"
    );
}
