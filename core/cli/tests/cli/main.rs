//! The `roofline` command line, run as a user runs it: one test binary (ripgrep's layout), a module per
//! subcommand family, `common` the helpers that run the binary.

mod common;
mod models;
mod parallel;
mod predict;
mod roofline;
mod serve;
mod serve_sim;
