//! Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5): its short causal convolution and the gated delta
//! rule, recurrent in decode (the whole state read and written every token) and chunked in prefill.

use super::linear_attention_shape::LinearAttentionShape;
use super::{KernelShape, OpKind, OperandPrecisions, Operator};
use roofline_base::Error;
use roofline_base::precision::Precision;

/// Chunk length of the chunked gated delta rule, in tokens (FLA `chunk_gated_delta_rule`, which vLLM, SGLang
/// and TensorRT-LLM run for these models).
pub const DELTA_RULE_CHUNK: u64 = 64;

/// An operator of `kind` over `precisions` with the given FLOPs and bytes (state bytes counted as KV-cache
/// traffic), its kernel the convolution or (`delta_rule`) the delta rule over `shape`.
fn linear_op(
    (name, shape, delta_rule, kind): (&str, &LinearAttentionShape, bool, OpKind),
    precisions: OperandPrecisions,
    flops: f64,
    (activation_bytes, state_bytes, output_bytes): (f64, f64, f64),
) -> Operator {
    let kernel = KernelShape::LinearAttention {
        shape: *shape,
        delta_rule,
    };
    Operator {
        name: name.to_owned(),
        kind,
        shape: kernel.label(),
        precisions,
        flops,
        weight_bytes: 0.0,
        activation_bytes,
        kv_bytes: state_bytes,
        output_bytes,
        gemm: None,
        collective: None,
        quantize: None,
        kernel: Some(kernel),
    }
}

impl Operator {
    /// The causal depthwise convolution over the q, k and v channels (`causal_conv1d`), in `hidden`
    /// precision with its window of the last taps − 1 tokens in `window`.
    ///
    /// With C channels, K taps, B sequences of T tokens: FLOPs = 2·K·C·B·T (a multiply-add per tap) +
    /// C·B·T (SiLU); bytes = the input and output (C·B·T each) + the weights (C·K) + the window: read and
    /// written in decode (2·B·C·(K − 1)), written once in prefill (B·C·(K − 1)).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn causal_conv(
        shape: &LinearAttentionShape,
        hidden: Precision,
        window: Precision,
    ) -> Result<Operator, Error> {
        shape.check()?;
        let (c, k) = (shape.channels(), shape.conv_kernel as f64);
        let elements = c * (shape.batch * shape.tokens) as f64;
        let windows = if shape.tokens == 1 { 2.0 } else { 1.0 };
        Ok(linear_op(
            ("causal_conv", shape, false, OpKind::Elementwise),
            OperandPrecisions {
                weight: hidden,
                activation: hidden,
                output: hidden,
            },
            2.0 * k * elements + elements,
            (
                hidden.tensor_bytes(elements) + hidden.tensor_bytes(c * k),
                windows * window.tensor_bytes(shape.batch as f64 * c * (k - 1.0)),
                hidden.tensor_bytes(elements),
            ),
        ))
    }

    /// The gated delta rule over a state in `state` precision, its inputs and output in `hidden`.
    ///
    /// Per value head with S its d_k × d_v state: decode (one token) decays S, reads Sᵀk, adds the rank-one
    /// correction and reads Sᵀq: 7·d_k·d_v FLOPs a token, the whole state read and written once
    /// (`recurrent_gated_delta_rule`, vector units). Prefill runs the chunked form over chunks of
    /// c = min(T, [`DELTA_RULE_CHUNK`]) tokens: per token 6·d_k·d_v (the state's product with q and with
    /// k, and its update by kᵀv) + c·(6·d_k + 4·d_v) (the chunk's kkᵀ and qkᵀ, its WY transform of k and v,
    /// and the within-chunk output), on the matrix units; the state is read and written once, and each
    /// chunk's state written and read once at 16 bits. Inputs: q and k (2·key_heads·d_k), v
    /// (value_heads·d_v) and the gates α, β (value_heads each) per token; output value_heads·d_v per token.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn gated_delta_rule(
        shape: &LinearAttentionShape,
        state: Precision,
        hidden: Precision,
    ) -> Result<Operator, Error> {
        shape.check()?;
        let [b, t, dk, dv, nv] = [
            shape.batch,
            shape.tokens,
            shape.key_head_dim,
            shape.value_head_dim,
            shape.value_heads,
        ]
        .map(|d| d as f64);
        let rows = b * t * nv;
        let inputs = b * t * (shape.channels() + 2.0 * nv);
        let output = b * t * nv * dv;
        let state_bytes = 2.0 * state.tensor_bytes(b * shape.state_elements());
        let precisions = OperandPrecisions {
            weight: state,
            activation: hidden,
            output: hidden,
        };
        if shape.tokens == 1 {
            return Ok(linear_op(
                ("recurrent_delta_rule", shape, true, OpKind::Elementwise),
                precisions,
                7.0 * rows * dk * dv,
                (
                    hidden.tensor_bytes(inputs),
                    state_bytes,
                    hidden.tensor_bytes(output),
                ),
            ));
        }
        let c = t.min(DELTA_RULE_CHUNK as f64);
        let chunks = b * (t / DELTA_RULE_CHUNK as f64).ceil();
        let chunk_states = 2.0 * Precision::Bf16.tensor_bytes(chunks * shape.state_elements());
        Ok(linear_op(
            ("chunked_delta_rule", shape, true, OpKind::Attention),
            precisions,
            rows * (6.0 * dk * dv + c * (6.0 * dk + 4.0 * dv)),
            (
                hidden.tensor_bytes(inputs),
                state_bytes + chunk_states,
                hidden.tensor_bytes(output),
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One GPU's part of a Qwen3.5-397B-A17B layer on 8 GPUs: 2 key heads, 8 value heads of 128.
    const QWEN_TP8: LinearAttentionShape = LinearAttentionShape {
        batch: 1,
        tokens: 1,
        key_heads: 2,
        value_heads: 8,
        key_head_dim: 128,
        value_head_dim: 128,
        conv_kernel: 4,
    };

    #[test]
    fn decode_reads_and_writes_the_whole_state() {
        // 8 · 128 · 128 FP32 = 524,288 B, read and written: 1,048,576 B; 7 · 8 · 128² = 917,504 FLOPs.
        let op = Operator::gated_delta_rule(&QWEN_TP8, Precision::Fp32, Precision::Bf16).unwrap();
        assert_eq!((op.kv_bytes, op.flops), (1_048_576.0, 917_504.0));
        // Inputs q, k (2 · 2 · 128), v (8 · 128), α, β (2 · 8): 1552 BF16 values; output 1024.
        assert_eq!((op.activation_bytes, op.output_bytes), (3104.0, 2048.0));
        assert_eq!(op.kind, OpKind::Elementwise);
        // The convolution's window: (2 · 256 + 1024) channels · 3 taps · 2 B, read and written.
        let conv = Operator::causal_conv(&QWEN_TP8, Precision::Bf16, Precision::Bf16).unwrap();
        assert_eq!(conv.kv_bytes, 2.0 * 1536.0 * 3.0 * 2.0);
    }

    #[test]
    fn prefill_runs_the_chunked_rule_proportional_to_tokens() {
        let prefill = |tokens| LinearAttentionShape { tokens, ..QWEN_TP8 };
        let op =
            |tokens| Operator::gated_delta_rule(&prefill(tokens), Precision::Fp32, Precision::Bf16).unwrap();
        // 4096 tokens, chunks of 64: per token and value head 6 · 128² + 64 · (6 · 128 + 4 · 128) = 180,224.
        let long = op(4096);
        assert_eq!(long.flops, 4096.0 * 8.0 * 180_224.0);
        assert_eq!(long.kind, OpKind::Attention);
        // The state once (1,048,576 B) and 64 chunk states written and read in BF16: 64 · 131,072 · 2 · 2 B.
        assert_eq!(long.kv_bytes, 1_048_576.0 + 64.0 * 131_072.0 * 4.0);
        // FLOPs grow with the tokens, not their square.
        assert_eq!(op(8192).flops, 2.0 * long.flops);
    }
}
