//! The compiled-in catalog must equal the research file `core/data/hardware-sources.toml`, figure for
//! figure, so a datasheet correction there cannot silently miss the product.

use roofline_core::{ComputePath, catalog, find_hardware};
use roofline_tests::workspace_root;

#[derive(serde::Deserialize)]
struct SourceFile {
    device: Vec<SourceDevice>,
}

#[derive(serde::Deserialize)]
struct SourceDevice {
    key: String,
    arch: String,
    memory_gb: f64,
    dram_bw_gbs: f64,
    l2_mb: Option<f64>,
    sm_count: Option<u32>,
    boost_mhz: Option<f64>,
    tdp_w: Option<f64>,
    peak_tflops: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    sparse_tflops: std::collections::BTreeMap<String, f64>,
    sources: Vec<String>,
    #[serde(default)]
    derived: Vec<String>,
    #[serde(default)]
    unverified: Vec<String>,
}

fn path(name: &str) -> ComputePath {
    *ComputePath::ALL
        .iter()
        .find(|p| p.name().eq_ignore_ascii_case(name))
        .unwrap_or_else(|| panic!("unknown path {name} in the research file"))
}

fn sources() -> SourceFile {
    let file = workspace_root().join("core/data/hardware-sources.toml");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    toml::from_str(&text).expect("hardware-sources.toml parses")
}

#[test]
fn every_device_matches_its_sources_exactly() {
    let file = sources();
    assert_eq!(file.device.len(), catalog().len(), "device count");
    for d in &file.device {
        let h = find_hardware(&d.key).unwrap();
        let key = &d.key;
        assert_eq!(h.arch_label, d.arch, "{key} arch");
        assert_eq!(h.memory_bytes, d.memory_gb * 1e9, "{key} memory");
        assert_eq!(
            h.dram_bandwidth_bytes_per_s,
            d.dram_bw_gbs * 1e9,
            "{key} bandwidth"
        );
        assert_eq!(h.l2_bytes, d.l2_mb.map(|v| v * 1e6), "{key} L2");
        assert_eq!(h.sm_count, d.sm_count, "{key} SMs");
        assert_eq!(h.boost_clock_hz, d.boost_mhz.map(|v| v * 1e6), "{key} clock");
        assert_eq!(h.tdp_w, d.tdp_w, "{key} TDP");
        assert_eq!(h.peaks.len(), d.peak_tflops.len(), "{key} number of dense peaks");
        for (name, tflops) in &d.peak_tflops {
            let peak = h.peak(path(name)).unwrap_or_else(|| panic!("{key} lacks {name}"));
            assert_eq!(peak.dense_flop_per_s, tflops * 1e12, "{key} dense {name}");
            assert_eq!(
                peak.sparse_flop_per_s,
                d.sparse_tflops.get(name).map(|s| s * 1e12),
                "{key} sparse {name}"
            );
        }
        assert_eq!(h.sources, d.sources, "{key} sources");
        assert_eq!(h.derived, d.derived, "{key} derived");
        assert_eq!(h.unverified, d.unverified, "{key} unverified");
    }
}

#[test]
fn sparse_only_figures_never_become_dense_peaks() {
    // A sparse figure for a path with no dense figure (none today) would be dropped, never promoted.
    for d in sources().device {
        for name in d.sparse_tflops.keys() {
            if !d.peak_tflops.contains_key(name) {
                assert!(
                    find_hardware(&d.key).unwrap().peak(path(name)).is_none(),
                    "{} {name}",
                    d.key
                );
            }
        }
    }
}
