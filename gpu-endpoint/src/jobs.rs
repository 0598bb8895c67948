//! The one job machinery: [`JobManager`], a FIFO queue per [`JobKind`] drained by one worker thread that holds
//! the device for a whole job (so GPU work is strictly one job at a time), per-job event logs replayed to every
//! SSE subscriber, cancellation (`protocol::PointLimits`) and bounded retention of finished jobs
//! ([`JobRetention`]). Nothing here knows a kind of job: each lives beside its use case
//! (`use_cases::benchmark::Benchmark`, `use_cases::step::Step`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use crate::device::{Device, DeviceGuard};
use crate::protocol::PointLimits;
use crate::store::Store;

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

/// One event of a job of any kind, as its SSE subscribers see it.
pub trait JobEventKind: Clone + Send + Sync + 'static {
    /// SSE event name.
    fn name(&self) -> &'static str;
    /// JSON payload.
    fn json(&self) -> String;
    /// Whether this is the job's last event (`done`).
    fn is_done(&self) -> bool;
}

/// The JSON payload of an event (an `internal` error body in the impossible case that it does not serialize).
#[must_use]
pub fn event_json(event: &impl serde::Serialize) -> String {
    serde_json::to_string(event).unwrap_or_else(|e| format!("{{\"code\":\"internal\",\"message\":\"{e}\"}}"))
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
        store: Option<&Store>,
        request: &Self::Request,
        job: &JobContext<'_>,
        emit: impl FnMut(Self::Event),
    );
}

/// What a running job's work gets besides its request: the job's id (stored with every point it measures)
/// and the limits each of its measurements runs under. A command-line run is a job of its own (`cli-…`).
#[derive(Debug, Clone, Copy)]
pub struct JobContext<'a> {
    /// The job id.
    pub id: &'a str,
    /// Time cap per point and cancellation.
    pub limits: &'a PointLimits,
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
        let json = event.json();
        let bytes = self.event_bytes.fetch_add(json.len(), Ordering::SeqCst) + json.len();
        events.push(event);
        if done {
            tracing::info!(job_id = %self.id, kind = K::NAME, done = %json, "job ended");
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
    /// Queue places taken by requests still being planned ([`Reservation`]).
    reserved: AtomicUsize,
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
            reserved: AtomicUsize::new(0),
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

    /// Takes a place in the queue for a request about to be planned: the queue is checked before any work
    /// that grows with the request, and the place is held until [`Reservation::submit`] (or given back when
    /// the reservation is dropped, e.g. the request was refused).
    ///
    /// # Errors
    /// [`SubmitError::QueueFull`] when [`JobKind::MAX_QUEUED`] jobs are waiting or reserved.
    pub fn reserve(&self) -> Result<Reservation<'_, K>, SubmitError> {
        let queue = self
            .inner
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if queue.len() + self.inner.reserved.load(Ordering::SeqCst) >= K::MAX_QUEUED {
            return Err(SubmitError::QueueFull);
        }
        self.inner.reserved.fetch_add(1, Ordering::SeqCst);
        Ok(Reservation { manager: self })
    }

    /// Queues `request` in a place already counted (no check).
    fn enqueue(&self, request: K::Request) -> (Arc<Job<K>>, u32) {
        let mut queue = self
            .inner
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
        (job, u32::try_from(ahead).unwrap_or(u32::MAX))
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

    /// Cancels a job: a queued job ends now, a running one stops at its next check. False if unknown.
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

/// A place in a [`JobManager`]'s queue, held while a request is planned; given back when dropped unused.
pub struct Reservation<'a, K: JobKind> {
    manager: &'a JobManager<K>,
}

impl<K: JobKind> Reservation<'_, K> {
    /// Queues `request` in this place; returns the job and the number of jobs of its kind ahead of it.
    pub fn submit(self, request: K::Request) -> (Arc<Job<K>>, u32) {
        // The job is queued before its place is given back (by the drop), so the count never dips below the
        // queue.
        self.manager.enqueue(request)
    }
}

impl<K: JobKind> Drop for Reservation<'_, K> {
    fn drop(&mut self) {
        self.manager.inner.reserved.fetch_sub(1, Ordering::SeqCst);
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
            let context = JobContext {
                id: &job.id,
                limits: &job.limits,
            };
            K::run(&guard, inner.store.as_deref(), &job.request, &context, |event| {
                job.push(event)
            });
            drop(guard);
            inner.running.store(false, Ordering::SeqCst);
        }
    }
}
