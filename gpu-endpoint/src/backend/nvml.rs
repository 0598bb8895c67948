//! NVML telemetry (the only file that names `nvml_wrapper`): one status sample, and a background sampler
//! that records SM clock, power, temperature and throttle reasons while a kernel is being timed.
//!
//! NVML is loaded at run time (`libnvidia-ml.so.1`); without it, [`NvmlTelemetry::open`] returns the reason.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use roofline_core::wire::NvmlStatus;

use super::{BackendError, Telemetry};
use crate::protocol::{TelemetrySummary, quantile_sorted};

/// NVML, initialized once per process.
pub struct NvmlTelemetry {
    nvml: Nvml,
}

static SHARED: OnceLock<Result<Arc<NvmlTelemetry>, BackendError>> = OnceLock::new();

impl NvmlTelemetry {
    /// The process-wide NVML handle (initialized on first use).
    ///
    /// # Errors
    /// [`BackendError::Unavailable`]: why NVML cannot be used (library missing, no device).
    pub fn open() -> Result<Arc<NvmlTelemetry>, BackendError> {
        SHARED
            .get_or_init(|| {
                let nvml = Nvml::init().map_err(|e| unavailable("NVML unavailable", &e))?;
                let count = nvml
                    .device_count()
                    .map_err(|e| unavailable("NVML device count failed", &e))?;
                if count == 0 {
                    return Err(BackendError::Unavailable("NVML found no GPU".into()));
                }
                Ok(Arc::new(NvmlTelemetry { nvml }))
            })
            .clone()
    }

    /// Driver and CUDA driver versions.
    #[must_use]
    pub fn versions(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Ok(v) = self.nvml.sys_driver_version() {
            out.push(("driver".into(), v));
        }
        if let Ok(v) = self.nvml.sys_cuda_driver_version() {
            out.push(("cuda_driver".into(), format!("{}.{}", v / 1000, (v % 1000) / 10)));
        }
        out
    }

    /// Maximum SM and memory clocks, in MHz.
    #[must_use]
    pub fn max_clocks_mhz(&self) -> (Option<f64>, Option<f64>) {
        let Ok(device) = self.nvml.device_by_index(0) else {
            return (None, None);
        };
        (
            device.max_clock_info(Clock::SM).ok().map(f64::from),
            device.max_clock_info(Clock::Memory).ok().map(f64::from),
        )
    }

    /// Runs `work` while a background thread samples NVML every 10 ms; returns the summary.
    pub fn sample_during<T>(&self, work: impl FnOnce() -> T) -> (T, TelemetrySummary) {
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let sampler = scope.spawn(|| {
                let mut clocks = Vec::new();
                let mut powers = Vec::new();
                let mut temp_max: Option<f64> = None;
                let mut reasons: Vec<String> = Vec::new();
                let Ok(device) = self.nvml.device_by_index(0) else {
                    return TelemetrySummary::default();
                };
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(c) = device.clock_info(Clock::SM) {
                        clocks.push(f64::from(c));
                    }
                    if let Ok(p) = device.power_usage() {
                        powers.push(f64::from(p) / 1000.0);
                    }
                    if let Ok(t) = device.temperature(TemperatureSensor::Gpu) {
                        temp_max = Some(temp_max.map_or(f64::from(t), |m: f64| m.max(f64::from(t))));
                    }
                    if let Ok(r) = device.current_throttle_reasons() {
                        for (name, _) in r.iter_names() {
                            if name != "GPU_IDLE" && !reasons.iter().any(|x| x == name) {
                                reasons.push(name.to_owned());
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                clocks.sort_by(f64::total_cmp);
                powers.sort_by(f64::total_cmp);
                TelemetrySummary {
                    sm_clock_mhz: (!clocks.is_empty()).then(|| quantile_sorted(&clocks, 0.5)),
                    power_w: (!powers.is_empty()).then(|| quantile_sorted(&powers, 0.5)),
                    temperature_c: temp_max,
                    throttle_reasons: reasons,
                }
            });
            let out = work();
            stop.store(true, Ordering::Relaxed);
            let summary = sampler.join().unwrap_or_default();
            (out, summary)
        })
    }
}

impl Telemetry for NvmlTelemetry {
    fn status(&self) -> Result<NvmlStatus, BackendError> {
        let device = self
            .nvml
            .device_by_index(0)
            .map_err(|e| unavailable("NVML device 0", &e))?;
        let memory = device
            .memory_info()
            .map_err(|e| unavailable("NVML memory info", &e))?;
        let cc = device
            .cuda_compute_capability()
            .map_err(|e| unavailable("NVML compute capability", &e))?;
        Ok(NvmlStatus {
            device_name: device.name().unwrap_or_default(),
            gpu_clock_mhz: device.clock_info(Clock::Graphics).map_or(0.0, f64::from),
            mem_clock_mhz: device.clock_info(Clock::Memory).map_or(0.0, f64::from),
            power_draw_w: device.power_usage().map_or(0.0, |mw| f64::from(mw) / 1000.0),
            power_limit_w: device
                .enforced_power_limit()
                .map_or(0.0, |mw| f64::from(mw) / 1000.0),
            temperature_c: device.temperature(TemperatureSensor::Gpu).map_or(0.0, f64::from),
            mem_used_mb: memory.used as f64 / 1e6,
            mem_total_mb: memory.total as f64 / 1e6,
            gpu_utilization_pct: device.utilization_rates().map_or(0.0, |u| f64::from(u.gpu)),
            compute_capability: [
                u32::try_from(cc.major).unwrap_or_default(),
                u32::try_from(cc.minor).unwrap_or_default(),
            ],
            throttle_reasons: device
                .current_throttle_reasons()
                .map(|r| r.iter_names().map(|(n, _)| n.to_owned()).collect())
                .unwrap_or_default(),
        })
    }
}

/// The NVML failure of `call` as [`BackendError::Unavailable`] (`<call>: <NVML's reason>`).
fn unavailable(call: &str, e: &nvml_wrapper::error::NvmlError) -> BackendError {
    BackendError::Unavailable(format!("{call}: {e}"))
}
