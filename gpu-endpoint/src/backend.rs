//! The measurement backends' traits ([`Backend`], [`Telemetry`]) and their one error type
//! ([`BackendError`]), with what a measurement is asked for ([`MatmulSpec`]) and gives back ([`Measured`],
//! [`StepTiming`], [`MeasuredBandwidth`]).
//!
//! Implementations: `cuda` (feature `cuda`, a driver, cuBLASLt and NVRTC present; the only module naming
//! cudarc), `cpu` (the host, always available) and `fake` (deterministic, for tests); `nvml` is the telemetry.
//! `select` chooses one at run time; with it, this file is the only one with `cfg(feature = "cuda")`. The
//! one-at-a-time lock and the fit checks around a backend are `crate::device`.

pub mod cpu;
mod cpu_host;
pub mod cpu_ops;
#[cfg(feature = "cuda")]
mod cuda;
pub mod fake;
pub mod nvml;
pub mod select;
mod step_reference;

use roofline_core::wire::{BackendKind, DeviceInfo, ErrorCode, Failure, Measurement, NvmlStatus};
use roofline_core::{GemmShape, Operator, Precision};

use crate::protocol::{Interrupted, VerifyError};

/// The largest M, N or K accepted for a measurement.
pub const MAX_MEASURE_DIM: u64 = 65_536;
/// The most products of one batched GEMM accepted for a measurement: above the 384 routed experts of the
/// largest MoE preset (Kimi K2); the memory budget bounds the buffers of the whole batch.
pub const MAX_MEASURE_BATCH: u64 = 1024;

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
    /// Another measurement of this process holds the device.
    #[error("the device is busy")]
    Busy,
    /// Another process measures on the device (the message names it: pid and since when).
    #[error("{0}")]
    BusyElsewhere(String),
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
            other @ (BackendError::Busy | BackendError::BusyElsewhere(_) | BackendError::Cancelled) => other,
        }
    }

    /// The stable code used in `failed` entries.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            BackendError::Unsupported(_) => ErrorCode::Unsupported,
            BackendError::TooLarge(_) => ErrorCode::TooLarge,
            BackendError::InvalidInput(_) => ErrorCode::InvalidInput,
            BackendError::Busy | BackendError::BusyElsewhere(_) => ErrorCode::Busy,
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

/// One matmul to measure: a shape in a precision (weights and activations both in it); `M <= 1` is a GEMV, a
/// `batch` above 1 a batched GEMM (MoE experts: each product its own N×K weights and its own M rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatmulSpec {
    /// Products (1..=[`MAX_MEASURE_BATCH`]), M (rows of A: tokens), N (output features) and K (reduction).
    pub shape: GemmShape,
    /// Requested precision.
    pub precision: Precision,
}

impl MatmulSpec {
    /// The operator for the requested precision (what the prediction uses).
    ///
    /// # Errors
    /// Invalid dimensions.
    pub fn operator(&self) -> Result<Operator, roofline_core::Error> {
        let GemmShape { batch, m, n, k } = self.shape;
        if batch == 1 {
            Operator::matmul(m, n, k, self.precision.into())
        } else {
            Operator::batched_gemm(batch, m, n, k, self.precision.into())
        }
    }

    /// Checks the measurement bounds: 1..=[`MAX_MEASURE_BATCH`] products, 1..=[`MAX_MEASURE_DIM`] per axis.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] naming the axis.
    pub fn check_bounds(&self) -> Result<(), BackendError> {
        let GemmShape { batch, m, n, k } = self.shape;
        if batch == 0 || batch > MAX_MEASURE_BATCH {
            return Err(BackendError::InvalidInput(format!(
                "a measured matmul has between 1 and {MAX_MEASURE_BATCH} products, got a batch of {batch}"
            )));
        }
        for (name, v) in [("M", m), ("N", n), ("K", k)] {
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
/// `None` for the other operators, which run their [`Operator::kernel`]. A batched GEMM (MoE experts) runs
/// as the shape the prediction assumes: its `batch` products of `M` rows each.
///
/// # Errors
/// [`BackendError::Unsupported`] for weights in another format than the activations (weight-only kernels
/// are not step kernels yet): nothing runs through another format; [`BackendError::InvalidInput`] for a
/// batch above [`MAX_MEASURE_BATCH`].
pub fn step_matmul(op: &Operator) -> Result<Option<MatmulSpec>, BackendError> {
    let Some(gemm) = op.gemm else {
        return Ok(None);
    };
    if gemm.batch > MAX_MEASURE_BATCH {
        return Err(BackendError::InvalidInput(format!(
            "{}: a batched GEMM of {} products is more than the {MAX_MEASURE_BATCH} a measurement takes",
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
        shape: gemm,
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

/// A bandwidth measurement: bytes moved (read + write) and the record.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredBandwidth {
    /// Bytes read plus bytes written per run.
    pub bytes: f64,
    /// The record.
    pub measurement: Measurement,
}

/// A measurement backend. Implementations do not lock: `crate::device::Device` serializes calls.
pub trait Backend: Send + Sync {
    /// `cuda`, `cpu` or `fake`.
    fn kind(&self) -> BackendKind;
    /// The device's identity across processes, for the lock two servers on one machine share
    /// (`crate::device::Device::with_lock`): the GPU's UUID on CUDA; by default the backend and the device
    /// name.
    fn device_id(&self) -> String {
        format!("{}-{}", self.kind(), self.device_info().name)
    }
    /// Device description.
    fn device_info(&self) -> DeviceInfo;
    /// Precisions measurable natively.
    fn measurable(&self) -> Vec<Precision>;
    /// Bytes of device memory a measurement may allocate (free memory, or the configured cap).
    fn memory_budget_bytes(&self) -> u64;
    /// Bytes the buffers of `spec` need (inputs, output, reference copies; not counting fixed scratch).
    fn required_bytes(&self, spec: &MatmulSpec) -> u64 {
        spec.operator().map_or(u64::MAX, |op| (op.bytes() * 2.0) as u64)
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
    /// operators go through [`Backend::measure_matmul`] (`crate::device::DeviceGuard::measure_operator`
    /// routes them).
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
    fn calibration_shape(&self, precision: Precision) -> GemmShape;
}

/// Live telemetry (NVML, or the fake's fixed values).
pub trait Telemetry: Send + Sync {
    /// One sample.
    ///
    /// # Errors
    /// [`BackendError::Unavailable`] naming the library call that failed.
    fn status(&self) -> Result<NvmlStatus, BackendError>;
}

impl From<Interrupted> for BackendError {
    fn from(why: Interrupted) -> Self {
        match why {
            Interrupted::TimeLimit(cap) => BackendError::TimeLimit(format!(
                "the point ran longer than its {:.3} s time cap (--max-point-seconds) and was stopped",
                cap.as_secs_f64()
            )),
            Interrupted::Cancelled => BackendError::Cancelled,
        }
    }
}

impl From<VerifyError> for BackendError {
    fn from(e: VerifyError) -> Self {
        BackendError::Verification(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_enforced() {
        let spec = |shape| MatmulSpec {
            shape,
            precision: Precision::Fp32,
        };
        assert!(spec(GemmShape::matmul(1, 65_536, 8)).check_bounds().is_ok());
        let error = spec(GemmShape::matmul(1, 65_537, 8)).check_bounds().unwrap_err();
        assert!(
            matches!(&error, BackendError::InvalidInput(m) if m.starts_with("N ")),
            "{error}"
        );
        assert!(spec(GemmShape::matmul(0, 8, 8)).check_bounds().is_err());
        let batched = |batch| GemmShape {
            batch,
            ..GemmShape::matmul(2, 8, 8)
        };
        assert!(spec(batched(MAX_MEASURE_BATCH)).check_bounds().is_ok());
        for batch in [0, MAX_MEASURE_BATCH + 1] {
            let error = spec(batched(batch)).check_bounds().unwrap_err();
            assert!(
                error.to_string().contains(&format!("batch of {batch}")),
                "{error}"
            );
        }
    }

    #[test]
    fn batched_specs_are_batched_operators_and_step_matmuls() {
        // 8 experts of 4 rows, 16 -> 32 features: 2·8·4·32·16 = 32,768 FLOP.
        let shape = GemmShape {
            batch: 8,
            ..GemmShape::matmul(4, 32, 16)
        };
        let op = Operator::batched_gemm(8, 4, 32, 16, Precision::Fp32.into()).unwrap();
        let spec = step_matmul(&op).unwrap().unwrap();
        assert_eq!(
            spec,
            MatmulSpec {
                shape,
                precision: Precision::Fp32
            }
        );
        let ran = spec.operator().unwrap();
        assert_eq!(
            (ran.kind, ran.flops),
            (roofline_core::OpKind::BatchedGemm, 32_768.0)
        );
        let too_many =
            Operator::batched_gemm(MAX_MEASURE_BATCH + 1, 4, 32, 16, Precision::Fp32.into()).unwrap();
        assert!(matches!(
            step_matmul(&too_many),
            Err(BackendError::InvalidInput(_))
        ));
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
    fn interruptions_and_output_checks_keep_their_codes() {
        let cap: BackendError = Interrupted::TimeLimit(std::time::Duration::from_millis(50)).into();
        assert_eq!(cap.code(), ErrorCode::TimeLimit);
        assert!(cap.to_string().contains("0.050 s time cap"), "{cap}");
        assert_eq!(
            BackendError::from(Interrupted::Cancelled),
            BackendError::Cancelled
        );
        let wrong: BackendError = VerifyError::ShortBuffer.into();
        assert_eq!(wrong.code(), ErrorCode::VerificationFailed);
    }
}
