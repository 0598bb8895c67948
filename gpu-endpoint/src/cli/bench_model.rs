//! `gpu-endpoint bench-model`: the step use case (`use_cases::step`) run in place: every operator of one
//! prefill or decode step measured on the device beside its prediction, with a progress bar on stderr and a
//! table (or a `StepReport` as JSON) on stdout.

use clap::Args;
use roofline_cli::output::{emit, json, table};
use roofline_cli::predict::{PhaseArg, SpecArgs, parse_config, parse_model};
use roofline_core::format::{duration, micros_fixed};
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::{RooflinePoint, StepDoneEvent, StepOperatorEvent, StepReport, StepRequest};
use roofline_core::{Mode, Phase};

use super::{CliError, MeasureArgs, progress_bar, run_id};
use crate::jobs::JobContext;
use crate::use_cases::UseCaseError;
use crate::use_cases::step::{self, StepEvent, plan, predicted_device};

/// `bench-model` options.
#[derive(Debug, Clone, Args)]
pub struct BenchModelArgs {
    /// Model preset key, e.g. `tinyllama-1.1b`.
    #[arg(long, value_parser = parse_model)]
    pub model: String,
    /// Precision config key (`fp32` is the one the CPU backend runs).
    #[arg(long, value_parser = parse_config, default_value = "fp32")]
    pub config: String,
    /// Phase.
    #[arg(long, value_enum, default_value = "decode")]
    pub phase: PhaseArg,
    /// Sequences in the batch.
    #[arg(long, default_value_t = 1)]
    pub batch: u32,
    /// Prompt length (prefill) or cached tokens (decode).
    #[arg(long, default_value_t = 256)]
    pub context: u32,
    /// The device the step is predicted on: --hardware KEY or --spec FILE (e.g. a `calibrate --json` output
    /// of this machine); default: the measured device's catalog entry, else the latest stored calibration.
    #[command(flatten)]
    pub device: SpecArgs,
    /// Print the report as JSON (a `StepReport`) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Store, time limit and backend.
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// Runs `bench-model`.
///
/// # Errors
/// [`CliError::Usage`] for a device the step cannot be predicted on or an unsupported config;
/// [`CliError::Runtime`] when the store cannot be opened.
pub fn run(args: &BenchModelArgs) -> Result<(), CliError> {
    let (device, store) = args.measure.open()?;
    let hardware = predicted_device(args.device.resolve()?, &device, store.as_deref(), args.device.mode)
        .map_err(|e| match e {
            UseCaseError::NoPredictedDevice { backend, name } => CliError::Usage(format!(
                "give the device to predict on (--hardware KEY or --spec FILE): the {backend} device ({name}) has \
                 no catalog entry and no stored calibration; `gpu-endpoint calibrate --json > spec.json` makes one"
            )),
            other => CliError::Usage(other.to_string()),
        })?;
    let request = StepRequest {
        model: args.model.clone(),
        model_config: None,
        config: args.config.clone(),
        phase: match args.phase {
            PhaseArg::Prefill => Phase::Prefill,
            PhaseArg::Decode => Phase::Decode,
        },
        batch: args.batch,
        context: args.context,
        hardware_key: Some(hardware.key.clone()),
        spec: None,
        mode: Some(Mode::of(&hardware)),
    };
    let plan = plan(request.clone(), hardware).map_err(|e| CliError::Usage(e.to_string()))?;
    let bar = progress_bar(plan.analysis.ops.len() as u64);
    if let Some(first) = plan.analysis.ops.first() {
        bar.set_message(first.name.clone());
    }
    let (id, limits) = (run_id("cli-step"), args.measure.limits());
    let job = JobContext {
        id: &id,
        limits: &limits,
    };
    let mut rows: Vec<StepOperatorEvent<MeasuredPoint>> = Vec::new();
    let done = step::run(
        &device.acquire(),
        store.as_deref(),
        &plan,
        &job,
        |event| match event {
            StepEvent::Operator(row) => {
                bar.inc(1);
                let next = plan.analysis.ops.get(row.index as usize + 1);
                bar.set_message(
                    next.map_or_else(|| "the whole step, end to end".to_owned(), |op| op.name.clone()),
                );
                rows.push(*row);
            }
            StepEvent::Done(_) => bar.finish_and_clear(),
        },
    );
    if args.json {
        return json(&StepReport {
            request,
            operators: rows.iter().map(|r| r.map(RooflinePoint::from)).collect(),
            done,
        });
    }
    emit(&render(&request, &rows, &done))
}

/// The table of a step: one row per operator, then the totals and the failures.
fn render(request: &StepRequest, rows: &[StepOperatorEvent<MeasuredPoint>], done: &StepDoneEvent) -> String {
    let mut out = table(&[
        "operator",
        "count",
        "predicted_us",
        "measured_us",
        "measured/predicted",
        "kernel",
    ]);
    for row in rows {
        let measured = row.measured.as_ref();
        let kernel = match (measured.map(|p| &p.measurement), &row.failure) {
            (Some(_), _) if row.same_as.is_some() => {
                format!("same as {}", row.same_as.as_deref().unwrap_or_default())
            }
            (Some(m), _) => m.kernel.clone(),
            (None, Some(f)) => format!("FAILED {}", f.code),
            (None, None) => String::new(),
        };
        out.add_row(vec![
            row.name.clone(),
            row.count.to_string(),
            micros_fixed(row.predicted_time_s),
            measured.map_or_else(String::new, |p| micros_fixed(p.time_s())),
            row.measured_over_predicted
                .map_or_else(String::new, |r| format!("{r:.2}")),
            kernel,
        ]);
    }
    let mut text = format!("{out}\n");
    text.push_str(&format!(
        "{} {} {} batch {} context {} on {} ({} mode)\n",
        request.model,
        request.config,
        format!("{:?}", request.phase).to_lowercase(),
        request.batch,
        request.context,
        done.hardware_key,
        format!("{:?}", done.mode).to_lowercase()
    ));
    text.push_str(&format!(
        "operators: {} measured, {} failed of {}{}\n",
        done.measured,
        done.failed,
        done.operators,
        if done.cancelled { " (cancelled)" } else { "" }
    ));
    text.push_str(&format!(
        "step, Σ count × time over the measured operators: measured {}, predicted {}, measured/predicted {}\n",
        duration(done.measured_time_s),
        duration(done.predicted_measured_time_s),
        done.measured_over_predicted
            .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"))
    ));
    text.push_str(&format!(
        "predicted step time (all kernels + launch overhead): {}; measurement took {}\n",
        duration(done.predicted_step_time_s),
        duration(done.elapsed_s)
    ));
    match (&done.end_to_end, &done.end_to_end_failure) {
        (Some(e), _) => text.push_str(&format!(
            "step end to end ({} kernels): measured {}, measured/predicted step {:.2}, {}{} beside the sum of the \
             operators alone ({})\n",
            e.kernels,
            duration(e.measured_time_s),
            e.measured_over_predicted,
            if e.overhead_s < 0.0 { "-" } else { "+" },
            duration(e.overhead_s.abs()),
            e.measurement.kernel
        )),
        (None, Some(f)) => text.push_str(&format!("step end to end: FAILED ({}): {}\n", f.code, f.message)),
        (None, None) => {}
    }
    for row in rows {
        if let (Some(f), None) = (&row.failure, &row.same_as) {
            text.push_str(&format!("{}  FAILED ({}): {}\n", row.name, f.code, f.message));
        }
    }
    text
}
