//! Calls to the optional GPU endpoint, one async fn per route. `base` is the endpoint's origin (empty = the
//! page's own origin). The page works without the endpoint: every error is a value, never a panic.

use std::fmt;

use gloo_net::http::{Request, Response};
use roofline_core::wire::{
    AnalyzeRequest, AnalyzeResponse, BenchmarkJob, BenchmarkRequest, CalibrateRequest, CalibrationResult,
    DeletedResults, DeviceInfo, ErrorBody, ErrorCode, Health, MAX_RESULTS_LIMIT, NvmlStatus, ResultsPage,
    StepJob, StepRequest,
};
use serde::de::DeserializeOwned;

/// `base` + `path` without a doubled slash; an empty base keeps the path relative to the page's origin.
#[must_use]
pub fn join(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// Why a call produced no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// Nothing answered (connection refused, DNS, CORS, an unreadable body).
    Unreachable(String),
    /// The endpoint answered with an error status and its `{code, message}` body.
    Status {
        /// HTTP status.
        status: u16,
        /// The decoded body (code `http_<status>` when the body was not the endpoint's JSON).
        body: ErrorBody,
    },
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Unreachable(e) => write!(f, "endpoint unreachable: {e}"),
            ApiError::Status { status, body } => write!(f, "{} (HTTP {status}): {}", body.code, body.message),
        }
    }
}

/// Decodes a 2xx body as `T`, or the endpoint's error body.
async fn decode<T: DeserializeOwned>(response: Result<Response, gloo_net::Error>) -> Result<T, ApiError> {
    let response = response.map_err(|e| ApiError::Unreachable(e.to_string()))?;
    if response.ok() {
        return response
            .json::<T>()
            .await
            .map_err(|e| ApiError::Unreachable(e.to_string()));
    }
    let status = response.status();
    let body = response.json::<ErrorBody>().await.unwrap_or_else(|_| ErrorBody {
        code: ErrorCode::Unknown,
        message: response.status_text(),
    });
    Err(ApiError::Status { status, body })
}

/// `GET base + path`.
async fn get<T: DeserializeOwned>(base: &str, path: &str) -> Result<T, ApiError> {
    decode(Request::get(&join(base, path)).send().await).await
}

/// `POST base + path` with a JSON body.
async fn post<B: serde::Serialize, T: DeserializeOwned>(
    base: &str,
    path: &str,
    body: &B,
) -> Result<T, ApiError> {
    let request = Request::post(&join(base, path))
        .json(body)
        .map_err(|e| ApiError::Unreachable(e.to_string()))?;
    decode(request.send().await).await
}

/// `GET /api/health`.
///
/// # Errors
/// [`ApiError`].
pub async fn health(base: &str) -> Result<Health, ApiError> {
    get(base, "/api/health").await
}

/// `GET /api/device`.
///
/// # Errors
/// [`ApiError`].
pub async fn device(base: &str) -> Result<DeviceInfo, ApiError> {
    get(base, "/api/device").await
}

/// `GET /api/nvml/status` (503 `no_nvml` on an endpoint without NVML).
///
/// # Errors
/// [`ApiError`].
pub async fn nvml_status(base: &str) -> Result<NvmlStatus, ApiError> {
    get(base, "/api/nvml/status").await
}

/// `POST /api/analyze`: predictions and measurements of one shape. `hardware_key` must be a catalog key.
///
/// # Errors
/// [`ApiError`].
pub async fn analyze(
    base: &str,
    hardware_key: &str,
    request: &AnalyzeRequest,
) -> Result<AnalyzeResponse, ApiError> {
    let path = format!("/api/analyze?hardware_key={hardware_key}");
    post(base, &path, request).await
}

/// `POST /api/benchmarks`: queues a job.
///
/// # Errors
/// [`ApiError`].
pub async fn submit_benchmark(base: &str, request: &BenchmarkRequest) -> Result<BenchmarkJob, ApiError> {
    post(base, "/api/benchmarks", request).await
}

/// `DELETE /api/benchmarks/{id}`: cancels a queued or running job.
///
/// # Errors
/// [`ApiError`].
pub async fn cancel_benchmark(base: &str, id: &str) -> Result<(), ApiError> {
    delete(base, &format!("/api/benchmarks/{id}")).await
}

/// `POST /api/v1/steps`: queues a model-step measurement.
///
/// # Errors
/// [`ApiError`].
pub async fn submit_step(base: &str, request: &StepRequest) -> Result<StepJob, ApiError> {
    post(base, "/api/v1/steps", request).await
}

/// `DELETE /api/v1/steps/{id}`: cancels a queued or running step measurement.
///
/// # Errors
/// [`ApiError`].
pub async fn cancel_step(base: &str, id: &str) -> Result<(), ApiError> {
    delete(base, &format!("/api/v1/steps/{id}")).await
}

/// `DELETE base + path`, answered with an empty 2xx body.
async fn delete(base: &str, path: &str) -> Result<(), ApiError> {
    let response = Request::delete(&join(base, path)).send().await;
    let response = response.map_err(|e| ApiError::Unreachable(e.to_string()))?;
    if response.ok() {
        Ok(())
    } else {
        decode::<()>(Ok(response)).await
    }
}

/// `POST /api/calibrate`.
///
/// # Errors
/// [`ApiError`].
pub async fn calibrate(base: &str, request: &CalibrateRequest) -> Result<CalibrationResult, ApiError> {
    post(base, "/api/calibrate", request).await
}

/// `GET /api/results?limit=1000&cursor=`: one page of the endpoint's stored measurements, newest first, from
/// `cursor` (the previous page's `next_cursor`) on.
///
/// # Errors
/// [`ApiError`].
pub async fn results_page(base: &str, cursor: Option<&str>) -> Result<ResultsPage, ApiError> {
    let limit = MAX_RESULTS_LIMIT.to_string();
    let mut query = vec![("limit", limit.as_str())];
    query.extend(cursor.map(|c| ("cursor", c)));
    decode(
        Request::get(&join(base, "/api/results"))
            .query(query)
            .send()
            .await,
    )
    .await
}

/// `DELETE /api/v1/results?all=true`: deletes every measurement stored on the endpoint.
///
/// # Errors
/// [`ApiError`] (an endpoint without the route answers 404 or 405).
pub async fn delete_all_results(base: &str) -> Result<DeletedResults, ApiError> {
    decode(
        Request::delete(&join(base, "/api/v1/results?all=true"))
            .send()
            .await,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_by_default_and_no_double_slash() {
        assert_eq!(join("", "/api/health"), "/api/health");
        assert_eq!(
            join("http://127.0.0.1:8000/", "/api/health"),
            "http://127.0.0.1:8000/api/health"
        );
    }
}
