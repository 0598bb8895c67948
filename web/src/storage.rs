//! Local persistence under one versioned localStorage key. Anything unreadable is salvaged field by field or
//! reset, and the user is told; a bad stored value never blanks the page.

use roofline_core::wire::RooflinePoint;
use roofline_core::{HardwareSpec, ModelConfig};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::scenario::Scenario;
use crate::serving::measured::ServingRun;

/// The localStorage key.
pub const KEY: &str = "roofline.state";
/// Where an unreadable value is kept so nothing is lost silently.
pub const BACKUP_KEY: &str = "roofline.state.backup";
/// The current schema version.
pub const SCHEMA: u64 = 1;
/// At most this many pinned scenarios.
pub const MAX_PINS: usize = 4;

/// Everything saved locally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    /// Schema version.
    pub schema: u64,
    /// The last scenario.
    pub settings: Scenario,
    /// User-defined devices (each passes `HardwareSpec::check`).
    pub custom_hardware: Vec<HardwareSpec>,
    /// Models imported from `config.json` files (each passes `ModelConfig::check`, none has a preset's
    /// key); absent in values saved before imports existed.
    #[serde(default)]
    pub custom_models: Vec<ModelConfig>,
    /// Pinned scenarios.
    pub pins: Vec<Scenario>,
    /// Imported or measured points.
    pub measured: Vec<RooflinePoint>,
    /// Imported serving runs, each with the scenario it ran with; absent in values saved before them.
    #[serde(default)]
    pub serving_runs: Vec<ServingRun>,
}

impl Default for Stored {
    fn default() -> Self {
        Stored {
            schema: SCHEMA,
            settings: Scenario::default(),
            custom_hardware: vec![],
            custom_models: vec![],
            pins: vec![],
            measured: vec![],
            serving_runs: vec![],
        }
    }
}

/// The stored object's fields as their raw JSON text, so each is salvaged on its own.
type Fields<'a> = std::collections::HashMap<String, &'a RawValue>;

/// Deserializes `field` of `obj`, or `None` (and a note) when it is present but unreadable. It reads the
/// field's text with `from_str`, as the page's other readers of these types do: going through a
/// `serde_json::Value` would compile the stored types' `Deserialize` once more, for the `Value` deserializer
/// (about 2 kB of the brotli wasm with the serving measurements, issue 26 item 8).
fn field<T: for<'de> Deserialize<'de>>(obj: &Fields<'_>, name: &str, dropped: &mut Vec<String>) -> Option<T> {
    let v = obj.get(name)?;
    serde_json::from_str(v.get())
        .map_err(|_| dropped.push(name.to_owned()))
        .ok()
}

/// Reads a stored value. Returns the state and, when anything had to be migrated, dropped or reset, a
/// notice for the user.
#[must_use]
pub fn decode(raw: Option<&str>) -> (Stored, Option<String>) {
    let Some(raw) = raw else {
        return (Stored::default(), None);
    };
    let Ok(obj) = serde_json::from_str::<Fields<'_>>(raw) else {
        return (
            Stored::default(),
            Some("Saved settings were unreadable and have been reset.".to_owned()),
        );
    };
    let schema = obj
        .get("schema")
        .and_then(|v| serde_json::from_str::<u64>(v.get()).ok())
        .unwrap_or(0);
    if schema > SCHEMA {
        let msg = format!("Saved settings come from a newer version (schema {schema}); defaults are used.");
        return (Stored::default(), Some(msg));
    }
    let mut dropped = Vec::new();
    let mut stored = Stored {
        schema: SCHEMA,
        settings: field(&obj, "settings", &mut dropped).unwrap_or_default(),
        custom_hardware: field(&obj, "custom_hardware", &mut dropped).unwrap_or_default(),
        custom_models: field(&obj, "custom_models", &mut dropped).unwrap_or_default(),
        pins: field(&obj, "pins", &mut dropped).unwrap_or_default(),
        measured: field(&obj, "measured", &mut dropped).unwrap_or_default(),
        serving_runs: field(&obj, "serving_runs", &mut dropped).unwrap_or_default(),
    };
    let before = stored.custom_hardware.len();
    stored
        .custom_hardware
        .retain(|h| h.check().is_ok() && roofline_core::find_hardware(&h.key).is_err());
    if stored.custom_hardware.len() < before {
        dropped.push(format!(
            "{} invalid custom device(s)",
            before - stored.custom_hardware.len()
        ));
    }
    let before = stored.custom_models.len();
    stored
        .custom_models
        .retain(|m| m.check().is_ok() && roofline_core::find_model(&m.key).is_err());
    if stored.custom_models.len() < before {
        dropped.push(format!(
            "{} invalid imported model(s)",
            before - stored.custom_models.len()
        ));
    }
    stored.pins.truncate(MAX_PINS);
    let notice = match (schema < SCHEMA, dropped.is_empty()) {
        (false, true) => None,
        (true, true) => Some(format!(
            "Saved settings were migrated from schema {schema} to {SCHEMA}."
        )),
        (_, false) => Some(format!(
            "Some saved data could not be read and was reset: {}.",
            dropped.join(", ")
        )),
    };
    (stored, notice)
}

/// The browser's localStorage, if available.
fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// Loads the saved state; an unreadable value is backed up under [`BACKUP_KEY`] before it is replaced.
#[must_use]
pub fn load() -> (Stored, Option<String>) {
    let storage = local_storage();
    let raw = storage.as_ref().and_then(|s| s.get_item(KEY).ok().flatten());
    let (stored, notice) = decode(raw.as_deref());
    if let (Some(s), Some(raw), Some(_)) = (&storage, &raw, &notice) {
        let _ = s.set_item(BACKUP_KEY, raw);
    }
    (stored, notice)
}

/// How long the page waits after its last change before it calls [`save`] (a slider drag saves once it
/// pauses; the page also saves at once when it is hidden or left).
pub const SAVE_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// Saves the state; a failure (quota, private mode) is logged, not fatal.
pub fn save(stored: &Stored) {
    let Some(storage) = local_storage() else { return };
    match serde_json::to_string(stored) {
        Ok(json) => {
            if let Err(e) = storage.set_item(KEY, &json) {
                leptos::logging::warn!("could not save settings: {e:?}");
            }
        }
        Err(e) => leptos::logging::warn!("could not serialize settings: {e}"),
    }
}

/// Removes everything this page saved.
pub fn clear() {
    if let Some(s) = local_storage() {
        let _ = s.remove_item(KEY);
        let _ = s.remove_item(BACKUP_KEY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_has_no_notice() {
        let mut stored = Stored::default();
        stored.settings.batch = 32;
        stored.settings.serving.isl = 4096;
        stored.pins.push(Scenario::default());
        let vllm = include_str!("../../core/tests/data/serving/vllm_bench_serve.json");
        let pending = crate::serving::measured::read("run.json", vllm, &stored.settings).unwrap();
        crate::serving::measured::add(&mut stored.serving_runs, &pending);
        let qwen = include_str!("../../core/tests/data/hf/qwen3-8b.json");
        stored
            .custom_models
            .push(crate::models::import_model(None, qwen, &[]).unwrap());
        let json = serde_json::to_string(&stored).unwrap();
        assert_eq!(decode(Some(&json)), (stored, None));
        assert_eq!(decode(None), (Stored::default(), None));
    }

    #[test]
    fn corrupted_and_foreign_values_reset_with_a_notice() {
        for raw in ["{not json", "[1,2,3]", "\"hello\"", "null"] {
            let (stored, notice) = decode(Some(raw));
            assert_eq!(stored, Stored::default(), "{raw}");
            assert!(notice.is_some(), "{raw}");
        }
        let (_, notice) = decode(Some(r#"{"schema": 99}"#));
        assert!(notice.unwrap().contains("newer"));
    }

    #[test]
    fn older_or_partly_bad_values_are_salvaged() {
        let (stored, notice) = decode(Some(r#"{"settings": {"batch": 16}, "pins": "oops"}"#));
        assert_eq!(stored.settings.batch, 16);
        assert_eq!(stored.settings.model, Scenario::default().model);
        assert!(stored.pins.is_empty());
        assert!(notice.unwrap().contains("pins"));
        let preset = serde_json::to_string(roofline_core::find_model("llama-3.1-8b").unwrap()).unwrap();
        let raw = format!(r#"{{"schema": 1, "custom_models": [{preset}]}}"#);
        let (stored, notice) = decode(Some(&raw));
        assert!(stored.custom_models.is_empty());
        assert!(notice.unwrap().contains("imported model"));
        // Serving runs that do not read are reset with the rest kept, and said.
        let (stored, notice) = decode(Some(
            r#"{"schema": 1, "settings": {"batch": 2}, "serving_runs": [{"file": 3}]}"#,
        ));
        assert_eq!((stored.settings.batch, stored.serving_runs.len()), (2, 0));
        assert!(notice.unwrap().contains("serving_runs"));
        let (stored, notice) = decode(Some(r#"{"settings": {"context": 512}}"#));
        assert_eq!(stored.settings.context, 512);
        assert!(notice.unwrap().contains("migrated"));
    }
}
