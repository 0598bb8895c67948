//! Export and import of results, and clearing saved data.

use leptos::prelude::*;

use crate::measured::add_points;
use crate::state::use_app;
use crate::{api, browser};

/// Buttons: export results as JSON or CSV (from the current state), import measured points from JSON
/// (appended to this browser's), clear measured points and everything saved locally.
#[component]
pub fn ResultsIo() -> impl IntoView {
    let text = RwSignal::new(String::new());
    let message = RwSignal::new(None::<String>);
    let app = use_app();
    let (endpoint, all_measured) = (app.endpoint, app.measured);
    let measured = all_measured.local;
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
    // Says how many points are new: importing the same file twice adds nothing the second time.
    let import = move |_| match crate::export::import_measured(&text.get_untracked()) {
        Ok(points) => {
            let read = points.len();
            let mut added = 0;
            measured.update(|m| added = add_points(m, points));
            message.set(Some(match read - added {
                0 => format!("Imported {added} new point(s)."),
                known => format!("Imported {added} new point(s); {known} already present."),
            }));
        }
        Err(e) => message.set(Some(e.to_string())),
    };
    view! {
        <details class="results-io">
            <summary>"Results: export / import"</summary>
            <div class="row">
                <button type="button" on:click=move |_| browser::download_text(&app.results(true), "roofline-results.json", "application/json")>"Export JSON"</button>
                <button type="button" on:click=move |_| browser::download_text(&app.results(false), "roofline-results.csv", "text/csv")>"Export CSV"</button>
            </div>
            <label for="import-json">"Import measured points (JSON)"</label>
            <textarea id="import-json" data-testid="import-json" rows="3" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="row">
                <button type="button" data-testid="import-button" on:click=import>"Import"</button>
                <button type="button" data-testid="clear-measured" on:click=clear_measured disabled=move || all_measured.shown.with(Vec::is_empty)>
                    {move || format!("Clear {} measured", all_measured.shown.with(Vec::len))}
                </button>
                <button type="button" on:click=move |_| app.clear() data-testid="clear-storage">"Clear saved data"</button>
            </div>
            {move || message.get().map(|m| view! { <p class="hint" role="status" data-testid="results-message">{m}</p> })}
        </details>
    }
}
