//! Benchmark jobs: `POST /api/benchmarks` (202 + job id and queue position), `GET /api/benchmarks/{id}/events`
//! (SSE: `point`, `failed`, then `done`; replayed from the start for late subscribers) and
//! `DELETE /api/benchmarks/{id}` (cancel between points).

use actix_web::{HttpResponse, Responder, web};
use roofline_core::find_hardware_in;
use roofline_core::wire::{BenchmarkJob, BenchmarkRequest};

use super::blocking;
use crate::app::AppState;
use crate::error::ApiError;
use crate::jobs::{BenchmarkPlan, SubmitError, validate_request};

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
        .submit(BenchmarkPlan { request, hardware })
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
    super::cancel_job(&state.jobs, &id)
}

pub(super) async fn events(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<impl Responder, ApiError> {
    super::job_events(&state.jobs, &id)
}
