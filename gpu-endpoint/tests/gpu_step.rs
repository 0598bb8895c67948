//! Model-step operators on a real GPU (the CUDA backend's NVRTC step kernels): compiled only with
//! `--features cuda` and run only when `ROOFLINE_GPU_TESTS=1` (so `cargo test --features cuda` passes on a
//! machine without a GPU).
#![cfg(feature = "cuda")]

mod common;

use common::gpu_device;
use gpu_endpoint::backend::Device;
use roofline_core::{
    Corrections, Error, Mode, ModelAnalysis, Phase, Workload, analyze_model, find_hardware_in, find_model,
    find_quant_config,
};

/// TinyLlama decode (batch 1, 256 cached tokens) in `config`, predicted in reference mode on the device's
/// catalog entry (an H100 SXM for a GPU the catalog lacks).
fn tinyllama_decode(device: &Device, config: &str) -> Result<ModelAnalysis, Error> {
    let key = device
        .backend()
        .device_info()
        .matched_key
        .unwrap_or_else(|| "h100_sxm".into());
    analyze_model(
        find_hardware_in(&key, Mode::Reference)?,
        find_model("tinyllama-1.1b")?,
        find_quant_config(config)?,
        &Workload {
            phase: Phase::Decode,
            batch: 1,
            context: 256,
        },
        &Corrections::for_mode(Mode::Reference),
    )
}

#[test]
fn gpu_measures_verified_tinyllama_decode_operators_in_bf16_and_fp32() {
    let Some(device) = gpu_device() else { return };
    let arch = device.backend().device_info().arch;
    let guard = device.acquire();
    // The configs and the suffix of their kernels' names.
    for (config, suffix) in [("bf16", "_bf16 ("), ("fp32", "_f32 (")] {
        let analysis = tinyllama_decode(&device, config).unwrap();
        let mut measured = Vec::new();
        // Every operator that is not a GEMM: norms, RoPE, the KV-cache write, attention, adds, SiLU·mul.
        for row in analysis.ops.iter().filter(|row| row.operator.kernel.is_some()) {
            let m = guard
                .measure_operator(&row.operator)
                .unwrap_or_else(|e| panic!("{config} {}: {e}", row.name));
            let record = &m.measurement;
            assert!(record.verified, "{config} {}", row.name);
            assert_eq!(record.library, "NVRTC (roofline step kernels)");
            assert_eq!(m.precision, row.operator.precisions.activation, "{}", row.name);
            assert!(record.kernel.contains(suffix), "{}", record.kernel);
            assert!(
                record.median_s > 0.0 && record.median_s <= 100.0 * row.time_s,
                "{config} {}: measured {:.2} µs, predicted {:.2} µs ({})",
                row.name,
                record.median_s * 1e6,
                row.time_s * 1e6,
                record.kernel
            );
            measured.push(row.name.as_str());
        }
        for name in [
            "embedding",
            "attn_norm",
            "rope",
            "kv_cache_write",
            "attention",
            "residual_add",
            "ffn_act",
            "final_norm",
        ] {
            assert!(
                measured.contains(&name),
                "{config}: {name} not measured ({measured:?})"
            );
        }
    }
    // An FP8 KV cache is not measured through another format.
    if let Ok(fp8) = tinyllama_decode(&device, "fp8") {
        let attention = fp8.ops.iter().find(|row| row.name == "attention").unwrap();
        let err = guard.measure_operator(&attention.operator).unwrap_err();
        assert_eq!(err.code(), "unsupported", "{err}");
        assert!(err.to_string().contains(&arch), "{err}");
    }
}
