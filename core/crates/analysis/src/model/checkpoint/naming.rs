//! How each architecture's transformers classes name its linear layers (`model.layers.{i}.self_attn.q_proj`,
//! `…mlp.experts.{j}.down_proj`, `lm_head`), and the names of one module of a model, which a checkpoint's
//! exclusion patterns are matched against.

use crate::model::ModelConfig;
use crate::quant_config::Module;

/// How an architecture's transformers classes name the linear layers of one decoder layer, relative to
/// `{layers}.{i}.`.
pub(crate) struct Naming {
    /// The decoder layers' path, e.g. `model.layers`.
    pub(crate) layers: &'static str,
    /// Attention projections.
    pub(crate) attention: &'static [&'static str],
    /// A dense FFN's projections.
    pub(crate) dense: &'static [&'static str],
    /// The routed experts' container (`mlp.experts`), and whether its projections are one tensor for all
    /// experts (gpt-oss, Llama 4) instead of one module per expert.
    pub(crate) experts: (&'static str, bool),
    /// Each expert's projections (or the fused tensors' names).
    pub(crate) expert_projections: &'static [&'static str],
    /// The shared experts' projections.
    pub(crate) shared: &'static [&'static str],
}

/// Projections of a Llama-style attention and gated FFN.
const QKVO: [&str; 4] = [
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
];
const GATED_MLP: [&str; 3] = ["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"];
const GATED: [&str; 3] = ["gate_proj", "up_proj", "down_proj"];

impl Naming {
    /// Llama, Mistral, Qwen2/3, Qwen3-MoE, Gemma 3: `self_attn.{q,k,v,o}_proj`, `mlp.{gate,up,down}_proj`,
    /// experts `mlp.experts.{j}.{gate,up,down}_proj`.
    pub(crate) const LLAMA: Naming = Naming {
        layers: "model.layers",
        attention: &QKVO,
        dense: &GATED_MLP,
        experts: ("mlp.experts", false),
        expert_projections: &GATED,
        shared: &[],
    };
    /// Mixtral: experts `block_sparse_moe.experts.{j}.w1/w2/w3`.
    pub(crate) const MIXTRAL: Naming = Naming {
        experts: ("block_sparse_moe.experts", false),
        expert_projections: &["w1", "w2", "w3"],
        ..Naming::LLAMA
    };
    /// DeepSeek-V3, Kimi K2: MLA projections, experts and `mlp.shared_experts`.
    pub(crate) const DEEPSEEK: Naming = Naming {
        attention: &[
            "self_attn.q_a_proj",
            "self_attn.q_b_proj",
            "self_attn.kv_a_proj_with_mqa",
            "self_attn.kv_b_proj",
            "self_attn.o_proj",
        ],
        shared: &[
            "mlp.shared_experts.gate_proj",
            "mlp.shared_experts.up_proj",
            "mlp.shared_experts.down_proj",
        ],
        ..Naming::LLAMA
    };
    /// gpt-oss: fused expert tensors `mlp.experts.gate_up_proj`, `mlp.experts.down_proj`.
    pub(crate) const GPT_OSS: Naming = Naming {
        experts: ("mlp.experts", true),
        expert_projections: &["gate_up_proj", "down_proj"],
        ..Naming::LLAMA
    };
    /// Llama 4: `feed_forward` FFNs, fused experts and one `shared_expert`.
    pub(crate) const LLAMA4: Naming = Naming {
        layers: "language_model.model.layers",
        dense: &[
            "feed_forward.gate_proj",
            "feed_forward.up_proj",
            "feed_forward.down_proj",
        ],
        experts: ("feed_forward.experts", true),
        expert_projections: &["gate_up_proj", "down_proj"],
        shared: &[
            "feed_forward.shared_expert.gate_proj",
            "feed_forward.shared_expert.up_proj",
            "feed_forward.shared_expert.down_proj",
        ],
        ..Naming::LLAMA
    };
}

/// The linear-layer names of `module` in `model` (empty for a module the model lacks).
pub(super) fn names(model: &ModelConfig, naming: &Naming, module: Module) -> Vec<String> {
    let dense = model.dense_layers();
    let layer = |range: std::ops::Range<u32>, suffixes: &[&str]| -> Vec<String> {
        range
            .flat_map(|i| suffixes.iter().map(move |s| format!("{}.{i}.{s}", naming.layers)))
            .collect()
    };
    match module {
        Module::Attention => layer(0..model.layers, naming.attention),
        Module::DenseMlp if model.ffn_dim > 0 => layer(0..dense, naming.dense),
        Module::SharedExperts if model.moe.is_some_and(|m| m.shared_experts > 0) => {
            layer(dense..model.layers, naming.shared)
        }
        Module::RoutedExperts => match model.moe {
            Some(m) => {
                let (container, fused) = naming.experts;
                let experts: Vec<String> = if fused {
                    vec![container.to_owned()]
                } else {
                    // The first and the last expert stand for all of them.
                    [0, m.experts - 1]
                        .iter()
                        .map(|j| format!("{container}.{j}"))
                        .collect()
                };
                (dense..model.layers)
                    .flat_map(|i| {
                        experts.iter().flat_map(move |e| {
                            naming
                                .expert_projections
                                .iter()
                                .map(move |p| format!("{}.{i}.{e}.{p}", naming.layers))
                        })
                    })
                    .collect()
            }
            None => Vec::new(),
        },
        Module::Head if !model.tied_embeddings => vec!["lm_head".to_owned()],
        _ => Vec::new(),
    }
}
