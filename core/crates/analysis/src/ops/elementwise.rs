//! Vector-unit operators: norms, activations, residual adds, RoPE, embedding lookups and KV-cache copies.
//!
//! FLOPs per element are the usual operation counts (documented per constructor); these operators are
//! memory-bound on every catalogued device, so the counts matter only for the arithmetic intensity.

use super::{KernelShape, OpKind, OperandPrecisions, Operator, RowKind, check_dims};
use roofline_base::Error;
use roofline_base::precision::{ActivationScale, Precision, QuantizeKernel};

/// Which normalization a model uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Norm {
    /// RMSNorm: x / rms(x) · γ, 4 FLOPs per element (square, sum, scale, γ).
    RmsNorm,
    /// LayerNorm: (x − mean) / std · γ + β, 7 FLOPs per element.
    LayerNorm,
}

/// Which FFN activation a model uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Activation {
    /// Gated SiLU (SwiGLU): silu(gate) · up, 5 FLOPs per output element; reads two inputs.
    SiluMul,
    /// GELU (tanh approximation), 8 FLOPs per element; reads one input.
    Gelu,
}

/// A vector-unit operator over `rows` × `width` elements of `precision` doing `kind` to each row:
/// `flop_per_element` FLOPs, `inputs` tensors read and one written, plus `extra_read_bytes` (norm weights).
fn vector_op(
    name: &str,
    (rows, width, kind): (u64, u64, RowKind),
    precision: Precision,
    flop_per_element: f64,
    inputs: f64,
    extra_read_bytes: f64,
) -> Operator {
    let elements = rows as f64 * width as f64;
    Operator {
        name: name.to_owned(),
        kind: OpKind::Elementwise,
        shape: format!("{elements}"),
        precisions: precision.into(),
        flops: flop_per_element * elements,
        weight_bytes: extra_read_bytes,
        activation_bytes: inputs * precision.tensor_bytes(elements),
        kv_bytes: 0.0,
        output_bytes: precision.tensor_bytes(elements),
        gemm: None,
        collective: None,
        quantize: None,
        kernel: Some(KernelShape::Rows { rows, width, kind }),
    }
}

/// One activation-quantization kernel over `tokens` rows of `width` elements from `from` to `to`.
fn quantize_kernel(
    tokens: u64,
    width: u64,
    from: Precision,
    to: Precision,
    kernel: QuantizeKernel,
) -> Result<Operator, Error> {
    check_dims(&[("tokens", tokens), ("width", width)])?;
    let elements = (tokens * width) as f64;
    let (name, flops, output_bytes, kind, output) = match kernel {
        QuantizeKernel::AbsMax => ("amax", elements, 4.0, RowKind::AbsMax, Precision::Fp32),
        _ => (
            "quantize",
            2.0 * elements,
            to.tensor_bytes(elements),
            RowKind::Quantize,
            to,
        ),
    };
    Ok(Operator {
        name: name.to_owned(),
        kind: OpKind::Elementwise,
        shape: format!("{tokens}x{width}"),
        // Reads `from`, writes `to` (or the FP32 scale); `weight` names the target format, as the kernel's.
        precisions: OperandPrecisions {
            weight: to,
            activation: from,
            output,
        },
        flops,
        weight_bytes: 0.0,
        activation_bytes: from.tensor_bytes(elements),
        kv_bytes: 0.0,
        output_bytes,
        gemm: None,
        collective: None,
        quantize: Some(kernel),
        kernel: Some(KernelShape::Rows {
            rows: tokens,
            width,
            kind,
        }),
    })
}

impl Operator {
    /// Normalization of `tokens` rows of `hidden` elements in `precision`.
    ///
    /// FLOPs = 4·T·H (RMSNorm) or 7·T·H (LayerNorm). Bytes = read x + write y (T·H each) + γ (and β) (H each).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::{Norm, Operator};
    /// let op = Operator::norm(Norm::RmsNorm, 1, 4096, Precision::Bf16).unwrap();
    /// assert_eq!((op.flops, op.bytes()), (4.0 * 4096.0, 3.0 * 2.0 * 4096.0));
    /// ```
    pub fn norm(norm: Norm, tokens: u64, hidden: u64, precision: Precision) -> Result<Operator, Error> {
        check_dims(&[("tokens", tokens), ("hidden", hidden)])?;
        let (name, flop_per_element, params) = match norm {
            Norm::RmsNorm => ("rms_norm", 4.0, 1.0),
            Norm::LayerNorm => ("layer_norm", 7.0, 2.0),
        };
        Ok(vector_op(
            name,
            (tokens, hidden, norm.into()),
            precision,
            flop_per_element,
            1.0,
            params * precision.tensor_bytes(hidden as f64),
        ))
    }

    /// FFN activation over `tokens` rows of `ffn_dim` outputs in `precision`.
    ///
    /// SiLU·mul: FLOPs = 5·T·F, bytes = read gate and up + write (3·T·F). GELU: FLOPs = 8·T·F, bytes = 2·T·F.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn activation(
        activation: Activation,
        tokens: u64,
        ffn_dim: u64,
        precision: Precision,
    ) -> Result<Operator, Error> {
        check_dims(&[("tokens", tokens), ("ffn_dim", ffn_dim)])?;
        let rows = (tokens, ffn_dim, activation.into());
        Ok(match activation {
            Activation::SiluMul => vector_op("silu_mul", rows, precision, 5.0, 2.0, 0.0),
            Activation::Gelu => vector_op("gelu", rows, precision, 8.0, 1.0, 0.0),
        })
    }

    /// Residual add `x + f(x)` over `tokens` rows of `hidden`: FLOPs = T·H, bytes = 3·T·H elements.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn residual_add(tokens: u64, hidden: u64, precision: Precision) -> Result<Operator, Error> {
        check_dims(&[("tokens", tokens), ("hidden", hidden)])?;
        Ok(vector_op(
            "residual_add",
            (tokens, hidden, RowKind::ResidualAdd),
            precision,
            1.0,
            2.0,
            0.0,
        ))
    }

    /// Run-time quantization of `tokens` rows of `width` linear-layer inputs from `from` (the hidden format)
    /// to `to` (FP8, INT8 or a block-scaled format) with a known or in-kernel scale: the kernel that writes the
    /// quantized tensor ([`QuantizeKernel::for_input`] with a static scale).
    ///
    /// FLOPs = 2·T·W (scale and round). Bytes = read T·W in `from` + write T·W in `to` with its block scales
    /// ([`Precision::tensor_bytes`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn quantize_activations(
        tokens: u64,
        width: u64,
        from: Precision,
        to: Precision,
    ) -> Result<Operator, Error> {
        let kernels = QuantizeKernel::for_input(to, ActivationScale::StaticPerTensor);
        quantize_kernel(tokens, width, from, to, kernels[kernels.len() - 1])
    }

    /// The kernels an engine launches to quantize `tokens` rows of `width` linear-layer inputs from `from` to
    /// `to` under `scale`, in launch order ([`QuantizeKernel::for_input`]): for a dynamic per-tensor FP8 or
    /// INT8 scale an absolute-maximum reduction (`amax`: reads T·W in `from`, T·W FLOPs, writes one FP32
    /// scale) and the quantization; otherwise the one quantization kernel (per tensor, per row or per block).
    /// Source of the two-kernel sequence: vLLM `csrc/quantization/w8a8/fp8/common.cu`
    /// (`dynamic_scaled_fp8_quant`: `segmented_max_reduction`, then `scaled_fp8_quant_kernel`).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{ActivationScale, Precision};
    /// use roofline_analysis::Operator;
    /// let ops = Operator::activation_quantization(1, 4096, Precision::Bf16, Precision::Fp8E4M3,
    ///     ActivationScale::DynamicPerTensor).unwrap();
    /// assert_eq!(ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["amax", "quantize"]);
    /// // The reduction reads the BF16 row and writes one FP32 scale: 8192 + 4 bytes.
    /// assert_eq!(ops[0].bytes(), 8196.0);
    /// ```
    pub fn activation_quantization(
        tokens: u64,
        width: u64,
        from: Precision,
        to: Precision,
        scale: ActivationScale,
    ) -> Result<Vec<Operator>, Error> {
        QuantizeKernel::for_input(to, scale)
            .iter()
            .map(|&kernel| quantize_kernel(tokens, width, from, to, kernel))
            .collect()
    }

    /// Rotary position embedding of Q and K for `tokens` tokens: (heads + kv_heads)·head_dim elements per
    /// token, 3 FLOPs each (x·cos ± y·sin); each element read and written once (cos/sin tables stay cached).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn rope(
        tokens: u64,
        heads: u64,
        kv_heads: u64,
        head_dim: u64,
        precision: Precision,
    ) -> Result<Operator, Error> {
        check_dims(&[
            ("tokens", tokens),
            ("heads", heads),
            ("kv_heads", kv_heads),
            ("head_dim", head_dim),
        ])?;
        // One row per token and rotated head.
        let rows = tokens * (heads + kv_heads);
        Ok(vector_op(
            "rope",
            (rows, head_dim, RowKind::Rope),
            precision,
            3.0,
            1.0,
            0.0,
        ))
    }

    /// Embedding lookup of `tokens` rows of `hidden` from a table in `table` precision, written in
    /// `output`: no FLOPs; bytes = the gathered rows (T·H at the table precision) + the output (T·H).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn embedding(
        tokens: u64,
        hidden: u64,
        table: Precision,
        output: Precision,
    ) -> Result<Operator, Error> {
        check_dims(&[("tokens", tokens), ("hidden", hidden)])?;
        let elements = (tokens * hidden) as f64;
        Ok(Operator {
            name: "embedding".to_owned(),
            kind: OpKind::Embedding,
            shape: format!("{tokens}x{hidden}"),
            precisions: OperandPrecisions {
                weight: table,
                activation: output,
                output,
            },
            flops: 0.0,
            weight_bytes: tokens as f64 * table.tensor_bytes(hidden as f64),
            activation_bytes: 0.0,
            kv_bytes: 0.0,
            output_bytes: output.tensor_bytes(elements),
            gemm: None,
            collective: None,
            quantize: None,
            kernel: Some(KernelShape::Gather {
                rows: tokens,
                width: hidden,
            }),
        })
    }

    /// KV-cache write of `tokens` new tokens, `elements_per_token` cached elements each (2·kv_heads·head_dim
    /// for separate K and V): reads them at `hidden` precision and stores them at `kv_cache` precision.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::Operator;
    /// // One Llama-3.1-8B token into an FP8 cache: 2·8·128 elements read at FP16, stored at 1 B.
    /// let op = Operator::kv_cache_write(1, 2048, Precision::Fp16, Precision::Fp8E4M3).unwrap();
    /// assert_eq!((op.activation_bytes, op.kv_bytes), (4096.0, 2048.0));
    /// ```
    pub fn kv_cache_write(
        tokens: u64,
        elements_per_token: u64,
        hidden: Precision,
        kv_cache: Precision,
    ) -> Result<Operator, Error> {
        check_dims(&[("tokens", tokens), ("elements_per_token", elements_per_token)])?;
        let mut op = Operator::kv_cache_read(tokens, elements_per_token, kv_cache)?;
        op.name = "kv_cache_write".to_owned();
        op.precisions = OperandPrecisions {
            weight: kv_cache,
            activation: hidden,
            output: kv_cache,
        };
        op.activation_bytes = hidden.tensor_bytes((tokens * elements_per_token) as f64);
        op.kernel = Some(KernelShape::KvWrite {
            tokens,
            elements: elements_per_token,
        });
        Ok(op)
    }

    /// KV-cache read of `tokens` cached tokens, `elements_per_token` elements each, at `kv_cache` precision
    /// (a pure stream: no FLOPs). Attention operators include their own KV reads.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension.
    pub fn kv_cache_read(
        tokens: u64,
        elements_per_token: u64,
        kv_cache: Precision,
    ) -> Result<Operator, Error> {
        check_dims(&[("tokens", tokens), ("elements_per_token", elements_per_token)])?;
        Ok(Operator {
            name: "kv_cache_read".to_owned(),
            kind: OpKind::KvCache,
            shape: format!("{tokens}x{elements_per_token}"),
            precisions: kv_cache.into(),
            flops: 0.0,
            weight_bytes: 0.0,
            activation_bytes: 0.0,
            kv_bytes: tokens as f64 * kv_cache.tensor_bytes(elements_per_token as f64),
            output_bytes: 0.0,
            gemm: None,
            collective: None,
            quantize: None,
            kernel: Some(KernelShape::KvRead {
                tokens,
                elements: elements_per_token,
            }),
        })
    }
}

impl From<Norm> for RowKind {
    fn from(norm: Norm) -> Self {
        match norm {
            Norm::RmsNorm => RowKind::RmsNorm,
            Norm::LayerNorm => RowKind::LayerNorm,
        }
    }
}

impl From<Activation> for RowKind {
    fn from(activation: Activation) -> Self {
        match activation {
            Activation::SiluMul => RowKind::SiluMul,
            Activation::Gelu => RowKind::Gelu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(op: Operator, flops: f64, bytes: f64) {
        assert_eq!((op.flops, op.bytes()), (flops, bytes), "{}", op.name);
        assert!(!op.kind.uses_matrix_units(), "{}", op.name);
    }

    #[test]
    fn vector_operators_count_their_elements() {
        let fp16 = Precision::Fp16;
        // LayerNorm 2 tokens × 1024: 7·2048 FLOPs; x, y (2·2048·2 B) + γ, β (2·1024·2 B).
        check(
            Operator::norm(Norm::LayerNorm, 2, 1024, fp16).unwrap(),
            14_336.0,
            12_288.0,
        );
        // SiLU·mul 1 × 14336: 5·14336 FLOPs, 3·14336·2 B.
        check(
            Operator::activation(Activation::SiluMul, 1, 14_336, fp16).unwrap(),
            71_680.0,
            86_016.0,
        );
        check(
            Operator::activation(Activation::Gelu, 1, 100, fp16).unwrap(),
            800.0,
            400.0,
        );
        check(Operator::residual_add(4, 100, fp16).unwrap(), 400.0, 2400.0);
        // RoPE of Llama-3.1-8B Q and K: (32 + 8)·128 = 5120 elements.
        check(Operator::rope(1, 32, 8, 128, fp16).unwrap(), 15_360.0, 20_480.0);
        check(
            Operator::embedding(3, 4096, fp16, fp16).unwrap(),
            0.0,
            2.0 * 3.0 * 4096.0 * 2.0,
        );
        // One Llama-3.1-8B token per layer: 2·8·128 = 2048 elements; FP16 in, FP8 out.
        check(
            Operator::kv_cache_write(1, 2048, fp16, Precision::Fp8E4M3).unwrap(),
            0.0,
            4096.0 + 2048.0,
        );
        check(
            Operator::kv_cache_read(4096, 2048, Precision::Fp16).unwrap(),
            0.0,
            4096.0 * 4096.0,
        );
    }
}
