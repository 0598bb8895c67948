//! `gpu-endpoint validate`: prediction error of measured points, offline. Reads `bench --json` output and,
//! optionally, a `calibrate --json` result, predicts every point in the three modes — the datasheet spec of
//! `--hardware`, its reference spec, and the calibrated spec (`roofline_core::validation`) — and prints
//! per-point errors and median / p90 |error| by precision and regime. Used to build docs/validation/README.md;
//! needs no device.

use std::path::{Path, PathBuf};

use clap::Args;
use comfy_table::presets::ASCII_MARKDOWN;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::validation::{self, Check, ValidationRow, calibrated_error, reference_error, spec_error};
use roofline_core::wire::{
    BenchReport, CalibrationResult, ModeCheck, ModeStats, RooflinePoint, ValidatedPoint, ValidationReport,
};
use roofline_core::{Error, Mode, find_hardware};
use serde::Deserialize;

use crate::CliError;
use crate::lists::bounded_distinct;
use crate::output::{emit, json, table};

/// Most `--measured` files one run reads (repeats included; a file given twice is read once).
pub const MAX_MEASURED_FILES: usize = 256;

/// `validate` options.
#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// `bench --json` / `compare --json` output files (repeatable, at most 256; repeats read once).
    #[arg(long = "measured", required = true)]
    pub measured: Vec<PathBuf>,
    /// `calibrate --json` output: its `spec` is the calibrated device.
    #[arg(long, visible_alias = "spec")]
    pub calibration: Option<PathBuf>,
    /// Print the error statistics of this mode only (default: every mode with predictions).
    #[arg(long, value_parser = |s: &str| Mode::parse(s).map_err(|e| e.to_string()))]
    pub mode: Option<Mode>,
    /// Catalog key of the datasheet spec.
    #[arg(long)]
    pub hardware: String,
    /// Print JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print Markdown tables.
    #[arg(long)]
    pub markdown: bool,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{}: not the expected JSON: {e}", path.display())))
}

/// Runs `validate`.
///
/// # Errors
/// [`CliError::Usage`] for an unknown key, an unreadable file or more than [`MAX_MEASURED_FILES`] files.
pub fn run_validate(args: &ValidateArgs) -> Result<(), CliError> {
    let files = bounded_distinct("--measured", &args.measured, MAX_MEASURED_FILES)?;
    let datasheet = find_hardware(&args.hardware).map_err(|e| CliError::Usage(e.to_string()))?;
    let calibrated = args
        .calibration
        .as_deref()
        .map(read_json::<CalibrationResult>)
        .transpose()?
        .map(|c| c.spec);
    let mut points: Vec<RooflinePoint> = Vec::new();
    for path in &files {
        points.extend(
            read_json::<BenchReport>(path)?
                .points
                .into_iter()
                .map(|e| e.point),
        );
    }
    let measured: Vec<MeasuredPoint> = points.iter().map(MeasuredPoint::from).collect();
    let rows = validation::rows(&measured, datasheet, calibrated.as_ref());
    let stats = ModeStats {
        datasheet: validation::stats(&rows, spec_error),
        reference: validation::stats(&rows, reference_error),
        calibrated: validation::stats(&rows, calibrated_error),
    };
    if args.json {
        let kernels = points.iter().map(|p| {
            p.measurement
                .as_ref()
                .map_or_else(String::new, |m| m.kernel.clone())
        });
        let rows = rows
            .iter()
            .zip(kernels)
            .map(|(r, kernel)| ValidatedPoint {
                shape: r.shape.clone(),
                precision: r.precision,
                regime: r.regime,
                kernel,
                measured_s: r.measured_s,
                datasheet: ModeCheck::of(&r.spec),
                reference: ModeCheck::of(&r.reference),
                calibrated: r.calibrated.as_ref().map(ModeCheck::of),
            })
            .collect();
        return json(&ValidationReport {
            datasheet_spec: datasheet.clone(),
            calibrated_spec: calibrated,
            rows,
            stats,
        });
    }
    let style = |mut t: comfy_table::Table| {
        if args.markdown {
            t.load_style(ASCII_MARKDOWN);
        }
        t
    };
    let mut text = format!("{}\n\n", style(points_table(&rows)));
    let all_stats = [
        (Mode::Datasheet, &stats.datasheet),
        (Mode::Reference, &stats.reference),
        (Mode::Calibrated, &stats.calibrated),
    ];
    for (mode, stats) in all_stats {
        if stats.is_empty() || args.mode.is_some_and(|m| m != mode) {
            continue;
        }
        let mut t = table(&["precision", "regime", "points", "median |error|", "p90 |error|"]);
        for s in stats {
            t.add_row(vec![
                s.precision.name().to_owned(),
                s.regime.name().to_owned(),
                s.n_points.to_string(),
                format!("{:.1} %", s.median_abs_pct),
                format!("{:.1} %", s.p90_abs_pct),
            ]);
        }
        text.push_str(&format!("Prediction error in {mode} mode:\n\n{}\n\n", style(t)));
    }
    emit(&text)
}

fn points_table(rows: &[ValidationRow]) -> comfy_table::Table {
    let cell = |c: &Result<Check, Error>| match c {
        Ok(c) => [
            format!("{:.2}", c.predicted_s * 1e6),
            format!("{:+.1} %", c.error_pct),
        ],
        Err(e) => [String::new(), e.to_string()],
    };
    let mut t = table(&[
        "shape",
        "precision",
        "regime",
        "measured µs",
        "datasheet µs",
        "error",
        "reference µs",
        "error",
        "calibrated µs",
        "error",
    ]);
    for r in rows {
        let [spec_us, spec_err] = cell(&r.spec);
        let [ref_us, ref_err] = cell(&r.reference);
        let [cal_us, cal_err] = r
            .calibrated
            .as_ref()
            .map_or_else(|| [String::new(), String::new()], cell);
        t.add_row(vec![
            r.shape.clone(),
            r.precision.name().to_owned(),
            r.regime.name().to_owned(),
            format!("{:.2}", r.measured_s * 1e6),
            spec_us,
            spec_err,
            ref_us,
            ref_err,
            cal_us,
            cal_err,
        ]);
    }
    t
}
