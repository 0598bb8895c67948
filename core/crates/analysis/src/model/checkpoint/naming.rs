//! How each architecture's transformers classes name its linear layers (`model.layers.{i}.self_attn.q_proj`,
//! `…mlp.experts.{j}.down_proj`, `lm_head`), and the names of one module of a model, which a checkpoint's
//! exclusion patterns are matched against.

use std::collections::BTreeSet;

use super::patterns::LayerAt;
use crate::model::ModelConfig;
use crate::quant_config::Module;

/// How an architecture's transformers classes name the linear layers of one decoder layer, relative to
/// `{layers}.{i}.`.
#[derive(Debug, Clone, Copy)]
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
    /// Linear attention's projections (the small β and α ones left out: they take the module's format).
    pub(crate) linear_attention: &'static [&'static str],
    /// The logits head.
    pub(crate) head: &'static str,
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
        linear_attention: &[],
        head: "lm_head",
    };
    /// Mixtral: experts `block_sparse_moe.experts.{j}.w1/w2/w3`.
    pub(crate) const MIXTRAL: Naming = Naming {
        experts: ("block_sparse_moe.experts", false),
        expert_projections: &["w1", "w2", "w3"],
        ..Naming::LLAMA
    };
    /// MiniMax-M3: Mixtral's experts and `block_sparse_moe.shared_experts` (the MSA indexer's projections
    /// take the attention's format).
    pub(crate) const MINIMAX_M3: Naming = Naming {
        shared: &[
            "block_sparse_moe.shared_experts.gate_proj",
            "block_sparse_moe.shared_experts.up_proj",
            "block_sparse_moe.shared_experts.down_proj",
        ],
        ..Naming::MIXTRAL
    };
    /// DeepSeek-V3, Kimi K2, DeepSeek-V3.2, GLM-5: MLA projections, experts and `mlp.shared_experts` (the
    /// sparse-attention indexer's projections take the attention's format).
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
    /// DeepSeek-V4, as its own modeling code and checkpoints name it (no `model.` prefix): `attn.{wq_a, wq_b,
    /// wkv}`, the compressor's and indexer's projections, the grouped output `attn.{wo_a, wo_b}`,
    /// `ffn.experts.{j}.{w1, w2, w3}`, `ffn.shared_experts.{w1, w2, w3}`, `head`.
    pub(crate) const DEEPSEEK_V4: Naming = Naming {
        layers: "layers",
        attention: &[
            "attn.wq_a",
            "attn.wq_b",
            "attn.wkv",
            "attn.compressor.wkv",
            "attn.compressor.wgate",
            "attn.indexer.wq_b",
            "attn.indexer.weights_proj",
            "attn.wo_a",
            "attn.wo_b",
        ],
        dense: &["ffn.w1", "ffn.w2", "ffn.w3"],
        experts: ("ffn.experts", false),
        expert_projections: &["w1", "w2", "w3"],
        shared: &[
            "ffn.shared_experts.w1",
            "ffn.shared_experts.w2",
            "ffn.shared_experts.w3",
        ],
        linear_attention: &[],
        head: "head",
    };
    /// GLM-4.5/4.6/4.7: Llama attention, DeepSeek's experts and `mlp.shared_experts`.
    pub(crate) const GLM4_MOE: Naming = Naming {
        attention: &QKVO,
        ..Naming::DEEPSEEK
    };
    /// Qwen3-Next: `linear_attn.in_proj_qkvz` and `out_proj`, experts per expert, one `mlp.shared_expert`.
    pub(crate) const QWEN3_NEXT: Naming = Naming {
        shared: &[
            "mlp.shared_expert.gate_proj",
            "mlp.shared_expert.up_proj",
            "mlp.shared_expert.down_proj",
        ],
        linear_attention: &["linear_attn.in_proj_qkvz", "linear_attn.out_proj"],
        ..Naming::LLAMA
    };
    /// Kimi-K3 (`KimiLinearForCausalLM`): DeepSeek's MLA and experts, and KDA's `self_attn.{q,k,v,o}_proj`.
    pub(crate) const KIMI_LINEAR: Naming = Naming {
        linear_attention: &QKVO,
        ..Naming::DEEPSEEK
    };
    /// Qwen3.5 and Qwen3.6 (the text model; within the multimodal wrapper the layers are
    /// `model.language_model.layers`): `linear_attn.in_proj_qkv`, `in_proj_z` and `out_proj`, fused experts.
    pub(crate) const QWEN3_5: Naming = Naming {
        experts: ("mlp.experts", true),
        expert_projections: &["gate_up_proj", "down_proj"],
        linear_attention: &[
            "linear_attn.in_proj_qkv",
            "linear_attn.in_proj_z",
            "linear_attn.out_proj",
        ],
        ..Naming::QWEN3_NEXT
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

/// Which layers hold one kind of module, as a rule over layer numbers (closed forms, so a config of 2^24
/// layers is never walked layer by layer), or a list read from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LayerSet {
    rule: Rule,
    /// The layers the rule leaves out instead.
    complement: bool,
    layers: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Rule {
    /// Layers below the number.
    Below(u32),
    /// Layers i with (i + 1) a multiple of the number (at least 1).
    EveryNth(u32),
    /// One flag per layer.
    Listed(Vec<bool>),
}

impl LayerSet {
    /// The first `n` of `layers` layers.
    pub(crate) const fn below(n: u32, layers: u32) -> LayerSet {
        LayerSet {
            rule: Rule::Below(n),
            complement: false,
            layers,
        }
    }

    /// Layers i of `layers` with (i + 1) a multiple of `period`.
    pub(crate) fn every_nth(period: u32, layers: u32) -> LayerSet {
        LayerSet {
            rule: Rule::EveryNth(period.max(1)),
            complement: false,
            layers,
        }
    }

    /// The layers flagged in `flags`, one per layer.
    pub(crate) fn listed(flags: Vec<bool>) -> LayerSet {
        let layers = u32::try_from(flags.len()).unwrap_or(u32::MAX);
        LayerSet {
            rule: Rule::Listed(flags),
            complement: false,
            layers,
        }
    }

    /// The other layers.
    #[must_use]
    pub(crate) fn others(&self) -> LayerSet {
        LayerSet {
            complement: !self.complement,
            ..self.clone()
        }
    }

    fn contains(&self, i: u32) -> bool {
        let inner = match &self.rule {
            Rule::Below(n) => i < *n,
            Rule::EveryNth(p) => (i + 1).is_multiple_of(*p),
            Rule::Listed(flags) => flags.get(i as usize).copied().unwrap_or(false),
        };
        i < self.layers && inner != self.complement
    }

    /// The first layer of the set at or after `i`.
    fn next_from(&self, i: u32) -> Option<u32> {
        let next = match (&self.rule, self.complement) {
            (Rule::Below(n), false) => Some(i).filter(|&i| i < *n),
            (Rule::Below(n), true) => Some(i.max(*n)),
            (Rule::EveryNth(p), false) => {
                u32::try_from(u64::from(i + 1).div_ceil(u64::from(*p)) * u64::from(*p) - 1).ok()
            }
            (Rule::EveryNth(1), true) => None,
            (Rule::EveryNth(_), true) => Some(if self.contains(i) { i } else { i + 1 }),
            (Rule::Listed(_), _) => (i..self.layers).find(|&j| self.contains(j)),
        };
        next.filter(|&j| j < self.layers)
    }

    /// The last layer of the set.
    fn last(&self) -> Option<u32> {
        let top = self.layers.checked_sub(1)?;
        match (&self.rule, self.complement) {
            (Rule::Below(n), false) => n.min(&self.layers).checked_sub(1),
            (Rule::EveryNth(p), false) => (self.layers / p * p).checked_sub(1),
            (Rule::Listed(_), _) => (0..=top).rev().find(|&j| self.contains(j)),
            _ => [top, top.saturating_sub(1)]
                .into_iter()
                .find(|&j| self.contains(j)),
        }
    }

    /// The layers a list of patterns is evaluated on for this set, each with the layer its sampled patterns
    /// are tried on (`LayerAt`): the first, second and last, those on either side of a change in digit
    /// count (9 and 10, 99 and 100, …), every layer `named` names, and one layer none of these is, standing
    /// for all the others. The sampled patterns are tried on the same layers less those only `named`
    /// names, an unsampled layer standing for the rest.
    pub(super) fn evaluation_layers(&self, named: &[u32], sampled_named: &[u32]) -> Vec<LayerAt> {
        let first = self.next_from(0);
        let second = first.and_then(|f| self.next_from(f + 1));
        let boundaries = (1..=9).flat_map(|k| [10u32.pow(k) - 1, 10u32.pow(k)]);
        let base: Vec<u32> = [first, second, self.last()]
            .into_iter()
            .flatten()
            .chain(boundaries)
            .collect();
        let members = |extra: &[u32]| -> BTreeSet<u32> {
            base.iter()
                .chain(extra)
                .copied()
                .filter(|&i| self.contains(i))
                .collect()
        };
        let (sample, sampled) = (members(named), members(sampled_named));
        let outside = |set: &BTreeSet<u32>| {
            let mut at = first;
            while let Some(i) = at.filter(|i| set.contains(i)) {
                at = self.next_from(i + 1);
            }
            at
        };
        let stand_in = outside(&sampled);
        sample
            .iter()
            .copied()
            .chain(outside(&sample))
            .map(|number| LayerAt {
                number,
                sampled_as: if sampled.contains(&number) {
                    number
                } else {
                    stand_in.unwrap_or(number)
                },
            })
            .collect()
    }
}

/// Where a model's layers of each kind sit: its dense-FFN layers and its linear-attention layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LayerLayout {
    /// Layers with a dense FFN (the others have experts).
    pub(crate) dense: LayerSet,
    /// Layers with linear attention (the others full attention).
    pub(crate) linear: LayerSet,
}

/// The linear layers of one module on one set of layers (`{layers}.{i}.{suffix}`), or outside the layers.
pub(super) struct Group {
    /// The layers, `None` for names outside them (`lm_head`).
    pub(super) layers: Option<LayerSet>,
    /// The names within a layer, or the whole names outside the layers.
    pub(super) suffixes: Vec<String>,
}

/// The linear layers of `module` in `model`, by layer set (empty for a module the model lacks).
pub(super) fn groups(
    model: &ModelConfig,
    naming: &Naming,
    layout: &LayerLayout,
    module: Module,
) -> Vec<Group> {
    let group = |layers: &LayerSet, suffixes: &[&str]| Group {
        layers: Some(layers.clone()),
        suffixes: suffixes.iter().map(|s| (*s).to_owned()).collect(),
    };
    let moe = layout.dense.others();
    match module {
        Module::Attention | Module::AttentionOutput => {
            // The output projections (`o_proj`, `out_proj`, DeepSeek-V4's grouped `wo_a`, `wo_b`) are the
            // attention output's, the rest the attention's.
            let output = module == Module::AttentionOutput;
            let is_output = |n: &str| {
                ["o_proj", "out_proj", ".wo_a", ".wo_b"]
                    .iter()
                    .any(|end| n.ends_with(end))
            };
            let part = |names: &[&str]| -> Vec<String> {
                names
                    .iter()
                    .filter(|n| is_output(n) == output)
                    .map(|n| (*n).to_owned())
                    .collect()
            };
            let mut groups = vec![Group {
                layers: Some(layout.linear.others()),
                suffixes: part(naming.attention),
            }];
            if model.linear_attention_layers() > 0 {
                groups.push(Group {
                    layers: Some(layout.linear.clone()),
                    suffixes: part(naming.linear_attention),
                });
            }
            groups
        }
        Module::DenseMlp if model.ffn_dim > 0 && model.dense_layers() > 0 => {
            vec![group(&layout.dense, naming.dense)]
        }
        Module::SharedExperts if model.moe.is_some_and(|m| m.shared_experts > 0) => {
            vec![group(&moe, naming.shared)]
        }
        Module::RoutedExperts => model.moe.map_or_else(Vec::new, |m| {
            let (container, fused) = naming.experts;
            // The first and the last expert stand for all of them.
            let experts = if fused {
                vec![container.to_owned()]
            } else {
                vec![format!("{container}.0"), format!("{container}.{}", m.experts - 1)]
            };
            let suffixes = experts
                .iter()
                .flat_map(|e| naming.expert_projections.iter().map(move |p| format!("{e}.{p}")))
                .collect();
            vec![Group {
                layers: Some(moe),
                suffixes,
            }]
        }),
        Module::Head if !model.tied_embeddings => vec![Group {
            layers: None,
            suffixes: vec![naming.head.to_owned()],
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(set: &LayerSet, named: &[u32]) -> Vec<u32> {
        set.evaluation_layers(named, &[])
            .iter()
            .map(|a| a.number)
            .collect()
    }

    #[test]
    fn layer_sets_find_their_members_in_closed_form() {
        // Every 4th of 48 layers (3, 7, …, 47) and the other 36.
        let full = LayerSet::every_nth(4, 48);
        assert_eq!(
            (full.next_from(0), full.next_from(4), full.last()),
            (Some(3), Some(7), Some(47))
        );
        let linear = full.others();
        assert_eq!((linear.next_from(3), linear.last()), (Some(4), Some(46)));
        // The first 3 of 61 layers and the other 58.
        let dense = LayerSet::below(3, 61);
        assert_eq!((dense.next_from(3), dense.last()), (None, Some(2)));
        assert_eq!(
            (dense.others().next_from(0), dense.others().last()),
            (Some(3), Some(60))
        );
        assert_eq!(LayerSet::every_nth(1, 5).others().next_from(0), None);
        // At 2^24 layers nothing is walked: the last i with (i + 1) a multiple of 6 has i + 1 = 6 · ⌊2^24 / 6⌋
        // = 16,777,212, so i = 2^24 − 5.
        let huge = LayerSet::every_nth(6, 1 << 24);
        assert_eq!(huge.last(), Some((1 << 24) - 5));
    }

    #[test]
    fn patterns_are_evaluated_on_named_layers_and_one_standing_for_the_rest() {
        // 36 layers: first, second, last, 9 and 10, the named 20, and 2 (the first layer none of those is).
        assert_eq!(
            numbers(&LayerSet::below(36, 36), &[20, 99]),
            [0, 1, 9, 10, 20, 35, 2]
        );
        // Full-attention layers of Qwen3-Next (every 4th): 3, 7, 47, and 11 standing for the others.
        assert_eq!(numbers(&LayerSet::every_nth(4, 48), &[]), [3, 7, 47, 11]);
        // Every layer named: no stand-in.
        assert_eq!(numbers(&LayerSet::below(3, 3), &[0, 1, 2]), [0, 1, 2]);
        // Sampled patterns see the named layers only through a stand-in.
        let layers = LayerSet::below(36, 36).evaluation_layers(&[20], &[]);
        let twenty = layers.iter().find(|a| a.number == 20).unwrap();
        assert_eq!(twenty.sampled_as, 2);
    }
}
