//! Shared helpers of the integration tests: the real app (through `configure`) on the fake backend, the real
//! binary, and the gate of the real-GPU tests.

use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use gpu_endpoint::backend::select::{BackendChoice, BackendOptions, Selected, select};
use gpu_endpoint::http::state::{AppConfig, AppState};
use gpu_endpoint::store::Store;

/// The `gpu-endpoint` binary built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_gpu-endpoint");

/// Runs the binary with `args`, without a token in the environment and logging warnings only.
pub fn run_binary(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("ROOFLINE_TOKEN")
        .env("RUST_LOG", "warn")
        .output()
        .expect("the binary runs")
}

/// A fake-backend app state with a temp store; the TempDir must outlive the app.
pub fn fake_state(token: Option<&str>, delay_ms: u64) -> (web::Data<AppState>, tempfile::TempDir) {
    let options = BackendOptions {
        fake_delay: Duration::from_millis(delay_ms),
        ..BackendOptions::default()
    };
    let selected = select(BackendChoice::Fake, &options).unwrap();
    state_with(selected, token)
}

/// An app state for an arbitrary backend selection.
pub fn state_with(selected: Selected, token: Option<&str>) -> (web::Data<AppState>, tempfile::TempDir) {
    configured_state(selected, |config| config.token = token.map(str::to_owned))
}

/// A fake-backend app state whose configuration `edit` changes.
pub fn fake_state_configured(
    delay_ms: u64,
    edit: impl FnOnce(&mut AppConfig),
) -> (web::Data<AppState>, tempfile::TempDir) {
    let options = BackendOptions {
        fake_delay: Duration::from_millis(delay_ms),
        ..BackendOptions::default()
    };
    configured_state(select(BackendChoice::Fake, &options).unwrap(), edit)
}

fn configured_state(
    selected: Selected,
    edit: impl FnOnce(&mut AppConfig),
) -> (web::Data<AppState>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("data")).unwrap();
    let mut config = AppConfig {
        web_dir: dir.path().join("dist"),
        ..AppConfig::default()
    };
    edit(&mut config);
    (
        web::Data::new(AppState::new(selected, Some(Arc::new(store)), config)),
        dir,
    )
}

/// Parses an SSE body into (event, data) pairs, ignoring comments.
pub fn parse_sse(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter_map(|frame| {
            let mut event = String::from("message");
            let mut data = Vec::new();
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d.to_owned());
                }
            }
            (!data.is_empty()).then(|| (event, data.join("\n")))
        })
        .collect()
}

/// The CUDA device of a real-GPU test, or `None` (the test is skipped) unless `ROOFLINE_GPU_TESTS=1`, so
/// `cargo test --features cuda` passes on a machine without a GPU.
///
/// # Panics
/// When `ROOFLINE_GPU_TESTS=1` and no CUDA device can be selected.
#[cfg(feature = "cuda")]
pub fn gpu_device() -> Option<gpu_endpoint::device::Device> {
    if std::env::var("ROOFLINE_GPU_TESTS").as_deref() != Ok("1") {
        eprintln!("skipped: set ROOFLINE_GPU_TESTS=1 to run the GPU tests");
        return None;
    }
    let selected = select(BackendChoice::Cuda, &BackendOptions::default())
        .expect("ROOFLINE_GPU_TESTS=1 but no CUDA device");
    Some(gpu_endpoint::device::Device::new(Arc::clone(&selected.backend)))
}
