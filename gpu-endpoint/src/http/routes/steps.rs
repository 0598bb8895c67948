//! Model-step jobs: `POST /api/steps` (202 + job id, queue position and operator count),
//! `GET /api/steps/{id}/events` (SSE: one `operator` event per operator row, then `done`; replayed from the
//! start for late subscribers) and `DELETE /api/steps/{id}` (cancel at its next check).

use actix_web::{HttpResponse, Responder, web};
use roofline_core::wire::{StepJob, StepRequest};

use super::blocking;
use crate::http::error::ApiError;
use crate::http::state::AppState;
use crate::jobs::SubmitError;
use crate::use_cases::step::{plan, predicted_device, requested_hardware};

pub(super) async fn submit(
    state: web::Data<AppState>,
    body: web::Json<StepRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.into_inner();
    // The queue first: a full queue answers 503 before any work that grows with the request.
    let place = state
        .steps
        .reserve()
        .map_err(|SubmitError::QueueFull| ApiError::Busy("the step job queue is full; retry later".into()))?;
    // The fallback device (the driver, the store), the bounds, the analysis and the launch order, built once
    // (`plan`), are blocking work: off the executor.
    let checked = state.clone();
    let plan = blocking(move || {
        let hardware = predicted_device(
            requested_hardware(&request)?,
            &checked.device,
            checked.store.as_deref(),
            request.mode,
        )?;
        Ok(plan(request, hardware)?)
    })
    .await?;
    let (operators, distinct) = (plan.analysis.ops.len(), plan.distinct());
    let hardware_key = plan.hardware.key.clone();
    let (job, position) = place.submit(plan);
    Ok(HttpResponse::Accepted().json(StepJob {
        events_url: format!("/api/steps/{}/events", job.id),
        id: job.id.clone(),
        position,
        operators: u32::try_from(operators).unwrap_or(u32::MAX),
        distinct: u32::try_from(distinct).unwrap_or(u32::MAX),
        hardware_key,
    }))
}

pub(super) async fn cancel(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    super::cancel_job(&state.steps, &id)
}

pub(super) async fn events(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<impl Responder, ApiError> {
    super::job_events(&state.steps, &id)
}
