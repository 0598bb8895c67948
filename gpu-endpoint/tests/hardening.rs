//! Hardening against hostile clients: compressed request bodies, cross-site requests, foreign Host headers and
//! unbounded job memory.

mod common;

use actix_web::http::StatusCode;
use actix_web::{App, test};
use common::{fake_state, fake_state_configured, parse_sse};
use gpu_endpoint::configure;
use gpu_endpoint::jobs::JobRetention;
use roofline_core::wire::{BenchmarkJob, CalibrationResult, ErrorBody, StoredResult};
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
    let rows: Vec<StoredResult> =
        test::call_and_read_body_json(&app, test::TestRequest::get().uri("/api/results").to_request()).await;
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
