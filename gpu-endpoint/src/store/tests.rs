//! Tests of the store: schema versions and migration, writes that fail, paged and filtered listings, skipped
//! rows.

use super::*;
use roofline_core::measurement::MeasuredPoint;

mod migrations;

pub(super) fn point(device: &str, precision: Precision) -> MeasuredPoint {
    sized_point(device, precision, 64)
}

/// `point` as the wire and the stores before version 4 wrote it.
pub(super) fn wire_json(point: &MeasuredPoint) -> String {
    serde_json::to_string(&roofline_core::wire::RooflinePoint::from(point)).unwrap()
}

fn sized_point(device: &str, precision: Precision, n: u64) -> MeasuredPoint {
    let op = roofline_core::Operator::matmul(1, n, 64, precision.into()).unwrap();
    let measurement = roofline_core::wire::Measurement {
        backend: roofline_core::wire::BackendKind::Cpu,
        device_name: device.into(),
        median_s: 1e-5,
        ..roofline_core::wire::Measurement::default()
    };
    MeasuredPoint {
        bound: Some(roofline_core::Bound::Memory),
        ..MeasuredPoint::of_operator(&op, precision, "", measurement)
    }
}

#[test]
fn schema_is_versioned_and_reopening_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    let conn = lock(&store.writer);
    let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, MIGRATIONS.len() as i64);
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    // The write probe left nothing behind.
    let probes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'write_probe'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(probes, 0);
}

#[test]
fn deleting_results_applies_every_filter() {
    use roofline_core::Precision::{Fp16, Fp32};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for (device, precision) in [("Host CPU", Fp32), ("Host CPU", Fp16), ("NVIDIA H100", Fp32)] {
        store
            .insert_point(None, None, &point(device, precision), None)
            .unwrap();
    }
    let delete = |query: DeleteResultsQuery| store.delete_results(&query).unwrap();
    let remaining = |store: &Store| store.count_points().unwrap();
    // Nothing is newer than the far future.
    let future = DeleteResultsQuery {
        since: Some(unix_now() + 3600.0),
        ..DeleteResultsQuery::default()
    };
    assert_eq!(delete(future), 0);
    let cpu_fp32 = DeleteResultsQuery {
        device: Some("cpu".into()),
        precision: Some(Precision::Fp32),
        ..DeleteResultsQuery::default()
    };
    assert_eq!(delete(cpu_fp32), 1);
    assert_eq!(remaining(&store), 2);
    let h100 = ResultsQuery {
        device: Some("h100".into()),
        ..ResultsQuery::default()
    };
    assert_eq!(store.results(&h100).unwrap().results.len(), 1);
    let everything = DeleteResultsQuery {
        all: true,
        ..DeleteResultsQuery::default()
    };
    assert_eq!(delete(everything), 2);
    assert_eq!(remaining(&store), 0);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    assert!(matches!(Store::open(dir.path()), Err(StoreError::TooNew(99, _))));
}

#[test]
fn a_connection_that_cannot_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let path = dir.path().join(DB_FILE);
    // What SQLite does with a file it may not write: it opens it read-only without a word.
    let read_only = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let error = check_writable(&read_only, &path).unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly(..)), "{error}");
    assert!(error.to_string().contains("--data-dir"), "{error}");
    check_writable(&connect(&path).unwrap(), &path).unwrap();
}

#[test]
fn a_full_store_fails_the_write_and_keeps_what_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.limit_size(64 * 1024).unwrap();
    let mut stored = 0;
    let error = loop {
        match store.insert_point(None, None, &point("Host CPU", Precision::Fp32), None) {
            Ok(_) => stored += 1,
            Err(e) => break e,
        }
        assert!(stored < 10_000, "a 64 KiB store never filled up");
    };
    assert!(error.to_string().contains("full"), "{error}");
    assert!(stored > 0);
    assert_eq!(store.count_points().unwrap(), stored);
}

#[test]
fn listings_are_paged_by_cursor_newest_first_with_every_filter() {
    use roofline_core::Precision::{Fp16, Fp32};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // 30 points: devices A and B alternate, precisions cycle FP32, FP32, FP16, shapes N = 64 or 128.
    let mut ids = Vec::new();
    for i in 0..30u64 {
        let device = if i % 2 == 0 { "Device A" } else { "Device B" };
        let precision = if i % 3 == 2 { Fp16 } else { Fp32 };
        let p = sized_point(device, precision, 64 << (i % 5 / 4));
        ids.push(store.insert_point(None, None, &p, None).unwrap());
    }
    let all_pages = |query: ResultsQuery| {
        let mut query = ResultsQuery {
            limit: Some(4),
            ..query
        };
        let mut got = Vec::new();
        loop {
            let page = store.results(&query).unwrap();
            assert!(page.results.len() <= 4);
            assert_eq!(page.skipped, 0);
            got.extend(page.results.iter().map(|r| r.id));
            match page.next_cursor {
                Some(cursor) => query.cursor = Some(cursor),
                None => break got,
            }
        }
    };
    let expected = |keep: &dyn Fn(u64) -> bool| -> Vec<i64> {
        (0..30u64)
            .rev()
            .filter(|&i| keep(i))
            .map(|i| ids[i as usize])
            .collect()
    };
    assert_eq!(all_pages(ResultsQuery::default()), expected(&|_| true));
    let device_b = ResultsQuery {
        device: Some("device b".into()),
        ..ResultsQuery::default()
    };
    assert_eq!(all_pages(device_b), expected(&|i| i % 2 == 1));
    let a_fp16 = ResultsQuery {
        device: Some("A".into()),
        precision: Some(Fp16),
        ..ResultsQuery::default()
    };
    assert_eq!(all_pages(a_fp16), expected(&|i| i % 2 == 0 && i % 3 == 2));
    let wide = ResultsQuery {
        shape: Some("1x128x64".into()),
        ..ResultsQuery::default()
    };
    assert_eq!(all_pages(wide), expected(&|i| i % 5 == 4));
    // `since` in the far future, a device that never measured: empty, no next page.
    for query in [
        ResultsQuery {
            since: Some(unix_now() + 3600.0),
            ..ResultsQuery::default()
        },
        ResultsQuery {
            device: Some("nowhere".into()),
            ..ResultsQuery::default()
        },
    ] {
        assert_eq!(store.results(&query).unwrap(), StoredPage::default());
    }
    // A cursor this store did not give out.
    for cursor in ["", "p1.", "p1.zz", "p1.-4", "42"] {
        let query = ResultsQuery {
            cursor: Some(cursor.into()),
            ..ResultsQuery::default()
        };
        assert!(
            matches!(store.results(&query), Err(StoreError::BadCursor(_))),
            "{cursor}"
        );
    }
}

#[test]
fn creation_times_never_decrease_so_since_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let first = store
        .insert_point(None, None, &point("Host CPU", Precision::Fp32), None)
        .unwrap();
    // A row written by a clock one hour ahead, then one by the real clock: the second takes the first's time.
    let ahead = unix_now() + 3600.0;
    lock(&store.writer)
        .execute(
            "UPDATE points SET created_unix_s = ?1 WHERE id = ?2",
            params![ahead, first],
        )
        .unwrap();
    let second = store
        .insert_point(None, None, &point("Host CPU", Precision::Fp32), None)
        .unwrap();
    let page = store
        .results(&ResultsQuery {
            since: Some(ahead),
            ..ResultsQuery::default()
        })
        .unwrap();
    let ids: Vec<i64> = page.results.iter().map(|r| r.id).collect();
    assert_eq!(ids, [second, first]);
    assert!(page.results.iter().all(|r| r.created_unix_s == ahead));
}

#[test]
fn rows_that_do_not_decode_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let ids: Vec<i64> = (0..3)
        .map(|_| {
            store
                .insert_point(None, None, &point("Host CPU", Precision::Fp32), None)
                .unwrap()
        })
        .collect();
    lock(&store.writer)
        .execute(
            "UPDATE points SET point_json = '{\"not\": \"a point\"}' WHERE id = ?1",
            [ids[1]],
        )
        .unwrap();
    lock(&store.writer)
        .execute(
            "UPDATE points SET predicted_json = 'garbage' WHERE id = ?1",
            [ids[2]],
        )
        .unwrap();
    let page = store.results(&ResultsQuery::default()).unwrap();
    assert_eq!(page.skipped, 2);
    assert_eq!(page.results.iter().map(|r| r.id).collect::<Vec<_>>(), [ids[0]]);
    // A calibration that does not decode is passed over for the one before it.
    assert_eq!(store.latest_calibration().unwrap(), None);
    lock(&store.writer)
        .execute(
            "INSERT INTO calibrations (device, spec_key, result_json, created_unix_s) VALUES ('x', 'y', '[]', 0)",
            [],
        )
        .unwrap();
    assert_eq!(store.latest_calibration().unwrap(), None);
}

#[test]
fn filtered_listings_walk_the_series_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = lock(&store.reader);
    let plan: Vec<String> = conn
        .prepare(
            "EXPLAIN QUERY PLAN SELECT id FROM points WHERE series_id = ?1 AND id < ?2 AND id >= ?3 ORDER BY id DESC",
        )
        .unwrap()
        .query_map(params![1, i64::MAX, 0], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter()
            .any(|step| step.contains("USING COVERING INDEX points_series")),
        "{plan:?}"
    );
    assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "{plan:?}");
}

#[test]
fn stored_points_read_back_bit_for_bit() {
    // The page keys a measured point by its floats' shortest round-trip text, so a point read back from the
    // store must be the point it was sent as over SSE, to the bit (serde_json's `float_roundtrip`: its
    // default fast path can land one ULP off). 1000 medians spread over six decades.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let op = roofline_core::Operator::matmul(7, 3000, 4096, Precision::Bf16.into()).unwrap();
    let sent: Vec<MeasuredPoint> = (1..=1000u32)
        .map(|i| {
            let median_s = 1e-7 * 10f64.powf(f64::from(i) * 6e-3) * (1.0 + f64::from(i).sqrt() * 1e-9);
            let measurement = roofline_core::wire::Measurement {
                median_s,
                ..roofline_core::wire::Measurement::default()
            };
            MeasuredPoint {
                bound: Some(roofline_core::Bound::Compute),
                ..MeasuredPoint::of_operator(&op, Precision::Bf16, "", measurement)
            }
        })
        .collect();
    store.insert_points(&sent).unwrap();
    let page = store
        .results(&ResultsQuery {
            limit: Some(1000),
            ..ResultsQuery::default()
        })
        .unwrap();
    assert_eq!(page.results.len(), 1000);
    for (got, want) in page.results.iter().rev().zip(&sent) {
        assert_eq!(&got.point, want);
        for (a, b) in [
            (got.point.time_s(), want.time_s()),
            (got.point.achieved_flop_per_s(), want.achieved_flop_per_s()),
            (got.point.arithmetic_intensity(), want.arithmetic_intensity()),
        ] {
            assert_eq!(a.to_bits(), b.to_bits(), "{a:e} read back for {b:e}");
        }
    }
}

#[test]
fn filtered_listings_page_exactly_like_a_scan_of_every_row() {
    use roofline_core::Precision::{Bf16, Fp16, Fp32};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // 240 points over 3 devices (two differing only in case), 3 precisions and 4 shapes, in a seeded order.
    let devices = ["NVIDIA H100", "nvidia h100 pcie", "Host CPU"];
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(37);
    for _ in 0..240 {
        let device = devices[rand::Rng::random_range(&mut rng, 0..3)];
        let precision = [Fp32, Fp16, Bf16][rand::Rng::random_range(&mut rng, 0..3)];
        let n = 64 * rand::Rng::random_range(&mut rng, 1..=4u64);
        store
            .insert_point(None, None, &sized_point(device, precision, n), None)
            .unwrap();
    }
    // The reference: every row, filtered in Rust, newest first.
    let rows: Vec<(i64, String, String, String)> = lock(&store.reader)
        .prepare("SELECT id, device, precision, shape FROM points ORDER BY id DESC")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let since = lock(&store.reader)
        .query_row("SELECT created_unix_s FROM points WHERE id = 120", [], |r| {
            r.get::<_, f64>(0)
        })
        .unwrap();
    let mut checked = 0;
    for device in [
        None,
        Some("h100"),
        Some("NVIDIA H100 pcie"),
        Some("cpu"),
        Some("nowhere"),
    ] {
        for precision in [None, Some(Fp32), Some(Bf16)] {
            for shape in [None, Some("1x128x64"), Some("1x999x64")] {
                for since in [None, Some(since)] {
                    let expected: Vec<i64> = rows
                        .iter()
                        .filter(|(id, d, p, s)| {
                            device.is_none_or(|f| d.to_lowercase().contains(&f.to_lowercase()))
                                && precision.is_none_or(|f| f.name() == p)
                                && shape.is_none_or(|f| f == s)
                                && since.is_none_or(|_| *id >= 120)
                        })
                        .map(|r| r.0)
                        .collect();
                    let mut query = ResultsQuery {
                        device: device.map(str::to_owned),
                        precision,
                        shape: shape.map(str::to_owned),
                        since,
                        limit: Some(7),
                        ..ResultsQuery::default()
                    };
                    let mut got = Vec::new();
                    loop {
                        let page = store.results(&query).unwrap();
                        got.extend(page.results.iter().map(|r| r.id));
                        match page.next_cursor {
                            Some(cursor) => query.cursor = Some(cursor),
                            None => break,
                        }
                    }
                    assert_eq!(got, expected, "{device:?} {precision:?} {shape:?} {since:?}");
                    checked += expected.len();
                }
            }
        }
    }
    assert!(checked > 1000, "the filters matched {checked} rows in all");
}

/// The `EXPLAIN QUERY PLAN` details of `sql` with `params`.
fn plan(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Vec<String> {
    conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(params, |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn every_listing_statement_seeks_an_index_and_never_scans_or_sorts() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = lock(&store.reader);
    let walks = [
        (Walk::Series(1), "points_series"),
        (Walk::Device("Host CPU".into()), "points_device"),
        (
            Walk::DevicePrecision("Host CPU".into(), "FP32"),
            "points_device_precision",
        ),
    ];
    for (walk, index) in walks {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", walk.sql()))
            .unwrap();
        let mut rows = walk.start(&mut stmt, (i64::MAX, 0)).unwrap();
        let mut steps = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            steps.push(row.get::<_, String>(3).unwrap());
        }
        assert!(
            steps.iter().any(|s| s.contains(&format!("INDEX {index} "))),
            "{index}: {steps:?}"
        );
        assert!(!steps.iter().any(|s| s.contains("TEMP B-TREE")), "{steps:?}");
    }
    let delete = plan(&conn, DELETE_MATCHING, params![0, "%cpu%", "FP32"]);
    assert!(
        delete.iter().any(|s| s.contains("INDEX points_series ")),
        "{delete:?}"
    );
    let shape = plan(&conn, SHAPE_SERIES, params!["1x64x64", "FP32", "%cpu%"]);
    assert!(
        shape.iter().any(|s| s.contains("INDEX series_shape")),
        "{shape:?}"
    );
    // The distinct devices: seeks on the series' unique index, never a scan of the table.
    let devices = plan(&conn, DISTINCT_DEVICES, [None::<String>]);
    assert!(
        devices
            .iter()
            .any(|s| s.contains("INDEX sqlite_autoindex_series_1")),
        "{devices:?}"
    );
    assert!(
        !devices.iter().any(|s| s.starts_with("SCAN series")),
        "{devices:?}"
    );
}

#[test]
fn a_listing_costs_one_walk_per_device_at_any_number_of_series() {
    // The probe's case (issue 37), scaled: a benchmark of 20,000 new shapes on one device in FP32 makes
    // 20,000 series, all matching `precision=FP32`; the listing was one walk per series (0.95 s in a release
    // build at 20,000 on a 2-core host, 3.8 s at 40,000: `bench-store --series`).
    let (_dir, store) = store_of_gemvs("NVIDIA H100", 20_000);
    store
        .insert_point(None, None, &point("Host CPU", Precision::Bf16), None)
        .unwrap();
    let fp32 = ResultsQuery {
        precision: Some(Precision::Fp32),
        limit: Some(1),
        ..ResultsQuery::default()
    };
    let walks = walks(&lock(&store.reader), &fp32).unwrap().unwrap();
    assert_eq!(walks.len(), 2, "one walk per device, not per series");
    let start = std::time::Instant::now();
    for _ in 0..10 {
        let page = store.results(&fp32).unwrap();
        assert_eq!(page.results[0].point.op.shape_label(), "1x20000x64");
        assert!(page.next_cursor.is_some());
    }
    let each = start.elapsed() / 10;
    // A few index seeks: well under a millisecond in release; 50 ms leaves a debug build on a busy host room.
    assert!(
        each < std::time::Duration::from_millis(50),
        "a limit=1 listing over 20,000 series took {each:?}"
    );
}

/// A fresh store of `count` FP32 GEMVs 1 × n × 64 of `device`, n = 1 … `count` (one series each).
fn store_of_gemvs(device: &str, count: u64) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let points: Vec<MeasuredPoint> = (1..=count)
        .map(|n| sized_point(device, Precision::Fp32, n))
        .collect();
    store.insert_points(&points).unwrap();
    (dir, store)
}

#[test]
fn a_listing_stops_at_its_limits_and_leaves_the_reader_usable() {
    let (_dir, store) = store_of_gemvs("Host CPU", 1000);
    let everything = ResultsQuery {
        limit: Some(1000),
        ..ResultsQuery::default()
    };
    // Past its time limit from the start: SQLite's steps are interrupted (or the page, done, is late).
    let late = crate::protocol::PointLimits::new(std::time::Duration::ZERO);
    let error = late.run(|| store.results(&everything)).unwrap_err();
    assert!(
        matches!(error, StoreError::Interrupted(Interrupted::TimeLimit(_))),
        "{error}"
    );
    // Cancelled: the listing does not start.
    let cancelled = crate::protocol::PointLimits::default();
    cancelled.cancel();
    let error = cancelled.run(|| store.results(&everything)).unwrap_err();
    assert!(
        matches!(error, StoreError::Interrupted(Interrupted::Cancelled)),
        "{error}"
    );
    // The reader's progress handler is gone: the same listing without limits runs to its end.
    assert_eq!(store.results(&everything).unwrap().results.len(), 1000);
    // Interrupted inside SQLite (the handler fires within its first 1000 steps), not after: a stop due
    // before the listing starts its statements is reported as the interruption, never as a database error.
    let conn = &mut *lock(&store.reader);
    conn.progress_handler(STEPS_PER_CHECK, Some(|| true)).unwrap();
    let raw = page(conn, &everything, None, 1000).unwrap_err();
    conn.progress_handler(0, None::<fn() -> bool>).unwrap();
    assert!(raw.to_string().contains("interrupt"), "{raw}");
}
