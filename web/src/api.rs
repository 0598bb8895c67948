//! Calls to the optional GPU endpoint (same origin). The page works without it.

use roofline_core::wire::Health;

/// `GET /api/health`.
///
/// # Errors
/// A network error, a non-2xx status or an unreadable body, as text.
pub async fn health() -> Result<Health, String> {
    let response = gloo_net::http::Request::get("/api/health")
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    response.json::<Health>().await.map_err(|e| e.to_string())
}
