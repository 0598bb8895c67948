//! Hardening against hostile clients: compressed request bodies, cross-site requests, foreign Host headers,
//! unbounded job memory (benchmark and step jobs), predictions that must not wait for the device, points past
//! their time cap, calibrate bodies that are not requests, and deleting stored results; and the probes of
//! issues 27 and 37, a module per area: `bounds` (work and memory bounded per request), `interrupts` (DELETE
//! and the cap inside a long run or its input generation, runs predicted past the cap), `store` (points and
//! calibrations stored or `not_stored`, read-only stores, undecodable rows, paging, listing limits,
//! `bench-store`), `lists` (lists bounded and deduplicated), `device_lock` (two servers on one device).

mod bounds;
mod device_lock;
mod interrupts;
mod lists;
mod store;

use crate::common::{fake_state, fake_state_configured, parse_sse};
use actix_web::http::StatusCode;
use actix_web::{App, test};
use gpu_endpoint::http::app::configure;
use gpu_endpoint::jobs::JobRetention;
use roofline_core::wire::{
    AnalyzeResponse, BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob, CalibrationResult,
    DeletedResults, ErrorBody, ErrorCode, ResultsPage, StepJob,
};
use serde_json::json;

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

const GOOD: &str = r#"{"M":1,"N":64,"K":64,"precision":"FP32"}"#;

#[actix_web::test]
async fn compressed_request_bodies_are_refused_before_they_are_read() {
    let (state, _dir) = fake_state(None, 0);
    let app = test::init_service(App::new().configure(configure(state.clone()))).await;
    // Not valid zstd: the body is never decoded, so any bytes get the same answer.
    for (encoding, body) in [
        ("zstd", vec![0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0]),
        ("gzip", b"not gzip".to_vec()),
        ("br", Vec::new()),
        ("identity, gzip", GOOD.as_bytes().to_vec()),
    ] {
        let req = test::TestRequest::post()
            .uri("/api/analyze")
            .insert_header(("content-type", "application/json"))
            .insert_header(("content-encoding", encoding))
            .set_payload(body);
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "{encoding}");
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(error.code, "unsupported_encoding", "{encoding}");
        let ok = test::call_service(&app, test::TestRequest::get().uri("/api/health").to_request()).await;
        assert_eq!(ok.status(), StatusCode::OK);
    }
    // `identity` is no encoding at all.
    let req = test::TestRequest::post()
        .uri("/api/analyze")
        .insert_header(("content-type", "application/json"))
        .insert_header(("content-encoding", "identity"))
        .set_payload(GOOD);
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::OK
    );
}

/// Submits a one-point FP32 job and returns its `BenchmarkJob`.
macro_rules! submit {
    ($app:expr) => {{
        let req = test::TestRequest::post()
            .uri("/api/benchmarks")
            .set_json(json!({"shapes":[[1,64,64]],"precisions":["FP32"]}));
        let resp = test::call_service(&$app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        let job: BenchmarkJob = test::read_body_json(resp).await;
        job
    }};
}

/// The status of a job's events URL; a 404 must be the usual JSON error.
macro_rules! events_status {
    ($app:expr, $job:expr) => {{
        let resp =
            test::call_service(&$app, test::TestRequest::get().uri(&$job.events_url).to_request()).await;
        let status = resp.status();
        if status == StatusCode::NOT_FOUND {
            let error: ErrorBody = test::read_body_json(resp).await;
            assert_eq!(error.code, "not_found");
        }
        status
    }};
}

/// Reads a job's events up to its `done` (the stream ends there) and returns their names.
macro_rules! events_until_done {
    ($app:expr, $job:expr) => {{
        let body =
            test::call_and_read_body(&$app, test::TestRequest::get().uri(&$job.events_url).to_request())
                .await;
        parse_sse(std::str::from_utf8(&body).unwrap())
            .into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>()
    }};
}

#[actix_web::test]
async fn only_the_newest_finished_jobs_are_remembered_and_queued_ones_never_forgotten() {
    let (state, _dir) = fake_state_configured(200, |c| {
        c.job_retention = JobRetention {
            max_jobs: 1,
            max_event_bytes: usize::MAX,
        };
    });
    let app = app!(state);
    // One running and two queued jobs (each point takes 200 ms): none is forgotten.
    let jobs = [submit!(app), submit!(app), submit!(app)];
    for job in &jobs {
        assert_eq!(events_status!(app, job), StatusCode::OK, "{}", job.id);
    }
    assert_eq!(events_until_done!(app, &jobs[2]), ["point", "done"]);
    // All three finished; only the newest is kept.
    assert_eq!(events_status!(app, &jobs[0]), StatusCode::NOT_FOUND);
    assert_eq!(events_status!(app, &jobs[1]), StatusCode::NOT_FOUND);
    assert_eq!(events_until_done!(app, &jobs[2]), ["point", "done"]);
    // Cancelling a forgotten job is a 404 too; its points stay in the store.
    let resp = test::call_service(
        &app,
        test::TestRequest::delete()
            .uri(&format!("/api/benchmarks/{}", jobs[0].id))
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let rows: ResultsPage =
        test::call_and_read_body_json(&app, test::TestRequest::get().uri("/api/results").to_request()).await;
    let rows = rows.results;
    let mut ids: Vec<_> = rows.iter().filter_map(|r| r.job_id.clone()).collect();
    ids.sort();
    let mut expected: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    expected.sort();
    assert_eq!(ids, expected);
}

#[actix_web::test]
async fn finished_jobs_beyond_the_event_byte_bound_are_forgotten() {
    // A one-point job's events are far over 100 bytes of JSON, so two jobs exceed the bound.
    let (state, _dir) = fake_state_configured(0, |c| {
        c.job_retention = JobRetention {
            max_jobs: 100,
            max_event_bytes: 100,
        };
    });
    let app = app!(state);
    let first = submit!(app);
    assert_eq!(events_until_done!(app, &first), ["point", "done"]);
    // The newest finished job is kept even alone over the bound.
    assert_eq!(events_status!(app, &first), StatusCode::OK);
    let second = submit!(app);
    assert_eq!(events_until_done!(app, &second), ["point", "done"]);
    assert_eq!(events_status!(app, &first), StatusCode::NOT_FOUND);
    assert_eq!(events_status!(app, &second), StatusCode::OK);
}

/// Submits a TinyLlama decode step job (fake backend) and returns its `StepJob`.
macro_rules! submit_step {
    ($app:expr) => {{
        let req = test::TestRequest::post().uri("/api/steps").set_json(json!({
            "model": "tinyllama-1.1b", "config": "fp32", "phase": "decode", "batch": 1, "context": 256,
            "hardware_key": "h100_sxm"
        }));
        let resp = test::call_service(&$app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        let job: StepJob = test::read_body_json(resp).await;
        job
    }};
}

#[actix_web::test]
async fn finished_step_jobs_beyond_the_retention_bounds_are_forgotten() {
    for retention in [
        JobRetention {
            max_jobs: 1,
            max_event_bytes: usize::MAX,
        },
        // A step's events are far over 100 bytes of JSON, so two jobs exceed the bound.
        JobRetention {
            max_jobs: 100,
            max_event_bytes: 100,
        },
    ] {
        let (state, _dir) = fake_state_configured(0, |c| c.step_retention = retention);
        let app = app!(state);
        let first = submit_step!(app);
        assert_eq!(
            events_until_done!(app, &first).last().map(String::as_str),
            Some("done")
        );
        // The newest finished job is kept even alone over the bound.
        assert_eq!(events_status!(app, &first), StatusCode::OK, "{retention:?}");
        let second = submit_step!(app);
        assert_eq!(
            events_until_done!(app, &second).last().map(String::as_str),
            Some("done")
        );
        assert_eq!(
            events_status!(app, &first),
            StatusCode::NOT_FOUND,
            "{retention:?}"
        );
        assert_eq!(events_status!(app, &second), StatusCode::OK, "{retention:?}");
        // Cancelling a forgotten step job is a 404 too.
        let resp = test::call_service(
            &app,
            test::TestRequest::delete()
                .uri(&format!("/api/steps/{}", first.id))
                .to_request(),
        )
        .await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{retention:?}");
    }
}

/// Whether a calibration was stored, seen through the store itself.
fn calibrations_stored(dir: &tempfile::TempDir) -> i64 {
    let db = rusqlite::Connection::open(dir.path().join("data/roofline.sqlite3")).unwrap();
    db.query_row("SELECT COUNT(*) FROM calibrations", [], |r| r.get(0))
        .unwrap()
}

#[actix_web::test]
async fn a_foreign_origin_cannot_calibrate_or_submit_whatever_the_content_type() {
    let (state, dir) = fake_state(None, 0);
    let app = app!(state);
    for content_type in ["text/plain", "application/json"] {
        let req = test::TestRequest::post()
            .uri("/api/calibrate")
            .insert_header(("host", "127.0.0.1:8000"))
            .insert_header(("origin", "http://evil.example"))
            .insert_header(("content-type", content_type))
            .set_payload("{}");
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{content_type}");
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(error.code, "forbidden_origin");
    }
    // A bodiless cross-site POST (`fetch(url, {method: "POST", mode: "no-cors"})`) and a DELETE: refused too.
    for method in [actix_web::http::Method::POST, actix_web::http::Method::DELETE] {
        let uri = if method == actix_web::http::Method::POST {
            "/api/calibrate"
        } else {
            "/api/benchmarks/x"
        };
        let req = test::TestRequest::default()
            .method(method.clone())
            .uri(uri)
            .insert_header(("origin", "http://evil.example"));
        assert_eq!(
            test::call_service(&app, req.to_request()).await.status(),
            StatusCode::FORBIDDEN,
            "{method}"
        );
    }
    assert_eq!(calibrations_stored(&dir), 0);
    let req = test::TestRequest::post()
        .uri("/api/benchmarks")
        .insert_header(("origin", "null"))
        .set_json(json!({"shapes":[[1,64,64]],"precisions":["FP32"]}));
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::FORBIDDEN
    );
}

#[actix_web::test]
async fn state_changing_requests_need_a_json_body_or_none() {
    let (state, dir) = fake_state(None, 0);
    let app = app!(state);
    for (content_type, body) in [("text/plain", "{}"), ("application/x-www-form-urlencoded", "a=1")] {
        let req = test::TestRequest::post()
            .uri("/api/calibrate")
            .insert_header(("content-type", content_type))
            .set_payload(body);
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(
            resp.status(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type}"
        );
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(error.code, "unsupported_media_type");
    }
    // A body without a content type.
    let req = test::TestRequest::post().uri("/api/calibrate").set_payload("{}");
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    assert_eq!(calibrations_stored(&dir), 0);
    // No body and no content type: the defaults.
    let req = test::TestRequest::post().uri("/api/calibrate");
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::OK
    );
    assert_eq!(calibrations_stored(&dir), 1);
}

#[actix_web::test]
async fn allowed_and_own_origins_work() {
    let (state, dir) = fake_state(None, 0);
    let app = app!(state);
    for (host, origin) in [
        // Trunk's dev server, a default CORS origin.
        ("127.0.0.1:8000", "http://127.0.0.1:8080"),
        // The page served by this server.
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("localhost:9123", "http://localhost:9123"),
    ] {
        let req = test::TestRequest::post()
            .uri("/api/calibrate")
            .insert_header(("host", host))
            .insert_header(("origin", origin))
            .set_json(json!({"precisions":["FP32"]}));
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::OK, "{origin}");
        let result: CalibrationResult = test::read_body_json(resp).await;
        assert_eq!(result.peaks.len(), 1);
    }
    assert_eq!(calibrations_stored(&dir), 3);
    // A different port of the same host is another origin.
    let req = test::TestRequest::post()
        .uri("/api/calibrate")
        .insert_header(("host", "127.0.0.1:8000"))
        .insert_header(("origin", "http://127.0.0.1:8001"))
        .set_json(json!({}));
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::FORBIDDEN
    );
}

#[actix_web::test]
async fn only_loopback_and_allowed_host_names_are_served() {
    let (state, _dir) = fake_state_configured(0, |c| c.allowed_hosts = vec!["gpu-box.lan".into()]);
    let app = app!(state);
    for (host, status) in [
        ("localhost:8000", StatusCode::OK),
        ("127.0.0.1", StatusCode::OK),
        ("[::1]:8000", StatusCode::OK),
        ("GPU-box.lan:8000", StatusCode::OK),
        ("evil.example", StatusCode::FORBIDDEN),
        ("evil.example:8000", StatusCode::FORBIDDEN),
        ("localhost.evil.example", StatusCode::FORBIDDEN),
        ("127.0.0.2:8000", StatusCode::FORBIDDEN),
    ] {
        let req = test::TestRequest::get()
            .uri("/api/device")
            .insert_header(("host", host));
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), status, "{host}");
        if status == StatusCode::FORBIDDEN {
            let error: ErrorBody = test::read_body_json(resp).await;
            assert_eq!(error.code, "forbidden_host");
        }
    }
}

/// `POST /api/analyze` of `precisions` with an extra query string; returns the status and the body.
macro_rules! analyze {
    ($app:expr, $query:expr, $precisions:expr) => {{
        let req = test::TestRequest::post()
            .uri(&format!("/api/analyze?{}", $query))
            .set_json(json!({"M":1,"N":64,"K":64,"precision":"FP32","precisions":$precisions}));
        let resp = test::call_service(&$app, req.to_request()).await;
        let status = resp.status();
        let body: serde_json::Value = test::read_body_json(resp).await;
        (status, body)
    }};
}

#[actix_web::test]
async fn prediction_only_analyze_never_waits_for_the_device() {
    // A job of 4 points of 300 ms holds the device for 1.2 s.
    let (state, _dir) = fake_state(None, 300);
    let app = app!(state);
    let req = test::TestRequest::post()
        .uri("/api/benchmarks")
        .set_json(json!({"shapes":[[1,64,64],[1,128,64],[1,192,64],[1,256,64]],"precisions":["FP32"]}));
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::ACCEPTED
    );
    std::thread::sleep(std::time::Duration::from_millis(100));
    // Measuring needs the device: busy.
    let (status, body) = analyze!(app, "hardware_key=h100_sxm", ["FP32"]);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "busy");
    // Predictions alone do not: every one answers at once, in the mode asked for.
    let start = std::time::Instant::now();
    for _ in 0..50 {
        let (status, body) = analyze!(
            app,
            "hardware_key=h100_sxm&measure=false&mode=datasheet",
            ["FP16", "FP8_E4M3", "NVFP4"]
        );
        assert_eq!(status, StatusCode::OK, "{body}");
        let response: AnalyzeResponse = serde_json::from_value(body).unwrap();
        assert_eq!(response.hardware_key, "h100_sxm");
        assert_eq!(response.simulated.len(), 2);
        assert!(response.measured.is_empty());
        assert_eq!(response.failed.len(), 1, "NVFP4 has no Hopper path");
        assert!(response.failed[0].message.starts_with("prediction:"));
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
    // Still the job's: it was never interrupted, and predictions validate like the rest.
    let (status, _) = analyze!(app, "", ["FP32"]);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let req = test::TestRequest::post()
        .uri("/api/analyze?measure=false")
        .set_json(json!({"M":1,"N":0,"K":64,"precision":"FP32"}));
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let (status, _) = analyze!(app, "measure=maybe", ["FP32"]);
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn a_point_past_its_time_cap_is_a_time_limit_failure_and_the_next_one_runs() {
    // Every fake point takes 120 ms; the cap is 40 ms.
    let (state, dir) = fake_state_configured(120, |c| {
        c.max_point = std::time::Duration::from_millis(40);
    });
    let app = app!(state);
    let (status, body) = analyze!(app, "", ["FP32", "FP16", "INT4"]);
    assert_eq!(status, StatusCode::OK, "{body}");
    let response: AnalyzeResponse = serde_json::from_value(body).unwrap();
    assert!(response.measured.is_empty());
    let measurement_failures: Vec<_> = response
        .failed
        .iter()
        .filter(|f| f.message.starts_with("measurement:"))
        .collect();
    let codes: Vec<(&str, &str)> = measurement_failures
        .iter()
        .map(|f| (f.precision.name(), f.code.as_str()))
        .collect();
    // Each precision ran (INT4 is refused by the fake at once, not timed out).
    assert_eq!(
        codes,
        [
            ("FP32", "time_limit"),
            ("FP16", "time_limit"),
            ("INT4", "unsupported")
        ]
    );
    assert!(
        measurement_failures[0].message.contains("time cap"),
        "{}",
        measurement_failures[0].message
    );
    // In a job: one `failed` event per point, the job goes on to its end.
    let job = submit!(app);
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    assert_eq!(events.len(), 2, "{events:?}");
    let failed: BenchmarkFailedEvent = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(failed.failure.code, "time_limit");
    let done: BenchmarkDoneEvent = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!((done.measured, done.failed, done.cancelled), (0, 1, false));
    // Nothing over the cap was stored; with the default cap (60 s) the same points measure.
    let db = rusqlite::Connection::open(dir.path().join("data/roofline.sqlite3")).unwrap();
    let stored: i64 = db
        .query_row("SELECT COUNT(*) FROM points", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, 0);
    let (state, _dir) = fake_state(None, 120);
    let app = app!(state);
    let (status, body) = analyze!(app, "", ["FP32", "FP16"]);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["measured"].as_array().unwrap().len(), 2);
}

#[actix_web::test]
async fn calibrate_refuses_a_body_that_is_not_a_request_object() {
    let (state, dir) = fake_state(None, 0);
    let app = app!(state);
    for body in [
        "[]",
        "null",
        "42",
        r#""FP32""#,
        r#"{"precisions":"FP32"}"#,
        r#"{"precisions":[1]}"#,
        r#"{"precisions":["FP7"]}"#,
        r#"{"precisions":[]}"#,
        r#"{"precision":["FP32"]}"#,
        r#"{"hardware_key":7}"#,
        "{",
    ] {
        let req = test::TestRequest::post()
            .uri("/api/calibrate")
            .insert_header(("content-type", "application/json"))
            .set_payload(body);
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{body}");
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(error.code, "invalid_input", "{body}");
        assert!(!error.message.is_empty());
    }
    assert_eq!(calibrations_stored(&dir), 0);
    // An object, or nothing at all, calibrates.
    let req = test::TestRequest::post()
        .uri("/api/calibrate")
        .set_json(json!({"precisions":["FP32"]}));
    assert_eq!(
        test::call_service(&app, req.to_request()).await.status(),
        StatusCode::OK
    );
    assert_eq!(calibrations_stored(&dir), 1);
}

#[actix_web::test]
async fn stored_results_are_deleted_by_filter_and_all_needs_saying() {
    let (state, _dir) = fake_state_configured(0, |c| c.token = Some("t0ken".into()));
    let app = app!(state);
    let auth = ("authorization", "Bearer t0ken");
    for precisions in [json!(["FP32", "FP16"]), json!(["FP32"])] {
        let req = test::TestRequest::post()
            .uri("/api/analyze")
            .insert_header(auth)
            .set_json(json!({"M":1,"N":64,"K":64,"precision":"FP32","precisions":precisions}));
        assert_eq!(
            test::call_service(&app, req.to_request()).await.status(),
            StatusCode::OK
        );
    }
    let delete = |uri: &str| test::TestRequest::delete().uri(uri).insert_header(auth);
    let stored = |app| async move {
        let rows: ResultsPage = test::call_and_read_body_json(
            app,
            test::TestRequest::get()
                .uri("/api/results")
                .insert_header(auth)
                .to_request(),
        )
        .await;
        let rows = rows.results;
        rows.len()
    };
    assert_eq!(stored(&app).await, 3);
    // No filter and no all=true, a bad filter, no token, a foreign origin: 4xx, nothing deleted.
    for (req, status) in [
        (delete("/api/results"), StatusCode::BAD_REQUEST),
        (delete("/api/v1/results?all=false"), StatusCode::BAD_REQUEST),
        (delete("/api/results?precision=FP7"), StatusCode::BAD_REQUEST),
        (delete("/api/results?since=abc"), StatusCode::BAD_REQUEST),
        (delete("/api/results?device="), StatusCode::BAD_REQUEST),
        (
            test::TestRequest::delete().uri("/api/results?all=true"),
            StatusCode::UNAUTHORIZED,
        ),
        (
            delete("/api/results?all=true").insert_header(("origin", "http://evil.example")),
            StatusCode::FORBIDDEN,
        ),
        (
            delete("/api/results?all=true")
                .insert_header(("content-type", "text/plain"))
                .set_payload("x"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
    ] {
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), status);
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_ne!(error.code, ErrorCode::Unknown);
    }
    assert_eq!(stored(&app).await, 3);
    let deleted = |uri: &'static str| {
        let app = &app;
        async move {
            let resp = test::call_service(app, delete(uri).to_request()).await;
            assert_eq!(resp.status(), StatusCode::OK, "{uri}");
            let body: DeletedResults = test::read_body_json(resp).await;
            body.deleted
        }
    };
    assert_eq!(deleted("/api/results?device=no-such-device").await, 0);
    assert_eq!(deleted("/api/v1/results?precision=fp16&device=FAKE").await, 1);
    assert_eq!(stored(&app).await, 2);
    assert_eq!(deleted("/api/results?since=0").await, 2);
    assert_eq!(stored(&app).await, 0);
    assert_eq!(deleted("/api/results?all=true").await, 0);
}

#[actix_web::test]
async fn a_body_that_stops_arriving_gets_408_and_the_connection_closes() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (state, _dir) = fake_state_configured(0, |c| {
        c.body_read_timeout = std::time::Duration::from_millis(300);
    });
    let server = actix_web::HttpServer::new(move || App::new().configure(configure(state.clone())))
        .workers(1)
        .bind(("127.0.0.1", 0))
        .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    for path in ["/api/analyze", "/api/calibrate", "/api/v1/benchmarks"] {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        // 100 bytes announced, 6 sent.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"M\":1"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let start = std::time::Instant::now();
        let mut response = vec![0u8; 4096];
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut response))
            .await
            .expect("no answer within 5 s")
            .unwrap();
        let response = String::from_utf8_lossy(&response[..n]).into_owned();
        assert!(response.starts_with("HTTP/1.1 408"), "{path}: {response}");
        assert!(response.contains("\"code\":\"request_timeout\""), "{response}");
        assert!(
            response.to_ascii_lowercase().contains("connection: close"),
            "{response}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(3), "{path}");
    }
    handle.stop(true).await;
}
