//! `GET /api/results?device=&precision=&shape=&since=&limit=`: stored measurements, newest first.
//! `DELETE /api/results?device=&precision=&since=&all=`: deletes the matching ones (`all=true` is needed
//! to delete without a filter).

use actix_web::web;
use roofline_core::wire::{DeleteResultsQuery, DeletedResults, ErrorCode, ResultsQuery, StoredResult};

use super::blocking;
use crate::http::error::ApiError;
use crate::http::state::AppState;

pub(super) async fn results(
    state: web::Data<AppState>,
    query: web::Query<ResultsQuery>,
) -> Result<web::Json<Vec<StoredResult>>, ApiError> {
    let query = query.into_inner();
    if query.limit.is_some_and(|l| l == 0 || l > 1000) {
        return Err(ApiError::BadRequest("limit must be 1 to 1000".into()));
    }
    if query.since.is_some_and(|s| !s.is_finite()) {
        return Err(ApiError::BadRequest(
            "since must be a finite Unix time in seconds".into(),
        ));
    }
    let store = store_of(&state)?;
    let rows = blocking(move || {
        store
            .results(&query)
            .map_err(|e| ApiError::Internal(e.to_string()))
    })
    .await?;
    Ok(web::Json(rows))
}

pub(super) async fn delete(
    state: web::Data<AppState>,
    query: web::Query<DeleteResultsQuery>,
) -> Result<web::Json<DeletedResults>, ApiError> {
    let query = query.into_inner();
    if query.since.is_some_and(|s| !s.is_finite()) {
        return Err(ApiError::BadRequest(
            "since must be a finite Unix time in seconds".into(),
        ));
    }
    if query.device.as_deref().is_some_and(str::is_empty) {
        return Err(ApiError::BadRequest("device must not be empty".into()));
    }
    let filtered = query.device.is_some() || query.precision.is_some() || query.since.is_some();
    if !filtered && !query.all {
        return Err(ApiError::BadRequest(
            "give a filter (device, precision, since) or all=true to delete every stored result".into(),
        ));
    }
    let store = store_of(&state)?;
    let deleted = blocking(move || {
        store
            .delete_results(&query)
            .map_err(|e| ApiError::Internal(e.to_string()))
    })
    .await?;
    Ok(web::Json(DeletedResults { deleted }))
}

fn store_of(state: &AppState) -> Result<std::sync::Arc<crate::store::Store>, ApiError> {
    state.store.clone().ok_or_else(|| ApiError::Unavailable {
        code: ErrorCode::NoStore,
        message: "this server runs without a result store".into(),
    })
}
