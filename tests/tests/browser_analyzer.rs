//! Real-browser end-to-end tests of the whole-model analyzer: shared links, controls, pins and storage
//! recovery. Every number the page shows is compared with roofline-core's analysis of the same scenario.

use std::time::Duration;

use roofline_core::{
    Corrections, Phase, Workload, analyze_model, find_hardware, find_model, find_quant_config,
};
use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

/// Core's decode analysis of a scenario with no corrections: (TPOT in s, tokens/s, fits in memory).
fn core_decode(hardware: &str, model: &str, config: &str, batch: u32, context: u32) -> (f64, f64, bool) {
    let a = analyze_model(
        find_hardware(hardware).unwrap(),
        find_model(model).unwrap(),
        find_quant_config(config).unwrap(),
        &Workload {
            phase: Phase::Decode,
            batch,
            context,
        },
        &Corrections::NONE,
    )
    .unwrap();
    (a.tpot_s.unwrap(), a.tokens_per_s, a.fits_in_memory)
}

async fn data_value(browser: &Browser, testid: &str) -> String {
    let el = browser.element(&format!("[data-testid={testid}]")).await;
    el.attr("data-value")
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{testid} has no data-value"))
}

/// Waits until the summary shows `expected` (TPOT, tokens/s, fit) within a relative 1e-9.
async fn assert_summary(browser: &Browser, expected: (f64, f64, bool)) {
    let (tpot, tokens_per_s, fits) = expected;
    let js = format!(
        "(() => {{ const e = document.querySelector('[data-testid=summary-tpot]');\
           return e && Math.abs(parseFloat(e.dataset.value) - {tpot:e}) <= 1e-9 * {tpot:e}; }})()"
    );
    browser.wait_for_js(&js, WAIT).await;
    let shown: f64 = data_value(browser, "summary-tokens-per-s").await.parse().unwrap();
    assert!(
        (shown - tokens_per_s).abs() <= 1e-9 * tokens_per_s,
        "tokens/s {shown} vs core {tokens_per_s}"
    );
    assert_eq!(data_value(browser, "summary-memory-fit").await, fits.to_string());
}

async fn select(browser: &Browser, testid: &str, value: &str) {
    browser
        .element(&format!("[data-testid={testid}]"))
        .await
        .select_by_value(value)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_link_controls_pins_and_corrupted_storage() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start(&[]);
    let browser = Browser::start().await;

    // 1. A shared link restores the scenario exactly.
    let link = format!(
        "{}/?hw=h100_sxm&model=llama-3.1-70b&cfg=fp8&phase=decode&b=16&s=8192",
        endpoint.url()
    );
    browser.client.goto(&link).await.unwrap();
    assert_summary(
        &browser,
        core_decode("h100_sxm", "llama-3.1-70b", "fp8", 16, 8192),
    )
    .await;
    let hw = browser
        .element("[data-testid=hardware-select]")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(hw.as_deref(), Some("h100_sxm"));
    let batch = browser
        .element("[data-testid=batch-input]")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(batch.as_deref(), Some("16"));

    // 2. Changing hardware, model, config and batch in the page gives core's numbers.
    select(&browser, "hardware-select", "gb10").await;
    select(&browser, "model-select", "llama-3.1-8b").await;
    select(&browser, "config-select", "nvfp4-w4a16").await;
    let set_batch = "const e = document.querySelector('[data-testid=batch-input]'); e.value = '8';\
                     e.dispatchEvent(new Event('change', { bubbles: true })); return true;";
    browser.client.execute(set_batch, vec![]).await.unwrap();
    assert_summary(
        &browser,
        core_decode("gb10", "llama-3.1-8b", "nvfp4-w4a16", 8, 8192),
    )
    .await;
    // The URL follows the scenario, so the same link can be shared.
    let url = browser.client.current_url().await.unwrap();
    let query = url.query().unwrap_or_default();
    for part in [
        "hw=gb10",
        "model=llama-3.1-8b",
        "cfg=nvfp4-w4a16",
        "b=8",
        "s=8192",
    ] {
        assert!(query.split('&').any(|p| p == part), "URL {url} lacks {part}");
    }

    // 3. A pin survives a reload.
    browser
        .element("[data-testid=pin-current]")
        .await
        .click()
        .await
        .unwrap();
    browser
        .wait_for_js(
            "document.querySelectorAll('[data-testid=pins] tbody tr').length >= 2",
            WAIT,
        )
        .await;
    browser.client.refresh().await.unwrap();
    browser
        .wait_for_js(
            "document.querySelectorAll('[data-testid=pins] tbody tr').length >= 2",
            WAIT,
        )
        .await;

    // 4. A corrupted saved state shows the notice and the page still predicts.
    browser
        .client
        .execute(
            "localStorage.setItem('roofline.state', '{not json'); return true;",
            vec![],
        )
        .await
        .unwrap();
    browser.client.goto(&link).await.unwrap();
    browser.element("[data-testid=storage-notice]").await;
    assert_summary(
        &browser,
        core_decode("h100_sxm", "llama-3.1-70b", "fp8", 16, 8192),
    )
    .await;
    assert!(
        browser
            .non_background_pixels("[data-testid=roofline-canvas]")
            .await
            > 2000
    );

    browser.close().await;
}
