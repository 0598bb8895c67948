//! Multi-GPU parallelism: how one model step is split over the GPUs of one scale-up domain.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use crate::model::ModelConfig;
use crate::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Interconnect};

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
    /// not divide the query heads (or linear attention's key and value heads) or neither divides nor is a
    /// multiple of the KV heads, an expert degree on a
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
        if let Some(l) = model.linear_attention
            && !(l.key_heads.is_multiple_of(t) && l.value_heads.is_multiple_of(t))
        {
            return invalid(format!(
                "tensor parallel {t} must divide the {} linear-attention key heads and {} value heads of {}",
                l.key_heads, l.value_heads, model.key
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

    /// The part of `model` one GPU holds and runs (docs/design/core.md): heads, KV heads, FFN and expert
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
            // Linear attention splits its heads; the sparse-attention indexer is replicated on every GPU
            // (vLLM's `Indexer` projections are `ReplicatedLinear`), like MLA's latent.
            linear_attention: model.linear_attention.map(|l| crate::model::LinearAttention {
                key_heads: (l.key_heads / t).max(1),
                value_heads: (l.value_heads / t).max(1),
                ..l
            }),
            // DeepSeek-V4's output groups split with the heads.
            compressed_attention: model
                .compressed_attention
                .map(|c| crate::model::CompressedAttention {
                    o_groups: (c.o_groups / t).max(1),
                    ..c
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
    use crate::model::find_model;
    use crate::quant_config::find_quant_config;
    use roofline_base::hardware::find_hardware;

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
