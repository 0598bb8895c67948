//! The command line (clap derive): `serve` (the default), `bench`, `compare`, `calibrate`, `device`,
//! `bench-model`, `bench-store`, `precompress`, and the prediction subcommands of `roofline-cli` (`predict`,
//! `advise`, `validate`, `hardware`, `models`, `configs`), which the `roofline` binary also has, and its
//! `serve` (serving prediction) as `serving`, since `serve` here runs the server.
//!
//! Each measuring subcommand is "parse → run → present" around its use case (`crate::use_cases`), in its own
//! file. Adding a subcommand is one [`Command`] variant plus one `run` function called from [`run`].

pub mod bench;
pub mod bench_model;
pub mod bench_store;
pub mod calibrate;
pub mod device;
pub mod precompress;
pub mod serve;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand};
use roofline_core::precision::ParsePrecisionError;
use roofline_core::{GemmShape, Precision};

use crate::backend::select::{BackendChoice, BackendOptions, Selected, select};
use crate::device::Device;
use crate::protocol::{PointLimits, unix_now};
use crate::store::{Store, default_data_dir};
pub use roofline_cli::CliError;

/// `gpu-endpoint`: roofline server and measurement CLI.
#[derive(Debug, Parser)]
#[command(name = "gpu-endpoint", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Subcommand (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of `serve` when no subcommand is given.
    #[command(flatten)]
    pub serve: serve::ServeArgs,
}

impl Cli {
    /// Log filter when RUST_LOG is unset (quieter for one-shot commands).
    #[must_use]
    pub fn default_log_filter(&self) -> &'static str {
        match self.command {
            None | Some(Command::Serve(_)) => "info",
            Some(_) => "warn",
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web page and the API (the default).
    Serve(serve::ServeArgs),
    /// Measure shapes × precisions and print a table (or JSON / CSV).
    Bench(bench::BenchArgs),
    /// Measure and compare with the roofline prediction of --hardware (error %).
    Compare(bench::BenchArgs),
    /// Measure bandwidth and per-precision peaks; print the calibrated spec.
    Calibrate(calibrate::CalibrateArgs),
    /// Describe the measurement device.
    Device(device::DeviceArgs),
    /// Measure every operator of one model step (prefill or decode) beside its prediction.
    BenchModel(bench_model::BenchModelArgs),
    /// Write the .br and .gz sibling of every compressible file of the built page (trunk's post-build hook).
    Precompress(precompress::PrecompressArgs),
    /// Fill a result store with synthetic points and time its listings and point writes.
    BenchStore(bench_store::BenchStoreArgs),
    /// The prediction subcommands (as the `roofline` binary has them).
    #[command(flatten)]
    Predictions(roofline_cli::Command),
    /// Predict serving with continuous batching (the `roofline serve` command): TTFT, TPOT, tokens/s per GPU
    /// and per user per concurrency or rate, the Pareto front, an SLA, measured bench results.
    Serving(Box<roofline_cli::serve::ServeArgs>),
}

/// Runs the parsed command line.
///
/// # Errors
/// [`CliError`].
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        None => serve::run(cli.serve),
        Some(Command::Serve(args)) => serve::run(args),
        Some(Command::Bench(args)) => bench::run(&args, false),
        Some(Command::Compare(args)) => bench::run(&args, true),
        Some(Command::Calibrate(args)) => calibrate::run(&args),
        Some(Command::Device(args)) => device::run(&args),
        Some(Command::BenchModel(args)) => bench_model::run(&args),
        Some(Command::Precompress(args)) => precompress::run(&args),
        Some(Command::BenchStore(args)) => bench_store::run(&args),
        Some(Command::Predictions(command)) => roofline_cli::run(&command),
        Some(Command::Serving(args)) => roofline_cli::serve::run_serve(&args),
    }
}

/// Backend options shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    /// Measurement backend.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendChoice,
    /// Largest buffers one CPU measurement may allocate, in MB.
    #[arg(long, default_value_t = 2048)]
    pub max_buffer_mb: u64,
    /// Per-point delay of the fake backend, in ms (tests only).
    #[arg(long, default_value_t = 0, hide = true)]
    pub fake_delay_ms: u64,
}

impl BackendArgs {
    /// Selects the backend (logging the choice and why).
    ///
    /// # Errors
    /// [`CliError::Usage`] when `--backend cuda` cannot be opened.
    pub fn select(&self) -> Result<Selected, CliError> {
        let options = BackendOptions {
            cpu_memory_cap_bytes: self.max_buffer_mb.saturating_mul(1_000_000),
            fake_delay: Duration::from_millis(self.fake_delay_ms),
        };
        let selected = select(self.backend, &options).map_err(|e| CliError::Usage(e.to_string()))?;
        tracing::info!(backend = %selected.backend.kind(), reason = %selected.reason, "backend selected");
        if !selected.telemetry_reason.is_empty() {
            tracing::info!(reason = %selected.telemetry_reason, "no NVML telemetry");
        }
        Ok(selected)
    }
}

/// `--backend`'s values (the choice itself is `backend::select`'s, which knows no clap).
impl clap::ValueEnum for BackendChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            BackendChoice::Auto,
            BackendChoice::Cuda,
            BackendChoice::Cpu,
            BackendChoice::Fake,
            BackendChoice::FakeH200,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            BackendChoice::Auto => {
                PossibleValue::new("auto").help("CUDA when compiled in and a device opens, else the CPU")
            }
            BackendChoice::Cuda => PossibleValue::new("cuda").help("CUDA or fail"),
            BackendChoice::Cpu => PossibleValue::new("cpu").help("The host CPU"),
            BackendChoice::Fake => PossibleValue::new("fake").help("Deterministic fake (tests)"),
            BackendChoice::FakeH200 => PossibleValue::new("fake-h200")
                .help("Deterministic fake shaped like an H200: sm_90, no INT4 matrix path (tests)")
                .hide(true),
        })
    }
}

/// Why `--max-point-seconds` was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MaxPointError {
    /// Not a number.
    #[error("'{text}' is not a number of seconds: {reason}")]
    NotANumber {
        /// What was given.
        text: String,
        /// The parser's reason.
        reason: std::num::ParseFloatError,
    },
    /// Not in (0, 86400].
    #[error("--max-point-seconds must be above 0 and at most 86400, got {0}")]
    OutOfRange(String),
}

/// Parses `--max-point-seconds`: a number of seconds above 0 and at most one day.
fn parse_max_point(s: &str) -> Result<Duration, MaxPointError> {
    let seconds: f64 = s.trim().parse().map_err(|reason| MaxPointError::NotANumber {
        text: s.to_owned(),
        reason,
    })?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        return Err(MaxPointError::OutOfRange(s.to_owned()));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses one `MxNxK` shape (core's one grammar).
fn parse_shape(s: &str) -> Result<[u64; 3], roofline_core::Error> {
    s.parse::<GemmShape>().map(|g| [g.m, g.n, g.k])
}

/// Parses one precision name.
fn parse_precision(s: &str) -> Result<Precision, ParsePrecisionError> {
    s.parse::<Precision>()
}

/// Opens the result store in `data_dir` (default: the user's data dir + /roofline).
///
/// # Errors
/// [`CliError::Runtime`] naming the directory.
fn open_store(data_dir: Option<&PathBuf>) -> Result<Arc<Store>, CliError> {
    let dir = data_dir.cloned().unwrap_or_else(default_data_dir);
    Store::open(&dir)
        .map(Arc::new)
        .map_err(|e| CliError::Runtime(format!("cannot open the store in {}: {e}", dir.display())))
}

/// The device of a measuring subcommand, locked across processes in `data_dir` (default: the user's data
/// dir + /roofline): a run waits for a server or another run measuring on the same device.
///
/// # Errors
/// [`CliError::Runtime`] naming the directory when the lock file cannot be created.
fn locked_device(selected: Selected, data_dir: Option<&PathBuf>) -> Result<Device, CliError> {
    let dir = data_dir.cloned().unwrap_or_else(default_data_dir);
    Device::with_lock(selected.backend, &dir)
        .map_err(|e| CliError::Runtime(format!("cannot create the device lock in {}: {e}", dir.display())))
}

/// Options of a subcommand that measures points and stores them (`bench`, `compare`, `bench-model`).
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// Data directory of the result store.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Do not store the points.
    #[arg(long)]
    pub no_store: bool,
    /// Wall-clock cap of one measured point (one shape's precision, or one operator of a step), in seconds:
    /// a point past it stops (at its next check) and is a `time_limit` failure; the next point runs.
    #[arg(long, default_value = "60", value_parser = parse_max_point)]
    pub max_point_seconds: Duration,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

impl MeasureArgs {
    /// The selected backend's device, locked as [`locked_device`] says, and the result store unless
    /// `--no-store`.
    ///
    /// # Errors
    /// As [`BackendArgs::select`], [`open_store`] and [`locked_device`].
    fn open(&self) -> Result<(Device, Option<Arc<Store>>), CliError> {
        let selected = self.backend.select()?;
        let store = if self.no_store {
            None
        } else {
            Some(open_store(self.data_dir.as_ref())?)
        };
        let device = locked_device(selected, self.data_dir.as_ref())?;
        Ok((device, store))
    }

    /// The limits of every point: `--max-point-seconds`.
    fn limits(&self) -> PointLimits {
        PointLimits::new(self.max_point_seconds)
    }
}

/// The id of a command-line run, stored with its points: `<prefix>-<Unix ms>`.
fn run_id(prefix: &str) -> String {
    format!("{prefix}-{}", (unix_now() * 1000.0) as u64)
}

/// A progress bar on stderr for `total` steps.
fn progress_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}
