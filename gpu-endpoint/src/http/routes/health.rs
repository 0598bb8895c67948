//! `GET /api/health`: always 200 while the server answers, with the active backend and why.

use actix_web::web;
use roofline_core::wire::Health;

use crate::http::state::AppState;

pub(super) async fn health(state: web::Data<AppState>) -> web::Json<Health> {
    web::Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        backend: state.device.backend().kind(),
        backend_reason: state.backend_reason.clone(),
    })
}
