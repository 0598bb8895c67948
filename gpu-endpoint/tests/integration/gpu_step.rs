//! Model-step operators on a real GPU (the CUDA backend's NVRTC step kernels), one by one and as a whole step
//! timed end to end (a CUDA graph of the launch order): compiled only with `--features cuda` and run only
//! when `ROOFLINE_GPU_TESTS=1` (so `cargo test --features cuda` passes on a machine without a GPU).

use crate::common::gpu_device;
use gpu_endpoint::device::Device;
use gpu_endpoint::use_cases::step::plan;
use roofline_core::wire::StepRequest;
use roofline_core::{
    Corrections, Error, Mode, ModelAnalysis, OpAnalysis, Phase, Workload, analyze_model, find_hardware_in,
    find_model, find_quant_config,
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

#[test]
fn gpu_times_a_whole_tinyllama_bf16_decode_step() {
    let Some(device) = gpu_device() else { return };
    let analysis = tinyllama_decode(&device, "bf16").unwrap();
    let step = plan(
        StepRequest {
            model: "tinyllama-1.1b".into(),
            model_config: None,
            config: "bf16".into(),
            phase: Phase::Decode,
            batch: 1,
            context: 256,
            hardware_key: None,
            spec: None,
            mode: None,
        },
        find_hardware_in(&analysis.hardware, Mode::Reference)
            .unwrap()
            .clone(),
    )
    .unwrap();
    let guard = device.acquire();
    let timing = guard
        .measure_step(&step.ops, &step.launch_order)
        .unwrap_or_else(|e| panic!("bf16 step: {e}"));
    let launches: u32 = analysis.ops.iter().map(|row| row.count).sum();
    assert_eq!(timing.kernels, launches);
    let record = &timing.measurement;
    assert!(record.verified);
    assert!(
        record
            .kernel
            .starts_with(&format!("CUDA graph of {launches} kernels"))
            || record
                .kernel
                .starts_with(&format!("eager launches of {launches} kernels")),
        "{}",
        record.kernel
    );
    assert!(record.library.contains("cuBLASLt"), "{}", record.library);
    assert!(
        record.library.contains("NVRTC (roofline step kernels)"),
        "{}",
        record.library
    );
    let predicted: f64 = analysis.ops.iter().map(OpAnalysis::total_time_s).sum();
    assert!(
        record.median_s > 0.0 && (0.2 * predicted..=20.0 * predicted).contains(&record.median_s),
        "measured {:.1} µs, predicted {:.1} µs ({})",
        record.median_s * 1e6,
        predicted * 1e6,
        record.kernel
    );
    eprintln!(
        "TinyLlama bf16 decode step: {:.1} µs measured, {:.1} µs predicted; {}",
        record.median_s * 1e6,
        predicted * 1e6,
        record.kernel
    );
}
