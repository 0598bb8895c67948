//! Accuracy gate of reference mode on the project's measured silicon data: the H100 SXM suite of
//! docs/validation (114 cuBLASLt points measured with gpu-endpoint, 2026-11-23) and the H200 SXM suite of
//! docs/validation/h200.md (92 points, commit bc1c54a, 2026-11-28). Reference ceilings come from published figures
//! (and, on the H100, the run's copy bandwidth), not from these points, so this is a held-out check; a change to
//! the rules, the data or the model that makes it worse fails here.

use roofline_core::measurement::MeasuredPoint;
use roofline_core::validation::{self, ValidationRow, quantile, reference_error, spec_error};
use roofline_core::wire::RooflinePoint;
use roofline_core::{Bound, find_hardware};
use roofline_tests::workspace_root;

/// The points of a `gpu-endpoint bench --json` output under docs/validation/data.
fn suite_points(run: &str) -> Vec<MeasuredPoint> {
    let path = workspace_root()
        .join("docs/validation/data")
        .join(run)
        .join("ours.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("bench --json output");
    json["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|e| {
            let point: RooflinePoint = serde_json::from_value(e["point"].clone()).expect("a RooflinePoint");
            MeasuredPoint::from(&point)
        })
        .collect()
}

fn median_abs(rows: &[&ValidationRow], pick: fn(&ValidationRow) -> Option<f64>) -> f64 {
    let mut v: Vec<f64> = rows.iter().filter_map(|r| pick(r)).map(f64::abs).collect();
    v.sort_by(f64::total_cmp);
    quantile(&v, 0.5).expect("points")
}

/// The rows whose reference prediction is `bound`.
fn reference_bound(rows: &[ValidationRow], bound: Bound) -> Vec<&ValidationRow> {
    rows.iter()
        .filter(|r| r.reference.as_ref().is_ok_and(|c| c.bound == bound))
        .collect()
}

#[test]
fn reference_mode_is_within_5_percent_of_the_h100_measurements_at_the_median() {
    let points = suite_points("h100-sxm");
    assert_eq!(points.len(), 114);
    let rows = validation::rows(&points, find_hardware("h100_sxm").unwrap(), None);
    let all: Vec<&ValidationRow> = rows.iter().collect();
    // Measured when written: reference 3.2 % (datasheet 27 %) over these 114 points.
    assert!(
        median_abs(&all, reference_error) <= 5.0,
        "{}",
        median_abs(&all, reference_error)
    );
    assert!(
        median_abs(&all, spec_error) >= 20.0,
        "the datasheet is the ideal bound"
    );
    for bound in [Bound::Memory, Bound::Compute] {
        let part = reference_bound(&rows, bound);
        assert!(part.len() >= 30, "{bound:?}: {}", part.len());
        assert!(median_abs(&part, reference_error) <= 6.0, "{bound:?}");
    }
    // Kernels of 50 µs and more, per precision family (the held-out targets: BF16 ≤ 15 %, FP8 ≤ 20 %).
    for (precision, target) in [("BF16", 15.0), ("FP16", 15.0), ("FP8_E4M3", 20.0)] {
        let big: Vec<&ValidationRow> = rows
            .iter()
            .filter(|r| r.precision.name() == precision && r.measured_s >= 50e-6)
            .collect();
        assert!(!big.is_empty(), "{precision}");
        assert!(median_abs(&big, reference_error) <= target, "{precision}");
    }
}

#[test]
fn reference_mode_is_within_8_percent_of_the_h200_measurements_at_the_median() {
    let points = suite_points("h200-sxm/bc1c54a");
    // FP16, BF16, FP8 and INT8 on 22 shapes each, and the W4A16 GEMV on 4 (docs/validation/h200.md).
    assert_eq!(points.len(), 92);
    let rows = validation::rows(&points, find_hardware("h200_sxm").unwrap(), None);
    let all: Vec<&ValidationRow> = rows.iter().collect();
    // Measured when written (commit bc1c54a): reference 5.8 %, datasheet 43.6 % over these 92 points.
    let reference = median_abs(&all, reference_error);
    assert!(reference <= 8.0, "reference median |error| {reference:.1} %");
    let datasheet = median_abs(&all, spec_error);
    assert!(
        datasheet >= 20.0,
        "the datasheet is the ideal bound: {datasheet:.1} %"
    );
    // When written: memory-bound 6.9 % over 52 points, compute-bound 4.6 % over 40.
    for (bound, target) in [(Bound::Memory, 9.0), (Bound::Compute, 7.0)] {
        let part = reference_bound(&rows, bound);
        assert!(part.len() >= 30, "{bound:?}: {} points", part.len());
        let median = median_abs(&part, reference_error);
        assert!(
            median <= target,
            "{bound:?}: reference median |error| {median:.1} % > {target} %"
        );
    }
}
