//! `/api/analyze` as a plain blocking function: predictions from `roofline-core` plus measurements from the
//! device for each requested precision, every failure listed with its reason (never an FP16 stand-in).

use roofline_core::wire::{
    AnalyzeRequest, AnalyzeResponse, ErrorCode, Failure, RUN_ALL_PRECISIONS, RooflinePoint,
};
use roofline_core::{HardwareSpec, Operator, Precision, predict};

use crate::backend::{BackendError, Device, MatmulSpec, point_of};
use crate::error::ApiError;
use crate::protocol::PointLimits;
use crate::store::Store;

/// Most precisions one analyze request may list.
pub const MAX_ANALYZE_PRECISIONS: usize = 16;

/// The precisions an analyze request asks for, in order, without duplicates.
///
/// # Errors
/// [`ApiError::BadRequest`] for an empty or too long list.
pub fn requested_precisions(request: &AnalyzeRequest, run_all: bool) -> Result<Vec<Precision>, ApiError> {
    let list: Vec<Precision> = if run_all {
        RUN_ALL_PRECISIONS.to_vec()
    } else {
        request
            .precisions
            .clone()
            .unwrap_or_else(|| vec![request.precision])
    };
    if list.is_empty() || list.len() > MAX_ANALYZE_PRECISIONS {
        return Err(ApiError::BadRequest(format!(
            "precisions must list 1 to {MAX_ANALYZE_PRECISIONS} precisions, got {}",
            list.len()
        )));
    }
    let mut out: Vec<Precision> = Vec::new();
    for p in list {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Validates the shape for prediction and measurement (400 on a bad shape, 413 when it cannot fit).
///
/// # Errors
/// [`ApiError`].
pub fn validate(device: &Device, request: &AnalyzeRequest, precisions: &[Precision]) -> Result<(), ApiError> {
    Operator::matmul(request.m, request.n, request.k, request.precision.into())?;
    for &precision in precisions {
        let spec = MatmulSpec {
            m: request.m,
            n: request.n,
            k: request.k,
            precision,
        };
        device.check_fits(&spec)?;
    }
    Ok(())
}

/// Predicts every precision on `hardware` (unsupported ones go to `failed`).
#[must_use]
pub fn simulate(
    hardware: &HardwareSpec,
    request: &AnalyzeRequest,
    precisions: &[Precision],
) -> (Vec<RooflinePoint>, Vec<Failure>) {
    let mut points = Vec::new();
    let mut failed = Vec::new();
    for &precision in precisions {
        let prediction = Operator::matmul(request.m, request.n, request.k, precision.into())
            .and_then(|op| predict(hardware, &op).map(|p| RooflinePoint::simulated(&op, &p)));
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

/// The predictions alone (`measure=false`): no device, no lock, no store.
///
/// # Errors
/// [`ApiError::BadRequest`] for a shape core refuses (a zero size).
pub fn predict_only(
    hardware: &HardwareSpec,
    request: &AnalyzeRequest,
    precisions: &[Precision],
) -> Result<AnalyzeResponse, ApiError> {
    Operator::matmul(request.m, request.n, request.k, request.precision.into())?;
    let (simulated, failed) = simulate(hardware, request, precisions);
    Ok(AnalyzeResponse {
        hardware: hardware.name.clone(),
        hardware_key: hardware.key.clone(),
        simulated,
        measured: Vec::new(),
        failed,
    })
}

/// Runs the whole analysis: predictions, then measurements one precision after another while holding the
/// device (503 busy if a job holds it). Measured points are committed to the store. Each point runs under
/// `limits`: past its cap it is a `time_limit` entry in `failed` and the next precision runs; once `limits`
/// is cancelled (the client went away) the measurement stops within one sample and the device is free.
///
/// # Errors
/// [`ApiError::Busy`] when the device is taken; `cancelled` when `limits` was cancelled.
pub fn analyze(
    device: &Device,
    store: Option<&Store>,
    hardware: &'static HardwareSpec,
    request: &AnalyzeRequest,
    precisions: &[Precision],
    limits: &PointLimits,
) -> Result<AnalyzeResponse, ApiError> {
    let (simulated, mut failed) = simulate(hardware, request, precisions);
    let guard = device.try_acquire()?;
    let mut measured = Vec::new();
    for &precision in precisions {
        let spec = MatmulSpec {
            m: request.m,
            n: request.n,
            k: request.k,
            precision,
        };
        match limits.run(|| guard.measure_matmul(&spec)) {
            Ok(result) => {
                let predicted = simulated.iter().find(|p| p.precision == result.precision);
                let point = point_of(result, predicted.map(|p| p.bottleneck));
                if let Some(store) = store
                    && let Err(e) = store.insert_point(None, Some(&hardware.key), &point, predicted)
                {
                    tracing::error!(error = %e, "could not store a point");
                }
                measured.push(point);
            }
            Err(e @ (BackendError::Busy | BackendError::Cancelled)) => return Err(e.into()),
            Err(e) => {
                let mut failure = e.failure(precision);
                failure.message = format!("measurement: {}", failure.message);
                failed.push(failure);
            }
        }
    }
    Ok(AnalyzeResponse {
        hardware: hardware.name.clone(),
        hardware_key: hardware.key.clone(),
        simulated,
        measured,
        failed,
    })
}
