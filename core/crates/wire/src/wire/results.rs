//! `GET` and `DELETE /api/results`: stored measurements, a page at a time.

use serde::{Deserialize, Serialize};

use super::point::RooflinePoint;
use roofline_base::precision::Precision;

/// Most results one page of `GET /api/results` holds (`limit`'s maximum): 1,000 points of about 1.5 KB of
/// JSON each, 1.5 MB per page.
pub const MAX_RESULTS_LIMIT: u32 = 1000;
/// Results per page when `limit` is not given.
pub const DEFAULT_RESULTS_LIMIT: u32 = 100;

/// `GET /api/results` query: every filter optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ResultsQuery {
    /// Device name, substring match, case-insensitive.
    #[serde(default)]
    pub device: Option<String>,
    /// Precision that ran (any spelling `Precision` parses, e.g. `fp16`).
    #[serde(default)]
    pub precision: Option<Precision>,
    /// Shape `MxNxK`.
    #[serde(default)]
    pub shape: Option<String>,
    /// Only results at or after this Unix time, in seconds.
    #[serde(default)]
    pub since: Option<f64>,
    /// At most this many results (newest first; default [`DEFAULT_RESULTS_LIMIT`], at most
    /// [`MAX_RESULTS_LIMIT`]).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Where the page starts: the `next_cursor` of the previous page (opaque), or none for the newest results.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `GET /api/results` answer: one page of stored measurements, newest first. `M` and `P` as in
/// [`StoredResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsPage<M = RooflinePoint, P = RooflinePoint> {
    /// The page's results.
    pub results: Vec<StoredResult<M, P>>,
    /// The `cursor` of the next (older) page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Stored rows of this page's range that did not decode (a corrupt or foreign row) and were left out;
    /// the server logs their ids.
    #[serde(default)]
    pub skipped: u32,
}

impl<M, P> Default for ResultsPage<M, P> {
    fn default() -> Self {
        ResultsPage {
            results: Vec::new(),
            next_cursor: None,
            skipped: 0,
        }
    }
}

impl<M, P> ResultsPage<M, P> {
    /// The same page with its points converted by `measured` and `predicted` (to the wire and back).
    pub fn map<'a, N, Q>(
        &'a self,
        measured: impl Fn(&'a M) -> N,
        predicted: impl Fn(&'a P) -> Q,
    ) -> ResultsPage<N, Q> {
        let results = self
            .results
            .iter()
            .map(|r| StoredResult {
                id: r.id,
                job_id: r.job_id.clone(),
                device: r.device.clone(),
                point: measured(&r.point),
                predicted: r.predicted.as_ref().map(&predicted),
                created_unix_s: r.created_unix_s,
            })
            .collect();
        ResultsPage {
            results,
            next_cursor: self.next_cursor.clone(),
            skipped: self.skipped,
        }
    }
}

/// `DELETE /api/results` query: which stored measurements to delete. The filters are those of
/// [`ResultsQuery`] (without `shape` and `limit`); at least one filter, or `all=true`, is required, so an
/// empty query never deletes everything by accident.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DeleteResultsQuery {
    /// Device name, substring match, case-insensitive.
    #[serde(default)]
    pub device: Option<String>,
    /// Precision that ran (any spelling `Precision` parses, e.g. `fp16`).
    #[serde(default)]
    pub precision: Option<Precision>,
    /// Only results at or after this Unix time, in seconds.
    #[serde(default)]
    pub since: Option<f64>,
    /// Delete every stored measurement (needed when no filter is given).
    #[serde(default)]
    pub all: bool,
}

/// `DELETE /api/results` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedResults {
    /// How many stored measurements were deleted.
    pub deleted: u64,
}

/// One stored measurement (`GET /api/results`). `M` and `P` are the measured and the predicted point:
/// [`RooflinePoint`]s on the wire (the default, the only form that serializes), the domain's `MeasuredPoint`
/// and `PredictedPoint` in the endpoint's store and the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// An absent optional point is `None`: no `Default` asked of the point types.
#[serde(bound(deserialize = "M: Deserialize<'de>, P: Deserialize<'de>"))]
pub struct StoredResult<M = RooflinePoint, P = RooflinePoint> {
    /// Row id.
    pub id: i64,
    /// Benchmark job that produced it (null for `/api/analyze` and calibration points).
    pub job_id: Option<String>,
    /// Device name.
    pub device: String,
    /// The measured point.
    pub point: M,
    /// The prediction it was compared with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<P>,
    /// Unix time it was stored, in seconds.
    pub created_unix_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_read_precision_names_as_before() {
        // `?precision=fp16&device=h100`, as serde reads a query string.
        let query: ResultsQuery = serde_json::from_str(r#"{"precision":"fp16","device":"h100"}"#).unwrap();
        assert_eq!(query.precision, Some(Precision::Fp16));
        let delete: DeleteResultsQuery = serde_json::from_str(r#"{"precision":"INT4_AWQ"}"#).unwrap();
        assert_eq!(delete.precision, Some(Precision::Int4G128Zp));
        assert!(serde_json::from_str::<ResultsQuery>(r#"{"precision":"FP7"}"#).is_err());
    }
}
