//! Calibration: measure DRAM bandwidth (copy kernel), the fixed per-kernel overhead of matrix kernels (a
//! small GEMV) and of vector kernels (a one-row RMSNorm), the achieved peak of each precision on a
//! compute-bound shape and what weight-only GEMVs stream (W4A16: a bandwidth ceiling, never an INT4 peak),
//! each [`CALIBRATION_RUNS`] times (GPU peaks after a clock warm-up, [`PEAK_CLOCK_WARMUP`]), then build a
//! `HardwareSpec` with `Provenance::Measured` from their medians (core's `HardwareSpec::calibrated`), keeping
//! every figure's spread and why it spreads, the host's load and the warnings (core's `CalibrationQuality`),
//! and store the result. A precision that fails is listed in `failed`; the spec is built from the others.
//! `POST /api/calibrate` and `gpu-endpoint calibrate` both call [`calibrate`].

use std::time::Duration;

use roofline_cli::lists::distinct;
use roofline_core::hardware::{Calibration, CalibrationQuality, PathRuns, Spread};
use roofline_core::wire::{
    BackendKind, CalibratedPeak, CalibratedWeightOnly, CalibrationResult, DeviceInfo, ErrorCode, Failure,
    KernelOverhead, VectorKernelOverhead,
};
use roofline_core::{ComputePath, GemmShape, HardwareSpec, Norm, Operator, Precision, find_hardware};

use super::UseCaseError;
use crate::backend::{BackendError, MatmulSpec, Measured};
use crate::device::DeviceGuard;
use crate::protocol::{ClockWarmup, PointLimits, unix_now};
use crate::store::Store;

/// What to calibrate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalibrationRequest {
    /// The catalog spec to start from (its unmeasured peaks are kept and named in the spec's notes); `None`:
    /// the measured device's catalog entry when it has one, else only measured peaks are in the spec.
    pub base: Option<&'static HardwareSpec>,
    /// The precisions whose peaks are measured, each once however often it is listed; `None`: every
    /// precision the backend runs natively.
    pub precisions: Option<Vec<Precision>>,
}

/// Most precisions one calibration may list (repeats included).
pub const MAX_CALIBRATE_PRECISIONS: usize = 16;

impl CalibrationRequest {
    /// A request whose list of precisions, when given, holds 1 to [`MAX_CALIBRATE_PRECISIONS`] entries.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] naming the bound.
    pub fn new(
        base: Option<&'static HardwareSpec>,
        precisions: Option<Vec<Precision>>,
    ) -> Result<CalibrationRequest, BackendError> {
        if let Some(list) = &precisions
            && (list.is_empty() || list.len() > MAX_CALIBRATE_PRECISIONS)
        {
            return Err(BackendError::InvalidInput(format!(
                "precisions must list 1 to {MAX_CALIBRATE_PRECISIONS} precisions, got {}",
                list.len()
            )));
        }
        Ok(CalibrationRequest { base, precisions })
    }
}

/// Runs of every calibration measurement: three, the fewest with a median and a range (each run already
/// samples until its own noise is low, `protocol::SamplingPolicy`); issue 26 asks for 3 to 5.
pub const CALIBRATION_RUNS: usize = 3;

/// The clock warm-up before the samples of every peak and weight-only run on a GPU: at least 1 s of the run's
/// own kernel, until 10 runs agree within 1 %, at most 3 s. Without it each run sampled a short burst
/// wherever the clocks were (boost after the host-side preparation left the GPU idle, lower under the
/// previous run's power draw): an H200's peaks varied 12–17 % over their 3 runs (SM clock 1440–1980 MHz).
pub const PEAK_CLOCK_WARMUP: ClockWarmup = ClockWarmup {
    min: Duration::from_secs(1),
    max: Duration::from_secs(3),
};

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

/// Measures the device held by `guard` and builds its calibrated spec, then commits the result to `store`
/// (when there is one): a calibration is returned only once stored. Every figure is the median of [`CALIBRATION_RUNS`] runs, each under `limits` (a peak
/// past its time cap is a `time_limit` entry in `failed`); on a GPU each peak run warms the clocks first
/// ([`PEAK_CLOCK_WARMUP`]). The spec's `calibration` keeps their spread, the host's load and the warnings.
/// A precision that fails, or that measured a path the device's spec lacks, is a `failed` entry.
///
/// # Errors
/// [`UseCaseError::Backend`]: the bandwidth measurement's error (a spec without bandwidth is meaningless),
/// [`BackendError::Cancelled`], or [`BackendError::InvalidInput`] when no usable spec comes out of the
/// measurements; [`UseCaseError::NotStored`] (logged) when the store could not commit the result.
pub fn calibrate(
    guard: &DeviceGuard<'_>,
    store: Option<&Store>,
    request: &CalibrationRequest,
    limits: &PointLimits,
) -> Result<CalibrationResult, UseCaseError> {
    let info = guard.device_info();
    let base = request.base.or_else(|| {
        info.matched_key
            .as_deref()
            .and_then(|key| find_hardware(key).ok())
    });
    let host_load = host_load_per_cpu(info.backend);
    let measured_at = unix_now();
    let precisions = distinct(request.precisions.clone().unwrap_or_else(|| guard.measurable()));
    let bandwidth_runs = repeated(|| limits.run(|| guard.measure_bandwidth()))?;
    let (bandwidth, bandwidth_spread) = median_run(bandwidth_runs, |b| b.bytes / b.measurement.median_s)
        .ok_or_else(|| BackendError::InvalidInput("the copy kernel gave no finite bandwidth".into()))?;
    let bandwidth_bytes_per_s = bandwidth_spread.median;
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
    let kernel_overhead_s = overhead_spread.map_or(0.0, |s| s.median);
    let warmed = info.backend == BackendKind::Cuda;
    let peak_limits = if warmed {
        limits.with_clock_warmup(PEAK_CLOCK_WARMUP)
    } else {
        limits.clone()
    };
    let mut ceilings = Ceilings::default();
    for precision in precisions {
        if limits.is_cancelled() {
            return Err(BackendError::Cancelled.into());
        }
        let spec = MatmulSpec {
            shape: guard.calibration_shape(precision),
            precision,
        };
        match repeated(|| peak_limits.run(|| guard.measure_matmul(&spec))) {
            Ok(runs) => ceilings.add(precision, runs, base, kernel_overhead_s, &mut failed),
            Err(e) => failed.push(e.failure(precision)),
        }
    }
    ceilings.keep_weight_only_with_a_peak(base, &mut failed);
    let vector_kernel_overhead_s = vector_spread.map(|s| s.median);
    let quality = CalibrationQuality::assess(
        measured_at,
        bandwidth_spread,
        overhead_spread,
        vector_spread,
        ceilings.peak_runs,
        ceilings.weight_only_runs,
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
        peaks: ceilings
            .peaks
            .iter()
            .map(|p| (p.precision.compute_path(), p.achieved_flop_per_s))
            .collect(),
        weight_only: ceilings
            .weight_only
            .iter()
            .map(|w| (w.operands.compute().compute_path(), w.bandwidth_bytes_per_s))
            .collect(),
        source: source(&info, kernel_overhead_s, vector_kernel_overhead_s, warmed),
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
        peaks: ceilings.peaks,
        weight_only: ceilings.weight_only,
        kernel_overhead,
        vector_kernel_overhead,
        failed,
        spec,
    };
    if let Some(store) = store
        && let Err(e) = store.insert_calibration(&info.name, &result)
    {
        tracing::error!(error = %e, "could not store the calibration");
        return Err(UseCaseError::NotStored(format!(
            "the calibration of {} ({}) was measured but the store could not commit it, so it is not reported \
             as calibrated and no later request can use it: {e}",
            info.name, result.spec.key
        )));
    }
    Ok(result)
}

/// What the precisions' runs calibrated: compute peaks and weight-only GEMV bandwidths, with their runs.
#[derive(Default)]
struct Ceilings {
    peaks: Vec<CalibratedPeak>,
    peak_runs: Vec<PathRuns>,
    weight_only: Vec<CalibratedWeightOnly>,
    weight_only_runs: Vec<PathRuns>,
}

impl Ceilings {
    /// Adds the runs of `precision`: a weight-only GEMV (W4A16) as the bandwidth its bytes stream at over its
    /// time less `overhead_s`, any other matmul as a peak on its compute path. A path `base` lacks, or runs
    /// without a usable value, become a `failed` entry instead.
    fn add(
        &mut self,
        precision: Precision,
        runs: Vec<Measured>,
        base: Option<&HardwareSpec>,
        overhead_s: f64,
        failed: &mut Vec<Failure>,
    ) {
        let why = Some(spread_reason(&runs));
        let weight_only = runs.first().is_some_and(|r| r.op.precisions.is_weight_only());
        let value = |r: &Measured| {
            if weight_only {
                r.op.bytes() / (r.measurement.median_s - overhead_s)
            } else {
                r.op.flops / r.measurement.median_s
            }
        };
        let fail = |failed: &mut Vec<Failure>, code, message: String| {
            failed.push(Failure {
                precision,
                code,
                message,
            });
        };
        let Some((run, spread)) = median_run(runs, value).filter(|(_, s)| s.min > 0.0) else {
            let what = if weight_only {
                format!(
                    "its time was not above the matrix-kernel overhead ({:.2} µs)",
                    overhead_s * 1e6
                )
            } else {
                "no finite throughput".to_owned()
            };
            return fail(failed, ErrorCode::Internal, format!("no usable run: {what}"));
        };
        let path = run.op.precisions.compute().compute_path();
        if let Some(base) = base.filter(|b| !b.arch.runs_path(path)) {
            return fail(
                failed,
                ErrorCode::Unsupported,
                format!(
                    "{} ran on the {path} path, which {} ({}) does not have: not calibrated",
                    run.measurement.kernel, base.key, base.arch_label
                ),
            );
        }
        if weight_only {
            self.weight_only.push(CalibratedWeightOnly {
                precision: run.precision,
                operands: run.op.precisions,
                shape: run.op.shape.clone(),
                bytes: run.op.bytes(),
                bandwidth_bytes_per_s: spread.median,
                measurement: run.measurement,
            });
            self.weight_only_runs.push(PathRuns { path, spread, why });
            return;
        }
        // Two precisions on one path (FP8 E4M3 and E5M2): the faster one's spread, as its peak wins.
        match self.peak_runs.iter_mut().find(|r| r.path == path) {
            Some(r) if r.spread.median >= spread.median => {}
            Some(r) => (r.spread, r.why) = (spread, why),
            None => self.peak_runs.push(PathRuns { path, spread, why }),
        }
        self.peaks.push(CalibratedPeak {
            precision: run.precision,
            achieved_flop_per_s: spread.median,
            shape: run.op.shape.clone(),
            measurement: run.measurement,
        });
    }

    /// Moves a weight-only GEMV whose activations' path has no peak (measured now or in `base`) to `failed`:
    /// its large-M ceiling is that peak.
    fn keep_weight_only_with_a_peak(&mut self, base: Option<&HardwareSpec>, failed: &mut Vec<Failure>) {
        let peaks = &self.peaks;
        let has_peak = |path: ComputePath| {
            peaks.iter().any(|p| p.precision.compute_path() == path)
                || base.is_some_and(|b| b.peak(path).is_some())
        };
        let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(&mut self.weight_only)
            .into_iter()
            .partition(|w| has_peak(w.operands.compute().compute_path()));
        for w in dropped {
            let path = w.operands.compute().compute_path();
            self.weight_only_runs.retain(|r| r.path != path);
            failed.push(Failure {
                precision: w.precision,
                code: ErrorCode::Unsupported,
                message: format!(
                    "the weight-only GEMV computes on {path}, which has no measured or catalog peak here: not calibrated"
                ),
            });
        }
        self.weight_only = kept;
    }
}

/// Why the runs of one figure disagree, from what each recorded: NVML's SM clock (its range when it moved by
/// more than 1 %), throttle reasons, and whether the runs chose different kernels (each run picks its
/// cuBLASLt algorithm anew). Attached to a peak's warning when its runs spread past the target.
fn spread_reason(runs: &[Measured]) -> String {
    let clocks: Vec<f64> = runs.iter().filter_map(|r| r.measurement.sm_clock_mhz).collect();
    let mut parts = vec![match Spread::of(&clocks) {
        Some(c) if c.relative() > 0.01 => format!(
            "SM clock {:.0}–{:.0} MHz over the runs: the clocks moved",
            c.min, c.max
        ),
        Some(c) => format!("SM clock {:.0} MHz in every run", c.median),
        None => "no SM clock telemetry (NVML) to tell why".to_owned(),
    }];
    let mut throttled: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.measurement.throttle_reasons.iter().map(String::as_str))
        .collect();
    throttled.sort_unstable();
    throttled.dedup();
    if !throttled.is_empty() {
        parts.push(format!("throttled: {}", throttled.join(", ")));
    }
    let mut kernels: Vec<&str> = runs.iter().map(|r| r.measurement.kernel.as_str()).collect();
    kernels.sort_unstable();
    kernels.dedup();
    if kernels.len() > 1 {
        parts.push(format!(
            "the runs chose different kernels: {}",
            kernels.join(" | ")
        ));
    }
    parts.join("; ")
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

/// How, where and when the calibration was measured (the spec's source); `warmed`: the GPU clock warm-up.
fn source(
    info: &DeviceInfo,
    kernel_overhead_s: f64,
    vector_kernel_overhead_s: Option<f64>,
    warmed: bool,
) -> String {
    let warmup = if warmed {
        format!(
            ", each peak run after a clock warm-up (at least {:.0} s of its GEMM, until 10 runs agree within 1 %, at most {:.0} s)",
            PEAK_CLOCK_WARMUP.min.as_secs_f64(),
            PEAK_CLOCK_WARMUP.max.as_secs_f64()
        )
    } else {
        String::new()
    };
    format!(
        "measured by gpu-endpoint {} ({} backend) on {} at Unix time {:.0}, the median of {CALIBRATION_RUNS} runs each: copy bandwidth, per-kernel overhead of matrix kernels ({:.2} µs, a 1x2048x2048 GEMV) and of vector kernels ({}), achieved GEMM throughput per precision and weight-only GEMV bandwidth{warmup}",
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
    use std::sync::Arc;

    use super::*;
    use crate::backend::fake::FakeBackend;
    use crate::device::Device;
    use roofline_core::wire::Measurement;
    use roofline_core::{GemmFamily, OperandPrecisions};

    #[test]
    fn a_hopper_calibrates_with_its_defaults_even_when_a_precision_fails() {
        // The fake H200 measures what the CUDA backend does on sm_90, INT4 as the W4A16 GEMV; INT8 is made
        // to fail its output check.
        let backend = FakeBackend::h200(Duration::ZERO).failing(Precision::Int8);
        let device = Device::new(Arc::new(backend));
        let guard = device.acquire();
        let result = calibrate(
            &guard,
            None,
            &CalibrationRequest::default(),
            &PointLimits::default(),
        )
        .expect("a Hopper calibrates with its defaults");
        assert_eq!(result.spec.key, "h200_sxm_measured");
        // INT8 is listed with its reason; the spec keeps the catalog's INT8 peak.
        let failed: Vec<(Precision, &str)> = result
            .failed
            .iter()
            .map(|f| (f.precision, f.code.as_str()))
            .collect();
        assert_eq!(failed, [(Precision::Int8, "verification_failed")]);
        assert!(
            result.failed[0].message.contains("forced to fail"),
            "{:?}",
            result.failed
        );
        assert_eq!(
            result.spec.peak(ComputePath::Int8).unwrap().dense_flop_per_s,
            1978.9e12
        );
        // INT4 is no peak: the W4A16 GEMV 1×4096×4096 streams 8 667 136 B in 8.667 µs on the fake (1 TB/s,
        // no kernel overhead): a weight-only ceiling of 1 TB/s on the FP16 path.
        assert!(result.peaks.iter().all(|p| p.precision != Precision::Int4));
        assert!(result.spec.peak(ComputePath::Int4).is_none());
        let [w4] = result.weight_only.as_slice() else {
            panic!("one weight-only GEMV: {:?}", result.weight_only)
        };
        assert_eq!(
            (w4.precision, w4.operands),
            (Precision::Int4, OperandPrecisions::W4A16_INT4)
        );
        assert_eq!(w4.bytes, 8_667_136.0);
        assert!(
            (w4.bandwidth_bytes_per_s - 1e12).abs() < 1.0,
            "{}",
            w4.bandwidth_bytes_per_s
        );
        let ceiling = result
            .spec
            .gemm_family(GemmFamily::WeightOnly, ComputePath::Fp16)
            .unwrap();
        assert_eq!(ceiling.bandwidth_bytes_per_s, w4.bandwidth_bytes_per_s);
        assert_eq!(ceiling.dense_flop_per_s, 100e12);
        let quality = result.spec.calibration.as_ref().unwrap();
        assert_eq!(quality.weight_only.len(), 1);
        assert!(quality.warnings.is_empty(), "{:?}", quality.warnings);
        // The fake is no GPU: no clock warm-up is claimed.
        assert!(
            !result.spec.sources[0].contains("warm-up"),
            "{}",
            result.spec.sources[0]
        );
    }

    #[test]
    fn a_peak_measured_on_a_path_the_spec_lacks_is_listed_not_fatal() {
        // The generic fake measures FP8; calibrated on an A100 (no FP8 path) the FP8 runs are listed.
        let device = Device::new(Arc::new(FakeBackend::new(Duration::ZERO)));
        let request = CalibrationRequest {
            base: Some(find_hardware("a100_sxm_80gb").unwrap()),
            precisions: Some(vec![Precision::Fp16, Precision::Fp8E4M3]),
        };
        let result = calibrate(&device.acquire(), None, &request, &PointLimits::default()).unwrap();
        assert_eq!(result.peaks.len(), 1);
        assert_eq!(
            (result.failed[0].precision, result.failed[0].code.as_str()),
            (Precision::Fp8E4M3, "unsupported")
        );
        assert!(
            result.failed[0].message.contains("Ampere"),
            "{}",
            result.failed[0].message
        );
    }

    #[test]
    fn a_spread_is_explained_by_the_clocks_and_kernels_each_run_recorded() {
        let run = |clock: Option<f64>, kernel: &str| Measured {
            op: Operator::matmul(64, 64, 64, Precision::Fp16.into()).unwrap(),
            precision: Precision::Fp16,
            label_suffix: String::new(),
            measurement: Measurement {
                sm_clock_mhz: clock,
                kernel: kernel.into(),
                ..Measurement::default()
            },
        };
        // The H200's FP16 runs: 1440, 1725 and 1980 MHz.
        let moved = [
            run(Some(1440.0), "a"),
            run(Some(1980.0), "a"),
            run(Some(1725.0), "b"),
        ];
        assert_eq!(
            spread_reason(&moved),
            "SM clock 1440–1980 MHz over the runs: the clocks moved; the runs chose different kernels: a | b"
        );
        let steady = [run(Some(1980.0), "a"), run(Some(1980.0), "a")];
        assert_eq!(spread_reason(&steady), "SM clock 1980 MHz in every run");
        assert_eq!(
            spread_reason(&[run(None, "a")]),
            "no SM clock telemetry (NVML) to tell why"
        );
    }

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
