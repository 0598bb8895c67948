//! Format reference: element layout, range, representable levels and codebooks of every [`Precision`].
//!
//! Values follow docs/research/hardware.md §6: IEEE 754 for FP64/FP32/FP16, bfloat16, TF32, OCP FP8 (E4M3 is
//! the `FN` variant: no infinity, one NaN code per sign), OCP MX v1.0 (FP6 and FP4 have no infinity or NaN),
//! NVIDIA NVFP4, and QLoRA's NF4 (arXiv:2305.14314).

use super::{BlockScale, ComputePath, Precision};

/// How an element's bits encode a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Encoding {
    /// Sign, biased exponent and mantissa.
    Float,
    /// Two's-complement integer.
    Integer,
    /// An index into a fixed codebook (NF4).
    Codebook,
}

/// Bit layout of one element: sign, exponent and mantissa bits (integers: sign + magnitude bits, no exponent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ElementLayout {
    /// Sign bits (0 or 1).
    pub sign_bits: u32,
    /// Exponent bits.
    pub exponent_bits: u32,
    /// Mantissa bits (stored fraction bits; for integers, magnitude bits).
    pub mantissa_bits: u32,
}

/// Everything the format page lists about one number format.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FormatInfo {
    /// The format.
    pub precision: Precision,
    /// Canonical name, e.g. `NVFP4`.
    pub name: &'static str,
    /// One-line description of the layout and where it is specified.
    pub description: &'static str,
    /// How the element bits encode a value.
    pub encoding: Encoding,
    /// Element bit layout.
    pub layout: ElementLayout,
    /// Bits stored per element, scales excluded.
    pub element_bits: u32,
    /// Block scaling, where the format has one.
    pub block_scale: Option<BlockScale>,
    /// Format of the block scale, e.g. `E8M0`, `FP8 E4M3`, `FP16`.
    pub scale_format: Option<&'static str>,
    /// Bits per element with block scales amortized (per-tensor scale excluded).
    pub effective_bits: f64,
    /// Bytes per element with block scales amortized.
    pub bytes_per_element: f64,
    /// Largest finite element value before block scaling (NF4: 1, the codebook is normalized by absmax).
    pub max_finite: f64,
    /// Distinct finite values one element can take (±0 counted once).
    pub levels: u64,
    /// The element codebook, ascending, where the format is a small lookup table (E2M1, NF4, INT2).
    pub codebook: Option<&'static [f64]>,
    /// The matrix-unit path that takes this format as an operand.
    pub compute_path: ComputePath,
    /// Whether weights in this format are dequantized in software before the multiply.
    pub storage_only: bool,
}

/// FP4 E2M1 values (OCP MX v1.0 §5.3.3): ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
pub const E2M1_CODEBOOK: [f64; 15] = [
    -6.0, -4.0, -3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
];

/// NF4 values from QLoRA (Dettmers et al. 2023, Appendix E; bitsandbytes `NF4` table).
pub const NF4_CODEBOOK: [f64; 16] = [
    -1.0,
    -0.696_192_800_998_687_7,
    -0.525_073_051_452_636_7,
    -0.394_917_488_098_144_53,
    -0.284_441_381_692_886_35,
    -0.184_773_430_228_233_34,
    -0.091_050_036_251_544_95,
    0.0,
    0.079_580_299_556_255_34,
    0.160_930_201_411_247_25,
    0.246_112_301_945_686_34,
    0.337_915_241_718_292_24,
    0.440_709_829_330_444_34,
    0.562_617_003_917_694_1,
    0.722_956_836_223_602_3,
    1.0,
];

/// INT2 values (two's complement).
pub const INT2_CODEBOOK: [f64; 4] = [-2.0, -1.0, 0.0, 1.0];

/// Special values an FP layout reserves, which decide its largest finite value and its level count.
#[derive(Clone, Copy)]
enum Specials {
    /// IEEE style: the top exponent is reserved for infinity and NaN.
    Ieee,
    /// OCP E4M3FN: only the all-ones code (per sign) is NaN.
    NanOnly,
    /// OCP FP6/FP4: every code is finite.
    None,
}

/// An NF4 element: a 4-bit unsigned index into [`NF4_CODEBOOK`] (bitsandbytes `quantize_4bit`).
const NF4_INDEX: ElementLayout = ElementLayout {
    sign_bits: 0,
    exponent_bits: 0,
    mantissa_bits: 4,
};

const fn float(exponent_bits: u32, mantissa_bits: u32) -> ElementLayout {
    ElementLayout {
        sign_bits: 1,
        exponent_bits,
        mantissa_bits,
    }
}

/// Largest finite value and distinct finite values of a sign/exponent/mantissa layout.
fn float_range(layout: ElementLayout, specials: Specials) -> (f64, u64) {
    let (e, m) = (layout.exponent_bits, layout.mantissa_bits);
    let bias = (1i32 << (e - 1)) - 1;
    let top_exponent = (1i32 << e) - 1;
    let mantissa_codes = 1u64 << m;
    let (max_exponent, max_mantissa, finite_per_sign) = match specials {
        Specials::Ieee => (
            top_exponent - 1,
            mantissa_codes - 1,
            (top_exponent as u64) * mantissa_codes,
        ),
        Specials::NanOnly => (top_exponent, mantissa_codes - 2, (1u64 << (e + m)) - 1),
        Specials::None => (top_exponent, mantissa_codes - 1, 1u64 << (e + m)),
    };
    let max = (1.0 + max_mantissa as f64 / mantissa_codes as f64) * 2f64.powi(max_exponent - bias);
    (max, 2 * finite_per_sign - 1)
}

/// The format-page entry of `precision`.
///
/// # Examples
/// ```
/// use roofline_base::{format_info, Precision};
/// let nvfp4 = format_info(Precision::Nvfp4);
/// assert_eq!((nvfp4.effective_bits, nvfp4.max_finite, nvfp4.levels), (4.5, 6.0, 15));
/// assert_eq!(nvfp4.scale_format, Some("FP8 E4M3 per 16 + FP32 per tensor"));
/// ```
#[must_use]
pub fn format_info(precision: Precision) -> FormatInfo {
    let (description, encoding, layout, specials, scale_format, codebook) =
        unscaled_traits(precision).unwrap_or_else(|| scaled_traits(precision));
    let element_bits = precision.element_bits();
    let (max_finite, levels) = match encoding {
        Encoding::Float => float_range(layout, specials),
        Encoding::Integer => (f64::from((1u32 << (element_bits - 1)) - 1), 1u64 << element_bits),
        Encoding::Codebook => (1.0, 16),
    };
    FormatInfo {
        precision,
        name: precision.name(),
        description,
        encoding,
        layout,
        element_bits,
        block_scale: precision.block_scale(),
        scale_format,
        effective_bits: precision.effective_bits(),
        bytes_per_element: precision.effective_bytes(),
        max_finite,
        levels,
        codebook,
        compute_path: precision.compute_path(),
        storage_only: precision.is_storage_only(),
    }
}

/// What the format page says of a format: its description, encoding, element layout, special values,
/// scale format and codebook.
type Traits = (
    &'static str,
    Encoding,
    ElementLayout,
    Specials,
    Option<&'static str>,
    Option<&'static [f64]>,
);

/// The traits of the formats without a block or group scale (IEEE floats, FP8, INT8, INT4); `None` for the
/// others.
fn unscaled_traits(precision: Precision) -> Option<Traits> {
    use Precision as P;
    Some(match precision {
        P::Fp64 => (
            "IEEE 754 binary64",
            Encoding::Float,
            float(11, 52),
            Specials::Ieee,
            None,
            None,
        ),
        P::Fp32 => (
            "IEEE 754 binary32",
            Encoding::Float,
            float(8, 23),
            Specials::Ieee,
            None,
            None,
        ),
        P::Tf32 => (
            "TensorFloat-32: FP32 storage, 10-bit mantissa on the tensor path",
            Encoding::Float,
            float(8, 10),
            Specials::Ieee,
            None,
            None,
        ),
        P::Fp16 => (
            "IEEE 754 binary16",
            Encoding::Float,
            float(5, 10),
            Specials::Ieee,
            None,
            None,
        ),
        P::Bf16 => (
            "bfloat16",
            Encoding::Float,
            float(8, 7),
            Specials::Ieee,
            None,
            None,
        ),
        P::Fp8E4M3 => (
            "OCP FP8 E4M3 (FN: no infinity)",
            Encoding::Float,
            float(4, 3),
            Specials::NanOnly,
            None,
            None,
        ),
        P::Fp8E5M2 => (
            "OCP FP8 E5M2",
            Encoding::Float,
            float(5, 2),
            Specials::Ieee,
            None,
            None,
        ),
        P::Fp8Block128 => (
            "Block-scaled FP8 weights (DeepSeek-V3, Qwen3-FP8): E4M3, FP32 scale per 128×128 block",
            Encoding::Float,
            float(4, 3),
            Specials::NanOnly,
            Some("FP32 per 128×128 block"),
            None,
        ),
        P::Fp8Group128 => (
            "Group-scaled FP8 activations (DeepSeek-V3, Qwen3-FP8): E4M3, FP32 scale per 1×128 group",
            Encoding::Float,
            float(4, 3),
            Specials::NanOnly,
            Some("FP32 per 1×128 group"),
            None,
        ),
        P::Int8 => (
            "8-bit integer",
            Encoding::Integer,
            float(0, 7),
            Specials::None,
            None,
            None,
        ),
        P::Int4 => (
            "4-bit integer, no stored scale",
            Encoding::Integer,
            float(0, 3),
            Specials::None,
            None,
            None,
        ),
        _ => return None,
    })
}

/// The traits of the block- and group-scaled formats and the codebooks.
fn scaled_traits(precision: Precision) -> Traits {
    use Precision as P;
    match precision {
        P::Nvfp4 => (
            "NVIDIA NVFP4: E2M1, FP8 E4M3 scale per 16 elements, FP32 scale per tensor",
            Encoding::Float,
            float(2, 1),
            Specials::None,
            Some("FP8 E4M3 per 16 + FP32 per tensor"),
            Some(&E2M1_CODEBOOK),
        ),
        P::Mxfp4 => (
            "OCP MXFP4: E2M1, E8M0 scale per 32 elements",
            Encoding::Float,
            float(2, 1),
            Specials::None,
            Some("E8M0 per 32"),
            Some(&E2M1_CODEBOOK),
        ),
        P::Mxfp8E4M3 => (
            "OCP MXFP8: E4M3, E8M0 scale per 32 elements",
            Encoding::Float,
            float(4, 3),
            Specials::NanOnly,
            Some("E8M0 per 32"),
            None,
        ),
        P::Mxfp8E5M2 => (
            "OCP MXFP8: E5M2, E8M0 scale per 32 elements",
            Encoding::Float,
            float(5, 2),
            Specials::Ieee,
            Some("E8M0 per 32"),
            None,
        ),
        P::Mxfp6E3M2 => (
            "OCP MXFP6: E3M2, E8M0 scale per 32 elements",
            Encoding::Float,
            float(3, 2),
            Specials::None,
            Some("E8M0 per 32"),
            None,
        ),
        P::Mxfp6E2M3 => (
            "OCP MXFP6: E2M3, E8M0 scale per 32 elements",
            Encoding::Float,
            float(2, 3),
            Specials::None,
            Some("E8M0 per 32"),
            None,
        ),
        P::Mxint8 => (
            "OCP MXINT8: INT8, E8M0 scale per 32 elements",
            Encoding::Integer,
            float(0, 7),
            Specials::None,
            Some("E8M0 per 32"),
            None,
        ),
        P::Int4G128 => (
            "Group-wise INT4, symmetric: FP16 scale per 128 elements along K",
            Encoding::Integer,
            float(0, 3),
            Specials::None,
            Some("FP16 per 128"),
            None,
        ),
        P::Int4G128Zp => (
            "Group-wise INT4 (AWQ/GPTQ): FP16 scale and 4-bit zero point per 128 elements along K",
            Encoding::Integer,
            float(0, 3),
            Specials::None,
            Some("FP16 + 4-bit zero per 128"),
            None,
        ),
        P::Int4G32 => (
            "Group-wise INT4, symmetric (compressed-tensors pack-quantized): 16-bit scale per 32 elements along K",
            Encoding::Integer,
            float(0, 3),
            Specials::None,
            Some("BF16/FP16 per 32"),
            None,
        ),
        P::Nf4 => (
            "QLoRA NormalFloat4: 16-value codebook, FP32 absmax per 64 elements",
            Encoding::Codebook,
            NF4_INDEX,
            Specials::None,
            Some("FP32 absmax per 64"),
            Some(&NF4_CODEBOOK),
        ),
        P::Nf4Dq => (
            "NF4 with double quantization: 8-bit absmax per 64, FP32 per 256 blocks",
            Encoding::Codebook,
            NF4_INDEX,
            Specials::None,
            Some("8-bit FP absmax per 64 + FP32 per 256 blocks"),
            Some(&NF4_CODEBOOK),
        ),
        P::Int2 => (
            "2-bit integer",
            Encoding::Integer,
            float(0, 1),
            Specials::None,
            None,
            Some(&INT2_CODEBOOK),
        ),
        _ => unreachable!("{precision} has no block or group scale: unscaled_traits covers it"),
    }
}

/// The format-page entries of every precision, in [`Precision::ALL`] order.
///
/// # Examples
/// ```
/// let formats = roofline_base::format_catalog();
/// let nf4 = formats.iter().find(|f| f.name == "NF4").unwrap();
/// assert_eq!((nf4.effective_bits, nf4.codebook.unwrap().len()), (4.5, 16));
/// ```
#[must_use]
pub fn format_catalog() -> Vec<FormatInfo> {
    Precision::ALL.into_iter().map(format_info).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(p: Precision, max_finite: f64, levels: u64) {
        let info = format_info(p);
        assert_eq!(info.max_finite, max_finite, "{p} max");
        assert_eq!(info.levels, levels, "{p} levels");
    }

    #[test]
    fn ranges_and_levels_match_the_specifications() {
        // E4M3FN: 1.75·2^8 = 448; 2·(2^7 − 1) − 1 = 253 distinct finite values (one NaN per sign, ±0 merged).
        check(Precision::Fp8E4M3, 448.0, 253);
        // E5M2: 1.75·2^15 = 57,344; 2·(31·4) − 1 = 247.
        check(Precision::Fp8E5M2, 57_344.0, 247);
        check(Precision::Fp8Block128, 448.0, 253);
        check(Precision::Fp8Group128, 448.0, 253);
        // FP16: 65,504; 2·31·1024 − 1 = 63,487. BF16: 2·255·128 − 1 = 65,279.
        check(Precision::Fp16, 65_504.0, 63_487);
        check(Precision::Bf16, f64::from(half_max_bf16()), 65_279);
        check(Precision::Fp32, f64::from(f32::MAX), 2 * 255 * (1 << 23) - 1);
        check(Precision::Fp64, f64::MAX, 2 * 2047 * (1 << 52) - 1);
        // FP6 E3M2 1.75·2^4 = 28, E2M3 1.875·2^2 = 7.5; FP4 E2M1 1.5·2^2 = 6; each 2·2^5 − 1 or 2·2^3 − 1.
        check(Precision::Mxfp6E3M2, 28.0, 63);
        check(Precision::Mxfp6E2M3, 7.5, 63);
        check(Precision::Mxfp4, 6.0, 15);
        check(Precision::Nvfp4, 6.0, 15);
        check(Precision::Int8, 127.0, 256);
        check(Precision::Int4, 7.0, 16);
        check(Precision::Int2, 1.0, 4);
        check(Precision::Nf4, 1.0, 16);
    }

    fn half_max_bf16() -> f32 {
        // Largest finite bfloat16: 0x7F7F = (2 − 2^−7)·2^127.
        f32::from_bits(0x7F7F_0000)
    }

    #[test]
    fn codebooks_match_their_level_counts() {
        for info in format_catalog() {
            if let Some(codebook) = info.codebook {
                assert_eq!(codebook.len() as u64, info.levels, "{}", info.name);
                assert!(
                    codebook.windows(2).all(|w| w[0] < w[1]),
                    "{} is not ascending",
                    info.name
                );
                assert_eq!(codebook.last().copied(), Some(info.max_finite), "{}", info.name);
            }
        }
        assert_eq!(format_catalog().len(), Precision::ALL.len());
    }

    #[test]
    fn scale_formats_accompany_block_scales() {
        for info in format_catalog() {
            assert_eq!(
                info.block_scale.is_some(),
                info.scale_format.is_some(),
                "{}",
                info.name
            );
            assert!((info.bytes_per_element * 8.0 - info.effective_bits).abs() < 1e-12);
        }
    }
}
