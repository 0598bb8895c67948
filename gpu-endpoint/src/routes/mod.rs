//! Thin HTTP handlers: extract, validate through `roofline-core`, run blocking work in `web::block`, answer
//! with a wire type. Route table (all under `/api`): see gpu-endpoint/README.md.

mod analyze;
mod benchmarks;
mod calibrate;
mod device;
mod health;
mod nvml;
mod results;
mod steps;

use actix_web::{HttpRequest, HttpResponse, web};
use roofline_core::wire::ErrorCode;

use crate::error::ApiError;

/// Registers every `/api` route (relative to the scope).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/health").route(web::get().to(health::health)))
        .service(resource("/device").route(web::get().to(device::device)))
        .service(resource("/nvml/status").route(web::get().to(nvml::status)))
        .service(resource("/nvml/stream").route(web::get().to(nvml::stream)))
        .service(resource("/analyze").route(web::post().to(analyze::analyze)))
        .service(resource("/benchmarks").route(web::post().to(benchmarks::submit)))
        .service(resource("/benchmarks/{id}").route(web::delete().to(benchmarks::cancel)))
        .service(resource("/benchmarks/{id}/events").route(web::get().to(benchmarks::events)))
        .service(resource("/calibrate").route(web::post().to(calibrate::calibrate)))
        .service(resource("/steps").route(web::post().to(steps::submit)))
        .service(resource("/steps/{id}").route(web::delete().to(steps::cancel)))
        .service(resource("/steps/{id}/events").route(web::get().to(steps::events)))
        .service(
            resource("/results")
                .route(web::get().to(results::results))
                .route(web::delete().to(results::delete)),
        );
}

fn resource(path: &str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(method_not_allowed))
}

async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    let body = roofline_core::wire::ErrorBody {
        code: ErrorCode::MethodNotAllowed,
        message: format!("{} is not allowed on {}", req.method(), req.path()),
    };
    HttpResponse::MethodNotAllowed().json(body)
}

/// Cancels its limits when dropped. A handler holds one while it awaits a measurement: actix drops the
/// handler's future when the client disconnects, so the measurement stops within one sample and frees the
/// device instead of running on for nobody.
struct CancelOnDrop(Option<crate::protocol::PointLimits>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(limits) = self.0.take() {
            limits.cancel();
        }
    }
}

/// Runs measuring work off the executor under fresh limits (the server's per-point cap), cancelled when the
/// returned future is dropped (the client went away).
async fn measuring<T: Send + 'static>(
    max_point: std::time::Duration,
    work: impl FnOnce(&crate::protocol::PointLimits) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let limits = crate::protocol::PointLimits::new(max_point);
    let mut cancel_on_drop = CancelOnDrop(Some(limits.clone()));
    let result = blocking(move || work(&limits)).await;
    // Finished: nothing is left to cancel.
    cancel_on_drop.0 = None;
    result
}

/// Runs blocking work off the executor, mapping a lost worker to a 500.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    web::block(work).await?
}

/// Reads a raw body up to [`crate::app::MAX_BODY_BYTES`] (413 `too_large` beyond, 400 on a broken stream).
async fn read_body(mut payload: web::Payload) -> Result<web::Bytes, ApiError> {
    use futures_util::StreamExt as _;
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| match &e {
            actix_web::error::PayloadError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                ApiError::RequestTimeout(e.to_string())
            }
            _ => ApiError::BadRequest(format!("could not read the body: {e}")),
        })?;
        if body.len() + chunk.len() > crate::app::MAX_BODY_BYTES {
            return Err(ApiError::TooLarge(format!(
                "request body too large (limit {} bytes)",
                crate::app::MAX_BODY_BYTES
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
