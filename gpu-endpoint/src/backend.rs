//! Measurement backends behind one trait, chosen at run time: `cuda` (feature `cuda`, a driver, cuBLASLt and
//! NVRTC present), `cpu` (the host, always available) and `fake` (deterministic, for tests).
//!
//! This is the only file with `cfg(feature = "cuda")`. [`Device`] wraps the chosen backend with the
//! one-at-a-time lock, the memory guard and a `catch_unwind` net so no panic reaches a client.

pub mod cpu;
pub mod cpu_ops;
#[cfg(feature = "cuda")]
mod cuda;
pub mod fake;
pub mod nvml;
mod step_reference;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use roofline_core::wire::{
    BackendKind, Bottleneck, DeviceInfo, ErrorCode, Failure, Measurement, NvmlStatus, RooflinePoint,
};
use roofline_core::{OperandPrecisions, Operator, Precision};

/// The largest M, N or K accepted for a measurement.
pub const MAX_MEASURE_DIM: u64 = 65_536;

/// Why a backend produced no measurement.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// The device cannot run this precision natively (the message names the architecture).
    #[error("{0}")]
    Unsupported(String),
    /// The buffers would not fit (checked before any allocation).
    #[error("{0}")]
    TooLarge(String),
    /// Bad shape.
    #[error("{0}")]
    InvalidInput(String),
    /// Another measurement holds the device.
    #[error("the device is busy")]
    Busy,
    /// The point ran past its time cap (`--max-point-seconds`) and was stopped.
    #[error("{0}")]
    TimeLimit(String),
    /// The measurement was cancelled (its client went away, or its job was cancelled).
    #[error("the measurement was cancelled")]
    Cancelled,
    /// No device / library.
    #[error("{0}")]
    Unavailable(String),
    /// A CUDA driver, cuBLASLt or NVRTC call failed.
    #[error("CUDA failure: {0}")]
    Cuda(String),
    /// The kernel's output did not match the reference.
    #[error("output check failed: {0}")]
    Verification(String),
    /// The backend panicked (caught).
    #[error("backend panicked: {0}")]
    Panicked(String),
}

impl BackendError {
    /// The error with the operator `name` in front of its message, unless the message already names it (a
    /// step's preparation fails on one of its operators).
    #[must_use]
    pub fn naming(self, name: &str) -> BackendError {
        let prefix = |message: String| {
            if message.contains(name) {
                message
            } else {
                format!("{name}: {message}")
            }
        };
        match self {
            BackendError::Unsupported(m) => BackendError::Unsupported(prefix(m)),
            BackendError::TooLarge(m) => BackendError::TooLarge(prefix(m)),
            BackendError::InvalidInput(m) => BackendError::InvalidInput(prefix(m)),
            BackendError::TimeLimit(m) => BackendError::TimeLimit(prefix(m)),
            BackendError::Unavailable(m) => BackendError::Unavailable(prefix(m)),
            BackendError::Cuda(m) => BackendError::Cuda(prefix(m)),
            BackendError::Verification(m) => BackendError::Verification(prefix(m)),
            BackendError::Panicked(m) => BackendError::Panicked(prefix(m)),
            other @ (BackendError::Busy | BackendError::Cancelled) => other,
        }
    }

    /// The stable code used in `failed` entries.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            BackendError::Unsupported(_) => ErrorCode::Unsupported,
            BackendError::TooLarge(_) => ErrorCode::TooLarge,
            BackendError::InvalidInput(_) => ErrorCode::InvalidInput,
            BackendError::Busy => ErrorCode::Busy,
            BackendError::TimeLimit(_) => ErrorCode::TimeLimit,
            BackendError::Cancelled => ErrorCode::Cancelled,
            BackendError::Unavailable(_) => ErrorCode::NoGpu,
            BackendError::Cuda(_) => ErrorCode::CudaError,
            BackendError::Verification(_) => ErrorCode::VerificationFailed,
            BackendError::Panicked(_) => ErrorCode::Internal,
        }
    }

    /// A `failed` entry for `precision`; CUDA and internal failures get a generic message (full error logged).
    #[must_use]
    pub fn failure(&self, precision: Precision) -> Failure {
        let message = match self {
            BackendError::Cuda(_) | BackendError::Panicked(_) => {
                tracing::error!(precision = precision.name(), error = %self, "measurement failed");
                "the measurement failed on the device; see the server log".to_owned()
            }
            other => other.to_string(),
        };
        Failure {
            precision,
            code: self.code(),
            message,
        }
    }
}

/// One matmul to measure: `M <= 1` is a GEMV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatmulSpec {
    /// Rows of A (tokens).
    pub m: u64,
    /// Columns of B (output features).
    pub n: u64,
    /// Reduction.
    pub k: u64,
    /// Requested precision.
    pub precision: Precision,
}

impl MatmulSpec {
    /// The operator for the requested precision (what the prediction uses).
    ///
    /// # Errors
    /// Invalid dimensions.
    pub fn operator(&self) -> Result<Operator, roofline_core::Error> {
        Operator::matmul(self.m, self.n, self.k, self.precision.into())
    }

    /// Checks the measurement bounds (1..=65536 per axis).
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`].
    pub fn check_bounds(&self) -> Result<(), BackendError> {
        for (name, v) in [("M", self.m), ("N", self.n), ("K", self.k)] {
            if v == 0 || v > MAX_MEASURE_DIM {
                return Err(BackendError::InvalidInput(format!(
                    "{name} must be between 1 and {MAX_MEASURE_DIM} for a measurement, got {v}"
                )));
            }
        }
        Ok(())
    }
}

/// What a backend measured: the operator that really ran and the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The operator that really ran (weight-only kernels have their own operand precisions).
    pub op: Operator,
    /// Precision label of the point (the format that really ran).
    pub precision: Precision,
    /// Extra label text, e.g. ` W4A16-dequant`.
    pub label_suffix: String,
    /// The record.
    pub measurement: Measurement,
}

/// A whole model step timed end to end ([`Backend::measure_step`]): one sample runs every kernel of the
/// step's launch order back to back.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTiming {
    /// Kernels launched per sample (the length of the launch order).
    pub kernels: u32,
    /// The record: its `kernel` says how the sequence ran (e.g. a CUDA graph, or eager launches and why),
    /// its times are those of the whole step, in seconds.
    pub measurement: Measurement,
}

/// The matmul a GEMM-like step operator runs as (its compute precision, weights in the same format), or
/// `None` for the other operators, which run their [`Operator::kernel`].
///
/// # Errors
/// [`BackendError::Unsupported`] for batched GEMMs and for weights in another format than the activations
/// (weight-only kernels are not step kernels yet): nothing runs through another format.
pub fn step_matmul(op: &Operator) -> Result<Option<MatmulSpec>, BackendError> {
    let Some(gemm) = op.gemm else {
        return Ok(None);
    };
    if gemm.batch != 1 {
        return Err(BackendError::Unsupported(format!(
            "{}: batched GEMMs ({} products) are not measured in a step yet",
            op.name, gemm.batch
        )));
    }
    let precisions = op.precisions;
    if precisions.weight != precisions.activation {
        return Err(BackendError::Unsupported(format!(
            "{}: no step kernel for {} weights with {} activations yet (never measured through another format)",
            op.name, precisions.weight, precisions.activation
        )));
    }
    Ok(Some(MatmulSpec {
        m: gemm.m,
        n: gemm.n,
        k: gemm.k,
        precision: precisions.compute(),
    }))
}

/// Prepares each of a step's distinct operators in turn for [`Backend::measure_step`]: `matmul` for the
/// GEMM-like ones ([`step_matmul`]), `kernel` for the others. Cancellation and the time cap are checked
/// before each, and an error names its operator.
///
/// # Errors
/// [`step_matmul`]'s, the interruption, or the first preparation error.
pub fn prepare_step<T>(
    ops: &[Operator],
    mut matmul: impl FnMut(&MatmulSpec) -> Result<T, BackendError>,
    mut kernel: impl FnMut(&Operator) -> Result<T, BackendError>,
) -> Result<Vec<T>, BackendError> {
    ops.iter()
        .map(|op| {
            crate::protocol::check_interruption::<BackendError>()?;
            match step_matmul(op)? {
                Some(spec) => matmul(&spec),
                None => kernel(op),
            }
            .map_err(|e| e.naming(&op.name))
        })
        .collect()
}

/// Refuses a collective: one device cannot run it.
fn single_device(op: &Operator) -> Result<(), BackendError> {
    if op.kind == roofline_core::OpKind::Collective {
        return Err(BackendError::Unsupported(format!(
            "{}: a collective needs more than one device",
            op.name
        )));
    }
    Ok(())
}

/// A bandwidth measurement: bytes moved (read + write) and the record.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredBandwidth {
    /// Bytes read plus bytes written per run.
    pub bytes: f64,
    /// The record.
    pub measurement: Measurement,
}

/// A measurement backend. Implementations do not lock: [`Device`] serializes calls.
pub trait Backend: Send + Sync {
    /// `cuda`, `cpu` or `fake`.
    fn kind(&self) -> BackendKind;
    /// Device description.
    fn device_info(&self) -> DeviceInfo;
    /// Precisions measurable natively.
    fn measurable(&self) -> Vec<Precision>;
    /// Bytes of device memory a measurement may allocate (free memory, or the configured cap).
    fn memory_budget_bytes(&self) -> u64;
    /// Bytes the buffers of `spec` need (inputs, output, reference copies; not counting fixed scratch).
    fn required_bytes(&self, spec: &MatmulSpec) -> u64 {
        let op = Operator::matmul(spec.m, spec.n, spec.k, OperandPrecisions::from(spec.precision));
        op.map_or(u64::MAX, |op| (op.bytes() * 2.0) as u64)
    }
    /// Measures one matmul with the protocol.
    ///
    /// # Errors
    /// [`BackendError`].
    fn measure_matmul(&self, spec: &MatmulSpec) -> Result<Measured, BackendError>;
    /// Bytes the buffers of a non-GEMM operator need ([`Operator::kernel`]).
    fn required_operator_bytes(&self, op: &Operator) -> u64 {
        (op.bytes() * 2.0) as u64
    }
    /// Measures one non-GEMM operator of a model step (its [`Operator::kernel`]) with the protocol. GEMM-like
    /// operators go through [`Backend::measure_matmul`] ([`DeviceGuard::measure_operator`] routes them).
    ///
    /// # Errors
    /// [`BackendError`]; by default [`BackendError::Unsupported`] naming the backend and the operator kind.
    fn measure_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        Err(BackendError::Unsupported(format!(
            "no {} kernel for {} ({}) yet",
            self.kind(),
            op.kind.name(),
            op.name
        )))
    }
    /// Times a whole model step end to end. `ops` are the step's distinct operators; each is prepared and
    /// verified once, as [`Backend::measure_matmul`] (GEMM-like operators, [`step_matmul`]) or
    /// [`Backend::measure_operator`] would, with all their buffers held at once. One sample then runs the
    /// kernels of `schedule` (indices into `ops`, in launch order) back to back, caches flushed before the
    /// step only, so launch gaps and cache reuse between kernels count as they do in a real step.
    ///
    /// # Errors
    /// [`BackendError`] of any operator's preparation; by default [`BackendError::Unsupported`] naming the
    /// backend.
    fn measure_step(&self, ops: &[Operator], schedule: &[usize]) -> Result<StepTiming, BackendError> {
        let _ = (ops, schedule);
        Err(BackendError::Unsupported(format!(
            "no end-to-end step timing on the {} backend",
            self.kind()
        )))
    }
    /// Measures device-memory bandwidth with a copy kernel.
    ///
    /// # Errors
    /// [`BackendError`].
    fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError>;
    /// A compute-bound shape for calibrating `precision`'s achieved peak.
    fn calibration_shape(&self, precision: Precision) -> (u64, u64, u64);
}

/// Live telemetry (NVML, or the fake's fixed values).
pub trait Telemetry: Send + Sync {
    /// One sample.
    ///
    /// # Errors
    /// A message when the library call fails.
    fn status(&self) -> Result<NvmlStatus, String>;
}

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// CUDA when compiled in and a device opens, else the CPU.
    Auto,
    /// CUDA or fail.
    Cuda,
    /// The host CPU.
    Cpu,
    /// Deterministic fake (tests).
    Fake,
}

/// Options of the backends.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendOptions {
    /// Memory cap of the CPU backend, in bytes.
    pub cpu_memory_cap_bytes: u64,
    /// Per-point delay of the fake backend (tests of cancellation and crash safety).
    pub fake_delay: std::time::Duration,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions {
            cpu_memory_cap_bytes: 2 << 30,
            fake_delay: std::time::Duration::ZERO,
        }
    }
}

/// The chosen backend, why, and the telemetry source.
pub struct Selected {
    /// The backend.
    pub backend: Arc<dyn Backend>,
    /// Why it was chosen.
    pub reason: String,
    /// Telemetry, when NVML (or the fake) is available.
    pub telemetry: Option<Arc<dyn Telemetry>>,
    /// Why telemetry is missing, when it is.
    pub telemetry_reason: String,
}

/// Picks the backend at run time.
///
/// # Errors
/// When `cuda` is asked for explicitly and cannot be opened.
pub fn select(choice: BackendChoice, options: &BackendOptions) -> Result<Selected, String> {
    if choice == BackendChoice::Fake {
        return Ok(Selected {
            backend: Arc::new(fake::FakeBackend::new(options.fake_delay)),
            reason: "fake backend requested (deterministic, for tests)".into(),
            telemetry: Some(Arc::new(fake::FakeTelemetry)),
            telemetry_reason: String::new(),
        });
    }
    let (telemetry, telemetry_reason): (Option<Arc<dyn Telemetry>>, String) =
        match nvml::NvmlTelemetry::open() {
            Ok(t) => (Some(t), String::new()),
            Err(e) => (None, e),
        };
    let cuda_attempt: Result<Arc<dyn Backend>, String> = if choice == BackendChoice::Cpu {
        Err("CPU backend requested".into())
    } else {
        open_cuda()
    };
    match cuda_attempt {
        Ok(backend) => Ok(Selected {
            backend,
            reason: "CUDA device 0 opened (driver, cuBLASLt and NVRTC present)".into(),
            telemetry,
            telemetry_reason,
        }),
        Err(why) if choice == BackendChoice::Cuda => Err(format!("cannot use the CUDA backend: {why}")),
        Err(why) => Ok(Selected {
            backend: Arc::new(cpu::CpuBackend::new(options.cpu_memory_cap_bytes)),
            reason: format!("{why}; measuring the host CPU"),
            telemetry,
            telemetry_reason,
        }),
    }
}

#[cfg(feature = "cuda")]
fn open_cuda() -> Result<Arc<dyn Backend>, String> {
    match std::panic::catch_unwind(cuda::CudaBackend::open) {
        Ok(Ok(backend)) => Ok(Arc::new(backend)),
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(format!(
            "CUDA initialization panicked: {}",
            panic_message(panic.as_ref())
        )),
    }
}

#[cfg(not(feature = "cuda"))]
fn open_cuda() -> Result<Arc<dyn Backend>, String> {
    Err("built without the `cuda` feature".into())
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The backend plus the one-measurement-at-a-time lock.
pub struct Device {
    backend: Arc<dyn Backend>,
    lock: Mutex<()>,
}

/// Proof that the caller holds the device.
pub struct DeviceGuard<'a> {
    device: &'a Device,
    _guard: MutexGuard<'a, ()>,
}

impl Device {
    /// Wraps a backend.
    #[must_use]
    pub fn new(backend: Arc<dyn Backend>) -> Device {
        Device {
            backend,
            lock: Mutex::new(()),
        }
    }

    /// The backend (for descriptions; measuring goes through a guard).
    #[must_use]
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// Takes the device now or fails with [`BackendError::Busy`].
    ///
    /// # Errors
    /// [`BackendError::Busy`].
    pub fn try_acquire(&self) -> Result<DeviceGuard<'_>, BackendError> {
        match self.lock.try_lock() {
            Ok(guard) => Ok(DeviceGuard {
                device: self,
                _guard: guard,
            }),
            Err(TryLockError::Poisoned(p)) => Ok(DeviceGuard {
                device: self,
                _guard: p.into_inner(),
            }),
            Err(TryLockError::WouldBlock) => Err(BackendError::Busy),
        }
    }

    /// Waits for the device.
    pub fn acquire(&self) -> DeviceGuard<'_> {
        let guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        DeviceGuard {
            device: self,
            _guard: guard,
        }
    }

    /// Refuses a spec that is out of bounds or whose buffers exceed the memory budget, before any allocation.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] or [`BackendError::TooLarge`].
    pub fn check_fits(&self, spec: &MatmulSpec) -> Result<(), BackendError> {
        spec.check_bounds()?;
        self.check_matmul_memory(spec, "")
    }

    /// Checks only that the buffers of `spec` fit the memory budget (a model's own shapes, e.g. a
    /// 128,256-token vocabulary, may exceed the request bounds); `what` prefixes the message.
    ///
    /// # Errors
    /// [`BackendError::TooLarge`].
    fn check_matmul_memory(&self, spec: &MatmulSpec, what: &str) -> Result<(), BackendError> {
        let needed = self.backend.required_bytes(spec);
        let budget = self.backend.memory_budget_bytes();
        if needed > budget {
            return Err(BackendError::TooLarge(format!(
                "{what}{}x{}x{} {} needs {:.1} MB of buffers, more than the {:.1} MB available to the {} backend",
                spec.m,
                spec.n,
                spec.k,
                spec.precision,
                needed as f64 / 1e6,
                budget as f64 / 1e6,
                self.backend.kind()
            )));
        }
        Ok(())
    }
}

impl Device {
    /// Refuses a non-GEMM operator whose buffers exceed the memory budget, before any allocation.
    ///
    /// # Errors
    /// [`BackendError::TooLarge`].
    pub fn check_operator_fits(&self, op: &Operator) -> Result<(), BackendError> {
        let needed = self.backend.required_operator_bytes(op);
        let budget = self.backend.memory_budget_bytes();
        if needed > budget {
            return Err(BackendError::TooLarge(format!(
                "{} {} needs {:.1} MB of buffers, more than the {:.1} MB available to the {} backend",
                op.name,
                op.shape,
                needed as f64 / 1e6,
                budget as f64 / 1e6,
                self.backend.kind()
            )));
        }
        Ok(())
    }
}

impl DeviceGuard<'_> {
    /// Measures one operator of a model step: a GEMM or GEMV through [`Backend::measure_matmul`] at its
    /// compute precision (weights in the same format; batched and weight-only GEMMs are `unsupported` here;
    /// the model's own dimensions may exceed [`MAX_MEASURE_DIM`]), anything else through
    /// [`Backend::measure_operator`]. Memory is checked first and panics are caught. The measured operator
    /// keeps the step's operator name.
    ///
    /// # Errors
    /// [`BackendError`].
    pub fn measure_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        single_device(op)?;
        if let Some(spec) = step_matmul(op)? {
            // A model's own shapes may exceed the request bounds: only the memory budget applies here.
            self.device.check_matmul_memory(&spec, &format!("{} ", op.name))?;
            let mut measured = guarded(|| self.device.backend.measure_matmul(&spec))?;
            measured.op.name.clone_from(&op.name);
            return Ok(measured);
        }
        self.device.check_operator_fits(op)?;
        guarded(|| self.device.backend.measure_operator(op))
    }

    /// Times a whole step end to end ([`Backend::measure_step`]): `ops` are its distinct operators,
    /// `schedule` its launch order as indices into `ops`. The buffers of every operator, held at once, are
    /// checked against the memory budget first; panics are caught.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] for an empty launch order or an index outside `ops`;
    /// [`BackendError::Unsupported`] for a collective or an operator [`step_matmul`] refuses; [`BackendError::TooLarge`]; the backend's errors.
    pub fn measure_step(&self, ops: &[Operator], schedule: &[usize]) -> Result<StepTiming, BackendError> {
        if schedule.is_empty() {
            return Err(BackendError::InvalidInput(
                "a step needs at least one launch".into(),
            ));
        }
        if let Some(index) = schedule.iter().find(|&&i| i >= ops.len()) {
            return Err(BackendError::InvalidInput(format!(
                "launch order names operator {index} of {}",
                ops.len()
            )));
        }
        let backend = &self.device.backend;
        let mut needed = 0u64;
        for op in ops {
            single_device(op)?;
            let bytes = match step_matmul(op)? {
                Some(spec) => backend.required_bytes(&spec),
                None => backend.required_operator_bytes(op),
            };
            needed = needed.saturating_add(bytes);
        }
        let budget = backend.memory_budget_bytes();
        if needed > budget {
            return Err(BackendError::TooLarge(format!(
                "the whole step holds {:.1} MB of buffers at once, more than the {:.1} MB available to the {} \
                 backend",
                needed as f64 / 1e6,
                budget as f64 / 1e6,
                backend.kind()
            )));
        }
        guarded(|| backend.measure_step(ops, schedule))
    }

    /// Measures one matmul (bounds and memory checked first; panics caught).
    ///
    /// # Errors
    /// [`BackendError`].
    pub fn measure_matmul(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        self.device.check_fits(spec)?;
        guarded(|| self.device.backend.measure_matmul(spec))
    }

    /// Precisions the backend measures natively.
    #[must_use]
    pub fn measurable(&self) -> Vec<Precision> {
        self.device.backend.measurable()
    }

    /// A compute-bound shape for calibrating `precision`.
    #[must_use]
    pub fn calibration_shape(&self, precision: Precision) -> (u64, u64, u64) {
        self.device.backend.calibration_shape(precision)
    }

    /// Measures bandwidth (panics caught).
    ///
    /// # Errors
    /// [`BackendError`].
    pub fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError> {
        guarded(|| self.device.backend.measure_bandwidth())
    }
}

fn guarded<T>(f: impl FnOnce() -> Result<T, BackendError>) -> Result<T, BackendError> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(BackendError::Panicked(panic_message(panic.as_ref()))))
}

/// Builds the measured point of a measurement, with the bottleneck of the prediction when there is one.
#[must_use]
pub fn point_of(measured: Measured, bottleneck: Option<Bottleneck>) -> RooflinePoint {
    crate::protocol::measured_point(
        &measured.op,
        measured.precision,
        measured.measurement,
        bottleneck.unwrap_or(Bottleneck::Unknown),
        &measured.label_suffix,
    )
}

/// The catalog key of a device name (`NVIDIA H100 80GB HBM3` → `h100_sxm`), or `None` for CPUs and unknown
/// GPUs: [`roofline_core::measured_device::catalog_key_of_device_name`], the page's rule too.
#[must_use]
pub fn match_catalog_key(device_name: &str) -> Option<String> {
    roofline_core::measured_device::catalog_key_of_device_name(device_name).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_enforced() {
        let spec = MatmulSpec {
            m: 1,
            n: 65_537,
            k: 8,
            precision: Precision::Fp32,
        };
        assert!(matches!(spec.check_bounds(), Err(BackendError::InvalidInput(_))));
        let spec = MatmulSpec {
            m: 0,
            n: 8,
            k: 8,
            precision: Precision::Fp32,
        };
        assert!(spec.check_bounds().is_err());
    }

    #[test]
    fn a_step_launch_order_must_name_its_operators() {
        let device = Device::new(Arc::new(fake::FakeBackend::new(std::time::Duration::ZERO)));
        let guard = device.acquire();
        let gemv = Operator::matmul(1, 64, 64, Precision::Fp32.into()).unwrap();
        let refused = |ops: &[Operator], order: &[usize]| {
            matches!(guard.measure_step(ops, order), Err(BackendError::InvalidInput(_)))
        };
        assert!(refused(std::slice::from_ref(&gemv), &[]));
        assert!(refused(std::slice::from_ref(&gemv), &[0, 1]));
        // Three launches of one 64×64 FP32 GEMV on the fake: 3 × (max(8192 FLOP / 100 TFLOP/s, 16,896 B /
        // 1 TB/s) + 2 µs gap) = 3 × (16.896 ns + 2 µs).
        let timing = guard.measure_step(&[gemv], &[0, 0, 0]).unwrap();
        assert_eq!(timing.kernels, 3);
        assert!((timing.measurement.median_s - 3.0 * (16.896e-9 + 2e-6)).abs() < 1e-15);
    }

    #[test]
    fn errors_name_their_operator_once() {
        assert_eq!(
            BackendError::Verification("entry (0, 3) differs".into()).naming("o_proj"),
            BackendError::Verification("o_proj: entry (0, 3) differs".into())
        );
        assert_eq!(
            BackendError::Unsupported("o_proj (gemm) in FP8: no kernel".into()).naming("o_proj"),
            BackendError::Unsupported("o_proj (gemm) in FP8: no kernel".into())
        );
        assert_eq!(BackendError::Cancelled.naming("o_proj"), BackendError::Cancelled);
    }

    #[test]
    fn panics_become_errors() {
        let r: Result<(), BackendError> = guarded(|| panic!("boom"));
        assert_eq!(r, Err(BackendError::Panicked("boom".into())));
    }
}
