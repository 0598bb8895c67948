//! The single place that turns base-unit numbers into display strings: roofline-core's one formatter
//! (`roofline_core::format`: SI prefixes, scientific notation past them, `—` for non-finite values), shared
//! with the command line so the page and the CLI print the same numbers.

pub use roofline_core::format::*;
