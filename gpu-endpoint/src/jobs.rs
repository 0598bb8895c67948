//! Jobs: [`JobManager`], a FIFO queue per [`JobKind`] drained by one worker thread that holds the device for a
//! whole job (so GPU work is strictly one job at a time), per-job event logs replayed to every SSE subscriber,
//! cancellation (`protocol::PointLimits`) and bounded retention of finished jobs ([`JobRetention`]). Benchmark
//! jobs ([`Benchmark`]) are defined here with [`run_points`], the shape × precision loop shared with the `bench`
//! CLI; model-step jobs are `step::Step`.

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
/// Most benchmark jobs waiting in the queue.
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
                    let point = point_of(result, predicted.as_ref().map(|p| p.bottleneck));
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
                        failure: e.failure(precision),
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

/// Benchmark jobs: the shapes × precisions of a [`BenchmarkRequest`], measured by [`run_points`].
pub struct Benchmark;

/// A validated benchmark request with the spec its predictions use.
#[derive(Debug, Clone)]
pub struct BenchmarkPlan {
    /// What was asked for.
    pub request: BenchmarkRequest,
    /// The spec of the predictions beside each point, when the request names one.
    pub hardware: Option<&'static HardwareSpec>,
}

impl JobEventKind for JobEvent {
    fn name(&self) -> &'static str {
        JobEvent::name(self)
    }

    fn json(&self) -> String {
        JobEvent::json(self)
    }

    fn is_done(&self) -> bool {
        matches!(self, JobEvent::Done(_))
    }
}

impl JobKind for Benchmark {
    type Request = BenchmarkPlan;
    type Event = JobEvent;
    const NAME: &'static str = "benchmark";
    const ID_PREFIX: &'static str = "job";
    const MAX_QUEUED: usize = MAX_QUEUED;

    fn cancelled_while_queued(job_id: &str, _plan: &BenchmarkPlan) -> JobEvent {
        JobEvent::Done(BenchmarkDoneEvent {
            job_id: job_id.to_owned(),
            measured: 0,
            failed: 0,
            cancelled: true,
        })
    }

    fn run(
        guard: &DeviceGuard<'_>,
        job_id: &str,
        plan: &BenchmarkPlan,
        store: Option<&Store>,
        limits: &PointLimits,
        emit: impl FnMut(JobEvent),
    ) {
        let done = run_points(guard, job_id, &plan.request, plan.hardware, store, limits, emit);
        tracing::info!(
            job_id,
            measured = done.measured,
            failed = done.failed,
            cancelled = done.cancelled,
            "benchmark job ended"
        );
    }
}

/// The benchmark-job queue and its worker.
pub type BenchmarkJobs = JobManager<Benchmark>;

/// One event of a job of any kind, as its SSE subscribers see it.
pub trait JobEventKind: Clone + Send + Sync + 'static {
    /// SSE event name.
    fn name(&self) -> &'static str;
    /// JSON payload.
    fn json(&self) -> String;
    /// Whether this is the job's last event (`done`).
    fn is_done(&self) -> bool;
}

/// A kind of job the [`JobManager`] queues: what a job is asked to do, what it reports, and the work that runs
/// on the worker thread while it holds the device.
pub trait JobKind: Send + Sync + 'static {
    /// What a job is asked to do (validated and planned before it is queued).
    type Request: Send + Sync + 'static;
    /// What a job reports.
    type Event: JobEventKind;
    /// The kind in log lines and worker thread names (`benchmark`, `step`).
    const NAME: &'static str;
    /// Prefix of job ids (`<prefix>-<unix ms>-<serial>`).
    const ID_PREFIX: &'static str;
    /// Most jobs waiting in the queue.
    const MAX_QUEUED: usize;

    /// The `done` event of a job cancelled before it started.
    fn cancelled_while_queued(job_id: &str, request: &Self::Request) -> Self::Event;

    /// Runs a job on the worker thread, holding the device; `emit` records each event, ending with `done`.
    fn run(
        guard: &DeviceGuard<'_>,
        job_id: &str,
        request: &Self::Request,
        store: Option<&Store>,
        limits: &PointLimits,
        emit: impl FnMut(Self::Event),
    );
}

/// One submitted job.
pub struct Job<K: JobKind> {
    /// Id.
    pub id: String,
    request: K::Request,
    events: Mutex<Vec<K::Event>>,
    /// Sum of the events' JSON payload sizes, in bytes.
    event_bytes: AtomicUsize,
    /// The manager, told when the job finishes.
    manager: Weak<Inner<K>>,
    notify: tokio::sync::watch::Sender<usize>,
    limits: PointLimits,
    finished: AtomicBool,
}

impl<K: JobKind> Job<K> {
    fn push(&self, event: K::Event) {
        let mut events = self
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let done = event.is_done();
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
    pub fn events_from(&self, start: usize) -> Vec<K::Event> {
        let events = self
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        events.get(start..).map(<[K::Event]>::to_vec).unwrap_or_default()
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

struct Inner<K: JobKind> {
    queue: Mutex<VecDeque<Arc<Job<K>>>>,
    wake: Condvar,
    jobs: Mutex<HashMap<String, Arc<Job<K>>>>,
    /// Finished jobs still in `jobs`, oldest first, with their event bytes, and the sum of those bytes.
    finished: Mutex<(VecDeque<(String, usize)>, usize)>,
    retention: JobRetention,
    max_point: Duration,
    running: AtomicBool,
    device: Arc<Device>,
    store: Option<Arc<Store>>,
    next_id: AtomicU64,
}

/// The queue of one kind of job and its worker thread. Jobs run one at a time in submission order, each
/// holding the device lock (shared with the other kinds and with direct measurements) for its whole run.
pub struct JobManager<K: JobKind> {
    inner: Arc<Inner<K>>,
}

/// Why a job was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmitError {
    /// The queue is full.
    QueueFull,
}

impl<K: JobKind> JobManager<K> {
    /// Starts the worker thread (it exits when the manager is dropped). Every point of a job is capped at
    /// `max_point` of wall-clock time; finished jobs are kept for replay within `retention`.
    #[must_use]
    pub fn new(
        device: Arc<Device>,
        store: Option<Arc<Store>>,
        retention: JobRetention,
        max_point: Duration,
    ) -> JobManager<K> {
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
            .name(format!("{}-worker", K::NAME))
            .spawn(move || worker(&weak))
            .map_or_else(
                |e| tracing::error!(error = %e, kind = K::NAME, "could not start the job worker"),
                |_| (),
            );
        JobManager { inner }
    }

    /// Queues a validated request; returns the job and the number of jobs of this kind ahead of it.
    ///
    /// # Errors
    /// [`SubmitError::QueueFull`] when [`JobKind::MAX_QUEUED`] jobs are waiting.
    pub fn submit(&self, request: K::Request) -> Result<(Arc<Job<K>>, u32), SubmitError> {
        let mut queue = self
            .inner
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if queue.len() >= K::MAX_QUEUED {
            return Err(SubmitError::QueueFull);
        }
        let serial = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        let id = format!(
            "{}-{}-{serial}",
            K::ID_PREFIX,
            (crate::protocol::unix_now() * 1000.0) as u64
        );
        let (notify, _) = tokio::sync::watch::channel(0);
        let job = Arc::new(Job {
            id: id.clone(),
            request,
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

    /// A job by id (None once forgotten).
    #[must_use]
    pub fn get(&self, id: &str) -> Option<Arc<Job<K>>> {
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Cancels a job: a queued job ends now, a running one stops within one sample. False if unknown.
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
            drop(queue);
            job.push(K::cancelled_while_queued(&job.id, &job.request));
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

impl<K: JobKind> Inner<K> {
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
            tracing::debug!(job_id = %oldest, kind = K::NAME, "finished job forgotten");
        }
    }
}

fn worker<K: JobKind>(weak: &Weak<Inner<K>>) {
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
            // One device user at a time: every job kind and direct measurements take the same lock.
            let guard = inner.device.acquire();
            tracing::info!(job_id = %job.id, "{} job started", K::NAME);
            K::run(
                &guard,
                &job.id,
                &job.request,
                inner.store.as_deref(),
                &job.limits,
                |event| job.push(event),
            );
            drop(guard);
            inner.running.store(false, Ordering::SeqCst);
        }
    }
}
