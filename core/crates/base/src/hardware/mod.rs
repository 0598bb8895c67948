//! Hardware specs: the sourced catalog, custom devices and measured (calibrated) specs share one type, with
//! the scale-up interconnect multi-GPU analysis needs.
//!
//! Files bottom to top: `mode`, `interconnect`, `quality`, `ranges`, `entry` and the generated
//! `catalog_entries` (leaves); `reference` (the reference ceilings); `spec` ([`HardwareSpec`]);
//! `calibration`, `catalog` and `json` (on the spec).

mod calibration;
mod catalog;
#[rustfmt::skip]
mod catalog_entries;
mod entry;
mod interconnect;
#[cfg(feature = "serde")]
mod json;
mod mode;
mod quality;
mod ranges;
mod reference;
mod spec;

pub use calibration::{CPU_HOST_KEY, Calibration, calibrated_key};
pub use catalog::{catalog, catalog_key_of_device_name, find_hardware, find_hardware_in};
pub use interconnect::{Collective, Interconnect, Link, Topology};
pub use mode::{Mode, Provenance};
pub use quality::{
    CalibrationQuality, MAX_HOST_LOAD_PER_CPU, MAX_RELATIVE_SPREAD, PEAK_SPREAD_TARGET, PathRuns, Spread,
};
pub use ranges::{BANDWIDTH_RANGE_BYTES_PER_S, MEMORY_RANGE_BYTES, PEAK_RANGE_FLOP_PER_S};
pub use reference::{
    ABSMAX_FLOOR_S, BLOCK_QUANT_FLOOR_S, COLLECTIVE_BASE_LATENCY_S, FP4_GEMM_FLOOR_S, FP8_BLOCK_GEMM_FLOOR_S,
    FamilyReference, GemmFraction, MATRIX_KERNEL_FLOOR_S, MIXED_INPUT_CAP, MXFP8_GEMM_FLOOR_S,
    NVLINK_STEP_LATENCY_S, PCIE_STEP_LATENCY_S, PER_ROW_QUANT_FLOOR_S, PER_TENSOR_QUANT_FLOOR_S,
    QuantizeFloor, ReferenceCeilings, Sourced, VECTOR_KERNEL_FLOOR_S, WEIGHT_ONLY_GEMM_FLOOR_S,
    fallback_paths, family_floor, quantize_floor, related_families,
};
pub use spec::{FamilyCeiling, HardwareSpec, Peak, QuantizeOverhead};
