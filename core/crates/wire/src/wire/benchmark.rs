//! `POST /api/benchmarks`: benchmark jobs, their SSE events, and the `bench --json` report.

use serde::{Deserialize, Serialize};

use super::error::Failure;
use super::point::{RooflinePoint, wire_error_pct};
use roofline_analysis::measurement::{MeasuredPoint, PredictedPoint};
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

/// SSE `point` event of a benchmark job: one measured point and its prediction. `M` and `P` are the measured
/// and the predicted point: [`RooflinePoint`]s on the wire (the default, the only form that serializes), the
/// domain's `MeasuredPoint` and `PredictedPoint` in the endpoint and the page ([`BenchmarkPointEvent::map`]
/// converts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// An absent optional point is `None`: no `Default` asked of the point types.
#[serde(bound(deserialize = "M: Deserialize<'de>, P: Deserialize<'de>"))]
pub struct BenchmarkPointEvent<M = RooflinePoint, P = RooflinePoint> {
    /// Job id.
    pub job_id: String,
    /// Index of this point in the job (0-based, over shapes × precisions).
    pub index: u32,
    /// Points the job will try.
    pub total: u32,
    /// The measured point.
    pub point: M,
    /// The roofline prediction for the same operator on `hardware_key`, when one was asked for and exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<P>,
    /// (measured − predicted) / predicted time, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
}

impl BenchmarkPointEvent<MeasuredPoint, PredictedPoint> {
    /// Point `index` of the `total` of job `job_id`, measured beside `predicted`; its error is
    /// [`wire_error_pct`], the figure this event has always sent.
    #[must_use]
    pub fn new(
        job_id: String,
        index: u32,
        total: u32,
        point: MeasuredPoint,
        predicted: Option<PredictedPoint>,
    ) -> Self {
        let error_pct = predicted
            .as_ref()
            .map(|p| wire_error_pct(point.time_s(), p.time_s));
        BenchmarkPointEvent {
            job_id,
            index,
            total,
            point,
            predicted,
            error_pct,
        }
    }
}

impl<M, P> BenchmarkPointEvent<M, P> {
    /// The same event with its points converted by `measured` and `predicted` (to the wire and back).
    pub fn map<'a, N, Q>(
        &'a self,
        measured: impl Fn(&'a M) -> N,
        predicted: impl Fn(&'a P) -> Q,
    ) -> BenchmarkPointEvent<N, Q> {
        BenchmarkPointEvent {
            job_id: self.job_id.clone(),
            index: self.index,
            total: self.total,
            point: measured(&self.point),
            predicted: self.predicted.as_ref().map(predicted),
            error_pct: self.error_pct,
        }
    }
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
