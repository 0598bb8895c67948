//! Reference ceilings: what tuned libraries reach on a device, for predictions that need no measurement.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

mod family;

pub use family::{
    ABSMAX_FLOOR_S, BLOCK_QUANT_FLOOR_S, FP4_GEMM_FLOOR_S, FP8_BLOCK_GEMM_FLOOR_S, FamilyReference,
    MIXED_INPUT_CAP, MXFP8_GEMM_FLOOR_S, PER_ROW_QUANT_FLOOR_S, PER_TENSOR_QUANT_FLOOR_S, QuantizeFloor,
    WEIGHT_ONLY_GEMM_FLOOR_S, family_floor, quantize_floor, related_families,
};

use std::sync::LazyLock;

use super::catalog_entries::ENTRIES;
use super::entry::CatalogEntry;
use super::interconnect::{Interconnect, Link};
use crate::precision::{Architecture, ComputePath, GemmFamily, QuantizeKernel};
use family::{family_paths, family_reference};

/// Fixed time of one collective on a reference spec, in seconds (6.6 µs).
///
/// Source: NCCL's cost model, `src/graph/tuning.cc` `baseLat` of the ring algorithm with the LL protocol
/// (the one NCCL picks for the small messages of decode), as quoted in NVIDIA/nccl issue #1334.
pub const COLLECTIVE_BASE_LATENCY_S: f64 = 6.6e-6;

/// Time of one ring step over NVLink (and, for want of a published RCCL figure, Infinity Fabric), in
/// seconds (0.6 µs). Source: NCCL `tuning.cc` `hwLat` NVLink ring LL, as for [`COLLECTIVE_BASE_LATENCY_S`].
pub const NVLINK_STEP_LATENCY_S: f64 = 0.6e-6;

/// Time of one ring step over PCIe, in seconds (1.0 µs). Source: NCCL `tuning.cc` `hwLat` PCI ring LL.
pub const PCIE_STEP_LATENCY_S: f64 = 1.0e-6;

const NCCL_COST_MODEL: &str = "NCCL src/graph/tuning.cc ring/LL latencies (NVIDIA/nccl issue #1334)";

/// Fixed time of one matrix kernel (a plain BF16/FP16 GEMM or GEMV, attention) on top of its roofline time,
/// in seconds (5 µs); also the FP8 per-tensor and INT8 GEMM floor.
///
/// Sources: small BF16 GEMMs through `F.linear` (cuBLAS) on a B200 take 4.86–5.26 µs (CUPTI, L2 flushed,
/// 8–256×2048×1024; NVIDIA/cutlass issue #2923) and a 64×3072×1536 cuBLAS GEMM 4.91 µs
/// (flashinfer-ai/flashinfer PR #2277); cuBLASLt kernels on an H100 SXM took 5.3–6.4 µs (FP16 GEMVs) and
/// 5.5–7.1 µs (FP8) longer than their bytes at copy bandwidth (docs/validation, one kernel at a time). No
/// published measurement supports a 2–3 µs GEMM floor (docs/research/low-precision.md §2), and FP8
/// per-tensor GEMMs show no fixed cost of their own beyond it: what a per-tensor FP8 linear layer adds is its
/// activation quantization, modelled as kernels of their own ([`quantize_floor`]).
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
    /// `measured: …` (with the source), `derived: …` (with the rule) or `source: …` (a published model
    /// constant, e.g. NCCL's latencies).
    #[cfg_attr(feature = "serde", serde(default))]
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
    /// Achievable fraction of the per-direction link bandwidth for ring collectives, in (0, 1] (`None`
    /// without an interconnect).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub collective_fraction: Option<Sourced>,
    /// Fixed time per collective, in seconds (`None` without an interconnect).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub collective_base_latency: Option<Sourced>,
    /// Time per ring step, in seconds (`None` without an interconnect).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub collective_step_latency: Option<Sourced>,
    /// Ceilings per GEMM kernel family and path the device runs (empty in ceilings stored before they existed,
    /// which then predict every GEMM at its path's fraction).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub families: Vec<FamilyReference>,
    /// Fixed time per activation-quantization kernel (empty in older ceilings: the vector floor).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub quantize_floors: Vec<QuantizeFloor>,
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

    /// The ceilings of GEMM family `family` on `path`, if the device runs it there.
    #[must_use]
    pub fn family(&self, family: GemmFamily, path: ComputePath) -> Option<&FamilyReference> {
        self.families
            .iter()
            .find(|f| f.family == family && f.path == path)
    }

    /// Scales a datasheet interconnect to these ceilings: bandwidth times the collective fraction, and the
    /// collective and step latencies. No-op where the ceilings have no interconnect figures.
    pub fn apply_to_interconnect(&self, link: &mut Interconnect) {
        if let Some(f) = &self.collective_fraction {
            link.bandwidth_bytes_per_s *= f.value;
        }
        if let Some(l) = &self.collective_base_latency {
            link.collective_latency_s = l.value;
        }
        if let Some(l) = &self.collective_step_latency {
            link.step_latency_s = l.value;
        }
    }

    /// The basis of the interconnect figures, for a spec's sources.
    #[must_use]
    pub fn interconnect_basis(&self) -> String {
        let mut parts = Vec::new();
        if let Some(f) = &self.collective_fraction {
            parts.push(format!("bandwidth ×{:.3}: {}", f.value, f.basis));
        }
        if let (Some(base), Some(step)) = (&self.collective_base_latency, &self.collective_step_latency) {
            parts.push(format!(
                "latency {:.1} µs + {:.1} µs per step: {}",
                base.value * 1e6,
                step.value * 1e6,
                base.basis
            ));
        }
        parts.join("; ")
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
struct Medians {
    pub gemm_bf16: f64,
    pub dram: f64,
}

fn medians(entries: &[CatalogEntry]) -> Medians {
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
        family_floor(GemmFamily::Plain),
        Sourced {
            value: VECTOR_KERNEL_FLOOR_S,
            basis: "measured: single-element Triton kernel on an H100 (torchao)".to_owned(),
        },
    )
}

fn measured_busbw(entry: &CatalogEntry) -> Option<f64> {
    entry
        .interconnect
        .as_ref()
        .and_then(|i| i.measured_busbw_fraction)
}

/// The collective fraction of a device with link `link` (rules: docs/design/core.md).
fn collective_fraction(entries: &[CatalogEntry], device: Device<'_>, link: Link) -> Sourced {
    if let Some((entry, f)) = device.entry.and_then(|e| measured_busbw(e).map(|f| (e, f))) {
        let sources = entry
            .interconnect
            .as_ref()
            .map_or(String::new(), |i| i.measured_sources.join("; "));
        return Sourced {
            value: f,
            basis: format!(
                "measured: ring collective bus bandwidth {} ({sources})",
                percent(f)
            ),
        };
    }
    let same_link = entries.iter().find_map(|e| {
        let i = e.interconnect.as_ref()?;
        (i.link == link && device.entry.is_none_or(|own| own.key != e.key))
            .then_some(())
            .and(i.measured_busbw_fraction.map(|f| (e, f)))
    });
    if let Some((other, f)) = same_link {
        return Sourced {
            value: f,
            basis: format!(
                "derived: {}'s measured ring collective bus bandwidth {} (same link, {link})",
                other.key,
                percent(f)
            ),
        };
    }
    let all = median(entries.iter().filter_map(measured_busbw).collect());
    Sourced {
        value: all,
        basis: format!(
            "derived: median of the catalog's measured ring collective bus bandwidth fractions, {}",
            percent(all)
        ),
    }
}

fn collective_latencies(link: Link) -> (Sourced, Sourced) {
    let step = if link.is_pcie() {
        PCIE_STEP_LATENCY_S
    } else {
        NVLINK_STEP_LATENCY_S
    };
    let step_basis = match link {
        Link::InfinityFabric => {
            format!("derived: NCCL's NVLink ring step latency, no RCCL figure published ({NCCL_COST_MODEL})")
        }
        _ if link.is_pcie() => format!("source: NCCL's PCIe ring step latency ({NCCL_COST_MODEL})"),
        _ => format!("source: NCCL's NVLink ring step latency ({NCCL_COST_MODEL})"),
    };
    (
        Sourced {
            value: COLLECTIVE_BASE_LATENCY_S,
            basis: format!("source: NCCL ring base latency ({NCCL_COST_MODEL})"),
        },
        Sourced {
            value: step,
            basis: step_basis,
        },
    )
}

/// The reference ceilings of a device under the rules of this module.
fn ceilings(
    entries: &[CatalogEntry],
    device: Device<'_>,
    paths: impl Iterator<Item = ComputePath>,
    link: Option<Link>,
    m: Medians,
) -> ReferenceCeilings {
    let paths: Vec<ComputePath> = paths.collect();
    let (matrix_kernel_floor, vector_kernel_floor) = floors();
    let latencies = link.map(collective_latencies);
    ReferenceCeilings {
        collective_fraction: link.map(|l| collective_fraction(entries, device, l)),
        collective_base_latency: latencies.as_ref().map(|(base, _)| base.clone()),
        collective_step_latency: latencies.map(|(_, step)| step),
        dram_fraction: dram_fraction(entries, device, m),
        gemm_fractions: paths
            .iter()
            .map(|&path| GemmFraction {
                path,
                fraction: gemm_fraction(entries, device, path, m),
            })
            .collect(),
        matrix_kernel_floor,
        vector_kernel_floor,
        families: family_paths(device.arch, &paths)
            .into_iter()
            .map(|(family, path)| family_reference(entries, device, family, path, m))
            .collect(),
        quantize_floors: QuantizeKernel::ALL
            .into_iter()
            .map(|kernel| QuantizeFloor {
                kernel,
                floor: quantize_floor(kernel),
            })
            .collect(),
    }
}

/// The catalog-wide medians of rule 3, computed once.
static MEDIANS: LazyLock<Medians> = LazyLock::new(|| medians(ENTRIES));

/// The reference ceilings of catalog entry `entry` under the rules of this module.
pub(super) fn for_entry(entry: &CatalogEntry) -> ReferenceCeilings {
    let device = Device {
        arch: entry.arch,
        entry: Some(entry),
    };
    ceilings(
        ENTRIES,
        device,
        entry.dense_tflops.iter().map(|&(p, _)| p),
        entry.interconnect.as_ref().map(|i| i.link),
        *MEDIANS,
    )
}

/// Reference ceilings for a device outside the catalog (or a spec whose ceilings were dropped): the rules
/// without a measurement of its own, so `arch` picks a same-architecture measurement where the catalog has one.
pub(super) fn custom_ceilings(
    arch: Architecture,
    paths: impl Iterator<Item = ComputePath>,
    link: Option<Link>,
) -> ReferenceCeilings {
    let device = Device { arch, entry: None };
    ceilings(ENTRIES, device, paths, link, *MEDIANS)
}

#[cfg(test)]
mod tests;
