//! `gpu-endpoint bench-store`: the result store at scale. Fills a store with `--rows` synthetic points (1,200
//! series: 8 devices × 6 precisions × 25 shapes, and a rare device's 10 points stored first), then times
//! `GET /api/results`' listings (first pages under each filter, a page deep behind cursors, the largest page)
//! and the point writes of a job alone and while listings run back to back on other threads.
//!
//! The figures answer issue 27: a filtered listing at 1 M rows took 1–2.7 s and held a job's point writes up
//! by 4–11 s; the store now lists from indexes on a reader connection of its own. `--series` times listings
//! against the number of series instead (issue 37, [`series`]).

mod series;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roofline_cli::lists::bounded_distinct;
use roofline_cli::output::{emit, table};
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::{BackendKind, Measurement, ResultsQuery};
use roofline_core::{Bound, Operator, Precision};

use super::CliError;
use crate::protocol::{quantile_sorted, unix_now};
use crate::store::Store;

/// `bench-store` options.
#[derive(Debug, Clone, Args)]
pub struct BenchStoreArgs {
    /// Points to store before timing.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// Directory of the store to fill (kept); default: a fresh directory under the system's temp dir,
    /// removed at the end.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Instead of `--rows`: series counts, comma-separated (at most 16, repeats dropped), e.g.
    /// `1000,10000,40000,100000`: a fresh store per count (under the data directory) with one point per
    /// series, its filtered listings' times and the peak RSS.
    #[arg(long, value_delimiter = ',', conflicts_with = "rows",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub series: Vec<u64>,
    /// Timed repetitions of each listing of `--series`.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub repeats: u64,
}

/// Devices of the synthetic points (device names as the drivers report them).
const DEVICES: [&str; 8] = [
    "NVIDIA H100 80GB HBM3",
    "NVIDIA A100-SXM4-80GB",
    "NVIDIA GB10",
    "NVIDIA L40S",
    "NVIDIA GeForce RTX 4090",
    "AMD Instinct MI300X",
    "AMD EPYC 9654 96-Core Processor",
    "Intel(R) Xeon(R) Platinum 8480+",
];
/// The device with only [`RARE_ROWS`] points, all stored first: a listing filtered on it must reach the
/// oldest rows.
const RARE_DEVICE: &str = "NVIDIA B200";
/// Points of [`RARE_DEVICE`].
const RARE_ROWS: u64 = 10;
/// Precisions of the synthetic points.
const PRECISIONS: [Precision; 6] = [
    Precision::Fp32,
    Precision::Tf32,
    Precision::Fp16,
    Precision::Bf16,
    Precision::Fp8E4M3,
    Precision::Int8,
];
/// Shapes per device and precision: GEMVs and GEMMs of N = K = 512 · (1 + i).
const SHAPES: u64 = 25;
/// Points per bulk transaction while filling.
const FILL_BATCH: usize = 10_000;
/// Timed repetitions of each listing.
const REPEATS: usize = 20;
/// Point writes timed, alone and under listings.
const WRITES: usize = 200;

/// Runs `bench-store`.
///
/// # Errors
/// [`CliError::Usage`] for more than 16 `--series`; [`CliError::Runtime`] when the store cannot be created,
/// filled or read.
pub fn run(args: &BenchStoreArgs) -> Result<(), CliError> {
    let counts = bounded_distinct("--series", &args.series, series::MAX_COUNTS)?;
    let (dir, remove) = match &args.data_dir {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("roofline-bench-store-{}", std::process::id())),
            true,
        ),
    };
    let report = if counts.is_empty() {
        rows_report(&dir, args.rows)
    } else {
        series::run(&counts, args.repeats as usize, &dir)
    };
    if remove {
        let _ = std::fs::remove_dir_all(&dir);
    }
    emit(&report.map_err(|e| CliError::Runtime(e.to_string()))?)
}

/// Fills the store in `dir` with `rows` points and times its listings and point writes; returns the report.
fn rows_report(dir: &std::path::Path, rows: u64) -> Result<String, crate::store::StoreError> {
    let store = Store::open(dir)?;
    let fill_start = Instant::now();
    let since = fill(&store, rows)?;
    let fill_time = fill_start.elapsed();
    let stored = store.count_points()?;
    let mut text = format!(
        "{stored} points in {} series stored in {:.1} s ({})\n",
        DEVICES.len() * PRECISIONS.len() * SHAPES as usize + 1,
        fill_time.as_secs_f64(),
        dir.display()
    );
    let mut listing = table(&["listing", "results", "median", "max"]);
    let mut slowest = Duration::ZERO;
    for (name, query) in listings(since) {
        let (results, times) = time_listing(&store, &query, REPEATS)?;
        slowest = slowest.max(*times.last().unwrap_or(&Duration::ZERO));
        listing.add_row(vec![
            name,
            results.to_string(),
            millis(quantile(&times, 0.5)),
            millis(*times.last().unwrap_or(&Duration::ZERO)),
        ]);
    }
    let (depth, results, deep) = time_deep_page(&store, 100)?;
    slowest = slowest.max(deep);
    listing.add_row(vec![
        format!("device=h100, page {depth} (through the cursors)"),
        results.to_string(),
        millis(deep),
        millis(deep),
    ]);
    text.push_str(&format!("{listing}\nslowest listing: {}\n", millis(slowest)));
    let alone = time_writes(&store, WRITES)?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (busy, listed) = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| list_until(&store, &stop, since)))
            .collect();
        let busy = time_writes(&store, WRITES);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let listed: Result<Vec<Duration>, _> = readers
            .into_iter()
            .map(|r| r.join().unwrap_or(Ok(Duration::MAX)))
            .collect();
        (busy, listed)
    });
    let (busy, listed) = (busy?, listed?);
    let mut writes = table(&["point writes (one transaction each)", "p50", "p99", "max"]);
    for (name, times) in [
        ("a job alone".to_owned(), &alone),
        ("while 2 threads list back to back".to_owned(), &busy),
    ] {
        writes.add_row(vec![
            name,
            millis(quantile(times, 0.5)),
            millis(quantile(times, 0.99)),
            millis(*times.last().unwrap_or(&Duration::ZERO)),
        ]);
    }
    let slowest_meanwhile = listed.into_iter().max().unwrap_or_default();
    text.push_str(&format!(
        "{writes}\nwrite stall under listings: max {} (alone {}); slowest listing meanwhile {}\n",
        millis(*busy.last().unwrap_or(&Duration::ZERO)),
        millis(*alone.last().unwrap_or(&Duration::ZERO)),
        millis(slowest_meanwhile)
    ));
    Ok(text)
}

/// Shape `shape_idx` of the `--rows` store: GEMVs (even) and GEMMs (odd) of N = K = 512 · (1 + i).
fn rows_shape(shape_idx: u64) -> [u64; 3] {
    let n = 512 * (1 + shape_idx);
    [if shape_idx.is_multiple_of(2) { 1 } else { n }, n, n]
}

/// One synthetic measured point of `device`, `precision` and shape `[m, n, k]` (each at most 2^20: every
/// shape the benchmark makes is a valid matmul).
fn synthetic_point(device: &str, precision: Precision, [m, n, k]: [u64; 3], median_s: f64) -> MeasuredPoint {
    let op = Operator::matmul(m, n, k, precision.into()).expect("the benchmark's shapes are valid matmuls");
    let measurement = Measurement {
        backend: BackendKind::Cuda,
        library: "cuBLASLt 13.1.0".into(),
        kernel: format!(
            "cublasLtMatmul algo {} (tile 128x128, 3 stages, split-K 1)",
            (n / 512) % 8
        ),
        device_name: device.into(),
        versions: vec![
            ("driver".into(), "580.65.06".into()),
            ("cuda".into(), "13.0".into()),
            ("endpoint".into(), env!("CARGO_PKG_VERSION").into()),
        ],
        median_s,
        p10_s: median_s * 0.99,
        p90_s: median_s * 1.02,
        samples: 25,
        l2_flushed: true,
        verified: true,
        sm_clock_mhz: Some(1980.0),
        power_w: Some(512.5),
        temperature_c: Some(61.0),
        timestamp_unix_s: unix_now(),
        ..Measurement::default()
    };
    MeasuredPoint {
        bound: Some(Bound::Memory),
        ..MeasuredPoint::of_operator(&op, precision, "", measurement)
    }
}

/// Stores [`RARE_ROWS`] points of the rare device, then `rows` − those spread at random (seeded) over the
/// other series. Returns the time just before the last 1 % were stored (the `since` of a listing).
fn fill(store: &Store, rows: u64) -> Result<f64, crate::store::StoreError> {
    let rare: Vec<MeasuredPoint> = (0..RARE_ROWS.min(rows))
        .map(|i| synthetic_point(RARE_DEVICE, Precision::Bf16, rows_shape(i % SHAPES), 1e-5))
        .collect();
    store.insert_points(&rare)?;
    let mut rng = ChaCha8Rng::seed_from_u64(27);
    let rest = rows.saturating_sub(RARE_ROWS);
    let last_percent = rest - rest / 100;
    let mut since = unix_now();
    let mut batch = Vec::with_capacity(FILL_BATCH);
    for i in 0..rest {
        if i == last_percent {
            store.insert_points(&batch)?;
            batch.clear();
            since = unix_now();
        }
        let device = DEVICES[rng.random_range(0..DEVICES.len())];
        let precision = PRECISIONS[rng.random_range(0..PRECISIONS.len())];
        let shape_idx = rng.random_range(0..SHAPES);
        let median_s = rng.random_range(1e-6..1e-2);
        batch.push(synthetic_point(
            device,
            precision,
            rows_shape(shape_idx),
            median_s,
        ));
        if batch.len() == FILL_BATCH {
            store.insert_points(&batch)?;
            batch.clear();
        }
    }
    store.insert_points(&batch)?;
    Ok(since)
}

/// The timed listings: name and query (first pages of 100 unless said).
fn listings(since: f64) -> Vec<(String, ResultsQuery)> {
    let query = |device: Option<&str>, precision: Option<Precision>, shape: Option<&str>| ResultsQuery {
        device: device.map(str::to_owned),
        precision,
        shape: shape.map(str::to_owned),
        ..ResultsQuery::default()
    };
    vec![
        ("newest, no filter".into(), query(None, None, None)),
        ("device=h100".into(), query(Some("h100"), None, None)),
        (
            "precision=FP8_E4M3".into(),
            query(None, Some(Precision::Fp8E4M3), None),
        ),
        (
            "device=h100&precision=BF16&shape=1x512x512".into(),
            query(Some("h100"), Some(Precision::Bf16), Some("1x512x512")),
        ),
        (
            format!("device=b200 (its {RARE_ROWS} points stored first)"),
            query(Some("b200"), None, None),
        ),
        (
            "device=nvidia (6 of 9 devices)".into(),
            query(Some("nvidia"), None, None),
        ),
        (
            "since (the last 1 %)".into(),
            ResultsQuery {
                since: Some(since),
                ..ResultsQuery::default()
            },
        ),
        (
            "limit=1000, no filter".into(),
            ResultsQuery {
                limit: Some(1000),
                ..ResultsQuery::default()
            },
        ),
    ]
}

/// Runs `query` `repeats` times; returns how many results it gave and the times, sorted.
fn time_listing(
    store: &Store,
    query: &ResultsQuery,
    repeats: usize,
) -> Result<(usize, Vec<Duration>), crate::store::StoreError> {
    let mut times = Vec::with_capacity(repeats);
    let mut results = 0;
    for _ in 0..repeats {
        let start = Instant::now();
        results = store.results(query)?.results.len();
        times.push(start.elapsed());
    }
    times.sort();
    Ok((results, times))
}

/// Page `depth` of 100 results filtered on the H100 (or the last one, when there are fewer), reached through
/// the cursors: its number, its results and its time.
fn time_deep_page(store: &Store, depth: usize) -> Result<(usize, usize, Duration), crate::store::StoreError> {
    let mut query = ResultsQuery {
        device: Some("h100".into()),
        ..ResultsQuery::default()
    };
    let mut page_number = 0;
    loop {
        let start = Instant::now();
        let page = store.results(&query)?;
        let time = start.elapsed();
        page_number += 1;
        match page.next_cursor {
            Some(cursor) if page_number < depth => query.cursor = Some(cursor),
            _ => return Ok((page_number, page.results.len(), time)),
        }
    }
}

/// Stores `n` points one transaction each, as a job does; returns the times, sorted.
fn time_writes(store: &Store, n: usize) -> Result<Vec<Duration>, crate::store::StoreError> {
    let point = synthetic_point(DEVICES[0], Precision::Bf16, rows_shape(3), 1e-4);
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        store.insert_point(Some("bench-store"), Some("h100_sxm"), &point, None)?;
        times.push(start.elapsed());
        std::thread::sleep(Duration::from_millis(1));
    }
    times.sort();
    Ok(times)
}

/// Lists (the mix of [`listings`]) back to back until `stop`; returns the slowest listing.
fn list_until(
    store: &Store,
    stop: &std::sync::atomic::AtomicBool,
    since: f64,
) -> Result<Duration, crate::store::StoreError> {
    let mut slowest = Duration::ZERO;
    for (_, query) in listings(since).iter().cycle() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let start = Instant::now();
        store.results(query)?;
        slowest = slowest.max(start.elapsed());
    }
    Ok(slowest)
}

/// The `q`-quantile of sorted times.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let seconds: Vec<f64> = sorted.iter().map(Duration::as_secs_f64).collect();
    Duration::from_secs_f64(quantile_sorted(&seconds, q).max(0.0))
}

/// A time in milliseconds with two decimals.
fn millis(time: Duration) -> String {
    format!("{:.2} ms", time.as_secs_f64() * 1e3)
}
