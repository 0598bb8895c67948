//! `POST /api/benchmarks`: benchmark jobs, their SSE events, and the `bench --json` report.

use serde::{Deserialize, Serialize};

use super::error::Failure;
use super::point::RooflinePoint;
use roofline_base::hardware::Mode;
use roofline_base::precision::Precision;

/// `POST /api/benchmarks` body: every shape × every precision, measured one after another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkRequest {
    /// Shapes as `[M, N, K]`; `M <= 1` is a GEMV.
    pub shapes: Vec<[u64; 3]>,
    /// Precisions to run for every shape.
    pub precisions: Vec<Precision>,
    /// Catalog key the points are predicted on (for the prediction sent with each point); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_key: Option<String>,
    /// Ceilings of those predictions: `datasheet` or `reference` (the default).
    #[serde(default)]
    pub mode: Mode,
}

/// `POST /api/benchmarks` answer (202): the job and where it sits in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkJob {
    /// Job id (use in `/api/benchmarks/{id}/events` and `DELETE /api/benchmarks/{id}`).
    pub id: String,
    /// Jobs ahead of this one (0 = runs now).
    pub position: u32,
    /// Points this job will try (shapes × precisions).
    pub total: u32,
    /// URL of the job's SSE event stream.
    pub events_url: String,
}

/// SSE `point` event of a benchmark job: one measured point and its prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkPointEvent {
    /// Job id.
    pub job_id: String,
    /// Index of this point in the job (0-based, over shapes × precisions).
    pub index: u32,
    /// Points the job will try.
    pub total: u32,
    /// The measured point.
    pub point: RooflinePoint,
    /// The roofline prediction for the same operator on `hardware_key`, when one was asked for and exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<RooflinePoint>,
    /// (measured − predicted) / predicted time, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
}

/// SSE `failed` event of a benchmark job: a point that produced no measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkFailedEvent {
    /// Job id.
    pub job_id: String,
    /// Index of this point in the job (0-based).
    pub index: u32,
    /// Points the job will try.
    pub total: u32,
    /// Shape as `MxNxK`.
    pub shape: String,
    /// Why.
    pub failure: Failure,
}

/// SSE `done` event: the job finished (or was cancelled); the stream ends after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkDoneEvent {
    /// Job id.
    pub job_id: String,
    /// Points measured.
    pub measured: u32,
    /// Points failed.
    pub failed: u32,
    /// Whether the job was cancelled before its last point.
    pub cancelled: bool,
}

/// `gpu-endpoint bench --json` / `compare --json` output; `validate --measured` reads it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Measured points, in the order they ran.
    pub points: Vec<BenchmarkPointEvent>,
    /// Points that produced no measurement, and why.
    #[serde(default)]
    pub failed: Vec<BenchmarkFailedEvent>,
}
