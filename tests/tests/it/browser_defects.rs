//! Real-browser tests of the defects issue 36 lists from earlier audits, each at the width it showed at
//! (1440 px, the right panel 440 px wide): Apple M4 Max's BF16 is a missing figure, not a missing path; the
//! Validation tab's headers keep their words whole and it does not say "no measured points" beside points
//! measured elsewhere; a step measured in a precision the CPU endpoint cannot run says why in words; the
//! Advisor offers the fewest GPUs a config fits on when nothing fits; the Formats detail opens in view; and
//! the page's structure: one h1 with h2 per region, a skip link, focusable charts, bound labels that do not
//! look like links.

use std::time::Duration;

use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn earlier_audit_defects_are_fixed_at_1440() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser.client.set_window_size(1440, 900).await.unwrap();

    // Apple M4 Max: the architecture runs BF16 (Metal's bfloat); only Apple's figure for it is missing.
    browser.open(&endpoint.url(), "hw=apple_m4_max&p=BF16,FP16").await;
    let bf16 = browser
        .text("[data-testid=predictions] tr[data-precision=BF16] [data-testid=failure]")
        .await;
    assert!(
        bf16.starts_with("no published BF16 figure in the catalog") && !bf16.contains("no BF16 path"),
        "{bf16}"
    );

    // Structure: one h1, a heading per region, a skip link to the results, the chart focusable, and the
    // bound column in the text's colour (a dot carries the colour), not a link's blue.
    browser.open(&endpoint.url(), "hw=h100_sxm").await;
    browser
        .wait_for_js("window.__roofline_draw_count >= 1", WAIT)
        .await;
    let structure = browser
        .js("const skip = document.querySelector('[data-testid=skip-link]');\
             const bound = document.querySelector('[data-testid=predictions] td.bound');\
             return [document.querySelectorAll('h1').length, document.querySelectorAll('h2').length,\
               skip === document.querySelector('a, button, input, select, [tabindex]'),\
               !!document.querySelector(skip.getAttribute('href')),\
               document.querySelector('[data-testid=roofline-canvas]').tabIndex,\
               getComputedStyle(bound).color === getComputedStyle(document.body).color];")
        .await;
    assert_eq!(
        structure,
        serde_json::json!([1, 3, true, true, 0, true]),
        "[h1, h2, skip first, target, canvas tabindex, bound colour]"
    );

    // The Validation tab beside points measured on another device: its headers are whole words on one line,
    // and it names the device with no points instead of saying there are none.
    browser.wait_data("endpoint-status", "value", "online").await;
    browser.spot_check("FP32").await;
    browser.click("#tab-4").await;
    browser.element("[data-testid=validation-other-note]").await;
    let empty = browser.text("[data-testid=validation-empty]").await;
    assert!(empty.starts_with("No point measured on NVIDIA H100"), "{empty}");
    let headers = browser
        .js(
            "return [...document.querySelectorAll('[data-testid=validation-table] thead th')].map(th => {\
               const line = parseFloat(getComputedStyle(th).lineHeight) || 20;\
               const r = document.createRange(); r.selectNodeContents(th);\
               return [th.textContent, r.getClientRects().length <= 1 && th.clientHeight < 2.5 * line]; });",
        )
        .await;
    for h in headers.as_array().unwrap() {
        assert_eq!(h[1], true, "header {} breaks inside its word", h[0]);
    }

    // The Formats detail opens where it can be read.
    browser.click("#tab-2").await;
    browser
        .click("[data-testid=formats] tr:last-child button.link")
        .await;
    let top = browser
        .wait_for_js(
            "(() => { const r = document.querySelector('[data-testid=format-detail]').getBoundingClientRect();\
             return r.top >= 0 && r.top < window.innerHeight ? r.top + 1 : null; })()",
            WAIT,
        )
        .await;
    assert!(top.as_f64().is_some(), "{top}");

    // Llama-3.1-405B in BF16 fits no single H100: the Advisor offers the fewest GPUs a config fits on, and
    // its button takes them.
    browser
        .open(&endpoint.url(), "hw=h100_sxm&model=llama-3.1-405b&cfg=bf16")
        .await;
    let offer = browser
        .element("[data-testid=summary-box] [data-testid=fit-offer]")
        .await;
    let gpus = offer.attr("data-gpus").await.unwrap().unwrap();
    assert!(gpus.parse::<u32>().unwrap() > 1, "{gpus}");
    browser
        .click("[data-testid=summary-box] [data-testid=fit-use-gpus]")
        .await;
    browser
        .wait_for_js(
            &format!("document.querySelector('[data-testid=gpus-select]').value === '{gpus}'"),
            WAIT,
        )
        .await;

    // A BF16 step on the CPU endpoint, which measures no BF16: why, in words, beside "0 measured".
    browser
        .open(&endpoint.url(), "model=tinyllama-1.1b&cfg=bf16")
        .await;
    browser.wait_data("endpoint-status", "value", "online").await;
    browser.measure_step(Duration::from_secs(300)).await;
    let why = browser.text("[data-testid=step-failures] li").await;
    assert!(
        why.contains("operator(s) not measured: ") && why.contains("BF16"),
        "{why}"
    );
    browser.close().await;
}
