//! The error table (status + code per row) and fifty malformed or hostile requests: each gets a 4xx JSON
//! `{code, message}` and the server keeps answering.

use crate::common::fake_state;
use actix_web::http::{Method, StatusCode};
use actix_web::{App, test};
use gpu_endpoint::http::app::configure;
use roofline_core::wire::ErrorBody;

struct Row {
    method: Method,
    uri: &'static str,
    content_type: Option<&'static str>,
    body: String,
    auth: Option<&'static str>,
    status: u16,
    code: &'static str,
}

fn row(method: Method, uri: &'static str, body: &str, status: u16, code: &'static str) -> Row {
    Row {
        method,
        uri,
        content_type: Some("application/json"),
        body: body.to_owned(),
        auth: Some("Bearer t0ken"),
        status,
        code,
    }
}

const A: &str = "/api/analyze";
const GOOD: &str = r#"{"M":1,"N":64,"K":64,"precision":"FP32"}"#;

fn table() -> Vec<Row> {
    use Method as M;
    let mut rows = vec![
        // The documented error table.
        row(
            M::POST,
            A,
            r#"{"M":1,"N":0,"K":64,"precision":"FP32"}"#,
            400,
            "invalid_input",
        ),
        row(
            M::POST,
            "/api/analyze?hardware_key=nope",
            GOOD,
            404,
            "unknown_hardware",
        ),
        row(M::POST, A, "{not json", 400, "invalid_input"),
        Row {
            content_type: Some("text/plain"),
            ..row(M::POST, A, GOOD, 415, "unsupported_media_type")
        },
        row(
            M::POST,
            A,
            &format!(
                r#"{{"M":1,"N":64,"K":64,"precision":"FP32","pad":"{}"}}"#,
                "x".repeat(70_000)
            ),
            413,
            "too_large",
        ),
        Row {
            auth: None,
            ..row(M::GET, "/api/device", "", 401, "unauthorized")
        },
        row(M::GET, "/api/nothing", "", 404, "not_found"),
        row(M::DELETE, "/api/benchmarks/unknown-job", "", 404, "not_found"),
        row(M::GET, "/api/benchmarks/unknown-job/events", "", 404, "not_found"),
        row(M::PUT, "/api/health", "", 405, "method_not_allowed"),
    ];
    // Wrong types, negative or huge sizes, unknown names.
    for body in [
        r#"{"M":"one","N":64,"K":64,"precision":"FP32"}"#,
        r#"{"M":-1,"N":64,"K":64,"precision":"FP32"}"#,
        r#"{"M":1,"N":-64,"K":64,"precision":"FP32"}"#,
        r#"{"M":1.5,"N":64,"K":64,"precision":"FP32"}"#,
        r#"{"M":1,"N":64,"K":64,"precision":"FP7"}"#,
        r#"{"M":1,"N":64,"K":64,"precision":42}"#,
        r#"{"M":1,"N":64,"K":64}"#,
        r#"{"N":64,"K":64,"precision":"FP32"}"#,
        r#"{"M":1,"N":64,"K":64,"precision":"FP32","precisions":"FP32"}"#,
        r#"{"M":1,"N":64,"K":64,"precision":"FP32","precisions":[]}"#,
        r#"{"M":1,"N":64,"K":64,"precision":"FP32","precisions":["FP32","nope"]}"#,
        r#"{"M":1,"N":65537,"K":64,"precision":"FP32"}"#,
        r#"{"M":1,"N":64,"K":99999999999,"precision":"FP32"}"#,
        r#"{"M":1,"N":64,"K":18446744073709551616,"precision":"FP32"}"#,
        r#"[1,64,64]"#,
        r#"null"#,
        "",
        r#"{"M":1,"N":64,"K":0,"precision":"FP32"}"#,
        "\u{0}\u{1}\u{2}",
        r#"{"M":1,"N":64,"K":64,"precision":"FP32""#,
    ] {
        rows.push(row(M::POST, A, body, 400, "invalid_input"));
    }
    for uri in [
        "/api/analyze?run_all_precisions=maybe",
        "/api/analyze?hardware_key=",
    ] {
        let code = if uri.ends_with('=') {
            "unknown_hardware"
        } else {
            "invalid_input"
        };
        let status = if uri.ends_with('=') { 404 } else { 400 };
        rows.push(row(M::POST, uri, GOOD, status, code));
    }
    // Benchmarks.
    for (body, status, code) in [
        (r#"{"shapes":[],"precisions":["FP32"]}"#, 400, "invalid_input"),
        (r#"{"shapes":[[1,64,64]],"precisions":[]}"#, 400, "invalid_input"),
        (
            r#"{"shapes":[[1,64]],"precisions":["FP32"]}"#,
            400,
            "invalid_input",
        ),
        (
            r#"{"shapes":[[1,64,64,1]],"precisions":["FP32"]}"#,
            400,
            "invalid_input",
        ),
        (
            r#"{"shapes":[[0,64,64]],"precisions":["FP32"]}"#,
            400,
            "invalid_input",
        ),
        (
            r#"{"shapes":[[1,64,100000]],"precisions":["FP32"]}"#,
            400,
            "invalid_input",
        ),
        (
            r#"{"shapes":[[1,64,64]],"precisions":["FP32"],"hardware_key":"nope"}"#,
            404,
            "unknown_hardware",
        ),
        (
            r#"{"shapes":[[1,64,64]],"precisions":["XYZ"]}"#,
            400,
            "invalid_input",
        ),
        (
            r#"{"shapes":"1x64x64","precisions":["FP32"]}"#,
            400,
            "invalid_input",
        ),
        (r#"{"precisions":["FP32"]}"#, 400, "invalid_input"),
    ] {
        rows.push(row(M::POST, "/api/benchmarks", body, status, code));
    }
    let many_shapes = format!(
        r#"{{"shapes":[{}],"precisions":["FP32"]}}"#,
        vec!["[1,8,8]"; 65].join(",")
    );
    rows.push(row(
        M::POST,
        "/api/benchmarks",
        &many_shapes,
        400,
        "invalid_input",
    ));
    // Wire-level 64 KiB limit, 65,536 × 65,536 FP64 buffers beyond the fake's 1 GB.
    rows.push(row(
        M::POST,
        A,
        r#"{"M":65536,"N":65536,"K":65536,"precision":"FP64"}"#,
        413,
        "too_large",
    ));
    // Calibrate, results, stream, tokens.
    rows.push(row(M::POST, "/api/calibrate", "{bad", 400, "invalid_input"));
    rows.push(row(
        M::POST,
        "/api/calibrate",
        &format!("{{\"pad\":\"{}\"}}", "x".repeat(70_000)),
        413,
        "too_large",
    ));
    rows.push(row(
        M::POST,
        "/api/calibrate",
        r#"{"hardware_key":"nope"}"#,
        404,
        "unknown_hardware",
    ));
    rows.push(row(
        M::POST,
        "/api/calibrate",
        r#"{"precisions":[]}"#,
        400,
        "invalid_input",
    ));
    rows.push(row(
        M::GET,
        "/api/results?precision=FP7",
        "",
        400,
        "invalid_input",
    ));
    rows.push(row(M::GET, "/api/results?limit=0", "", 400, "invalid_input"));
    rows.push(row(M::GET, "/api/results?limit=-3", "", 400, "invalid_input"));
    rows.push(row(
        M::GET,
        "/api/results?since=yesterday",
        "",
        400,
        "invalid_input",
    ));
    rows.push(row(
        M::GET,
        "/api/nvml/stream?interval_ms=1",
        "",
        400,
        "invalid_input",
    ));
    rows.push(Row {
        auth: Some("Bearer wrong"),
        ..row(M::GET, "/api/nvml/status", "", 401, "unauthorized")
    });
    rows.push(Row {
        auth: Some("Bearer "),
        ..row(M::POST, A, GOOD, 401, "unauthorized")
    });
    rows.push(Row {
        content_type: None,
        ..row(M::POST, A, GOOD, 415, "unsupported_media_type")
    });
    rows
}

#[actix_web::test]
async fn error_table_and_fifty_hostile_requests_get_json_4xx_and_the_server_keeps_answering() {
    let (state, _dir) = fake_state(Some("t0ken"), 0);
    let app = test::init_service(App::new().configure(configure(state.clone()))).await;
    let rows = table();
    assert!(rows.len() >= 50, "{} rows", rows.len());
    for (idx, r) in rows.iter().enumerate() {
        let mut req = test::TestRequest::default()
            .method(r.method.clone())
            .uri(r.uri)
            .set_payload(r.body.clone());
        if let Some(ct) = r.content_type {
            req = req.insert_header(("content-type", ct));
        }
        if let Some(auth) = r.auth {
            req = req.insert_header(("authorization", auth));
        }
        let resp = test::call_service(&app, req.to_request()).await;
        let status = resp.status();
        let bytes = test::read_body(resp).await;
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(
            status.as_u16(),
            r.status,
            "row {idx} {} {} body {:.80}: got {text}",
            r.method,
            r.uri,
            r.body
        );
        let body: ErrorBody = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("row {idx}: not an ErrorBody ({e}): {text}"));
        assert_eq!(body.code, r.code, "row {idx} {} {}: {text}", r.method, r.uri);
        assert!(!body.message.is_empty());
        // The server still answers after every hostile request.
        let ok = test::call_service(&app, test::TestRequest::get().uri("/api/health").to_request()).await;
        assert_eq!(ok.status(), StatusCode::OK);
    }
}
