//! Attention: QKᵀ, softmax and P·V over `query_len` queries and `kv_len` keys, with GQA/MQA and causal masking.

use super::attention_shape::AttentionShape;
use super::{AttentionPart, KernelShape, OpKind, OperandPrecisions, Operator, RowKind};
use roofline_base::Error;

/// FLOPs of a softmax per score: max, subtract, exponential, sum, divide.
const SOFTMAX_FLOP_PER_SCORE: f64 = 5.0;

impl Operator {
    /// Attention over a KV cache: `precisions.activation` is the format QKᵀ and P·V run in (also Q, scores
    /// and output), `precisions.weight` the KV-cache format, `precisions.output` the output format.
    ///
    /// With P = [`AttentionShape::scored_pairs`], H heads, d head dim, B batch:
    /// - fused, one operator: FLOPs = 4·B·H·P·d + 5·B·H·P (softmax); bytes = Q (B·H·Sq·d) + K and V
    ///   (B·kv_heads·Skv·d each, read once per KV head) + O (B·H·Sq·d). Scores never reach DRAM.
    /// - unfused, three operators (`qk_scores`, `softmax`, `pv`): the batched matmuls compute every
    ///   Sq·Skv score (the mask is applied afterwards, so no causal saving) and the score matrix
    ///   (B·H·Sq·Skv) is written by QKᵀ, read and written by softmax, and read by P·V.
    /// - With a sliding window, Skv in the bytes (and in the unfused score matrix) is
    ///   [`AttentionShape::kv_tokens_read`]: keys outside every query's window are never read.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension, `heads` not a multiple of `kv_heads`, or
    /// causal attention with more queries than keys.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::{AttentionShape, Operator, OperandPrecisions};
    /// // Llama-3.1-8B decode, one token over 4096 cached tokens, BF16: the KV read dominates.
    /// let shape = AttentionShape {
    ///     batch: 1, query_len: 1, kv_len: 4096, heads: 32, kv_heads: 8, head_dim: 128,
    ///     causal: true, fused: true, shared_kv: false, window: None,
    /// };
    /// let ops = Operator::attention(&shape, Precision::Bf16.into()).unwrap();
    /// assert_eq!(ops.len(), 1);
    /// assert_eq!(ops[0].kv_bytes, 2.0 * 8.0 * 4096.0 * 128.0 * 2.0);
    /// ```
    pub fn attention(shape: &AttentionShape, precisions: OperandPrecisions) -> Result<Vec<Operator>, Error> {
        shape.check()?;
        let (b, h, d) = (shape.batch as f64, shape.heads as f64, shape.head_dim as f64);
        let (sq, skv) = (shape.query_len as f64, shape.kv_tokens_read() as f64);
        let q_elements = b * h * sq * d;
        let kv_tensor_elements = b * (shape.kv_heads as f64) * skv * d;
        let kv_bytes = |tensors: f64| tensors * precisions.weight.tensor_bytes(kv_tensor_elements);
        let kv_tensors = if shape.shared_kv { 1.0 } else { 2.0 };
        let window_label = shape.window.map_or_else(String::new, |w| format!("xW{w}"));
        let shape_label = format!(
            "B{}xH{}/{}xSq{}xSkv{}xd{}{window_label}",
            shape.batch, shape.heads, shape.kv_heads, shape.query_len, shape.kv_len, shape.head_dim
        );
        let activation = precisions.activation;
        let attention_op =
            |name: &str, kind: OpKind, flops: f64, activation_bytes: f64, kv: f64, output_bytes: f64| {
                let part = match name {
                    "qk_scores" => AttentionPart::Scores,
                    "pv" => AttentionPart::Values,
                    _ => AttentionPart::Fused,
                };
                let kernel = if kind == OpKind::Attention {
                    KernelShape::Attention { shape: *shape, part }
                } else {
                    // The unfused softmax: one row of scores per sequence, head and query.
                    KernelShape::Rows {
                        rows: shape.batch * shape.heads * shape.query_len,
                        width: shape.kv_tokens_read(),
                        kind: RowKind::Softmax,
                    }
                };
                Operator {
                    name: name.to_owned(),
                    kind,
                    shape: shape_label.clone(),
                    precisions,
                    flops,
                    weight_bytes: 0.0,
                    activation_bytes,
                    kv_bytes: kv,
                    output_bytes,
                    gemm: None,
                    collective: None,
                    quantize: None,
                    kernel: Some(kernel),
                }
            };
        if shape.fused {
            let pairs = b * h * shape.scored_pairs();
            return Ok(vec![attention_op(
                "attention",
                OpKind::Attention,
                4.0 * pairs * d + SOFTMAX_FLOP_PER_SCORE * pairs,
                activation.tensor_bytes(q_elements),
                kv_bytes(kv_tensors),
                precisions.output.tensor_bytes(q_elements),
            )]);
        }
        let scores = b * h * sq * skv;
        let score_bytes = activation.tensor_bytes(scores);
        Ok(vec![
            attention_op(
                "qk_scores",
                OpKind::Attention,
                2.0 * scores * d,
                activation.tensor_bytes(q_elements),
                kv_bytes(1.0),
                score_bytes,
            ),
            attention_op(
                "softmax",
                OpKind::Elementwise,
                SOFTMAX_FLOP_PER_SCORE * scores,
                score_bytes,
                0.0,
                score_bytes,
            ),
            attention_op(
                "pv",
                OpKind::Attention,
                2.0 * scores * d,
                score_bytes,
                kv_bytes(kv_tensors - 1.0),
                precisions.output.tensor_bytes(q_elements),
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_base::precision::Precision;

    fn shape(query_len: u64, kv_len: u64, causal: bool, fused: bool) -> AttentionShape {
        AttentionShape {
            batch: 1,
            query_len,
            kv_len,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            causal,
            fused,
            shared_kv: false,
            window: None,
        }
    }

    #[test]
    fn causal_prefill_scores_half_the_pairs() {
        // S = 4096: S·(S + 1)/2 = 8,390,656 pairs, against S² = 16,777,216 without the mask.
        assert_eq!(shape(4096, 4096, true, true).scored_pairs(), 8_390_656.0);
        assert_eq!(shape(4096, 4096, false, true).scored_pairs(), 16_777_216.0);
        // Chunked prefill of 512 queries after 3584 cached tokens: 512·3584 + 512·513/2.
        assert_eq!(
            shape(512, 4096, true, true).scored_pairs(),
            512.0 * 3584.0 + 512.0 * 513.0 / 2.0
        );
        // Decode sees every cached key.
        assert_eq!(shape(1, 4096, true, true).scored_pairs(), 4096.0);
    }

    #[test]
    fn sliding_windows_bound_pairs_and_kv_reads() {
        let windowed = |query_len, kv_len, window| AttentionShape {
            window: Some(window),
            ..shape(query_len, kv_len, true, true)
        };
        // Decode over 8192 cached tokens with a 4096 window: 4096 pairs and 4096 keys read.
        assert_eq!(windowed(1, 8192, 4096).scored_pairs(), 4096.0);
        assert_eq!(windowed(1, 8192, 4096).kv_tokens_read(), 4096);
        // Within the window nothing changes.
        assert_eq!(windowed(1, 100, 4096).scored_pairs(), 100.0);
        assert_eq!(
            windowed(1000, 1000, 4096).scored_pairs(),
            shape(1000, 1000, true, true).scored_pairs()
        );
        // Prefill of S = 8192 with W = 128: the first 128 queries score 1..=128, the other 8064 score 128 each;
        // every key is read once.
        assert_eq!(
            windowed(8192, 8192, 128).scored_pairs(),
            128.0 * 129.0 / 2.0 + 8064.0 * 128.0
        );
        assert_eq!(windowed(8192, 8192, 128).kv_tokens_read(), 8192);
        // Chunked prefill of 512 queries after 3584 cached tokens, W = 1024: 1024 pairs each, 1535 keys read.
        assert_eq!(windowed(512, 4096, 1024).scored_pairs(), 512.0 * 1024.0);
        assert_eq!(windowed(512, 4096, 1024).kv_tokens_read(), 1535);
        let p = Precision::Fp16.into();
        let decode = Operator::attention(&windowed(1, 8192, 4096), p)
            .unwrap()
            .remove(0);
        let full = Operator::attention(&shape(1, 4096, true, true), p)
            .unwrap()
            .remove(0);
        assert_eq!((decode.flops, decode.kv_bytes), (full.flops, full.kv_bytes));
        // A window without the causal mask is refused.
        let acausal = AttentionShape {
            window: Some(16),
            ..shape(8, 8, false, true)
        };
        assert!(Operator::attention(&acausal, p).is_err());
    }

    #[test]
    fn gqa_kv_traffic_follows_kv_heads() {
        let p = Precision::Fp16.into();
        let gqa = Operator::attention(&shape(1, 4096, true, true), p)
            .unwrap()
            .remove(0);
        let mha = Operator::attention(
            &AttentionShape {
                kv_heads: 32,
                ..shape(1, 4096, true, true)
            },
            p,
        )
        .unwrap()
        .remove(0);
        assert_eq!(mha.kv_bytes, 4.0 * gqa.kv_bytes);
        assert_eq!(gqa.flops, mha.flops);
        // K and V: 2 · 8 heads · 4096 · 128 · 2 B = 16 MiB.
        assert_eq!(gqa.kv_bytes, 16_777_216.0);
    }

    #[test]
    fn unfused_attention_materializes_the_scores() {
        let p = Precision::Fp16.into();
        let fused = Operator::attention(&shape(2048, 2048, false, true), p).unwrap();
        let unfused = Operator::attention(&shape(2048, 2048, false, false), p).unwrap();
        assert_eq!(unfused.len(), 3);
        let total = |ops: &[Operator], f: fn(&Operator) -> f64| ops.iter().map(f).sum::<f64>();
        assert_eq!(total(&unfused, |o| o.flops), total(&fused, |o| o.flops));
        // Scores 32 · 2048² · 2 B = 256 MiB, moved 4 times (write, read+write, read).
        let scores = 32.0 * 2048.0 * 2048.0 * 2.0;
        assert_eq!(
            total(&unfused, Operator::bytes) - total(&fused, Operator::bytes),
            4.0 * scores
        );
        assert_eq!(unfused[1].kind, OpKind::Elementwise);
    }

    #[test]
    fn bad_shapes_are_rejected() {
        let p = Precision::Fp16.into();
        assert!(
            Operator::attention(
                &AttentionShape {
                    kv_heads: 5,
                    ..shape(1, 8, true, true)
                },
                p
            )
            .is_err()
        );
        assert!(Operator::attention(&shape(16, 8, true, true), p).is_err());
        assert!(Operator::attention(&shape(0, 8, false, true), p).is_err());
    }
}
