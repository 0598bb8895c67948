//! [`HardwareSpec`]: one accelerator's peaks, memory system and sources in base units, and the lookups of its
//! peaks, kernel overheads, reference ceilings and interconnect.

use super::interconnect::Interconnect;
use super::mode::{Mode, Provenance};
use super::quality::CalibrationQuality;
use super::ranges::{BANDWIDTH_RANGE_BYTES_PER_S, MEMORY_RANGE_BYTES, PEAK_RANGE_FLOP_PER_S, check_range};
use super::reference::{self, ReferenceCeilings};
use crate::error::Error;
use crate::precision::{Architecture, ComputePath, GemmFamily, Precision, QuantizeKernel};

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

/// What GEMMs of one kernel family reach on one compute path: the throughput of large shapes, the bandwidth
/// of small-M shapes and the fixed time per kernel. Set by [`HardwareSpec::reference`] from the device's
/// [`ReferenceCeilings`]; a spec without one predicts the family at its path's peak.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FamilyCeiling {
    /// The kernel family.
    pub family: GemmFamily,
    /// The compute path (the activations' path for weight-only GEMMs).
    pub path: ComputePath,
    /// Throughput the family reaches at large shapes, in FLOP/s.
    pub dense_flop_per_s: f64,
    /// Bandwidth it streams its operands at (small M), in bytes/s.
    pub bandwidth_bytes_per_s: f64,
    /// Fixed time per kernel, in seconds.
    pub kernel_overhead_s: f64,
}

/// The fixed time of one activation-quantization kernel on a spec, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct QuantizeOverhead {
    /// The kernel.
    pub kernel: QuantizeKernel,
    /// Its fixed time, in seconds.
    pub overhead_s: f64,
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
    /// Device memory capacity as published (decimal GB on datasheets), in bytes.
    pub memory_bytes: f64,
    /// Device memory as the driver reports it, in bytes: the CUDA total (`cudaMemGetInfo`, what vLLM sizes its
    /// pools from) where published, else a stated derivation (the catalog's `memory_reported_gib` and its
    /// source). `None`: not known, and `device_capacity_bytes` (roofline-analysis) takes `memory_bytes`.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub memory_reported_bytes: Option<f64>,
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
    /// What each GEMM kernel family reaches on each path, where it differs from the path's peak (reference
    /// specs; empty elsewhere: a GEMM then runs at its path's peak and floor).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub gemm_families: Vec<FamilyCeiling>,
    /// Fixed time of each activation-quantization kernel (reference specs; empty elsewhere: the vector
    /// kernels' [`HardwareSpec::kernel_overhead_s`]).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub quantize_overheads: Vec<QuantizeOverhead>,
    /// Where the numbers come from.
    pub provenance: Provenance,
    /// Citations, one per source.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sources: Vec<String>,
    /// Fields derived by arithmetic rather than published (names as in the research file, e.g. `peak_tflops.fp8`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub derived: Vec<String>,
    /// Fields that are secondary-sourced or contested.
    #[cfg_attr(feature = "serde", serde(default))]
    pub unverified: Vec<String>,
    /// Free-text notes: derivations and contested values.
    #[cfg_attr(feature = "serde", serde(default))]
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
    /// For a calibrated spec: the spread of its repeated measurements, the host's load, when it was
    /// measured and what makes it unreliable. `None` for every other spec and for calibrations stored
    /// before it existed.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub calibration: Option<CalibrationQuality>,
}

impl Mode {
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
}

impl HardwareSpec {
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

    /// The ceiling of GEMM family `family` on `path`, if the spec has one ([`HardwareSpec::reference`] sets
    /// them; a plain GEMM never has one and runs at its path's peak).
    #[must_use]
    pub fn gemm_family(&self, family: GemmFamily, path: ComputePath) -> Option<&FamilyCeiling> {
        self.gemm_families
            .iter()
            .find(|c| c.family == family && c.path == path)
    }

    /// Fixed time of activation-quantization kernel `kernel`, in seconds: the spec's own figure, else the
    /// vector kernels' [`HardwareSpec::kernel_overhead_s`].
    #[must_use]
    pub fn quantize_overhead_s(&self, kernel: QuantizeKernel) -> f64 {
        self.quantize_overheads
            .iter()
            .find(|q| q.kernel == kernel)
            .map_or(self.kernel_overhead_s, |q| q.overhead_s)
    }

    /// The reference ceilings of this device: its own, or the catalog-wide defaults for a device without
    /// any (a custom one).
    #[must_use]
    pub fn reference_ceilings(&self) -> ReferenceCeilings {
        self.reference.clone().unwrap_or_else(|| {
            reference::custom_ceilings(
                self.arch,
                self.peaks.iter().map(|p| p.path),
                self.interconnect.as_ref().map(|i| i.link),
            )
        })
    }

    /// The reference spec: every dense peak times its achievable GEMM fraction, the DRAM bandwidth times its
    /// achievable fraction, matrix kernels on each path with the matrix floor and every other kernel with the
    /// vector floor; each GEMM kernel family its own ceiling (the datasheet peak of its path times the
    /// family's fraction, the datasheet bandwidth times its small-M fraction, its floor), each
    /// activation-quantization kernel its floor; [`Provenance::Reference`], and the basis of every figure in
    /// `sources`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a spec that is already measured or reference (scaling it again would count
    /// the losses twice).
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{find_hardware, ComputePath, Provenance};
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
        spec.gemm_families = ceilings
            .families
            .iter()
            .filter_map(|f| {
                let peak = self.peak(f.path)?;
                spec.sources.push(format!(
                    "reference {} GEMM on {}: ×{:.3} of the peak ({}); ×{:.3} of the DRAM bandwidth at small M \
                     ({}); {:.1} µs per kernel ({})",
                    f.family,
                    f.path,
                    f.gemm_fraction.value,
                    f.gemm_fraction.basis,
                    f.dram_fraction.value,
                    f.dram_fraction.basis,
                    f.kernel_floor.value * 1e6,
                    f.kernel_floor.basis
                ));
                Some(FamilyCeiling {
                    family: f.family,
                    path: f.path,
                    dense_flop_per_s: peak.dense_flop_per_s * f.gemm_fraction.value,
                    bandwidth_bytes_per_s: self.dram_bandwidth_bytes_per_s * f.dram_fraction.value,
                    kernel_overhead_s: f.kernel_floor.value,
                })
            })
            .collect();
        spec.quantize_overheads = ceilings
            .quantize_floors
            .iter()
            .map(|q| {
                spec.sources.push(format!(
                    "reference {}: {:.1} µs ({})",
                    q.kernel.name(),
                    q.floor.value * 1e6,
                    q.floor.basis
                ));
                QuantizeOverhead {
                    kernel: q.kernel,
                    overhead_s: q.floor.value,
                }
            })
            .collect();
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
        spec.check()?;
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
    /// use roofline_base::find_hardware;
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

    /// Checks that every number is finite and positive, that the ceilings and the memory lie in their physical
    /// ranges ([`BANDWIDTH_RANGE_BYTES_PER_S`], [`PEAK_RANGE_FLOP_PER_S`], [`MEMORY_RANGE_BYTES`]; so every
    /// prediction on the spec is a finite number), that sparse peaks are at least the dense ones, and that each
    /// peak is for a distinct path the architecture has natively.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first offending field.
    pub fn check(&self) -> Result<(), Error> {
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
        check_range(
            &self.key,
            "memory_bytes",
            self.memory_bytes,
            &MEMORY_RANGE_BYTES,
            "bytes",
        )?;
        if let Some(reported) = self.memory_reported_bytes {
            check_range(
                &self.key,
                "memory_reported_bytes",
                reported,
                &MEMORY_RANGE_BYTES,
                "bytes",
            )?;
        }
        if let Some(0) = self.sm_count {
            return Err(Error::InvalidInput(format!(
                "{}: sm_count must be positive",
                self.key
            )));
        }
        check_range(
            &self.key,
            "dram_bandwidth_bytes_per_s",
            self.dram_bandwidth_bytes_per_s,
            &BANDWIDTH_RANGE_BYTES_PER_S,
            "bytes/s",
        )?;
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
            link.check(&self.key)?;
        }
        for c in &self.gemm_families {
            let name = format!("{} on {}", c.family, c.path);
            positive(&format!("{name} throughput"), c.dense_flop_per_s)?;
            positive(&format!("{name} bandwidth"), c.bandwidth_bytes_per_s)?;
            if !(c.kernel_overhead_s.is_finite() && (0.0..1.0).contains(&c.kernel_overhead_s)) {
                return Err(Error::InvalidInput(format!(
                    "{}: {name} kernel_overhead_s must be in [0, 1) s, got {}",
                    self.key, c.kernel_overhead_s
                )));
            }
        }
        for q in &self.quantize_overheads {
            if !(q.overhead_s.is_finite() && (0.0..1.0).contains(&q.overhead_s)) {
                return Err(Error::InvalidInput(format!(
                    "{}: {} overhead_s must be in [0, 1) s, got {}",
                    self.key,
                    q.kernel.name(),
                    q.overhead_s
                )));
            }
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
            let peak_range =
                |name: &str, v: f64| check_range(&self.key, name, v, &PEAK_RANGE_FLOP_PER_S, "FLOP/s");
            peak_range(&format!("the {} peak", peak.path), peak.dense_flop_per_s)?;
            if let Some(o) = peak.kernel_overhead_s
                && !(o.is_finite() && (0.0..1.0).contains(&o))
            {
                return Err(Error::InvalidInput(format!(
                    "{}: {} kernel_overhead_s must be in [0, 1) s, got {o}",
                    self.key, peak.path
                )));
            }
            if let Some(sparse) = peak.sparse_flop_per_s {
                peak_range(&format!("the sparse {} peak", peak.path), sparse)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::find_hardware;

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
    fn vector_peak_is_fp32_or_the_lowest_peak() {
        assert_eq!(find_hardware("h100_sxm").unwrap().vector_flop_per_s(), 67e12);
        // TPU v5e publishes BF16 197 and INT8 394 only.
        assert_eq!(find_hardware("tpu_v5e").unwrap().vector_flop_per_s(), 197e12);
    }

    #[test]
    fn check_rejects_bad_custom_specs() {
        let mut spec = find_hardware("gb10").unwrap().clone();
        spec.provenance = Provenance::Custom;
        spec.dram_bandwidth_bytes_per_s = f64::NAN;
        assert!(spec.check().is_err());
        let mut spec = find_hardware("h100_sxm").unwrap().clone();
        spec.peaks[4].sparse_flop_per_s = Some(1.0);
        assert!(spec.check().is_err());
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
        assert!(with_peak(ComputePath::Fp4).check().is_err());
        assert!(with_peak(ComputePath::Bf16).check().is_err());
        let mut custom = with_peak(ComputePath::Fp4);
        custom.arch = Architecture::Custom;
        custom.check().unwrap();
    }

    #[test]
    fn check_rejects_ceilings_outside_their_physical_ranges() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let refused = |edit: fn(&mut HardwareSpec), field: &str| {
            let mut spec = h100.clone();
            edit(&mut spec);
            let message = spec.check().unwrap_err().to_string();
            assert!(
                message.contains(field) && message.contains("physical range"),
                "{message}"
            );
        };
        // A denormal bandwidth (issue 27: its predictions went out as JSON null), a bandwidth in GB/s typed as
        // bytes/s (3,350 B/s), a peak of 1 FLOP/s, a peak of 1e21 (a unit slip upwards), 1 KB of memory, and a
        // link of 1e-300 bytes/s.
        refused(
            |s| s.dram_bandwidth_bytes_per_s = 1e-300,
            "dram_bandwidth_bytes_per_s",
        );
        refused(
            |s| s.dram_bandwidth_bytes_per_s = 3350.0,
            "dram_bandwidth_bytes_per_s",
        );
        refused(|s| s.peaks[0].dense_flop_per_s = 1.0, "peak");
        refused(|s| s.peaks[0].dense_flop_per_s = 1e21, "peak");
        refused(|s| s.memory_bytes = 1e3, "memory_bytes");
        refused(
            |s| {
                if let Some(link) = &mut s.interconnect {
                    link.bandwidth_bytes_per_s = 1e-300;
                }
            },
            "interconnect bandwidth_bytes_per_s",
        );
        // The ends of the ranges are physical.
        let mut edge = h100.clone();
        edge.dram_bandwidth_bytes_per_s = 1e6;
        edge.peaks[0].dense_flop_per_s = 1e6;
        edge.memory_bytes = 1e15;
        edge.check().unwrap();
    }
}
