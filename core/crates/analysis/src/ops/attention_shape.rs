//! The shape of one attention call (batch, queries, keys, heads, GQA, causal mask, sliding window) and its
//! pair and KV-cache counts; `attention.rs` turns it into operators, `kernel.rs` names it in a kernel.

use super::check_dims;
use roofline_base::Error;

/// The shape of one attention call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AttentionShape {
    /// Sequences in the batch.
    pub batch: u64,
    /// Query tokens per sequence (Sq): the prompt length in prefill, 1 in decode.
    pub query_len: u64,
    /// Key/value tokens per sequence (Skv): the context attended to.
    pub kv_len: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (GQA: fewer than `heads`; MQA: 1); KV traffic scales with these.
    pub kv_heads: u64,
    /// Dimension of each head (QKᵀ and P·V), in elements.
    pub head_dim: u64,
    /// Causal masking: query i (the last `query_len` positions) sees keys up to its own position.
    pub causal: bool,
    /// Fused (FlashAttention-style: scores stay on chip) or unfused (scores written to and read from DRAM).
    pub fused: bool,
    /// K and V are one cached tensor read once (MLA's compressed latent); otherwise K and V are separate.
    pub shared_kv: bool,
    /// Sliding window (causal only): a query sees at most this many most recent keys, itself included
    /// (Mistral, Gemma 3, gpt-oss). `None`: every key the mask allows. Absent in older JSON, which reads as
    /// `None`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub window: Option<u64>,
}

impl AttentionShape {
    /// Query-key pairs scored per sequence and head: Sq·Skv, or with causal masking
    /// Sq·(Skv − Sq) + Sq·(Sq + 1)/2 (so prefill with Sq = Skv = S scores S·(S + 1)/2, about half).
    /// With a window W the query at key position j (1-based, the last Sq of Skv) scores min(j, W) pairs.
    #[must_use]
    pub fn scored_pairs(&self) -> f64 {
        let (sq, skv) = (self.query_len as f64, self.kv_len as f64);
        match (self.causal, self.window) {
            (true, Some(window)) => {
                // Σ min(j, W) over j = Skv − Sq + 1 ..= Skv: the part below the window plus W per query above.
                let (first, last, w) = (skv - sq + 1.0, skv, window as f64);
                let below_end = last.min(w);
                let below = if below_end >= first {
                    (first + below_end) * (below_end - first + 1.0) / 2.0
                } else {
                    0.0
                };
                let above = (last - first.max(w + 1.0) + 1.0).max(0.0) * w;
                below + above
            }
            (true, None) => sq * (skv - sq).max(0.0) + sq * (sq.min(skv) + 1.0) / 2.0,
            (false, _) => sq * skv,
        }
    }

    /// Cached tokens read per sequence: Skv, or with a window the keys some query sees, min(Skv, Sq + W − 1)
    /// (decode: min(Skv, W)).
    #[must_use]
    pub fn kv_tokens_read(&self) -> u64 {
        self.window.map_or(self.kv_len, |w| {
            self.kv_len
                .min(self.query_len.saturating_add(w).saturating_sub(1))
        })
    }

    /// Cached elements per token and layer: 2·kv_heads·head_dim, or kv_heads·head_dim with `shared_kv`.
    #[must_use]
    pub fn kv_elements_per_token(&self) -> f64 {
        let per_tensor = self.kv_heads as f64 * self.head_dim as f64;
        if self.shared_kv {
            per_tensor
        } else {
            2.0 * per_tensor
        }
    }

    pub(super) fn check(&self) -> Result<(), Error> {
        check_dims(&[
            ("batch", self.batch),
            ("query_len", self.query_len),
            ("kv_len", self.kv_len),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("head_dim", self.head_dim),
        ])?;
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(Error::InvalidInput(format!(
                "heads ({}) must be a multiple of kv_heads ({})",
                self.heads, self.kv_heads
            )));
        }
        if let Some(window) = self.window {
            check_dims(&[("window", window)])?;
            if !self.causal {
                return Err(Error::InvalidInput(
                    "a sliding window needs causal attention".into(),
                ));
            }
        }
        if self.causal && self.query_len > self.kv_len {
            return Err(Error::InvalidInput(format!(
                "causal attention needs query_len ({}) <= kv_len ({})",
                self.query_len, self.kv_len
            )));
        }
        Ok(())
    }
}
