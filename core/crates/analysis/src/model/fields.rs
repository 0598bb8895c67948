//! One JSON object's fields read with their types, each error naming the field by its path in the file
//! (`text_config.hidden_size`): what the Hugging Face importer and the checkpoint reader share.

use serde_json::{Map, Value};

use roofline_base::Error;

/// The fields of one JSON object, with the path prefix errors name them by (`text_config.`,
/// `quantization_config.config_groups.group_0.weights.`).
pub(super) struct Fields<'a> {
    pub(super) map: &'a Map<String, Value>,
    pub(super) prefix: String,
}

impl Fields<'_> {
    pub(super) fn error(&self, name: &str, message: impl Into<String>) -> Error {
        Error::InvalidModelConfig {
            field: format!("{}{name}", self.prefix),
            message: message.into(),
        }
    }

    /// The value, `None` when absent or null.
    pub(super) fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A string, `None` when absent or null.
    pub(super) fn optional_str(&self, name: &str) -> Result<Option<&str>, Error> {
        self.get(name)
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| self.error(name, format!("must be a string, not {v}")))
            })
            .transpose()
    }

    /// true or false, `None` when absent or null.
    pub(super) fn optional_bool(&self, name: &str) -> Result<Option<bool>, Error> {
        self.get(name)
            .map(|v| {
                v.as_bool()
                    .ok_or_else(|| self.error(name, format!("must be true or false, not {v}")))
            })
            .transpose()
    }

    /// A list of strings (absent or null: empty).
    pub(super) fn strings(&self, name: &str) -> Result<Vec<String>, Error> {
        let Some(value) = self.get(name) else {
            return Ok(Vec::new());
        };
        let bad = || self.error(name, "must be a list of strings");
        value
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(bad))
            .collect()
    }

    /// The object `name`, its errors named under this one's path; `None` when absent or null.
    pub(super) fn nested(&self, name: &str) -> Result<Option<Fields<'_>>, Error> {
        self.get(name)
            .map(|v| {
                v.as_object()
                    .map(|map| Fields {
                        map,
                        prefix: format!("{}{name}.", self.prefix),
                    })
                    .ok_or_else(|| self.error(name, "must be an object"))
            })
            .transpose()
    }

    pub(super) fn optional_uint(&self, name: &str) -> Result<Option<u64>, Error> {
        self.get(name)
            .map(|v| {
                v.as_u64()
                    .ok_or_else(|| self.error(name, format!("must be a non-negative integer, not {v}")))
            })
            .transpose()
    }

    pub(super) fn uint(&self, name: &str) -> Result<u64, Error> {
        self.optional_uint(name)?
            .ok_or_else(|| self.error(name, "missing (required for this architecture)"))
    }

    pub(super) fn uint_or(&self, name: &str, default: u64) -> Result<u64, Error> {
        Ok(self.optional_uint(name)?.unwrap_or(default))
    }

    pub(super) fn bool_or(&self, name: &str, default: bool) -> Result<bool, Error> {
        Ok(self.optional_bool(name)?.unwrap_or(default))
    }

    /// A list of non-negative integers, `None` when absent or null.
    pub(super) fn uint_list(&self, name: &str) -> Result<Option<Vec<u64>>, Error> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let not_a_list = || self.error(name, "must be a list of non-negative integers");
        value
            .as_array()
            .ok_or_else(not_a_list)?
            .iter()
            .map(|v| v.as_u64().ok_or_else(not_a_list))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// A list of layer indices (`mlp_only_layers`, `moe_layers`), each once (in first-seen order); `None` when
    /// absent or null. Its length is checked against `layers` before it is read, and repeats are dropped in
    /// one pass (a bit per layer: at most 2 MiB at [`MAX_DIM`] layers).
    pub(super) fn layer_indices(&self, name: &str, layers: u32) -> Result<Option<Vec<u64>>, Error> {
        if let Some(list) = self.get(name).and_then(Value::as_array)
            && list.len() > layers as usize
        {
            return Err(self.error(
                name,
                format!(
                    "lists {} layers, more than num_hidden_layers ({layers})",
                    list.len()
                ),
            ));
        }
        let Some(list) = self.uint_list(name)? else {
            return Ok(None);
        };
        let mut seen = vec![0u64; (layers as usize).div_ceil(64)];
        let mut distinct = Vec::new();
        for i in list {
            let word = seen
                .get_mut(usize::try_from(i / 64).unwrap_or(usize::MAX))
                .filter(|_| i < u64::from(layers))
                .ok_or_else(|| self.error(name, "names a layer beyond num_hidden_layers"))?;
            if *word & (1 << (i % 64)) == 0 {
                *word |= 1 << (i % 64);
                distinct.push(i);
            }
        }
        Ok(Some(distinct))
    }

    /// The layers `layer_types` marks: `None` when absent. Its length is checked against `layers` first.
    pub(super) fn layer_types(&self, layers: u32) -> Result<Option<LayerTypes>, Error> {
        let Some(value) = self.get("layer_types") else {
            return Ok(None);
        };
        let types = value
            .as_array()
            .ok_or_else(|| self.error("layer_types", "must be a list of strings"))?;
        if types.len() != layers as usize {
            return Err(self.error(
                "layer_types",
                format!("has {} entries for {layers} layers", types.len()),
            ));
        }
        let mut kinds = LayerTypes {
            sliding: 0,
            chunked: false,
            linear: Vec::with_capacity(types.len()),
        };
        for kind in types {
            let linear = match kind.as_str() {
                Some("full_attention") => false,
                Some("sliding_attention") => {
                    kinds.sliding += 1;
                    false
                }
                Some("chunked_attention") => {
                    kinds.sliding += 1;
                    kinds.chunked = true;
                    false
                }
                Some("linear_attention") => true,
                _ => {
                    return Err(self.error(
                        "layer_types",
                        format!(
                            "unknown layer type {kind} (full_attention, sliding_attention, chunked_attention, \
                             linear_attention)"
                        ),
                    ));
                }
            };
            kinds.linear.push(linear);
        }
        Ok(Some(kinds))
    }
}

/// What a config's `layer_types` says of each layer.
pub(super) struct LayerTypes {
    /// Layers with sliding-window or chunked attention.
    pub(super) sliding: u32,
    /// Whether some layer has chunked attention (Llama 4).
    pub(super) chunked: bool,
    /// Per layer, whether it has linear attention (Qwen3-Next, Qwen3.5).
    pub(super) linear: Vec<bool>,
}
