//! Model-step operators on a real GPU (the CUDA backend's NVRTC step kernels), one by one and as a whole step
//! timed end to end (a CUDA graph of the launch order), TinyLlama's and a MoE model's (its experts as
//! strided-batched GEMMs): compiled only with `--features cuda` and run only when `ROOFLINE_GPU_TESTS=1` (so
//! `cargo test --features cuda` passes on a machine without a GPU).

use crate::common::gpu_device;
use gpu_endpoint::device::Device;
use gpu_endpoint::jobs::JobContext;
use gpu_endpoint::protocol::PointLimits;
use gpu_endpoint::use_cases::step::{StepEvent, plan, run};
use roofline_core::wire::StepRequest;
use roofline_core::{
    Corrections, Error, GemmShape, Mode, ModelAnalysis, OpAnalysis, Phase, Workload, analyze_model,
    find_hardware_in, find_model, find_quant_config,
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

/// The rows of a MoE layer (its routed experts: router, the two batched GEMMs and the activation between).
const MOE_ROWS: [&str; 4] = ["router", "expert_gate_up", "expert_act", "expert_down"];

#[test]
fn gpu_times_a_qwen3_moe_bf16_decode_step_with_batched_experts() {
    let Some(device) = gpu_device() else { return };
    let key = device
        .backend()
        .device_info()
        .matched_key
        .unwrap_or_else(|| "h100_sxm".into());
    let request = StepRequest {
        model: "qwen3-30b-a3b".into(),
        model_config: None,
        config: "bf16".into(),
        phase: Phase::Decode,
        batch: 16,
        context: 2048,
        hardware_key: Some(key.clone()),
        spec: None,
        mode: None,
    };
    let step = plan(request, find_hardware_in(&key, Mode::Reference).unwrap().clone()).unwrap();
    // 16 tokens × top 8 of 128 experts: 128·(1 − (120/128)^16) = 82.4 active → 82 products of
    // ⌈128 / 82.4⌉ = 2 rows; gate and up 2·768 wide from the hidden 2048, down back from 768.
    let batched = |name: &str| step.ops.iter().find(|op| op.name == name).and_then(|op| op.gemm);
    assert_eq!(
        batched("expert_gate_up"),
        Some(GemmShape {
            batch: 82,
            ..GemmShape::matmul(2, 1536, 2048)
        })
    );
    assert_eq!(
        batched("expert_down"),
        Some(GemmShape {
            batch: 82,
            ..GemmShape::matmul(2, 2048, 768)
        })
    );
    let limits = PointLimits::default();
    let job = JobContext {
        id: "gpu-moe-step",
        limits: &limits,
    };
    let mut rows = Vec::new();
    let done = run(&device.acquire(), None, &step, &job, |event| {
        if let StepEvent::Operator(row) = event {
            rows.push(*row);
        }
    });
    for row in &rows {
        match (&row.measured, &row.failure) {
            (Some(point), _) if MOE_ROWS.contains(&row.name.as_str()) => {
                let record = point.measurement.as_ref().unwrap();
                eprintln!(
                    "{} {} (ran {}): measured {:.2} µs, predicted {:.2} µs, ×{:.2}; {}",
                    row.name,
                    row.shape,
                    point.shape,
                    point.time_us,
                    row.predicted_time_s * 1e6,
                    row.measured_over_predicted.unwrap_or(f64::NAN),
                    record.kernel
                );
            }
            (Some(_), _) => {}
            (None, failure) => eprintln!("{} not measured: {failure:?}", row.name),
        }
    }
    for name in MOE_ROWS {
        let row = rows.iter().find(|r| r.name == name).unwrap();
        let record = row
            .measured
            .as_ref()
            .and_then(|point| point.measurement.as_ref())
            .unwrap_or_else(|| panic!("{name} not measured: {:?}", row.failure));
        assert!(record.verified, "{name}");
        assert_eq!(
            record
                .kernel
                .starts_with("cublasLtMatmul strided-batched (batch count 82,"),
            name.starts_with("expert_") && name != "expert_act",
            "{name}: {}",
            record.kernel
        );
    }
    let end_to_end = done.end_to_end.as_ref().unwrap_or_else(|| {
        panic!(
            "the step was not timed end to end ({} of {} rows measured): {:?}",
            done.measured, done.operators, done.end_to_end_failure
        )
    });
    eprintln!(
        "Qwen3-30B-A3B bf16 decode step (batch 16, context 2048) on {key}: {:.1} µs end to end, {:.1} µs \
         predicted (×{:.2}); Σ rows measured {:.1} µs; {} kernels; {}",
        end_to_end.measured_time_s * 1e6,
        done.predicted_step_time_s * 1e6,
        end_to_end.measured_over_predicted,
        done.measured_time_s * 1e6,
        end_to_end.kernels,
        end_to_end.measurement.kernel
    );
    assert_eq!(end_to_end.kernels, rows.iter().map(|r| r.count).sum::<u32>());
    assert!(end_to_end.measurement.verified);
    assert!(
        (0.2..20.0).contains(&end_to_end.measured_over_predicted),
        "{end_to_end:?}"
    );
}
