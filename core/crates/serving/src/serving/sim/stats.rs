//! A run's statistics as the benchmark tools compute them: mean, median, P90 and P99 (numpy's linear
//! percentile) over requests, and over every inter-token gap through a fine log-spaced histogram.

/// Summary of one metric over a run, in base units.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Summary {
    /// Mean.
    pub mean: f64,
    /// Median (P50).
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// Which statistic of a run SLAs and tables read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Percentile {
    /// The mean.
    Mean,
    /// The median.
    P50,
    /// The 90th percentile (InferenceX's default).
    #[default]
    P90,
    /// The 99th percentile.
    P99,
}

impl Percentile {
    /// `mean`, `p50`, `p90` or `p99`.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            Percentile::Mean => "mean",
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P99 => "p99",
        }
    }

    /// Its display name: `mean`, `P50`, `P90` or `P99`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Percentile::Mean => "mean",
            Percentile::P50 => "P50",
            Percentile::P90 => "P90",
            Percentile::P99 => "P99",
        }
    }

    /// This statistic of `summary`.
    #[must_use]
    pub const fn of(self, summary: &Summary) -> f64 {
        match self {
            Percentile::Mean => summary.mean,
            Percentile::P50 => summary.p50,
            Percentile::P90 => summary.p90,
            Percentile::P99 => summary.p99,
        }
    }
}

/// numpy's `percentile` (linear interpolation between closest ranks) of `x` at `q` in [0, 100], found by
/// selection (`x` is reordered).
fn percentile(x: &mut [f64], q: f64) -> f64 {
    let rank = q / 100.0 * (x.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let (_, &mut below, above) = x.select_nth_unstable_by(lo, f64::total_cmp);
    let above = above.iter().copied().fold(f64::INFINITY, f64::min);
    if rank > lo as f64 {
        below + (above - below) * (rank - lo as f64)
    } else {
        below
    }
}

/// The summary of `values` (0 for every statistic when empty; `values` is reordered).
pub(super) fn summarize(values: &mut [f64]) -> Summary {
    if values.is_empty() {
        return Summary::default();
    }
    Summary {
        mean: values.iter().sum::<f64>() / values.len() as f64,
        p50: percentile(values, 50.0),
        p90: percentile(values, 90.0),
        p99: percentile(values, 99.0),
    }
}

/// Smallest gap the histogram resolves, in seconds (values below land in the first bin).
const LOWEST_S: f64 = 1e-6;
/// Bins per factor of e: adjacent bin edges are 0.25 % apart.
const BINS_PER_E: f64 = 400.0;
/// Bins: 1 µs to 1e-6 · e^(7000/400) ≈ 40,000 s.
const BINS: usize = 7000;

/// Inter-token gaps of a run: their exact count, sum, extremes, and a log-spaced histogram for the
/// percentiles (within 0.25 % of numpy's on the same gaps).
#[derive(Debug, Clone)]
pub(super) struct Gaps {
    weights: Vec<f64>,
    count: f64,
    sum: f64,
    min: f64,
    max: f64,
}

fn bin_of(x: f64) -> usize {
    (((x / LOWEST_S).ln() * BINS_PER_E).max(0.0) as usize).min(BINS - 1)
}

fn edge(bin: usize) -> f64 {
    LOWEST_S * (bin as f64 / BINS_PER_E).exp()
}

impl Gaps {
    pub(super) fn new() -> Gaps {
        Gaps {
            weights: vec![0.0; BINS],
            count: 0.0,
            sum: 0.0,
            min: f64::INFINITY,
            max: 0.0,
        }
    }

    /// Adds `count` gaps of `value`.
    pub(super) fn add(&mut self, value: f64, count: f64) {
        if count > 0.0 {
            self.weights[bin_of(value)] += count;
            self.count += count;
            self.sum += value * count;
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
    }

    /// Adds `count` gaps spread evenly from `first` to `last` (a linear ramp of step times), whose sum is
    /// `sum`.
    pub(super) fn add_ramp(&mut self, first: f64, last: f64, count: f64, sum: f64) {
        if count <= 0.0 {
            return;
        }
        let (lo, hi) = (first.min(last), first.max(last));
        let (a, b) = (bin_of(lo), bin_of(hi));
        if a == b || hi <= lo {
            self.weights[a] += count;
        } else {
            for bin in a..=b {
                let from = edge(bin).max(lo);
                let to = edge(bin + 1).min(hi);
                self.weights[bin] += count * ((to - from) / (hi - lo)).max(0.0);
            }
        }
        self.count += count;
        self.sum += sum;
        self.min = self.min.min(lo);
        self.max = self.max.max(hi);
    }

    /// Mean, median, P90 and P99 of the gaps.
    pub(super) fn summary(&self) -> Summary {
        if self.count <= 0.0 {
            return Summary::default();
        }
        // numpy's rank q · (n − 1), as a weight from the bottom (a sample's weight centred on its rank).
        let targets = [50.0, 90.0, 99.0].map(|q| q / 100.0 * (self.count - 1.0).max(0.0) + 0.5);
        let mut found = [self.max; 3];
        let mut next = 0;
        let mut below = 0.0;
        for bin in bin_of(self.min)..=bin_of(self.max) {
            let w = self.weights[bin];
            while next < 3 && w > 0.0 && below + w >= targets[next] {
                let t = ((targets[next] - below) / w).clamp(0.0, 1.0);
                let (lo, hi) = (edge(bin).max(self.min), edge(bin + 1).min(self.max));
                found[next] = (lo + (hi - lo) * t).clamp(self.min, self.max);
                next += 1;
            }
            below += w;
        }
        Summary {
            mean: self.sum / self.count,
            p50: found[0],
            p90: found[1],
            p99: found[2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_numpys() {
        // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = 2.5, 3.7, 3.97.
        let s = summarize(&mut [4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.mean, s.p50), (2.5, 2.5));
        assert!(
            (s.p90 - 3.7).abs() < 1e-12 && (s.p99 - 3.97).abs() < 1e-12,
            "{s:?}"
        );
        assert_eq!(summarize(&mut []), Summary::default());
    }

    #[test]
    fn gaps_match_exact_percentiles_within_the_bin_width() {
        // 1000 gaps of 10 ms, 9000 of 20 ms as a ramp from 20 to 30 ms, 100 of 1 s.
        let mut gaps = Gaps::new();
        gaps.add(0.010, 1000.0);
        gaps.add_ramp(0.020, 0.030, 9000.0, 9000.0 * 0.025);
        gaps.add(1.0, 100.0);
        let mut exact: Vec<f64> = std::iter::repeat_n(0.010, 1000)
            .chain((0..9000).map(|i| 0.020 + 0.010 * (f64::from(i) + 0.5) / 9000.0))
            .chain(std::iter::repeat_n(1.0, 100))
            .collect();
        let want = summarize(&mut exact);
        let got = gaps.summary();
        assert!((got.mean / want.mean - 1.0).abs() < 1e-9, "{got:?} {want:?}");
        for (g, w) in [(got.p50, want.p50), (got.p90, want.p90), (got.p99, want.p99)] {
            assert!((g / w - 1.0).abs() < 0.003, "{got:?} vs {want:?}");
        }
        // One value only: exact.
        let mut one = Gaps::new();
        one.add(0.0123, 50.0);
        assert_eq!(one.summary().p90, 0.0123);
    }
}
