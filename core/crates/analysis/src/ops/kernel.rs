//! What a kernel of an operator computes, in enough detail to build and run it: the row-wise vector
//! operators (norms, activations, residual adds, RoPE, quantization, softmax), embedding gathers, KV-cache
//! copies, attention, linear attention and the sparse-attention indexer. GEMM-like operators are described by [`super::GemmShape`] instead.
//!
//! The description is set by the operator constructors of this module's siblings
//! ([`super::Operator::kernel`]); the FLOP and byte counts stay the constructors' own, the description only
//! says what to run.

use super::attention_shape::AttentionShape;
use super::linear_attention_shape::LinearAttentionShape;

/// What a row-wise operator does to each row of `width` elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum RowKind {
    /// RMSNorm with a γ of `width` elements.
    RmsNorm,
    /// LayerNorm with γ and β of `width` elements.
    LayerNorm,
    /// `silu(gate) · up`: two inputs of `width` elements per row, one output.
    SiluMul,
    /// GELU (tanh approximation): one input, one output.
    Gelu,
    /// Residual add `x + f(x)`: two inputs, one output.
    ResidualAdd,
    /// Rotary position embedding: each row is one head of one token, `width` = head dim, rotated in pairs.
    Rope,
    /// Run-time quantization of a linear layer's input to the operator's output precision.
    Quantize,
    /// The absolute maximum of a whole tensor (the dynamic per-tensor scale of the quantization after it).
    AbsMax,
    /// Softmax over a row of attention scores (unfused attention).
    Softmax,
}

impl RowKind {
    /// `rms_norm`, `layer_norm`, `silu_mul`, `gelu`, `residual_add`, `rope`, `quantize`, `abs_max` or
    /// `softmax`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            RowKind::RmsNorm => "rms_norm",
            RowKind::LayerNorm => "layer_norm",
            RowKind::SiluMul => "silu_mul",
            RowKind::Gelu => "gelu",
            RowKind::ResidualAdd => "residual_add",
            RowKind::Rope => "rope",
            RowKind::Quantize => "quantize",
            RowKind::AbsMax => "abs_max",
            RowKind::Softmax => "softmax",
        }
    }
}

/// Which part of attention an operator is: the whole fused kernel, or one stage of unfused attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum AttentionPart {
    /// QKᵀ, softmax and P·V in one kernel (scores stay on chip).
    Fused,
    /// Unfused QKᵀ: the scores are written to DRAM.
    Scores,
    /// Unfused P·V: the probabilities are read from DRAM.
    Values,
}

/// The structured description of a non-GEMM operator's kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum KernelShape {
    /// A row-wise operator over `rows` rows of `width` elements.
    Rows {
        /// Independent rows (tokens, or token × head for RoPE and softmax).
        rows: u64,
        /// Elements per row, in elements.
        width: u64,
        /// What is done to each row.
        kind: RowKind,
    },
    /// An embedding lookup: `rows` rows of `width` elements gathered from a table by token id.
    Gather {
        /// Rows gathered (tokens).
        rows: u64,
        /// Elements per row (the hidden size).
        width: u64,
    },
    /// A KV-cache write: `tokens` new tokens of `elements` cached elements each (K and V together).
    KvWrite {
        /// Tokens written.
        tokens: u64,
        /// Cached elements per token.
        elements: u64,
    },
    /// A KV-cache read (a pure stream): `tokens` cached tokens of `elements` elements each.
    KvRead {
        /// Tokens read.
        tokens: u64,
        /// Cached elements per token.
        elements: u64,
    },
    /// Attention over a contiguous KV cache.
    Attention {
        /// The attention call.
        shape: AttentionShape,
        /// Fused, or which unfused stage.
        part: AttentionPart,
    },
    /// Gated DeltaNet: its causal convolution, or the gated delta rule (recurrent for one token a sequence,
    /// chunked for more).
    LinearAttention {
        /// The call.
        shape: LinearAttentionShape,
        /// The convolution (`false`) or the delta rule (`true`).
        delta_rule: bool,
    },
    /// DeepSeek Sparse Attention's indexer over a contiguous cache of index keys: its FP8 logits, or with
    /// `top_k` the selection of that many keys from them.
    Indexer {
        /// The indexer heads, queries and cached keys (`kv_heads` 1).
        shape: AttentionShape,
        /// Keys each query keeps, for the selection; `None` for the logits.
        top_k: Option<u64>,
    },
}

impl KernelShape {
    /// A short label, e.g. `rms_norm 1x2048`, `gather 1x2048`, `kv_write 1x512`,
    /// `attention B1xH32/4xSq1xSkv256xd64`.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            KernelShape::Rows { rows, width, kind } => format!("{} {rows}x{width}", kind.name()),
            KernelShape::Gather { rows, width } => format!("gather {rows}x{width}"),
            KernelShape::KvWrite { tokens, elements } => format!("kv_write {tokens}x{elements}"),
            KernelShape::KvRead { tokens, elements } => format!("kv_read {tokens}x{elements}"),
            KernelShape::Attention { shape, part } => {
                let part = match part {
                    AttentionPart::Fused => "attention",
                    AttentionPart::Scores => "attention_scores",
                    AttentionPart::Values => "attention_values",
                };
                format!(
                    "{part}{} B{}xH{}/{}xSq{}xSkv{}xd{}",
                    if shape.causal { " causal" } else { "" },
                    shape.batch,
                    shape.heads,
                    shape.kv_heads,
                    shape.query_len,
                    shape.kv_tokens_read(),
                    shape.head_dim
                )
            }
            KernelShape::LinearAttention { shape, delta_rule } => format!(
                "{} B{}xT{}xH{}/{}xdk{}xdv{}",
                match (delta_rule, shape.tokens) {
                    (false, _) => "causal_conv",
                    (true, 1) => "recurrent_delta_rule",
                    (true, _) => "chunked_delta_rule",
                },
                shape.batch,
                shape.tokens,
                shape.value_heads,
                shape.key_heads,
                shape.key_head_dim,
                shape.value_head_dim
            ),
            KernelShape::Indexer { shape, top_k } => format!(
                "{} B{}xH{}xSq{}xSkv{}xd{}",
                top_k.map_or_else(|| "indexer_logits".to_owned(), |k| format!("indexer_top{k}")),
                shape.batch,
                shape.heads,
                shape.query_len,
                shape.kv_len,
                shape.head_dim
            ),
        }
    }
}
