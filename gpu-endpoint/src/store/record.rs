//! How a stored row holds its point and prediction: core's `MeasuredPoint` and `PredictedPoint` as JSON
//! records in base units (FLOP, bytes, seconds, FLOP/s), and the migration that rewrites the rows of older
//! stores, which held them as the wire's seed-unit `RooflinePoint` (µs, TFLOP/s, GB/s).

use roofline_core::measurement::{MeasuredOp, MeasuredPoint, Measurement, PredictedPoint};
use roofline_core::wire::RooflinePoint;
use roofline_core::{ActivationScale, Bound, GemmShape, Mode, OpKind, OperandPrecisions, Precision};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::StoreError;

/// A measured point as stored (`points.point_json`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PointRecord {
    kind: OpKind,
    /// The operator's shape label.
    shape: String,
    /// A matmul's dimensions; absent for any other operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gemm: Option<GemmShape>,
    operands: OperandPrecisions,
    precision: Precision,
    label: String,
    flops: f64,
    bytes: f64,
    measurement: Measurement,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    activation_quantization: Option<ActivationScale>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bound: Option<Bound>,
}

/// A prediction as stored (`points.predicted_json`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictionRecord {
    label: String,
    shape: String,
    kind: OpKind,
    operands: OperandPrecisions,
    precision: Precision,
    arithmetic_intensity: f64,
    attainable_flop_per_s: f64,
    time_s: f64,
    bytes: f64,
    bound: Bound,
    mode: Mode,
}

/// The stored JSON of `point`.
pub(super) fn point_json(point: &MeasuredPoint) -> Result<String, StoreError> {
    let gemm = match &point.op {
        MeasuredOp::Matmul(shape) => Some(*shape),
        MeasuredOp::Other { .. } => None,
    };
    Ok(serde_json::to_string(&PointRecord {
        kind: point.op.kind(),
        shape: point.op.shape_label(),
        gemm,
        operands: point.operands,
        precision: point.precision,
        label: point.label.clone(),
        flops: point.flops,
        bytes: point.bytes,
        measurement: point.measurement.clone(),
        activation_quantization: point.activation_quantization,
        bound: point.bound,
    })?)
}

/// The point of its stored JSON.
pub(super) fn point_of(json: &str) -> Result<MeasuredPoint, StoreError> {
    let r: PointRecord = serde_json::from_str(json)?;
    let op = match r.gemm {
        Some(shape) => MeasuredOp::Matmul(shape),
        None => MeasuredOp::Other {
            kind: r.kind,
            shape: r.shape,
        },
    };
    Ok(MeasuredPoint {
        op,
        operands: r.operands,
        precision: r.precision,
        label: r.label,
        flops: r.flops,
        bytes: r.bytes,
        measurement: r.measurement,
        activation_quantization: r.activation_quantization,
        bound: r.bound,
    })
}

/// The stored JSON of `predicted`.
pub(super) fn prediction_json(p: &PredictedPoint) -> Result<String, StoreError> {
    Ok(serde_json::to_string(&PredictionRecord {
        label: p.label.clone(),
        shape: p.shape.clone(),
        kind: p.kind,
        operands: p.operands,
        precision: p.precision,
        arithmetic_intensity: p.arithmetic_intensity,
        attainable_flop_per_s: p.attainable_flop_per_s,
        time_s: p.time_s,
        bytes: p.bytes,
        bound: p.bound,
        mode: p.mode,
    })?)
}

/// The prediction of its stored JSON.
pub(super) fn prediction_of(json: &str) -> Result<PredictedPoint, StoreError> {
    let r: PredictionRecord = serde_json::from_str(json)?;
    Ok(PredictedPoint {
        label: r.label,
        shape: r.shape,
        kind: r.kind,
        operands: r.operands,
        precision: r.precision,
        arithmetic_intensity: r.arithmetic_intensity,
        attainable_flop_per_s: r.attainable_flop_per_s,
        time_s: r.time_s,
        bytes: r.bytes,
        bound: r.bound,
        mode: r.mode,
    })
}

/// Rows rewritten per statement of [`to_base_units`].
const BATCH: i64 = 500;

/// Migration to version 4: every row's point and prediction, stored as the wire's `RooflinePoint`, read
/// through the wire crate's exact conversion and rewritten as base-unit records, so each lists the same on
/// the wire as before. A row that does not decode is left as it was (listings skip and count it, as they
/// did).
pub(super) fn to_base_units(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let mut select =
        tx.prepare("SELECT id, point_json, predicted_json FROM points WHERE id > ?1 ORDER BY id LIMIT ?2")?;
    let mut update = tx.prepare("UPDATE points SET point_json = ?2, predicted_json = ?3 WHERE id = ?1")?;
    let mut after = 0i64;
    loop {
        let rows = select
            .query_map(params![after, BATCH], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let Some(&(last, _, _)) = rows.last() else {
            return Ok(());
        };
        for (id, point, predicted) in rows {
            if let Ok((point, predicted)) = rewritten(&point, predicted.as_deref()) {
                update.execute(params![id, point, predicted])?;
            }
        }
        after = last;
    }
}

/// A row's point and prediction in seed units, rewritten as base-unit records.
fn rewritten(point: &str, predicted: Option<&str>) -> Result<(String, Option<String>), StoreError> {
    let wire: RooflinePoint = serde_json::from_str(point)?;
    let predicted = predicted.map(serde_json::from_str::<RooflinePoint>).transpose()?;
    Ok((
        point_json(&MeasuredPoint::from(&wire))?,
        predicted
            .map(|p| prediction_json(&PredictedPoint::from(&p)))
            .transpose()?,
    ))
}
