//! The right-hand tabs: Kernel, Advisor, Formats, Benchmark, Validation.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::advisor_tab::AdvisorTab;
use crate::components::benchmark_tab::BenchmarkTab;
use crate::components::formats_tab::FormatsTab;
use crate::components::precision_select::PrecisionSelect;
use crate::components::prediction_table::PredictionTable;
use crate::components::shape_form::ShapeForm;
use crate::components::spot_check::SpotCheck;
use crate::components::validation_tab::ValidationTab;
use crate::state::{Tab, use_app};

/// Tabbed panel (ARIA tabs, arrow keys move between them; the Kernel tab is open by default and holds the spot check with the
/// `predictions` table and the measurement on the endpoint). Benchmark runs jobs on the endpoint, and
/// Validation compares every measured point with its predictions.
#[component]
pub fn RightPanel() -> impl IntoView {
    let tab = use_app().tab;
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let step = match ev.key().as_str() {
            "ArrowRight" => 1,
            "ArrowLeft" => -1,
            _ => return,
        };
        let next = tab.get_untracked().after(step);
        tab.set(next);
        if let Some(el) = document().get_element_by_id(&next.id()) {
            let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
        }
    };
    let buttons = Tab::ALL
        .into_iter()
        .map(|t| {
            view! {
                <button
                    type="button"
                    role="tab"
                    id=t.id()
                    aria-selected=move || (tab.get() == t).to_string()
                    tabindex=move || if tab.get() == t { "0" } else { "-1" }
                    class:active=move || tab.get() == t
                    on:click=move |_| tab.set(t)
                    on:keydown=on_key
                >
                    {t.name()}
                </button>
            }
        })
        .collect_view();
    view! {
        <section class="right" aria-label="Tools">
            <h2 class="sr-only">"Tools"</h2>
            <div role="tablist" class="tabs">{buttons}</div>
            <div role="tabpanel" aria-labelledby=move || tab.get().id()>
                {move || match tab.get() {
                    Tab::Kernel => view! {
                        <div class="kernel-tab">
                            <ShapeForm />
                            <PrecisionSelect />
                            <PredictionTable />
                            <SpotCheck />
                        </div>
                    }
                    .into_any(),
                    Tab::Advisor => view! { <AdvisorTab /> }.into_any(),
                    Tab::Formats => view! { <FormatsTab /> }.into_any(),
                    Tab::Benchmark => view! { <BenchmarkTab /> }.into_any(),
                    Tab::Validation => view! { <ValidationTab /> }.into_any(),
                }}
            </div>
        </section>
    }
}
