//! The analyze use case (`POST /api/analyze`): the predictions of one GEMM/GEMV shape from `roofline-core`
//! for each requested precision, plus, when asked for, its measurements on the device; every failure is
//! listed with its reason (never an FP16 stand-in).

use roofline_cli::lists::distinct;
use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::wire::{AnalyzeRequest, AnalyzeResponse, ErrorCode, Failure, RUN_ALL_PRECISIONS};
use roofline_core::{GemmShape, HardwareSpec, OperandPrecisions, Operator, Precision, predict};

use super::{UseCaseError, point_of, prediction_of, store_point, within_cap};
use crate::backend::{BackendError, MatmulSpec};
use crate::device::Device;
use crate::protocol::PointLimits;
use crate::store::Store;

/// Most precisions one analyze request may list.
pub const MAX_ANALYZE_PRECISIONS: usize = 16;

/// A checked analyze request: the spec it is predicted on, its shape and the precisions, in order, without
/// duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzePlan {
    /// The spec of the predictions (in the requested mode).
    pub hardware: &'static HardwareSpec,
    /// The shape (and its default precision).
    pub request: AnalyzeRequest,
    /// The precisions to predict and measure.
    pub precisions: Vec<Precision>,
}

impl AnalyzePlan {
    /// Checks `request` on `hardware`: its precisions (`run_all`: every precision of
    /// [`RUN_ALL_PRECISIONS`]) and its shape.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] for an empty or too long list of precisions; core's error for a shape
    /// it refuses (a zero size).
    pub fn new(
        hardware: &'static HardwareSpec,
        request: AnalyzeRequest,
        run_all: bool,
    ) -> Result<AnalyzePlan, UseCaseError> {
        let list: Vec<Precision> = if run_all {
            RUN_ALL_PRECISIONS.to_vec()
        } else {
            request
                .precisions
                .clone()
                .unwrap_or_else(|| vec![request.precision])
        };
        if list.is_empty() || list.len() > MAX_ANALYZE_PRECISIONS {
            return Err(BackendError::InvalidInput(format!(
                "precisions must list 1 to {MAX_ANALYZE_PRECISIONS} precisions, got {}",
                list.len()
            ))
            .into());
        }
        let precisions = distinct(list);
        Operator::matmul(request.m, request.n, request.k, request.precision.into())?;
        Ok(AnalyzePlan {
            hardware,
            request,
            precisions,
        })
    }

    /// The measurement of `precision`.
    fn spec(&self, precision: Precision) -> MatmulSpec {
        MatmulSpec {
            shape: GemmShape::matmul(self.request.m, self.request.n, self.request.k),
            precision,
        }
    }

    /// Predicts every precision as it runs on the device (INT4 without an INT4 matrix path: the W4A16
    /// weight-only GEMM, labelled so; [`OperandPrecisions::run_on`]); unsupported ones go to `failed`.
    fn simulate(&self) -> (Vec<PredictedPoint>, Vec<Failure>) {
        let mut points = Vec::new();
        let mut failed = Vec::new();
        for &precision in &self.precisions {
            let request = &self.request;
            let operands = OperandPrecisions::run_on(precision, self.hardware.arch);
            let prediction = Operator::matmul(request.m, request.n, request.k, operands).and_then(|op| {
                predict(self.hardware, &op).map(|p| PredictedPoint {
                    precision,
                    ..PredictedPoint::of(&op, &p)
                })
            });
            match prediction {
                Ok(point) => points.push(point),
                Err(e @ roofline_core::Error::Unsupported { .. }) => failed.push(Failure {
                    precision,
                    code: ErrorCode::Unsupported,
                    message: format!("prediction: {e}"),
                }),
                Err(e) => failed.push(Failure {
                    precision,
                    code: ErrorCode::InvalidInput,
                    message: e.to_string(),
                }),
            }
        }
        (points, failed)
    }

    /// The response with the predictions, `measured` and the failures.
    fn response(
        &self,
        simulated: Vec<PredictedPoint>,
        measured: Vec<MeasuredPoint>,
        failed: Vec<Failure>,
    ) -> Analysis {
        AnalyzeResponse {
            hardware: self.hardware.name.clone(),
            hardware_key: self.hardware.key.clone(),
            simulated,
            measured,
            failed,
        }
    }
}

/// The answer of an analysis: its predicted and measured points in base units.
pub type Analysis = AnalyzeResponse<MeasuredPoint, PredictedPoint>;

/// The predictions alone (`measure=false`): no device, no lock, no store.
#[must_use]
pub fn predict_only(plan: &AnalyzePlan) -> Analysis {
    let (simulated, failed) = plan.simulate();
    plan.response(simulated, Vec::new(), failed)
}

/// The whole analysis: every measurement is checked against the bounds and the memory budget first (before
/// any allocation), then the predictions are made and the precisions measured one after another while
/// holding the device. Measured points are committed to the store (one it cannot commit is a `not_stored`
/// entry in `failed`). Each point runs under `limits`: past its
/// cap it is a `time_limit` entry in `failed` and the next precision runs; once `limits` is cancelled (the
/// client went away) the measurement stops at its next check and the device is free.
///
/// # Errors
/// [`BackendError::InvalidInput`] or [`BackendError::TooLarge`] from the checks;
/// [`BackendError::Busy`] when the device is taken; [`BackendError::Cancelled`] when `limits` was cancelled.
pub fn analyze(
    device: &Device,
    store: Option<&Store>,
    plan: &AnalyzePlan,
    limits: &PointLimits,
) -> Result<Analysis, UseCaseError> {
    for &precision in &plan.precisions {
        device.check_fits(&plan.spec(precision))?;
    }
    let (simulated, mut failed) = plan.simulate();
    let guard = device.try_acquire()?;
    let mut measured = Vec::new();
    for &precision in &plan.precisions {
        // A run its prediction already puts past the time cap is refused before it holds the device.
        let predicted_s = simulated
            .iter()
            .find(|p| p.precision == precision)
            .map_or(0.0, |p| p.time_s);
        let result = within_cap(predicted_s, &plan.hardware.key, limits)
            .and_then(|()| limits.run(|| guard.measure_matmul(&plan.spec(precision))));
        match result {
            Ok(result) => {
                let predicted = prediction_of(Some(plan.hardware), &result);
                let point = point_of(result, predicted.as_ref().map(|p| p.bound));
                match store_point(store, None, Some(&plan.hardware.key), &point, predicted.as_ref()) {
                    Ok(()) => measured.push(point),
                    Err(mut failure) => {
                        failure.message = format!("measurement: {}", failure.message);
                        failed.push(failure);
                    }
                }
            }
            Err(e @ (BackendError::Busy | BackendError::BusyElsewhere(_) | BackendError::Cancelled)) => {
                return Err(e.into());
            }
            Err(e) => {
                let mut failure = e.failure(precision);
                failure.message = format!("measurement: {}", failure.message);
                failed.push(failure);
            }
        }
    }
    Ok(plan.response(simulated, measured, failed))
}
