//! The right panel's tabs.

/// A tab of the right panel, in order; its button's id is `tab-<index>` (`tab-0` … `tab-4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    /// Kernel shape, precisions, predictions and the spot check (open by default).
    #[default]
    Kernel,
    /// The ranked precision configs.
    Advisor,
    /// The format reference.
    Formats,
    /// Benchmark jobs on the endpoint.
    Benchmark,
    /// Measured points against their predictions, and calibration.
    Validation,
}

impl Tab {
    /// Every tab, in order.
    pub const ALL: [Tab; 5] = [
        Tab::Kernel,
        Tab::Advisor,
        Tab::Formats,
        Tab::Benchmark,
        Tab::Validation,
    ];

    /// The button's text.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Tab::Kernel => "Kernel",
            Tab::Advisor => "Advisor",
            Tab::Formats => "Formats",
            Tab::Benchmark => "Benchmark",
            Tab::Validation => "Validation",
        }
    }

    /// The button's id, `tab-<index>`.
    #[must_use]
    pub fn id(self) -> String {
        format!("tab-{}", self as usize)
    }

    /// The tab `step` places after this one, wrapping around (arrow keys: 1 right, -1 left).
    #[must_use]
    pub const fn after(self, step: isize) -> Tab {
        let n = Tab::ALL.len() as isize;
        Tab::ALL[(self as isize + step).rem_euclid(n) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_keep_their_ids_and_wrap_around() {
        assert_eq!(Tab::Kernel.id(), "tab-0");
        assert_eq!(Tab::Validation.id(), "tab-4");
        assert_eq!(Tab::Validation.after(1), Tab::Kernel);
        assert_eq!(Tab::Kernel.after(-1), Tab::Validation);
        assert_eq!(Tab::Advisor.after(1), Tab::Formats);
    }
}
