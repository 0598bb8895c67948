//! How much KV cache fits on one GPU, the way serving engines size it, and how many sequences that holds.
//!
//! One rule ([`memory_budget`]) for every caller (the serving model, and later the fit, the advisor and the
//! page): from the memory of one device ([`device_capacity_bytes`]), the engine keeps a fraction
//! ([`MemoryFraction`], each engine's own rule), loads one GPU's weights, holds the activations of its
//! largest step ([`activation_bytes`]), and gives the rest to the KV cache. Sequences fit while each holds
//! the KV of its whole prompt and output (ISL + OSL tokens, sliding-window layers at most their window,
//! replicated KV heads counted on every GPU), so no running sequence is ever preempted.
//!
//! Not modelled: CUDA-graph pools and the CUDA context (inside the engines' reserves, never counted by
//! them), KV block rounding (vLLM allocates 16-token blocks: at most 15 tokens per sequence), and prefix
//! caching.

use crate::error::Error;
use crate::hardware::HardwareSpec;
use crate::model::ModelConfig;
use crate::parallel::Parallelism;
use crate::quant_config::QuantConfig;

/// The memory of one device the engine sizes its pools against, in bytes.
///
/// The catalog's datasheet figure ([`HardwareSpec::memory_bytes`]: 80 GB decimal for an H100). Engines read
/// what the driver reports (`torch.cuda.mem_get_info`: 79.2 GiB = 85.0 GB on an H100 SXM), so this is the
/// one place to swap in a device-reported capacity.
#[must_use]
pub fn device_capacity_bytes(hardware: &HardwareSpec) -> f64 {
    hardware.memory_bytes
}

/// How an engine splits device memory between its pools.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum MemoryFraction {
    /// vLLM `gpu_memory_utilization` (default 0.9): the engine may use capacity · f in all; the KV cache gets
    /// what weights and the profiled peak activations leave. KV = capacity · f − weights − activations.
    /// Source: vllm-project/vllm `vllm/engine/arg_utils.py` (`gpu_memory_utilization: float = 0.90`) and
    /// `vllm/v1/worker/gpu_worker.py` `determine_available_memory` (`requested_memory −
    /// non_kv_cache_memory`, the latter weights + torch peak + non-torch memory of the profiling run).
    OfCapacity(f64),
    /// SGLang `mem_fraction_static`: weights and the KV pool together take capacity · f; activations and
    /// CUDA-graph buffers live in the remaining 1 − f. KV = capacity · f − weights. Source:
    /// sgl-project/sglang `python/sglang/srt/server_args.py` `_handle_gpu_memory_settings` ("mem_fraction_static
    /// is defined as (model weights + KV cache pool) / GPU memory capacity").
    StaticOfCapacity(f64),
    /// TensorRT-LLM `KvCacheConfig.free_gpu_memory_fraction` (default 0.9): the KV cache gets a fraction of
    /// the memory free after the weights and the profiled peak activations. KV = (capacity − weights −
    /// activations) · f. Source: NVIDIA/TensorRT-LLM `tensorrt_llm/llmapi/llm_args.py` (`default=0.9`) and
    /// `tensorrt_llm/_torch/pyexecutor/_util.py` `KvCacheCreator._cal_max_tokens` (`(total_gpu_memory −
    /// peak_memory + …) · fraction`).
    OfFree(f64),
}

impl MemoryFraction {
    /// The fraction itself, in (0, 1].
    #[must_use]
    pub const fn value(self) -> f64 {
        match self {
            MemoryFraction::OfCapacity(f)
            | MemoryFraction::StaticOfCapacity(f)
            | MemoryFraction::OfFree(f) => f,
        }
    }
}

/// An engine's memory rule: its fraction and the largest step it profiles for activations.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MemoryRule {
    /// How the engine splits device memory.
    pub fraction: MemoryFraction,
    /// Tokens of the profiling forward pass: the engine's per-step token budget (vLLM
    /// `max_num_batched_tokens`, TensorRT-LLM `max_num_tokens`, SGLang `chunked_prefill_size`).
    pub profile_tokens: u32,
    /// Sequences sampled in the profiling pass (logits rows): min(max sequences, profile tokens), one per
    /// dummy request as vLLM's `profile_run` samples them.
    pub profile_seqs: u32,
}

/// One GPU's memory under an engine's rule, in bytes, and the sequences its KV cache holds.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MemoryBudget {
    /// Memory of one device ([`device_capacity_bytes`]), in bytes.
    pub capacity_bytes: f64,
    /// The engine's fraction rule.
    pub fraction: MemoryFraction,
    /// Weights one GPU holds, in bytes.
    pub weight_bytes: f64,
    /// Peak activations of the profiling step ([`activation_bytes`]), in bytes.
    pub activation_bytes: f64,
    /// Memory the KV cache gets (0 when weights and activations leave none), in bytes.
    pub kv_cache_bytes: f64,
    /// KV cache of one sequence of `sequence_tokens` tokens on one GPU, replicated KV heads included, in
    /// bytes.
    pub kv_bytes_per_sequence: f64,
    /// Tokens each sequence holds at its longest (ISL + OSL).
    pub sequence_tokens: u64,
    /// Sequences the KV cache holds at full length: ⌊kv_cache_bytes / kv_bytes_per_sequence⌋ (0: the model
    /// does not fit).
    pub max_sequences: u32,
}

impl MemoryBudget {
    /// Whether at least one sequence fits.
    #[must_use]
    pub fn fits(&self) -> bool {
        self.max_sequences > 0
    }

    /// Weights + activations + the KV cache of `sequences` full-length sequences, in bytes (one GPU).
    #[must_use]
    pub fn used_bytes(&self, sequences: u32) -> f64 {
        self.weight_bytes + self.activation_bytes + f64::from(sequences) * self.kv_bytes_per_sequence
    }
}

/// Peak activation bytes of one GPU's forward pass over `tokens` tokens that samples `logits_rows` rows,
/// as an engine's profiling run allocates them.
///
/// With b the hidden format's bytes per element, H the hidden size, W the widest intermediate of a layer
/// (the larger of the QKV projection output and the MLP's gate/up output plus its activation output: 3·F
/// for a gated FFN of width F, 2·F ungated; for MoE the routed rows top_k · 3·F_expert per token, plus the
/// shared experts), and V the vocabulary:
///
/// activations = b · tokens · (2·H + W) + logits_rows · V · (b + 4)
///
/// The first term is what is live at the widest point of a layer: the residual stream and the layer input
/// (2·H per token) plus the intermediate. The second is the logits of the sampled rows in the model's
/// format and their FP32 copy (vLLM's sampler computes in float32; TP gathers the whole vocabulary on every
/// GPU). Source of the mechanism: vllm-project/vllm `vllm/v1/worker/gpu_model_runner.py` `profile_run`
/// (`_dummy_run(max_num_tokens)` then `_dummy_sampler_run` over one row per dummy request). The estimate
/// is a derivation from those tensors, not a measurement; allocator fragmentation and attention-backend
/// workspaces are not counted.
///
/// `shard` is one GPU's part of the model ([`Parallelism::shard`]); `full_vocab` the whole vocabulary.
#[must_use]
pub fn activation_bytes(
    shard: &ModelConfig,
    config: &QuantConfig,
    tokens: u64,
    logits_rows: u64,
    full_vocab: u64,
) -> f64 {
    let b = config.hidden().effective_bytes();
    let attention_width = match shard.mla {
        // Absorbed MLA: the query (nope + rope) and the key/value up-projection outputs of every head.
        Some(m) => shard.heads * (2 * m.nope_head_dim + m.rope_head_dim + m.v_head_dim),
        None => (shard.heads + 2 * shard.kv_heads) * shard.head_dim,
    };
    let ffn_factor = if shard.gated_ffn { 3 } else { 2 };
    let dense_width = if shard.dense_layers() > 0 {
        ffn_factor * shard.ffn_dim
    } else {
        0
    };
    let moe_width = shard
        .moe
        .map_or(0, |m| ffn_factor * m.expert_ffn * (m.top_k + m.shared_experts));
    let widest = attention_width.max(dense_width).max(moe_width);
    let per_token = (2 * shard.hidden + widest) as f64;
    b * tokens as f64 * per_token + logits_rows as f64 * full_vocab as f64 * (b + 4.0)
}

/// One GPU's memory budget for `model` under `config` split as `parallelism` says, with the engine's
/// `rule`, for sequences of `sequence_tokens` tokens (ISL + OSL).
///
/// kv_cache = by [`MemoryFraction`]; max_sequences = ⌊kv_cache / kv_bytes_per_sequence⌋, where one
/// sequence holds `sequence_tokens` tokens of KV on every layer (at most the window on sliding-window
/// layers) in the config's KV format, with one GPU's KV heads (replicated when fewer than the GPUs).
///
/// # Errors
/// [`Error::InvalidInput`] for zero sequence tokens, a fraction outside (0, 1], a zero profiling step, an
/// invalid model, or degrees [`Parallelism::check`] refuses.
///
/// # Examples
/// ```
/// use roofline_core::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let bf16 = find_quant_config("bf16").unwrap();
/// // vLLM's defaults on an 80 GB H100: 90 % of memory, profiling 8192 tokens and 1024 sampled rows.
/// let vllm = MemoryRule { fraction: MemoryFraction::OfCapacity(0.9), profile_tokens: 8192, profile_seqs: 1024 };
/// let budget = memory_budget(h100, model, bf16, &Parallelism::SINGLE, &vllm, 2048).unwrap();
/// assert_eq!(budget.kv_bytes_per_sequence, 2048.0 * 131_072.0);
/// assert_eq!(budget.max_sequences, 202);
/// ```
pub fn memory_budget(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    parallelism: &Parallelism,
    rule: &MemoryRule,
    sequence_tokens: u64,
) -> Result<MemoryBudget, Error> {
    let fraction = rule.fraction.value();
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(Error::InvalidInput(format!(
            "memory fraction must be in (0, 1], got {fraction}"
        )));
    }
    if sequence_tokens == 0 || rule.profile_tokens == 0 || rule.profile_seqs == 0 {
        return Err(Error::InvalidInput(
            "sequence tokens, profile tokens and profile sequences must be at least 1".into(),
        ));
    }
    model.check()?;
    parallelism.check(model, hardware)?;
    let shard = parallelism.shard(model);
    let capacity_bytes = device_capacity_bytes(hardware);
    let weight_bytes = shard.weight_bytes(config);
    let activations = activation_bytes(
        &shard,
        config,
        u64::from(rule.profile_tokens),
        u64::from(rule.profile_seqs.min(rule.profile_tokens)),
        model.vocab,
    );
    let kv_cache_bytes = match rule.fraction {
        MemoryFraction::OfCapacity(f) => capacity_bytes * f - weight_bytes - activations,
        MemoryFraction::StaticOfCapacity(f) => capacity_bytes * f - weight_bytes,
        MemoryFraction::OfFree(f) => (capacity_bytes - weight_bytes - activations) * f,
    }
    .max(0.0);
    let kv_bytes_per_sequence = shard.kv_cache_bytes(config.kv_cache, sequence_tokens);
    let max_sequences = (kv_cache_bytes / kv_bytes_per_sequence)
        .floor()
        .min(f64::from(u32::MAX)) as u32;
    Ok(MemoryBudget {
        capacity_bytes,
        fraction: rule.fraction,
        weight_bytes,
        activation_bytes: activations,
        kv_cache_bytes,
        kv_bytes_per_sequence,
        sequence_tokens,
        max_sequences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::find_hardware;
    use crate::model::find_model;
    use crate::quant_config::find_quant_config;

    fn vllm_h100() -> MemoryRule {
        MemoryRule {
            fraction: MemoryFraction::OfCapacity(0.9),
            profile_tokens: 8192,
            profile_seqs: 1024,
        }
    }

    #[test]
    fn llama_8b_bf16_on_one_h100_fits_202_sequences_of_1k_in_1k_out_by_hand() {
        // Capacity: the catalog's 80 GB; vLLM uses 0.9 of it: 72,000,000,000 B.
        // Weights: 8,030,261,248 parameters · 2 B = 16,060,522,496 B (embedding and untied head
        //   2 · 128256 · 4096, 32 layers of 4096·6144 + 4096·4096 + 3·4096·14336 + 2·4096, final norm 4096).
        // Activations at vLLM's H100 default of 8192 tokens and min(1024, 8192) = 1024 sampled rows:
        //   2 B · 8192 · (2·4096 + 3·14336) = 2 · 8192 · 51,200 = 838,860,800 B
        //   + 1024 · 128,256 · (2 + 4) B = 788,004,864 B → 1,626,865,664 B.
        // KV cache: 72e9 − 16,060,522,496 − 1,626,865,664 = 54,312,611,840 B.
        // One sequence of 1024 + 1024 tokens: 2048 · 131,072 B (2 · 32 layers · 8 KV heads · 128 · 2 B)
        //   = 268,435,456 B → ⌊54,312,611,840 / 268,435,456⌋ = ⌊202.33⌋ = 202 sequences.
        let budget = memory_budget(
            find_hardware("h100_sxm").unwrap(),
            find_model("llama-3.1-8b").unwrap(),
            find_quant_config("bf16").unwrap(),
            &Parallelism::SINGLE,
            &vllm_h100(),
            2048,
        )
        .unwrap();
        assert_eq!(budget.capacity_bytes, 80e9);
        assert_eq!(budget.weight_bytes, 16_060_522_496.0);
        assert_eq!(budget.activation_bytes, 1_626_865_664.0);
        assert_eq!(budget.kv_cache_bytes, 54_312_611_840.0);
        assert_eq!(budget.kv_bytes_per_sequence, 268_435_456.0);
        assert_eq!(budget.max_sequences, 202);
        assert!(budget.used_bytes(202) <= 72e9 && budget.used_bytes(203) > 72e9);
    }

    #[test]
    fn each_engine_rule_applies_its_fraction_where_its_source_says() {
        let hardware = find_hardware("h100_sxm").unwrap();
        let model = find_model("llama-3.1-8b").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        let budget = |fraction| {
            let rule = MemoryRule {
                fraction,
                ..vllm_h100()
            };
            memory_budget(hardware, model, bf16, &Parallelism::SINGLE, &rule, 2048).unwrap()
        };
        let (w, a) = (16_060_522_496.0, 1_626_865_664.0);
        // SGLang: weights + KV = 0.85 · 80e9; the activations live in the other 15 %.
        assert_eq!(
            budget(MemoryFraction::StaticOfCapacity(0.85)).kv_cache_bytes,
            0.85 * 80e9 - w
        );
        // TensorRT-LLM: 90 % of what weights and activations leave.
        assert_eq!(
            budget(MemoryFraction::OfFree(0.9)).kv_cache_bytes,
            (80e9 - w - a) * 0.9
        );
    }

    #[test]
    fn tensor_parallel_and_sliding_windows_shrink_what_one_sequence_holds() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        let llama_70b = find_model("llama-3.1-70b").unwrap();
        let one = memory_budget(h100, llama_70b, bf16, &Parallelism::SINGLE, &vllm_h100(), 4096).unwrap();
        // 141 GB of weights leave nothing on one 80 GB GPU.
        assert_eq!((one.kv_cache_bytes, one.max_sequences), (0.0, 0));
        assert!(!one.fits());
        let four = memory_budget(h100, llama_70b, bf16, &Parallelism::tensor(4), &vllm_h100(), 4096).unwrap();
        // 8 KV heads over 4 GPUs: 2 per GPU, 80 layers · 2 · 2 · 128 · 2 B = 81,920 B per token.
        assert_eq!(four.kv_bytes_per_sequence, 4096.0 * 81_920.0);
        assert!(four.max_sequences > 50, "{}", four.max_sequences);
        // gpt-oss-20b: its 12 sliding layers hold 128 tokens whatever the sequence length.
        let oss = find_model("gpt-oss-20b").unwrap();
        let b = memory_budget(h100, oss, bf16, &Parallelism::SINGLE, &vllm_h100(), 8192).unwrap();
        assert_eq!(b.kv_bytes_per_sequence, (12.0 * 8192.0 + 12.0 * 128.0) * 2048.0);
    }

    #[test]
    fn bad_rules_are_errors() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let model = find_model("llama-3.1-8b").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        for (rule, tokens) in [
            (
                MemoryRule {
                    fraction: MemoryFraction::OfCapacity(1.2),
                    ..vllm_h100()
                },
                2048,
            ),
            (
                MemoryRule {
                    fraction: MemoryFraction::OfFree(f64::NAN),
                    ..vllm_h100()
                },
                2048,
            ),
            (vllm_h100(), 0),
        ] {
            assert!(matches!(
                memory_budget(h100, model, bf16, &Parallelism::SINGLE, &rule, tokens),
                Err(Error::InvalidInput(_))
            ));
        }
    }
}
