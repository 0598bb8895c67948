//! Calibration: measure DRAM bandwidth (copy kernel), the fixed per-kernel overhead of matrix kernels (a
//! small GEMV) and of vector kernels (a one-row RMSNorm), and the achieved peak of each precision on a
//! compute-bound shape, then build a `HardwareSpec` with `Provenance::Measured` from them.

use roofline_core::hardware::Calibration;
use roofline_core::wire::{
    BackendKind, CalibratedPeak, CalibrationResult, Failure, KernelOverhead, VectorKernelOverhead,
};
use roofline_core::{HardwareSpec, Norm, Operator, Precision};

use crate::backend::{BackendError, DeviceGuard, MatmulSpec};
use crate::protocol::{PointLimits, unix_now};

/// Measures and builds the calibrated spec. `base` is the datasheet spec to start from (its unmeasured peaks
/// are kept and named in `notes`); without one, only measured peaks are in the spec. Every measurement runs
/// under `limits` (a peak past its time cap is a `time_limit` failure).
///
/// # Errors
/// The bandwidth measurement's error (a spec without bandwidth is meaningless), or
/// [`BackendError::Cancelled`].
#[allow(clippy::too_many_arguments)]
pub fn calibrate(
    guard: &DeviceGuard<'_>,
    backend_kind: BackendKind,
    device_name: &str,
    device_arch: &str,
    memory_total_bytes: f64,
    base: Option<&HardwareSpec>,
    precisions: &[Precision],
    limits: &PointLimits,
) -> Result<CalibrationResult, BackendError> {
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
    for &precision in precisions {
        if limits.is_cancelled() {
            return Err(BackendError::Cancelled);
        }
        let (m, n, k) = guard.calibration_shape(precision);
        let spec = MatmulSpec { m, n, k, precision };
        match limits.run(|| guard.measure_matmul(&spec)) {
            Ok(result) => peaks.push(CalibratedPeak {
                precision: result.precision,
                achieved_tflops: result.op.flops / result.measurement.median_s / 1e12,
                shape: result.op.shape.clone(),
                measurement: result.measurement,
            }),
            Err(e) => failed.push(e.failure(precision)),
        }
    }
    let spec = build_spec(
        base,
        backend_kind,
        device_name,
        device_arch,
        memory_total_bytes,
        bandwidth_bytes_per_s,
        kernel_overhead
            .as_ref()
            .map_or(0.0, |o| o.kernel_overhead_us * 1e-6),
        vector_kernel_overhead
            .as_ref()
            .map(|o| o.kernel_overhead_us * 1e-6),
        &peaks,
    )
    .map_err(|e| {
        let failures: Vec<String> = failed
            .iter()
            .map(|f| format!("{}: {}", f.precision, f.message))
            .collect();
        BackendError::InvalidInput(format!(
            "no usable calibrated spec ({e}); {}",
            failures.join("; ")
        ))
    })?;
    Ok(CalibrationResult {
        bandwidth_gb_s: bandwidth_bytes_per_s / 1e9,
        bandwidth_measurement: bandwidth.measurement,
        peaks,
        kernel_overhead,
        vector_kernel_overhead,
        failed,
        spec,
    })
}

/// The GEMV that measures the per-kernel overhead: 1×2048×2048 moves 8.4 MB in FP16 (2.8 µs at 3 TB/s), so
/// the fixed part of its time dominates. It is not one of the validation suite's shapes.
pub const OVERHEAD_SHAPE: (u64, u64, u64) = (1, 2048, 2048);

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
    let (m, n, k) = OVERHEAD_SHAPE;
    let result = limits
        .run(|| guard.measure_matmul(&MatmulSpec { m, n, k, precision }))
        .map_err(|e| {
            let mut failure = e.failure(precision);
            failure.message = format!("kernel-overhead GEMV {m}x{n}x{k}: {}", failure.message);
            failure
        })?;
    let time_s = result.measurement.median_s;
    Ok(KernelOverhead {
        kernel_overhead_us: (time_s - result.op.bytes() / bandwidth_bytes_per_s).max(0.0) * 1e6,
        gemv_time_us: time_s * 1e6,
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
        kernel_overhead_us: (time_s - op.bytes() / bandwidth_bytes_per_s).max(0.0) * 1e6,
        kernel_time_us: time_s * 1e6,
        shape: op.shape.clone(),
        measurement: result.measurement,
    })
}

/// The calibrated spec from measured numbers: core's one calibration model
/// ([`HardwareSpec::calibrated`]) on `base`, or on an uncatalogued `<backend>_host` device without one.
///
/// # Errors
/// Core's reason when a measurement is unusable (not finite and positive, a path the device lacks).
#[allow(clippy::too_many_arguments)]
pub fn build_spec(
    base: Option<&HardwareSpec>,
    backend_kind: BackendKind,
    device_name: &str,
    device_arch: &str,
    memory_total_bytes: f64,
    bandwidth_bytes_per_s: f64,
    kernel_overhead_s: f64,
    vector_kernel_overhead_s: Option<f64>,
    peaks: &[CalibratedPeak],
) -> Result<HardwareSpec, roofline_core::Error> {
    let host;
    let base = match base {
        Some(base) => base,
        None => {
            host = HardwareSpec::uncatalogued(
                &format!("{backend_kind}_host"),
                device_name,
                device_arch,
                memory_total_bytes,
            );
            &host
        }
    };
    base.calibrated(&Calibration {
        device_name: device_name.to_owned(),
        dram_bandwidth_bytes_per_s: bandwidth_bytes_per_s,
        kernel_overhead_s,
        vector_kernel_overhead_s,
        peaks: peaks
            .iter()
            .map(|p| (p.precision.compute_path(), p.achieved_tflops * 1e12))
            .collect(),
        source: format!(
            "measured by gpu-endpoint {} ({backend_kind} backend) on {device_name} at Unix time {:.0}: copy bandwidth, per-kernel overhead of matrix kernels ({:.2} µs, a 1x2048x2048 GEMV) and of vector kernels ({}), and best achieved GEMM throughput per precision",
            env!("CARGO_PKG_VERSION"),
            unix_now(),
            kernel_overhead_s * 1e6,
            vector_kernel_overhead_s.map_or_else(
                || "not measured: the GEMV's".to_owned(),
                |o| format!("{:.2} µs, a 1x{VECTOR_OVERHEAD_WIDTH} RMSNorm", o * 1e6)
            )
        ),
    })
}
