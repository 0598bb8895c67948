//! Every route through actix's test service with the fake backend, built by the production `configure`.

use std::time::Duration;

use crate::common::{fake_state, parse_sse, state_with};
use actix_web::http::StatusCode;
use actix_web::{App, test};
use gpu_endpoint::backend::fake;
use gpu_endpoint::backend::select::{BackendOptions, Selected};
use gpu_endpoint::http::app::configure;
use roofline_core::wire::{
    AnalyzeResponse, BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob, BenchmarkPointEvent,
    CalibrationResult, DeviceInfo, ErrorBody, Health, NvmlStatus, PointSource, ResultsPage,
};
use roofline_core::{ComputePath, Mode, Precision, Provenance};
use serde_json::json;

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

fn post_json(uri: &str, body: serde_json::Value) -> test::TestRequest {
    test::TestRequest::post().uri(uri).set_json(body)
}

#[actix_web::test]
async fn health_reports_the_backend_and_why() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let health: Health =
        test::call_and_read_body_json(&app, test::TestRequest::get().uri("/api/health").to_request()).await;
    assert_eq!(health.status, "ok");
    assert_eq!(health.backend, roofline_core::wire::BackendKind::Fake);
    assert_eq!(health.version, env!("CARGO_PKG_VERSION"));
    assert!(health.backend_reason.contains("fake"));
    // The versioned scope serves the same routes.
    let v1: Health =
        test::call_and_read_body_json(&app, test::TestRequest::get().uri("/api/v1/health").to_request())
            .await;
    assert_eq!(v1.backend, roofline_core::wire::BackendKind::Fake);
}

#[actix_web::test]
async fn gb10_fp16_gemv_prediction_is_bytes_over_bandwidth() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let body = json!({"M":1,"N":4096,"K":4096,"precision":"FP16"});
    // The default is reference mode: 89.9 % of 273 GB/s (the catalog's median measured DRAM fraction) plus the
    // 5 µs matrix-kernel floor: 136.78 + 5 µs.
    let req = post_json("/api/analyze?hardware_key=gb10", body.clone());
    let resp: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    assert_eq!(resp.simulated[0].mode, Some(Mode::Reference));
    let reference_us = 33_570_816.0 / (0.899 * 273e9) * 1e6 + 5.0;
    assert!(
        (resp.simulated[0].time_us - reference_us).abs() < 1e-6,
        "{}",
        resp.simulated[0].time_us
    );
    let req = post_json("/api/analyze?hardware_key=gb10&mode=datasheet", body);
    let resp: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    assert_eq!(resp.hardware_key, "gb10");
    assert_eq!(resp.simulated.len(), 1);
    assert_eq!(resp.simulated[0].mode, Some(Mode::Datasheet));
    // W 2·4096² + x 2·4096 + y 2·4096 = 33,570,816 B at 273 GB/s.
    let expected_us = 33_570_816.0 / 273e9 * 1e6;
    assert!(
        (resp.simulated[0].time_us - expected_us).abs() < 1e-6,
        "{}",
        resp.simulated[0].time_us
    );
    assert!((resp.simulated[0].time_us - 122.97).abs() < 0.01);
    assert_eq!(resp.simulated[0].source, PointSource::Simulated);
    // The fake "measures" bytes / 1 TB/s.
    assert_eq!(resp.measured.len(), 1);
    let measured = &resp.measured[0];
    assert_eq!(measured.source, PointSource::Measured);
    assert_eq!(measured.precision, Precision::Fp16);
    assert!((measured.time_us - 33_570_816.0 / 1e12 * 1e6).abs() < 1e-9);
    assert_eq!(measured.measurement.as_ref().unwrap().kernel, "fake-gemv");
    assert!(resp.failed.is_empty());
}

#[actix_web::test]
async fn a_precision_the_device_lacks_is_listed_as_unsupported_never_replaced() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = post_json(
        "/api/analyze?hardware_key=h100_sxm",
        json!({"M":1,"N":4096,"K":4096,"precision":"NVFP4"}),
    );
    let resp: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    assert!(resp.simulated.is_empty());
    assert!(resp.measured.is_empty());
    assert!(
        resp.failed
            .iter()
            .all(|f| f.precision == Precision::Nvfp4 && f.code == "unsupported")
    );
    assert!(
        resp.failed.iter().any(|f| f.message.contains("Hopper")),
        "{:?}",
        resp.failed
    );
}

#[actix_web::test]
async fn run_all_precisions_covers_the_original_five_and_labels_only_what_ran() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = post_json(
        "/api/analyze?hardware_key=h100_sxm&run_all_precisions=true",
        json!({"M":16,"N":1024,"K":1024,"precision":"FP16"}),
    );
    let resp: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    let wanted = ["FP16", "FP8_E4M3", "NVFP4", "INT8", "INT4"];
    for name in wanted {
        let simulated = resp.simulated.iter().any(|p| p.precision.name() == name);
        let failed = resp
            .failed
            .iter()
            .any(|f| f.precision.name() == name && f.message.starts_with("prediction"));
        assert!(
            simulated ^ failed,
            "{name}: simulated {simulated} failed {failed}"
        );
    }
    // H100: FP16, FP8 and INT8 predicted, INT4 as the W4A16 weight-only GEMM it runs as on Hopper; NVFP4
    // unsupported.
    let simulated: Vec<&str> = resp.simulated.iter().map(|p| p.precision.name()).collect();
    assert_eq!(simulated, ["FP16", "FP8_E4M3", "INT8", "INT4"]);
    assert!(
        resp.simulated[3].label.contains("W4A16 weight-only"),
        "{}",
        resp.simulated[3].label
    );
    // The fake measures FP16, FP8 and INT8 only; each measured point carries the precision asked for.
    let measured: Vec<&str> = resp.measured.iter().map(|p| p.precision.name()).collect();
    assert_eq!(measured, ["FP16", "FP8_E4M3", "INT8"]);
    for p in &resp.measured {
        assert!(
            p.label.contains(&format!("[{}]", p.precision.name())),
            "{}",
            p.label
        );
    }
}

#[actix_web::test]
async fn explicit_precisions_list_is_honoured() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = post_json(
        "/api/analyze",
        json!({"M":8,"N":64,"K":64,"precision":"FP16","precisions":["FP32","BF16"]}),
    );
    let resp: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    assert_eq!(resp.hardware_key, "gb10", "gb10 is the default hardware");
    let names: Vec<&str> = resp.measured.iter().map(|p| p.precision.name()).collect();
    assert_eq!(names, ["FP32", "BF16"]);
}

#[actix_web::test]
async fn device_info_of_the_fake() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let info: DeviceInfo =
        test::call_and_read_body_json(&app, test::TestRequest::get().uri("/api/device").to_request()).await;
    assert_eq!(info.backend, roofline_core::wire::BackendKind::Fake);
    assert_eq!(info.name, fake::FAKE_NAME);
    assert_eq!(info.matched_key, None);
    assert!(info.measurable_precisions.contains(&Precision::Fp32));
    assert!(!info.measurable_precisions.contains(&Precision::Nvfp4));
}

#[actix_web::test]
async fn nvml_status_and_503_without_nvml() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let status: NvmlStatus = test::call_and_read_body_json(
        &app,
        test::TestRequest::get().uri("/api/nvml/status").to_request(),
    )
    .await;
    assert_eq!(status.device_name, fake::FAKE_NAME);
    assert_eq!(status.power_limit_w, 300.0);

    let selected = Selected {
        backend: std::sync::Arc::new(fake::FakeBackend::new(Duration::ZERO)),
        reason: "test".into(),
        telemetry: None,
        telemetry_reason: "libnvidia-ml.so.1 not found".into(),
    };
    let (state, _dir) = state_with(selected, None);
    let app = app!(state);
    for uri in ["/api/nvml/status", "/api/nvml/stream"] {
        let resp = test::call_service(&app, test::TestRequest::get().uri(uri).to_request()).await;
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE, "{uri}");
        let body: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(body.code, "no_nvml");
        assert!(body.message.contains("libnvidia-ml"));
    }
}

#[actix_web::test]
async fn nvml_stream_frames_status_events() {
    use actix_web::body::MessageBody;
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let resp = test::call_service(
        &app,
        test::TestRequest::get()
            .uri("/api/nvml/stream?interval_ms=100")
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers().get("content-type").unwrap(), "text/event-stream");
    let mut body = std::pin::pin!(resp.into_body());
    let mut text = String::new();
    while parse_sse(&text).len() < 2 {
        let chunk = futures_util::future::poll_fn(|cx| body.as_mut().poll_next(cx))
            .await
            .unwrap()
            .unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let events = parse_sse(&text);
    assert_eq!(events[0].0, "status");
    let status: NvmlStatus = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(status.gpu_clock_mhz, 1500.0);
    let bad = test::call_service(
        &app,
        test::TestRequest::get()
            .uri("/api/nvml/stream?interval_ms=5")
            .to_request(),
    )
    .await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn an_oversize_shape_fails_on_its_own_and_the_rest_of_the_job_runs() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    // 65,537 is beyond the measurement bounds: that point fails, the 64x256x256 point is measured.
    let req = post_json(
        "/api/benchmarks",
        json!({"shapes":[[64,256,256],[65537,64,64]],"precisions":["FP32"]}),
    );
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let job: BenchmarkJob = test::read_body_json(resp).await;
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(names, ["point", "failed", "done"]);
    let failed: BenchmarkFailedEvent = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(failed.shape, "65537x64x64");
    assert!(
        failed.failure.message.contains("65536"),
        "{}",
        failed.failure.message
    );
    // A job with no point within the bounds is still refused as a whole.
    let req = post_json(
        "/api/benchmarks",
        json!({"shapes":[[65537,64,64]],"precisions":["FP32"]}),
    );
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn benchmark_job_streams_points_failures_then_done_and_stores_points() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = post_json(
        "/api/benchmarks",
        json!({"shapes":[[1,256,256],[64,128,256]],"precisions":["FP32","NVFP4"],"hardware_key":"gb10"}),
    );
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let job: BenchmarkJob = test::read_body_json(resp).await;
    assert_eq!(job.total, 4);
    assert_eq!(job.position, 0);
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(names, ["point", "failed", "point", "failed", "done"]);
    let first: BenchmarkPointEvent = serde_json::from_str(&events[0].1).unwrap();
    // Fake GEMV 1x256x256 FP32: bytes 4·256² + 4·256 + 4·256 = 264,192 at 1 TB/s.
    let bytes = 4.0 * 256.0 * 256.0 + 2.0 * 4.0 * 256.0;
    assert!((first.point.time_us - bytes / 1e12 * 1e6).abs() < 1e-9);
    // gb10 FP32 GEMV in reference mode (the default) is memory-bound: bytes / (89.9 % of 273 GB/s) + 5 µs.
    let predicted_us = bytes / (0.899 * 273e9) * 1e6 + 5.0;
    assert!((first.predicted.as_ref().unwrap().time_us - predicted_us).abs() < 1e-9);
    let expected_err = (bytes / 1e12 * 1e6 - predicted_us) / predicted_us * 100.0;
    assert!((first.error_pct.unwrap() - expected_err).abs() < 1e-9);
    let failed: BenchmarkFailedEvent = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(failed.failure.code, "unsupported");
    assert_eq!(failed.shape, "1x256x256");
    let done: BenchmarkDoneEvent = serde_json::from_str(&events[4].1).unwrap();
    assert_eq!((done.measured, done.failed, done.cancelled), (2, 2, false));
    // A late subscriber gets the same replay.
    let again =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    assert_eq!(parse_sse(std::str::from_utf8(&again).unwrap()).len(), 5);

    let rows: ResultsPage = test::call_and_read_body_json(
        &app,
        test::TestRequest::get()
            .uri("/api/results?precision=fp32")
            .to_request(),
    )
    .await;
    let rows = rows.results;
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r.job_id.as_deref() == Some(job.id.as_str()) && r.predicted.is_some())
    );
    let rows: ResultsPage = test::call_and_read_body_json(
        &app,
        test::TestRequest::get()
            .uri("/api/results?shape=64x128x256&device=fake")
            .to_request(),
    )
    .await;
    let rows = rows.results;
    assert_eq!(rows.len(), 1);
    let rows: ResultsPage = test::call_and_read_body_json(
        &app,
        test::TestRequest::get()
            .uri("/api/results?since=9999999999")
            .to_request(),
    )
    .await;
    let rows = rows.results;
    assert!(rows.is_empty());
}

#[actix_web::test]
async fn cancel_stops_a_job_between_points_and_busy_device_refuses_analyze() {
    let (state, _dir) = fake_state(None, 100);
    let app = app!(state);
    let shapes: Vec<[u64; 3]> = (1..=20).map(|i| [1, 64 * i, 64]).collect();
    let req = post_json(
        "/api/benchmarks",
        json!({"shapes": shapes, "precisions":["FP32"]}),
    );
    let job: BenchmarkJob = test::call_and_read_body_json(&app, req.to_request()).await;
    // Second job queues behind the first.
    let req = post_json(
        "/api/benchmarks",
        json!({"shapes": [[1, 64, 64]], "precisions":["FP32"]}),
    );
    let second: BenchmarkJob = test::call_and_read_body_json(&app, req.to_request()).await;
    assert_eq!(second.position, 1);
    tokio::time::sleep(Duration::from_millis(250)).await;
    // While the job holds the device, a measurement request is refused with Retry-After.
    let resp = test::call_service(
        &app,
        post_json("/api/analyze", json!({"M":1,"N":64,"K":64,"precision":"FP32"})).to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(resp.headers().get("retry-after").unwrap(), "5");
    let body: ErrorBody = test::read_body_json(resp).await;
    assert_eq!(body.code, "busy");

    let resp = test::call_service(
        &app,
        test::TestRequest::delete()
            .uri(&format!("/api/benchmarks/{}", job.id))
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    let resp = test::call_service(
        &app,
        test::TestRequest::delete()
            .uri(&format!("/api/benchmarks/{}", second.id))
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    let (name, data) = events.last().unwrap();
    assert_eq!(name, "done");
    let done: BenchmarkDoneEvent = serde_json::from_str(data).unwrap();
    assert!(done.cancelled);
    assert!(done.measured < 20 && done.measured >= 1, "{}", done.measured);
    let body = test::call_and_read_body(
        &app,
        test::TestRequest::get().uri(&second.events_url).to_request(),
    )
    .await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    assert_eq!(events.len(), 1, "a cancelled queued job ends with done only");
    let resp = test::call_service(
        &app,
        test::TestRequest::delete()
            .uri("/api/benchmarks/nope")
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn calibration_builds_a_measured_spec_from_fake_numbers() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = post_json(
        "/api/calibrate",
        json!({"precisions":["FP32","BF16","NVFP4"],"hardware_key":"h100_sxm"}),
    );
    let result: CalibrationResult = test::call_and_read_body_json(&app, req.to_request()).await;
    // Fake copy: bytes / (bytes / 1e12) = 1000 GB/s.
    assert!((result.bandwidth_bytes_per_s - 1e12).abs() < 1e-3);
    // Fake 4096³ GEMM is compute-bound at 100 TFLOP/s.
    let fp32 = result
        .peaks
        .iter()
        .find(|p| p.precision == Precision::Fp32)
        .unwrap();
    assert!((fp32.achieved_flop_per_s - 100e12).abs() < 1e-3);
    assert_eq!(result.failed.len(), 1);
    assert_eq!(result.failed[0].precision, Precision::Nvfp4);
    let spec = result.spec;
    assert_eq!(spec.provenance, Provenance::Measured);
    assert_eq!(spec.key, "h100_sxm_measured");
    assert_eq!(spec.dram_bandwidth_bytes_per_s, 1e12);
    assert_eq!(spec.peak(ComputePath::Bf16).unwrap().dense_flop_per_s, 100e12);
    // FP8 was not measured: the datasheet peak stays and the notes say so.
    assert_eq!(
        spec.peak(ComputePath::Fp8).unwrap().dense_flop_per_s,
        roofline_core::find_hardware("h100_sxm")
            .unwrap()
            .peak(ComputePath::Fp8)
            .unwrap()
            .dense_flop_per_s
    );
    assert!(spec.notes.contains("FP8"));
    spec.check().unwrap();
    // Every figure is the median of three runs, and the spec keeps their spread: the fake repeats itself
    // exactly, so nothing is flagged (it is no CPU backend, so no host load is read).
    let quality = spec.calibration.as_ref().unwrap();
    assert_eq!((quality.bandwidth.runs, quality.bandwidth.relative()), (3, 0.0));
    assert_eq!(quality.bandwidth.median, 1e12);
    assert_eq!(quality.peaks.len(), 2, "FP32 and BF16 measured");
    assert!(quality.warnings.is_empty() && quality.host_load_per_cpu.is_none());
    assert!(quality.measured_at_unix_s > 1.6e9);
    // Empty body = defaults (every measurable precision, no base).
    let resp = test::call_service(&app, test::TestRequest::post().uri("/api/calibrate").to_request()).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let result: CalibrationResult = test::read_body_json(resp).await;
    assert_eq!(result.spec.key, "fake_host_measured");
    assert!(result.failed.is_empty());
}

#[actix_web::test]
async fn token_is_required_on_every_api_route_but_health() {
    let (state, _dir) = fake_state(Some("s3cret"), 0);
    let app = app!(state);
    for health in ["/api/health", "/api/v1/health"] {
        let resp = test::call_service(&app, test::TestRequest::get().uri(health).to_request()).await;
        assert_eq!(resp.status(), StatusCode::OK, "{health}");
    }
    for uri in ["/api/device", "/api/v1/device"] {
        for auth in [
            None,
            Some("Bearer wrong"),
            Some("Bearer s3cret-and-more"),
            Some("s3cret"),
            Some("Basic s3cret"),
            Some("bearer s3cret"),
        ] {
            let mut req = test::TestRequest::get().uri(uri);
            if let Some(a) = auth {
                req = req.insert_header(("authorization", a));
            }
            let resp = test::call_service(&app, req.to_request()).await;
            assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{uri} {auth:?}");
            assert_eq!(resp.headers().get("www-authenticate").unwrap(), "Bearer");
            let body: ErrorBody = test::read_body_json(resp).await;
            assert_eq!(body.code, "unauthorized");
            assert_eq!(
                body.message,
                gpu_endpoint::http::error::ApiError::Unauthorized.to_string()
            );
        }
        // Blanks around the token are not part of it.
        for auth in ["Bearer s3cret", "Bearer  s3cret"] {
            let req = test::TestRequest::get()
                .uri(uri)
                .insert_header(("authorization", auth));
            assert_eq!(
                test::call_service(&app, req.to_request()).await.status(),
                StatusCode::OK,
                "{uri} {auth:?}"
            );
        }
    }
    // A CORS preflight carries no credentials and is answered without them.
    let req = test::TestRequest::default()
        .method(actix_web::http::Method::OPTIONS)
        .uri("/api/v1/device")
        .insert_header(("origin", "http://localhost:8080"))
        .insert_header(("access-control-request-method", "GET"));
    assert!(
        test::call_service(&app, req.to_request())
            .await
            .status()
            .is_success()
    );
}

#[actix_web::test]
async fn cors_allows_the_configured_origins_only() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = test::TestRequest::get()
        .uri("/api/health")
        .insert_header(("origin", "http://localhost:8080"));
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(
        resp.headers().get("access-control-allow-origin").unwrap(),
        "http://localhost:8080"
    );
    let req = test::TestRequest::default()
        .method(actix_web::http::Method::OPTIONS)
        .uri("/api/analyze")
        .insert_header(("origin", "http://127.0.0.1:8080"))
        .insert_header(("access-control-request-method", "POST"));
    let resp = test::call_service(&app, req.to_request()).await;
    assert!(resp.status().is_success());
    let req = test::TestRequest::get()
        .uri("/api/health")
        .insert_header(("origin", "http://evil.example"));
    let resp = test::call_service(&app, req.to_request()).await;
    assert!(resp.headers().get("access-control-allow-origin").is_none());
}

#[actix_web::test]
async fn static_page_with_spa_fallback_and_json_404_under_api() {
    let (state, dir) = fake_state(None, 0);
    std::fs::create_dir_all(dir.path().join("dist")).unwrap();
    std::fs::write(dir.path().join("dist/index.html"), "<html>roofline page</html>").unwrap();
    std::fs::write(dir.path().join("dist/app.js"), "console.log(1)").unwrap();
    let app = app!(state);
    for uri in ["/", "/kernel/spot-check"] {
        let body = test::call_and_read_body(&app, test::TestRequest::get().uri(uri).to_request()).await;
        assert_eq!(body, "<html>roofline page</html>", "{uri}");
    }
    let body = test::call_and_read_body(&app, test::TestRequest::get().uri("/app.js").to_request()).await;
    assert_eq!(body, "console.log(1)");
    let resp = test::call_service(&app, test::TestRequest::get().uri("/api/nothing").to_request()).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let body: ErrorBody = test::read_body_json(resp).await;
    assert_eq!(body.code, "not_found");
}

#[actix_web::test]
async fn page_assets_are_served_compressed_and_api_responses_are_not() {
    let (state, dir) = fake_state(None, 0);
    std::fs::create_dir_all(dir.path().join("dist")).unwrap();
    std::fs::write(dir.path().join("dist/index.html"), "<html>roofline page</html>").unwrap();
    // A compressible stand-in for the .wasm: 64 KiB of one repeated pattern.
    let wasm = b"\0asm roofline ".repeat(4096);
    std::fs::write(dir.path().join("dist/app_bg.wasm"), &wasm).unwrap();
    let app = app!(state);
    for (accept, encoding) in [("br", "br"), ("gzip", "gzip"), ("identity", "")] {
        let req = test::TestRequest::get()
            .uri("/app_bg.wasm")
            .insert_header(("accept-encoding", accept));
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::OK);
        let got = resp
            .headers()
            .get("content-encoding")
            .map_or("", |v| v.to_str().unwrap())
            .to_owned();
        assert_eq!(got, encoding, "Accept-Encoding: {accept}");
        let body = test::read_body(resp).await;
        if encoding.is_empty() {
            assert_eq!(body.as_ref(), wasm.as_slice());
        } else {
            assert!(
                body.len() * 10 < wasm.len(),
                "{accept}: {} of {} bytes",
                body.len(),
                wasm.len()
            );
        }
    }
    // JSON (and the SSE streams beside it) stays uncompressed.
    let req = test::TestRequest::get()
        .uri("/api/health")
        .insert_header(("accept-encoding", "br, gzip"));
    let resp = test::call_service(&app, req.to_request()).await;
    assert!(resp.headers().get("content-encoding").is_none());
}

#[actix_web::test]
async fn precompressed_siblings_are_served_as_written_with_immutable_caching_for_hashed_names() {
    let (state, dir) = fake_state(None, 0);
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<html>roofline page</html>").unwrap();
    let wasm = b"\0asm roofline ".repeat(4096);
    let name = "roofline-web-0123456789abcdef_bg.wasm";
    std::fs::write(dist.join(name), &wasm).unwrap();
    gpu_endpoint::assets::precompress_dir(&dist).unwrap();
    let app = app!(state);
    for (accept, encoding, sibling) in [("gzip, deflate, br", "br", "br"), ("gzip", "gzip", "gz")] {
        let req = test::TestRequest::get()
            .uri(&format!("/{name}"))
            .insert_header(("accept-encoding", accept));
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::OK);
        let header = |h: &str| resp.headers().get(h).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header("content-encoding").as_deref(), Some(encoding), "{accept}");
        assert_eq!(header("content-type").as_deref(), Some("application/wasm"));
        assert_eq!(
            header("cache-control").as_deref(),
            Some("public, max-age=31536000, immutable")
        );
        assert_eq!(header("vary").as_deref(), Some("accept-encoding"));
        // Byte for byte the file written at build time: nothing was compressed for this request.
        let body = test::read_body(resp).await;
        let written = std::fs::read(dist.join(format!("{name}.{sibling}"))).unwrap();
        assert_eq!(body.as_ref(), written.as_slice());
    }
    // The page itself is revalidated on every load (a new build must be seen), and still precompressed.
    let req = test::TestRequest::get()
        .uri("/")
        .insert_header(("accept-encoding", "br"));
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.headers().get("cache-control").unwrap(), "no-cache");
    assert_eq!(resp.headers().get("content-encoding").unwrap(), "br");
    assert_eq!(
        resp.headers().get("content-type").unwrap(),
        "text/html; charset=utf-8"
    );
}

#[actix_web::test]
async fn missing_page_gives_a_message_page() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let resp = test::call_service(&app, test::TestRequest::get().uri("/").to_request()).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let body = test::read_body(resp).await;
    assert!(std::str::from_utf8(&body).unwrap().contains("trunk build"));
}

#[actix_web::test]
async fn cpu_memory_cap_refuses_big_shapes_before_allocating() {
    let options = BackendOptions {
        cpu_memory_cap_bytes: 1_000_000,
        ..BackendOptions::default()
    };
    let selected =
        gpu_endpoint::backend::select::select(gpu_endpoint::backend::select::BackendChoice::Cpu, &options)
            .unwrap();
    let (state, _dir) = state_with(selected, None);
    let app = app!(state);
    // 4·(1024·1024) B of weights alone exceed a 1 MB cap.
    let resp = test::call_service(
        &app,
        post_json(
            "/api/analyze",
            json!({"M":1,"N":1024,"K":1024,"precision":"FP32"}),
        )
        .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: ErrorBody = test::read_body_json(resp).await;
    assert_eq!(body.code, "too_large");
}
