//! The sourced hardware catalog and its lookups: by key ([`find_hardware`], [`find_hardware_in`]) and by the
//! name a driver reports ([`catalog_key_of_device_name`]).
//!
//! The rows are `catalog_entries.rs`, generated from `core/data/hardware-sources.toml` in that file's units
//! (`entry.rs`); they become base units once, here ([`catalog`]).

use std::sync::LazyLock;

use super::catalog_entries::ENTRIES;
use super::entry::CatalogEntry;
use super::interconnect::InterconnectEntry;
use super::mode::{Mode, Provenance};
use super::reference;
use super::spec::{HardwareSpec, Peak};
use crate::error::Error;
use crate::units::{GIB, GIGA, MEGA, TERA};

impl CatalogEntry {
    fn to_spec(&self) -> HardwareSpec {
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let peaks = self
            .dense_tflops
            .iter()
            .map(|&(path, dense)| Peak {
                path,
                dense_flop_per_s: dense * TERA,
                sparse_flop_per_s: self
                    .sparse_tflops
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map(|(_, s)| s * TERA),
                kernel_overhead_s: None,
            })
            .collect();
        let mut notes = self.notes.to_owned();
        let mut sources = strings(self.sources);
        if let Some((gib, source)) = self.memory_reported {
            sources.push(format!("device-reported memory {gib} GiB: {source}"));
        }
        if !self.missing.is_empty() {
            notes.push_str(&format!(" Not published: {}.", self.missing.join(", ")));
        }
        HardwareSpec {
            key: self.key.to_owned(),
            name: self.name.to_owned(),
            vendor: self.vendor.to_owned(),
            arch: self.arch,
            arch_label: self.arch_label.to_owned(),
            memory_bytes: self.memory_gb * GIGA,
            memory_reported_bytes: self.memory_reported.map(|(gib, _)| gib * GIB),
            dram_bandwidth_bytes_per_s: self.dram_bw_gbs * GIGA,
            l2_bytes: self.l2_mb.map(|mb| mb * MEGA),
            sm_count: self.sm_count,
            boost_clock_hz: self.boost_mhz.map(|mhz| mhz * MEGA),
            tdp_w: self.tdp_w,
            kernel_overhead_s: 0.0,
            peaks,
            gemm_families: Vec::new(),
            quantize_overheads: Vec::new(),
            provenance: Provenance::Datasheet,
            sources,
            derived: strings(self.derived),
            unverified: strings(self.unverified),
            notes,
            reference: Some(reference::for_entry(self)),
            interconnect: self.interconnect.as_ref().map(InterconnectEntry::to_interconnect),
            calibrates: None,
            calibration: None,
        }
    }
}

static CATALOG: LazyLock<Vec<HardwareSpec>> =
    LazyLock::new(|| ENTRIES.iter().map(CatalogEntry::to_spec).collect());

static REFERENCE_CATALOG: LazyLock<Vec<HardwareSpec>> = LazyLock::new(|| {
    CATALOG
        .iter()
        .map(|h| {
            h.reference()
                .expect("catalog specs are datasheet specs with valid ceilings")
        })
        .collect()
});

/// The original toolkit's keys, accepted as aliases.
const ALIASES: &[(&str, &str)] = &[("b10", "gb10"), ("h100", "h100_sxm"), ("a100", "a100_sxm_80gb")];

/// Every catalogued device, with its sources.
///
/// # Examples
/// ```
/// let catalog = roofline_base::catalog();
/// assert!(catalog.iter().all(|h| h.check().is_ok() && !h.sources.is_empty()));
/// ```
#[must_use]
pub fn catalog() -> &'static [HardwareSpec] {
    &CATALOG
}

/// Looks a device up by key (case-insensitive; `b10`, `h100` and `a100` are aliases).
///
/// # Errors
/// [`Error::UnknownHardware`] listing every valid key.
///
/// # Examples
/// ```
/// use roofline_base::{find_hardware, Precision};
/// let a100 = find_hardware("A100").unwrap();
/// assert_eq!(a100.key, "a100_sxm_80gb");
/// // No FP8 on Ampere: an explicit error naming the architecture, never an FP16 fallback.
/// assert!(a100.dense_peak_for(Precision::Fp8E4M3).unwrap_err().to_string().contains("Ampere"));
/// ```
pub fn find_hardware(key: &str) -> Result<&'static HardwareSpec, Error> {
    let wanted = key.trim().to_ascii_lowercase();
    let wanted = ALIASES
        .iter()
        .find(|(alias, _)| *alias == wanted)
        .map_or(wanted.as_str(), |(_, k)| k);
    catalog()
        .iter()
        .find(|h| h.key == wanted)
        .ok_or_else(|| Error::UnknownHardware {
            key: key.to_owned(),
            valid: catalog().iter().map(|h| h.key.clone()).collect(),
        })
}

/// Looks a device up by key (as [`find_hardware`]) in `mode`: its datasheet spec, or its reference spec
/// ([`HardwareSpec::reference`], built once).
///
/// # Errors
/// [`Error::UnknownHardware`] for an unknown key; [`Error::InvalidInput`] for [`Mode::Calibrated`], which
/// needs the user's measured spec (the catalog holds none).
///
/// # Examples
/// ```
/// use roofline_base::{find_hardware_in, Mode, Provenance};
/// assert_eq!(find_hardware_in("h100", Mode::Reference).unwrap().provenance, Provenance::Reference);
/// assert!(find_hardware_in("h100", Mode::Calibrated).is_err());
/// ```
pub fn find_hardware_in(key: &str, mode: Mode) -> Result<&'static HardwareSpec, Error> {
    let datasheet = find_hardware(key)?;
    match mode {
        Mode::Datasheet => Ok(datasheet),
        Mode::Reference => Ok(&REFERENCE_CATALOG[catalog()
            .iter()
            .position(|h| h.key == datasheet.key)
            .unwrap_or_default()]),
        Mode::Calibrated => datasheet.in_mode(Mode::Calibrated).map(|_| datasheet),
    }
}

/// The catalog key of the device named `device_name` by its driver (`NVIDIA H100 80GB HBM3` → `h100_sxm`,
/// `NVIDIA GB10` → `gb10`), or `None` for anything else (CPUs, unknown GPUs): the first device, in catalog
/// order, one of whose `driver_names` globs matches the lowercase name and none of whose
/// `driver_names_exclude` globs does (`core/data/hardware-sources.toml`).
///
/// # Examples
/// ```
/// use roofline_base::hardware::catalog_key_of_device_name;
/// assert_eq!(catalog_key_of_device_name("NVIDIA H100 80GB HBM3"), Some("h100_sxm"));
/// assert_eq!(catalog_key_of_device_name("NVIDIA H100 PCIe"), Some("h100_pcie"));
/// assert_eq!(catalog_key_of_device_name("Intel(R) Xeon(R) CPU @ 2.20GHz"), None);
/// ```
#[must_use]
pub fn catalog_key_of_device_name(device_name: &str) -> Option<&'static str> {
    let name = device_name.to_ascii_lowercase();
    let matches = |globs: &[&str]| globs.iter().any(|g| glob_matches(g, &name));
    ENTRIES
        .iter()
        .find(|e| matches(e.driver_names) && !matches(e.driver_names_exclude))
        .map(|e| e.key)
}

/// Whether `text` matches `glob` as a whole, `*` standing for any run of characters (none included).
fn glob_matches(glob: &str, text: &str) -> bool {
    let mut parts = glob.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the glob is the whole text.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_complete_unique_and_valid() {
        // One spec per `[[device]]` entry of the research file, none dropped by the generator.
        let entries = include_str!("../../../../data/hardware-sources.toml")
            .lines()
            .filter(|l| l.trim() == "[[device]]")
            .count();
        assert_eq!(catalog().len(), entries);
        let mut keys: Vec<_> = catalog().iter().map(|h| h.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), entries);
        for h in catalog() {
            h.check().unwrap();
            assert!(!h.sources.is_empty(), "{} has no source", h.key);
        }
    }

    #[test]
    fn aliases_and_case_resolve() {
        assert_eq!(find_hardware("B10").unwrap().key, "gb10");
        assert_eq!(find_hardware("h100").unwrap().key, "h100_sxm");
        assert_eq!(find_hardware("a100").unwrap().key, "a100_sxm_80gb");
        assert!(
            matches!(find_hardware("nope"), Err(Error::UnknownHardware { valid, .. }) if valid.len() == catalog().len())
        );
    }

    #[test]
    fn catalog_peaks_exist_only_on_native_paths() {
        for h in catalog() {
            for peak in &h.peaks {
                assert!(
                    h.arch.runs_path(peak.path),
                    "{} lists a {} peak its architecture lacks",
                    h.key,
                    peak.path
                );
            }
        }
    }

    #[test]
    fn driver_names_match_catalog_keys() {
        // Names as NVML and the CUDA driver report them, and the look-alikes that must not be confused:
        // GB200/GB300 contain B200/B300, H200 contains H20, L40S contains L4.
        for (name, key) in [
            ("NVIDIA H100 80GB HBM3", Some("h100_sxm")),
            ("NVIDIA H100 PCIe", Some("h100_pcie")),
            ("NVIDIA H100 NVL", Some("h100_pcie")),
            ("NVIDIA GB10", Some("gb10")),
            ("NVIDIA H200", Some("h200_sxm")),
            ("NVIDIA H20", Some("h20")),
            ("NVIDIA B200", Some("b200")),
            ("NVIDIA GB200", Some("gb200")),
            ("NVIDIA B300 SXM6 AC", Some("b300")),
            ("NVIDIA GB300", Some("gb300")),
            ("NVIDIA A100-SXM4-80GB", Some("a100_sxm_80gb")),
            ("NVIDIA L4", Some("l4")),
            ("L4", Some("l4")),
            ("NVIDIA L40S", Some("l40s")),
            ("NVIDIA GeForce RTX 4090", Some("rtx_4090")),
            ("NVIDIA GeForce RTX 5090", Some("rtx_5090")),
            (
                "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                Some("rtx_pro_6000_bw"),
            ),
            ("NVIDIA Jetson AGX Orin", Some("jetson_agx_orin_64gb")),
            ("NVIDIA Jetson AGX Thor", Some("jetson_agx_thor")),
            ("AMD Instinct MI300X", Some("mi300x")),
            ("AMD Instinct MI325X", Some("mi325x")),
            ("AMD Instinct MI355X", Some("mi355x")),
            ("Intel(R) Xeon(R) CPU", None),
            ("", None),
        ] {
            assert_eq!(catalog_key_of_device_name(name), key, "{name}");
            // Never ambiguous: no other device's globs claim the name, whatever the catalog order.
            let lowercase = name.to_ascii_lowercase();
            let claiming = ENTRIES
                .iter()
                .filter(|e| {
                    e.driver_names.iter().any(|g| glob_matches(g, &lowercase))
                        && !e.driver_names_exclude.iter().any(|g| glob_matches(g, &lowercase))
                })
                .count();
            assert_eq!(claiming, usize::from(key.is_some()), "{name}");
        }
        // Every detected key is a catalog device.
        for e in ENTRIES.iter().filter(|e| !e.driver_names.is_empty()) {
            assert!(find_hardware(e.key).is_ok(), "{}", e.key);
        }
    }

    #[test]
    fn globs_match_whole_names() {
        for (glob, text, expected) in [
            ("*h100*", "nvidia h100 pcie", true),
            ("*h100*pcie*", "nvidia h100 pcie", true),
            ("*h100*pcie*", "nvidia pcie h100", false),
            ("*l4", "nvidia-l4", true),
            ("*l4", "nvidia l40s", false),
            ("* l4*", "nvidia l4", true),
            ("l4", "l4", true),
            ("l4", "l40", false),
            ("*", "", true),
            ("a*a", "a", false),
        ] {
            assert_eq!(glob_matches(glob, text), expected, "{glob} {text}");
        }
    }
}
