//! How much KV cache fits on one GPU, the way serving engines size it, and how many sequences that holds.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use crate::model::ModelConfig;
use crate::parallel::Parallelism;
use crate::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;
use roofline_base::units::GIB;

/// The memory of one device the engine sizes its pools against, in bytes.
///
/// What the driver reports ([`HardwareSpec::memory_reported_bytes`]: the CUDA total vLLM reads with
/// `torch.cuda.mem_get_info`, 79.22 GiB = 85.06 GB on an H100 SXM, vllm-project/vllm PR #10511), else the
/// datasheet figure ([`HardwareSpec::memory_bytes`], 80 GB decimal for an H100) where no reported total is
/// known.
#[must_use]
pub fn device_capacity_bytes(hardware: &HardwareSpec) -> f64 {
    hardware.memory_reported_bytes.unwrap_or(hardware.memory_bytes)
}

/// vLLM's default `gpu_memory_utilization`: the fraction of device memory one instance may use.
///
/// Source: vllm-project/vllm `vllm/config/cache.py` (`gpu_memory_utilization: float = Field(default=0.92,
/// gt=0, le=1)`, commit 002f10e0cfa1373a19a0d2756598a34b700d20e5, and docs.vllm.ai/en/stable/cli/serve);
/// it was 0.90 through vLLM 0.11 (`vllm/engine/arg_utils.py`, `gpu_memory_utilization: float = 0.90`) and in
/// every H100 log this project cites (vllm-project/vllm PR #10511).
pub const VLLM_GPU_MEMORY_UTILIZATION: f64 = 0.92;

/// vLLM's default token budget and running sequences (`max_num_batched_tokens`, `max_num_seqs`) on
/// `hardware`: 8192 and 1024 on a device with at least 70 GiB that is not an A100, else 2048 and 256; the
/// profiling step of its memory rule. Source: vllm-project/vllm `vllm/engine/arg_utils.py`
/// `EngineArgs._set_default_args` (V1 defaults, vLLM 0.11, whose deprecations target 0.12).
#[must_use]
pub fn vllm_limits(hardware: &HardwareSpec) -> (u32, u32) {
    let large =
        device_capacity_bytes(hardware) / GIB >= 70.0 && !hardware.name.to_ascii_lowercase().contains("a100");
    if large { (8192, 1024) } else { (2048, 256) }
}

/// How an engine splits device memory between its pools.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum MemoryFraction {
    /// vLLM `gpu_memory_utilization` (default [`VLLM_GPU_MEMORY_UTILIZATION`]): the engine may use capacity · f in all; the KV cache gets
    /// what weights and the profiled peak activations leave. KV = capacity · f − weights − activations.
    /// Source: vllm-project/vllm `vllm/config/cache.py` (the default) and
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
    /// vLLM's default: [`VLLM_GPU_MEMORY_UTILIZATION`] of capacity.
    pub const VLLM: MemoryFraction = MemoryFraction::OfCapacity(VLLM_GPU_MEMORY_UTILIZATION);

    /// The fraction itself, in (0, 1].
    #[must_use]
    pub const fn value(self) -> f64 {
        match self {
            MemoryFraction::OfCapacity(f)
            | MemoryFraction::StaticOfCapacity(f)
            | MemoryFraction::OfFree(f) => f,
        }
    }

    /// The same rule with fraction `f` (an engine's setting changed from its default).
    #[must_use]
    pub const fn with_value(self, f: f64) -> MemoryFraction {
        match self {
            MemoryFraction::OfCapacity(_) => MemoryFraction::OfCapacity(f),
            MemoryFraction::StaticOfCapacity(_) => MemoryFraction::StaticOfCapacity(f),
            MemoryFraction::OfFree(_) => MemoryFraction::OfFree(f),
        }
    }

    /// What this rule leaves the KV cache on a device of `capacity_bytes` holding `weight_bytes` of weights
    /// and `activation_bytes` of peak activations, in bytes; negative when weights and activations already
    /// exceed what the engine may use (the one formula of every fit):
    /// - [`MemoryFraction::OfCapacity`]: capacity · f − weights − activations;
    /// - [`MemoryFraction::StaticOfCapacity`]: capacity · f − weights;
    /// - [`MemoryFraction::OfFree`]: (capacity − weights − activations) · f.
    #[must_use]
    pub fn kv_budget_bytes(self, capacity_bytes: f64, weight_bytes: f64, activation_bytes: f64) -> f64 {
        match self {
            MemoryFraction::OfCapacity(f) => capacity_bytes * f - weight_bytes - activation_bytes,
            MemoryFraction::StaticOfCapacity(f) => capacity_bytes * f - weight_bytes,
            MemoryFraction::OfFree(f) => (capacity_bytes - weight_bytes - activation_bytes) * f,
        }
    }

    /// Checks that the fraction is in (0, 1].
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the fraction.
    pub fn check(self) -> Result<(), Error> {
        let f = self.value();
        if f > 0.0 && f <= 1.0 {
            Ok(())
        } else {
            Err(Error::InvalidInput(format!(
                "memory fraction must be in (0, 1], got {f}"
            )))
        }
    }
}

impl Default for MemoryFraction {
    /// [`MemoryFraction::VLLM`].
    fn default() -> Self {
        MemoryFraction::VLLM
    }
}

impl MemoryRule {
    /// vLLM's defaults on `hardware` with `fraction` of memory: its profiling step ([`vllm_limits`]: the
    /// token budget, sampling min(max sequences, budget) rows).
    #[must_use]
    pub fn vllm(hardware: &HardwareSpec, fraction: MemoryFraction) -> MemoryRule {
        let (profile_tokens, max_seqs) = vllm_limits(hardware);
        MemoryRule {
            fraction,
            profile_tokens,
            profile_seqs: max_seqs.min(profile_tokens),
        }
    }
}

/// One GPU's memory for one step under an engine's memory rule: the fit of [`crate::ModelAnalysis`], the
/// advisor and the page's memory bar ([`step_memory`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct StepMemory {
    /// Memory of one device ([`device_capacity_bytes`]), in bytes.
    pub capacity_bytes: f64,
    /// The engine's fraction rule.
    pub fraction: MemoryFraction,
    /// Weights one GPU holds, in bytes.
    pub weight_bytes: f64,
    /// Peak activations of the engine's profiling step ([`activation_bytes`]), in bytes.
    pub activation_bytes: f64,
    /// KV cache of the step's sequences on one GPU, in bytes.
    pub kv_cache_bytes: f64,
    /// What the rule leaves the KV cache ([`MemoryFraction::kv_budget_bytes`]; negative when weights and
    /// activations alone exceed it), in bytes.
    pub kv_budget_bytes: f64,
}

impl StepMemory {
    /// Whether the step's KV cache fits in what the rule leaves it.
    #[must_use]
    pub fn fits(&self) -> bool {
        self.kv_budget_bytes > 0.0 && self.kv_cache_bytes <= self.kv_budget_bytes
    }

    /// Weights + activations + KV cache, in bytes.
    #[must_use]
    pub fn required_bytes(&self) -> f64 {
        self.weight_bytes + self.activation_bytes + self.kv_cache_bytes
    }

    /// What the engine lets weights, activations and the KV cache take together: weights + activations +
    /// the KV budget (capacity · f under vLLM's rule), in bytes.
    #[must_use]
    pub fn usable_bytes(&self) -> f64 {
        self.weight_bytes + self.activation_bytes + self.kv_budget_bytes
    }

    /// Usable − required: free when positive, missing when negative, in bytes.
    #[must_use]
    pub fn headroom_bytes(&self) -> f64 {
        self.kv_budget_bytes - self.kv_cache_bytes
    }
}

/// One GPU's memory for a step holding `kv_cache_bytes` of KV cache, with `shard` one GPU's part of the
/// model ([`Parallelism::shard`]) of a `full_vocab`-token vocabulary under `config`, on `hardware` with the
/// engine's `fraction` and vLLM's profiling step for the device ([`MemoryRule::vllm`]): the activations
/// the engine reserves do not depend on the step's batch.
#[must_use]
pub fn step_memory(
    hardware: &HardwareSpec,
    shard: &ModelConfig,
    full_vocab: u64,
    config: &QuantConfig,
    fraction: MemoryFraction,
    kv_cache_bytes: f64,
) -> StepMemory {
    let rule = MemoryRule::vllm(hardware, fraction);
    let capacity_bytes = device_capacity_bytes(hardware);
    let weight_bytes = shard.weight_bytes(config);
    let activation_bytes = activation_bytes(
        shard,
        config,
        u64::from(rule.profile_tokens),
        u64::from(rule.profile_seqs),
        full_vocab,
    );
    StepMemory {
        capacity_bytes,
        fraction,
        weight_bytes,
        activation_bytes,
        kv_cache_bytes,
        kv_budget_bytes: fraction.kv_budget_bytes(capacity_bytes, weight_bytes, activation_bytes),
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
    /// Of `kv_bytes_per_sequence`, the part that does not grow with the sequence: linear attention's
    /// recurrent state and convolution window ([`ModelConfig::state_bytes_per_sequence`] of one GPU's part;
    /// 0 for models without linear attention), in bytes.
    pub state_bytes_per_sequence: f64,
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
/// (the largest of the QKV projection output, linear attention's input projection and the MLP's gate/up
/// output plus its activation output: 3·F
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
    let gate = if shard.attention_output_gate { 2 } else { 1 };
    let attention_width = match shard.mla {
        // Absorbed MLA: the query (nope + rope) and the key/value up-projection outputs of every head.
        Some(m) => shard.heads * (2 * m.nope_head_dim + m.rope_head_dim + m.v_head_dim),
        None => (gate * shard.heads + 2 * shard.kv_heads) * shard.head_dim,
    }
    .max(shard.linear_attention.map_or(0, |l| l.in_proj_width()));
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
/// sequence holds `sequence_tokens` tokens of KV on every attention layer (at most the window on
/// sliding-window layers) in the config's KV format, with one GPU's KV heads (replicated when fewer than
/// the GPUs), the sparse-attention indexer's keys, and linear attention's constant state
/// ([`ModelConfig::kv_cache_bytes`]), as vLLM's hybrid KV-cache manager pools them.
///
/// # Errors
/// [`Error::InvalidInput`] for zero sequence tokens, a fraction outside (0, 1], a zero profiling step, an
/// invalid model, or degrees [`Parallelism::check`] refuses.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let bf16 = find_quant_config("bf16").unwrap();
/// // vLLM's defaults on an H100 (79.22 GiB reported): 92 % of memory, profiling 8192 tokens and 1024 rows.
/// let vllm = MemoryRule::vllm(h100, MemoryFraction::VLLM);
/// assert_eq!((vllm.profile_tokens, vllm.profile_seqs), (8192, 1024));
/// let budget = memory_budget(h100, model, bf16, &Parallelism::SINGLE, &vllm, 2048).unwrap();
/// assert_eq!(budget.kv_bytes_per_sequence, 2048.0 * 131_072.0);
/// assert_eq!(budget.max_sequences, 225);
/// ```
pub fn memory_budget(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    parallelism: &Parallelism,
    rule: &MemoryRule,
    sequence_tokens: u64,
) -> Result<MemoryBudget, Error> {
    rule.fraction.check()?;
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
    let kv_cache_bytes = rule
        .fraction
        .kv_budget_bytes(capacity_bytes, weight_bytes, activations)
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
        state_bytes_per_sequence: shard.state_bytes_per_sequence(),
        sequence_tokens,
        max_sequences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::find_model;
    use crate::quant_config::find_quant_config;
    use roofline_base::hardware::find_hardware;

    fn vllm_h100() -> MemoryRule {
        MemoryRule::vllm(find_hardware("h100_sxm").unwrap(), MemoryFraction::VLLM)
    }

    /// The H100 SXM's reported capacity: 79.22 GiB = 79.22 · 2^30 = 85,061,827,297.28 B.
    const H100_BYTES: f64 = 79.22 * 1_073_741_824.0;

    #[test]
    fn llama_8b_bf16_on_one_h100_fits_225_sequences_of_1k_in_1k_out_by_hand() {
        // Capacity: 79.22 GiB as vLLM reads it (PR #10511) = 85,061,827,297.28 B; vLLM's default 0.92 of it:
        //   78,256,881,113.50 B.
        // Weights: 8,030,261,248 parameters · 2 B = 16,060,522,496 B (embedding and untied head
        //   2 · 128256 · 4096, 32 layers of 4096·6144 + 4096·4096 + 3·4096·14336 + 2·4096, final norm 4096).
        // Activations at vLLM's default of 8192 tokens (79.22 GiB ≥ 70 GiB) and min(1024, 8192) = 1024
        //   sampled rows: 2 B · 8192 · (2·4096 + 3·14336) = 2 · 8192 · 51,200 = 838,860,800 B
        //   + 1024 · 128,256 · (2 + 4) B = 788,004,864 B → 1,626,865,664 B.
        // KV cache: 78,256,881,113.50 − 16,060,522,496 − 1,626,865,664 = 60,569,492,953.50 B.
        // One sequence of 1024 + 1024 tokens: 2048 · 131,072 B (2 · 32 layers · 8 KV heads · 128 · 2 B)
        //   = 268,435,456 B → ⌊60,569,492,953.50 / 268,435,456⌋ = ⌊225.64⌋ = 225 sequences.
        let budget = memory_budget(
            find_hardware("h100_sxm").unwrap(),
            find_model("llama-3.1-8b").unwrap(),
            find_quant_config("bf16").unwrap(),
            &Parallelism::SINGLE,
            &vllm_h100(),
            2048,
        )
        .unwrap();
        assert_eq!(budget.capacity_bytes, H100_BYTES);
        assert_eq!(budget.weight_bytes, 16_060_522_496.0);
        assert_eq!(budget.activation_bytes, 1_626_865_664.0);
        assert!((budget.kv_cache_bytes - 60_569_492_953.5).abs() < 1.0);
        assert_eq!(budget.kv_bytes_per_sequence, 268_435_456.0);
        assert_eq!(budget.max_sequences, 225);
        let usable = 0.92 * H100_BYTES;
        assert!(budget.used_bytes(225) <= usable && budget.used_bytes(226) > usable);
    }

    #[test]
    fn the_step_fit_uses_the_same_rule() {
        // The same H100, model and config with 225 and 226 sequences of 2048 tokens on the step's KV cache:
        // the budget above holds 225.
        let hardware = find_hardware("h100_sxm").unwrap();
        let model = find_model("llama-3.1-8b").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        let fit = |seqs: f64| {
            step_memory(
                hardware,
                model,
                model.vocab,
                bf16,
                MemoryFraction::VLLM,
                seqs * 268_435_456.0,
            )
        };
        let (fits, over) = (fit(225.0), fit(226.0));
        assert!(fits.fits() && !over.fits());
        assert_eq!(fits.activation_bytes, 1_626_865_664.0);
        assert!((fits.usable_bytes() - 0.92 * H100_BYTES).abs() < 1.0);
        assert!(fits.headroom_bytes() > 0.0 && over.headroom_bytes() < 0.0);
        // At vLLM's older 0.90: 76,555,644,567.55 − 17,687,388,160 = 58,868,256,407.55 B → 219 sequences.
        let older = step_memory(
            hardware,
            model,
            model.vocab,
            bf16,
            MemoryFraction::OfCapacity(0.9),
            219.0 * 268_435_456.0,
        );
        assert!(older.fits() && older.headroom_bytes() < 268_435_456.0);
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
        // SGLang: weights + KV = 0.85 · capacity; the activations live in the other 15 %.
        assert_eq!(
            budget(MemoryFraction::StaticOfCapacity(0.85)).kv_cache_bytes,
            0.85 * H100_BYTES - w
        );
        // TensorRT-LLM: 90 % of what weights and activations leave.
        assert_eq!(
            budget(MemoryFraction::OfFree(0.9)).kv_cache_bytes,
            (H100_BYTES - w - a) * 0.9
        );
    }

    #[test]
    fn tensor_parallel_and_sliding_windows_shrink_what_one_sequence_holds() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        let llama_70b = find_model("llama-3.1-70b").unwrap();
        let one = memory_budget(h100, llama_70b, bf16, &Parallelism::SINGLE, &vllm_h100(), 4096).unwrap();
        // 141 GB of weights leave nothing on one 85 GB (79.22 GiB) GPU.
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
    fn linear_attention_state_takes_its_place_in_the_kv_budget() {
        // Qwen3.5-397B-A17B in BF16 over 8 H200s, sequences of 2048 tokens. One GPU keeps, per sequence:
        // 15 full-attention layers · 2048 tokens · 2 (K, V) · 1 KV head (2 over 8 GPUs, replicated) · 256 · 2 B
        // = 31,457,280 B, and 45 Gated DeltaNet layers of 8 value heads (64 / 8) · 128 · 128 · 4 B = 524,288 B
        // plus a window of (2 · 2 · 128 + 8 · 128) channels · 3 taps · 2 B = 9,216 B: 24,007,680 B.
        let h200 = find_hardware("h200_sxm").unwrap();
        let rule = MemoryRule::vllm(h200, MemoryFraction::VLLM);
        let budget = memory_budget(
            h200,
            find_model("qwen3.5-397b-a17b").unwrap(),
            find_quant_config("bf16").unwrap(),
            &Parallelism::tensor(8),
            &rule,
            2048,
        )
        .unwrap();
        assert_eq!(budget.state_bytes_per_sequence, 24_007_680.0);
        assert_eq!(budget.kv_bytes_per_sequence, 31_457_280.0 + 24_007_680.0);
        assert!(budget.fits());
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
