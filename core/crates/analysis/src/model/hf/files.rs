//! The files of one import: a `config.json` and, where NVIDIA's ModelOpt publishes one beside it,
//! `hf_quant_config.json`, each capped at [`MAX_CONFIG_JSON_BYTES`], merged into one config object.

use serde_json::{Map, Value};

use super::MAX_CONFIG_JSON_BYTES;
use roofline_base::Error;

fn error(field: &str, message: impl Into<String>) -> Error {
    Error::InvalidModelConfig {
        field: field.to_owned(),
        message: message.into(),
    }
}

/// One file read as a JSON object, refused past the size cap before it is parsed.
fn object(text: &str) -> Result<Map<String, Value>, Error> {
    if text.len() > MAX_CONFIG_JSON_BYTES {
        return Err(error(
            "config.json",
            format!(
                "{} bytes, above the limit of {MAX_CONFIG_JSON_BYTES} bytes (16 MiB) this importer reads",
                text.len()
            ),
        ));
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(error("config.json", "must be a JSON object")),
        Err(e) => Err(error("config.json", format!("not JSON: {e}"))),
    }
}

/// Whether `map` is a ModelOpt `hf_quant_config.json`: a `quantization` object, no `architectures`.
fn is_modelopt(map: &Map<String, Value>) -> bool {
    map.get("quantization").is_some_and(Value::is_object) && !map.contains_key("architectures")
}

/// The config object of `texts`: one `config.json`, with the `quantization` of a ModelOpt
/// `hf_quant_config.json` as its `quantization_config` (`quant_method` `modelopt`) where it has none.
pub(super) fn merged(texts: &[&str]) -> Result<Map<String, Value>, Error> {
    if texts.is_empty() || texts.len() > 2 {
        return Err(error(
            "hf_quant_config.json",
            format!(
                "an import reads a config.json and at most one hf_quant_config.json, not {} files",
                texts.len()
            ),
        ));
    }
    let mut maps = texts.iter().map(|t| object(t)).collect::<Result<Vec<_>, _>>()?;
    let (quant, mut config) = match maps.len() {
        1 => (None, maps.remove(0)),
        _ => {
            let second = maps.remove(1);
            let first = maps.remove(0);
            match (is_modelopt(&first), is_modelopt(&second)) {
                (true, false) => (Some(first), second),
                (false, true) => (Some(second), first),
                (true, true) => {
                    return Err(error(
                        "hf_quant_config.json",
                        "two ModelOpt files and no config.json",
                    ));
                }
                (false, false) => {
                    return Err(error(
                        "hf_quant_config.json",
                        "two config.json files: the second file must be a ModelOpt hf_quant_config.json (a \
                         `quantization` object, no `architectures`)",
                    ));
                }
            }
        }
    };
    if let Some(Value::Object(mut quantization)) = quant.and_then(|mut q| q.remove("quantization")) {
        match config
            .get("quantization_config")
            .and_then(|q| q.get("quant_algo"))
        {
            Some(own) if Some(own) != quantization.get("quant_algo") => {
                return Err(error(
                    "hf_quant_config.json",
                    format!(
                        "quant_algo {} contradicts config.json's quantization_config ({own})",
                        quantization.get("quant_algo").unwrap_or(&Value::Null)
                    ),
                ));
            }
            Some(_) => {}
            None if config.contains_key("quantization_config") => {
                return Err(error(
                    "hf_quant_config.json",
                    "config.json has its own quantization_config, not ModelOpt's: give one of them",
                ));
            }
            None => {
                quantization.insert("quant_method".to_owned(), Value::from("modelopt"));
                config.insert("quantization_config".to_owned(), Value::Object(quantization));
            }
        }
    }
    Ok(config)
}
