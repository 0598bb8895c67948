//! The application factory: [`configure`] registers the shared state, the extractor error handlers, every
//! `/api` route behind the middleware, and the static web page. `main` and every test use it, so tests
//! exercise the real app.

use std::path::{Path, PathBuf};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, ContentEncoding, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_web_httpauth::middleware::HttpAuthentication;

use crate::assets::{self, Encoding};
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

/// The file directly in `web_dir` that `path` names (`/` is `index.html`), when it is a plain name (the
/// page's files are one flat directory) and exists.
fn asset_file(web_dir: &Path, path: &str) -> Option<PathBuf> {
    let name = match path.trim_start_matches('/') {
        "" => "index.html",
        name => name,
    };
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !name.starts_with('.');
    let file = web_dir.join(name);
    (plain && file.is_file()).then_some(file)
}

/// Serves a page file as its precompressed sibling when the client accepts one (`Content-Encoding` set, so
/// `Compress` leaves it alone; `Vary: Accept-Encoding`), else passes the request on; either way with the
/// file's `Cache-Control` ([`assets::cache_control`]).
async fn precompressed(
    web_dir: PathBuf,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(file) = asset_file(&web_dir, req.path()) else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let cache = HeaderValue::from_static(assets::cache_control(&name));
    let accept = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(encoding) = Encoding::choose(&file, accept) else {
        let mut res = next.call(req).await?.map_into_boxed_body();
        res.headers_mut().insert(header::CACHE_CONTROL, cache);
        return Ok(res);
    };
    let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let sibling = actix_files::NamedFile::open_async(encoding.sibling(&file))
        .await?
        .set_content_type(actix_files::file_extension_to_mime(extension))
        .set_content_encoding(match encoding {
            Encoding::Brotli => ContentEncoding::Brotli,
            Encoding::Gzip => ContentEncoding::Gzip,
        })
        .disable_content_disposition();
    let (http_req, _) = req.into_parts();
    let mut res = sibling.into_response(&http_req);
    res.headers_mut().insert(header::CACHE_CONTROL, cache);
    res.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    Ok(ServiceResponse::new(http_req, res))
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
        // The page's assets go out as their precompressed siblings (written at build time,
        // `crate::assets`), with a year of caching for trunk's hashed names. A file without a sibling (a
        // build that skipped the hook, the index fallback of a client route) is compressed per request. Only
        // here: the API's SSE streams stay uncompressed so every event is flushed at once, and request
        // bodies are never decompressed (`refuse_encoded_bodies`).
        let assets_dir = web_dir.to_owned();
        cfg.service(
            web::scope("")
                .wrap(actix_web::middleware::Compress::default())
                .wrap(actix_web::middleware::from_fn(move |req, next| {
                    precompressed(assets_dir.clone(), req, next)
                }))
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
