//! The run-time choice of the backend: CUDA when the `cuda` feature is compiled in and device 0 opens
//! (driver, cuBLASLt and NVRTC present), else the host CPU; the fake only when asked for. NVML telemetry is
//! opened beside it. With `backend.rs`, the only place that names `cfg(feature = "cuda")`.

use std::sync::Arc;
use std::time::Duration;

use super::cpu::CpuBackend;
use super::fake::{FakeBackend, FakeTelemetry};
use super::nvml::NvmlTelemetry;
use super::{Backend, BackendError, Telemetry};

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// CUDA when compiled in and a device opens, else the CPU.
    Auto,
    /// CUDA or fail.
    Cuda,
    /// The host CPU.
    Cpu,
    /// Deterministic fake (tests).
    Fake,
    /// Deterministic fake shaped like an H200: sm_90, no INT4 matrix path (tests).
    FakeH200,
}

/// Options of the backends.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendOptions {
    /// Memory cap of the CPU backend, in bytes (2 GiB by default: `--max-buffer-mb`'s 2048 MB is the CLI's).
    pub cpu_memory_cap_bytes: u64,
    /// Per-point delay of the fake backend (tests of cancellation and crash safety).
    pub fake_delay: Duration,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions {
            cpu_memory_cap_bytes: 2 << 30,
            fake_delay: Duration::ZERO,
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

/// Why no backend was selected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectError {
    /// `cuda` was asked for explicitly and device 0 could not be opened.
    #[error("cannot use the CUDA backend: {0}")]
    Cuda(BackendError),
}

/// Picks the backend at run time.
///
/// # Errors
/// [`SelectError::Cuda`] when `cuda` is asked for explicitly and cannot be opened.
pub fn select(choice: BackendChoice, options: &BackendOptions) -> Result<Selected, SelectError> {
    if matches!(choice, BackendChoice::Fake | BackendChoice::FakeH200) {
        let (backend, reason) = if choice == BackendChoice::Fake {
            (
                FakeBackend::new(options.fake_delay),
                "fake backend requested (deterministic, for tests)",
            )
        } else {
            (
                FakeBackend::h200(options.fake_delay),
                "fake H200 backend requested (deterministic, shaped like sm_90, for tests)",
            )
        };
        return Ok(Selected {
            backend: Arc::new(backend),
            reason: reason.into(),
            telemetry: Some(Arc::new(FakeTelemetry)),
            telemetry_reason: String::new(),
        });
    }
    let (telemetry, telemetry_reason): (Option<Arc<dyn Telemetry>>, String) = match NvmlTelemetry::open() {
        Ok(t) => (Some(t), String::new()),
        Err(e) => (None, e.to_string()),
    };
    let why_cpu = match choice {
        BackendChoice::Cpu => "CPU backend requested".to_owned(),
        _ => match open_cuda() {
            Ok(backend) => {
                return Ok(Selected {
                    backend,
                    reason: "CUDA device 0 opened (driver, cuBLASLt and NVRTC present)".into(),
                    telemetry,
                    telemetry_reason,
                });
            }
            Err(why) if choice == BackendChoice::Cuda => return Err(SelectError::Cuda(why)),
            Err(why) => why.to_string(),
        },
    };
    Ok(Selected {
        backend: Arc::new(CpuBackend::new(options.cpu_memory_cap_bytes)),
        reason: format!("{why_cpu}; measuring the host CPU"),
        telemetry,
        telemetry_reason,
    })
}

/// Opens CUDA device 0; a panic of the CUDA libraries' loaders is caught and becomes the reason.
#[cfg(feature = "cuda")]
fn open_cuda() -> Result<Arc<dyn Backend>, BackendError> {
    match std::panic::catch_unwind(super::cuda::CudaBackend::open) {
        Ok(Ok(backend)) => Ok(Arc::new(backend)),
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(BackendError::Unavailable(format!(
            "CUDA initialization panicked: {}",
            panic_message(panic.as_ref())
        ))),
    }
}

/// Without the `cuda` feature there is no CUDA backend to open.
#[cfg(not(feature = "cuda"))]
fn open_cuda() -> Result<Arc<dyn Backend>, BackendError> {
    Err(BackendError::Unavailable(
        "built without the `cuda` feature".into(),
    ))
}

/// The message of a caught panic (its `&str` or `String` payload).
#[must_use]
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_is_chosen_when_asked_for_and_says_why() {
        let selected = select(BackendChoice::Cpu, &BackendOptions::default()).unwrap();
        assert_eq!(selected.backend.kind(), roofline_core::wire::BackendKind::Cpu);
        assert_eq!(selected.reason, "CPU backend requested; measuring the host CPU");
    }

    #[test]
    fn panic_payloads_become_their_message() {
        assert_eq!(panic_message(&"boom"), "boom");
        assert_eq!(panic_message(&String::from("bang")), "bang");
        assert_eq!(panic_message(&7u8), "unknown panic");
    }
}
