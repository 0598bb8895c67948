//! A model step measured operator by operator, against its prediction: the endpoint's step job and the page's
//! step table compare the same way.
//!
//! Each measured row adds its count × measured time and its count × predicted time ([`StepTotals::add`]);
//! the step's ratio is the one over the measured rows only, so a row without a measurement changes neither
//! side. The whole step timed end to end is compared with the predicted step time, and its difference from
//! the sum of the operators measured alone ([`StepTotals::end_to_end_overhead_s`]) is what the
//! sum-of-kernels model leaves out: launch gaps and per-kernel overhead, or cache reuse when negative.

/// measured ÷ predicted time (1 is a perfect prediction, 2 twice as slow as predicted).
#[must_use]
pub fn measured_over_predicted(measured_s: f64, predicted_s: f64) -> f64 {
    measured_s / predicted_s
}

/// Σ count × time over the measured rows of a step, measured and predicted, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepTotals {
    /// Rows with a measurement.
    pub measured_rows: u32,
    /// Σ count × measured time of one instance, in seconds.
    pub measured_s: f64,
    /// Σ count × predicted time of one instance over the same rows, in seconds.
    pub predicted_s: f64,
}

impl StepTotals {
    /// Adds a measured row that runs `count` times per step, one instance measured at `measured_s` and
    /// predicted at `predicted_s`.
    pub fn add(&mut self, count: u32, measured_s: f64, predicted_s: f64) {
        self.measured_rows += 1;
        self.measured_s += f64::from(count) * measured_s;
        self.predicted_s += f64::from(count) * predicted_s;
    }

    /// measured ÷ predicted over the measured rows; `None` before any row was measured.
    #[must_use]
    pub fn measured_over_predicted(&self) -> Option<f64> {
        (self.measured_rows > 0 && self.predicted_s > 0.0)
            .then(|| measured_over_predicted(self.measured_s, self.predicted_s))
    }

    /// The whole step timed end to end (`end_to_end_s`) minus the sum of its operators measured alone, in
    /// seconds: launch gaps and per-kernel overhead when positive, cache reuse between kernels when negative.
    #[must_use]
    pub fn end_to_end_overhead_s(&self, end_to_end_s: f64) -> f64 {
        end_to_end_s - self.measured_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_totals_count_each_row_times_its_count() {
        let mut totals = StepTotals::default();
        assert_eq!(totals.measured_over_predicted(), None);
        // 32 layers of a projection measured at 30 µs against 20 µs predicted, one logits GEMM at its
        // prediction of 100 µs: (32·30 + 100) / (32·20 + 100) = 1060 / 740.
        totals.add(32, 30e-6, 20e-6);
        totals.add(1, 100e-6, 100e-6);
        assert_eq!(totals.measured_rows, 2);
        assert!((totals.measured_s - 1060e-6).abs() < 1e-15);
        assert!((totals.predicted_s - 740e-6).abs() < 1e-15);
        assert!((totals.measured_over_predicted().unwrap() - 1060.0 / 740.0).abs() < 1e-12);
        // The step end to end in 1.1 ms: 40 µs more than its operators alone; 1.1 ms / 0.55 ms = 2.
        assert!((totals.end_to_end_overhead_s(1.1e-3) - 40e-6).abs() < 1e-15);
        assert_eq!(measured_over_predicted(1.1e-3, 0.55e-3), 2.0);
    }
}
