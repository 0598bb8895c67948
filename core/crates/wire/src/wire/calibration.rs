//! `POST /api/calibrate`: what was measured and the calibrated spec.

use serde::{Deserialize, Serialize};

use super::error::Failure;
use super::legacy::reads_legacy_units;
use roofline_analysis::measurement::Measurement;
use roofline_analysis::ops::OperandPrecisions;
use roofline_base::hardware::HardwareSpec;
use roofline_base::precision::Precision;
use roofline_base::units::{GIGA, MICRO, TERA};

/// `POST /api/calibrate` body (every field optional; an unknown field is refused, so a misspelt one cannot
/// silently start a full calibration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CalibrateRequest {
    /// Precisions whose achieved peak is measured (default: every precision the backend runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precisions: Option<Vec<Precision>>,
    /// Catalog key whose datasheet spec is the starting point (default: the matched device, else none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_key: Option<String>,
}

/// One calibrated quantity. Reads the older `achieved_tflops` (TFLOP/s) too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct CalibratedPeak {
    /// Precision that ran.
    pub precision: Precision,
    /// Achieved throughput, in FLOP/s.
    pub achieved_flop_per_s: f64,
    /// Shape that achieved it, `MxNxK`.
    pub shape: String,
    /// What ran.
    pub measurement: Measurement,
}

/// A weight-only GEMV the calibration timed (W4A16: INT4 weights, FP16 activations): the bandwidth it streams
/// its bytes at calibrates the weight-only family's small-M ceiling on its activations' path. Never a compute
/// peak: the GEMV is memory-bound, and INT4 has no matrix path on most GPUs it runs on (Hopper, Blackwell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedWeightOnly {
    /// The precision asked for (`INT4`).
    pub precision: Precision,
    /// The operands that ran (INT4 group-128 weights, FP16 activations and output).
    pub operands: OperandPrecisions,
    /// Shape, `MxNxK` (M = 1).
    pub shape: String,
    /// Bytes it moves (weights with their scales, activations, output).
    pub bytes: f64,
    /// Its bytes over its time less the matrix-kernel overhead, in bytes/s (the median of the runs).
    pub bandwidth_bytes_per_s: f64,
    /// What ran (the median run).
    pub measurement: Measurement,
}

/// The fixed per-kernel overhead: a small GEMV's time minus its bytes over the copy bandwidth. Reads the
/// older `kernel_overhead_us` and `gemv_time_us` (µs) too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct KernelOverhead {
    /// Overhead, in seconds (never negative).
    pub kernel_overhead_s: f64,
    /// The GEMV's measured median, in seconds.
    pub gemv_time_s: f64,
    /// The GEMV's shape, `MxNxK`.
    pub shape: String,
    /// Its precision.
    pub precision: Precision,
    /// What ran.
    pub measurement: Measurement,
}

/// The fixed overhead of a vector kernel: a one-row RMSNorm's time minus its bytes over the copy bandwidth.
/// Reads the older `kernel_overhead_us` and `kernel_time_us` (µs) too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct VectorKernelOverhead {
    /// Overhead, in seconds (never negative).
    pub kernel_overhead_s: f64,
    /// The kernel's measured median, in seconds.
    pub kernel_time_s: f64,
    /// The operator's shape label, e.g. `256` (elements of the one row).
    pub shape: String,
    /// What ran.
    pub measurement: Measurement,
}

/// `POST /api/calibrate` answer: measured bandwidth and peaks, and the calibrated spec. The endpoint's store
/// keeps it; it reads the older `bandwidth_gb_s` (GB/s) too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct CalibrationResult {
    /// Measured device-memory copy bandwidth (read + write bytes / time), in bytes/s.
    pub bandwidth_bytes_per_s: f64,
    /// What the copy kernel was and how it was timed.
    pub bandwidth_measurement: Measurement,
    /// Achieved peak per precision.
    pub peaks: Vec<CalibratedPeak>,
    /// Weight-only GEMVs timed (the INT4 W4A16 GEMV on GPUs): small-M bandwidth ceilings, not peaks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weight_only: Vec<CalibratedWeightOnly>,
    /// The per-kernel overhead of matrix kernels, when it could be measured (the spec's peaks'
    /// `kernel_overhead_s`, or its `kernel_overhead_s` without a vector-kernel figure; else 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_overhead: Option<KernelOverhead>,
    /// The per-kernel overhead of vector kernels (norms, activations, copies), when it could be measured
    /// (the spec's `kernel_overhead_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_kernel_overhead: Option<VectorKernelOverhead>,
    /// Precisions that could not be calibrated, and why (the calibration is built from the others).
    pub failed: Vec<Failure>,
    /// The calibrated spec (`provenance: measured`), usable wherever a catalog spec is.
    pub spec: HardwareSpec,
}

reads_legacy_units!(CalibratedPeak, [("achieved_tflops", "achieved_flop_per_s", TERA)]);
reads_legacy_units!(
    KernelOverhead,
    [
        ("kernel_overhead_us", "kernel_overhead_s", MICRO),
        ("gemv_time_us", "gemv_time_s", MICRO)
    ]
);
reads_legacy_units!(
    VectorKernelOverhead,
    [
        ("kernel_overhead_us", "kernel_overhead_s", MICRO),
        ("kernel_time_us", "kernel_time_s", MICRO)
    ]
);
reads_legacy_units!(
    CalibrationResult,
    [("bandwidth_gb_s", "bandwidth_bytes_per_s", GIGA)]
);

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_base::hardware::find_hardware;

    /// A measurement record as the endpoint writes it (its fields did not change).
    const MEASUREMENT: &str = r#"{"backend":"cuda","library":"cuBLASLt 13.1.0","kernel":"cublasLtMatmul","device_name":"NVIDIA H100 80GB HBM3","median_s":1e-5,"p10_s":9e-6,"p90_s":1.1e-5,"samples":100,"l2_flushed":true,"verified":true}"#;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    #[test]
    fn a_calibration_stored_with_the_old_unit_names_reads_in_base_units() {
        let spec = serde_json::to_string(find_hardware("h100_sxm").unwrap()).unwrap();
        let old = format!(
            r#"{{"bandwidth_gb_s":3000.5,"bandwidth_measurement":{MEASUREMENT},"peaks":[{{"precision":"BF16","achieved_tflops":650.25,"shape":"8192x8192x8192","measurement":{MEASUREMENT}}}],"kernel_overhead":{{"kernel_overhead_us":4.5,"gemv_time_us":9.75,"shape":"1x2048x2048","precision":"FP16","measurement":{MEASUREMENT}}},"vector_kernel_overhead":{{"kernel_overhead_us":2.25,"kernel_time_us":2.5,"shape":"256","measurement":{MEASUREMENT}}},"failed":[],"spec":{spec}}}"#
        );
        let result: CalibrationResult = serde_json::from_str(&old).unwrap();
        // 3000.5 GB/s = 3.0005e12 bytes/s; 650.25 TFLOP/s = 6.5025e14 FLOP/s.
        assert!(close(result.bandwidth_bytes_per_s, 3.0005e12));
        assert!(close(result.peaks[0].achieved_flop_per_s, 6.5025e14));
        // 4.5 µs, 9.75 µs, 2.25 µs, 2.5 µs in seconds.
        let matrix = result.kernel_overhead.as_ref().unwrap();
        assert!(close(matrix.kernel_overhead_s, 4.5e-6) && close(matrix.gemv_time_s, 9.75e-6));
        let vector = result.vector_kernel_overhead.as_ref().unwrap();
        assert!(close(vector.kernel_overhead_s, 2.25e-6) && close(vector.kernel_time_s, 2.5e-6));
        assert_eq!(result.peaks[0].measurement.median_s, 1e-5);
        assert_eq!(&result.spec, find_hardware("h100_sxm").unwrap());

        // Written back it has only the new names, and reads unchanged.
        let written = serde_json::to_value(&result).unwrap();
        assert_eq!(written["bandwidth_bytes_per_s"], result.bandwidth_bytes_per_s);
        assert_eq!(written["kernel_overhead"]["gemv_time_s"], matrix.gemv_time_s);
        let text = written.to_string();
        for old_name in ["bandwidth_gb_s", "achieved_tflops", "_us\""] {
            assert!(!text.contains(old_name), "{old_name} in {text}");
        }
        assert_eq!(
            serde_json::from_value::<CalibrationResult>(written).unwrap(),
            result
        );
    }

    #[test]
    fn a_wrong_type_in_an_old_field_is_an_error_naming_the_new_field() {
        let old = format!(
            r#"{{"precision":"BF16","achieved_tflops":"fast","shape":"1x1x1","measurement":{MEASUREMENT}}}"#
        );
        let error = serde_json::from_str::<CalibratedPeak>(&old)
            .unwrap_err()
            .to_string();
        assert!(error.contains("invalid type"), "{error}");
        let missing = serde_json::from_str::<CalibratedPeak>(&format!(
            r#"{{"precision":"BF16","shape":"1x1x1","measurement":{MEASUREMENT}}}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(missing.contains("achieved_flop_per_s"), "{missing}");
    }
}
