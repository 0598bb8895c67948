//! Hardware specs: the sourced catalog, custom devices and measured (calibrated) specs share one type, with
//! the scale-up interconnect multi-GPU analysis needs ([`Interconnect`], `interconnect.rs`).

mod catalog;
mod interconnect;
mod reference;

pub use interconnect::{Collective, Interconnect, Link, Topology};

pub use reference::{
    COLLECTIVE_BASE_LATENCY_S, GemmFraction, MATRIX_KERNEL_FLOOR_S, NVLINK_STEP_LATENCY_S,
    PCIE_STEP_LATENCY_S, ReferenceCeilings, Sourced, VECTOR_KERNEL_FLOOR_S, fallback_paths,
};

use std::fmt;
use std::sync::LazyLock;

use crate::units::{GIGA, MEGA, TERA};
use crate::{Error, Precision};
use interconnect::InterconnectEntry;

/// A class of matrix-unit (or vector-unit) throughput a device publishes a peak for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ComputePath {
    /// FP64 (tensor path where one exists).
    Fp64,
    /// FP32 on the vector units.
    Fp32,
    /// TF32 tensor path.
    Tf32,
    /// FP16 tensor path, FP32 accumulate.
    Fp16,
    /// BF16 tensor path, FP32 accumulate.
    Bf16,
    /// FP8 (E4M3/E5M2) tensor path, FP32 accumulate.
    Fp8,
    /// FP6 tensor path.
    Fp6,
    /// FP4 (E2M1, block-scaled) tensor path.
    Fp4,
    /// INT8 tensor path.
    Int8,
    /// INT4 tensor path.
    Int4,
}

impl ComputePath {
    /// Every path, in display order.
    pub const ALL: [ComputePath; 10] = [
        ComputePath::Fp64,
        ComputePath::Fp32,
        ComputePath::Tf32,
        ComputePath::Fp16,
        ComputePath::Bf16,
        ComputePath::Fp8,
        ComputePath::Fp6,
        ComputePath::Fp4,
        ComputePath::Int8,
        ComputePath::Int4,
    ];

    /// The display name, e.g. `FP8`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ComputePath::Fp64 => "FP64",
            ComputePath::Fp32 => "FP32",
            ComputePath::Tf32 => "TF32",
            ComputePath::Fp16 => "FP16",
            ComputePath::Bf16 => "BF16",
            ComputePath::Fp8 => "FP8",
            ComputePath::Fp6 => "FP6",
            ComputePath::Fp4 => "FP4",
            ComputePath::Int8 => "INT8",
            ComputePath::Int4 => "INT4",
        }
    }
}

impl fmt::Display for ComputePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Architecture family, which decides the formats the matrix units run natively
/// (docs/research/hardware.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Architecture {
    /// NVIDIA Ampere, sm_80/87: INT4 tensor path, no FP8.
    Ampere,
    /// NVIDIA Ada, sm_89: FP8 and INT4 tensor paths.
    Ada,
    /// NVIDIA Hopper, sm_90: FP8, no INT4 and no FP4.
    Hopper,
    /// NVIDIA Blackwell datacenter, sm_100: FP8, FP6, NVFP4 and MXFP4.
    Blackwell,
    /// NVIDIA Blackwell Ultra, sm_103.
    BlackwellUltra,
    /// NVIDIA Blackwell RTX and edge, sm_120/121/110 (RTX 50, RTX PRO, GB10, Thor).
    BlackwellRtx,
    /// AMD CDNA3 (MI300X, MI325X): FP8 (FNUZ), no FP4.
    Cdna3,
    /// AMD CDNA4 (MI355X): OCP FP8, MXFP6 and MXFP4, no NVFP4.
    Cdna4,
    /// Google TPU.
    Tpu,
    /// AWS Trainium.
    Trainium,
    /// Intel Gaudi.
    Gaudi,
    /// Apple GPU (no matrix units).
    AppleGpu,
    /// A user-defined device: every path with a peak is taken as native.
    Custom,
}

impl Architecture {
    /// Every architecture, in display order.
    pub const ALL: [Architecture; 13] = [
        Architecture::Ampere,
        Architecture::Ada,
        Architecture::Hopper,
        Architecture::Blackwell,
        Architecture::BlackwellUltra,
        Architecture::BlackwellRtx,
        Architecture::Cdna3,
        Architecture::Cdna4,
        Architecture::Tpu,
        Architecture::Trainium,
        Architecture::Gaudi,
        Architecture::AppleGpu,
        Architecture::Custom,
    ];

    /// Whether the architecture has the compute path `path` natively (docs/research/hardware.md §3): FP8 from
    /// Ada, Hopper and CDNA3 on (never Ampere); FP6 and FP4 only on Blackwell and CDNA4; INT4 only on Ampere
    /// and Ada; TPUs run BF16 and INT8 only. A custom device runs every path it gives a peak for.
    #[must_use]
    pub const fn runs_path(self, path: ComputePath) -> bool {
        use Architecture as A;
        use ComputePath as C;
        let nvidia = matches!(
            self,
            A::Ampere | A::Ada | A::Hopper | A::Blackwell | A::BlackwellUltra | A::BlackwellRtx
        );
        let blackwell = matches!(self, A::Blackwell | A::BlackwellUltra | A::BlackwellRtx);
        match path {
            _ if matches!(self, A::Custom) => true,
            C::Fp32 => true,
            C::Fp64 => nvidia || matches!(self, A::Cdna3 | A::Cdna4),
            C::Tf32 => nvidia || matches!(self, A::Cdna3 | A::Trainium | A::Gaudi),
            C::Fp16 => !matches!(self, A::Tpu),
            C::Bf16 => !matches!(self, A::AppleGpu),
            C::Fp8 => !matches!(self, A::Ampere | A::Tpu | A::AppleGpu),
            C::Fp6 | C::Fp4 => blackwell || matches!(self, A::Cdna4),
            C::Int8 => !matches!(self, A::Trainium | A::AppleGpu),
            C::Int4 => matches!(self, A::Ampere | A::Ada),
        }
    }

    /// Whether the matrix units take `precision` as an operand natively. Its compute path must be native
    /// ([`Architecture::runs_path`]) and block formats are vendor-specific: NVFP4 only on NVIDIA Blackwell,
    /// MXFP8/MXFP6/MXFP4 on NVIDIA Blackwell and AMD CDNA4, MXINT8 nowhere. Storage-only formats (group-wise
    /// INT4, NF4, INT2) are never matrix operands.
    ///
    /// # Examples
    /// ```
    /// use roofline_core::{Architecture, Precision};
    /// assert!(Architecture::Cdna4.runs_format(Precision::Mxfp4));
    /// assert!(!Architecture::Cdna4.runs_format(Precision::Nvfp4));
    /// assert!(!Architecture::Hopper.runs_format(Precision::Int4));
    /// ```
    #[must_use]
    pub const fn runs_format(self, precision: Precision) -> bool {
        use Architecture as A;
        let nvidia_blackwell = matches!(self, A::Blackwell | A::BlackwellUltra | A::BlackwellRtx);
        let custom = matches!(self, A::Custom);
        if precision.is_storage_only() || !self.runs_path(precision.compute_path()) {
            return false;
        }
        match precision {
            Precision::Nvfp4 => nvidia_blackwell || custom,
            Precision::Mxfp4
            | Precision::Mxfp6E3M2
            | Precision::Mxfp6E2M3
            | Precision::Mxfp8E4M3
            | Precision::Mxfp8E5M2 => nvidia_blackwell || custom || matches!(self, A::Cdna4),
            Precision::Mxint8 => custom,
            _ => true,
        }
    }

    /// Whether tensors may be stored in `precision` and dequantized on this architecture: integer and NF4
    /// formats everywhere (software dequantization), floating-point formats only where the architecture
    /// knows the element type natively ([`Architecture::runs_format`]), so no FP8 or FP4 on Ampere.
    #[must_use]
    pub const fn stores_format(self, precision: Precision) -> bool {
        match precision {
            Precision::Int8
            | Precision::Int4
            | Precision::Int4G128
            | Precision::Int4G128Zp
            | Precision::Nf4
            | Precision::Nf4Dq
            | Precision::Int2 => true,
            Precision::Fp64 | Precision::Fp32 | Precision::Tf32 | Precision::Fp16 | Precision::Bf16 => true,
            _ => self.runs_format(precision),
        }
    }

    /// The display name, e.g. `Hopper`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Architecture::Ampere => "Ampere",
            Architecture::Ada => "Ada",
            Architecture::Hopper => "Hopper",
            Architecture::Blackwell => "Blackwell",
            Architecture::BlackwellUltra => "Blackwell Ultra",
            Architecture::BlackwellRtx => "Blackwell RTX/edge",
            Architecture::Cdna3 => "CDNA3",
            Architecture::Cdna4 => "CDNA4",
            Architecture::Tpu => "TPU",
            Architecture::Trainium => "Trainium",
            Architecture::Gaudi => "Gaudi",
            Architecture::AppleGpu => "Apple GPU",
            Architecture::Custom => "Custom",
        }
    }
}

/// Where the numbers of a spec come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Provenance {
    /// Vendor datasheets and the other sources listed in `sources`.
    Datasheet,
    /// Datasheet peaks and bandwidth scaled by the achievable fractions of [`ReferenceCeilings`], plus their
    /// per-kernel floors ([`HardwareSpec::reference`]).
    Reference,
    /// Entered by the user.
    Custom,
    /// Measured on a live device by the endpoint (`sources` says how).
    Measured,
}

/// Which ceilings a prediction runs against; every predicted number says its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Mode {
    /// The ideal bound: datasheet peaks and bandwidth, no per-kernel time, no corrections.
    Datasheet,
    /// The default: what tuned libraries reach ([`ReferenceCeilings`]), per-kernel floors, and the
    /// realistic corrections ([`crate::Corrections::REALISTIC`]).
    #[default]
    Reference,
    /// The user's own measurements (a spec with [`Provenance::Measured`]) and the realistic corrections.
    Calibrated,
}

impl Mode {
    /// Every mode, in display order.
    pub const ALL: [Mode; 3] = [Mode::Datasheet, Mode::Reference, Mode::Calibrated];

    /// `datasheet`, `reference` or `calibrated`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Datasheet => "datasheet",
            Mode::Reference => "reference",
            Mode::Calibrated => "calibrated",
        }
    }

    /// The mode a spec's numbers belong to: measured specs are calibrated, reference specs reference, and
    /// datasheet and custom specs datasheet.
    #[must_use]
    pub fn of(spec: &HardwareSpec) -> Mode {
        match spec.provenance {
            Provenance::Datasheet | Provenance::Custom => Mode::Datasheet,
            Provenance::Reference => Mode::Reference,
            Provenance::Measured => Mode::Calibrated,
        }
    }

    /// Parses `datasheet`, `reference` or `calibrated` (case-insensitive).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the valid modes.
    pub fn parse(s: &str) -> Result<Mode, Error> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown mode {s:?}: use datasheet, reference or calibrated"
                ))
            })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Peak throughput of one compute path.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Peak {
    /// The compute path.
    pub path: ComputePath,
    /// Dense peak (no 2:4 structured sparsity), in FLOP/s (OP/s for integer paths).
    pub dense_flop_per_s: f64,
    /// Peak with 2:4 structured sparsity, where the vendor publishes one, in FLOP/s. Never used for predictions.
    pub sparse_flop_per_s: Option<f64>,
    /// Fixed time every matrix kernel on this path adds to its roofline time, in s; `None` takes the spec's
    /// [`HardwareSpec::kernel_overhead_s`]. Set by [`HardwareSpec::reference`].
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub kernel_overhead_s: Option<f64>,
}

/// What a calibration measured on one device, in base units ([`HardwareSpec::calibrated`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The device as its driver names it.
    pub device_name: String,
    /// Copy bandwidth (read + write bytes over time), in bytes/s.
    pub dram_bandwidth_bytes_per_s: f64,
    /// Fixed time per matrix kernel (a small GEMV's time minus its bytes over the copy bandwidth), in s.
    pub kernel_overhead_s: f64,
    /// Fixed time per vector kernel (a one-row RMSNorm's time minus its bytes over the copy bandwidth), in
    /// s; `None` when it was not measured, and vector kernels then take `kernel_overhead_s`.
    pub vector_kernel_overhead_s: Option<f64>,
    /// Best achieved dense throughput per measured path, in FLOP/s (several entries per path: the best).
    pub peaks: Vec<(ComputePath, f64)>,
    /// How, where and when it was measured.
    pub source: String,
}

/// One accelerator: peaks, memory system and the sources of every number, in base units.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HardwareSpec {
    /// Stable id, e.g. `h100_sxm`.
    pub key: String,
    /// Display name.
    pub name: String,
    /// Vendor.
    pub vendor: String,
    /// Architecture family (native format support).
    pub arch: Architecture,
    /// Architecture as published, e.g. `Hopper sm_90`.
    pub arch_label: String,
    /// Device memory capacity, in bytes.
    pub memory_bytes: f64,
    /// DRAM (HBM, GDDR, LPDDR) bandwidth, in bytes/s.
    pub dram_bandwidth_bytes_per_s: f64,
    /// Last-level on-chip cache, in bytes, where published.
    pub l2_bytes: Option<f64>,
    /// Streaming multiprocessors (AMD CUs, TPU TensorCores, …), where published.
    pub sm_count: Option<u32>,
    /// Boost clock, in Hz, where published.
    pub boost_clock_hz: Option<f64>,
    /// Board or SoC power, in W, where published.
    pub tdp_w: Option<f64>,
    /// Fixed time every kernel adds to its roofline time (launch to first byte, ramp-up, drain, a split-K
    /// pass), in s. 0 on datasheet specs, which publish no such figure; measured by calibration (a small
    /// GEMV's time minus its bytes over the copy bandwidth; about 6.4 µs for cuBLASLt 13.1 GEMVs on an H100
    /// SXM, docs/validation).
    #[cfg_attr(feature = "serde", serde(default))]
    pub kernel_overhead_s: f64,
    /// Peaks per compute path; a path that is absent is not supported natively.
    pub peaks: Vec<Peak>,
    /// Where the numbers come from.
    pub provenance: Provenance,
    /// Citations, one per source.
    pub sources: Vec<String>,
    /// Fields derived by arithmetic rather than published (names as in the research file, e.g. `peak_tflops.fp8`).
    pub derived: Vec<String>,
    /// Fields that are secondary-sourced or contested.
    pub unverified: Vec<String>,
    /// Free-text notes: derivations and contested values.
    pub notes: String,
    /// Achievable fractions and per-kernel floors for reference-mode predictions (catalog devices carry
    /// them; `None` on a custom device takes the catalog-wide defaults).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub reference: Option<ReferenceCeilings>,
    /// Scale-up GPU-to-GPU interconnect, where the research file publishes one (`None`: multi-GPU analysis
    /// is refused, naming the missing figure).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub interconnect: Option<Interconnect>,
    /// For a calibrated spec: the key of the device it calibrates (a catalog or custom device, or
    /// `<backend>_host` for a device without a spec). `None` for every other spec; read it through
    /// [`HardwareSpec::calibrated_base`], which also reads specs stored before the field existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub calibrates: Option<String>,
}

/// The key of the calibrated spec of device `key`: `<key>_measured`.
#[must_use]
pub fn calibrated_key(key: &str) -> String {
    format!("{key}{CALIBRATED_SUFFIX}")
}

/// What [`calibrated_key`] appends.
const CALIBRATED_SUFFIX: &str = "_measured";

impl HardwareSpec {
    /// For a calibrated spec, the key of the device it calibrates: [`HardwareSpec::calibrates`], or, for a
    /// measured spec stored before that field existed, its key without the [`calibrated_key`] suffix. `None`
    /// for every other spec.
    ///
    /// # Examples
    /// ```
    /// use roofline_core::{Provenance, find_hardware};
    /// let gb10 = find_hardware("gb10").unwrap();
    /// assert_eq!(gb10.calibrated_base(), None);
    /// // A calibration saved before the `calibrates` field: read from its key.
    /// let mut saved = gb10.clone();
    /// (saved.key, saved.provenance) = ("gb10_measured".into(), Provenance::Measured);
    /// assert_eq!(saved.calibrated_base(), Some("gb10"));
    /// ```
    #[must_use]
    pub fn calibrated_base(&self) -> Option<&str> {
        self.calibrates.as_deref().or_else(|| {
            (self.provenance == Provenance::Measured)
                .then(|| self.key.strip_suffix(CALIBRATED_SUFFIX))
                .flatten()
        })
    }

    /// The peak of `path`, if the device runs it natively.
    #[must_use]
    pub fn peak(&self, path: ComputePath) -> Option<&Peak> {
        self.peaks.iter().find(|p| p.path == path)
    }

    /// The dense peak that a GEMM on `precision` operands runs at, in FLOP/s.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when the device has no native path for `precision` (never an FP16 fallback).
    pub fn dense_peak_for(&self, precision: Precision) -> Result<f64, Error> {
        let path = precision.compute_path();
        match self.peak(path) {
            Some(peak) if self.arch.runs_format(precision) => Ok(peak.dense_flop_per_s),
            _ => Err(self.unsupported(precision)),
        }
    }

    /// Fixed time a kernel adds to its roofline time, in seconds: the peak's own figure for matrix kernels on
    /// `path` where it has one, else [`HardwareSpec::kernel_overhead_s`]. `None` for vector kernels.
    #[must_use]
    pub fn kernel_overhead_for(&self, path: Option<ComputePath>) -> f64 {
        path.and_then(|p| self.peak(p))
            .and_then(|p| p.kernel_overhead_s)
            .unwrap_or(self.kernel_overhead_s)
    }

    /// The reference ceilings of this device: its own, or the catalog-wide defaults for a device without
    /// any (a custom one).
    #[must_use]
    pub fn reference_ceilings(&self) -> ReferenceCeilings {
        self.reference.clone().unwrap_or_else(|| {
            reference::for_custom(
                catalog::ENTRIES,
                self.arch,
                self.peaks.iter().map(|p| p.path),
                self.interconnect.as_ref().map(|i| i.link),
                *MEDIANS,
            )
        })
    }

    /// The reference spec: every dense peak times its achievable GEMM fraction, the DRAM bandwidth times its
    /// achievable fraction, matrix kernels on each path with the matrix floor and every other kernel with the
    /// vector floor, [`Provenance::Reference`], and the basis of every figure in `sources`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a spec that is already measured or reference (scaling it again would count
    /// the losses twice).
    ///
    /// # Examples
    /// ```
    /// use roofline_core::{find_hardware, ComputePath, Provenance};
    /// let h100 = find_hardware("h100_sxm").unwrap();
    /// let r = h100.reference().unwrap();
    /// // ml-engineering MAMF: 794.5 of 989.4 TFLOP/s BF16 = 80.3 %; docs/validation copy: 89.9 % of 3.35 TB/s.
    /// assert!((r.peak(ComputePath::Bf16).unwrap().dense_flop_per_s - 0.803 * 989.4e12).abs() < 1e6);
    /// assert!((r.dram_bandwidth_bytes_per_s - 0.899 * 3.35e12).abs() < 1.0);
    /// assert_eq!(r.provenance, Provenance::Reference);
    /// ```
    pub fn reference(&self) -> Result<HardwareSpec, Error> {
        if matches!(self.provenance, Provenance::Measured | Provenance::Reference) {
            return Err(Error::InvalidInput(format!(
                "{} already holds achievable ceilings ({:?}); reference mode starts from a datasheet or custom spec",
                self.key, self.provenance
            )));
        }
        let ceilings = self.reference_ceilings();
        let mut spec = self.clone();
        spec.dram_bandwidth_bytes_per_s *= ceilings.dram_fraction.value;
        spec.kernel_overhead_s = ceilings.vector_kernel_floor.value;
        spec.sources.push(format!(
            "reference DRAM ×{:.3}: {}",
            ceilings.dram_fraction.value, ceilings.dram_fraction.basis
        ));
        for peak in &mut spec.peaks {
            if let Some(f) = ceilings.gemm_fraction(peak.path) {
                peak.dense_flop_per_s *= f.value;
                peak.sparse_flop_per_s = None;
                spec.sources.push(format!(
                    "reference {} GEMM ×{:.3}: {}",
                    peak.path, f.value, f.basis
                ));
            }
            peak.kernel_overhead_s = Some(ceilings.matrix_kernel_floor.value);
        }
        spec.sources.push(format!(
            "reference kernel floors: matrix {:.1} µs ({}), vector {:.1} µs ({})",
            ceilings.matrix_kernel_floor.value * 1e6,
            ceilings.matrix_kernel_floor.basis,
            ceilings.vector_kernel_floor.value * 1e6,
            ceilings.vector_kernel_floor.basis
        ));
        if let Some(link) = &mut spec.interconnect {
            ceilings.apply_to_interconnect(link);
            spec.sources.push(format!(
                "reference interconnect: {}",
                ceilings.interconnect_basis()
            ));
        }
        spec.provenance = Provenance::Reference;
        spec.reference = Some(ceilings);
        spec.validate()?;
        Ok(spec)
    }

    /// This device's spec in `mode`: datasheet as it is, reference through [`HardwareSpec::reference`],
    /// calibrated only when it is measured (a calibrated spec comes from `calibrate`, never from a guess).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when the spec cannot be put in `mode`: a measured spec asked for datasheet or
    /// reference, a datasheet spec asked for calibrated (no measurement), a reference spec asked for another
    /// mode.
    pub fn in_mode(&self, mode: Mode) -> Result<HardwareSpec, Error> {
        match (mode, Mode::of(self)) {
            (wanted, have) if wanted == have => Ok(self.clone()),
            (Mode::Reference, Mode::Datasheet) => self.reference(),
            (Mode::Calibrated, _) => Err(Error::InvalidInput(format!(
                "no calibration of {}: measure one (`gpu-endpoint calibrate --json > spec.json`, or the page's \
                 Calibration panel) and pass it (`--spec spec.json`)",
                self.key
            ))),
            (wanted, have) => Err(Error::InvalidInput(format!(
                "{} is a {have} spec and cannot give {wanted} predictions; start from its catalog entry",
                self.key
            ))),
        }
    }

    /// The error saying that this device cannot run or store `precision` natively.
    #[must_use]
    pub fn unsupported(&self, precision: Precision) -> Error {
        Error::Unsupported {
            precision,
            path: precision.compute_path(),
            device: self.key.clone(),
            arch: self.arch_label.clone(),
        }
    }

    /// Checks that tensors can be kept in `precision` on this device ([`Architecture::stores_format`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a floating-point format the architecture does not know (FP8 on Ampere).
    pub fn check_storage(&self, precision: Precision) -> Result<(), Error> {
        if self.arch.stores_format(precision) {
            Ok(())
        } else {
            Err(self.unsupported(precision))
        }
    }

    /// Peak of the vector (non-tensor) units that run elementwise operators, in FLOP/s.
    ///
    /// Rule: the dense FP32 peak. A device that publishes none (TPU v5e, v6e) gets its lowest published
    /// peak, a conservative stand-in; elementwise operators are memory-bound on every catalogued device
    /// either way.
    #[must_use]
    pub fn vector_flop_per_s(&self) -> f64 {
        self.peak(ComputePath::Fp32).map_or_else(
            || {
                self.peaks
                    .iter()
                    .map(|p| p.dense_flop_per_s)
                    .fold(f64::INFINITY, f64::min)
            },
            |p| p.dense_flop_per_s,
        )
    }

    /// The interconnect a group of `gpus` GPUs of this device communicates over: `None` for one GPU.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for zero GPUs, for more than one GPU on a device without a published
    /// interconnect figure (the message names the missing figure), and for more GPUs than its scale-up
    /// domain holds.
    ///
    /// # Examples
    /// ```
    /// use roofline_core::find_hardware;
    /// let h100 = find_hardware("h100_sxm").unwrap();
    /// assert_eq!(h100.interconnect_for(8).unwrap().unwrap().bandwidth_bytes_per_s, 450e9);
    /// assert!(h100.interconnect_for(16).is_err());
    /// assert!(find_hardware("rtx_4090").unwrap().interconnect_for(2).is_err());
    /// ```
    pub fn interconnect_for(&self, gpus: u32) -> Result<Option<&Interconnect>, Error> {
        match (gpus, &self.interconnect) {
            (0, _) => Err(Error::InvalidInput("the GPU count must be at least 1".into())),
            (1, _) => Ok(None),
            (_, None) => Err(Error::InvalidInput(format!(
                "{} has no scale-up interconnect figure (GPU-to-GPU link bandwidth and domain size) in the \
                 catalog, so {gpus} GPUs cannot be analysed; add `interconnect` to a custom spec",
                self.key
            ))),
            (_, Some(link)) if gpus > link.max_gpus => Err(Error::InvalidInput(format!(
                "{gpus} GPUs exceed the scale-up domain of {} ({} GPUs over {})",
                self.key, link.max_gpus, link.link
            ))),
            (_, Some(link)) => Ok(Some(link)),
        }
    }

    /// A spec to calibrate a device with no catalog entry from (a host CPU, an unknown GPU): architecture
    /// [`Architecture::Custom`], no peaks yet, key `key`.
    #[must_use]
    pub fn uncatalogued(key: &str, name: &str, arch_label: &str, memory_bytes: f64) -> HardwareSpec {
        HardwareSpec {
            key: key.to_owned(),
            name: name.to_owned(),
            vendor: String::new(),
            arch: Architecture::Custom,
            arch_label: arch_label.to_owned(),
            memory_bytes: memory_bytes.max(1.0),
            dram_bandwidth_bytes_per_s: 1.0,
            l2_bytes: None,
            sm_count: None,
            boost_clock_hz: None,
            tdp_w: None,
            kernel_overhead_s: 0.0,
            peaks: Vec::new(),
            provenance: Provenance::Custom,
            sources: Vec::new(),
            derived: Vec::new(),
            unverified: Vec::new(),
            notes: String::new(),
            reference: None,
            interconnect: None,
            calibrates: None,
        }
    }

    /// The calibrated spec: the measured DRAM bandwidth, per-kernel overhead and best achieved dense peak of
    /// each measured path replace this spec's, with [`Provenance::Measured`], key `<key>_measured`, and
    /// `calibration.source` as its one source; paths that were not measured keep their peaks (named in
    /// `notes`), sparse peaks of measured paths are dropped; the interconnect, which a one-GPU calibration does
    /// not measure, takes its reference figures. Every prediction runs unchanged on the result
    /// (this is the one calibration model: the endpoint's `calibrate` and the page both use it).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when a measured value is not finite and positive; [`Error::Unsupported`]
    /// when a measured path is not one the architecture has (a custom device takes any path).
    ///
    /// # Examples
    /// ```
    /// use roofline_core::{find_hardware, hardware::Calibration, ComputePath, Provenance};
    /// let h100 = find_hardware("h100_sxm").unwrap();
    /// // ml-engineering MAMF: 794.5 TFLOP/s BF16 measured; an assumed 90 % of 3.35 TB/s streaming.
    /// let calibration = Calibration {
    ///     device_name: "NVIDIA H100 80GB HBM3".into(),
    ///     dram_bandwidth_bytes_per_s: 0.9 * 3.35e12,
    ///     kernel_overhead_s: 6.4e-6,
    ///     vector_kernel_overhead_s: Some(2.5e-6),
    ///     peaks: vec![(ComputePath::Bf16, 794.5e12)],
    ///     source: "example".into(),
    /// };
    /// let cal = h100.calibrated(&calibration).unwrap();
    /// assert_eq!(cal.provenance, Provenance::Measured);
    /// assert_eq!(cal.key, "h100_sxm_measured");
    /// assert_eq!(cal.peak(ComputePath::Bf16).unwrap().dense_flop_per_s, 794.5e12);
    /// // Matrix kernels take the GEMV's overhead, vector kernels (norms, activations) the RMSNorm's.
    /// assert_eq!(cal.kernel_overhead_for(Some(ComputePath::Bf16)), 6.4e-6);
    /// assert_eq!(cal.kernel_overhead_for(None), 2.5e-6);
    /// ```
    pub fn calibrated(&self, calibration: &Calibration) -> Result<HardwareSpec, Error> {
        let mut spec = self.clone();
        let measured = |p: ComputePath| calibration.peaks.iter().any(|(q, _)| *q == p);
        let kept: Vec<&str> = spec
            .peaks
            .iter()
            .filter(|p| !measured(p.path))
            .map(|p| p.path.name())
            .collect();
        spec.notes = if kept.is_empty() {
            "Every peak, the bandwidth and the kernel overhead were measured.".into()
        } else {
            format!(
                "Bandwidth, kernel overhead and {} measured; {} peaks kept from the datasheet.",
                calibration
                    .peaks
                    .iter()
                    .map(|(p, _)| p.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                kept.join(", ")
            )
        };
        spec.key = calibrated_key(&self.key);
        spec.calibrates = Some(self.key.clone());
        spec.name = format!("{} (measured on {})", self.name, calibration.device_name);
        spec.dram_bandwidth_bytes_per_s = calibration.dram_bandwidth_bytes_per_s;
        // Like the reference ceilings' two floors: matrix kernels on the peaks, vector kernels on the spec.
        let matrix_overhead_s = calibration
            .vector_kernel_overhead_s
            .map(|_| calibration.kernel_overhead_s);
        spec.kernel_overhead_s = calibration
            .vector_kernel_overhead_s
            .unwrap_or(calibration.kernel_overhead_s);
        // Calibration measures one GPU: the link keeps its reference figures (achievable fraction, NCCL's
        // latencies), not the ideal datasheet bound.
        if matches!(self.provenance, Provenance::Datasheet | Provenance::Custom)
            && let Some(link) = &mut spec.interconnect
        {
            self.reference_ceilings().apply_to_interconnect(link);
        }
        spec.reference = None;
        for peak in &mut spec.peaks {
            peak.kernel_overhead_s = matrix_overhead_s;
        }
        // Two precisions on one path (FP8 E4M3 and E5M2): the faster measurement wins.
        let mut best: Vec<(ComputePath, f64)> = Vec::new();
        for &(path, flop_per_s) in &calibration.peaks {
            match best.iter_mut().find(|(p, _)| *p == path) {
                Some((_, f)) => *f = f.max(flop_per_s),
                None => best.push((path, flop_per_s)),
            }
        }
        for (path, flop_per_s) in best {
            if !self.arch.runs_path(path) {
                return Err(Error::Unsupported {
                    precision: Precision::ALL
                        .into_iter()
                        .find(|p| p.compute_path() == path)
                        .unwrap_or(Precision::Fp32),
                    path,
                    device: self.key.clone(),
                    arch: self.arch_label.clone(),
                });
            }
            match spec.peaks.iter_mut().find(|p| p.path == path) {
                Some(p) => {
                    p.dense_flop_per_s = flop_per_s;
                    p.sparse_flop_per_s = None;
                }
                None => spec.peaks.push(Peak {
                    path,
                    dense_flop_per_s: flop_per_s,
                    sparse_flop_per_s: None,
                    kernel_overhead_s: matrix_overhead_s,
                }),
            }
        }
        spec.provenance = Provenance::Measured;
        spec.sources = vec![calibration.source.clone()];
        spec.validate()?;
        Ok(spec)
    }

    /// Ridge point of `precision` (peak FLOP/s ÷ DRAM bytes/s), in FLOP/byte.
    ///
    /// # Errors
    /// [`Error::Unsupported`] as for [`HardwareSpec::dense_peak_for`].
    pub fn ridge_point(&self, precision: Precision) -> Result<f64, Error> {
        Ok(self.dense_peak_for(precision)? / self.dram_bandwidth_bytes_per_s)
    }

    /// The precisions this device runs natively, in [`Precision::ALL`] order.
    #[must_use]
    pub fn supported_precisions(&self) -> Vec<Precision> {
        Precision::ALL
            .into_iter()
            .filter(|p| self.dense_peak_for(*p).is_ok())
            .collect()
    }

    /// Checks that every number is finite and positive, that sparse peaks are at least the dense ones, and
    /// that each peak is for a distinct path the architecture has natively.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first offending field.
    pub fn validate(&self) -> Result<(), Error> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::InvalidInput(format!(
                    "{}: {name} must be finite and positive, got {v}",
                    self.key
                )))
            }
        };
        if self.key.trim().is_empty() {
            return Err(Error::InvalidInput("hardware key must not be empty".into()));
        }
        positive("memory_bytes", self.memory_bytes)?;
        if let Some(0) = self.sm_count {
            return Err(Error::InvalidInput(format!(
                "{}: sm_count must be positive",
                self.key
            )));
        }
        positive("dram_bandwidth_bytes_per_s", self.dram_bandwidth_bytes_per_s)?;
        if !(self.kernel_overhead_s.is_finite() && (0.0..1.0).contains(&self.kernel_overhead_s)) {
            return Err(Error::InvalidInput(format!(
                "{}: kernel_overhead_s must be in [0, 1) s, got {}",
                self.key, self.kernel_overhead_s
            )));
        }
        for v in [self.l2_bytes, self.boost_clock_hz, self.tdp_w]
            .into_iter()
            .flatten()
        {
            positive("optional field", v)?;
        }
        if let Some(link) = &self.interconnect {
            link.validate(&self.key)?;
        }
        if self.peaks.is_empty() {
            return Err(Error::InvalidInput(format!(
                "{}: at least one peak is required",
                self.key
            )));
        }
        for (i, peak) in self.peaks.iter().enumerate() {
            if self.peaks[..i].iter().any(|p| p.path == peak.path) {
                return Err(Error::InvalidInput(format!(
                    "{}: two peaks for {}",
                    self.key, peak.path
                )));
            }
            if !self.arch.runs_path(peak.path) {
                return Err(Error::InvalidInput(format!(
                    "{}: {} has no native {} path (use Architecture::Custom for other devices)",
                    self.key, self.arch_label, peak.path
                )));
            }
            positive(peak.path.name(), peak.dense_flop_per_s)?;
            if let Some(o) = peak.kernel_overhead_s
                && !(o.is_finite() && (0.0..1.0).contains(&o))
            {
                return Err(Error::InvalidInput(format!(
                    "{}: {} kernel_overhead_s must be in [0, 1) s, got {o}",
                    self.key, peak.path
                )));
            }
            if let Some(sparse) = peak.sparse_flop_per_s {
                positive(peak.path.name(), sparse)?;
                if sparse < peak.dense_flop_per_s {
                    return Err(Error::InvalidInput(format!(
                        "{}: sparse {} peak {sparse} is below the dense peak {}",
                        self.key, peak.path, peak.dense_flop_per_s
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl HardwareSpec {
    /// Parses a custom or measured device from JSON (the field names of this struct, base units) and
    /// validates it.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for malformed JSON or a spec that fails [`HardwareSpec::validate`].
    ///
    /// # Examples
    /// ```
    /// use roofline_core::{find_hardware, HardwareSpec};
    /// let json = find_hardware("gb10").unwrap().to_json();
    /// assert_eq!(&HardwareSpec::from_json(&json).unwrap(), find_hardware("gb10").unwrap());
    /// ```
    pub fn from_json(json: &str) -> Result<HardwareSpec, Error> {
        let spec: HardwareSpec =
            serde_json::from_str(json).map_err(|e| Error::InvalidInput(format!("hardware JSON: {e}")))?;
        spec.validate()?;
        Ok(spec)
    }

    /// This spec as pretty-printed JSON, for export.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// One catalog row in the research file's units; converted once into a [`HardwareSpec`].
struct CatalogEntry {
    key: &'static str,
    name: &'static str,
    vendor: &'static str,
    arch: Architecture,
    arch_label: &'static str,
    memory_gb: f64,
    dram_bw_gbs: f64,
    l2_mb: Option<f64>,
    sm_count: Option<u32>,
    boost_mhz: Option<f64>,
    tdp_w: Option<f64>,
    dense_tflops: &'static [(ComputePath, f64)],
    sparse_tflops: &'static [(ComputePath, f64)],
    derived: &'static [&'static str],
    unverified: &'static [&'static str],
    missing: &'static [&'static str],
    notes: &'static str,
    sources: &'static [&'static str],
    /// Achievable GEMM fractions of the dense peak the research file publishes (its `measured` table).
    measured_gemm_fraction: &'static [(ComputePath, f64)],
    /// Achievable DRAM fraction the research file publishes.
    measured_dram_fraction: Option<f64>,
    /// Sources of the measured fractions.
    measured_sources: &'static [&'static str],
    /// Scale-up GPU-to-GPU interconnect, where published.
    interconnect: Option<InterconnectEntry>,
}

impl CatalogEntry {
    fn to_spec(&self, medians: reference::Medians) -> HardwareSpec {
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
            dram_bandwidth_bytes_per_s: self.dram_bw_gbs * GIGA,
            l2_bytes: self.l2_mb.map(|mb| mb * MEGA),
            sm_count: self.sm_count,
            boost_clock_hz: self.boost_mhz.map(|mhz| mhz * MEGA),
            tdp_w: self.tdp_w,
            kernel_overhead_s: 0.0,
            peaks,
            provenance: Provenance::Datasheet,
            sources: strings(self.sources),
            derived: strings(self.derived),
            unverified: strings(self.unverified),
            notes,
            reference: Some(reference::for_entry(catalog::ENTRIES, self, medians)),
            interconnect: self.interconnect.as_ref().map(InterconnectEntry::to_interconnect),
            calibrates: None,
        }
    }
}

static MEDIANS: LazyLock<reference::Medians> = LazyLock::new(|| reference::medians(catalog::ENTRIES));

static CATALOG: LazyLock<Vec<HardwareSpec>> =
    LazyLock::new(|| catalog::ENTRIES.iter().map(|e| e.to_spec(*MEDIANS)).collect());

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
/// let catalog = roofline_core::catalog();
/// assert_eq!(catalog.len(), 25);
/// assert!(catalog.iter().all(|h| h.validate().is_ok() && !h.sources.is_empty()));
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
/// use roofline_core::{find_hardware, Precision};
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
/// use roofline_core::{find_hardware_in, Mode, Provenance};
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn modes_resolve_or_say_why_not() {
        let h100 = find_hardware("h100_sxm").unwrap();
        assert_eq!(h100.in_mode(Mode::Datasheet).unwrap(), *h100);
        assert_eq!(Mode::of(&h100.in_mode(Mode::Reference).unwrap()), Mode::Reference);
        let err = h100.in_mode(Mode::Calibrated).unwrap_err().to_string();
        assert!(err.contains("calibrate"), "{err}");
        assert_eq!(Mode::parse(" Reference ").unwrap(), Mode::Reference);
        assert!(Mode::parse("ideal").is_err());
        assert_eq!(Mode::default(), Mode::Reference);
    }

    #[test]
    fn catalog_is_complete_unique_and_valid() {
        assert_eq!(catalog().len(), 25);
        let mut keys: Vec<_> = catalog().iter().map(|h| h.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 25);
        for h in catalog() {
            h.validate().unwrap();
            assert!(!h.sources.is_empty(), "{} has no source", h.key);
        }
    }

    #[test]
    fn aliases_and_case_resolve() {
        assert_eq!(find_hardware("B10").unwrap().key, "gb10");
        assert_eq!(find_hardware("h100").unwrap().key, "h100_sxm");
        assert_eq!(find_hardware("a100").unwrap().key, "a100_sxm_80gb");
        assert!(
            matches!(find_hardware("nope"), Err(Error::UnknownHardware { valid, .. }) if valid.len() == 25)
        );
    }

    #[test]
    fn datasheet_values_are_in_base_units() {
        // NVIDIA H100 SXM datasheet: 3.35 TB/s, 989.4 dense BF16 TFLOP/s (1,978.9 with sparsity).
        let h100 = find_hardware("h100_sxm").unwrap();
        assert_eq!(h100.dram_bandwidth_bytes_per_s, 3.35e12);
        let bf16 = h100.peak(ComputePath::Bf16).unwrap();
        assert_eq!(bf16.dense_flop_per_s, 989.4e12);
        assert_eq!(bf16.sparse_flop_per_s, None);
        assert_eq!(
            h100.peak(ComputePath::Fp16).unwrap().sparse_flop_per_s,
            Some(1978.9e12)
        );
        // Ridge point of BF16: 989.4e12 / 3.35e12 = 295.34 FLOP/byte.
        assert!((h100.ridge_point(Precision::Bf16).unwrap() - 295.343_283_582).abs() < 1e-6);
    }

    #[test]
    fn unsupported_paths_are_explicit_errors() {
        let a100 = find_hardware("a100_sxm_80gb").unwrap();
        assert!(matches!(
            a100.dense_peak_for(Precision::Fp8E4M3),
            Err(Error::Unsupported { .. })
        ));
        let h100 = find_hardware("h100_sxm").unwrap();
        for p in [Precision::Int4, Precision::Nvfp4, Precision::Mxfp4] {
            assert!(
                matches!(h100.dense_peak_for(p), Err(Error::Unsupported { .. })),
                "{p}"
            );
        }
        let mi355 = find_hardware("mi355x").unwrap();
        assert!(mi355.dense_peak_for(Precision::Mxfp4).is_ok());
        assert!(mi355.dense_peak_for(Precision::Nvfp4).is_err());
        let gb10 = find_hardware("gb10").unwrap();
        assert_eq!(gb10.dense_peak_for(Precision::Nvfp4).unwrap(), 500e12);
    }

    #[test]
    fn support_matrix_follows_the_architecture_table() {
        // hardware.md §3: (architecture, path, native).
        let cases = [
            (Architecture::Ampere, ComputePath::Fp8, false),
            (Architecture::Ampere, ComputePath::Int4, true),
            (Architecture::Ada, ComputePath::Fp8, true),
            (Architecture::Ada, ComputePath::Int4, true),
            (Architecture::Hopper, ComputePath::Int4, false),
            (Architecture::Hopper, ComputePath::Fp4, false),
            (Architecture::Blackwell, ComputePath::Fp4, true),
            (Architecture::Blackwell, ComputePath::Int4, false),
            (Architecture::Cdna3, ComputePath::Fp4, false),
            (Architecture::Cdna4, ComputePath::Fp6, true),
            (Architecture::Tpu, ComputePath::Fp16, false),
        ];
        for (arch, path, native) in cases {
            assert_eq!(arch.runs_path(path), native, "{arch:?} {path}");
        }
        assert!(Architecture::Cdna4.runs_format(Precision::Mxfp4));
        assert!(!Architecture::Cdna4.runs_format(Precision::Nvfp4));
        assert!(!Architecture::Cdna3.runs_format(Precision::Mxfp8E4M3));
        assert!(!Architecture::Ampere.runs_format(Precision::Nf4));
        assert!(Architecture::Ampere.stores_format(Precision::Nf4));
        assert!(!Architecture::Ampere.stores_format(Precision::Nvfp4));
        assert!(!Architecture::Hopper.stores_format(Precision::Mxfp4));
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
    fn vector_peak_is_fp32_or_the_lowest_peak() {
        assert_eq!(find_hardware("h100_sxm").unwrap().vector_flop_per_s(), 67e12);
        // TPU v5e publishes BF16 197 and INT8 394 only.
        assert_eq!(find_hardware("tpu_v5e").unwrap().vector_flop_per_s(), 197e12);
    }

    #[test]
    fn calibration_replaces_ceilings_and_rejects_bad_values() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let calibration = |bandwidth: f64, peaks: Vec<(ComputePath, f64)>| Calibration {
            device_name: "H100".into(),
            dram_bandwidth_bytes_per_s: bandwidth,
            kernel_overhead_s: 6.4e-6,
            vector_kernel_overhead_s: None,
            peaks,
            source: "test".into(),
        };
        // E4M3 and E5M2 both measured on the FP8 path: the faster one is the peak.
        let cal = h100
            .calibrated(&calibration(
                3.0e12,
                vec![(ComputePath::Fp8, 1402.6e12), (ComputePath::Fp8, 1300e12)],
            ))
            .unwrap();
        assert_eq!(cal.dram_bandwidth_bytes_per_s, 3.0e12);
        assert_eq!(cal.kernel_overhead_s, 6.4e-6);
        // Without a vector-kernel figure every kernel takes the GEMV's overhead.
        assert_eq!(cal.kernel_overhead_for(None), 6.4e-6);
        assert_eq!(cal.kernel_overhead_for(Some(ComputePath::Fp8)), 6.4e-6);
        assert_eq!(cal.dense_peak_for(Precision::Fp8E4M3).unwrap(), 1402.6e12);
        assert_eq!(cal.peak(ComputePath::Fp8).unwrap().sparse_flop_per_s, None);
        assert_eq!(cal.dense_peak_for(Precision::Bf16).unwrap(), 989.4e12);
        assert!(cal.notes.contains("BF16"), "{}", cal.notes);
        assert_eq!(Mode::of(&cal), Mode::Calibrated);
        assert!(cal.reference.is_none());
        assert!(h100.calibrated(&calibration(f64::NAN, vec![])).is_err());
        assert!(matches!(
            h100.calibrated(&calibration(3e12, vec![(ComputePath::Fp4, 1e15)])),
            Err(Error::Unsupported { .. })
        ));
        // A device outside the catalog takes whatever paths were measured.
        let host = HardwareSpec::uncatalogued("cpu_host", "a CPU", "x86-64", 24e9)
            .calibrated(&calibration(20e9, vec![(ComputePath::Fp32, 1e12)]))
            .unwrap();
        assert_eq!(host.key, "cpu_host_measured");
        assert_eq!(host.calibrated_base(), Some("cpu_host"));
        assert_eq!(cal.calibrates.as_deref(), Some("h100_sxm"));
        assert_eq!(host.peaks.len(), 1);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_round_trip_validates() {
        let json = find_hardware("mi355x").unwrap().to_json();
        assert_eq!(
            &HardwareSpec::from_json(&json).unwrap(),
            find_hardware("mi355x").unwrap()
        );
        let bad = json.replacen("\"memory_bytes\": 288000000000.0", "\"memory_bytes\": -1.0", 1);
        assert_ne!(bad, json);
        assert!(matches!(
            HardwareSpec::from_json(&bad),
            Err(Error::InvalidInput(_))
        ));
        assert!(HardwareSpec::from_json("{").is_err());
    }

    #[test]
    fn validation_rejects_bad_custom_specs() {
        let mut spec = find_hardware("gb10").unwrap().clone();
        spec.provenance = Provenance::Custom;
        spec.dram_bandwidth_bytes_per_s = f64::NAN;
        assert!(spec.validate().is_err());
        let mut spec = find_hardware("h100_sxm").unwrap().clone();
        spec.peaks[4].sparse_flop_per_s = Some(1.0);
        assert!(spec.validate().is_err());
        let h100 = find_hardware("h100_sxm").unwrap();
        let with_peak = |path| {
            let mut spec = h100.clone();
            spec.peaks.push(Peak {
                path,
                dense_flop_per_s: 1e15,
                sparse_flop_per_s: None,
                kernel_overhead_s: None,
            });
            spec
        };
        // Hopper has no FP4 path; a second BF16 peak is ambiguous; a custom device may claim any path.
        assert!(with_peak(ComputePath::Fp4).validate().is_err());
        assert!(with_peak(ComputePath::Bf16).validate().is_err());
        let mut custom = with_peak(ComputePath::Fp4);
        custom.arch = Architecture::Custom;
        custom.validate().unwrap();
    }
}
