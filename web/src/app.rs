//! Top-level state and layout.

use leptos::prelude::*;
use roofline_core::HardwareSpec;

use crate::charts::RooflineChart;
use crate::charts::series::{kernel_points, plot_data};
use crate::components::{HardwarePicker, PrecisionSelect, PredictionTable, ShapeForm};
use crate::state::{KernelSpec, resolve_hardware};

/// The device shown when a key resolves to nothing.
const DEFAULT_HARDWARE: &str = "gb10";

/// The whole page: controls on the left, the roofline and predictions in the centre.
#[component]
pub fn App() -> impl IntoView {
    let hardware_key = RwSignal::new(DEFAULT_HARDWARE.to_owned());
    let custom = RwSignal::new(Vec::<HardwareSpec>::new());
    let kernel = RwSignal::new(KernelSpec::default());

    let hardware = Memo::new(move |_| {
        let found = hardware_key.with(|k| custom.with(|c| resolve_hardware(k, c)));
        found.unwrap_or_else(|| resolve_hardware(DEFAULT_HARDWARE, &[]).expect("the catalog has the default device"))
    });
    let rows = Memo::new(move |_| hardware.with(|h| kernel.with(|k| k.evaluate(h))));
    let plot = Memo::new(move |_| hardware.with(|h| rows.with(|r| plot_data(h, kernel_points(r)))));

    view! {
        <header class="top">
            <h1>"roofline"</h1>
            <p class="subtitle">"Where does your kernel sit between memory and compute — in every precision?"</p>
        </header>
        <main class="layout">
            <aside class="left">
                <HardwarePicker key=hardware_key hardware=hardware custom=custom />
                <ShapeForm spec=kernel />
                <PrecisionSelect spec=kernel hardware=hardware />
            </aside>
            <section class="centre">
                <RooflineChart data=plot />
                <PredictionTable rows=rows />
            </section>
        </main>
    }
}
