//! The model-step view: the summary, the roofline, the measured points' count and filters, the pins, the
//! step measured on the endpoint and the operator table.

use leptos::prelude::*;
use roofline_core::Mode;

use crate::charts::RooflineChart;
use crate::components::measured_count::MeasuredCount;
use crate::components::operator_table::OperatorTable;
use crate::components::pins_panel::PinsPanel;
use crate::components::step_measure::StepMeasure;
use crate::components::summary_strip::SummaryStrip;
use crate::state::use_app;

/// The centre of the page in the model-step view. An exported PNG or SVG prints the mode, device, model,
/// config, phase, batch and context under the chart (the scenario's label names the device, so the mode
/// goes before it alone).
#[component]
pub fn StepView() -> impl IntoView {
    let app = use_app();
    let (scenario, custom, models, hardware) = (app.scenario, app.custom, app.models, app.device.hardware);
    let caption = Signal::derive(move || {
        let label = custom.with(|c| models.with(|m| scenario.with(|s| s.label(c, m))));
        hardware.with(|h| format!("{} · {label}", Mode::of(h)))
    });
    view! {
        <section class="centre" aria-label="Analysis" id="main-view" tabindex="-1">
            <h2 class="sr-only">"Model step"</h2>
            <SummaryStrip />
            <RooflineChart data=app.chart.plot caption=caption kinds=app.chart.kinds />
            <MeasuredCount />
            <PinsPanel />
            <StepMeasure />
            <OperatorTable />
        </section>
    }
}
