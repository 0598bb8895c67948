//! Reference ceilings: what tuned libraries reach on a device, for predictions that need no measurement.
//!
//! Each catalog device gets, for every compute path it runs natively, an achievable fraction of the dense
//! peak for GEMMs, an achievable fraction of the DRAM bandwidth, and a fixed time per kernel. A figure is
//! *measured* when `core/data/hardware-sources.toml` publishes it for the device (its `measured` table:
//! ml-engineering's MAMF, gpu-benches, ROCm, this project's docs/validation), and otherwise *derived* by the
//! first rule that applies, in this order:
//!
//! 1. GEMM fraction: the paths of [`fallback_paths`] are tried nearest first (FP16, TF32, FP32 and FP64 take
//!    BF16's; INT8 and FP6 take FP8's; FP4 takes FP8's, then BF16's); for each, the device's own
//!    measurement, then the first device of the same [`Architecture`] in catalog order that has one.
//! 2. DRAM fraction: the first device of the same architecture in catalog order with a measurement.
//! 3. Otherwise the median of every measured fraction in the catalog (GEMM: the BF16 ones; DRAM: all).
//!
//! The kernel floors ([`MATRIX_KERNEL_FLOOR_S`], [`VECTOR_KERNEL_FLOOR_S`]) are the same for every device:
//! no per-device figure is published.

use super::{Architecture, CatalogEntry, ComputePath};

/// Fixed time of one matrix kernel (GEMM, GEMV, attention) on top of its roofline time, in seconds (5 µs).
///
/// Derived: cuBLASLt kernels on an H100 SXM took 4–8 µs longer than their bytes at copy bandwidth, almost
/// independently of size (docs/validation: FP16 GEMVs 5.3–6.4 µs, FP8 5.5–7.1 µs, event-timed one kernel at
/// a time); AIConfigurator's system files use a 3 µs constant memory latency. Serving engines run kernels
/// back to back, so the low end of the measured range is taken.
pub const MATRIX_KERNEL_FLOOR_S: f64 = 5e-6;

/// Fixed time of one vector kernel (norm, activation, residual add, RoPE, KV-cache write, quantization), in
/// seconds (2 µs).
///
/// Source: torchao's measured launch floor of a single-element Triton kernel on an H100 (2 µs).
pub const VECTOR_KERNEL_FLOOR_S: f64 = 2e-6;

/// A reference figure and why it has that value.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Sourced {
    /// The value (a fraction in (0, 1] for ceilings, seconds for floors).
    pub value: f64,
    /// `measured: …` (with the source) or `derived: …` (with the rule).
    pub basis: String,
}

/// Achievable GEMM fraction of one compute path's dense peak.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GemmFraction {
    /// The compute path.
    pub path: ComputePath,
    /// Fraction of the dense peak that tuned GEMM libraries reach on large shapes, in (0, 1].
    pub fraction: Sourced,
}

/// The reference ceilings of one device: achievable fractions and per-kernel floors, each with its basis.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ReferenceCeilings {
    /// Achievable fraction of the DRAM bandwidth for a streaming kernel, in (0, 1].
    pub dram_fraction: Sourced,
    /// Achievable GEMM fraction per compute path the device has a peak for.
    pub gemm_fractions: Vec<GemmFraction>,
    /// Fixed time per matrix kernel, in seconds.
    pub matrix_kernel_floor: Sourced,
    /// Fixed time per vector kernel, in seconds.
    pub vector_kernel_floor: Sourced,
}

impl ReferenceCeilings {
    /// The GEMM fraction of `path`, if the device has that path.
    #[must_use]
    pub fn gemm_fraction(&self, path: ComputePath) -> Option<&Sourced> {
        self.gemm_fractions
            .iter()
            .find(|g| g.path == path)
            .map(|g| &g.fraction)
    }
}

/// The paths whose measured GEMM fraction stands in for `path`, nearest first (`path` itself first).
#[must_use]
pub fn fallback_paths(path: ComputePath) -> &'static [ComputePath] {
    use ComputePath as C;
    match path {
        C::Bf16 => &[C::Bf16, C::Fp16, C::Fp8],
        C::Fp16 => &[C::Fp16, C::Bf16, C::Fp8],
        C::Tf32 => &[C::Tf32, C::Bf16, C::Fp16],
        C::Fp32 => &[C::Fp32, C::Bf16, C::Fp16],
        C::Fp64 => &[C::Fp64, C::Bf16, C::Fp16],
        C::Fp8 => &[C::Fp8, C::Bf16],
        C::Int8 => &[C::Int8, C::Fp8, C::Bf16],
        C::Fp6 => &[C::Fp6, C::Fp8, C::Bf16],
        C::Fp4 => &[C::Fp4, C::Fp8, C::Bf16],
        C::Int4 => &[C::Int4, C::Int8, C::Fp8, C::Bf16],
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return 1.0;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

fn percent(fraction: f64) -> String {
    format!("{:.1} %", 100.0 * fraction)
}

/// `measured: <what> (<sources>)`. The research file lists a device's measurement sources together, not per
/// figure, so all of them are cited rather than guessing which one gave this figure.
fn measured_basis(entry: &CatalogEntry, what: &str) -> String {
    format!("measured: {what} ({})", entry.measured_sources.join("; "))
}

/// The catalog-wide medians used by rule 3, so custom devices can be given the same defaults.
#[derive(Debug, Clone, Copy)]
pub(super) struct Medians {
    pub gemm_bf16: f64,
    pub dram: f64,
}

pub(super) fn medians(entries: &[CatalogEntry]) -> Medians {
    let gemm = entries
        .iter()
        .flat_map(|e| e.measured_gemm_fraction.iter())
        .filter(|(p, _)| *p == ComputePath::Bf16)
        .map(|(_, f)| *f)
        .collect();
    let dram = entries.iter().filter_map(|e| e.measured_dram_fraction).collect();
    Medians {
        gemm_bf16: median(gemm),
        dram: median(dram),
    }
}

/// The device a figure is looked up for: its architecture, and its catalog row if it has one.
#[derive(Clone, Copy)]
struct Device<'a> {
    arch: Architecture,
    entry: Option<&'a CatalogEntry>,
}

impl<'a> Device<'a> {
    /// The other catalog rows of the same architecture, in catalog order.
    fn same_arch(self, entries: &'a [CatalogEntry]) -> impl Iterator<Item = &'a CatalogEntry> {
        entries
            .iter()
            .filter(move |e| e.arch == self.arch && self.entry.is_none_or(|own| own.key != e.key))
    }
}

fn measured_gemm(entry: &CatalogEntry, path: ComputePath) -> Option<f64> {
    entry
        .measured_gemm_fraction
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, f)| *f)
}

fn gemm_fraction(entries: &[CatalogEntry], device: Device<'_>, path: ComputePath, m: Medians) -> Sourced {
    for &p in fallback_paths(path) {
        if let Some((entry, f)) = device.entry.and_then(|e| measured_gemm(e, p).map(|f| (e, f))) {
            let basis = if p == path {
                measured_basis(entry, &format!("{p} GEMM {}", percent(f)))
            } else {
                format!("derived: this device's measured {p} GEMM fraction {}", percent(f))
            };
            return Sourced { value: f, basis };
        }
        if let Some((other, f)) = device
            .same_arch(entries)
            .find_map(|e| measured_gemm(e, p).map(|f| (e, f)))
        {
            return Sourced {
                value: f,
                basis: format!(
                    "derived: {}'s measured {p} GEMM fraction {} (same architecture)",
                    other.key,
                    percent(f)
                ),
            };
        }
    }
    Sourced {
        value: m.gemm_bf16,
        basis: format!(
            "derived: median of the catalog's measured BF16 GEMM fractions, {}",
            percent(m.gemm_bf16)
        ),
    }
}

fn dram_fraction(entries: &[CatalogEntry], device: Device<'_>, m: Medians) -> Sourced {
    if let Some((entry, f)) = device
        .entry
        .and_then(|e| e.measured_dram_fraction.map(|f| (e, f)))
    {
        return Sourced {
            value: f,
            basis: measured_basis(entry, &format!("DRAM {}", percent(f))),
        };
    }
    if let Some((other, f)) = device
        .same_arch(entries)
        .find_map(|e| e.measured_dram_fraction.map(|f| (e, f)))
    {
        return Sourced {
            value: f,
            basis: format!(
                "derived: {}'s measured DRAM fraction {} (same architecture)",
                other.key,
                percent(f)
            ),
        };
    }
    Sourced {
        value: m.dram,
        basis: format!(
            "derived: median of the catalog's measured DRAM fractions, {}",
            percent(m.dram)
        ),
    }
}

fn floors() -> (Sourced, Sourced) {
    (
        Sourced {
            value: MATRIX_KERNEL_FLOOR_S,
            basis: "derived: low end of the 4–8 µs fixed time of cuBLASLt kernels on an H100 SXM (docs/validation)"
                .to_owned(),
        },
        Sourced {
            value: VECTOR_KERNEL_FLOOR_S,
            basis: "measured: single-element Triton kernel on an H100 (torchao)".to_owned(),
        },
    )
}

/// The reference ceilings of catalog entry `entry` under the rules of this module.
fn ceilings(
    entries: &[CatalogEntry],
    device: Device<'_>,
    paths: impl Iterator<Item = ComputePath>,
    m: Medians,
) -> ReferenceCeilings {
    let (matrix_kernel_floor, vector_kernel_floor) = floors();
    ReferenceCeilings {
        dram_fraction: dram_fraction(entries, device, m),
        gemm_fractions: paths
            .map(|path| GemmFraction {
                path,
                fraction: gemm_fraction(entries, device, path, m),
            })
            .collect(),
        matrix_kernel_floor,
        vector_kernel_floor,
    }
}

/// The reference ceilings of catalog entry `entry` under the rules of this module.
pub(super) fn for_entry(entries: &[CatalogEntry], entry: &CatalogEntry, m: Medians) -> ReferenceCeilings {
    let device = Device {
        arch: entry.arch,
        entry: Some(entry),
    };
    ceilings(entries, device, entry.dense_tflops.iter().map(|&(p, _)| p), m)
}

/// Reference ceilings for a device outside the catalog (or a spec whose ceilings were dropped): the rules
/// without a measurement of its own, so `arch` picks a same-architecture measurement where the catalog has one.
pub(super) fn for_custom(
    entries: &[CatalogEntry],
    arch: Architecture,
    paths: impl Iterator<Item = ComputePath>,
    m: Medians,
) -> ReferenceCeilings {
    let device = Device { arch, entry: None };
    ceilings(entries, device, paths, m)
}
