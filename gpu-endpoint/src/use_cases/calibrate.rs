//! Calibration: measure DRAM bandwidth (copy kernel), the fixed per-kernel overhead of matrix kernels (a
//! small GEMV) and of vector kernels (a one-row RMSNorm), and the achieved peak of each precision on a
//! compute-bound shape, then build a `HardwareSpec` with `Provenance::Measured` from them (core's
//! `HardwareSpec::calibrated`) and store the result. `POST /api/calibrate` and `gpu-endpoint calibrate` both
//! call [`calibrate`].

use roofline_core::hardware::Calibration;
use roofline_core::wire::{
    CalibratedPeak, CalibrationResult, DeviceInfo, Failure, KernelOverhead, VectorKernelOverhead,
};
use roofline_core::{GemmShape, HardwareSpec, Norm, Operator, Precision, find_hardware};

use crate::backend::{BackendError, MatmulSpec};
use crate::device::DeviceGuard;
use crate::protocol::{PointLimits, unix_now};
use crate::store::Store;

/// What to calibrate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalibrationRequest {
    /// The catalog spec to start from (its unmeasured peaks are kept and named in the spec's notes); `None`:
    /// the measured device's catalog entry when it has one, else only measured peaks are in the spec.
    pub base: Option<&'static HardwareSpec>,
    /// The precisions whose peaks are measured; `None`: every precision the backend runs natively.
    pub precisions: Option<Vec<Precision>>,
}

/// Measures the device held by `guard` and builds its calibrated spec, then stores the result (a store
/// failure is logged). Every measurement runs under `limits` (a peak past its time cap is a `time_limit`
/// entry in `failed`).
///
/// # Errors
/// The bandwidth measurement's error (a spec without bandwidth is meaningless),
/// [`BackendError::Cancelled`], or [`BackendError::InvalidInput`] when no usable spec comes out of the
/// measurements.
pub fn calibrate(
    guard: &DeviceGuard<'_>,
    store: Option<&Store>,
    request: &CalibrationRequest,
    limits: &PointLimits,
) -> Result<CalibrationResult, BackendError> {
    let info = guard.device_info();
    let base = request.base.or_else(|| {
        info.matched_key
            .as_deref()
            .and_then(|key| find_hardware(key).ok())
    });
    let precisions = request.precisions.clone().unwrap_or_else(|| guard.measurable());
    let bandwidth = limits.run(|| guard.measure_bandwidth())?;
    let bandwidth_bytes_per_s = bandwidth.bytes / bandwidth.measurement.median_s;
    let mut peaks = Vec::new();
    let mut failed = Vec::new();
    let kernel_overhead = measure_overhead(guard, bandwidth_bytes_per_s, limits)
        .map_err(|f| failed.push(f))
        .ok();
    let vector_kernel_overhead = measure_vector_overhead(guard, bandwidth_bytes_per_s, limits)
        .map_err(|f| failed.push(f))
        .ok();
    for precision in precisions {
        if limits.is_cancelled() {
            return Err(BackendError::Cancelled);
        }
        let spec = MatmulSpec {
            shape: guard.calibration_shape(precision),
            precision,
        };
        match limits.run(|| guard.measure_matmul(&spec)) {
            Ok(result) => peaks.push(CalibratedPeak {
                precision: result.precision,
                achieved_flop_per_s: result.op.flops / result.measurement.median_s,
                shape: result.op.shape.clone(),
                measurement: result.measurement,
            }),
            Err(e) => failed.push(e.failure(precision)),
        }
    }
    let kernel_overhead_s = kernel_overhead.as_ref().map_or(0.0, |o| o.kernel_overhead_s);
    let vector_kernel_overhead_s = vector_kernel_overhead.as_ref().map(|o| o.kernel_overhead_s);
    let calibration = Calibration {
        device_name: info.name.clone(),
        dram_bandwidth_bytes_per_s: bandwidth_bytes_per_s,
        kernel_overhead_s,
        vector_kernel_overhead_s,
        peaks: peaks
            .iter()
            .map(|p| (p.precision.compute_path(), p.achieved_flop_per_s))
            .collect(),
        source: source(&info, kernel_overhead_s, vector_kernel_overhead_s),
    };
    let spec = calibrated_spec(base, &info, &calibration).map_err(|e| {
        let failures: Vec<String> = failed
            .iter()
            .map(|f| format!("{}: {}", f.precision, f.message))
            .collect();
        BackendError::InvalidInput(format!(
            "no usable calibrated spec ({e}); {}",
            failures.join("; ")
        ))
    })?;
    let result = CalibrationResult {
        bandwidth_bytes_per_s,
        bandwidth_measurement: bandwidth.measurement,
        peaks,
        kernel_overhead,
        vector_kernel_overhead,
        failed,
        spec,
    };
    if let Some(store) = store
        && let Err(e) = store.insert_calibration(&info.name, &result)
    {
        tracing::error!(error = %e, "could not store the calibration");
    }
    Ok(result)
}

/// The GEMV that measures the per-kernel overhead: 1×2048×2048 moves 8.4 MB in FP16 (2.8 µs at 3 TB/s), so
/// the fixed part of its time dominates. It is not one of the validation suite's shapes.
pub const OVERHEAD_SHAPE: GemmShape = GemmShape::matmul(1, 2048, 2048);

/// Times the [`OVERHEAD_SHAPE`] GEMV in FP16 (else FP32) and subtracts its bytes over the copy bandwidth.
/// A failure names the precision it tried and says in its message that it was the overhead GEMV.
fn measure_overhead(
    guard: &DeviceGuard<'_>,
    bandwidth_bytes_per_s: f64,
    limits: &PointLimits,
) -> Result<KernelOverhead, Failure> {
    let measurable = guard.measurable();
    let Some(precision) = [Precision::Fp16, Precision::Fp32]
        .into_iter()
        .find(|p| measurable.contains(p))
    else {
        return Err(
            BackendError::Unsupported("no FP16 or FP32 GEMV to time the kernel overhead".into())
                .failure(Precision::Fp16),
        );
    };
    let spec = MatmulSpec {
        shape: OVERHEAD_SHAPE,
        precision,
    };
    let result = limits.run(|| guard.measure_matmul(&spec)).map_err(|e| {
        let mut failure = e.failure(precision);
        failure.message = format!("kernel-overhead GEMV {OVERHEAD_SHAPE}: {}", failure.message);
        failure
    })?;
    let time_s = result.measurement.median_s;
    Ok(KernelOverhead {
        kernel_overhead_s: (time_s - result.op.bytes() / bandwidth_bytes_per_s).max(0.0),
        gemv_time_s: time_s,
        shape: result.op.shape.clone(),
        precision: result.precision,
        measurement: result.measurement,
    })
}

/// The vector kernel that measures the per-kernel overhead of norms, activations and copies: RMSNorm over
/// one row of 256 FP32 elements moves 2 KB, so its time is the fixed part.
pub const VECTOR_OVERHEAD_WIDTH: u64 = 256;

/// Times the one-row RMSNorm of [`VECTOR_OVERHEAD_WIDTH`] in FP32 and subtracts its bytes over the copy
/// bandwidth. A failure (a backend without step kernels) says it was the vector-overhead kernel; vector
/// kernels then take the GEMV's overhead.
fn measure_vector_overhead(
    guard: &DeviceGuard<'_>,
    bandwidth_bytes_per_s: f64,
    limits: &PointLimits,
) -> Result<VectorKernelOverhead, Failure> {
    let precision = Precision::Fp32;
    let failure = |e: BackendError| {
        let mut failure = e.failure(precision);
        failure.message = format!(
            "vector-kernel overhead (RMSNorm 1x{VECTOR_OVERHEAD_WIDTH}): {}",
            failure.message
        );
        failure
    };
    let op = Operator::norm(Norm::RmsNorm, 1, VECTOR_OVERHEAD_WIDTH, precision)
        .map_err(|e| failure(BackendError::InvalidInput(e.to_string())))?;
    let result = limits.run(|| guard.measure_operator(&op)).map_err(failure)?;
    let time_s = result.measurement.median_s;
    Ok(VectorKernelOverhead {
        kernel_overhead_s: (time_s - op.bytes() / bandwidth_bytes_per_s).max(0.0),
        kernel_time_s: time_s,
        shape: op.shape.clone(),
        measurement: result.measurement,
    })
}

/// The calibrated spec from measured numbers: core's one calibration model ([`HardwareSpec::calibrated`]) on
/// `base`, or on an uncatalogued `<backend>_host` device (`info`'s name, architecture and memory) without one.
///
/// # Errors
/// Core's reason when a measurement is unusable (not finite and positive, a path the device lacks).
fn calibrated_spec(
    base: Option<&HardwareSpec>,
    info: &DeviceInfo,
    calibration: &Calibration,
) -> Result<HardwareSpec, roofline_core::Error> {
    match base {
        Some(base) => base.calibrated(calibration),
        None => HardwareSpec::uncatalogued(
            &format!("{}_host", info.backend),
            &info.name,
            &info.arch,
            info.memory_total_bytes,
        )
        .calibrated(calibration),
    }
}

/// How, where and when the calibration was measured (the spec's source).
fn source(info: &DeviceInfo, kernel_overhead_s: f64, vector_kernel_overhead_s: Option<f64>) -> String {
    format!(
        "measured by gpu-endpoint {} ({} backend) on {} at Unix time {:.0}: copy bandwidth, per-kernel overhead of matrix kernels ({:.2} µs, a 1x2048x2048 GEMV) and of vector kernels ({}), and best achieved GEMM throughput per precision",
        env!("CARGO_PKG_VERSION"),
        info.backend,
        info.name,
        unix_now(),
        kernel_overhead_s * 1e6,
        vector_kernel_overhead_s.map_or_else(
            || "not measured: the GEMV's".to_owned(),
            |o| format!("{:.2} µs, a 1x{VECTOR_OVERHEAD_WIDTH} RMSNorm", o * 1e6)
        )
    )
}
