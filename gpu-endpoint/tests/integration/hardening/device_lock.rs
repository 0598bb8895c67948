//! One device, two processes (issue 27, item 8): two servers sharing a data directory take turns on the
//! device, and the one refused says which process holds it.

use std::time::{Duration, Instant};

use crate::common::Server;

const JSON: (&str, &str) = ("Content-Type", "application/json");

#[test]
fn two_servers_on_one_device_take_turns_and_name_the_holder() {
    let shared = tempfile::tempdir().unwrap();
    let data = shared.path().join("data");
    let data = data.to_str().unwrap();
    // Every fake point takes 1.5 s.
    let start = |data: &str| {
        Server::start_with(
            tempfile::tempdir().unwrap(),
            &["--backend", "fake", "--fake-delay-ms", "1500", "--data-dir", data],
        )
    };
    let (first, second) = (start(data), start(data));
    let job = br#"{"shapes":[[1,64,64]],"precisions":["FP32"]}"#;
    let (status, _) = first.request("POST", "/api/benchmarks", &[JSON], job);
    assert_eq!(status, 202);
    std::thread::sleep(Duration::from_millis(300));
    // The second server's own lock is free; the device is not.
    let analyze = br#"{"M":1,"N":64,"K":64,"precision":"FP32"}"#;
    let (status, body) = second.request("POST", "/api/analyze?hardware_key=h100_sxm", &[JSON], analyze);
    assert_eq!(status, 503, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["code"], "busy");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("pid {}", first.child.id())) && message.contains("since Unix time"),
        "{message}"
    );
    // Once the first server's job is done, the second one measures.
    let waited = Instant::now();
    let measured = loop {
        let (status, body) = second.request("POST", "/api/analyze?hardware_key=h100_sxm", &[JSON], analyze);
        if status == 200 {
            break body;
        }
        assert_eq!(status, 503, "{body}");
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "the device never came free"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let response: serde_json::Value = serde_json::from_str(&measured).unwrap();
    assert_eq!(response["measured"].as_array().unwrap().len(), 1);
}
