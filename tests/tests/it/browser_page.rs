//! Real-browser tests of the page work of issue 26 (items 1–7): a first view that answers (a config the
//! device cannot run shows the recommended config's numbers, with Apply and Undo; the default page predicts;
//! the advisor's headline in the summary), tables that scroll in their own box with no page-level sideways
//! scroll from 320 to 1920 px and "not compared" as one spanning row with its action, a chart whose legend is
//! beside the plot with point toggles and a usable phone layout, every rendered number under its mode and
//! device, calibration with its median, spread and age, and the usable memory in GiB as the device reports
//! it under the engine's memory fraction (kept in the share link).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use roofline_core::units::GIB;
use roofline_core::{Precision, VLLM_GPU_MEMORY_UTILIZATION, find_hardware, find_quant_config};
use roofline_tests::{Endpoint, browser::Browser, require_browser};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(30);

/// The widths the page must fit without sideways scroll (issue 26, item 2): the narrowest phone, a common
/// phone, a small tablet, a laptop and a full-HD desktop.
const WIDTHS: [u32; 5] = [320, 390, 800, 1440, 1920];

/// The walk over the rendered number containers: every visible element with a numeric `data-value` or a
/// `data-ideal`, every summary figure (`.stat-value`) and every numeric table cell (`td.num`). Form controls
/// (their `data-value` is a setting, not a result) are not numbers shown, and neither are the Formats tab's
/// (`formats`, `format-detail`: bits, levels and ranges of a number format, the same on every device and in
/// every mode). Returns how many it checked and those whose own or an ancestor's `data-mode` or
/// `data-device` is missing or empty, each as its test id or class and its text.
const NUMBER_WALK: &str = "const numbers = [...document.querySelectorAll('[data-value], [data-ideal], .stat-value, td.num')]
  .filter(e => e.getClientRects().length > 0 && !e.closest('input, select, option, button, label')
    && !e.closest('[data-testid=formats], [data-testid=format-detail]'))
  .filter(e => !e.hasAttribute('data-value') || e.matches('.stat-value, td.num, [data-ideal]')
    || (e.dataset.value !== '' && Number.isFinite(Number(e.dataset.value))));
return [numbers.length, numbers
  .filter(e => !e.closest('[data-mode]:not([data-mode=\"\"])') || !e.closest('[data-device]:not([data-device=\"\"])'))
  .map(e => (e.dataset.testid || e.className || e.tagName) + ': ' + e.textContent.trim().slice(0, 60))];";

/// An in-process CPU endpoint and a browser at 1440 × 900 px, or `None` when a browser test cannot run here
/// (outside CI; in CI it fails).
pub(crate) async fn start() -> Option<(Endpoint, Browser)> {
    if !require_browser() {
        return None;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    resize(&browser, 1440, 900).await;
    Some((endpoint, browser))
}

/// Resizes the window to `width` × `height` CSS pixels and waits until the page sees it.
pub(crate) async fn resize(browser: &Browser, width: u32, height: u32) {
    browser.client.set_window_size(width, height).await.unwrap();
    browser
        .wait_for_js(&format!("window.innerWidth === {width}"), WAIT)
        .await;
}

/// The `data-value` of `testid` as a number, once it is one.
async fn number(browser: &Browser, testid: &str) -> f64 {
    browser
        .wait_for_js(
            &format!(
                "(v => v !== '' && Number.isFinite(Number(v)) ? Number(v) : null)\
                 (document.querySelector('[data-testid={testid}]')?.dataset.value ?? '')"
            ),
            WAIT,
        )
        .await
        .as_f64()
        .unwrap_or_else(|| panic!("{testid} has no number"))
}

/// The points the roofline draws (`roofline-canvas`'s `data-points`).
async fn drawn_points(browser: &Browser) -> u64 {
    let count = browser
        .wait_for_js(
            "(v => /^[0-9]+$/.test(v) ? [Number(v)] : null)\
             (document.querySelector('[data-testid=roofline-canvas]')?.dataset.points ?? '')",
            WAIT,
        )
        .await;
    count[0].as_u64().expect("data-points is a count")
}

/// Clicks the point toggle `points-<kind>` and waits for the drawn count to change from `before`; returns
/// the new count.
async fn toggle_points(browser: &Browser, kind: &str, before: u64) -> u64 {
    browser.click(&format!("[data-testid=points-{kind}]")).await;
    browser
        .wait_for_js(
            &format!(
                "Number(document.querySelector('[data-testid=roofline-canvas]').dataset.points) !== {before}"
            ),
            WAIT,
        )
        .await;
    drawn_points(browser).await
}

/// Asserts that every rendered number container says its mode and device, on each right-panel tab in turn,
/// and that the walk met at least `minimum` numbers (so that it is not vacuous).
async fn assert_every_number_labelled(browser: &Browser, context: &str, minimum: u64) {
    let mut checked = 0;
    for tab in 0..5 {
        browser.click(&format!("#tab-{tab}")).await;
        browser
            .wait_for_js(
                &format!("document.querySelector('#tab-{tab}').getAttribute('aria-selected') === 'true'"),
                WAIT,
            )
            .await;
        let walk = browser.js(NUMBER_WALK).await;
        assert_eq!(
            walk[1],
            serde_json::json!([]),
            "{context}, tab {tab}: numbers without their mode and device"
        );
        checked += walk[0].as_u64().unwrap();
    }
    assert!(
        checked >= minimum,
        "{context}: {checked} numbers walked, expected ≥ {minimum}"
    );
}

/// Items 1 and 4: the first view answers (the default page predicts; a config the device cannot run shows
/// the recommended config's numbers with a reason, Apply and Undo; the advisor's headline is in the summary),
/// the ideal bound beside the reference prediction, "8 GPUs (TP 8, EP 8)" and no communication cell on one
/// GPU, and the walk over every rendered number container (at 1440 and 390 px), which is shown to catch an
/// unlabelled one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_view_answers_and_every_number_says_its_mode_and_device() {
    let started = Instant::now();
    let Some((endpoint, browser)) = start().await else {
        return;
    };

    // 1. A fresh profile's default page shows numbers, not an error, and the advisor's headline.
    browser.client.goto(&endpoint.url()).await.unwrap();
    assert!(number(&browser, "summary-step-time").await > 0.0);
    let state = browser.js("return [!!document.querySelector('[data-testid=analysis-error]'), !!document.querySelector('[data-testid=summary-fallback]')];").await;
    assert_eq!(
        state,
        serde_json::json!([false, false]),
        "default page: [error, fallback]"
    );
    let advice = browser
        .text("[data-testid=summary-box] [data-testid=summary-advice]")
        .await;
    assert!(advice.starts_with("Advisor:"), "summary advice: {advice}");

    // 2. Hopper has no FP4 path: NVFP4 W4A4 on an H100 shows the recommended config's full prediction with
    // why, naming the device and the configs by name, never an empty box.
    let h100 = find_hardware("h100_sxm").unwrap();
    let nvfp4 = find_quant_config("nvfp4-w4a4").unwrap();
    browser
        .open(&endpoint.url(), "hw=h100_sxm&model=llama-3.1-8b&cfg=nvfp4-w4a4")
        .await;
    let fallback = browser.element("[data-testid=summary-fallback]").await;
    let recommended = fallback.attr("data-config").await.unwrap().expect("data-config");
    let recommended_name = find_quant_config(&recommended).unwrap().name.clone();
    let reason = fallback.text().await.unwrap();
    for part in [
        nvfp4.name.as_str(),
        h100.name.as_str(),
        "Hopper",
        recommended_name.as_str(),
    ] {
        assert!(reason.contains(part), "fallback reason lacks {part:?}: {reason}");
    }
    assert_ne!(recommended, "nvfp4-w4a4");
    let shown = number(&browser, "summary-step-time").await;
    assert!(number(&browser, "summary-tpot").await > 0.0);

    // Apply switches the config, and the scenario's own numbers are those the fallback showed; Undo
    // restores the config the device cannot run, and its fallback.
    browser.click("[data-testid=fallback-apply]").await;
    browser
        .wait_for_js(
            &format!("document.querySelector('[data-testid=config-select]').value === '{recommended}'"),
            WAIT,
        )
        .await;
    browser
        .wait_for_js(
            "!document.querySelector('[data-testid=summary-fallback]') && !!document.querySelector('[data-testid=undo-apply]')",
            WAIT,
        )
        .await;
    assert_eq!(number(&browser, "summary-step-time").await, shown);
    let url = browser.settled_url().await;
    assert!(url.contains(&format!("cfg={recommended}")), "{url}");
    browser.click("[data-testid=undo-apply] button").await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=config-select]').value === 'nvfp4-w4a4'",
            WAIT,
        )
        .await;
    browser.element("[data-testid=summary-fallback]").await;

    // Back walks discrete steps. A batch typed just before a config change (a continuous change, written to
    // the URL once changes pause) goes into the entry the change leaves, so Back restores the config the
    // change left with that batch.
    browser
        .type_into("[data-testid=batch-input]", "24", "change")
        .await;
    browser.select("config-select", "bf16").await;
    let url = browser.settled_url().await;
    assert!(url.contains("cfg=bf16") && url.contains("b=24"), "{url}");
    browser.js("history.back(); return true;").await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=config-select]').value === 'nvfp4-w4a4' \
             && document.querySelector('[data-testid=batch-input]').value === '24'",
            WAIT,
        )
        .await;
    let url = browser.settled_url().await;
    assert!(url.contains("cfg=nvfp4-w4a4") && url.contains("b=24"), "{url}");

    // 3. The ideal bound beside the reference prediction: the reference ceilings are fractions (≤ 1) of the
    // datasheet's figures plus per-kernel floors, so the ideal is never slower, and it is the datasheet
    // mode's own prediction of the same step.
    let scenario = "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&phase=decode&b=8&s=4096";
    browser
        .open(&endpoint.url(), &format!("{scenario}&mode=reference"))
        .await;
    let reference = number(&browser, "summary-step-time").await;
    let ideal = browser
        .js("return Number(document.querySelector('[data-testid=summary-step-time]').dataset.ideal);")
        .await
        .as_f64()
        .expect("data-ideal");
    assert!(
        ideal > 0.0 && ideal <= reference,
        "ideal {ideal} s, reference {reference} s"
    );
    let text = browser.text("[data-testid=summary-step-time]").await;
    assert!(text.contains("(ideal "), "step time: {text}");
    browser
        .open(&endpoint.url(), &format!("{scenario}&mode=datasheet"))
        .await;
    browser.wait_data("mode-badge", "value", "datasheet").await;
    let datasheet = number(&browser, "summary-step-time").await;
    assert!(
        (datasheet - ideal).abs() <= 1e-9 * ideal,
        "datasheet {datasheet} s, ideal shown {ideal} s"
    );

    // 4. GPUs as "8 GPUs (TP 8, EP 8)" for a MoE model over 8 GPUs with its communication, none on one GPU.
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=qwen3-30b-a3b&cfg=bf16&tp=8&ep=8",
        )
        .await;
    browser.wait_data("summary-gpus", "value", "8").await;
    assert_eq!(
        browser.text("[data-testid=summary-gpus]").await,
        "8 GPUs (TP 8, EP 8)"
    );
    assert!(number(&browser, "summary-communication").await > 0.0);

    // 5. Every rendered number says its mode and device, on every tab, with a pin, at 1440 and 390 px.
    browser.click("[data-testid=pin-current]").await;
    browser
        .wait_for_js(
            "document.querySelectorAll('[data-testid=pins] tr[data-mode]').length >= 2",
            WAIT,
        )
        .await;
    assert_every_number_labelled(&browser, "1440 px, 8 GPUs", 40).await;
    // The walk catches a number outside any labelled container.
    let caught = browser
        .js(&format!(
            "const s = document.createElement('span'); s.className = 'stat-value'; s.dataset.value = '1';\
             s.textContent = '1 ms'; document.body.appendChild(s);\
             const found = (() => {{ {NUMBER_WALK} }})(); s.remove(); return found[1];"
        ))
        .await;
    assert_eq!(caught, serde_json::json!(["stat-value: 1 ms"]));
    resize(&browser, 390, 844).await;
    assert_every_number_labelled(&browser, "390 px, 8 GPUs", 40).await;

    browser
        .open(&endpoint.url(), "hw=h100_sxm&model=qwen3-30b-a3b&cfg=bf16")
        .await;
    browser.wait_data("summary-gpus", "value", "1").await;
    assert_eq!(browser.text("[data-testid=summary-gpus]").await, "1 GPU");
    assert_eq!(
        browser
            .js("return !!document.querySelector('[data-testid=summary-communication]');")
            .await,
        Value::Bool(false),
        "a communication cell on one GPU"
    );
    browser.close().await;
    eprintln!("first view and labels: {:.1} s", started.elapsed().as_secs_f64());
}

/// Items 2, 3 and 7: a CPU measurement beside an H100 selection is one "not compared" row spanning its
/// table with the calibrate action; at 320, 390, 800, 1440 and 1920 px the page does not scroll sideways
/// and tables scroll in their own box; at 1440 and 390 px the roof legend is beside the plot, one entry per
/// compute path; the point toggles change the drawn count; on a phone the chart is ≥ 240 px tall, its title
/// is not clipped and the numbers come first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_and_chart_fit_every_width() {
    let started = Instant::now();
    let Some((endpoint, browser)) = start().await else {
        return;
    };
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&m=64&n=256&k=256&p=FP16,FP32",
        )
        .await;
    browser.wait_data("endpoint-status", "value", "online").await;

    // A spot check the CPU measures, with an H100 selected: not compared, in one spanning row whose action
    // calibrates the CPU (no catalog device to show it on).
    browser.spot_check("FP32").await;
    let row = browser
        .wait_for_js(
            "(() => { const r = document.querySelectorAll('[data-testid=spot-results] tr.not-compared');\
               if (r.length === 0) return null;\
               const t = r[0].closest('table'), cells = r[0].querySelectorAll('td');\
               const columns = Math.max(...[...t.querySelectorAll('tr')].filter(x => !x.classList.contains('not-compared'))\
                 .map(x => [...x.children].reduce((n, c) => n + (c.colSpan || 1), 0)));\
               return [r.length, cells.length, cells[0].colSpan, columns,\
                 !!r[0].querySelector('[data-testid=calibrate-device]')]; })()",
            WAIT,
        )
        .await;
    let columns = row[3].clone();
    assert_eq!(
        row,
        serde_json::json!([1, 1, columns, columns, true]),
        "not-compared row: [rows, cells, colspan, table columns, calibrate action]"
    );

    // No page-level sideways scroll at any width; every visible table box scrolls on its own and fits the
    // window; numbers, shapes and precisions (`td.num`, `.nowrap`) stay on one line (a per-character wrap
    // made rows 1,029 px tall): their text is less than two lines high.
    for width in WIDTHS {
        resize(&browser, width, 900).await;
        let (scroll, inner, _) = browser.widths("[data-testid=summary-box]").await;
        assert!(scroll <= inner, "{width} px: page {scroll} px wide in {inner} px");
        let boxes = browser
            .js("return [...document.querySelectorAll('.table-box')].filter(b => b.getClientRects().length > 0)\
                 .map(b => [getComputedStyle(b).overflowX, b.getBoundingClientRect().right <= window.innerWidth + 0.5]);")
            .await;
        let boxes = boxes.as_array().unwrap();
        assert!(boxes.len() >= 2, "{width} px: {boxes:?}");
        for b in boxes {
            assert!(
                matches!(b[0].as_str(), Some("auto" | "scroll")) && b[1] == Value::Bool(true),
                "{width} px: a table box [overflow-x, fits the window]: {b}"
            );
        }
        let wrapped = browser
            .js("return [...document.querySelectorAll('.table-box td.num, .table-box .nowrap')]\
                 .filter(e => e.getClientRects().length > 0 && e.textContent.trim() !== '').filter(e => {\
                   const r = document.createRange(); r.selectNodeContents(e);\
                   return r.getBoundingClientRect().height >= 2 * parseFloat(getComputedStyle(e).fontSize) * 1.15; })\
                 .map(e => e.textContent.trim());")
            .await;
        assert_eq!(
            wrapped,
            serde_json::json!([]),
            "{width} px: wrapped numbers, shapes or precisions"
        );
    }

    // The roof legend sits beside (1440 px) or under (390 px) the plot, never on it: the DRAM slope and one
    // entry per distinct peak of the H100's reference spec (paths sharing a peak share a roof).
    let reference = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let mut peaks: Vec<f64> = reference
        .supported_precisions()
        .into_iter()
        .filter_map(|p| reference.dense_peak_for(p).ok())
        .collect();
    peaks.sort_by(f64::total_cmp);
    peaks.dedup();
    for (width, height) in [(1440, 900), (390, 844)] {
        resize(&browser, width, height).await;
        let layout = browser
            .js(
                "const r = s => document.querySelector(s).getBoundingClientRect();\
                 const c = r('[data-testid=roofline-canvas]'), l = r('[data-testid=roof-legend]');\
                 const t = document.querySelector('[data-testid=chart-title]');\
                 return [c.right <= l.left || l.right <= c.left || c.bottom <= l.top || l.bottom <= c.top,\
                   document.querySelectorAll('[data-testid=roof-legend] li').length, c.height,\
                   t.scrollWidth <= t.clientWidth, r('[data-testid=summary-box]').top < c.top];",
            )
            .await;
        assert_eq!(
            layout[0],
            Value::Bool(true),
            "{width} px: the legend overlaps the plot"
        );
        assert_eq!(
            layout[1].as_u64(),
            Some(1 + peaks.len() as u64),
            "{width} px: legend entries (DRAM + {} peaks {peaks:?})",
            peaks.len()
        );
        if width == 390 {
            assert!(
                layout[2].as_f64().unwrap() >= 240.0,
                "phone chart {} px tall",
                layout[2]
            );
            assert_eq!(layout[3], Value::Bool(true), "phone chart title clipped");
            assert_eq!(
                layout[4],
                Value::Bool(true),
                "phone: the chart comes before the numbers"
            );
        }
    }

    // Toggles: kernel points are one per precision of the Kernel table the H100 runs (FP16 and FP32); a pin
    // of the current scenario on the same device draws as many points as the model's operators.
    resize(&browser, 1440, 900).await;
    let kernel_points = [Precision::Fp16, Precision::Fp32]
        .into_iter()
        .filter(|p| reference.dense_peak_for(*p).is_ok())
        .count() as u64;
    assert_eq!(kernel_points, 2);
    let all = drawn_points(&browser).await;
    let without_model = toggle_points(&browser, "model", all).await;
    let model = all - without_model;
    assert!(model > 0, "model operators drawn: {model}");
    assert_eq!(toggle_points(&browser, "model", without_model).await, all);
    assert_eq!(toggle_points(&browser, "kernel", all).await, all - kernel_points);
    assert_eq!(toggle_points(&browser, "kernel", all - kernel_points).await, all);
    browser.click("[data-testid=pin-current]").await;
    browser
        .wait_for_js(
            &format!(
                "Number(document.querySelector('[data-testid=roofline-canvas]').dataset.points) === {}",
                all + model
            ),
            WAIT,
        )
        .await;
    assert_eq!(toggle_points(&browser, "pinned", all + model).await, all);
    browser.close().await;
    eprintln!("tables and chart: {:.1} s", started.elapsed().as_secs_f64());
}

/// Items 5 and 6: the usable memory of an H100 in GiB as the device reports it (79.22 GiB, the catalog's
/// `memory_reported_gib`) under vLLM's 0.92, a memory fraction that changes the fit and is kept in the share
/// link; then a calibration of the CPU endpoint shows each figure's median with its spread and its age
/// (still after predicting on the calibrated device), a spot check's measured point on it is drawn and
/// toggled off the chart, and every number is labelled with measured points on the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usable_memory_and_calibration_with_its_spread() {
    let started = Instant::now();
    let Some((endpoint, browser)) = start().await else {
        return;
    };

    // Usable memory: the capacity as reported, 0.92 of it usable by default.
    let reported = find_hardware("h100_sxm")
        .unwrap()
        .memory_reported_bytes
        .expect("the H100's reported memory");
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&phase=decode&b=1&s=4096",
        )
        .await;
    browser.element("[data-testid=memory-bar]").await;
    let bar = |key: &'static str| {
        let browser = &browser;
        async move {
            browser
                .js(&format!(
                    "return Number(document.querySelector('[data-testid=memory-bar]').dataset.{key});"
                ))
                .await
                .as_f64()
                .unwrap()
        }
    };
    assert_eq!(bar("capacity").await, reported);
    let usable = bar("usable").await;
    assert!(
        (usable - VLLM_GPU_MEMORY_UTILIZATION * reported).abs() <= 1e-9 * reported,
        "usable {usable} B of {reported} B"
    );
    let line = browser.text("[data-testid=memory-usable]").await;
    // 79.22 GiB to three significant figures.
    let gib = format!("{:.1} GiB", reported / GIB);
    assert_eq!(gib, "79.2 GiB");
    assert!(
        line.contains(&gib)
            && line.contains(&format!("gpu_memory_utilization {VLLM_GPU_MEMORY_UTILIZATION}")),
        "usable line: {line}"
    );
    browser.wait_data("summary-memory-fit", "value", "true").await;

    // A fraction of 0.1 leaves 0.1 × 85.06 GB = 8.5 GB: less than Llama-3.1-8B's BF16 weights alone
    // (8.03e9 parameters × 2 bytes = 16.1 GB, its model card), so it no longer fits; the link keeps it.
    browser
        .type_into("[data-testid=memory-fraction]", "0.1", "change")
        .await;
    browser.wait_data("summary-memory-fit", "value", "false").await;
    assert!((bar("usable").await - 0.1 * reported).abs() <= 1e-9 * reported);
    let url = browser.settled_url().await;
    assert!(url.contains("mem=0.1"), "{url}");
    browser.set_storage("localStorage.clear()").await;
    browser.client.goto(&url).await.unwrap();
    browser.wait_data("summary-memory-fit", "value", "false").await;
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=memory-fraction]').value;")
            .await,
        "0.1"
    );

    // Calibration: each figure as the median of its runs with their range, and when it was measured.
    browser.set_storage("localStorage.clear()").await;
    browser.client.goto(&endpoint.url()).await.unwrap();
    browser.wait_data("endpoint-status", "value", "online").await;
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let calibrating = Instant::now();
    browser.calibrate_and_use("cpu_host_measured").await;
    let calibration_s = calibrating.elapsed().as_secs_f64();
    let after = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    browser.click("#tab-4").await;
    let at = number(&browser, "calibration-age").await;
    assert!(
        (before - 1.0..=after + 1.0).contains(&at),
        "measured at {at}, calibrated in [{before}, {after}]"
    );
    let age = browser.text("[data-testid=calibration-age]").await;
    assert!(age.contains("just now") || age.contains("min ago"), "age: {age}");
    // (Saved once changes pause: poll.)
    let spec = browser
        .wait_for_js(
            "JSON.parse(localStorage.getItem('roofline.state')).custom_hardware.find(h => h.key === 'cpu_host_measured')",
            WAIT,
        )
        .await;
    let spread = &spec["calibration"]["bandwidth"];
    let (runs, median, min, max) = (
        spread["runs"].as_u64().unwrap(),
        spread["median"].as_f64().unwrap(),
        spread["min"].as_f64().unwrap(),
        spread["max"].as_f64().unwrap(),
    );
    assert!(
        runs >= 3 && min <= median && median <= max,
        "bandwidth runs {spread}"
    );
    assert_eq!(
        spec["dram_bandwidth_bytes_per_s"].as_f64(),
        Some(median),
        "the spec uses the median"
    );
    let dram = browser.text("[data-testid=calibration-spread] li").await;
    let expected = format!(
        "DRAM {} ({}–{} over {runs} runs)",
        roofline_core::format::bandwidth(median),
        roofline_core::format::bandwidth(min),
        roofline_core::format::bandwidth(max)
    );
    assert_eq!(dram, expected);
    let badge = browser
        .text("[data-testid=summary-box] [data-testid=calibration-age-badge]")
        .await;
    assert!(badge.starts_with("calibrated "), "summary badge: {badge}");

    // A spot check on the calibrated CPU is this device's measurement: drawn, and the measured toggle takes
    // off exactly the points the page counts as measured here.
    browser.wait_data("mode-badge", "value", "calibrated").await;
    browser.spot_check("FP32").await;
    let measured = browser
        .wait_for_js(
            "Number(document.querySelector('[data-testid=measured-count]')?.textContent)",
            WAIT,
        )
        .await
        .as_u64()
        .unwrap();
    let all = drawn_points(&browser).await;
    assert_eq!(toggle_points(&browser, "measured", all).await, all - measured);
    assert_eq!(toggle_points(&browser, "measured", all - measured).await, all);
    // At 1440 px the validation table's columns (Measured, Calibrated, Error) fit its box: the explanations
    // wrap between words instead of pushing the error out of sight.
    browser.click("#tab-4").await;
    let fit = browser
        .wait_for_js(
            "(b => b && document.querySelector('[data-testid=validation-row]') ? [b.scrollWidth, b.clientWidth] : null)\
             (document.querySelector('[data-testid=validation-table]')?.closest('.table-box'))",
            WAIT,
        )
        .await;
    assert!(
        fit[0].as_f64() <= fit[1].as_f64(),
        "validation table {fit} (scroll, box width)"
    );
    // With measured points, the Spot Check's and Validation tab's comparisons and the calibration's figures
    // are walked too (the summary has no numbers here: no precision config runs on a host CPU, whose only
    // path is FP32).
    assert_every_number_labelled(&browser, "calibrated host CPU with measured points", 10).await;
    browser.close().await;
    eprintln!(
        "usable memory and calibration: {:.1} s (calibrating {calibration_s:.1} s)",
        started.elapsed().as_secs_f64()
    );
}
