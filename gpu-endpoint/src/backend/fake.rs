//! A deterministic fake backend for tests: it "measures" the roofline time of a fixed imaginary device
//! (1 TB/s, 100 TFLOP/s on every path but FP4/INT4), verifies nothing real and says so in every record
//! (`backend: fake`, `verified: false`). It is never selected unless asked for.

use std::time::Duration;

use roofline_core::wire::{BackendKind, DeviceInfo, NvmlStatus};
use roofline_core::{GemmShape, Operator, Precision};

use super::{
    Backend, BackendError, MatmulSpec, Measured, MeasuredBandwidth, StepTiming, Telemetry, prepare_step,
};
use crate::protocol::{RunInfo, SampleStats, TelemetrySummary, measurement};

/// Bandwidth of the fake device, in bytes/s.
pub const FAKE_BANDWIDTH: f64 = 1e12;
/// Peak of the fake device, in FLOP/s.
pub const FAKE_PEAK: f64 = 100e12;
/// Name of the fake device.
pub const FAKE_NAME: &str = "Fake Device (tests)";
/// Gap the fake adds after every kernel of a step timed end to end, in seconds.
pub const FAKE_LAUNCH_GAP_S: f64 = 2e-6;

/// The fake backend.
pub struct FakeBackend {
    delay: Duration,
}

impl FakeBackend {
    /// A fake that sleeps `delay` per measurement (0 in unit tests).
    #[must_use]
    pub fn new(delay: Duration) -> FakeBackend {
        FakeBackend { delay }
    }

    fn record(&self, kernel: &str, time_s: f64) -> roofline_core::wire::Measurement {
        let stats = SampleStats {
            median_s: time_s,
            p10_s: time_s * 0.99,
            p90_s: time_s * 1.01,
            mean_s: time_s,
            min_s: time_s * 0.98,
            rel_noise: 0.005,
            samples: 10,
            hit_time_cap: false,
        };
        let run = RunInfo {
            backend: BackendKind::Fake,
            library: "fake".into(),
            kernel: kernel.into(),
            device_name: FAKE_NAME.into(),
            versions: vec![("endpoint".into(), env!("CARGO_PKG_VERSION").into())],
            flushed: false,
            verified: false,
            padding: None,
        };
        measurement(run, &stats, TelemetrySummary::default())
    }
}

impl Backend for FakeBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Fake
    }

    fn device_info(&self) -> DeviceInfo {
        DeviceInfo {
            backend: BackendKind::Fake,
            name: FAKE_NAME.into(),
            arch: "fake".into(),
            compute_capability: None,
            memory_total_bytes: 1e9,
            memory_free_bytes: Some(1e9),
            sm_count: None,
            cpu_cores: None,
            sm_clock_max_mhz: None,
            mem_clock_max_mhz: None,
            l2_bytes: None,
            versions: vec![("endpoint".into(), env!("CARGO_PKG_VERSION").into())],
            matched_key: None,
            measurable_precisions: self.measurable(),
        }
    }

    fn measurable(&self) -> Vec<Precision> {
        Precision::ALL
            .into_iter()
            .filter(|p| !matches!(p, Precision::Int4 | Precision::Nvfp4 | Precision::Mxfp4))
            .collect()
    }

    fn memory_budget_bytes(&self) -> u64 {
        1_000_000_000
    }

    fn measure_matmul(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        if !self.measurable().contains(&spec.precision) {
            return Err(BackendError::Unsupported(format!(
                "{} cannot be measured on the fake device (arch `fake`): no native path",
                spec.precision
            )));
        }
        std::thread::sleep(self.delay);
        let op: Operator = spec
            .operator()
            .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        let time_s = (op.flops / FAKE_PEAK).max(op.bytes() / FAKE_BANDWIDTH);
        let kernel = match spec.shape {
            GemmShape { batch: 2.., .. } => "fake-batched-gemm",
            GemmShape { m: 0 | 1, .. } => "fake-gemv",
            _ => "fake-gemm",
        };
        Ok(Measured {
            measurement: self.record(kernel, time_s),
            precision: spec.precision,
            label_suffix: String::new(),
            op,
        })
    }

    /// The roofline time of the operator on the fake device, for every operator with a kernel description.
    fn measure_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        let Some(kernel) = op.kernel else {
            return Err(BackendError::Unsupported(format!(
                "the fake backend has no kernel for {} ({})",
                op.name,
                op.kind.name()
            )));
        };
        std::thread::sleep(self.delay);
        let time_s = (op.flops / FAKE_PEAK).max(op.bytes() / FAKE_BANDWIDTH);
        Ok(Measured {
            measurement: self.record(&format!("fake {}", kernel.label()), time_s),
            precision: op.precisions.compute(),
            label_suffix: String::new(),
            op: op.clone(),
        })
    }

    /// The sum of the operators' fake times over the launch order, plus [`FAKE_LAUNCH_GAP_S`] per kernel.
    fn measure_step(&self, ops: &[Operator], schedule: &[usize]) -> Result<StepTiming, BackendError> {
        let times = prepare_step(
            ops,
            |spec| self.measure_matmul(spec).map(|m| m.measurement.median_s),
            |op| self.measure_operator(op).map(|m| m.measurement.median_s),
        )?;
        let time_s = schedule.iter().map(|&i| times[i] + FAKE_LAUNCH_GAP_S).sum();
        let kernels = u32::try_from(schedule.len()).unwrap_or(u32::MAX);
        Ok(StepTiming {
            kernels,
            measurement: self.record(&format!("fake sequence of {kernels} kernels"), time_s),
        })
    }

    fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError> {
        std::thread::sleep(self.delay);
        let bytes = 2.0 * 256e6;
        Ok(MeasuredBandwidth {
            bytes,
            measurement: self.record("fake-copy", bytes / FAKE_BANDWIDTH),
        })
    }

    fn calibration_shape(&self, _precision: Precision) -> GemmShape {
        GemmShape::matmul(4096, 4096, 4096)
    }
}

/// Fixed telemetry of the fake device.
pub struct FakeTelemetry;

impl Telemetry for FakeTelemetry {
    fn status(&self) -> Result<NvmlStatus, BackendError> {
        Ok(NvmlStatus {
            device_name: FAKE_NAME.into(),
            gpu_clock_mhz: 1500.0,
            mem_clock_mhz: 2600.0,
            power_draw_w: 100.0,
            power_limit_w: 300.0,
            temperature_c: 50.0,
            mem_used_mb: 10.0,
            mem_total_mb: 1000.0,
            gpu_utilization_pct: 0.0,
            compute_capability: [0, 0],
            throttle_reasons: Vec::new(),
        })
    }
}
