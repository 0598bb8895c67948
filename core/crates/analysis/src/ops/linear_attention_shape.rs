//! The shape of one Gated DeltaNet call (sequences, new tokens, heads, head sizes, convolution taps);
//! `linear_attention.rs` turns it into operators, `kernel.rs` names it in a kernel.

use super::check_dims;
use roofline_base::Error;

/// One Gated DeltaNet call: `batch` sequences of `tokens` new tokens each (1 in decode), with the heads and
/// sizes of one GPU's part of the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LinearAttentionShape {
    /// Sequences.
    pub batch: u64,
    /// New tokens per sequence: 1 in decode, the chunk in prefill.
    pub tokens: u64,
    /// Query and key heads.
    pub key_heads: u64,
    /// Value heads, each with one state matrix.
    pub value_heads: u64,
    /// Query and key head dimension (d_k), in elements.
    pub key_head_dim: u64,
    /// Value head dimension (d_v), in elements.
    pub value_head_dim: u64,
    /// Taps of the causal convolution.
    pub conv_kernel: u64,
}

impl LinearAttentionShape {
    pub(super) fn check(&self) -> Result<(), Error> {
        check_dims(&[
            ("batch", self.batch),
            ("tokens", self.tokens),
            ("key_heads", self.key_heads),
            ("value_heads", self.value_heads),
            ("key_head_dim", self.key_head_dim),
            ("value_head_dim", self.value_head_dim),
            ("conv_kernel", self.conv_kernel),
        ])
    }

    /// Convolution channels: q, k and v, 2·key_heads·d_k + value_heads·d_v.
    pub(super) fn channels(&self) -> f64 {
        (2 * self.key_heads * self.key_head_dim + self.value_heads * self.value_head_dim) as f64
    }

    /// Elements of the state of one sequence: value_heads · d_k · d_v.
    pub(super) fn state_elements(&self) -> f64 {
        (self.value_heads * self.key_head_dim * self.value_head_dim) as f64
    }
}
