//! The roofline page (placeholder until the first page lands).
use leptos::prelude::*;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    view! { <h1>"roofline"</h1> }
}
