//! The endpoint's base URL setting.

use leptos::prelude::*;

use crate::endpoint::use_endpoint;

/// A URL field (`data-testid="endpoint-url"`): empty means the server that served this page, which covers
/// `gpu-endpoint serve` and an `ssh -L` tunnel with no setting. Saved locally.
#[component]
pub fn EndpointSettings() -> impl IntoView {
    let endpoint = use_endpoint();
    let draft = RwSignal::new(endpoint.base.get_untracked());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        endpoint.set_base(&draft.get_untracked());
        draft.set(endpoint.base_now());
    };
    view! {
        <form class="endpoint-settings" on:submit=save>
            <label for="endpoint-url">"Endpoint URL"</label>
            <input
                id="endpoint-url"
                type="text"
                placeholder="same origin"
                data-testid="endpoint-url"
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
            />
            <button type="submit">"Save"</button>
            <p class="hint">
                "Empty: the server that served this page. Another origin must allow this page with "
                <code>"gpu-endpoint serve --cors-origin <this page's origin>"</code> "."
            </p>
        </form>
    }
}
