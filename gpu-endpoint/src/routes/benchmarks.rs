//! Benchmark jobs: `POST /api/benchmarks` (202 + job id and queue position), `GET /api/benchmarks/{id}/events`
//! (SSE: `point`, `failed`, then `done`; replayed from the start for late subscribers) and
//! `DELETE /api/benchmarks/{id}` (cancel between points).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpResponse, Responder, web};
use actix_web_lab::sse;
use roofline_core::find_hardware_in;
use roofline_core::wire::{BenchmarkJob, BenchmarkRequest};

use super::blocking;
use crate::app::AppState;
use crate::error::ApiError;
use crate::jobs::{Job, JobEvent, SubmitError, validate_request};

pub(super) async fn submit(
    state: web::Data<AppState>,
    body: web::Json<BenchmarkRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.into_inner();
    validate_request(&request).map_err(ApiError::BadRequest)?;
    let hardware = request
        .hardware_key
        .as_deref()
        .map(|key| find_hardware_in(key, request.mode))
        .transpose()?;
    // The fit checks may call the driver or read /proc: off the executor.
    let checked = state.clone();
    let request = blocking(move || {
        for shape in &request.shapes {
            for &precision in &request.precisions {
                let spec = crate::backend::MatmulSpec {
                    m: shape[0],
                    n: shape[1],
                    k: shape[2],
                    precision,
                };
                checked.device.check_fits(&spec)?;
            }
        }
        Ok(request)
    })
    .await?;
    let total = u32::try_from(request.shapes.len() * request.precisions.len()).unwrap_or(u32::MAX);
    let (job, position) = state
        .jobs
        .submit(request, hardware)
        .map_err(|SubmitError::QueueFull| ApiError::Busy)?;
    Ok(HttpResponse::Accepted().json(BenchmarkJob {
        events_url: format!("/api/benchmarks/{}/events", job.id),
        id: job.id.clone(),
        position,
        total,
    }))
}

pub(super) async fn cancel(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if state.jobs.cancel(&id) {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound(format!("no benchmark job '{id}'")))
    }
}

pub(super) async fn events(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<impl Responder, ApiError> {
    let job = state
        .jobs
        .get(&id)
        .ok_or_else(|| ApiError::NotFound(format!("no benchmark job '{id}'")))?;
    Ok(sse::Sse::from_stream(job_event_stream(job)).with_keep_alive(Duration::from_secs(15)))
}

/// Every event of `job` from the first, then live ones, ending after `done`.
fn job_event_stream(
    job: Arc<Job>,
) -> impl futures_util::Stream<Item = Result<sse::Event, std::convert::Infallible>> {
    let receiver = job.subscribe();
    let state = (job, receiver, 0usize, VecDeque::<JobEvent>::new(), false);
    futures_util::stream::unfold(
        state,
        |(job, mut receiver, mut next, mut pending, ended)| async move {
            loop {
                if let Some(event) = pending.pop_front() {
                    let is_done = matches!(event, JobEvent::Done(_));
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
