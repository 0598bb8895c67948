//! Tests of the precision configs: keys, support per architecture, weight-only configs, module formats.
use super::*;
use roofline_base::hardware::find_hardware;

#[test]
fn required_keys_exist_and_are_unique() {
    for key in [
        "bf16",
        "fp16",
        "fp8",
        "w8a8-int8",
        "w4a16-int4",
        "nvfp4-w4a16",
        "nvfp4-w4a4",
        "mxfp4-w4a4",
    ] {
        assert_eq!(find_quant_config(key).unwrap().key, key);
    }
    let mut keys: Vec<_> = quant_configs().iter().map(|c| c.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), quant_configs().len());
    assert!(
        matches!(find_quant_config("int3"), Err(Error::UnknownConfig { valid, .. }) if valid.len() == quant_configs().len())
    );
}

fn check(hw: &str, key: &str, supported: bool) {
    let result = find_quant_config(key)
        .unwrap()
        .check_support(find_hardware(hw).unwrap());
    assert_eq!(result.is_ok(), supported, "{key} on {hw}: {result:?}");
    if let Err(e) = result {
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    }
}

#[test]
fn support_follows_the_architecture() {
    check("a100_sxm_80gb", "bf16", true);
    check("a100_sxm_80gb", "w4a16-int4", true);
    check("a100_sxm_80gb", "w4a16-nf4", true);
    check("a100_sxm_80gb", "w8a8-int8", true);
    check("a100_sxm_80gb", "fp8", false);
    // Weight-only FP4/FP8 with 16-bit activations: dequantized in software on any FP16/BF16 path.
    check("a100_sxm_80gb", "nvfp4-w4a16", true);
    check("a100_sxm_80gb", "w8a16-fp8", true);
    check("h100_sxm", "w4a16-mxfp4", true);
    check("h200_sxm", "nvfp4-w4a16", true);
    check("l40s", "w4a16-mxfp4", true);
    // FP4 weights into FP8 activations need Blackwell's FP4 matrix operands.
    check("h100_sxm", "nvfp4-w4a8", false);
    check("b200", "nvfp4-w4a8", true);
    check("h100_sxm", "fp8", true);
    check("h100_sxm", "nvfp4-w4a4", false);
    check("h100_sxm", "w4a8-int4-fp8", true);
    check("b200", "nvfp4-w4a4", true);
    check("b200", "mxfp4-w-mxfp6-a", true);
    check("mi355x", "mxfp4-w4a4", true);
    check("mi355x", "nvfp4-w4a16", true);
    check("mi355x", "nvfp4-w4a4", false);
    check("tpu_v6e", "fp16", false);
    check("tpu_v6e", "bf16", true);
    // FP32 wherever the device publishes an FP32 peak.
    check("h100_sxm", "fp32", true);
    check("tpu_v6e", "fp32", false);
    // Block-scaled FP8 wherever FP8 runs (hardware.md §3), never on Ampere.
    check("h100_sxm", "fp8-block", true);
    check("mi300x", "fp8-block", true);
    check("l40s", "fp8-block-fp8kv", true);
    check("a100_sxm_80gb", "fp8-block", false);
}

#[test]
fn module_formats_default_to_the_config_and_the_hidden_precision() {
    let fp8 = find_quant_config("fp8").unwrap();
    assert!(fp8.is_uniform());
    assert_eq!(
        fp8.format(Module::RoutedExperts),
        LinearFormat {
            weights: Precision::Fp8E4M3,
            activations: Precision::Fp8E4M3,
            activation_scale: ActivationScale::DynamicPerTensor,
        }
    );
    // Router, embeddings and head stay at the hidden precision (FP16 for FP8 activations).
    assert_eq!(fp8.format(Module::Head), LinearFormat::plain(Precision::Fp16));
    assert_eq!(fp8.linear_for(Module::Attention), fp8.linear());
    // gpt-oss: MXFP4 W4A16 experts, BF16 attention.
    let mut gpt_oss = find_quant_config("w4a16-mxfp4").unwrap().clone();
    gpt_oss.activations = Precision::Bf16;
    gpt_oss.modules.push(ModuleFormat {
        module: Module::Attention,
        format: LinearFormat::plain(Precision::Bf16),
    });
    assert!(!gpt_oss.is_uniform());
    assert_eq!(gpt_oss.format(Module::Attention).weights, Precision::Bf16);
    assert_eq!(gpt_oss.format(Module::RoutedExperts).weights, Precision::Mxfp4);
    assert_eq!(
        gpt_oss.format(Module::RoutedExperts).label(),
        "MXFP4 weights, BF16 activations"
    );
    check_mixed("h100_sxm", &gpt_oss, true);
    // A module the device cannot run makes the whole config unsupported.
    let mut nvfp4_experts = find_quant_config("bf16").unwrap().clone();
    nvfp4_experts.modules.push(ModuleFormat {
        module: Module::RoutedExperts,
        format: LinearFormat::plain(Precision::Nvfp4),
    });
    check_mixed("h100_sxm", &nvfp4_experts, false);
    check_mixed("b200", &nvfp4_experts, true);
}

fn check_mixed(hw: &str, config: &QuantConfig, supported: bool) {
    let result = config.check_support(find_hardware(hw).unwrap());
    assert_eq!(result.is_ok(), supported, "{hw}: {result:?}");
}

#[test]
fn weight_only_means_narrower_weights() {
    let weight_only: Vec<_> = quant_configs()
        .iter()
        .filter(|c| c.is_weight_only())
        .map(|c| c.key.as_str())
        .collect();
    assert_eq!(
        weight_only,
        [
            "w4a16-nf4",
            "w4a16-int4",
            "w4a16-mxfp4",
            "nvfp4-w4a16",
            "nvfp4-w4a8",
            "nvfp4-w4a8-fp4kv",
            "mxfp4-w-mxfp6-a",
            "w4a8-int4-fp8",
            "w8a16-fp8"
        ]
    );
}
