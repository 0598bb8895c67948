//! A model step through the public API: the operators `analyze_model` lists carry what an endpoint needs to
//! run them (a GEMM shape or a kernel description), and `analyze_model_parallel` splits the step over GPUs
//! (shards, collectives, per-GPU memory) and gives exactly `analyze_model` on one GPU.

use roofline_core::hardware::{find_hardware, find_hardware_in};
use roofline_core::ops::{AttentionPart, KernelShape, RowKind};
use roofline_core::{
    Bound, Corrections, HardwareSpec, Mode, ModelAnalysis, OpAnalysis, OpKind, Parallelism, Phase, Workload,
    analyze_model, analyze_model_parallel, find_model, find_quant_config, model_presets, quant_configs,
};

fn decode(batch: u32, context: u32) -> Workload {
    Workload {
        phase: Phase::Decode,
        batch,
        context,
    }
}

fn run(hardware: &HardwareSpec, model: &str, config: &str, w: Workload, p: Parallelism) -> ModelAnalysis {
    let corrections = Corrections::for_mode(Mode::of(hardware));
    analyze_model_parallel(
        hardware,
        find_model(model).unwrap(),
        find_quant_config(config).unwrap(),
        &w,
        &p,
        &corrections,
    )
    .unwrap()
}

fn op<'a>(a: &'a ModelAnalysis, name: &str) -> &'a OpAnalysis {
    a.ops
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn golden_all_reduce_of_llama_70b_decode_on_4_h100_by_hand() {
    // Llama-3.1-70B decode, batch 1: one token of hidden 8192 in BF16 = 16,384 B per all-reduce.
    // H100 SXM NVLink 4: 900 GB/s bidirectional = 450e9 B/s each way. Ring over t = 4:
    // 2·(4−1)/4 · 16,384 B / 450e9 B/s = 24,576 / 450e9 = 54.61 ns; the datasheet adds no latency.
    let h100 = find_hardware("h100_sxm").unwrap();
    let a = run(
        h100,
        "llama-3.1-70b",
        "bf16",
        decode(1, 4096),
        Parallelism::tensor(4),
    );
    let ar = op(&a, "attn_all_reduce");
    assert_eq!(
        (ar.kind, ar.bound, ar.count, ar.flops),
        (OpKind::Collective, Bound::Interconnect, 80, 0.0)
    );
    assert_eq!(ar.bytes, 24_576.0);
    assert!((ar.time_s - 24_576.0 / 450e9).abs() < 1e-18, "{}", ar.time_s);
    assert!((ar.time_s - 54.613e-9).abs() < 1e-12);
    assert_eq!(op(&a, "ffn_all_reduce").count, 80);
    // Reference: 450e9 · 0.822 (nccl-tests ring busbw 370 of 450 GB/s) and NCCL's ring latency
    // 6.6 µs + 2·3 steps · 0.6 µs = 10.2 µs: 24,576 / 369.9e9 + 10.2e-6 = 10.266 µs.
    let reference = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    let r = run(
        reference,
        "llama-3.1-70b",
        "bf16",
        decode(1, 4096),
        Parallelism::tensor(4),
    );
    let rar = op(&r, "attn_all_reduce");
    assert!(
        (rar.time_s - (24_576.0 / (450e9 * 0.822) + 10.2e-6)).abs() < 1e-15,
        "{}",
        rar.time_s
    );
    // Collectives never sit on the DRAM roof: no intensity, no attainable FLOP/s.
    assert_eq!((rar.arithmetic_intensity, rar.attainable_flop_per_s), (0.0, 0.0));
    assert!(r.communication_time_s > 160.0 * 10.2e-6 && r.communication_fraction < 0.5);
}

#[test]
fn golden_llama_70b_bf16_fits_on_4_h100_sxm() {
    // 70.6B parameters · 2 B = 141 GB: not on one 80 GB H100; 141 / 4 = 35.3 GB per GPU on four.
    let h100 = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    let one = run(
        h100,
        "llama-3.1-70b",
        "bf16",
        decode(1, 4096),
        Parallelism::SINGLE,
    );
    let four = run(
        h100,
        "llama-3.1-70b",
        "bf16",
        decode(1, 4096),
        Parallelism::tensor(4),
    );
    assert!(!one.fits_in_memory && four.fits_in_memory);
    assert_eq!(four.gpus, 4);
    assert!(
        (four.weight_bytes_per_gpu / 1e9 - 35.3).abs() < 0.3,
        "{}",
        four.weight_bytes_per_gpu
    );
    assert_eq!(four.weight_bytes, one.weight_bytes);
    // KV: 8 heads / 4 = 2 per GPU: 4096 · 80 · 2 · 2 · 128 · 2 B = 335.5 MB (a quarter of 1.34 GB).
    assert_eq!(four.kv_cache_bytes_per_gpu, one.kv_cache_bytes / 4.0);
    // Decode reads a quarter of the weights per GPU: well under half the time, even with the collectives.
    assert!(four.tpot_s.unwrap() < 0.5 * one.tpot_s.unwrap());
    assert!(four.communication_time_s > 0.0 && one.communication_time_s == 0.0);
    assert!(four.approximations.iter().any(|n| n.contains("TP 4 (EP 1)")));
}

#[test]
fn golden_deepseek_v3_fp8_fits_on_8_h200() {
    // 671B parameters in FP8 ≈ 671 GB (embeddings and norms stay BF16: ~0.7 TB): ≈ 84–88 GB per GPU
    // on 8, under the H200's 141 GB; on 4 it would be ~170 GB.
    let h200 = find_hardware_in("h200_sxm", Mode::Reference).unwrap();
    let eight = run(
        h200,
        "deepseek-v3",
        "fp8",
        decode(1, 4096),
        Parallelism::tensor(8),
    );
    assert!(eight.fits_in_memory, "{}", eight.memory_required_bytes);
    assert!(
        (80e9..95e9).contains(&eight.weight_bytes_per_gpu),
        "{}",
        eight.weight_bytes_per_gpu
    );
    let four = run(
        h200,
        "deepseek-v3",
        "fp8",
        decode(1, 4096),
        Parallelism::tensor(4),
    );
    assert!(!four.fits_in_memory);
    // MLA's latent is replicated: every GPU caches the full 61 · 576 · 1 B per token.
    assert_eq!(eight.kv_cache_bytes_per_gpu, eight.kv_cache_bytes);
    // Expert parallel 8: a dispatch and a combine all-to-all per MoE layer (58 of 61), each GPU owning
    // 1/8 of the tokens' 8 routed rows: ⌈1 · 8 / 8⌉ = 1 row of 7168 BF16 values, 7/8 of it leaves the GPU.
    let ep = Parallelism {
        tensor: 8,
        expert: 8,
        pipeline: 1,
    };
    let with_ep = run(h200, "deepseek-v3", "fp8", decode(1, 4096), ep);
    let dispatch = op(&with_ep, "moe_dispatch_all_to_all");
    assert_eq!((dispatch.count, dispatch.bytes), (58, 7.0 / 8.0 * 7168.0 * 2.0));
    assert_eq!(op(&with_ep, "moe_combine_all_to_all").count, 58);
    assert!(with_ep.communication_time_s > eight.communication_time_s);
    assert_eq!(with_ep.weight_bytes_per_gpu, eight.weight_bytes_per_gpu);
}

#[test]
fn one_gpu_gives_exactly_the_single_gpu_analysis() {
    for hw in ["h100_sxm", "b200", "gb10"] {
        let hardware = find_hardware_in(hw, Mode::Reference).unwrap();
        for model in model_presets() {
            for config in quant_configs().iter().take(4) {
                for w in [
                    decode(3, 1000),
                    Workload {
                        phase: Phase::Prefill,
                        ..decode(1, 512)
                    },
                ] {
                    let corrections = Corrections::REALISTIC;
                    let single = analyze_model(hardware, model, config, &w, &corrections);
                    let parallel = analyze_model_parallel(
                        hardware,
                        model,
                        config,
                        &w,
                        &Parallelism::SINGLE,
                        &corrections,
                    );
                    assert_eq!(single, parallel, "{hw} {} {}", model.key, config.key);
                    if let Ok(a) = single {
                        assert_eq!(a.weight_bytes_per_gpu, a.weight_bytes);
                        assert_eq!(a.kv_cache_bytes_per_gpu, a.kv_cache_bytes);
                        assert_eq!(
                            a.memory_required_bytes,
                            a.weight_bytes + a.activation_bytes_per_gpu + a.kv_cache_bytes
                        );
                        assert!(a.ops.iter().all(|o| o.kind != OpKind::Collective));
                        assert_eq!((a.communication_time_s, a.gpus), (0.0, 1));
                        assert!(a.communication_time_s.is_sign_positive());
                    }
                }
            }
        }
    }
}

#[test]
fn single_gpu_numbers_are_pinned_to_the_release_before_multi_gpu() {
    // Step times, DRAM bytes and weights printed by commit 78af76f (before parallelism existed), in
    // reference mode with the realistic corrections; one GPU must reproduce them bit for bit. (The third row,
    // DeepSeek-V3 in FP8 on a B200, left this list when FP8 GEMMs got their per-tensor family ceiling and the
    // two-kernel dynamic activation quantization: docs/validation/low-precision.md. Every preset × config
    // in datasheet mode is pinned by uniform_configs.rs.)
    let pinned = [
        (
            "h100_sxm",
            "llama-3.1-70b",
            "bf16",
            1,
            4.976416922285127e-2,
            1.4040363264e11,
        ),
        (
            "h100_sxm",
            "llama-3.1-70b",
            "bf16",
            32,
            6.414981978383942e-2,
            1.83728177152e11,
        ),
    ];
    for (hw, model, config, batch, time_s, bytes) in pinned {
        let hardware = find_hardware_in(hw, Mode::Reference).unwrap();
        let a = run(hardware, model, config, decode(batch, 4096), Parallelism::SINGLE);
        assert_eq!(
            (a.total_time_s, a.total_bytes),
            (time_s, bytes),
            "{hw} {model} {batch}"
        );
    }
}

#[test]
fn every_preset_splits_consistently_over_1_2_4_8_gpus() {
    for hw in ["h100_sxm", "b200", "mi300x"] {
        let hardware = find_hardware_in(hw, Mode::Reference).unwrap();
        for model in model_presets() {
            let mut previous: Option<ModelAnalysis> = None;
            for t in [1, 2, 4, 8] {
                let p = Parallelism::tensor(t);
                if p.check(model, hardware).is_err() {
                    continue;
                }
                let config = find_quant_config("fp8").unwrap();
                let a = analyze_model_parallel(
                    hardware,
                    model,
                    config,
                    &decode(4, 2048),
                    &p,
                    &Corrections::REALISTIC,
                )
                .unwrap();
                let key = format!("{hw} {} tp {t}", model.key);
                assert!(a.total_time_s.is_finite() && a.total_time_s > 0.0, "{key}");
                assert!((0.0..1.0).contains(&a.communication_fraction), "{key}");
                // Replication (norms, router, KV heads, MLA latent) only adds to the even split.
                assert!(
                    f64::from(t) * a.weight_bytes_per_gpu >= a.weight_bytes * (1.0 - 1e-12),
                    "{key}"
                );
                assert!(
                    f64::from(t) * a.kv_cache_bytes_per_gpu >= a.kv_cache_bytes * (1.0 - 1e-12),
                    "{key}"
                );
                if let Some(prev) = &previous {
                    assert!(a.memory_required_bytes < prev.memory_required_bytes, "{key}");
                    assert!(a.communication_time_s > 0.0, "{key}");
                }
                previous = Some(a);
            }
        }
    }
}

#[test]
fn a_mesh_pair_gets_one_infinity_fabric_link() {
    // MI300X: 896 GB/s bidirectional over 7 links = 448e9 B/s each way in all, 64e9 per link; a pair of
    // GPUs uses one link. 16,384 B over 2 GPUs: 2·1/2 · 16384 / 64e9 = 256 ns.
    let mi300x = find_hardware("mi300x").unwrap();
    let a = run(
        mi300x,
        "llama-3.1-70b",
        "bf16",
        decode(1, 4096),
        Parallelism::tensor(2),
    );
    assert!((op(&a, "attn_all_reduce").time_s - 16_384.0 / 64e9).abs() < 1e-15);
}

/// Every operator of the step says what to run: a GEMM shape or a kernel description (collectives
/// aside, which no single device runs).
fn check_step(model: &str, config: &str, phase: Phase, batch: u32, context: u32) {
    let analysis = analyze_model(
        find_hardware("h100_sxm").unwrap(),
        find_model(model).unwrap(),
        find_quant_config(config).unwrap(),
        &Workload {
            phase,
            batch,
            context,
        },
        &Corrections::REALISTIC,
    )
    .unwrap();
    assert!(!analysis.ops.is_empty());
    for op in &analysis.ops {
        let operator = &op.operator;
        assert_eq!(
            (operator.name.as_str(), operator.kind),
            (op.name.as_str(), op.kind)
        );
        let described = match op.kind {
            OpKind::Gemv | OpKind::Gemm | OpKind::BatchedGemm => {
                operator.gemm.is_some() && operator.kernel.is_none()
            }
            OpKind::Collective => true,
            _ => operator.kernel.is_some() && operator.gemm.is_none(),
        };
        assert!(
            described,
            "{model} {config} {phase:?}: {} has no kernel description",
            op.name
        );
    }
}

#[test]
fn every_operator_of_llama_decode_has_a_kernel_description() {
    check_step("llama-3.1-8b", "bf16", Phase::Decode, 1, 4096);
    check_step("llama-3.1-8b", "fp8", Phase::Decode, 32, 4096);
    check_step("llama-3.1-8b", "bf16", Phase::Prefill, 1, 512);
}

#[test]
fn llama_decode_kernels_have_the_model_shapes() {
    let analysis = analyze_model(
        find_hardware("h100_sxm").unwrap(),
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config("bf16").unwrap(),
        &Workload {
            phase: Phase::Decode,
            batch: 1,
            context: 4096,
        },
        &Corrections::REALISTIC,
    )
    .unwrap();
    let kernel = |name: &str| {
        analysis
            .ops
            .iter()
            .find(|op| op.name == name)
            .and_then(|op| op.operator.kernel)
            .unwrap()
    };
    assert_eq!(
        kernel("attn_norm"),
        KernelShape::Rows {
            rows: 1,
            width: 4096,
            kind: RowKind::RmsNorm
        }
    );
    assert_eq!(
        kernel("ffn_act"),
        KernelShape::Rows {
            rows: 1,
            width: 14_336,
            kind: RowKind::SiluMul
        }
    );
    // RoPE rotates 32 query heads and 8 key heads of 128 elements.
    assert_eq!(
        kernel("rope"),
        KernelShape::Rows {
            rows: 40,
            width: 128,
            kind: RowKind::Rope
        }
    );
    assert_eq!(kernel("embedding"), KernelShape::Gather { rows: 1, width: 4096 });
    assert_eq!(
        kernel("kv_cache_write"),
        KernelShape::KvWrite {
            tokens: 1,
            elements: 2048
        }
    );
    let KernelShape::Attention { shape, part } = kernel("attention") else {
        panic!("attention is not described as attention")
    };
    assert_eq!(
        (shape.kv_len, shape.heads, shape.kv_heads, part),
        (4096, 32, 8, AttentionPart::Fused)
    );
    assert_eq!(kernel("attn_norm").label(), "rms_norm 1x4096");
}

#[test]
fn every_preset_describes_its_kernels() {
    for model in model_presets() {
        check_step(&model.key, "bf16", Phase::Decode, 2, 1024);
    }
}
