//! `POST /api/calibrate`: what was measured and the calibrated spec.

use serde::{Deserialize, Serialize};

use super::error::Failure;
use crate::hardware::HardwareSpec;
use crate::measurement::Measurement;
use crate::precision::Precision;

/// `POST /api/calibrate` body (every field optional; an unknown field is refused, so a misspelt one cannot
/// silently start a full calibration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CalibrateRequest {
    /// Precisions whose achieved peak is measured (default: every precision the backend runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precisions: Option<Vec<Precision>>,
    /// Catalog key whose datasheet spec is the starting point (default: the matched device, else none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_key: Option<String>,
}

/// One calibrated quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedPeak {
    /// Precision that ran.
    pub precision: Precision,
    /// Achieved throughput, in TFLOP/s.
    pub achieved_tflops: f64,
    /// Shape that achieved it, `MxNxK`.
    pub shape: String,
    /// What ran.
    pub measurement: Measurement,
}

/// The fixed per-kernel overhead: a small GEMV's time minus its bytes over the copy bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelOverhead {
    /// Overhead, in µs (never negative).
    pub kernel_overhead_us: f64,
    /// The GEMV's measured median, in µs.
    pub gemv_time_us: f64,
    /// The GEMV's shape, `MxNxK`.
    pub shape: String,
    /// Its precision.
    pub precision: Precision,
    /// What ran.
    pub measurement: Measurement,
}

/// The fixed overhead of a vector kernel: a one-row RMSNorm's time minus its bytes over the copy bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorKernelOverhead {
    /// Overhead, in µs (never negative).
    pub kernel_overhead_us: f64,
    /// The kernel's measured median, in µs.
    pub kernel_time_us: f64,
    /// The operator's shape label, e.g. `256` (elements of the one row).
    pub shape: String,
    /// What ran.
    pub measurement: Measurement,
}

/// `POST /api/calibrate` answer: measured bandwidth and peaks, and the calibrated spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationResult {
    /// Measured device-memory copy bandwidth (read + write bytes / time), in GB/s.
    pub bandwidth_gb_s: f64,
    /// What the copy kernel was and how it was timed.
    pub bandwidth_measurement: Measurement,
    /// Achieved peak per precision.
    pub peaks: Vec<CalibratedPeak>,
    /// The per-kernel overhead of matrix kernels, when it could be measured (the spec's peaks'
    /// `kernel_overhead_s`, or its `kernel_overhead_s` without a vector-kernel figure; else 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_overhead: Option<KernelOverhead>,
    /// The per-kernel overhead of vector kernels (norms, activations, copies), when it could be measured
    /// (the spec's `kernel_overhead_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_kernel_overhead: Option<VectorKernelOverhead>,
    /// Precisions that could not be calibrated, and why.
    pub failed: Vec<Failure>,
    /// The calibrated spec (`provenance: measured`), usable wherever a catalog spec is.
    pub spec: HardwareSpec,
}
