//! Multi-GPU parallelism: how one model step is split over the GPUs of one scale-up domain.
//!
//! Rules (tensor parallel degree t, expert parallel degree e, as vLLM and Megatron split a model):
//! - Attention: the query heads are split over the t GPUs (t must divide them). KV heads are split when
//!   there are at least t of them (t must divide them) and replicated otherwise (t must be a multiple of
//!   them; each GPU then holds one KV head, as vLLM does). MLA's compressed latent is replicated on every GPU,
//!   its down-projections (`q_a_proj`, `kv_a_proj`) too; the per-head up-projections are split.
//! - Dense FFN, shared experts and every routed expert: the intermediate dimension is split over t
//!   (rounded up, so the busiest GPU sets the time). With e > 1 the routed experts are instead divided
//!   between e GPUs (E/e whole experts, each split over t/e); under uniform routing the per-GPU expert
//!   bytes and FLOPs are the same, only the communication differs.
//! - Embedding and logits head: split over the vocabulary (rounded up); norms and the MoE router are
//!   replicated.
//! - Operators are per-GPU shapes; the step time is that of one GPU (all GPUs run the same shapes).
//! - Communication (collectives, [`crate::ops::OpKind::Collective`]): one all-reduce of tokens · hidden elements
//!   at the hidden precision after the attention output projection and one after the MLP, in every layer;
//!   one after the vocabulary-parallel embedding; an all-gather of the batch's logits; with e > 1, a dispatch
//!   and a combine all-to-all per MoE layer, each GPU exchanging the routed rows (tokens / e · top_k rows of
//!   hidden elements) of the tokens it owns. Times come from the interconnect
//!   ([`crate::hardware::Interconnect`]); overlap of communication with compute is not modelled.
//! - Memory fit is per GPU: the shard's weights plus its KV cache (replicated KV heads counted on every GPU).
//!
//! Pipeline parallelism is not modelled yet: any degree other than 1 is refused.

use crate::error::Error;
use crate::hardware::HardwareSpec;
use crate::hardware::Interconnect;
use crate::model::ModelConfig;
use crate::quant_config::QuantConfig;

/// Parallel degrees of one step. `Default` is one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Parallelism {
    /// Tensor-parallel degree: GPUs the heads, FFN widths and vocabulary are split over.
    pub tensor: u32,
    /// Expert-parallel degree (MoE models): GPUs of the tensor-parallel group the routed experts are divided
    /// between; must divide `tensor` and the expert count.
    pub expert: u32,
    /// Pipeline-parallel degree (stages of consecutive layers); only 1 is modelled.
    pub pipeline: u32,
}

impl Default for Parallelism {
    fn default() -> Self {
        Parallelism::SINGLE
    }
}

impl Parallelism {
    /// One GPU.
    pub const SINGLE: Parallelism = Parallelism {
        tensor: 1,
        expert: 1,
        pipeline: 1,
    };

    /// Tensor parallel over `tensor` GPUs, nothing else.
    #[must_use]
    pub const fn tensor(tensor: u32) -> Parallelism {
        Parallelism {
            tensor,
            ..Parallelism::SINGLE
        }
    }

    /// GPUs the step runs on: tensor · pipeline.
    #[must_use]
    pub const fn gpus(&self) -> u32 {
        self.tensor.saturating_mul(self.pipeline)
    }

    /// Checks the degrees against `model` and `hardware`, and returns the interconnect the collectives run
    /// over (`None` on one GPU).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero degree, a pipeline degree other than 1, a tensor degree that does
    /// not divide the query heads or neither divides nor is a multiple of the KV heads, an expert degree on a
    /// dense model or one that divides neither the tensor degree nor the expert count, and (from
    /// [`HardwareSpec::interconnect_for`]) a device without an interconnect figure or with a smaller
    /// scale-up domain.
    pub fn check<'h>(
        &self,
        model: &ModelConfig,
        hardware: &'h HardwareSpec,
    ) -> Result<Option<&'h Interconnect>, Error> {
        let invalid = |message: String| Err(Error::InvalidInput(message));
        let (t, e) = (u64::from(self.tensor), u64::from(self.expert));
        if self.tensor == 0 || self.expert == 0 || self.pipeline == 0 {
            return invalid("parallel degrees must be at least 1".into());
        }
        if self.pipeline != 1 {
            return invalid(format!(
                "pipeline parallelism ({}) is not modelled; use tensor and expert parallelism",
                self.pipeline
            ));
        }
        if !model.heads.is_multiple_of(t) {
            return invalid(format!(
                "tensor parallel {t} must divide the {} query heads of {}",
                model.heads, model.key
            ));
        }
        if model.mla.is_none() && !(model.kv_heads.is_multiple_of(t) || t.is_multiple_of(model.kv_heads)) {
            return invalid(format!(
                "tensor parallel {t} must divide the {} KV heads of {} or be a multiple of them (replication)",
                model.kv_heads, model.key
            ));
        }
        if e > 1 {
            let Some(moe) = model.moe else {
                return invalid(format!(
                    "expert parallel {e} needs a mixture-of-experts model; {} is dense",
                    model.key
                ));
            };
            if !t.is_multiple_of(e) || !moe.experts.is_multiple_of(e) {
                return invalid(format!(
                    "expert parallel {e} must divide the tensor parallel degree {t} and the {} experts of {}",
                    moe.experts, model.key
                ));
            }
        }
        hardware.interconnect_for(self.gpus())
    }

    /// The part of `model` one GPU holds and runs (see the module docs): heads, KV heads, FFN and expert
    /// widths and vocabulary divided by the tensor degree. Call [`Parallelism::check`] first.
    #[must_use]
    pub fn shard(&self, model: &ModelConfig) -> ModelConfig {
        let t = u64::from(self.tensor.max(1));
        if t == 1 {
            return model.clone();
        }
        let heads = (model.heads / t).max(1);
        let kv_heads = if model.mla.is_some() {
            heads
        } else {
            (model.kv_heads / t).max(1)
        };
        ModelConfig {
            heads,
            kv_heads,
            ffn_dim: model.ffn_dim.div_ceil(t),
            vocab: model.vocab.div_ceil(t),
            moe: model.moe.map(|m| crate::model::MoeConfig {
                expert_ffn: m.expert_ffn.div_ceil(t),
                ..m
            }),
            ..model.clone()
        }
    }

    /// Weight and KV-cache bytes one GPU holds for `batch · context` tokens: (weights, KV cache).
    #[must_use]
    pub fn memory_per_gpu_bytes(
        &self,
        model: &ModelConfig,
        config: &QuantConfig,
        batch: u32,
        context: u32,
    ) -> (f64, f64) {
        let shard = self.shard(model);
        (
            shard.weight_bytes(config),
            f64::from(batch) * shard.kv_cache_bytes(config.kv_cache, u64::from(context)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{ModelAnalysis, Phase, Workload, analyze_model, analyze_model_parallel};
    use crate::corrections::Corrections;
    use crate::hardware::{find_hardware, find_hardware_in};
    use crate::model::{find_model, model_presets};
    use crate::ops::OpKind;
    use crate::quant_config::{find_quant_config, quant_configs};
    use crate::roofline::Bound;

    fn decode(batch: u32, context: u32) -> Workload {
        Workload {
            phase: Phase::Decode,
            batch,
            context,
        }
    }

    fn run(hardware: &HardwareSpec, model: &str, config: &str, w: Workload, p: Parallelism) -> ModelAnalysis {
        let corrections = Corrections::for_mode(crate::hardware::Mode::of(hardware));
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

    fn op<'a>(a: &'a ModelAnalysis, name: &str) -> &'a crate::corrections::OpAnalysis {
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
        let reference = find_hardware_in("h100_sxm", crate::hardware::Mode::Reference).unwrap();
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
        let h100 = find_hardware_in("h100_sxm", crate::hardware::Mode::Reference).unwrap();
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
        let h200 = find_hardware_in("h200_sxm", crate::hardware::Mode::Reference).unwrap();
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
            let hardware = find_hardware_in(hw, crate::hardware::Mode::Reference).unwrap();
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
                            assert_eq!(a.memory_required_bytes, a.weight_bytes + a.kv_cache_bytes);
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
        // reference mode with the realistic corrections; one GPU must reproduce them bit for bit.
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
            (
                "b200",
                "deepseek-v3",
                "fp8",
                1,
                1.0623026885283791e-2,
                3.7872089408e10,
            ),
        ];
        for (hw, model, config, batch, time_s, bytes) in pinned {
            let hardware = find_hardware_in(hw, crate::hardware::Mode::Reference).unwrap();
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
            let hardware = find_hardware_in(hw, crate::hardware::Mode::Reference).unwrap();
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

    #[test]
    fn llama_70b_on_4_gpus_holds_a_quarter_of_the_weights() {
        let model = find_model("llama-3.1-70b").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        let (one, _) = Parallelism::SINGLE.memory_per_gpu_bytes(model, bf16, 1, 4096);
        let (four, kv) = Parallelism::tensor(4).memory_per_gpu_bytes(model, bf16, 1, 4096);
        // 141 GB / 4 = 35.3 GB; only the norms (80·2·8192 + 8192 elements, 2.6 MB) are replicated.
        let norms = (80.0 * 2.0 * 8192.0 + 8192.0) * 2.0;
        assert!((four - ((one - norms) / 4.0 + norms)).abs() < 1.0, "{four}");
        // 8 KV heads over 4 GPUs: 2 each; 4096 tokens · 2 · 80 · 2 · 128 · 2 B = 335.5 MB.
        assert_eq!(kv, 4096.0 * 2.0 * 80.0 * 2.0 * 128.0 * 2.0);
        // Over 16 GPUs the 8 KV heads would be replicated (one per GPU), but H100 SXM's domain is 8.
        let shard = Parallelism::tensor(8).shard(model);
        assert_eq!((shard.heads, shard.kv_heads, shard.ffn_dim), (8, 1, 3584));
    }

    #[test]
    fn invalid_degrees_are_errors() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let llama = find_model("llama-3.1-70b").unwrap();
        let mixtral = find_model("mixtral-8x7b").unwrap();
        let err = |p: Parallelism, m| p.check(m, h100).unwrap_err().to_string();
        // 64 heads are not divisible by 3; 16 GPUs exceed the HGX domain of 8; EP on a dense model.
        assert!(err(Parallelism::tensor(3), llama).contains("divide the 64 query heads"));
        assert!(err(Parallelism::tensor(16), llama).contains("scale-up domain"));
        let ep = Parallelism {
            tensor: 4,
            expert: 4,
            pipeline: 1,
        };
        assert!(err(ep, llama).contains("dense"));
        assert!(ep.check(mixtral, h100).unwrap().is_some());
        assert!(err(Parallelism { expert: 3, ..ep }, mixtral).contains("must divide"));
        assert!(err(Parallelism { pipeline: 2, ..ep }, mixtral).contains("pipeline"));
        assert!(err(Parallelism::tensor(0), llama).contains("at least 1"));
        // A device without a published GPU-to-GPU link: the error names the missing figure.
        let rtx = find_hardware("rtx_4090").unwrap();
        let missing = Parallelism::tensor(2).check(llama, rtx).unwrap_err().to_string();
        assert!(missing.contains("no scale-up interconnect figure"), "{missing}");
        // GB10's NVLink-C2C links the GPU to its CPU: a domain of one GPU.
        let gb10 = find_hardware("gb10").unwrap();
        assert!(Parallelism::tensor(2).check(llama, gb10).is_err());
        assert!(Parallelism::SINGLE.check(llama, rtx).unwrap().is_none());
    }
}
