//! `POST /api/analyze?hardware_key=KEY&run_all_precisions=BOOL&mode=MODE&measure=BOOL`: predictions (in
//! `mode`, default reference) and measurements of one shape. `measure=false` answers the predictions alone,
//! on the executor (they are microseconds of arithmetic), and never takes the device.

use actix_web::web;
use roofline_core::find_hardware_in;
use roofline_core::wire::{AnalyzeQuery, AnalyzeRequest, AnalyzeResponse, RooflinePoint};

use super::cancellable;
use crate::http::error::ApiError;
use crate::http::state::AppState;
use crate::use_cases::analyze::{Analysis, AnalyzePlan, analyze as measure_and_predict, predict_only};

pub(super) async fn analyze(
    state: web::Data<AppState>,
    query: web::Query<AnalyzeQuery>,
    body: web::Json<AnalyzeRequest>,
) -> Result<web::Json<AnalyzeResponse>, ApiError> {
    let hardware = find_hardware_in(&query.hardware_key, query.mode)?;
    let plan = AnalyzePlan::new(hardware, body.into_inner(), query.run_all_precisions)?;
    if !query.measure {
        return Ok(web::Json(wire(&predict_only(&plan))));
    }
    // The fit checks may call the driver or read /proc: off the executor, like the measurement. A client that
    // disconnects cancels the measurement.
    let max_point = state.config.max_point;
    let response = cancellable(max_point, move |limits| {
        Ok(measure_and_predict(
            &state.device,
            state.store.as_deref(),
            &plan,
            limits,
        )?)
    })
    .await?;
    Ok(web::Json(wire(&response)))
}

/// The answer's wire form.
fn wire(analysis: &Analysis) -> AnalyzeResponse {
    analysis.map(RooflinePoint::from, RooflinePoint::from)
}
