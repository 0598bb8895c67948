//! `POST /api/analyze`: one matmul shape predicted (and measured) in one or several precisions.

use serde::{Deserialize, Serialize};

use super::error::Failure;
use super::point::RooflinePoint;
use roofline_base::hardware::Mode;
use roofline_base::precision::Precision;

/// `POST /api/analyze` query string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzeQuery {
    /// Catalog key (aliases accepted); defaults to `gb10`.
    #[serde(default = "default_hardware_key")]
    pub hardware_key: String,
    /// Run FP16, FP8_E4M3, NVFP4, INT8 and INT4 one after another.
    #[serde(default)]
    pub run_all_precisions: bool,
    /// Ceilings of the predictions sent beside the measurements: `datasheet` or `reference` (the default).
    #[serde(default)]
    pub mode: Mode,
    /// Measure on the device (the default). `measure=false` answers the predictions only: it never takes the
    /// device, so it is never refused as busy, and `measured` is empty.
    #[serde(default = "default_true")]
    pub measure: bool,
}

fn default_true() -> bool {
    true
}

fn default_hardware_key() -> String {
    "gb10".to_owned()
}

/// The precisions `run_all_precisions=true` runs, in order (the original toolkit's set).
pub const RUN_ALL_PRECISIONS: [Precision; 5] = [
    Precision::Fp16,
    Precision::Fp8E4M3,
    Precision::Nvfp4,
    Precision::Int8,
    Precision::Int4,
];

/// `POST /api/analyze` body: one matmul shape. `M <= 1` is a GEMV `y[N] = W[N,K]·x[K]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzeRequest {
    /// Rows of the activation (tokens); 1 means GEMV.
    #[serde(rename = "M")]
    pub m: u64,
    /// Output features.
    #[serde(rename = "N")]
    pub n: u64,
    /// Reduction (input features).
    #[serde(rename = "K")]
    pub k: u64,
    /// Precision of weights and activations.
    pub precision: Precision,
    /// Optional explicit list of precisions to run instead of `precision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precisions: Option<Vec<Precision>>,
}

/// `POST /api/analyze` response. `M` and `P` are the measured and the predicted points: [`RooflinePoint`]s on
/// the wire (the default, the only form that serializes), the domain's `MeasuredPoint` and `PredictedPoint` in
/// the endpoint and the page ([`AnalyzeResponse::map`] converts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeResponse<M = RooflinePoint, P = RooflinePoint> {
    /// Display name of the hardware the prediction used.
    pub hardware: String,
    /// Catalog key of that hardware.
    #[serde(default)]
    pub hardware_key: String,
    /// One predicted point per requested precision the device supports.
    pub simulated: Vec<P>,
    /// Measured points (empty when nothing was measured).
    pub measured: Vec<M>,
    /// Every precision that could not be predicted or measured, with the reason.
    pub failed: Vec<Failure>,
}

impl<M, P> AnalyzeResponse<M, P> {
    /// The same answer with its points converted by `measured` and `predicted` (to the wire and back).
    pub fn map<'a, N, Q>(
        &'a self,
        measured: impl Fn(&'a M) -> N,
        predicted: impl Fn(&'a P) -> Q,
    ) -> AnalyzeResponse<N, Q> {
        AnalyzeResponse {
            hardware: self.hardware.clone(),
            hardware_key: self.hardware_key.clone(),
            simulated: self.simulated.iter().map(predicted).collect(),
            measured: self.measured.iter().map(measured).collect(),
            failed: self.failed.clone(),
        }
    }
}
