//! What the endpoint's state means for the user: an "API offline" banner only when nothing answers, a calm
//! note when it measures without a GPU, and an offer to predict on the device it detected.

use leptos::prelude::*;

use crate::endpoint::Connection;
use crate::state::use_app;

/// The banner (`data-testid="endpoint-banner"`, `data-value` = `offline`/`no-gpu`/`gpu`), empty while the first
/// health check runs. A matched catalog device that is not selected gets a "Use" button
/// (`data-testid="use-detected-hardware"`).
#[component]
pub fn EndpointBanner() -> impl IntoView {
    let app = use_app();
    let (endpoint, scenario) = (app.endpoint, app.scenario);
    let where_ = move || {
        let base = endpoint.base.get();
        if base.is_empty() {
            "on this server".to_owned()
        } else {
            format!("at {base}")
        }
    };
    move || match endpoint.connection.get() {
        Connection::Checking => None,
        Connection::Offline => Some(
            view! {
                <div class="banner offline" role="alert" data-testid="endpoint-banner" data-value="offline">
                    <strong>"API offline"</strong>
                    " — no endpoint answers " {where_()}
                    ". Every prediction keeps running in this page; measuring needs "
                    <code>"gpu-endpoint serve"</code> "."
                </div>
            }
            .into_any(),
        ),
        Connection::Online => {
            let health = endpoint.health.get().and_then(Result::ok)?;
            let device = endpoint.device.get().flatten();
            let name = device.as_ref().map(|d| d.name.clone()).unwrap_or_default();
            let matched = device.and_then(|d| d.matched_key);
            let switch = matched.filter(|k| scenario.with(|s| &s.hardware != k)).map(|key| {
                let label = format!("Use {key} (detected)");
                let on_click = move |_| scenario.update(|s| s.hardware = key.clone());
                view! { <button type="button" data-testid="use-detected-hardware" on:click=on_click>{label}</button> }
            });
            let (value, text) = if health.backend == roofline_core::wire::BackendKind::Cuda {
                ("gpu", format!("Measuring on {name}."))
            } else {
                (
                    "no-gpu",
                    format!(
                        "No GPU on this endpoint: it measures on {name} ({} backend).",
                        health.backend
                    ),
                )
            };
            Some(
                view! {
                    <div class="banner calm" role="status" data-testid="endpoint-banner" data-value=value>
                        <span>{text}</span>
                        <small>{health.backend_reason}</small>
                        {switch}
                    </div>
                }
                .into_any(),
            )
        }
    }
}
