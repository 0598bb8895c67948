//! The switch at the top of the page between the model-step view and the serving view.

use leptos::prelude::*;

use crate::serving_inputs::View;
use crate::state::use_app;

/// Two tabs (`view-step`, `view-serving`; `aria-selected` on the open one) that set the scenario's view, so
/// a link and a reload open the same view.
#[component]
pub fn ViewSwitch() -> impl IntoView {
    let scenario = use_app().scenario;
    let tab = move |view: View, text: &'static str| {
        view! {
            <button
                type="button"
                role="tab"
                data-testid=format!("view-{}", view.name())
                aria-selected=move || scenario.with(|s| s.view == view).to_string()
                class:active=move || scenario.with(|s| s.view == view)
                on:click=move |_| scenario.update(|s| s.view = view)
            >
                {text}
            </button>
        }
    };
    view! {
        <nav class="view-switch" role="tablist" aria-label="View">
            {tab(View::Step, "Model step")}
            {tab(View::Serving, "Serving")}
        </nav>
    }
}
