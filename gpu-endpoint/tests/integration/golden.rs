//! The wire, byte for byte: the JSON of measured points, their predictions and a model step's events as the
//! endpoint sends them, against golden files written before measured values moved to base units inside
//! (issue 33), and a store written by that code read back through the migrations with every point the same
//! on the wire.

use std::path::{Path, PathBuf};

use crate::common::{fake_state, parse_sse, state_in, state_with};
use actix_web::{App, test};
use gpu_endpoint::backend::select::{BackendChoice, BackendOptions, select};
use gpu_endpoint::http::app::configure;
use gpu_endpoint::store::DB_FILE;
use roofline_core::wire::{BenchmarkJob, StepJob};
use serde_json::{Value, json};

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

/// The golden files' folder.
fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// `value` with what changes from run to run (times of day, job ids, elapsed times) set to fixed values.
fn masked(mut value: Value) -> Value {
    match &mut value {
        Value::Object(fields) => {
            for (name, field) in fields.iter_mut() {
                *field = match name.as_str() {
                    "timestamp_unix_s" | "created_unix_s" | "elapsed_s" => json!(0.0),
                    "job_id" if field.is_string() => json!("job"),
                    "events_url" => json!("events"),
                    _ => masked(field.take()),
                };
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                *item = masked(item.take());
            }
        }
        _ => {}
    }
    value
}

/// Asserts that `lines` (one JSON document each, masked) are the golden file `name`, byte for byte; on a
/// difference, writes what was sent beside the build's scratch files and names the first differing line.
fn assert_golden(name: &str, lines: &[String]) {
    let got = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let path = data_dir().join("golden").join(name);
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&out, &got).unwrap();
        let line = got.lines().zip(want.lines()).position(|(a, b)| a != b);
        panic!(
            "{name}: the wire changed (first differing line {line:?}, {} lines sent, {} golden); sent: {}",
            got.lines().count(),
            want.lines().count(),
            out.display()
        );
    }
}

/// The events of an SSE body, `event <json>` per line, masked.
fn sse_lines(body: &[u8]) -> Vec<String> {
    parse_sse(std::str::from_utf8(body).unwrap())
        .into_iter()
        .map(|(event, data)| format!("{event} {}", masked(serde_json::from_str(&data).unwrap())))
        .collect()
}

#[actix_web::test]
async fn measured_points_predictions_and_step_events_are_the_golden_json() {
    // An H200-shaped fake: FP16 and FP8 GEMV and GEMM, the W4A16 GEMV, the INT4 GEMM refused; each beside
    // its prediction on the H200 SXM.
    let h200 = select(BackendChoice::FakeH200, &BackendOptions::default()).unwrap();
    let (state, _dir) = state_with(h200, None);
    let app = app!(state);
    let body = json!({"shapes": [[1, 4096, 4096], [64, 1024, 512]], "precisions": ["FP16", "INT4", "FP8_E4M3"],
        "hardware_key": "h200_sxm"});
    let req = test::TestRequest::post().uri("/api/benchmarks").set_json(body);
    let job: BenchmarkJob = test::call_and_read_body_json(&app, req.to_request()).await;
    let events =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let mut lines = sse_lines(&events);
    // The same points, predicted and measured in one answer, and as stored.
    let req = test::TestRequest::post()
        .uri("/api/analyze?hardware_key=h200_sxm")
        .set_json(json!({"M": 1, "N": 2048, "K": 1024, "precision": "FP16", "precisions": ["FP16", "INT4"]}));
    let analyzed: Value = test::call_and_read_body_json(&app, req.to_request()).await;
    lines.push(format!("analyze {}", masked(analyzed)));
    let stored: Value =
        test::call_and_read_body_json(&app, test::TestRequest::get().uri("/api/results").to_request()).await;
    lines.push(format!("results {}", masked(stored)));
    assert_golden("benchmark-events.txt", &lines);

    // A TinyLlama decode step on the plain fake, predicted on the H100 SXM: every kind of operator, the
    // shared rows and the step's totals.
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let body = json!({"model": "tinyllama-1.1b", "config": "bf16", "phase": "decode", "batch": 1, "context": 256,
        "hardware_key": "h100_sxm"});
    let req = test::TestRequest::post().uri("/api/steps").set_json(body);
    let job: StepJob = test::call_and_read_body_json(&app, req.to_request()).await;
    let events =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    assert_golden("step-events.txt", &sse_lines(&events));
}

#[actix_web::test]
async fn a_store_written_in_the_seed_units_lists_every_point_the_same() {
    // `store-v3.sql`: the dump of a version-3 store written by the endpoint before measured values moved to
    // base units (be32554): real CPU GEMVs, GEMMs and a TinyLlama FP32 step, fake H200 points (W4A16 among
    // them), a fake step and a point without a prediction. `store-v3-results.json`: that endpoint's
    // `GET /api/results?limit=1000` of it.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let conn = rusqlite::Connection::open(data.join(DB_FILE)).unwrap();
    conn.execute_batch(&std::fs::read_to_string(data_dir().join("store-v3.sql")).unwrap())
        .unwrap();
    conn.pragma_update(None, "user_version", 3).unwrap();
    drop(conn);
    let fake = select(BackendChoice::Fake, &BackendOptions::default()).unwrap();
    let (state, _dir) = state_in(dir, fake, |_| ());
    let app = app!(state);
    let listed = test::call_and_read_body(
        &app,
        test::TestRequest::get()
            .uri("/api/results?limit=1000")
            .to_request(),
    )
    .await;
    let want = std::fs::read_to_string(data_dir().join("store-v3-results.json")).unwrap();
    let (listed, want): (Value, Value) = (
        serde_json::from_slice(&listed).unwrap(),
        serde_json::from_str(&want).unwrap(),
    );
    assert_eq!(listed["results"].as_array().unwrap().len(), 36);
    // Point by point, then the whole page as text: the same numbers to the bit, in the same order.
    for (got, want) in listed["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(want["results"].as_array().unwrap())
    {
        assert_eq!(got, want);
    }
    assert_eq!(listed.to_string(), want.to_string());
    // The filters still find them.
    let h200: Value = test::call_and_read_body_json(
        &app,
        test::TestRequest::get()
            .uri("/api/results?device=h200&precision=INT4")
            .to_request(),
    )
    .await;
    assert_eq!(h200["results"].as_array().unwrap().len(), 1);
    assert_eq!(h200["results"][0], want["results"][30]);
}
