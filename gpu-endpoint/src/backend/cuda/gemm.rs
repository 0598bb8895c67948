//! GEMM/GEMV through cuBLASLt's `result` layer: descriptors, layouts, heuristic algorithm choice and the
//! correctness gate ([`CudaBackend::prepare_lt`], a [`PreparedMatmul`] that enqueues one run), then the timed
//! runs of the best algorithm ([`CudaBackend::measure_lt`]). A batched GEMM (MoE experts) is one
//! strided-batched matmul: each product its own weights and rows, one after another in the same buffers.

use std::ffi::c_void;

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys as lt_sys;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, SyncOnDrop};
use roofline_core::{GemmShape, Operator, Precision};

use super::buffers::DeviceBuf;
use super::lt_kind::LtKind;
use super::{CudaBackend, cuda_err, to_usize};
use crate::backend::{BackendError, MatmulSpec, Measured};
use crate::protocol::{
    SampleStats, TelemetrySummary, check_interruption, measurement, summarize, verify_products, verify_with,
};

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

/// The cuBLASLt workspace of a measurement ([`WORKSPACE_BYTES`]). The matmuls of a step share one: they run
/// one after another on the backend's one stream, as a framework's matmuls share its handle's workspace.
pub(super) struct Workspace(CudaSlice<u8>);

/// One cuBLASLt matmul, `D[M,N] = X[M,K]·W[N,K]ᵀ` row-major, or a strided batch of them (`D_p = X_p·W_pᵀ`,
/// product `p` at offset `p` × its matrix size in each buffer): the operands, the descriptor and the buffers
/// its scale pointers point at, the layouts and the algorithm. [`LtCall::enqueue`] runs it once.
struct LtCall {
    desc: Desc,
    a_layout: Layout,
    b_layout: Layout,
    d_layout: Layout,
    algo: lt_sys::cublasLtMatmulAlgo_t,
    /// Host alpha and beta in the descriptor's scale type (cuBLASLt reads them when a call is enqueued, so a
    /// captured call keeps their values).
    alpha: [u8; 4],
    beta: [u8; 4],
    /// Weights, batch·n·k elements.
    w: DeviceBuf,
    /// Activations, batch·m·k elements.
    x: DeviceBuf,
    /// Output, batch·m·n elements.
    d: DeviceBuf,
    /// Per-tensor scales (FP8: one FP32 each for A and B), set as device pointers in `desc`.
    tensor_scales: Vec<CudaSlice<f32>>,
    /// Block scales (FP4: A and B), set as device pointers in `desc`.
    block_scales: Vec<CudaSlice<u8>>,
}

impl LtCall {
    /// Enqueues the matmul once on the backend's stream.
    fn enqueue(&mut self, backend: &CudaBackend, workspace: &mut Workspace) -> Result<(), BackendError> {
        let stream = &backend.stream;
        let (w_ptr, _w) = self.w.ptr(stream);
        let (x_ptr, _x) = self.x.ptr(stream);
        let (d_ptr, _d) = self.d.ptr_mut(stream);
        let (ws_ptr, _ws) = workspace.0.device_ptr_mut(stream);
        // `desc` holds the scale buffers' raw addresses (a struct cannot keep guards borrowing its own fields),
        // so their guards are taken again for every call, like the operands', and dropped after it is enqueued.
        let _scales: Vec<SyncOnDrop<'_>> = self
            .tensor_scales
            .iter()
            .map(|s| s.device_ptr(stream).1)
            .chain(self.block_scales.iter().map(|s| s.device_ptr(stream).1))
            .collect();
        // SAFETY: all pointers are live device allocations owned by `self` or `workspace` of the sizes the layouts
        // describe (inputs batch·n·k and batch·m·k elements, output batch·m·n, batch strides n·k, m·k and
        // m·n, workspace WORKSPACE_BYTES ≥ the algorithm's need);
        // the scale pointers in `desc` point at `tensor_scales`/`block_scales`, alive as long as `self`; alpha
        // and beta point at host scalars of the descriptor's scale type; C = D with beta = 0.
        unsafe {
            lt::matmul(
                backend.lt.0,
                self.desc.0,
                self.alpha.as_ptr().cast::<c_void>(),
                self.beta.as_ptr().cast::<c_void>(),
                w_ptr as *const c_void,
                self.a_layout.0,
                x_ptr as *const c_void,
                self.b_layout.0,
                d_ptr as *const c_void,
                self.d_layout.0,
                d_ptr as *mut c_void,
                self.d_layout.0,
                &self.algo,
                ws_ptr as *mut c_void,
                WORKSPACE_BYTES,
                stream.cu_stream() as lt_sys::cudaStream_t,
            )
        }
        .map_err(|e| cuda_err("cublasLtMatmul", e))
    }
}

/// A cuBLASLt matmul prepared as [`CudaBackend::measure_lt`] measures it: inputs uploaded, output verified, the
/// best heuristic algorithm chosen, and what its record says.
pub(super) struct PreparedMatmul {
    call: LtCall,
    /// The operator that really runs (padded dimensions, the formats that ran).
    op: Operator,
    precision: Precision,
    label_suffix: String,
    /// The record's kernel text: the algorithm and how it was chosen.
    kernel: String,
    /// The padding note, when the exact shape had no algorithm.
    padding: Option<String>,
}

impl PreparedMatmul {
    /// Enqueues one run on the backend's stream.
    pub(super) fn enqueue(
        &mut self,
        backend: &CudaBackend,
        workspace: &mut Workspace,
    ) -> Result<(), BackendError> {
        self.call.enqueue(backend, workspace)
    }

    /// The padding note, when the exact shape had no algorithm.
    pub(super) fn padding(&self) -> Option<&str> {
        self.padding.as_deref()
    }

    /// The record of this matmul timed with `stats`.
    fn measured(self, backend: &CudaBackend, stats: &SampleStats, telemetry: TelemetrySummary) -> Measured {
        Measured {
            op: self.op,
            precision: self.precision,
            label_suffix: self.label_suffix,
            measurement: measurement(
                backend.run_info(backend.lt_library(), self.kernel, true, self.padding),
                stats,
                telemetry,
            ),
        }
    }
}

impl CudaBackend {
    /// A zeroed cuBLASLt workspace.
    pub(super) fn workspace(&self) -> Result<Workspace, BackendError> {
        self.stream
            .alloc_zeros::<u8>(WORKSPACE_BYTES)
            .map(Workspace)
            .map_err(|e| cuda_err("workspace", e))
    }

    /// The library label of cuBLASLt records, e.g. `cuBLASLt 13.1.0`.
    pub(super) fn lt_library(&self) -> String {
        format!(
            "cuBLASLt {}",
            self.versions
                .iter()
                .find(|(n, _)| n == "cublasLt")
                .map_or("", |(_, v)| v.as_str())
        )
    }

    /// Measures one matmul: [`CudaBackend::prepare_lt`], then the protocol.
    pub(super) fn measure_lt(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        let mut workspace = self.workspace()?;
        let mut matmul = self.prepare_lt(spec, &mut workspace)?;
        let (stats, telemetry) = self.protocol(&mut || matmul.enqueue(self, &mut workspace))?;
        Ok(matmul.measured(self, &stats, telemetry))
    }

    /// Prepares one matmul: seeded inputs, the correctness gate, and the best of the heuristic algorithms.
    pub(super) fn prepare_lt(
        &self,
        spec: &MatmulSpec,
        workspace: &mut Workspace,
    ) -> Result<PreparedMatmul, BackendError> {
        let kind = LtKind::of(spec.precision, self.cc)?;
        let GemmShape { batch, m, n, k } = spec.shape;
        let (m, n, k) = (to_usize(m)?, to_usize(n)?, to_usize(k)?);
        // First try the exact shape; if cuBLASLt has no algorithm, pad M, N and K to 16 and say so.
        match self.prepare_lt_shape(spec, &kind, (m, n, k), None, workspace) {
            Err(BackendError::Unsupported(first)) if kind.pad_on_failure => {
                let padded = (
                    m.next_multiple_of(16),
                    n.next_multiple_of(16),
                    k.next_multiple_of(16),
                );
                if padded == (m, n, k) {
                    return Err(BackendError::Unsupported(first));
                }
                let shape = |(m, n, k): (usize, usize, usize)| GemmShape {
                    batch,
                    m: m as u64,
                    n: n as u64,
                    k: k as u64,
                };
                let note = format!(
                    "{} padded to {} (no cuBLASLt algorithm for the exact shape)",
                    shape((m, n, k)),
                    shape(padded)
                );
                self.prepare_lt_shape(spec, &kind, padded, Some(note), workspace)
            }
            other => other,
        }
    }

    fn prepare_lt_shape(
        &self,
        spec: &MatmulSpec,
        kind: &LtKind,
        (m, n, k): (usize, usize, usize),
        padding: Option<String>,
        workspace: &mut Workspace,
    ) -> Result<PreparedMatmul, BackendError> {
        let GemmShape {
            batch: batch_req,
            m: m_req,
            n: n_req,
            k: k_req,
        } = spec.shape;
        let seed = m_req
            ^ (n_req << 20)
            ^ (k_req << 40)
            ^ 0xC0DA
            ^ batch_req.wrapping_sub(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let batch = to_usize(batch_req)?;
        // Seeded inputs in the element format, written on the device (E2M1 encoded on the host: see
        // `device_normal`); the reference recomputes the stored values of the rows it samples.
        let (w_in, w) = self.seeded_input(kind.a, seed, batch * n * k)?;
        let (x_in, x) = self.seeded_input(kind.b, seed + 1, batch * m * k)?;
        let d = kind.d.zeros(&self.stream, batch * m * n)?;
        let (tensor_scales, block_scales) = self.lt_scales(kind, (m, n, k), batch)?;
        let desc = self.lt_desc(kind, &tensor_scales, &block_scales)?;
        // A = weights, K×N column-major (ld K), transposed → N×K. B = activations, K×M column-major (ld K).
        // D = N×M column-major (ld N) = row-major D[M,N]. A batch: `batch` of each, one after another.
        let a_layout = Layout::new(kind.a.cuda_type(), k, n, batch)?;
        let b_layout = Layout::new(kind.b.cuda_type(), k, m, batch)?;
        let d_layout = Layout::new(kind.d.cuda_type(), n, m, batch)?;
        let results = self.lt_algorithms(
            spec,
            &desc,
            [&a_layout, &b_layout, &d_layout],
            (batch_req, m, n, k),
        )?;

        let first = results
            .first()
            .ok_or_else(|| BackendError::Unsupported(format!("{}: no usable algorithm", spec.precision)))?;
        let (alpha, beta) = (kind.alpha_beta)();
        let mut call = LtCall {
            desc,
            a_layout,
            b_layout,
            d_layout,
            algo: first.algo,
            alpha,
            beta,
            w,
            x,
            d,
            tensor_scales,
            block_scales,
        };

        // Correctness gate with the first algorithm, before any timing (unless the point is already stopped).
        check_interruption::<BackendError>()?;
        call.enqueue(self, workspace)?;
        let d_host = call.d.download(&self.stream)?;
        verify_products(batch, seed, |p| {
            let (w0, x0, d0) = (p * n * k, p * m * k, p * m * n);
            verify_with(
                (m, n, k),
                |i, kk| x_in.get(x0 + i * k + kk),
                |kk, j| w_in.get(w0 + j * k + kk),
                |i, j| d_host.get(d0 + i * n + j),
                kind.tolerance(k),
                seed ^ p as u64,
            )
        })?;

        // Best of the heuristic algorithms: 5 timed runs each, median.
        let best_idx = self.best_algorithm(&mut call, &results, workspace)?;
        call.algo = results[best_idx].algo;
        let algo_id = algo_config_id(&call.algo);

        let ran_m = u64::try_from(m).unwrap_or(u64::MAX);
        let op = if batch == 1 {
            Operator::matmul(ran_m, n as u64, k as u64, kind.operands)
        } else {
            Operator::batched_gemm(batch_req, ran_m, n as u64, k as u64, kind.operands)
        }
        .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        let batched = if batch == 1 {
            String::new()
        } else {
            format!(" strided-batched (batch count {batch}, each product its own N×K weights and M rows)")
        };
        let kernel = format!(
            "cublasLtMatmul{batched} {} algo id {algo_id} (best of {} heuristic results, rank {}), TN, \
             compute {:?}",
            kind.label,
            results.len(),
            best_idx,
            kind.compute
        );
        Ok(PreparedMatmul {
            call,
            op,
            precision: spec.precision,
            label_suffix: kind.label_suffix.clone(),
            kernel,
            padding,
        })
    }

    /// The scale buffers `kind` needs: per-tensor FP8 scales (1.0 each for A and B) and uniform block scales
    /// for block-scaled FP4 (1.0, so the swizzled layout cannot change the result), sized for every product.
    #[allow(clippy::type_complexity)]
    fn lt_scales(
        &self,
        kind: &LtKind,
        (m, n, k): (usize, usize, usize),
        batch: usize,
    ) -> Result<(Vec<CudaSlice<f32>>, Vec<CudaSlice<u8>>), BackendError> {
        let scale = |values: &[f32]| self.stream.clone_htod(values).map_err(|e| cuda_err("scale", e));
        let tensor_scales = if kind.scale_pointers {
            vec![scale(&[1.0])?, scale(&[1.0])?]
        } else {
            Vec::new()
        };
        let block_scales = if let Some(block) = kind.block_scale {
            // Uniform scales of 1.0: the swizzled layout cannot change the result. Sized generously, for
            // every product.
            let rows = n.max(m).next_multiple_of(128);
            let cols = (k / block.elements).next_multiple_of(4);
            let one = vec![block.one; batch * rows * cols];
            let upload = || {
                self.stream
                    .clone_htod(&one)
                    .map_err(|e| cuda_err("block scales", e))
            };
            vec![upload()?, upload()?]
        } else {
            Vec::new()
        };
        Ok((tensor_scales, block_scales))
    }

    /// The matmul descriptor of `kind`: A transposed, and the scale modes and pointers of its scales (the
    /// descriptor keeps their raw addresses; `LtCall` owns the buffers, so they outlive every call).
    fn lt_desc(
        &self,
        kind: &LtKind,
        tensor_scales: &[CudaSlice<f32>],
        block_scales: &[CudaSlice<u8>],
    ) -> Result<Desc, BackendError> {
        let desc = Desc::new(kind)?;
        // cublasOperation_t: 0 = N, 1 = T.
        let transpose: i32 = 1;
        desc.set(
            lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
            &transpose,
        )?;
        // The descriptor keeps raw addresses; `LtCall` owns the buffers, so they outlive every call, and each
        // call takes their guards again.
        let address = |buffer: &CudaSlice<u8>| buffer.device_ptr(&self.stream).0;
        let tensor_address = |buffer: &CudaSlice<f32>| buffer.device_ptr(&self.stream).0;
        if let [a, b] = tensor_scales {
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                &tensor_address(a),
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                &tensor_address(b),
            )?;
        }
        if let (Some(block), [a, b]) = (kind.block_scale, block_scales) {
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                &block.mode,
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                &block.mode,
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                &address(a),
            )?;
            desc.set(
                lt_sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                &address(b),
            )?;
        }
        Ok(desc)
    }

    /// Up to [`MAX_ALGOS`] of cuBLASLt's heuristic algorithms for `desc` and the layouts, those that succeed
    /// within [`WORKSPACE_BYTES`].
    fn lt_algorithms(
        &self,
        spec: &MatmulSpec,
        desc: &Desc,
        [a_layout, b_layout, d_layout]: [&Layout; 3],
        (batch_req, m, n, k): (u64, usize, usize, usize),
    ) -> Result<Vec<lt_sys::cublasLtMatmulHeuristicResult_t>, BackendError> {
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
            let ran = GemmShape {
                batch: batch_req,
                m: m as u64,
                n: n as u64,
                k: k as u64,
            };
            return Err(BackendError::Unsupported(format!(
                "{} {ran}: cuBLASLt has no algorithm on {} ({}): {status:?}",
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
        Ok(results)
    }

    /// The index of the fastest of `results` on `call`: 5 timed runs each (L2 flushed), median.
    fn best_algorithm(
        &self,
        call: &mut LtCall,
        results: &[lt_sys::cublasLtMatmulHeuristicResult_t],
        workspace: &mut Workspace,
    ) -> Result<usize, BackendError> {
        let mut flush = self.flush_buffer()?;
        let mut best: Option<(usize, f64)> = None;
        for (idx, r) in results.iter().enumerate() {
            check_interruption::<BackendError>()?;
            call.algo = r.algo;
            let mut times = Vec::with_capacity(ALGO_TRIAL_RUNS);
            for _ in 0..ALGO_TRIAL_RUNS {
                times.push(self.time_once(&mut flush, &mut || call.enqueue(self, workspace))?);
            }
            let median = summarize(&times, false).median_s;
            if best.is_none_or(|(_, t)| median < t) {
                best = Some((idx, median));
            }
        }
        drop(flush);
        best.map(|(idx, _)| idx)
            .ok_or_else(|| BackendError::Unsupported("no algorithm could be timed".into()))
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

/// A `set_*_attribute` function of cuBLASLt's `result` layer (descriptor, layout or preference).
type Setter<H, A> = unsafe fn(H, A, *const c_void, usize) -> Result<(), lt::CublasError>;

/// Sets attribute `attr` of the cuBLASLt object `handle` to `value` through `setter`.
///
/// # Safety
/// `handle` is live and `T` is the type the attribute expects.
unsafe fn set_attribute<H, A, T>(
    setter: Setter<H, A>,
    handle: H,
    attr: A,
    value: &T,
) -> Result<(), lt::CublasError> {
    // SAFETY: as the caller promises; `value` points at `size_of::<T>()` readable bytes.
    unsafe {
        setter(
            handle,
            attr,
            (value as *const T).cast::<c_void>(),
            std::mem::size_of::<T>(),
        )
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
        // SAFETY: the descriptor is live; callers pass the attribute's type (i32 enums, device pointers).
        unsafe { set_attribute(lt::set_matmul_desc_attribute, self.0, attr, value) }
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
    /// Column-major `rows × cols` with leading dimension `rows`; `batch` of them one after another (batch
    /// stride `rows · cols` elements) when `batch` is above 1.
    fn new(
        dtype: lt_sys::cudaDataType,
        rows: usize,
        cols: usize,
        batch: usize,
    ) -> Result<Layout, BackendError> {
        let layout = lt::create_matrix_layout(dtype, rows as u64, cols as u64, rows as i64)
            .map(Layout)
            .map_err(|e| cuda_err("layout", e))?;
        if batch > 1 {
            let count = i32::try_from(batch)
                .map_err(|_| BackendError::InvalidInput(format!("a batch of {batch} products")))?;
            let stride = (rows * cols) as i64;
            layout.set(
                lt_sys::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                &count,
            )?;
            layout.set(
                lt_sys::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                &stride,
            )?;
        }
        Ok(layout)
    }

    fn set<T>(&self, attr: lt_sys::cublasLtMatrixLayoutAttribute_t, value: &T) -> Result<(), BackendError> {
        // SAFETY: the layout is live; callers pass the attribute's type (i32 batch count, i64 stride).
        unsafe { set_attribute(lt::set_matrix_layout_attribute, self.0, attr, value) }
            .map_err(|e| BackendError::Unsupported(format!("cuBLASLt rejected {attr:?}: {e:?}")))
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
        // SAFETY: the preference is live; callers pass the attribute's type (u64 sizes).
        unsafe { set_attribute(lt::set_matmul_pref_attribute, self.0, attr, value) }
            .map_err(|e| cuda_err("preference attribute", e))
    }
}

impl Drop for Pref {
    fn drop(&mut self) {
        // SAFETY: created by `create_matmul_pref`, destroyed once.
        let _ = unsafe { lt::destroy_matmul_pref(self.0) };
    }
}
