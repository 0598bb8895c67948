//! The benchmark use case: a job of shapes × precisions, each measured on the device beside its prediction
//! and committed to the store. `POST /api/benchmarks` queues it ([`BenchmarkJobs`], the generic
//! `jobs::JobManager` over [`Benchmark`]); `gpu-endpoint bench` and `compare` run it in place ([`run`]).

use roofline_cli::lists::distinct;
use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::wire::{
    BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkPointEvent, BenchmarkRequest, RooflinePoint,
};
use roofline_core::{GemmShape, HardwareSpec, OperandPrecisions, Operator, predict};

use super::{point_of, prediction_of, store_point, within_cap};
use crate::backend::{BackendError, MatmulSpec};
use crate::device::{Device, DeviceGuard};
use crate::jobs::{JobContext, JobEventKind, JobKind, JobManager, event_json};
use crate::store::Store;

/// Most shapes in one job.
pub const MAX_SHAPES: usize = 64;
/// Most precisions in one job.
pub const MAX_PRECISIONS: usize = 16;
/// Most benchmark jobs waiting in the queue.
pub const MAX_QUEUED: usize = 16;

/// A checked benchmark request with the spec its predictions use.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkPlan {
    /// What was asked for.
    pub request: BenchmarkRequest,
    /// The spec of the predictions beside each point, when there is one (the request's catalog key in its
    /// mode, or the command line's `--spec`).
    pub hardware: Option<HardwareSpec>,
}

impl BenchmarkPlan {
    /// Checks the counts of `request` (1..=[`MAX_SHAPES`] shapes, 1..=[`MAX_PRECISIONS`] precisions, repeats
    /// included), drops repeated shapes and precisions (a point listed twice is measured once), and checks
    /// that some point is within the measurement bounds: a point outside them fails on its own when the job
    /// runs (a `failed` event), so one oversize shape never refuses the others.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`]: the counts, or no point within the bounds (the first point's reason).
    pub fn new(
        request: BenchmarkRequest,
        hardware: Option<HardwareSpec>,
    ) -> Result<BenchmarkPlan, BackendError> {
        if request.shapes.is_empty() || request.shapes.len() > MAX_SHAPES {
            return Err(BackendError::InvalidInput(format!(
                "shapes must list 1 to {MAX_SHAPES} shapes, got {}",
                request.shapes.len()
            )));
        }
        if request.precisions.is_empty() || request.precisions.len() > MAX_PRECISIONS {
            return Err(BackendError::InvalidInput(format!(
                "precisions must list 1 to {MAX_PRECISIONS} precisions, got {}",
                request.precisions.len()
            )));
        }
        let request = BenchmarkRequest {
            shapes: distinct(request.shapes),
            precisions: distinct(request.precisions),
            ..request
        };
        let plan = BenchmarkPlan { request, hardware };
        first_error_if_none_passes(plan.points().map(|spec| spec.check_bounds()))?;
        Ok(plan)
    }

    /// Points the job will try (shapes × precisions).
    #[must_use]
    pub fn total(&self) -> u32 {
        u32::try_from(self.request.shapes.len() * self.request.precisions.len()).unwrap_or(u32::MAX)
    }

    /// Refuses the job, before it is queued, when no point's buffers fit the device's memory budget (a point
    /// that does not fit fails on its own when the job runs).
    ///
    /// # Errors
    /// [`BackendError::TooLarge`]: the first point's reason.
    pub fn check_fits(&self, device: &Device) -> Result<(), BackendError> {
        first_error_if_none_passes(self.points().map(|spec| device.check_fits(&spec)))
    }

    /// Every point in order (shapes outer, precisions inner).
    fn points(&self) -> impl Iterator<Item = MatmulSpec> + '_ {
        self.request.shapes.iter().flat_map(move |&[m, n, k]| {
            self.request.precisions.iter().map(move |&precision| MatmulSpec {
                shape: GemmShape::matmul(m, n, k),
                precision,
            })
        })
    }
}

/// `Ok` when some check passed, else the first check's error (`Ok` for no checks).
fn first_error_if_none_passes(
    checks: impl Iterator<Item = Result<(), BackendError>>,
) -> Result<(), BackendError> {
    let mut first = None;
    for check in checks {
        match check {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// One event of a benchmark job.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchmarkEvent {
    /// A measured point and its prediction, in base units.
    Point(Box<BenchmarkPointEvent<MeasuredPoint, PredictedPoint>>),
    /// A point that failed.
    Failed(BenchmarkFailedEvent),
    /// The job ended.
    Done(BenchmarkDoneEvent),
}

impl JobEventKind for BenchmarkEvent {
    /// SSE event name: `point`, `failed` or `done`.
    fn name(&self) -> &'static str {
        match self {
            BenchmarkEvent::Point(_) => "point",
            BenchmarkEvent::Failed(_) => "failed",
            BenchmarkEvent::Done(_) => "done",
        }
    }

    fn json(&self) -> String {
        match self {
            BenchmarkEvent::Point(e) => event_json(&e.map(RooflinePoint::from, RooflinePoint::from)),
            BenchmarkEvent::Failed(e) => event_json(e),
            BenchmarkEvent::Done(e) => event_json(e),
        }
    }

    fn is_done(&self) -> bool {
        matches!(self, BenchmarkEvent::Done(_))
    }
}

/// Measures every point of `plan` in order, calling `emit` after each: a `point` once it is committed to the
/// store, a `failed` one (code `not_stored`) when the store could not commit it.
/// Each point runs under the job's limits: past its time cap it becomes a `failed` event with code
/// `time_limit` and the next point runs; once the limits are cancelled the job stops (at its next check) and
/// reports `cancelled`. Returns the `done` event (also emitted).
pub fn run(
    guard: &DeviceGuard<'_>,
    store: Option<&Store>,
    plan: &BenchmarkPlan,
    job: &JobContext<'_>,
    mut emit: impl FnMut(BenchmarkEvent),
) -> BenchmarkDoneEvent {
    let total = plan.total();
    let hardware = plan.hardware.as_ref();
    let (mut measured, mut failed) = (0u32, 0u32);
    let mut cancelled = false;
    for (index, spec) in (0u32..).zip(plan.points()) {
        if job.limits.is_cancelled() {
            cancelled = true;
            break;
        }
        // A run its prediction (when the job names a device) already puts past the time cap is refused before
        // it holds the device.
        let predicted_s = hardware
            .and_then(|h| {
                let GemmShape { m, n, k, .. } = spec.shape;
                let op = Operator::matmul(m, n, k, OperandPrecisions::run_on(spec.precision, h.arch));
                op.ok().and_then(|op| predict(h, &op).ok())
            })
            .map_or(0.0, |p| p.time_s);
        let on = hardware.map_or("", |h| h.key.as_str());
        let result = within_cap(predicted_s, on, job.limits)
            .and_then(|()| job.limits.run(|| guard.measure_matmul(&spec)));
        match result {
            Err(BackendError::Cancelled) => {
                cancelled = true;
                break;
            }
            Ok(result) => {
                let predicted = prediction_of(hardware, &result);
                let point = point_of(result, predicted.as_ref().map(|p| p.bound));
                let stored = store_point(
                    store,
                    Some(job.id),
                    hardware.map(|h| h.key.as_str()),
                    &point,
                    predicted.as_ref(),
                );
                match stored {
                    Ok(()) => {
                        measured += 1;
                        emit(BenchmarkEvent::Point(Box::new(BenchmarkPointEvent::new(
                            job.id.to_owned(),
                            index,
                            total,
                            point,
                            predicted,
                        ))));
                    }
                    Err(failure) => {
                        failed += 1;
                        emit(failed_event(job, index, total, spec.shape, failure));
                    }
                }
            }
            Err(e) => {
                failed += 1;
                emit(failed_event(
                    job,
                    index,
                    total,
                    spec.shape,
                    e.failure(spec.precision),
                ));
            }
        }
    }
    let done = BenchmarkDoneEvent {
        job_id: job.id.to_owned(),
        measured,
        failed,
        cancelled,
    };
    emit(BenchmarkEvent::Done(done.clone()));
    done
}

/// The `failed` event of point `index` of `total`.
fn failed_event(
    job: &JobContext<'_>,
    index: u32,
    total: u32,
    shape: GemmShape,
    failure: roofline_core::wire::Failure,
) -> BenchmarkEvent {
    BenchmarkEvent::Failed(BenchmarkFailedEvent {
        job_id: job.id.to_owned(),
        index,
        total,
        shape: shape.to_string(),
        failure,
    })
}

/// Benchmark jobs: the points of a [`BenchmarkPlan`], measured by [`run`].
pub struct Benchmark;

impl JobKind for Benchmark {
    type Request = BenchmarkPlan;
    type Event = BenchmarkEvent;
    const NAME: &'static str = "benchmark";
    const ID_PREFIX: &'static str = "job";
    const MAX_QUEUED: usize = MAX_QUEUED;

    fn cancelled_while_queued(job_id: &str, _plan: &BenchmarkPlan) -> BenchmarkEvent {
        BenchmarkEvent::Done(BenchmarkDoneEvent {
            job_id: job_id.to_owned(),
            measured: 0,
            failed: 0,
            cancelled: true,
        })
    }

    fn run(
        guard: &DeviceGuard<'_>,
        store: Option<&Store>,
        plan: &BenchmarkPlan,
        job: &JobContext<'_>,
        emit: impl FnMut(BenchmarkEvent),
    ) {
        run(guard, store, plan, job, emit);
    }
}

/// The benchmark-job queue and its worker.
pub type BenchmarkJobs = JobManager<Benchmark>;
