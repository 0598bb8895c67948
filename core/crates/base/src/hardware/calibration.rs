//! Calibration: a spec from what was measured on one device ([`HardwareSpec::calibrated`], the one
//! calibration model of the endpoint's `calibrate` and the page), how far its repeated runs agree and what
//! makes it unreliable ([`CalibrationQuality`]), and the keys calibrated specs go by.

use super::mode::Provenance;
use super::quality::CalibrationQuality;
use super::spec::{FamilyCeiling, HardwareSpec, Peak};
use crate::error::Error;
use crate::precision::{Architecture, ComputePath, GemmFamily, Precision};

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
    /// What weight-only (mixed-input) GEMVs stream per activation path, in bytes/s: their bytes over their
    /// time less `kernel_overhead_s` (W4A16 on FP16). A small-M ceiling of the weight-only family, never a
    /// compute peak: a GEMV is memory-bound.
    pub weight_only: Vec<(ComputePath, f64)>,
    /// How, where and when it was measured.
    pub source: String,
    /// The spread of the repeated runs behind these medians, the host's load and the warnings they raise;
    /// `None` for a calibration of one run per quantity (older endpoints).
    pub quality: Option<CalibrationQuality>,
}

/// The key of the calibrated spec of device `key`: `<key>_measured`.
#[must_use]
pub fn calibrated_key(key: &str) -> String {
    format!("{key}{CALIBRATED_SUFFIX}")
}

/// The key of the host CPU gpu-endpoint's CPU backend measures (the endpoint names a device outside the
/// catalog `<backend>_host`).
pub const CPU_HOST_KEY: &str = "cpu_host";

/// What [`calibrated_key`] appends.
const CALIBRATED_SUFFIX: &str = "_measured";

impl HardwareSpec {
    /// For a calibrated spec, the key of the device it calibrates: [`HardwareSpec::calibrates`], or, for a
    /// measured spec stored before that field existed, its key without the [`calibrated_key`] suffix. `None`
    /// for every other spec.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{Provenance, find_hardware};
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

    /// Whether this is (the calibrated spec of) the host CPU that gpu-endpoint's CPU backend measures, key
    /// [`CPU_HOST_KEY`]: it calls its kernels as plain functions, with no launch from a host.
    #[must_use]
    pub fn is_cpu_host(&self) -> bool {
        self.key == CPU_HOST_KEY || self.calibrated_base() == Some(CPU_HOST_KEY)
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
            memory_reported_bytes: None,
            dram_bandwidth_bytes_per_s: 1.0,
            l2_bytes: None,
            sm_count: None,
            boost_clock_hz: None,
            tdp_w: None,
            kernel_overhead_s: 0.0,
            peaks: Vec::new(),
            gemm_families: Vec::new(),
            quantize_overheads: Vec::new(),
            provenance: Provenance::Custom,
            sources: Vec::new(),
            derived: Vec::new(),
            unverified: Vec::new(),
            notes: String::new(),
            reference: None,
            interconnect: None,
            calibrates: None,
            calibration: None,
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
    /// use roofline_base::{find_hardware, hardware::Calibration, ComputePath, Provenance};
    /// let h100 = find_hardware("h100_sxm").unwrap();
    /// // ml-engineering MAMF: 794.5 TFLOP/s BF16 measured; an assumed 90 % of 3.35 TB/s streaming.
    /// let calibration = Calibration {
    ///     device_name: "NVIDIA H100 80GB HBM3".into(),
    ///     dram_bandwidth_bytes_per_s: 0.9 * 3.35e12,
    ///     kernel_overhead_s: 6.4e-6,
    ///     vector_kernel_overhead_s: Some(2.5e-6),
    ///     peaks: vec![(ComputePath::Bf16, 794.5e12)],
    ///     weight_only: Vec::new(),
    ///     source: "example".into(),
    ///     quality: None,
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
            self.check_measured_path(path)?;
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
        for &(path, bandwidth_bytes_per_s) in &calibration.weight_only {
            self.check_measured_path(path)?;
            spec.set_weight_only(path, bandwidth_bytes_per_s, calibration.kernel_overhead_s)?;
        }
        spec.provenance = Provenance::Measured;
        spec.sources = vec![calibration.source.clone()];
        spec.calibration.clone_from(&calibration.quality);
        spec.check()?;
        Ok(spec)
    }

    /// Refuses a measured `path` the architecture does not have (a custom device takes any path).
    fn check_measured_path(&self, path: ComputePath) -> Result<(), Error> {
        if self.arch.runs_path(path) {
            return Ok(());
        }
        Err(Error::Unsupported {
            precision: Precision::ALL
                .into_iter()
                .find(|p| p.compute_path() == path)
                .unwrap_or(Precision::Fp32),
            path,
            device: self.key.clone(),
            arch: self.arch_label.clone(),
        })
    }

    /// The weight-only family's ceiling on `path` from a measured GEMV: it streams at
    /// `bandwidth_bytes_per_s` with `overhead_s` per kernel; at large M it runs at the path's peak (not
    /// measured: a weight-only GEMM is only measured at M = 1). Named in `notes`.
    fn set_weight_only(
        &mut self,
        path: ComputePath,
        bandwidth_bytes_per_s: f64,
        overhead_s: f64,
    ) -> Result<(), Error> {
        let peak = self.peak(path).map(|p| p.dense_flop_per_s).ok_or_else(|| {
            Error::InvalidInput(format!(
                "a weight-only GEMV measured on {path} needs a {path} peak on {}",
                self.key
            ))
        })?;
        if !(bandwidth_bytes_per_s.is_finite() && bandwidth_bytes_per_s > 0.0) {
            return Err(Error::InvalidInput(format!(
                "the weight-only GEMV bandwidth on {path} must be finite and positive, got {bandwidth_bytes_per_s}"
            )));
        }
        let family = GemmFamily::WeightOnly;
        self.gemm_families
            .retain(|c| !(c.family == family && c.path == path));
        self.gemm_families.push(FamilyCeiling {
            family,
            path,
            dense_flop_per_s: peak,
            bandwidth_bytes_per_s,
            kernel_overhead_s: overhead_s,
        });
        self.notes.push_str(&format!(
            " Weight-only GEMMs on {path} stream {:.0} GB/s at small M (a measured weight-only GEMV) and run at the {path} peak at large M.",
            bandwidth_bytes_per_s / 1e9
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
