//! Tests of the step builder: mixed steps, attention parts, activation quantization per scale, per-module formats.
use super::*;
use crate::corrections::OpAnalysis;
use crate::model::{find_model, model_presets};
use crate::quant_config::{find_quant_config, quant_configs};
use roofline_base::hardware::{find_hardware, find_hardware_in};

fn step(decode_seqs: u32, decode_context: u32, prefill_chunk: u32, prefill_prior: u32) -> StepBatch {
    let prefill_seqs = u32::from(prefill_chunk > 0);
    StepBatch {
        decode_seqs,
        decode_context,
        prefill_seqs,
        prefill_chunk,
        prefill_prior,
        prefill_completing: prefill_seqs,
    }
}

fn analyze(hw: &str, model: &str, config: &str, s: &StepBatch) -> ModelAnalysis {
    let hardware = find_hardware_in(hw, roofline_base::Mode::Reference).unwrap();
    analyze_step(
        hardware,
        find_model(model).unwrap(),
        find_quant_config(config).unwrap(),
        s,
        &Parallelism::SINGLE,
        &Corrections::REALISTIC,
    )
    .unwrap()
}

fn op<'a>(a: &'a ModelAnalysis, name: &str) -> &'a OpAnalysis {
    a.ops.iter().find(|o| o.name == name).unwrap_or_else(|| {
        panic!(
            "no {name} in {:?}",
            a.ops.iter().map(|o| &o.name).collect::<Vec<_>>()
        )
    })
}

#[test]
fn mixed_step_gemms_run_once_on_decode_plus_prefill_tokens() {
    // Llama-3.1-8B, 32 decode rows + a 512-token chunk: M = 32 + 512 = 544 tokens in every linear layer.
    // qkv_proj: N = (32 + 2·8)·128 = 6144, K = 4096 → 2·544·6144·4096 FLOP; gate_up: N = 2·14336.
    let a = analyze("h100_sxm", "llama-3.1-8b", "bf16", &step(32, 2048, 512, 0));
    let gemm = |name: &str| op(&a, name).operator.gemm.map(|g| (g.m, g.n, g.k));
    assert_eq!(gemm("qkv_proj"), Some((544, 6144, 4096)));
    assert_eq!(op(&a, "qkv_proj").flops, 2.0 * 544.0 * 6144.0 * 4096.0);
    assert_eq!(gemm("o_proj"), Some((544, 4096, 4096)));
    assert_eq!(gemm("gate_up_proj"), Some((544, 28_672, 4096)));
    assert_eq!(gemm("down_proj"), Some((544, 4096, 14_336)));
    // Logits: the 32 decode rows and the prompt that completes: 33 × 128256 × 4096.
    assert_eq!(gemm("logits"), Some((33, 128_256, 4096)));
    // One linear pass, not a prefill step plus a decode step: the weights are read once (the embedding
    // "weights" are the gathered rows, one per token, so they are left out).
    let prefill = analyze("h100_sxm", "llama-3.1-8b", "bf16", &step(0, 0, 512, 0));
    let decode = analyze("h100_sxm", "llama-3.1-8b", "bf16", &step(32, 2048, 0, 0));
    let weights = |a: &ModelAnalysis| -> f64 {
        a.ops
            .iter()
            .filter(|o| o.name != "embedding")
            .map(|o| f64::from(o.count) * o.weight_bytes)
            .sum()
    };
    assert_eq!(weights(&a), weights(&decode));
    assert!(a.total_time_s < prefill.total_time_s + decode.total_time_s);
}

#[test]
fn mixed_attention_is_a_decode_part_and_a_causal_chunk_over_its_prior() {
    // 32 decode rows over 2048 keys; a 512-token chunk over 1024 prior tokens: 512 queries, 1536 keys.
    let a = analyze("h100_sxm", "llama-3.1-8b", "bf16", &step(32, 2048, 512, 1024));
    let shape = |name: &str| match op(&a, name).operator.kernel {
        Some(crate::ops::KernelShape::Attention { shape, .. }) => {
            (shape.batch, shape.query_len, shape.kv_len)
        }
        ref other => panic!("{other:?}"),
    };
    assert_eq!(shape("decode_attention"), (32, 1, 2048));
    assert_eq!(shape("prefill_attention"), (1, 512, 1536));
    // Causal pairs of the chunk: 512·1024 + 512·513/2 per head (AttentionShape::scored_pairs).
    let pairs = 512.0 * 1024.0 + 512.0 * 513.0 / 2.0;
    let flops = 32.0 * (4.0 * pairs * 128.0 + 5.0 * pairs);
    assert_eq!(op(&a, "prefill_attention").flops, flops);
    // KV written for every token of the step, one cache entry each: 544 · 2 · 8 · 128 · 2 B per layer.
    assert_eq!(op(&a, "kv_cache_write").kv_bytes, 544.0 * 4096.0);
    assert!(a.workload.is_none() && a.ttft_s.is_none() && a.tpot_s.is_none());
    assert!((a.tokens_per_s - 544.0 / a.total_time_s).abs() < 1e-6);
    // KV held by the step's sequences: 32 · 2048 + 1 · 1536 tokens · 131,072 B.
    assert_eq!(a.kv_cache_bytes, (32.0 * 2048.0 + 1536.0) * 131_072.0);
}

#[test]
fn sliding_window_and_mla_models_split_both_parts() {
    let a = analyze("h100_sxm", "gpt-oss-20b", "bf16", &step(8, 8192, 256, 256));
    for name in [
        "decode_attention",
        "prefill_attention",
        "window_decode_attention",
        "window_prefill_attention",
    ] {
        assert_eq!(op(&a, name).count, 12, "{name}");
    }
    let ds = analyze("h200_sxm", "deepseek-v3", "fp8", &step(4, 1024, 128, 0));
    let expert = op(&ds, "expert_gate_up");
    // 132 tokens · 8 routed experts each.
    assert_eq!(expert.flops, 2.0 * 132.0 * 8.0 * 2.0 * 2048.0 * 7168.0);
    assert!(ds.ops.iter().any(|o| o.name == "prefill_attention"));
}

#[test]
fn a_chunk_that_does_not_end_its_prompt_samples_nothing() {
    let mut middle = step(0, 0, 1024, 2048);
    middle.prefill_completing = 0;
    let a = analyze("h100_sxm", "llama-3.1-8b", "bf16", &middle);
    assert!(a.ops.iter().all(|o| o.name != "logits"));
}

#[test]
fn empty_or_incomplete_steps_are_errors_naming_the_field() {
    let h100 = find_hardware("h100_sxm").unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    let bf16 = find_quant_config("bf16").unwrap();
    let err = |s: StepBatch| {
        analyze_step(h100, model, bf16, &s, &Parallelism::SINGLE, &Corrections::NONE)
            .unwrap_err()
            .to_string()
    };
    assert!(err(StepBatch::default()).contains("at least one decode row"));
    assert!(err(step(4, 0, 0, 0)).contains("decode_context"));
    let no_chunk = StepBatch {
        prefill_seqs: 1,
        ..StepBatch::default()
    };
    assert!(err(no_chunk).contains("prefill_chunk"));
    let over = StepBatch {
        prefill_completing: 2,
        ..step(0, 0, 16, 0)
    };
    assert!(err(over).contains("prefill_completing"));
}

#[test]
fn a_workload_step_is_exactly_the_workload_analysis() {
    // Every preset and config the B200 runs, both phases, one GPU and tensor parallel 2, every field.
    let hardware = find_hardware_in("b200", roofline_base::Mode::Reference).unwrap();
    for model in model_presets() {
        for config in quant_configs() {
            for phase in [Phase::Prefill, Phase::Decode] {
                let workload = Workload {
                    phase,
                    batch: 3,
                    context: 700,
                };
                for parallelism in [Parallelism::SINGLE, Parallelism::tensor(2)] {
                    let corrections = Corrections::REALISTIC;
                    let via_workload = crate::analyze_model_parallel(
                        hardware,
                        model,
                        config,
                        &workload,
                        &parallelism,
                        &corrections,
                    );
                    let via_step = analyze_step(
                        hardware,
                        model,
                        config,
                        &StepBatch::of(&workload),
                        &parallelism,
                        &corrections,
                    )
                    .map(|a| ModelAnalysis {
                        workload: Some(workload),
                        ttft_s: (phase == Phase::Prefill).then_some(a.total_time_s),
                        tpot_s: (phase == Phase::Decode).then_some(a.total_time_s),
                        ..a
                    });
                    assert_eq!(via_workload, via_step, "{} {} {phase:?}", model.key, config.key);
                }
            }
        }
    }
}

#[test]
fn linear_inputs_are_quantized_by_the_kernels_of_their_scale() {
    // Llama-3.1-8B, one decode row on a reference H100 / B200: (names, fixed time of each kernel).
    let kernels = |hw: &str, config: &str| -> Vec<(String, f64)> {
        let a = analyze(hw, "llama-3.1-8b", config, &step(1, 1024, 0, 0));
        a.ops
            .iter()
            .filter(|o| o.name.ends_with("_attn_in"))
            .map(|o| (o.name.clone(), o.kernel_overhead_s))
            .collect()
    };
    // FP8 dynamic per-tensor: vLLM's absolute-maximum reduction (4.5 µs) then the quantization (2.5 µs):
    // with the 5 µs GEMM floor, 12 µs of fixed cost per linear layer.
    assert_eq!(
        kernels("h100_sxm", "fp8"),
        [
            ("amax_attn_in".to_owned(), 4.5e-6),
            ("quantize_attn_in".to_owned(), 2.5e-6)
        ]
    );
    // SmoothQuant INT8: per-token scales, one kernel (3.3 µs); block-scaled FP8: one per-row kernel too.
    assert_eq!(
        kernels("h100_sxm", "w8a8-int8"),
        [("quantize_attn_in".to_owned(), 3.3e-6)]
    );
    assert_eq!(
        kernels("h100_sxm", "fp8-block"),
        [("quantize_attn_in".to_owned(), 3.3e-6)]
    );
    // NVFP4: one block-quantization kernel (1.9 µs); BF16 and weight-only configs quantize nothing.
    assert_eq!(
        kernels("b200", "nvfp4-w4a4"),
        [("quantize_attn_in".to_owned(), 1.9e-6)]
    );
    assert!(kernels("h100_sxm", "bf16").is_empty());
    assert!(kernels("h100_sxm", "w4a16-int4").is_empty());
    // The FP8 GEMMs run at their family's ceiling: qkv_proj 1×6144×4096 at 0.899 of 3.35 TB/s + 5 µs.
    let a = analyze("h100_sxm", "llama-3.1-8b", "fp8", &step(1, 1024, 0, 0));
    let qkv = op(&a, "qkv_proj");
    let bytes = 6144.0 * 4096.0 + 4096.0 + 2.0 * 6144.0;
    assert!((qkv.time_s - (bytes / (3.35e12 * 0.899) + 5e-6)).abs() < 1e-15);
}

#[test]
fn each_module_runs_in_its_own_format() {
    use crate::quant_config::{LinearFormat, ModuleFormat};
    use roofline_base::precision::Precision;
    // DeepSeek-V3 with NVFP4 routed experts and everything else in BF16, as ModelOpt MoE checkpoints are.
    let mut config = find_quant_config("bf16").unwrap().clone();
    config.modules.push(ModuleFormat {
        module: Module::RoutedExperts,
        format: LinearFormat::plain(Precision::Nvfp4),
    });
    let hardware = find_hardware_in("b200", roofline_base::Mode::Reference).unwrap();
    let model = find_model("deepseek-v3").unwrap();
    let a = analyze_step(
        hardware,
        model,
        &config,
        &step(4, 1024, 0, 0),
        &Parallelism::SINGLE,
        &Corrections::REALISTIC,
    )
    .unwrap();
    let precisions = |name: &str| op(&a, name).operator.precisions;
    assert_eq!(precisions("expert_gate_up").weight, Precision::Nvfp4);
    assert_eq!(precisions("q_a_proj").weight, Precision::Bf16);
    assert_eq!(precisions("shared_down_proj").weight, Precision::Bf16);
    assert_eq!(precisions("router").weight, Precision::Bf16);
    // Only the routed experts' inputs are quantized: the FFN input on the 58 MoE layers and the experts'
    // down projection input; the dense layers' and the shared experts' stay BF16.
    let quantized: Vec<(&str, u32)> = a
        .ops
        .iter()
        .filter(|o| o.operator.quantize.is_some())
        .map(|o| (o.name.as_str(), o.count))
        .collect();
    assert_eq!(
        quantized,
        [("quantize_expert_in", 58), ("quantize_expert_down_in", 58)]
    );
    // The summary lists every module of the model with its format.
    let listed: Vec<Module> = a.modules.iter().map(|m| m.module).collect();
    assert_eq!(
        listed,
        [
            Module::Attention,
            Module::DenseMlp,
            Module::RoutedExperts,
            Module::SharedExperts,
            Module::Router,
            Module::Embeddings,
            Module::Head
        ]
    );
}
