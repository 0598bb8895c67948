//! What every handler and middleware shares: [`AppState`] (the device, the job queues, telemetry, the store)
//! and [`AppConfig`] (the server's settings).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use roofline_core::wire::ErrorCode;

use crate::backend::Telemetry;
use crate::backend::select::Selected;
use crate::device::Device;
use crate::http::error::ApiError;
use crate::jobs::JobRetention;
use crate::protocol::DEFAULT_MAX_POINT;
use crate::store::Store;
use crate::use_cases::benchmark::BenchmarkJobs;
use crate::use_cases::step::{STEP_RETENTION, StepJobs};

/// Server configuration that routes need.
#[derive(Debug, Clone, PartialEq)]
pub struct AppConfig {
    /// Bearer token required on every /api route but health, when set.
    pub token: Option<String>,
    /// Allowed CORS origins (besides same-origin requests, which need none). Also the only foreign origins
    /// allowed to make state-changing requests.
    pub cors_origins: Vec<String>,
    /// `Host` names accepted besides the loopback names (the bound address, `--allowed-host`), without port.
    pub allowed_hosts: Vec<String>,
    /// Directory of the built web page.
    pub web_dir: PathBuf,
    /// Default interval of `/api/nvml/stream`.
    pub nvml_interval: Duration,
    /// How many finished benchmark jobs (and bytes of their events) are kept for replay.
    pub job_retention: JobRetention,
    /// How many finished step jobs (and bytes of their events) are kept for replay.
    pub step_retention: JobRetention,
    /// Wall-clock cap of one measured point (`--max-point-seconds`); a point past it is a `time_limit`
    /// failure and the next point runs.
    pub max_point: Duration,
    /// Time a client has to send a whole request body once its head has arrived (408 `request_timeout`
    /// after it, and the connection closes).
    pub body_read_timeout: Duration,
    /// Wall-clock limit of one `GET /api/results` listing (503 `time_limit` past it): a listing costs
    /// milliseconds at any number of series; this bounds the rest.
    pub max_listing: Duration,
    /// Directory of the device's cross-process lock file (`serve`: the data directory); `None` locks the
    /// device within this process only.
    pub lock_dir: Option<PathBuf>,
}

/// The default [`AppConfig::body_read_timeout`].
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`AppConfig::max_listing`].
pub const MAX_LISTING: Duration = Duration::from_secs(5);

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            token: None,
            cors_origins: default_cors_origins(),
            allowed_hosts: Vec::new(),
            web_dir: PathBuf::from("dist"),
            nvml_interval: Duration::from_millis(500),
            job_retention: JobRetention::default(),
            step_retention: STEP_RETENTION,
            max_point: DEFAULT_MAX_POINT,
            body_read_timeout: BODY_READ_TIMEOUT,
            max_listing: MAX_LISTING,
            lock_dir: None,
        }
    }
}

/// Trunk's dev server, allowed by default.
#[must_use]
pub fn default_cors_origins() -> Vec<String> {
    vec!["http://127.0.0.1:8080".into(), "http://localhost:8080".into()]
}

/// Everything the handlers share.
pub struct AppState {
    /// The measurement device (backend + lock).
    pub device: Arc<Device>,
    /// Why that backend was chosen.
    pub backend_reason: String,
    /// NVML telemetry, when available.
    pub telemetry: Option<Arc<dyn Telemetry>>,
    /// Why telemetry is missing.
    pub telemetry_reason: String,
    /// Benchmark jobs.
    pub jobs: BenchmarkJobs,
    /// Model-step measurement jobs.
    pub steps: StepJobs,
    /// The result store.
    pub store: Option<Arc<Store>>,
    /// Configuration.
    pub config: AppConfig,
}

impl AppState {
    /// Builds the state from a selected backend, an optional store and the configuration (the device locked
    /// across processes in [`AppConfig::lock_dir`], when set).
    ///
    /// # Errors
    /// The IO error when the lock file cannot be created.
    pub fn new(
        selected: Selected,
        store: Option<Arc<Store>>,
        config: AppConfig,
    ) -> std::io::Result<AppState> {
        let device = Arc::new(match &config.lock_dir {
            Some(dir) => Device::with_lock(selected.backend, dir)?,
            None => Device::new(selected.backend),
        });
        Ok(AppState {
            jobs: BenchmarkJobs::new(
                device.clone(),
                store.clone(),
                config.job_retention,
                config.max_point,
            ),
            steps: StepJobs::new(
                device.clone(),
                store.clone(),
                config.step_retention,
                config.max_point,
            ),
            device,
            backend_reason: selected.reason,
            telemetry: selected.telemetry,
            telemetry_reason: selected.telemetry_reason,
            store,
            config,
        })
    }

    /// The telemetry source or a 503.
    ///
    /// # Errors
    /// [`ApiError::Unavailable`] with code `no_nvml`.
    pub fn telemetry(&self) -> Result<Arc<dyn Telemetry>, ApiError> {
        self.telemetry.clone().ok_or_else(|| ApiError::Unavailable {
            code: ErrorCode::NoNvml,
            message: format!("NVML telemetry is not available: {}", self.telemetry_reason),
        })
    }
}
