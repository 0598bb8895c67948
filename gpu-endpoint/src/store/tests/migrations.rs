//! Migrations: older stores keep every row, gain the series and listing indexes, and hold base units.

use super::*;
use roofline_core::measurement::PredictedPoint;

#[test]
fn a_version_1_database_is_migrated_into_series() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(MIGRATIONS[0].sql).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    // Three version-1 rows, the last written by a clock that went back 10 s.
    for (device, created) in [("Host CPU", 100.0), ("NVIDIA H100", 200.0), ("Host CPU", 190.0)] {
        let json = wire_json(&point(device, Precision::Fp32));
        conn.execute(
            "INSERT INTO points (device, backend, precision, shape, point_json, created_unix_s)
             VALUES (?1, 'cpu', 'FP32', '1x64x64', ?2, ?3)",
            params![device, json, created],
        )
        .unwrap();
    }
    drop(conn);
    let store = Store::open(dir.path()).unwrap();
    let page = store
        .results(&ResultsQuery {
            device: Some("cpu".into()),
            ..ResultsQuery::default()
        })
        .unwrap();
    let times: Vec<f64> = page.results.iter().map(|r| r.created_unix_s).collect();
    assert_eq!(times, [200.0, 100.0]);
    let series: i64 = lock(&store.reader)
        .query_row("SELECT count(*) FROM series", [], |r| r.get(0))
        .unwrap();
    assert_eq!(series, 2);
}

#[test]
fn a_version_2_database_gains_the_listing_indexes_and_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.execute_batch(MIGRATIONS[0].sql).unwrap();
    conn.execute_batch(MIGRATIONS[1].sql).unwrap();
    conn.pragma_update(None, "user_version", 2).unwrap();
    for (device, precision) in [
        ("Host CPU", "FP32"),
        ("NVIDIA H100", "BF16"),
        ("Host CPU", "BF16"),
    ] {
        let json = wire_json(&point(device, Precision::Fp32));
        conn.execute(
            "INSERT OR IGNORE INTO series (device, precision, shape) VALUES (?1, ?2, '1x64x64')",
            params![device, precision],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO points (device, backend, precision, shape, point_json, created_unix_s, series_id)
             VALUES (?1, 'cpu', ?2, '1x64x64', ?3, 1.0,
                     (SELECT id FROM series WHERE device = ?1 AND precision = ?2 AND shape = '1x64x64'))",
            params![device, precision, json],
        )
        .unwrap();
    }
    drop(conn);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.count_points().unwrap(), 3);
    let indexes: Vec<String> = lock(&store.reader)
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        indexes,
        [
            "points_created",
            "points_device",
            "points_device_precision",
            "points_series",
            "series_shape"
        ]
    );
    let bf16 = ResultsQuery {
        precision: Some(Precision::Bf16),
        ..ResultsQuery::default()
    };
    let ids: Vec<i64> = store
        .results(&bf16)
        .unwrap()
        .results
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, [3, 2]);
}

#[test]
fn a_version_3_store_is_rewritten_in_base_units_keeping_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    for migration in &MIGRATIONS[..3] {
        conn.execute_batch(migration.sql).unwrap();
    }
    conn.pragma_update(None, "user_version", 3).unwrap();
    // A point with its prediction as the wire wrote them; the same point as the seed wrote it (no kind,
    // operands, bandwidth or measurement); a row that never decoded.
    let h100 = roofline_core::find_hardware("h100_sxm").unwrap();
    let op = roofline_core::Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
    let prediction = PredictedPoint::of(&op, &roofline_core::predict(h100, &op).unwrap());
    let measurement = roofline_core::wire::Measurement {
        device_name: "NVIDIA H100 80GB HBM3".into(),
        median_s: 1.753599941730499e-5,
        ..roofline_core::wire::Measurement::default()
    };
    let today = MeasuredPoint {
        bound: Some(prediction.bound),
        ..MeasuredPoint::of_operator(&op, Precision::Fp16, "", measurement)
    };
    let wire = roofline_core::wire::RooflinePoint::from(&today);
    let seed = roofline_core::wire::RooflinePoint {
        kind: None,
        operands: None,
        bandwidth_gb_s: None,
        measurement: None,
        ..wire.clone()
    };
    let predicted = serde_json::to_string(&roofline_core::wire::RooflinePoint::from(&prediction)).unwrap();
    for (json, predicted) in [
        (serde_json::to_string(&wire).unwrap(), Some(predicted)),
        (serde_json::to_string(&seed).unwrap(), None),
        ("{\"not\": \"a point\"}".to_owned(), None),
    ] {
        conn.execute(
            "INSERT INTO points (device, backend, precision, shape, point_json, predicted_json, created_unix_s)
             VALUES ('NVIDIA H100 80GB HBM3', 'cuda', 'FP16', '1x4096x4096', ?1, ?2, 1.0)",
            params![json, predicted],
        )
        .unwrap();
    }
    drop(conn);
    let store = Store::open(dir.path()).unwrap();
    let page = store.results(&ResultsQuery::default()).unwrap();
    assert_eq!((page.results.len(), page.skipped), (2, 1));
    // Today's point and prediction read back as they were, to the bit.
    let first = &page.results[1];
    assert_eq!(first.point, today);
    assert_eq!(first.predicted.as_ref(), Some(&prediction));
    // The seed's point keeps its figures: 17.536 µs, 1.9135 TFLOP/s, the arithmetic intensity of an FP16
    // GEMV 1 × 4096 × 4096 (33,554,432 FLOP over 33,570,816 B).
    let old = &page.results[0].point;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    assert!(close(old.time_s(), today.time_s()), "{old:?}");
    assert!(
        close(old.achieved_flop_per_s(), today.achieved_flop_per_s()),
        "{old:?}"
    );
    assert!(
        close(old.arithmetic_intensity(), 33_554_432.0 / 33_570_816.0),
        "{old:?}"
    );
    assert_eq!(
        (old.op.kind(), old.operands),
        (roofline_core::OpKind::Gemv, Precision::Fp16.into())
    );
    // Rows hold base units now, and the store is at the latest version.
    let conn = lock(&store.reader);
    let stored: String = conn
        .query_row("SELECT point_json FROM points WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert!(
        stored.contains("\"flops\":") && !stored.contains("tflops"),
        "{stored}"
    );
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 4);
}
