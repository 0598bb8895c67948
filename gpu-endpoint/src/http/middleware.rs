//! The `/api` middleware and extractor error handlers: bearer-token auth, CORS, the cross-site and `Host`
//! checks, refusal of encoded bodies, the body deadline, and the rewriting of every error to the one JSON
//! `{code, message}` body.

use actix_cors::Cors;
use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::http::{Method, header};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_web_httpauth::extractors::bearer::BearerAuth;
use roofline_core::wire::ErrorCode;

use crate::http::error::ApiError;
use crate::http::state::{AppConfig, AppState, BODY_READ_TIMEOUT};

/// Largest accepted JSON body, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// CORS for the configured origins (and the methods and headers the page uses).
pub(crate) fn cors(origins: &[String]) -> Cors {
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
pub(crate) async fn refuse_cross_site(
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
pub(crate) async fn refuse_encoded_bodies(
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
pub(crate) async fn body_deadline(
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

/// The message of a body that did not arrive before its deadline.
const BODY_TIMED_OUT: &str = "the request body did not arrive in time";

/// Whether a payload error is [`body_deadline`]'s timeout.
fn is_body_timeout(error: &actix_web::error::PayloadError) -> bool {
    matches!(error, actix_web::error::PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut)
}

/// Bearer-token check on every /api route except health and CORS preflights, run by actix-web-httpauth's
/// middleware: the credentials are optional there so that a missing or non-Bearer `Authorization` header
/// reaches this check and gets the JSON 401 of [`ApiError::Unauthorized`].
pub(crate) async fn require_token(
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
pub(crate) async fn json_errors(
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

/// `web::Json` extractor errors: 413 too large, 415 not JSON, 408 body deadline, else 400.
pub(crate) fn json_error(err: JsonPayloadError, _req: &HttpRequest) -> actix_web::Error {
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

/// `web::Query` extractor errors: 400.
pub(crate) fn query_error(err: QueryPayloadError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::BadRequest(format!("invalid query string: {err}")).into()
}

/// `web::Path` extractor errors: 400.
pub(crate) fn path_error(err: PathError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::BadRequest(format!("invalid path: {err}")).into()
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
