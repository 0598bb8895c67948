//! Transformer model configs and the presets, transcribed from the published Hugging Face `config.json` files.
//!
//! Parameter counts are derived from the structure (projections, FFN or experts, norms, embeddings) and
//! checked against the published totals in the tests.

use std::sync::LazyLock;

use crate::{Activation, Error, Norm, Precision, QuantConfig};

/// Mixture-of-experts layout of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MoeConfig {
    /// Routed experts per MoE layer.
    pub experts: u64,
    /// Routed experts per token.
    pub top_k: u64,
    /// Shared experts every token passes through (DeepSeek), each `expert_ffn` wide.
    pub shared_experts: u64,
    /// Intermediate size of one expert.
    pub expert_ffn: u64,
    /// Leading layers with a dense FFN (`ffn_dim` wide) instead of experts (DeepSeek-V3: 3).
    pub dense_layers: u32,
}

/// Multi-head latent attention (DeepSeek): low-rank Q and KV projections and a compressed KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MlaConfig {
    /// Rank of the Q down-projection.
    pub q_lora_rank: u64,
    /// Rank of the KV down-projection (the cached latent).
    pub kv_lora_rank: u64,
    /// Per-head dimension of the rotary part of Q and K (one shared rotary key is cached).
    pub rope_head_dim: u64,
    /// Per-head dimension of the non-rotary part of Q and K.
    pub nope_head_dim: u64,
    /// Per-head dimension of V.
    pub v_head_dim: u64,
}

/// A decoder-only transformer.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ModelConfig {
    /// Stable key, e.g. `llama-3.1-8b`.
    pub key: String,
    /// Display name.
    pub name: String,
    /// Decoder layers.
    pub layers: u32,
    /// Hidden size (H).
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (GQA; equal to `heads` for MHA).
    pub kv_heads: u64,
    /// Dimension of each attention head.
    pub head_dim: u64,
    /// Intermediate size of the dense FFN.
    pub ffn_dim: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Gated FFN (SwiGLU: gate, up, down) or plain (up, GELU, down).
    pub gated_ffn: bool,
    /// Input embedding and logits head share one matrix.
    pub tied_embeddings: bool,
    /// Normalization.
    pub norm: Norm,
    /// Mixture of experts, if the model has one.
    pub moe: Option<MoeConfig>,
    /// Multi-head latent attention, if the model uses it (analysed as an approximation, see `approximations`).
    pub mla: Option<MlaConfig>,
    /// Published total parameters, for reference.
    pub published_params: f64,
    /// Published parameters active per token (MoE), for reference.
    pub published_active_params: Option<f64>,
    /// Where the numbers come from.
    pub source: String,
}

/// Parameter counts of a model.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ParamCount {
    /// Every parameter.
    pub total: f64,
    /// Parameters used for one token: all but the routed experts a token skips.
    pub active: f64,
}

/// Weight matrices of one kind: `elements` each, `copies` of them, and whether the config's weight format
/// applies (linear layers) or they stay at the hidden precision (embeddings, logits head, router, norms).
struct WeightGroup {
    elements: f64,
    copies: f64,
    active_copies: f64,
    quantized: bool,
}

impl ModelConfig {
    /// The FFN activation: SiLU·mul when gated, GELU otherwise.
    #[must_use]
    pub const fn activation(&self) -> Activation {
        if self.gated_ffn {
            Activation::SiluMul
        } else {
            Activation::Gelu
        }
    }

    /// Layers with experts (0 for a dense model).
    #[must_use]
    pub fn moe_layers(&self) -> u32 {
        self.moe.map_or(0, |m| self.layers.saturating_sub(m.dense_layers))
    }

    /// Layers with a dense FFN.
    #[must_use]
    pub fn dense_layers(&self) -> u32 {
        self.layers - self.moe_layers()
    }

    /// Cached KV elements per token and layer: 2·kv_heads·head_dim, or for MLA the latent plus the shared
    /// rotary key (kv_lora_rank + rope_head_dim).
    #[must_use]
    pub fn kv_elements_per_token(&self) -> u64 {
        self.mla.map_or(
            2u64.saturating_mul(self.kv_heads).saturating_mul(self.head_dim),
            |m| m.kv_lora_rank.saturating_add(m.rope_head_dim),
        )
    }

    /// KV-cache bytes per token over all layers at `kv_cache` precision (block scales amortized).
    ///
    /// # Examples
    /// ```
    /// use roofline_core::{find_model, Precision};
    /// // Llama-3.1-8B: 2 (K, V) · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B per token.
    /// assert_eq!(find_model("llama-3.1-8b").unwrap().kv_bytes_per_token(Precision::Fp16), 131_072.0);
    /// ```
    #[must_use]
    pub fn kv_bytes_per_token(&self, kv_cache: Precision) -> f64 {
        f64::from(self.layers) * self.kv_elements_per_token() as f64 * kv_cache.effective_bytes()
    }

    /// Elements of the up (and gate) projection of one FFN `ffn` wide: (2 or 1)·H·F, and of the down: H·F.
    fn ffn_elements(&self, ffn: u64) -> f64 {
        let matrices = if self.gated_ffn { 3.0 } else { 2.0 };
        matrices * self.hidden as f64 * ffn as f64
    }

    /// Elements of the attention projections of one layer.
    fn attention_elements(&self) -> f64 {
        let [h, heads, kv_heads, head_dim] =
            [self.hidden, self.heads, self.kv_heads, self.head_dim].map(|d| d as f64);
        match self.mla {
            Some(m) => {
                let [q_rank, kv_rank, rope, nope, v] = [
                    m.q_lora_rank,
                    m.kv_lora_rank,
                    m.rope_head_dim,
                    m.nope_head_dim,
                    m.v_head_dim,
                ]
                .map(|d| d as f64);
                h * q_rank
                    + q_rank * heads * (nope + rope)
                    + h * (kv_rank + rope)
                    + kv_rank * heads * (nope + v)
                    + heads * v * h
            }
            None => h * (heads + 2.0 * kv_heads) * head_dim + heads * head_dim * h,
        }
    }

    fn weight_groups(&self) -> [WeightGroup; 7] {
        let layers = f64::from(self.layers);
        let (moe_layers, dense_layers) = (f64::from(self.moe_layers()), f64::from(self.dense_layers()));
        let norm_params = if matches!(self.norm, Norm::LayerNorm) {
            2.0
        } else {
            1.0
        };
        let mla_norms = self
            .mla
            .map_or(0.0, |m| m.q_lora_rank as f64 + m.kv_lora_rank as f64);
        let layer_norms = layers * (2.0 * self.hidden as f64 + mla_norms) + self.hidden as f64;
        let embedding = self.vocab as f64 * self.hidden as f64;
        let group = |elements, copies, active_copies, quantized| WeightGroup {
            elements,
            copies,
            active_copies,
            quantized,
        };
        let (experts, router) = match self.moe {
            Some(m) => (
                group(
                    self.ffn_elements(m.expert_ffn),
                    moe_layers * (m.experts as f64 + m.shared_experts as f64),
                    moe_layers * (m.top_k as f64 + m.shared_experts as f64),
                    true,
                ),
                group(
                    self.hidden as f64 * m.experts as f64,
                    moe_layers,
                    moe_layers,
                    false,
                ),
            ),
            None => (group(0.0, 0.0, 0.0, true), group(0.0, 0.0, 0.0, false)),
        };
        let heads = if self.tied_embeddings { 0.0 } else { 1.0 };
        [
            group(self.attention_elements(), layers, layers, true),
            group(self.ffn_elements(self.ffn_dim), dense_layers, dense_layers, true),
            experts,
            router,
            group(norm_params * layer_norms, 1.0, 1.0, false),
            group(embedding, 1.0, 1.0, false),
            group(embedding, heads, heads, false),
        ]
    }

    /// Total and active parameters, derived from the structure.
    ///
    /// # Examples
    /// ```
    /// use roofline_core::find_model;
    /// let mixtral = find_model("mixtral-8x7b").unwrap().parameters();
    /// // Mistral AI: 46.7B total, 12.9B active.
    /// assert!((mixtral.total / 46.7e9 - 1.0).abs() < 0.01);
    /// assert!((mixtral.active / 12.9e9 - 1.0).abs() < 0.01);
    /// ```
    #[must_use]
    pub fn parameters(&self) -> ParamCount {
        self.weight_groups().iter().fold(
            ParamCount {
                total: 0.0,
                active: 0.0,
            },
            |acc, g| ParamCount {
                total: acc.total + g.elements * g.copies,
                active: acc.active + g.elements * g.active_copies,
            },
        )
    }

    /// Bytes of all weights under `config`: linear layers (attention, FFN, experts) in the weight format,
    /// one tensor per matrix with its block scales; embeddings, logits head, router and norms at the hidden
    /// precision (AWQ, GPTQ and ModelOpt checkpoints keep them unquantized).
    #[must_use]
    pub fn weight_bytes(&self, config: &QuantConfig) -> f64 {
        self.weight_groups()
            .iter()
            .map(|g| {
                let format = if g.quantized {
                    config.weights
                } else {
                    config.hidden()
                };
                g.copies * format.tensor_bytes(g.elements)
            })
            .sum()
    }

    /// Checks that every dimension is positive and heads divide evenly into KV heads.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the offending field.
    pub fn validate(&self) -> Result<(), Error> {
        let dims = [
            ("layers", u64::from(self.layers)),
            ("hidden", self.hidden),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("ffn_dim", self.ffn_dim),
            ("vocab", self.vocab),
        ];
        crate::ops::check_dims(&dims)?;
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(Error::InvalidInput(format!(
                "{}: heads must be a multiple of kv_heads",
                self.key
            )));
        }
        if let Some(m) = self.moe {
            crate::ops::check_dims(&[
                ("experts", m.experts),
                ("top_k", m.top_k),
                ("expert_ffn", m.expert_ffn),
            ])?;
            if m.top_k > m.experts || m.dense_layers > self.layers {
                return Err(Error::InvalidInput(format!(
                    "{}: inconsistent MoE config",
                    self.key
                )));
            }
        }
        if let Some(m) = self.mla {
            let dims = [
                ("q_lora_rank", m.q_lora_rank),
                ("kv_lora_rank", m.kv_lora_rank),
                ("rope_head_dim", m.rope_head_dim),
                ("nope_head_dim", m.nope_head_dim),
                ("v_head_dim", m.v_head_dim),
            ];
            crate::ops::check_dims(&dims)?;
        }
        Ok(())
    }
}

/// A dense Llama-style preset: gated SiLU FFN, RMSNorm.
#[allow(clippy::too_many_arguments)]
fn dense(
    key: &str,
    name: &str,
    (layers, hidden, heads, kv_heads, head_dim): (u32, u64, u64, u64, u64),
    (ffn_dim, vocab, tied_embeddings): (u64, u64, bool),
    published_params: f64,
    source: &str,
) -> ModelConfig {
    ModelConfig {
        key: key.to_owned(),
        name: name.to_owned(),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        ffn_dim,
        vocab,
        gated_ffn: true,
        tied_embeddings,
        norm: Norm::RmsNorm,
        moe: None,
        mla: None,
        published_params,
        published_active_params: None,
        source: source.to_owned(),
    }
}

static PRESETS: LazyLock<Vec<ModelConfig>> = LazyLock::new(|| {
    vec![
        dense(
            "llama-3.1-8b",
            "Llama 3.1 8B",
            (32, 4096, 32, 8, 128),
            (14_336, 128_256, false),
            8.03e9,
            "huggingface.co/meta-llama/Llama-3.1-8B config.json; 8.03B per the model card",
        ),
        dense(
            "llama-3.1-70b",
            "Llama 3.1 70B",
            (80, 8192, 64, 8, 128),
            (28_672, 128_256, false),
            70.6e9,
            "huggingface.co/meta-llama/Llama-3.1-70B config.json; 70.6B per the model card",
        ),
        dense(
            "llama-3.1-405b",
            "Llama 3.1 405B",
            (126, 16_384, 128, 8, 128),
            (53_248, 128_256, false),
            405.9e9,
            "huggingface.co/meta-llama/Llama-3.1-405B config.json; 405.9B per the model card",
        ),
        dense(
            "llama-3.2-1b",
            "Llama 3.2 1B",
            (16, 2048, 32, 8, 64),
            (8192, 128_256, true),
            1.24e9,
            "huggingface.co/meta-llama/Llama-3.2-1B config.json; 1.24B per the model card",
        ),
        dense(
            "llama-3.2-3b",
            "Llama 3.2 3B",
            (28, 3072, 24, 8, 128),
            (8192, 128_256, true),
            3.21e9,
            "huggingface.co/meta-llama/Llama-3.2-3B config.json; 3.21B per the model card",
        ),
        dense(
            "qwen2.5-7b",
            "Qwen2.5 7B",
            (28, 3584, 28, 4, 128),
            (18_944, 152_064, false),
            7.61e9,
            "huggingface.co/Qwen/Qwen2.5-7B config.json; 7.61B per the model card (QKV biases omitted, 0.1M)",
        ),
        dense(
            "qwen2.5-72b",
            "Qwen2.5 72B",
            (80, 8192, 64, 8, 128),
            (29_568, 152_064, false),
            72.7e9,
            "huggingface.co/Qwen/Qwen2.5-72B config.json; 72.7B per the model card (QKV biases omitted)",
        ),
        dense(
            "mistral-7b",
            "Mistral 7B v0.1",
            (32, 4096, 32, 8, 128),
            (14_336, 32_000, false),
            7.24e9,
            "huggingface.co/mistralai/Mistral-7B-v0.1 config.json; 7.24B per the model page",
        ),
        ModelConfig {
            moe: Some(MoeConfig {
                experts: 8,
                top_k: 2,
                shared_experts: 0,
                expert_ffn: 14_336,
                dense_layers: 0,
            }),
            published_active_params: Some(12.9e9),
            ..dense(
                "mixtral-8x7b",
                "Mixtral 8x7B",
                (32, 4096, 32, 8, 128),
                (14_336, 32_000, false),
                46.7e9,
                "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json; 46.7B total, 12.9B active (Mistral AI)",
            )
        },
        ModelConfig {
            moe: Some(MoeConfig {
                experts: 256,
                top_k: 8,
                shared_experts: 1,
                expert_ffn: 2048,
                dense_layers: 3,
            }),
            mla: Some(MlaConfig {
                q_lora_rank: 1536,
                kv_lora_rank: 512,
                rope_head_dim: 64,
                nope_head_dim: 128,
                v_head_dim: 128,
            }),
            published_active_params: Some(37e9),
            ..dense(
                "deepseek-v3",
                "DeepSeek-V3 (MLA approximated)",
                (61, 7168, 128, 128, 128),
                (18_432, 129_280, false),
                671e9,
                "huggingface.co/deepseek-ai/DeepSeek-V3 config.json; 671B total, 37B active (technical report, arXiv:2412.19437; MTP module excluded)",
            )
        },
        dense(
            "tinyllama-1.1b",
            "TinyLlama 1.1B",
            (22, 2048, 32, 4, 64),
            (5632, 32_000, false),
            1.1e9,
            "huggingface.co/TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T config.json; 1.1B",
        ),
    ]
});

/// Every model preset.
///
/// # Examples
/// ```
/// let presets = roofline_core::model_presets();
/// assert_eq!(presets.len(), 11);
/// assert!(presets.iter().all(|m| m.validate().is_ok()));
/// ```
#[must_use]
pub fn model_presets() -> &'static [ModelConfig] {
    &PRESETS
}

/// Looks a model preset up by key (case-insensitive).
///
/// # Errors
/// [`Error::UnknownModel`] listing every valid key.
///
/// # Examples
/// ```
/// let m = roofline_core::find_model("Llama-3.1-70B").unwrap();
/// assert_eq!((m.layers, m.hidden, m.kv_heads), (80, 8192, 8));
/// ```
pub fn find_model(key: &str) -> Result<&'static ModelConfig, Error> {
    let wanted = key.trim().to_ascii_lowercase();
    model_presets()
        .iter()
        .find(|m| m.key == wanted)
        .ok_or_else(|| Error::UnknownModel {
            key: key.to_owned(),
            valid: model_presets().iter().map(|m| m.key.clone()).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find_quant_config;

    #[test]
    fn every_preset_is_valid_and_keys_are_the_required_ones() {
        let keys: Vec<_> = model_presets().iter().map(|m| m.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "llama-3.1-8b",
                "llama-3.1-70b",
                "llama-3.1-405b",
                "llama-3.2-1b",
                "llama-3.2-3b",
                "qwen2.5-7b",
                "qwen2.5-72b",
                "mistral-7b",
                "mixtral-8x7b",
                "deepseek-v3",
                "tinyllama-1.1b"
            ]
        );
        for m in model_presets() {
            m.validate().unwrap();
        }
        assert!(matches!(find_model("gpt-5"), Err(Error::UnknownModel { valid, .. }) if valid.len() == 11));
    }

    #[test]
    fn derived_parameter_counts_match_the_published_ones() {
        // Published totals are in each preset's `published_params` with the source cited in `source`.
        for m in model_presets() {
            let params = m.parameters();
            let error = params.total / m.published_params - 1.0;
            assert!(
                error.abs() < 0.01,
                "{}: {:.4e} vs {:.4e}",
                m.key,
                params.total,
                m.published_params
            );
            if m.moe.is_none() {
                assert_eq!(params.active, params.total, "{}", m.key);
            }
        }
    }

    #[test]
    fn active_parameters_of_moe_models() {
        // Mixtral: 12.9B active (Mistral AI). Derived: 32·(41.94M attention + 2·176.16M experts) + embeddings.
        let mixtral = find_model("mixtral-8x7b").unwrap().parameters();
        assert!((mixtral.active / 12.9e9 - 1.0).abs() < 0.01, "{}", mixtral.active);
        // DeepSeek-V3: 37B active (technical report). Counting both embedding matrices fully gives 37.6B;
        // the report's rounding convention is not stated, so this check allows 2 %.
        let deepseek = find_model("deepseek-v3").unwrap().parameters();
        assert!((deepseek.active / 37e9 - 1.0).abs() < 0.02, "{}", deepseek.active);
    }

    #[test]
    fn kv_cache_bytes_per_token() {
        let check = |model: &str, kv: Precision, bytes: f64| {
            assert_eq!(
                find_model(model).unwrap().kv_bytes_per_token(kv),
                bytes,
                "{model} {kv}"
            );
        };
        // Llama-3.1-8B: 2 · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B.
        check("llama-3.1-8b", Precision::Fp16, 131_072.0);
        // Llama-3.1-70B in FP8: 2 · 80 · 8 · 128 · 1 B = 163,840 B.
        check("llama-3.1-70b", Precision::Fp8E4M3, 163_840.0);
        // DeepSeek-V3 MLA: 61 layers · (512 latent + 64 rotary) · 2 B = 70,272 B.
        check("deepseek-v3", Precision::Bf16, 70_272.0);
        // NVFP4 KV: 4.5 bits per element, scales amortized.
        check("llama-3.1-8b", Precision::Nvfp4, 131_072.0 * 4.5 / 16.0);
    }

    #[test]
    fn weight_bytes_follow_the_config() {
        let llama = find_model("llama-3.1-8b").unwrap();
        let bf16 = llama.weight_bytes(find_quant_config("bf16").unwrap());
        // 8.03B parameters · 2 B.
        assert!((bf16 / (2.0 * llama.parameters().total) - 1.0).abs() < 1e-9);
        let awq = llama.weight_bytes(find_quant_config("w4a16-int4").unwrap());
        // Linear layers at 4.156 b, 1.05B embedding + head parameters at FP16.
        let embeddings = 2.0 * 128_256.0 * 4096.0;
        let linear = llama.parameters().total - embeddings - (65.0 * 4096.0);
        assert!((awq - (linear * 4.15625 / 8.0 + (embeddings + 65.0 * 4096.0) * 2.0)).abs() / awq < 1e-4);
        // Tied embeddings are stored once.
        let tied = find_model("llama-3.2-1b").unwrap();
        assert!((tied.parameters().total / 1.24e9 - 1.0).abs() < 0.01);
    }
}
