//! `gpu-endpoint bench-model` as a user runs it: exit codes, the JSON report and the table.

use roofline_core::wire::StepReport;

use crate::common::run_binary;

/// Runs `bench-model --no-store args…`.
fn run(args: &[&str]) -> std::process::Output {
    run_binary(&[&["bench-model", "--no-store"], args].concat())
}

fn report(args: &[&str]) -> StepReport {
    let out = run(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_report_has_a_measured_row_per_operator_and_the_step_totals() {
    let report = report(&[
        "--model",
        "tinyllama-1.1b",
        "--config",
        "bf16",
        "--context",
        "64",
        "--hardware",
        "h100_sxm",
        "--backend",
        "fake",
        "--json",
    ]);
    assert_eq!(report.request.context, 64);
    assert_eq!(report.operators.len(), report.done.operators as usize);
    assert!(report.operators.iter().any(|r| r.name == "attention"));
    assert!(
        report
            .operators
            .iter()
            .all(|r| r.measured_over_predicted.is_some_and(f64::is_finite)),
        "{report:#?}"
    );
    assert_eq!(report.done.measured, report.done.operators);
    assert!(report.done.measured_over_predicted.is_some_and(f64::is_finite));
    // 22 layers × 12 kernels + embedding, final norm, logits; the fake adds 2 µs after each: 534 µs.
    let end_to_end = report.done.end_to_end.as_ref().expect("timed end to end");
    assert_eq!(end_to_end.kernels, 267);
    assert!(
        (end_to_end.overhead_s - 267.0 * 2e-6).abs() < 1e-12,
        "{end_to_end:?}"
    );
}

#[test]
fn the_table_lists_operators_and_the_step_ratio() {
    let out = run(&[
        "--model",
        "tinyllama-1.1b",
        "--config",
        "bf16",
        "--hardware",
        "h100_sxm",
        "--backend",
        "fake",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "operator",
        "measured/predicted",
        "qkv_proj",
        "logits",
        "same as",
        "step, Σ count",
        "step end to end (267 kernels)",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

#[test]
fn formats_the_cpu_cannot_run_are_unsupported_rows_never_stand_ins() {
    let report = report(&[
        "--model",
        "tinyllama-1.1b",
        "--config",
        "bf16",
        "--hardware",
        "h100_sxm",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert_eq!(report.done.measured, 0);
    for row in &report.operators {
        let failure = row
            .failure
            .as_ref()
            .unwrap_or_else(|| panic!("{} was measured", row.name));
        assert_eq!(failure.code, "unsupported", "{}: {}", row.name, failure.message);
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec![
            "--model",
            "no-such-model",
            "--hardware",
            "h100_sxm",
            "--backend",
            "fake",
        ],
        // No device to predict on: the CPU has no catalog entry, and nothing is stored.
        vec!["--model", "tinyllama-1.1b", "--backend", "cpu"],
        // FP8 on an A100: no native path, so no prediction.
        vec![
            "--model",
            "tinyllama-1.1b",
            "--config",
            "fp8",
            "--hardware",
            "a100_sxm_80gb",
            "--backend",
            "fake",
        ],
    ] {
        let out = run(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty());
    }
}
