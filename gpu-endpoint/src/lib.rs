//! `gpu-endpoint`: the roofline toolkit's server and measurement CLI.
//!
//! One process serves the built web page and the JSON API (`/api/...`), measures GEMM/GEMV kernels and model
//! steps on a backend chosen at run time (CUDA with the `cuda` feature and a driver, else the host CPU, or a
//! fake for tests), samples NVML telemetry, runs measurement jobs one at a time and stores every measured
//! point in SQLite.
//!
//! Brief overview, bottom to top (a module names only those above it in this list):
//! - [`protocol`]: the sampling protocol, statistics, verification and per-point limits of every backend.
//! - [`store`]: measured points and calibrations in SQLite.
//! - [`backend`]: the `Backend` and `Telemetry` traits, `BackendError`, the CPU, CUDA and fake backends, NVML,
//!   and the run-time choice (`backend::select`).
//! - [`device`]: `Device`, the one-at-a-time lock around the chosen backend, with the fit checks.
//! - [`jobs`]: the generic job queue (`JobManager<K: JobKind>`) and its SSE event logs.
//! - [`use_cases`]: calibrate, benchmark, step and analyze, each written once (the job kinds beside theirs).
//! - [`http`]: the actix-web app (`http::app::configure`), its state, middleware, routes and `ApiError`.
//! - [`cli`]: the command line, which embeds `roofline-cli`'s prediction subcommands.

pub mod backend;
pub mod cli;
pub mod device;
pub mod http;
pub mod jobs;
pub mod protocol;
pub mod store;
pub mod use_cases;
