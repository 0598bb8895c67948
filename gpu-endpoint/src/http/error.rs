//! The one error type of the HTTP API: every failure becomes `{"code","message"}` with a fitting status.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use roofline_core::wire::{ErrorBody, ErrorCode};

use crate::backend::BackendError;
use crate::use_cases::UseCaseError;

/// Seconds a client is told to wait when the device is busy.
pub const RETRY_AFTER_S: u32 = 5;

/// An API error: status, stable code and message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// 400: malformed or out-of-range input.
    #[error("{0}")]
    BadRequest(String),
    /// 401: a bearer token is required and was missing or wrong.
    #[error("a valid bearer token is required (Authorization: Bearer <token>)")]
    Unauthorized,
    /// 403: a foreign `Origin` on a state-changing request, or a `Host` not on the allowlist.
    #[error("{message}")]
    Forbidden {
        /// `forbidden_origin` or `forbidden_host`.
        code: ErrorCode,
        /// Why.
        message: String,
    },
    /// 404: unknown hardware key.
    #[error("{0}")]
    UnknownHardware(String),
    /// 404: unknown model or precision-config key.
    #[error("{0}")]
    UnknownKey(String),
    /// 404: unknown route or job.
    #[error("{0}")]
    NotFound(String),
    /// 413: body or shape too large.
    #[error("{0}")]
    TooLarge(String),
    /// 408: the request body did not arrive within the body read timeout (the connection is closed).
    #[error("{0}")]
    RequestTimeout(String),
    /// 415: wrong content type.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 415: a compressed request body (refused before it is read, so it cannot expand past the body limit).
    #[error("{0}")]
    UnsupportedEncoding(String),
    /// 503 + Retry-After: the device is busy with another measurement (of this process or another one), or a
    /// job queue is full; the message says which.
    #[error("{0}")]
    Busy(String),
    /// 503: no NVML library / no GPU.
    #[error("{message}")]
    Unavailable {
        /// `no_nvml` or `no_gpu`.
        code: ErrorCode,
        /// Why.
        message: String,
    },
    /// 507 `not_stored`: a result was measured but the store could not commit it (a full disk, a file no
    /// longer writable).
    #[error("{0}")]
    NotStored(String),
    /// 500: internal failure (CUDA error, worker thread gone); the full error is logged, not returned.
    #[error("internal error; see the server log")]
    Internal(String),
}

impl ApiError {
    /// The stable snake_case code.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::BadRequest(_) => ErrorCode::InvalidInput,
            ApiError::Unauthorized => ErrorCode::Unauthorized,
            ApiError::Forbidden { code, .. } | ApiError::Unavailable { code, .. } => *code,
            ApiError::UnknownHardware(_) => ErrorCode::UnknownHardware,
            ApiError::UnknownKey(_) => ErrorCode::UnknownKey,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::TooLarge(_) => ErrorCode::TooLarge,
            ApiError::RequestTimeout(_) => ErrorCode::RequestTimeout,
            ApiError::UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            ApiError::UnsupportedEncoding(_) => ErrorCode::UnsupportedEncoding,
            ApiError::Busy(_) => ErrorCode::Busy,
            ApiError::NotStored(_) => ErrorCode::NotStored,
            ApiError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The wire body.
    #[must_use]
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            code: self.code(),
            message: self.to_string(),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::UnknownHardware(_) | ApiError::UnknownKey(_) | ApiError::NotFound(_) => {
                StatusCode::NOT_FOUND
            }
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::UnsupportedMediaType(_) | ApiError::UnsupportedEncoding(_) => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            ApiError::Busy(_) | ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::NotStored(_) => StatusCode::INSUFFICIENT_STORAGE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(detail) = self {
            tracing::error!(error = %detail, "internal error");
        }
        let mut response = HttpResponse::build(self.status_code());
        match self {
            ApiError::Busy(_) => {
                response.insert_header((header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_S)));
            }
            ApiError::Unauthorized => {
                response.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
            }
            // The rest of the body may still come: the connection cannot be reused.
            ApiError::RequestTimeout(_) => {
                response.force_close();
            }
            _ => {}
        }
        response.json(self.body())
    }
}

impl From<roofline_core::Error> for ApiError {
    fn from(e: roofline_core::Error) -> Self {
        match e {
            roofline_core::Error::UnknownHardware { .. } => ApiError::UnknownHardware(e.to_string()),
            roofline_core::Error::UnknownModel { .. } | roofline_core::Error::UnknownConfig { .. } => {
                ApiError::UnknownKey(e.to_string())
            }
            _ => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<BackendError> for ApiError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::TooLarge(m) => ApiError::TooLarge(m),
            BackendError::InvalidInput(m) => ApiError::BadRequest(m),
            BackendError::Busy => {
                ApiError::Busy("the device is busy with another measurement; retry later".into())
            }
            BackendError::BusyElsewhere(message) => ApiError::Busy(message),
            BackendError::TimeLimit(m) => ApiError::Unavailable {
                code: ErrorCode::TimeLimit,
                message: m,
            },
            BackendError::Cancelled => ApiError::Unavailable {
                code: ErrorCode::Cancelled,
                message: "the measurement was cancelled".into(),
            },
            BackendError::Unavailable(m) => ApiError::Unavailable {
                code: ErrorCode::NoGpu,
                message: m,
            },
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<UseCaseError> for ApiError {
    fn from(e: UseCaseError) -> Self {
        match e {
            UseCaseError::Input(e) => e.into(),
            UseCaseError::Backend(e) => e.into(),
            UseCaseError::NoPredictedDevice { backend, name } => ApiError::BadRequest(format!(
                "give hardware_key or spec: the {backend} device ({name}) has no catalog entry and no calibration yet"
            )),
            UseCaseError::NotStored(message) => ApiError::NotStored(message),
        }
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(e: actix_web::error::BlockingError) -> Self {
        ApiError::Internal(format!("blocking worker failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_backend_errors_map_to_the_table() {
        let unknown: ApiError = roofline_core::find_hardware("nope").unwrap_err().into();
        assert_eq!(
            (unknown.status_code().as_u16(), unknown.code()),
            (404, ErrorCode::UnknownHardware)
        );
        assert!(unknown.to_string().contains("gb10"), "lists the valid keys");
        let bad: ApiError =
            roofline_core::Error::from("fp7".parse::<roofline_core::Precision>().unwrap_err()).into();
        assert_eq!(
            (bad.status_code().as_u16(), bad.code()),
            (400, ErrorCode::InvalidInput)
        );
        let cuda: ApiError = BackendError::Cuda("CUBLAS_STATUS_EXECUTION_FAILED at 0x7f".into()).into();
        assert_eq!(
            (cuda.status_code().as_u16(), cuda.code()),
            (500, ErrorCode::Internal)
        );
        assert!(
            !cuda.body().message.contains("CUBLAS"),
            "the detail is logged, not returned"
        );
        let busy: ApiError = BackendError::Busy.into();
        assert_eq!(busy.error_response().headers().get("retry-after").unwrap(), "5");
        let big: ApiError = BackendError::TooLarge("x".into()).into();
        assert_eq!(big.status_code().as_u16(), 413);
    }
}
