//! Multi-select of precisions as a group of checkboxes.

use leptos::prelude::*;
use roofline_core::Precision;

use crate::palette::{css, precision_rgb};
use crate::state::use_app;

/// One checkbox per precision (`data-precision` on each input); precisions the device cannot run stay
/// selectable and are marked, so the table can say why they have no prediction.
#[component]
pub fn PrecisionSelect() -> impl IntoView {
    let app = use_app();
    let (scenario, hardware) = (app.scenario, app.device.hardware);
    let boxes = Precision::ALL
        .into_iter()
        .map(|p| {
            let checked = move || scenario.with(|s| s.kernel.precisions.contains(&p));
            let supported = move || hardware.with(|h| h.dense_peak_for(p).is_ok());
            // The architecture has the path but the catalog has no figure for it: unknown, not unsupported.
            let unknown = move || hardware.with(|h| h.arch.runs_format(p) && h.peak(p.compute_path()).is_none());
            let title = move || {
                if unknown() {
                    "no published figure in the catalog"
                } else if supported() {
                    ""
                } else {
                    "no such tensor-core path on this architecture"
                }
            };
            view! {
                <label class="check" class:unsupported=move || !supported() && !unknown() class:unknown=unknown title=title>
                    <input
                        type="checkbox"
                        data-precision=p.name()
                        prop:checked=checked
                        on:change=move |_| scenario.update(|s| s.kernel.toggle(p))
                    />
                    <span class="swatch" style=format!("background:{}", css(precision_rgb(p)))></span>
                    {p.name()}
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="precisions">
            <legend>"Precisions"</legend>
            {boxes}
        </fieldset>
    }
}
