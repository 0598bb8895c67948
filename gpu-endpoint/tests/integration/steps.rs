//! Model-step jobs through the production app: `POST /api/steps`, its SSE events and the stored points, on
//! the real CPU backend (TinyLlama and a small MoE decode in FP32) and the fake one.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{fake_state, parse_sse, state_with};
use actix_web::http::StatusCode;
use actix_web::{App, test};
use gpu_endpoint::backend::cpu::CpuBackend;
use gpu_endpoint::backend::select::Selected;
use gpu_endpoint::http::app::configure;
use gpu_endpoint::protocol::SamplingPolicy;
use roofline_core::wire::{ErrorBody, ResultsPage, StepDoneEvent, StepJob, StepOperatorEvent};
use roofline_core::{ModelConfig, MoeConfig, find_model};
use serde_json::json;

macro_rules! app {
    ($state:expr) => {
        test::init_service(App::new().configure(configure($state.clone()))).await
    };
}

/// `POST uri` with the JSON `body` to `app`; the response.
macro_rules! post {
    ($app:expr, $uri:expr, $body:expr) => {
        test::call_service(
            &$app,
            test::TestRequest::post().uri($uri).set_json($body).to_request(),
        )
        .await
    };
}

/// The CPU backend with a short sampling policy (the protocol is the same; fewer samples).
fn cpu_selected() -> Selected {
    let policy = SamplingPolicy {
        min_samples: 3,
        max_samples: 20,
        time_cap: Duration::from_millis(150),
        ..SamplingPolicy::cpu()
    };
    Selected {
        backend: Arc::new(CpuBackend::new(1 << 30).with_policy(policy)),
        reason: "tests".into(),
        telemetry: None,
        telemetry_reason: "tests".into(),
    }
}

fn tinyllama_decode(hardware_key: Option<&str>) -> serde_json::Value {
    let mut body = json!({
        "model": "tinyllama-1.1b", "config": "fp32", "phase": "decode", "batch": 1, "context": 256
    });
    if let Some(key) = hardware_key {
        body["hardware_key"] = json!(key);
    }
    body
}

/// The `operator` rows and the `done` event of an SSE body.
fn step_events(body: &[u8]) -> (Vec<StepOperatorEvent>, StepDoneEvent) {
    let events = parse_sse(std::str::from_utf8(body).unwrap());
    let (last, rows) = events.split_last().unwrap();
    assert_eq!(last.0, "done");
    let rows = rows
        .iter()
        .map(|(name, data)| {
            assert_eq!(name, "operator");
            serde_json::from_str(data).unwrap()
        })
        .collect();
    (rows, serde_json::from_str(&last.1).unwrap())
}

#[actix_web::test]
async fn cpu_measures_every_operator_of_a_tinyllama_decode_step() {
    let (state, _dir) = state_with(cpu_selected(), None);
    let app = app!(state);
    let resp = post!(app, "/api/v1/steps", tinyllama_decode(Some("h100_sxm")));
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let job: StepJob = test::read_body_json(resp).await;
    assert_eq!(job.hardware_key, "h100_sxm");
    assert!(job.distinct < job.operators);
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let (rows, done) = step_events(&body);
    assert_eq!(rows.len(), job.operators as usize);
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    for name in [
        "embedding",
        "attn_norm",
        "qkv_proj",
        "rope",
        "kv_cache_write",
        "attention",
        "o_proj",
        "residual_add",
        "gate_up_proj",
        "ffn_act",
        "down_proj",
        "final_norm",
        "logits",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for row in &rows {
        // Every row is measured (FP32 runs natively on the CPU) or says why not.
        match (&row.measured, &row.failure) {
            (Some(point), None) => {
                let m = point.measurement.as_ref().unwrap();
                assert!(m.verified, "{}: {m:?}", row.name);
                let ratio = row.measured_over_predicted.unwrap();
                assert!(ratio.is_finite() && ratio > 0.0, "{}: {ratio}", row.name);
                // A shared measurement carries the name of the row that took it.
                let taken_by = row.same_as.as_ref().unwrap_or(&row.name);
                assert!(point.label.starts_with(taken_by.as_str()), "{}", point.label);
            }
            (None, Some(failure)) => panic!("{} failed: {failure:?}", row.name),
            other => panic!("{}: {other:?}", row.name),
        }
    }
    let attention = rows.iter().find(|r| r.name == "attention").unwrap();
    let kernel = &attention
        .measured
        .as_ref()
        .unwrap()
        .measurement
        .as_ref()
        .unwrap()
        .kernel;
    assert!(
        kernel.starts_with("attention causal B1xH32/4xSq1xSkv256xd64 f32"),
        "{kernel}"
    );
    assert_eq!(done.measured, job.operators);
    assert_eq!((done.failed, done.cancelled), (0, false));
    let ratio = done.measured_over_predicted.unwrap();
    assert!(ratio.is_finite() && ratio > 0.0, "{ratio}");
    assert!(done.predicted_step_time_s >= done.predicted_kernels_time_s);
    // The whole step end to end: 22 layers × 12 kernels + embedding, final norm and logits, all verified.
    let end_to_end = done.end_to_end.as_ref().expect("timed end to end");
    assert_eq!(end_to_end.kernels, 22 * 12 + 3);
    assert!(end_to_end.measurement.verified);
    assert!(
        end_to_end
            .measurement
            .kernel
            .starts_with("267 kernels back to back")
    );
    // Every kernel ran: within a few times the sum of the operators measured alone (one pass over the
    // distinct operators would be about 20 times shorter).
    let ratio = end_to_end.measured_time_s / done.measured_time_s;
    assert!(
        (0.3..3.0).contains(&ratio),
        "{end_to_end:?} vs {}",
        done.measured_time_s
    );
    assert!((end_to_end.overhead_s - (end_to_end.measured_time_s - done.measured_time_s)).abs() < 1e-12);
    // Each distinct operator is stored once, under the job and with its name.
    let stored: ResultsPage = test::call_and_read_body_json(
        &app,
        test::TestRequest::get()
            .uri("/api/results?limit=1000")
            .to_request(),
    )
    .await;
    let stored = stored.results;
    let of_job: Vec<_> = stored
        .iter()
        .filter(|r| r.job_id.as_deref() == Some(job.id.as_str()))
        .collect();
    assert_eq!(of_job.len(), job.distinct as usize);
    assert!(of_job.iter().any(|r| r.point.label.starts_with("attention ")));
}

/// A small MoE model (Qwen3-30B-A3B's layout shrunk: 2 layers, hidden 256, 16 experts of width 128, top 4,
/// a 1024-token vocabulary) that a debug build measures on the CPU in seconds.
fn tiny_moe() -> ModelConfig {
    let qwen = find_model("qwen3-30b-a3b").unwrap();
    ModelConfig {
        key: "tiny-moe".into(),
        name: "Tiny MoE (tests)".into(),
        layers: 2,
        hidden: 256,
        heads: 4,
        kv_heads: 2,
        head_dim: 64,
        ffn_dim: 512,
        vocab: 1024,
        moe: Some(MoeConfig {
            experts: 16,
            top_k: 4,
            shared_experts: 0,
            expert_ffn: 128,
            dense_layers: 0,
        }),
        ..qwen.clone()
    }
}

#[actix_web::test]
async fn cpu_times_a_moe_decode_step_with_its_experts_as_batched_gemms() {
    let (state, _dir) = state_with(cpu_selected(), None);
    let app = app!(state);
    let body = json!({
        "model": "tiny-moe", "model_config": tiny_moe(), "config": "fp32", "phase": "decode", "batch": 4,
        "context": 64, "hardware_key": "h100_sxm"
    });
    let resp = post!(app, "/api/v1/steps", body);
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let job: StepJob = test::read_body_json(resp).await;
    let body =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let (rows, done) = step_events(&body);
    assert_eq!(rows.len(), job.operators as usize);
    for row in &rows {
        let point = row
            .measured
            .as_ref()
            .unwrap_or_else(|| panic!("{} not measured: {:?}", row.name, row.failure));
        assert!(point.measurement.as_ref().unwrap().verified, "{}", row.name);
    }
    // 4 tokens × top 4 of 16 experts: 16·(1 − (12/16)^4) = 10.94 active → 11 products of ⌈16 / 10.94⌉ = 2
    // rows; gate and up 256 wide from the hidden 256, down back from 128.
    for (name, shape) in [
        ("expert_gate_up", "11x2x256x256"),
        ("expert_down", "11x2x256x128"),
    ] {
        let point = rows
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.measured.as_ref())
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(point.shape, shape, "{name}");
        let kernel = &point.measurement.as_ref().unwrap().kernel;
        assert!(
            kernel.contains("FP32 batched GEMM of 11 products back to back"),
            "{name}: {kernel}"
        );
    }
    assert_eq!((done.measured, done.failed), (job.operators, 0), "{done:?}");
    let end_to_end = done.end_to_end.as_ref().expect("timed end to end");
    assert_eq!(end_to_end.kernels, rows.iter().map(|r| r.count).sum::<u32>());
    assert!(end_to_end.measurement.verified);
    // The step back to back skips each row's cache flush, so on a CPU with tiny, cache-bound rows it can take a
    // small fraction of the rows' flushed sum (1/17 was seen on a loaded host); it must never take much more.
    let ratio = end_to_end.measured_time_s / done.measured_time_s;
    assert!(
        ratio > 0.0 && ratio < 5.0,
        "{end_to_end:?} vs {}",
        done.measured_time_s
    );
}

#[actix_web::test]
async fn a_cpu_without_a_device_to_predict_on_is_told_to_name_one() {
    let (state, _dir) = state_with(cpu_selected(), None);
    let app = app!(state);
    let resp = post!(app, "/api/steps", tinyllama_decode(None));
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: ErrorBody = test::read_body_json(resp).await;
    assert!(body.message.contains("hardware_key"), "{}", body.message);
}

#[actix_web::test]
async fn bad_step_requests_and_unknown_jobs_are_refused() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let cases = [
        (
            json!({"model": "no-such", "config": "fp32", "phase": "decode", "batch": 1, "context": 8, "hardware_key": "h100_sxm"}),
            StatusCode::NOT_FOUND,
            "unknown_key",
        ),
        (
            json!({"model": "tinyllama-1.1b", "config": "fp32", "phase": "decode", "batch": 1, "context": 8, "hardware_key": "nope"}),
            StatusCode::NOT_FOUND,
            "unknown_hardware",
        ),
        (
            json!({"model": "tinyllama-1.1b", "config": "fp32", "phase": "decode", "batch": 0, "context": 8, "hardware_key": "h100_sxm"}),
            StatusCode::BAD_REQUEST,
            "invalid_input",
        ),
        // FP8 on an A100: the device has no FP8 path, so there is nothing to predict.
        (
            json!({"model": "tinyllama-1.1b", "config": "fp8", "phase": "decode", "batch": 1, "context": 8, "hardware_key": "a100_sxm_80gb"}),
            StatusCode::BAD_REQUEST,
            "invalid_input",
        ),
        (
            json!({"model": "tinyllama-1.1b", "config": "fp32", "phase": "sideways", "batch": 1, "context": 8}),
            StatusCode::BAD_REQUEST,
            "invalid_input",
        ),
    ];
    for (body, status, code) in cases {
        let resp = post!(app, "/api/steps", &body);
        assert_eq!(resp.status(), status, "{body}");
        let error: ErrorBody = test::read_body_json(resp).await;
        assert_eq!(error.code, code, "{body}: {}", error.message);
    }
    for req in [
        test::TestRequest::get().uri("/api/steps/nope/events"),
        test::TestRequest::delete().uri("/api/steps/nope"),
    ] {
        let resp = test::call_service(&app, req.to_request()).await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
}

#[actix_web::test]
async fn fake_step_streams_a_row_per_operator_and_can_be_cancelled() {
    let (state, _dir) = fake_state(None, 0);
    let app = app!(state);
    let body = json!({"model": "tinyllama-1.1b", "config": "bf16", "phase": "prefill", "batch": 2, "context": 128, "hardware_key": "h100_sxm"});
    let job: StepJob = test::call_and_read_body_json(
        &app,
        test::TestRequest::post()
            .uri("/api/steps")
            .set_json(&body)
            .to_request(),
    )
    .await;
    let events =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    let (rows, done) = step_events(&events);
    assert_eq!(
        (rows.len(), done.measured),
        (job.operators as usize, job.operators)
    );
    assert!(
        rows.iter()
            .all(|r| r.measured_over_predicted.is_some_and(f64::is_finite))
    );
    // A finished job can still be cancelled (a no-op) and its events replayed.
    let resp = test::call_service(
        &app,
        test::TestRequest::delete()
            .uri(&format!("/api/steps/{}", job.id))
            .to_request(),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    let again =
        test::call_and_read_body(&app, test::TestRequest::get().uri(&job.events_url).to_request()).await;
    assert_eq!(step_events(&again).0.len(), rows.len());
}
