//! The JSON contract between the web page and `gpu-endpoint` (feature `serde`).
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

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
pub use point::{Bottleneck, PointSource, RooflinePoint, wire_error_pct};
pub use results::{
    DEFAULT_RESULTS_LIMIT, DeleteResultsQuery, DeletedResults, MAX_RESULTS_LIMIT, ResultsPage, ResultsQuery,
    StoredResult,
};
pub use step::{
    MAX_STEP_KERNELS, MAX_STEP_LAYERS, MAX_STEP_TOKENS, StepDoneEvent, StepEndToEnd, StepJob,
    StepOperatorEvent, StepReport, StepRequest,
};
pub use validation::{ModeCheck, ModeStats, ValidatedPoint, ValidationReport};

pub use roofline_analysis::measurement::{BackendKind, Measurement};
