//! Error codes and bodies of the JSON contract, and a precision that produced no point ([`Failure`]).

use serde::{Deserialize, Serialize};

use roofline_base::precision::Precision;

/// Every stable machine-readable code of an error response ([`ErrorBody`]) or a failed point ([`Failure`]),
/// `snake_case` on the wire. The endpoint spells codes only through this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// 400: malformed or out-of-range input.
    InvalidInput,
    /// 4xx without a more specific code.
    InvalidRequest,
    /// 401: a bearer token is required.
    Unauthorized,
    /// 403 without a more specific code.
    Forbidden,
    /// 403: a state-changing request from a foreign `Origin`.
    ForbiddenOrigin,
    /// 403: a `Host` header outside the allowlist.
    ForbiddenHost,
    /// 404: unknown hardware key.
    UnknownHardware,
    /// 404: unknown model or precision-config key.
    UnknownKey,
    /// 404: unknown route or job.
    NotFound,
    /// 405.
    MethodNotAllowed,
    /// 408: the request body stopped arriving.
    RequestTimeout,
    /// 413: body or shape too large (also a point whose buffers would not fit).
    TooLarge,
    /// 415: wrong content type.
    UnsupportedMediaType,
    /// 415: a compressed request body.
    UnsupportedEncoding,
    /// 503: the device is busy with another measurement.
    Busy,
    /// 503 without a more specific code.
    Unavailable,
    /// 503: no NVML library or no GPU for telemetry.
    NoNvml,
    /// No device or library to measure on.
    NoGpu,
    /// The server runs without a result store.
    NoStore,
    /// 500: an internal failure (details only in the server log).
    Internal,
    /// The device cannot run this precision or operator natively (the message names the architecture).
    Unsupported,
    /// A CUDA driver, cuBLASLt or NVRTC call failed.
    CudaError,
    /// The kernel's output did not match the reference.
    VerificationFailed,
    /// A point ran past the per-point time cap.
    TimeLimit,
    /// The measurement was cancelled (client gone or job cancelled).
    Cancelled,
    /// A point was measured but the result store could not commit it (a full disk, a read-only file): it is
    /// reported as this failure, never as a measured point.
    NotStored,
    /// A code this build does not know (a newer server), or an error response that was not JSON.
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The wire spelling, e.g. `invalid_input`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::ForbiddenOrigin => "forbidden_origin",
            ErrorCode::ForbiddenHost => "forbidden_host",
            ErrorCode::UnknownHardware => "unknown_hardware",
            ErrorCode::UnknownKey => "unknown_key",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::RequestTimeout => "request_timeout",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::UnsupportedEncoding => "unsupported_encoding",
            ErrorCode::Busy => "busy",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::NoNvml => "no_nvml",
            ErrorCode::NoGpu => "no_gpu",
            ErrorCode::NoStore => "no_store",
            ErrorCode::Internal => "internal",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::CudaError => "cuda_error",
            ErrorCode::VerificationFailed => "verification_failed",
            ErrorCode::TimeLimit => "time_limit",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::NotStored => "not_stored",
            ErrorCode::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the wire spelling (`ErrorCode::NotFound == "not_found"`).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The body of every error response: a stable snake_case `code` and a human message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// Human-readable explanation.
    pub message: String,
}

/// A precision that produced no point, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The precision that was asked for (a step's end-to-end timing: its config's compute precision).
    pub precision: Precision,
    /// Stable code: `unsupported`, `no_gpu`, `cuda_error`, `verification_failed`, …
    pub code: ErrorCode,
    /// Human-readable reason, naming the architecture where relevant.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_keep_their_wire_spelling() {
        for code in [
            ErrorCode::InvalidInput,
            ErrorCode::ForbiddenOrigin,
            ErrorCode::NoNvml,
            ErrorCode::TimeLimit,
            ErrorCode::NotStored,
        ] {
            assert_eq!(
                serde_json::to_string(&code).unwrap(),
                format!("\"{}\"", code.as_str())
            );
            assert_eq!(
                serde_json::from_str::<ErrorCode>(&format!("\"{code}\"")).unwrap(),
                code
            );
        }
        // A code from a newer server still parses.
        assert_eq!(
            serde_json::from_str::<ErrorCode>("\"quota_exceeded\"").unwrap(),
            ErrorCode::Unknown
        );
    }

    #[test]
    fn failures_read_and_write_their_precision_as_before() {
        // The endpoint's JSON of a failed point; a precision name in any case reads.
        let json = r#"{"precision":"NVFP4","code":"unsupported","message":"NVFP4 is not supported natively on h100_sxm (Hopper sm_90): no FP4 path"}"#;
        let failure: Failure = serde_json::from_str(json).unwrap();
        assert_eq!(
            (failure.precision, failure.code),
            (Precision::Nvfp4, ErrorCode::Unsupported)
        );
        assert_eq!(serde_json::to_string(&failure).unwrap(), json);
        let lower: Failure =
            serde_json::from_str(r#"{"precision":"fp8","code":"no_gpu","message":"x"}"#).unwrap();
        assert_eq!(lower.precision, Precision::Fp8E4M3);
        assert!(
            serde_json::from_str::<Failure>(r#"{"precision":"FP7","code":"no_gpu","message":"x"}"#).is_err()
        );
    }
}
