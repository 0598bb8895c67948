//! The roofline page: a Leptos CSR app; every prediction runs in the browser through `roofline_core`.

pub mod api;
pub mod app;
pub mod bench;
pub mod browser;
pub mod calibration;
pub mod charts;
pub mod components;
pub mod endpoint;
pub mod export;
pub mod format;
pub mod history;
pub mod measured;
pub mod models;
pub mod palette;
pub mod presets;
pub mod scenario;
pub mod serving;
pub mod serving_inputs;
pub mod share_link;
pub mod sliders;
pub mod sse;
pub mod state;
pub mod step;
pub mod storage;
pub mod summary;
pub mod telemetry;
pub mod validation;

pub use app::App;
