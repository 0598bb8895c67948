//! `GET /api/results?device=&precision=&shape=&since=&limit=&cursor=`: one page of stored measurements,
//! newest first, with the cursor of the next page and how many undecodable rows were skipped; it stops at the
//! server's listing time limit (503 `time_limit`) or when its client leaves.
//! `DELETE /api/results?device=&precision=&since=&all=`: deletes the matching ones (`all=true` is needed
//! to delete without a filter).

use actix_web::web;
use roofline_core::wire::{
    DeleteResultsQuery, DeletedResults, ErrorCode, MAX_RESULTS_LIMIT, ResultsPage, ResultsQuery,
    RooflinePoint,
};

use super::{blocking, cancellable};
use crate::http::error::ApiError;
use crate::http::state::AppState;
use crate::protocol::Interrupted;
use crate::store::StoreError;

pub(super) async fn results(
    state: web::Data<AppState>,
    query: web::Query<ResultsQuery>,
) -> Result<web::Json<ResultsPage>, ApiError> {
    let query = query.into_inner();
    if query.limit.is_some_and(|l| l == 0 || l > MAX_RESULTS_LIMIT) {
        return Err(ApiError::BadRequest(format!(
            "limit must be 1 to {MAX_RESULTS_LIMIT}"
        )));
    }
    if query.since.is_some_and(|s| !s.is_finite()) {
        return Err(ApiError::BadRequest(
            "since must be a finite Unix time in seconds".into(),
        ));
    }
    let store = store_of(&state)?;
    let page = cancellable(state.config.max_listing, move |limits| {
        limits.run(|| store.results(&query)).map_err(|e| match e {
            StoreError::BadCursor(_) => ApiError::BadRequest(e.to_string()),
            StoreError::Interrupted(Interrupted::TimeLimit(limit)) => ApiError::Unavailable {
                code: ErrorCode::TimeLimit,
                message: format!(
                    "the listing ran longer than its {:.3} s time limit and was stopped",
                    limit.as_secs_f64()
                ),
            },
            StoreError::Interrupted(Interrupted::Cancelled) => ApiError::Unavailable {
                code: ErrorCode::Cancelled,
                message: "the listing was cancelled".into(),
            },
            other => ApiError::Internal(other.to_string()),
        })
    })
    .await?;
    if page.skipped > 0 {
        tracing::warn!(
            skipped = page.skipped,
            "a results page left out stored rows that do not decode"
        );
    }
    Ok(web::Json(page.map(RooflinePoint::from, RooflinePoint::from)))
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
