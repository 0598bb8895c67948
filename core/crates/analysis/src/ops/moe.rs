//! Mixture-of-experts FFN: router, top-k routed experts as batched GEMMs, and their activation.
//!
//! Routing is assumed uniform: with T tokens each picking k of E experts, the expected number of distinct
//! experts hit is E·(1 − (1 − k/E)^T), and each active expert processes T·k / active tokens. Only active
//! experts' weights are read.

use super::{Activation, GemmShape, OpKind, OperandPrecisions, Operator, check_dims};
use roofline_base::Error;

/// The routed-expert part of one MoE layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MoeShape {
    /// Tokens entering the layer (batch · tokens per sequence).
    pub tokens: u64,
    /// Routed experts.
    pub experts: u64,
    /// Experts each token is routed to.
    pub top_k: u64,
    /// Model hidden size.
    pub hidden: u64,
    /// Intermediate size of one expert.
    pub expert_ffn: u64,
    /// Gated experts (gate and up projections, SiLU·mul) or a plain up projection with GELU.
    pub gated: bool,
}

impl MoeShape {
    /// Expected distinct experts that receive at least one token: E·(1 − (1 − k/E)^T).
    #[must_use]
    pub fn active_experts(&self) -> f64 {
        let (e, k) = (self.experts as f64, self.top_k as f64);
        e * (1.0 - (1.0 - k / e).powf(self.tokens as f64))
    }
}

impl Operator {
    /// The operators of a MoE layer's routed experts: `router` (T×E×H GEMM in `router`'s precisions, the
    /// hidden precision unless a checkpoint quantizes it), `expert_gate_up` and `expert_down` (batched GEMMs
    /// over the active experts in `precisions`) and the activation between.
    ///
    /// FLOPs: router 2·T·E·H; gate/up 2·T·k·(2)F·H; down 2·T·k·H·F. Weight bytes: active experts' matrices
    /// only. Activation and output bytes: the T·k routed rows.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension or `top_k > experts`.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::{MoeShape, Operator};
    /// // Mixtral-8x7B decode, one token: 2 of 8 experts are read.
    /// let shape = MoeShape { tokens: 1, experts: 8, top_k: 2, hidden: 4096, expert_ffn: 14_336, gated: true };
    /// let ops = Operator::moe_experts(&shape, Precision::Bf16.into(), Precision::Bf16.into()).unwrap();
    /// assert_eq!(ops[1].weight_bytes, 2.0 * 2.0 * (2.0 * 14_336.0 * 4096.0));
    /// ```
    pub fn moe_experts(
        shape: &MoeShape,
        precisions: OperandPrecisions,
        router: OperandPrecisions,
    ) -> Result<Vec<Operator>, Error> {
        check_dims(&[
            ("tokens", shape.tokens),
            ("experts", shape.experts),
            ("top_k", shape.top_k),
            ("hidden", shape.hidden),
            ("expert_ffn", shape.expert_ffn),
        ])?;
        if shape.top_k > shape.experts {
            return Err(Error::InvalidInput(format!(
                "top_k ({}) must not exceed experts ({})",
                shape.top_k, shape.experts
            )));
        }
        let router = Operator::gemm(shape.tokens, shape.experts, shape.hidden, router)?.named("router");
        let active = shape.active_experts();
        let routed_rows = (shape.tokens * shape.top_k) as f64;
        // Tile accounting needs whole experts and rows: round the expected count, spread the rows evenly.
        let tile_batch = (active.round() as u64).clamp(1, shape.experts);
        let tile_rows = (routed_rows / tile_batch as f64).ceil() as u64;
        let up_width = if shape.gated {
            2 * shape.expert_ffn
        } else {
            shape.expert_ffn
        };
        let expert_gemm = |name: &str, n: u64, k: u64| {
            let (n_f, k_f) = (n as f64, k as f64);
            Operator {
                name: name.to_owned(),
                kind: OpKind::BatchedGemm,
                shape: format!("{active:.1}x({:.1}x{n}x{k})", routed_rows / active),
                precisions,
                flops: 2.0 * routed_rows * n_f * k_f,
                weight_bytes: active * precisions.weight.tensor_bytes(n_f * k_f),
                activation_bytes: precisions.activation.tensor_bytes(routed_rows * k_f),
                kv_bytes: 0.0,
                output_bytes: precisions.output.tensor_bytes(routed_rows * n_f),
                gemm: Some(GemmShape {
                    batch: tile_batch,
                    m: tile_rows,
                    n,
                    k,
                }),
                collective: None,
                quantize: None,
                kernel: None,
            }
        };
        let activation = if shape.gated {
            Activation::SiluMul
        } else {
            Activation::Gelu
        };
        Ok(vec![
            router,
            expert_gemm("expert_gate_up", up_width, shape.hidden),
            Operator::activation(
                activation,
                shape.tokens * shape.top_k,
                shape.expert_ffn,
                precisions.output,
            )?
            .named("expert_act"),
            expert_gemm("expert_down", shape.hidden, shape.expert_ffn),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_base::precision::Precision;

    #[test]
    fn active_experts_grow_from_top_k_to_all() {
        let shape = |tokens| MoeShape {
            tokens,
            experts: 256,
            top_k: 8,
            hidden: 7168,
            expert_ffn: 2048,
            gated: true,
        };
        assert!((shape(1).active_experts() - 8.0).abs() < 1e-9);
        // 64 tokens: 256·(1 − (248/256)^64) = 223.0 experts.
        assert!((shape(64).active_experts() - 256.0 * (1.0 - (248.0f64 / 256.0).powi(64))).abs() < 1e-9);
        assert!((shape(100_000).active_experts() - 256.0).abs() < 1e-9);
    }

    #[test]
    fn expert_flops_follow_routed_tokens_not_active_experts() {
        let shape = MoeShape {
            tokens: 16,
            experts: 8,
            top_k: 2,
            hidden: 4096,
            expert_ffn: 14_336,
            gated: true,
        };
        let ops = Operator::moe_experts(&shape, Precision::Bf16.into(), Precision::Bf16.into()).unwrap();
        let names: Vec<_> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["router", "expert_gate_up", "expert_act", "expert_down"]);
        assert_eq!(ops[0].flops, 2.0 * 16.0 * 8.0 * 4096.0);
        assert_eq!(ops[1].flops, 2.0 * 32.0 * 2.0 * 14_336.0 * 4096.0);
        assert_eq!(ops[3].flops, 2.0 * 32.0 * 4096.0 * 14_336.0);
        assert!(
            Operator::moe_experts(
                &MoeShape { top_k: 9, ..shape },
                Precision::Bf16.into(),
                Precision::Bf16.into()
            )
            .is_err()
        );
    }
}
