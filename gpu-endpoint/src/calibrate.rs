//! Calibration: measure DRAM bandwidth (copy kernel), the fixed per-kernel overhead (a small GEMV) and the
//! achieved peak of each precision on a compute-bound shape, then build a `HardwareSpec` with
//! `Provenance::Measured` from them.

use roofline_core::wire::{CalibratedPeak, CalibrationResult, Failure, KernelOverhead};
use roofline_core::{Architecture, HardwareSpec, Peak, Precision, Provenance};

use crate::backend::{BackendError, DeviceGuard, MatmulSpec};
use crate::protocol::unix_now;

/// Measures and builds the calibrated spec. `base` is the datasheet spec to start from (its unmeasured peaks
/// are kept and named in `notes`); without one, only measured peaks are in the spec.
///
/// # Errors
/// The bandwidth measurement's error (a spec without bandwidth is meaningless).
pub fn calibrate(
    guard: &DeviceGuard<'_>,
    backend_kind: &str,
    device_name: &str,
    device_arch: &str,
    memory_total_bytes: f64,
    base: Option<&HardwareSpec>,
    precisions: &[Precision],
) -> Result<CalibrationResult, BackendError> {
    let bandwidth = guard.measure_bandwidth()?;
    let bandwidth_bytes_per_s = bandwidth.bytes / bandwidth.measurement.median_s;
    let mut peaks = Vec::new();
    let mut failed = Vec::new();
    let kernel_overhead = match measure_overhead(guard, bandwidth_bytes_per_s) {
        Ok(overhead) => Some(overhead),
        Err(failure) => {
            failed.push(failure);
            None
        }
    };
    for &precision in precisions {
        let (m, n, k) = guard.calibration_shape(precision);
        let spec = MatmulSpec { m, n, k, precision };
        match guard.measure_matmul(&spec) {
            Ok(result) => peaks.push(CalibratedPeak {
                precision: result.precision,
                achieved_tflops: result.op.flops / result.measurement.median_s / 1e12,
                shape: result.op.shape.clone(),
                measurement: result.measurement,
            }),
            Err(e) => failed.push(e.failure(precision.name())),
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
        &peaks,
    );
    Ok(CalibrationResult {
        bandwidth_gb_s: bandwidth_bytes_per_s / 1e9,
        bandwidth_measurement: bandwidth.measurement,
        peaks,
        kernel_overhead,
        failed,
        spec,
    })
}

/// The GEMV that measures the per-kernel overhead: 1×2048×2048 moves 8.4 MB in FP16 (2.8 µs at 3 TB/s), so
/// the fixed part of its time dominates. It is not one of the validation suite's shapes.
pub const OVERHEAD_SHAPE: (u64, u64, u64) = (1, 2048, 2048);

/// Times the [`OVERHEAD_SHAPE`] GEMV in FP16 (else FP32) and subtracts its bytes over the copy bandwidth.
/// A failure names the precision it tried and says in its message that it was the overhead GEMV.
fn measure_overhead(guard: &DeviceGuard<'_>, bandwidth_bytes_per_s: f64) -> Result<KernelOverhead, Failure> {
    let measurable = guard.measurable();
    let Some(precision) = [Precision::Fp16, Precision::Fp32]
        .into_iter()
        .find(|p| measurable.contains(p))
    else {
        return Err(
            BackendError::Unsupported("no FP16 or FP32 GEMV to time the kernel overhead".into())
                .failure(Precision::Fp16.name()),
        );
    };
    let (m, n, k) = OVERHEAD_SHAPE;
    let result = guard
        .measure_matmul(&MatmulSpec { m, n, k, precision })
        .map_err(|e| {
            let mut failure = e.failure(precision.name());
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

/// The calibrated spec from measured numbers (pure; covered through `/api/calibrate` in tests/api.rs and
/// `calibrate` in tests/cli_predict.rs).
#[must_use]
#[allow(clippy::too_many_arguments)]
pub fn build_spec(
    base: Option<&HardwareSpec>,
    backend_kind: &str,
    device_name: &str,
    device_arch: &str,
    memory_total_bytes: f64,
    bandwidth_bytes_per_s: f64,
    kernel_overhead_s: f64,
    peaks: &[CalibratedPeak],
) -> HardwareSpec {
    let mut spec = base.cloned().unwrap_or_else(|| HardwareSpec {
        key: format!("{backend_kind}_host"),
        name: device_name.to_owned(),
        vendor: String::new(),
        arch: Architecture::Custom,
        arch_label: device_arch.to_owned(),
        memory_bytes: memory_total_bytes.max(1.0),
        dram_bandwidth_bytes_per_s: bandwidth_bytes_per_s,
        l2_bytes: None,
        sm_count: None,
        boost_clock_hz: None,
        tdp_w: None,
        kernel_overhead_s: 0.0,
        peaks: Vec::new(),
        provenance: Provenance::Measured,
        sources: Vec::new(),
        derived: Vec::new(),
        unverified: Vec::new(),
        notes: String::new(),
    });
    let kept_from_datasheet: Vec<String> = spec
        .peaks
        .iter()
        .filter(|p| !peaks.iter().any(|m| m.precision.compute_path() == p.path))
        .map(|p| p.path.name().to_owned())
        .collect();
    spec.key = format!("{}_measured", spec.key);
    spec.name = format!("{} (measured on {device_name})", spec.name);
    spec.provenance = Provenance::Measured;
    spec.dram_bandwidth_bytes_per_s = bandwidth_bytes_per_s;
    spec.kernel_overhead_s = kernel_overhead_s;
    let mut measured_paths = Vec::new();
    for measured in peaks {
        let path = measured.precision.compute_path();
        let flop_per_s = measured.achieved_tflops * 1e12;
        match spec.peaks.iter_mut().find(|p| p.path == path) {
            // Two precisions on one path (FP8 E4M3 and E5M2): keep the faster measurement.
            Some(p) if measured_paths.contains(&path) && p.dense_flop_per_s >= flop_per_s => {}
            Some(p) => {
                p.dense_flop_per_s = flop_per_s;
                p.sparse_flop_per_s = None;
            }
            None => spec.peaks.push(Peak {
                path,
                dense_flop_per_s: flop_per_s,
                sparse_flop_per_s: None,
            }),
        }
        measured_paths.push(path);
    }
    spec.sources = vec![format!(
        "measured by gpu-endpoint {} ({backend_kind} backend) on {device_name} at Unix time {:.0}: copy bandwidth, per-kernel overhead ({:.2} µs, a 1x2048x2048 GEMV) and best achieved GEMM throughput per precision",
        env!("CARGO_PKG_VERSION"),
        unix_now(),
        kernel_overhead_s * 1e6
    )];
    spec.notes = if kept_from_datasheet.is_empty() {
        "Every peak, the bandwidth and the kernel overhead were measured.".into()
    } else {
        format!(
            "Bandwidth, kernel overhead and {} measured; {} peaks kept from the datasheet.",
            measured_names(peaks),
            kept_from_datasheet.join(", ")
        )
    };
    spec
}

fn measured_names(peaks: &[CalibratedPeak]) -> String {
    if peaks.is_empty() {
        "no peak".into()
    } else {
        peaks
            .iter()
            .map(|p| p.precision.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
