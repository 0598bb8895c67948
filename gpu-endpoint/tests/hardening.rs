//! Hardening against hostile clients: compressed request bodies, cross-site requests, foreign Host headers and
//! unbounded job memory.

mod common;

use actix_web::http::StatusCode;
use actix_web::{App, test};
use common::fake_state;
use gpu_endpoint::configure;
use roofline_core::wire::ErrorBody;

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
