//! `GET /api/results?device=&precision=&shape=&since=&limit=`: stored measurements, newest first.

use actix_web::web;
use roofline_core::Precision;
use roofline_core::wire::{ResultsQuery, StoredResult};

use super::blocking;
use crate::app::AppState;
use crate::error::ApiError;

pub(super) async fn results(
    state: web::Data<AppState>,
    query: web::Query<ResultsQuery>,
) -> Result<web::Json<Vec<StoredResult>>, ApiError> {
    let mut query = query.into_inner();
    if let Some(p) = &query.precision {
        let parsed: Precision = p.parse()?;
        query.precision = Some(parsed.name().to_owned());
    }
    if query.limit.is_some_and(|l| l == 0 || l > 1000) {
        return Err(ApiError::BadRequest("limit must be 1 to 1000".into()));
    }
    if query.since.is_some_and(|s| !s.is_finite()) {
        return Err(ApiError::BadRequest(
            "since must be a finite Unix time in seconds".into(),
        ));
    }
    let store = state.store.clone().ok_or_else(|| ApiError::Unavailable {
        code: "no_store",
        message: "this server runs without a result store".into(),
    })?;
    let rows = blocking(move || {
        store
            .results(&query)
            .map_err(|e| ApiError::Internal(e.to_string()))
    })
    .await?;
    Ok(web::Json(rows))
}
