//! Headless Chromium through chromedriver and fantoccini (flags from docs/research/toolchain.md §1.8).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};

use crate::{KillOnDrop, free_port, unique_temp_dir, wait_for_port, which};

/// A chromedriver process and a WebDriver session on it; both end on drop.
#[derive(Debug)]
pub struct Browser {
    /// The WebDriver client.
    pub client: Client,
    _driver: KillOnDrop,
    profile: PathBuf,
}

impl Browser {
    /// Starts chromedriver on a free port and opens a headless Chromium session (1400×900 window).
    ///
    /// # Panics
    /// When chromedriver cannot start or the session cannot open.
    pub async fn start() -> Browser {
        let port = free_port();
        let driver = Command::new(which("chromedriver").expect("chromedriver on PATH"))
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn chromedriver");
        let driver = KillOnDrop(driver);
        wait_for_port(port, Duration::from_secs(20)).expect("chromedriver listens");
        let profile = unique_temp_dir("chromium-profile");
        let mut args = vec![
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--window-size=1400,900".to_owned(),
        ];
        args.push(format!("--user-data-dir={}", profile.display()));
        let mut chrome_options = serde_json::json!({ "args": args });
        if let Some(binary) = which("chromium") {
            chrome_options["binary"] = serde_json::json!(binary);
        }
        let caps = serde_json::json!({ "goog:chromeOptions": chrome_options });
        let caps = caps.as_object().expect("object").clone();
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("WebDriver session");
        Browser {
            client,
            _driver: driver,
            profile,
        }
    }

    /// Waits for an element matching the CSS selector.
    ///
    /// # Panics
    /// When it does not appear within 30 s.
    pub async fn element(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("element {css} did not appear: {e}"))
    }

    /// Clicks the page's prediction-mode control on `mode` (`datasheet`, `reference` or `calibrated`).
    pub async fn select_mode(&self, mode: &str) {
        self.element(&format!("[data-testid=mode-select] input[data-value={mode}]"))
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("clicking mode {mode}: {e}"));
    }

    /// Runs `script` (statements on `localStorage`) now and again when the page is left or hidden, after the
    /// page's own save there (the page saves when it is hidden or left), so the next load finds local storage
    /// as `script` leaves it: `localStorage.clear()` for a browser with nothing saved.
    pub async fn set_storage(&self, script: &str) {
        self.js(&format!(
            "const set = () => {{ {script}; }}; set(); \
             addEventListener('pagehide', set); addEventListener('visibilitychange', set); return true;"
        ))
        .await;
    }

    /// Clears the measured points with the confirmation accepted (the Results section open) and waits until the
    /// page says they were deleted on the endpoint too.
    pub async fn clear_measured(&self) {
        self.js("window.confirm = () => true; return true;").await;
        self.click("[data-testid=clear-measured]").await;
        self.wait_for_js(
            "document.querySelector('[data-testid=results-message]')?.textContent.includes('deleted on the endpoint')",
            Duration::from_secs(30),
        )
        .await;
    }

    /// Adds the custom device `json` (a `HardwareSpec`) through the custom-device form and waits until it is
    /// the selected device, `key`.
    pub async fn add_custom_device(&self, json: &str, key: &str) {
        self.click(".custom-hw summary").await;
        self.type_into("#custom-json", json, "input").await;
        self.click(".custom-hw .row button:nth-child(2)").await;
        self.wait_for_js(
            &format!("document.querySelector('[data-testid=hardware-select]')?.value === '{key}'"),
            Duration::from_secs(30),
        )
        .await;
    }

    /// The page's URL once it has settled: the page writes continuous changes (sliders, typed numbers, pins)
    /// to it once they pause (`history::REPLACE_DELAY`, 250 ms), so it is read until two reads 400 ms apart
    /// agree.
    pub async fn settled_url(&self) -> String {
        let mut last = String::new();
        loop {
            let now = self
                .client
                .current_url()
                .await
                .expect("the current URL")
                .to_string();
            if now == last {
                return now;
            }
            last = now;
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    }

    /// Polls `check` (a JS expression returning a value) until it returns something truthy, and returns it.
    ///
    /// # Panics
    /// When `timeout` passes first.
    pub async fn wait_for_js(&self, expression: &str, timeout: Duration) -> serde_json::Value {
        let start = Instant::now();
        let script = format!("return ({expression});");
        loop {
            let value = self.client.execute(&script, vec![]).await.expect("script runs");
            let truthy = !matches!(value, serde_json::Value::Null | serde_json::Value::Bool(false))
                && value != serde_json::json!(0)
                && value != serde_json::json!("");
            if truthy {
                return value;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for `{expression}` (last value {value})"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs a script (`body` ends with `return …` to get a value) and returns its value.
    ///
    /// # Panics
    /// When the script fails; the message shows the script.
    pub async fn js(&self, body: &str) -> serde_json::Value {
        self.client
            .execute(body, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{body}"))
    }

    /// Picks `value` in the `<select>` with `data-testid=testid` (a real pick: WebDriver's select, which
    /// fires `change`).
    ///
    /// # Panics
    /// When the select or the option does not exist.
    pub async fn select(&self, testid: &str, value: &str) {
        self.element(&format!("[data-testid={testid}]"))
            .await
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("selecting {value} in {testid}: {e}"));
    }

    /// The `data-value` attribute of the element with `data-testid=testid` (the machine-readable number
    /// beside a formatted one).
    ///
    /// # Panics
    /// When the element does not appear or has no `data-value`.
    pub async fn data_value(&self, testid: &str) -> String {
        self.element(&format!("[data-testid={testid}]"))
            .await
            .attr("data-value")
            .await
            .unwrap_or_else(|e| panic!("reading {testid}: {e}"))
            .unwrap_or_else(|| panic!("{testid} has no data-value"))
    }

    /// Waits until the `data-value` of `testid` equals `expected` within a relative 1e-9.
    ///
    /// # Panics
    /// When it does not within 30 s.
    pub async fn wait_value(&self, testid: &str, expected: f64) {
        self.wait_for_js(
            &format!(
                "Math.abs(parseFloat(document.querySelector('[data-testid={testid}]')?.dataset.value) - {expected:e}) \
                 <= 1e-9 * Math.abs({expected:e})"
            ),
            Duration::from_secs(30),
        )
        .await;
    }

    /// Opens the page at `base` (an endpoint's URL) with the share-link `query` (without `?`).
    ///
    /// # Panics
    /// When the page cannot be loaded.
    pub async fn open(&self, base: &str, query: &str) {
        self.client
            .goto(&format!("{base}/?{query}"))
            .await
            .unwrap_or_else(|e| panic!("open {base}/?{query}: {e}"));
    }

    /// The text of the element matching `css`.
    ///
    /// # Panics
    /// When it does not appear within 30 s.
    pub async fn text(&self, css: &str) -> String {
        self.element(css)
            .await
            .text()
            .await
            .unwrap_or_else(|e| panic!("text of {css}: {e}"))
    }

    /// Waits until the element with `data-testid=testid` has `data-<key>` equal to `value` (`key` in the
    /// dataset's camelCase).
    ///
    /// # Panics
    /// When it does not within 30 s.
    pub async fn wait_data(&self, testid: &str, key: &str, value: &str) {
        self.wait_for_js(
            &format!("document.querySelector('[data-testid={testid}]')?.dataset.{key} === '{value}'"),
            Duration::from_secs(30),
        )
        .await;
    }

    /// Clicks the element matching `css`.
    ///
    /// # Panics
    /// When it does not appear within 30 s or cannot be clicked.
    pub async fn click(&self, css: &str) {
        self.element(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    /// Sets the field matching `css` to `value` as a user does and fires `event` on it (`input` for typing,
    /// `change` for a committed value), so the page reads it.
    ///
    /// # Panics
    /// When the field does not appear within 30 s or the script fails.
    pub async fn type_into(&self, css: &str, value: &str, event: &str) {
        self.element(css).await;
        self.client
            .execute(
                "const e = document.querySelector(arguments[0]); e.value = arguments[1];\
                 e.dispatchEvent(new Event(arguments[2], { bubbles: true })); return true;",
                vec![css.into(), value.into(), event.into()],
            )
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Runs a Benchmark-tab job of `shapes` (the text of `bench-shapes`) with the ticked precisions and
    /// returns once its status (`bench-status`) is `status` with at least one streamed row.
    ///
    /// # Panics
    /// When Run stays disabled or the status is not reached within 30 s.
    pub async fn run_benchmark(&self, shapes: &str, status: &str) {
        let wait = Duration::from_secs(30);
        self.type_into("[data-testid=bench-shapes]", shapes, "input")
            .await;
        self.wait_for_js(
            "!document.querySelector('[data-testid=bench-run]').disabled",
            wait,
        )
        .await;
        self.click("[data-testid=bench-run]").await;
        self.wait_for_js(
            &format!(
                "document.querySelector('[data-testid=bench-status]')?.dataset.value === '{status}'\
                 && document.querySelectorAll('[data-testid=bench-row]').length > 0"
            ),
            wait,
        )
        .await;
    }

    /// Runs the Kernel tab's Spot Check of its shape in the one precision `precision` (`spot-one`; e.g.
    /// `FP32`, which the CPU endpoint measures) on the endpoint and waits for its row
    /// (`spot-row[data-precision=…]`).
    ///
    /// # Panics
    /// When the Spot Check cannot run or no row appears within 30 s.
    pub async fn spot_check(&self, precision: &str) {
        let wait = Duration::from_secs(30);
        self.click("#tab-0").await;
        self.click("[data-testid=spot-one]").await;
        self.select("spot-precision", precision).await;
        self.wait_for_js(
            "!document.querySelector('[data-testid=analyze-button]').disabled",
            wait,
        )
        .await;
        self.click("[data-testid=analyze-button]").await;
        self.wait_for_js(
            &format!("document.querySelector('[data-testid=spot-row][data-precision={precision}]')"),
            wait,
        )
        .await;
    }

    /// Calibrates the endpoint's device from the Validation tab's Calibration panel and predicts on the
    /// calibrated spec, which for a device outside the catalog is its own device, `cpu_host_measured` on the
    /// CPU backend (`expected_key`).
    ///
    /// # Panics
    /// When calibration gives no result within 120 s or the device is not selected.
    pub async fn calibrate_and_use(&self, expected_key: &str) {
        self.click("#tab-4").await;
        self.click("[data-testid=calibrate-button]").await;
        self.wait_for_js(
            "document.querySelector('[data-testid=calibration-result]')",
            Duration::from_secs(120),
        )
        .await;
        self.click("[data-testid=use-calibrated-device]").await;
        self.wait_for_js(
            &format!("document.querySelector('[data-testid=hardware-select]').value === '{expected_key}'"),
            Duration::from_secs(30),
        )
        .await;
    }

    /// Measures the scenario's step on the endpoint once the page allows it, and waits until the job is over
    /// (done, cancelled or lost).
    ///
    /// # Panics
    /// When the button stays disabled for 30 s or the job does not end within `timeout`.
    pub async fn measure_step(&self, timeout: Duration) {
        self.wait_for_js(
            "!document.querySelector('[data-testid=step-measure]').disabled",
            Duration::from_secs(30),
        )
        .await;
        self.click("[data-testid=step-measure]").await;
        self.wait_for_js(
            "['done', 'cancelled', 'lost'].includes(document.querySelector('[data-testid=step-status]')?.dataset.value)",
            timeout,
        )
        .await;
    }

    /// Counts canvas pixels that differ from the canvas's top-left (background) pixel.
    ///
    /// # Panics
    /// When the script fails.
    pub async fn non_background_pixels(&self, canvas_css: &str) -> u64 {
        let script = format!(
            "const c = document.querySelector('{canvas_css}'); if (!c) return -1;\
             const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;\
             let n = 0; for (let i = 0; i < d.length; i += 4) {{\
               if (Math.abs(d[i]-d[0]) + Math.abs(d[i+1]-d[1]) + Math.abs(d[i+2]-d[2]) > 24) n++; }}\
             return n;"
        );
        let value = self.client.execute(&script, vec![]).await.expect("pixel script");
        value
            .as_i64()
            .and_then(|n| u64::try_from(n).ok())
            .expect("canvas exists")
    }

    /// Asserts that the roofline canvas is drawn: more than 2000 of its pixels differ from its background.
    ///
    /// # Panics
    /// When it is not.
    pub async fn assert_roofline_drawn(&self) {
        let drawn = self.non_background_pixels("[data-testid=roofline-canvas]").await;
        assert!(drawn > 2000, "the roofline is not drawn: {drawn} pixels");
    }

    /// The page's scroll width, the window's inner width and the width of the element matching `css`, in CSS
    /// pixels: a page wider than its window scrolls sideways.
    ///
    /// # Panics
    /// When the element does not exist.
    pub async fn widths(&self, css: &str) -> (f64, f64, f64) {
        let layout = self
            .js(&format!(
                "const e = document.querySelector('{css}').getBoundingClientRect();\
                 return [document.documentElement.scrollWidth, window.innerWidth, e.width];"
            ))
            .await;
        let width = |i: usize| {
            layout[i]
                .as_f64()
                .unwrap_or_else(|| panic!("widths of {css}: {layout}"))
        };
        (width(0), width(1), width(2))
    }

    /// Ends the session.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
