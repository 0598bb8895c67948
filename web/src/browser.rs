//! Small browser helpers: timing marks a test can read, theme detection, file downloads.

use wasm_bindgen::JsValue;

/// Milliseconds since navigation start.
#[must_use]
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Records a finished roofline draw on `window`: `__roofline_first_draw_ms` (set once, ms after navigation
/// start), `__roofline_last_draw_ms` (the latest) and `__roofline_draw_count`. The e2e and timing scripts read
/// these.
pub fn record_draw() {
    record_draw_of("roofline");
}

/// Records a finished draw of chart `name` on `window`: `__<name>_first_draw_ms`, `__<name>_last_draw_ms` and
/// `__<name>_draw_count`, as [`record_draw`] does for the roofline (`roofline_serving` for the Pareto chart).
pub fn record_draw_of(name: &str) {
    let Some(w) = web_sys::window() else { return };
    let now = now_ms();
    let get = |k: &str| {
        js_sys::Reflect::get(&w, &JsValue::from_str(k))
            .ok()
            .and_then(|v| v.as_f64())
    };
    let set = |k: &str, v: f64| {
        let _ = js_sys::Reflect::set(&w, &JsValue::from_str(k), &JsValue::from_f64(v));
    };
    let (first, last, count) = (
        format!("__{name}_first_draw_ms"),
        format!("__{name}_last_draw_ms"),
        format!("__{name}_draw_count"),
    );
    if get(&first).is_none() {
        set(&first, now);
    }
    set(&last, now);
    set(&count, get(&count).map_or(1.0, |count| count + 1.0));
}

/// Device pixels per CSS pixel (1 when unknown), at least 1.
#[must_use]
pub fn device_pixel_ratio() -> f64 {
    web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0)
}

/// Whether the system asks for a dark colour scheme.
#[must_use]
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// Calls `f` whenever the system switches between light and dark (for the lifetime of the page).
pub fn on_theme_change(f: impl Fn() + 'static) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let Some(mql) =
        web_sys::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
    else {
        return;
    };
    let callback = Closure::<dyn Fn()>::new(f);
    if mql
        .add_event_listener_with_callback("change", callback.as_ref().unchecked_ref())
        .is_ok()
    {
        callback.forget();
    }
}

/// Starts a download of `href` (a data: or blob: URL) as `filename`.
pub fn download_url(href: &str, filename: &str) {
    use wasm_bindgen::JsCast;
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(a) = doc.create_element("a") else { return };
    let a: web_sys::HtmlAnchorElement = a.unchecked_into();
    a.set_href(href);
    a.set_download(filename);
    a.click();
}

/// Starts a download of `text` as `filename` with MIME type `mime`.
pub fn download_text(text: &str, filename: &str, mime: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    download_url(&url, filename);
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// A file the browser could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not read {file}: {reason}")]
pub struct ReadFileError {
    /// The file's name.
    pub file: String,
    /// The browser's error, as it prints.
    pub reason: String,
}

/// The text of a file the user chose or dropped, with its name.
///
/// # Errors
/// [`ReadFileError`] when the browser could not read it.
pub async fn read_file_text(file: web_sys::File) -> Result<(String, String), ReadFileError> {
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|e| ReadFileError {
            file: file.name(),
            reason: format!("{e:?}"),
        })?;
    Ok((file.name(), text.as_string().unwrap_or_default()))
}
