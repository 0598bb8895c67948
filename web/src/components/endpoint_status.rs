//! Badge telling whether the optional GPU endpoint answers.

use leptos::prelude::*;

use crate::api;

/// `online` (with the backend) or `offline` from one `GET /api/health` on the same origin
/// (`data-testid="endpoint-status"`, `data-value` = `online`/`offline`/`checking`).
#[component]
pub fn EndpointStatus() -> impl IntoView {
    let health = LocalResource::new(api::health);
    let state = move || match health.get() {
        None => ("checking", "endpoint: checking…".to_owned()),
        Some(Ok(h)) => ("online", format!("endpoint: online ({})", h.backend)),
        Some(Err(_)) => ("offline", "endpoint: offline".to_owned()),
    };
    view! {
        <span class=move || format!("badge {}", state().0) data-testid="endpoint-status" data-value=move || state().0>
            {move || state().1}
        </span>
    }
}
