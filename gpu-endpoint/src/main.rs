//! `gpu-endpoint` binary: parse the command line, start logging, run the subcommand.
//! Exit codes: 0 success, 1 runtime failure, 2 usage error (bad flag, unknown key, unsafe bind). Errors are
//! printed as one `error: …` line, never with a backtrace.

use clap::Parser;
use gpu_endpoint::cli::{Cli, run};

fn main() {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(cli.default_log_filter())),
        )
        .init();
    if let Err(e) = run(cli) {
        std::process::exit(roofline_cli::report(&e));
    }
}
