//! How many measured points the page shows.

use leptos::prelude::*;

use crate::measured::use_measured;

/// `N measured points` with the bare number in `data-testid="measured-count"`.
#[component]
pub fn MeasuredCount() -> impl IntoView {
    let measured = use_measured();
    let n_points = move || measured.shown.with(Vec::len);
    view! {
        <p class="measured-count hint">
            <span data-testid="measured-count">{n_points}</span>
            {move || if n_points() == 1 { " measured point (hollow circles, M)" } else { " measured points (hollow circles, M)" }}
        </p>
    }
}
