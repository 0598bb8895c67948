//! The endpoint's base URL setting.

use leptos::prelude::*;

use crate::state::use_app;

/// A URL field (`data-testid="endpoint-url"`): empty means the server that served this page, which covers
/// `gpu-endpoint serve` and an `ssh -L` tunnel with no setting. Saved locally; what is not a URL is refused
/// with the reason (`endpoint-url-error`) and changes nothing.
#[component]
pub fn EndpointSettings() -> impl IntoView {
    let endpoint = use_app().endpoint;
    let draft = RwSignal::new(endpoint.base.get_untracked());
    let error = RwSignal::new(None::<String>);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match endpoint.set_base(&draft.get_untracked()) {
            Ok(()) => {
                error.set(None);
                draft.set(endpoint.base_now());
            }
            Err(e) => error.set(Some(e.to_string())),
        }
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
                aria-invalid=move || error.with(Option::is_some).to_string()
                on:input=move |ev| draft.set(event_target_value(&ev))
            />
            <button type="submit" data-testid="endpoint-save">"Save"</button>
            {move || error.get().map(|e| view! { <p class="error" role="alert" data-testid="endpoint-url-error">{e}</p> })}
            <p class="hint">
                "Empty: the server that served this page. Another origin must allow this page with "
                <code>"gpu-endpoint serve --cors-origin <this page's origin>"</code> "."
            </p>
        </form>
    }
}
