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

/// `GET /api/results` answer: one page of stored measurements, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ResultsPage {
    /// The page's results.
    pub results: Vec<StoredResult>,
    /// The `cursor` of the next (older) page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Stored rows of this page's range that did not decode (a corrupt or foreign row) and were left out;
    /// the server logs their ids.
    #[serde(default)]
    pub skipped: u32,
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

/// One stored measurement (`GET /api/results`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredResult {
    /// Row id.
    pub id: i64,
    /// Benchmark job that produced it (null for `/api/analyze` and calibration points).
    pub job_id: Option<String>,
    /// Device name.
    pub device: String,
    /// The measured point.
    pub point: RooflinePoint,
    /// The prediction it was compared with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<RooflinePoint>,
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
