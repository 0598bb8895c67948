//! Model-step jobs: `POST /api/steps` (202 + job id, queue position and operator count),
//! `GET /api/steps/{id}/events` (SSE: one `operator` event per operator row, then `done`; replayed from the
//! start for late subscribers) and `DELETE /api/steps/{id}` (cancel within one sample).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpResponse, Responder, web};
use actix_web_lab::sse;
use roofline_core::wire::{StepJob, StepRequest};
use roofline_core::{HardwareSpec, Mode, find_hardware_in};

use super::blocking;
use crate::app::AppState;
use crate::error::ApiError;
use crate::step::{StepEvent, StepJobHandle, plan, requested_hardware};

pub(super) async fn submit(
    state: web::Data<AppState>,
    body: web::Json<StepRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.into_inner();
    // The analysis and the fallback device (the store) are blocking work: off the executor.
    let checked = state.clone();
    let plan = blocking(move || {
        let hardware = match requested_hardware(&request)? {
            Some(hardware) => hardware,
            None => default_hardware(&checked, request.mode)?,
        };
        Ok(plan(request, hardware)?)
    })
    .await?;
    let (operators, distinct) = (plan.analysis.ops.len(), plan.distinct());
    let hardware_key = plan.hardware.key.clone();
    let (job, position) = state.steps.submit(plan).ok_or(ApiError::Busy)?;
    Ok(HttpResponse::Accepted().json(StepJob {
        events_url: format!("/api/steps/{}/events", job.id),
        id: job.id.clone(),
        position,
        operators: u32::try_from(operators).unwrap_or(u32::MAX),
        distinct: u32::try_from(distinct).unwrap_or(u32::MAX),
        hardware_key,
    }))
}

/// The device to predict on when the request names none: the measured device's catalog entry, else the
/// latest calibration in the store.
fn default_hardware(state: &AppState, mode: Option<Mode>) -> Result<HardwareSpec, ApiError> {
    let info = state.device.backend().device_info();
    if let Some(key) = info.matched_key.as_deref() {
        return Ok(find_hardware_in(key, mode.unwrap_or_default())?.clone());
    }
    let calibration = state
        .store
        .as_ref()
        .and_then(|store| store.latest_calibration().ok().flatten());
    match calibration {
        Some(result) => Ok(result.spec.in_mode(mode.unwrap_or(Mode::Calibrated))?),
        None => Err(ApiError::BadRequest(format!(
            "give hardware_key or spec: the {} device ({}) has no catalog entry and no calibration yet",
            info.backend, info.name
        ))),
    }
}

pub(super) async fn cancel(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if state.steps.cancel(&id) {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound(format!("no step job '{id}'")))
    }
}

pub(super) async fn events(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<impl Responder, ApiError> {
    let job = state
        .steps
        .get(&id)
        .ok_or_else(|| ApiError::NotFound(format!("no step job '{id}'")))?;
    Ok(sse::Sse::from_stream(step_event_stream(job)).with_keep_alive(Duration::from_secs(15)))
}

/// Every event of `job` from the first, then live ones, ending after `done`.
fn step_event_stream(
    job: Arc<StepJobHandle>,
) -> impl futures_util::Stream<Item = Result<sse::Event, std::convert::Infallible>> {
    let receiver = job.subscribe();
    let state = (job, receiver, 0usize, VecDeque::<StepEvent>::new(), false);
    futures_util::stream::unfold(
        state,
        |(job, mut receiver, mut next, mut pending, ended)| async move {
            loop {
                if let Some(event) = pending.pop_front() {
                    let is_done = matches!(event, StepEvent::Done(_));
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
