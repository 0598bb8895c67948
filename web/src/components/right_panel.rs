//! The right-hand tabs: Kernel, Advisor, Formats, Benchmark, Validation.

use leptos::prelude::*;
use roofline_core::{Advice, Error, HardwareSpec, Recommendation};
use wasm_bindgen::JsCast;

use crate::calibration::mode_label;
use crate::components::benchmark_tab::job_tracker;
use crate::components::spot_check::spot_check_state;
use crate::components::{
    AdvisorTab, BenchmarkTab, FormatsTab, PrecisionSelect, PredictionTable, ShapeForm, SpotCheck,
    ValidationTab,
};
use crate::scenario::{KernelRow, Scenario};

/// The tabs, in order.
const TABS: [&str; 5] = ["Kernel", "Advisor", "Formats", "Benchmark", "Validation"];

/// Tabbed panel (ARIA tabs, arrow keys move between them; the Kernel tab is open by default and holds the spot check with the
/// `predictions` table and the measurement on the endpoint). Benchmark runs jobs on the endpoint, and
/// Validation compares every measured point with its predictions.
#[component]
pub fn RightPanel(
    /// The scenario.
    scenario: RwSignal<Scenario>,
    /// The selected device.
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// Kernel spot-check rows.
    #[prop(into)]
    rows: Signal<Vec<KernelRow>>,
    /// Advisor output.
    #[prop(into)]
    advice: Signal<Result<Advice, Error>>,
    /// The advisor's one answer.
    #[prop(into)]
    recommendation: Signal<Result<Recommendation, Error>>,
    /// Custom devices (calibrated specs are kept there).
    custom: RwSignal<Vec<HardwareSpec>>,
) -> impl IntoView {
    let tab = RwSignal::new(0usize);
    let spot = spot_check_state(scenario, hardware);
    let job = job_tracker();
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let step = match ev.key().as_str() {
            "ArrowRight" => 1,
            "ArrowLeft" => TABS.len() - 1,
            _ => return,
        };
        let next = (tab.get_untracked() + step) % TABS.len();
        tab.set(next);
        if let Some(el) = document().get_element_by_id(&format!("tab-{next}")) {
            let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
        }
    };
    let buttons = TABS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            view! {
                <button
                    type="button"
                    role="tab"
                    id=format!("tab-{i}")
                    aria-selected=move || (tab.get() == i).to_string()
                    tabindex=move || if tab.get() == i { "0" } else { "-1" }
                    class:active=move || tab.get() == i
                    on:click=move |_| tab.set(i)
                    on:keydown=on_key
                >
                    {*name}
                </button>
            }
        })
        .collect_view();
    view! {
        <section class="right" aria-label="Tools">
            <div role="tablist" class="tabs">{buttons}</div>
            <div role="tabpanel" aria-labelledby=move || format!("tab-{}", tab.get())>
                {move || match tab.get() {
                    0 => view! {
                        <div class="kernel-tab">
                            <ShapeForm scenario=scenario />
                            <PrecisionSelect scenario=scenario hardware=hardware />
                            <PredictionTable rows=rows mode=Signal::derive(move || hardware.with(mode_label)) />
                            <SpotCheck scenario=scenario hardware=hardware state=spot />
                        </div>
                    }
                    .into_any(),
                    1 => view! { <AdvisorTab advice=advice recommendation=recommendation scenario=scenario /> }.into_any(),
                    2 => view! { <FormatsTab /> }.into_any(),
                    3 => view! { <BenchmarkTab scenario=scenario hardware=hardware job=job /> }.into_any(),
                    _ => view! { <ValidationTab scenario=scenario custom=custom /> }.into_any(),
                }}
            </div>
        </section>
    }
}
