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
//! GEMMs also get a fraction per kernel family ([`GemmFamily`]: FP8 per-tensor, FP8 block-scaled, MXFP8,
//! NVFP4, MXFP4, INT8 W8A8, weight-only) on each path the device runs it on, because the scaling recipe
//! changes what tuned kernels reach (docs/research/low-precision.md; docs/validation/low-precision.md). For
//! family F on path P, in this order:
//!
//! 4. GEMM fraction: the device's own `measured_gemm` figure of F, else of a related family
//!    ([`related_families`]: FP8 per-tensor ↔ FP8 block-scaled ↔ MXFP8, NVFP4 ↔ MXFP4, INT8 → FP8
//!    per-tensor); else a device of the same architecture family (Blackwell and Blackwell Ultra count as one)
//!    with such a figure, scaled by the ratio of the two devices' P fractions (rule 1): this device's P
//!    fraction × theirs of F / theirs of P; else the P fraction of rule 1. FP4 no longer takes FP8's
//!    fraction where any FP4 family is measured on the architecture. INT8 W8A8, which no source measures,
//!    takes the device's FP8 per-tensor figure (the same 8-bit tensor rate) where it runs FP8, else the INT8
//!    path's. Weight-only (mixed-input) GEMMs take the fraction of their activations' path (FP8 per-tensor
//!    for W4A8) × [`MIXED_INPUT_CAP`].
//! 5. Small-M DRAM fraction of F (bytes over the kernel's time less its floor, as decode GEMVs stream their
//!    weights): the device's own figure of F (or a related family), else a same-architecture device's scaled
//!    by the two devices' DRAM fractions, else the device's DRAM fraction (rule 2/3).
//!
//! The kernel floors are the same for every device, one per family and one per activation-quantization
//! kernel ([`family_floor`], [`quantize_floor`]); no per-device figure is published.
//!
//! A device with a scale-up interconnect also gets a collective fraction (the share of its per-direction
//! link bandwidth a ring collective reaches, nccl-tests' bus bandwidth): its own measurement, else the first
//! device with the same link kind that has one, else the median of the measured ones; and NCCL's own cost
//! model for the latencies ([`COLLECTIVE_BASE_LATENCY_S`] per collective plus [`NVLINK_STEP_LATENCY_S`] or
//! [`PCIE_STEP_LATENCY_S`] per ring step).

use super::catalog::{CatalogEntry, FamilyMeasurement};
use super::interconnect::{Interconnect, Link};
use crate::precision::{Architecture, ComputePath, GemmFamily, Precision, QuantizeKernel};

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

/// Fixed time of one FP8 block-scaled (1×128 / 128×128) GEMM, in seconds (7.6 µs).
///
/// Source: FlashInfer's CUTLASS blockwise FP8 GEMM on a B200, 7.5–7.7 µs at 8–256×2048×1024 (CUPTI, L2
/// flushed; NVIDIA/cutlass issue #2923), the CUTLASS kernel family vLLM's and SGLang's default block-FP8
/// paths use (TensorRT-LLM's groupwise kernel took 5.0–5.2 µs in the same run).
pub const FP8_BLOCK_GEMM_FLOOR_S: f64 = 7.6e-6;

/// Fixed time of one MXFP8 GEMM, in seconds (5.1 µs).
///
/// Source: FlashInfer `mm_mxfp8` on a B200 (sm_100 gate), 4.9–5.3 µs at 1×6144×768, where the bytes take
/// under 1 µs (vllm-project/vllm PR #46393).
pub const MXFP8_GEMM_FLOOR_S: f64 = 5.1e-6;

/// Fixed time of one block-scaled FP4 GEMM (NVFP4, MXFP4), in seconds (4.1 µs).
///
/// Derived: the intercept of a least-squares line through vLLM's CUTLASS NVFP4 W4A4 GEMVs on a B200 at nine
/// LLM shapes, 4096×4096 to 8192×28672 (time = 4.1 µs + bytes / 2.54 TB/s; cold-L2 CUDA graphs,
/// pytorch/helion PR #3046); FlashInfer's NVFP4 GEMMs at M = 1, 1×896×1024, took 4.2–4.7 µs on a GB200
/// (flashinfer-ai/flashinfer PR #2540).
pub const FP4_GEMM_FLOOR_S: f64 = 4.1e-6;

/// Fixed time of one weight-only (mixed-input) GEMM, in seconds (6.7 µs).
///
/// Derived: the intercept of a least-squares line through vLLM's CUTLASS NVFP4 W4A16 GEMVs on a GB200 at
/// nine LLM shapes (time = 6.7 µs + bytes / 2.84 TB/s; CUDA graphs, L2 cleared; pytorch/helion PR #3079);
/// Marlin W4A16 took 5.7–6.9 µs at 1–16×1024×2048 on sm_75 (vllm-project/vllm PR #29901).
pub const WEIGHT_ONLY_GEMM_FLOOR_S: f64 = 6.7e-6;

/// The share of its activations' GEMM fraction a weight-only (mixed-input) GEMM reaches at large M (0.75).
///
/// Source: Marlin's `mma` kernels reach "at best ~75 % of peak" on Hopper (vllm-project/vllm PR #7174, the
/// Machete announcement); no large-M TFLOP/s of Marlin, Machete or a W4A8 kernel on a catalog device is
/// published with its GPU named (docs/research/low-precision.md §1.7).
pub const MIXED_INPUT_CAP: f64 = 0.75;

/// Fixed time of the absolute-maximum reduction of a dynamic per-tensor FP8 scale, in seconds (4.5 µs).
///
/// Derived: vLLM's dynamic per-tensor FP8 quantization (`segmented_max_reduction`, then
/// `scaled_fp8_quant_kernel`) takes 7 µs for one token × 2048 on an H100 (`do_bench_cudagraph`;
/// vllm-project/vllm PR #33867), of which the quantization alone takes 2.5 µs ([`PER_TENSOR_QUANT_FLOOR_S`]).
pub const ABSMAX_FLOOR_S: f64 = 4.5e-6;

/// Fixed time of one per-tensor FP8 (or INT8) quantization with a known scale, in seconds (2.5 µs).
///
/// Source: vLLM's `static_scaled_fp8_quant` takes 2–3 µs for 1–512 tokens × 2048 on an H100
/// (`do_bench_cudagraph`; vllm-project/vllm PR #33918).
pub const PER_TENSOR_QUANT_FLOOR_S: f64 = 2.5e-6;

/// Fixed time of one per-row quantization (per token, or per 1×128 group of a token), in seconds (3.3 µs).
///
/// Source: vLLM's per-token-group FP8 quantization CUDA kernel takes 2.8–3.9 µs for 4–256 tokens × 2048 or
/// 4096 on a B200 (pytorch/helion PR #3073).
pub const PER_ROW_QUANT_FLOOR_S: f64 = 3.3e-6;

/// Fixed time of one block-scaled FP4/MX quantization, in seconds (1.9 µs).
///
/// Source: vLLM's `scaled_fp4_quant` takes 1.79–1.99 µs for 1–32 tokens × 4096 on a B200 (CUDA graph p50;
/// vllm-project/vllm PR #43658). MX formats compute their E8M0 scales the same way, in registers.
pub const BLOCK_QUANT_FLOOR_S: f64 = 1.9e-6;

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

/// The reference ceilings of one GEMM kernel family on one compute path.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FamilyReference {
    /// The kernel family.
    pub family: GemmFamily,
    /// The path it runs on (the activations' path for weight-only GEMMs).
    pub path: ComputePath,
    /// Fraction of the path's dense peak it reaches at large shapes, in (0, 1].
    pub gemm_fraction: Sourced,
    /// Fraction of the datasheet DRAM bandwidth it streams at small M, in (0, 1].
    pub dram_fraction: Sourced,
    /// Fixed time per kernel, in seconds.
    pub kernel_floor: Sourced,
}

/// The fixed time of one activation-quantization kernel.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct QuantizeFloor {
    /// The kernel.
    pub kernel: QuantizeKernel,
    /// Its fixed time, in seconds.
    pub floor: Sourced,
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

/// The fixed time of one GEMM of `family`, with its source (the constants above).
#[must_use]
pub fn family_floor(family: GemmFamily) -> Sourced {
    let (value, basis) = match family {
        GemmFamily::Plain | GemmFamily::Fp8Tensor => (
            MATRIX_KERNEL_FLOOR_S,
            "source: small cuBLAS GEMMs 4.9–5.3 µs (NVIDIA/cutlass#2923, flashinfer#2277); cuBLASLt on H100 \
             5.3–7.1 µs (docs/validation)",
        ),
        GemmFamily::Int8 => (
            MATRIX_KERNEL_FLOOR_S,
            "derived: no INT8 GEMM floor published; the plain GEMM floor",
        ),
        GemmFamily::Fp8Block => (
            FP8_BLOCK_GEMM_FLOOR_S,
            "source: CUTLASS blockwise FP8 GEMM 7.5–7.7 µs at 8–256×2048×1024 on B200 (NVIDIA/cutlass#2923)",
        ),
        GemmFamily::Mxfp8 => (
            MXFP8_GEMM_FLOOR_S,
            "source: FlashInfer mm_mxfp8 4.9–5.3 µs at 1×6144×768 on B200 (vllm-project/vllm#46393)",
        ),
        GemmFamily::Nvfp4 | GemmFamily::Mxfp4 => (
            FP4_GEMM_FLOOR_S,
            "derived: intercept of vLLM CUTLASS NVFP4 GEMVs at nine shapes on B200 (pytorch/helion#3046); \
             FlashInfer 4.2–4.7 µs at 1×896×1024 on GB200 (flashinfer#2540)",
        ),
        GemmFamily::WeightOnly => (
            WEIGHT_ONLY_GEMM_FLOOR_S,
            "derived: intercept of vLLM CUTLASS NVFP4 W4A16 GEMVs at nine shapes on GB200 \
             (pytorch/helion#3079); Marlin 5.7–6.9 µs on sm_75 (vllm-project/vllm#29901)",
        ),
    };
    Sourced {
        value,
        basis: basis.to_owned(),
    }
}

/// The fixed time of one activation-quantization kernel, with its source (the constants above).
#[must_use]
pub fn quantize_floor(kernel: QuantizeKernel) -> Sourced {
    let (value, basis) = match kernel {
        QuantizeKernel::AbsMax => (
            ABSMAX_FLOOR_S,
            "derived: vLLM dynamic per-tensor FP8 quantization 7 µs in two kernels (vllm-project/vllm#33867) \
             less the 2.5 µs quantization (#33918), H100 CUDA graph",
        ),
        QuantizeKernel::PerTensor => (
            PER_TENSOR_QUANT_FLOOR_S,
            "source: vLLM static_scaled_fp8_quant 2–3 µs, 1–512 tokens, H100 CUDA graph (vllm-project/vllm#33918)",
        ),
        QuantizeKernel::PerRow => (
            PER_ROW_QUANT_FLOOR_S,
            "source: vLLM per-token-group FP8 quantization 2.8–3.9 µs, 4–256 tokens, B200 (pytorch/helion#3073)",
        ),
        QuantizeKernel::Block => (
            BLOCK_QUANT_FLOOR_S,
            "source: vLLM scaled_fp4_quant 1.79–1.99 µs, 1–32 tokens × 4096, B200 (vllm-project/vllm#43658)",
        ),
    };
    Sourced {
        value,
        basis: basis.to_owned(),
    }
}

/// The families whose measurement stands in for `family` when the device (or its architecture) has none of
/// its own, nearest first: the other 8-bit floating-point recipes for FP8 and MXFP8, the other FP4 recipe for
/// FP4. (INT8 and weight-only GEMMs are derived from another family's whole figure instead, rule 4.)
#[must_use]
pub const fn related_families(family: GemmFamily) -> &'static [GemmFamily] {
    use GemmFamily as F;
    match family {
        F::Fp8Tensor => &[F::Fp8Block, F::Mxfp8],
        F::Fp8Block => &[F::Mxfp8, F::Fp8Tensor],
        F::Mxfp8 => &[F::Fp8Block, F::Fp8Tensor],
        F::Nvfp4 => &[F::Mxfp4],
        F::Mxfp4 => &[F::Nvfp4],
        F::Plain | F::Int8 | F::WeightOnly => &[],
    }
}

/// A format of `family` to ask the architecture whether it runs the family.
const fn representative(family: GemmFamily) -> Option<Precision> {
    match family {
        GemmFamily::Fp8Tensor => Some(Precision::Fp8E4M3),
        GemmFamily::Fp8Block => Some(Precision::Fp8Group128),
        GemmFamily::Mxfp8 => Some(Precision::Mxfp8E4M3),
        GemmFamily::Nvfp4 => Some(Precision::Nvfp4),
        GemmFamily::Mxfp4 => Some(Precision::Mxfp4),
        GemmFamily::Int8 => Some(Precision::Int8),
        GemmFamily::Plain | GemmFamily::WeightOnly => None,
    }
}

/// The (family, path) pairs a device of `arch` with peaks on `paths` runs: each scaled family on its path
/// where the architecture takes its format, and weight-only GEMMs on every 16-bit, FP8 or FP6 path.
fn family_paths(arch: Architecture, paths: &[ComputePath]) -> Vec<(GemmFamily, ComputePath)> {
    let mut out = Vec::new();
    for family in GemmFamily::ALL {
        match (family.path(), representative(family)) {
            (Some(path), Some(format)) if paths.contains(&path) && arch.runs_format(format) => {
                out.push((family, path));
            }
            _ if family == GemmFamily::WeightOnly => out.extend(
                [
                    ComputePath::Fp16,
                    ComputePath::Bf16,
                    ComputePath::Fp8,
                    ComputePath::Fp6,
                ]
                .into_iter()
                .filter(|p| paths.contains(p))
                .map(|p| (family, p)),
            ),
            _ => {}
        }
    }
    out
}

/// Whether two architectures share their family measurements: the same one, or Blackwell and Blackwell
/// Ultra (sm_100 and sm_103 run the same tcgen05 kernels).
fn same_group(a: Architecture, b: Architecture) -> bool {
    use Architecture as A;
    a == b
        || matches!(
            (a, b),
            (A::Blackwell, A::BlackwellUltra) | (A::BlackwellUltra, A::Blackwell)
        )
}

fn family_measurement(
    entry: &CatalogEntry,
    family: GemmFamily,
    dram: bool,
) -> Option<(&FamilyMeasurement, f64)> {
    entry.measured_families.iter().find_map(|m| {
        let value = if dram { m.dram_fraction } else { m.gemm_fraction };
        (m.family == family).then_some(value).flatten().map(|v| (m, v))
    })
}

impl<'a> Device<'a> {
    /// The other catalog rows of the same architecture family, same architecture first, in catalog order.
    fn same_group(self, entries: &'a [CatalogEntry]) -> impl Iterator<Item = &'a CatalogEntry> {
        let others = move |e: &&CatalogEntry| self.entry.is_none_or(|own| own.key != e.key);
        let exact = entries.iter().filter(move |e| e.arch == self.arch).filter(others);
        let sibling = entries
            .iter()
            .filter(move |e| e.arch != self.arch && same_group(e.arch, self.arch))
            .filter(others);
        exact.chain(sibling)
    }

    fn of(entry: &'a CatalogEntry) -> Device<'a> {
        Device {
            arch: entry.arch,
            entry: Some(entry),
        }
    }
}

/// A family figure (GEMM or small-M DRAM fraction) by rules 4 and 5 of the module docs: `scale(other)` is the
/// factor that carries another device's figure to this one, `fallback` the figure when nobody measured it.
fn family_figure(
    entries: &[CatalogEntry],
    device: Device<'_>,
    family: GemmFamily,
    dram: bool,
    scale: impl Fn(&CatalogEntry) -> (f64, String),
    fallback: impl FnOnce() -> Sourced,
) -> Sourced {
    let what = if dram { "small-M DRAM" } else { "GEMM" };
    let candidates: Vec<GemmFamily> = std::iter::once(family)
        .chain(related_families(family).iter().copied())
        .collect();
    let cite = |m: &FamilyMeasurement| format!("{}; {}", m.what, m.source);
    if let Some(entry) = device.entry {
        for &g in &candidates {
            if let Some((m, v)) = family_measurement(entry, g, dram) {
                let basis = if g == family {
                    format!("measured: {g} {what} {} ({})", percent(v), cite(m))
                } else {
                    format!(
                        "derived: this device's measured {g} {what} fraction {} ({}); no {family} measurement",
                        percent(v),
                        cite(m)
                    )
                };
                return Sourced { value: v, basis };
            }
        }
    }
    for &g in &candidates {
        if let Some((other, (m, v))) = device
            .same_group(entries)
            .find_map(|o| family_measurement(o, g, dram).map(|found| (o, found)))
        {
            let (factor, why) = scale(other);
            let value = (v * factor).min(1.0);
            return Sourced {
                value,
                basis: format!(
                    "derived: {}'s measured {g} {what} fraction {} × {why} ({}; same architecture family)",
                    other.key,
                    percent(v),
                    cite(m)
                ),
            };
        }
    }
    fallback()
}

/// The ceilings of `family` on `path` for `device` (rules 4 and 5 of the module docs).
fn family_reference(
    entries: &[CatalogEntry],
    device: Device<'_>,
    family: GemmFamily,
    path: ComputePath,
    m: Medians,
) -> FamilyReference {
    let path_fraction = |d: Device<'_>| gemm_fraction(entries, d, path, m);
    let own_path = path_fraction(device);
    let fp8_tensor = || family_reference(entries, device, GemmFamily::Fp8Tensor, ComputePath::Fp8, m);
    let runs_fp8 = device.arch.runs_format(Precision::Fp8E4M3)
        && device
            .entry
            .is_none_or(|e| e.dense_tflops.iter().any(|&(p, _)| p == ComputePath::Fp8));
    let gemm_fraction = if family == GemmFamily::Int8 && runs_fp8 {
        let base = fp8_tensor().gemm_fraction;
        Sourced {
            value: base.value,
            basis: format!(
                "derived: no INT8 GEMM measurement published; this device's FP8 per-tensor fraction (the same \
                 8-bit tensor rate): {}",
                base.basis
            ),
        }
    } else if family == GemmFamily::WeightOnly {
        let base = if path == ComputePath::Fp8 {
            fp8_tensor().gemm_fraction
        } else {
            own_path
        };
        Sourced {
            value: base.value * MIXED_INPUT_CAP,
            basis: format!(
                "derived: the activations' {path} GEMM fraction {} × {MIXED_INPUT_CAP} (Marlin-class mixed-input \
                 kernels reach at best ~75 % of peak, vllm-project/vllm#7174); activations: {}",
                percent(base.value),
                base.basis
            ),
        }
    } else {
        family_figure(
            entries,
            device,
            family,
            false,
            |other| {
                let theirs = path_fraction(Device::of(other)).value;
                (
                    own_path.value / theirs,
                    format!(
                        "this device's {path} fraction {} / {}'s {}",
                        percent(own_path.value),
                        other.key,
                        percent(theirs)
                    ),
                )
            },
            || Sourced {
                value: own_path.value,
                basis: format!(
                    "derived: no {family} GEMM measurement on this architecture; the {path} path's fraction ({})",
                    own_path.basis
                ),
            },
        )
    };
    let own_dram = dram_fraction(entries, device, m);
    let dram_fraction = family_figure(
        entries,
        device,
        family,
        true,
        |other| {
            let theirs = dram_fraction(entries, Device::of(other), m).value;
            (
                own_dram.value / theirs,
                format!(
                    "this device's DRAM fraction {} / {}'s {}",
                    percent(own_dram.value),
                    other.key,
                    percent(theirs)
                ),
            )
        },
        || Sourced {
            value: own_dram.value,
            basis: format!(
                "derived: no small-M {family} measurement on this architecture; the device's DRAM fraction ({})",
                own_dram.basis
            ),
        },
    );
    FamilyReference {
        family,
        path,
        gemm_fraction,
        dram_fraction,
        kernel_floor: family_floor(family),
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

/// The collective fraction of a device with link `link` (rules in the module docs).
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

/// The reference ceilings of catalog entry `entry` under the rules of this module.
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

/// The reference ceilings of catalog entry `entry` under the rules of this module.
pub(super) fn for_entry(entries: &[CatalogEntry], entry: &CatalogEntry, m: Medians) -> ReferenceCeilings {
    let device = Device {
        arch: entry.arch,
        entry: Some(entry),
    };
    ceilings(
        entries,
        device,
        entry.dense_tflops.iter().map(|&(p, _)| p),
        entry.interconnect.as_ref().map(|i| i.link),
        m,
    )
}

/// Reference ceilings for a device outside the catalog (or a spec whose ceilings were dropped): the rules
/// without a measurement of its own, so `arch` picks a same-architecture measurement where the catalog has one.
pub(super) fn for_custom(
    entries: &[CatalogEntry],
    arch: Architecture,
    paths: impl Iterator<Item = ComputePath>,
    link: Option<Link>,
    m: Medians,
) -> ReferenceCeilings {
    let device = Device { arch, entry: None };
    ceilings(entries, device, paths, link, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::{Mode, Provenance, catalog, find_hardware, find_hardware_in};
    use crate::precision::GemmFamily;

    #[test]
    fn every_catalog_device_has_a_reference_spec_below_its_datasheet() {
        for h in catalog() {
            let r = find_hardware_in(&h.key, Mode::Reference).unwrap();
            assert_eq!(Mode::of(r), Mode::Reference);
            assert!(
                r.dram_bandwidth_bytes_per_s < h.dram_bandwidth_bytes_per_s,
                "{}",
                h.key
            );
            assert_eq!(r.peaks.len(), h.peaks.len(), "{}", h.key);
            for (rp, dp) in r.peaks.iter().zip(&h.peaks) {
                assert!(rp.dense_flop_per_s < dp.dense_flop_per_s, "{} {}", h.key, dp.path);
                assert_eq!(rp.kernel_overhead_s, Some(MATRIX_KERNEL_FLOOR_S));
            }
            assert_eq!(r.kernel_overhead_s, VECTOR_KERNEL_FLOOR_S);
            // Reference of a reference would count the losses twice.
            assert!(r.reference().is_err());
        }
    }

    #[test]
    fn reference_rules_pick_the_nearest_measurement() {
        let basis = |key: &str, path| {
            find_hardware(key)
                .unwrap()
                .reference_ceilings()
                .gemm_fraction(path)
                .unwrap()
                .clone()
        };
        // H200 publishes FP8 only (73.4 %); its BF16 is H100 SXM's measured 80.3 % (same architecture).
        let h200_bf16 = basis("h200_sxm", ComputePath::Bf16);
        assert_eq!(h200_bf16.value, 0.803);
        assert!(h200_bf16.basis.contains("h100_sxm"), "{}", h200_bf16.basis);
        assert_eq!(basis("h200_sxm", ComputePath::Fp8).value, 0.734);
        assert!(basis("h200_sxm", ComputePath::Fp8).basis.starts_with("measured"));
        // GB10: NVFP4 measured 356 of 500 TFLOP/s; BF16 from its own FP8 (188 of 250).
        assert_eq!(basis("gb10", ComputePath::Fp4).value, 0.71);
        assert_eq!(basis("gb10", ComputePath::Bf16).value, 0.75);
        // B200 has no FP4 measurement: its FP8 76.3 %.
        assert_eq!(basis("b200", ComputePath::Fp4).value, 0.763);
        // TPU v5e has nothing: the median of the nine measured BF16 fractions
        // (0.511 0.600 0.622 0.677 0.729 0.776 0.786 0.803 0.869) is 0.729.
        let tpu = basis("tpu_v5e", ComputePath::Bf16);
        assert_eq!(tpu.value, 0.729);
        assert!(tpu.basis.starts_with("derived: median"));
        // DRAM: the median of the seven measured fractions (0.715 0.738 0.81 0.899 0.91 0.97 0.977) is 0.899.
        let b200 = find_hardware("b200").unwrap().reference_ceilings();
        assert_eq!(b200.dram_fraction.value, 0.899);
        // A custom device gets the same rules for its architecture.
        let mut custom = find_hardware("h100_sxm").unwrap().clone();
        custom.provenance = Provenance::Custom;
        custom.reference = None;
        assert_eq!(
            custom
                .reference_ceilings()
                .gemm_fraction(ComputePath::Bf16)
                .unwrap()
                .value,
            0.803
        );
    }

    #[test]
    fn family_fractions_follow_the_rules() {
        // B200 NVFP4: 0.42 of 9 PFLOP/s (vLLM CUTLASS, FlashInfer), no longer FP8's 0.763.
        let b200 = find_hardware("b200").unwrap().reference_ceilings();
        let measured = b200.family(GemmFamily::Nvfp4, ComputePath::Fp4).unwrap();
        assert_eq!(measured.gemm_fraction.value, 0.42);
        assert!(measured.gemm_fraction.basis.starts_with("measured"));
        // B300 measures no FP4: B200's NVFP4 × B300's FP8 fraction 0.745 / B200's 0.763 (rule 4).
        let b300 = find_hardware("b300").unwrap().reference_ceilings();
        let nvfp4 = b300.family(GemmFamily::Nvfp4, ComputePath::Fp4).unwrap();
        assert!((nvfp4.gemm_fraction.value - 0.42 * 0.745 / 0.763).abs() < 1e-12);
        assert!(
            nvfp4.gemm_fraction.basis.contains("b200"),
            "{}",
            nvfp4.gemm_fraction.basis
        );
        // GB200 FP8 per-tensor: B200's 0.565 × 0.723 / 0.763 (research: 0.54).
        let gb200 = find_hardware("gb200").unwrap().reference_ceilings();
        let fp8 = gb200.family(GemmFamily::Fp8Tensor, ComputePath::Fp8).unwrap();
        assert!((fp8.gemm_fraction.value - 0.565 * 0.723 / 0.763).abs() < 1e-12);
        // Weight-only at large M: the activations' path × 0.75 (H100 BF16: 0.803 × 0.75).
        let h100 = find_hardware("h100_sxm").unwrap().reference_ceilings();
        let w4a16 = h100.family(GemmFamily::WeightOnly, ComputePath::Bf16).unwrap();
        assert!((w4a16.gemm_fraction.value - 0.803 * 0.75).abs() < 1e-12);
        // INT8 on an H100: nothing measured, its FP8 per-tensor figure; on an A100 (no FP8), the INT8 path's.
        assert_eq!(
            h100.family(GemmFamily::Int8, ComputePath::Int8)
                .unwrap()
                .gemm_fraction
                .value,
            0.666
        );
        let a100 = find_hardware("a100_sxm_80gb").unwrap().reference_ceilings();
        assert_eq!(
            a100.family(GemmFamily::Int8, ComputePath::Int8)
                .unwrap()
                .gemm_fraction
                .value,
            0.869
        );
        // Hopper runs no FP4 or MX family; CDNA4 runs MXFP4 but not NVFP4.
        assert!(h100.family(GemmFamily::Nvfp4, ComputePath::Fp4).is_none());
        let mi355 = find_hardware("mi355x").unwrap().reference_ceilings();
        assert!(mi355.family(GemmFamily::Mxfp4, ComputePath::Fp4).is_some());
        assert!(mi355.family(GemmFamily::Nvfp4, ComputePath::Fp4).is_none());
    }
}
