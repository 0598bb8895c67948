//! Attention beside softmax attention over a KV cache, which changes what a step reads and keeps: Gated
//! DeltaNet linear attention (Qwen3-Next, Qwen3.5), a constant recurrent state per sequence, and DeepSeek
//! Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5), a small key cache per token that selects the
//! keys sparse MLA reads; DeepSeek-V4's compressed attention (a sliding window on every layer, and compressed
//! entries every 4 tokens, read through an indexer, or every 128). Derivations: docs/design/core.md, in the
//! section on `model/mod.rs`.

use roofline_base::precision::Precision;

/// Gated DeltaNet linear attention on some layers (Qwen3-Next, Qwen3.5; transformers
/// `Qwen3NextGatedDeltaNet`): instead of a KV cache, a recurrent state of `value_heads` matrices
/// `key_head_dim` × `value_head_dim` per sequence, and a short causal convolution over q, k and v.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LinearAttention {
    /// Layers with linear attention; the others have full attention.
    pub layers: u32,
    /// Query and key heads (`linear_num_key_heads`).
    pub key_heads: u64,
    /// Value heads (`linear_num_value_heads`), a multiple of the key heads; each keeps one state matrix.
    pub value_heads: u64,
    /// Dimension of a query and key head (`linear_key_head_dim`), in elements.
    pub key_head_dim: u64,
    /// Dimension of a value head (`linear_value_head_dim`), in elements.
    pub value_head_dim: u64,
    /// Taps of the causal convolution (`linear_conv_kernel_dim`), in tokens.
    pub conv_kernel: u64,
    /// Format of the recurrent state (Qwen3.5's `mamba_ssm_dtype` float32; FP32 in the FLA kernels).
    pub state: Precision,
    /// Kimi Delta Attention (Kimi-K3, vLLM `KimiDeltaAttention` with `use_full_rank_gate`) instead of Gated
    /// DeltaNet: the same state and convolution, but a decay per key channel from a low-rank pair (`f_a`
    /// hidden → key_head_dim, `f_b` key_head_dim → key width) instead of one α per head, and a full-rank
    /// output gate. Absent in models serialized before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub kda: bool,
}

impl LinearAttention {
    /// Width of the query and key projections together: 2 · key_heads · key_head_dim.
    #[must_use]
    pub fn query_key_width(&self) -> u64 {
        2 * self.key_heads * self.key_head_dim
    }

    /// Width of the values (and of the output gate z, and of the output projection's input):
    /// value_heads · value_head_dim.
    #[must_use]
    pub fn value_width(&self) -> u64 {
        self.value_heads * self.value_head_dim
    }

    /// Channels of the causal convolution: q, k and v, 2 · key_heads · key_head_dim + value_heads ·
    /// value_head_dim.
    #[must_use]
    pub fn conv_channels(&self) -> u64 {
        self.query_key_width() + self.value_width()
    }

    /// Output width of the input projection (`in_proj_qkvz` and `in_proj_ba`, or Qwen3.5's
    /// `in_proj_qkv`, `in_proj_z`, `in_proj_b`, `in_proj_a`): q, k, v, the gate z, and β and α (one per
    /// value head each); for KDA q, k, v, the gate, β per head and the decay's `f_a` (key_head_dim).
    #[must_use]
    pub fn in_proj_width(&self) -> u64 {
        if self.kda {
            self.conv_channels() + self.value_width() + self.value_heads + self.key_head_dim
        } else {
            self.conv_channels() + self.value_width() + 2 * self.value_heads
        }
    }

    /// Output width of KDA's decay up-projection `f_b` (key_head_dim → key_heads · key_head_dim, one decay
    /// per key channel); 0 for Gated DeltaNet.
    #[must_use]
    pub fn decay_width(&self) -> u64 {
        if self.kda {
            self.key_heads * self.key_head_dim
        } else {
            0
        }
    }

    /// Parameters of one layer besides its projections: the depthwise convolution (channels · taps), `A_log`
    /// (one per value head), `dt_bias` (one per value head, KDA's one per key channel) and the gated RMSNorm
    /// (value_head_dim).
    #[must_use]
    pub fn small_params(&self) -> f64 {
        let dt_bias = if self.kda {
            self.decay_width()
        } else {
            self.value_heads
        };
        (self.conv_channels() * self.conv_kernel + self.value_heads + dt_bias + self.value_head_dim) as f64
    }

    /// Bytes one sequence keeps in one layer: the recurrent state (value_heads · key_head_dim ·
    /// value_head_dim in `state`) and the convolution window (channels · (taps − 1) at 16 bits, the model's
    /// dtype).
    #[must_use]
    pub fn state_bytes(&self) -> f64 {
        let matrices = (self.value_heads * self.key_head_dim * self.value_head_dim) as f64;
        let window = (self.conv_channels() * self.conv_kernel.saturating_sub(1)) as f64;
        self.state.tensor_bytes(matrices) + Precision::Bf16.tensor_bytes(window)
    }
}

/// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5; transformers `deepseek_v32`,
/// vLLM `Indexer`): for every new token, FP8 logits of `heads` heads over every cached index key pick the
/// `top_k` keys the MLA attention then reads. MiniMax Sparse Attention (MiniMax-M3, `msa`) is the same
/// beside GQA: per-token logits, their maximum per block, the top blocks' keys read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SparseIndexer {
    /// Indexer query heads (`index_n_heads`).
    pub heads: u64,
    /// Dimension of an indexer head and of its one cached key per token (`index_head_dim`), in elements.
    pub head_dim: u64,
    /// Keys each query attends to (`index_topk`; MSA's `sparse_topk_blocks` · `sparse_block_size`).
    pub top_k: u64,
    /// MiniMax Sparse Attention (sglang `MiniMaxM3Attention`): the index query (`heads` · head_dim) and key
    /// (head_dim) come from the layer input in the fused q, k, v projection, with no head weights. Absent in
    /// models serialized before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub msa: bool,
    /// Attention layers without the indexer, attending to every key (MiniMax-M3's first 3,
    /// `sparse_attention_freq` 0). Absent in models serialized before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_zero"))]
    pub dense_layers: u32,
}

#[cfg(feature = "serde")]
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl SparseIndexer {
    /// Format of the cached index keys: FP8 with an FP32 scale per 128 elements (vLLM's indexer cache,
    /// DeepSeek's `fp8_index`), [`Precision::Fp8Group128`].
    pub const CACHE: Precision = Precision::Fp8Group128;

    /// Projection elements of one layer: `wq_b` (q_lora_rank → heads · head_dim), `wk` (hidden →
    /// head_dim) and `weights_proj` (hidden → heads); MSA's index q and k (hidden → (heads + 1) · head_dim).
    #[must_use]
    pub fn projection_elements(&self, hidden: u64, q_lora_rank: u64) -> f64 {
        if self.msa {
            return (hidden * (self.heads + 1) * self.head_dim) as f64;
        }
        (q_lora_rank * self.heads * self.head_dim + hidden * (self.head_dim + self.heads)) as f64
    }

    /// Output width of the projections from the hidden state (`wk` and `weights_proj`, one GEMM; MSA's
    /// index query and key).
    #[must_use]
    pub fn key_weights_width(&self) -> u64 {
        if self.msa {
            (self.heads + 1) * self.head_dim
        } else {
            self.head_dim + self.heads
        }
    }

    /// Of `attention` attention layers, those with the indexer.
    #[must_use]
    pub fn sparse_layers(&self, attention: u32) -> u32 {
        attention.saturating_sub(self.dense_layers)
    }

    /// Cache bytes per token and layer: one key of head_dim in [`SparseIndexer::CACHE`] (128 + 4 = 132 B
    /// for DeepSeek-V3.2's 128).
    #[must_use]
    pub fn cache_bytes_per_token(&self) -> f64 {
        SparseIndexer::CACHE.tensor_bytes(self.head_dim as f64)
    }
}

/// DeepSeek-V4's hybrid attention (transformers `DeepseekV4Attention`): shared-KV MQA of `head_dim`-wide
/// heads (analysed as MLA without `kv_b`, see [`crate::ModelConfig::mla`]) over the last `window` tokens on
/// every layer, and over compressed entries on the others: one per `csa_ratio` tokens from a gated pool of
/// overlapping windows, of which the `indexer` picks `top_k` (CSA), or one per `hca_ratio` tokens, all read
/// (HCA); a grouped low-rank output projection and `hc_mult` residual streams (mHC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CompressedAttention {
    /// Layers with compressed sparse attention (`compress_ratios` entry `csa_ratio`).
    pub csa_layers: u32,
    /// Tokens per CSA entry (4).
    pub csa_ratio: u64,
    /// Layers with heavily compressed attention (any other non-zero `compress_ratios` entry).
    pub hca_layers: u32,
    /// Tokens per HCA entry (128).
    pub hca_ratio: u64,
    /// The CSA layers' lightning indexer over the compressed entries.
    pub indexer: SparseIndexer,
    /// Groups of the output projection (`o_groups`).
    pub o_groups: u64,
    /// Output rank per group (`o_lora_rank`).
    pub o_lora_rank: u64,
    /// Residual streams (`hc_mult`).
    pub hc_mult: u64,
}

impl CompressedAttention {
    /// Compressed entries one sequence of `context` tokens keeps over all layers: ⌊c / csa_ratio⌋ per CSA
    /// layer, ⌊c / hca_ratio⌋ per HCA layer.
    #[must_use]
    pub fn entries(&self, context: u64) -> f64 {
        f64::from(self.csa_layers) * (context / self.csa_ratio.max(1)) as f64
            + f64::from(self.hca_layers) * (context / self.hca_ratio.max(1)) as f64
    }

    /// Projection elements of the compressors over all layers: CSA's `kv_proj` and `gate_proj` (hidden → 2 ·
    /// head_dim each, two overlapping series) and its indexer's (hidden → 2 · index_head_dim each, `q_b_proj`
    /// q_lora_rank → heads · index_head_dim, `weights_proj` hidden → heads); HCA's (hidden → head_dim each).
    #[must_use]
    pub fn projection_elements(&self, hidden: u64, head_dim: u64, q_lora_rank: u64) -> f64 {
        let ix = self.indexer;
        let csa = 4 * hidden * head_dim
            + 4 * hidden * ix.head_dim
            + q_lora_rank * ix.heads * ix.head_dim
            + hidden * ix.heads;
        f64::from(self.csa_layers) * csa as f64 + f64::from(self.hca_layers) * (2 * hidden * head_dim) as f64
    }

    /// Elements of the grouped output projection of one layer: `o_a` (heads · head_dim → o_groups ·
    /// o_lora_rank, block-diagonal) and `o_b` (o_groups · o_lora_rank → hidden).
    #[must_use]
    pub fn output_elements(&self, width: u64, hidden: u64) -> f64 {
        (self.o_lora_rank * (width + self.o_groups * hidden)) as f64
    }

    /// Parameters besides the projections, over `layers` layers of `heads` heads: the compressors' position
    /// biases and norms, the attention sinks, and the mHC mixings (two a layer, `fn` (2 + n)·n × n·hidden,
    /// `base` (2 + n)·n and 3 scales) and the final stream collapse (n × n·hidden, n, 1).
    #[must_use]
    pub fn small_params(&self, (layers, hidden, heads, head_dim): (u32, u64, u64, u64)) -> f64 {
        let (ix, n) = (self.indexer.head_dim, self.hc_mult);
        let csa = self.csa_ratio * 2 * (head_dim + ix) + head_dim + ix;
        let hca = self.hca_ratio * head_dim + head_dim;
        let mixing = (2 + n) * n * (n * hidden + 1) + 3;
        f64::from(self.csa_layers) * csa as f64
            + f64::from(self.hca_layers) * hca as f64
            + f64::from(layers) * (heads + 2 * mixing) as f64
            + (n * n * hidden + n + 1) as f64
    }

    /// Bytes one sequence keeps whatever its length: each compressor's FP32 buffer of the kv and gate
    /// projections of the window being filled (vLLM's compressor state): 2 · ratio · 2 · head_dim · 4 B
    /// per CSA layer (two overlapping series), with its indexer's 2 · ratio · 2 · index_head_dim · 4 B, and
    /// 2 · ratio · head_dim · 4 B per HCA layer.
    #[must_use]
    pub fn state_bytes(&self, head_dim: u64) -> f64 {
        let csa = 2 * self.csa_ratio * 2 * (head_dim + self.indexer.head_dim) * 4;
        let hca = 2 * self.hca_ratio * head_dim * 4;
        f64::from(self.csa_layers) * csa as f64 + f64::from(self.hca_layers) * hca as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qwen35_397b_keeps_189_mb_of_state_per_sequence() {
        // 45 Gated DeltaNet layers of 64 value heads, 16 key heads, 128 × 128, kernel 4:
        // state 64 · 128 · 128 · 4 B = 4,194,304 B; window (2 · 16 · 128 + 64 · 128) · 3 · 2 B = 73,728 B.
        let gdn = LinearAttention {
            layers: 45,
            key_heads: 16,
            value_heads: 64,
            key_head_dim: 128,
            value_head_dim: 128,
            conv_kernel: 4,
            state: Precision::Fp32,
            kda: false,
        };
        assert_eq!(gdn.state_bytes(), 4_194_304.0 + 73_728.0);
        // 45 layers: 188,743,680 B of state (189 MB) and 3,317,760 B of windows.
        assert_eq!(45.0 * gdn.state_bytes(), 188_743_680.0 + 3_317_760.0);
        // in_proj: 2·2048 (q, k) + 8192 (v) + 8192 (z) + 2·64 (β, α) = 20,608.
        assert_eq!(gdn.in_proj_width(), 20_608);
    }

    #[test]
    fn the_indexer_caches_132_bytes_per_token_and_layer() {
        let dsa = SparseIndexer {
            heads: 64,
            head_dim: 128,
            top_k: 2048,
            msa: false,
            dense_layers: 0,
        };
        assert_eq!(dsa.cache_bytes_per_token(), 132.0);
        // DeepSeek-V3.2: 1536 · 64 · 128 + 7168 · (128 + 64) = 12,582,912 + 1,376,256.
        assert_eq!(dsa.projection_elements(7168, 1536), 13_959_168.0);
    }
}
