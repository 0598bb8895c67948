//! Prediction error of measured points: core's validation (`roofline_core::validation`) plus the page's
//! colour classes.

pub use roofline_core::validation::*;

/// CSS class of a band: `err-good`, `err-fair`, `err-poor`.
#[must_use]
pub const fn band_class(band: Band) -> &'static str {
    match band {
        Band::Good => "err-good",
        Band::Fair => "err-fair",
        Band::Poor => "err-poor",
    }
}
