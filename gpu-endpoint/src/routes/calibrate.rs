//! `POST /api/calibrate`: measured bandwidth and per-precision peaks → a `HardwareSpec` with
//! `provenance: measured` (stored). 503 busy while a job holds the device.

use actix_web::web;
use roofline_core::find_hardware;
use roofline_core::wire::{CalibrateRequest, CalibrationResult};

use super::measuring;
use crate::app::AppState;
use crate::error::ApiError;

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
    if request
        .precisions
        .as_ref()
        .is_some_and(|p| p.is_empty() || p.len() > 16)
    {
        return Err(ApiError::BadRequest(
            "precisions must list 1 to 16 precisions".into(),
        ));
    }
    let max_point = state.config.max_point;
    let result = measuring(max_point, move |limits| {
        let info = state.device.backend().device_info();
        let base = base.or_else(|| info.matched_key.as_deref().and_then(|k| find_hardware(k).ok()));
        let precisions = request
            .precisions
            .unwrap_or_else(|| state.device.backend().measurable());
        let guard = state.device.try_acquire()?;
        let result = crate::calibrate::calibrate(
            &guard,
            state.device.backend().kind(),
            &info.name,
            &info.arch,
            info.memory_total_mb * 1e6,
            base,
            &precisions,
            limits,
        )?;
        if let Some(store) = &state.store
            && let Err(e) = store.insert_calibration(&info.name, &result)
        {
            tracing::error!(error = %e, "could not store the calibration");
        }
        Ok(result)
    })
    .await?;
    Ok(web::Json(result))
}
