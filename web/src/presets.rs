//! What the page offers before the user picks anything: the default device, model and config, the kernel
//! view's default precisions and quick shapes, the GPU counts, and the devices to pick from (the catalog,
//! then the user's custom devices).

use roofline_core::{HardwareSpec, Precision, catalog};

/// Precisions ticked by default in the kernel view.
pub const DEFAULT_PRECISIONS: [Precision; 6] = [
    Precision::Fp16,
    Precision::Bf16,
    Precision::Fp8E4M3,
    Precision::Nvfp4,
    Precision::Int8,
    Precision::Int4,
];

/// A named GEMV/GEMM shape offered as a one-click preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuickShape {
    /// Button label.
    pub label: &'static str,
    /// Rows of the activation (batch × tokens).
    pub m: u64,
    /// Output features.
    pub n: u64,
    /// Input features.
    pub k: u64,
}

/// The kernel view's quick shapes (Llama-3-8B sizes).
pub const QUICK_SHAPES: [QuickShape; 3] = [
    QuickShape {
        label: "Decode 1×4096×4096",
        m: 1,
        n: 4096,
        k: 4096,
    },
    QuickShape {
        label: "FFN 1×14336×4096",
        m: 1,
        n: 14336,
        k: 4096,
    },
    QuickShape {
        label: "Prefill 2048×4096×4096",
        m: 2048,
        n: 4096,
        k: 4096,
    },
];

/// The device shown by default and when a key resolves to nothing.
pub const DEFAULT_HARDWARE: &str = "gb10";
/// Default model preset.
pub const DEFAULT_MODEL: &str = "llama-3.1-8b";
/// Default precision config.
pub const DEFAULT_CONFIG: &str = "nvfp4-w4a4";
/// The GPU counts offered (tensor-parallel degrees within one scale-up domain).
pub const GPU_COUNTS: [u32; 4] = [1, 2, 4, 8];

/// Finds a device among the catalog and the user's custom devices (custom keys shadow nothing: they are
/// validated to differ from catalog keys when added).
#[must_use]
pub fn resolve_hardware(key: &str, custom: &[HardwareSpec]) -> Option<HardwareSpec> {
    custom
        .iter()
        .find(|h| h.key == key)
        .cloned()
        .or_else(|| roofline_core::find_hardware(key).ok().cloned())
}

/// Every selectable device: the catalog, then custom ones.
pub fn all_hardware(custom: &[HardwareSpec]) -> impl Iterator<Item = &HardwareSpec> {
    catalog().iter().chain(custom.iter())
}
