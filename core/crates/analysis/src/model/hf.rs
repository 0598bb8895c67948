//! Import of a Hugging Face `config.json`: [`ModelConfig::from_hf_config_json`] parses the text (core reads
//! no files) into a [`ModelConfig`] whose parameter count, weights, KV cache and operators follow from the
//! published structure.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use serde_json::Value;

use super::checkpoint::{LayerLayout, LayerSet, Naming, checkpoint_config};
use super::fields::Fields;
use super::presets::dense;
use super::{MlaConfig, ModelConfig, MoeConfig, SlidingWindow};
use crate::ops::MAX_DIM;
use roofline_base::Error;

/// The largest `config.json` (or ModelOpt `hf_quant_config.json`) the importer reads, in bytes (16 MiB): the
/// largest published file it was tried on, NVIDIA's MiniMax-M3 NVFP4 `config.json`, is 3.1 MB.
pub const MAX_CONFIG_JSON_BYTES: usize = 16 << 20;

/// Model families the importer knows, by their `architectures` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Llama,
    Mistral,
    Qwen2,
    Qwen3,
    Mixtral,
    Qwen3Moe,
    DeepseekV3,
    GptOss,
    Gemma3,
    Llama4,
}

/// `architectures` names, their family, and whether the text model's fields sit under `text_config`.
const ARCHITECTURES: [(&str, Family, bool); 12] = [
    ("LlamaForCausalLM", Family::Llama, false),
    ("MistralForCausalLM", Family::Mistral, false),
    ("Qwen2ForCausalLM", Family::Qwen2, false),
    ("Qwen3ForCausalLM", Family::Qwen3, false),
    ("MixtralForCausalLM", Family::Mixtral, false),
    ("Qwen3MoeForCausalLM", Family::Qwen3Moe, false),
    ("DeepseekV3ForCausalLM", Family::DeepseekV3, false),
    ("GptOssForCausalLM", Family::GptOss, false),
    ("Gemma3ForCausalLM", Family::Gemma3, false),
    ("Gemma3ForConditionalGeneration", Family::Gemma3, true),
    ("Llama4ForCausalLM", Family::Llama4, false),
    ("Llama4ForConditionalGeneration", Family::Llama4, true),
];

/// How many multiples of `step` (≥ 1) lie in `lo..hi`: ⌈hi / step⌉ − ⌈lo / step⌉, in O(1) (a config may
/// name up to 2^24 layers).
fn multiples_in(lo: u64, hi: u64, step: u64) -> u32 {
    let step = step.max(1);
    let below = |x: u64| x.div_ceil(step);
    u32::try_from(below(hi.max(lo)) - below(lo)).unwrap_or(u32::MAX)
}

/// A name read from the file without its control characters (terminal escape sequences lose their ESC and
/// print as plain text).
fn printable(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).collect()
}

impl ModelConfig {
    /// Parses a Hugging Face `config.json` into a model named `key` (see docs/design/core.md for the
    /// architectures and fields).
    ///
    /// # Errors
    /// [`Error::InvalidModelConfig`] naming the field that is missing, mistyped or out of range, or
    /// `architectures` for an architecture the importer does not know, or `config.json` for a text over
    /// [`MAX_CONFIG_JSON_BYTES`]; [`Error::InvalidInput`] from
    /// [`ModelConfig::check`].
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Error;
    /// use roofline_analysis::ModelConfig;
    /// let json = r#"{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 16, "hidden_size": 2048,
    ///     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
    ///     "vocab_size": 128256, "tie_word_embeddings": true}"#;
    /// let model = ModelConfig::from_hf_config_json("llama-3.2-1b", json).unwrap();
    /// assert_eq!(model.head_dim, 64);
    /// // 16 · (10,485,760 attention + 50,331,648 FFN + 4096 norm) + 2048 + 128,256 · 2048 tied embedding.
    /// assert_eq!(model.parameters().total, 1_235_814_400.0);
    /// let unknown = json.replace("LlamaForCausalLM", "MambaForCausalLM");
    /// assert!(matches!(ModelConfig::from_hf_config_json("x", &unknown),
    ///     Err(Error::InvalidModelConfig { field, .. }) if field == "architectures"));
    /// ```
    pub fn from_hf_config_json(key: &str, json: &str) -> Result<Self, Error> {
        if json.len() > MAX_CONFIG_JSON_BYTES {
            return Err(Error::InvalidModelConfig {
                field: "config.json".into(),
                message: format!(
                    "{} bytes, above the limit of {MAX_CONFIG_JSON_BYTES} bytes (16 MiB) this importer reads",
                    json.len()
                ),
            });
        }
        let root_value: Value = serde_json::from_str(json).map_err(|e| Error::InvalidModelConfig {
            field: "config.json".into(),
            message: format!("not JSON: {e}"),
        })?;
        let root = Fields {
            map: root_value.as_object().ok_or_else(|| Error::InvalidModelConfig {
                field: "config.json".into(),
                message: "must be a JSON object".into(),
            })?,
            prefix: String::new(),
        };
        let architecture = root
            .get("architectures")
            .and_then(Value::as_array)
            .and_then(|list| list.first())
            .and_then(Value::as_str)
            .ok_or_else(|| root.error("architectures", "missing (a list naming the model class)"))?;
        let (family, nested) = ARCHITECTURES
            .iter()
            .find(|(name, ..)| *name == architecture)
            .map(|&(_, family, nested)| (family, nested))
            .ok_or_else(|| {
                let known: Vec<_> = ARCHITECTURES.iter().map(|(name, ..)| *name).collect();
                root.error(
                    "architectures",
                    format!(
                        "unsupported architecture '{}'; supported: {}",
                        printable(architecture),
                        known.join(", ")
                    ),
                )
            })?;
        let text = if nested {
            Fields {
                map: root
                    .get("text_config")
                    .and_then(Value::as_object)
                    .ok_or_else(|| root.error("text_config", "missing (the language model's config)"))?,
                prefix: "text_config.".to_owned(),
            }
        } else {
            Fields {
                map: root.map,
                prefix: String::new(),
            }
        };
        let mut model = parse(&printable(key), architecture, family, &root, &text)?;
        model.check()?;
        let naming = match family {
            Family::Mixtral => Naming::MIXTRAL,
            Family::DeepseekV3 => Naming::DEEPSEEK,
            Family::GptOss => Naming::GPT_OSS,
            Family::Llama4 => Naming::LLAMA4,
            _ => Naming::LLAMA,
        };
        model.checkpoint =
            checkpoint_config(&root, &text, &model, &naming, || layout(family, &text, &model))?;
        Ok(model)
    }
}

fn parse(
    key: &str,
    architecture: &str,
    family: Family,
    root: &Fields<'_>,
    text: &Fields<'_>,
) -> Result<ModelConfig, Error> {
    // Bounded before anything counts layers: a config may say 2^32 − 1.
    let layers_u64 = text.uint("num_hidden_layers")?;
    let layers = u32::try_from(layers_u64)
        .ok()
        .filter(|&l| u64::from(l) <= MAX_DIM)
        .ok_or_else(|| {
            text.error(
                "num_hidden_layers",
                format!("{layers_u64} is above the limit of {MAX_DIM} layers"),
            )
        })?;
    let hidden = text.uint("hidden_size")?;
    let heads = text.uint("num_attention_heads")?;
    // Every class here except Gemma 3 and gpt-oss sets `num_key_value_heads = num_attention_heads` when it
    // is absent (multi-head attention); Gemma 3 and gpt-oss configs always give it.
    let kv_heads = match family {
        Family::Gemma3 | Family::GptOss => text.uint("num_key_value_heads")?,
        _ => text.uint_or("num_key_value_heads", heads)?,
    };
    // Gemma 3 configs may omit `vocab_size`: Gemma3TextConfig's default is 262,208.
    let vocab = match family {
        Family::Gemma3 => text.uint_or("vocab_size", 262_208)?,
        _ => text.uint("vocab_size")?,
    };
    // `tie_word_embeddings`: the text config's, else the top level's, else the class default (True for
    // Gemma 3, False for the others).
    let tied_default = root.bool_or("tie_word_embeddings", family == Family::Gemma3)?;
    let tied_embeddings = text.bool_or("tie_word_embeddings", tied_default)?;

    let (head_dim, mla) = head_dim(family, text, hidden, heads)?;
    let (ffn_dim, moe) = ffn(family, text, layers)?;
    let sliding_window = sliding_window(family, text, layers)?;
    let name = root
        .get("_name_or_path")
        .and_then(Value::as_str)
        .map(printable)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| key.to_owned());
    let source = format!("Hugging Face config.json ({})", printable(architecture));
    Ok(ModelConfig {
        moe,
        mla,
        sliding_window,
        ..dense(
            key,
            &name,
            (layers, hidden, heads, kv_heads, head_dim),
            (ffn_dim, vocab, tied_embeddings),
            0.0,
            &source,
        )
    })
}

/// The head dimension, and MLA's low-rank projections where the family has them.
fn head_dim(
    family: Family,
    text: &Fields<'_>,
    hidden: u64,
    heads: u64,
) -> Result<(u64, Option<MlaConfig>), Error> {
    let mut mla = None;
    let head_dim = match family {
        Family::DeepseekV3 => {
            let m = MlaConfig {
                q_lora_rank: text.optional_uint("q_lora_rank")?.ok_or_else(|| {
                    text.error(
                        "q_lora_rank",
                        "missing or null: MLA without a Q down-projection (DeepSeek-V2-Lite) is not supported",
                    )
                })?,
                kv_lora_rank: text.uint("kv_lora_rank")?,
                rope_head_dim: text.uint("qk_rope_head_dim")?,
                nope_head_dim: text.uint("qk_nope_head_dim")?,
                v_head_dim: text.uint("v_head_dim")?,
            };
            mla = Some(m);
            m.v_head_dim
        }
        _ => match text.optional_uint("head_dim")? {
            Some(d) => d,
            // The Llama, Mistral, Qwen and Mixtral classes use hidden_size / num_attention_heads.
            None if heads > 0 && hidden.is_multiple_of(heads) => hidden / heads,
            None => {
                return Err(text.error(
                    "head_dim",
                    "missing, and hidden_size is not a multiple of num_attention_heads",
                ));
            }
        },
    };
    Ok((head_dim, mla))
}

/// The dense FFN width and the mixture-of-experts layout of the config (`None` for dense models).
fn ffn(family: Family, text: &Fields<'_>, layers: u32) -> Result<(u64, Option<MoeConfig>), Error> {
    let layers_u64 = u64::from(layers);
    // Layers i ≥ first_dense with (i + 1) a multiple of `step`, less those in `exempt` (distinct, below
    // `layers`).
    let sparse = |step: u64, exempt: &[u64], first_dense: u64| {
        let exempted = exempt
            .iter()
            .filter(|&&i| i >= first_dense && (i + 1).is_multiple_of(step.max(1)))
            .count();
        multiples_in(first_dense + 1, layers_u64 + 1, step)
            .saturating_sub(u32::try_from(exempted).unwrap_or(u32::MAX))
    };
    Ok(match family {
        Family::Mixtral => (
            text.uint("intermediate_size")?,
            Some(MoeConfig {
                experts: text.uint("num_local_experts")?,
                top_k: text.uint("num_experts_per_tok")?,
                shared_experts: 0,
                expert_ffn: text.uint("intermediate_size")?,
                dense_layers: 0,
            }),
        ),
        Family::Qwen3Moe => {
            // Qwen3MoeConfig defaults: decoder_sparse_step 1, mlp_only_layers [].
            let step = text.uint_or("decoder_sparse_step", 1)?.max(1);
            let exempt = text.layer_indices("mlp_only_layers", layers)?.unwrap_or_default();
            let moe_layers = sparse(step, &exempt, 0);
            (
                text.uint("intermediate_size")?,
                Some(MoeConfig {
                    experts: text.uint("num_experts")?,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: 0,
                    expert_ffn: text.uint("moe_intermediate_size")?,
                    dense_layers: layers.saturating_sub(moe_layers),
                }),
            )
        }
        Family::DeepseekV3 => {
            // DeepseekV3Config: a layer has experts when i >= first_k_dense_replace and i % moe_layer_freq == 0
            // (moe_layer_freq defaults to 1).
            let first_dense = text.uint("first_k_dense_replace")?;
            let frequency = text.uint_or("moe_layer_freq", 1)?.max(1);
            let moe_layers = multiples_in(first_dense.min(layers_u64), layers_u64, frequency);
            (
                text.uint("intermediate_size")?,
                Some(MoeConfig {
                    experts: text.uint("n_routed_experts")?,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: text.uint("n_shared_experts")?,
                    expert_ffn: text.uint("moe_intermediate_size")?,
                    dense_layers: layers.saturating_sub(moe_layers),
                }),
            )
        }
        Family::GptOss => {
            let top_k = match text.optional_uint("num_experts_per_tok")? {
                Some(k) => k,
                None => text.uint("experts_per_token")?,
            };
            let expert_ffn = text.uint("intermediate_size")?;
            (
                expert_ffn,
                Some(MoeConfig {
                    experts: text.uint("num_local_experts")?,
                    top_k,
                    shared_experts: 0,
                    expert_ffn,
                    dense_layers: 0,
                }),
            )
        }
        Family::Llama4 => {
            // Llama4TextConfig: `moe_layers`, else every `interleave_moe_layer_step`-th layer (default 1);
            // each MoE layer has one shared expert as wide as the routed ones.
            let moe_layers = match text.layer_indices("moe_layers", layers)? {
                Some(list) => u32::try_from(list.len()).unwrap_or(u32::MAX),
                None => sparse(text.uint_or("interleave_moe_layer_step", 1)?.max(1), &[], 0),
            };
            (
                text.uint("intermediate_size_mlp")?,
                Some(MoeConfig {
                    experts: text.uint("num_local_experts")?,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: 1,
                    expert_ffn: text.uint("intermediate_size")?,
                    dense_layers: layers.saturating_sub(moe_layers),
                }),
            )
        }
        Family::Llama | Family::Mistral | Family::Qwen2 | Family::Qwen3 | Family::Gemma3 => {
            (text.uint("intermediate_size")?, None)
        }
    })
}

/// Where the config's dense-FFN layers sit, for matching a checkpoint's patterns to layers (built only for a
/// config with a `quantization_config`): Llama 4's interleaved experts and Qwen3-MoE's `mlp_only_layers` and
/// `decoder_sparse_step` where they are, DeepSeek's dense layers first.
fn layout(family: Family, text: &Fields<'_>, model: &ModelConfig) -> Result<LayerLayout, Error> {
    let layers = model.layers;
    let step = |field: &str| -> Result<u32, Error> {
        Ok(u32::try_from(text.uint_or(field, 1)?.max(1)).unwrap_or(u32::MAX))
    };
    let flags = |list: &[u64], base: &dyn Fn(u32) -> bool| {
        let mut flags: Vec<bool> = (0..layers).map(base).collect();
        for &i in list {
            flags[i as usize] = true;
        }
        LayerSet::listed(flags)
    };
    let dense = match family {
        Family::Qwen3Moe => {
            let step = step("decoder_sparse_step")?;
            match text.layer_indices("mlp_only_layers", layers)? {
                Some(exempt) if !exempt.is_empty() => flags(&exempt, &|i| !(i + 1).is_multiple_of(step)),
                _ => LayerSet::every_nth(step, layers).others(),
            }
        }
        Family::Llama4 => match text.layer_indices("moe_layers", layers)? {
            Some(moe) => flags(&moe, &|_| false).others(),
            None => LayerSet::every_nth(step("interleave_moe_layer_step")?, layers).others(),
        },
        _ => LayerSet::below(model.dense_layers(), layers),
    };
    Ok(LayerLayout {
        dense,
        linear: LayerSet::below(0, layers),
    })
}

/// The sliding-window layout of the config, `None` when no layer slides.
fn sliding_window(family: Family, text: &Fields<'_>, layers: u32) -> Result<Option<SlidingWindow>, Error> {
    let from_types = text.layer_types(layers)?;
    let (window, sliding_layers, chunked) = match family {
        Family::Llama | Family::DeepseekV3 => (None, 0, false),
        Family::Mistral | Family::Mixtral => {
            // MistralConfig's default window is 4096, MixtralConfig's none.
            let default = (family == Family::Mistral).then_some(4096);
            let window = match text.map.get("sliding_window") {
                None => default,
                Some(_) => text.optional_uint("sliding_window")?,
            };
            (window, layers, false)
        }
        Family::Qwen2 | Family::Qwen3 | Family::Qwen3Moe => {
            // Qwen classes: no window unless use_sliding_window; then on the layers from max_window_layers
            // (default 28) on.
            if text.bool_or("use_sliding_window", false)? {
                let first = text.uint_or("max_window_layers", 28)?.min(u64::from(layers)) as u32;
                (Some(text.uint("sliding_window")?), layers - first, false)
            } else {
                (None, 0, false)
            }
        }
        Family::GptOss => {
            // GptOssConfig: sliding_window 128 on every other layer, the first one sliding, by default.
            let window = text.uint_or("sliding_window", 128)?;
            (Some(window), multiples_in(0, u64::from(layers), 2), false)
        }
        Family::Gemma3 => {
            // Gemma3TextConfig: sliding_window 4096 by default; without layer_types, layer i slides unless
            // (i + 1) is a multiple of sliding_window_pattern (default 6).
            let window = text.uint_or("sliding_window", 4096)?;
            let pattern = text.uint_or("sliding_window_pattern", 6)?.max(1);
            let sliding = layers - multiples_in(1, u64::from(layers) + 1, pattern);
            (Some(window), sliding, false)
        }
        Family::Llama4 => {
            // Llama4TextConfig: attention_chunk_size 8192 by default; an empty `no_rope_layers` means every
            // 4th layer is NoPE (global attention) and the others use RoPE with chunked attention.
            let window = match text.map.get("attention_chunk_size") {
                None => Some(8192),
                Some(_) => text.optional_uint("attention_chunk_size")?,
            };
            let rope_layers = match text.uint_list("no_rope_layers")? {
                Some(list) if !list.is_empty() => {
                    if list.len() != layers as usize {
                        return Err(text.error(
                            "no_rope_layers",
                            format!("has {} entries for {layers} layers", list.len()),
                        ));
                    }
                    list.iter().filter(|&&uses_rope| uses_rope != 0).count() as u32
                }
                _ => layers - multiples_in(1, u64::from(layers) + 1, 4),
            };
            (window, rope_layers, true)
        }
    };
    let (sliding_layers, chunked) = from_types.unwrap_or((sliding_layers, chunked));
    Ok(window.filter(|_| sliding_layers > 0).map(|window| SlidingWindow {
        window,
        layers: sliding_layers,
        chunked,
    }))
}
