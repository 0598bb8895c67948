//! DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5): FP8 logits of every new token over
//! every cached index key, and the top-k selection that picks the keys sparse MLA attention then reads.

use super::attention_shape::AttentionShape;
use super::{KernelShape, OpKind, OperandPrecisions, Operator};
use roofline_base::Error;
use roofline_base::precision::Precision;

impl Operator {
    /// The indexer's logits over `shape`: `heads` indexer heads of `head_dim`, one cached key per token
    /// (`kv_heads` 1), causal, with keys and queries in `keys` (FP8 with a scale per 128; DeepGEMM's
    /// `fp8_mqa_logits`, which vLLM and SGLang call), the per-head weights in FP32.
    ///
    /// With P = [`AttentionShape::scored_pairs`] per sequence and head dimension d, FLOPs = B·P·heads·(2·d
    /// plus 3): the dot product, ReLU and the weighted sum over heads. Bytes: the queries (B·Sq·heads·d in
    /// `keys`), their weights (B·Sq·heads·4), every cached key once per sequence (B·Skv·d in `keys`) and one
    /// FP32 logit per scored pair (B·P·4): the cost grows with the whole context, not with top-k.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension or causal attention with more queries than
    /// keys.
    pub fn indexer_logits(shape: &AttentionShape, keys: Precision) -> Result<Operator, Error> {
        let mut op = Operator::attention(shape, OperandPrecisions::from(keys))?.remove(0);
        let (b, h, d) = (shape.batch as f64, shape.heads as f64, shape.head_dim as f64);
        let (sq, skv, pairs) = (
            shape.query_len as f64,
            shape.kv_len as f64,
            b * shape.scored_pairs(),
        );
        op.name = "indexer_logits".to_owned();
        op.precisions = OperandPrecisions {
            weight: keys,
            activation: Precision::Fp8E4M3,
            output: Precision::Fp32,
        };
        op.flops = pairs * h * (2.0 * d + 3.0);
        op.activation_bytes = keys.tensor_bytes(b * sq * h * d) + 4.0 * b * sq * h;
        op.kv_bytes = keys.tensor_bytes(b * skv * d);
        op.output_bytes = 4.0 * pairs;
        let kernel = KernelShape::Indexer {
            shape: *shape,
            top_k: None,
        };
        op.shape = kernel.label();
        op.kernel = Some(kernel);
        Ok(op)
    }

    /// The top-`k` selection over the indexer's logits of `shape`: each query row reads its FP32 logits (one
    /// per scored pair, a comparison each) and writes min(k, keys it sees) key indices (INT32).
    ///
    /// # Errors
    /// As [`Operator::indexer_logits`].
    pub fn indexer_top_k(shape: &AttentionShape, k: u64) -> Result<Operator, Error> {
        let mut op = Operator::indexer_logits(shape, Precision::Fp8E4M3)?;
        let pairs = shape.batch as f64 * shape.scored_pairs();
        let rows = (shape.batch * shape.query_len) as f64;
        op.name = "indexer_top_k".to_owned();
        op.kind = OpKind::Elementwise;
        op.precisions = Precision::Fp32.into();
        op.flops = pairs;
        op.activation_bytes = 4.0 * pairs;
        op.kv_bytes = 0.0;
        op.output_bytes = 4.0 * rows * (k.min(shape.kv_len) as f64);
        let kernel = KernelShape::Indexer {
            shape: *shape,
            top_k: Some(k),
        };
        op.shape = kernel.label();
        op.kernel = Some(kernel);
        Ok(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DeepSeek-V3.2's indexer in decode: 64 heads of 128, one query over `context` cached keys.
    fn decode(context: u64) -> AttentionShape {
        AttentionShape {
            batch: 1,
            query_len: 1,
            kv_len: context,
            heads: 64,
            kv_heads: 1,
            head_dim: 128,
            causal: true,
            fused: true,
            shared_kv: true,
            window: None,
        }
    }

    #[test]
    fn decode_logits_read_every_cached_key() {
        let keys = Precision::Fp8Group128;
        // 32,768 cached keys of 132 B (128 FP8 + a 4 B scale): 4,325,376 B, whatever top-k is.
        let op = Operator::indexer_logits(&decode(32_768), keys).unwrap();
        assert_eq!(op.kv_bytes, 32_768.0 * 132.0);
        // 32,768 pairs · 64 heads · (2 · 128 + 3) FLOPs; one FP32 logit a pair.
        assert_eq!(op.flops, 32_768.0 * 64.0 * 259.0);
        assert_eq!(op.output_bytes, 4.0 * 32_768.0);
        // The query (64 · 128 FP8, 64 scales of 4 B) and 64 FP32 weights.
        assert_eq!(op.activation_bytes, 8192.0 + 256.0 + 256.0);
        assert_eq!(
            (op.kind, op.precisions.compute()),
            (OpKind::Attention, Precision::Fp8E4M3)
        );
        // Top-k reads the 32,768 logits and writes 2048 indices.
        let top = Operator::indexer_top_k(&decode(32_768), 2048).unwrap();
        assert_eq!(
            (top.activation_bytes, top.output_bytes),
            (4.0 * 32_768.0, 4.0 * 2048.0)
        );
        // Below top-k every key is kept.
        assert_eq!(
            Operator::indexer_top_k(&decode(100), 2048).unwrap().output_bytes,
            400.0
        );
    }
}
