//! Export and import of results, and clearing saved data.

use leptos::prelude::*;
use roofline_core::wire::RooflinePoint;

use crate::endpoint::use_endpoint;
use crate::measured::{add_points, use_measured};
use crate::{api, browser};

/// Buttons: export results as JSON or CSV (built by the caller from the current state), import measured
/// points from JSON, clear measured points and everything saved locally.
#[component]
pub fn ResultsIo(
    /// Builds the JSON export.
    to_json: Callback<(), String>,
    /// Builds the CSV export.
    to_csv: Callback<(), String>,
    /// Measured points (imports are appended).
    measured: RwSignal<Vec<RooflinePoint>>,
    /// Clears everything saved.
    on_clear: Callback<()>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let message = RwSignal::new(None::<String>);
    let endpoint = use_endpoint();
    let all_measured = use_measured();
    // Clears this browser's points and, after a confirmation, the endpoint's stored history too, so a reload
    // shows none.
    let clear_measured = move |_| {
        let online = endpoint.is_online();
        let question = if online {
            "Delete every measured point, in this browser and stored on the endpoint? This cannot be undone."
        } else {
            "Delete every measured point saved in this browser? This cannot be undone."
        };
        if !window().confirm_with_message(question).unwrap_or(false) {
            return;
        }
        measured.set(Vec::new());
        if !online {
            message.set(Some("Measured points cleared.".to_owned()));
            return;
        }
        let base = endpoint.base_now();
        leptos::task::spawn_local(async move {
            match api::delete_all_results(&base).await {
                Ok(d) => message.set(Some(format!(
                    "Measured points cleared ({} deleted on the endpoint).",
                    d.deleted
                ))),
                Err(e) => message.set(Some(format!(
                    "Cleared here; the endpoint's history was not deleted: {e}"
                ))),
            }
            all_measured.refresh_history();
        });
    };
    let import = move |_| match crate::export::import_measured(&text.get_untracked()) {
        Ok(points) => {
            message.set(Some(format!("Imported {} point(s).", points.len())));
            measured.update(|m| {
                add_points(m, points);
            });
        }
        Err(e) => message.set(Some(e.to_string())),
    };
    view! {
        <details class="results-io">
            <summary>"Results: export / import"</summary>
            <div class="row">
                <button type="button" on:click=move |_| browser::download_text(&to_json.run(()), "roofline-results.json", "application/json")>"Export JSON"</button>
                <button type="button" on:click=move |_| browser::download_text(&to_csv.run(()), "roofline-results.csv", "text/csv")>"Export CSV"</button>
            </div>
            <label for="import-json">"Import measured points (JSON)"</label>
            <textarea id="import-json" rows="3" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="row">
                <button type="button" on:click=import>"Import"</button>
                <button type="button" data-testid="clear-measured" on:click=clear_measured disabled=move || all_measured.shown.with(Vec::is_empty)>
                    {move || format!("Clear {} measured", all_measured.shown.with(Vec::len))}
                </button>
                <button type="button" on:click=move |_| on_clear.run(()) data-testid="clear-storage">"Clear saved data"</button>
            </div>
            {move || message.get().map(|m| view! { <p class="hint" role="status" data-testid="results-message">{m}</p> })}
        </details>
    }
}
