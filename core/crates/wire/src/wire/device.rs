//! The endpoint's health, its device and its NVML telemetry.

use serde::{Deserialize, Serialize};

use super::legacy::reads_legacy_units;
use roofline_analysis::measurement::BackendKind;
use roofline_base::precision::Precision;
use roofline_base::units::MEGA;

/// `GET /api/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: String,
    /// The endpoint's version (Cargo package version).
    pub version: String,
    /// Active measurement backend.
    pub backend: BackendKind,
    /// Why this backend was chosen (e.g. `libcuda not found`).
    #[serde(default)]
    pub backend_reason: String,
}

/// `GET /api/nvml/status`: one NVML sample (the original toolkit's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NvmlStatus {
    /// Device name as NVML reports it.
    pub device_name: String,
    /// Graphics clock, in MHz.
    pub gpu_clock_mhz: f64,
    /// Memory clock, in MHz.
    pub mem_clock_mhz: f64,
    /// Power draw, in W.
    pub power_draw_w: f64,
    /// Enforced power limit, in W.
    pub power_limit_w: f64,
    /// GPU temperature, in °C.
    pub temperature_c: f64,
    /// Used device memory, in MB (1e6 bytes).
    pub mem_used_mb: f64,
    /// Total device memory, in MB (1e6 bytes).
    pub mem_total_mb: f64,
    /// GPU utilization, in percent.
    pub gpu_utilization_pct: f64,
    /// CUDA compute capability `[major, minor]`.
    pub compute_capability: [u32; 2],
    /// Active clock-throttle reasons (empty when none).
    #[serde(default)]
    pub throttle_reasons: Vec<String>,
}

/// `GET /api/device`: the device the active backend measures on. Reads the older `memory_total_mb`,
/// `memory_free_mb` and `l2_mb` (MB, 1e6 bytes) too, as an older endpoint sends them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct DeviceInfo {
    /// Active backend.
    pub backend: BackendKind,
    /// Device name (GPU name as the driver reports it, or the host CPU model).
    pub name: String,
    /// Architecture, e.g. `sm_90` or `x86_64`.
    pub arch: String,
    /// CUDA compute capability `[major, minor]` (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<[u32; 2]>,
    /// Total device (or host) memory, in bytes.
    pub memory_total_bytes: f64,
    /// Free device (or host) memory, in bytes, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_free_bytes: Option<f64>,
    /// Streaming multiprocessors (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<u32>,
    /// Logical CPU cores (CPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<u32>,
    /// Maximum SM clock, in MHz, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_max_mhz: Option<f64>,
    /// Maximum memory clock, in MHz, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_clock_max_mhz: Option<f64>,
    /// L2 (GPU) or last-level (CPU) cache, in bytes, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bytes: Option<f64>,
    /// Version strings: driver, CUDA, cuBLAS, endpoint, … (name → version).
    #[serde(default)]
    pub versions: Vec<(String, String)>,
    /// Catalog key matched from the device name (`NVIDIA H100 80GB HBM3` → `h100_sxm`); null on a CPU.
    pub matched_key: Option<String>,
    /// Precisions the backend can measure natively.
    #[serde(default)]
    pub measurable_precisions: Vec<Precision>,
}

reads_legacy_units!(
    DeviceInfo,
    [
        ("memory_total_mb", "memory_total_bytes", MEGA),
        ("memory_free_mb", "memory_free_bytes", MEGA),
        ("l2_mb", "l2_bytes", MEGA),
    ]
);
