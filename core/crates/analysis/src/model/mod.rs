//! Transformer model configs and the presets, transcribed from the published Hugging Face `config.json` files.
//!
//! Parameter counts are derived from the structure (projections, FFN or experts, norms, embeddings) and
//! checked against the published totals in the tests. `model/hf.rs` (feature `serde`) imports any supported
//! Hugging Face `config.json`: [`ModelConfig::from_hf_config_json`], with the checkpoint's own precisions
//! from its `quantization_config` (`model/checkpoint.rs`). `model/presets.rs` holds the presets' data;
//! `model/attention.rs` linear attention and the sparse-attention indexer.

use crate::ops::{Activation, Norm};
use crate::quant_config::{Module, QuantConfig};
use roofline_base::Error;
use roofline_base::precision::Precision;

mod attention;
mod check;
#[cfg(feature = "serde")]
mod checkpoint;
mod drafter;
#[cfg(feature = "serde")]
mod fields;
#[cfg(feature = "serde")]
mod hf;
mod presets;

pub use attention::{CompressedAttention, LinearAttention, SparseIndexer};
#[cfg(feature = "serde")]
pub use hf::MAX_CONFIG_JSON_BYTES;

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
    /// Layers with a dense FFN (`ffn_dim` wide) instead of experts, wherever they sit: DeepSeek-V3's first 3
    /// (`first_k_dense_replace`), Llama 4 Maverick's 24 interleaved ones (`interleave_moe_layer_step` 2).
    /// Layers are analysed by count, so their positions do not matter.
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

/// Sliding-window (or chunked) attention on some layers: a query there sees at most `window` recent keys,
/// itself included, and those layers cache at most `window` tokens per sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SlidingWindow {
    /// Keys a query sees, in tokens (Hugging Face `sliding_window`, or Llama 4's `attention_chunk_size`).
    pub window: u64,
    /// Layers that use the window; the others attend to the whole context.
    pub layers: u32,
    /// Llama 4 chunked attention (a query sees its own chunk of `window` tokens), analysed as a sliding
    /// window of the chunk size: an upper bound on the keys read (a chunk holds 1 to `window` keys).
    #[cfg_attr(feature = "serde", serde(default))]
    pub chunked: bool,
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
    /// Sliding-window attention, if some layers use it (Mistral 7B v0.1, Gemma 3, gpt-oss, Llama 4 chunked).
    /// Absent in models serialized before the field existed, which read as `None`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sliding_window: Option<SlidingWindow>,
    /// Gated DeltaNet linear attention on some layers (Qwen3-Next, Qwen3.5). Absent in models serialized
    /// before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub linear_attention: Option<LinearAttention>,
    /// DeepSeek Sparse Attention's indexer on the MLA layers (DeepSeek-V3.2, GLM-5): attention reads
    /// `top_k` selected keys. Absent in models serialized before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub sparse_indexer: Option<SparseIndexer>,
    /// DeepSeek-V4's compressed attention on the MLA layers (with `sliding_window` on every layer). Absent in
    /// models serialized before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub compressed_attention: Option<CompressedAttention>,
    /// The query projection also emits a sigmoid gate on each head's output (Qwen3-Next `attn_output_gate`):
    /// q_proj twice as wide.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub attention_output_gate: bool,
    /// LatentMoE (Kimi-K3 `routed_expert_hidden_size`): the routed experts run in a latent space this wide,
    /// between a down projection from the hidden state and an up projection back (with an RMSNorm on the
    /// latent), both replicated and in the router's format; the router and the shared experts stay in the
    /// hidden space. Absent in models serialized before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub latent_moe: Option<u64>,
    /// Multi-token-prediction layers beside the model (DeepSeek `num_nextn_predict_layers`, Qwen
    /// `mtp_num_hidden_layers`, MiniMax `num_mtp_modules`): the drafter of speculative decoding
    /// ([`ModelConfig::mtp_drafter`]), in neither `layers` nor the parameters.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_zero"))]
    pub mtp_layers: u32,
    /// Published total parameters, for reference (0 when none is published, e.g. an imported `config.json`).
    pub published_params: f64,
    /// Published parameters active per token (MoE), for reference.
    pub published_active_params: Option<f64>,
    /// Where the numbers come from.
    pub source: String,
    /// The precisions the published checkpoint stores, module by module (from an imported `config.json`'s
    /// `quantization_config`, or a preset's published checkpoint); `None` for a checkpoint in its 16-bit
    /// `torch_dtype`. Models serialized before the field existed read as `None`.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub checkpoint: Option<QuantConfig>,
}

#[cfg(feature = "serde")]
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
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

/// Weight matrices of one kind: `elements` each, `copies` of them, and the module whose format they are
/// stored in (`None`: norms, always at the hidden precision).
struct WeightGroup {
    elements: f64,
    copies: f64,
    active_copies: f64,
    module: Option<Module>,
    /// Of `elements`, the attention's output projection, stored in [`Module::AttentionOutput`]'s format.
    output: f64,
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

    /// Layers with sliding-window attention (0 without one).
    #[must_use]
    pub fn window_layers(&self) -> u32 {
        self.sliding_window.map_or(0, |w| w.layers)
    }

    /// Layers with linear attention (0 without it).
    #[must_use]
    pub fn linear_attention_layers(&self) -> u32 {
        self.linear_attention.map_or(0, |l| l.layers.min(self.layers))
    }

    /// Layers with softmax attention over a KV cache (full or sliding-window): all but the linear-attention
    /// ones.
    #[must_use]
    pub fn attention_layers(&self) -> u32 {
        self.layers - self.linear_attention_layers()
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

    /// Bytes of the sparse-attention indexer's key cache per token over all attention layers (0 without an
    /// indexer): [`SparseIndexer::cache_bytes_per_token`] per layer, in bytes.
    #[must_use]
    pub fn indexer_bytes_per_token(&self) -> f64 {
        self.sparse_indexer.map_or(0.0, |i| {
            f64::from(i.sparse_layers(self.attention_layers())) * i.cache_bytes_per_token()
        })
    }

    /// Bytes one sequence keeps whatever its length, over all layers: the linear-attention layers' states
    /// ([`LinearAttention::state_bytes`]; 0 without them), in bytes.
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::find_model;
    /// // Qwen3.5-397B-A17B: 45 Gated DeltaNet layers of 64 · 128 · 128 FP32 state (188,743,680 B, "189 MB")
    /// // and (2 · 16 · 128 + 64 · 128) · 3 · 2 B of convolution window (3,317,760 B).
    /// let qwen = find_model("qwen3.5-397b-a17b").unwrap();
    /// assert_eq!(qwen.state_bytes_per_sequence(), 188_743_680.0 + 3_317_760.0);
    /// ```
    #[must_use]
    pub fn state_bytes_per_sequence(&self) -> f64 {
        self.linear_attention.map_or(0.0, |l| {
            f64::from(self.linear_attention_layers()) * l.state_bytes()
        }) + self
            .compressed_attention
            .map_or(0.0, |c| c.state_bytes(self.kv_elements_per_token()))
    }

    /// Cache bytes per token over all layers at `kv_cache` precision (block scales amortized): the KV cache
    /// of the attention layers and the indexer's keys, while the context is within the sliding window (if
    /// any); beyond it, and for the constant state of linear attention, see [`ModelConfig::kv_cache_bytes`].
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::find_model;
    /// // Llama-3.1-8B: 2 (K, V) · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B per token.
    /// assert_eq!(find_model("llama-3.1-8b").unwrap().kv_bytes_per_token(Precision::Fp16), 131_072.0);
    /// ```
    #[must_use]
    pub fn kv_bytes_per_token(&self, kv_cache: Precision) -> f64 {
        f64::from(self.attention_layers()) * self.kv_elements_per_token() as f64 * kv_cache.effective_bytes()
            + self.indexer_bytes_per_token()
    }

    /// Cache bytes of one sequence of `context` tokens at `kv_cache` precision: every token on full-attention
    /// layers, at most `window` tokens on sliding-window layers, the indexer's key of every token, and the
    /// constant state of the linear-attention layers ([`ModelConfig::state_bytes_per_sequence`]). What an
    /// engine's KV pool holds for the sequence.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::find_model;
    /// // gpt-oss-20b: 12 full layers cache 8192 tokens, 12 sliding layers 128; 2 · 8 KV heads · 64 · 2 B each.
    /// let m = find_model("gpt-oss-20b").unwrap();
    /// assert_eq!(m.kv_cache_bytes(Precision::Bf16, 8192), (12.0 * 8192.0 + 12.0 * 128.0) * 2048.0);
    /// ```
    #[must_use]
    pub fn kv_cache_bytes(&self, kv_cache: Precision, context: u64) -> f64 {
        let attention = self.attention_layers();
        let (full_layers, window_tokens) = match self.sliding_window {
            Some(w) => (
                attention - w.layers.min(attention),
                f64::from(w.layers) * context.min(w.window) as f64,
            ),
            None => (attention, 0.0),
        };
        let tokens = f64::from(full_layers) * context as f64 + window_tokens;
        let (entries, index_keys) = self.compressed_attention.map_or((0.0, 0.0), |c| {
            let keys = f64::from(c.csa_layers) * (context / c.csa_ratio.max(1)) as f64;
            (c.entries(context), keys * c.indexer.cache_bytes_per_token())
        });
        (tokens + entries) * self.kv_elements_per_token() as f64 * kv_cache.effective_bytes()
            + self.indexer_bytes_per_token() * context as f64
            + index_keys
            + self.state_bytes_per_sequence()
    }

    /// Elements of the up (and gate) projection of one FFN `ffn` wide: (2 or 1)·H·F, and of the down: H·F.
    fn ffn_elements(&self, ffn: u64) -> f64 {
        self.ffn_elements_at(self.hidden, ffn)
    }

    /// [`ModelConfig::ffn_elements`] of an FFN on inputs `width` wide (LatentMoE's experts).
    fn ffn_elements_at(&self, width: u64, ffn: u64) -> f64 {
        let matrices = if self.gated_ffn { 3.0 } else { 2.0 };
        matrices * width as f64 * ffn as f64
    }

    /// Width of the routed experts' inputs and outputs: the LatentMoE latent, else the hidden size.
    #[must_use]
    pub fn expert_width(&self) -> u64 {
        self.latent_moe.unwrap_or(self.hidden)
    }

    /// Elements of the attention projections of one softmax-attention layer (MLA's, or Q with its output
    /// gate where the model has one, K, V and O), and of its indexer.
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
                let indexer = self
                    .sparse_indexer
                    .map_or(0.0, |i| i.projection_elements(self.hidden, m.q_lora_rank));
                // DeepSeek-V4 caches K = V directly: no kv_b.
                let kv_b = if self.compressed_attention.is_some() {
                    0.0
                } else {
                    kv_rank * heads * (nope + v)
                };
                // Kimi-K3's output gate: hidden → heads · v_head_dim.
                let gate = if self.attention_output_gate {
                    h * heads * v
                } else {
                    0.0
                };
                h * q_rank
                    + gate
                    + q_rank * heads * (nope + rope)
                    + h * (kv_rank + rope)
                    + kv_b
                    + self.attention_output_elements()
                    + indexer
            }
            None => {
                let gate = if self.attention_output_gate { 2.0 } else { 1.0 };
                h * (gate * heads + 2.0 * kv_heads) * head_dim + heads * head_dim * h
            }
        }
    }

    /// Elements of one attention layer's output projection: attention width × hidden, or DeepSeek-V4's
    /// grouped low-rank pair ([`CompressedAttention::output_elements`]).
    fn attention_output_elements(&self) -> f64 {
        self.compressed_attention
            .map_or((self.attention_width() * self.hidden) as f64, |c| {
                c.output_elements(self.attention_width(), self.hidden)
            })
    }

    /// Width of the attention's output, the input of its output projection: heads · head_dim, or MLA's
    /// heads · v_head_dim.
    #[must_use]
    pub fn attention_width(&self) -> u64 {
        self.mla
            .map_or(self.heads * self.head_dim, |m| self.heads * m.v_head_dim)
    }

    /// Elements of the projections of one linear-attention layer (0 without one): the input projection
    /// (hidden → [`LinearAttention::in_proj_width`]) and the output projection (value width → hidden).
    fn linear_attention_elements(&self) -> f64 {
        self.linear_attention.map_or(0.0, |l| {
            (self.hidden * (l.in_proj_width() + l.value_width()) + l.key_head_dim * l.decay_width()) as f64
        })
    }

    fn weight_groups(&self) -> [WeightGroup; 10] {
        let (attention, linear) = (
            f64::from(self.attention_layers()),
            f64::from(self.linear_attention_layers()),
        );
        let (moe_layers, dense_layers) = (f64::from(self.moe_layers()), f64::from(self.dense_layers()));
        let norm_params = if matches!(self.norm, Norm::LayerNorm) {
            2.0
        } else {
            1.0
        };
        let mla_norms = self
            .mla
            .map_or(0.0, |m| m.q_lora_rank as f64 + m.kv_lora_rank as f64);
        // The indexer's key LayerNorm (γ and β) on every attention layer; linear attention's convolution,
        // decay and gated norm on every linear layer.
        let small = attention
            * self
                .sparse_indexer
                .filter(|i| !i.msa)
                .map_or(0.0, |i| 2.0 * i.head_dim as f64)
            + self.linear_attention.map_or(0.0, |l| linear * l.small_params())
            + self.compressed_attention.map_or(0.0, |c| {
                c.small_params((self.layers, self.hidden, self.heads, self.kv_elements_per_token()))
            });
        let compressors = match (self.compressed_attention, self.mla) {
            (Some(c), Some(m)) => {
                c.projection_elements(self.hidden, self.kv_elements_per_token(), m.q_lora_rank)
            }
            _ => 0.0,
        } + self.sparse_indexer.filter(|i| i.msa).map_or(0.0, |i| {
            f64::from(i.sparse_layers(self.attention_layers())) * i.projection_elements(self.hidden, 0)
        });
        let latent = self.latent_moe.unwrap_or(0) as f64;
        let layer_norms = f64::from(self.layers) * (2.0 * self.hidden as f64)
            + attention * mla_norms
            + moe_layers * latent
            + self.hidden as f64;
        let embedding = self.vocab as f64 * self.hidden as f64;
        let group = |elements, copies, active_copies, module| WeightGroup {
            elements,
            copies,
            active_copies,
            module,
            output: 0.0,
        };
        let (routed, shared, router) = match self.moe {
            Some(m) => (
                group(
                    self.ffn_elements_at(self.expert_width(), m.expert_ffn),
                    moe_layers * m.experts as f64,
                    moe_layers * m.top_k as f64,
                    Some(Module::RoutedExperts),
                ),
                group(
                    self.ffn_elements(m.expert_ffn),
                    moe_layers * m.shared_experts as f64,
                    moe_layers * m.shared_experts as f64,
                    Some(Module::SharedExperts),
                ),
                // The router, and LatentMoE's down and up projections beside it.
                group(
                    self.hidden as f64 * (m.experts as f64 + 2.0 * latent),
                    moe_layers,
                    moe_layers,
                    Some(Module::Router),
                ),
            ),
            None => (
                group(0.0, 0.0, 0.0, Some(Module::RoutedExperts)),
                group(0.0, 0.0, 0.0, Some(Module::SharedExperts)),
                group(0.0, 0.0, 0.0, Some(Module::Router)),
            ),
        };
        let heads = if self.tied_embeddings { 0.0 } else { 1.0 };
        [
            WeightGroup {
                output: self.attention_output_elements(),
                ..group(
                    self.attention_elements(),
                    attention,
                    attention,
                    Some(Module::Attention),
                )
            },
            WeightGroup {
                output: self
                    .linear_attention
                    .map_or(0.0, |l| (l.value_width() * self.hidden) as f64),
                ..group(
                    self.linear_attention_elements(),
                    linear,
                    linear,
                    Some(Module::Attention),
                )
            },
            group(compressors, 1.0, 1.0, Some(Module::Attention)),
            group(
                self.ffn_elements(self.ffn_dim),
                dense_layers,
                dense_layers,
                Some(Module::DenseMlp),
            ),
            routed,
            shared,
            router,
            group(norm_params * layer_norms + small, 1.0, 1.0, None),
            group(embedding, 1.0, 1.0, Some(Module::Embeddings)),
            group(embedding, heads, heads, Some(Module::Head)),
        ]
    }

    /// The modules the model has: attention and embeddings always, the dense MLP where some layer has one,
    /// the MoE modules where it has experts (shared experts where it has them), the head unless tied to the
    /// embeddings.
    #[must_use]
    pub fn modules(&self) -> Vec<Module> {
        let mut modules: Vec<Module> = Vec::new();
        for g in self.weight_groups() {
            if let Some(m) = g
                .module
                .filter(|m| g.copies > 0.0 && g.elements > 0.0 && !modules.contains(m))
            {
                modules.push(m);
            }
        }
        modules
    }

    /// Total and active parameters, derived from the structure.
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::find_model;
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

    /// Bytes of all weights under `config`: each module's matrices in its weight format
    /// ([`QuantConfig::format`]: linear layers in the config's weight format unless a module says otherwise;
    /// embeddings, logits head and router at the hidden precision, as AWQ, GPTQ and ModelOpt checkpoints keep
    /// them), one tensor per matrix with its block scales; norms at the hidden precision.
    #[must_use]
    pub fn weight_bytes(&self, config: &QuantConfig) -> f64 {
        self.weight_groups()
            .iter()
            .map(|g| {
                let format = g
                    .module
                    .map_or_else(|| config.hidden(), |m| config.format(m).weights);
                let output = config.format(Module::AttentionOutput).weights;
                if g.output > 0.0 && output != format {
                    g.copies * (format.tensor_bytes(g.elements - g.output) + output.tensor_bytes(g.output))
                } else {
                    g.copies * format.tensor_bytes(g.elements)
                }
            })
            .sum()
    }

    /// The config the model's checkpoint runs in: its own precisions ([`ModelConfig::checkpoint`]), else
    /// BF16 (the 16-bit checkpoint).
    ///
    /// # Examples
    /// ```
    /// let llama = roofline_analysis::find_model("llama-3.1-8b").unwrap();
    /// assert_eq!(llama.checkpoint_config().key, "bf16");
    /// ```
    #[must_use]
    pub fn checkpoint_config(&self) -> QuantConfig {
        self.checkpoint.clone().unwrap_or_else(|| {
            crate::quant_config::find_quant_config("bf16")
                .cloned()
                .expect("bf16 is a config")
        })
    }

    /// The config named `key` for this model: `checkpoint` is [`ModelConfig::checkpoint_config`], any other
    /// key a precision config of the table ([`crate::find_quant_config`]).
    ///
    /// # Errors
    /// [`Error::UnknownConfig`] listing `checkpoint` and every table key.
    pub fn config(&self, key: &str) -> Result<QuantConfig, Error> {
        if key.trim().eq_ignore_ascii_case("checkpoint") {
            return Ok(self.checkpoint_config());
        }
        crate::quant_config::find_quant_config(key)
            .cloned()
            .map_err(|e| match e {
                Error::UnknownConfig { key, mut valid } => {
                    valid.insert(0, "checkpoint".to_owned());
                    Error::UnknownConfig { key, valid }
                }
                other => other,
            })
    }

    /// The configs the advisor weighs for this model: every precision config of the table, and the
    /// checkpoint's own when it has one.
    #[must_use]
    pub fn candidate_configs(&self) -> Vec<QuantConfig> {
        let mut configs = crate::quant_config::quant_configs().to_vec();
        configs.extend(self.checkpoint.clone());
        configs
    }
}

/// Every model preset.
///
/// # Examples
/// ```
/// let presets = roofline_analysis::model_presets();
/// assert_eq!(presets.len(), 38);
/// assert!(presets.iter().all(|m| m.check().is_ok()));
/// ```
#[must_use]
pub fn model_presets() -> &'static [ModelConfig] {
    &presets::PRESETS
}

/// Looks a model preset up by key (case-insensitive).
///
/// # Errors
/// [`Error::UnknownModel`] listing every valid key.
///
/// # Examples
/// ```
/// let m = roofline_analysis::find_model("Llama-3.1-70B").unwrap();
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
mod tests;
