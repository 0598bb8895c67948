//! How far a calibration's repeated runs agree ([`Spread`]) and what makes it unreliable
//! ([`CalibrationQuality`]): the stated thresholds and the warnings they raise.

use crate::precision::ComputePath;

/// The runs of one repeated calibration measurement: how many, their median (the calibrated figure) and
/// range, in the quantity's base unit.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Spread {
    /// Runs.
    pub runs: u32,
    /// Their median.
    pub median: f64,
    /// The smallest run.
    pub min: f64,
    /// The largest run.
    pub max: f64,
}

impl Spread {
    /// The median and range of `runs`; `None` without a finite run.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::hardware::Spread;
    /// let s = Spread::of(&[19e9, 45e9, 8e9]).unwrap();
    /// assert_eq!((s.runs, s.median, s.min, s.max), (3, 19e9, 8e9, 45e9));
    /// // (45 − 8) / 19 = 1.95: the runs disagree by twice their median.
    /// assert!((s.relative() - 37.0 / 19.0).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn of(runs: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = runs.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Some(Spread {
            runs: u32::try_from(n).unwrap_or(u32::MAX),
            median,
            min: sorted[0],
            max: sorted[n - 1],
        })
    }

    /// (max − min) / median: how far the runs disagree, relative to the figure used (0 for one run).
    #[must_use]
    pub fn relative(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
    }
}

/// Above this relative spread ((max − min) / median) a calibrated figure is flagged unreliable: 10 %, the
/// page's "good" band for a prediction's error (`web/src/validation.rs`), so a calibration whose runs
/// disagree by more cannot tell a good prediction from a fair one. A stated rule, not a measurement.
pub const MAX_RELATIVE_SPREAD: f64 = 0.10;

/// Above this host load (the 1-minute load average per logical CPU) a calibration is flagged as taken on a
/// busy host: more than half the cores were running something else, which shares the caches and memory
/// channels the measurements time. A stated rule, not a measurement.
pub const MAX_HOST_LOAD_PER_CPU: f64 = 0.5;

/// How trustworthy a calibration is: when it ran, the spread of each repeated measurement, the host's load,
/// and the warnings these raise ([`CalibrationQuality::assess`]).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CalibrationQuality {
    /// When it was measured, in seconds since the Unix epoch (the page shows its age).
    pub measured_at_unix_s: f64,
    /// Copy bandwidth runs, in bytes/s.
    pub bandwidth: Spread,
    /// Matrix-kernel overhead runs, in s.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub kernel_overhead: Option<Spread>,
    /// Vector-kernel overhead runs, in s.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub vector_kernel_overhead: Option<Spread>,
    /// Achieved-peak runs per measured path, in FLOP/s.
    #[cfg_attr(feature = "serde", serde(default))]
    pub peaks: Vec<(ComputePath, Spread)>,
    /// The host's 1-minute load average per logical CPU when it started (CPU backends; `None` when not read).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub host_load_per_cpu: Option<f64>,
    /// Why it may be unreliable, one sentence each (empty when nothing is flagged).
    #[cfg_attr(feature = "serde", serde(default))]
    pub warnings: Vec<String>,
}

impl CalibrationQuality {
    /// The quality of runs measured at `measured_at_unix_s`, with its warnings: every figure whose runs
    /// disagree by more than [`MAX_RELATIVE_SPREAD`], a host load above [`MAX_HOST_LOAD_PER_CPU`], and a
    /// single run.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::hardware::{CalibrationQuality, Spread};
    /// // The issue's busy host: 8, 19 and 45 GB/s over three runs at a load of 1.5 per CPU.
    /// let bandwidth = Spread::of(&[8e9, 19e9, 45e9]).unwrap();
    /// let q = CalibrationQuality::assess(0.0, bandwidth, None, None, Vec::new(), Some(1.5));
    /// assert_eq!(q.warnings.len(), 2);
    /// assert!(q.warnings[0].starts_with("copy bandwidth varied 195 %"));
    /// ```
    #[must_use]
    pub fn assess(
        measured_at_unix_s: f64,
        bandwidth: Spread,
        kernel_overhead: Option<Spread>,
        vector_kernel_overhead: Option<Spread>,
        peaks: Vec<(ComputePath, Spread)>,
        host_load_per_cpu: Option<f64>,
    ) -> CalibrationQuality {
        let mut warnings = Vec::new();
        let mut spread = |what: String, s: &Spread| {
            if s.relative() > MAX_RELATIVE_SPREAD {
                warnings.push(format!(
                    "{what} varied {:.0} % over {} runs (max − min over the median): above {:.0} %, the figure is unreliable",
                    s.relative() * 100.0,
                    s.runs,
                    MAX_RELATIVE_SPREAD * 100.0
                ));
            }
        };
        spread("copy bandwidth".into(), &bandwidth);
        if let Some(s) = &kernel_overhead {
            spread("matrix-kernel overhead".into(), s);
        }
        if let Some(s) = &vector_kernel_overhead {
            spread("vector-kernel overhead".into(), s);
        }
        for (path, s) in &peaks {
            spread(format!("{path} peak"), s);
        }
        if let Some(load) = host_load_per_cpu.filter(|l| *l > MAX_HOST_LOAD_PER_CPU) {
            warnings.push(format!(
                "the host was busy (load {load:.2} per CPU, above {MAX_HOST_LOAD_PER_CPU}): other work shared the caches and memory the measurements time; calibrate again when it is idle"
            ));
        }
        if bandwidth.runs < 2 {
            warnings.push("one run per figure: no spread to judge it by".to_owned());
        }
        CalibrationQuality {
            measured_at_unix_s,
            bandwidth,
            kernel_overhead,
            vector_kernel_overhead,
            peaks,
            host_load_per_cpu,
            warnings,
        }
    }

    /// Whether anything was flagged.
    #[must_use]
    pub fn unreliable(&self) -> bool {
        !self.warnings.is_empty()
    }
}
