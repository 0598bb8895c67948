//! `roofline` binary: predictions, advice, serving, validation and listings from the command line.
//! Exit codes: 0 success, 1 runtime failure, 2 usage error (bad flag, unknown key, impossible mode).

use clap::Parser;

/// Roofline predictions for GPU kernels and LLM inference (datasheet, reference or calibrated ceilings).
#[derive(Debug, Parser)]
#[command(name = "roofline", version, about)]
struct Cli {
    #[command(subcommand)]
    command: roofline_cli::RooflineCommand,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = roofline_cli::run_roofline(&cli.command) {
        std::process::exit(roofline_cli::report(&e));
    }
}
