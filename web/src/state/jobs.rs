//! The page's jobs on the endpoint, owned by the app state so they outlive tab and view switches: the
//! measured step (`POST /api/v1/steps`), the Benchmark tab's job and the Kernel Spot Check. Each streamed
//! or returned measurement joins the page's measured points once.

use leptos::prelude::*;
use roofline_core::measured_device::catalog_key_of_spec;
use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::wire::{
    AnalyzeRequest, AnalyzeResponse, BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob,
    BenchmarkPointEvent, BenchmarkRequest, StepDoneEvent, StepJob, StepOperatorEvent, StepRequest,
};
use roofline_core::{HardwareSpec, Precision};

use crate::api::{self, ApiError, join};
use crate::bench::JobProgress;
use crate::endpoint::Endpoint;
use crate::measured::Measured;
use crate::scenario::Scenario;
use crate::sse::{Handler, JobStream, on_json};
use crate::step::StepProgress;

/// The latest step job and its event stream.
#[derive(Clone, Copy)]
pub struct StepTracker {
    /// The job, as far as it got.
    pub progress: RwSignal<Option<StepProgress>>,
    /// Submits a step and follows it.
    pub submit: Action<StepRequest, Result<StepJob, ApiError>>,
    /// Cancels the job of an id.
    pub cancel: Action<String, Result<(), ApiError>>,
}

/// Creates the tracker; the stream closes when the owner is cleaned up.
pub fn step_tracker(endpoint: Endpoint, measured: Measured) -> StepTracker {
    let progress = RwSignal::new(None::<StepProgress>);
    let stream = JobStream::scoped();
    let follow = move |request: StepRequest, job: StepJob| {
        let url = join(&endpoint.base_now(), &job.events_url);
        progress.set(Some(StepProgress::new(request, job)));
        let handlers = vec![
            (
                "operator",
                on_json(move |e: StepOperatorEvent| {
                    let e = e.map(MeasuredPoint::from);
                    let point = e.measured.clone();
                    let mut fresh = false;
                    progress.update(|p| fresh = p.as_mut().is_some_and(|p| p.on_operator(e)));
                    if let Some(point) = point.filter(|_| fresh) {
                        measured.add(vec![point]);
                    }
                }),
            ),
            ("done", on_done(progress, stream, || ())),
        ];
        if let Err(e) = stream.open(&url, handlers, lost_on_close(progress)) {
            progress.update(|p| {
                if let Some(p) = p {
                    p.lost = Some(e.to_string())
                }
            });
        }
    };
    let submit = Action::new_local(move |request: &StepRequest| {
        let (request, base) = (request.clone(), endpoint.base_now());
        async move {
            let job = api::submit_step(&base, &request).await;
            if let Ok(job) = &job {
                follow(request, job.clone());
            }
            job
        }
    });
    StepTracker {
        progress,
        submit,
        cancel: cancel_action(
            endpoint,
            |base, id| async move { api::cancel_step(&base, &id).await },
        ),
    }
}

/// An action cancelling the job of an id on the endpoint with `call(base, id)`.
fn cancel_action<F: Future<Output = Result<(), ApiError>> + 'static>(
    endpoint: Endpoint,
    call: fn(String, String) -> F,
) -> Action<String, Result<(), ApiError>> {
    Action::new_local(move |id: &String| call(endpoint.base_now(), id.clone()))
}

/// The latest benchmark job and its event stream: a job keeps streaming (and its points keep joining the
/// measured points) while another tab is open.
#[derive(Clone, Copy)]
pub struct JobTracker {
    /// The job, as far as it got.
    pub progress: RwSignal<Option<JobProgress>>,
    /// Submits a job and follows it.
    pub submit: Action<BenchmarkRequest, Result<BenchmarkJob, ApiError>>,
    /// Cancels the job of an id.
    pub cancel: Action<String, Result<(), ApiError>>,
    /// Why the form or the stream failed.
    pub error: RwSignal<Option<String>>,
    /// The precisions the endpoint measures, or measured when it was last online: what the boxes offer
    /// while it is offline.
    pub measurable: Memo<Vec<Precision>>,
}

/// Creates the tracker; the stream closes when the owner is cleaned up.
pub fn job_tracker(endpoint: Endpoint, measured: Measured) -> JobTracker {
    let progress = RwSignal::new(None::<JobProgress>);
    let stream = JobStream::scoped();
    let error = RwSignal::new(None::<String>);
    let follow = move |job: BenchmarkJob| {
        let url = join(&endpoint.base_now(), &job.events_url);
        progress.set(Some(JobProgress::new(job)));
        let handlers = vec![
            (
                "point",
                on_json(move |e: BenchmarkPointEvent| {
                    let e = e.map(MeasuredPoint::from, PredictedPoint::from);
                    let point = e.point.clone();
                    let mut fresh = false;
                    progress.update(|p| fresh = p.as_mut().is_some_and(|p| p.on_point(e)));
                    if fresh {
                        measured.add(vec![point]);
                    }
                }),
            ),
            (
                "failed",
                on_json(move |e: BenchmarkFailedEvent| {
                    progress.update(|p| {
                        if let Some(p) = p {
                            p.on_failed(e);
                        }
                    })
                }),
            ),
            (
                "done",
                on_done(progress, stream, move || measured.refresh_history()),
            ),
        ];
        if let Err(e) = stream.open(&url, handlers, lost_on_close(progress)) {
            error.set(Some(e.to_string()));
        }
    };
    let submit = Action::new_local(move |request: &BenchmarkRequest| {
        let (request, base) = (request.clone(), endpoint.base_now());
        async move {
            let job = api::submit_benchmark(&base, &request).await;
            if let Ok(job) = &job {
                follow(job.clone());
            }
            job
        }
    });
    JobTracker {
        progress,
        submit,
        cancel: cancel_action(endpoint, |base, id| async move {
            api::cancel_benchmark(&base, &id).await
        }),
        error,
        measurable: Memo::new(
            move |last: Option<&Vec<Precision>>| match endpoint.device.get().flatten() {
                Some(d) if !d.measurable_precisions.is_empty() => d.measurable_precisions,
                _ => last.cloned().unwrap_or_default(),
            },
        ),
    }
}

/// A job's progress as its event stream reports it.
trait Streamed: Send + Sync + 'static {
    /// The stream's last event.
    type Done: serde::de::DeserializeOwned;
    /// Whether the job ended (done, or its stream lost).
    fn is_over(&self) -> bool;
    /// Records why the stream ended before the job did.
    fn lose(&mut self, why: String);
    /// Records the last event.
    fn finish(&mut self, done: Self::Done);
}

impl Streamed for StepProgress {
    type Done = StepDoneEvent;
    fn is_over(&self) -> bool {
        StepProgress::is_over(self)
    }
    fn lose(&mut self, why: String) {
        self.lost = Some(why);
    }
    fn finish(&mut self, done: StepDoneEvent) {
        self.done = Some(done);
    }
}

impl Streamed for JobProgress {
    type Done = BenchmarkDoneEvent;
    fn is_over(&self) -> bool {
        JobProgress::is_over(self)
    }
    fn lose(&mut self, why: String) {
        self.lost = Some(why);
    }
    fn finish(&mut self, done: BenchmarkDoneEvent) {
        self.done = Some(done);
    }
}

/// The `done` handler: closes the stream (the server ends it after `done`; closing keeps the browser from
/// reconnecting), records the event, then runs `then`.
fn on_done<P: Streamed>(
    progress: RwSignal<Option<P>>,
    stream: JobStream,
    then: impl Fn() + 'static,
) -> Handler {
    on_json(move |e: P::Done| {
        stream.close();
        progress.update(|p| {
            if let Some(p) = p {
                p.finish(e);
            }
        });
        then();
    })
}

/// Marks a job that is not over lost when the endpoint closes its stream.
fn lost_on_close<P: Streamed>(progress: RwSignal<Option<P>>) -> Box<dyn FnOnce()> {
    Box::new(move || {
        progress.update(|p| {
            if let Some(p) = p.as_mut().filter(|p| !p.is_over()) {
                p.lose("the endpoint closed the stream".to_owned());
            }
        });
    })
}

/// Which precisions one spot check measures: one radio group, so only one can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSet {
    /// The precision picked (`spot-one`).
    One,
    /// Every precision the endpoint measures natively (`run-all-precisions`; disabled when it measures none).
    All,
    /// The precisions ticked above (`spot-custom`).
    Ticked,
}

/// A spot check's answer as the page keeps it: its predicted and measured points in base units.
pub type Analysis = AnalyzeResponse<MeasuredPoint, PredictedPoint>;

/// The spot check's choices and its POST `/api/analyze`, kept across tab switches so both stay on screen.
#[derive(Clone, Copy)]
pub struct SpotCheck {
    /// The request and its answer.
    pub analyze: Action<AnalyzeRequest, Result<Analysis, ApiError>>,
    /// The precision picked; `None` until the user picks one.
    pub chosen: RwSignal<Option<Precision>>,
    /// Which precisions are measured.
    pub run_set: RwSignal<RunSet>,
}

/// Creates the spot check. Measured points join the page's measured points, and their precisions are
/// ticked so their predictions are plotted beside them. The endpoint predicts on the selected device, the
/// datasheet of a calibrated one, else its default (`gb10`).
pub fn spot_check(
    scenario: RwSignal<Scenario>,
    hardware: Memo<HardwareSpec>,
    endpoint: Endpoint,
    measured: Measured,
) -> SpotCheck {
    let analyze = Action::new_local(move |request: &AnalyzeRequest| {
        let request = request.clone();
        let base = endpoint.base_now();
        let key = hardware.with_untracked(|h| catalog_key_of_spec(h).unwrap_or("gb10").to_owned());
        async move {
            // The precisions are always listed (the endpoint's own "run all" set holds formats a CPU
            // backend cannot measure).
            let response = api::analyze(&base, &key, &request)
                .await
                .map(|r| r.map(MeasuredPoint::from, PredictedPoint::from));
            if let Ok(r) = &response {
                scenario.update(|s| {
                    for p in &r.measured {
                        if !s.kernel.precisions.contains(&p.precision) {
                            s.kernel.toggle(p.precision);
                        }
                    }
                });
                measured.add(r.measured.clone());
                measured.refresh_history();
            }
            response
        }
    });
    SpotCheck {
        analyze,
        chosen: RwSignal::new(None),
        run_set: RwSignal::new(RunSet::One),
    }
}
