//! The application factory: [`configure`] registers the shared state, the extractor error handlers, every
//! `/api` route behind the middleware, and the static web page. `main` and every test use it, so tests
//! exercise the real app.

use actix_web::{HttpRequest, HttpResponse, web};
use actix_web_httpauth::middleware::HttpAuthentication;

use crate::http::error::ApiError;
use crate::http::middleware::{
    MAX_BODY_BYTES, body_deadline, cors, json_error, json_errors, path_error, query_error, refuse_cross_site,
    refuse_encoded_bodies, require_token,
};
use crate::http::routes;
use crate::http::state::AppState;

/// Registers the state, extractor error handlers, the versioned `/api/v1` scope with the seed's `/api` routes
/// kept as aliases, and the static page.
pub fn configure(state: web::Data<AppState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg: &mut web::ServiceConfig| {
        let web_dir = state.config.web_dir.clone();
        let origins = state.config.cors_origins.clone();
        cfg.app_data(state)
            .app_data(
                web::JsonConfig::default()
                    .limit(MAX_BODY_BYTES)
                    .error_handler(json_error),
            )
            .app_data(web::QueryConfig::default().error_handler(query_error))
            .app_data(web::PathConfig::default().error_handler(path_error))
            .app_data(web::PayloadConfig::default().limit(MAX_BODY_BYTES));
        // `/api/v1` first: the `/api` scope would otherwise take its requests as unknown routes.
        for prefix in ["/api/v1", "/api"] {
            cfg.service(
                web::scope(prefix)
                    .configure(routes::configure)
                    .default_service(web::to(api_not_found))
                    .wrap(HttpAuthentication::with_fn(require_token))
                    .wrap(cors(&origins))
                    .wrap(actix_web::middleware::from_fn(body_deadline))
                    .wrap(actix_web::middleware::from_fn(refuse_encoded_bodies))
                    .wrap(actix_web::middleware::from_fn(refuse_cross_site))
                    .wrap(actix_web::middleware::from_fn(json_errors)),
            );
        }
        static_files(cfg, &web_dir);
    }
}

async fn api_not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(format!(
        "no API route {} {}",
        req.method(),
        req.path()
    )))
}

/// Serves `web_dir` at `/` with an `index.html` fallback for client-side routes, or a message page when the
/// page is not built.
fn static_files(cfg: &mut web::ServiceConfig, web_dir: &std::path::Path) {
    let index = web_dir.join("index.html");
    if index.is_file() {
        let index_for_fallback = index.clone();
        // The page's assets go out compressed (brotli, zstd or gzip, as the browser accepts: the 1.1 MB .wasm
        // is about a quarter of that over the wire). Only here: the API's SSE streams stay uncompressed so
        // every event is flushed at once, and request bodies are never decompressed (`refuse_encoded_bodies`).
        cfg.service(
            web::scope("")
                .wrap(actix_web::middleware::Compress::default())
                .service(
                    actix_files::Files::new("/", web_dir)
                        .index_file("index.html")
                        .default_handler(web::to(move |req: HttpRequest| {
                            let index = index_for_fallback.clone();
                            async move {
                                match actix_files::NamedFile::open_async(&index).await {
                                    Ok(file) => file.into_response(&req),
                                    Err(e) => actix_web::ResponseError::error_response(&ApiError::Internal(
                                        format!("cannot read {}: {e}", index.display()),
                                    )),
                                }
                            }
                        })),
                ),
        );
    } else {
        let message = format!(
            "<!doctype html><meta charset=utf-8><title>roofline</title><h1>roofline endpoint</h1>\
             <p>The web page is not built: no <code>{}</code>. Build it with <code>trunk build --release</code> \
             (or pass <code>--web-dir</code>). The API is up: <a href=\"/api/health\">/api/health</a>.</p>",
            index.display()
        );
        cfg.default_service(web::to(move || {
            let message = message.clone();
            async move {
                HttpResponse::NotFound()
                    .content_type("text/html; charset=utf-8")
                    .body(message)
            }
        }));
    }
}
