//! The roofline page: a Leptos CSR app; every prediction runs in the browser through `roofline_core`.

pub mod app;
pub mod browser;
pub mod charts;
pub mod components;
pub mod format;
pub mod palette;
pub mod state;

pub use app::App;
