//! GEMM kernel families and activation-quantization kernels: which kind of tuned kernel a linear layer runs
//! given its operand formats ([`GemmFamily`]), and which kernels quantize its input at run time
//! ([`QuantizeKernel`], [`ActivationScale`]).
//!
//! A compute path ([`ComputePath`]) says which matrix-unit rate a GEMM runs at; the family says which scaling
//! recipe it uses, which is what decides how close tuned kernels come to that rate (FP8 per-tensor and FP8
//! 128×128 block-scaled GEMMs share the FP8 path but not their measured fractions; docs/validation/
//! low-precision.md).

use std::fmt;

use super::{ComputePath, Precision};

/// The kind of GEMM kernel a linear layer runs, by the scaling recipe of its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum GemmFamily {
    /// Unscaled operands of one format: BF16/FP16, and FP32, TF32, FP64, FP6, INT4 or MXINT8 where a device
    /// runs them; takes its compute path's own fraction.
    Plain,
    /// FP8 with one scale per tensor (or per row/channel: one scale per output, applied in the epilogue).
    Fp8Tensor,
    /// FP8 with FP32 scales per 128×128 weight block and per 1×128 activation group (DeepSeek-V3).
    Fp8Block,
    /// OCP MXFP8: E8M0 scales per 32 elements on both operands.
    Mxfp8,
    /// NVIDIA NVFP4 on both operands (W4A4).
    Nvfp4,
    /// OCP MXFP4 on both operands (W4A4).
    Mxfp4,
    /// INT8 weights and activations (W8A8).
    Int8,
    /// Mixed-input kernels: weights narrower than the activations, widened in registers before the multiply
    /// (W4A16, W8A16, W4A8: Marlin, Machete, CUTLASS mixed-input).
    WeightOnly,
}

impl GemmFamily {
    /// Every family, in display order.
    pub const ALL: [GemmFamily; 8] = [
        GemmFamily::Plain,
        GemmFamily::Fp8Tensor,
        GemmFamily::Fp8Block,
        GemmFamily::Mxfp8,
        GemmFamily::Nvfp4,
        GemmFamily::Mxfp4,
        GemmFamily::Int8,
        GemmFamily::WeightOnly,
    ];

    /// The key of `core/data/hardware-sources.toml` (`measured_gemm` entries), e.g. `fp8_block`.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            GemmFamily::Plain => "plain",
            GemmFamily::Fp8Tensor => "fp8_tensor",
            GemmFamily::Fp8Block => "fp8_block",
            GemmFamily::Mxfp8 => "mxfp8",
            GemmFamily::Nvfp4 => "nvfp4",
            GemmFamily::Mxfp4 => "mxfp4",
            GemmFamily::Int8 => "int8",
            GemmFamily::WeightOnly => "weight_only",
        }
    }

    /// The display name, e.g. `FP8 block-scaled`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            GemmFamily::Plain => "plain",
            GemmFamily::Fp8Tensor => "FP8 per-tensor",
            GemmFamily::Fp8Block => "FP8 block-scaled",
            GemmFamily::Mxfp8 => "MXFP8",
            GemmFamily::Nvfp4 => "NVFP4",
            GemmFamily::Mxfp4 => "MXFP4",
            GemmFamily::Int8 => "INT8 W8A8",
            GemmFamily::WeightOnly => "weight-only",
        }
    }

    /// The family of the key [`GemmFamily::key`] gives, if any.
    #[must_use]
    pub fn from_key(key: &str) -> Option<GemmFamily> {
        GemmFamily::ALL.into_iter().find(|f| f.key() == key)
    }

    /// The family of a GEMM whose weights are in `weight` and whose activations (the compute precision) are
    /// in `activation`: weight-only when the weight elements are narrower than the activation elements,
    /// otherwise by the activation format.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{GemmFamily, Precision};
    /// assert_eq!(GemmFamily::of(Precision::Bf16, Precision::Bf16), GemmFamily::Plain);
    /// assert_eq!(GemmFamily::of(Precision::Fp8Block128, Precision::Fp8Group128), GemmFamily::Fp8Block);
    /// assert_eq!(GemmFamily::of(Precision::Int4G128Zp, Precision::Fp16), GemmFamily::WeightOnly);
    /// ```
    #[must_use]
    pub const fn of(weight: Precision, activation: Precision) -> GemmFamily {
        if weight.element_bits() < activation.element_bits() {
            return GemmFamily::WeightOnly;
        }
        match activation {
            Precision::Fp8E4M3 | Precision::Fp8E5M2 => GemmFamily::Fp8Tensor,
            Precision::Fp8Group128 | Precision::Fp8Block128 => GemmFamily::Fp8Block,
            Precision::Mxfp8E4M3 | Precision::Mxfp8E5M2 => GemmFamily::Mxfp8,
            Precision::Nvfp4 => GemmFamily::Nvfp4,
            Precision::Mxfp4 => GemmFamily::Mxfp4,
            Precision::Int8 => GemmFamily::Int8,
            _ => GemmFamily::Plain,
        }
    }

    /// The compute path the family's kernels run on, for the families bound to one (`None` for plain and
    /// weight-only GEMMs, which run on their activations' path).
    #[must_use]
    pub const fn path(self) -> Option<ComputePath> {
        match self {
            GemmFamily::Fp8Tensor | GemmFamily::Fp8Block | GemmFamily::Mxfp8 => Some(ComputePath::Fp8),
            GemmFamily::Nvfp4 | GemmFamily::Mxfp4 => Some(ComputePath::Fp4),
            GemmFamily::Int8 => Some(ComputePath::Int8),
            GemmFamily::Plain | GemmFamily::WeightOnly => None,
        }
    }
}

impl fmt::Display for GemmFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the scale of a linear layer's FP8 or INT8 input is found at run time. Block formats (FP8 1×128
/// groups, NVFP4, MX) compute their scales inside their one quantization kernel, whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ActivationScale {
    /// One scale per tensor, measured on every call (vLLM's `fp8` method with `activation_scheme: dynamic`,
    /// compressed-tensors `strategy: tensor, dynamic: true`): an absolute-maximum reduction, then the
    /// quantization.
    #[default]
    DynamicPerTensor,
    /// One scale per tensor, calibrated ahead of time (ModelOpt FP8, compressed-tensors `dynamic: false`):
    /// the quantization alone.
    StaticPerTensor,
    /// One scale per token, measured on every call (compressed-tensors `strategy: token`, SmoothQuant W8A8):
    /// one kernel that reduces and quantizes each row.
    DynamicPerToken,
}

impl ActivationScale {
    /// `dynamic per-tensor`, `static per-tensor` or `dynamic per-token`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ActivationScale::DynamicPerTensor => "dynamic per-tensor",
            ActivationScale::StaticPerTensor => "static per-tensor",
            ActivationScale::DynamicPerToken => "dynamic per-token",
        }
    }
}

/// One kernel engines launch to quantize a linear layer's input (vLLM `csrc/quantization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum QuantizeKernel {
    /// The absolute-maximum reduction of a dynamic per-tensor scale (vLLM `segmented_max_reduction`).
    AbsMax,
    /// Elementwise quantization with a known per-tensor scale (vLLM `scaled_fp8_quant_kernel`, static or after
    /// [`QuantizeKernel::AbsMax`]).
    PerTensor,
    /// Per-row quantization: each token (or 1×128 group of it) reduced, scaled and quantized in one kernel
    /// (vLLM `dynamic_per_token_scaled_fp8_quant`, `per_token_group_quant_fp8`, `dynamic_scaled_int8_quant`).
    PerRow,
    /// Block-scaled FP4/MX quantization: scales of 16 or 32 elements computed in registers (vLLM
    /// `scaled_fp4_quant`).
    Block,
}

impl QuantizeKernel {
    /// Every kernel, in display order.
    pub const ALL: [QuantizeKernel; 4] = [
        QuantizeKernel::AbsMax,
        QuantizeKernel::PerTensor,
        QuantizeKernel::PerRow,
        QuantizeKernel::Block,
    ];

    /// The display name, e.g. `per-tensor quantize`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            QuantizeKernel::AbsMax => "absolute-maximum reduction",
            QuantizeKernel::PerTensor => "per-tensor quantize",
            QuantizeKernel::PerRow => "per-row quantize",
            QuantizeKernel::Block => "block quantize",
        }
    }

    /// The kernels that quantize a linear layer's input to `to` under `scale`, in launch order: a block
    /// format one block kernel (or, for FP8 1×128 groups, one per-row kernel); FP8 and INT8 two kernels for a
    /// dynamic per-tensor scale, one otherwise.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{ActivationScale, Precision, QuantizeKernel};
    /// // vLLM's dynamic per-tensor FP8: an absolute-maximum reduction, then the quantization.
    /// assert_eq!(
    ///     QuantizeKernel::for_input(Precision::Fp8E4M3, ActivationScale::DynamicPerTensor),
    ///     [QuantizeKernel::AbsMax, QuantizeKernel::PerTensor]
    /// );
    /// assert_eq!(
    ///     QuantizeKernel::for_input(Precision::Nvfp4, ActivationScale::DynamicPerTensor),
    ///     [QuantizeKernel::Block]
    /// );
    /// ```
    #[must_use]
    pub const fn for_input(to: Precision, scale: ActivationScale) -> &'static [QuantizeKernel] {
        match to {
            Precision::Fp8Group128 => &[QuantizeKernel::PerRow],
            Precision::Nvfp4
            | Precision::Mxfp4
            | Precision::Mxfp6E3M2
            | Precision::Mxfp6E2M3
            | Precision::Mxfp8E4M3
            | Precision::Mxfp8E5M2
            | Precision::Mxint8 => &[QuantizeKernel::Block],
            _ => match scale {
                ActivationScale::DynamicPerTensor => &[QuantizeKernel::AbsMax, QuantizeKernel::PerTensor],
                ActivationScale::StaticPerTensor => &[QuantizeKernel::PerTensor],
                ActivationScale::DynamicPerToken => &[QuantizeKernel::PerRow],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_follow_the_operand_formats() {
        use Precision as P;
        for (weight, activation, family) in [
            (P::Bf16, P::Bf16, GemmFamily::Plain),
            (P::Fp32, P::Fp32, GemmFamily::Plain),
            (P::Fp8E4M3, P::Fp8E4M3, GemmFamily::Fp8Tensor),
            (P::Fp8Block128, P::Fp8Group128, GemmFamily::Fp8Block),
            (P::Mxfp8E4M3, P::Mxfp8E4M3, GemmFamily::Mxfp8),
            (P::Nvfp4, P::Nvfp4, GemmFamily::Nvfp4),
            (P::Mxfp4, P::Mxfp4, GemmFamily::Mxfp4),
            (P::Int8, P::Int8, GemmFamily::Int8),
            (P::Mxfp6E3M2, P::Mxfp6E3M2, GemmFamily::Plain),
            // Narrower weight elements: a mixed-input kernel, whatever the activations.
            (P::Int4G128Zp, P::Fp16, GemmFamily::WeightOnly),
            (P::Mxfp4, P::Bf16, GemmFamily::WeightOnly),
            (P::Fp8E4M3, P::Fp16, GemmFamily::WeightOnly),
            (P::Nvfp4, P::Fp8E4M3, GemmFamily::WeightOnly),
        ] {
            assert_eq!(
                GemmFamily::of(weight, activation),
                family,
                "{weight} × {activation}"
            );
        }
        for f in GemmFamily::ALL {
            assert_eq!(GemmFamily::from_key(f.key()), Some(f));
        }
        assert_eq!(GemmFamily::from_key("fp9"), None);
    }

    #[test]
    fn quantization_kernels_follow_the_scale() {
        use QuantizeKernel as Q;
        assert_eq!(
            QuantizeKernel::for_input(Precision::Fp8E4M3, ActivationScale::StaticPerTensor),
            [Q::PerTensor]
        );
        assert_eq!(
            QuantizeKernel::for_input(Precision::Int8, ActivationScale::DynamicPerToken),
            [Q::PerRow]
        );
        // 1×128 groups are rows: one kernel, whatever the scale mode says.
        assert_eq!(
            QuantizeKernel::for_input(Precision::Fp8Group128, ActivationScale::DynamicPerTensor),
            [Q::PerRow]
        );
        assert_eq!(
            QuantizeKernel::for_input(Precision::Mxfp8E4M3, ActivationScale::StaticPerTensor),
            [Q::Block]
        );
    }
}
