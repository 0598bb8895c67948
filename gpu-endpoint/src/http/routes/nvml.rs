//! `GET /api/nvml/status` (one sample) and `GET /api/nvml/stream` (SSE, one `status` event per interval);
//! both 503 `no_nvml` without NVML.

use std::time::Duration;

use actix_web::{Responder, web};
use actix_web_lab::sse;
use futures_util::StreamExt;
use roofline_core::wire::{ErrorCode, NvmlStatus};
use serde::Deserialize;

use super::blocking;
use crate::http::error::ApiError;
use crate::http::state::AppState;

pub(super) async fn status(state: web::Data<AppState>) -> Result<web::Json<NvmlStatus>, ApiError> {
    let telemetry = state.telemetry()?;
    let status = blocking(move || {
        telemetry.status().map_err(|e| ApiError::Unavailable {
            code: ErrorCode::NoNvml,
            message: e.to_string(),
        })
    })
    .await?;
    Ok(web::Json(status))
}

/// `?interval_ms=` (100..=60000, default 500).
#[derive(Debug, Deserialize)]
pub(super) struct StreamQuery {
    interval_ms: Option<u64>,
}

pub(super) async fn stream(
    state: web::Data<AppState>,
    query: web::Query<StreamQuery>,
) -> Result<impl Responder, ApiError> {
    let telemetry = state.telemetry()?;
    let interval = match query.interval_ms {
        None => state.config.nvml_interval,
        Some(ms @ 100..=60_000) => Duration::from_millis(ms),
        Some(ms) => {
            return Err(ApiError::BadRequest(format!(
                "interval_ms must be 100 to 60000, got {ms}"
            )));
        }
    };
    let ticks = tokio_stream_interval(interval);
    let events = ticks.then(move |()| {
        let telemetry = telemetry.clone();
        async move {
            let sample = web::block(move || telemetry.status()).await;
            let event = match sample {
                Ok(Ok(status)) => sse::Data::new_json(&status).map(|d| d.event("status")),
                Ok(Err(e)) => sse::Data::new_json(roofline_core::wire::ErrorBody {
                    code: ErrorCode::NoNvml,
                    message: e.to_string(),
                })
                .map(|d| d.event("error")),
                Err(e) => sse::Data::new_json(roofline_core::wire::ErrorBody {
                    code: ErrorCode::Internal,
                    message: e.to_string(),
                })
                .map(|d| d.event("error")),
            };
            Ok::<_, std::convert::Infallible>(event.map_or_else(
                |_| sse::Event::Comment("serialization failed".into()),
                sse::Event::from,
            ))
        }
    });
    Ok(sse::Sse::from_stream(events).with_keep_alive(Duration::from_secs(15)))
}

fn tokio_stream_interval(period: Duration) -> impl futures_util::Stream<Item = ()> {
    futures_util::stream::unfold(tokio::time::interval(period), |mut interval| async move {
        interval.tick().await;
        Some(((), interval))
    })
}
