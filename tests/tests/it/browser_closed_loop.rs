//! Real-browser end-to-end test of the closed loop against an in-process `gpu-endpoint` on loopback (CPU
//! backend, no GPU, no NVML): the Kernel Spot Check puts measured points beside their predictions, the
//! Validation tab lists them with their error, calibration yields a device to predict on, measured points
//! survive a reload, a benchmark job streams progress and stops, the telemetry panel is calm without NVML,
//! and when the endpoint dies the badge flips while the page keeps predicting.

use std::time::{Duration, Instant};

use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

/// The number shown by `data-testid="measured-count"`.
async fn measured_count(browser: &Browser) -> u64 {
    let text = browser.text("[data-testid=measured-count]").await;
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("measured-count is not a number: {text:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn measured_points_validation_jobs_telemetry_and_offline() {
    if !require_browser() {
        return;
    }
    let started = Instant::now();
    let mut endpoint = Endpoint::start();
    let browser = Browser::start().await;

    // 1. Same origin, no setting: the badge finds the CPU endpoint, and the banner is the calm no-GPU note.
    let opened = Instant::now();
    browser.client.goto(&endpoint.url()).await.unwrap();
    browser.wait_data("endpoint-status", "value", "online").await;
    let badge = browser.text("[data-testid=endpoint-status]").await;
    assert!(
        badge.contains("online") && badge.contains("cpu"),
        "badge: {badge}"
    );
    browser.wait_data("endpoint-banner", "value", "no-gpu").await;
    assert_eq!(measured_count(&browser).await, 0);

    // 2. Kernel Spot Check. The original toolkit's five precisions (the ticked set, `spot-custom`) have no
    // native CPU kernel: each is listed with its reason, never measured through a stand-in. Then FP32
    // 64×256×256 is measured beside its prediction.
    browser.type_into("[data-testid=spot-m]", "64", "input").await;
    browser.type_into("[data-testid=spot-n]", "256", "input").await;
    browser.type_into("[data-testid=spot-k]", "256", "input").await;
    browser
        .wait_for_js(
            "!document.querySelector('[data-testid=analyze-button]').disabled",
            WAIT,
        )
        .await;
    browser.click("[data-testid=spot-custom]").await;
    browser.click("[data-testid=analyze-button]").await;
    browser
        .wait_for_js(
            "document.querySelectorAll('[data-testid=spot-failures] li').length >= 5",
            WAIT,
        )
        .await;
    for precision in ["FP16", "FP8_E4M3", "NVFP4", "INT8", "INT4"] {
        let failure = browser
            .element(&format!(
                "[data-testid=spot-failures] li[data-precision={precision}]"
            ))
            .await;
        let text = failure.text().await.unwrap();
        assert!(text.contains("unsupported"), "{precision}: {text}");
    }
    browser.spot_check("FP32").await;
    let to_first_point = opened.elapsed();
    let seconds = browser.js("return parseFloat(document.querySelector('[data-testid=spot-row] [data-testid=measured-time]').dataset.value);").await;
    assert!(
        seconds.as_f64().is_some_and(|s| s > 0.0),
        "measured time {seconds}"
    );
    let row = browser.text("[data-testid=spot-row][data-precision=FP32]").await;
    // The CPU measured it, and GB10 is selected: no prediction error against another device, and the
    // table's one not-compared row says why.
    assert!(
        row.contains("64x256x256") && !row.contains('%'),
        "spot row: {row}"
    );
    let note = browser
        .text("[data-testid=spot-results] [data-testid=not-compared]")
        .await;
    assert!(note.contains("not compared"), "not-compared row: {note}");
    assert!(measured_count(&browser).await > 0);
    eprintln!(
        "page opened → first measured point on the plot: {:.1} s",
        to_first_point.as_secs_f64()
    );

    // 3. A CPU measurement next to an H100 selection: the chart leaves it out with a note naming the CPU, the
    // Validation tab lists no row and no error for it, and nothing on the page shows an error figure.
    browser
        .element("[data-testid=hardware-select]")
        .await
        .select_by_value("h100_sxm")
        .await
        .unwrap();
    let note = browser.text("[data-testid=measured-other-note]").await;
    assert!(note.contains("never compared with NVIDIA H100"), "note: {note}");
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=measured-on-device]').textContent;")
            .await,
        "0"
    );
    browser.click("#tab-4").await;
    browser.element("[data-testid=validation-other-note]").await;
    assert_eq!(
        browser.js("return document.querySelectorAll('[data-testid=validation-row], [data-testid=error-pct]').length;").await,
        0
    );

    // 4. Calibration measures the CPU's bandwidth and peaks; with no datasheet to start from, the calibrated
    // spec is offered as its own device, and the validation table predicts on it. Then back to GB10.
    browser.calibrate_and_use("cpu_host_measured").await;
    // A measured-only device predicts in the calibrated mode, and its one prediction column is calibrated.
    browser.wait_data("mode-badge", "value", "calibrated").await;
    browser.wait_for_js("[...document.querySelectorAll('[data-testid=validation-table] th[data-mode]')].map(e => e.dataset.mode).join() === 'calibrated'", WAIT).await;
    browser
        .element("[data-testid=validation-table] [data-testid=error-pct][data-mode=calibrated]")
        .await;
    // The error column is never clipped: every error cell ends inside the tab panel.
    let clipped = browser.js("const right = document.querySelector('.right').getBoundingClientRect().right;         return [...document.querySelectorAll('[data-testid=error-pct]')].filter(e => e.getBoundingClientRect().right > right + 1).length;",
    )
    .await;
    assert_eq!(clipped, 0, "error cells outside the panel");
    browser
        .element("[data-testid=hardware-select]")
        .await
        .select_by_value("gb10")
        .await
        .unwrap();
    // GB10 has no calibration: the page says so and shows reference, never silently.
    browser.wait_data("mode-badge", "value", "reference").await;
    let notice = browser.text("[data-testid=mode-notice]").await;
    assert!(
        notice.starts_with("no calibration for ") && notice.ends_with("showing reference"),
        "notice: {notice}"
    );

    // 5. A reload keeps the measured points: they are saved in this browser, not only on the endpoint.
    // (Saved once changes pause: poll.)
    let saved = browser
        .wait_for_js(
            "JSON.parse(localStorage.getItem('roofline.state')).measured.length",
            WAIT,
        )
        .await;
    assert!(
        saved.as_u64().is_some_and(|n| n > 0),
        "saved measured points: {saved}"
    );
    let before = measured_count(&browser).await;
    browser.client.refresh().await.unwrap();
    browser
        .wait_for_js(
            &format!(
                "parseInt(document.querySelector('[data-testid=measured-count]')?.textContent) === {before}"
            ),
            WAIT,
        )
        .await;

    // 6. A benchmark job streams progress into the live table and stops on request; telemetry says calmly
    // that this endpoint has no NVML.
    browser.click("#tab-3").await;
    browser.wait_data("telemetry", "state", "no-nvml").await;
    let telemetry = browser.text("[data-testid=telemetry]").await;
    assert!(
        telemetry.contains("(cpu backend): no GPU clocks, power or temperature to show"),
        "telemetry: {telemetry}"
    );
    browser
        .run_benchmark(
            "256x512x512, 512x512x512, 384x512x512, 640x512x512, 768x512x512, 896x512x512",
            "running",
        )
        .await;
    // The job keeps streaming while another tab is open.
    browser.click("#tab-4").await;
    browser.click("#tab-3").await;
    browser
        .wait_for_js(
            "document.querySelectorAll('[data-testid=bench-row]').length > 0",
            WAIT,
        )
        .await;
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=bench-status]').dataset.value;")
            .await,
        "running"
    );
    browser.click("[data-testid=bench-stop]").await;
    browser.wait_data("bench-status", "value", "cancelled").await;
    let (rows, progress, total) = (
        browser.js("return document.querySelectorAll('[data-testid=bench-row]').length;",
        )
        .await,
        browser.js("return parseInt(document.querySelector('[data-testid=bench-progress]').getAttribute('value'));",
        )
        .await,
        browser.js("return parseInt(document.querySelector('[data-testid=bench-progress]').getAttribute('max'));",
        )
        .await,
    );
    assert_eq!(rows, progress, "each streamed point is listed once");
    assert!(
        progress.as_u64() < total.as_u64(),
        "stopped before the end: {progress}/{total}"
    );
    let after_job = measured_count(&browser).await;
    assert!(
        after_job > before,
        "job points join the measured points ({before} → {after_job})"
    );

    // 7. The endpoint dies: the badge and the banner say so within a few seconds, and the page keeps predicting.
    endpoint.stop();
    let gone = Instant::now();
    browser.wait_data("endpoint-status", "value", "offline").await;
    eprintln!(
        "endpoint stopped → badge offline: {:.1} s",
        gone.elapsed().as_secs_f64()
    );
    browser.wait_data("endpoint-banner", "value", "offline").await;
    let tpot = browser
        .js("return parseFloat(document.querySelector('[data-testid=summary-tpot]').dataset.value);")
        .await;
    assert!(tpot.as_f64().is_some_and(|t| t > 0.0), "summary TPOT {tpot}");
    assert_eq!(
        measured_count(&browser).await,
        after_job,
        "saved points stay on the page"
    );
    browser.assert_roofline_drawn().await;

    browser.close().await;
    eprintln!("closed-loop test took {:.1} s", started.elapsed().as_secs_f64());
}

/// Clear really clears: after a confirmation, the points saved in this browser and the endpoint's stored
/// history are deleted, so a reload shows none and the endpoint lists none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_deletes_measured_points_here_and_on_the_endpoint() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser.client.goto(&endpoint.url()).await.unwrap();
    browser.wait_data("endpoint-status", "value", "online").await;
    browser.type_into("[data-testid=spot-m]", "64", "input").await;
    browser.type_into("[data-testid=spot-n]", "256", "input").await;
    browser.type_into("[data-testid=spot-k]", "256", "input").await;
    browser.spot_check("FP32").await;
    // The point is stored on the endpoint too: a reload (history merged in) still shows it.
    browser.client.refresh().await.unwrap();
    browser
        .wait_for_js(
            "parseInt(document.querySelector('[data-testid=measured-count]')?.textContent) > 0",
            WAIT,
        )
        .await;
    let stored = browser
        .js("return fetch('/api/v1/results').then(r => r.json()).then(page => page.results.length);")
        .await;
    assert!(stored.as_u64().is_some_and(|n| n > 0), "stored: {stored}");

    // Declining the confirmation changes nothing; accepting it clears here and on the endpoint.
    browser.js("window.confirm = () => false; return true;").await;
    browser.click(".results-io summary").await;
    browser.click("[data-testid=clear-measured]").await;
    assert!(measured_count(&browser).await > 0, "declined: nothing cleared");
    browser.clear_measured().await;
    browser.client.refresh().await.unwrap();
    browser.wait_data("endpoint-status", "value", "online").await;
    // Give the history fetch time to land, then check the chart holds no measured point.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(measured_count(&browser).await, 0, "cleared after reload");
    let stored = browser
        .js("return fetch('/api/v1/results').then(r => r.json()).then(page => page.results.length);")
        .await;
    assert_eq!(stored, 0, "the endpoint's store is empty");
    browser.close().await;
}
