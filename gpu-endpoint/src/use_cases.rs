//! The measuring use cases, each written once and called by both the HTTP handlers (`crate::http::routes`)
//! and the command line (`crate::cli`), which only parse, call and present:
//!
//! - [`calibrate`]: bandwidth, kernel overheads and per-precision peaks → a measured `HardwareSpec`.
//! - [`benchmark`]: a job of shapes × precisions, each point beside its prediction.
//! - [`step`]: a job measuring every operator of one model step, then the whole step end to end.
//! - [`analyze`]: the predictions of one shape, and its measurements when asked for.
//!
//! Each takes the device (or its guard, `crate::device::DeviceGuard`), the store and one typed request, and
//! returns its results in base units: the wire's events and answers carrying core's `MeasuredPoint` and
//! `PredictedPoint`, which the presenters convert to the wire's points. Measured points are built here
//! ([`point_of`]) and stored here ([`store_point`]): a point is reported as measured only once it is
//! committed, else as a `not_stored` failure.

pub mod analyze;
pub mod benchmark;
pub mod calibrate;
pub mod step;

use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::wire::{BackendKind, ErrorCode, Failure};
use roofline_core::{Bound, HardwareSpec, Operator, predict};

use crate::backend::{BackendError, Measured};
use crate::protocol::PointLimits;
use crate::store::Store;

/// Why a use case produced no result (per-point failures are results: `failed` entries).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UseCaseError {
    /// Core refused the input: an unknown key, an invalid shape or spec, a format the device lacks.
    #[error(transparent)]
    Input(#[from] roofline_core::Error),
    /// The device refused or failed: bounds, memory, busy, cancelled, or the measurement itself.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A step names no device to predict on, and the measured one has neither a catalog entry nor a stored
    /// calibration (each presenter says how to give one).
    #[error("the {backend} device ({name}) has no catalog entry and no calibration yet")]
    NoPredictedDevice {
        /// The backend that measures.
        backend: BackendKind,
        /// Its device name.
        name: String,
    },
    /// A result was measured but the store could not commit it (a full disk, a file no longer writable): it is
    /// reported as this failure (code `not_stored`), never as a result the next request could rely on.
    #[error("{0}")]
    NotStored(String),
}

/// The measured point of a measurement, with the bound of its prediction when there is one.
#[must_use]
pub fn point_of(measured: Measured, bound: Option<Bound>) -> MeasuredPoint {
    MeasuredPoint {
        bound,
        ..MeasuredPoint::of_operator(
            &measured.op,
            measured.precision,
            &measured.label_suffix,
            measured.measurement,
        )
    }
}

/// The prediction for `op` on `hardware` (`None` without a spec, or when the device lacks the path).
#[must_use]
pub fn predicted_point(hardware: Option<&HardwareSpec>, op: &Operator) -> Option<PredictedPoint> {
    let hardware = hardware?;
    predict(hardware, op).ok().map(|p| PredictedPoint::of(op, &p))
}

/// The prediction of the matmul a measurement really ran (a W4A16 GEMV with its own operands, never its
/// requested INT4 on both sides), carrying the measured point's precision, so the two pair up by precision.
#[must_use]
pub fn prediction_of(hardware: Option<&HardwareSpec>, measured: &Measured) -> Option<PredictedPoint> {
    predicted_point(hardware, &measured.op).map(|p| PredictedPoint {
        precision: measured.precision,
        ..p
    })
}

/// Refuses up front a measurement whose predicted single run (on the spec `on`) is already longer than the
/// per-point cap of `limits`: it could only end as a `time_limit` failure after holding the device for the
/// whole cap (and, on a GPU, a kernel cannot be stopped halfway). The prediction of a faster device than the
/// one measuring refuses less; the checks inside the run stop the rest.
///
/// # Errors
/// [`BackendError::TimeLimit`] naming the predicted time and the cap.
pub fn within_cap(predicted_s: f64, on: &str, limits: &PointLimits) -> Result<(), BackendError> {
    let cap = limits.max_point.as_secs_f64();
    if predicted_s > cap {
        return Err(BackendError::TimeLimit(format!(
            "one run is predicted to take {predicted_s:.3} s on {on}, longer than the {cap:.3} s time cap \
             (--max-point-seconds): not run"
        )));
    }
    Ok(())
}

/// Commits a measured point (with its job, the catalog key it was predicted on and the prediction) to the
/// store, when there is one (`--no-store` runs have none).
///
/// # Errors
/// A [`Failure`] with code `not_stored` (logged) when the store could not commit it (a full disk, a file no
/// longer writable): the caller reports that instead of the point.
pub fn store_point(
    store: Option<&Store>,
    job_id: Option<&str>,
    hardware_key: Option<&str>,
    point: &MeasuredPoint,
    predicted: Option<&PredictedPoint>,
) -> Result<(), Failure> {
    let Some(store) = store else { return Ok(()) };
    store
        .insert_point(job_id, hardware_key, point, predicted)
        .map(drop)
        .map_err(|e| {
            tracing::error!(job_id, point = %point.label, error = %e, "could not store a point");
            Failure {
                precision: point.precision,
                code: ErrorCode::NotStored,
                message: format!(
                    "{} was measured ({:.3} µs) but the store could not commit it, so it is not reported as \
                     measured: {e}",
                    point.label,
                    point.time_s() * 1e6
                ),
            }
        })
}
