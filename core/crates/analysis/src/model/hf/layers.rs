//! The per-layer structure of a Hugging Face `config.json`: attention (MLA, its sparse indexer, linear
//! attention, sliding windows), the FFN and its experts, and where each kind of layer sits; each count a
//! closed form or one pass over a list checked against the layers first.

use super::{Family, multiples_in};
use crate::model::checkpoint::{LayerLayout, LayerSet};
use crate::model::fields::Fields;
use crate::model::{
    CompressedAttention, LinearAttention, MlaConfig, MoeConfig, SlidingWindow, SparseIndexer,
};
use crate::quant_config::{LinearFormat, Module, ModuleFormat, QuantConfig};
use roofline_base::Error;
use roofline_base::precision::Precision;

/// The head dimension, MLA's low-rank projections where the family has them, and DeepSeek Sparse
/// Attention's indexer (`index_n_heads`, `index_head_dim`, `index_topk`) where it has one.
pub(super) fn head_dim(
    family: Family,
    text: &Fields<'_>,
    hidden: u64,
    heads: u64,
) -> Result<(u64, Option<MlaConfig>, Option<SparseIndexer>), Error> {
    let mut mla = None;
    let indexer = match family {
        Family::DeepseekDsa => Some(SparseIndexer {
            heads: text.uint("index_n_heads")?,
            head_dim: text.uint("index_head_dim")?,
            top_k: text.uint("index_topk")?,
            msa: false,
            dense_layers: 0,
        }),
        _ => None,
    };
    let head_dim = match family {
        Family::DeepseekV3 | Family::DeepseekDsa | Family::KimiLinear => {
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
        Family::DeepseekV4 => {
            // Shared-KV MQA: kv_proj emits the cached head_dim-wide K = V directly (MLA without kv_b), its
            // last qk_rope_head_dim rotated.
            let (d, rope) = (text.uint("head_dim")?, text.uint("qk_rope_head_dim")?);
            let plain = d
                .checked_sub(rope)
                .filter(|&p| p > 0)
                .ok_or_else(|| text.error("qk_rope_head_dim", format!("{rope} is not below head_dim {d}")))?;
            mla = Some(MlaConfig {
                q_lora_rank: text.uint("q_lora_rank")?,
                kv_lora_rank: plain,
                rope_head_dim: rope,
                nope_head_dim: plain,
                v_head_dim: d,
            });
            d
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
    Ok((head_dim, mla, indexer))
}

/// The dense FFN width and the mixture-of-experts layout of the config (`None` for dense models).
pub(super) fn ffn(family: Family, text: &Fields<'_>, layers: u32) -> Result<(u64, Option<MoeConfig>), Error> {
    let layers_u64 = u64::from(layers);
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
        Family::Qwen3Moe => qwen_moe(text, layers)?,
        // The Qwen hybrids without `num_experts` (Qwen3.5 27B) are dense.
        Family::QwenHybrid if text.get("num_experts").is_some() => qwen_moe(text, layers)?,
        Family::DeepseekV3 | Family::DeepseekDsa | Family::Glm4Moe => {
            // DeepseekV3Config (and GLM's): a layer has experts when i >= first_k_dense_replace and
            // i % moe_layer_freq == 0 (moe_layer_freq defaults to 1). Older Glm4MoeConfig files say
            // `num_experts` for `n_routed_experts`.
            let first_dense = text.uint("first_k_dense_replace")?;
            let frequency = text.uint_or("moe_layer_freq", 1)?.max(1);
            let moe_layers = multiples_in(first_dense.min(layers_u64), layers_u64, frequency);
            let experts = match (family, text.optional_uint("n_routed_experts")?) {
                (Family::Glm4Moe, None) => text.uint("num_experts")?,
                (_, routed) => routed.ok_or_else(|| text.error("n_routed_experts", "missing"))?,
            };
            (
                text.uint("intermediate_size")?,
                Some(MoeConfig {
                    experts,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: text.uint("n_shared_experts")?,
                    expert_ffn: text.uint("moe_intermediate_size")?,
                    dense_layers: layers.saturating_sub(moe_layers),
                }),
            )
        }
        Family::DeepseekV4 => {
            // Every layer has experts (the first num_hash_layers route by token id) and the shared ones.
            let expert_ffn = text.uint("moe_intermediate_size")?;
            (
                expert_ffn,
                Some(MoeConfig {
                    experts: text.uint("n_routed_experts")?,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: text.uint("n_shared_experts")?,
                    expert_ffn,
                    dense_layers: 0,
                }),
            )
        }
        Family::KimiLinear => {
            // KimiLinearConfig: experts from layer first_k_dense_replace on, every moe_layer_freq-th (1).
            let first_dense = text.uint("first_k_dense_replace")?;
            let frequency = text.uint_or("moe_layer_freq", 1)?.max(1);
            let moe_layers = multiples_in(first_dense.min(layers_u64), layers_u64, frequency);
            (
                text.uint("intermediate_size")?,
                Some(MoeConfig {
                    experts: text.uint("num_experts")?,
                    top_k: text.uint("num_experts_per_token")?,
                    shared_experts: text.uint_or("num_shared_experts", 0)?,
                    expert_ffn: text.uint("moe_intermediate_size")?,
                    dense_layers: layers.saturating_sub(moe_layers),
                }),
            )
        }
        Family::MiniMaxM3 => {
            // MiniMax-M3: `moe_layer_freq` marks each layer's FFN (1 experts, 0 a dense one
            // `dense_intermediate_size` wide); the experts `moe_intermediate_size` wide, with shared ones
            // `shared_intermediate_size` wide in all. NVIDIA's NVFP4 copy leaves `moe_intermediate_size`
            // out: its `intermediate_size` (3072 in both) is the experts' width, as MiniMax-M2's is.
            let moe_layers = flagged_layers(text, "moe_layer_freq", layers)?;
            let expert_ffn = match text.optional_uint("moe_intermediate_size")? {
                Some(width) => width,
                None => text.uint("intermediate_size")?,
            };
            (
                text.uint("dense_intermediate_size")?,
                Some(MoeConfig {
                    experts: text.uint("num_local_experts")?,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: shared_experts(text, "shared_intermediate_size", expert_ffn)?,
                    expert_ffn,
                    dense_layers: layers - moe_layers,
                }),
            )
        }
        Family::MiniMaxM2 => {
            // MiniMax-M2: `intermediate_size` is the experts' width, every layer has experts, and
            // `shared_intermediate_size` (0 in the published files) adds shared ones.
            let expert_ffn = text.uint("intermediate_size")?;
            (
                expert_ffn,
                Some(MoeConfig {
                    experts: text.uint("num_local_experts")?,
                    top_k: text.uint("num_experts_per_tok")?,
                    shared_experts: shared_experts(text, "shared_intermediate_size", expert_ffn)?,
                    expert_ffn,
                    dense_layers: 0,
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
                None => moe_layers(layers, text.uint_or("interleave_moe_layer_step", 1)?.max(1), &[]),
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
        Family::Llama
        | Family::Mistral
        | Family::Qwen2
        | Family::Qwen3
        | Family::Gemma3
        | Family::QwenHybrid => (text.uint("intermediate_size")?, None),
    })
}

/// Layers i with (i + 1) a multiple of `step`, less those in `exempt` (distinct, below `layers`).
fn moe_layers(layers: u32, step: u64, exempt: &[u64]) -> u32 {
    let exempted = exempt
        .iter()
        .filter(|&&i| (i + 1).is_multiple_of(step.max(1)))
        .count();
    multiples_in(1, u64::from(layers) + 1, step).saturating_sub(u32::try_from(exempted).unwrap_or(u32::MAX))
}

/// Qwen3-MoE's experts, and Qwen3-Next's and Qwen3.5-MoE's with one shared expert
/// `shared_expert_intermediate_size` wide (Qwen3MoeConfig defaults: decoder_sparse_step 1, mlp_only_layers
/// []). The dense width only matters where those make a dense layer; Qwen3.5 configs omit it.
fn qwen_moe(text: &Fields<'_>, layers: u32) -> Result<(u64, Option<MoeConfig>), Error> {
    let step = text.uint_or("decoder_sparse_step", 1)?.max(1);
    let exempt = text.layer_indices("mlp_only_layers", layers)?.unwrap_or_default();
    let moe = moe_layers(layers, step, &exempt);
    let expert_ffn = text.uint("moe_intermediate_size")?;
    let dense_ffn = if moe < layers {
        text.uint("intermediate_size")?
    } else {
        text.uint_or("intermediate_size", expert_ffn)?
    };
    Ok((
        dense_ffn,
        Some(MoeConfig {
            experts: text.uint("num_experts")?,
            top_k: text.uint("num_experts_per_tok")?,
            shared_experts: shared_experts(text, "shared_expert_intermediate_size", expert_ffn)?,
            expert_ffn,
            dense_layers: layers.saturating_sub(moe),
        }),
    ))
}

/// Shared experts `field` wide in all, as a count of experts `expert_ffn` wide (0 when absent or 0).
fn shared_experts(text: &Fields<'_>, field: &str, expert_ffn: u64) -> Result<u64, Error> {
    let width = text.uint_or(field, 0)?;
    if width.is_multiple_of(expert_ffn.max(1)) {
        Ok(width / expert_ffn.max(1))
    } else {
        Err(text.error(
            field,
            format!("{width} is not a multiple of the experts' width {expert_ffn}: not modelled"),
        ))
    }
}

/// Gated DeltaNet linear attention of the Qwen hybrids: on the layers `layer_types` marks
/// `linear_attention`, else all but every `full_attention_interval`-th (default 4, Qwen3NextConfig), with
/// `linear_*` head counts and sizes and the state in `mamba_ssm_dtype` (FP32 unless it says otherwise).
pub(super) fn linear_attention(
    family: Family,
    text: &Fields<'_>,
    layers: u32,
) -> Result<Option<LinearAttention>, Error> {
    if family == Family::KimiLinear {
        return kimi_delta_attention(text, layers).map(Some);
    }
    if family != Family::QwenHybrid {
        return Ok(None);
    }
    let linear = match text.layer_types(layers)? {
        Some(types) => u32::try_from(types.linear.iter().filter(|&&l| l).count()).unwrap_or(u32::MAX),
        None => {
            layers
                - multiples_in(
                    1,
                    u64::from(layers) + 1,
                    text.uint_or("full_attention_interval", 4)?.max(1),
                )
        }
    };
    let state = match text.optional_str("mamba_ssm_dtype")?.unwrap_or("float32") {
        "float32" => Precision::Fp32,
        "bfloat16" => Precision::Bf16,
        "float16" => Precision::Fp16,
        other => {
            return Err(text.error(
                "mamba_ssm_dtype",
                format!("'{other}' is not modelled (float32, bfloat16, float16)"),
            ));
        }
    };
    Ok(Some(LinearAttention {
        layers: linear,
        key_heads: text.uint("linear_num_key_heads")?,
        value_heads: text.uint("linear_num_value_heads")?,
        key_head_dim: text.uint("linear_key_head_dim")?,
        value_head_dim: text.uint("linear_value_head_dim")?,
        conv_kernel: text.uint("linear_conv_kernel_dim")?,
        state,
        kda: false,
    }))
}

/// Kimi Delta Attention (Kimi-K3's `linear_attn_config`): `num_heads` heads of `head_dim` for q, k and v
/// alike, a `short_conv_kernel_size`-tap convolution, the state in FP32 (vLLM's `kda_state_dtype`), on the
/// layers `kda_layers` names.
fn kimi_delta_attention(text: &Fields<'_>, layers: u32) -> Result<LinearAttention, Error> {
    let config = text
        .nested("linear_attn_config")?
        .ok_or_else(|| text.error("linear_attn_config", "missing (the KDA layers' config)"))?;
    if !config.bool_or("use_full_rank_gate", false)? {
        return Err(config.error(
            "use_full_rank_gate",
            "false (Kimi-Linear's low-rank output gate) is not modelled; Kimi-K3's full-rank gate is",
        ));
    }
    let linear = kda_flags(text, layers)?.iter().filter(|&&l| l).count();
    let (heads, head_dim) = (config.uint("num_heads")?, config.uint("head_dim")?);
    Ok(LinearAttention {
        layers: u32::try_from(linear).unwrap_or(u32::MAX),
        key_heads: heads,
        value_heads: heads,
        key_head_dim: head_dim,
        value_head_dim: head_dim,
        conv_kernel: config.uint("short_conv_kernel_size")?,
        state: Precision::Fp32,
        kda: true,
    })
}

/// Which layers have KDA: `linear_attn_config.kda_layers` and `full_attn_layers` number the layers from 1
/// and together must name each once.
fn kda_flags(text: &Fields<'_>, layers: u32) -> Result<Vec<bool>, Error> {
    let config = text
        .nested("linear_attn_config")?
        .ok_or_else(|| text.error("linear_attn_config", "missing (the KDA layers' config)"))?;
    let mut kinds: Vec<Option<bool>> = vec![None; layers as usize];
    for (field, kda) in [("kda_layers", true), ("full_attn_layers", false)] {
        let list = config
            .uint_list(field)?
            .ok_or_else(|| config.error(field, "missing (layer numbers from 1)"))?;
        for n in list {
            let slot = usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| kinds.get_mut(i))
                .ok_or_else(|| config.error(field, format!("layer {n} is not in 1..={layers}")))?;
            if slot.replace(kda).is_some() {
                return Err(config.error(field, format!("layer {n} is named twice")));
            }
        }
    }
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| {
            kind.ok_or_else(|| {
                config.error(
                    "kda_layers",
                    format!("layer {} is in neither kda_layers nor full_attn_layers", i + 1),
                )
            })
        })
        .collect()
}

/// How many layers a per-layer list of 0s and 1s (`field`, one entry a layer) marks 1.
fn flagged_layers(text: &Fields<'_>, field: &str, layers: u32) -> Result<u32, Error> {
    let list = text
        .uint_list(field)?
        .ok_or_else(|| text.error(field, "missing (one 0 or 1 per layer)"))?;
    if list.len() != layers as usize || list.iter().any(|&f| f > 1) {
        return Err(text.error(
            field,
            format!(
                "must give one 0 or 1 per layer ({layers}); has {} entries",
                list.len()
            ),
        ));
    }
    Ok(u32::try_from(list.iter().filter(|&&f| f == 1).count()).unwrap_or(u32::MAX))
}

/// MiniMax Sparse Attention (MiniMax-M3 `sparse_attention_config`, when `use_sparse_attention`): an indexer
/// of `sparse_num_index_heads` × `sparse_index_dim` on the layers `sparse_attention_freq` marks, each query
/// reading the keys of its top `sparse_topk_blocks` blocks of `sparse_block_size` (its local block among
/// them); the other layers attend to every key.
pub(super) fn minimax_sparse_attention(
    text: &Fields<'_>,
    layers: u32,
) -> Result<Option<SparseIndexer>, Error> {
    let Some(sparse) = text.nested("sparse_attention_config")? else {
        return Ok(None);
    };
    if !sparse.bool_or("use_sparse_attention", false)? {
        return Ok(None);
    }
    let blocks = sparse.uint("sparse_topk_blocks")?;
    let block_size = sparse.uint("sparse_block_size")?;
    Ok(Some(SparseIndexer {
        heads: sparse.uint("sparse_num_index_heads")?,
        head_dim: sparse.uint("sparse_index_dim")?,
        top_k: blocks
            .checked_mul(block_size)
            .ok_or_else(|| sparse.error("sparse_topk_blocks", "times sparse_block_size overflows"))?,
        msa: true,
        dense_layers: layers - flagged_layers(&sparse, "sparse_attention_freq", layers)?,
    }))
}

/// Where the config's dense-FFN layers sit, for matching a checkpoint's patterns to layers (built only for a
/// config with a `quantization_config`): Llama 4's interleaved experts and Qwen3-MoE's `mlp_only_layers` and
/// `decoder_sparse_step` where they are, DeepSeek's dense layers first; the Qwen hybrids' linear-attention
/// layers where `layer_types` or `full_attention_interval` put them.
pub(super) fn layout(
    family: Family,
    text: &Fields<'_>,
    (layers, dense_layers): (u32, u32),
) -> Result<LayerLayout, Error> {
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
        Family::Qwen3Moe | Family::QwenHybrid if dense_layers < layers => {
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
        _ => LayerSet::below(dense_layers, layers),
    };
    let linear = match (family, text.layer_types(layers)?) {
        (Family::QwenHybrid, Some(types)) => LayerSet::listed(types.linear),
        (Family::QwenHybrid, None) => {
            let interval = text.uint_or("full_attention_interval", 4)?.max(1);
            LayerSet::every_nth(u32::try_from(interval).unwrap_or(u32::MAX), layers).others()
        }
        (Family::KimiLinear, _) => LayerSet::listed(kda_flags(text, layers)?),
        _ => LayerSet::below(0, layers),
    };
    Ok(LayerLayout { dense, linear })
}

/// The sliding-window layout of the config, `None` when no layer slides.
pub(super) fn sliding_window(
    family: Family,
    text: &Fields<'_>,
    layers: u32,
) -> Result<Option<SlidingWindow>, Error> {
    let from_types = text.layer_types(layers)?;
    let (window, sliding_layers, chunked) = match family {
        Family::Llama
        | Family::DeepseekV3
        | Family::DeepseekDsa
        | Family::Glm4Moe
        | Family::MiniMaxM2
        | Family::MiniMaxM3
        | Family::KimiLinear
        | Family::QwenHybrid => (None, 0, false),
        // DeepSeek-V4: every layer attends to its last `sliding_window` tokens (beside compressed entries).
        Family::DeepseekV4 => (Some(text.uint("sliding_window")?), layers, false),
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
    let (sliding_layers, chunked) = from_types.map_or((sliding_layers, chunked), |t| (t.sliding, t.chunked));
    Ok(window.filter(|_| sliding_layers > 0).map(|window| SlidingWindow {
        window,
        layers: sliding_layers,
        chunked,
    }))
}

/// DeepSeek-V4's compressed attention: `compress_ratios` (one per layer, then the MTP layers') says 0 for a
/// sliding-window-only layer, 4 for CSA (compressor and indexer, as vLLM's `compress_ratio == 4`), and
/// another ratio, the same on every such layer, for HCA.
pub(super) fn compressed_attention(
    family: Family,
    text: &Fields<'_>,
    layers: u32,
) -> Result<Option<CompressedAttention>, Error> {
    const CSA_RATIO: u64 = 4;
    if family != Family::DeepseekV4 {
        return Ok(None);
    }
    let ratios = text
        .uint_list("compress_ratios")?
        .ok_or_else(|| text.error("compress_ratios", "missing (one ratio per layer)"))?;
    let ratios = ratios.get(..layers as usize).ok_or_else(|| {
        text.error(
            "compress_ratios",
            format!("has {} entries for {layers} layers", ratios.len()),
        )
    })?;
    // At most `layers` entries (a u32), so each count fits.
    let count = |f: &dyn Fn(u64) -> bool| ratios.iter().filter(|&&r| f(r)).fold(0u32, |n, _| n + 1);
    let heavy: Vec<u64> = ratios
        .iter()
        .copied()
        .filter(|&r| r != 0 && r != CSA_RATIO)
        .collect();
    let hca_ratio = heavy.first().copied().unwrap_or(128);
    if heavy.iter().any(|&r| r != hca_ratio) {
        return Err(text.error(
            "compress_ratios",
            "more than one ratio besides 0 and 4: not modelled",
        ));
    }
    Ok(Some(CompressedAttention {
        csa_layers: count(&|r| r == CSA_RATIO),
        csa_ratio: CSA_RATIO,
        hca_layers: count(&|r| r != 0 && r != CSA_RATIO),
        hca_ratio,
        indexer: SparseIndexer {
            heads: text.uint("index_n_heads")?,
            head_dim: text.uint("index_head_dim")?,
            top_k: text.uint("index_topk")?,
            msa: false,
            dense_layers: 0,
        },
        o_groups: text.uint("o_groups")?,
        o_lora_rank: text.uint("o_lora_rank")?,
        hc_mult: text.uint_or("hc_mult", 1)?,
    }))
}

/// DeepSeek-V4's routed experts in FP4 where `expert_dtype` says `fp4` (the published checkpoints, whose
/// `quantization_config` gives the other layers' FP8): MXFP4 weights (E2M1, a UE8M0 scale per 32) run
/// weight-only with BF16 activations, as gpt-oss's MXFP4 experts, the path every GPU here has (an FP8 × FP4
/// kernel on Blackwell computes faster; decode reads the same bytes). NVIDIA's NVFP4 files, whose
/// `moe_quant_algo` the checkpoint reader applies, are left as it read them.
pub(super) fn fp4_experts(
    text: &Fields<'_>,
    checkpoint: Option<QuantConfig>,
) -> Result<Option<QuantConfig>, Error> {
    // NVIDIA's NVFP4 files: the checkpoint reader gave the experts ModelOpt's `moe_quant_algo`.
    if text
        .nested("quantization_config")?
        .is_some_and(|q| q.get("moe_quant_algo").is_some())
    {
        return Ok(checkpoint);
    }
    match (text.optional_str("expert_dtype")?, checkpoint) {
        (Some("fp4"), Some(mut config)) => {
            let base = config.format(Module::RoutedExperts);
            config.modules.retain(|m| m.module != Module::RoutedExperts);
            config.modules.push(ModuleFormat {
                module: Module::RoutedExperts,
                format: LinearFormat {
                    weights: Precision::Mxfp4,
                    activations: Precision::Bf16,
                    ..base
                },
            });
            config.name = format!("{} + FP4 experts", config.name);
            Ok(Some(config))
        }
        (None | Some("fp8" | "bf16"), checkpoint) => Ok(checkpoint),
        (Some(other), _) => Err(text.error(
            "expert_dtype",
            format!("'{other}' is not modelled (fp4 beside an fp8 quantization_config, fp8, bf16)"),
        )),
    }
}
