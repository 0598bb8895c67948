//! The scenario in the address bar. Rule: a discrete change (device, model, config, phase, precisions, mode,
//! corrections, quick shape, engine, view, serving scheduler) pushes a history entry; a continuous one
//! (batch or context slider, typing M/N/K or the serving view's numbers) replaces the current entry, so Back
//! walks discrete steps, not every slider pixel. The URL also
//! carries the custom devices in use and the pins ([`SharedLink`]), so a link opens identically elsewhere.

use crate::scenario::Scenario;
use crate::share_link::SharedLink;

/// The share link in the current URL's query, if it names a scenario.
#[must_use]
pub fn read() -> Option<SharedLink> {
    let search = web_sys::window()?.location().search().ok()?;
    SharedLink::from_query(&search)
}

/// Writes `query` (the link of `next`) to the URL: pushes when `next` differs discretely from `previous`,
/// else replaces. Does nothing when the URL already holds it (e.g. after Back restored it).
pub fn write(previous: Option<&Scenario>, next: &Scenario, query: &str) {
    let Some(window) = web_sys::window() else { return };
    let query = format!("?{query}");
    if window.location().search().ok().as_deref() == Some(query.as_str()) {
        return;
    }
    let Ok(history) = window.history() else { return };
    let push = previous.is_some_and(|p| p.is_discrete_change(next));
    let result = if push {
        history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&query))
    } else {
        history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&query))
    };
    if let Err(e) = result {
        leptos::logging::warn!("could not update the URL: {e:?}");
    }
}
