//! Imported models: paste a Hugging Face `config.json`, choose or drop the file (and its ModelOpt
//! `hf_quant_config.json`); remove an imported model.

use leptos::prelude::*;
use roofline_core::MAX_CONFIG_JSON_BYTES;

use crate::browser;
use crate::models::import_model_files;
use crate::presets::DEFAULT_MODEL;
use crate::state::use_app;

/// `config.json` import beside the model select. The text (`model-json`, a file dropped on it fills it) or a
/// chosen file (`model-file`; with a second file, NVIDIA ModelOpt's `hf_quant_config.json` beside it) goes
/// through `ModelConfig::from_hf_files` (`model-import` for pasted
/// text); the model gets a key from the file name or `_name_or_path`, distinct from the presets, is added to
/// the imported models and selected. An error names the field (`model-import-message`, `data-ok="false"`)
/// and changes nothing. `model-remove` removes the selected imported model and falls back to the default.
#[component]
pub fn ModelImport() -> impl IntoView {
    let app = use_app();
    let (scenario, models) = (app.scenario, app.models);
    let text = RwSignal::new(String::new());
    let message = RwSignal::new(None::<(bool, String)>);
    let add = move |file_name: Option<String>, texts: Vec<String>| {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let result = models.with_untracked(|taken| import_model_files(file_name.as_deref(), &texts, taken));
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
    // A config.json, and NVIDIA ModelOpt's hf_quant_config.json beside it when two files are chosen or
    // dropped; each refused before it is read past core's MAX_CONFIG_JSON_BYTES.
    let read = move |files: Vec<web_sys::File>| {
        if let Some(file) = files.iter().find(|f| f.size() > MAX_CONFIG_JSON_BYTES as f64) {
            let why = format!(
                "Not imported: {} is {} bytes, above the limit of {MAX_CONFIG_JSON_BYTES} bytes (16 MiB).",
                file.name(),
                file.size()
            );
            message.set(Some((false, why)));
            return;
        }
        leptos::task::spawn_local(async move {
            let mut read = Vec::with_capacity(files.len());
            for file in files {
                match browser::read_file_text(file).await {
                    Ok(named) => read.push(named),
                    Err(e) => return message.set(Some((false, e.to_string()))),
                }
            }
            let config = read
                .iter()
                .find(|(name, _)| !name.contains("hf_quant_config"))
                .or(read.first());
            let name = config.map(|(name, _)| name.clone());
            if let Some((_, json)) = config {
                text.set(json.clone());
            }
            add(name, read.into_iter().map(|(_, json)| json).collect());
        });
    };
    let files_of = |list: Option<web_sys::FileList>| -> Vec<web_sys::File> {
        list.map_or_else(Vec::new, |l| {
            (0..l.length().min(2)).filter_map(|i| l.get(i)).collect()
        })
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        read(files_of(input.files()));
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        read(files_of(ev.data_transfer().and_then(|d| d.files())));
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
                    on:click=move |_| add(None, vec![text.get_untracked()])>"Import"</button>
                <label class="file-button">
                    "Choose file… "
                    <input type="file" multiple accept=".json,application/json" data-testid="model-file" on:change=on_file />
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
