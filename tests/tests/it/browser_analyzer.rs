//! Real-browser end-to-end tests of the whole-model analyzer: shared links, controls, pins and storage
//! recovery. Every number the page shows is compared with roofline-core's analysis of the same scenario.

use std::time::Duration;

use roofline_core::{
    Corrections, Mode, Phase, Workload, analyze_model, find_hardware, find_model, find_quant_config,
};
use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

/// Core's decode analysis of a scenario in `mode`: (TPOT in s, tokens/s, fits in memory). Reference mode (the
/// page's default) is the reference spec with the realistic corrections, datasheet mode the datasheet spec
/// with none.
fn core_decode(
    mode: Mode,
    hardware: &str,
    model: &str,
    config: &str,
    batch: u32,
    context: u32,
) -> (f64, f64, bool) {
    let datasheet = find_hardware(hardware).unwrap();
    let (spec, corrections) = match mode {
        Mode::Reference => (datasheet.reference().unwrap(), Corrections::REALISTIC),
        Mode::Datasheet => (datasheet.clone(), Corrections::NONE),
        Mode::Calibrated => panic!("this test has no calibration"),
    };
    let workload = Workload {
        phase: Phase::Decode,
        batch,
        context,
    };
    let (model, config) = (find_model(model).unwrap(), find_quant_config(config).unwrap());
    let a = analyze_model(&spec, model, config, &workload, &corrections).unwrap();
    (a.tpot_s.unwrap(), a.tokens_per_s, a.fits_in_memory)
}

/// Waits until the mode badge says `mode`, and returns its text.
async fn assert_badge(browser: &Browser, mode: Mode) -> String {
    let js = format!(
        "document.querySelector('[data-testid=mode-badge]')?.dataset.value === '{}'",
        mode.name()
    );
    browser.wait_for_js(&js, WAIT).await;
    browser.text("[data-testid=mode-badge]").await
}

/// Waits until the summary shows `expected` (TPOT, tokens/s, fit) within a relative 1e-9.
async fn assert_summary(browser: &Browser, expected: (f64, f64, bool)) {
    let (tpot, tokens_per_s, fits) = expected;
    let js = format!(
        "(() => {{ const e = document.querySelector('[data-testid=summary-tpot]');\
           return e && Math.abs(parseFloat(e.dataset.value) - {tpot:e}) <= 1e-9 * {tpot:e}; }})()"
    );
    browser.wait_for_js(&js, WAIT).await;
    let shown: f64 = browser.data_value("summary-tokens-per-s").await.parse().unwrap();
    assert!(
        (shown - tokens_per_s).abs() <= 1e-9 * tokens_per_s,
        "tokens/s {shown} vs core {tokens_per_s}"
    );
    assert_eq!(browser.data_value("summary-memory-fit").await, fits.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_link_controls_pins_and_corrupted_storage() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;

    // 1. A shared link restores the scenario exactly.
    let link = format!(
        "{}/?hw=h100_sxm&model=llama-3.1-70b&cfg=fp8&phase=decode&b=16&s=8192",
        endpoint.url()
    );
    browser.client.goto(&link).await.unwrap();
    let h100_reference = core_decode(Mode::Reference, "h100_sxm", "llama-3.1-70b", "fp8", 16, 8192);
    assert_summary(&browser, h100_reference).await;
    // A link without a mode is in reference mode, and the badge says so with the device.
    let h100 = &find_hardware("h100_sxm").unwrap().name;
    assert_eq!(
        assert_badge(&browser, Mode::Reference).await,
        format!("reference · {h100}")
    );
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
    browser.select("hardware-select", "gb10").await;
    browser.select("model-select", "llama-3.1-8b").await;
    browser.select("config-select", "nvfp4-w4a16").await;
    browser
        .type_into("[data-testid=batch-input]", "8", "change")
        .await;
    let gb10_reference = core_decode(Mode::Reference, "gb10", "llama-3.1-8b", "nvfp4-w4a16", 8, 8192);
    assert_summary(&browser, gb10_reference).await;

    // One click switches to the datasheet bound: core's datasheet numbers, and the badge says so.
    browser.select_mode("datasheet").await;
    let datasheet = core_decode(Mode::Datasheet, "gb10", "llama-3.1-8b", "nvfp4-w4a16", 8, 8192);
    assert!(datasheet.0 < gb10_reference.0, "the ideal bound is faster");
    assert_summary(&browser, datasheet).await;
    let gb10 = &find_hardware("gb10").unwrap().name;
    assert_eq!(
        assert_badge(&browser, Mode::Datasheet).await,
        format!("datasheet · {gb10}")
    );
    let caption = browser.text("[data-testid=operators] caption").await;
    assert!(
        caption.ends_with(&format!("datasheet · {gb10}")),
        "caption: {caption}"
    );
    // The URL follows the scenario, so the same link can be shared.
    let url = browser.settled_url().await;
    let query = url.split_once('?').map_or("", |(_, q)| q);
    for part in [
        "hw=gb10",
        "model=llama-3.1-8b",
        "cfg=nvfp4-w4a16",
        "b=8",
        "s=8192",
        "mode=datasheet",
    ] {
        assert!(query.split('&').any(|p| p == part), "URL {url} lacks {part}");
    }

    // 3. A pin survives a reload.
    browser.click("[data-testid=pin-current]").await;
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
        .set_storage("localStorage.setItem('roofline.state', '{not json')")
        .await;
    browser.client.goto(&link).await.unwrap();
    browser.element("[data-testid=storage-notice]").await;
    assert_summary(&browser, h100_reference).await;
    browser.assert_roofline_drawn().await;

    browser.close().await;
}

/// Text of every pin row.
async fn pin_rows(browser: &Browser) -> serde_json::Value {
    browser
        .client
        .execute(
            "return [...document.querySelectorAll('[data-testid=pins] tbody tr')].map(r => r.textContent);",
            vec![],
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_link_carries_custom_devices_and_pins_and_unknown_keys_say_so() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&phase=decode&b=4&s=2048",
        )
        .await;

    // 1. A custom device (an H100 at half the bandwidth) is imported and selected, a pin is taken, the batch
    // changes.
    let mut spec = find_hardware("h100_sxm").unwrap().clone();
    spec.key = "my_h100".into();
    spec.name = "My H100 (half bandwidth)".into();
    spec.dram_bandwidth_bytes_per_s /= 2.0;
    spec.provenance = roofline_core::Provenance::Custom;
    let json = serde_json::to_string(&spec).unwrap();
    browser.add_custom_device(&json, "my_h100").await;
    browser.click("[data-testid=pin-current]").await;
    browser
        .type_into("[data-testid=batch-input]", "8", "change")
        .await;
    let expected = core_on(&spec, 8);
    browser
        .wait_for_js(
            &format!(
                "Math.abs(parseFloat(document.querySelector('[data-testid=summary-tpot]').dataset.value) - {expected:e}) <= 1e-9 * {expected:e}"
            ),
            WAIT,
        )
        .await;
    let tpot = browser.data_value("summary-tpot").await;
    let pins = pin_rows(&browser).await;
    // Pins name the device, not its key.
    assert!(pins.to_string().contains(&spec.name), "pins: {pins}");
    let link = browser.settled_url().await;
    assert!(link.contains("dev="), "the link carries the device: {link}");
    browser.close().await;

    // 2. A fresh profile opens the link identically: the same device, numbers and pins, no notice.
    let fresh = Browser::start().await;
    fresh.client.goto(&link).await.unwrap();
    fresh
        .wait_for_js(
            "document.querySelector('[data-testid=hardware-select]')?.value === 'my_h100'",
            WAIT,
        )
        .await;
    fresh
        .wait_for_js(
            &format!("document.querySelector('[data-testid=summary-tpot]')?.dataset.value === '{tpot}'"),
            WAIT,
        )
        .await;
    assert_eq!(pin_rows(&fresh).await, pins);
    let notices = fresh
        .client
        .execute(
            "return document.querySelectorAll('[data-testid=unknown-device], [data-testid=storage-notice], [data-testid=mode-notice]').length;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(notices, 0);

    // Removing the custom device falls back visibly to the default device, never to a blank list.
    fresh.click(".custom-hw summary").await;
    fresh.click(".custom-hw .row button:nth-child(4)").await;
    fresh
        .wait_for_js(
            "document.querySelector('[data-testid=hardware-select]')?.value === 'gb10'",
            WAIT,
        )
        .await;
    let said = fresh
        .element(".custom-hw [role=status]")
        .await
        .text()
        .await
        .unwrap();
    assert!(said.starts_with("Removed 'my_h100'; now showing"), "{said}");

    // 3. An unknown key opens with a visible notice naming it; the select shows it, not another device.
    fresh
        .client
        .goto(&format!("{}/?hw=no_such_gpu&model=llama-3.1-8b", endpoint.url()))
        .await
        .unwrap();
    let notice = fresh.element("[data-testid=unknown-device]").await;
    assert_eq!(
        notice.attr("data-value").await.unwrap().as_deref(),
        Some("no_such_gpu")
    );
    assert!(notice.is_displayed().await.unwrap());
    let selected = fresh
        .client
        .execute(
            "const s = document.querySelector('[data-testid=hardware-select]'); return s.options[s.selectedIndex].textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(selected, "unknown device: no_such_gpu");
    fresh.close().await;
}

/// Core's reference-mode decode TPOT of llama-3.1-8b BF16 at context 2048 on a custom spec.
fn core_on(spec: &roofline_core::HardwareSpec, batch: u32) -> f64 {
    let workload = Workload {
        phase: Phase::Decode,
        batch,
        context: 2048,
    };
    let (model, config) = (
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config("bf16").unwrap(),
    );
    analyze_model(
        &spec.reference().unwrap(),
        model,
        config,
        &workload,
        &Corrections::REALISTIC,
    )
    .unwrap()
    .tpot_s
    .unwrap()
}
