//! Edits of published `config.json` files for the import tests and the hostile-import benchmark
//! (`core/benches/imports.rs` includes this file).

use serde_json::{Value, json};

/// `json` with `edit` applied to its parsed value, written back.
pub fn edited(json: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut value: Value = serde_json::from_str(json).unwrap();
    edit(&mut value);
    value.to_string()
}

/// The compressed-tensors NVFP4 scheme on every linear layer, ignoring `ignore`.
pub fn nvfp4_ignoring(ignore: Vec<String>) -> Value {
    json!({
        "quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"],
            "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
            "input_activations": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                  "group_size": 16, "dynamic": "local"}}},
        "ignore": ignore
    })
}
