//! The application factory: shared state, every route, the JSON error handlers, bearer-token auth, CORS and
//! the static web page. [`configure`] is used by `main` and by the tests, so tests exercise the real app.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix_cors::Cors;
use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::http::{Method, header};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_web_httpauth::extractors::bearer::BearerAuth;
use actix_web_httpauth::middleware::HttpAuthentication;
use roofline_core::wire::ErrorCode;

use crate::backend::{Device, Selected, Telemetry};
use crate::error::ApiError;
use crate::jobs::{BenchmarkJobs, JobRetention};
use crate::routes;
use crate::store::Store;

/// Largest accepted JSON body, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Server configuration that routes need.
#[derive(Debug, Clone, PartialEq)]
pub struct AppConfig {
    /// Bearer token required on every /api route but health, when set.
    pub token: Option<String>,
    /// Allowed CORS origins (besides same-origin requests, which need none). Also the only foreign origins
    /// allowed to make state-changing requests.
    pub cors_origins: Vec<String>,
    /// `Host` names accepted besides the loopback names (the bound address, `--allowed-host`), without port.
    pub allowed_hosts: Vec<String>,
    /// Directory of the built web page.
    pub web_dir: PathBuf,
    /// Default interval of `/api/nvml/stream`.
    pub nvml_interval: Duration,
    /// How many finished benchmark jobs (and bytes of their events) are kept for replay.
    pub job_retention: JobRetention,
    /// How many finished step jobs (and bytes of their events) are kept for replay.
    pub step_retention: JobRetention,
    /// Wall-clock cap of one measured point (`--max-point-seconds`); a point past it is a `time_limit`
    /// failure and the next point runs.
    pub max_point: Duration,
    /// Time a client has to send a whole request body once its head has arrived (408 `request_timeout`
    /// after it, and the connection closes).
    pub body_read_timeout: Duration,
}

/// The default [`AppConfig::body_read_timeout`].
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            token: None,
            cors_origins: default_cors_origins(),
            allowed_hosts: Vec::new(),
            web_dir: PathBuf::from("dist"),
            nvml_interval: Duration::from_millis(500),
            job_retention: JobRetention::default(),
            step_retention: crate::step::STEP_RETENTION,
            max_point: crate::protocol::DEFAULT_MAX_POINT,
            body_read_timeout: BODY_READ_TIMEOUT,
        }
    }
}

/// Trunk's dev server, allowed by default.
#[must_use]
pub fn default_cors_origins() -> Vec<String> {
    vec!["http://127.0.0.1:8080".into(), "http://localhost:8080".into()]
}

/// Everything the handlers share.
pub struct AppState {
    /// The measurement device (backend + lock).
    pub device: Arc<Device>,
    /// Why that backend was chosen.
    pub backend_reason: String,
    /// NVML telemetry, when available.
    pub telemetry: Option<Arc<dyn Telemetry>>,
    /// Why telemetry is missing.
    pub telemetry_reason: String,
    /// Benchmark jobs.
    pub jobs: BenchmarkJobs,
    /// Model-step measurement jobs.
    pub steps: crate::step::StepJobs,
    /// The result store.
    pub store: Option<Arc<Store>>,
    /// Configuration.
    pub config: AppConfig,
}

impl AppState {
    /// Builds the state from a selected backend, an optional store and the configuration.
    #[must_use]
    pub fn new(selected: Selected, store: Option<Arc<Store>>, config: AppConfig) -> AppState {
        let device = Arc::new(Device::new(selected.backend));
        AppState {
            jobs: BenchmarkJobs::new(
                device.clone(),
                store.clone(),
                config.job_retention,
                config.max_point,
            ),
            steps: crate::step::StepJobs::new(
                device.clone(),
                store.clone(),
                config.step_retention,
                config.max_point,
            ),
            device,
            backend_reason: selected.reason,
            telemetry: selected.telemetry,
            telemetry_reason: selected.telemetry_reason,
            store,
            config,
        }
    }

    /// The telemetry source or a 503.
    ///
    /// # Errors
    /// [`ApiError::Unavailable`] with code `no_nvml`.
    pub fn telemetry(&self) -> Result<Arc<dyn Telemetry>, ApiError> {
        self.telemetry.clone().ok_or_else(|| ApiError::Unavailable {
            code: ErrorCode::NoNvml,
            message: format!("NVML telemetry is not available: {}", self.telemetry_reason),
        })
    }
}

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

fn cors(origins: &[String]) -> Cors {
    let mut cors = Cors::default()
        .allowed_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allowed_headers([header::CONTENT_TYPE, header::AUTHORIZATION, header::ACCEPT])
        .max_age(3600);
    for origin in origins {
        cors = cors.allowed_origin(origin);
    }
    cors
}

/// `Host` names accepted with any port, besides [`AppConfig::allowed_hosts`].
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Refuses, before any work: a `Host` not on the allowlist (403 `forbidden_host`, against DNS rebinding), and
/// on state-changing methods a foreign `Origin` (403 `forbidden_origin`) or a body that is not
/// `application/json` (415; a request with an empty body may omit the content type). A form or `no-cors`
/// fetch from another site can send neither JSON nor an allowed origin.
async fn refuse_cross_site(
    req: ServiceRequest,
    next: Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let config = req.app_data::<web::Data<AppState>>().map(|s| &s.config);
    let refusal = config.and_then(|config| cross_site_refusal(req.request(), config));
    if let Some(error) = refusal {
        return Ok(req.into_response(actix_web::ResponseError::error_response(&error)));
    }
    next.call(req).await.map(ServiceResponse::map_into_boxed_body)
}

fn cross_site_refusal(req: &HttpRequest, config: &AppConfig) -> Option<ApiError> {
    let headers = req.headers();
    // HTTP/1.1 sends `Host`; HTTP/2 the URI authority. A request with neither is not from a browser.
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(ToString::to_string));
    if let Some(host) = &host {
        let name = host_name(host);
        let allowed = LOOPBACK_HOSTS
            .iter()
            .copied()
            .chain(config.allowed_hosts.iter().map(String::as_str))
            .any(|a| a.eq_ignore_ascii_case(name));
        if !allowed {
            return Some(ApiError::Forbidden {
                code: ErrorCode::ForbiddenHost,
                message: format!(
                    "Host '{host}' is not allowed; use localhost or the bound address, or start the server with \
                     --allowed-host NAME"
                ),
            });
        }
    }
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return None;
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let own = host.as_deref().is_some_and(|host| {
            ["http://", "https://"].iter().any(|scheme| {
                origin
                    .strip_prefix(scheme)
                    .is_some_and(|a| a.eq_ignore_ascii_case(host))
            })
        });
        if !own && !config.cors_origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return Some(ApiError::Forbidden {
                code: ErrorCode::ForbiddenOrigin,
                message: format!(
                    "origin '{origin}' may not make {} requests; allow it with --cors-origin",
                    req.method()
                ),
            });
        }
    }
    let json = match headers.get(header::CONTENT_TYPE) {
        Some(value) => value.to_str().is_ok_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
        }),
        None => {
            let length = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
            !headers.contains_key(header::TRANSFER_ENCODING) && length.is_none_or(|l| l.trim() == "0")
        }
    };
    (!json).then(|| {
        ApiError::UnsupportedMediaType("request body must be JSON (Content-Type: application/json)".into())
    })
}

/// The name part of a `Host` value: `[::1]:8000` → `[::1]`, `localhost:8000` → `localhost`.
fn host_name(host: &str) -> &str {
    match host.find(']') {
        Some(end) if host.starts_with('[') => &host[..=end],
        _ => host.split(':').next().unwrap_or(host),
    }
}

/// Refuses a request body with any `Content-Encoding` but `identity` (415 `unsupported_encoding`) before it is
/// read: actix would decompress it before the [`MAX_BODY_BYTES`] limit applies, so a small zstd body could
/// expand to gigabytes. Response compression is unaffected.
async fn refuse_encoded_bodies(
    req: ServiceRequest,
    next: Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let encoded = req.headers().get_all(header::CONTENT_ENCODING).any(|v| {
        !v.to_str()
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("identity"))
    });
    if encoded {
        let error = ApiError::UnsupportedEncoding(
            "compressed request bodies are not accepted; send the body without Content-Encoding".into(),
        );
        return Ok(req.into_response(actix_web::ResponseError::error_response(&error)));
    }
    next.call(req).await.map(ServiceResponse::map_into_boxed_body)
}

/// Gives a request's body a deadline ([`AppConfig::body_read_timeout`] from now): a client that stops
/// sending part-way gets 408 `request_timeout` and the connection closes, instead of holding it forever
/// (actix's `client_request_timeout` covers only the head).
async fn body_deadline(
    mut req: ServiceRequest,
    next: Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    use actix_web::HttpMessage as _;
    use futures_util::StreamExt as _;
    let timeout = req
        .app_data::<web::Data<AppState>>()
        .map_or(BODY_READ_TIMEOUT, |s| s.config.body_read_timeout);
    let deadline = tokio::time::Instant::now() + timeout;
    let payload = req.take_payload();
    // After a timeout the stream ends, so nothing more is read from a client that stopped sending.
    let timed = futures_util::stream::unfold(Some(payload), move |payload| async move {
        let mut payload = payload?;
        match tokio::time::timeout_at(deadline, payload.next()).await {
            Ok(Some(item)) => Some((item, Some(payload))),
            Ok(None) => None,
            Err(_) => Some((
                Err(actix_web::error::PayloadError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    BODY_TIMED_OUT,
                ))),
                None,
            )),
        }
    });
    req.set_payload(actix_web::dev::Payload::from(
        Box::pin(timed) as std::pin::Pin<Box<dyn futures_util::Stream<Item = _>>>
    ));
    next.call(req).await.map(ServiceResponse::map_into_boxed_body)
}

const BODY_TIMED_OUT: &str = "the request body did not arrive in time";

/// Whether a payload error is [`body_deadline`]'s timeout.
fn is_body_timeout(error: &actix_web::error::PayloadError) -> bool {
    matches!(error, actix_web::error::PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut)
}

/// Bearer-token check on every /api route except health and CORS preflights, run by actix-web-httpauth's
/// middleware: the credentials are optional there so that a missing or non-Bearer `Authorization` header
/// reaches this check and gets the JSON 401 of [`ApiError::Unauthorized`].
async fn require_token(
    req: ServiceRequest,
    credentials: Option<BearerAuth>,
) -> Result<ServiceRequest, (actix_web::Error, ServiceRequest)> {
    let token = req
        .app_data::<web::Data<AppState>>()
        .and_then(|s| s.config.token.as_deref());
    let authorized = token.is_none_or(|token| {
        matches!(req.path(), "/api/health" | "/api/v1/health")
            || req.method() == Method::OPTIONS
            || credentials.is_some_and(|c| token_matches(c.token().trim().as_bytes(), token.as_bytes()))
    });
    if authorized {
        Ok(req)
    } else {
        Err((ApiError::Unauthorized.into(), req))
    }
}

/// Outermost `/api` middleware: any error response that is not already JSON (CORS rejections, framework
/// errors) is rewritten to the one `{code, message}` body, so every /api error has the same shape.
async fn json_errors(
    req: ServiceRequest,
    next: Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    // Errors the inner services return as `Err` are rendered by actix from `ResponseError` (our ApiError is
    // JSON already); error *responses* are rewritten below.
    let response = next.call(req).await?.map_into_boxed_body();
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !status.is_client_error() && !status.is_server_error() || is_json {
        return Ok(response);
    }
    let (request, response) = response.into_parts();
    let headers = response.headers().clone();
    let text = actix_web::body::to_bytes(response.into_body()).await.map_or_else(
        |_| String::new(),
        |b| String::from_utf8_lossy(&b).trim().to_owned(),
    );
    let code = match status.as_u16() {
        400 => ErrorCode::InvalidInput,
        401 => ErrorCode::Unauthorized,
        403 => ErrorCode::Forbidden,
        404 => ErrorCode::NotFound,
        405 => ErrorCode::MethodNotAllowed,
        413 => ErrorCode::TooLarge,
        415 => ErrorCode::UnsupportedMediaType,
        503 => ErrorCode::Unavailable,
        s if s >= 500 => ErrorCode::Internal,
        _ => ErrorCode::InvalidRequest,
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    let mut rebuilt = HttpResponse::build(status);
    for (name, value) in &headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rebuilt.append_header((name.clone(), value.clone()));
        }
    }
    let body = roofline_core::wire::ErrorBody { code, message };
    Ok(ServiceResponse::new(request, rebuilt.json(body)))
}

/// Whether a presented token equals the configured one, in time independent of both: their SHA-256 digests
/// (fixed length, so not even the token's length leaks) compared with `subtle`'s constant-time equality.
#[must_use]
pub fn token_matches(presented: &[u8], token: &[u8]) -> bool {
    use sha2::{Digest as _, Sha256};
    use subtle::ConstantTimeEq as _;
    let (presented, token) = (Sha256::digest(presented), Sha256::digest(token));
    presented.as_slice().ct_eq(token.as_slice()).into()
}

fn json_error(err: JsonPayloadError, _req: &HttpRequest) -> actix_web::Error {
    let api = match &err {
        JsonPayloadError::OverflowKnownLength { .. } | JsonPayloadError::Overflow { .. } => {
            ApiError::TooLarge(format!("request body too large (limit {MAX_BODY_BYTES} bytes)"))
        }
        JsonPayloadError::ContentType => ApiError::UnsupportedMediaType(
            "request body must be JSON (Content-Type: application/json)".into(),
        ),
        JsonPayloadError::Payload(payload) if is_body_timeout(payload) => {
            ApiError::RequestTimeout(BODY_TIMED_OUT.into())
        }
        other => ApiError::BadRequest(format!("invalid JSON body: {other}")),
    };
    api.into()
}

fn query_error(err: QueryPayloadError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::BadRequest(format!("invalid query string: {err}")).into()
}

fn path_error(err: PathError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::BadRequest(format!("invalid path: {err}")).into()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_only_when_equal_whatever_their_lengths() {
        let token = b"s3cret-token";
        assert!(token_matches(token, token));
        for presented in [
            &b""[..],
            b"s",
            b"s3cret-toke",
            b"s3cret-tokeN",
            b"s3cret-token ",
            b"s3cret-token-and-more",
        ] {
            assert!(
                !token_matches(presented, token),
                "{}",
                String::from_utf8_lossy(presented)
            );
        }
        assert!(token_matches(b"", b""));
    }
}
