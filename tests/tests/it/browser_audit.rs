//! Real-browser tests of issue 26's item 7, the last audit's unfixed list, at 1440 px (the Formats detail
//! also at 390 px):
//!
//! - [`spot_check_import_and_benchmark_jobs`]: Spot Check's run options are one radio group and "Run all"
//!   measures what the endpoint measures; re-importing the same file adds nothing and says so; one oversize
//!   shape fails on its own instead of refusing the job; Stop says "Stopping…"; an endpoint that goes
//!   offline mid-job leaves the job `lost` with its precision boxes unchanged.
//! - [`kernel_floor_formats_url_link_svg_share_and_nvml`]: the Kernel table takes the launch-floor
//!   correction; the Formats detail scrolls into view; "foo bar" is refused as an endpoint URL; a
//!   `model=gpt-5&cfg=zzz` link shows the defaults with a notice and saves no unknown key; the SVG export
//!   has its caption and legend; a share link with one custom device carries its numbers, not its
//!   documentation; a GPU endpoint without NVML is asked once and its raw error text is not shown.
//!
//! Covered elsewhere: the CPU half of the NVML item (a CPU endpoint is never polled) is
//! `browser_polish::a_cpu_endpoint_is_never_polled_for_nvml`; the launch floor of reference mode in the
//! Kernel table is `browser_roofline::page_draws_the_roofline_and_shows_core_predictions`.

use std::time::{Duration, Instant};

use gpu_endpoint::backend::MAX_MEASURE_DIM;
use roofline_core::{
    Corrections, KERNEL_LAUNCH_FLOOR_S, Mode, Operator, Precision, analyze_operator, find_hardware,
    find_model, find_quant_config,
};
use roofline_tests::browser::Browser;
use serde_json::{Value, json};

use crate::browser_page::{resize, start};

const WAIT: Duration = Duration::from_secs(30);

/// Keeps every blob the page hands to `URL.createObjectURL` (its downloads: exports) in
/// `window.__downloads`, so a test can read what a download button produced.
const CAPTURE_DOWNLOADS: &str = "window.__downloads = []; const create = URL.createObjectURL.bind(URL);\
     URL.createObjectURL = b => { window.__downloads.push(b); return create(b); }; return true;";

/// The text of the last download the page started since [`CAPTURE_DOWNLOADS`], once there is one.
async fn last_download(browser: &Browser) -> String {
    browser.wait_for_js("window.__downloads.length > 0", WAIT).await;
    let text = browser
        .js("return window.__downloads[window.__downloads.length - 1].text();")
        .await;
    text.as_str().expect("a text download").to_owned()
}

/// The benchmark rows: `[shape, precision, failed, text]` each.
async fn bench_rows(browser: &Browser) -> Vec<Value> {
    browser
        .js("return [...document.querySelectorAll('[data-testid=bench-row]')].map(r =>\
             [r.children[0].textContent, r.children[1].textContent, r.dataset.failed === 'true', r.textContent]);")
        .await
        .as_array()
        .expect("rows")
        .clone()
}

/// The Benchmark tab's precision boxes as `[precision, checked]`.
const BENCH_BOXES: &str = "return [...document.querySelectorAll('[data-testid=bench-precisions] input')]\
     .map(b => [b.dataset.precision, b.checked]);";

/// Spot Check, results import and benchmark jobs against the in-process CPU endpoint (FP32 and FP64 are what
/// it measures), ending with the endpoint stopped mid-job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spot_check_import_and_benchmark_jobs() {
    let started = Instant::now();
    let Some((mut endpoint, browser)) = start().await else {
        return;
    };
    browser.open(&endpoint.url(), "m=64&n=256&k=256").await;
    browser.wait_data("endpoint-status", "value", "online").await;
    // What the endpoint says it measures natively (its own device report, not the page's).
    let measurable = browser
        .js("return fetch('/api/device').then(r => r.json()).then(d => d.measurable_precisions);")
        .await;
    let measurable: Vec<String> = serde_json::from_value(measurable).unwrap();
    assert!(!measurable.is_empty(), "the CPU endpoint measures something");

    // 1. The Spot Check's run options are one radio group: ticking one unticks the others (both could be
    // ticked before). "Run all" lists exactly what the endpoint measures and measures each: one row per
    // precision, no failure (it used to run five formats a CPU has no kernel for, and measured none).
    browser
        .wait_for_js(
            "!document.querySelector('[data-testid=run-all-precisions]').disabled",
            WAIT,
        )
        .await;
    let radios = "return ['spot-one', 'run-all-precisions', 'spot-custom'].map(t =>\
                  document.querySelector(`[data-testid=${t}]`)).map(e => [e.type, e.name, e.checked]);";
    browser.click("[data-testid=spot-custom]").await;
    browser.click("[data-testid=run-all-precisions]").await;
    assert_eq!(
        browser.js(radios).await,
        json!([
            ["radio", "spot-run", false],
            ["radio", "spot-run", true],
            ["radio", "spot-run", false]
        ]),
        "[type, name, checked] of spot-one, run-all-precisions, spot-custom"
    );
    let label = browser
        .js("return document.querySelector('[data-testid=run-all-precisions]').closest('label').textContent.trim();")
        .await;
    assert_eq!(
        label,
        format!(
            "Every precision the endpoint measures ({})",
            measurable.join(", ")
        )
    );
    browser
        .wait_for_js(
            "!document.querySelector('[data-testid=analyze-button]').disabled",
            WAIT,
        )
        .await;
    browser.click("[data-testid=analyze-button]").await;
    let measured = browser
        .wait_for_js(
            &format!(
                "(r => r.length === {} ? r.map(e => e.dataset.precision) : null)\
                 ([...document.querySelectorAll('[data-testid=spot-row]')])",
                measurable.len()
            ),
            WAIT,
        )
        .await;
    assert_eq!(measured, json!(measurable), "spot rows of Run all");
    assert_eq!(
        browser
            .js("return [...document.querySelectorAll('[data-testid=spot-failures] li')].map(l => l.textContent)\
                 .filter(t => t.includes('measurement:'));")
            .await,
        json!([]),
        "Run all's measurement failures (a precision the selected GB10 cannot predict is listed as such)"
    );

    // 2. Re-importing the same file adds nothing and says so. The page's own JSON export holds the measured
    // points; after clearing them, importing it adds every one; importing it again adds none.
    browser.js(CAPTURE_DOWNLOADS).await;
    browser.click(".results-io summary").await;
    browser
        .js("[...document.querySelectorAll('.results-io button')].find(b => b.textContent === 'Export JSON').click(); return true;")
        .await;
    let file = last_download(&browser).await;
    let points = serde_json::from_str::<Value>(&file).unwrap()["measured"]
        .as_array()
        .map(Vec::len)
        .expect("the export's measured points");
    assert!(
        points >= measurable.len(),
        "{points} points exported after {} measured",
        measurable.len()
    );
    browser.clear_measured().await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=measured-count]').textContent === '0'",
            WAIT,
        )
        .await;
    browser
        .type_into("[data-testid=import-json]", &file, "input")
        .await;
    for expected in [
        format!("Imported {points} new point(s)."),
        format!("Imported 0 new point(s); {points} already present."),
    ] {
        browser.click("[data-testid=import-button]").await;
        browser
            .wait_for_js(
                &format!(
                    "document.querySelector('[data-testid=results-message]')?.textContent === {}",
                    json!(expected)
                ),
                WAIT,
            )
            .await;
        assert_eq!(
            browser.text("[data-testid=measured-count]").await,
            points.to_string(),
            "after “{expected}”"
        );
    }

    // 3. One oversize shape fails on its own: M = MAX_MEASURE_DIM + 1 is out of the endpoint's bounds, and the
    // job still measures the other shape (it used to refuse the whole job). Each precision of each shape is
    // one row, in order.
    browser.click("#tab-3").await;
    let oversize = MAX_MEASURE_DIM + 1;
    let ticked = browser.js(BENCH_BOXES).await;
    let mut ticked: Vec<&str> = ticked
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b[1] == Value::Bool(true))
        .filter_map(|b| b[0].as_str())
        .collect();
    ticked.sort_unstable();
    let mut expected: Vec<&str> = measurable.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(ticked, expected, "the boxes tick what the endpoint measures");
    browser
        .run_benchmark(&format!("{oversize}x256x256, 256x256x256"), "done")
        .await;
    let rows = bench_rows(&browser).await;
    assert_eq!(rows.len(), 2 * measurable.len(), "rows: {rows:?}");
    let bound = format!("M must be between 1 and {MAX_MEASURE_DIM} for a measurement, got {oversize}");
    for (row, (shape, precision)) in rows.iter().zip(
        [format!("{oversize}x256x256"), "256x256x256".to_owned()]
            .iter()
            .flat_map(|s| measurable.iter().map(move |p| (s, p))),
    ) {
        assert_eq!(
            (row[0].as_str(), row[1].as_str()),
            (Some(shape.as_str()), Some(precision.as_str()))
        );
        let oversized = shape.starts_with(&oversize.to_string());
        assert_eq!(row[2], Value::Bool(oversized), "failed: {row}");
        if oversized {
            assert!(row[3].as_str().unwrap().contains(&bound), "{row}");
        }
    }
    assert_eq!(
        browser
            .js("return document.querySelectorAll('.benchmark-tab fieldset .error').length;")
            .await,
        0,
        "the job was not refused"
    );

    // 4. Stop gives feedback at once: from the click until the job ends, the button says "Stopping…" and is
    // disabled and the status says `stopping` (a recorder sees every state the page showed), then
    // `cancelled` before the end.
    browser.run_benchmark(&distinct_shapes(512), "running").await;
    browser
        .js("window.__states = []; const seen = () => { const s = document.querySelector('[data-testid=bench-status]'),\
               b = document.querySelector('[data-testid=bench-stop]');\
               const state = [s?.dataset.value, b.textContent, b.disabled];\
               if (JSON.stringify(window.__states.at(-1)) !== JSON.stringify(state)) window.__states.push(state); };\
             new MutationObserver(seen).observe(document.querySelector('.benchmark-tab'),\
               { subtree: true, childList: true, attributes: true, characterData: true });\
             seen(); return true;")
        .await;
    browser.click("[data-testid=bench-stop]").await;
    browser.wait_data("bench-status", "value", "cancelled").await;
    let states = browser.js("return window.__states;").await;
    let states = states.as_array().unwrap();
    assert_eq!(states[0], json!(["running", "Stop", false]), "{states:?}");
    assert!(
        states.contains(&json!(["stopping", "Stopping…", true])),
        "no Stopping… between the click and the end: {states:?}"
    );
    assert_eq!(
        states.last(),
        Some(&json!(["cancelled", "Stop", true])),
        "{states:?}"
    );
    let stopping = browser
        .js("return window.__states.findIndex(s => s[0] === 'stopping') < window.__states.findIndex(s => s[0] === 'cancelled');")
        .await;
    assert_eq!(stopping, Value::Bool(true), "{states:?}");

    // 5. The endpoint goes offline mid-job: the job is `lost` (not running), Stop and Run are off, and the
    // precision boxes are the endpoint's set as last seen (they used to switch to the page's defaults).
    browser.run_benchmark(&distinct_shapes(384), "running").await;
    let boxes = browser.js(BENCH_BOXES).await;
    endpoint.stop();
    browser.wait_data("endpoint-status", "value", "offline").await;
    browser.wait_data("bench-status", "value", "lost").await;
    let status = browser.text("[data-testid=bench-status]").await;
    assert!(
        status.starts_with("the endpoint stopped answering after ")
            && status.ends_with(&format!("/{}: the job's state is unknown", 6 * measurable.len())),
        "status: {status}"
    );
    assert_eq!(
        browser
            .js("return ['bench-stop', 'bench-run'].map(t => document.querySelector(`[data-testid=${t}]`).disabled);")
            .await,
        json!([true, true]),
        "[Stop, Run] disabled offline"
    );
    assert_eq!(browser.js(BENCH_BOXES).await, boxes, "precision boxes offline");
    browser.close().await;
    eprintln!(
        "spot check, import and benchmark jobs: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The page's own fixes, on an H100 scenario against the in-process endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_floor_formats_url_link_svg_share_and_nvml() {
    let started = Instant::now();
    let Some((endpoint, browser)) = start().await else {
        return;
    };
    let h100 = find_hardware("h100_sxm").unwrap();

    // 1. The Kernel table takes the launch-floor correction. FP16 GEMV 1×256×256 on the H100's datasheet
    // moves 256·256·2 + 2·256·2 = 132,096 B at 3.35 TB/s: 39 ns, below the 4 µs floor, which the toggle makes
    // its time.
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&mode=datasheet&m=1&n=256&k=256&p=FP16",
        )
        .await;
    let op = Operator::gemv(256, 256, Precision::Fp16.into()).unwrap();
    let bare = analyze_operator(h100, &op, &Corrections::for_mode(Mode::Datasheet))
        .unwrap()
        .time_s;
    assert!(bare < 1e-7 && KERNEL_LAUNCH_FLOOR_S == 4e-6, "{bare} s");
    let fp16 = "parseFloat(document.querySelector('[data-testid=predictions] [data-precision=FP16] [data-testid=time-us]')?.dataset.value)";
    for expected in [bare, KERNEL_LAUNCH_FLOOR_S] {
        if expected == KERNEL_LAUNCH_FLOOR_S {
            browser
                .click("[role=group][aria-label=Corrections] label:first-of-type input")
                .await;
        }
        browser
            .wait_for_js(
                &format!("Math.abs({fp16} - {expected:e}) <= 1e-9 * {expected:e}"),
                WAIT,
            )
            .await;
    }
    let url = browser.settled_url().await;
    assert!(url.contains("corr=l"), "the link keeps the floor: {url}");

    // 2. The Formats detail scrolls into view when a format is chosen with the detail below the window
    // (it used to change off-screen), at 1440 and 390 px.
    browser.click("#tab-2").await;
    for (width, height) in [(1440, 900), (390, 844)] {
        resize(&browser, width, height).await;
        let before = browser
            .js("const t = document.querySelector('[data-testid=formats]'); t.scrollIntoView(true);\
                 return document.querySelector('[data-testid=format-detail]').getBoundingClientRect().top - window.innerHeight;")
            .await;
        assert!(
            before.as_f64().unwrap() >= 0.0,
            "{width} px: the detail is already in view ({before} px below the window's bottom)"
        );
        let name = browser
            .js("const b = document.querySelectorAll('[data-testid=formats] tbody button')[2]; b.click(); return b.textContent.trim();")
            .await;
        browser
            .wait_for_js(
                &format!(
                    "(d => d.querySelector('h3').textContent === {name} && d.getBoundingClientRect().top >= -1\
                       && d.getBoundingClientRect().top < window.innerHeight / 2)\
                     (document.querySelector('[data-testid=format-detail]'))"
                ),
                WAIT,
            )
            .await;
    }
    resize(&browser, 1440, 900).await;

    // 3. What is not a URL is refused with its reason and changes nothing.
    browser.wait_data("endpoint-status", "value", "online").await;
    browser.click("[data-testid=endpoint-status]").await;
    for (typed, reason) in [
        ("foo bar", "'foo bar' is not a URL: it contains spaces"),
        (
            "http://host:port",
            "'http://host:port' names no host[:port] (e.g. localhost:8000, gpu.example.com, 10.0.0.2:8000)",
        ),
    ] {
        browser
            .type_into("[data-testid=endpoint-url]", typed, "input")
            .await;
        browser.click("[data-testid=endpoint-save]").await;
        browser
            .wait_for_js(
                &format!(
                    "document.querySelector('[data-testid=endpoint-url-error]')?.textContent === {}",
                    json!(reason)
                ),
                WAIT,
            )
            .await;
        assert_eq!(
            browser
                .js("return [localStorage.getItem('roofline.endpoint'), document.querySelector('[data-testid=endpoint-url]').getAttribute('aria-invalid')];")
                .await,
            json!([null, "true"]),
            "{typed}: [saved base, aria-invalid]"
        );
    }
    browser.wait_data("endpoint-status", "value", "online").await;

    // 4. A link naming an unknown model and config shows the defaults (Llama 3.1 8B, BF16: the page's
    // defaults, web/src/presets.rs) with a notice naming both, leaves no select blank and saves no unknown
    // key.
    browser.set_storage("localStorage.clear()").await;
    browser
        .open(&endpoint.url(), "hw=h100_sxm&model=gpt-5&cfg=zzz")
        .await;
    let (llama, bf16) = (
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config("bf16").unwrap(),
    );
    let notice = browser.text("[data-testid=storage-notice] span").await;
    assert_eq!(
        notice,
        format!(
            "The link names unknown model 'gpt-5': showing {}; unknown precision config 'zzz': showing {}.",
            llama.name, bf16.name
        )
    );
    assert_eq!(
        browser
            .js("return ['model-select', 'config-select'].map(t => document.querySelector(`[data-testid=${t}]`).value);")
            .await,
        json!(["llama-3.1-8b", "bf16"])
    );
    assert_eq!(
        browser
            .js("return [...document.querySelectorAll('select')].filter(s => s.selectedIndex < 0 || s.value === '' && s.options[s.selectedIndex]?.textContent.trim() === '').map(s => s.dataset.testid || s.id);")
            .await,
        json!([]),
        "blank selects"
    );
    browser
        .wait_for_js(
            "(s => s && s.settings.model === 'llama-3.1-8b' && s.settings.config === 'bf16')\
             (JSON.parse(localStorage.getItem('roofline.state')))",
            WAIT,
        )
        .await;
    let url = browser.settled_url().await;
    assert!(
        url.contains("model=llama-3.1-8b") && url.contains("cfg=bf16") && !url.contains("gpt-5"),
        "{url}"
    );

    // 5. The SVG export says what it shows: the caption (mode · device · model · config · phase, batch and
    // context) and the legend's key, under the chart.
    browser.js(CAPTURE_DOWNLOADS).await;
    browser.click("[data-testid=svg-export]").await;
    let svg = last_download(&browser).await;
    let caption = format!(
        "reference · {} · {} · {} · decode B1 S4096",
        h100.name, llama.name, bf16.name
    );
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    for text in [
        caption.as_str(),
        "solid = reference, dashed = datasheet (the ideal bound)",
    ] {
        assert!(svg.contains(text), "the SVG lacks {text:?}");
    }

    // 6. A share link with one custom device carries its numbers, not its documentation: the `dev` field is
    // shorter than the device's full JSON (what the 6.6 k-character link carried) by at least its sources,
    // notes and derived/unverified lists, each as a JSON string.
    let mut spec = h100.clone();
    spec.key = "my_h100".into();
    spec.name = "My H100 (half bandwidth)".into();
    spec.dram_bandwidth_bytes_per_s /= 2.0;
    spec.provenance = roofline_core::Provenance::Custom;
    let full = serde_json::to_string(&spec).unwrap();
    let docs: Vec<String> = spec
        .sources
        .iter()
        .chain(&spec.derived)
        .chain(&spec.unverified)
        .chain(spec.interconnect.iter().flat_map(|i| &i.sources))
        .chain(std::iter::once(&spec.notes))
        .filter(|s| !s.is_empty())
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
    assert!(!docs.is_empty(), "the H100 spec is documented");
    browser.add_custom_device(&full, "my_h100").await;
    let link = browser.settled_url().await;
    // Lengths as a link spells them (form-urlencoded), measured by the browser's own URLSearchParams.
    let lengths = browser
        .client
        .execute(
            "const enc = s => new URLSearchParams({ d: s }).toString().length - 2;\
             const dev = new URL(arguments[0]).searchParams.getAll('dev');\
             return [dev.length, dev.length ? enc(dev[0]) : 0, enc(arguments[1]),\
               arguments[2].reduce((n, d) => n + enc(d), 0), arguments[0].length,\
               arguments[2].filter(d => dev.some(v => v.includes(JSON.parse(d)))).length];",
            vec![json!(link), json!(full), json!(docs)],
        )
        .await
        .unwrap();
    let n = |i: usize| lengths[i].as_u64().unwrap();
    eprintln!(
        "share link {} characters; its device {} of the full JSON's {} (documentation {})",
        n(4),
        n(1),
        n(2),
        n(3)
    );
    assert_eq!(n(0), 1, "one custom device in {link}");
    assert!(
        n(1) <= n(2) - n(3),
        "dev {} > full {} − documentation {}",
        n(1),
        n(2),
        n(3)
    );
    assert_eq!(n(5), 0, "documentation strings carried by the link");

    // 7. A GPU endpoint without NVML: the endpoint's health says `cuda` (rewritten in the browser; this
    // endpoint really has no NVML and answers `/api/nvml/status` with 503 `no_nvml`). The Benchmark tab's
    // telemetry asks once and says so in its own words, never the library loader's text, while three more
    // health polls (3 s apart) pass: polling every 2 s would have asked at least 4 times.
    let raw = browser
        .js("return fetch('/api/nvml/status').then(async r => [r.status, (await r.json()).message]);")
        .await;
    assert_eq!(raw[0], 503, "{raw}");
    let raw = raw[1].as_str().unwrap().to_owned();
    browser.click("#tab-3").await;
    browser.wait_data("telemetry", "state", "no-nvml").await;
    browser
        .js(
            "window.__nvml = 0; window.__health = 0; const get = window.fetch.bind(window);\
             window.fetch = async (input, init) => {\
               const url = input instanceof Request ? input.url : String(input);\
               if (url.includes('/api/nvml/status')) window.__nvml++;\
               const r = await get(input, init);\
               if (!url.endsWith('/api/health')) return r;\
               window.__health++;\
               const health = await r.json(); health.backend = 'cuda';\
               return new Response(JSON.stringify(health), { status: r.status, headers: r.headers }); };\
             return true;",
        )
        .await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=telemetry]')?.textContent.includes('this GPU endpoint cannot read NVML')",
            WAIT,
        )
        .await;
    let health = browser.js("return window.__health;").await.as_u64().unwrap();
    browser
        .wait_for_js(&format!("window.__health >= {}", health + 3), WAIT)
        .await;
    let telemetry = browser.text("[data-testid=telemetry]").await;
    assert_eq!(
        browser.js("return window.__nvml;").await,
        1,
        "NVML status requests"
    );
    assert!(
        !telemetry.contains(&raw) && !telemetry.contains("libloading"),
        "the raw error {raw:?} in {telemetry:?}"
    );
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=telemetry]').dataset.state;")
            .await,
        "no-nvml"
    );
    browser.close().await;
    eprintln!(
        "kernel floor, formats, URL, link, SVG, share link and NVML: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Six distinct square-ish shapes from `n` (the endpoint drops repeated shapes, so a job long enough to stop
/// needs distinct ones), e.g. `512x512x512, 520x512x512, …`.
fn distinct_shapes(n: u32) -> String {
    (0..6)
        .map(|i| format!("{}x{n}x{n}", n + 8 * i))
        .collect::<Vec<_>>()
        .join(", ")
}
