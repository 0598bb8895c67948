//! `gpu-endpoint calibrate`: the calibration use case (`use_cases::calibrate`) run in place; prints the
//! measured figures with their runs' spread, the weight-only GEMVs, the failed precisions and the warnings,
//! and the spec key, or the whole `CalibrationResult` as JSON.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use roofline_cli::output::{emit, json};
use roofline_cli::predict::parse_hardware;
use roofline_core::hardware::Spread;
use roofline_core::{ComputePath, Precision, find_hardware, format};

use super::{BackendArgs, CliError, locked_device, open_store, parse_max_point, parse_precision};
use crate::protocol::PointLimits;
use crate::use_cases::calibrate::{CalibrationRequest, calibrate};

/// `calibrate` options.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// Catalog key whose datasheet spec is the starting point.
    #[arg(long, value_parser = parse_hardware)]
    pub hardware: Option<String>,
    /// Precisions to calibrate (default: all the backend runs; at most 16, repeats measured once); one that
    /// fails is listed and the others calibrate. INT4 runs as the W4A16 GEMV on GPUs: a weight-only bandwidth
    /// ceiling, never an INT4 peak.
    #[arg(long, value_delimiter = ',', value_parser = parse_precision)]
    pub precisions: Vec<Precision>,
    /// Print the full JSON result.
    #[arg(long)]
    pub json: bool,
    /// Data directory of the result store.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Wall-clock cap of one measured point, in seconds: a point past it stops (at its next check) and is a
    /// `time_limit` failure; the next point runs.
    #[arg(long, default_value = "60", value_parser = parse_max_point)]
    pub max_point_seconds: Duration,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// Runs `calibrate` (the result is stored).
///
/// # Errors
/// [`CliError::Usage`] for an unknown `--hardware` or more than 16 `--precisions`; [`CliError::Runtime`] when
/// the store cannot be opened, the measurement fails or its result cannot be stored.
pub fn run(args: &CalibrateArgs) -> Result<(), CliError> {
    let selected = args.backend.select()?;
    let store = open_store(args.data_dir.as_ref())?;
    let request = CalibrationRequest::new(
        args.hardware.as_deref().map(find_hardware).transpose()?,
        (!args.precisions.is_empty()).then(|| args.precisions.clone()),
    )
    .map_err(|e| CliError::Usage(e.to_string()))?;
    let device = locked_device(selected, args.data_dir.as_ref())?;
    let limits = PointLimits::new(args.max_point_seconds);
    let result = calibrate(&device.acquire(), Some(&store), &request, &limits)
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    if args.json {
        return json(&result);
    }
    let info = device.backend().device_info();
    let mut lines = vec![
        format!("device      {} ({} backend)", info.name, info.backend),
        format!(
            "bandwidth   {}  ({})",
            format::bandwidth(result.bandwidth_bytes_per_s),
            result.bandwidth_measurement.kernel
        ),
    ];
    let quality = result.spec.calibration.as_ref();
    // The spread of a path's runs: (max − min) / median, in percent.
    let spread = |runs: Option<&Vec<(ComputePath, Spread)>>, path: ComputePath| {
        runs.and_then(|r| r.iter().find(|(p, _)| *p == path))
            .map_or_else(String::new, |(_, s)| {
                format!(", runs within {:.1} %", s.relative() * 100.0)
            })
    };
    lines.extend(result.peaks.iter().map(|p| {
        format!(
            "{:<11} {} at {}{}  ({})",
            p.precision.name(),
            format::flop_rate(p.achieved_flop_per_s),
            p.shape,
            spread(quality.map(|q| &q.peaks), p.precision.compute_path()),
            p.measurement.kernel
        )
    }));
    lines.extend(result.weight_only.iter().map(|w| {
        let path = w.operands.compute().compute_path();
        format!(
            "{:<11} {} weight-only GEMV {} streams {}{}: the {path} weight-only ceiling, no compute peak for {}  ({})",
            w.precision.name(),
            w.operands.width_label(),
            w.shape,
            format::bandwidth(w.bandwidth_bytes_per_s),
            spread(quality.map(|q| &q.weight_only), path),
            w.precision,
            w.measurement.kernel
        )
    }));
    lines.extend(
        result
            .failed
            .iter()
            .map(|f| format!("{:<11} FAILED ({}): {}", f.precision, f.code, f.message)),
    );
    lines.extend(
        quality
            .iter()
            .flat_map(|q| &q.warnings)
            .map(|w| format!("warning     {w}")),
    );
    lines.push(format!(
        "spec key    {} (provenance: measured)\n",
        result.spec.key
    ));
    emit(&lines.join("\n"))
}
