//! The measurement protocol shared by every backend (docs/research/benchmarking.md §2): seeded random inputs,
//! a correctness gate against a reference, warm-up, samples until the relative noise is low enough or a time
//! cap is hit, and median / p10 / p90 statistics. Backends supply the timed closure; nothing here is
//! backend-specific, so the CPU, CUDA and fake backends produce records of the same shape. `seeded`: the
//! counter-based inputs a GPU generates on the device and the host recomputes element by element.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roofline_core::measured_device::catalog_key_of_device_name;
use roofline_core::wire::{BackendKind, Measurement};

mod seeded;
pub use seeded::{NORMAL_SCALE_BITS, normal_at, normal_values, stream_key};

/// When to stop sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplingPolicy {
    /// Untimed runs before sampling (at least one: lazy loading, page faults, JIT).
    pub warmup_runs: u32,
    /// Samples always taken (unless the time cap is hit first).
    pub min_samples: u32,
    /// Samples never exceeded.
    pub max_samples: u32,
    /// Stop once stdev / mean of the samples is at or below this (0.01 = 1 %).
    pub target_rel_noise: f64,
    /// Wall-clock cap for warm-up plus samples.
    pub time_cap: Duration,
}

impl SamplingPolicy {
    /// The CPU backend's default: short runs (≈1.5 s cap per point) so a 2-core host stays responsive.
    #[must_use]
    pub const fn cpu() -> SamplingPolicy {
        SamplingPolicy {
            warmup_runs: 1,
            min_samples: 5,
            max_samples: 200,
            target_rel_noise: 0.01,
            time_cap: Duration::from_millis(1500),
        }
    }

    /// The CUDA backend's default (benchmarking.md §2.5: ≥ 10 samples, 1 % noise, 10 s cap).
    #[must_use]
    pub const fn gpu() -> SamplingPolicy {
        SamplingPolicy {
            warmup_runs: 3,
            min_samples: 10,
            max_samples: 1000,
            target_rel_noise: 0.01,
            time_cap: Duration::from_secs(10),
        }
    }
}

/// Summary of the timed samples, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleStats {
    /// Median.
    pub median_s: f64,
    /// 10th percentile.
    pub p10_s: f64,
    /// 90th percentile.
    pub p90_s: f64,
    /// Mean.
    pub mean_s: f64,
    /// Minimum.
    pub min_s: f64,
    /// Standard deviation / mean.
    pub rel_noise: f64,
    /// Number of samples.
    pub samples: u32,
    /// Whether sampling stopped on the time cap rather than on the noise target.
    pub hit_time_cap: bool,
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted values, linearly interpolated between closest ranks.
#[must_use]
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let rank = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lower = rank.floor() as usize;
            let upper = rank.ceil() as usize;
            let frac = rank - lower as f64;
            sorted[lower] + (sorted[upper] - sorted[lower]) * frac
        }
    }
}

/// Relative noise (sample standard deviation / mean); 0 for fewer than two samples.
#[must_use]
pub fn relative_noise(samples: &[f64]) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if mean > 0.0 { var.sqrt() / mean } else { 0.0 }
}

/// Summarizes samples (seconds).
#[must_use]
pub fn summarize(samples: &[f64], hit_time_cap: bool) -> SampleStats {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    SampleStats {
        median_s: quantile_sorted(&sorted, 0.5),
        p10_s: quantile_sorted(&sorted, 0.1),
        p90_s: quantile_sorted(&sorted, 0.9),
        mean_s: sorted.iter().sum::<f64>() / sorted.len().max(1) as f64,
        min_s: sorted.first().copied().unwrap_or(f64::NAN),
        rel_noise: relative_noise(samples),
        samples: u32::try_from(samples.len()).unwrap_or(u32::MAX),
        hit_time_cap,
    }
}

/// Why a measurement stopped before its end: the point ran past its time cap, or its client went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupted {
    /// The point ran longer than this cap (`--max-point-seconds`).
    TimeLimit(Duration),
    /// The measurement was cancelled (its client disconnected, or its job was cancelled).
    Cancelled,
}

/// Sustained runs of a point's own kernel before its samples, so a GPU's clocks settle where that load keeps
/// them (boost after idle, lower once power or heat limit it) instead of being sampled mid-ramp: warm-up
/// runs go on for at least `min` and until the last [`SETTLE_RUNS`] agree within the policy's noise target,
/// and stop at `max` whatever they do. [`PointLimits::with_clock_warmup`] asks for it (calibration peaks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockWarmup {
    /// Shortest warm-up.
    pub min: Duration,
    /// Longest warm-up.
    pub max: Duration,
}

/// Warm-up runs whose relative noise says the clocks have settled ([`ClockWarmup`]).
pub const SETTLE_RUNS: usize = 10;

/// The limits of the measurements a caller runs: a wall-clock cap per point and a cancellation flag.
///
/// [`PointLimits::run`] makes them visible to [`sample`] on the running thread (the backends time on the
/// caller's thread), which checks them before the warm-up and after every run, and to the long CPU kernels
/// through a [`StopCheck`], which they check per row or block (a CUDA kernel runs to its end: a GPU point
/// stops within one run of its cap). A point that returns after its cap (a backend without a sampling loop)
/// is refused afterwards all the same.
#[derive(Debug, Clone)]
pub struct PointLimits {
    /// Wall-clock cap of one point (preparation, verification, warm-up and samples).
    pub max_point: Duration,
    /// A clock warm-up before every point's samples, when asked for.
    pub clock_warmup: Option<ClockWarmup>,
    cancel: Arc<AtomicBool>,
}

/// The default per-point cap (`--max-point-seconds`).
pub const DEFAULT_MAX_POINT: Duration = Duration::from_secs(60);

impl Default for PointLimits {
    fn default() -> Self {
        PointLimits::new(DEFAULT_MAX_POINT)
    }
}

/// The limits of the point running on a thread ([`PointLimits::run`]) as a value any thread can check: a
/// kernel that runs on a thread pool, or a long loop, checks it per block or row ([`StopCheck::due`]) and
/// stops early; the protocol then reports why ([`check_interruption`] after the run).
#[derive(Debug, Clone)]
pub struct StopCheck {
    deadline: Instant,
    cap: Duration,
    cancel: Arc<AtomicBool>,
    clock_warmup: Option<ClockWarmup>,
}

impl StopCheck {
    /// The limits of the point running on this thread; `None` outside [`PointLimits::run`] (nothing stops).
    #[must_use]
    pub fn current() -> Option<StopCheck> {
        ACTIVE.with(|a| a.borrow().clone())
    }

    /// Why the point must stop now, if it must: cancelled, or past its cap.
    #[must_use]
    pub fn due(&self) -> Option<Interrupted> {
        if self.cancel.load(Ordering::Relaxed) {
            Some(Interrupted::Cancelled)
        } else if Instant::now() >= self.deadline {
            Some(Interrupted::TimeLimit(self.cap))
        } else {
            None
        }
    }
}

/// Whether the point `stop` belongs to must stop now (never without limits): the check of a loop that
/// cannot return an error.
#[must_use]
pub fn stop_due(stop: Option<&StopCheck>) -> bool {
    stop.is_some_and(|s| s.due().is_some())
}

thread_local! {
    static ACTIVE: RefCell<Option<StopCheck>> = const { RefCell::new(None) };
    /// Whether [`random_normal`] on this thread stops with the point's limits ([`draw_stoppable`]).
    static STOPPABLE: Cell<bool> = const { Cell::new(false) };
}

impl PointLimits {
    /// Limits with a per-point cap and a fresh (unset) cancellation flag.
    #[must_use]
    pub fn new(max_point: Duration) -> PointLimits {
        PointLimits {
            max_point,
            clock_warmup: None,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }

    /// These limits (sharing their cancellation flag) with `warmup` before every point's samples.
    #[must_use]
    pub fn with_clock_warmup(&self, warmup: ClockWarmup) -> PointLimits {
        PointLimits {
            clock_warmup: Some(warmup),
            ..self.clone()
        }
    }

    /// Asks every measurement under these limits to stop at its next check.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }

    /// Whether [`PointLimits::cancel`] was called.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// Runs one point under the limits: [`sample`] on this thread stops with [`Interrupted`] once the cap has
    /// passed or the flag is set, and a point that succeeds after its cap becomes
    /// [`Interrupted::TimeLimit`].
    ///
    /// # Errors
    /// `point`'s error, or the interruption.
    pub fn run<T, E: From<Interrupted>>(&self, point: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        if self.is_cancelled() {
            return Err(Interrupted::Cancelled.into());
        }
        let start = Instant::now();
        let active = StopCheck {
            deadline: start + self.max_point,
            cap: self.max_point,
            cancel: self.cancel.clone(),
            clock_warmup: self.clock_warmup,
        };
        let previous = ACTIVE.with(|a| a.replace(Some(active)));
        let result = point();
        ACTIVE.with(|a| a.replace(previous));
        match result {
            Ok(_) if start.elapsed() > self.max_point => Err(Interrupted::TimeLimit(self.max_point).into()),
            other => other,
        }
    }
}

/// The interruption due on this thread, if any (none outside [`PointLimits::run`]).
fn interruption() -> Option<Interrupted> {
    ACTIVE.with(|a| a.borrow().as_ref().and_then(StopCheck::due))
}

/// The interruption due on this thread (the job cancelled, or the point past its time cap) as an error;
/// `Ok` when none is due, and always outside [`PointLimits::run`]. [`sample`] checks it before the warm-up
/// and after every run; preparations check it before their verification run and after it (a run a
/// [`StopCheck`] cut short is then reported as the interruption, never as a wrong output), and a whole step's
/// between its operators.
///
/// # Errors
/// The [`Interrupted`] reason.
pub fn check_interruption<E: From<Interrupted>>() -> Result<(), E> {
    interruption().map_or(Ok(()), |why| Err(why.into()))
}

/// Whether the warm-up is over after `runs` (the latest last) took `elapsed`: the policy's warm-up runs (or
/// half its time cap), or with a [`ClockWarmup`] its rule.
fn warmed_up(policy: &SamplingPolicy, clock: Option<ClockWarmup>, runs: &[f64], elapsed: Duration) -> bool {
    let enough_runs = runs.len() >= policy.warmup_runs.max(1) as usize;
    let Some(clock) = clock else {
        return enough_runs || elapsed >= policy.time_cap / 2;
    };
    let recent = &runs[runs.len().saturating_sub(SETTLE_RUNS)..];
    let settled = recent.len() == SETTLE_RUNS && relative_noise(recent) <= policy.target_rel_noise;
    elapsed >= clock.max || (enough_runs && elapsed >= clock.min && settled)
}

/// Runs the protocol: `flush` before every run (untimed), `timed` returns the seconds of one run.
/// Warm-up runs are discarded: the policy's, or under a [`ClockWarmup`] of the enclosing
/// [`PointLimits::run`] until the clocks settle (the time cap then counts from the first sample). At least
/// one sample is always taken. The limits of the enclosing [`PointLimits::run`] are checked before the
/// warm-up and after every run.
///
/// # Errors
/// The first error of `flush` or `timed`, or the [`Interrupted`] reason.
pub fn sample<E: From<Interrupted>>(
    policy: &SamplingPolicy,
    mut flush: impl FnMut() -> Result<(), E>,
    mut timed: impl FnMut() -> Result<f64, E>,
) -> Result<SampleStats, E> {
    check_interruption()?;
    let clock = StopCheck::current().and_then(|s| s.clock_warmup);
    let mut start = Instant::now();
    let mut warmup = Vec::new();
    loop {
        flush()?;
        warmup.push(timed()?);
        check_interruption()?;
        if warmed_up(policy, clock, &warmup, start.elapsed()) {
            break;
        }
        if warmup.len() >= 2 * SETTLE_RUNS {
            warmup.drain(..SETTLE_RUNS);
        }
    }
    if clock.is_some() {
        start = Instant::now();
    }
    let mut samples = Vec::with_capacity(policy.min_samples as usize);
    let mut hit_time_cap = false;
    loop {
        flush()?;
        samples.push(timed()?);
        check_interruption()?;
        let n = samples.len() as u32;
        if n >= policy.max_samples {
            break;
        }
        if n >= policy.min_samples && relative_noise(&samples) <= policy.target_rel_noise {
            break;
        }
        if start.elapsed() >= policy.time_cap {
            hit_time_cap = true;
            break;
        }
    }
    Ok(summarize(&samples, hit_time_cap))
}

/// `n` seeded standard-normal values (Box–Muller on ChaCha8): never zeros or constants
/// (benchmarking.md §1.2-4), identical for identical seeds.
///
/// Generated in parallel chunks, each starting its ChaCha8 stream at the word where the single sequential
/// stream would be (two `f64` draws = four 32-bit words per pair of values), so the values do not depend on
/// the thread count. Inside [`draw_stoppable`] a chunk starts only while the point running on this thread may
/// go on (the rest of a stopped buffer is left zero, and `draw_stoppable` drops it); elsewhere it runs to the
/// end.
#[must_use]
pub fn random_normal(seed: u64, n: usize) -> Vec<f32> {
    let stop = STOPPABLE.get().then(StopCheck::current).flatten();
    let mut out = vec![0.0f32; n];
    out.par_chunks_mut(NORMAL_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            if stop_due(stop.as_ref()) {
                return;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_word_pos((c * NORMAL_CHUNK * 2) as u128);
            for pair in chunk.chunks_mut(2) {
                let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
                let u2: f64 = rng.random::<f64>();
                let r = (-2.0 * u1.ln()).sqrt();
                let theta = std::f64::consts::TAU * u2;
                pair[0] = (r * theta.cos()) as f32;
                if let Some(second) = pair.get_mut(1) {
                    *second = (r * theta.sin()) as f32;
                }
            }
        });
    out
}

/// Values per chunk of [`random_normal`] (even, so every chunk starts on a Box–Muller pair): about a
/// millisecond of one thread, the longest [`draw_stoppable`] draws past a stop.
pub const NORMAL_CHUNK: usize = 1 << 16;

/// Draws seeded inputs with `draw` under the limits of the point running on this thread: its
/// [`random_normal`] calls stop within a chunk ([`NORMAL_CHUNK`]) once the point must stop, so a departed
/// client or a passed cap ends the generation of a buffer of any size within milliseconds, and the
/// interruption is returned instead of the (partly zero) inputs.
///
/// # Errors
/// The [`Interrupted`] reason, due before or after `draw`.
pub fn draw_stoppable<T, E: From<Interrupted>>(draw: impl FnOnce() -> T) -> Result<T, E> {
    /// Restores the thread's previous mode, also when `draw` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            STOPPABLE.set(self.0);
        }
    }
    check_interruption()?;
    let drawn = {
        let _restore = Restore(STOPPABLE.replace(true));
        draw()
    };
    check_interruption()?;
    Ok(drawn)
}

/// [`random_normal`] drawn with [`draw_stoppable`].
///
/// # Errors
/// The [`Interrupted`] reason.
pub fn try_random_normal<E: From<Interrupted>>(seed: u64, n: usize) -> Result<Vec<f32>, E> {
    draw_stoppable(|| random_normal(seed, n))
}

/// Why an output check failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerifyError {
    /// A buffer holds fewer elements than the shape needs.
    #[error("buffer shorter than the shape")]
    ShortBuffer,
    /// An entry is not finite or further from the `f64` reference than the tolerance allows.
    #[error(
        "C[{row},{col}] = {got}, reference {reference} (error {error:.3e} > {rel_tol:.1e} × {magnitude:.3e})"
    )]
    Mismatch {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// The kernel's value.
        got: f64,
        /// The `f64` dot product.
        reference: f64,
        /// |got − reference|.
        error: f64,
        /// The relative tolerance.
        rel_tol: f64,
        /// Σ|a·b| of the entry's dot product (the tolerance's scale).
        magnitude: f64,
    },
    /// An entry of one product of a batched GEMM failed its check.
    #[error("product {index} of {batch}: {error}")]
    InProduct {
        /// The product (0-based).
        index: usize,
        /// Products in the batch.
        batch: usize,
        /// What failed in it.
        error: Box<VerifyError>,
    },
}

/// Checks sampled entries of `C[M,N] = A[M,K]·B[K,N]` (all row-major) against an `f64` dot product.
///
/// The error of each checked entry must be at most `rel_tol · Σ|a·b|` (a bound that scales with the
/// rounding of the reduction, so it holds for any K). Returns the number of entries checked.
///
/// # Errors
/// [`VerifyError`]: a buffer shorter than the shape, or the first entry out of tolerance.
pub fn verify_sampled<A, B, C>(
    dims: (usize, usize, usize),
    a: &[A],
    b: &[B],
    c: &[C],
    rel_tol: f64,
    seed: u64,
) -> Result<usize, VerifyError>
where
    A: Copy + Into<f64>,
    B: Copy + Into<f64>,
    C: Copy + Into<f64>,
{
    let (m, n, k) = dims;
    if a.len() < m * k || b.len() < k * n || c.len() < m * n {
        return Err(VerifyError::ShortBuffer);
    }
    verify_with(
        dims,
        |i, kk| a[i * k + kk].into(),
        |kk, j| b[kk * n + j].into(),
        |i, j| c[i * n + j].into(),
        rel_tol,
        seed,
    )
}

/// Checks the products of a batched GEMM of `batch` products that the gate samples: the first, one inner
/// product drawn from `seed` and the last (every product when there are at most three), each with
/// `check(product)` (e.g.
/// [`verify_sampled`] on that product's slices). Returns the number of entries checked.
///
/// # Errors
/// The first failure; in a batch of several products, [`VerifyError::InProduct`] naming its product.
pub fn verify_products(
    batch: usize,
    seed: u64,
    mut check: impl FnMut(usize) -> Result<usize, VerifyError>,
) -> Result<usize, VerifyError> {
    let last = batch.saturating_sub(1);
    // An inner product drawn from the seed, when there is one.
    let inner = (last > 1).then(|| ChaCha8Rng::seed_from_u64(seed ^ 0xba7c).random_range(1..last));
    let mut products: Vec<usize> = [Some(0), inner, Some(last)].into_iter().flatten().collect();
    products.dedup();
    products
        .into_iter()
        .try_fold(0, |checked, index| match check(index) {
            Ok(entries) => Ok(checked + entries),
            Err(error) if batch > 1 => Err(VerifyError::InProduct {
                index,
                batch,
                error: Box::new(error),
            }),
            Err(error) => Err(error),
        })
}

/// [`verify_sampled`] over accessor closures (any layout): `a(i, kk)`, `b(kk, j)`, `c(i, j)`.
///
/// # Errors
/// [`VerifyError::Mismatch`] for the first entry out of tolerance.
pub fn verify_with(
    dims: (usize, usize, usize),
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    c: impl Fn(usize, usize) -> f64,
    rel_tol: f64,
    seed: u64,
) -> Result<usize, VerifyError> {
    let (m, n, k) = dims;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let n_checks = 64.min(m * n);
    for check_idx in 0..n_checks {
        // Always check the corners, then random entries.
        let (row, col) = match check_idx {
            0 => (0, 0),
            1 => (m - 1, n - 1),
            _ => (rng.random_range(0..m), rng.random_range(0..n)),
        };
        let mut reference = 0.0f64;
        let mut magnitude = 0.0f64;
        for kk in 0..k {
            let product = a(row, kk) * b(kk, col);
            reference += product;
            magnitude += product.abs();
        }
        let got = c(row, col);
        let err = (got - reference).abs();
        if !got.is_finite() || err > rel_tol * magnitude.max(f64::MIN_POSITIVE) {
            return Err(VerifyError::Mismatch {
                row,
                col,
                got,
                reference,
                error: err,
                rel_tol,
                magnitude,
            });
        }
    }
    Ok(n_checks)
}

/// Telemetry summarized over one measurement (NVML on a GPU; nothing on a CPU).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetrySummary {
    /// Median SM clock, in MHz.
    pub sm_clock_mhz: Option<f64>,
    /// Median power, in W.
    pub power_w: Option<f64>,
    /// Maximum temperature, in °C.
    pub temperature_c: Option<f64>,
    /// Every throttle reason seen.
    pub throttle_reasons: Vec<String>,
}

/// What ran, for [`measurement`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// Backend.
    pub backend: BackendKind,
    /// Library and version.
    pub library: String,
    /// Kernel or algorithm.
    pub kernel: String,
    /// Device name.
    pub device_name: String,
    /// Versions (name → version).
    pub versions: Vec<(String, String)>,
    /// Whether caches were flushed between samples.
    pub flushed: bool,
    /// Whether the output was verified.
    pub verified: bool,
    /// Padding applied, if any.
    pub padding: Option<String>,
}

/// Builds the wire record of one measurement. Its `device_key` is the catalog key matched from the device
/// name on the CUDA backend (as `GET /api/device` reports it), and none on the CPU and fake backends.
#[must_use]
pub fn measurement(run: RunInfo, stats: &SampleStats, telemetry: TelemetrySummary) -> Measurement {
    let device_key = if run.backend == BackendKind::Cuda {
        catalog_key_of_device_name(&run.device_name).map(str::to_owned)
    } else {
        None
    };
    Measurement {
        backend: run.backend,
        library: run.library,
        kernel: run.kernel,
        device_name: run.device_name,
        device_key,
        versions: run.versions,
        median_s: stats.median_s,
        p10_s: stats.p10_s,
        p90_s: stats.p90_s,
        samples: stats.samples,
        l2_flushed: run.flushed,
        verified: run.verified,
        padding: run.padding,
        sm_clock_mhz: telemetry.sm_clock_mhz,
        power_w: telemetry.power_w,
        temperature_c: telemetry.temperature_c,
        throttle_reasons: telemetry.throttle_reasons,
        timestamp_unix_s: unix_now(),
    }
}

/// Seconds since the Unix epoch.
#[must_use]
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests;
