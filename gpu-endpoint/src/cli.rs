//! The command line (clap derive): `serve` (the default), `bench`, `compare`, `calibrate`, `device`,
//! `bench-model` (`cli/bench_model.rs`), and the prediction subcommands of `roofline-cli` (`predict`,
//! `advise`, `validate`, `hardware`, `models`, `configs`), which the `roofline` binary also has, and its
//! `serve` (serving prediction) as `serving`, since `serve` here runs the server.
//!
//! Adding a subcommand is one [`Command`] variant plus one `run_*` function called from [`run`].

mod bench_model;

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use roofline_cli::predict::parse_hardware;
use roofline_core::wire::{BenchReport, BenchmarkFailedEvent, BenchmarkPointEvent, BenchmarkRequest};
use roofline_core::{Mode, Precision, find_hardware};

use crate::app::{AppConfig, AppState, configure, default_cors_origins};
use crate::backend::{BackendChoice, BackendOptions, Device, Selected, select};
use crate::jobs::{JobEvent, run_points, validate_request};
use crate::store::{Store, default_data_dir};
pub use roofline_cli::CliError;
use roofline_cli::output::{emit, json, table};
use roofline_cli::predict::SpecArgs;

/// Time a client has to send a request's head (line and headers) after connecting; slower ones get a 408
/// and are closed, so idle or trickling connections cannot hold the few workers' sockets.
pub const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to acknowledge the shutdown of a connection before it is dropped.
pub const CLIENT_DISCONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an idle keep-alive connection stays open between requests (SSE streams are not idle).
pub const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// `gpu-endpoint`: roofline server and measurement CLI.
#[derive(Debug, Parser)]
#[command(name = "gpu-endpoint", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Subcommand (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of `serve` when no subcommand is given.
    #[command(flatten)]
    pub serve: ServeArgs,
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
    Serve(ServeArgs),
    /// Measure shapes × precisions and print a table (or JSON / CSV).
    Bench(BenchArgs),
    /// Measure and compare with the roofline prediction of --hardware (error %).
    Compare(BenchArgs),
    /// Measure bandwidth and per-precision peaks; print the calibrated spec.
    Calibrate(CalibrateArgs),
    /// Describe the measurement device.
    Device(DeviceArgs),
    /// Measure every operator of one model step (prefill or decode) beside its prediction.
    BenchModel(bench_model::BenchModelArgs),
    /// The prediction subcommands (as the `roofline` binary has them).
    #[command(flatten)]
    Predictions(roofline_cli::Command),
    /// Predict serving with continuous batching (the `roofline serve` command): TTFT, TPOT, tokens/s per GPU
    /// and per user per concurrency or rate, the Pareto front, an SLA, measured bench results.
    Serving(roofline_cli::serve::ServeArgs),
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
    fn select(&self) -> Result<Selected, CliError> {
        let options = BackendOptions {
            cpu_memory_cap_bytes: self.max_buffer_mb.saturating_mul(1_000_000),
            fake_delay: Duration::from_millis(self.fake_delay_ms),
        };
        let selected = select(self.backend, &options).map_err(CliError::Usage)?;
        tracing::info!(backend = %selected.backend.kind(), reason = %selected.reason, "backend selected");
        if !selected.telemetry_reason.is_empty() {
            tracing::info!(reason = %selected.telemetry_reason, "no NVML telemetry");
        }
        Ok(selected)
    }
}

/// `serve` options.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to bind; anything but loopback requires a token.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0 picks a free one and prints it).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Directory of the built web page.
    #[arg(long, default_value = "dist")]
    pub web_dir: PathBuf,
    /// Bearer token required on every /api route but health.
    #[arg(long, env = "ROOFLINE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// File holding the bearer token, read once at start and trimmed, so the token is in neither the process
    /// list nor the environment (conflicts with --token and ROOFLINE_TOKEN).
    #[arg(long, conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// Allowed CORS origin (repeatable; default: trunk's dev server on 127.0.0.1:8080 and localhost:8080).
    #[arg(long = "cors-origin")]
    pub cors_origins: Vec<String>,
    /// Extra accepted `Host` name, e.g. the machine's DNS name (repeatable; loopback names and the bound
    /// address are always accepted).
    #[arg(long = "allowed-host")]
    pub allowed_hosts: Vec<String>,
    /// Data directory of the result store (default: the user's data dir + /roofline).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Actix worker threads (default: 2).
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Wall-clock cap of one measured point, in seconds: a point past it stops (within one sample) and is a
    /// `time_limit` failure; the next point runs.
    #[arg(long, default_value = "60", value_parser = parse_max_point)]
    pub max_point_seconds: Duration,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

fn parse_max_point(s: &str) -> Result<Duration, String> {
    let seconds: f64 = s
        .trim()
        .parse()
        .map_err(|e| format!("'{s}' is not a number of seconds: {e}"))?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        return Err(format!(
            "--max-point-seconds must be above 0 and at most 86400, got {s}"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `bench` / `compare` options.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Shapes `MxNxK`, comma-separated (M = 1 is a GEMV).
    #[arg(long, value_delimiter = ',', value_parser = parse_shape, required = true)]
    pub shapes: Vec<[u64; 3]>,
    /// Precisions, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_precision, default_value = "FP32")]
    pub precisions: Vec<Precision>,
    /// The device to predict on and its ceilings (required by `compare`).
    #[command(flatten)]
    pub device: SpecArgs,
    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Data directory of the result store.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Do not store the points.
    #[arg(long)]
    pub no_store: bool,
    /// Wall-clock cap of one measured point, in seconds: a point past it stops (within one sample) and is a
    /// `time_limit` failure; the next point runs.
    #[arg(long, default_value = "60", value_parser = parse_max_point)]
    pub max_point_seconds: Duration,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// `calibrate` options.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// Catalog key whose datasheet spec is the starting point.
    #[arg(long, value_parser = parse_hardware)]
    pub hardware: Option<String>,
    /// Precisions to calibrate (default: all the backend runs).
    #[arg(long, value_delimiter = ',', value_parser = parse_precision)]
    pub precisions: Vec<Precision>,
    /// Print the full JSON result.
    #[arg(long)]
    pub json: bool,
    /// Data directory of the result store.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Wall-clock cap of one measured point, in seconds: a point past it stops (within one sample) and is a
    /// `time_limit` failure; the next point runs.
    #[arg(long, default_value = "60", value_parser = parse_max_point)]
    pub max_point_seconds: Duration,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// `device` options.
#[derive(Debug, Clone, Args)]
pub struct DeviceArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

fn parse_shape(s: &str) -> Result<[u64; 3], String> {
    s.parse::<roofline_core::GemmShape>()
        .map(|g| [g.m, g.n, g.k])
        .map_err(|e| e.to_string())
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    s.parse::<Precision>().map_err(|e| e.to_string())
}

/// Runs the parsed command line.
///
/// # Errors
/// [`CliError`].
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        None => run_serve(cli.serve),
        Some(Command::Serve(args)) => run_serve(args),
        Some(Command::Bench(args)) => run_bench(&args, false),
        Some(Command::Compare(args)) => run_bench(&args, true),
        Some(Command::Calibrate(args)) => run_calibrate(&args),
        Some(Command::Device(args)) => run_device(&args),
        Some(Command::BenchModel(args)) => bench_model::run_bench_model(&args),
        Some(Command::Predictions(command)) => roofline_cli::run(&command),
        Some(Command::Serving(args)) => roofline_cli::serve::run_serve(&args),
    }
}

/// Refuses a non-loopback bind without a token.
///
/// # Errors
/// [`CliError::Usage`].
pub fn check_bind(host: &str, token: Option<&str>) -> Result<(), CliError> {
    let loopback = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback && token.is_none_or(|t| t.trim().is_empty()) {
        return Err(CliError::Usage(format!(
            "refusing to listen on non-loopback address {host} without a token: anyone on the network could run \
             kernels on this machine. Set --token <TOKEN> or ROOFLINE_TOKEN, or bind 127.0.0.1"
        )));
    }
    Ok(())
}

fn open_store(data_dir: Option<&PathBuf>) -> Result<Arc<Store>, CliError> {
    let dir = data_dir.cloned().unwrap_or_else(default_data_dir);
    Store::open(&dir)
        .map(Arc::new)
        .map_err(|e| CliError::Runtime(format!("cannot open the store in {}: {e}", dir.display())))
}

/// The token of `--token-file`, else of `--token` / `ROOFLINE_TOKEN`.
///
/// # Errors
/// [`CliError::Usage`] when the file cannot be read or holds only whitespace.
fn serve_token(args: &ServeArgs) -> Result<Option<String>, CliError> {
    let Some(path) = &args.token_file else {
        return Ok(args.token.clone());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read the token file {}: {e}", path.display())))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(CliError::Usage(format!(
            "the token file {} is empty",
            path.display()
        )));
    }
    Ok(Some(token.to_owned()))
}

fn run_serve(args: ServeArgs) -> Result<(), CliError> {
    let token = serve_token(&args)?;
    check_bind(&args.host, token.as_deref())?;
    let selected = args.backend.select()?;
    let store = open_store(args.data_dir.as_ref())?;
    tracing::info!(path = %store.path().display(), "result store");
    let config = AppConfig {
        token: token.filter(|t| !t.trim().is_empty()),
        cors_origins: if args.cors_origins.is_empty() {
            default_cors_origins()
        } else {
            args.cors_origins.clone()
        },
        allowed_hosts: std::iter::once(&args.host)
            .chain(&args.allowed_hosts)
            .map(|h| match h.parse::<IpAddr>() {
                Ok(IpAddr::V6(ip)) => format!("[{ip}]"),
                _ => h.clone(),
            })
            .collect(),
        web_dir: args.web_dir.clone(),
        max_point: args.max_point_seconds,
        ..AppConfig::default()
    };
    if !config.web_dir.join("index.html").is_file() {
        tracing::warn!(web_dir = %config.web_dir.display(), "web page not built; serving the API and a message page");
    }
    let state = actix_web::web::Data::new(AppState::new(selected, Some(store), config));
    actix_web::rt::System::new().block_on(async move {
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .configure(configure(state.clone()))
                .wrap(actix_web::middleware::Logger::default())
        })
        .workers(args.workers.max(1))
        .client_request_timeout(CLIENT_REQUEST_TIMEOUT)
        .client_disconnect_timeout(CLIENT_DISCONNECT_TIMEOUT)
        .keep_alive(KEEP_ALIVE)
        // A client that closes its side has gone: the connection ends, its handler future is dropped, and a
        // measurement it started is cancelled (routes::measuring) instead of holding the device for nobody.
        .h1_allow_half_closed(false)
        .bind((args.host.as_str(), args.port))
        .map_err(|e| CliError::Runtime(format!("cannot bind {}:{}: {e}", args.host, args.port)))?;
        for addr in server.addrs() {
            tracing::info!("listening on http://{addr}");
            eprintln!("listening on http://{addr}");
        }
        server.run().await.map_err(|e| CliError::Runtime(e.to_string()))
    })
}

fn run_bench(args: &BenchArgs, compare: bool) -> Result<(), CliError> {
    let hardware = if compare {
        Some(args.device.require()?)
    } else {
        args.device.resolve()?
    };
    let request = BenchmarkRequest {
        shapes: args.shapes.clone(),
        precisions: args.precisions.clone(),
        hardware_key: hardware.as_ref().map(|h| h.key.clone()),
        mode: hardware.as_ref().map(Mode::of).unwrap_or_default(),
    };
    validate_request(&request).map_err(CliError::Usage)?;
    let selected = args.backend.select()?;
    let store = if args.no_store {
        None
    } else {
        Some(open_store(args.data_dir.as_ref())?)
    };
    let device = Device::new(selected.backend);
    let total = (request.shapes.len() * request.precisions.len()) as u64;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut points: Vec<BenchmarkPointEvent> = Vec::new();
    let mut failed: Vec<BenchmarkFailedEvent> = Vec::new();
    let job_id = format!("cli-{}", (crate::protocol::unix_now() * 1000.0) as u64);
    let guard = device.acquire();
    run_points(
        &guard,
        &job_id,
        &request,
        hardware.as_ref(),
        store.as_deref(),
        &crate::protocol::PointLimits::new(args.max_point_seconds),
        |event| match event {
            JobEvent::Point(p) => {
                bar.set_message(format!("{} {}", p.point.shape, p.point.precision));
                bar.inc(1);
                points.push(*p);
            }
            JobEvent::Failed(f) => {
                bar.set_message(format!("{} {} failed", f.shape, f.failure.precision));
                bar.inc(1);
                failed.push(f);
            }
            JobEvent::Done(_) => bar.finish_and_clear(),
        },
    );
    drop(guard);
    print_bench(args, compare, &points, &failed)
}

fn print_bench(
    args: &BenchArgs,
    compare: bool,
    points: &[BenchmarkPointEvent],
    failed: &[BenchmarkFailedEvent],
) -> Result<(), CliError> {
    if args.json {
        return json(&BenchReport {
            points: points.to_vec(),
            failed: failed.to_vec(),
        });
    }
    let header = [
        "shape",
        "precision",
        "kernel",
        "median_us",
        "p10_us",
        "p90_us",
        "samples",
        "tflops",
        "gb_s",
        "predicted_us",
        "error_pct",
    ];
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let m = p.point.measurement.clone().unwrap_or_default();
            vec![
                p.point.shape.clone(),
                p.point.precision.name().to_owned(),
                m.kernel,
                format!("{:.2}", m.median_s * 1e6),
                format!("{:.2}", m.p10_s * 1e6),
                format!("{:.2}", m.p90_s * 1e6),
                m.samples.to_string(),
                format!("{:.4}", p.point.tflops),
                p.point
                    .bandwidth_gb_s
                    .map_or_else(String::new, |b| format!("{b:.2}")),
                p.predicted
                    .as_ref()
                    .map_or_else(String::new, |q| format!("{:.2}", q.time_us)),
                p.error_pct.map_or_else(String::new, |e| format!("{e:+.1}")),
            ]
        })
        .collect();
    if args.csv {
        let mut writer = csv::Writer::from_writer(std::io::stdout());
        let mut write = || -> Result<(), csv::Error> {
            writer.write_record(header)?;
            for row in &rows {
                writer.write_record(row)?;
            }
            for f in failed {
                writer.write_record([
                    f.shape.as_str(),
                    f.failure.precision.name(),
                    &format!("FAILED {}: {}", f.failure.code, f.failure.message),
                ])?;
            }
            writer.flush()?;
            Ok(())
        };
        return write().map_err(|e| CliError::Runtime(e.to_string()));
    }
    // The prediction columns are shown by `compare` only.
    let columns = if compare { header.len() } else { header.len() - 2 };
    let mut out = table(&header[..columns]);
    for row in &rows {
        out.add_row(row[..columns].to_vec());
    }
    let mut text = format!("{out}\n");
    for f in failed {
        text.push_str(&format!(
            "{}  {}  FAILED ({}): {}\n",
            f.shape, f.failure.precision, f.failure.code, f.failure.message
        ));
    }
    emit(&text)
}

fn run_calibrate(args: &CalibrateArgs) -> Result<(), CliError> {
    let selected = args.backend.select()?;
    let store = open_store(args.data_dir.as_ref())?;
    let device = Device::new(selected.backend);
    let info = device.backend().device_info();
    let base = args
        .hardware
        .as_deref()
        .or(info.matched_key.as_deref())
        .map(find_hardware)
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let precisions = if args.precisions.is_empty() {
        device.backend().measurable()
    } else {
        args.precisions.clone()
    };
    let guard = device.acquire();
    let result = crate::calibrate::calibrate(
        &guard,
        device.backend().kind(),
        &info.name,
        &info.arch,
        info.memory_total_mb * 1e6,
        base,
        &precisions,
        &crate::protocol::PointLimits::new(args.max_point_seconds),
    )
    .map_err(|e| CliError::Runtime(e.to_string()))?;
    drop(guard);
    if let Err(e) = store.insert_calibration(&info.name, &result) {
        tracing::error!(error = %e, "could not store the calibration");
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).map_err(|e| CliError::Runtime(e.to_string()))?
        );
    } else {
        println!("device      {} ({} backend)", info.name, device.backend().kind());
        println!(
            "bandwidth   {:.2} GB/s  ({})",
            result.bandwidth_gb_s, result.bandwidth_measurement.kernel
        );
        for p in &result.peaks {
            println!(
                "{:<11} {:.4} TFLOP/s at {}  ({})",
                p.precision.name(),
                p.achieved_tflops,
                p.shape,
                p.measurement.kernel
            );
        }
        for f in &result.failed {
            println!("{:<11} FAILED ({}): {}", f.precision, f.code, f.message);
        }
        println!("spec key    {} (provenance: measured)", result.spec.key);
    }
    Ok(())
}

fn run_device(args: &DeviceArgs) -> Result<(), CliError> {
    let selected = args.backend.select()?;
    let info = selected.backend.device_info();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&info).map_err(|e| CliError::Runtime(e.to_string()))?
        );
        return Ok(());
    }
    println!("backend     {} ({})", info.backend, selected.reason);
    println!("name        {}", info.name);
    println!("arch        {}", info.arch);
    if let Some([major, minor]) = info.compute_capability {
        println!("compute     sm_{major}{minor}");
    }
    if let Some(cores) = info.cpu_cores {
        println!("cores       {cores}");
    }
    if let Some(sms) = info.sm_count {
        println!("SMs         {sms}");
    }
    println!("memory      {:.0} MB", info.memory_total_mb);
    for (name, version) in &info.versions {
        println!("{name:<11} {version}");
    }
    println!("catalog key {}", info.matched_key.as_deref().unwrap_or("(none)"));
    println!(
        "measurable  {}",
        info.measurable_precisions
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
