//! Model-step jobs: `POST /api/steps` (202 + job id, queue position and operator count),
//! `GET /api/steps/{id}/events` (SSE: one `operator` event per operator row, then `done`; replayed from the
//! start for late subscribers) and `DELETE /api/steps/{id}` (cancel within one sample).

use actix_web::{HttpResponse, Responder, web};
use roofline_core::wire::{StepJob, StepRequest};
use roofline_core::{HardwareSpec, Mode, find_hardware_in};

use super::blocking;
use crate::app::AppState;
use crate::error::ApiError;
use crate::jobs::SubmitError;
use crate::step::{plan, requested_hardware};

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
    let (job, position) = state
        .steps
        .submit(plan)
        .map_err(|SubmitError::QueueFull| ApiError::Busy)?;
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
    super::cancel_job(&state.steps, &id)
}

pub(super) async fn events(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<impl Responder, ApiError> {
    super::job_events(&state.steps, &id)
}
