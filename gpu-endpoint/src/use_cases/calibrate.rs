//! Calibration: measure DRAM bandwidth (copy kernel), the fixed per-kernel overhead of matrix kernels (a
//! small GEMV) and of vector kernels (a one-row RMSNorm), and the achieved peak of each precision on a
//! compute-bound shape, each [`CALIBRATION_RUNS`] times, then build a `HardwareSpec` with
//! `Provenance::Measured` from their medians (core's `HardwareSpec::calibrated`), keeping every figure's
//! spread, the host's load and the warnings they raise (core's `CalibrationQuality`), and store the result.
//! `POST /api/calibrate` and `gpu-endpoint calibrate` both call [`calibrate`].

use roofline_core::hardware::{Calibration, CalibrationQuality, Spread};
use roofline_core::wire::{
    BackendKind, CalibratedPeak, CalibrationResult, DeviceInfo, Failure, KernelOverhead, VectorKernelOverhead,
};
use roofline_core::{ComputePath, GemmShape, HardwareSpec, Norm, Operator, Precision, find_hardware};

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

/// Runs of every calibration measurement: three, the fewest with a median and a range (each run already
/// samples until its own noise is low, `protocol::SamplingPolicy`); issue 26 asks for 3 to 5.
pub const CALIBRATION_RUNS: usize = 3;

/// `runs` values of one measurement: the run whose value is the median (the lower middle one for an even
/// count) and the spread of all of them.
fn median_run<T>(runs: Vec<T>, value: impl Fn(&T) -> f64) -> Option<(T, Spread)> {
    let values: Vec<f64> = runs.iter().map(&value).collect();
    let spread = Spread::of(&values)?;
    let mut runs = runs;
    runs.sort_by(|a, b| value(a).total_cmp(&value(b)));
    let middle = (runs.len() - 1) / 2;
    Some((runs.swap_remove(middle), spread))
}

/// Repeats `measure` [`CALIBRATION_RUNS`] times; the first error ends it.
fn repeated<T, E>(mut measure: impl FnMut() -> Result<T, E>) -> Result<Vec<T>, E> {
    (0..CALIBRATION_RUNS).map(|_| measure()).collect()
}

/// The median run by `value` of [`CALIBRATION_RUNS`] runs of `measure`, with the spread; `None` when no run
/// gave a finite value, or when a run failed (its failure pushed to `failed`, the calibration goes on).
fn median_of_runs<T>(
    measure: impl FnMut() -> Result<T, Failure>,
    value: impl Fn(&T) -> f64,
    failed: &mut Vec<Failure>,
) -> Option<(T, Spread)> {
    match repeated(measure) {
        Ok(runs) => median_run(runs, value),
        Err(f) => {
            failed.push(f);
            None
        }
    }
}

/// The host's 1-minute load average per logical CPU (`sysinfo`), read on the CPU backend, whose
/// measurements share the host with everything else; `None` elsewhere and where the OS has no load average.
fn host_load_per_cpu(backend: BackendKind) -> Option<f64> {
    if backend != BackendKind::Cpu {
        return None;
    }
    let cpus = std::thread::available_parallelism().ok()?.get() as f64;
    let load = sysinfo::System::load_average().ok()?.one;
    load.is_finite().then(|| load / cpus)
}

/// Measures the device held by `guard` and builds its calibrated spec, then stores the result (a store
/// failure is logged). Every figure is the median of [`CALIBRATION_RUNS`] runs, each under `limits` (a peak
/// past its time cap is a `time_limit` entry in `failed`); the spec's `calibration` keeps their spread, the
/// host's load and the warnings.
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
    let host_load = host_load_per_cpu(info.backend);
    let measured_at = unix_now();
    let precisions = request.precisions.clone().unwrap_or_else(|| guard.measurable());
    let bandwidth_runs = repeated(|| limits.run(|| guard.measure_bandwidth()))?;
    let (bandwidth, bandwidth_spread) = median_run(bandwidth_runs, |b| b.bytes / b.measurement.median_s)
        .ok_or_else(|| BackendError::InvalidInput("the copy kernel gave no finite bandwidth".into()))?;
    let bandwidth_bytes_per_s = bandwidth_spread.median;
    let mut peaks = Vec::new();
    let mut peak_spreads: Vec<(ComputePath, Spread)> = Vec::new();
    let mut failed = Vec::new();
    let (kernel_overhead, overhead_spread) = median_of_runs(
        || measure_overhead(guard, bandwidth_bytes_per_s, limits),
        |o| o.kernel_overhead_s,
        &mut failed,
    )
    .unzip();
    let (vector_kernel_overhead, vector_spread) = median_of_runs(
        || measure_vector_overhead(guard, bandwidth_bytes_per_s, limits),
        |o| o.kernel_overhead_s,
        &mut failed,
    )
    .unzip();
    for precision in precisions {
        if limits.is_cancelled() {
            return Err(BackendError::Cancelled);
        }
        let spec = MatmulSpec {
            shape: guard.calibration_shape(precision),
            precision,
        };
        let runs = repeated(|| limits.run(|| guard.measure_matmul(&spec)));
        match runs.map(|runs| median_run(runs, |r| r.op.flops / r.measurement.median_s)) {
            Ok(Some((result, spread))) => {
                let path = result.precision.compute_path();
                // Two precisions on one path (FP8 E4M3 and E5M2): the faster one's spread, as its peak wins.
                match peak_spreads.iter_mut().find(|(p, _)| *p == path) {
                    Some((_, s)) if s.median >= spread.median => {}
                    Some((_, s)) => *s = spread,
                    None => peak_spreads.push((path, spread)),
                }
                peaks.push(CalibratedPeak {
                    precision: result.precision,
                    achieved_flop_per_s: spread.median,
                    shape: result.op.shape.clone(),
                    measurement: result.measurement,
                });
            }
            Ok(None) => {}
            Err(e) => failed.push(e.failure(precision)),
        }
    }
    let kernel_overhead_s = overhead_spread.map_or(0.0, |s| s.median);
    let vector_kernel_overhead_s = vector_spread.map(|s| s.median);
    let quality = CalibrationQuality::assess(
        measured_at,
        bandwidth_spread,
        overhead_spread,
        vector_spread,
        peak_spreads,
        host_load,
    );
    for warning in &quality.warnings {
        tracing::warn!(%warning, "calibration");
    }
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
        quality: Some(quality),
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
        "measured by gpu-endpoint {} ({} backend) on {} at Unix time {:.0}, the median of {CALIBRATION_RUNS} runs each: copy bandwidth, per-kernel overhead of matrix kernels ({:.2} µs, a 1x2048x2048 GEMV) and of vector kernels ({}), and achieved GEMM throughput per precision",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_run_is_kept_with_the_spread_of_all() {
        // Bandwidth runs of 19, 45 and 8 GB/s (the busy host): the 19 GB/s run is the median.
        let (run, spread) = median_run(vec![19e9, 45e9, 8e9], |v| *v).unwrap();
        assert_eq!(run, 19e9);
        assert_eq!((spread.runs, spread.min, spread.max), (3, 8e9, 45e9));
        assert_eq!(median_run(Vec::<f64>::new(), |v| *v), None);
        assert_eq!(repeated(|| Ok::<_, ()>(1)).unwrap().len(), CALIBRATION_RUNS);
    }
}
