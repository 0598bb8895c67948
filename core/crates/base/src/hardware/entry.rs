//! One catalog row as the research file states it (units of `core/data/hardware-sources.toml`), the type
//! of the generated `catalog_entries.rs`; [`super::catalog`] converts it to a `HardwareSpec` once.

use super::interconnect::InterconnectEntry;
use crate::precision::{Architecture, ComputePath, GemmFamily};

/// One catalog row in the research file's units; converted once into a [`HardwareSpec`].
pub(super) struct CatalogEntry {
    pub(super) key: &'static str,
    pub(super) name: &'static str,
    pub(super) vendor: &'static str,
    pub(super) arch: Architecture,
    pub(super) arch_label: &'static str,
    /// Globs matched against the lowercase name a driver reports ([`catalog_key_of_device_name`]).
    pub(super) driver_names: &'static [&'static str],
    /// Globs that rule the device out although a `driver_names` glob matches.
    pub(super) driver_names_exclude: &'static [&'static str],
    pub(super) memory_gb: f64,
    /// Memory the driver reports in GiB (the CUDA total engines size their pools from, where published) and
    /// its source.
    pub(super) memory_reported: Option<(f64, &'static str)>,
    pub(super) dram_bw_gbs: f64,
    pub(super) l2_mb: Option<f64>,
    pub(super) sm_count: Option<u32>,
    pub(super) boost_mhz: Option<f64>,
    pub(super) tdp_w: Option<f64>,
    pub(super) dense_tflops: &'static [(ComputePath, f64)],
    pub(super) sparse_tflops: &'static [(ComputePath, f64)],
    pub(super) derived: &'static [&'static str],
    pub(super) unverified: &'static [&'static str],
    pub(super) missing: &'static [&'static str],
    pub(super) notes: &'static str,
    pub(super) sources: &'static [&'static str],
    /// Achievable GEMM fractions of the dense peak the research file publishes (its `measured` table).
    pub(super) measured_gemm_fraction: &'static [(ComputePath, f64)],
    /// Achievable DRAM fraction the research file publishes.
    pub(super) measured_dram_fraction: Option<f64>,
    /// Sources of the measured fractions.
    pub(super) measured_sources: &'static [&'static str],
    /// Published measurements of GEMM kernel families (the research file's `measured_gemm`), each with its
    /// own source.
    pub(super) measured_families: &'static [FamilyMeasurement],
    /// Scale-up GPU-to-GPU interconnect, where published.
    pub(super) interconnect: Option<InterconnectEntry>,
}

/// One published measurement of a GEMM kernel family on a catalog device: a large-shape GEMM fraction of the
/// path's dense peak or a small-M effective DRAM fraction, what was measured (shape, library, with or without
/// the activation quantization) and the publication's URL.
pub(super) struct FamilyMeasurement {
    pub(super) family: GemmFamily,
    pub(super) gemm_fraction: Option<f64>,
    pub(super) dram_fraction: Option<f64>,
    /// The kernel's fixed time from the same small-M fit, in seconds (`None`: the family's constant floor).
    pub(super) floor_s: Option<f64>,
    pub(super) what: &'static str,
    pub(super) source: &'static str,
}
