//! The roofline page: a Leptos CSR app; every prediction runs in the browser through `roofline_core`.

pub mod api;
pub mod app;
pub mod browser;
pub mod charts;
pub mod components;
pub mod export;
pub mod format;
pub mod history;
pub mod palette;
pub mod state;
pub mod storage;

pub use app::App;
