//! Page speed figures in real headless Chromium: what the `.wasm` costs on the wire, the time to the first
//! drawn roofline, and input → repaint latency.
//!
//! Run: `trunk build --release && cargo build -p gpu-endpoint && cargo run -p roofline-tests --example
//! page_bench [-- ROUNDS]` (ROUNDS input changes, default 60). Prints:
//! - `wasm`: transfer size (bytes on the wire, headers included) and encoded/decoded body sizes, from the
//!   Resource Timing API of a fresh profile;
//! - `first roofline`: ms from navigation start to the first animation frame with a drawn chart (many
//!   non-background canvas pixels), over `LOADS` fresh loads (cache disabled by a new profile each);
//! - `input → repaint`: ms from setting the batch size to the first animation frame after the summary's TPOT
//!   changed (p50, p95, max), with every tab mounted once before measuring.

use std::time::Duration;

use roofline_core::validation::quantile;
use roofline_tests::browser::Browser;
use roofline_tests::{Endpoint, browser_prerequisites_missing};

/// Fresh page loads timed for the first roofline.
const LOADS: usize = 5;

/// Resolves (async script) with the ms since navigation start of the first frame whose chart has more than
/// 2000 non-background pixels.
const FIRST_ROOFLINE_JS: &str = r"
const done = arguments[arguments.length - 1];
const drawn = () => {
  const c = document.querySelector('[data-testid=roofline-canvas]');
  if (!c || c.width === 0) return false;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 16) {
    if (Math.abs(d[i]-d[0]) + Math.abs(d[i+1]-d[1]) + Math.abs(d[i+2]-d[2]) > 24) n++;
  }
  return n * 4 > 2000;
};
const tick = () => drawn() ? done(performance.now()) : requestAnimationFrame(tick);
tick();
";

/// Sets the batch input to `arguments[0]` and resolves with the ms until the frame after TPOT changed.
const REPAINT_JS: &str = r"
const done = arguments[arguments.length - 1];
const tpot = () => document.querySelector('[data-testid=summary-tpot]')?.textContent;
const before = tpot();
const input = document.querySelector('[data-testid=batch-input]');
const start = performance.now();
input.value = String(arguments[0]);
input.dispatchEvent(new Event('input', { bubbles: true }));
input.dispatchEvent(new Event('change', { bubbles: true }));
const tick = () => {
  if (tpot() !== before) requestAnimationFrame(() => done(performance.now() - start));
  else if (performance.now() - start > 5000) done(-1);
  else requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
";

/// The `.wasm` entry of the Resource Timing API: [transferSize, encodedBodySize, decodedBodySize].
const WASM_SIZES_JS: &str = r"
const e = performance.getEntriesByType('resource').find(r => r.name.endsWith('.wasm'));
return e ? [e.transferSize, e.encodedBodySize, e.decodedBodySize] : null;
";

/// Clicks every tab once so each component has been mounted before timing repaints.
const VISIT_TABS_JS: &str = r"
const tabs = [...document.querySelectorAll('[role=tab], [data-testid$=-tab-button], nav button')];
tabs.forEach(t => t.click());
if (tabs.length) tabs[0].click();
return tabs.length;
";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if let Some(reason) = browser_prerequisites_missing() {
        eprintln!("page_bench cannot run: {reason}");
        std::process::exit(2);
    }
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(60, |s| s.parse().expect("ROUNDS is a number"));
    let endpoint = Endpoint::start(&[]);

    let mut first = Vec::with_capacity(LOADS);
    let mut sizes = None;
    for _ in 0..LOADS {
        let browser = Browser::start().await;
        browser.client.goto(&endpoint.url()).await.expect("page loads");
        let ms = browser
            .client
            .execute_async(FIRST_ROOFLINE_JS, vec![])
            .await
            .expect("first-roofline script");
        first.push(ms.as_f64().expect("ms"));
        if sizes.is_none() {
            sizes = browser.client.execute(WASM_SIZES_JS, vec![]).await.ok();
        }
        browser.close().await;
    }
    first.sort_by(f64::total_cmp);

    let browser = Browser::start().await;
    browser.client.goto(&endpoint.url()).await.expect("page loads");
    browser.client.execute_async(FIRST_ROOFLINE_JS, vec![]).await.expect("drawn");
    let tabs = browser.client.execute(VISIT_TABS_JS, vec![]).await.expect("tabs");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut repaint = Vec::with_capacity(rounds);
    for i in 0..rounds {
        // Alternate between batch sizes so every round changes TPOT.
        let batch = [1, 2, 4, 8, 16, 32, 64, 128][i % 8];
        let ms = browser
            .client
            .execute_async(REPAINT_JS, vec![serde_json::json!(batch)])
            .await
            .expect("repaint script");
        let ms = ms.as_f64().expect("ms");
        assert!(ms >= 0.0, "TPOT did not change within 5 s for batch {batch}");
        repaint.push(ms);
    }
    browser.close().await;
    repaint.sort_by(f64::total_cmp);

    match sizes.as_ref().and_then(|v| v.as_array()) {
        Some(s) => println!(
            "wasm: transfer {} B, encoded body {} B, decoded body {} B",
            s[0], s[1], s[2]
        ),
        None => println!("wasm: no .wasm resource entry"),
    }
    println!(
        "first roofline ({LOADS} fresh loads): median {:.0} ms, max {:.0} ms",
        quantile(&first, 0.5).unwrap_or(f64::NAN),
        first[first.len() - 1]
    );
    println!(
        "input → repaint ({rounds} batch changes, {tabs} tabs mounted): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        quantile(&repaint, 0.5).unwrap_or(f64::NAN),
        quantile(&repaint, 0.95).unwrap_or(f64::NAN),
        repaint[repaint.len() - 1]
    );
}
