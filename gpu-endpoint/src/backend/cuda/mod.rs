//! The CUDA backend (feature `cuda`; the only module that names `cudarc`), type-checked without a GPU. What it
//! measures and its protocol: gpu-endpoint/README.md (Backends, Measurement protocol). Everything runs on one
//! stream of its own with cudarc's event tracking off ([`CudaBackend::open`]).
//!
//! Modules: this one opens the device and implements [`Backend`]; `gemm` drives cuBLASLt (per-precision
//! configuration in `lt_kind`), `buffers` holds element formats and buffers, `inputs` writes seeded inputs on
//! the device, `nvrtc` compiles NVRTC sources (W4A16 GEMV and copy in `kernels.cu`), `step_ops` runs a step's
//! vector operators, `attention` its fused attention, `quantize` its run-time quantization, `sequence` times a
//! whole step in a CUDA graph, `timing` is the L2 flush and CUDA-event protocol. NVML is `super::nvml`.

#![allow(unsafe_code)]

mod attention;
mod buffers;
mod gemm;
mod inputs;
mod launch;
mod lt_kind;
mod nvrtc;
mod quantize;
mod sequence;
mod step_ops;
mod timing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys as lt_sys;
use cudarc::driver::sys as drv_sys;
use cudarc::driver::{CudaContext, CudaModule, CudaStream};
use roofline_core::measured_device::catalog_key_of_device_name;
use roofline_core::wire::{BackendKind, DeviceInfo};
use roofline_core::{GemmShape, Operator, Precision};

use self::gemm::{LtHandle, WORKSPACE_BYTES};
use self::lt_kind::LtKind;
use self::nvrtc::Kernels;
use super::nvml::NvmlTelemetry;
use super::{Backend, BackendError, MatmulSpec, Measured, MeasuredBandwidth, StepTiming};
use crate::protocol::{RunInfo, SamplingPolicy};

/// Headroom kept free on the device, in bytes.
const MEMORY_HEADROOM: u64 = 512 << 20;

pub(super) fn cuda_err(context: &str, e: impl std::fmt::Debug) -> BackendError {
    BackendError::Cuda(format!("{context}: {e:?}"))
}

/// A CUDA UUID as `nvidia-smi -L` prints it: `GPU-` and 16 bytes of hex in 8-4-4-4-12 groups.
fn gpu_uuid(bytes: &[std::ffi::c_char; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|&b| format!("{:02x}", b as u8)).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..].concat()
    )
}

pub(super) fn to_usize(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidInput(format!("{v} does not fit in memory")))
}

/// The CUDA device 0.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    /// The one stream of every allocation, copy, launch, cuBLASLt call and event (see [`CudaBackend::open`]).
    stream: Arc<CudaStream>,
    lt: LtHandle,
    kernels: Mutex<Option<Arc<Kernels>>>,
    step_module: Mutex<Option<Arc<CudaModule>>>,
    /// Modules compiled for this architecture with macros (attention configurations, quantization), by key.
    variant_modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    name: String,
    /// The GPU's UUID as `nvidia-smi -L` prints it (`GPU-…`), when the driver reports one.
    uuid: Option<String>,
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
    /// [`BackendError::Unavailable`]: why the CUDA backend cannot be used.
    pub fn open() -> Result<CudaBackend, BackendError> {
        // SAFETY: `is_culib_present` only attempts to dlopen the library; it calls no CUDA function.
        if !unsafe { drv_sys::is_culib_present() } {
            return Err(BackendError::Unavailable(
                "libcuda not found (no NVIDIA driver)".into(),
            ));
        }
        // SAFETY: as above.
        if !unsafe { lt_sys::is_culib_present() } {
            return Err(BackendError::Unavailable(
                "libcublasLt not found (install the CUDA toolkit or the cuBLAS redistributable)".into(),
            ));
        }
        // SAFETY: as above.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(BackendError::Unavailable("libcublas not found".into()));
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(BackendError::Unavailable(
                "libnvrtc not found (needed for the W4A16, copy and step kernels)".into(),
            ));
        }
        let ctx = CudaContext::new(0)
            .map_err(|e| BackendError::Unavailable(format!("cannot open CUDA device 0: {e:?}")))?;
        // One stream for everything, made here rather than the legacy NULL stream, which cannot be captured into
        // a CUDA graph (`sequence`). With one stream, stream order alone orders all work. cudarc's per-buffer
        // event tracking (active as soon as `new_stream` has been called) would only add event records and
        // waits, and a wait on an event recorded before a capture began is illegal inside it; so it is off,
        // before the stream and the first allocation.
        // SAFETY: the contract is about several streams: no buffer of this context is ever used on a stream
        // other than `stream`, so no cross-stream synchronization is missing.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(|e| BackendError::Unavailable(format!("cannot create a CUDA stream: {e:?}")))?;
        let handle = lt::create_handle()
            .map_err(|e| BackendError::Unavailable(format!("cublasLtCreate failed: {e:?}")))?;
        let name = ctx.name().unwrap_or_else(|_| "CUDA device 0".into());
        let uuid = ctx.uuid().ok().map(|id| gpu_uuid(&id.bytes));
        let cc = ctx
            .compute_capability()
            .map_err(|e| BackendError::Unavailable(format!("compute capability: {e:?}")))?;
        let attr = |a| ctx.attribute(a).unwrap_or(0);
        let sm_count = u32::try_from(attr(
            drv_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        ))
        .unwrap_or(0);
        let l2_bytes = usize::try_from(attr(
            drv_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        ))
        .unwrap_or(0);
        let (_, total) = ctx
            .mem_get_info()
            .map_err(|e| BackendError::Unavailable(format!("cuMemGetInfo: {e:?}")))?;
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
            step_module: Mutex::new(None),
            variant_modules: Mutex::new(HashMap::new()),
            name,
            uuid,
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

    fn run_info(&self, library: String, kernel: String, verified: bool, padding: Option<String>) -> RunInfo {
        RunInfo {
            backend: BackendKind::Cuda,
            library,
            kernel,
            device_name: self.name.clone(),
            versions: self.versions.clone(),
            flushed: true,
            verified,
            padding,
        }
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    /// The GPU's UUID (unique per board, so two GPUs of one model lock apart), else the device name.
    fn device_id(&self) -> String {
        self.uuid.clone().unwrap_or_else(|| format!("cuda-{}", self.name))
    }

    fn device_info(&self) -> DeviceInfo {
        let free = self.ctx.mem_get_info().ok().map(|(free, _)| free as f64);
        let (sm_max, mem_max) = self.nvml.as_ref().map_or((None, None), |n| n.max_clocks_mhz());
        DeviceInfo {
            backend: BackendKind::Cuda,
            name: self.name.clone(),
            arch: self.arch(),
            compute_capability: Some([
                u32::try_from(self.cc.0).unwrap_or(0),
                u32::try_from(self.cc.1).unwrap_or(0),
            ]),
            memory_total_bytes: self.total_mem as f64,
            memory_free_bytes: free,
            sm_count: Some(self.sm_count),
            cpu_cores: None,
            sm_clock_max_mhz: sm_max,
            mem_clock_max_mhz: mem_max,
            l2_bytes: Some(self.l2_bytes as f64),
            versions: self.versions.clone(),
            matched_key: catalog_key_of_device_name(&self.name).map(str::to_owned),
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
        if spec.precision == Precision::Int4 && spec.shape.batch != 1 {
            Err(BackendError::Unsupported(format!(
                "INT4 runs as the W4A16 GEMV on {} ({}), one product: no batched INT4 kernel (batch {})",
                self.arch(),
                self.name,
                spec.shape.batch
            )))
        } else if spec.precision == Precision::Int4 {
            self.measure_w4a16(spec)
        } else {
            self.measure_lt(spec)
        }
    }

    fn required_operator_bytes(&self, op: &Operator) -> u64 {
        step_ops::required_bytes(op)
    }

    fn measure_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        self.measure_step_operator(op)
    }

    fn measure_step(&self, ops: &[Operator], schedule: &[usize]) -> Result<StepTiming, BackendError> {
        self.measure_sequence(ops, schedule)
    }

    fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError> {
        self.measure_copy()
    }

    fn calibration_shape(&self, precision: Precision) -> GemmShape {
        if precision == Precision::Int4 {
            GemmShape::matmul(1, 16_384, 16_384)
        } else {
            GemmShape::matmul(8192, 8192, 8192)
        }
    }
}
