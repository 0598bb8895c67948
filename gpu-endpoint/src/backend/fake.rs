//! A deterministic fake backend for tests: it "measures" the roofline time of a fixed imaginary device
//! (1 TB/s, 100 TFLOP/s on every path but FP4/INT4), verifies nothing real and says so in every record
//! (`backend: fake`, `verified: false`). It is never selected unless asked for. [`FakeBackend::h200`] names
//! itself like an H200 and measures what the CUDA backend does on sm_90 (INT4 only as the W4A16 GEMV).

use std::time::Duration;

use roofline_core::measured_device::catalog_key_of_device_name;
use roofline_core::wire::{BackendKind, DeviceInfo, NvmlStatus};
use roofline_core::{Architecture, GemmShape, OperandPrecisions, Operator, Precision};

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

/// The driver name of [`FakeBackend::h200`] (matched to the catalog's `h200_sxm`).
pub const FAKE_H200_NAME: &str = "NVIDIA H200";

/// The fake backend.
pub struct FakeBackend {
    delay: Duration,
    /// Shaped like an H200 ([`FakeBackend::h200`]).
    hopper: bool,
    /// Precisions whose every measurement fails ([`FakeBackend::failing`]).
    failing: Vec<Precision>,
}

impl FakeBackend {
    /// A fake that sleeps `delay` per measurement (0 in unit tests).
    #[must_use]
    pub fn new(delay: Duration) -> FakeBackend {
        FakeBackend {
            delay,
            hopper: false,
            failing: Vec::new(),
        }
    }

    /// A fake shaped like an NVIDIA H200 (sm_90, catalog key `h200_sxm`): it measures what the CUDA backend
    /// does on Hopper, whose matrix units take no INT4, so INT4 is only the W4A16 GEMV (M = 1: INT4 g128
    /// weights, FP16 activations), at the fake's figures.
    #[must_use]
    pub fn h200(delay: Duration) -> FakeBackend {
        FakeBackend {
            hopper: true,
            ..FakeBackend::new(delay)
        }
    }

    /// The fake with every measurement of `precision` failing its output check (tests of partial failures).
    #[must_use]
    pub fn failing(mut self, precision: Precision) -> FakeBackend {
        self.failing.push(precision);
        self
    }

    fn arch(&self) -> &'static str {
        if self.hopper { "sm_90" } else { "fake" }
    }

    fn name(&self) -> &'static str {
        if self.hopper { FAKE_H200_NAME } else { FAKE_NAME }
    }

    /// The operator `spec` runs as: INT4 on the H200 fake is the W4A16 GEMV, refused above M = 1.
    fn operator(&self, spec: &MatmulSpec) -> Result<(Operator, &'static str), BackendError> {
        let GemmShape { m, n, k, .. } = spec.shape;
        let invalid = |e: roofline_core::Error| BackendError::InvalidInput(e.to_string());
        if self.hopper && spec.precision == Precision::Int4 {
            if m > 1 {
                return Err(BackendError::Unsupported(format!(
                    "INT4 GEMM (M = {m}) has no native tensor path on sm_90 ({FAKE_H200_NAME}); only the W4A16 GEMV (M = 1) is implemented"
                )));
            }
            let op = Operator::gemv(n, k, OperandPrecisions::W4A16_INT4).map_err(invalid)?;
            return Ok((op, " W4A16-dequant"));
        }
        Ok((spec.operator().map_err(invalid)?, ""))
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
            device_name: self.name().into(),
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
            name: self.name().into(),
            arch: self.arch().into(),
            compute_capability: self.hopper.then_some([9, 0]),
            memory_total_bytes: 1e9,
            memory_free_bytes: Some(1e9),
            sm_count: None,
            cpu_cores: None,
            sm_clock_max_mhz: None,
            mem_clock_max_mhz: None,
            l2_bytes: None,
            versions: vec![("endpoint".into(), env!("CARGO_PKG_VERSION").into())],
            matched_key: self
                .hopper
                .then(|| catalog_key_of_device_name(FAKE_H200_NAME).map(str::to_owned))
                .flatten(),
            measurable_precisions: self.measurable(),
        }
    }

    fn measurable(&self) -> Vec<Precision> {
        if self.hopper {
            // What the CUDA backend measures on sm_90: the formats Hopper's matrix units take without block
            // scales but FP64 (cuBLASLt's `LtKind`), and INT4 as the W4A16 GEMV.
            let hopper = Architecture::Hopper;
            return Precision::ALL
                .into_iter()
                .filter(|&p| {
                    p == Precision::Int4
                        || (hopper.runs_format(p) && p.block_scale().is_none() && p != Precision::Fp64)
                })
                .collect();
        }
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
                "{} cannot be measured on the fake device (arch `{}`): no native path",
                spec.precision,
                self.arch()
            )));
        }
        std::thread::sleep(self.delay);
        let (op, label_suffix) = self.operator(spec)?;
        if self.failing.contains(&spec.precision) {
            return Err(BackendError::Verification(format!(
                "{} forced to fail by the fake backend's test setup",
                spec.precision
            )));
        }
        let time_s = (op.flops / FAKE_PEAK).max(op.bytes() / FAKE_BANDWIDTH);
        let kernel = match spec.shape {
            GemmShape { batch: 2.., .. } => "fake-batched-gemm",
            GemmShape { m: 0 | 1, .. } => "fake-gemv",
            _ => "fake-gemm",
        };
        Ok(Measured {
            measurement: self.record(&format!("{kernel}{label_suffix}"), time_s),
            precision: spec.precision,
            label_suffix: label_suffix.into(),
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

    /// 4096³, and the GEMV 1×4096×4096 for the H200 fake's INT4 (W4A16).
    fn calibration_shape(&self, precision: Precision) -> GemmShape {
        if self.hopper && precision == Precision::Int4 {
            GemmShape::matmul(1, 4096, 4096)
        } else {
            GemmShape::matmul(4096, 4096, 4096)
        }
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
