//! Number formats: storage size per element (block scales included) and the matrix-unit path that runs them.
//!
//! The bottom of the crate: it names no other module. `path.rs` holds the compute paths and the
//! native-support matrix of each [`Architecture`]; `layout.rs` the format reference (layout, range, levels,
//! codebooks) the page's Formats tab lists.

mod family;
mod layout;
mod path;

pub use family::{ActivationScale, GemmFamily, QuantizeKernel};
pub use layout::{
    E2M1_CODEBOOK, ElementLayout, Encoding, FormatInfo, INT2_CODEBOOK, NF4_CODEBOOK, format_catalog,
    format_info,
};
pub use path::{Architecture, ComputePath};

use std::fmt;
use std::str::FromStr;

/// A number format of a tensor, as stored in memory and, for matrix operands, as fed to the matrix unit.
///
/// Names are case-insensitive on input ([`Precision::from_str`]) and upper-case with underscores on output
/// (`FP8_E4M3`), the names the original toolkit's users script against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "String", try_from = "String"))]
#[non_exhaustive]
pub enum Precision {
    /// IEEE binary64.
    Fp64,
    /// IEEE binary32.
    Fp32,
    /// TensorFloat-32: stored as FP32 (32 bits), multiplied with a 10-bit mantissa on the tensor path.
    Tf32,
    /// IEEE binary16.
    Fp16,
    /// bfloat16.
    Bf16,
    /// OCP FP8 E4M3 (max ±448).
    Fp8E4M3,
    /// OCP FP8 E5M2 (max ±57,344).
    Fp8E5M2,
    /// Block-scaled FP8 weights (DeepSeek-V3, Qwen3-FP8): E4M3 elements and an FP32 scale per 128×128 block
    /// (16,384 elements), 8 + 32/16384 bits per element.
    Fp8Block128,
    /// Group-scaled FP8 activations, the partner of [`Precision::Fp8Block128`] weights: E4M3 elements and an
    /// FP32 scale per 1×128 group of one token's channels, 8 + 32/128 = 8.25 bits per element.
    Fp8Group128,
    /// 8-bit integer.
    Int8,
    /// 4-bit integer, no stored scale (the INT4 tensor path of Ampere and Ada).
    Int4,
    /// NVIDIA NVFP4: E2M1 elements, an E4M3 scale per 16 elements and one FP32 scale per tensor.
    Nvfp4,
    /// OCP MXFP4: E2M1 elements and an E8M0 scale per 32 elements.
    Mxfp4,
    /// OCP MXFP8 with E4M3 elements and an E8M0 scale per 32 elements.
    Mxfp8E4M3,
    /// OCP MXFP8 with E5M2 elements and an E8M0 scale per 32 elements.
    Mxfp8E5M2,
    /// OCP MXFP6 with E3M2 elements (max ±28) and an E8M0 scale per 32 elements.
    Mxfp6E3M2,
    /// OCP MXFP6 with E2M3 elements (max ±7.5) and an E8M0 scale per 32 elements.
    Mxfp6E2M3,
    /// OCP MXINT8: INT8 elements and an E8M0 scale per 32 elements.
    Mxint8,
    /// Group-wise INT4, symmetric: an FP16 scale per 128 elements along K (weight-only storage).
    Int4G128,
    /// Group-wise INT4 with zero point (AWQ/GPTQ storage): an FP16 scale and a 4-bit zero per 128 elements.
    Int4G128Zp,
    /// Group-wise INT4, symmetric, with a 16-bit scale per 32 elements along K (compressed-tensors
    /// `pack-quantized` with `group_size` 32, as Kimi-K2.5's routed experts): 4 + 16/32 = 4.5 bits.
    Int4G32,
    /// QLoRA NormalFloat4: 16-value codebook, FP32 absmax per 64 elements (weight-only storage).
    Nf4,
    /// NF4 with QLoRA double quantization: 8-bit absmax per 64 elements plus an FP32 scale per 256 blocks.
    Nf4Dq,
    /// 2-bit integer, no stored scale (weight-only storage).
    Int2,
}

/// Block scaling of a format: `block_elements` elements share one scale of `scale_bits` bits (and a zero
/// point of `zero_point_bits`), every `super_block_blocks` blocks share `super_scale_bits` more (QLoRA double
/// quantization), and the whole tensor carries `per_tensor_bits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BlockScale {
    /// Elements per scale block.
    pub block_elements: u32,
    /// Bits of each block scale.
    pub scale_bits: u32,
    /// Bits of each block's zero point (0 for symmetric formats).
    pub zero_point_bits: u32,
    /// Blocks per second-level scale (0 when there is none).
    pub super_block_blocks: u32,
    /// Bits of each second-level scale.
    pub super_scale_bits: u32,
    /// Bits stored once per tensor (NVFP4's FP32 global scale).
    pub per_tensor_bits: u32,
}

impl BlockScale {
    /// A single-level block scale: `scale_bits` per `block_elements` elements, nothing else.
    #[must_use]
    pub const fn simple(block_elements: u32, scale_bits: u32) -> BlockScale {
        BlockScale {
            block_elements,
            scale_bits,
            zero_point_bits: 0,
            super_block_blocks: 0,
            super_scale_bits: 0,
            per_tensor_bits: 0,
        }
    }

    /// Bits per element that the scales add, per-tensor scale excluded:
    /// (scale + zero) / block + super_scale / (block · super_block).
    #[must_use]
    pub fn overhead_bits(&self) -> f64 {
        let block = f64::from(self.block_elements);
        let mut bits = f64::from(self.scale_bits + self.zero_point_bits) / block;
        if self.super_block_blocks > 0 {
            bits += f64::from(self.super_scale_bits) / (block * f64::from(self.super_block_blocks));
        }
        bits
    }

    /// Bytes of scales for a tensor of `elements` elements: one scale (and zero) per started block, one
    /// second-level scale per started super-block, and the per-tensor scale.
    #[must_use]
    pub fn scale_bytes(&self, elements: f64) -> f64 {
        let blocks = (elements / f64::from(self.block_elements)).ceil();
        let mut bits = blocks * f64::from(self.scale_bits + self.zero_point_bits);
        if self.super_block_blocks > 0 {
            bits += (blocks / f64::from(self.super_block_blocks)).ceil() * f64::from(self.super_scale_bits);
        }
        (bits + f64::from(self.per_tensor_bits)) / 8.0
    }
}

/// Bits per element of group-wise INT4 with an FP16 scale per `group_size` elements and, with
/// `zero_point`, a 4-bit zero per group: 4 + 16/g (+ 4/g). Returns `None` for a zero group size.
///
/// # Examples
/// ```
/// // AWQ/GPTQ at g = 128: 4 + 16/128 + 4/128 = 4.15625 bits.
/// assert_eq!(roofline_base::int4_group_bits(128, true), Some(4.15625));
/// ```
#[must_use]
pub fn int4_group_bits(group_size: u32, zero_point: bool) -> Option<f64> {
    if group_size == 0 {
        return None;
    }
    let scale = BlockScale {
        zero_point_bits: if zero_point { 4 } else { 0 },
        ..BlockScale::simple(group_size, 16)
    };
    Some(4.0 + scale.overhead_bits())
}

impl Precision {
    /// Every precision, in display order.
    pub const ALL: [Precision; 24] = [
        Precision::Fp64,
        Precision::Fp32,
        Precision::Tf32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Fp8E4M3,
        Precision::Fp8E5M2,
        Precision::Fp8Block128,
        Precision::Fp8Group128,
        Precision::Int8,
        Precision::Int4,
        Precision::Nvfp4,
        Precision::Mxfp4,
        Precision::Mxfp8E4M3,
        Precision::Mxfp8E5M2,
        Precision::Mxfp6E3M2,
        Precision::Mxfp6E2M3,
        Precision::Mxint8,
        Precision::Int4G128,
        Precision::Int4G128Zp,
        Precision::Int4G32,
        Precision::Nf4,
        Precision::Nf4Dq,
        Precision::Int2,
    ];

    /// The canonical name, e.g. `FP8_E4M3`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Precision::Fp64 => "FP64",
            Precision::Fp32 => "FP32",
            Precision::Tf32 => "TF32",
            Precision::Fp16 => "FP16",
            Precision::Bf16 => "BF16",
            Precision::Fp8E4M3 => "FP8_E4M3",
            Precision::Fp8E5M2 => "FP8_E5M2",
            Precision::Fp8Block128 => "FP8_BLOCK128",
            Precision::Fp8Group128 => "FP8_GROUP128",
            Precision::Int8 => "INT8",
            Precision::Int4 => "INT4",
            Precision::Nvfp4 => "NVFP4",
            Precision::Mxfp4 => "MXFP4",
            Precision::Mxfp8E4M3 => "MXFP8_E4M3",
            Precision::Mxfp8E5M2 => "MXFP8_E5M2",
            Precision::Mxfp6E3M2 => "MXFP6_E3M2",
            Precision::Mxfp6E2M3 => "MXFP6_E2M3",
            Precision::Mxint8 => "MXINT8",
            Precision::Int4G128 => "INT4_G128",
            Precision::Int4G128Zp => "INT4_G128_ZP",
            Precision::Int4G32 => "INT4_G32",
            Precision::Nf4 => "NF4",
            Precision::Nf4Dq => "NF4_DQ",
            Precision::Int2 => "INT2",
        }
    }

    /// Bits of one element, without block scales.
    #[must_use]
    pub const fn element_bits(self) -> u32 {
        match self {
            Precision::Fp64 => 64,
            Precision::Fp32 | Precision::Tf32 => 32,
            Precision::Fp16 | Precision::Bf16 => 16,
            Precision::Fp8E4M3
            | Precision::Fp8E5M2
            | Precision::Fp8Block128
            | Precision::Fp8Group128
            | Precision::Int8
            | Precision::Mxfp8E4M3
            | Precision::Mxfp8E5M2
            | Precision::Mxint8 => 8,
            Precision::Mxfp6E3M2 | Precision::Mxfp6E2M3 => 6,
            Precision::Int4
            | Precision::Nvfp4
            | Precision::Mxfp4
            | Precision::Int4G128
            | Precision::Int4G128Zp
            | Precision::Int4G32
            | Precision::Nf4
            | Precision::Nf4Dq => 4,
            Precision::Int2 => 2,
        }
    }

    /// The block scaling of this format, if it has one (OCP MX v1.0; NVIDIA NVFP4 blog, 2025-06-24; QLoRA,
    /// arXiv:2305.14314; AutoAWQ `WQLinear_GEMM`; DeepSeek-V3 `README_WEIGHTS.md` for the FP32 scale per
    /// 128×128 weight block and per 1×128 activation group; compressed-tensors group quantization). A
    /// 128×128 block is counted as 16,384 consecutive elements: exact when both matrix sides are multiples
    /// of 128, as in every model this crate knows.
    #[must_use]
    pub const fn block_scale(self) -> Option<BlockScale> {
        match self {
            Precision::Nvfp4 => Some(BlockScale {
                per_tensor_bits: 32,
                ..BlockScale::simple(16, 8)
            }),
            Precision::Mxfp4
            | Precision::Mxfp8E4M3
            | Precision::Mxfp8E5M2
            | Precision::Mxfp6E3M2
            | Precision::Mxfp6E2M3
            | Precision::Mxint8 => Some(BlockScale::simple(32, 8)),
            Precision::Fp8Block128 => Some(BlockScale::simple(128 * 128, 32)),
            Precision::Fp8Group128 => Some(BlockScale::simple(128, 32)),
            Precision::Int4G128 => Some(BlockScale::simple(128, 16)),
            Precision::Int4G32 => Some(BlockScale::simple(32, 16)),
            Precision::Int4G128Zp => Some(BlockScale {
                zero_point_bits: 4,
                ..BlockScale::simple(128, 16)
            }),
            Precision::Nf4 => Some(BlockScale::simple(64, 32)),
            Precision::Nf4Dq => Some(BlockScale {
                super_block_blocks: 256,
                super_scale_bits: 32,
                ..BlockScale::simple(64, 8)
            }),
            _ => None,
        }
    }

    /// Effective bits per element with block scales amortized (per-tensor scales excluded):
    /// NVFP4 = 4 + 8/16 = 4.5, MXFP4 = 4 + 8/32 = 4.25, NF4 with double quantization = 4 + 8/64 + 32/(64·256).
    #[must_use]
    pub fn effective_bits(self) -> f64 {
        let element = f64::from(self.element_bits());
        self.block_scale()
            .map_or(element, |b| element + b.overhead_bits())
    }

    /// Effective bytes per element, block scales amortized (= [`Precision::effective_bits`] / 8).
    #[must_use]
    pub fn effective_bytes(self) -> f64 {
        self.effective_bits() / 8.0
    }

    /// Exact bytes of a tensor of `elements` elements: elements, one scale per started block, and the
    /// per-tensor scale. An empty tensor stores nothing.
    #[must_use]
    pub fn tensor_bytes(self, elements: f64) -> f64 {
        if elements <= 0.0 {
            return 0.0;
        }
        let element_bytes = elements * f64::from(self.element_bits()) / 8.0;
        self.block_scale()
            .map_or(element_bytes, |b| element_bytes + b.scale_bytes(elements))
    }

    /// Whether this is a storage-only format: weights kept in it are dequantized in software before the
    /// multiply (group-wise INT4, NF4, INT2); no matrix unit takes it as an operand.
    #[must_use]
    pub const fn is_storage_only(self) -> bool {
        matches!(
            self,
            Precision::Int4G128
                | Precision::Int4G128Zp
                | Precision::Int4G32
                | Precision::Nf4
                | Precision::Nf4Dq
                | Precision::Int2
        )
    }

    /// The matrix-unit path a GEMM on operands of this precision runs on.
    #[must_use]
    pub const fn compute_path(self) -> ComputePath {
        match self {
            Precision::Fp64 => ComputePath::Fp64,
            Precision::Fp32 => ComputePath::Fp32,
            Precision::Tf32 => ComputePath::Tf32,
            Precision::Fp16 => ComputePath::Fp16,
            Precision::Bf16 => ComputePath::Bf16,
            Precision::Fp8E4M3
            | Precision::Fp8E5M2
            | Precision::Fp8Block128
            | Precision::Fp8Group128
            | Precision::Mxfp8E4M3
            | Precision::Mxfp8E5M2 => ComputePath::Fp8,
            Precision::Mxfp6E3M2 | Precision::Mxfp6E2M3 => ComputePath::Fp6,
            Precision::Int8 | Precision::Mxint8 => ComputePath::Int8,
            Precision::Int4
            | Precision::Int4G128
            | Precision::Int4G128Zp
            | Precision::Int4G32
            | Precision::Nf4
            | Precision::Nf4Dq
            | Precision::Int2 => ComputePath::Int4,
            Precision::Nvfp4 | Precision::Mxfp4 => ComputePath::Fp4,
        }
    }

    /// The precision a GEMM writes its output in by default: FP32 inputs give FP32, every narrower input
    /// gives FP16 (cuBLASLt's usual D type for FP8/FP4; INT8 GEMMs dequantize on output).
    #[must_use]
    pub const fn default_output(self) -> Precision {
        match self {
            Precision::Fp64 => Precision::Fp64,
            Precision::Fp32 | Precision::Tf32 => Precision::Fp32,
            Precision::Bf16 => Precision::Bf16,
            _ => Precision::Fp16,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no precision ([`Precision::from_str`]); core's `Error` reads it as `UnknownPrecision`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown precision '{name}'; valid: {}", valid.join(", "))]
pub struct ParsePrecisionError {
    /// The name that was given.
    pub name: String,
    /// Every accepted name.
    pub valid: Vec<String>,
}

impl FromStr for Precision {
    type Err = ParsePrecisionError;

    /// Parses a name case-insensitively; `-` and `_` are interchangeable. The original toolkit's short names
    /// are aliases: `FP8` = `FP8_E4M3`, `MXFP8` = `MXFP8_E4M3`, `MXFP6` = `MXFP6_E3M2`, `NVFP4_KV` = `NVFP4`,
    /// `INT4_AWQ` = `INT4_G128_ZP`; `FP8_BLOCK` = `FP8_BLOCK128`.
    fn from_str(s: &str) -> Result<Self, ParsePrecisionError> {
        const ALIASES: [(&str, &str); 6] = [
            ("FP8", "FP8_E4M3"),
            ("MXFP8", "MXFP8_E4M3"),
            ("MXFP6", "MXFP6_E3M2"),
            ("NVFP4_KV", "NVFP4"),
            ("INT4_AWQ", "INT4_G128_ZP"),
            ("FP8_BLOCK", "FP8_BLOCK128"),
        ];
        let normalized = s.trim().to_ascii_uppercase().replace('-', "_");
        let normalized = ALIASES
            .iter()
            .find(|(alias, _)| *alias == normalized)
            .map_or(normalized.as_str(), |(_, n)| n);
        Precision::ALL
            .into_iter()
            .find(|p| p.name() == normalized)
            .ok_or_else(|| ParsePrecisionError {
                name: s.to_owned(),
                valid: Precision::ALL.iter().map(|p| p.name().to_owned()).collect(),
            })
    }
}

impl From<Precision> for String {
    fn from(p: Precision) -> String {
        p.name().to_owned()
    }
}

impl TryFrom<String> for Precision {
    type Error = ParsePrecisionError;
    fn try_from(s: String) -> Result<Self, ParsePrecisionError> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_case_insensitively() {
        for p in Precision::ALL {
            assert_eq!(p.name().to_lowercase().parse::<Precision>().unwrap(), p);
        }
        assert_eq!("fp8".parse::<Precision>().unwrap(), Precision::Fp8E4M3);
        assert_eq!("nvfp4-kv".parse::<Precision>().unwrap(), Precision::Nvfp4);
        assert_eq!("MXFP6".parse::<Precision>().unwrap(), Precision::Mxfp6E3M2);
        assert_eq!("fp8-block".parse::<Precision>().unwrap(), Precision::Fp8Block128);
        let unknown = "fp7".parse::<Precision>().unwrap_err();
        assert_eq!(unknown.name, "fp7");
        assert_eq!(unknown.valid.len(), Precision::ALL.len());
    }

    #[test]
    fn effective_bits_match_the_block_layouts() {
        // docs/research/hardware.md §6: NVFP4 4 + 8/16, MXFP4 4 + 8/32.
        assert_eq!(Precision::Nvfp4.effective_bits(), 4.5);
        assert_eq!(Precision::Mxfp4.effective_bits(), 4.25);
        assert_eq!(Precision::Tf32.effective_bits(), 32.0);
        // hardware.md §6: MXFP8 8.25, MXFP6 6.25, MXINT8 8.25, NF4 4.5 (FP32 absmax / 64),
        // NF4 double quant 4 + 8/64 + 32/(64·256) = 4.126953125, INT4 g128 4.125 sym, 4.15625 with a zero.
        let cases = [
            (Precision::Mxfp8E4M3, 8.25),
            (Precision::Mxfp8E5M2, 8.25),
            (Precision::Mxfp6E3M2, 6.25),
            (Precision::Mxfp6E2M3, 6.25),
            (Precision::Mxint8, 8.25),
            (Precision::Nf4, 4.5),
            (Precision::Nf4Dq, 4.126_953_125),
            (Precision::Int4G128, 4.125),
            (Precision::Int4G128Zp, 4.156_25),
            (Precision::Int2, 2.0),
            // DeepSeek-V3 README_WEIGHTS.md: an FP32 scale per 128×128 weight block, 8 + 32/16384 bits; per
            // 1×128 activation group, 8 + 32/128 = 8.25 bits. compressed-tensors INT4 g32: 4 + 16/32 = 4.5.
            (Precision::Fp8Block128, 8.0 + 32.0 / 16_384.0),
            (Precision::Fp8Group128, 8.25),
            (Precision::Int4G32, 4.5),
        ];
        for (p, bits) in cases {
            assert_eq!(p.effective_bits(), bits, "{p}");
        }
        assert_eq!(int4_group_bits(64, false), Some(4.25));
        assert_eq!(int4_group_bits(0, true), None);
    }

    #[test]
    fn tensor_bytes_count_every_block_and_the_tensor_scale() {
        // 4096 NVFP4 elements: 2048 B of codes + 256 E4M3 scales + 4 B FP32 tensor scale = 2308 B.
        assert_eq!(Precision::Nvfp4.tensor_bytes(4096.0), 2308.0);
        // 33 MXFP4 elements: 16.5 B of codes + 2 started blocks of 1 B = 18.5 B.
        assert_eq!(Precision::Mxfp4.tensor_bytes(33.0), 18.5);
        assert_eq!(Precision::Fp16.tensor_bytes(0.0), 0.0);
        // 64·256 NF4-DQ elements: 8192 B of codes + 256 8-bit absmax + one FP32 second-level scale = 8452 B.
        assert_eq!(Precision::Nf4Dq.tensor_bytes(16_384.0), 8452.0);
        // 256 AWQ elements: 128 B of codes + 2 groups × (2 B scale + 0.5 B zero) = 133 B.
        assert_eq!(Precision::Int4G128Zp.tensor_bytes(256.0), 133.0);
        // A 4096×4096 FP8 block-scaled weight: 16 Mi B of codes + 32·32 blocks × 4 B = 16,781,312 B; the
        // 1×4096 activation of one token: 4096 B + 32 groups × 4 B = 4224 B.
        assert_eq!(Precision::Fp8Block128.tensor_bytes(4096.0 * 4096.0), 16_781_312.0);
        assert_eq!(Precision::Fp8Group128.tensor_bytes(4096.0), 4224.0);
    }
}
