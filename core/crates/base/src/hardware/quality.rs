//! How far a calibration's repeated runs agree ([`Spread`], [`PathRuns`]) and what makes it unreliable
//! ([`CalibrationQuality`]): the stated thresholds and the warnings they raise.

use crate::precision::ComputePath;
use crate::units::TERA;

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

/// Above this relative spread a calibrated peak's warning says why its runs disagree, where the endpoint saw
/// it (the clocks moved, the runs chose different kernels): 5 %, so one peak's runs agree within half the
/// page's "good" band. A stated rule, not a measurement.
pub const PEAK_SPREAD_TARGET: f64 = 0.05;

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
    /// Weight-only GEMV bandwidth runs per activation path, in bytes/s.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub weight_only: Vec<(ComputePath, Spread)>,
    /// The host's 1-minute load average per logical CPU when it started (CPU backends; `None` when not read).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub host_load_per_cpu: Option<f64>,
    /// Why it may be unreliable, one sentence each (empty when nothing is flagged).
    #[cfg_attr(feature = "serde", serde(default))]
    pub warnings: Vec<String>,
}

/// The repeated runs of one ceiling measured on a compute path (a peak in FLOP/s, a weight-only GEMV's
/// bandwidth in bytes/s) for [`CalibrationQuality::assess`], with what explains their spread where the
/// caller saw it (e.g. `SM clock 1440–1980 MHz over the runs: the clocks moved`).
#[derive(Debug, Clone, PartialEq)]
pub struct PathRuns {
    /// The path.
    pub path: ComputePath,
    /// The runs.
    pub spread: Spread,
    /// Why they disagree, when known.
    pub why: Option<String>,
}

impl From<(ComputePath, Spread)> for PathRuns {
    fn from((path, spread): (ComputePath, Spread)) -> PathRuns {
        PathRuns {
            path,
            spread,
            why: None,
        }
    }
}

/// The warning of a figure whose runs disagree by more than `target` (`None` within it): the spread, the
/// runs' range in `unit` (a scale and its name), whether it passes [`MAX_RELATIVE_SPREAD`], and `why`.
fn spread_warning(
    what: &str,
    s: &Spread,
    (scale, unit): (f64, &str),
    target: f64,
    why: Option<&str>,
) -> Option<String> {
    let relative = s.relative();
    if relative <= target {
        return None;
    }
    let mut warning = format!(
        "{what} varied {:.0} % over {} runs ({:.2}–{:.2} {unit}; max − min over the median): above {:.0} %",
        relative * 100.0,
        s.runs,
        s.min / scale,
        s.max / scale,
        target * 100.0
    );
    if relative > MAX_RELATIVE_SPREAD {
        if target < MAX_RELATIVE_SPREAD {
            warning.push_str(&format!(" and {:.0} %", MAX_RELATIVE_SPREAD * 100.0));
        }
        warning.push_str(", the figure is unreliable");
    }
    if let Some(why) = why {
        warning.push_str("; ");
        warning.push_str(why);
    }
    Some(warning)
}

impl CalibrationQuality {
    /// The quality of runs measured at `measured_at_unix_s`, with its warnings: every figure whose runs
    /// disagree by more than [`MAX_RELATIVE_SPREAD`], a peak by more than [`PEAK_SPREAD_TARGET`] (with its
    /// `why`), a host load above [`MAX_HOST_LOAD_PER_CPU`], and a single run.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::hardware::{CalibrationQuality, Spread};
    /// // The issue's busy host: 8, 19 and 45 GB/s over three runs at a load of 1.5 per CPU.
    /// let bandwidth = Spread::of(&[8e9, 19e9, 45e9]).unwrap();
    /// let q = CalibrationQuality::assess(0.0, bandwidth, None, None, Vec::new(), Vec::new(), Some(1.5));
    /// assert_eq!(q.warnings.len(), 2);
    /// assert!(q.warnings[0].starts_with("copy bandwidth varied 195 %"));
    /// ```
    #[must_use]
    pub fn assess(
        measured_at_unix_s: f64,
        bandwidth: Spread,
        kernel_overhead: Option<Spread>,
        vector_kernel_overhead: Option<Spread>,
        peaks: Vec<PathRuns>,
        weight_only: Vec<PathRuns>,
        host_load_per_cpu: Option<f64>,
    ) -> CalibrationQuality {
        const BYTES: (f64, &str) = (1e9, "GB/s");
        const SECONDS: (f64, &str) = (1e-6, "µs");
        let figures = [
            ("copy bandwidth".to_owned(), Some(bandwidth), BYTES),
            ("matrix-kernel overhead".to_owned(), kernel_overhead, SECONDS),
            (
                "vector-kernel overhead".to_owned(),
                vector_kernel_overhead,
                SECONDS,
            ),
        ];
        let mut warnings: Vec<String> = figures
            .iter()
            .filter_map(|(what, s, unit)| spread_warning(what, s.as_ref()?, *unit, MAX_RELATIVE_SPREAD, None))
            .collect();
        warnings.extend(peaks.iter().filter_map(|r| {
            let what = format!("{} peak", r.path);
            spread_warning(
                &what,
                &r.spread,
                (TERA, "TFLOP/s"),
                PEAK_SPREAD_TARGET,
                r.why.as_deref(),
            )
        }));
        warnings.extend(weight_only.iter().filter_map(|r| {
            let what = format!("{} weight-only GEMV bandwidth", r.path);
            spread_warning(&what, &r.spread, BYTES, MAX_RELATIVE_SPREAD, r.why.as_deref())
        }));
        if let Some(load) = host_load_per_cpu.filter(|l| *l > MAX_HOST_LOAD_PER_CPU) {
            warnings.push(format!(
                "the host was busy (load {load:.2} per CPU, above {MAX_HOST_LOAD_PER_CPU}): other work shared the caches and memory the measurements time; calibrate again when it is idle"
            ));
        }
        if bandwidth.runs < 2 {
            warnings.push("one run per figure: no spread to judge it by".to_owned());
        }
        let spreads = |runs: Vec<PathRuns>| runs.into_iter().map(|r| (r.path, r.spread)).collect();
        CalibrationQuality {
            measured_at_unix_s,
            bandwidth,
            kernel_overhead,
            vector_kernel_overhead,
            peaks: spreads(peaks),
            weight_only: spreads(weight_only),
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
