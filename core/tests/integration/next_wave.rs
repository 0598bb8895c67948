//! The next wave of served models (issue 35, item 4) from their published `config.json`: DeepSeek-V4 Flash
//! and Pro (compressed sparse and heavily compressed attention beside a sliding window); their parameter
//! counts against the published ones and their per-sequence cache bytes against hand derivations.
#![cfg(feature = "serde")]

use crate::hf_config::{assert_same_structure, edited, module_formats, parse};
use roofline_core::{Error, ModelConfig, Module, Precision};
use serde_json::json;

const DEEPSEEK_V4_FLASH: &str = include_str!("../data/hf/deepseek-v4-flash.json");
const DEEPSEEK_V4_PRO: &str = include_str!("../data/hf/deepseek-v4-pro.json");

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

#[test]
fn deepseek_v4_without_its_fields_is_an_error_naming_them() {
    let error = |edit: fn(&mut serde_json::Value)| match ModelConfig::from_hf_config_json(
        "x",
        &edited(DEEPSEEK_V4_FLASH, edit),
    ) {
        Err(Error::InvalidModelConfig { field, .. }) => field,
        other => panic!("{other:?}"),
    };
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
