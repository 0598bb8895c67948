//! The store under stress (issue 27, items 3, 4 and 8): a point is reported as measured only once stored, a
//! store that cannot be written stops the server from starting, undecodable rows are skipped and counted,
//! listings are paged by cursor, and `bench-store` prints the listing and write-stall figures.

use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{App, test};
use gpu_endpoint::http::app::configure;
use roofline_core::wire::{
    AnalyzeResponse, BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob, BenchmarkPointEvent, ErrorBody,
    ResultsPage,
};
use serde_json::json;

use crate::common::{Server, fake_state, parse_sse};

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

/// Rows in the `points` table of the store under `dir` (the fake state's `data/`).
fn stored_rows(dir: &tempfile::TempDir) -> i64 {
    rusqlite::Connection::open(dir.path().join("data/roofline.sqlite3"))
        .unwrap()
        .query_row("SELECT count(*) FROM points", [], |r| r.get(0))
        .unwrap()
}

#[actix_web::test]
async fn a_point_the_store_cannot_commit_is_a_not_stored_failure_never_a_measurement() {
    let (state, dir) = fake_state(None, 0);
    // A store capped at 64 KiB fills up within a 64-point job (each point is about 1.5 KB of JSON), as a full
    // disk would.
    state.store.as_ref().unwrap().limit_size(64 * 1024).unwrap();
    let app = app!(state);
    let shapes: Vec<[u64; 3]> = (1..=64).map(|i| [1, 64 * i, 64]).collect();
    let req = test::TestRequest::post()
        .uri("/api/benchmarks")
        .set_json(json!({"shapes": shapes, "precisions": ["FP32"]}));
    let job: BenchmarkJob = test::call_and_read_body_json(&app, req.to_request()).await;
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    let points = events.iter().filter(|(name, _)| name == "point").count();
    let not_stored: Vec<BenchmarkFailedEvent> = events
        .iter()
        .filter(|(name, _)| name == "failed")
        .map(|(_, data)| serde_json::from_str(data).unwrap())
        .collect();
    let done: BenchmarkDoneEvent = serde_json::from_str(&events.last().unwrap().1).unwrap();
    // Every point reported as measured is in the store, and each of the others says why it is not.
    assert!(points > 0 && !not_stored.is_empty(), "{points} points");
    assert_eq!(stored_rows(&dir), points as i64);
    assert_eq!(
        (done.measured as usize, done.failed as usize),
        (points, not_stored.len())
    );
    assert_eq!(points + not_stored.len(), 64);
    for event in &not_stored {
        assert_eq!(event.failure.code, "not_stored");
        assert!(
            event.failure.message.contains("not reported as measured")
                && event.failure.message.contains("full"),
            "{}",
            event.failure.message
        );
    }
    // The point events carry points that were stored: their labels are in the store.
    let first: BenchmarkPointEvent = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(first.point.shape, "1x64x64");
    // A measurement outside a job (once the job's worker has let go of the device): `measured` is empty, the
    // failure is listed.
    let response: AnalyzeResponse = loop {
        let req = test::TestRequest::post()
            .uri("/api/analyze?hardware_key=h100_sxm")
            .set_json(json!({"M": 1, "N": 4096, "K": 64, "precision": "FP32"}));
        let resp = test::call_service(&app, req.to_request()).await;
        if resp.status() != StatusCode::SERVICE_UNAVAILABLE {
            break test::read_body_json(resp).await;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(response.measured.is_empty());
    assert_eq!(response.failed.len(), 1);
    assert_eq!(response.failed[0].code, "not_stored");
    assert!(response.failed[0].message.starts_with("measurement: "));
}

/// Makes `path` a file this process cannot write: read-only mode bits, and for root (whom mode bits do not
/// stop) the immutable attribute. Returns whether `chattr +i` was used (undo it before the file is removed).
fn make_unwritable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let writable = || std::fs::OpenOptions::new().append(true).open(path).is_ok();
    if !writable() {
        return false;
    }
    let status = std::process::Command::new("chattr").arg("+i").arg(path).status();
    assert!(
        status.is_ok_and(|s| s.success()) && !writable(),
        "cannot make {} read-only here (running as root without chattr +i?)",
        path.display()
    );
    true
}

// `test` is actix-web's module here: the plain test attribute by its path.
#[::core::prelude::v1::test]
fn a_store_that_cannot_be_written_stops_the_server_from_starting() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    drop(gpu_endpoint::store::Store::open(&data).unwrap());
    let db = data.join("roofline.sqlite3");
    let immutable = make_unwritable(&db);
    let mut child = Server::spawn(
        dir.path(),
        &["--backend", "fake", "--data-dir", data.to_str().unwrap()],
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    if immutable {
        std::process::Command::new("chattr")
            .arg("-i")
            .arg(&db)
            .status()
            .unwrap();
    }
    let status = status.expect("the server started on a store it cannot write");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot be written") && stderr.contains("--data-dir"),
        "{stderr}"
    );
}

#[actix_web::test]
async fn a_stored_row_that_does_not_decode_is_skipped_and_counted() {
    let (state, dir) = fake_state(None, 0);
    let app = app!(state);
    for n in [64, 128, 192] {
        let req = test::TestRequest::post()
            .uri("/api/analyze?hardware_key=h100_sxm")
            .set_json(json!({"M": 1, "N": n, "K": 64, "precision": "FP32"}));
        assert_eq!(
            test::call_service(&app, req.to_request()).await.status(),
            StatusCode::OK
        );
    }
    rusqlite::Connection::open(dir.path().join("data/roofline.sqlite3"))
        .unwrap()
        .execute(
            "UPDATE points SET point_json = '{\"flops\": \"corrupt\"}' WHERE shape = '1x128x64'",
            [],
        )
        .unwrap();
    let resp = test::call_service(&app, test::TestRequest::get().uri("/api/results").to_request()).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let page: ResultsPage = test::read_body_json(resp).await;
    assert_eq!(page.skipped, 1);
    let shapes: Vec<&str> = page.results.iter().map(|r| r.point.shape.as_str()).collect();
    assert_eq!(shapes, ["1x192x64", "1x64x64"]);
}

#[actix_web::test]
async fn results_are_paged_by_an_opaque_cursor() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let shapes: Vec<[u64; 3]> = (1..=7).map(|i| [1, 64 * i, 64]).collect();
    let req = test::TestRequest::post()
        .uri("/api/benchmarks")
        .set_json(json!({"shapes": shapes, "precisions": ["FP32"]}));
    let job: BenchmarkJob = test::call_and_read_body_json(&app, req.to_request()).await;
    test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    // Pages of 3 over 7 points: 3, 3, 1, newest first, the last without a cursor.
    let mut uri = "/api/v1/results?limit=3&device=fake".to_owned();
    let mut pages = Vec::new();
    loop {
        let page: ResultsPage =
            test::call_and_read_body_json(&app, test::TestRequest::get().uri(&uri).to_request()).await;
        pages.push(
            page.results
                .iter()
                .map(|r| r.point.shape.clone())
                .collect::<Vec<_>>(),
        );
        match page.next_cursor {
            Some(cursor) => uri = format!("/api/v1/results?limit=3&device=fake&cursor={cursor}"),
            None => break,
        }
    }
    let expected: Vec<Vec<String>> = [vec![7, 6, 5], vec![4, 3, 2], vec![1]]
        .iter()
        .map(|page| page.iter().map(|i| format!("1x{}x64", 64 * i)).collect())
        .collect();
    assert_eq!(pages, expected);
    for uri in [
        "/api/results?cursor=not-a-cursor",
        "/api/results?limit=1001",
        "/api/results?limit=0",
    ] {
        let resp = test::call_service(&app, test::TestRequest::get().uri(uri).to_request()).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{uri}");
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(error.code, "invalid_input", "{uri}");
    }
}

// `test` is actix-web's module here: the plain test attribute by its path.
#[::core::prelude::v1::test]
fn bench_store_prints_the_listing_times_and_the_write_stall() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::run_binary(&[
        "bench-store",
        "--rows",
        "5000",
        "--data-dir",
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("5000 points in 1201 series"), "{stdout}");
    // The rare device's 10 points, stored first, are all found; a slowest listing and the write stall are
    // reported.
    let rare = stdout
        .lines()
        .find(|l| l.contains("device=b200"))
        .expect("the rare device's listing");
    assert!(rare.split_whitespace().any(|cell| cell == "10"), "{rare}");
    for figure in ["slowest listing: ", "write stall under listings: max "] {
        assert!(stdout.contains(figure), "{figure}: {stdout}");
    }
    // The store it filled is kept (--data-dir) and holds the points and the timed writes.
    let store = gpu_endpoint::store::Store::open(dir.path()).unwrap();
    assert!(store.count_points().unwrap() >= 5000);
}

#[actix_web::test]
async fn a_calibration_the_store_cannot_commit_is_not_stored_never_a_result() {
    let (state, dir) = fake_state(None, 0);
    // The store capped at its current size, its free pages then filled with points, as a full disk: the
    // calibrations' own first page takes a row or two, then none fits.
    let store = state.store.as_ref().unwrap();
    store.limit_size(1).unwrap();
    let spec = gpu_endpoint::backend::MatmulSpec {
        shape: roofline_core::GemmShape::matmul(1, 64, 64),
        precision: roofline_core::Precision::Fp32,
    };
    let measured = state.device.acquire().measure_matmul(&spec).unwrap();
    let point = gpu_endpoint::use_cases::point_of(measured, None);
    while store.insert_point(None, None, &point, None).is_ok() {}
    let app = app!(state);
    let mut calibrated = 0;
    let error = loop {
        let req = test::TestRequest::post()
            .uri("/api/calibrate")
            .set_json(json!({"precisions": ["FP32"]}));
        let resp = test::call_service(&app, req.to_request()).await;
        if resp.status() == StatusCode::OK {
            calibrated += 1;
            assert!(calibrated < 8, "a full store took 8 calibrations");
            continue;
        }
        assert_eq!(resp.status(), StatusCode::INSUFFICIENT_STORAGE);
        break test::read_body_json::<ErrorBody, _>(resp).await;
    };
    assert_eq!(error.code, "not_stored");
    assert!(
        error.message.contains("not reported as calibrated") && error.message.contains("full"),
        "{}",
        error.message
    );
    // Every calibration answered 200 is stored, and none more.
    let calibrations: i64 = rusqlite::Connection::open(dir.path().join("data/roofline.sqlite3"))
        .unwrap()
        .query_row("SELECT count(*) FROM calibrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(calibrations, calibrated);
}

#[actix_web::test]
async fn a_listing_past_its_time_limit_is_a_503_time_limit() {
    let (state, _dir) = crate::common::fake_state_configured(0, |c| c.max_listing = Duration::ZERO);
    let app = app!(state);
    let resp = test::call_service(
        &app,
        test::TestRequest::get()
            .uri("/api/results?precision=FP32&limit=1")
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let error: ErrorBody = test::read_body_json(resp).await;
    assert_eq!(error.code, "time_limit");
    assert!(error.message.contains("listing"), "{}", error.message);
}

// `test` is actix-web's module here: the plain test attribute by its path.
#[::core::prelude::v1::test]
fn bench_store_times_listings_against_the_number_of_series() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::run_binary(&[
        "bench-store",
        "--series",
        "2000,500,2000",
        "--repeats",
        "2",
        "--data-dir",
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Each count once, in the order given, with every listing, the cursor walk and the peak RSS.
    let rows = |count: &str| {
        stdout
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some(count))
            .count()
    };
    assert_eq!((rows("2000"), rows("500")), (6, 6), "{stdout}");
    for count in ["2000", "500"] {
        let listings: Vec<&str> = stdout
            .lines()
            .filter_map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                (cells.get(1) == Some(&count)).then(|| cells[2])
            })
            .collect();
        assert_eq!(
            listings[..5],
            [
                "precision=FP32&limit=1",
                "device=h100&limit=1",
                "device=h100&precision=FP32&limit=100",
                "shape=1x64x64&limit=1",
                "10"
            ],
            "{stdout}"
        );
    }
    assert!(stdout.contains("MiB"), "{stdout}");
    // The stores are kept under the data directory, one series per point.
    let store = gpu_endpoint::store::Store::open(&dir.path().join("series-2000")).unwrap();
    assert_eq!(store.count_points().unwrap(), 2000);
}
