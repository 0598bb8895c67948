//! `POST /api/calibrate`: measured bandwidth and per-precision peaks → a `HardwareSpec` with
//! `provenance: measured` (stored). 503 busy while a job holds the device.

use actix_web::web;
use roofline_core::find_hardware;
use roofline_core::wire::{CalibrateRequest, CalibrationResult};

use super::cancellable;
use crate::http::error::ApiError;
use crate::http::state::AppState;
use crate::use_cases::calibrate::{CalibrationRequest, calibrate as measure};

pub(super) async fn calibrate(
    state: web::Data<AppState>,
    payload: web::Payload,
) -> Result<web::Json<CalibrationResult>, ApiError> {
    let body = super::read_body(payload).await?;
    // An empty body means "all defaults"; anything else must be a valid CalibrateRequest object. serde would
    // also read a struct from a JSON array (`[]` = all defaults), so the shape is checked first.
    let request: CalibrateRequest = if body.iter().all(u8::is_ascii_whitespace) {
        CalibrateRequest::default()
    } else {
        let value: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?;
        if !value.is_object() {
            return Err(ApiError::BadRequest(
                "the body must be a JSON object like {\"precisions\": [\"FP32\"]}, or empty for the defaults"
                    .into(),
            ));
        }
        serde_json::from_value(value).map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?
    };
    let base = request.hardware_key.as_deref().map(find_hardware).transpose()?;
    let request = CalibrationRequest::new(base, request.precisions)?;
    let max_point = state.config.max_point;
    let result = cancellable(max_point, move |limits| {
        let guard = state.device.try_acquire()?;
        Ok(measure(&guard, state.store.as_deref(), &request, limits)?)
    })
    .await?;
    Ok(web::Json(result))
}
