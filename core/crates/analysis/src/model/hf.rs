//! Import of a Hugging Face `config.json`: [`ModelConfig::from_hf_config_json`] parses the text (core reads
//! no files) into a [`ModelConfig`] whose parameter count, weights, KV cache and operators follow from the
//! published structure.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use serde_json::Value;

mod files;
mod layers;

use super::ModelConfig;
use super::checkpoint::{Naming, checkpoint_config};
use super::fields::Fields;
use super::presets::dense;
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
    /// DeepSeek-V3, R1, Kimi K2 and K2.5: MLA and DeepSeek MoE.
    DeepseekV3,
    /// DeepSeek-V3.2 and GLM-5: DeepseekV3 with DeepSeek Sparse Attention's indexer.
    DeepseekDsa,
    GptOss,
    Gemma3,
    Llama4,
    /// Qwen3-Next, Qwen3.5 and Qwen3.6: Gated DeltaNet linear attention beside gated full attention.
    QwenHybrid,
    /// GLM-4.5, 4.6 and 4.7: GQA and DeepSeek-style MoE.
    Glm4Moe,
    /// MiniMax-M2 and M2.5: GQA and 256 experts.
    MiniMaxM2,
    /// DeepSeek-V4 Flash and Pro: compressed sparse and heavily compressed attention beside a sliding
    /// window, mHC residual streams, DeepSeek MoE.
    DeepseekV4,
    /// MiniMax-M3: GQA with MiniMax Sparse Attention's block indexer, dense layers first, then 128 experts
    /// and a shared one.
    MiniMaxM3,
    /// Kimi-K3 (`KimiLinearForCausalLM` inside `KimiK3ForConditionalGeneration`): Kimi Delta Attention
    /// beside gated MLA, LatentMoE.
    KimiLinear,
}

/// `architectures` names, their family, and whether the text model's fields sit under `text_config`.
const ARCHITECTURES: [(&str, Family, bool); 27] = [
    ("LlamaForCausalLM", Family::Llama, false),
    ("MistralForCausalLM", Family::Mistral, false),
    ("Qwen2ForCausalLM", Family::Qwen2, false),
    ("Qwen3ForCausalLM", Family::Qwen3, false),
    ("MixtralForCausalLM", Family::Mixtral, false),
    ("Qwen3MoeForCausalLM", Family::Qwen3Moe, false),
    ("DeepseekV3ForCausalLM", Family::DeepseekV3, false),
    ("KimiK25ForConditionalGeneration", Family::DeepseekV3, true),
    ("DeepseekV32ForCausalLM", Family::DeepseekDsa, false),
    ("GlmMoeDsaForCausalLM", Family::DeepseekDsa, false),
    ("GptOssForCausalLM", Family::GptOss, false),
    ("Gemma3ForCausalLM", Family::Gemma3, false),
    ("Gemma3ForConditionalGeneration", Family::Gemma3, true),
    ("Llama4ForCausalLM", Family::Llama4, false),
    ("Llama4ForConditionalGeneration", Family::Llama4, true),
    ("Qwen3NextForCausalLM", Family::QwenHybrid, false),
    ("Qwen3_5ForCausalLM", Family::QwenHybrid, false),
    ("Qwen3_5ForConditionalGeneration", Family::QwenHybrid, true),
    ("Qwen3_5MoeForCausalLM", Family::QwenHybrid, false),
    ("Qwen3_5MoeForConditionalGeneration", Family::QwenHybrid, true),
    ("Glm4MoeForCausalLM", Family::Glm4Moe, false),
    ("MiniMaxM2ForCausalLM", Family::MiniMaxM2, false),
    ("DeepseekV4ForCausalLM", Family::DeepseekV4, false),
    ("KimiK3ForConditionalGeneration", Family::KimiLinear, true),
    ("MiniMaxM3ForCausalLM", Family::MiniMaxM3, false),
    ("MiniMaxM3SparseForCausalLM", Family::MiniMaxM3, false),
    ("MiniMaxM3SparseForConditionalGeneration", Family::MiniMaxM3, true),
];

/// How the family's transformers classes name the linear layers, relative to the config object: the whole
/// model's (`root`) and the text model's, which differ where the text model sits inside a multimodal wrapper.
fn namings(family: Family, architecture: &str) -> (Naming, Naming) {
    let text = match family {
        Family::Mixtral | Family::MiniMaxM2 => Naming::MIXTRAL,
        Family::MiniMaxM3 => Naming::MINIMAX_M3,
        Family::DeepseekV3 | Family::DeepseekDsa => Naming::DEEPSEEK,
        Family::DeepseekV4 => Naming::DEEPSEEK_V4,
        Family::KimiLinear => Naming::KIMI_LINEAR,
        Family::GptOss => Naming::GPT_OSS,
        Family::Llama4 => Naming::LLAMA4,
        Family::Glm4Moe => Naming::GLM4_MOE,
        Family::QwenHybrid if architecture == "Qwen3NextForCausalLM" => Naming::QWEN3_NEXT,
        Family::QwenHybrid => Naming::QWEN3_5,
        _ => Naming::LLAMA,
    };
    let root = match architecture {
        "Qwen3_5ForConditionalGeneration" | "Qwen3_5MoeForConditionalGeneration" => Naming {
            layers: "model.language_model.layers",
            ..Naming::QWEN3_5
        },
        "KimiK25ForConditionalGeneration"
        | "KimiK3ForConditionalGeneration"
        | "MiniMaxM3SparseForConditionalGeneration" => Naming {
            layers: "language_model.model.layers",
            head: "language_model.lm_head",
            ..text
        },
        _ => text,
    };
    (root, text)
}

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
        ModelConfig::from_hf_files(key, &[json])
    }

    /// Parses a Hugging Face `config.json` and, optionally, the NVIDIA ModelOpt `hf_quant_config.json` published
    /// beside it, in either order (told apart by their fields: the ModelOpt file has a `quantization` object
    /// and no `architectures`). The ModelOpt file gives the checkpoint's precisions as `quantization_config`
    /// `modelopt` would, unless `config.json` has its own `quantization_config`, which comes first as in vLLM
    /// and transformers; the two must then name the same `quant_algo`.
    ///
    /// # Errors
    /// As [`ModelConfig::from_hf_config_json`], and [`Error::InvalidModelConfig`] naming `hf_quant_config.json`
    /// for no file or more than two, two of one kind, a ModelOpt file without its `quantization` object, or a
    /// `quant_algo` that contradicts `config.json`'s.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::{ModelConfig, Module};
    /// let config = r#"{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 16, "hidden_size": 2048,
    ///     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
    ///     "vocab_size": 128256, "tie_word_embeddings": true}"#;
    /// let quant = r#"{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4",
    ///     "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}}"#;
    /// let model = ModelConfig::from_hf_files("llama-3.2-1b-nvfp4", &[quant, config]).unwrap();
    /// let checkpoint = model.checkpoint.unwrap();
    /// assert_eq!(checkpoint.format(Module::Attention).weights, Precision::Nvfp4);
    /// assert_eq!(checkpoint.kv_cache, Precision::Fp8E4M3);
    /// ```
    pub fn from_hf_files(key: &str, texts: &[&str]) -> Result<Self, Error> {
        let root_map = files::merged(texts)?;
        let root = Fields {
            map: &root_map,
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
        let namings = namings(family, architecture);
        let layers = (model.layers, model.dense_layers());
        model.checkpoint = checkpoint_config(&root, &text, &model, (&namings.0, &namings.1), || {
            layers::layout(family, &text, layers)
        })?;
        if family == Family::DeepseekV4 {
            model.checkpoint = layers::fp4_experts(&text, model.checkpoint)?;
        }
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

    let (head_dim, mla, sparse_indexer) = layers::head_dim(family, text, hidden, heads)?;
    let sparse_indexer = match family {
        Family::MiniMaxM3 => layers::minimax_sparse_attention(text, layers)?,
        _ => sparse_indexer,
    };
    let (ffn_dim, moe) = layers::ffn(family, text, layers)?;
    let sliding_window = layers::sliding_window(family, text, layers)?;
    let linear_attention = layers::linear_attention(family, text, layers)?;
    let compressed_attention = layers::compressed_attention(family, text, layers)?;
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
        linear_attention,
        sparse_indexer,
        compressed_attention,
        // Qwen3NextAttention always gates its output; Qwen3.5 configs say `attn_output_gate`, Kimi-K3's MLA
        // `mla_use_output_gate`.
        attention_output_gate: match family {
            Family::QwenHybrid => text.bool_or("attn_output_gate", true)?,
            Family::KimiLinear => text.bool_or("mla_use_output_gate", false)?,
            Family::MiniMaxM3 => text.bool_or("attention_output_gate", false)?,
            _ => false,
        },
        latent_moe: match family {
            Family::KimiLinear => text.optional_uint("routed_expert_hidden_size")?,
            _ => None,
        },
        mtp_layers: mtp_layers(family, text)?,
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

/// Multi-token-prediction layers: DeepSeek's, GLM's and Kimi-K3's `num_nextn_predict_layers`, Qwen's
/// `mtp_num_hidden_layers`, MiniMax-M2's `num_mtp_modules` of `mtp_transformer_layers` each when `use_mtp`,
/// MiniMax-M3's `num_mtp_modules`; 0 when absent.
fn mtp_layers(family: Family, text: &Fields<'_>) -> Result<u32, Error> {
    let layers = match family {
        Family::DeepseekV3
        | Family::DeepseekDsa
        | Family::DeepseekV4
        | Family::Glm4Moe
        | Family::KimiLinear => text.uint_or("num_nextn_predict_layers", 0)?,
        Family::QwenHybrid => text.uint_or("mtp_num_hidden_layers", 0)?,
        Family::MiniMaxM3 => text.uint_or("num_mtp_modules", 0)?,
        Family::MiniMaxM2 if text.bool_or("use_mtp", false)? => text
            .uint_or("num_mtp_modules", 1)?
            .saturating_mul(text.uint_or("mtp_transformer_layers", 1)?),
        _ => 0,
    };
    u32::try_from(layers)
        .ok()
        .filter(|&l| u64::from(l) <= MAX_DIM)
        .ok_or_else(|| {
            text.error(
                "num_nextn_predict_layers",
                format!("{layers} MTP layers is above the limit of {MAX_DIM}"),
            )
        })
}
