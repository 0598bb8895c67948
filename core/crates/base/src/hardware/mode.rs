//! Where a spec's numbers come from ([`Provenance`]) and which ceilings a prediction runs against ([`Mode`]).

use std::fmt;

use crate::error::Error;

/// Where the numbers of a spec come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Provenance {
    /// Vendor datasheets and the other sources listed in `sources`.
    Datasheet,
    /// Datasheet peaks and bandwidth scaled by the achievable fractions of [`ReferenceCeilings`](super::ReferenceCeilings), plus their
    /// per-kernel floors (`HardwareSpec::reference`).
    Reference,
    /// Entered by the user.
    Custom,
    /// Measured on a live device by the endpoint (`sources` says how).
    Measured,
}

/// Which ceilings a prediction runs against; every predicted number says its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Mode {
    /// The ideal bound: datasheet peaks and bandwidth, no per-kernel time, no corrections.
    Datasheet,
    /// The default: what tuned libraries reach ([`ReferenceCeilings`](super::ReferenceCeilings)), per-kernel floors, and the
    /// realistic corrections (`Corrections::REALISTIC` of roofline-analysis).
    #[default]
    Reference,
    /// The user's own measurements (a spec with [`Provenance::Measured`]) and the realistic corrections.
    Calibrated,
}

impl Mode {
    /// Every mode, in display order.
    pub const ALL: [Mode; 3] = [Mode::Datasheet, Mode::Reference, Mode::Calibrated];

    /// `datasheet`, `reference` or `calibrated`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Datasheet => "datasheet",
            Mode::Reference => "reference",
            Mode::Calibrated => "calibrated",
        }
    }

    /// Parses `datasheet`, `reference` or `calibrated` (case-insensitive).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the valid modes.
    pub fn parse(s: &str) -> Result<Mode, Error> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown mode {s:?}: use datasheet, reference or calibrated"
                ))
            })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::find_hardware;

    #[test]
    fn modes_resolve_or_say_why_not() {
        let h100 = find_hardware("h100_sxm").unwrap();
        assert_eq!(h100.in_mode(Mode::Datasheet).unwrap(), *h100);
        assert_eq!(Mode::of(&h100.in_mode(Mode::Reference).unwrap()), Mode::Reference);
        let err = h100.in_mode(Mode::Calibrated).unwrap_err().to_string();
        assert!(err.contains("calibrate"), "{err}");
        assert_eq!(Mode::parse(" Reference ").unwrap(), Mode::Reference);
        assert!(Mode::parse("ideal").is_err());
        assert_eq!(Mode::default(), Mode::Reference);
    }
}
