//! Real-browser end-to-end tests of the built page (`dist/`), served by a real `gpu-endpoint` process on
//! loopback and driven through headless Chromium. The page's numbers are compared with roofline-core's.

use std::time::Duration;

use roofline_core::{Operator, Precision, find_hardware, predict};
use roofline_tests::{Endpoint, browser::Browser, require_browser};

/// The default kernel scenario of the page: GB10, GEMV 1×4096×4096, FP16.
fn gb10_fp16_gemv_time_us() -> f64 {
    let op = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
    predict(find_hardware("gb10").unwrap(), &op).unwrap().time_s * 1e6
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_draws_the_roofline_and_shows_core_predictions() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start(&[]);
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
    assert!(
        browser
            .non_background_pixels("[data-testid=roofline-canvas]")
            .await
            > 2000
    );

    // 33,570,816 B / 273 GB/s = 122.970 µs (roofline-core computes it independently of the page).
    let cell = browser
        .element("[data-testid=predictions] [data-precision=FP16] [data-testid=time-us]")
        .await;
    let shown: f64 = cell
        .text()
        .await
        .unwrap()
        .trim()
        .replace(',', "")
        .parse()
        .expect("a number in µs");
    let expected = gb10_fp16_gemv_time_us();
    assert!((expected - 122.970).abs() < 1e-3);
    assert!(
        (shown - expected).abs() < 1e-3,
        "page shows {shown} µs, core says {expected} µs"
    );

    browser.close().await;
}
