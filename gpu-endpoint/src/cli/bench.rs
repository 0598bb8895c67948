//! `gpu-endpoint bench` and `compare`: the benchmark use case (`use_cases::benchmark`) run in place, with a
//! progress bar on stderr and a table, JSON (`BenchReport`) or CSV on stdout.

use clap::Args;
use roofline_cli::output::{emit, json, table};
use roofline_cli::predict::SpecArgs;
use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::units::{GIGA, TERA};
use roofline_core::wire::{
    BenchReport, BenchmarkFailedEvent, BenchmarkPointEvent, BenchmarkRequest, RooflinePoint,
};
use roofline_core::{Mode, Precision};

use super::{CliError, MeasureArgs, parse_precision, parse_shape, progress_bar, run_id};
use crate::jobs::JobContext;
use crate::use_cases::benchmark::{self, BenchmarkEvent, BenchmarkPlan};

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
    /// Store, time limit and backend.
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// Runs `bench` (or `compare`, which requires the device to predict on and prints the prediction columns).
///
/// # Errors
/// [`CliError::Usage`] for a bad device, shape count or bound; [`CliError::Runtime`] when the store cannot
/// be opened or the output written.
pub fn run(args: &BenchArgs, compare: bool) -> Result<(), CliError> {
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
    let plan = BenchmarkPlan::new(request, hardware).map_err(|e| CliError::Usage(e.to_string()))?;
    let (device, store) = args.measure.open()?;
    let bar = progress_bar(u64::from(plan.total()));
    let mut points: Vec<BenchmarkPointEvent<MeasuredPoint, PredictedPoint>> = Vec::new();
    let mut failed: Vec<BenchmarkFailedEvent> = Vec::new();
    let (id, limits) = (run_id("cli"), args.measure.limits());
    let job = JobContext {
        id: &id,
        limits: &limits,
    };
    benchmark::run(
        &device.acquire(),
        store.as_deref(),
        &plan,
        &job,
        |event| match event {
            BenchmarkEvent::Point(p) => {
                bar.set_message(format!("{} {}", p.point.op.shape_label(), p.point.precision));
                bar.inc(1);
                points.push(*p);
            }
            BenchmarkEvent::Failed(f) => {
                bar.set_message(format!("{} {} failed", f.shape, f.failure.precision));
                bar.inc(1);
                failed.push(f);
            }
            BenchmarkEvent::Done(_) => bar.finish_and_clear(),
        },
    );
    print_bench(args, compare, &points, &failed)
}

/// Prints the points and failures as JSON, CSV or a table.
fn print_bench(
    args: &BenchArgs,
    compare: bool,
    points: &[BenchmarkPointEvent<MeasuredPoint, PredictedPoint>],
    failed: &[BenchmarkFailedEvent],
) -> Result<(), CliError> {
    if args.json {
        return json(&BenchReport {
            points: points
                .iter()
                .map(|p| p.map(RooflinePoint::from, RooflinePoint::from))
                .collect(),
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
            let m = &p.point.measurement;
            vec![
                p.point.op.shape_label(),
                p.point.precision.name().to_owned(),
                m.kernel.clone(),
                format!("{:.2}", m.median_s * 1e6),
                format!("{:.2}", m.p10_s * 1e6),
                format!("{:.2}", m.p90_s * 1e6),
                m.samples.to_string(),
                format!("{:.4}", p.point.achieved_flop_per_s() / TERA),
                format!("{:.2}", p.point.achieved_bytes_per_s() / GIGA),
                p.predicted
                    .as_ref()
                    .map_or_else(String::new, |q| format!("{:.2}", q.time_s * 1e6)),
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
