//! Real-browser checks of the page's finish: "unsupported" (no such path on the architecture) is told apart
//! from "unknown" (no published figure), invalid inputs are marked with their reason, extremes print in
//! scientific notation, the PNG export is at device pixel ratio ≥ 2, the phone layout fits 390 px, and the
//! endpoint badge's green meets WCAG AA contrast.

use std::time::Duration;

use roofline_core::{Precision, catalog};
use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

/// The WCAG relative-luminance contrast of two `rgb(r, g, b)` strings.
fn contrast(a: &str, b: &str) -> f64 {
    let luminance = |c: &str| {
        let v: Vec<f64> = c
            .trim_start_matches("rgba(")
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .take(3)
            .map(|v| v.trim().parse::<f64>().unwrap() / 255.0)
            .map(|s| {
                if s <= 0.039_28 {
                    s / 12.92
                } else {
                    ((s + 0.055) / 1.055).powf(2.4)
                }
            })
            .collect();
        0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]
    };
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_unknown_invalid_inputs_formats_png_phone_and_contrast() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;

    // 1. Unsupported vs unknown: a device whose architecture has the path but whose catalog row has no figure
    // says "no published … figure"; a path the architecture lacks says "unsupported".
    let missing = catalog()
        .iter()
        .flat_map(|h| Precision::ALL.into_iter().map(move |p| (h, p)))
        .find(|(h, p)| h.arch.runs_format(*p) && h.peak(p.compute_path()).is_none())
        .expect("a catalog device without a published figure for a path it has");
    let (hw, unknown) = (missing.0.key.clone(), missing.1);
    let unsupported = Precision::ALL
        .into_iter()
        .find(|p| !missing.0.arch.runs_format(*p) && !p.is_storage_only())
        .expect("a precision the architecture lacks");
    browser
        .client
        .goto(&format!(
            "{}/?hw={hw}&p={},{}&m=1&n=4096&k=4096",
            endpoint.url(),
            unknown.name(),
            unsupported.name()
        ))
        .await
        .unwrap();
    let failure = |p: Precision| {
        format!(
            "[data-testid=predictions] tr[data-precision='{}'] [data-testid=failure]",
            p.name()
        )
    };
    let text = browser.element(&failure(unknown)).await.text().await.unwrap();
    assert!(text.starts_with("no published"), "{hw} {unknown}: {text}");
    let text = browser.element(&failure(unsupported)).await.text().await.unwrap();
    assert!(text.starts_with("unsupported on"), "{hw} {unsupported}: {text}");

    // 2. Invalid inputs: batch −5 and M = 0 are marked invalid with the reason, and say which value is still
    // used; the previous value is kept visibly, not silently.
    browser.open(&endpoint.url(), "hw=h100_sxm&b=8&m=16").await;
    browser
        .type_into("[data-testid=batch-input]", "-5", "change")
        .await;
    let reason = browser.text("[data-testid=batch-input-invalid]").await;
    assert_eq!(reason, "Invalid: must be at least 1; still showing 8");
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=batch-input]').getAttribute('aria-invalid');")
            .await,
        "true"
    );
    browser
        .js(
            "const e = document.querySelector('[data-testid=spot-m]'); e.value = '0';\
         e.dispatchEvent(new Event('input', { bubbles: true })); return true;",
        )
        .await;
    let reason = browser.text("[data-testid=spot-m-invalid]").await;
    assert_eq!(reason, "M must be at least 1; still using 16");

    // 3. The Formats tab prints the largest FP64 value in scientific notation, not 309 digits.
    browser.click("#tab-2").await;
    browser
        .wait_for_js("document.body.innerText.includes('1.80e308')", WAIT)
        .await;
    let long_numbers = browser.js("return [...document.querySelectorAll('td, dd')].map(e => e.textContent).filter(t => /\\d{16,}/.test(t));",
    )
    .await;
    assert_eq!(long_numbers, serde_json::json!([]), "numbers printed in full");

    // 4. PNG export at device pixel ratio ≥ 2, with room for the caption under the chart.
    let css = browser.js("const c = document.querySelector('[data-testid=roofline-canvas]'); return [c.clientWidth, c.clientHeight];",
    )
    .await;
    browser.click("[data-testid=png-export]").await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=png-export]').dataset.width",
            WAIT,
        )
        .await;
    let size = browser.js("const b = document.querySelector('[data-testid=png-export]'); return [parseInt(b.dataset.width), parseInt(b.dataset.height)];",
    )
    .await;
    let (w, h) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
    assert!(
        w >= 2.0 * css[0].as_f64().unwrap(),
        "PNG {w}×{h} for a {css} chart"
    );
    assert!(h > 2.0 * css[1].as_f64().unwrap(), "PNG {w}×{h}: caption strip");

    // The marker shapes have a legend.
    let legend = browser.text("[data-testid=marker-legend]").await;
    for shape in ["● matmul", "◆ attention", "○ measured"] {
        assert!(legend.contains(shape), "marker legend: {legend}");
    }

    // 5. The endpoint badge's green meets WCAG AA (4.5:1) on its background.
    browser.wait_data("endpoint-status", "value", "online").await;
    let colours = browser.js("const b = document.querySelector('[data-testid=endpoint-status]');\
         let bg = getComputedStyle(b).backgroundColor, e = b;\
         while ((bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent') && e.parentElement) { e = e.parentElement; bg = getComputedStyle(e).backgroundColor; }\
         return [getComputedStyle(b).color, bg];",
    )
    .await;
    let ratio = contrast(colours[0].as_str().unwrap(), colours[1].as_str().unwrap());
    assert!(ratio >= 4.5, "badge contrast {ratio:.2}:1 ({colours})");

    // 6. Phone (390 px): nothing wider than the viewport, the chart spans the width, its legend is below it.
    browser.client.set_window_size(390, 844).await.unwrap();
    browser.client.refresh().await.unwrap();
    browser.element("[data-testid=roofline-canvas]").await;
    browser
        .wait_for_js(
            // The roof legend is listed outside the plot, visible and clear of the canvas.
            "(() => { const l = document.querySelector('[data-testid=roof-legend]'); \
               const c = document.querySelector('[data-testid=roofline-canvas]').getBoundingClientRect(); \
               if (!l || l.offsetParent === null || !l.querySelector('li')) return false; \
               const r = l.getBoundingClientRect(); \
               return r.top >= c.bottom || r.left >= c.right; })()",
            WAIT,
        )
        .await;
    let (scroll, inner, chart) = browser.widths("[data-testid=roofline-canvas]").await;
    assert!(
        scroll <= inner + 1.0,
        "page {scroll} px wide in a {inner} px window"
    );
    assert!(chart >= 0.8 * inner, "chart {chart} px in a {inner} px window");

    browser.close().await;
}

/// Offline and installable: a manifest is linked, and once the page has been opened, it reloads and predicts
/// with the server stopped (the service worker's copy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_reloads_and_predicts_with_the_server_stopped() {
    if !require_browser() {
        return;
    }
    let mut endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser
        .open(&endpoint.url(), "hw=h100_sxm&model=llama-3.1-8b&cfg=fp8")
        .await;
    let manifest = browser.js("return fetch(document.querySelector('link[rel=manifest]').href).then(r => r.json()).then(m => m.name);",
    )
    .await;
    assert!(
        manifest.as_str().is_some_and(|n| n.starts_with("roofline")),
        "manifest {manifest}"
    );
    browser
        .wait_for_js("navigator.serviceWorker.controller !== null", WAIT)
        .await;
    browser
        .wait_for_js(
            "(async () => { const k = await (await caches.open('roofline-v1')).keys(); \
               return k.some(r => r.url.endsWith('.wasm')) && k.some(r => r.url.endsWith('.js')); })()",
            WAIT,
        )
        .await;
    let online_tpot = browser
        .js("return document.querySelector('[data-testid=summary-tpot]').dataset.value;")
        .await;

    endpoint.stop();
    browser.client.refresh().await.unwrap();
    browser
        .wait_for_js(
            &format!("document.querySelector('[data-testid=summary-tpot]')?.dataset.value === {online_tpot}"),
            WAIT,
        )
        .await;
    browser.assert_roofline_drawn().await;
    browser.close().await;
}

/// A CPU endpoint has no NVML (its device info says so): the telemetry tab says so and never polls
/// `/nvml/status`, where polling every 2 s would have asked 4 times in 8 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_endpoint_is_never_polled_for_nvml() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser.client.goto(&endpoint.url()).await.unwrap();
    browser.click("#tab-3").await;
    browser.wait_data("telemetry", "state", "no-nvml").await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let polls = browser.js("return performance.getEntriesByType('resource').filter(e => e.name.includes('/nvml/status')).length;",
    )
    .await;
    assert_eq!(polls.as_u64(), Some(0), "{polls} NVML polls in 8 s");
    browser.close().await;
}
