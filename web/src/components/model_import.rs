//! Imported models: paste a Hugging Face `config.json`, choose or drop the file; remove an imported model.

use leptos::prelude::*;
use roofline_core::MAX_CONFIG_JSON_BYTES;

use crate::browser;
use crate::models::import_model;
use crate::presets::DEFAULT_MODEL;
use crate::state::use_app;

/// `config.json` import beside the model select. The text (`model-json`, a file dropped on it fills it) or a
/// chosen file (`model-file`) goes through `ModelConfig::from_hf_config_json` (`model-import` for pasted
/// text); the model gets a key from the file name or `_name_or_path`, distinct from the presets, is added to
/// the imported models and selected. An error names the field (`model-import-message`, `data-ok="false"`)
/// and changes nothing. `model-remove` removes the selected imported model and falls back to the default.
#[component]
pub fn ModelImport() -> impl IntoView {
    let app = use_app();
    let (scenario, models) = (app.scenario, app.models);
    let text = RwSignal::new(String::new());
    let message = RwSignal::new(None::<(bool, String)>);
    let add = move |file_name: Option<String>, json: String| {
        let result = models.with_untracked(|taken| import_model(file_name.as_deref(), &json, taken));
        match result {
            Ok(model) => {
                let (key, name) = (model.key.clone(), model.name.clone());
                models.update(|list| list.push(model));
                scenario.update(|s| s.model.clone_from(&key));
                message.set(Some((true, format!("Imported {name} as '{key}'."))));
            }
            Err(e) => message.set(Some((false, format!("Not imported: {e}")))),
        }
    };
    let read = move |file: web_sys::File| {
        // Refused before it is read: core reads at most MAX_CONFIG_JSON_BYTES.
        if file.size() > MAX_CONFIG_JSON_BYTES as f64 {
            let why = format!(
                "Not imported: {} is {} bytes, above the limit of {MAX_CONFIG_JSON_BYTES} bytes (16 MiB).",
                file.name(),
                file.size()
            );
            message.set(Some((false, why)));
            return;
        }
        leptos::task::spawn_local(async move {
            match browser::read_file_text(file).await {
                Ok((name, json)) => {
                    text.set(json.clone());
                    add(Some(name), json);
                }
                Err(e) => message.set(Some((false, e.to_string()))),
            }
        });
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            read(file);
        }
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(file) = ev.data_transfer().and_then(|d| d.files()).and_then(|f| f.get(0)) {
            read(file);
        }
    };
    let is_imported = move || scenario.with(|s| models.with(|m| m.iter().any(|x| x.key == s.model)));
    let remove = move |_| {
        let key = scenario.with_untracked(|s| s.model.clone());
        models.update(|m| m.retain(|x| x.key != key));
        scenario.update(|s| s.model = DEFAULT_MODEL.to_owned());
        message.set(Some((
            true,
            format!("Removed '{key}'; now showing {DEFAULT_MODEL}."),
        )));
    };
    view! {
        <details class="model-import" data-testid="model-import">
            <summary>"Import a model (config.json)"</summary>
            <label for="model-json">"Paste a Hugging Face config.json, or drop the file here"</label>
            <textarea id="model-json" rows="5" data-testid="model-json" prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:dragover=move |ev: leptos::ev::DragEvent| ev.prevent_default()
                on:drop=on_drop></textarea>
            <div class="row">
                <button type="button" data-testid="model-import-button"
                    on:click=move |_| add(None, text.get_untracked())>"Import"</button>
                <label class="file-button">
                    "Choose file… "
                    <input type="file" accept=".json,application/json" data-testid="model-file" on:change=on_file />
                </label>
                <button type="button" data-testid="model-remove" on:click=remove disabled=move || !is_imported()>
                    "Remove current"
                </button>
            </div>
            {move || message.get().map(|(ok, m)| view! {
                <p class=if ok { "hint" } else { "error" } role="status" data-testid="model-import-message"
                    data-ok=ok.to_string()>{m}</p>
            })}
        </details>
    }
}
