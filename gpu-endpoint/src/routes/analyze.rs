//! `POST /api/analyze?hardware_key=KEY&run_all_precisions=BOOL&mode=MODE&measure=BOOL`: predictions (in
//! `mode`, default reference) and measurements of one shape. `measure=false` answers the predictions alone,
//! on the executor (they are microseconds of arithmetic), and never takes the device.

use actix_web::web;
use roofline_core::find_hardware_in;
use roofline_core::wire::{AnalyzeQuery, AnalyzeRequest, AnalyzeResponse};

use super::measuring;
use crate::analysis;
use crate::app::AppState;
use crate::error::ApiError;

pub(super) async fn analyze(
    state: web::Data<AppState>,
    query: web::Query<AnalyzeQuery>,
    body: web::Json<AnalyzeRequest>,
) -> Result<web::Json<AnalyzeResponse>, ApiError> {
    let hardware = find_hardware_in(&query.hardware_key, query.mode)?;
    let request = body.into_inner();
    let precisions = analysis::requested_precisions(&request, query.run_all_precisions)?;
    if !query.measure {
        return Ok(web::Json(analysis::predict_only(
            hardware,
            &request,
            &precisions,
        )?));
    }
    // The fit check may call the driver or read /proc: off the executor, like the measurement. A client that
    // disconnects cancels the measurement.
    let max_point = state.config.max_point;
    let response = measuring(max_point, move |limits| {
        analysis::validate(&state.device, &request, &precisions)?;
        analysis::analyze(
            &state.device,
            state.store.as_deref(),
            hardware,
            &request,
            &precisions,
            limits,
        )
    })
    .await?;
    Ok(web::Json(response))
}
