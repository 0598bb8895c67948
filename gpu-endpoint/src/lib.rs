//! `gpu-endpoint`: the roofline toolkit's server and measurement CLI.
//!
//! One process serves the built web page and the JSON API (`/api/...`), measures GEMM/GEMV kernels on a
//! backend chosen at run time (CUDA with the `cuda` feature and a driver, else the host CPU, or a fake for
//! tests), samples NVML telemetry, runs benchmark jobs one at a time and stores every measured point in
//! SQLite.
//!
//! Brief overview:
//! - [`app::configure`] and [`app::AppState`]: the whole HTTP app (used by `main` and the tests).
//! - [`backend::Backend`], [`backend::Device`]: backends and the one-at-a-time device lock.
//! - [`protocol`]: the sampling protocol and statistics shared by every backend.
//! - [`step`]: model-step measurement (every operator of a prefill or decode step beside its prediction).
//! - [`jobs`]: the benchmark queue and SSE events; [`store`]: SQLite; [`cli`]: the command line, which
//!   embeds `roofline-cli`'s prediction subcommands (`predict`, `advise`, `validate`, listings).

pub mod analysis;
pub mod app;
pub mod backend;
pub mod calibrate;
pub mod cli;
pub mod error;
pub mod jobs;
pub mod protocol;
mod routes;
pub mod step;
pub mod store;

pub use app::{AppConfig, AppState, configure};
pub use error::ApiError;
