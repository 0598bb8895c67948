//! The JSON contract between the web page and `gpu-endpoint` (feature `serde`).
//!
//! Field names of [`AnalyzeRequest`], [`RooflinePoint`] and [`NvmlStatus`] keep the original toolkit's names
//! (`M`, `N`, `K`, `ai`, `tflops`, `time_us`, `bottleneck`, …) because existing users script against them.
//! Units on the wire are the ones in the field names (µs, TFLOP/s, MHz, W, MB); base units everywhere else.
//!
//! One file per concern: `error.rs` (codes, error bodies, failures), `point.rs` (the roofline point and its
//! conversions), `analyze.rs`, `device.rs`, `benchmark.rs`, `calibration.rs`, `results.rs`, `step.rs` (the
//! routes' bodies and events) and `validation.rs` (`validate --json`).

mod analyze;
mod benchmark;
mod calibration;
mod device;
mod error;
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
    CalibrateRequest, CalibratedPeak, CalibrationResult, KernelOverhead, VectorKernelOverhead,
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
