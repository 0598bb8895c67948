//! Which device took a measured point, and whether a spec may be compared with it: a measurement is only
//! ever compared with predictions for the device that ran it. Works on domain [`MeasuredPoint`]s.

use crate::measurement::{BackendKind, MeasuredPoint};
pub use roofline_base::hardware::catalog_key_of_device_name;
use roofline_base::hardware::{HardwareSpec, find_hardware};

/// The device that ran a measured point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointDevice {
    /// A catalog device: its key (from the endpoint's `device_key`, else matched from the device name on a
    /// GPU backend).
    Catalog(String),
    /// A device outside the catalog (a CPU, an unknown GPU), by name.
    Named(String),
    /// A point that does not say (a simulated point, an imported record without a device name).
    Unknown,
}

impl PointDevice {
    /// The device of `p`. A CPU (or fake) backend's device is never a catalog GPU, whatever its name says.
    #[must_use]
    pub fn of(p: &MeasuredPoint) -> PointDevice {
        let m = &p.measurement;
        if let Some(key) = m.device_key.as_deref().and_then(|k| find_hardware(k).ok()) {
            return PointDevice::Catalog(key.key.clone());
        }
        let gpu_backend = !matches!(m.backend, BackendKind::Cpu | BackendKind::Fake);
        match catalog_key_of_device_name(&m.device_name) {
            Some(key) if gpu_backend => PointDevice::Catalog(key.to_owned()),
            _ if m.device_name.trim().is_empty() => PointDevice::Unknown,
            _ => PointDevice::Named(m.device_name.clone()),
        }
    }

    /// Text for notes and filters: the catalog device's name, the device name, or `unknown device`.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            PointDevice::Catalog(k) => find_hardware(k).map_or_else(|_| k.clone(), |h| h.name.clone()),
            PointDevice::Named(n) => n.clone(),
            PointDevice::Unknown => "unknown device".to_owned(),
        }
    }
}

/// The catalog key a spec describes: its own key, or the catalog device it calibrates
/// ([`HardwareSpec::calibrated_base`]).
#[must_use]
pub fn catalog_key_of_spec(spec: &HardwareSpec) -> Option<&'static str> {
    std::iter::once(spec.key.as_str())
        .chain(spec.calibrated_base())
        .find_map(|k| find_hardware(k).ok())
        .map(|h| h.key.as_str())
}

/// Whether predictions on `spec` may be compared with the measured point `p`: the same catalog device, or,
/// for a device outside the catalog, a spec calibrated on the device of that name (its name says
/// `measured on <device>`). A point whose device is unknown is compared with nothing.
///
/// # Examples
/// ```
/// use roofline_analysis::measured_device::same_device;
/// use roofline_analysis::measurement::{MeasuredPoint, Measurement};
/// use roofline_base::{Precision, find_hardware};
/// use roofline_analysis::Operator;
/// let gemv = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
/// let point = |backend: &str, device: &str| {
///     let measurement = Measurement { backend: backend.into(), device_name: device.into(), median_s: 2e-5, ..Measurement::default() };
///     MeasuredPoint::of_operator(&gemv, Precision::Fp16, "", measurement)
/// };
/// let h100 = find_hardware("h100_sxm").unwrap();
/// assert!(same_device(&point("cuda", "NVIDIA H100 80GB HBM3"), h100));
/// assert!(!same_device(&point("cpu", "AMD EPYC 7B13"), h100));
/// assert!(!same_device(&point("cuda", "NVIDIA GB10"), h100));
/// ```
#[must_use]
pub fn same_device(p: &MeasuredPoint, spec: &HardwareSpec) -> bool {
    match (PointDevice::of(p), catalog_key_of_spec(spec)) {
        (PointDevice::Catalog(k), Some(s)) => k == s,
        (PointDevice::Named(n), None) => spec.name.contains(&format!("measured on {n}")) || spec.name == n,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::Measurement;
    use crate::ops::Operator;
    use roofline_base::hardware::Provenance;
    use roofline_base::precision::Precision;

    fn point(backend: &str, device: &str, key: Option<&str>) -> MeasuredPoint {
        let op = Operator::gemv(1, 1, Precision::Fp32.into()).unwrap();
        let measurement = Measurement {
            backend: backend.into(),
            device_name: device.into(),
            device_key: key.map(str::to_owned),
            median_s: 1e-6,
            ..Measurement::default()
        };
        MeasuredPoint::of_operator(&op, Precision::Fp32, "", measurement)
    }

    #[test]
    fn the_device_key_wins_then_the_name_on_gpus_only() {
        assert_eq!(
            PointDevice::of(&point("cuda", "Some GPU", Some("h100"))),
            PointDevice::Catalog("h100_sxm".into())
        );
        assert_eq!(
            PointDevice::of(&point("cuda", "NVIDIA GB10", None)),
            PointDevice::Catalog("gb10".into())
        );
        assert_eq!(
            PointDevice::of(&point("cpu", "AMD EPYC H100-lookalike", None)),
            PointDevice::Named("AMD EPYC H100-lookalike".into())
        );
        assert_eq!(PointDevice::of(&point("cpu", " ", None)), PointDevice::Unknown);
    }

    #[test]
    fn calibrated_specs_match_their_device() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let calibrated = HardwareSpec {
            key: "h100_sxm_measured".into(),
            calibrates: Some("h100_sxm".into()),
            ..h100.clone()
        };
        assert!(same_device(
            &point("cuda", "NVIDIA H100 80GB HBM3", None),
            &calibrated
        ));
        let cpu = HardwareSpec {
            provenance: Provenance::Measured,
            ..HardwareSpec::uncatalogued(
                "cpu_host_measured",
                "Host CPU (measured on AMD EPYC 7B13)",
                "x86-64",
                64e9,
            )
        };
        assert!(same_device(&point("cpu", "AMD EPYC 7B13", None), &cpu));
        assert!(!same_device(&point("cpu", "Intel Xeon", None), &cpu));
        assert!(!same_device(&point("cuda", "NVIDIA H100", None), &cpu));
    }
}
