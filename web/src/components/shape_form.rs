//! M, N, K inputs of the kernel spot check, with quick shapes.

use leptos::prelude::*;

use roofline_core::ops::MAX_DIM;

use crate::presets::QUICK_SHAPES;
use crate::scenario::{KernelSpec, Scenario};
use crate::sliders::{RangeError, parse_in_range};
use crate::state::use_app;

/// One labelled number input bound to a dimension of the kernel spec.
#[component]
fn DimInput(
    /// Label text (`M`, `N`, `K`).
    label: &'static str,
    /// The scenario whose kernel spec is edited.
    scenario: RwSignal<Scenario>,
    /// Reads the dimension.
    get: fn(&KernelSpec) -> u64,
    /// Writes the dimension.
    set: fn(&mut KernelSpec, u64),
) -> impl IntoView {
    let id = format!("dim-{}", label.to_lowercase());
    let invalid = RwSignal::new(None::<RangeError>);
    let on_input = move |ev| match parse_in_range(&event_target_value(&ev), 1, MAX_DIM) {
        Ok(v) => {
            invalid.set(None);
            scenario.update(|s| set(&mut s.kernel, v));
        }
        Err(reason) => invalid.set(Some(reason)),
    };
    view! {
        <div class="dim">
            <label for=id.clone()>{label}</label>
            <input
                id=id
                type="number"
                min="1"
                step="1"
                data-testid=format!("spot-{}", label.to_lowercase())
                prop:value=move || scenario.with(|s| get(&s.kernel).to_string())
                aria-invalid=move || invalid.with(Option::is_some).to_string()
                on:input=on_input
            />
            {move || invalid.get().map(|r| view! {
                <span class="error invalid" role="alert" data-testid=format!("spot-{}-invalid", label.to_lowercase())>
                    {format!("{label} {r}; still using {}", scenario.with(|s| get(&s.kernel)))}
                </span>
            })}
        </div>
    }
}

/// GEMV/GEMM shape editor: `M×N×K` number inputs (M = 1 is a GEMV) and one-click quick shapes.
#[component]
pub fn ShapeForm() -> impl IntoView {
    let scenario = use_app().scenario;
    let quick = QUICK_SHAPES
        .iter()
        .map(|q| {
            let on_click =
                move |_| scenario.update(|s| (s.kernel.m, s.kernel.n, s.kernel.k) = (q.m, q.n, q.k));
            view! { <button type="button" on:click=on_click>{q.label}</button> }
        })
        .collect_view();
    view! {
        <fieldset class="shape">
            <legend>"Shape (M×N×K, M = 1 is GEMV)"</legend>
            <div class="dims">
                <DimInput label="M" scenario=scenario get=|k| k.m set=|k, v| k.m = v />
                <DimInput label="N" scenario=scenario get=|k| k.n set=|k, v| k.n = v />
                <DimInput label="K" scenario=scenario get=|k| k.k set=|k, v| k.k = v />
            </div>
            <div class="quick">{quick}</div>
        </fieldset>
    }
}
