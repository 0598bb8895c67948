//! The JSON contract between the web page and `gpu-endpoint` (feature `serde`).
//!
//! Field names of [`AnalyzeRequest`], [`RooflinePoint`] and [`NvmlStatus`] keep the original toolkit's names
//! (`M`, `N`, `K`, `ai`, `tflops`, `time_us`, `bottleneck`, …) because existing users script against them.
//! Their units are the ones in the field names (µs, TFLOP/s, GB/s, MHz, W, MB). Every other time, rate and size
//! is in base units with the unit in its name (`*_s`, `*_flop_per_s`, `*_bytes_per_s`, `*_bytes`); clocks,
//! power and temperature stay in MHz, W and °C, as named. Fields renamed to base units still read from their
//! old names (`legacy.rs`), since calibrations and step reports are stored.
//!
//! One file per concern: `error.rs` (codes, error bodies, failures), `point.rs` (the roofline point and its
//! conversions), `legacy.rs` (reading the old unit names), `analyze.rs`, `device.rs`, `benchmark.rs`,
//! `calibration.rs`, `results.rs`, `step.rs` (the routes' bodies and events) and `validation.rs`
//! (`validate --json`).

mod analyze;
mod benchmark;
mod calibration;
mod device;
mod error;
mod legacy;
mod point;
mod results;
mod step;
mod validation;

pub use analyze::{AnalyzeQuery, AnalyzeRequest, AnalyzeResponse, RUN_ALL_PRECISIONS};
pub use benchmark::{
    BenchReport, BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob, BenchmarkPointEvent,
    BenchmarkRequest,
};
pub use calibration::{
    CalibrateRequest, CalibratedPeak, CalibratedWeightOnly, CalibrationResult, KernelOverhead,
    VectorKernelOverhead,
};
pub use device::{DeviceInfo, Health, NvmlStatus};
pub use error::{ErrorBody, ErrorCode, Failure};
pub use point::{Bottleneck, PointSource, RooflinePoint};
pub use results::{
    DEFAULT_RESULTS_LIMIT, DeleteResultsQuery, DeletedResults, MAX_RESULTS_LIMIT, ResultsPage, ResultsQuery,
    StoredResult,
};
pub use step::{
    MAX_STEP_KERNELS, MAX_STEP_LAYERS, MAX_STEP_TOKENS, StepDoneEvent, StepEndToEnd, StepJob,
    StepOperatorEvent, StepReport, StepRequest,
};
pub use validation::{ModeCheck, ModeStats, ValidatedPoint, ValidationReport};

pub use crate::measurement::{BackendKind, Measurement};
