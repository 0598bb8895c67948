//! GEMM/GEMV through cuBLASLt's `result` layer: descriptors, layouts, heuristic algorithm choice, the
//! correctness gate and the timed run of the best algorithm.

use std::ffi::c_void;

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys as lt_sys;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use roofline_core::{OperandPrecisions, Operator, Precision};

use super::buffers::{DeviceBuf, Elem};
use super::{CudaBackend, cuda_err, to_usize};
use crate::backend::{BackendError, MatmulSpec, Measured};
use crate::protocol::{measurement, random_normal, summarize, verify_with};

/// cuBLASLt workspace, in bytes (32 MiB, what cudarc uses on sm_90+).
pub(super) const WORKSPACE_BYTES: usize = 32 << 20;
/// Heuristic algorithms tried per shape.
const MAX_ALGOS: usize = 8;
/// Timed runs per algorithm when picking the best.
const ALGO_TRIAL_RUNS: usize = 5;

/// A cuBLASLt handle destroyed on drop.
pub(super) struct LtHandle(pub(super) lt_sys::cublasLtHandle_t);

// SAFETY: a cuBLASLt handle may be used from any thread as long as calls are not concurrent; every use goes
// through `Device`'s lock (one measurement at a time), so there are no concurrent calls.
unsafe impl Send for LtHandle {}
// SAFETY: as above — shared references never call into cuBLASLt concurrently (serialized by `Device`).
unsafe impl Sync for LtHandle {}

impl Drop for LtHandle {
    fn drop(&mut self) {
        // SAFETY: the handle was created by `create_handle` and is destroyed exactly once, here.
        let _ = unsafe { lt::destroy_handle(self.0) };
    }
}

impl CudaBackend {
    pub(super) fn measure_lt(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        let kind = LtKind::of(spec.precision, self.cc).map_err(BackendError::Unsupported)?;
        let (m, n, k) = (to_usize(spec.m)?, to_usize(spec.n)?, to_usize(spec.k)?);
        // First try the exact shape; if cuBLASLt has no algorithm, pad every dimension to 16 and say so.
        match self.measure_lt_shape(spec, &kind, (m, n, k), None) {
            Err(BackendError::Unsupported(first)) if kind.pad_on_failure => {
                let padded = (
                    m.next_multiple_of(16),
                    n.next_multiple_of(16),
                    k.next_multiple_of(16),
                );
                if padded == (m, n, k) {
                    return Err(BackendError::Unsupported(first));
                }
                let note = format!(
                    "{m}x{n}x{k} padded to {}x{}x{} (no cuBLASLt algorithm for the exact shape)",
                    padded.0, padded.1, padded.2
                );
                self.measure_lt_shape(spec, &kind, padded, Some(note))
            }
            other => other,
        }
    }

    #[allow(clippy::too_many_lines)]
    fn measure_lt_shape(
        &self,
        spec: &MatmulSpec,
        kind: &LtKind,
        (m, n, k): (usize, usize, usize),
        padding: Option<String>,
    ) -> Result<Measured, BackendError> {
        let seed = spec.m ^ (spec.n << 20) ^ (spec.k << 40) ^ 0xC0DA;
        // Host inputs, quantized to the element format; the reference uses the quantized values.
        let w_host = kind.a.encode(&random_normal(seed, n * k));
        let x_host = kind.b.encode(&random_normal(seed + 1, m * k));
        let w_dev = w_host.upload(&self.stream)?;
        let x_dev = x_host.upload(&self.stream)?;
        let mut d_dev = kind.d.zeros(&self.stream, m * n)?;
        let mut workspace = self
            .stream
            .alloc_zeros::<u8>(WORKSPACE_BYTES)
            .map_err(|e| cuda_err("workspace", e))?;
        let scale_a = self
            .stream
            .clone_htod(&[1.0f32])
            .map_err(|e| cuda_err("scale", e))?;
        let scale_b = self
            .stream
            .clone_htod(&[1.0f32])
            .map_err(|e| cuda_err("scale", e))?;
        let block_scales = if let Some(block) = kind.block_scale {
            // Uniform scales of 1.0: the swizzled layout cannot change the result. Sized generously.
            let rows = n.max(m).next_multiple_of(128);
            let cols = (k / block.elements).next_multiple_of(4);
            let one = vec![block.one; rows * cols];
            Some((
                self.stream
                    .clone_htod(&one)
                    .map_err(|e| cuda_err("block scales", e))?,
                self.stream
                    .clone_htod(&one)
                    .map_err(|e| cuda_err("block scales", e))?,
            ))
        } else {
            None
        };

        let desc = Desc::new(kind)?;
        // cublasOperation_t: 0 = N, 1 = T.
        let transpose: i32 = 1;
        desc.set(
            lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
            &transpose,
        )?;
        let (scale_a_ptr, _ga) = scale_a.device_ptr(&self.stream);
        let (scale_b_ptr, _gb) = scale_b.device_ptr(&self.stream);
        let mut guards = Vec::new();
        if kind.scale_pointers {
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                &scale_a_ptr,
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                &scale_b_ptr,
            )?;
        }
        if let (Some(block), Some((sa, sb))) = (kind.block_scale, &block_scales) {
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                &block.mode,
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                &block.mode,
            )?;
            let (pa, ga) = sa.device_ptr(&self.stream);
            let (pb, gb) = sb.device_ptr(&self.stream);
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                &pa,
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                &pb,
            )?;
            guards.push(ga);
            guards.push(gb);
        }
        // A = weights, K×N column-major (ld K), transposed → N×K. B = activations, K×M column-major (ld K).
        // D = N×M column-major (ld N) = row-major D[M,N].
        let a_layout = Layout::new(kind.a.cuda_type(), k, n)?;
        let b_layout = Layout::new(kind.b.cuda_type(), k, m)?;
        let d_layout = Layout::new(kind.d.cuda_type(), n, m)?;
        let pref = Pref::new()?;
        let ws_bytes = WORKSPACE_BYTES as u64;
        pref.set(
            lt_sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            &ws_bytes,
        )?;

        let mut results: Vec<lt_sys::cublasLtMatmulHeuristicResult_t> = Vec::with_capacity(MAX_ALGOS);
        let mut n_results = 0i32;
        // SAFETY: descriptors and layouts are live; `results` has capacity for MAX_ALGOS entries and
        // cuBLASLt writes at most `requestedAlgoCount` of them, reporting how many in `n_results`.
        let status = unsafe {
            lt_sys::cublasLtMatmulAlgoGetHeuristic(
                self.lt.0,
                desc.0,
                a_layout.0,
                b_layout.0,
                d_layout.0,
                d_layout.0,
                pref.0,
                MAX_ALGOS as i32,
                results.as_mut_ptr(),
                &mut n_results,
            )
        };
        if status != lt_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS || n_results <= 0 {
            return Err(BackendError::Unsupported(format!(
                "{} {m}x{n}x{k}: cuBLASLt has no algorithm on {} ({}): {status:?}",
                spec.precision,
                self.arch(),
                self.name
            )));
        }
        // SAFETY: cuBLASLt initialized the first `n_results` (≤ MAX_ALGOS) entries.
        unsafe { results.set_len(usize::try_from(n_results).unwrap_or(0).min(MAX_ALGOS)) };
        results.retain(|r| {
            r.state == lt_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS && r.workspaceSize <= WORKSPACE_BYTES
        });

        let (alpha, beta) = (kind.alpha_beta)();
        let stream_ptr = self.stream.cu_stream() as lt_sys::cudaStream_t;
        let run_algo = |algo: &lt_sys::cublasLtMatmulAlgo_t,
                        d: &mut DeviceBuf,
                        ws: &mut CudaSlice<u8>|
         -> Result<(), BackendError> {
            let (w_ptr, _g1) = w_dev.ptr(&self.stream);
            let (x_ptr, _g2) = x_dev.ptr(&self.stream);
            let (d_ptr, _g3) = d.ptr_mut(&self.stream);
            let (ws_ptr, _g4) = ws.device_ptr_mut(&self.stream);
            // SAFETY: all pointers are live device allocations of the sizes the layouts describe (inputs
            // n·k and m·k elements, output m·n, workspace WORKSPACE_BYTES ≥ the algorithm's need); alpha and
            // beta point at host scalars of the descriptor's scale type; C = D with beta = 0.
            unsafe {
                lt::matmul(
                    self.lt.0,
                    desc.0,
                    alpha.as_ptr().cast::<c_void>(),
                    beta.as_ptr().cast::<c_void>(),
                    w_ptr as *const c_void,
                    a_layout.0,
                    x_ptr as *const c_void,
                    b_layout.0,
                    d_ptr as *const c_void,
                    d_layout.0,
                    d_ptr as *mut c_void,
                    d_layout.0,
                    algo,
                    ws_ptr as *mut c_void,
                    WORKSPACE_BYTES,
                    stream_ptr,
                )
            }
            .map_err(|e| cuda_err("cublasLtMatmul", e))
        };

        // Correctness gate with the first algorithm, before any timing.
        let first = results
            .first()
            .ok_or_else(|| BackendError::Unsupported(format!("{}: no usable algorithm", spec.precision)))?;
        run_algo(&first.algo, &mut d_dev, &mut workspace)?;
        let d_host = d_dev.download(&self.stream)?;
        verify_with(
            (m, n, k),
            |i, kk| x_host.get(i * k + kk),
            |kk, j| w_host.get(j * k + kk),
            |i, j| d_host.get(i * n + j),
            kind.tolerance(k),
            seed,
        )
        .map_err(BackendError::Verification)?;

        // Best of the heuristic algorithms: 5 timed runs each, median.
        let mut flush = self.flush_buffer()?;
        let mut best: Option<(usize, f64)> = None;
        for (idx, r) in results.iter().enumerate() {
            let mut times = Vec::with_capacity(ALGO_TRIAL_RUNS);
            for _ in 0..ALGO_TRIAL_RUNS {
                times
                    .push(self.time_once(&mut flush, &mut || run_algo(&r.algo, &mut d_dev, &mut workspace))?);
            }
            let median = summarize(&times, false).median_s;
            if best.is_none_or(|(_, t)| median < t) {
                best = Some((idx, median));
            }
        }
        drop(flush);
        let (best_idx, _) =
            best.ok_or_else(|| BackendError::Unsupported("no algorithm could be timed".into()))?;
        let algo = results[best_idx].algo;
        let algo_id = algo_config_id(&algo);
        let (stats, telemetry) = self.protocol(&mut || run_algo(&algo, &mut d_dev, &mut workspace))?;
        drop(guards);

        let ran_m = u64::try_from(m).unwrap_or(u64::MAX);
        let op = Operator::matmul(ran_m, n as u64, k as u64, kind.operands)
            .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        let kernel = format!(
            "cublasLtMatmul {} algo id {algo_id} (best of {} heuristic results, rank {}), TN, compute {:?}",
            kind.label,
            results.len(),
            best_idx,
            kind.compute
        );
        let library = format!(
            "cuBLASLt {}",
            self.versions
                .iter()
                .find(|(n, _)| n == "cublasLt")
                .map_or("", |(_, v)| v.as_str())
        );
        Ok(Measured {
            op,
            precision: spec.precision,
            label_suffix: kind.label_suffix.clone(),
            measurement: measurement(self.run_info(library, kernel, true, padding), &stats, telemetry),
        })
    }
}

fn algo_config_id(algo: &lt_sys::cublasLtMatmulAlgo_t) -> i32 {
    let mut id = -1i32;
    let mut written = 0usize;
    // SAFETY: `algo` came from the heuristic; the buffer is one i32, the size the ID attribute has.
    let _ = unsafe {
        lt_sys::cublasLtMatmulAlgoConfigGetAttribute(
            algo,
            lt_sys::cublasLtMatmulAlgoConfigAttributes_t::CUBLASLT_ALGO_CONFIG_ID,
            (&raw mut id).cast::<c_void>(),
            std::mem::size_of::<i32>(),
            &mut written,
        )
    };
    id
}

/// Block scaling of the FP4 formats.
#[derive(Debug, Clone, Copy)]
struct BlockScale {
    mode: lt_sys::cublasLtMatmulMatrixScale_t,
    elements: usize,
    /// The byte that encodes a scale of 1.0 (UE4M3: 0x38; UE8M0: 127).
    one: u8,
}

/// How one precision maps onto cuBLASLt.
pub(super) struct LtKind {
    a: Elem,
    b: Elem,
    d: Elem,
    compute: lt_sys::cublasComputeType_t,
    scale: lt_sys::cudaDataType,
    scale_pointers: bool,
    block_scale: Option<BlockScale>,
    pad_on_failure: bool,
    operands: OperandPrecisions,
    label: String,
    label_suffix: String,
    alpha_beta: fn() -> ([u8; 4], [u8; 4]),
}

fn f32_alpha_beta() -> ([u8; 4], [u8; 4]) {
    (1.0f32.to_ne_bytes(), 0.0f32.to_ne_bytes())
}

fn i32_alpha_beta() -> ([u8; 4], [u8; 4]) {
    (1i32.to_ne_bytes(), 0i32.to_ne_bytes())
}

impl LtKind {
    /// The cuBLASLt configuration of `precision` on compute capability `cc`, or why there is none.
    pub(super) fn of(precision: Precision, cc: (i32, i32)) -> Result<LtKind, String> {
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
                return Err(format!(
                    "{precision} needs FP8 tensor cores (sm_89+); this GPU is {arch}"
                ));
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
                return Err(format!(
                    "{precision} needs block-scaled FP4 tensor cores (sm_100+, Blackwell); this GPU is {arch}"
                ));
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
                return Err(format!(
                    "INT4 has no cuBLASLt path on {arch}; the W4A16 GEMV is used"
                ));
            }
            other => return Err(format!("{other} is not measured by the CUDA backend on {arch}")),
        })
    }

    /// Allowed error relative to Σ|a·b| of an output entry.
    fn tolerance(&self, k: usize) -> f64 {
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

/// A matmul descriptor destroyed on drop.
struct Desc(lt_sys::cublasLtMatmulDesc_t);

impl Desc {
    fn new(kind: &LtKind) -> Result<Desc, BackendError> {
        lt::create_matmul_desc(kind.compute, kind.scale)
            .map(Desc)
            .map_err(|e| cuda_err("matmul desc", e))
    }

    fn set<T>(&self, attr: lt_sys::cublasLtMatmulDescAttributes_t, value: &T) -> Result<(), BackendError> {
        // SAFETY: the descriptor is live and `value` points at `size_of::<T>()` readable bytes of the type
        // the attribute expects (i32 enums, u64 sizes, device pointers).
        unsafe {
            lt::set_matmul_desc_attribute(
                self.0,
                attr,
                (value as *const T).cast::<c_void>(),
                std::mem::size_of::<T>(),
            )
        }
        .map_err(|e| BackendError::Unsupported(format!("cuBLASLt rejected {attr:?}: {e:?}")))
    }
}

impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: created by `create_matmul_desc`, destroyed once.
        let _ = unsafe { lt::destroy_matmul_desc(self.0) };
    }
}

/// A matrix layout destroyed on drop.
struct Layout(lt_sys::cublasLtMatrixLayout_t);

impl Layout {
    /// Column-major `rows × cols` with leading dimension `rows`.
    fn new(dtype: lt_sys::cudaDataType, rows: usize, cols: usize) -> Result<Layout, BackendError> {
        lt::create_matrix_layout(dtype, rows as u64, cols as u64, rows as i64)
            .map(Layout)
            .map_err(|e| cuda_err("layout", e))
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        // SAFETY: created by `create_matrix_layout`, destroyed once.
        let _ = unsafe { lt::destroy_matrix_layout(self.0) };
    }
}

/// A heuristic preference destroyed on drop.
struct Pref(lt_sys::cublasLtMatmulPreference_t);

impl Pref {
    fn new() -> Result<Pref, BackendError> {
        lt::create_matmul_pref()
            .map(Pref)
            .map_err(|e| cuda_err("preference", e))
    }

    fn set<T>(
        &self,
        attr: lt_sys::cublasLtMatmulPreferenceAttributes_t,
        value: &T,
    ) -> Result<(), BackendError> {
        // SAFETY: the preference is live and `value` points at `size_of::<T>()` readable bytes.
        unsafe {
            lt::set_matmul_pref_attribute(
                self.0,
                attr,
                (value as *const T).cast::<c_void>(),
                std::mem::size_of::<T>(),
            )
        }
        .map_err(|e| cuda_err("preference attribute", e))
    }
}

impl Drop for Pref {
    fn drop(&mut self) {
        // SAFETY: created by `create_matmul_pref`, destroyed once.
        let _ = unsafe { lt::destroy_matmul_pref(self.0) };
    }
}
