//! Models the page can analyse: core's presets and the user's imported Hugging Face `config.json` files
//! (parsed by `ModelConfig::from_hf_config_json`), with the key an import gets.

use roofline_core::{Error, ModelConfig, find_model, model_presets};

/// Finds a model among the user's imported models and core's presets (imported keys never equal a preset's:
/// [`import_key`] makes them distinct).
///
/// # Errors
/// `Error::UnknownKey` (from `find_model`) when neither has `key`.
pub fn resolve_model<'a>(key: &str, custom: &'a [ModelConfig]) -> Result<&'a ModelConfig, Error> {
    match custom.iter().find(|m| m.key == key) {
        Some(m) => Ok(m),
        None => find_model(key),
    }
}

/// Lower-case letters, digits, `.` and `-`; every other run of characters becomes one `-`.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(|c| c == '-' || c == '.').to_owned()
}

/// The key of an imported `config.json`: the file's name without `.json` (unless it is just `config`), else
/// the last part of its `_name_or_path`, else `imported-model`; made distinct from every preset and from
/// `taken` (the other imported models) with `-2`, `-3`, ….
#[must_use]
pub fn import_key(file_name: Option<&str>, json: &str, taken: &[ModelConfig]) -> String {
    let from_file = file_name
        .map(|n| slug(n.trim_end_matches(".json")))
        .filter(|s| !s.is_empty() && s != "config");
    let from_path = || {
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        let path = value.get("_name_or_path")?.as_str()?;
        Some(slug(path.rsplit('/').next().unwrap_or(path))).filter(|s| !s.is_empty())
    };
    let base = from_file
        .or_else(from_path)
        .unwrap_or_else(|| "imported-model".to_owned());
    let used = |k: &str| find_model(k).is_ok() || taken.iter().any(|m| m.key == k);
    if !used(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|k| !used(k))
        .unwrap_or(base)
}

/// Parses an imported `config.json` into a model with a fresh key ([`import_key`]); a name that would read
/// as a preset's says it is imported.
///
/// # Errors
/// `Error::InvalidModelConfig` naming the field (unknown architecture, missing or malformed field, not
/// JSON), and anything `ModelConfig::check` rejects.
pub fn import_model(
    file_name: Option<&str>,
    json: &str,
    taken: &[ModelConfig],
) -> Result<ModelConfig, Error> {
    import_model_files(file_name, &[json], taken)
}

/// [`import_model`] of a `config.json` and, beside it, NVIDIA ModelOpt's `hf_quant_config.json` (in either
/// order, told apart by core: `ModelConfig::from_hf_files`), the key from `file_name` (the config's) or
/// the first `_name_or_path`.
///
/// # Errors
/// As [`import_model`], and `Error::InvalidModelConfig` naming `hf_quant_config.json` for files that are
/// not one config and at most one ModelOpt file.
pub fn import_model_files(
    file_name: Option<&str>,
    texts: &[&str],
    taken: &[ModelConfig],
) -> Result<ModelConfig, Error> {
    let named = texts
        .iter()
        .find(|t| t.contains("_name_or_path"))
        .or(texts.first());
    let key = import_key(file_name, named.copied().unwrap_or_default(), taken);
    let mut model = ModelConfig::from_hf_files(&key, texts)?;
    model.check()?;
    if model_presets().iter().any(|p| p.name == model.name) || model.name == key {
        model.name = format!("{} (imported)", model.name);
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    const QWEN3_8B: &str = include_str!("../../core/tests/data/hf/qwen3-8b.json");

    #[test]
    fn keys_come_from_the_file_then_the_path_and_never_collide() {
        assert_eq!(import_key(Some("My Model.json"), QWEN3_8B, &[]), "my-model");
        assert_eq!(import_key(Some("config.json"), QWEN3_8B, &[]), "imported-model");
        let with_path = r#"{"_name_or_path": "Qwen/Qwen3-8B"}"#;
        assert_eq!(
            import_key(None, with_path, &[]),
            "qwen3-8b-2",
            "qwen3-8b is a preset"
        );
        let first = import_model(None, QWEN3_8B, &[]).unwrap();
        assert_eq!(first.key, "imported-model");
        assert_eq!(import_key(None, QWEN3_8B, &[first]), "imported-model-2");
    }

    #[test]
    fn an_import_resolves_and_matches_core() {
        let model = import_model(Some("qwen3-8b.json"), QWEN3_8B, &[]).unwrap();
        assert_eq!(model.key, "qwen3-8b-2");
        let core = ModelConfig::from_hf_config_json("qwen3-8b-2", QWEN3_8B).unwrap();
        assert_eq!(model.layers, core.layers);
        let custom = vec![model.clone()];
        assert_eq!(resolve_model("qwen3-8b-2", &custom).unwrap(), &model);
        assert_eq!(
            resolve_model("llama-3.1-8b", &custom).unwrap().key,
            "llama-3.1-8b"
        );
        assert!(matches!(
            resolve_model("nope", &custom),
            Err(Error::UnknownModel { .. })
        ));
    }

    #[test]
    fn a_config_imports_with_its_modelopt_file() {
        let quant = r#"{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8",
            "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}"#;
        let model = import_model_files(Some("qwen3-8b.json"), &[quant, QWEN3_8B], &[]).unwrap();
        let checkpoint = model.checkpoint.unwrap();
        assert_eq!(checkpoint.weights, roofline_core::Precision::Fp8E4M3);
        assert_eq!(model.key, "qwen3-8b-2");
    }

    #[test]
    fn errors_name_the_field() {
        let err = import_model(None, "{not json", &[]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidModelConfig { field, .. } if field == "config.json"),
            "{err}"
        );
        let missing = QWEN3_8B.replace("\"num_attention_heads\"", "\"heads\"");
        let err = import_model(None, &missing, &[]).unwrap_err();
        assert!(err.to_string().contains("num_attention_heads"), "{err}");
    }
}
