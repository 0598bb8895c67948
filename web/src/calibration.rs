//! Datasheet and calibrated specs of one device. A calibration from the endpoint is a `HardwareSpec` with key
//! `<base>_measured` kept among the custom devices, so every analysis runs on it unchanged. Pure.

use roofline_core::HardwareSpec;

use crate::state::{Scenario, resolve_hardware};

/// The key of the calibrated spec of `key` (the endpoint's naming).
#[must_use]
pub fn calibrated_key(key: &str) -> String {
    format!("{key}_measured")
}

/// The datasheet spec of the selected device and, when the endpoint calibrated it, the calibrated spec. A
/// calibrated device without a datasheet (a host CPU) is its own datasheet.
#[must_use]
pub fn datasheet_and_calibrated(
    key: &str,
    custom: &[HardwareSpec],
) -> (Option<HardwareSpec>, Option<HardwareSpec>) {
    match key
        .strip_suffix("_measured")
        .and_then(|base| resolve_hardware(base, custom))
    {
        Some(base) => (Some(base), resolve_hardware(key, custom)),
        None => (
            resolve_hardware(key, custom),
            resolve_hardware(&calibrated_key(key), custom),
        ),
    }
}

/// Whether a calibrated spec has a datasheet spec beside it (a host CPU has none).
#[must_use]
pub fn has_datasheet(key: &str, custom: &[HardwareSpec]) -> bool {
    key.strip_suffix("_measured")
        .is_some_and(|base| resolve_hardware(base, custom).is_some())
}

/// The spec the page predicts with: the calibrated one when the scenario asks for it and it exists.
#[must_use]
pub fn effective_hardware(s: &Scenario, custom: &[HardwareSpec]) -> Option<HardwareSpec> {
    let (datasheet, calibrated) = datasheet_and_calibrated(&s.hardware, custom);
    if s.corrections.calibrated {
        calibrated.or(datasheet)
    } else {
        datasheet
    }
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
            key: calibrated_key("gb10"),
            dram_bandwidth_bytes_per_s: 200e9,
            ..gb10
        }
    }

    #[test]
    fn calibrated_spec_is_used_only_when_asked_and_present() {
        let custom = vec![calibrated_gb10()];
        let mut s = Scenario::default();
        assert_eq!(effective_hardware(&s, &custom).unwrap().key, "gb10");
        s.corrections.calibrated = true;
        assert_eq!(effective_hardware(&s, &custom).unwrap().key, "gb10_measured");
        assert_eq!(
            effective_hardware(&s, &[]).unwrap().key,
            "gb10",
            "no calibration: the datasheet"
        );
    }

    #[test]
    fn a_selected_calibrated_spec_pairs_with_its_datasheet() {
        let custom = vec![calibrated_gb10()];
        let (d, c) = datasheet_and_calibrated("gb10_measured", &custom);
        assert_eq!(
            (d.unwrap().key, c.unwrap().key),
            ("gb10".to_owned(), "gb10_measured".to_owned())
        );
        assert!(has_datasheet("gb10_measured", &custom) && !has_datasheet("cpu_host_measured", &custom));
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
