//! The ground floor of `roofline-core`: base units ([`units`]), number formats and the matrix-unit paths
//! each architecture runs ([`precision`]), the one error type ([`Error`]), hardware specs with the sourced
//! catalog, reference ceilings, calibration and interconnect ([`hardware`]), and the one number formatter
//! ([`format`](mod@format)). It names no operator, model or serving type; everything inside is in base units.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod format;
pub mod hardware;
#[cfg(feature = "serde")]
pub mod json;
pub mod precision;
pub mod units;

pub use error::Error;
pub use hardware::{
    HardwareSpec, Mode, Peak, Provenance, ReferenceCeilings, calibrated_key, catalog, find_hardware,
    find_hardware_in,
};
pub use precision::{
    ActivationScale, Architecture, BlockScale, ComputePath, E2M1_CODEBOOK, ElementLayout, Encoding,
    FormatInfo, GemmFamily, INT2_CODEBOOK, NF4_CODEBOOK, Precision, QuantizeKernel, format_catalog,
    format_info, int4_group_bits,
};
