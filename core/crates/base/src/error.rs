//! The one error type of `roofline-core`.

use crate::precision::{ComputePath, ParsePrecisionError, Precision};

/// Why a computation in `roofline-core` could not produce a value.
///
/// Invalid input ([`Error::InvalidInput`], [`Error::UnknownPrecision`], [`Error::InvalidModelConfig`]) is
/// distinct from an unknown id ([`Error::UnknownHardware`], [`Error::UnknownModel`], [`Error::UnknownConfig`])
/// and from a precision the device cannot run ([`Error::Unsupported`]), so the
/// endpoint can map them to 400, 404 and an explicit `unsupported` entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No catalogued or custom device has this key; `valid` lists the keys that exist.
    #[error("unknown hardware '{key}'; valid keys: {}", valid.join(", "))]
    UnknownHardware {
        /// The key that was asked for.
        key: String,
        /// Every valid key.
        valid: Vec<String>,
    },
    /// The name matches no known precision; `valid` lists the accepted names.
    #[error("unknown precision '{name}'; valid: {}", valid.join(", "))]
    UnknownPrecision {
        /// The name that was given.
        name: String,
        /// Every accepted name.
        valid: Vec<String>,
    },
    /// The device has no native matrix-unit path for this precision (never silently replaced by FP16).
    #[error("{precision} is not supported natively on {device} ({arch}): no {path} path")]
    Unsupported {
        /// The precision that was asked for.
        precision: Precision,
        /// The compute path it needs.
        path: ComputePath,
        /// The device key.
        device: String,
        /// The architecture, e.g. `Hopper sm_90`.
        arch: String,
    },
    /// No model preset has this key; `valid` lists the keys that exist.
    #[error("unknown model '{key}'; valid keys: {}", valid.join(", "))]
    UnknownModel {
        /// The key that was asked for.
        key: String,
        /// Every valid key.
        valid: Vec<String>,
    },
    /// No precision config has this key; `valid` lists the keys that exist.
    #[error("unknown precision config '{key}'; valid keys: {}", valid.join(", "))]
    UnknownConfig {
        /// The key that was asked for.
        key: String,
        /// Every valid key.
        valid: Vec<String>,
    },
    /// A shape, size or spec value is out of range (zero, negative, not finite, too large).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A Hugging Face `config.json` the importer cannot use: not JSON, an unsupported `architectures` entry,
    /// or a required field missing, mistyped or out of range.
    #[error("invalid model config: {field}: {message}")]
    InvalidModelConfig {
        /// The field, as `config.json` names it (`text_config.hidden_size` where nested).
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl From<ParsePrecisionError> for Error {
    fn from(e: ParsePrecisionError) -> Self {
        Error::UnknownPrecision {
            name: e.name,
            valid: e.valid,
        }
    }
}
