//! Runs the `roofline` binary built for these tests.

use std::process::{Command, Output};

/// Runs `roofline args…`.
pub fn roofline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roofline"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// The standard output of a run that must succeed.
pub fn stdout(args: &[&str]) -> String {
    let out = roofline(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}
