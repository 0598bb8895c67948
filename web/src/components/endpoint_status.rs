//! Badge telling whether the optional endpoint answers, what it measures on, and where it is.

use leptos::prelude::*;

use crate::components::endpoint_settings::EndpointSettings;
use crate::endpoint::Connection;
use crate::state::use_app;

/// `endpoint: online · cpu · <device> · matches <key>` or `endpoint: offline`
/// (`data-testid="endpoint-status"`, `data-value` = `checking`/`online`/`offline`), refreshed by the health
/// poll; it opens the endpoint's URL setting.
#[component]
pub fn EndpointStatus() -> impl IntoView {
    let endpoint = use_app().endpoint;
    let state = move || endpoint.connection.get();
    let text = move || match state() {
        Connection::Online => {
            let backend = endpoint
                .health
                .get()
                .and_then(Result::ok)
                .map(|h| h.backend.to_string())
                .unwrap_or_default();
            let mut parts = vec!["endpoint: online".to_owned(), backend];
            if let Some(d) = endpoint.device.get().flatten() {
                parts.push(d.name);
                if let Some(key) = d.matched_key {
                    parts.push(format!("matches {key}"));
                }
            }
            parts.join(" · ")
        }
        other => format!("endpoint: {}", other.name()),
    };
    view! {
        <details class="endpoint">
            <summary
                class=move || format!("badge {}", state().name())
                data-testid="endpoint-status"
                data-value=move || state().name()
                title="Endpoint settings"
            >
                {text}
            </summary>
            <EndpointSettings />
        </details>
    }
}
