//! Whole-model analysis: every operator of one prefill, decode or mixed step, its roofline time, and the
//! totals. `step.rs` builds the operators of any step ([`StepBatch`], [`analyze_step`]); a [`Workload`] is
//! the step with only whole prompts or only decode rows.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

mod mtp;
mod step;

use crate::corrections::{Corrections, OpAnalysis};
use crate::memory::step_memory;
use crate::model::ModelConfig;
use crate::ops::OpKind;
use crate::parallel::Parallelism;
use crate::quant_config::{Module, ModuleFormat, QuantConfig};
use crate::roofline::Bound;
pub use mtp::analyze_mtp_step;
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Mode};
use step::Models;
pub use step::{StepBatch, analyze_step};

/// Which phase of inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Phase {
    /// Processing the prompt: all `context` tokens at once.
    Prefill,
    /// Generating one token per sequence over a KV cache of `context` tokens.
    Decode,
}

/// What runs: the phase, sequences in the batch, and the context length in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Workload {
    /// Prefill or decode.
    pub phase: Phase,
    /// Sequences processed together.
    pub batch: u32,
    /// Prompt length (prefill) or tokens already in the KV cache (decode).
    pub context: u32,
}

impl Workload {
    /// One decode step of `batch` sequences over `context` cached tokens each.
    #[must_use]
    pub const fn decode(batch: u32, context: u32) -> Workload {
        Workload {
            phase: Phase::Decode,
            batch,
            context,
        }
    }
}

/// The analysis of one step of one model on one device.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ModelAnalysis {
    /// Device key.
    pub hardware: String,
    /// Model key.
    pub model: String,
    /// Precision config key.
    pub config: String,
    /// The workload analysed ([`analyze_model`], [`analyze_model_parallel`]); `None` for a step built with
    /// [`analyze_step`], which may mix decode rows and prefill tokens.
    pub workload: Option<Workload>,
    /// The step analysed: its decode rows and prefill tokens ([`StepBatch::of`] a workload).
    pub step: StepBatch,
    /// How the step is split over GPUs ([`Parallelism::SINGLE`] for one GPU).
    pub parallelism: Parallelism,
    /// GPUs the step runs on (tensor · pipeline degree).
    pub gpus: u32,
    /// The ceilings the times come from ([`Mode::of`] the spec).
    pub mode: Mode,
    /// The corrections applied.
    pub corrections: Corrections,
    /// Every distinct operator, per instance, with its count.
    pub ops: Vec<OpAnalysis>,
    /// Σ count · FLOPs, in FLOP.
    pub total_flops: f64,
    /// Σ count · bytes over every operator but the collectives: the DRAM bytes of one GPU, in bytes.
    pub total_bytes: f64,
    /// Σ count · bytes over the collectives: the bytes one GPU sends over its link, in bytes.
    pub communication_bytes: f64,
    /// Σ count · time over the collectives, in seconds (0 on one GPU).
    pub communication_time_s: f64,
    /// Share of the step time spent in collectives, in [0, 1].
    pub communication_fraction: f64,
    /// Σ count · time plus the step's host launch overhead: the time of the step, in seconds.
    pub total_time_s: f64,
    /// Host launch overhead of the step ([`crate::StepLaunch`]), in seconds.
    pub launch_overhead_s: f64,
    /// Time to first token (a prefill workload only): the step time, in seconds.
    pub ttft_s: Option<f64>,
    /// Time per output token (a decode workload only): the step time, in seconds.
    pub tpot_s: Option<f64>,
    /// Tokens the step processes per second: [`StepBatch::tokens`] / step time (batch / TPOT in decode,
    /// batch · context / TTFT in prefill).
    pub tokens_per_s: f64,
    /// Kernel launches in the step (Σ count).
    pub kernel_launches: u32,
    /// Bytes of all weights (the whole model, over all GPUs), in bytes.
    pub weight_bytes: f64,
    /// Bytes of the KV cache of the step's sequences (`batch · context` tokens for a workload; the whole
    /// model, one copy), in bytes.
    pub kv_cache_bytes: f64,
    /// Bytes of the weights one GPU holds (equal to `weight_bytes` on one GPU), in bytes.
    pub weight_bytes_per_gpu: f64,
    /// Bytes of the KV cache one GPU holds, replicated KV heads included, in bytes.
    pub kv_cache_bytes_per_gpu: f64,
    /// Peak activations one GPU reserves: those of the engine's profiling step ([`crate::step_memory`]), in
    /// bytes.
    pub activation_bytes_per_gpu: f64,
    /// Weights + activations + KV cache of one GPU, in bytes.
    pub memory_required_bytes: f64,
    /// Memory of one device as the driver reports it ([`crate::device_capacity_bytes`]), in bytes.
    pub memory_capacity_bytes: f64,
    /// What the engine's rule lets weights, activations and the KV cache of one GPU take
    /// ([`crate::StepMemory::usable_bytes`]: capacity · 0.92 under vLLM's default), in bytes.
    pub memory_usable_bytes: f64,
    /// Whether one GPU's weights, activations and KV cache fit under the engine's rule.
    pub fits_in_memory: bool,
    /// Total FLOPs / total bytes, in FLOP/byte (a summary; times are not derived from it).
    pub aggregate_arithmetic_intensity: f64,
    /// The roof that limits the largest share of the step time (memory, compute or the interconnect).
    pub bound: Bound,
    /// Share of the step time spent in memory-bound operators, in [0, 1].
    pub memory_bound_fraction: f64,
    /// Effective bits per weight element of the linear layers (the config's default linear format).
    pub weight_bits_per_element: f64,
    /// The format each module of the model runs in ([`QuantConfig::format`]), in layer order: one entry per
    /// module the model has (attention, dense MLP, router, shared and routed experts, embeddings, head).
    pub modules: Vec<ModuleFormat>,
    /// Effective bits per KV-cache element.
    pub kv_bits_per_element: f64,
    /// Modelling approximations that apply to this model (e.g. MLA).
    pub approximations: Vec<String>,
}

impl ModelAnalysis {
    /// The order in which one step launches its kernels, as indices into [`ModelAnalysis::ops`]: Σ count
    /// entries (each row `count` times), for a model of `layers` layers.
    ///
    /// Rows once per step before the first repeated row (the embedding) open the step and those after the
    /// last (final norm, logits) close it; the rows between run layer by layer, in row order, each row's
    /// `count` instances spread evenly over the `layers` layers (instance j of a row with count c runs in
    /// layer ⌊j·layers / c⌋: once per layer for most rows, twice for the two residual adds, every few layers
    /// for sliding-window or MoE rows).
    #[must_use]
    pub fn launch_order(&self, layers: u32) -> Vec<usize> {
        let repeated = |row: &OpAnalysis| row.count > 1;
        let (Some(first), Some(last)) = (
            self.ops.iter().position(repeated),
            self.ops.iter().rposition(repeated),
        ) else {
            return self.rows_in_order(0..self.ops.len());
        };
        let layers = u64::from(layers.max(1));
        let mut order = self.rows_in_order(0..first);
        for layer in 0..layers {
            for (index, row) in self.ops.iter().enumerate().take(last + 1).skip(first) {
                // Instances j with ⌊j·layers / count⌋ = layer: ⌈(layer + 1)·count / layers⌉ − ⌈layer·count / layers⌉.
                let count = u64::from(row.count);
                let here = ((layer + 1) * count).div_ceil(layers) - (layer * count).div_ceil(layers);
                order.extend(std::iter::repeat_n(index, usize::try_from(here).unwrap_or(0)));
            }
        }
        order.extend(self.rows_in_order(last + 1..self.ops.len()));
        order
    }

    /// Each row of `rows` `count` times, in row order.
    fn rows_in_order(&self, rows: std::ops::Range<usize>) -> Vec<usize> {
        rows.flat_map(|index| std::iter::repeat_n(index, self.ops[index].count as usize))
            .collect()
    }
}

/// Analyses one step (prefill or decode) of `model` under `config` on `hardware`.
///
/// # Errors
/// - [`Error::Unsupported`] when the device lacks a format of `config` (see [`QuantConfig::check_support`]).
/// - [`Error::InvalidInput`] for a zero batch or context, an invalid model, or a step whose token count
///   exceeds [`crate::ops::MAX_DIM`].
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let bf16 = find_quant_config("bf16").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let a = analyze_model(h100, model, bf16, &decode, &Corrections::NONE).unwrap();
/// assert_eq!(a.kv_cache_bytes, 536_870_912.0);
/// assert_eq!(a.bound, Bound::Memory);
/// assert!((a.tokens_per_s - 1.0 / a.tpot_s.unwrap()).abs() < 1e-9);
/// ```
pub fn analyze_model(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    workload: &Workload,
    corrections: &Corrections,
) -> Result<ModelAnalysis, Error> {
    analyze_model_parallel(
        hardware,
        model,
        config,
        workload,
        &Parallelism::SINGLE,
        corrections,
    )
}

/// Analyses one step of `model` split over GPUs as `parallelism` says (rules in [`Parallelism`]): per-GPU
/// operators, the collectives between them, and per-GPU memory. [`Parallelism::SINGLE`] gives exactly
/// [`analyze_model`].
///
/// # Errors
/// As [`analyze_model`], and [`Error::InvalidInput`] from [`Parallelism::check`]: invalid degrees, a device
/// without an interconnect figure, more GPUs than its scale-up domain.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-70b").unwrap();
/// let bf16 = find_quant_config("bf16").unwrap();
/// let decode = Workload { phase: Phase::Decode, batch: 1, context: 4096 };
/// let one = analyze_model(h100, model, bf16, &decode, &Corrections::NONE).unwrap();
/// let four = analyze_model_parallel(h100, model, bf16, &decode, &Parallelism::tensor(4), &Corrections::NONE)
///     .unwrap();
/// // 141 GB of BF16 weights do not fit one 80 GB H100; a quarter of them fits each of four.
/// assert!(!one.fits_in_memory && four.fits_in_memory);
/// assert!(four.communication_time_s > 0.0 && four.tpot_s < one.tpot_s);
/// ```
pub fn analyze_model_parallel(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    workload: &Workload,
    parallelism: &Parallelism,
    corrections: &Corrections,
) -> Result<ModelAnalysis, Error> {
    if workload.batch == 0 || workload.context == 0 {
        return Err(Error::InvalidInput("batch and context must be at least 1".into()));
    }
    let analysis = analyze_step(
        hardware,
        model,
        config,
        &StepBatch::of(workload),
        parallelism,
        corrections,
    )?;
    let step_s = analysis.total_time_s;
    Ok(ModelAnalysis {
        workload: Some(*workload),
        ttft_s: (workload.phase == Phase::Prefill).then_some(step_s),
        tpot_s: (workload.phase == Phase::Decode).then_some(step_s),
        ..analysis
    })
}

fn summarize(
    hardware: &HardwareSpec,
    models: &Models<'_>,
    config: &QuantConfig,
    step: &StepBatch,
    corrections: &Corrections,
    ops: Vec<OpAnalysis>,
) -> ModelAnalysis {
    let model = models.full;
    let total = |f: fn(&OpAnalysis) -> f64| ops.iter().map(|o| f64::from(o.count) * f(o)).sum::<f64>();
    let communication = |f: fn(&OpAnalysis) -> f64| {
        ops.iter()
            .filter(|o| o.kind == OpKind::Collective)
            .map(|o| f64::from(o.count) * f(o))
            .fold(0.0, |sum, x| sum + x)
    };
    let total_flops = total(|o| o.flops);
    let communication_bytes = communication(|o| o.bytes);
    let communication_time_s = communication(|o| o.time_s);
    let total_bytes = total(|o| o.bytes) - communication_bytes;
    let kernels_s = total(|o| o.time_s);
    let kernel_launches = ops.iter().map(|o| o.count).sum();
    let launch_overhead_s = corrections.step_launch.overhead_s(kernels_s, kernel_launches);
    let total_time_s = kernels_s + launch_overhead_s;
    let memory_time_s: f64 = ops
        .iter()
        .filter(|o| o.bound == Bound::Memory)
        .map(OpAnalysis::total_time_s)
        .sum();
    let tokens_per_s = step.tokens() as f64 / total_time_s;
    // The KV cache of the step's sequences: decode rows over their context, prefill sequences over their
    // prompt so far (prior + chunk).
    let prefill_context = u64::from(step.prefill_prior) + u64::from(step.prefill_chunk);
    let kv = |m: &ModelConfig| {
        f64::from(step.decode_seqs) * m.kv_cache_bytes(config.kv_cache, u64::from(step.decode_context))
            + f64::from(step.prefill_seqs) * m.kv_cache_bytes(config.kv_cache, prefill_context)
    };
    let weight_bytes = model.weight_bytes(config);
    let kv_cache_bytes = kv(model);
    let weight_bytes_per_gpu = models.shard.weight_bytes(config);
    let kv_cache_bytes_per_gpu = kv(models.shard);
    let memory = step_memory(
        hardware,
        models.shard,
        model.vocab,
        config,
        corrections.memory,
        kv_cache_bytes_per_gpu,
    );
    let memory_bound_fraction = memory_time_s / kernels_s;
    let compute_time_s = kernels_s - memory_time_s - communication_time_s;
    let bound = if communication_time_s > memory_time_s && communication_time_s > compute_time_s {
        Bound::Interconnect
    } else if memory_time_s >= compute_time_s {
        Bound::Memory
    } else {
        Bound::Compute
    };
    let approximations = approximations(hardware, models);
    ModelAnalysis {
        hardware: hardware.key.clone(),
        model: model.key.clone(),
        config: config.key.clone(),
        workload: None,
        step: *step,
        parallelism: models.parallelism,
        gpus: models.parallelism.gpus(),
        mode: Mode::of(hardware),
        corrections: *corrections,
        kernel_launches,
        launch_overhead_s,
        ops,
        total_flops,
        total_bytes,
        communication_bytes,
        communication_time_s,
        communication_fraction: communication_time_s / total_time_s,
        total_time_s,
        ttft_s: None,
        tpot_s: None,
        tokens_per_s,
        weight_bytes,
        kv_cache_bytes,
        weight_bytes_per_gpu,
        kv_cache_bytes_per_gpu,
        activation_bytes_per_gpu: memory.activation_bytes,
        memory_required_bytes: memory.required_bytes(),
        memory_capacity_bytes: memory.capacity_bytes,
        memory_usable_bytes: memory.usable_bytes(),
        fits_in_memory: memory.fits(),
        aggregate_arithmetic_intensity: total_flops / total_bytes,
        bound,
        memory_bound_fraction,
        weight_bits_per_element: config.weights.effective_bits(),
        modules: model
            .modules()
            .into_iter()
            .chain(
                (config.format(Module::AttentionOutput) != config.format(Module::Attention))
                    .then_some(Module::AttentionOutput),
            )
            .map(|module| ModuleFormat {
                module,
                format: config.format(module),
            })
            .collect(),
        kv_bits_per_element: config.kv_cache.effective_bits(),
        approximations,
    }
}

/// The modelling approximations that apply to the step's model and split (MLA, sparse attention, linear
/// attention, chunked attention, tensor parallelism), one sentence each.
fn approximations(hardware: &HardwareSpec, models: &Models<'_>) -> Vec<String> {
    let model = models.full;
    let parallel = (models.parallelism != Parallelism::SINGLE).then(|| {
        let p = models.parallelism;
        let kv = if model.mla.is_some() {
            "MLA latent on every GPU".to_owned()
        } else if models.shard.kv_heads * u64::from(p.tensor) > model.kv_heads {
            format!("{} KV heads replicated to one per GPU", model.kv_heads)
        } else {
            format!("{} KV heads per GPU", models.shard.kv_heads)
        };
        format!(
            "TP {} (EP {}): per-GPU shapes, {kv}; ring collectives over {}, not overlapped with compute",
            p.tensor,
            p.expert,
            hardware
                .interconnect
                .as_ref()
                .map_or("the interconnect", |i| i.link.name())
        )
    });
    let chunked = model.sliding_window.filter(|w| w.chunked).map(|w| {
        format!(
            "chunked attention ({} tokens) analysed as a sliding window of that size: an upper bound on the keys read",
            w.window
        )
    });
    let sparse = model.sparse_indexer.map(|i| {
        let (kind, attention) = if i.msa {
            ("MiniMax Sparse Attention", "GQA")
        } else {
            ("DeepSeek Sparse Attention", "MLA")
        };
        format!(
            "{kind}: the indexer's FP8 logits over every cached key and a top-{} selection, then {attention} over \
             at most {} keys (a window of that size: keys counted exactly, their scattered reads at full \
             bandwidth)",
            i.top_k, i.top_k
        )
    });
    let linear = model.linear_attention.map(|l| {
        let (kind, rope) = if l.kda {
            ("Kimi Delta Attention (Gated DeltaNet's costs, a decay per key channel)", "")
        } else {
            ("Gated DeltaNet", "; partial RoPE analysed on the whole head")
        };
        format!(
            "{kind} on {} layers: the {} state read and written every decode step; prefill's chunked delta rule \
             in chunks of {} tokens{rope}",
            model.linear_attention_layers(),
            l.state,
            crate::ops::DELTA_RULE_CHUNK
        )
    });
    model
        .mla
        .map(|_| {
            "MLA approximated: projections exact; attention as MQA over the cached latent (kv_lora_rank + rope_head_dim per token, K and V share it)".to_owned()
        })
        .into_iter()
        .chain(sparse)
        .chain(linear)
        .chain(chunked)
        .chain(parallel)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{find_model, model_presets};
    use crate::quant_config::{find_quant_config, quant_configs};
    use roofline_base::hardware::find_hardware;

    fn run(hw: &str, model: &str, config: &str, phase: Phase, batch: u32, context: u32) -> ModelAnalysis {
        analyze_model(
            find_hardware(hw).unwrap(),
            find_model(model).unwrap(),
            find_quant_config(config).unwrap(),
            &Workload {
                phase,
                batch,
                context,
            },
            &Corrections::NONE,
        )
        .unwrap()
    }

    #[test]
    fn h100_llama_8b_bf16_decode_is_bounded_by_weights_plus_kv() {
        let a = run("h100_sxm", "llama-3.1-8b", "bf16", Phase::Decode, 1, 4096);
        // 4096 tokens · 131,072 B = 536,870,912 B of KV cache.
        assert_eq!(a.kv_cache_bytes, 536_870_912.0);
        // Weights read in decode: everything but the embedding table, of which one row is gathered.
        let embedding_table = 128_256.0 * 4096.0 * 2.0;
        let weights_read = a.weight_bytes - embedding_table + 4096.0 * 2.0;
        let floor = (weights_read + a.kv_cache_bytes) / 3.35e12;
        let tpot = a.tpot_s.unwrap();
        assert!(tpot >= floor, "{tpot} < {floor}");
        assert!(tpot <= 1.15 * floor, "{tpot} > 1.15 · {floor}");
        assert!(a.fits_in_memory);
        assert_eq!(a.weight_bits_per_element, 16.0);
    }

    #[test]
    fn totals_are_sums_of_operator_times() {
        let a = run("gb10", "llama-3.1-8b", "bf16", Phase::Prefill, 1, 4096);
        let sum: f64 = a.ops.iter().map(OpAnalysis::total_time_s).sum();
        assert!((a.total_time_s - sum).abs() <= 1e-12 * sum);
        assert_eq!(a.ttft_s, Some(a.total_time_s));
        assert!((a.tokens_per_s - 4096.0 / a.total_time_s).abs() < 1e-6);
        // Prefill at 4K is compute-bound overall on GB10.
        assert_eq!(a.bound, Bound::Compute);
        // One analysis per distinct operator, not one per layer.
        assert!(a.ops.len() < 20, "{}", a.ops.len());
        assert!(a.kernel_launches > 32 * 8);
    }

    #[test]
    fn a_step_launches_its_kernels_layer_by_layer() {
        let a = run("h100_sxm", "tinyllama-1.1b", "bf16", Phase::Decode, 1, 256);
        let order = a.launch_order(22);
        let name = |i: usize| a.ops[i].name.as_str();
        // Σ count kernels: the analysis' own launch count.
        assert_eq!(order.len(), a.kernel_launches as usize);
        assert_eq!(name(order[0]), "embedding");
        assert_eq!(name(*order.last().unwrap()), "logits");
        // One layer of TinyLlama, as config.json's LlamaDecoderLayer runs it (residual add twice per layer).
        let layer: Vec<&str> = order[1..15].iter().map(|&i| name(i)).collect();
        assert_eq!(
            layer,
            [
                "attn_norm",
                "qkv_proj",
                "rope",
                "kv_cache_write",
                "attention",
                "o_proj",
                "residual_add",
                "residual_add",
                "ffn_norm",
                "gate_up_proj",
                "ffn_act",
                "down_proj",
                "attn_norm",
                "qkv_proj",
            ]
        );
        // Every row runs exactly `count` times.
        for (index, row) in a.ops.iter().enumerate() {
            assert_eq!(order.iter().filter(|&&i| i == index).count(), row.count as usize);
        }
    }

    #[test]
    fn rows_rarer_than_layers_spread_over_the_layers() {
        // Gemma 3 12B: 48 layers, a 1024-token window on 40 of them (5 of 6), global attention on 8.
        let a = run("h100_sxm", "gemma-3-12b", "bf16", Phase::Decode, 1, 8192);
        let order = a.launch_order(48);
        assert_eq!(order.len(), a.kernel_launches as usize);
        let row = |name: &str| a.ops.iter().position(|r| r.name == name).unwrap();
        let (norm, global) = (row("attn_norm"), row("attention"));
        // The layer of each global attention: attention norms launched before it, minus one.
        let layers: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|&(_, &i)| i == global)
            .map(|(at, _)| order[..at].iter().filter(|&&i| i == norm).count() - 1)
            .collect();
        // 48 / 8: one global layer every 6 layers, as in the model.
        assert_eq!(layers, [0, 6, 12, 18, 24, 30, 36, 42]);
    }

    #[test]
    fn throughput_counts_the_batch() {
        let one = run("h100_sxm", "llama-3.1-8b", "fp8", Phase::Decode, 1, 1024);
        let many = run("h100_sxm", "llama-3.1-8b", "fp8", Phase::Decode, 64, 1024);
        assert!((many.tokens_per_s - 64.0 / many.tpot_s.unwrap()).abs() < 1e-9);
        assert!(many.tokens_per_s > 10.0 * one.tokens_per_s);
    }

    #[test]
    fn narrower_formats_are_faster_in_memory_bound_decode() {
        let bf16 = run("b200", "llama-3.1-70b", "bf16", Phase::Decode, 1, 8192);
        let fp8 = run("b200", "llama-3.1-70b", "fp8", Phase::Decode, 1, 8192);
        let nvfp4 = run("b200", "llama-3.1-70b", "nvfp4-w4a4", Phase::Decode, 1, 8192);
        assert!(fp8.tpot_s < bf16.tpot_s && nvfp4.tpot_s < fp8.tpot_s);
        assert!(nvfp4.weight_bytes < 0.3 * bf16.weight_bytes + 3e9);
        // 141 GB of BF16 weights and 2.7 GB of KV cache fit in the B200's 180 GB.
        assert!(bf16.fits_in_memory);
    }

    #[test]
    fn moe_decode_reads_only_active_experts() {
        let a = run("h200_sxm", "mixtral-8x7b", "bf16", Phase::Decode, 1, 1024);
        let experts: f64 = a
            .ops
            .iter()
            .filter(|o| o.name.starts_with("expert_"))
            .map(|o| f64::from(o.count) * o.weight_bytes)
            .sum();
        // 32 layers · 2 active experts · 3·4096·14336 · 2 B.
        assert!((experts - 32.0 * 2.0 * 3.0 * 4096.0 * 14_336.0 * 2.0).abs() < 1e3);
        let ds = run("h200_sxm", "deepseek-v3", "fp8", Phase::Decode, 1, 1024);
        assert_eq!(ds.approximations.len(), 1);
        // MLA caches 576 elements per token and layer: 61 · 576 · 1 B (FP8).
        assert_eq!(ds.kv_cache_bytes, 1024.0 * 61.0 * 576.0);
        assert!(!ds.fits_in_memory);
    }

    #[test]
    fn sliding_window_layers_read_only_the_window() {
        // gpt-oss-20b decode at 32K: 12 full layers read 32768 cached tokens, 12 sliding layers 128.
        let a = run("h100_sxm", "gpt-oss-20b", "bf16", Phase::Decode, 1, 32_768);
        let kv = |name: &str| {
            let op = a.ops.iter().find(|o| o.name == name).unwrap();
            (op.count, op.kv_bytes)
        };
        let per_token = 2.0 * 8.0 * 64.0 * 2.0;
        assert_eq!(kv("attention"), (12, 32_768.0 * per_token));
        assert_eq!(kv("window_attention"), (12, 128.0 * per_token));
        assert_eq!(a.kv_cache_bytes, (12.0 * 32_768.0 + 12.0 * 128.0) * per_token);
        // Llama 4 says its chunked attention is approximated.
        let scout = run("b200", "llama-4-scout", "fp8", Phase::Decode, 1, 16_384);
        assert!(
            scout.approximations.iter().any(|n| n.contains("chunked")),
            "{:?}",
            scout.approximations
        );
    }

    #[cfg(feature = "serde")]
    #[test]
    fn analysis_serializes_to_json_for_the_endpoint() {
        let a = run("l40s", "qwen2.5-7b", "w4a16-int4", Phase::Decode, 4, 2048);
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["config"], "w4a16-int4");
        assert_eq!(json["workload"]["phase"], "decode");
        assert_eq!(json["ttft_s"], serde_json::Value::Null);
        assert_eq!(json["ops"].as_array().unwrap().len(), a.ops.len());
        assert_eq!(json["ops"][0]["bound"], "memory");
    }

    #[test]
    fn unsupported_configs_and_bad_workloads_are_errors() {
        let a100 = find_hardware("a100_sxm_80gb").unwrap();
        let model = find_model("llama-3.1-8b").unwrap();
        let decode = Workload {
            phase: Phase::Decode,
            batch: 1,
            context: 1,
        };
        let r = analyze_model(
            a100,
            model,
            find_quant_config("fp8").unwrap(),
            &decode,
            &Corrections::NONE,
        );
        assert!(
            matches!(r, Err(Error::Unsupported { ref arch, .. }) if arch.contains("Ampere")),
            "{r:?}"
        );
        let zero = Workload { batch: 0, ..decode };
        assert!(
            analyze_model(
                a100,
                model,
                find_quant_config("bf16").unwrap(),
                &zero,
                &Corrections::NONE
            )
            .is_err()
        );
    }

    #[test]
    fn every_preset_and_config_runs_where_supported() {
        let b200 = find_hardware("b200").unwrap();
        for model in model_presets() {
            for config in quant_configs() {
                for phase in [Phase::Prefill, Phase::Decode] {
                    let w = Workload {
                        phase,
                        batch: 2,
                        context: 512,
                    };
                    let a = analyze_model(b200, model, config, &w, &Corrections::ALL).unwrap();
                    assert!(
                        a.total_time_s.is_finite() && a.total_time_s > 0.0,
                        "{} {}",
                        model.key,
                        config.key
                    );
                    assert!(
                        a.kernel_launches as f64 * crate::KERNEL_LAUNCH_FLOOR_S
                            <= a.total_time_s * (1.0 + 1e-12)
                    );
                }
            }
        }
    }
}
