//! Benchmark jobs: `POST /api/benchmarks` (202 + job id and queue position), `GET /api/benchmarks/{id}/events`
//! (SSE: `point`, `failed`, then `done`; replayed from the start for late subscribers) and
//! `DELETE /api/benchmarks/{id}` (cancel between points).

use actix_web::{HttpResponse, Responder, web};
use roofline_core::find_hardware_in;
use roofline_core::wire::{BenchmarkJob, BenchmarkRequest};

use super::blocking;
use crate::http::error::ApiError;
use crate::http::state::AppState;
use crate::jobs::SubmitError;
use crate::use_cases::benchmark::BenchmarkPlan;

pub(super) async fn submit(
    state: web::Data<AppState>,
    body: web::Json<BenchmarkRequest>,
) -> Result<HttpResponse, ApiError> {
    // The queue first (503 when full), then counts and bounds (400), then the catalog key of the predictions
    // (404).
    let place = state.jobs.reserve().map_err(|SubmitError::QueueFull| {
        ApiError::Busy("the benchmark job queue is full; retry later".into())
    })?;
    let mut plan = BenchmarkPlan::new(body.into_inner(), None)?;
    plan.hardware = plan
        .request
        .hardware_key
        .as_deref()
        .map(|key| find_hardware_in(key, plan.request.mode).cloned())
        .transpose()?;
    // The fit checks may call the driver or read /proc: off the executor.
    let checked = state.clone();
    let plan = blocking(move || {
        plan.check_fits(&checked.device)?;
        Ok(plan)
    })
    .await?;
    let total = plan.total();
    let (job, position) = place.submit(plan);
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
