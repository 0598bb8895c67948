//! The CUDA backend (feature `cuda`; the only file that names `cudarc`). Compiled and type-checked without a
//! GPU; run on an H100 SXM (sm_90, CUDA 13.0 driver, cuBLASLt 13.1) for docs/validation/README.md.
//!
//! - GEMM/GEMV through cuBLASLt's `result` layer: FP32, TF32, FP16, BF16, FP8 E4M3/E5M2 (per-tensor scale
//!   pointers) and INT8 (IMMA, INT32 output); layouts are "TN" (weights `W[N,K]` row-major = column-major
//!   `K×N` transposed, activations `X[M,K]` row-major), so `D[M,N] = X·Wᵀ` row-major.
//! - NVFP4 / MXFP4 block-scaled GEMM on sm_100+ (E2M1 data with uniform block scales of 1.0, so the
//!   swizzled scale layout does not change the result); below sm_100 it is `unsupported`, naming the arch.
//! - INT4 GEMV as W4A16: packed signed INT4 weights with FP16 group scales (group 128) and FP16
//!   activations, an NVRTC kernel labelled `W4A16-dequant`.
//! - DRAM bandwidth with an NVRTC `float4` copy kernel (16 KiB per block).
//!
//! Protocol (docs/research/benchmarking.md §2): seeded random inputs, the output checked against a host
//! reference before timing, best of up to 8 cuBLASLt heuristic algorithms (5 timed runs each, median), an L2
//! flush before every sample without a stream sync in between, CUDA events around the kernel only, warm-up,
//! samples until 1 % noise or the time cap, NVML sampled throughout. The flush *reads* a max(2 × L2, 256 MB)
//! buffer: a memset flush leaves L2 full of dirty lines whose write-back the timed kernel then pays (on an
//! H100 it added 2–9.5 µs to memory-bound kernels, +25 % on a 4096² FP16 GEMV; see docs/validation).
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys as lt_sys;
use cudarc::driver::sys as drv_sys;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use roofline_core::wire::DeviceInfo;
use roofline_core::{OperandPrecisions, Operator, Precision};

use super::nvml::NvmlTelemetry;
use super::{Backend, BackendError, MatmulSpec, Measured, MeasuredBandwidth, match_catalog_key};
use crate::protocol::{
    RunInfo, SampleStats, SamplingPolicy, TelemetrySummary, measurement, random_normal, sample, summarize,
    verify_with,
};

/// cuBLASLt workspace, in bytes (32 MiB, what cudarc uses on sm_90+).
const WORKSPACE_BYTES: usize = 32 << 20;
/// Heuristic algorithms tried per shape.
const MAX_ALGOS: usize = 8;
/// Timed runs per algorithm when picking the best.
const ALGO_TRIAL_RUNS: usize = 5;
/// Weights per FP16 scale in the W4A16 kernel.
const W4A16_GROUP: usize = 128;
/// Headroom kept free on the device, in bytes.
const MEMORY_HEADROOM: u64 = 512 << 20;

const KERNELS_SRC: &str = r#"
__device__ __forceinline__ float h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }

// y[N] = dequant(W[N,K]) . x[K]; W packed 8 signed int4 per u32 (offset binary, q - 8), FP16 scale per 128.
// A warp per row; each lane loads 16 bytes (32 weights) per step, so a warp moves 512 contiguous bytes.
// K is a multiple of 128.
extern "C" __global__ void w4a16_gemv(const uint4* __restrict__ w, const unsigned short* __restrict__ scales,
                                      const uint4* __restrict__ x, unsigned short* __restrict__ y,
                                      int n, int k) {
    int row = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    int lane = threadIdx.x & 31;
    if (row >= n) return;
    const uint4* wrow = w + (size_t)row * (k / 32);
    const unsigned short* srow = scales + (size_t)row * (k / 128);
    float acc = 0.0f;
    #pragma unroll 4
    for (int v = lane; v < k / 32; v += 32) {
        uint4 p = __ldg(wrow + v);
        unsigned int words[4] = {p.x, p.y, p.z, p.w};
        float part = 0.0f;
        #pragma unroll
        for (int q = 0; q < 4; ++q) {
            uint4 xx = __ldg(x + v * 4 + q);
            unsigned int xs[4] = {xx.x, xx.y, xx.z, xx.w};
            #pragma unroll
            for (int j = 0; j < 8; ++j) {
                unsigned short h = (unsigned short)(xs[j >> 1] >> (16 * (j & 1)));
                part += (float)((int)((words[q] >> (4 * j)) & 0xFu) - 8) * h2f(h);
            }
        }
        acc += h2f(srow[v >> 2]) * part;
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) y[row] = f2h(acc);
}

// dst = src: each block copies 4 x 256 16-byte values (16 KiB), each thread four of them, all loads issued
// before the stores. One block per tile rather than a grid-stride loop (as PyTorch's elementwise copy).
extern "C" __global__ void copy_f4(const float4* __restrict__ src, float4* __restrict__ dst, unsigned long long n) {
    unsigned long long base = (unsigned long long)blockIdx.x * (4 * blockDim.x) + threadIdx.x;
    float4 v[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned long long i = base + (unsigned long long)j * blockDim.x;
        if (i < n) v[j] = src[i];
    }
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned long long i = base + (unsigned long long)j * blockDim.x;
        if (i < n) dst[i] = v[j];
    }
}

// L2 flush by reading: evicts every line (dirty ones are written back now, outside the timed region) and
// leaves L2 full of clean lines, so the timed kernel pays no write-back. `sink` is written only if the
// all-zero buffer sums to 1, i.e. never; the condition keeps the loads alive.
extern "C" __global__ void flush_read(const float4* __restrict__ buf, unsigned long long n, float* sink) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float4 v = buf[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1.0f) *sink = acc;
}
"#;

fn cuda_err(context: &str, e: impl std::fmt::Debug) -> BackendError {
    BackendError::Cuda(format!("{context}: {e:?}"))
}

/// A cuBLASLt handle destroyed on drop.
struct LtHandle(lt_sys::cublasLtHandle_t);

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

/// NVRTC-compiled kernels, loaded once.
struct Kernels {
    w4a16: CudaFunction,
    copy: CudaFunction,
    flush_read: CudaFunction,
}

/// The L2 flush run before every timed sample.
struct Flush {
    buf: CudaSlice<u8>,
    sink: CudaSlice<f32>,
    n4: u64,
    cfg: LaunchConfig,
    kernel: CudaFunction,
}

/// The CUDA device 0.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    lt: LtHandle,
    kernels: Mutex<Option<Arc<Kernels>>>,
    name: String,
    cc: (i32, i32),
    sm_count: u32,
    l2_bytes: usize,
    total_mem: u64,
    versions: Vec<(String, String)>,
    nvml: Option<Arc<NvmlTelemetry>>,
    policy: SamplingPolicy,
}

impl CudaBackend {
    /// Opens device 0 after checking that the driver, cuBLASLt and NVRTC libraries load (cudarc panics on
    /// first use of a missing library; the caller also wraps this in `catch_unwind`).
    ///
    /// # Errors
    /// Why the CUDA backend cannot be used.
    pub fn open() -> Result<CudaBackend, String> {
        // SAFETY: `is_culib_present` only attempts to dlopen the library; it calls no CUDA function.
        if !unsafe { drv_sys::is_culib_present() } {
            return Err("libcuda not found (no NVIDIA driver)".into());
        }
        // SAFETY: as above.
        if !unsafe { lt_sys::is_culib_present() } {
            return Err(
                "libcublasLt not found (install the CUDA toolkit or the cuBLAS redistributable)".into(),
            );
        }
        // SAFETY: as above.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err("libcublas not found".into());
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err("libnvrtc not found (needed for the W4A16 and copy kernels)".into());
        }
        let ctx = CudaContext::new(0).map_err(|e| format!("cannot open CUDA device 0: {e:?}"))?;
        let stream = ctx.default_stream();
        let handle = lt::create_handle().map_err(|e| format!("cublasLtCreate failed: {e:?}"))?;
        let name = ctx.name().unwrap_or_else(|_| "CUDA device 0".into());
        let cc = ctx
            .compute_capability()
            .map_err(|e| format!("compute capability: {e:?}"))?;
        let attr = |a| ctx.attribute(a).unwrap_or(0);
        let sm_count = u32::try_from(attr(
            drv_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        ))
        .unwrap_or(0);
        let l2_bytes = usize::try_from(attr(
            drv_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        ))
        .unwrap_or(0);
        let (_, total) = ctx.mem_get_info().map_err(|e| format!("cuMemGetInfo: {e:?}"))?;
        let nvml = NvmlTelemetry::open().ok();
        let mut versions = vec![("endpoint".to_owned(), env!("CARGO_PKG_VERSION").to_owned())];
        let mut driver_version = 0i32;
        // SAFETY: cuDriverGetVersion writes one int to a valid pointer.
        if unsafe { drv_sys::cuDriverGetVersion(&mut driver_version) } == drv_sys::CUresult::CUDA_SUCCESS {
            versions.push((
                "cuda_driver_api".into(),
                format!("{}.{}", driver_version / 1000, (driver_version % 1000) / 10),
            ));
        }
        // SAFETY: cublasLtGetVersion takes no arguments; the library is present (checked above).
        let lt_version = unsafe { lt_sys::cublasLtGetVersion() };
        versions.push((
            "cublasLt".into(),
            format!(
                "{}.{}.{}",
                lt_version / 10_000,
                (lt_version / 100) % 100,
                lt_version % 100
            ),
        ));
        let (mut major, mut minor) = (0i32, 0i32);
        // SAFETY: nvrtcVersion writes two ints to valid pointers.
        if unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
            == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS
        {
            versions.push(("nvrtc".into(), format!("{major}.{minor}")));
        }
        versions.push(("cudarc_bindings".into(), "cuda-12080".into()));
        if let Some(n) = &nvml {
            versions.extend(n.versions());
        }
        Ok(CudaBackend {
            ctx,
            stream,
            lt: LtHandle(handle),
            kernels: Mutex::new(None),
            name,
            cc,
            sm_count,
            l2_bytes,
            total_mem: total as u64,
            versions,
            nvml,
            policy: SamplingPolicy::gpu(),
        })
    }

    fn arch(&self) -> String {
        format!("sm_{}{}", self.cc.0, self.cc.1)
    }

    fn kernels(&self) -> Result<Arc<Kernels>, BackendError> {
        let mut slot = self
            .kernels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(k) = slot.as_ref() {
            return Ok(k.clone());
        }
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(
            KERNELS_SRC,
            cudarc::nvrtc::CompileOptions {
                options: vec!["-std=c++14".into()],
                ..Default::default()
            },
        )
        .map_err(|e| cuda_err("NVRTC compile", e))?;
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| cuda_err("load module", e))?;
        let kernels = Arc::new(Kernels {
            w4a16: module
                .load_function("w4a16_gemv")
                .map_err(|e| cuda_err("load w4a16_gemv", e))?,
            copy: module
                .load_function("copy_f4")
                .map_err(|e| cuda_err("load copy_f4", e))?,
            flush_read: module
                .load_function("flush_read")
                .map_err(|e| cuda_err("load flush_read", e))?,
        });
        *slot = Some(kernels.clone());
        Ok(kernels)
    }

    fn run_info(&self, library: String, kernel: String, verified: bool, padding: Option<String>) -> RunInfo {
        RunInfo {
            backend: "cuda".into(),
            library,
            kernel,
            device_name: self.name.clone(),
            versions: self.versions.clone(),
            flushed: true,
            verified,
            padding,
        }
    }

    /// A zeroed buffer of max(2 × L2, 256 MB) and the kernel that reads it (see `flush_read`).
    fn flush_buffer(&self) -> Result<Flush, BackendError> {
        let bytes = (2 * self.l2_bytes).max(256 << 20).next_multiple_of(16);
        let buf = self
            .stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| cuda_err("flush buffer", e))?;
        let sink = self
            .stream
            .alloc_zeros::<f32>(1)
            .map_err(|e| cuda_err("flush sink", e))?;
        Ok(Flush {
            buf,
            sink,
            n4: (bytes / 16) as u64,
            cfg: LaunchConfig {
                grid_dim: (self.sm_count.max(1) * 8, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            },
            kernel: self.kernels()?.flush_read.clone(),
        })
    }

    /// Times `launch` with CUDA events: flush (async, no sync), start, launch, stop.
    fn time_once(
        &self,
        flush: &mut Flush,
        launch: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<f64, BackendError> {
        let flags = Some(drv_sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.ctx.new_event(flags).map_err(|e| cuda_err("event", e))?;
        let stop = self.ctx.new_event(flags).map_err(|e| cuda_err("event", e))?;
        let mut builder = self.stream.launch_builder(&flush.kernel);
        builder.arg(&flush.buf).arg(&flush.n4).arg(&mut flush.sink);
        // SAFETY: `buf` holds n4 16-byte values (its size is a multiple of 16, the allocation 256-byte
        // aligned); `sink` is one f32.
        unsafe { builder.launch(flush.cfg) }.map_err(|e| cuda_err("flush", e))?;
        start.record(&self.stream).map_err(|e| cuda_err("record", e))?;
        launch()?;
        stop.record(&self.stream).map_err(|e| cuda_err("record", e))?;
        let ms = start.elapsed_ms(&stop).map_err(|e| cuda_err("elapsed", e))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// The protocol around a launch closure, with NVML sampled throughout.
    fn protocol(
        &self,
        launch: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<(SampleStats, TelemetrySummary), BackendError> {
        let mut flush = self.flush_buffer()?;
        let mut run = || sample(&self.policy, || Ok(()), || self.time_once(&mut flush, launch));
        match &self.nvml {
            Some(nvml) => {
                let (stats, telemetry) = nvml.sample_during(run);
                Ok((stats?, telemetry))
            }
            None => Ok((run()?, TelemetrySummary::default())),
        }
    }

    fn measure_lt(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
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

    fn measure_w4a16(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        if spec.m > 1 {
            return Err(BackendError::Unsupported(format!(
                "INT4 GEMM (M = {}) has no native tensor path on {} ({}); only the W4A16 GEMV (M = 1) is implemented",
                spec.m,
                self.arch(),
                self.name
            )));
        }
        let (n, k_req) = (to_usize(spec.n)?, to_usize(spec.k)?);
        let k = k_req.next_multiple_of(W4A16_GROUP);
        let padding = (k != k_req).then(|| format!("K {k_req} padded to {k} (group size {W4A16_GROUP})"));
        let seed = spec.n ^ (spec.k << 32) ^ 0x4a16;
        let noise = random_normal(seed, n * k);
        let q: Vec<i8> = noise
            .iter()
            .map(|v| ((v * 3.0).round() as i32).clamp(-8, 7) as i8)
            .collect();
        let packed: Vec<u32> = q
            .chunks(8)
            .map(|c| {
                c.iter().enumerate().fold(0u32, |acc, (j, &v)| {
                    acc | ((u32::from((v + 8) as u8) & 0xF) << (4 * j))
                })
            })
            .collect();
        let scales: Vec<half::f16> = random_normal(seed + 1, n * k / W4A16_GROUP)
            .iter()
            .map(|v| half::f16::from_f32(0.01 + v.abs() * 0.01))
            .collect();
        let x: Vec<half::f16> = random_normal(seed + 2, k)
            .iter()
            .map(|&v| half::f16::from_f32(v))
            .collect();
        let kernels = self.kernels()?;
        let w_dev = self
            .stream
            .clone_htod(&packed)
            .map_err(|e| cuda_err("upload", e))?;
        let s_dev = self
            .stream
            .clone_htod(&scales)
            .map_err(|e| cuda_err("upload", e))?;
        let x_dev = self.stream.clone_htod(&x).map_err(|e| cuda_err("upload", e))?;
        let mut y_dev = self
            .stream
            .alloc_zeros::<half::f16>(n)
            .map_err(|e| cuda_err("alloc", e))?;
        let (n_i, k_i) = (
            i32::try_from(n).map_err(|_| BackendError::InvalidInput("N too large".into()))?,
            i32::try_from(k).map_err(|_| BackendError::InvalidInput("K too large".into()))?,
        );
        let threads = 256u32;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from((n * 32).div_ceil(threads as usize)).unwrap_or(u32::MAX),
                1,
                1,
            ),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = |y_dev: &mut CudaSlice<half::f16>| -> Result<(), BackendError> {
            let mut builder = self.stream.launch_builder(&kernels.w4a16);
            builder
                .arg(&w_dev)
                .arg(&s_dev)
                .arg(&x_dev)
                .arg(y_dev)
                .arg(&n_i)
                .arg(&k_i);
            // SAFETY: the kernel reads N·K/8 u32 words, N·K/128 scales and K activations and writes N
            // outputs — exactly the sizes allocated above; K is a multiple of 128 (padded).
            unsafe { builder.launch(cfg) }
                .map(|_| ())
                .map_err(|e| cuda_err("w4a16_gemv launch", e))
        };
        launch(&mut y_dev)?;
        let y = self
            .stream
            .clone_dtoh(&y_dev)
            .map_err(|e| cuda_err("download", e))?;
        verify_with(
            (1, n, k),
            |_, kk| f64::from(x[kk].to_f32()),
            |kk, j| f64::from(scales[(j * k + kk) / W4A16_GROUP].to_f32()) * f64::from(q[j * k + kk]),
            |_, j| f64::from(y[j].to_f32()),
            1e-2,
            seed,
        )
        .map_err(BackendError::Verification)?;
        let (stats, telemetry) = self.protocol(&mut || launch(&mut y_dev))?;
        // INT4 with an FP16 scale per 128 weights: 4.125 bits per weight, the scales counted as traffic.
        let operands = OperandPrecisions {
            weight: Precision::Int4G128,
            activation: Precision::Fp16,
            output: Precision::Fp16,
        };
        let op = Operator::gemv(n as u64, k as u64, operands)
            .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        let kernel = format!(
            "W4A16-dequant (NVRTC w4a16_gemv: INT4 weights, FP16 scale per {W4A16_GROUP}, FP16 x/y, FP32 accumulate, warp per row, 16-byte loads)"
        );
        Ok(Measured {
            op,
            precision: Precision::Int4,
            label_suffix: " W4A16-dequant".into(),
            measurement: measurement(
                self.run_info("NVRTC".into(), kernel, true, padding),
                &stats,
                telemetry,
            ),
        })
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> &'static str {
        "cuda"
    }

    fn device_info(&self) -> DeviceInfo {
        let free = self.ctx.mem_get_info().ok().map(|(free, _)| free as f64 / 1e6);
        let (sm_max, mem_max) = self.nvml.as_ref().map_or((None, None), |n| n.max_clocks_mhz());
        DeviceInfo {
            backend: "cuda".into(),
            name: self.name.clone(),
            arch: self.arch(),
            compute_capability: Some([
                u32::try_from(self.cc.0).unwrap_or(0),
                u32::try_from(self.cc.1).unwrap_or(0),
            ]),
            memory_total_mb: self.total_mem as f64 / 1e6,
            memory_free_mb: free,
            sm_count: Some(self.sm_count),
            cpu_cores: None,
            sm_clock_max_mhz: sm_max,
            mem_clock_max_mhz: mem_max,
            l2_mb: Some(self.l2_bytes as f64 / 1e6),
            versions: self.versions.clone(),
            matched_key: match_catalog_key(&self.name),
            measurable_precisions: self.measurable(),
        }
    }

    fn measurable(&self) -> Vec<Precision> {
        Precision::ALL
            .into_iter()
            .filter(|&p| p == Precision::Int4 || LtKind::of(p, self.cc).is_ok())
            .collect()
    }

    fn memory_budget_bytes(&self) -> u64 {
        let free = self.ctx.mem_get_info().map_or(0, |(free, _)| free as u64);
        let fixed = (WORKSPACE_BYTES + (2 * self.l2_bytes).max(256 << 20)) as u64;
        free.saturating_sub(MEMORY_HEADROOM + fixed)
    }

    fn measure_matmul(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        if spec.precision == Precision::Int4 {
            self.measure_w4a16(spec)
        } else {
            self.measure_lt(spec)
        }
    }

    fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError> {
        let kernels = self.kernels()?;
        let free = self.ctx.mem_get_info().map_or(0, |(free, _)| free);
        let bytes = (8 * self.l2_bytes).max(1 << 30).min(free / 4) / 16 * 16;
        let n4 = bytes / 16;
        let src_host = random_normal(11, bytes / 4);
        let src = self
            .stream
            .clone_htod(&src_host)
            .map_err(|e| cuda_err("upload", e))?;
        let mut dst = self
            .stream
            .alloc_zeros::<f32>(bytes / 4)
            .map_err(|e| cuda_err("alloc", e))?;
        let n4_u64 = n4 as u64;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(n4.div_ceil(4 * 256))
                    .map_err(|_| BackendError::InvalidInput("copy buffer too large".into()))?,
                1,
                1,
            ),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = |dst: &mut CudaSlice<f32>| -> Result<(), BackendError> {
            let mut builder = self.stream.launch_builder(&kernels.copy);
            builder.arg(&src).arg(dst).arg(&n4_u64);
            // SAFETY: src and dst hold `bytes` bytes = n4 float4 values each (16-byte aligned allocations).
            unsafe { builder.launch(cfg) }
                .map(|_| ())
                .map_err(|e| cuda_err("copy_f4 launch", e))
        };
        launch(&mut dst)?;
        let back = self
            .stream
            .clone_dtoh(&dst)
            .map_err(|e| cuda_err("download", e))?;
        if back != src_host {
            return Err(BackendError::Verification(
                "copy kernel output differs from its input".into(),
            ));
        }
        let (stats, telemetry) = self.protocol(&mut || launch(&mut dst))?;
        let kernel = format!(
            "NVRTC copy_f4 float4 copy (16 KiB per block), {} MiB → {} MiB",
            bytes >> 20,
            bytes >> 20
        );
        Ok(MeasuredBandwidth {
            bytes: 2.0 * bytes as f64,
            measurement: measurement(
                self.run_info("NVRTC".into(), kernel, true, None),
                &stats,
                telemetry,
            ),
        })
    }

    fn calibration_shape(&self, precision: Precision) -> (u64, u64, u64) {
        if precision == Precision::Int4 {
            (1, 16_384, 16_384)
        } else {
            (8192, 8192, 8192)
        }
    }
}

fn to_usize(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidInput(format!("{v} does not fit in memory")))
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

/// Element formats the cuBLASLt path moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    F32,
    F16,
    Bf16,
    E4M3,
    E5M2,
    I8,
    I32,
    /// E2M1 packed two per byte.
    E2M1,
}

/// A host buffer in one of the formats.
enum HostBuf {
    F32(Vec<f32>),
    F16(Vec<half::f16>),
    Bf16(Vec<half::bf16>),
    U8(Vec<u8>, Elem),
    I8(Vec<i8>),
    I32(Vec<i32>),
}

/// A device buffer in one of the formats.
enum DeviceBuf {
    F32(CudaSlice<f32>),
    F16(CudaSlice<half::f16>),
    Bf16(CudaSlice<half::bf16>),
    U8(CudaSlice<u8>, Elem),
    I8(CudaSlice<i8>),
    I32(CudaSlice<i32>),
}

fn e2m1_decode(code: u8) -> f32 {
    const MAG: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let m = MAG[usize::from(code & 7)];
    if code & 8 != 0 { -m } else { m }
}

fn e2m1_encode(v: f32) -> u8 {
    (0u8..16)
        .min_by(|&a, &b| (e2m1_decode(a) - v).abs().total_cmp(&(e2m1_decode(b) - v).abs()))
        .unwrap_or(2)
}

impl Elem {
    fn cuda_type(self) -> lt_sys::cudaDataType {
        use lt_sys::cudaDataType_t as T;
        match self {
            Elem::F32 => T::CUDA_R_32F,
            Elem::F16 => T::CUDA_R_16F,
            Elem::Bf16 => T::CUDA_R_16BF,
            Elem::E4M3 => T::CUDA_R_8F_E4M3,
            Elem::E5M2 => T::CUDA_R_8F_E5M2,
            Elem::I8 => T::CUDA_R_8I,
            Elem::I32 => T::CUDA_R_32I,
            Elem::E2M1 => T::CUDA_R_4F_E2M1,
        }
    }

    fn encode(self, values: &[f32]) -> HostBuf {
        match self {
            Elem::F32 | Elem::I32 => HostBuf::F32(values.to_vec()),
            Elem::F16 => HostBuf::F16(values.iter().map(|&v| half::f16::from_f32(v)).collect()),
            Elem::Bf16 => HostBuf::Bf16(values.iter().map(|&v| half::bf16::from_f32(v)).collect()),
            Elem::E4M3 => HostBuf::U8(
                values
                    .iter()
                    .map(|&v| float8::F8E4M3::from_f32(v).to_bits())
                    .collect(),
                self,
            ),
            Elem::E5M2 => HostBuf::U8(
                values
                    .iter()
                    .map(|&v| float8::F8E5M2::from_f32(v).to_bits())
                    .collect(),
                self,
            ),
            Elem::I8 => HostBuf::I8(
                values
                    .iter()
                    .map(|&v| (v * 32.0).round().clamp(-127.0, 127.0) as i8)
                    .collect(),
            ),
            Elem::E2M1 => HostBuf::U8(
                values
                    .chunks(2)
                    .map(|c| e2m1_encode(c[0]) | (c.get(1).map_or(0, |&v| e2m1_encode(v)) << 4))
                    .collect(),
                self,
            ),
        }
    }

    fn zeros(self, stream: &Arc<CudaStream>, n: usize) -> Result<DeviceBuf, BackendError> {
        let e = |e| cuda_err("alloc", e);
        Ok(match self {
            Elem::F32 => DeviceBuf::F32(stream.alloc_zeros(n).map_err(e)?),
            Elem::F16 => DeviceBuf::F16(stream.alloc_zeros(n).map_err(e)?),
            Elem::Bf16 => DeviceBuf::Bf16(stream.alloc_zeros(n).map_err(e)?),
            Elem::I32 => DeviceBuf::I32(stream.alloc_zeros(n).map_err(e)?),
            Elem::I8 => DeviceBuf::I8(stream.alloc_zeros(n).map_err(e)?),
            Elem::E4M3 | Elem::E5M2 => DeviceBuf::U8(stream.alloc_zeros(n).map_err(e)?, self),
            Elem::E2M1 => DeviceBuf::U8(stream.alloc_zeros(n.div_ceil(2)).map_err(e)?, self),
        })
    }
}

impl HostBuf {
    fn get(&self, idx: usize) -> f64 {
        match self {
            HostBuf::F32(v) => f64::from(v[idx]),
            HostBuf::F16(v) => f64::from(v[idx].to_f32()),
            HostBuf::Bf16(v) => f64::from(v[idx].to_f32()),
            HostBuf::I8(v) => f64::from(v[idx]),
            HostBuf::I32(v) => f64::from(v[idx]),
            HostBuf::U8(v, Elem::E4M3) => f64::from(float8::F8E4M3::from_bits(v[idx]).to_f32()),
            HostBuf::U8(v, Elem::E5M2) => f64::from(float8::F8E5M2::from_bits(v[idx]).to_f32()),
            HostBuf::U8(v, _) => f64::from(e2m1_decode((v[idx / 2] >> (4 * (idx % 2))) & 0xF)),
        }
    }

    fn upload(&self, stream: &Arc<CudaStream>) -> Result<DeviceBuf, BackendError> {
        let e = |e| cuda_err("upload", e);
        Ok(match self {
            HostBuf::F32(v) => DeviceBuf::F32(stream.clone_htod(v).map_err(e)?),
            HostBuf::F16(v) => DeviceBuf::F16(stream.clone_htod(v).map_err(e)?),
            HostBuf::Bf16(v) => DeviceBuf::Bf16(stream.clone_htod(v).map_err(e)?),
            HostBuf::I8(v) => DeviceBuf::I8(stream.clone_htod(v).map_err(e)?),
            HostBuf::I32(v) => DeviceBuf::I32(stream.clone_htod(v).map_err(e)?),
            HostBuf::U8(v, elem) => DeviceBuf::U8(stream.clone_htod(v).map_err(e)?, *elem),
        })
    }
}

/// Anything held until a pointer's use is enqueued (cudarc's `SyncOnDrop` guards).
trait Held {}
impl<T> Held for T {}
type PtrGuard<'a> = Box<dyn Held + 'a>;

impl DeviceBuf {
    fn ptr<'a>(&'a self, stream: &'a Arc<CudaStream>) -> (drv_sys::CUdeviceptr, PtrGuard<'a>) {
        fn boxed<'a, T: DeviceRepr>(
            s: &'a CudaSlice<T>,
            stream: &'a Arc<CudaStream>,
        ) -> (drv_sys::CUdeviceptr, PtrGuard<'a>) {
            let (p, g) = s.device_ptr(stream);
            (p, Box::new(g))
        }
        match self {
            DeviceBuf::F32(s) => boxed(s, stream),
            DeviceBuf::F16(s) => boxed(s, stream),
            DeviceBuf::Bf16(s) => boxed(s, stream),
            DeviceBuf::U8(s, _) => boxed(s, stream),
            DeviceBuf::I8(s) => boxed(s, stream),
            DeviceBuf::I32(s) => boxed(s, stream),
        }
    }

    fn ptr_mut<'a>(&'a mut self, stream: &'a Arc<CudaStream>) -> (drv_sys::CUdeviceptr, PtrGuard<'a>) {
        fn boxed<'a, T: DeviceRepr>(
            s: &'a mut CudaSlice<T>,
            stream: &'a Arc<CudaStream>,
        ) -> (drv_sys::CUdeviceptr, PtrGuard<'a>) {
            let (p, g) = s.device_ptr_mut(stream);
            (p, Box::new(g))
        }
        match self {
            DeviceBuf::F32(s) => boxed(s, stream),
            DeviceBuf::F16(s) => boxed(s, stream),
            DeviceBuf::Bf16(s) => boxed(s, stream),
            DeviceBuf::U8(s, _) => boxed(s, stream),
            DeviceBuf::I8(s) => boxed(s, stream),
            DeviceBuf::I32(s) => boxed(s, stream),
        }
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<HostBuf, BackendError> {
        let e = |e| cuda_err("download", e);
        Ok(match self {
            DeviceBuf::F32(s) => HostBuf::F32(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::F16(s) => HostBuf::F16(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::Bf16(s) => HostBuf::Bf16(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::U8(s, elem) => HostBuf::U8(stream.clone_dtoh(s).map_err(e)?, *elem),
            DeviceBuf::I8(s) => HostBuf::I8(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::I32(s) => HostBuf::I32(stream.clone_dtoh(s).map_err(e)?),
        })
    }
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
struct LtKind {
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
    fn of(precision: Precision, cc: (i32, i32)) -> Result<LtKind, String> {
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
