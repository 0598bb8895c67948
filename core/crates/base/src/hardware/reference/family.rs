//! Reference ceilings per GEMM kernel family (rules 4 and 5 of the parent module): each family's large-shape
//! fraction and small-M DRAM fraction on each path a device runs it on, the floors per family and per
//! activation-quantization kernel, with their sources (docs/research/low-precision.md,
//! docs/validation/low-precision.md).

use super::{CatalogEntry, Device, Medians, Sourced, dram_fraction, gemm_fraction, percent};
use crate::hardware::entry::FamilyMeasurement;
use crate::precision::{Architecture, ComputePath, GemmFamily, Precision, QuantizeKernel};

use super::MATRIX_KERNEL_FLOOR_S;

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

/// Fixed time of one block-scaled FP4 GEMM (NVFP4, MXFP4), in seconds (4.1 µs), where no small-M fit of the
/// device's architecture gives one (sm_100/sm_103 take theirs: 6.0 µs on the B200, 5.7 µs on the GB200).
///
/// Derived: the intercept of a least-squares line through vLLM's CUTLASS NVFP4 W4A4 GEMVs on a B200 at nine
/// LLM shapes, 4096×4096 to 8192×28672 (time = 4.1 µs + bytes / 2.54 TB/s; cold-L2 CUDA graphs,
/// pytorch/helion PR #3046); FlashInfer's NVFP4 GEMMs at M = 1, 1×896×1024, took 4.2–4.7 µs on a GB200
/// (flashinfer-ai/flashinfer PR #2540).
pub const FP4_GEMM_FLOOR_S: f64 = 4.1e-6;

/// Fixed time of one weight-only (mixed-input) GEMM, in seconds (6.7 µs), where no small-M fit of the device's
/// architecture gives one (the A100 and the Ada devices take TensorRT-LLM's: 22.3 µs and 6.0 µs).
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
pub(super) fn family_paths(arch: Architecture, paths: &[ComputePath]) -> Vec<(GemmFamily, ComputePath)> {
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

/// A family figure (GEMM or small-M DRAM fraction) by rules 4 and 5 of docs/design/core.md (reference.rs): `scale(other)` is the
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

/// The small-M measurement rule 5 takes `family`'s DRAM fraction from: the device's own (the family's, then a
/// related family's), then a same-architecture device's, in that order.
fn small_m_measurement<'a>(
    entries: &'a [CatalogEntry],
    device: Device<'a>,
    family: GemmFamily,
) -> Option<(&'a CatalogEntry, &'a FamilyMeasurement)> {
    let candidates: Vec<GemmFamily> = std::iter::once(family)
        .chain(related_families(family).iter().copied())
        .collect();
    let find = |e: &'a CatalogEntry, g: GemmFamily| family_measurement(e, g, true).map(|(m, _)| (e, m));
    let own = device
        .entry
        .and_then(|e| candidates.iter().find_map(|&g| find(e, g)));
    own.or_else(|| {
        candidates
            .iter()
            .find_map(|&g| device.same_group(entries).find_map(|o| find(o, g)))
    })
}

/// The fixed time of one `family` GEMM on `device`: the floor fitted with the small-M measurement its DRAM
/// fraction comes from, where that fit gives one, else the family's constant ([`family_floor`]).
fn kernel_floor(entries: &[CatalogEntry], device: Device<'_>, family: GemmFamily) -> Sourced {
    let Some((entry, m, floor)) =
        small_m_measurement(entries, device, family).and_then(|(e, m)| m.floor_s.map(|f| (e, m, f)))
    else {
        return family_floor(family);
    };
    let own = device.entry.is_some_and(|d| d.key == entry.key) && m.family == family;
    let kind = if own { "measured" } else { "derived" };
    Sourced {
        value: floor,
        basis: format!(
            "{kind}: {}'s {} small-M fit, {:.1} µs per kernel ({}; {})",
            entry.key,
            m.family,
            floor * 1e6,
            m.what,
            m.source
        ),
    }
}

/// The ceilings of `family` on `path` for `device` (rules 4 and 5 of docs/design/core.md (reference.rs)).
pub(super) fn family_reference(
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
        kernel_floor: kernel_floor(entries, device, family),
    }
}
