//! Prediction error of measured points: core's validation (`roofline_core::validation`) in the page's columns
//! (one per mode the device has) plus the page's colour classes.

use roofline_core::measured_device::same_device;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::{Error, Mode};

pub use roofline_core::validation::*;

use crate::calibration::DeviceSpecs;
use crate::format;

/// How far `point` lies above the roofline of `spec` at its arithmetic intensity, as a fraction (achieved
/// FLOP/s over min(peak, AI · bandwidth), minus 1); `None` at or below it, or when `spec` has no peak for
/// the precision it computes in. A point above a calibrated roof means the calibration underestimates the
/// device (a noisy or loaded calibration run).
#[must_use]
pub fn above_roof(point: &MeasuredPoint, spec: &roofline_core::HardwareSpec) -> Option<f64> {
    let peak = spec.dense_peak_for(point.operands.compute()).ok()?;
    let roof = peak.min(point.arithmetic_intensity() * spec.dram_bandwidth_bytes_per_s);
    let excess = point.achieved_flop_per_s() / roof - 1.0;
    (excess.is_finite() && excess > 0.0).then_some(excess)
}

/// A measured point's predicted time, error and the error's class on `hw`, as a results table shows them: a
/// point from another device than `hw`'s gets no prediction and no error (`—`, class `other-device`; the
/// table's not-compared row says why); one `hw` cannot predict gets core's reason.
#[must_use]
pub fn cells(point: &MeasuredPoint, hw: &roofline_core::HardwareSpec) -> (String, String, &'static str) {
    if !same_device(point, hw) {
        return ("—".to_owned(), "—".to_owned(), "other-device");
    }
    match check(point, hw) {
        Ok(c) => (
            format::duration(c.predicted_s),
            format::signed_percent(c.error_pct),
            band_class(Band::of(c.error_pct)),
        ),
        Err(e) => (format::failure(&e), String::new(), ""),
    }
}

/// CSS class of a band: `err-good`, `err-fair`, `err-poor`.
#[must_use]
pub const fn band_class(band: Band) -> &'static str {
    match band {
        Band::Good => "err-good",
        Band::Fair => "err-fair",
        Band::Poor => "err-poor",
    }
}

/// The Validation tab's prediction columns (one per mode the device has: datasheet and reference, and
/// calibrated when it is calibrated; calibrated alone for a device without a datasheet) and one row per
/// point. Empty for an unknown device.
#[must_use]
pub fn table(points: &[MeasuredPoint], specs: &DeviceSpecs) -> (Vec<Mode>, Vec<ValidationRow>) {
    match (&specs.datasheet, &specs.calibrated) {
        (Some(d), c) => {
            let modes = [Mode::Datasheet, Mode::Reference]
                .into_iter()
                .chain(c.as_ref().map(|_| Mode::Calibrated))
                .collect();
            (modes, rows(points, d, c.as_ref()))
        }
        // The calibrated spec stands in for the datasheet core's rows start from; only its column is shown.
        (None, Some(c)) => (vec![Mode::Calibrated], rows(points, c, Some(c))),
        (None, None) => (Vec::new(), Vec::new()),
    }
}

/// The prediction of `row` in the column of `mode`, if the row has one.
#[must_use]
pub fn check_in(row: &ValidationRow, mode: Mode) -> Option<&Result<Check, Error>> {
    match mode {
        Mode::Datasheet => Some(&row.spec),
        Mode::Reference => Some(&row.reference),
        Mode::Calibrated => row.calibrated.as_ref(),
    }
}

/// The error of `row` in the column of `mode`, if it has a prediction there.
#[must_use]
pub fn error_in(row: &ValidationRow, mode: Mode) -> Option<f64> {
    match mode {
        Mode::Datasheet => spec_error(row),
        Mode::Reference => reference_error(row),
        Mode::Calibrated => calibrated_error(row),
    }
}

#[cfg(test)]
mod tests {
    use roofline_core::{HardwareSpec, Precision, Provenance};

    use super::*;
    use crate::measured::tests::measured_point;

    #[test]
    fn a_point_above_the_roof_is_flagged_with_its_excess() {
        use roofline_core::measurement::Measurement;
        // GB10 FP16 GEMV 1x4096x4096: 33,554,432 FLOP over 33,570,816 B at 273 GB/s is a roof of
        // 273e9 · 33,554,432 / 33,570,816 = 272.87 GFLOP/s. Measured in 50 µs it ran at 671.09 GFLOP/s:
        // 1.459 above; in 200 µs (167.8 GFLOP/s) it is below.
        let gb10 = roofline_core::find_hardware("gb10").unwrap();
        let op = roofline_core::Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
        let point = |median_s| {
            let m = Measurement {
                median_s,
                ..Measurement::default()
            };
            MeasuredPoint::of_operator(&op, Precision::Fp16, "", m)
        };
        let excess = above_roof(&point(50e-6), gb10).unwrap();
        let expected = (33_554_432.0 / 50e-6) / (273e9 * 33_554_432.0 / 33_570_816.0) - 1.0;
        assert!(
            (excess - expected).abs() < 1e-9 && (excess - 1.459).abs() < 1e-3,
            "{excess}"
        );
        assert_eq!(above_roof(&point(200e-6), gb10), None);
    }

    #[test]
    fn one_column_per_mode_the_device_has() {
        let point = measured_point("1x4096x4096", Precision::Fp16, 150e-6, 0.0);
        let gb10 = DeviceSpecs::of("gb10", &[]);
        let (modes, rows) = table(std::slice::from_ref(&point), &gb10);
        assert_eq!(modes, [Mode::Datasheet, Mode::Reference]);
        let (datasheet, reference) = (
            check_in(&rows[0], Mode::Datasheet).unwrap().as_ref().unwrap(),
            check_in(&rows[0], Mode::Reference).unwrap().as_ref().unwrap(),
        );
        assert!(
            reference.predicted_s > datasheet.predicted_s,
            "reference ceilings are lower"
        );
        assert_eq!(error_in(&rows[0], Mode::Reference), Some(reference.error_pct));
        assert_eq!(error_in(&rows[0], Mode::Calibrated), None);

        let cpu = HardwareSpec {
            provenance: Provenance::Measured,
            ..HardwareSpec::uncatalogued("cpu_host_measured", "Host CPU", "x86-64", 64e9)
        };
        let (modes, _) = table(&[point], &DeviceSpecs::of("cpu_host_measured", &[cpu]));
        assert_eq!(modes, [Mode::Calibrated]);
    }
}
