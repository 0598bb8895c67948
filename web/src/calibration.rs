//! The spec of each prediction mode for one device: its datasheet (catalog or custom) spec, the reference spec
//! built from it, and its calibrated spec. A calibration from the endpoint is a `HardwareSpec` (key
//! [`roofline_core::calibrated_key`], the device it calibrates in [`HardwareSpec::calibrated_base`]) kept
//! among the custom devices, so every analysis runs on it unchanged. Pure.

use roofline_core::{HardwareSpec, Mode, Provenance};

use crate::presets::{DEFAULT_HARDWARE, resolve_hardware};
use crate::scenario::Scenario;

/// The datasheet and calibrated specs of the selected device.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceSpecs {
    /// The catalog or custom spec; `None` for a calibrated device with nothing to start from (a host CPU).
    pub datasheet: Option<HardwareSpec>,
    /// The endpoint's calibration of the device, if any.
    pub calibrated: Option<HardwareSpec>,
}

/// Why a device has no spec in a mode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModeUnavailable {
    /// A measured device (a host CPU) has no datasheet, so neither datasheet nor reference mode.
    #[error("{device} has no datasheet (a measured device): calibrated only")]
    NoDatasheet {
        /// The device's name.
        device: String,
    },
    /// The device has not been calibrated.
    #[error("no calibration for {device} — measure one in the Calibration panel")]
    NotCalibrated {
        /// The device's name.
        device: String,
    },
    /// Core could not build the reference spec.
    #[error(transparent)]
    Reference(#[from] roofline_core::Error),
}

/// The spec predictions use and, when it is not in the mode asked for, why.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// The spec ([`Mode::of`] it is the mode of every number predicted on it).
    pub spec: HardwareSpec,
    /// Why the mode asked for could not be had, and which mode is shown instead.
    pub notice: Option<String>,
}

impl DeviceSpecs {
    /// The specs of device `key`, which may name the datasheet spec or the calibrated one.
    #[must_use]
    pub fn of(key: &str, custom: &[HardwareSpec]) -> DeviceSpecs {
        let spec = resolve_hardware(key, custom);
        if let Some(base) = spec
            .as_ref()
            .and_then(HardwareSpec::calibrated_base)
            .and_then(|base| resolve_hardware(base, custom))
        {
            return DeviceSpecs {
                datasheet: Some(base),
                calibrated: spec,
            };
        }
        match spec {
            Some(measured) if measured.provenance == Provenance::Measured => DeviceSpecs {
                datasheet: None,
                calibrated: Some(measured),
            },
            datasheet => DeviceSpecs {
                datasheet,
                calibrated: custom.iter().find(|c| c.calibrated_base() == Some(key)).cloned(),
            },
        }
    }

    /// The device's own spec, as entered or catalogued: its datasheet spec, or its calibration when it has
    /// none (a host CPU). `None` for an unknown device.
    #[must_use]
    pub fn own(&self) -> Option<&HardwareSpec> {
        self.datasheet.as_ref().or(self.calibrated.as_ref())
    }

    /// The device's display name (empty for an unknown device).
    fn name(&self) -> &str {
        self.own().map_or("", |h| h.name.as_str())
    }

    /// Why `mode` cannot be had on this device, or `None` when it can.
    #[must_use]
    pub fn unavailable(&self, mode: Mode) -> Option<ModeUnavailable> {
        self.in_mode(mode).err()
    }

    /// The spec of `mode`: the datasheet spec, its reference spec ([`HardwareSpec::reference`], catalog-wide
    /// default fractions for a custom device), or the calibrated spec.
    ///
    /// # Errors
    /// [`ModeUnavailable`]: why the device has no spec in `mode`.
    pub fn in_mode(&self, mode: Mode) -> Result<HardwareSpec, ModeUnavailable> {
        let device = || self.name().to_owned();
        match mode {
            Mode::Datasheet | Mode::Reference => {
                let datasheet = self
                    .datasheet
                    .as_ref()
                    .ok_or_else(|| ModeUnavailable::NoDatasheet { device: device() })?;
                match mode {
                    Mode::Reference => Ok(datasheet.reference()?),
                    _ => Ok(datasheet.clone()),
                }
            }
            Mode::Calibrated => self
                .calibrated
                .clone()
                .ok_or_else(|| ModeUnavailable::NotCalibrated { device: device() }),
        }
    }

    /// The spec predictions use in `mode`. When the device has none, the first of reference, calibrated and
    /// datasheet that it has, with a notice saying why and what is shown: never a silent fallback. `None`
    /// for an unknown device.
    #[must_use]
    pub fn effective(&self, mode: Mode) -> Option<Effective> {
        match self.in_mode(mode) {
            Ok(spec) => Some(Effective { spec, notice: None }),
            Err(reason) => {
                let spec = [Mode::Reference, Mode::Calibrated, Mode::Datasheet]
                    .into_iter()
                    .find_map(|m| self.in_mode(m).ok())?;
                let notice = format!("{reason}; showing {}", Mode::of(&spec));
                Some(Effective {
                    spec,
                    notice: Some(notice),
                })
            }
        }
    }

    /// The roofs drawn beside those of `used` (the spec predictions use): the datasheet roofs as the ideal
    /// bound in reference and calibrated mode, the calibrated roofs in datasheet mode.
    #[must_use]
    pub fn beside(&self, used: &HardwareSpec) -> Option<&HardwareSpec> {
        match Mode::of(used) {
            Mode::Datasheet => self.calibrated.as_ref(),
            Mode::Reference | Mode::Calibrated => self.datasheet.as_ref(),
        }
    }
}

/// The spec the page predicts with for `s`: its device in its mode ([`DeviceSpecs::effective`]).
#[must_use]
pub fn effective_hardware(s: &Scenario, custom: &[HardwareSpec]) -> Option<Effective> {
    DeviceSpecs::of(&s.hardware, custom).effective(s.corrections.mode)
}

/// What the page shows for a scenario: the specs of its device and the spec predictions use.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The device's specs in every mode it has.
    pub specs: DeviceSpecs,
    /// The spec predictions use, and why it is not the one asked for.
    pub effective: Effective,
}

/// Resolves device `key` in `mode` for the page ([`DeviceSpecs::effective`]), or for an unknown device (a
/// removed custom one, a mistyped link) the default device in the same mode, with a notice saying so.
#[must_use]
pub fn resolve(key: &str, mode: Mode, custom: &[HardwareSpec]) -> Resolved {
    let specs = DeviceSpecs::of(key, custom);
    if let Some(effective) = specs.effective(mode) {
        return Resolved { specs, effective };
    }
    let specs = DeviceSpecs::of(DEFAULT_HARDWARE, &[]);
    let e = specs.effective(mode).expect("the catalog has the default device");
    let unknown = format!("unknown device {key}; showing {}", e.spec.name);
    Resolved {
        specs,
        effective: Effective {
            notice: Some(e.notice.map_or(unknown.clone(), |n| format!("{unknown}; {n}"))),
            spec: e.spec,
        },
    }
}

/// The one-line meaning of `mode`.
#[must_use]
pub const fn mode_explanation(mode: Mode) -> &'static str {
    match mode {
        Mode::Datasheet => "the ideal bound: vendor peaks and bandwidth, no per-kernel time",
        Mode::Reference => {
            "what tuned libraries reach: achievable ceilings sourced per device, kernel floors"
        }
        Mode::Calibrated => "your measurements of this device (Calibration panel)",
    }
}

/// `Datasheet`, `Reference` or `Calibrated`: a column or option title.
#[must_use]
pub const fn mode_title(mode: Mode) -> &'static str {
    match mode {
        Mode::Datasheet => "Datasheet",
        Mode::Reference => "Reference",
        Mode::Calibrated => "Calibrated",
    }
}

/// `reference · NVIDIA H100 SXM5 80GB`: the mode and device of every number predicted on `hw`.
#[must_use]
pub fn mode_label(hw: &HardwareSpec) -> String {
    format!("{} · {}", Mode::of(hw), hw.name)
}

/// Adds `spec` to `custom`, replacing a device with the same key.
pub fn upsert(custom: &mut Vec<HardwareSpec>, spec: HardwareSpec) {
    custom.retain(|h| h.key != spec.key);
    custom.push(spec);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibrated_gb10() -> HardwareSpec {
        let gb10 = resolve_hardware("gb10", &[]).unwrap();
        HardwareSpec {
            key: roofline_core::calibrated_key("gb10"),
            calibrates: Some("gb10".into()),
            dram_bandwidth_bytes_per_s: 200e9,
            provenance: Provenance::Measured,
            ..gb10
        }
    }

    fn with_mode(mode: Mode) -> Scenario {
        let mut s = Scenario::default();
        s.corrections.mode = mode;
        s
    }

    #[test]
    fn reference_by_default_datasheet_when_asked() {
        let gb10 = resolve_hardware("gb10", &[]).unwrap();
        let default = effective_hardware(&Scenario::default(), &[]).unwrap();
        assert_eq!(
            default,
            Effective {
                spec: gb10.reference().unwrap(),
                notice: None
            }
        );
        assert_eq!(Mode::of(&default.spec), Mode::Reference);
        assert!(default.spec.dram_bandwidth_bytes_per_s < gb10.dram_bandwidth_bytes_per_s);
        let datasheet = effective_hardware(&with_mode(Mode::Datasheet), &[]).unwrap();
        assert_eq!(datasheet.spec, gb10);
        assert_eq!(mode_label(&default.spec), format!("reference · {}", gb10.name));
    }

    #[test]
    fn calibrated_is_used_when_present_and_its_absence_is_said() {
        let custom = vec![calibrated_gb10()];
        let calibrated = effective_hardware(&with_mode(Mode::Calibrated), &custom).unwrap();
        assert_eq!(
            (calibrated.spec.key.as_str(), calibrated.notice),
            ("gb10_measured", None)
        );
        let missing = effective_hardware(&with_mode(Mode::Calibrated), &[]).unwrap();
        assert_eq!(
            Mode::of(&missing.spec),
            Mode::Reference,
            "no calibration: reference"
        );
        let notice = missing.notice.unwrap();
        assert!(
            notice.starts_with("no calibration for ")
                && notice.ends_with("Calibration panel; showing reference"),
            "{notice}"
        );
    }

    #[test]
    fn the_roofs_beside_are_the_ideal_bound_or_the_calibration() {
        let custom = vec![calibrated_gb10()];
        let specs = DeviceSpecs::of("gb10", &custom);
        let (datasheet, calibrated) = (specs.datasheet.as_ref(), specs.calibrated.as_ref());
        let in_mode = |m| specs.in_mode(m).unwrap();
        assert_eq!(specs.beside(&in_mode(Mode::Reference)), datasheet);
        assert_eq!(specs.beside(&in_mode(Mode::Calibrated)), datasheet);
        assert_eq!(specs.beside(&in_mode(Mode::Datasheet)), calibrated);
        assert_eq!(
            DeviceSpecs::of("gb10", &[]).beside(&in_mode(Mode::Datasheet)),
            None
        );
    }

    #[test]
    fn a_custom_device_gets_reference_ceilings() {
        let mut custom = resolve_hardware("h100_sxm", &[]).unwrap();
        custom.key = "my_h100".into();
        custom.provenance = Provenance::Custom;
        custom.reference = None;
        let s = Scenario {
            hardware: "my_h100".into(),
            ..Scenario::default()
        };
        let e = effective_hardware(&s, std::slice::from_ref(&custom)).unwrap();
        assert_eq!((Mode::of(&e.spec), e.notice), (Mode::Reference, None));
        assert!(e.spec.dram_bandwidth_bytes_per_s < custom.dram_bandwidth_bytes_per_s);
    }

    #[test]
    fn a_device_without_datasheet_is_calibrated_only() {
        let cpu = HardwareSpec {
            provenance: Provenance::Measured,
            ..HardwareSpec::uncatalogued("cpu_host_measured", "Host CPU", "x86-64", 64e9)
        };
        let specs = DeviceSpecs::of("cpu_host_measured", std::slice::from_ref(&cpu));
        assert_eq!(
            (specs.datasheet.as_ref(), specs.calibrated.as_ref()),
            (None, Some(&cpu))
        );
        assert!(specs.unavailable(Mode::Calibrated).is_none());
        assert!(
            specs
                .unavailable(Mode::Datasheet)
                .unwrap()
                .to_string()
                .contains("calibrated only")
        );
        let e = specs.effective(Mode::Reference).unwrap();
        assert_eq!(e.spec, cpu);
        assert!(e.notice.unwrap().ends_with("showing calibrated"));
        assert_eq!(DeviceSpecs::of("nope", &[]).effective(Mode::Reference), None);
        let unknown = resolve("nope", Mode::Reference, &[]);
        assert_eq!(unknown.effective.spec.key, DEFAULT_HARDWARE);
        assert!(
            unknown
                .effective
                .notice
                .unwrap()
                .starts_with("unknown device nope; showing ")
        );
    }

    #[test]
    fn a_selected_calibrated_spec_pairs_with_its_datasheet() {
        let custom = vec![calibrated_gb10()];
        let specs = DeviceSpecs::of("gb10_measured", &custom);
        assert_eq!(
            (specs.datasheet.unwrap().key, specs.calibrated.unwrap().key),
            ("gb10".to_owned(), "gb10_measured".to_owned())
        );
        let mut custom = custom;
        upsert(
            &mut custom,
            HardwareSpec {
                dram_bandwidth_bytes_per_s: 100e9,
                ..calibrated_gb10()
            },
        );
        assert_eq!(custom.len(), 1);
        assert_eq!(custom[0].dram_bandwidth_bytes_per_s, 100e9);
    }
}
