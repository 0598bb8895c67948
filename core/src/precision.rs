//! Number formats: storage size per element (block scales included) and the matrix-unit path that runs them.

use std::fmt;
use std::str::FromStr;

use crate::{ComputePath, Error};

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
    /// 8-bit integer.
    Int8,
    /// 4-bit integer, no stored scale (the INT4 tensor path of Ampere and Ada).
    Int4,
    /// NVIDIA NVFP4: E2M1 elements, an E4M3 scale per 16 elements and one FP32 scale per tensor.
    Nvfp4,
    /// OCP MXFP4: E2M1 elements and an E8M0 scale per 32 elements.
    Mxfp4,
}

/// Block scaling of a format: `block_elements` elements share one scale of `scale_bits` bits, and the whole
/// tensor carries `per_tensor_bits` more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockScale {
    /// Elements per scale block.
    pub block_elements: u32,
    /// Bits of each block scale.
    pub scale_bits: u32,
    /// Bits stored once per tensor (NVFP4's FP32 global scale).
    pub per_tensor_bits: u32,
}

impl Precision {
    /// Every precision, in display order.
    pub const ALL: [Precision; 11] = [
        Precision::Fp64,
        Precision::Fp32,
        Precision::Tf32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Fp8E4M3,
        Precision::Fp8E5M2,
        Precision::Int8,
        Precision::Int4,
        Precision::Nvfp4,
        Precision::Mxfp4,
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
            Precision::Int8 => "INT8",
            Precision::Int4 => "INT4",
            Precision::Nvfp4 => "NVFP4",
            Precision::Mxfp4 => "MXFP4",
        }
    }

    /// Bits of one element, without block scales.
    #[must_use]
    pub const fn element_bits(self) -> u32 {
        match self {
            Precision::Fp64 => 64,
            Precision::Fp32 | Precision::Tf32 => 32,
            Precision::Fp16 | Precision::Bf16 => 16,
            Precision::Fp8E4M3 | Precision::Fp8E5M2 | Precision::Int8 => 8,
            Precision::Int4 | Precision::Nvfp4 | Precision::Mxfp4 => 4,
        }
    }

    /// The block scaling of this format, if it has one (OCP MX v1.0; NVIDIA NVFP4 blog, 2025-06-24).
    #[must_use]
    pub const fn block_scale(self) -> Option<BlockScale> {
        match self {
            Precision::Nvfp4 => Some(BlockScale { block_elements: 16, scale_bits: 8, per_tensor_bits: 32 }),
            Precision::Mxfp4 => Some(BlockScale { block_elements: 32, scale_bits: 8, per_tensor_bits: 0 }),
            _ => None,
        }
    }

    /// Effective bits per element with block scales amortized (per-tensor scales excluded):
    /// NVFP4 = 4 + 8/16 = 4.5, MXFP4 = 4 + 8/32 = 4.25.
    #[must_use]
    pub fn effective_bits(self) -> f64 {
        let element = f64::from(self.element_bits());
        match self.block_scale() {
            Some(b) => element + f64::from(b.scale_bits) / f64::from(b.block_elements),
            None => element,
        }
    }

    /// Exact bytes of a tensor of `elements` elements: elements, one scale per started block, and the
    /// per-tensor scale. An empty tensor stores nothing.
    #[must_use]
    pub fn tensor_bytes(self, elements: f64) -> f64 {
        if elements <= 0.0 {
            return 0.0;
        }
        let element_bytes = elements * f64::from(self.element_bits()) / 8.0;
        match self.block_scale() {
            Some(b) => {
                let blocks = (elements / f64::from(b.block_elements)).ceil();
                element_bytes + blocks * f64::from(b.scale_bits) / 8.0 + f64::from(b.per_tensor_bits) / 8.0
            }
            None => element_bytes,
        }
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
            Precision::Fp8E4M3 | Precision::Fp8E5M2 => ComputePath::Fp8,
            Precision::Int8 => ComputePath::Int8,
            Precision::Int4 => ComputePath::Int4,
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

impl FromStr for Precision {
    type Err = Error;

    /// Parses a name case-insensitively; `-` and `_` are interchangeable and `FP8` means `FP8_E4M3`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let normalized = s.trim().to_ascii_uppercase().replace('-', "_");
        let normalized = if normalized == "FP8" { "FP8_E4M3".to_owned() } else { normalized };
        Precision::ALL.into_iter().find(|p| p.name() == normalized).ok_or_else(|| Error::UnknownPrecision {
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
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
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
        assert!(matches!("fp7".parse::<Precision>(), Err(Error::UnknownPrecision { .. })));
    }

    #[test]
    fn effective_bits_match_the_block_layouts() {
        // shared/docs/hardware.md §6: NVFP4 4 + 8/16, MXFP4 4 + 8/32.
        assert_eq!(Precision::Nvfp4.effective_bits(), 4.5);
        assert_eq!(Precision::Mxfp4.effective_bits(), 4.25);
        assert_eq!(Precision::Tf32.effective_bits(), 32.0);
    }

    #[test]
    fn tensor_bytes_count_every_block_and_the_tensor_scale() {
        // 4096 NVFP4 elements: 2048 B of codes + 256 E4M3 scales + 4 B FP32 tensor scale = 2308 B.
        assert_eq!(Precision::Nvfp4.tensor_bytes(4096.0), 2308.0);
        // 33 MXFP4 elements: 16.5 B of codes + 2 started blocks of 1 B = 18.5 B.
        assert_eq!(Precision::Mxfp4.tensor_bytes(33.0), 18.5);
        assert_eq!(Precision::Fp16.tensor_bytes(0.0), 0.0);
    }
}
