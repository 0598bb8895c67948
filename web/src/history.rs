//! The scenario in the address bar. Rule: a discrete change (device, model, config, phase, precisions, mode,
//! corrections, quick shape, engine, view, serving scheduler) pushes a history entry; a continuous one
//! (batch or context slider, typing M/N/K or the serving view's numbers) replaces the current entry once changes
//! pause ([`REPLACE_DELAY`]), so Back walks discrete steps, not every slider pixel. The URL also
//! carries the custom devices in use and the pins ([`SharedLink`]), so a link opens identically elsewhere.

use std::time::Duration;

use crate::share_link::SharedLink;

/// The share link in the current URL's query, if it names a scenario.
#[must_use]
pub fn read() -> Option<SharedLink> {
    let search = web_sys::window()?.location().search().ok()?;
    SharedLink::from_query(&search)
}

/// How long a continuous change waits before it replaces the URL: a slider drag writes it once it pauses
/// (each write costs the page about 2 ms of a 60 Hz frame in Chromium).
pub const REPLACE_DELAY: Duration = Duration::from_millis(250);

/// Whether the URL's query is `query`.
#[must_use]
pub fn holds(query: &str) -> bool {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .is_some_and(|search| search.strip_prefix('?') == Some(query))
}

/// Writes `query` to the URL: a new history entry when `push`, else in place of the current one. Does
/// nothing when the URL already holds it (e.g. after Back restored it).
pub fn write(query: &str, push: bool) {
    if holds(query) {
        return;
    }
    let Some(history) = web_sys::window().and_then(|w| w.history().ok()) else {
        return;
    };
    let query = format!("?{query}");
    let result = if push {
        history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&query))
    } else {
        history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&query))
    };
    if let Err(e) = result {
        leptos::logging::warn!("could not update the URL: {e:?}");
    }
}
