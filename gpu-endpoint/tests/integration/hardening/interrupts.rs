//! Interruptible runs (issue 27, item 2): a DELETE and the time cap stop a step inside its long attention
//! within a second of the next check (the CPU kernels check per query row), and a measurement whose predicted
//! single run is longer than the cap is refused before it starts. Issue 37: a departed client or the cap stops
//! the host's seeded-input generation of a large point within a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{App, test, web};
use gpu_endpoint::backend::cpu::CpuBackend;
use gpu_endpoint::backend::select::Selected;
use gpu_endpoint::http::app::configure;
use gpu_endpoint::http::state::AppState;
use gpu_endpoint::protocol::SamplingPolicy;
use roofline_core::wire::{AnalyzeResponse, StepDoneEvent, StepJob, StepOperatorEvent};
use roofline_core::{Corrections, ModelConfig, Phase, Workload, analyze_model, find_hardware, find_model};
use serde_json::json;

use crate::common::{configured_state, fake_state_configured};

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

/// One layer whose attention dwarfs the rest: 32 heads of 128 over 8 KV heads on a 128-wide model, so a
/// prefill of 1,024 tokens spends 4 · 1024² / 2 · 128 · 32 = 8.6e9 FLOPs in attention (tens of seconds of
/// plain loops in a debug build) and little anywhere else.
fn long_attention_model() -> ModelConfig {
    let mut model = find_model("tinyllama-1.1b").unwrap().clone();
    model.key = "long-attention".into();
    (
        model.layers,
        model.hidden,
        model.heads,
        model.kv_heads,
        model.head_dim,
    ) = (1, 128, 32, 8, 128);
    (model.ffn_dim, model.vocab) = (128, 512);
    model
}

const CONTEXT: u32 = 1024;

/// The CPU backend with few samples per point, and the server's per-point cap.
fn cpu_state(max_point: Duration) -> (web::Data<AppState>, tempfile::TempDir) {
    let policy = SamplingPolicy {
        min_samples: 3,
        max_samples: 10,
        time_cap: Duration::from_millis(150),
        ..SamplingPolicy::cpu()
    };
    let selected = Selected {
        backend: Arc::new(CpuBackend::new(1 << 30).with_policy(policy)),
        reason: "tests".into(),
        telemetry: None,
        telemetry_reason: "tests".into(),
    };
    configured_state(selected, |config| config.max_point = max_point)
}

/// Index of the attention row in the step's operator rows.
fn attention_row() -> usize {
    let h100 = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let workload = Workload {
        phase: Phase::Prefill,
        batch: 1,
        context: CONTEXT,
    };
    let fp32 = roofline_core::find_quant_config("fp32").unwrap();
    let analysis = analyze_model(&h100, &long_attention_model(), fp32, &workload, &Corrections::ALL).unwrap();
    analysis
        .ops
        .iter()
        .position(|row| row.name == "attention")
        .unwrap()
}

/// Waits (polling every 10 ms, at most `within`) until `ready` holds; returns when it did.
fn wait_until(within: Duration, mut ready: impl FnMut() -> bool) -> Instant {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < within, "not within {within:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    Instant::now()
}

/// `DELETE /api/steps/{id}`, which must answer 204.
macro_rules! cancel_step {
    ($app:expr, $job:expr) => {
        let resp = test::call_service(
            &$app,
            test::TestRequest::delete()
                .uri(&format!("/api/steps/{}", $job.id))
                .to_request(),
        )
        .await;
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    };
}

macro_rules! submit_long_step {
    ($app:expr) => {{
        let body = json!({
            "model": "long-attention", "model_config": long_attention_model(), "config": "fp32",
            "phase": "prefill", "batch": 1, "context": CONTEXT, "hardware_key": "h100_sxm"
        });
        let job: StepJob = test::call_and_read_body_json(
            &$app,
            test::TestRequest::post().uri("/api/steps").set_json(&body).to_request(),
        )
        .await;
        job
    }};
}

#[actix_web::test]
async fn a_delete_stops_a_step_inside_its_long_attention_within_a_second() {
    let (state, _dir) = cpu_state(Duration::from_secs(600));
    let app = app!(state);
    let job = submit_long_step!(app);
    let running = state.steps.get(&job.id).unwrap();
    // Every row before the attention has reported: the attention is being prepared; half a second later its
    // verification run is well under way.
    let attention = attention_row();
    wait_until(Duration::from_secs(60), || {
        running.events_from(0).len() >= attention
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        running.events_from(0).len(),
        attention,
        "the attention finished first"
    );
    let deleted_at = Instant::now();
    cancel_step!(app, job);
    let done_at = wait_until(Duration::from_secs(30), || running.is_finished());
    let stop_latency = done_at - deleted_at;
    println!("DELETE inside a {CONTEXT}-token CPU attention: stopped after {stop_latency:?}");
    assert!(stop_latency < Duration::from_secs(1), "{stop_latency:?}");
    let events =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let events = crate::common::parse_sse(std::str::from_utf8(&events).unwrap());
    let done: StepDoneEvent = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert!(done.cancelled);
    assert_eq!(
        events.len(),
        attention + 1,
        "no row after the cancelled attention"
    );
}

#[actix_web::test]
async fn the_time_cap_stops_a_long_attention_within_a_second_of_the_cap() {
    let cap = Duration::from_secs(2);
    let (state, _dir) = cpu_state(cap);
    let app = app!(state);
    let job = submit_long_step!(app);
    let running = state.steps.get(&job.id).unwrap();
    let attention = attention_row();
    let started = wait_until(Duration::from_secs(60), || {
        running.events_from(0).len() >= attention
    });
    let reported = wait_until(cap + Duration::from_secs(30), || {
        running.events_from(0).len() > attention
    });
    let took = reported - started;
    println!("a {CONTEXT}-token CPU attention under a {cap:?} cap: reported after {took:?}");
    assert!(took < cap + Duration::from_secs(1), "{took:?}");
    let row = &running.events_from(attention)[0];
    let row: StepOperatorEvent = serde_json::from_str(&gpu_endpoint::jobs::JobEventKind::json(row)).unwrap();
    assert_eq!(row.name, "attention");
    let failure = row.failure.expect("a failure");
    assert_eq!(failure.code, "time_limit");
    assert!(failure.message.contains("time cap"), "{}", failure.message);
    // The job went on to the next row; it ends at once when cancelled.
    cancel_step!(app, job);
    wait_until(Duration::from_secs(5), || running.is_finished());
}

#[actix_web::test]
async fn a_run_predicted_past_the_cap_is_refused_before_it_starts() {
    // Every fake point takes 500 ms; the cap is 1 µs, below the predicted time of any GEMV on the H100.
    let (state, _dir) = fake_state_configured(500, |c| c.max_point = Duration::from_micros(1));
    let app = app!(state);
    let start = Instant::now();
    let req = test::TestRequest::post()
        .uri("/api/analyze?hardware_key=h100_sxm")
        .set_json(json!({"M": 1, "N": 4096, "K": 4096, "precision": "FP32"}));
    let response: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    let elapsed = start.elapsed();
    assert!(response.measured.is_empty());
    let failure = &response.failed[0];
    assert_eq!(failure.code, "time_limit");
    // 4096 · 4096 · 4 B = 67 MB of FP32 weights over the H100's reference bandwidth: tens of µs.
    assert!(
        failure.message.contains("predicted") && failure.message.contains("h100_sxm"),
        "{}",
        failure.message
    );
    assert!(elapsed < Duration::from_millis(400), "the fake ran: {elapsed:?}");
}

/// A GEMV whose FP32 weights fill 1 GiB: 1 × 16384 × 16384, 268 M seeded values (seconds of host work in a
/// debug build before the first kernel runs; the probe's 12800³ point held the device 10.7 s).
const LARGE_GEMV: (u64, u64, u64) = (1, 16_384, 16_384);

/// The CPU backend with room for [`LARGE_GEMV`], and the server's per-point cap.
fn large_cpu_state(max_point: Duration) -> (web::Data<AppState>, tempfile::TempDir) {
    let selected = Selected {
        backend: Arc::new(CpuBackend::new(2 << 30)),
        reason: "tests".into(),
        telemetry: None,
        telemetry_reason: "tests".into(),
    };
    configured_state(selected, |config| config.max_point = max_point)
}

#[actix_web::test]
async fn a_departed_client_frees_the_device_within_a_second_while_its_inputs_are_drawn() {
    use tokio::io::AsyncWriteExt as _;
    let (state, _dir) = large_cpu_state(Duration::from_secs(600));
    // The server `serve` runs (it ends a connection its client closed).
    let (server, addrs) = gpu_endpoint::http::server::server(
        state.clone(),
        1,
        gpu_endpoint::http::server::Listen::Address("127.0.0.1", 0),
    )
    .unwrap();
    let addr = addrs[0];
    let handle = server.handle();
    actix_web::rt::spawn(server);
    let (m, n, k) = LARGE_GEMV;
    let body = format!(r#"{{"M":{m},"N":{n},"K":{k},"precision":"FP32"}}"#);
    let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /api/analyze?hardware_key=h100_sxm HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    client.write_all(request.as_bytes()).await.unwrap();
    // The measurement takes the device and draws its inputs.
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert!(
        state.device.try_acquire().is_err(),
        "the measurement never took the device"
    );
    drop(client);
    let left = Instant::now();
    let freed = loop {
        if state.device.try_acquire().is_ok() {
            break left.elapsed();
        }
        assert!(
            left.elapsed() < Duration::from_secs(60),
            "the device stayed busy for 60 s after its client left"
        );
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    };
    handle.stop(true).await;
    println!("a {m}x{n}x{k} FP32 point on the CPU freed the device {freed:?} after its client left");
    assert!(freed < Duration::from_secs(1), "{freed:?}");
}

#[actix_web::test]
async fn the_cap_stops_the_inputs_of_a_large_point_within_a_second() {
    let cap = Duration::from_millis(500);
    let (state, _dir) = large_cpu_state(cap);
    let app = app!(state);
    let (m, n, k) = LARGE_GEMV;
    let start = Instant::now();
    let req = test::TestRequest::post()
        .uri("/api/analyze?hardware_key=h100_sxm")
        .set_json(json!({"M": m, "N": n, "K": k, "precision": "FP32"}));
    let response: AnalyzeResponse = test::call_and_read_body_json(&app, req.to_request()).await;
    let took = start.elapsed();
    println!("a {m}x{n}x{k} FP32 point on the CPU under a {cap:?} cap: answered after {took:?}");
    assert!(response.measured.is_empty());
    let failure = &response.failed[0];
    assert_eq!(failure.code, "time_limit", "{}", failure.message);
    assert!(took < cap + Duration::from_secs(1), "{took:?}");
}
