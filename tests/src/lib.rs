//! Shared helpers for the cross-crate and browser tests.
