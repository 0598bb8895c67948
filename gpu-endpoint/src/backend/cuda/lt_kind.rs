//! How each precision maps onto cuBLASLt ([`LtKind`]): operand and output element types, compute type,
//! scales (per-tensor pointers for FP8, blocks for FP4), whether padding may rescue a shape, and the labels
//! of the record; `unsupported`, naming the architecture, where the GPU has no such path.

use cudarc::cublaslt::sys as lt_sys;
use roofline_core::{OperandPrecisions, Precision};

use super::buffers::Elem;
use crate::backend::BackendError;

/// Block scaling of the FP4 formats.
#[derive(Debug, Clone, Copy)]
pub(super) struct BlockScale {
    pub(super) mode: lt_sys::cublasLtMatmulMatrixScale_t,
    pub(super) elements: usize,
    /// The byte that encodes a scale of 1.0 (UE4M3: 0x38; UE8M0: 127).
    pub(super) one: u8,
}

/// How one precision maps onto cuBLASLt.
pub(super) struct LtKind {
    pub(super) a: Elem,
    pub(super) b: Elem,
    pub(super) d: Elem,
    pub(super) compute: lt_sys::cublasComputeType_t,
    pub(super) scale: lt_sys::cudaDataType,
    pub(super) scale_pointers: bool,
    pub(super) block_scale: Option<BlockScale>,
    pub(super) pad_on_failure: bool,
    pub(super) operands: OperandPrecisions,
    pub(super) label: String,
    pub(super) label_suffix: String,
    pub(super) alpha_beta: fn() -> ([u8; 4], [u8; 4]),
}

fn f32_alpha_beta() -> ([u8; 4], [u8; 4]) {
    (1.0f32.to_ne_bytes(), 0.0f32.to_ne_bytes())
}

fn i32_alpha_beta() -> ([u8; 4], [u8; 4]) {
    (1i32.to_ne_bytes(), 0i32.to_ne_bytes())
}

impl LtKind {
    /// The cuBLASLt configuration of `precision` on compute capability `cc`.
    ///
    /// # Errors
    /// [`BackendError::Unsupported`] saying why there is none (naming the architecture).
    pub(super) fn of(precision: Precision, cc: (i32, i32)) -> Result<LtKind, BackendError> {
        use lt_sys::cublasComputeType_t as C;
        use lt_sys::cudaDataType_t as T;
        let arch = format!("sm_{}{}", cc.0, cc.1);
        let same = |p: Precision| OperandPrecisions {
            weight: p,
            activation: p,
            output: p.default_output(),
        };
        let base = |a: Elem, d: Elem, compute: C, operands: OperandPrecisions, label: &str| LtKind {
            a,
            b: a,
            d,
            compute,
            scale: T::CUDA_R_32F,
            scale_pointers: false,
            block_scale: None,
            pad_on_failure: false,
            operands,
            label: label.to_owned(),
            label_suffix: String::new(),
            alpha_beta: f32_alpha_beta,
        };
        Ok(match precision {
            Precision::Fp32 => base(
                Elem::F32,
                Elem::F32,
                C::CUBLAS_COMPUTE_32F,
                same(precision),
                "FP32 (no TF32)",
            ),
            Precision::Tf32 => base(
                Elem::F32,
                Elem::F32,
                C::CUBLAS_COMPUTE_32F_FAST_TF32,
                same(precision),
                "TF32",
            ),
            Precision::Fp16 => base(
                Elem::F16,
                Elem::F16,
                C::CUBLAS_COMPUTE_32F,
                same(precision),
                "FP16, FP32 accumulate",
            ),
            Precision::Bf16 => base(
                Elem::Bf16,
                Elem::Bf16,
                C::CUBLAS_COMPUTE_32F,
                same(precision),
                "BF16, FP32 accumulate",
            ),
            Precision::Fp8E4M3 | Precision::Fp8E5M2 if cc < (8, 9) => {
                return Err(BackendError::Unsupported(format!(
                    "{precision} needs FP8 tensor cores (sm_89+); this GPU is {arch}"
                )));
            }
            Precision::Fp8E4M3 => LtKind {
                scale_pointers: true,
                pad_on_failure: true,
                ..base(
                    Elem::E4M3,
                    Elem::F16,
                    C::CUBLAS_COMPUTE_32F,
                    same(precision),
                    "FP8 E4M3×E4M3 → FP16, per-tensor scales",
                )
            },
            // cuBLASLt has no E5M2×E5M2 kernel: weights E5M2, activations E4M3 (what FP8 training uses).
            Precision::Fp8E5M2 => LtKind {
                b: Elem::E4M3,
                scale_pointers: true,
                pad_on_failure: true,
                label_suffix: " (W E5M2 × A E4M3)".into(),
                ..base(
                    Elem::E5M2,
                    Elem::F16,
                    C::CUBLAS_COMPUTE_32F,
                    OperandPrecisions {
                        weight: Precision::Fp8E5M2,
                        activation: Precision::Fp8E4M3,
                        output: Precision::Fp16,
                    },
                    "FP8 W E5M2 × A E4M3 → FP16, per-tensor scales",
                )
            },
            Precision::Int8 => LtKind {
                scale: T::CUDA_R_32I,
                pad_on_failure: true,
                alpha_beta: i32_alpha_beta,
                ..base(
                    Elem::I8,
                    Elem::I32,
                    C::CUBLAS_COMPUTE_32I,
                    OperandPrecisions {
                        weight: Precision::Int8,
                        activation: Precision::Int8,
                        output: Precision::Fp32,
                    },
                    "INT8 IMMA → INT32",
                )
            },
            Precision::Nvfp4 | Precision::Mxfp4 if cc.0 < 10 => {
                return Err(BackendError::Unsupported(format!(
                    "{precision} needs block-scaled FP4 tensor cores (sm_100+, Blackwell); this GPU is {arch}"
                )));
            }
            Precision::Nvfp4 | Precision::Mxfp4 => {
                let (mode, elements, one, name) = if precision == Precision::Nvfp4 {
                    (
                        lt_sys::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,
                        16,
                        0x38,
                        "NVFP4 (E2M1, UE4M3 per 16)",
                    )
                } else {
                    (
                        lt_sys::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,
                        32,
                        127,
                        "MXFP4 (E2M1, UE8M0 per 32)",
                    )
                };
                LtKind {
                    block_scale: Some(BlockScale { mode, elements, one }),
                    pad_on_failure: true,
                    ..base(
                        Elem::E2M1,
                        Elem::F16,
                        C::CUBLAS_COMPUTE_32F,
                        same(precision),
                        &format!("{name} → FP16"),
                    )
                }
            }
            Precision::Int4 => {
                return Err(BackendError::Unsupported(format!(
                    "INT4 has no cuBLASLt path on {arch}; the W4A16 GEMV is used"
                )));
            }
            other => {
                return Err(BackendError::Unsupported(format!(
                    "{other} is not measured by the CUDA backend on {arch}"
                )));
            }
        })
    }

    /// Allowed error relative to Σ|a·b| of an output entry.
    pub(super) fn tolerance(&self, k: usize) -> f64 {
        match (self.d, self.compute) {
            (Elem::I32, _) => 1e-12,
            (Elem::F32, lt_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F) => {
                (k as f64 * f64::from(f32::EPSILON)).max(1e-6)
            }
            (Elem::F32, _) => 5e-3,
            _ => 1e-2,
        }
    }
}
