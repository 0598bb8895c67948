//! Thin HTTP handlers: parse the request, run its use case (`crate::use_cases`) in `web::block`, answer with a
//! wire type; and the helpers they share (measuring and listing off the executor with cancellation on
//! disconnect, job cancellation and SSE event streams). Route table (all under `/api`): see
//! gpu-endpoint/README.md.

mod analyze;
mod benchmarks;
mod calibrate;
mod device;
mod health;
mod nvml;
mod results;
mod steps;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, Responder, web};
use actix_web_lab::sse;
use roofline_core::wire::ErrorCode;

use crate::http::error::ApiError;
use crate::http::middleware::MAX_BODY_BYTES;
use crate::jobs::{Job, JobEventKind, JobKind, JobManager};
use crate::protocol::PointLimits;

/// Registers every `/api` route (relative to the scope).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/health").route(web::get().to(health::health)))
        .service(resource("/device").route(web::get().to(device::device)))
        .service(resource("/nvml/status").route(web::get().to(nvml::status)))
        .service(resource("/nvml/stream").route(web::get().to(nvml::stream)))
        .service(resource("/analyze").route(web::post().to(analyze::analyze)))
        .service(resource("/benchmarks").route(web::post().to(benchmarks::submit)))
        .service(resource("/benchmarks/{id}").route(web::delete().to(benchmarks::cancel)))
        .service(resource("/benchmarks/{id}/events").route(web::get().to(benchmarks::events)))
        .service(resource("/calibrate").route(web::post().to(calibrate::calibrate)))
        .service(resource("/steps").route(web::post().to(steps::submit)))
        .service(resource("/steps/{id}").route(web::delete().to(steps::cancel)))
        .service(resource("/steps/{id}/events").route(web::get().to(steps::events)))
        .service(
            resource("/results")
                .route(web::get().to(results::results))
                .route(web::delete().to(results::delete)),
        );
}

fn resource(path: &str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(method_not_allowed))
}

async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    let body = roofline_core::wire::ErrorBody {
        code: ErrorCode::MethodNotAllowed,
        message: format!("{} is not allowed on {}", req.method(), req.path()),
    };
    HttpResponse::MethodNotAllowed().json(body)
}

/// Cancels its limits when dropped. A handler holds one while it awaits a measurement or a listing: actix
/// drops the handler's future when the client disconnects, so the work stops at its next check and frees the
/// device (or the store's reader) instead of running on for nobody.
struct CancelOnDrop(Option<PointLimits>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(limits) = self.0.take() {
            limits.cancel();
        }
    }
}

/// Runs work off the executor under fresh limits (a measurement's per-point cap, a listing's time limit),
/// cancelled when the returned future is dropped (the client went away).
async fn cancellable<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce(&PointLimits) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let limits = PointLimits::new(limit);
    let mut cancel_on_drop = CancelOnDrop(Some(limits.clone()));
    let result = blocking(move || work(&limits)).await;
    // Finished: nothing is left to cancel.
    cancel_on_drop.0 = None;
    result
}

/// Runs blocking work off the executor, mapping a lost worker to a 500.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    web::block(work).await?
}

/// Reads a raw body up to [`MAX_BODY_BYTES`] (413 `too_large` beyond, 400 on a broken stream).
async fn read_body(mut payload: web::Payload) -> Result<web::Bytes, ApiError> {
    use futures_util::StreamExt as _;
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| match &e {
            actix_web::error::PayloadError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                ApiError::RequestTimeout(e.to_string())
            }
            _ => ApiError::BadRequest(format!("could not read the body: {e}")),
        })?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::TooLarge(format!(
                "request body too large (limit {MAX_BODY_BYTES} bytes)"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// `DELETE` of a job: 204 once cancelled, 404 `no <kind> job '<id>'` when unknown or forgotten.
fn cancel_job<K: JobKind>(jobs: &JobManager<K>, id: &str) -> Result<HttpResponse, ApiError> {
    if jobs.cancel(id) {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound(format!("no {} job '{id}'", K::NAME)))
    }
}

/// `GET` of a job's events: the SSE stream of [`job_event_stream`], or 404 `no <kind> job '<id>'`.
fn job_events<K: JobKind>(jobs: &JobManager<K>, id: &str) -> Result<impl Responder + use<K>, ApiError> {
    let job = jobs
        .get(id)
        .ok_or_else(|| ApiError::NotFound(format!("no {} job '{id}'", K::NAME)))?;
    Ok(sse::Sse::from_stream(job_event_stream(job)).with_keep_alive(Duration::from_secs(15)))
}

/// Every event of `job` from the first, then live ones, ending after `done`.
fn job_event_stream<K: JobKind>(
    job: Arc<Job<K>>,
) -> impl futures_util::Stream<Item = Result<sse::Event, std::convert::Infallible>> {
    let receiver = job.subscribe();
    let state = (job, receiver, 0usize, VecDeque::<K::Event>::new(), false);
    futures_util::stream::unfold(
        state,
        |(job, mut receiver, mut next, mut pending, ended)| async move {
            loop {
                if let Some(event) = pending.pop_front() {
                    let is_done = event.is_done();
                    let sse_event = sse::Event::from(sse::Data::new(event.json()).event(event.name()));
                    return Some((Ok(sse_event), (job, receiver, next, pending, is_done)));
                }
                if ended {
                    return None;
                }
                receiver.borrow_and_update();
                let fresh = job.events_from(next);
                if fresh.is_empty() {
                    if job.is_finished() || receiver.changed().await.is_err() {
                        // Finished with nothing left to send, or the job is gone.
                        let tail = job.events_from(next);
                        if tail.is_empty() {
                            return None;
                        }
                        next += tail.len();
                        pending.extend(tail);
                    }
                    continue;
                }
                next += fresh.len();
                pending.extend(fresh);
            }
        },
    )
}
