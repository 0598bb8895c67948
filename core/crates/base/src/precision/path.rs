//! Compute paths and the native-support matrix: which matrix-unit (or vector-unit) path a format runs on,
//! and which paths and formats each [`Architecture`] runs natively (docs/research/hardware.md §3).

use std::fmt;

use super::Precision;

/// A class of matrix-unit (or vector-unit) throughput a device publishes a peak for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ComputePath {
    /// FP64 (tensor path where one exists).
    Fp64,
    /// FP32 on the vector units.
    Fp32,
    /// TF32 tensor path.
    Tf32,
    /// FP16 tensor path, FP32 accumulate.
    Fp16,
    /// BF16 tensor path, FP32 accumulate.
    Bf16,
    /// FP8 (E4M3/E5M2) tensor path, FP32 accumulate.
    Fp8,
    /// FP6 tensor path.
    Fp6,
    /// FP4 (E2M1, block-scaled) tensor path.
    Fp4,
    /// INT8 tensor path.
    Int8,
    /// INT4 tensor path.
    Int4,
}

impl ComputePath {
    /// Every path, in display order.
    pub const ALL: [ComputePath; 10] = [
        ComputePath::Fp64,
        ComputePath::Fp32,
        ComputePath::Tf32,
        ComputePath::Fp16,
        ComputePath::Bf16,
        ComputePath::Fp8,
        ComputePath::Fp6,
        ComputePath::Fp4,
        ComputePath::Int8,
        ComputePath::Int4,
    ];

    /// The display name, e.g. `FP8`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ComputePath::Fp64 => "FP64",
            ComputePath::Fp32 => "FP32",
            ComputePath::Tf32 => "TF32",
            ComputePath::Fp16 => "FP16",
            ComputePath::Bf16 => "BF16",
            ComputePath::Fp8 => "FP8",
            ComputePath::Fp6 => "FP6",
            ComputePath::Fp4 => "FP4",
            ComputePath::Int8 => "INT8",
            ComputePath::Int4 => "INT4",
        }
    }
}

impl fmt::Display for ComputePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Architecture family, which decides the formats the matrix units run natively
/// (docs/research/hardware.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Architecture {
    /// NVIDIA Ampere, sm_80/87: INT4 tensor path, no FP8.
    Ampere,
    /// NVIDIA Ada, sm_89: FP8 and INT4 tensor paths.
    Ada,
    /// NVIDIA Hopper, sm_90: FP8, no INT4 and no FP4.
    Hopper,
    /// NVIDIA Blackwell datacenter, sm_100: FP8, FP6, NVFP4 and MXFP4.
    Blackwell,
    /// NVIDIA Blackwell Ultra, sm_103.
    BlackwellUltra,
    /// NVIDIA Blackwell RTX and edge, sm_120/121/110 (RTX 50, RTX PRO, GB10, Thor).
    BlackwellRtx,
    /// AMD CDNA3 (MI300X, MI325X): FP8 (FNUZ), no FP4.
    Cdna3,
    /// AMD CDNA4 (MI355X): OCP FP8, MXFP6 and MXFP4, no NVFP4.
    Cdna4,
    /// Google TPU.
    Tpu,
    /// AWS Trainium.
    Trainium,
    /// Intel Gaudi.
    Gaudi,
    /// Apple GPU (no matrix units).
    AppleGpu,
    /// A user-defined device: every path with a peak is taken as native.
    Custom,
}

impl Architecture {
    /// Every architecture, in display order.
    pub const ALL: [Architecture; 13] = [
        Architecture::Ampere,
        Architecture::Ada,
        Architecture::Hopper,
        Architecture::Blackwell,
        Architecture::BlackwellUltra,
        Architecture::BlackwellRtx,
        Architecture::Cdna3,
        Architecture::Cdna4,
        Architecture::Tpu,
        Architecture::Trainium,
        Architecture::Gaudi,
        Architecture::AppleGpu,
        Architecture::Custom,
    ];

    /// Whether the architecture has the compute path `path` natively (docs/research/hardware.md §3): FP8 from
    /// Ada, Hopper and CDNA3 on (never Ampere); FP6 and FP4 only on Blackwell and CDNA4; INT4 only on Ampere
    /// and Ada; TPUs run BF16 and INT8 only; Apple GPUs FP32, FP16 and BF16 (Metal Shading Language 3.1's
    /// `bfloat`, which MLX and PyTorch's MPS backend run; Apple publishes no throughput for it). A custom
    /// device runs every path it gives a peak for.
    #[must_use]
    pub const fn runs_path(self, path: ComputePath) -> bool {
        use Architecture as A;
        use ComputePath as C;
        let nvidia = matches!(
            self,
            A::Ampere | A::Ada | A::Hopper | A::Blackwell | A::BlackwellUltra | A::BlackwellRtx
        );
        let blackwell = matches!(self, A::Blackwell | A::BlackwellUltra | A::BlackwellRtx);
        match path {
            _ if matches!(self, A::Custom) => true,
            C::Fp32 => true,
            C::Fp64 => nvidia || matches!(self, A::Cdna3 | A::Cdna4),
            C::Tf32 => nvidia || matches!(self, A::Cdna3 | A::Trainium | A::Gaudi),
            C::Fp16 => !matches!(self, A::Tpu),
            C::Bf16 => true,
            C::Fp8 => !matches!(self, A::Ampere | A::Tpu | A::AppleGpu),
            C::Fp6 | C::Fp4 => blackwell || matches!(self, A::Cdna4),
            C::Int8 => !matches!(self, A::Trainium | A::AppleGpu),
            C::Int4 => matches!(self, A::Ampere | A::Ada),
        }
    }

    /// Whether the matrix units take `precision` as an operand natively. Its compute path must be native
    /// ([`Architecture::runs_path`]) and block formats are vendor-specific: NVFP4 only on NVIDIA Blackwell,
    /// MXFP8/MXFP6/MXFP4 on NVIDIA Blackwell and AMD CDNA4, MXINT8 nowhere. Storage-only formats (group-wise
    /// INT4, NF4, INT2) are never matrix operands.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{Architecture, Precision};
    /// assert!(Architecture::Cdna4.runs_format(Precision::Mxfp4));
    /// assert!(!Architecture::Cdna4.runs_format(Precision::Nvfp4));
    /// assert!(!Architecture::Hopper.runs_format(Precision::Int4));
    /// ```
    #[must_use]
    pub const fn runs_format(self, precision: Precision) -> bool {
        use Architecture as A;
        let nvidia_blackwell = matches!(self, A::Blackwell | A::BlackwellUltra | A::BlackwellRtx);
        let custom = matches!(self, A::Custom);
        if precision.is_storage_only() || !self.runs_path(precision.compute_path()) {
            return false;
        }
        match precision {
            Precision::Nvfp4 => nvidia_blackwell || custom,
            Precision::Mxfp4
            | Precision::Mxfp6E3M2
            | Precision::Mxfp6E2M3
            | Precision::Mxfp8E4M3
            | Precision::Mxfp8E5M2 => nvidia_blackwell || custom || matches!(self, A::Cdna4),
            Precision::Mxint8 => custom,
            _ => true,
        }
    }

    /// Whether tensors may be stored in `precision` and dequantized on this architecture: integer and NF4
    /// formats everywhere (software dequantization), floating-point formats only where the architecture
    /// knows the element type natively ([`Architecture::runs_format`]), so no FP8 or FP4 on Ampere.
    #[must_use]
    pub const fn stores_format(self, precision: Precision) -> bool {
        match precision {
            Precision::Int8
            | Precision::Int4
            | Precision::Int4G128
            | Precision::Int4G128Zp
            | Precision::Int4G32
            | Precision::Nf4
            | Precision::Nf4Dq
            | Precision::Int2 => true,
            Precision::Fp64 | Precision::Fp32 | Precision::Tf32 | Precision::Fp16 | Precision::Bf16 => true,
            _ => self.runs_format(precision),
        }
    }

    /// The display name, e.g. `Hopper`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Architecture::Ampere => "Ampere",
            Architecture::Ada => "Ada",
            Architecture::Hopper => "Hopper",
            Architecture::Blackwell => "Blackwell",
            Architecture::BlackwellUltra => "Blackwell Ultra",
            Architecture::BlackwellRtx => "Blackwell RTX/edge",
            Architecture::Cdna3 => "CDNA3",
            Architecture::Cdna4 => "CDNA4",
            Architecture::Tpu => "TPU",
            Architecture::Trainium => "Trainium",
            Architecture::Gaudi => "Gaudi",
            Architecture::AppleGpu => "Apple GPU",
            Architecture::Custom => "Custom",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_matrix_follows_the_architecture_table() {
        // hardware.md §3: (architecture, path, native).
        let cases = [
            (Architecture::Ampere, ComputePath::Fp8, false),
            (Architecture::Ampere, ComputePath::Int4, true),
            (Architecture::Ada, ComputePath::Fp8, true),
            (Architecture::Ada, ComputePath::Int4, true),
            (Architecture::Hopper, ComputePath::Int4, false),
            (Architecture::Hopper, ComputePath::Fp4, false),
            (Architecture::Blackwell, ComputePath::Fp4, true),
            (Architecture::Blackwell, ComputePath::Int4, false),
            (Architecture::Cdna3, ComputePath::Fp4, false),
            (Architecture::Cdna4, ComputePath::Fp6, true),
            (Architecture::Tpu, ComputePath::Fp16, false),
        ];
        for (arch, path, native) in cases {
            assert_eq!(arch.runs_path(path), native, "{arch:?} {path}");
        }
        assert!(Architecture::Cdna4.runs_format(Precision::Mxfp4));
        assert!(!Architecture::Cdna4.runs_format(Precision::Nvfp4));
        assert!(!Architecture::Cdna3.runs_format(Precision::Mxfp8E4M3));
        assert!(!Architecture::Ampere.runs_format(Precision::Nf4));
        assert!(Architecture::Ampere.stores_format(Precision::Nf4));
        assert!(!Architecture::Ampere.stores_format(Precision::Nvfp4));
        assert!(!Architecture::Hopper.stores_format(Precision::Mxfp4));
        // Block-scaled FP8 runs wherever the FP8 path does.
        assert!(Architecture::Hopper.runs_format(Precision::Fp8Block128));
        assert!(Architecture::Cdna3.runs_format(Precision::Fp8Group128));
        assert!(!Architecture::Ampere.stores_format(Precision::Fp8Block128));
    }
}
