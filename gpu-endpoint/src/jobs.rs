//! Benchmark jobs: a FIFO queue drained by one worker thread that holds the device for a whole job (so GPU
//! work is strictly one job at a time), per-job event logs replayed to every SSE subscriber, cancellation
//! between points, and [`run_points`], the shape × precision loop shared with the `bench` CLI.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use roofline_core::wire::{
    BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkPointEvent, BenchmarkRequest, RooflinePoint,
};
use roofline_core::{HardwareSpec, Operator, predict};

use crate::backend::{BackendError, Device, DeviceGuard, MatmulSpec, point_of};
use crate::protocol::PointLimits;
use crate::store::Store;

/// Most shapes in one job.
pub const MAX_SHAPES: usize = 64;
/// Most precisions in one job.
pub const MAX_PRECISIONS: usize = 16;
/// Most jobs waiting in the queue.
pub const MAX_QUEUED: usize = 16;
/// Finished jobs whose events are kept for replay; older finished ones are forgotten.
pub const MAX_REMEMBERED: usize = 256;
/// Total size of the events kept for finished jobs, in bytes of their JSON payloads (64 MiB).
pub const MAX_REMEMBERED_BYTES: usize = 64 * 1024 * 1024;

/// How many finished jobs, and how many bytes of their events, are kept for replay. The oldest finished jobs
/// beyond either bound are forgotten (their events URL answers 404; their points stay in the store). The most
/// recently finished job is always kept; queued and running jobs are never forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRetention {
    /// Most finished jobs kept.
    pub max_jobs: usize,
    /// Most bytes of event payloads kept over all finished jobs.
    pub max_event_bytes: usize,
}

impl Default for JobRetention {
    fn default() -> Self {
        JobRetention {
            max_jobs: MAX_REMEMBERED,
            max_event_bytes: MAX_REMEMBERED_BYTES,
        }
    }
}

/// One event of a job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobEvent {
    /// A measured point.
    Point(Box<BenchmarkPointEvent>),
    /// A point that failed.
    Failed(BenchmarkFailedEvent),
    /// The job ended.
    Done(BenchmarkDoneEvent),
}

impl JobEvent {
    /// SSE event name: `point`, `failed` or `done`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            JobEvent::Point(_) => "point",
            JobEvent::Failed(_) => "failed",
            JobEvent::Done(_) => "done",
        }
    }

    /// JSON payload.
    #[must_use]
    pub fn json(&self) -> String {
        match self {
            JobEvent::Point(e) => serde_json::to_string(e),
            JobEvent::Failed(e) => serde_json::to_string(e),
            JobEvent::Done(e) => serde_json::to_string(e),
        }
        .unwrap_or_else(|e| format!("{{\"code\":\"internal\",\"message\":\"{e}\"}}"))
    }
}

/// The prediction for `op` on `hardware`, as a simulated point (None when the device lacks the path).
#[must_use]
pub fn predicted_point(hardware: Option<&HardwareSpec>, op: &Operator) -> Option<RooflinePoint> {
    let hardware = hardware?;
    predict(hardware, op)
        .ok()
        .map(|p| RooflinePoint::simulated(op, &p))
}

/// Validates a job request (counts and shape bounds); 400-class problems.
///
/// # Errors
/// A message.
pub fn validate_request(request: &BenchmarkRequest) -> Result<(), String> {
    if request.shapes.is_empty() || request.shapes.len() > MAX_SHAPES {
        return Err(format!(
            "shapes must list 1 to {MAX_SHAPES} shapes, got {}",
            request.shapes.len()
        ));
    }
    if request.precisions.is_empty() || request.precisions.len() > MAX_PRECISIONS {
        return Err(format!(
            "precisions must list 1 to {MAX_PRECISIONS} precisions, got {}",
            request.precisions.len()
        ));
    }
    for shape in &request.shapes {
        let spec = MatmulSpec {
            m: shape[0],
            n: shape[1],
            k: shape[2],
            precision: request.precisions[0],
        };
        spec.check_bounds().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Measures every shape × precision in order, calling `emit` after each point (after it is committed to the
/// store). Each point runs under `limits`: past its time cap it becomes a `failed` event with code
/// `time_limit` and the next point runs; once `limits` is cancelled the job stops (within one sample) and
/// reports `cancelled`. Returns the `done` event (also emitted).
pub fn run_points(
    guard: &DeviceGuard<'_>,
    job_id: &str,
    request: &BenchmarkRequest,
    hardware: Option<&HardwareSpec>,
    store: Option<&Store>,
    limits: &PointLimits,
    mut emit: impl FnMut(JobEvent),
) -> BenchmarkDoneEvent {
    let total = u32::try_from(request.shapes.len() * request.precisions.len()).unwrap_or(u32::MAX);
    let (mut measured, mut failed, mut index) = (0u32, 0u32, 0u32);
    let mut cancelled = false;
    'outer: for shape in &request.shapes {
        for &precision in &request.precisions {
            if limits.is_cancelled() {
                cancelled = true;
                break 'outer;
            }
            let spec = MatmulSpec {
                m: shape[0],
                n: shape[1],
                k: shape[2],
                precision,
            };
            let shape_label = format!("{}x{}x{}", shape[0], shape[1], shape[2]);
            match limits.run(|| guard.measure_matmul(&spec)) {
                Err(BackendError::Cancelled) => {
                    cancelled = true;
                    break 'outer;
                }
                Ok(result) => {
                    let predicted = predicted_point(hardware, &result.op);
                    let point = point_of(result, predicted.as_ref().map(|p| p.bottleneck.as_str()));
                    let error_pct = predicted
                        .as_ref()
                        .map(|p| (point.time_us - p.time_us) / p.time_us * 100.0);
                    if let Some(store) = store
                        && let Err(e) = store.insert_point(
                            Some(job_id),
                            hardware.map(|h| h.key.as_str()),
                            &point,
                            predicted.as_ref(),
                        )
                    {
                        tracing::error!(job_id, error = %e, "could not store a point");
                    }
                    measured += 1;
                    emit(JobEvent::Point(Box::new(BenchmarkPointEvent {
                        job_id: job_id.to_owned(),
                        index,
                        total,
                        point,
                        predicted,
                        error_pct,
                    })));
                }
                Err(e) => {
                    failed += 1;
                    emit(JobEvent::Failed(BenchmarkFailedEvent {
                        job_id: job_id.to_owned(),
                        index,
                        total,
                        shape: shape_label,
                        failure: e.failure(precision.name()),
                    }));
                }
            }
            index += 1;
        }
    }
    let done = BenchmarkDoneEvent {
        job_id: job_id.to_owned(),
        measured,
        failed,
        cancelled,
    };
    emit(JobEvent::Done(done.clone()));
    done
}

/// One submitted job.
pub struct Job {
    /// Id.
    pub id: String,
    request: BenchmarkRequest,
    hardware: Option<&'static HardwareSpec>,
    events: Mutex<Vec<JobEvent>>,
    /// Sum of the events' JSON payload sizes, in bytes.
    event_bytes: AtomicUsize,
    /// The manager, told when the job finishes.
    manager: Weak<Inner>,
    notify: tokio::sync::watch::Sender<usize>,
    limits: PointLimits,
    finished: AtomicBool,
}

impl Job {
    fn push(&self, event: JobEvent) {
        let mut events = self
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let done = matches!(event, JobEvent::Done(_));
        let size = event.json().len();
        let bytes = self.event_bytes.fetch_add(size, Ordering::SeqCst) + size;
        events.push(event);
        if done {
            self.finished.store(true, Ordering::SeqCst);
            // Before subscribers are woken: whoever sees `done` also sees older jobs forgotten.
            if let Some(manager) = self.manager.upgrade() {
                manager.retire(&self.id, bytes);
            }
        }
        self.notify.send_replace(events.len());
    }

    /// Events from `start` on.
    #[must_use]
    pub fn events_from(&self, start: usize) -> Vec<JobEvent> {
        let events = self
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        events.get(start..).map(<[JobEvent]>::to_vec).unwrap_or_default()
    }

    /// Whether the `done` event was pushed.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// A receiver woken whenever an event is pushed.
    #[must_use]
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<usize> {
        self.notify.subscribe()
    }
}

struct Inner {
    queue: Mutex<VecDeque<Arc<Job>>>,
    wake: Condvar,
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    /// Finished jobs still in `jobs`, oldest first, with their event bytes, and the sum of those bytes.
    finished: Mutex<(VecDeque<(String, usize)>, usize)>,
    retention: JobRetention,
    max_point: Duration,
    running: AtomicBool,
    device: Arc<Device>,
    store: Option<Arc<Store>>,
    next_id: AtomicU64,
}

/// The job queue and its worker.
pub struct JobManager {
    inner: Arc<Inner>,
}

/// Why a job was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmitError {
    /// The queue is full.
    QueueFull,
}

impl JobManager {
    /// Starts the worker thread (it exits when the manager is dropped). Every point of a job is capped at
    /// `max_point` of wall-clock time.
    #[must_use]
    pub fn new(
        device: Arc<Device>,
        store: Option<Arc<Store>>,
        retention: JobRetention,
        max_point: Duration,
    ) -> JobManager {
        let inner = Arc::new(Inner {
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            jobs: Mutex::new(HashMap::new()),
            finished: Mutex::new((VecDeque::new(), 0)),
            retention,
            max_point,
            running: AtomicBool::new(false),
            device,
            store,
            next_id: AtomicU64::new(1),
        });
        let weak = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("benchmark-worker".into())
            .spawn(move || worker(&weak))
            .map_or_else(
                |e| tracing::error!(error = %e, "could not start the benchmark worker"),
                |_| (),
            );
        JobManager { inner }
    }

    /// Queues a validated request; returns the job and the number of jobs ahead of it.
    ///
    /// # Errors
    /// [`SubmitError::QueueFull`].
    pub fn submit(
        &self,
        request: BenchmarkRequest,
        hardware: Option<&'static HardwareSpec>,
    ) -> Result<(Arc<Job>, u32), SubmitError> {
        let mut queue = self
            .inner
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if queue.len() >= MAX_QUEUED {
            return Err(SubmitError::QueueFull);
        }
        let serial = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        let id = format!("job-{}-{serial}", (crate::protocol::unix_now() * 1000.0) as u64);
        let (notify, _) = tokio::sync::watch::channel(0);
        let job = Arc::new(Job {
            id: id.clone(),
            request,
            hardware,
            events: Mutex::new(Vec::new()),
            event_bytes: AtomicUsize::new(0),
            manager: Arc::downgrade(&self.inner),
            notify,
            limits: PointLimits::new(self.inner.max_point),
            finished: AtomicBool::new(false),
        });
        let ahead = queue.len() + usize::from(self.inner.running.load(Ordering::SeqCst));
        queue.push_back(job.clone());
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, job.clone());
        self.inner.wake.notify_all();
        Ok((job, u32::try_from(ahead).unwrap_or(u32::MAX)))
    }

    /// A job by id.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Cancels a job: a queued job ends now, a running one stops before its next point. False if unknown.
    #[must_use]
    pub fn cancel(&self, id: &str) -> bool {
        let Some(job) = self.get(id) else { return false };
        job.limits.cancel();
        let mut queue = self
            .inner
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(pos) = queue.iter().position(|j| j.id == id) {
            queue.remove(pos);
            job.push(JobEvent::Done(BenchmarkDoneEvent {
                job_id: job.id.clone(),
                measured: 0,
                failed: 0,
                cancelled: true,
            }));
        }
        true
    }

    /// Whether a job is running or queued.
    #[must_use]
    pub fn busy(&self) -> bool {
        self.inner.running.load(Ordering::SeqCst)
            || !self
                .inner
                .queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .is_empty()
    }
}

impl Inner {
    /// Records a finished job, then forgets the oldest finished jobs beyond the retention bounds.
    fn retire(&self, id: &str, bytes: usize) {
        let mut guard = self
            .finished
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (finished, total) = &mut *guard;
        finished.push_back((id.to_owned(), bytes));
        *total += bytes;
        while finished.len() > self.retention.max_jobs.max(1)
            || (finished.len() > 1 && *total > self.retention.max_event_bytes)
        {
            let Some((oldest, bytes)) = finished.pop_front() else {
                break;
            };
            *total -= bytes;
            self.jobs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&oldest);
            tracing::debug!(job_id = %oldest, "finished job forgotten");
        }
    }
}

fn worker(weak: &Weak<Inner>) {
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let next = {
            let queue = inner
                .queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let (mut queue, _) = inner
                .wake
                .wait_timeout_while(queue, Duration::from_millis(200), |q| q.is_empty())
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let job = queue.pop_front();
            if job.is_some() {
                inner.running.store(true, Ordering::SeqCst);
            }
            job
        };
        if let Some(job) = next {
            let guard = inner.device.acquire();
            tracing::info!(job_id = %job.id, "benchmark job started");
            let done = run_points(
                &guard,
                &job.id,
                &job.request,
                job.hardware,
                inner.store.as_deref(),
                &job.limits,
                |event| job.push(event),
            );
            drop(guard);
            tracing::info!(job_id = %job.id, measured = done.measured, failed = done.failed, cancelled = done.cancelled, "benchmark job ended");
            inner.running.store(false, Ordering::SeqCst);
        }
    }
}
