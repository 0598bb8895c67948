//! The model-step use case: every operator of one prefill or decode step, as `roofline-core`'s
//! [`analyze_model`] lists them, measured on the device beside its prediction, then the whole step timed
//! end to end.
//!
//! [`predicted_device`] picks the spec a step is predicted on (the request's, else the measured device's
//! catalog entry, else the latest stored calibration); [`plan`] analyses the scenario of a [`StepRequest`];
//! [`run`] measures each distinct operator once (rows with the same kernel, shape and precisions share one
//! measurement), stores every measured point with its operator name, and reports one [`StepOperatorEvent`]
//! per row and a [`StepDoneEvent`] with the step's totals. [`StepJobs`] (the generic `jobs::JobManager` over
//! [`Step`]) queues step jobs for `POST /api/steps`; the device lock keeps them one at a time with benchmark
//! jobs and direct measurements. `gpu-endpoint bench-model` calls [`run`] in place.

use std::collections::HashMap;
use std::time::Instant;

use roofline_core::measurement::MeasuredPoint;
use roofline_core::step_comparison::{StepTotals, measured_over_predicted};
use roofline_core::wire::{
    Failure, MAX_STEP_KERNELS, RooflinePoint, StepDoneEvent, StepEndToEnd, StepOperatorEvent, StepRequest,
};
use roofline_core::{
    Corrections, Error, HardwareSpec, Mode, ModelAnalysis, Operator, Precision, Workload, analyze_model,
    find_hardware_in, find_model, find_quant_config,
};

use super::{UseCaseError, point_of, predicted_point, store_point, within_cap};
use crate::backend::BackendError;
use crate::device::{Device, DeviceGuard};
use crate::jobs::{
    JobContext, JobEventKind, JobKind, JobManager, JobRetention, MAX_REMEMBERED_BYTES, event_json,
};
use crate::protocol::PointLimits;
use crate::store::Store;

/// Most step jobs waiting in the queue.
pub const MAX_QUEUED_STEPS: usize = 4;
/// Finished step jobs whose events are kept for replay by default ([`STEP_RETENTION`]).
pub const MAX_REMEMBERED_STEPS: usize = 32;

/// A step ready to measure: the request, the spec of its predictions, the analysis, and the step as it runs
/// end to end, built once.
///
/// Its size is bounded before it is built ([`plan`]): a few dozen rows and distinct operators, and a launch
/// order of at most [`MAX_STEP_KERNELS`] indices (512 KiB), so a plan holds well under 1 MiB whatever the
/// request; with at most [`MAX_QUEUED_STEPS`] queued or being planned, one running and the
/// [`MAX_REMEMBERED_STEPS`] finished jobs kept for replay, step plans hold under 40 MiB in all.
#[derive(Debug, Clone)]
pub struct StepPlan {
    /// What was asked for.
    pub request: StepRequest,
    /// The spec the step is predicted on (in its mode).
    pub hardware: HardwareSpec,
    /// The analysis: one row per operator.
    pub analysis: ModelAnalysis,
    /// The config's compute precision (what a failure of the whole step names).
    pub compute: Precision,
    /// The step's distinct operators (rows with the same kernel, shape and precisions share one).
    pub ops: Vec<Operator>,
    /// The distinct operator of each row (an index into `ops`).
    pub op_of_row: Vec<usize>,
    /// The launch order ([`ModelAnalysis::launch_order`]) as indices into `ops`: Σ count entries.
    pub launch_order: Vec<usize>,
}

impl StepPlan {
    /// Distinct operators the step measures.
    #[must_use]
    pub fn distinct(&self) -> usize {
        self.ops.len()
    }
}

/// The spec a request predicts on: its `spec`, or its catalog key, in the request's mode (default reference,
/// or calibrated for a measured spec); `None` when the request names neither.
///
/// # Errors
/// [`Error::UnknownHardware`] for an unknown key; [`Error::InvalidInput`] for an invalid spec or a mode it
/// lacks.
pub fn requested_hardware(request: &StepRequest) -> Result<Option<HardwareSpec>, Error> {
    match (&request.hardware_key, &request.spec) {
        (Some(_), Some(_)) => Err(Error::InvalidInput(
            "give either hardware_key or spec, not both".into(),
        )),
        (Some(key), None) => {
            find_hardware_in(key, request.mode.unwrap_or_default()).map(|spec| Some(spec.clone()))
        }
        (None, Some(spec)) => {
            spec.check()?;
            let mode = request.mode.unwrap_or(match Mode::of(spec) {
                Mode::Calibrated => Mode::Calibrated,
                _ => Mode::Reference,
            });
            spec.in_mode(mode).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// The spec a step is predicted on: `requested` (the request's own, [`requested_hardware`]), else the
/// measured device's catalog entry in `mode` (default reference), else the latest calibration in the store in
/// `mode` (default calibrated).
///
/// # Errors
/// [`UseCaseError::NoPredictedDevice`] when there is none of them; core's error for a mode the spec lacks.
pub fn predicted_device(
    requested: Option<HardwareSpec>,
    device: &Device,
    store: Option<&Store>,
    mode: Option<Mode>,
) -> Result<HardwareSpec, UseCaseError> {
    if let Some(hardware) = requested {
        return Ok(hardware);
    }
    let info = device.backend().device_info();
    if let Some(key) = info.matched_key.as_deref() {
        return Ok(find_hardware_in(key, mode.unwrap_or_default())?.clone());
    }
    let calibration = store.and_then(|store| store.latest_calibration().ok().flatten());
    match calibration {
        Some(result) => Ok(result.spec.in_mode(mode.unwrap_or(Mode::Calibrated))?),
        None => Err(UseCaseError::NoPredictedDevice {
            backend: info.backend,
            name: info.name,
        }),
    }
}

/// Analyses the step of `request` on `hardware` (corrections of the spec's mode) and lays it out as it runs.
/// The bounds that need no analysis ([`StepRequest::check_bounds`]: layers, tokens) are checked before any
/// work, the kernel count ([`MAX_STEP_KERNELS`]) before the launch order is built; the analysis itself is a
/// fixed number of rows whatever the model's size.
///
/// # Errors
/// [`Error::UnknownModel`] / [`Error::UnknownConfig`]; [`Error::Unsupported`] when the device lacks a format
/// of the config; [`Error::InvalidInput`] for a zero batch or context, a request beyond the bounds, or a
/// `model_config` that is invalid or named other than `model`.
pub fn plan(request: StepRequest, hardware: HardwareSpec) -> Result<StepPlan, Error> {
    let model = match &request.model_config {
        Some(model) if model.key != request.model => {
            return Err(Error::InvalidInput(format!(
                "model_config.key {:?} differs from model {:?}",
                model.key, request.model
            )));
        }
        Some(model) => {
            model.check()?;
            model
        }
        None => find_model(&request.model)?,
    };
    request.check_bounds(model)?;
    let config = find_quant_config(&request.config)?;
    let workload = Workload {
        phase: request.phase,
        batch: request.batch,
        context: request.context,
    };
    let corrections = Corrections::for_spec(&hardware);
    let analysis = analyze_model(&hardware, model, config, &workload, &corrections)?;
    if analysis.kernel_launches > MAX_STEP_KERNELS {
        return Err(Error::InvalidInput(format!(
            "a step measurement launches at most {MAX_STEP_KERNELS} kernels, this step launches {}",
            analysis.kernel_launches
        )));
    }
    let mut distinct: HashMap<String, usize> = HashMap::new();
    let mut ops = Vec::new();
    let op_of_row = analysis
        .ops
        .iter()
        .map(|row| {
            *distinct.entry(operator_key(&row.operator)).or_insert_with(|| {
                ops.push(row.operator.clone());
                ops.len() - 1
            })
        })
        .collect::<Vec<_>>();
    let launch_order = analysis
        .launch_order(model.layers)
        .into_iter()
        .map(|row| op_of_row[row])
        .collect();
    Ok(StepPlan {
        compute: config.compute(),
        request,
        hardware,
        analysis,
        ops,
        op_of_row,
        launch_order,
    })
}

/// What makes two rows the same measurement: kind, GEMM shape, kernel description and precisions.
fn operator_key(op: &roofline_core::Operator) -> String {
    format!("{:?}|{:?}|{:?}|{:?}", op.kind, op.gemm, op.kernel, op.precisions)
}

/// One event of a step job.
#[derive(Debug, Clone, PartialEq)]
pub enum StepEvent {
    /// An operator row, its measured point in base units.
    Operator(Box<StepOperatorEvent<MeasuredPoint>>),
    /// The job ended.
    Done(Box<StepDoneEvent>),
}

/// Measures every operator row of `plan` in step order, each distinct operator once, calling `emit` after
/// each row (after its point is committed to the store; one the store cannot commit is a `not_stored`
/// failure), then, when every row was measured, times the whole step end to end
/// ([`DeviceGuard::measure_step`] over [`StepPlan::ops`] and [`StepPlan::launch_order`]). Each measurement
/// runs under the job's limits: one whose predicted run is already longer than the time cap is refused up
/// front ([`within_cap`]), one past the cap stops at its next check; either is a `time_limit` failure and the
/// next operator runs. Once the limits are cancelled the job stops (within one check) and reports
/// `cancelled`. Returns the `done` event (also emitted).
pub fn run(
    guard: &DeviceGuard<'_>,
    store: Option<&Store>,
    plan: &StepPlan,
    job: &JobContext<'_>,
    mut emit: impl FnMut(StepEvent),
) -> StepDoneEvent {
    let (job_id, limits) = (job.id, job.limits);
    let start = Instant::now();
    let rows = &plan.analysis.ops;
    let total = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    // Measurement (or failure) of each distinct operator, with the row that took it.
    let mut taken: Vec<Option<(String, Result<MeasuredPoint, Failure>)>> = vec![None; plan.ops.len()];
    let mut failed = 0u32;
    let mut totals = StepTotals::default();
    let mut cancelled = false;
    // The first row without a measurement, and why: the step is then not timed end to end.
    let mut first_failure: Option<(String, Failure)> = None;
    for (index, row) in rows.iter().enumerate() {
        if limits.is_cancelled() {
            cancelled = true;
            break;
        }
        let op = &row.operator;
        let distinct = plan.op_of_row[index];
        let (same_as, result) = if let Some((first, result)) = &taken[distinct] {
            (Some(first.clone()), result.clone())
        } else {
            // A run the prediction already puts past the cap is refused before it holds the device.
            let result = within_cap(row.time_s, &plan.hardware.key, limits)
                .and_then(|()| limits.run(|| guard.measure_operator(op)));
            if matches!(result, Err(BackendError::Cancelled)) {
                cancelled = true;
                break;
            }
            let result = result
                .map_err(|e| e.failure(op.precisions.compute()))
                .and_then(|m| {
                    let point = point_of(m, Some(row.bound));
                    let predicted = predicted_point(Some(&plan.hardware), op);
                    store_point(
                        store,
                        Some(job_id),
                        Some(plan.hardware.key.as_str()),
                        &point,
                        predicted.as_ref(),
                    )
                    .map(|()| point)
                });
            taken[distinct] = Some((row.name.clone(), result.clone()));
            (None, result)
        };
        let (measured_point, failure) = match result {
            Ok(point) => (Some(point), None),
            Err(failure) => (None, Some(failure)),
        };
        let measured_s = measured_point.as_ref().map(MeasuredPoint::time_s);
        let ratio = measured_s.map(|t| measured_over_predicted(t, row.time_s));
        if let Some(t) = measured_s {
            totals.add(row.count, t, row.time_s);
        } else {
            failed += 1;
            if first_failure.is_none() {
                first_failure = failure.clone().map(|f| (row.name.clone(), f));
            }
        }
        emit(StepEvent::Operator(Box::new(StepOperatorEvent {
            job_id: job_id.to_owned(),
            index: u32::try_from(index).unwrap_or(u32::MAX),
            total,
            name: row.name.clone(),
            kind: row.kind,
            count: row.count,
            shape: row.shape.clone(),
            operands: op.precisions,
            predicted_time_s: row.time_s,
            measured: measured_point,
            measured_over_predicted: ratio,
            same_as,
            failure,
        })));
    }
    let mut done = empty_done(job_id, plan, cancelled);
    done.measured = totals.measured_rows;
    done.failed = failed;
    done.predicted_measured_time_s = totals.predicted_s;
    done.measured_time_s = totals.measured_s;
    done.measured_over_predicted = totals.measured_over_predicted();
    if !cancelled {
        match (totals.measured_rows, first_failure) {
            (0, None) => {}
            (_, Some((name, failure))) => {
                done.end_to_end_failure = Some(Failure {
                    message: format!(
                        "not timed end to end: {failed} of {total} operator rows have no measurement ({name}: {})",
                        failure.message
                    ),
                    ..failure
                });
            }
            (_, None) => match end_to_end(guard, plan, limits, &totals) {
                Ok(timed) => done.end_to_end = Some(timed),
                Err(BackendError::Cancelled) => done.cancelled = true,
                Err(e) => done.end_to_end_failure = Some(e.failure(plan.compute)),
            },
        }
    }
    done.elapsed_s = start.elapsed().as_secs_f64();
    emit(StepEvent::Done(Box::new(done.clone())));
    done
}

/// Times the whole step of `plan` end to end, beside the per-operator sums of `totals`.
fn end_to_end(
    guard: &DeviceGuard<'_>,
    plan: &StepPlan,
    limits: &PointLimits,
    totals: &StepTotals,
) -> Result<StepEndToEnd, BackendError> {
    within_cap(plan.analysis.total_time_s, &plan.hardware.key, limits)?;
    let timing = limits.run(|| guard.measure_step(&plan.ops, &plan.launch_order))?;
    let measured_s = timing.measurement.median_s;
    Ok(StepEndToEnd {
        kernels: timing.kernels,
        measured_time_s: measured_s,
        measured_over_predicted: measured_over_predicted(measured_s, plan.analysis.total_time_s),
        overhead_s: totals.end_to_end_overhead_s(measured_s),
        measurement: timing.measurement,
    })
}

/// Model-step jobs: the operators of a [`StepPlan`], measured by [`run`].
pub struct Step;

impl JobEventKind for StepEvent {
    /// SSE event name: `operator` or `done`.
    fn name(&self) -> &'static str {
        match self {
            StepEvent::Operator(_) => "operator",
            StepEvent::Done(_) => "done",
        }
    }

    fn json(&self) -> String {
        match self {
            StepEvent::Operator(e) => event_json(&e.map(RooflinePoint::from)),
            StepEvent::Done(e) => event_json(e),
        }
    }

    fn is_done(&self) -> bool {
        matches!(self, StepEvent::Done(_))
    }
}

impl JobKind for Step {
    type Request = StepPlan;
    type Event = StepEvent;
    const NAME: &'static str = "step";
    const ID_PREFIX: &'static str = "step";
    const MAX_QUEUED: usize = MAX_QUEUED_STEPS;

    fn cancelled_while_queued(job_id: &str, plan: &StepPlan) -> StepEvent {
        StepEvent::Done(Box::new(empty_done(job_id, plan, true)))
    }

    fn run(
        guard: &DeviceGuard<'_>,
        store: Option<&Store>,
        plan: &StepPlan,
        job: &JobContext<'_>,
        emit: impl FnMut(StepEvent),
    ) {
        run(guard, store, plan, job, emit);
    }
}

/// The step-job queue and its worker thread.
pub type StepJobs = JobManager<Step>;

/// How many finished step jobs, and bytes of their events, are kept for replay by default.
pub const STEP_RETENTION: JobRetention = JobRetention {
    max_jobs: MAX_REMEMBERED_STEPS,
    max_event_bytes: MAX_REMEMBERED_BYTES,
};

/// The `done` event of a job that measured nothing.
fn empty_done(job_id: &str, plan: &StepPlan, cancelled: bool) -> StepDoneEvent {
    let analysis = &plan.analysis;
    StepDoneEvent {
        job_id: job_id.to_owned(),
        hardware_key: plan.hardware.key.clone(),
        mode: analysis.mode,
        operators: u32::try_from(analysis.ops.len()).unwrap_or(u32::MAX),
        measured: 0,
        failed: 0,
        cancelled,
        predicted_step_time_s: analysis.total_time_s,
        predicted_kernels_time_s: analysis
            .ops
            .iter()
            .map(roofline_core::OpAnalysis::total_time_s)
            .sum::<f64>(),
        predicted_measured_time_s: 0.0,
        measured_time_s: 0.0,
        measured_over_predicted: None,
        end_to_end: None,
        end_to_end_failure: None,
        elapsed_s: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use roofline_core::Phase;

    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::backend::fake::{FAKE_LAUNCH_GAP_S, FakeBackend};

    /// Runs `plan` on a fresh fake device, without a store, collecting its events.
    fn run_on_fake(plan: &StepPlan) -> (StepDoneEvent, Vec<StepEvent>) {
        let device = Device::new(Arc::new(FakeBackend::new(Duration::ZERO)));
        let limits = PointLimits::default();
        let job = JobContext {
            id: "t",
            limits: &limits,
        };
        let mut events = Vec::new();
        let done = run(&device.acquire(), None, plan, &job, |e| events.push(e));
        (done, events)
    }

    fn tinyllama(config: &str) -> StepRequest {
        StepRequest {
            model: "tinyllama-1.1b".into(),
            model_config: None,
            config: config.into(),
            phase: Phase::Decode,
            batch: 1,
            context: 256,
            hardware_key: Some("h100_sxm".into()),
            spec: None,
            mode: None,
        }
    }

    #[test]
    fn every_row_of_a_fake_step_is_measured_once_per_distinct_operator() {
        let request = tinyllama("bf16");
        let hardware = requested_hardware(&request).unwrap().unwrap();
        let plan = plan(request, hardware).unwrap();
        let (done, events) = run_on_fake(&plan);
        let rows: Vec<StepOperatorEvent<MeasuredPoint>> = events
            .into_iter()
            .filter_map(|e| match e {
                StepEvent::Operator(row) => Some(*row),
                StepEvent::Done(_) => None,
            })
            .collect();
        assert_eq!(rows.len(), plan.analysis.ops.len());
        assert_eq!(done.measured as usize, rows.len(), "{rows:#?}");
        // The three norms of TinyLlama have one shape: measured once, shared twice.
        let norms: Vec<_> = rows.iter().filter(|r| r.name.ends_with("norm")).collect();
        assert_eq!(norms.len(), 3);
        assert_eq!(norms[1].same_as.as_deref(), Some("attn_norm"));
        assert!(
            rows.iter()
                .all(|r| r.measured_over_predicted.is_some_and(f64::is_finite))
        );
        assert!(done.measured_over_predicted.is_some_and(f64::is_finite));
        assert!(plan.distinct() < rows.len());
        // End to end: Σ count kernels (22 layers × 12 + embedding, final norm, logits = 267), and the fake's
        // 2 µs gap per kernel is exactly what the per-operator sum leaves out.
        let end_to_end = done.end_to_end.as_ref().expect("timed end to end");
        assert_eq!(end_to_end.kernels, 22 * 12 + 3);
        assert_eq!(end_to_end.kernels, plan.analysis.kernel_launches);
        let gaps_s = f64::from(end_to_end.kernels) * FAKE_LAUNCH_GAP_S;
        assert!(
            (end_to_end.overhead_s - gaps_s).abs() < 1e-6 * gaps_s,
            "{end_to_end:?}"
        );
        assert!(
            (end_to_end.measured_over_predicted * done.predicted_step_time_s - end_to_end.measured_time_s)
                .abs()
                < 1e-9 * end_to_end.measured_time_s
        );
        assert_eq!(done.end_to_end_failure, None);
        // The measured point keeps the operator's name.
        assert!(
            rows[0]
                .measured
                .as_ref()
                .unwrap()
                .label
                .starts_with(&rows[0].name)
        );
    }

    #[test]
    fn a_step_with_an_unmeasured_row_says_why_it_has_no_end_to_end_time() {
        // INT4 weights with BF16 activations: the GEMMs have no step kernel, the other rows run.
        let request = tinyllama("w4a16-int4");
        let hardware = requested_hardware(&request).unwrap().unwrap();
        let plan = plan(request, hardware).unwrap();
        let (done, _) = run_on_fake(&plan);
        assert!(done.failed > 0 && done.measured > 0, "{done:?}");
        assert_eq!(done.end_to_end, None);
        let failure = done.end_to_end_failure.expect("a reason");
        assert_eq!(failure.code, roofline_core::wire::ErrorCode::Unsupported);
        assert!(failure.message.contains("qkv_proj"), "{}", failure.message);
    }

    #[test]
    fn a_moe_step_measures_its_experts_as_batched_gemms_and_end_to_end() {
        // Qwen3-30B-A3B's layers (128 experts, top 8) but 2 of them and a 1024-token vocabulary, within the
        // fake's 1 GB.
        let mut model = find_model("qwen3-30b-a3b").unwrap().clone();
        (model.key, model.layers, model.vocab) = ("qwen3-moe-2l".into(), 2, 1024);
        let request = StepRequest {
            model: model.key.clone(),
            model_config: Some(model),
            batch: 4,
            ..tinyllama("bf16")
        };
        let plan = plan(request.clone(), requested_hardware(&request).unwrap().unwrap()).unwrap();
        let (done, events) = run_on_fake(&plan);
        assert_eq!((done.measured, done.failed), (done.operators, 0), "{done:?}");
        assert!(done.end_to_end.is_some(), "{done:?}");
        // 4 tokens × top 8 of 128: 128·(1 − (120/128)^4) = 29.1 experts → 29 products of ⌈32 / 29.1⌉ = 2
        // rows.
        let gate_up = plan.ops.iter().find(|op| op.name == "expert_gate_up").unwrap();
        let shape = roofline_core::GemmShape {
            batch: 29,
            ..roofline_core::GemmShape::matmul(2, 1536, 2048)
        };
        assert_eq!(gate_up.gemm, Some(shape));
        // The fake's roofline time of the 29 products, memory-bound: 29 · 2 B · (2·2048 + 1536·2048 + 2·1536)
        // = 182,867,968 B at 1 TB/s = 182.867968 µs.
        let measured_s = events
            .iter()
            .find_map(|e| match e {
                StepEvent::Operator(row) if row.name == "expert_gate_up" => row.measured.as_ref(),
                _ => None,
            })
            .map(MeasuredPoint::time_s);
        assert!(
            measured_s.is_some_and(|t| (t - 182.867_968e-6).abs() < 1e-12),
            "{measured_s:?}"
        );
    }

    #[test]
    fn a_step_is_predicted_on_its_request_else_the_stored_calibration() {
        let fake = Device::new(Arc::new(FakeBackend::new(Duration::ZERO)));
        // The fake device has no catalog entry; without a store there is nothing to predict on.
        assert!(matches!(
            predicted_device(None, &fake, None, None),
            Err(UseCaseError::NoPredictedDevice { .. })
        ));
        let gb10 = roofline_core::find_hardware("gb10").unwrap().clone();
        assert_eq!(
            predicted_device(Some(gb10.clone()), &fake, None, None).unwrap(),
            gb10
        );
        // A calibration of the fake on top of the H100 SXM, stored by the calibrate use case: the step is
        // predicted on it, in calibrated mode.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let request = crate::use_cases::calibrate::CalibrationRequest {
            base: Some(roofline_core::find_hardware("h100_sxm").unwrap()),
            precisions: Some(vec![Precision::Fp16]),
        };
        crate::use_cases::calibrate::calibrate(
            &fake.acquire(),
            Some(&store),
            &request,
            &PointLimits::default(),
        )
        .unwrap();
        let calibrated = predicted_device(None, &fake, Some(&store), None).unwrap();
        assert_eq!(calibrated.key, "h100_sxm_measured");
        assert_eq!(Mode::of(&calibrated), Mode::Calibrated);
        // A measured spec has no reference ceilings: asking for them is core's input error.
        assert!(matches!(
            predicted_device(None, &fake, Some(&store), Some(Mode::Reference)),
            Err(UseCaseError::Input(Error::InvalidInput(_)))
        ));
    }

    #[test]
    fn the_plan_lists_each_distinct_operator_once_in_launch_order() {
        let request = tinyllama("fp32");
        let hardware = requested_hardware(&request).unwrap().unwrap();
        let plan = plan(request, hardware).unwrap();
        let (ops, order) = (&plan.ops, &plan.launch_order);
        assert_eq!(ops.len(), plan.distinct());
        assert_eq!(order.len(), plan.analysis.kernel_launches as usize);
        // The three norms share one operator: attn_norm's, launched 22 + 22 + 1 times.
        let norm = order[1];
        assert_eq!(ops[norm].name, "attn_norm");
        assert_eq!(order.iter().filter(|&&i| i == norm).count(), 45);
        assert_eq!(ops[*order.last().unwrap()].name, "logits");
        assert!(plan.op_of_row.iter().all(|&i| i < ops.len()));
    }

    #[test]
    fn a_model_that_is_not_a_preset_travels_with_the_request() {
        let hardware = requested_hardware(&tinyllama("bf16")).unwrap().unwrap();
        let preset = plan(tinyllama("bf16"), hardware.clone()).unwrap();
        let mut mine = find_model("tinyllama-1.1b").unwrap().clone();
        mine.key = "my-tiny".into();
        let custom = plan(
            StepRequest {
                model: "my-tiny".into(),
                model_config: Some(mine.clone()),
                ..tinyllama("bf16")
            },
            hardware.clone(),
        )
        .unwrap();
        // The same architecture under another key: the same operator rows.
        assert_eq!(custom.analysis.ops.len(), preset.analysis.ops.len());
        assert_eq!(custom.analysis.model, "my-tiny");
        let misnamed = StepRequest {
            model_config: Some(mine.clone()),
            ..tinyllama("bf16")
        };
        assert!(matches!(
            plan(misnamed, hardware.clone()),
            Err(Error::InvalidInput(_))
        ));
        mine.layers = 0;
        let invalid = StepRequest {
            model: "my-tiny".into(),
            model_config: Some(mine),
            ..tinyllama("bf16")
        };
        assert!(plan(invalid, hardware).is_err());
    }

    #[test]
    fn requests_name_one_device_and_known_keys() {
        let both = StepRequest {
            spec: Some(roofline_core::find_hardware("gb10").unwrap().clone()),
            ..tinyllama("fp32")
        };
        assert!(requested_hardware(&both).is_err());
        let hardware = requested_hardware(&tinyllama("fp32")).unwrap().unwrap();
        assert!(matches!(
            plan(
                StepRequest {
                    model: "no-such-model".into(),
                    ..tinyllama("fp32")
                },
                hardware.clone()
            ),
            Err(Error::UnknownModel { .. })
        ));
        assert!(
            plan(
                StepRequest {
                    context: 0,
                    ..tinyllama("fp32")
                },
                hardware
            )
            .is_err()
        );
    }
}
