//! The page's layout over its state ([`crate::state`]).

use leptos::prelude::*;

use crate::components::custom_hardware::CustomHardware;
use crate::components::endpoint_banner::EndpointBanner;
use crate::components::endpoint_status::EndpointStatus;
use crate::components::hardware_picker::HardwarePicker;
use crate::components::model_import::ModelImport;
use crate::components::results_io::ResultsIo;
use crate::components::right_panel::RightPanel;
use crate::components::serving_view::ServingView;
use crate::components::step_view::StepView;
use crate::components::view_switch::ViewSwitch;
use crate::components::workload_form::WorkloadForm;
use crate::serving_inputs::View;
use crate::state::AppState;

/// The whole page: header; left, device and workload; centre, the model step (summary, roofline,
/// operators, pins) or the serving view; right, in the step view, the Kernel/Advisor/Formats/Benchmark/
/// Validation tabs (the serving view takes their width). State
/// comes from the URL, else from local storage, else defaults; it is written back to both on every change.
#[component]
pub fn App() -> impl IntoView {
    let app = AppState::provide();
    let notice = app.notice;
    view! {
        {move || {
            notice.get().map(|n| view! {
                <div class="notice" role="status" data-testid="storage-notice">
                    <span>{n}</span>
                    <button type="button" on:click=move |_| notice.set(None)>"Dismiss"</button>
                </div>
            })
        }}
        <a class="skip-link" href="#main-view" data-testid="skip-link">"Skip to the results"</a>
        <header class="top">
            <h1>"roofline"</h1>
            <p class="subtitle">"Which precision should this model run in, on this GPU? Predicted in your browser."</p>
            <ViewSwitch />
            <div class="header-right"><EndpointStatus /></div>
        </header>
        <EndpointBanner />
        <main class="layout" class:serving-layout=move || app.scenario.with(|s| s.view == View::Serving)>
            <aside class="left" aria-label="Device and workload">
                <h2 class="sr-only">"Device and workload"</h2>
                <HardwarePicker />
                <CustomHardware />
                <WorkloadForm />
                <ModelImport />
                <ResultsIo />
            </aside>
            <Show when=move || app.scenario.with(|s| s.view == View::Step) fallback=|| view! { <ServingView /> }>
                <StepView />
            </Show>
            // The right panel's tools are the step's and the kernel's: the serving view takes its width.
            <Show when=move || app.scenario.with(|s| s.view == View::Step)>
                <RightPanel />
            </Show>
        </main>
    }
}
