//! Real-browser test of model-step measurement against an in-process `gpu-endpoint` on loopback (CPU
//! backend): the page calibrates the CPU, predicts a TinyLlama FP32 decode step on the calibrated spec,
//! measures the step on the endpoint, and shows a measured time and an error for every operator row, the
//! measured TPOT beside the predicted one, and the step timed end to end.

use std::time::Duration;

use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tinyllama_decode_step_is_measured_operator_by_operator_from_the_page() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    // TinyLlama (22 layers, hidden 2048, GQA 32/4 heads) decoding one sequence over 256 cached tokens, in
    // FP32: the one format the CPU backend runs natively.
    browser
        .open(
            &endpoint.url(),
            "model=tinyllama-1.1b&cfg=fp32&phase=decode&b=1&s=256",
        )
        .await;
    browser.wait_data("endpoint-status", "value", "online").await;
    // Without a device that is this CPU the step is predicted for GB10; the columns only come with a
    // measurement.
    assert_eq!(
        browser
            .js("return document.querySelectorAll('[data-testid=op-measured]').length;")
            .await,
        0
    );

    // Predict on the CPU itself: calibrate it, then use the calibrated spec.
    browser.calibrate_and_use("cpu_host_measured").await;

    // Measure the step.
    browser.measure_step(Duration::from_secs(300)).await;
    browser.wait_data("step-status", "value", "done").await;

    // Every operator row has a measured time (one instance, in seconds) and an error figure.
    let rows = browser
        .js(
            "return [...document.querySelectorAll('[data-testid=operators] tbody tr')].map(r => [\
             r.dataset.op, r.querySelector('[data-testid=op-measured]')?.dataset.value ?? null,\
             r.querySelector('[data-testid=op-error]')?.textContent ?? null]);",
        )
        .await;
    let rows = rows.as_array().expect("rows");
    // TinyLlama's decode step: embedding, 3 norms, QKV, RoPE, KV write, attention, O, 2 residuals, gate/up,
    // SiLU·mul, down, logits: well over ten distinct rows.
    assert!(rows.len() >= 10, "{rows:?}");
    for row in rows {
        let name = row[0].as_str().unwrap_or_default();
        let seconds: f64 = row[1]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{name} has no measured time: {row:?}"));
        assert!(seconds > 0.0 && seconds < 10.0, "{name}: {seconds} s");
        let error = row[2].as_str().unwrap_or_default();
        assert!(error.ends_with('%'), "{name}: error {error:?}");
    }

    // The measured TPOT beside the predicted one: a finite positive ratio, and the text says TPOT.
    let ratio: f64 = browser.data_value("step-totals").await.parse().expect("a ratio");
    assert!(ratio.is_finite() && ratio > 0.0, "measured ÷ predicted {ratio}");
    let totals = browser.text("[data-testid=step-totals]").await;
    assert!(
        totals.contains("TPOT") && totals.contains(&format!("{}/{}", rows.len(), rows.len())),
        "{totals}"
    );

    // The whole step end to end: 22 layers × 12 kernels + embedding, final norm and logits, launched back to
    // back, against the predicted step time.
    let end_to_end: f64 = browser
        .data_value("step-end-to-end")
        .await
        .parse()
        .expect("an end-to-end ratio");
    assert!(
        end_to_end.is_finite() && end_to_end > 0.0,
        "end to end ÷ predicted {end_to_end}"
    );
    let text = browser.text("[data-testid=step-end-to-end]").await;
    assert!(text.contains("TPOT") && text.contains("267 kernels"), "{text}");

    // Another batch is another step: its rows are predictions only until measured.
    browser
        .js(
            "const e = document.querySelector('[data-testid=batch-input]'); e.value = '4';\
             e.dispatchEvent(new Event('change', { bubbles: true })); return true;",
        )
        .await;
    browser
        .wait_for_js(
            "document.querySelectorAll('[data-testid=op-measured]').length === 0",
            WAIT,
        )
        .await;
    browser.close().await;
    drop(endpoint);
}
