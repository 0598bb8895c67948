//! Model-step operators on a real GPU (the CUDA backend's NVRTC step kernels), one by one and as a whole step
//! timed end to end (a CUDA graph of the launch order), TinyLlama's and a MoE model's (its experts as
//! strided-batched GEMMs): compiled only with `--features cuda` and run only when `ROOFLINE_GPU_TESTS=1` (so
//! `cargo test --features cuda` passes on a machine without a GPU).

use crate::common::gpu_device;
use gpu_endpoint::device::Device;
use gpu_endpoint::jobs::JobContext;
use gpu_endpoint::protocol::PointLimits;
use gpu_endpoint::use_cases::step::{StepEvent, StepPlan, plan, run};
use roofline_core::wire::StepRequest;
use roofline_core::{
    Corrections, Error, GemmShape, Mode, ModelAnalysis, OpAnalysis, Phase, Workload, analyze_model,
    find_hardware_in, find_model, find_quant_config,
};

/// `model` in `config` at `phase`, `batch`, `context`, predicted in reference mode on the device's catalog entry
/// (an H100 SXM for a GPU the catalog lacks).
fn step(
    device: &Device,
    model: &str,
    config: &str,
    phase: Phase,
    batch: u32,
    context: u32,
) -> Result<ModelAnalysis, Error> {
    analyze_model(
        find_hardware_in(&device_key(device), Mode::Reference)?,
        find_model(model)?,
        find_quant_config(config)?,
        &Workload {
            phase,
            batch,
            context,
        },
        &Corrections::for_mode(Mode::Reference),
    )
}

/// TinyLlama decode (batch 1, 256 cached tokens) in `config`.
fn tinyllama_decode(device: &Device, config: &str) -> Result<ModelAnalysis, Error> {
    step(device, "tinyllama-1.1b", config, Phase::Decode, 1, 256)
}

/// The device's catalog key (an H100 SXM for a GPU the catalog lacks).
fn device_key(device: &Device) -> String {
    device
        .backend()
        .device_info()
        .matched_key
        .unwrap_or_else(|| "h100_sxm".into())
}

/// `model`'s step in `config` as the endpoint plans it, on the device's catalog entry in reference mode.
fn planned(device: &Device, model: &str, config: &str, phase: Phase, batch: u32, context: u32) -> StepPlan {
    let key = device_key(device);
    let request = StepRequest {
        model: model.into(),
        model_config: None,
        config: config.into(),
        phase,
        batch,
        context,
        hardware_key: Some(key.clone()),
        spec: None,
        mode: None,
    };
    plan(request, find_hardware_in(&key, Mode::Reference).unwrap().clone()).unwrap()
}

#[test]
fn gpu_measures_verified_tinyllama_decode_operators_in_bf16_and_fp32() {
    let Some(device) = gpu_device() else { return };
    let arch = device.backend().device_info().arch;
    let guard = device.acquire();
    // The configs and the suffix of their kernels' names (BF16 attention runs on the tensor cores).
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
            let expected = if config == "bf16" && row.name == "attention" {
                "attention_mma ("
            } else {
                suffix
            };
            assert!(record.kernel.contains(expected), "{}", record.kernel);
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
    // FP8: the quantization kernels, the FP8 KV-cache write and attention reading the FP8 cache as stored.
    let fp8 = tinyllama_decode(&device, "fp8").unwrap();
    for row in fp8.ops.iter().filter(|row| row.operator.kernel.is_some()) {
        match guard.measure_operator(&row.operator) {
            Ok(m) => {
                assert!(m.measurement.verified, "fp8 {}", row.name);
                if row.name == "attention" {
                    assert!(
                        m.measurement.kernel.contains("FP8 E4M3"),
                        "{}",
                        m.measurement.kernel
                    );
                }
            }
            // Only where the GPU lacks FP8 conversions (before sm_89), and then naming the architecture.
            Err(e) => assert!(
                e.code() == "unsupported" && e.to_string().contains(&arch),
                "fp8 {}: {e}",
                row.name
            ),
        }
    }
}

/// Llama-3.1-8B's attention at the shapes of the H200 table (docs/validation/h200.md): verified against the f64
/// reference and printed beside its prediction and PyTorch's figures from that table.
#[test]
fn gpu_measures_llama_attention_at_the_tables_shapes() {
    let Some(device) = gpu_device() else { return };
    let guard = device.acquire();
    // (phase, batch, context, PyTorch SDPA on an H200 in µs, from docs/validation/data/h200-sxm/bc1c54a).
    for (phase, batch, context, torch_us) in [
        (Phase::Decode, 1, 4096, 14.7),
        (Phase::Decode, 32, 4096, 130.0),
        (Phase::Prefill, 1, 2048, 102.0),
    ] {
        for config in ["bf16", "fp8"] {
            let analysis = step(&device, "llama-3.1-8b", config, phase, batch, context).unwrap();
            let row = analysis.ops.iter().find(|row| row.name == "attention").unwrap();
            let m = guard
                .measure_operator(&row.operator)
                .unwrap_or_else(|e| panic!("{config} {phase:?} b{batch} ctx{context}: {e}"));
            let record = &m.measurement;
            assert!(
                record.verified && record.kernel.contains("attention_mma"),
                "{}",
                record.kernel
            );
            eprintln!(
                "llama-3.1-8b {config} {phase:?} b{batch} ctx{context} attention: {:.1} µs measured, {:.1} µs \
                 predicted, PyTorch SDPA (BF16) {torch_us} µs; {}",
                record.median_s * 1e6,
                row.time_s * 1e6,
                record.kernel
            );
            // The old kernel was 20–800× its prediction; the tensor-core kernel must stay within 5×.
            assert!(
                record.median_s <= 5.0 * row.time_s.max(torch_us * 1e-6),
                "{config} b{batch}"
            );
        }
    }
}

/// MLA (DeepSeek-V3, MQA over the latent) and sliding-window attention (Gemma 3) on the tensor cores.
#[test]
fn gpu_measures_mla_and_sliding_window_attention() {
    let Some(device) = gpu_device() else { return };
    let guard = device.acquire();
    for (model, batch, context) in [("deepseek-v3", 8, 1024), ("gemma-3-12b", 4, 8192)] {
        let analysis = step(&device, model, "bf16", Phase::Decode, batch, context).unwrap();
        for row in analysis
            .ops
            .iter()
            .filter(|row| row.name.contains("attention") && row.operator.kernel.is_some())
        {
            let m = guard
                .measure_operator(&row.operator)
                .unwrap_or_else(|e| panic!("{model} {}: {e}", row.name));
            assert!(m.measurement.verified, "{model} {}", row.name);
            eprintln!(
                "{model} {}: {:.1} µs measured, {:.1} µs predicted; {}",
                row.name,
                m.measurement.median_s * 1e6,
                row.time_s * 1e6,
                m.measurement.kernel
            );
        }
    }
}

/// A whole Llama-3.1-8B decode step (batch 32, 4096 tokens) in BF16 and in FP8 (quantization kernels, FP8 KV
/// cache), every row measured and the step timed end to end in a CUDA graph.
#[test]
fn gpu_times_whole_llama_decode_steps_in_bf16_and_fp8() {
    let Some(device) = gpu_device() else { return };
    for config in ["bf16", "fp8"] {
        let analysis = step(&device, "llama-3.1-8b", config, Phase::Decode, 32, 4096).unwrap();
        let planned = planned(&device, "llama-3.1-8b", config, Phase::Decode, 32, 4096);
        let guard = device.acquire();
        let timing = guard
            .measure_step(&planned.ops, &planned.launch_order)
            .unwrap_or_else(|e| panic!("{config} step: {e}"));
        let predicted: f64 = analysis.ops.iter().map(OpAnalysis::total_time_s).sum();
        eprintln!(
            "llama-3.1-8b {config} decode b32 ctx4096 step: {:.1} µs measured, {:.1} µs predicted ({:.2}×); {}",
            timing.measurement.median_s * 1e6,
            predicted * 1e6,
            timing.measurement.median_s / predicted,
            timing.measurement.kernel
        );
        assert!(timing.measurement.verified);
        assert!(
            (0.2 * predicted..=5.0 * predicted).contains(&timing.measurement.median_s),
            "{config}"
        );
    }
}

#[test]
fn gpu_times_a_whole_tinyllama_bf16_decode_step() {
    let Some(device) = gpu_device() else { return };
    let analysis = tinyllama_decode(&device, "bf16").unwrap();
    let step = planned(&device, "tinyllama-1.1b", "bf16", Phase::Decode, 1, 256);
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
    let step = planned(&device, "qwen3-30b-a3b", "bf16", Phase::Decode, 16, 2048);
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
                let record = &point.measurement;
                eprintln!(
                    "{} {} (ran {}): measured {:.2} µs, predicted {:.2} µs, ×{:.2}; {}",
                    row.name,
                    row.shape,
                    point.op.shape_label(),
                    point.time_s() * 1e6,
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
            .map(|point| &point.measurement)
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
        "Qwen3-30B-A3B bf16 decode step (batch 16, context 2048) on {}: {:.1} µs end to end, {:.1} µs \
         predicted (×{:.2}); Σ rows measured {:.1} µs; {} kernels; {}",
        device_key(&device),
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
