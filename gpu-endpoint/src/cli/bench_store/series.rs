//! `gpu-endpoint bench-store --series N,…`: listings against the number of series (issue 37). For each count
//! a fresh store holds that many series, one point each, as the probe made them: a benchmark of new shapes on
//! one device in FP32 makes one series per point, so every series matches the filters. It times the
//! filtered `limit=1` listings the probe found growing with the series (`precision=FP32`), a device's and a
//! shape's, ten pages of 100 through the cursors, and reads the peak RSS of the listings (Linux `VmHWM`,
//! reset after the fill through `/proc/self/clear_refs`).

use std::path::Path;
use std::time::{Duration, Instant};

use roofline_cli::output::table;
use roofline_core::Precision;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::ResultsQuery;

use super::{DEVICES, FILL_BATCH, millis, quantile, synthetic_point};
use crate::store::{Store, StoreError};

/// Most series counts one run takes.
pub const MAX_COUNTS: usize = 16;

/// The figures of one series count.
struct Figures {
    series: u64,
    fill: Duration,
    /// Each listing's median and slowest time, in [`listings`] order.
    listings: Vec<(Duration, Duration)>,
    /// Ten pages of the FP32 listing through its cursors, all together.
    pages: Duration,
    /// Peak RSS of the listings (of the whole run when it could not be reset), in bytes.
    peak_rss: Option<u64>,
}

/// Fills a store per count under `base` and times its listings `repeats` times each; returns the report.
///
/// # Errors
/// [`StoreError`] when a store cannot be created, filled or read.
pub(super) fn run(counts: &[u64], repeats: usize, base: &Path) -> Result<String, StoreError> {
    let mut figures = Vec::with_capacity(counts.len());
    let mut reset_everywhere = true;
    for &series in counts {
        let dir = base.join(format!("series-{series}"));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir)?;
        let start = Instant::now();
        fill(&store, series)?;
        let fill = start.elapsed();
        reset_everywhere &= reset_peak_rss();
        let listings = listings()
            .iter()
            .map(|(_, query)| time(&store, query, repeats))
            .collect::<Result<Vec<_>, _>>()?;
        let pages = time_pages(&store, 10)?;
        figures.push(Figures {
            series,
            fill,
            listings,
            pages,
            peak_rss: peak_rss(),
        });
    }
    let names: Vec<String> = listings().into_iter().map(|(name, _)| name).collect();
    let mut times = table(&["series", "listing", "median", "slowest"]);
    let mut totals = table(&["series", "fill", "peak RSS of the listings"]);
    for f in &figures {
        for (name, &(median, max)) in names.iter().zip(&f.listings) {
            times.add_row(vec![
                f.series.to_string(),
                name.clone(),
                millis(median),
                millis(max),
            ]);
        }
        times.add_row(vec![
            f.series.to_string(),
            "10 pages of 100 through the cursors, precision=FP32".into(),
            millis(f.pages),
            millis(f.pages),
        ]);
        totals.add_row(vec![
            f.series.to_string(),
            format!("{:.1} s", f.fill.as_secs_f64()),
            f.peak_rss.map_or_else(
                || "n/a".to_owned(),
                |b| format!("{:.0} MiB", b as f64 / f64::from(1 << 20)),
            ),
        ]);
    }
    let rss = if reset_everywhere {
        "VmHWM, reset after each fill"
    } else {
        "VmHWM since the process started: it could not be reset here"
    };
    Ok(format!(
        "listings against the number of series (one point each; median of {repeats} runs and the slowest)\n\
         {times}\n{totals}\npeak RSS: {rss}\n"
    ))
}

/// Stores one point in each of `series` series: FP32 on the H100, series `i` the GEMV
/// 1 × 64·(1 + i mod 4096) × 64·(1 + i / 4096).
fn fill(store: &Store, series: u64) -> Result<(), StoreError> {
    let mut batch: Vec<MeasuredPoint> = Vec::with_capacity(FILL_BATCH);
    for i in 0..series {
        let shape = [1, 64 * (1 + i % 4096), 64 * (1 + i / 4096)];
        batch.push(synthetic_point(DEVICES[0], Precision::Fp32, shape, 1e-4));
        if batch.len() == FILL_BATCH {
            store.insert_points(&batch)?;
            batch.clear();
        }
    }
    store.insert_points(&batch)
}

/// The timed listings: name and query.
fn listings() -> Vec<(String, ResultsQuery)> {
    let query =
        |device: Option<&str>, precision: Option<Precision>, shape: Option<&str>, limit| ResultsQuery {
            device: device.map(str::to_owned),
            precision,
            shape: shape.map(str::to_owned),
            limit: Some(limit),
            ..ResultsQuery::default()
        };
    vec![
        (
            "precision=FP32&limit=1".into(),
            query(None, Some(Precision::Fp32), None, 1),
        ),
        ("device=h100&limit=1".into(), query(Some("h100"), None, None, 1)),
        (
            "device=h100&precision=FP32&limit=100".into(),
            query(Some("h100"), Some(Precision::Fp32), None, 100),
        ),
        (
            "shape=1x64x64&limit=1".into(),
            query(None, None, Some("1x64x64"), 1),
        ),
    ]
}

/// Runs `query` `repeats` times (at least once); returns the median and the slowest time.
fn time(store: &Store, query: &ResultsQuery, repeats: usize) -> Result<(Duration, Duration), StoreError> {
    let mut times = Vec::with_capacity(repeats.max(1));
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        store.results(query)?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok((quantile(&times, 0.5), *times.last().unwrap_or(&Duration::ZERO)))
}

/// The time of the first `pages` pages of 100 of the FP32 listing, each reached through the last's cursor.
fn time_pages(store: &Store, pages: usize) -> Result<Duration, StoreError> {
    let mut query = ResultsQuery {
        precision: Some(Precision::Fp32),
        ..ResultsQuery::default()
    };
    let start = Instant::now();
    for _ in 0..pages {
        match store.results(&query)?.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    Ok(start.elapsed())
}

/// Resets this process's peak RSS (`VmHWM`) to its current RSS; whether it could.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// This process's peak RSS (`VmHWM`), in bytes, where `/proc` has it.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
