//! M, N, K inputs of the kernel spot check, with quick shapes.

use leptos::prelude::*;

use crate::state::{KernelSpec, QUICK_SHAPES};

/// One labelled number input bound to a dimension of the spec.
#[component]
fn DimInput(
    /// Label text (`M`, `N`, `K`).
    label: &'static str,
    /// The spec being edited.
    spec: RwSignal<KernelSpec>,
    /// Reads the dimension.
    get: fn(&KernelSpec) -> u64,
    /// Writes the dimension.
    set: fn(&mut KernelSpec, u64),
) -> impl IntoView {
    let id = format!("dim-{}", label.to_lowercase());
    let on_input = move |ev| {
        if let Ok(v) = event_target_value(&ev).trim().parse::<u64>() {
            spec.update(|s| set(s, v));
        }
    };
    view! {
        <div class="dim">
            <label for=id.clone()>{label}</label>
            <input
                id=id
                type="number"
                min="1"
                step="1"
                data-testid=format!("shape-{}", label.to_lowercase())
                prop:value=move || spec.with(|s| get(s).to_string())
                on:input=on_input
            />
        </div>
    }
}

/// GEMV/GEMM shape editor: `M×N×K` number inputs (M = 1 is a GEMV) and one-click quick shapes.
#[component]
pub fn ShapeForm(
    /// The spec being edited.
    spec: RwSignal<KernelSpec>,
) -> impl IntoView {
    let quick = QUICK_SHAPES
        .iter()
        .map(|q| {
            let on_click = move |_| {
                spec.update(|s| {
                    (s.m, s.n, s.k) = (q.m, q.n, q.k);
                })
            };
            view! { <button type="button" on:click=on_click>{q.label}</button> }
        })
        .collect_view();
    view! {
        <fieldset class="shape">
            <legend>"Shape (M×N×K, M = 1 is GEMV)"</legend>
            <div class="dims">
                <DimInput label="M" spec=spec get=|s| s.m set=|s, v| s.m = v />
                <DimInput label="N" spec=spec get=|s| s.n set=|s, v| s.n = v />
                <DimInput label="K" spec=spec get=|s| s.k set=|s, v| s.k = v />
            </div>
            <div class="quick">{quick}</div>
        </fieldset>
    }
}
