//! Real-browser end-to-end tests of the built page (`dist/`), served by an in-process `gpu-endpoint` on
//! loopback and driven through headless Chromium. The page's numbers are compared with roofline-core's.

use std::time::Duration;

use roofline_core::{Corrections, HardwareSpec, Mode, Operator, Precision, analyze_operator, find_hardware};
use roofline_tests::{Endpoint, browser::Browser, require_browser};

/// The default kernel scenario of the page (GB10, GEMV 1×4096×4096, FP16) on `spec` with its mode's
/// corrections (reference: the matrix kernel floor), in µs.
fn fp16_gemv_us(spec: &HardwareSpec) -> f64 {
    let op = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
    let corrections = Corrections::for_mode(Mode::of(spec));
    analyze_operator(spec, &op, &corrections).unwrap().time_s * 1e6
}

/// Waits until the kernel table's FP16 time (`data-value`, seconds; the text is in an adaptive unit) is
/// `expected` µs to 1e-9 relative.
async fn assert_fp16_time(browser: &Browser, expected: f64) {
    let seconds = expected * 1e-6;
    let js = format!(
        "Math.abs(parseFloat(document.querySelector('[data-testid=predictions] [data-precision=FP16] \
           [data-testid=time-us]')?.dataset.value) - {seconds:e}) <= 1e-9 * {seconds:e}"
    );
    browser.wait_for_js(&js, Duration::from_secs(30)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_draws_the_roofline_and_shows_core_predictions() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser.client.goto(&endpoint.url()).await.unwrap();

    browser.element("[data-testid=roofline-canvas]").await;
    // The canvas is drawn once the WASM has run: wait for a few thousand non-background pixels
    // (axes, slope, ceilings, points; an empty canvas has 0).
    let drawn = browser
        .wait_for_js(
            "(() => { const c = document.querySelector('[data-testid=roofline-canvas]');\
               const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;\
               for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i]-d[0]) + Math.abs(d[i+1]-d[1]) + Math.abs(d[i+2]-d[2]) > 24) n++;\
               return n > 2000 ? n : 0; })()",
            Duration::from_secs(30),
        )
        .await;
    assert!(drawn.as_u64().unwrap() > 2000, "canvas drawn: {drawn}");
    browser.assert_roofline_drawn().await;

    // The default mode is reference: GB10's achievable bandwidth plus the 5 µs matrix-kernel floor.
    let gb10 = find_hardware("gb10").unwrap();
    let badge = browser.element("[data-testid=mode-badge]").await;
    assert_eq!(
        badge.attr("data-value").await.unwrap().as_deref(),
        Some("reference")
    );
    assert_eq!(badge.text().await.unwrap(), format!("reference · {}", gb10.name));
    let reference = fp16_gemv_us(&gb10.reference().unwrap());
    assert_fp16_time(&browser, reference).await;
    browser.element("[data-testid=reference-ceilings]").await;

    // One click to the datasheet bound: 33,570,816 B / 273 GB/s = 122.970 µs (roofline-core computes it
    // independently of the page).
    browser.select_mode("datasheet").await;
    let datasheet = fp16_gemv_us(gb10);
    assert!((datasheet - 122.970).abs() < 1e-3);
    assert!(
        reference > datasheet + 5.0,
        "reference {reference} µs, datasheet {datasheet} µs"
    );
    assert_fp16_time(&browser, datasheet).await;
    browser
        .wait_for_js(
            "!document.querySelector('[data-testid=reference-ceilings]')",
            Duration::from_secs(30),
        )
        .await;
    let caption = browser.text("[data-testid=predictions] caption").await;
    assert!(
        caption.ends_with(&format!("datasheet · {}", gb10.name)),
        "caption: {caption}"
    );
    browser.assert_roofline_drawn().await;

    browser.close().await;
}
