//! `GET /api/device`: the device the backend measures on, with the catalog key matched from its name.

use actix_web::web;
use roofline_core::wire::DeviceInfo;

use super::blocking;
use crate::http::error::ApiError;
use crate::http::state::AppState;

pub(super) async fn device(state: web::Data<AppState>) -> Result<web::Json<DeviceInfo>, ApiError> {
    let info = blocking(move || Ok(state.device.backend().device_info())).await?;
    Ok(web::Json(info))
}
