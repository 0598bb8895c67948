//! The `roofline` command line: whole-model predictions (`predict`), quantization advice (`advise`), serving
//! at a concurrency or rate (`serve`), the offline prediction error of saved measurements (`validate`) and
//! the catalog listings (`hardware`, `models`, `configs`), in tables or JSON. Everything it prints comes from
//! `roofline-core`; it needs no server, GPU, database or network. `gpu-endpoint` embeds the same
//! subcommands ([`Command`]) beside its measuring ones, with `serve` as `serving` ([`RooflineCommand`]).
//!
//! Exit codes: 0 success, 1 runtime failure ([`CliError::Runtime`]), 2 usage error ([`CliError::Usage`]).

pub mod list;
pub mod lists;
pub mod output;
pub mod predict;
pub mod serve;
pub mod validate;

use clap::Subcommand;

/// Command-line errors: `Usage` exits with code 2, `Runtime` with 1.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad invocation (unknown key, unreadable file, invalid shape, impossible mode).
    #[error("{0}")]
    Usage(String),
    /// Something failed while running.
    #[error("{0}")]
    Runtime(String),
}

impl From<roofline_core::Error> for CliError {
    fn from(e: roofline_core::Error) -> CliError {
        CliError::Usage(e.to_string())
    }
}

/// The prediction subcommands, shared by `roofline` and `gpu-endpoint`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Predict one prefill or decode step of a model preset (per-operator table, TTFT/TPOT, tokens/s).
    Predict(predict::PredictArgs),
    /// Rank the precision configs the device runs natively for a model and workload.
    Advise(predict::AdviseArgs),
    /// Prediction error of saved `bench --json` points in every mode (no device).
    Validate(validate::ValidateArgs),
    /// List the hardware catalog: peaks, bandwidth and reference ceilings.
    Hardware(list::ListArgs),
    /// List the model presets.
    Models(list::ListArgs),
    /// List the precision configs.
    Configs(list::ListArgs),
}

/// Every subcommand of the `roofline` binary: the shared [`Command`]s and `serve`. `gpu-endpoint` embeds
/// the shared ones and offers `serve` as `serving`, since its own `serve` runs the HTTP server.
#[derive(Debug, Subcommand)]
pub enum RooflineCommand {
    /// The subcommands `gpu-endpoint` shares.
    #[command(flatten)]
    Shared(Command),
    /// Predict serving with continuous batching: TTFT, TPOT, tokens/s per GPU and per user per concurrency or
    /// rate, the Pareto front, the best point under an SLA, measured bench results beside predictions.
    Serve(Box<serve::ServeArgs>),
}

/// Runs one subcommand of the `roofline` binary.
///
/// # Errors
/// The subcommand's [`CliError`].
pub fn run_roofline(command: &RooflineCommand) -> Result<(), CliError> {
    match command {
        RooflineCommand::Shared(command) => run(command),
        RooflineCommand::Serve(args) => serve::run_serve(args),
    }
}

/// Runs one prediction subcommand.
///
/// # Errors
/// The subcommand's [`CliError`].
pub fn run(command: &Command) -> Result<(), CliError> {
    match command {
        Command::Predict(args) => predict::run_predict(args),
        Command::Advise(args) => predict::run_advise(args),
        Command::Validate(args) => validate::run_validate(args),
        Command::Hardware(args) => list::hardware(args),
        Command::Models(args) => list::models(args),
        Command::Configs(args) => list::configs(args),
    }
}

/// Prints `error` the way both binaries do (control characters dropped, [`output::printable`]) and returns
/// the process exit code.
#[must_use]
pub fn report(error: &CliError) -> i32 {
    eprintln!("error: {}", output::printable(&error.to_string()));
    match error {
        CliError::Usage(_) => 2,
        CliError::Runtime(_) => 1,
    }
}
