//! Lists bounded and deduplicated (issue 37, item 4): a benchmark's shapes and precisions and a calibration's
//! precisions are measured once however often they are listed, and every list of the requests and command
//! lines has a documented maximum (400 `invalid_input` over HTTP; exit 2 with one `error:` line in the CLI).

use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{App, test};
use gpu_endpoint::http::app::configure;
use roofline_core::wire::{BenchmarkJob, CalibrationResult, ErrorBody};
use serde_json::json;

use crate::common::{fake_state, parse_sse, run_binary};

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

/// Asserts a run refused as a usage error: exit 2, one `error:` line naming `needle`, nothing on stdout.
fn assert_usage_error(args: &[&str], needle: &str) {
    let start = Instant::now();
    let out = run_binary(args);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // Refused before any work: process start and argument parsing only.
    assert!(took < Duration::from_secs(2), "{args:?} took {took:?}");
}

#[actix_web::test]
async fn a_benchmark_measures_each_listed_point_once() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let req = test::TestRequest::post().uri("/api/benchmarks").set_json(json!({
        "shapes": [[1, 64, 64], [1, 128, 64], [1, 64, 64], [1, 64, 64]],
        "precisions": ["FP32", "FP16", "FP32"]
    }));
    let job: BenchmarkJob = test::call_and_read_body_json(&app, req.to_request()).await;
    // 2 distinct shapes × 2 distinct precisions.
    assert_eq!(job.total, 4);
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = parse_sse(std::str::from_utf8(&body).unwrap());
    let points = events.iter().filter(|(name, _)| name == "point").count();
    assert_eq!(points, 4, "{events:?}");
    // The counts are checked as given: 65 copies of one shape are refused.
    let req = test::TestRequest::post().uri("/api/benchmarks").set_json(json!({
        "shapes": vec![[1, 64, 64]; 65], "precisions": ["FP32"]
    }));
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let error: ErrorBody = test::read_body_json(resp).await;
    assert_eq!(error.code, "invalid_input");
    assert!(
        error.message.contains("1 to 64 shapes, got 65"),
        "{}",
        error.message
    );
}

#[actix_web::test]
async fn a_calibration_measures_a_precision_listed_16_times_once() {
    // Each fake measurement takes 40 ms; a calibration runs bandwidth, two overheads and each peak 3 times:
    // 12 measurements (0.48 s) for one precision, 57 (2.3 s) if FP32 were measured 16 times.
    let (state, _dir) = fake_state(None, 40);
    let app = app!(state);
    let start = Instant::now();
    let req = test::TestRequest::post()
        .uri("/api/calibrate")
        .set_json(json!({ "precisions": vec!["FP32"; 16] }));
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let result: CalibrationResult = test::read_body_json(resp).await;
    let took = start.elapsed();
    assert_eq!(result.peaks.len(), 1);
    assert!(took < Duration::from_millis(1500), "{took:?}");
    let req = test::TestRequest::post()
        .uri("/api/calibrate")
        .set_json(json!({ "precisions": vec!["FP32"; 17] }));
    let resp = test::call_service(&app, req.to_request()).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let error: ErrorBody = test::read_body_json(resp).await;
    assert!(
        error.message.contains("1 to 16 precisions, got 17"),
        "{}",
        error.message
    );
}

// `test` is actix-web's module here: the plain test attribute by its path.
#[::core::prelude::v1::test]
fn bench_measures_each_listed_point_once() {
    let out = run_binary(&[
        "bench",
        "--backend",
        "fake",
        "--shapes",
        "1x64x64,1x64x64,1x128x64",
        "--precisions",
        "FP32,FP32",
        "--no-store",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shapes: Vec<&str> = report["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["point"]["shape"].as_str().unwrap())
        .collect();
    assert_eq!(shapes, ["1x64x64", "1x128x64"]);
}

#[::core::prelude::v1::test]
fn every_command_line_list_has_a_maximum() {
    let shapes = vec!["1x64x64"; 10_000].join(",");
    let seventeen = vec!["FP32"; 17].join(",");
    let origins: Vec<String> = (0..65)
        .map(|i| format!("--cors-origin=http://h{i}.example"))
        .collect();
    let counts = vec!["1000"; 17].join(",");
    // Without the maximum, a non-loopback bind without a token would refuse to start (another message).
    let serve: Vec<&str> = ["serve", "--host", "0.0.0.0"]
        .into_iter()
        .chain(origins.iter().map(String::as_str))
        .collect();
    for (args, needle) in [
        (
            vec!["bench", "--backend", "fake", "--no-store", "--shapes", &shapes],
            "1 to 64 shapes, got 10000",
        ),
        (
            vec!["calibrate", "--backend", "fake", "--precisions", &seventeen],
            "1 to 16 precisions, got 17",
        ),
        (serve, "--cors-origin takes at most 64 values, got 65"),
        (
            vec!["bench-store", "--series", &counts],
            "--series takes at most 16 values, got 17",
        ),
    ] {
        assert_usage_error(&args, needle);
    }
}
