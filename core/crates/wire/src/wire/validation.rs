//! `roofline validate --json`: measured points against their predictions in every mode.

use serde::{Deserialize, Serialize};

use roofline_analysis::roofline::Bound;
use roofline_analysis::validation::{Check, ErrorStats, Regime};
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;
use roofline_base::precision::Precision;

/// One mode's prediction of a measured point (`validate --json`); every field but `reason` is absent when
/// there is no prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeCheck {
    /// Predicted time, in seconds.
    pub predicted_s: Option<f64>,
    /// The roof that limits the prediction.
    pub bound: Option<Bound>,
    /// (measured − predicted) / predicted, in percent.
    pub error_pct: Option<f64>,
    /// Why there is no prediction.
    pub reason: Option<String>,
}

impl ModeCheck {
    /// The check of one mode, or why there is none.
    #[must_use]
    pub fn of(check: &Result<Check, Error>) -> ModeCheck {
        match check {
            Ok(c) => ModeCheck {
                predicted_s: Some(c.predicted_s),
                bound: Some(c.bound),
                error_pct: Some(c.error_pct),
                reason: None,
            },
            Err(e) => ModeCheck {
                predicted_s: None,
                bound: None,
                error_pct: None,
                reason: Some(e.to_string()),
            },
        }
    }
}

/// One measured point and its predictions in every mode (`validate --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidatedPoint {
    /// Shape `MxNxK`.
    pub shape: String,
    /// Precision that ran.
    pub precision: Precision,
    /// GEMV or GEMM.
    pub regime: Regime,
    /// What ran (the measurement's kernel).
    pub kernel: String,
    /// Measured median, in seconds.
    pub measured_s: f64,
    /// On the datasheet spec.
    pub datasheet: ModeCheck,
    /// On the reference spec.
    pub reference: ModeCheck,
    /// On the calibrated spec, when one was given.
    pub calibrated: Option<ModeCheck>,
}

/// Error statistics of each mode (`validate --json`); empty for a mode without predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeStats {
    /// Datasheet mode.
    pub datasheet: Vec<ErrorStats>,
    /// Reference mode.
    pub reference: Vec<ErrorStats>,
    /// Calibrated mode.
    pub calibrated: Vec<ErrorStats>,
}

/// `roofline validate --json` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// The catalog spec the datasheet predictions used.
    pub datasheet_spec: HardwareSpec,
    /// The calibrated spec, when one was given.
    pub calibrated_spec: Option<HardwareSpec>,
    /// Every measured point.
    pub rows: Vec<ValidatedPoint>,
    /// Median and p90 |error| by precision and regime, per mode.
    pub stats: ModeStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_json_reads_and_writes_back_unchanged() {
        // A row and a statistic of `roofline validate --json`, as written before validation compiled without
        // serde: regimes upper-case, a mode without a prediction says why.
        let row = r#"{"shape":"1x4096x4096","precision":"FP16","regime":"GEMV","kernel":"cublasLt","measured_s":1.75e-5,"datasheet":{"predicted_s":1.0e-5,"bound":"memory","error_pct":75.0,"reason":null},"reference":{"predicted_s":null,"bound":null,"error_pct":null,"reason":"no reference"},"calibrated":null}"#;
        let stats =
            r#"{"precision":"FP16","regime":"GEMM","n_points":3,"median_abs_pct":4.5,"p90_abs_pct":9.0}"#;
        let parsed: ValidatedPoint = serde_json::from_str(row).unwrap();
        assert_eq!(
            (parsed.regime, parsed.datasheet.bound),
            (Regime::Gemv, Some(Bound::Memory))
        );
        let parsed_stats: ErrorStats = serde_json::from_str(stats).unwrap();
        for (text, value) in [
            (row, serde_json::to_value(&parsed).unwrap()),
            (stats, serde_json::to_value(&parsed_stats).unwrap()),
        ] {
            assert_eq!(value, serde_json::from_str::<serde_json::Value>(text).unwrap());
        }
    }
}
