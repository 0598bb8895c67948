//! One engine step as real operator shapes: decode rows and prefill tokens together, as serving engines with
//! continuous batching and chunked prefill run them ([`StepBatch`], [`analyze_step`]).
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use super::{Phase, Workload};
use crate::corrections::{Corrections, OpAnalysis, analyze_operator};
use crate::model::ModelConfig;
use crate::ops::{Activation, AttentionShape, MoeShape, OperandPrecisions, Operator};
use crate::parallel::Parallelism;
use crate::quant_config::{Module, QuantConfig};
use roofline_base::Error;
use roofline_base::hardware::Collective;
use roofline_base::hardware::HardwareSpec;
use roofline_base::precision::{ActivationScale, Precision};

use super::{ModelAnalysis, summarize};

/// What one engine step processes: decode rows and prefill tokens, in sequences and tokens.
///
/// A decode row is one sequence generating one token over `decode_context` cached tokens. A prefill sequence
/// contributes `prefill_chunk` prompt tokens on top of `prefill_prior` tokens of the same prompt cached by
/// earlier chunks (0 for a whole prompt in one step). The step's token count, the M of every linear layer,
/// is `decode_seqs + prefill_seqs · prefill_chunk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepBatch {
    /// Sequences generating one token each (decode rows).
    pub decode_seqs: u32,
    /// Tokens already in the KV cache of each decode sequence (the keys its query reads).
    pub decode_context: u32,
    /// Sequences whose prompt, or a chunk of it, is prefilled in this step.
    pub prefill_seqs: u32,
    /// Prompt tokens of each prefill sequence processed in this step.
    pub prefill_chunk: u32,
    /// Prompt tokens of each prefill sequence cached by its earlier chunks (0 for a whole prompt).
    pub prefill_prior: u32,
    /// Prefill sequences whose prompt ends in this step: each emits its first token (a logits row).
    pub prefill_completing: u32,
}

impl StepBatch {
    /// The step of `workload`: a prefill of `batch` whole prompts of `context` tokens (all completing), or
    /// `batch` decode rows over `context` cached tokens.
    #[must_use]
    pub const fn of(workload: &Workload) -> StepBatch {
        match workload.phase {
            Phase::Prefill => StepBatch {
                decode_seqs: 0,
                decode_context: 0,
                prefill_seqs: workload.batch,
                prefill_chunk: workload.context,
                prefill_prior: 0,
                prefill_completing: workload.batch,
            },
            Phase::Decode => StepBatch {
                decode_seqs: workload.batch,
                decode_context: workload.context,
                prefill_seqs: 0,
                prefill_chunk: 0,
                prefill_prior: 0,
                prefill_completing: 0,
            },
        }
    }

    /// Tokens the step processes, the M of its linear layers: decode rows + prefill sequences · chunk.
    #[must_use]
    pub fn tokens(&self) -> u64 {
        u64::from(self.decode_seqs) + u64::from(self.prefill_seqs) * u64::from(self.prefill_chunk)
    }

    /// Rows of the logits head: decode rows + prefill sequences completing their prompt.
    #[must_use]
    pub fn logits_rows(&self) -> u64 {
        u64::from(self.decode_seqs) + u64::from(self.prefill_completing)
    }

    /// Whether the step holds both decode rows and prefill tokens.
    #[must_use]
    pub const fn is_mixed(&self) -> bool {
        self.decode_seqs > 0 && self.prefill_seqs > 0
    }

    /// Checks that the step processes at least one token and that each part is complete.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field: an empty step, decode rows without context, prefill
    /// sequences without a chunk, or more completing sequences than prefill sequences.
    pub fn check(&self) -> Result<(), Error> {
        let invalid = |message: &str| Err(Error::InvalidInput(message.to_owned()));
        if self.decode_seqs == 0 && self.prefill_seqs == 0 {
            return invalid(
                "a step needs at least one decode row (decode_seqs) or prefill sequence (prefill_seqs)",
            );
        }
        if self.decode_seqs > 0 && self.decode_context == 0 {
            return invalid("decode_context must be at least 1 when there are decode rows");
        }
        if self.prefill_seqs > 0 && self.prefill_chunk == 0 {
            return invalid("prefill_chunk must be at least 1 when there are prefill sequences");
        }
        if self.prefill_completing > self.prefill_seqs {
            return invalid("prefill_completing must not exceed prefill_seqs");
        }
        Ok(())
    }
}

/// Analyses one engine step of `model` under `config`, split over GPUs as `parallelism` says: the operators
/// of the module rules (linear layers once on every token of the step, attention per part), per-GPU memory
/// and the step time (Σ kernel times + [`Corrections::step_launch`]). A [`Workload`]'s step
/// ([`StepBatch::of`]) gives exactly [`crate::analyze_model_parallel`].
///
/// # Errors
/// - [`Error::InvalidInput`] from [`StepBatch::check`], an invalid model or parallelism, or a step whose
///   token count exceeds [`crate::ops::MAX_DIM`].
/// - [`Error::Unsupported`] when the device lacks a format of `config`.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let model = find_model("llama-3.1-8b").unwrap();
/// let bf16 = find_quant_config("bf16").unwrap();
/// // 32 decode rows over 2048 cached tokens and one 512-token prompt chunk in one step.
/// let step = StepBatch {
///     decode_seqs: 32, decode_context: 2048,
///     prefill_seqs: 1, prefill_chunk: 512, prefill_prior: 0, prefill_completing: 1,
/// };
/// let a = analyze_step(h100, model, bf16, &step, &Parallelism::SINGLE, &Corrections::NONE).unwrap();
/// let qkv = a.ops.iter().find(|o| o.name == "qkv_proj").unwrap();
/// assert_eq!(qkv.flops, 2.0 * 544.0 * 6144.0 * 4096.0);
/// assert!(a.ops.iter().any(|o| o.name == "decode_attention"));
/// assert!(a.ops.iter().any(|o| o.name == "prefill_attention"));
/// ```
pub fn analyze_step(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    step: &StepBatch,
    parallelism: &Parallelism,
    corrections: &Corrections,
) -> Result<ModelAnalysis, Error> {
    run_step(hardware, (model, false), config, step, parallelism, corrections)
}

/// [`analyze_step`] of `model`, which with `mtp` is an MTP drafter ([`ModelConfig::mtp_drafter`]): its
/// input projection of the embedding and the hidden state is added after the embedding.
pub(super) fn run_step(
    hardware: &HardwareSpec,
    (model, mtp): (&ModelConfig, bool),
    config: &QuantConfig,
    step: &StepBatch,
    parallelism: &Parallelism,
    corrections: &Corrections,
) -> Result<ModelAnalysis, Error> {
    step.check()?;
    model.check()?;
    config.check_support(hardware)?;
    parallelism.check(model, hardware)?;
    let shard = parallelism.shard(model);
    let mut b = StepOps {
        hardware,
        config,
        corrections,
        model: &shard,
        tokens: step.tokens(),
        tp: parallelism.tensor,
        mtp,
        ops: Vec::with_capacity(26),
    };
    b.attention(step)?;
    b.ffn(parallelism.expert)?;
    b.head(step.logits_rows(), model.vocab)?;
    let models = Models {
        full: model,
        shard: &shard,
        parallelism: *parallelism,
    };
    Ok(summarize(hardware, &models, config, step, corrections, b.ops))
}

/// The operators of one step as they are added, each analysed on the device, in launch-row order.
struct StepOps<'a> {
    hardware: &'a HardwareSpec,
    config: &'a QuantConfig,
    corrections: &'a Corrections,
    /// The part of the model one GPU runs.
    model: &'a ModelConfig,
    tokens: u64,
    /// The tensor-parallel degree.
    tp: u32,
    /// Whether the model is an MTP drafter (its input projection added after the embedding).
    mtp: bool,
    ops: Vec<OpAnalysis>,
}

impl StepOps<'_> {
    /// Adds `op`, run `count` times per step (nothing when 0).
    fn add(&mut self, op: Operator, count: u32) -> Result<(), Error> {
        if count > 0 {
            let mut analysis = analyze_operator(self.hardware, &op, self.corrections)?;
            analysis.count = count;
            self.ops.push(analysis);
        }
        Ok(())
    }

    fn add_all(&mut self, ops: Vec<Operator>, count: u32) -> Result<(), Error> {
        ops.into_iter().try_for_each(|op| self.add(op, count))
    }

    /// The operators of attention over `shape` in `precisions`, each named with `prefix`, run `count` times.
    fn add_attention(
        &mut self,
        shape: &AttentionShape,
        precisions: OperandPrecisions,
        prefix: &str,
        count: u32,
    ) -> Result<(), Error> {
        for op in Operator::attention(shape, precisions)? {
            let name = format!("{prefix}{}", op.name);
            self.add(op.named(&name), count)?;
        }
        Ok(())
    }

    fn lin(&self, module: Module) -> OperandPrecisions {
        self.config.linear_for(module)
    }

    /// The run-time quantization of an input to `to` (scale `scale`), where it is narrower than the hidden
    /// format: `quantize_<name>` and, for a dynamic per-tensor scale, `amax_<name>` before it.
    fn quantize_to(
        &self,
        (rows, width): (u64, u64),
        (to, scale): (Precision, ActivationScale),
        name: &str,
    ) -> Result<Vec<Operator>, Error> {
        let hidden = self.config.hidden();
        if !self.corrections.activation_quantization || to == hidden {
            return Ok(Vec::new());
        }
        Ok(Operator::activation_quantization(rows, width, hidden, to, scale)?
            .into_iter()
            .map(|op| {
                let named = name.replacen("quantize", &op.name, 1);
                op.named(&named)
            })
            .collect())
    }

    /// The quantization of `module`'s input.
    fn quantize_op(&self, rows: u64, width: u64, module: Module, name: &str) -> Result<Vec<Operator>, Error> {
        let f = self.config.format(module);
        self.quantize_to((rows, width), (f.activations, f.activation_scale), name)
    }

    /// One GPU's partial sums of a tokens × hidden tensor, summed over the tensor-parallel group.
    fn all_reduce(&self, name: &str) -> Result<Option<Operator>, Error> {
        (self.tp > 1)
            .then(|| {
                Operator::collective(
                    Collective::AllReduce,
                    self.tokens,
                    self.model.hidden,
                    self.config.hidden(),
                    self.tp,
                )
                .map(|op| op.named(name))
            })
            .transpose()
    }

    /// The embedding and the attention half of every layer, up to its residual adds: softmax attention on
    /// the attention layers (with MLA's projections, the sparse-attention indexer, the output gate where the
    /// model has them), linear attention on the others (`step/mixers.rs`).
    fn attention(&mut self, step: &StepBatch) -> Result<(), Error> {
        let (model, config, tokens) = (self.model, self.config, self.tokens);
        let (hidden, layers, h) = (config.hidden(), model.layers, model.hidden);
        let full = model.attention_layers();
        self.add(
            Operator::embedding(tokens, h, config.format(Module::Embeddings).weights, hidden)?,
            1,
        )?;
        if let Some(op) = self.all_reduce("embed_all_reduce")? {
            self.add(op, 1)?;
        }
        if self.mtp {
            self.mtp_input(layers)?;
        }
        self.add(
            Operator::norm(model.norm, tokens, h, hidden)?.named("attn_norm"),
            layers,
        )?;
        self.add_all(
            self.quantize_op(tokens, h, Module::Attention, "quantize_attn_in")?,
            layers,
        )?;
        let (rope_q_heads, rope_k_heads, rope_dim) = self.projections(full)?;
        self.add(
            Operator::rope(tokens, rope_q_heads, rope_k_heads, rope_dim, hidden)?,
            full,
        )?;
        self.add(
            Operator::kv_cache_write(tokens, model.kv_elements_per_token(), hidden, config.kv_cache)?,
            full,
        )?;
        self.indexer(step, full)?;
        let attention_precisions = OperandPrecisions {
            weight: config.kv_cache,
            activation: config.attention,
            output: hidden,
        };
        let sparse = if model.sparse_indexer.is_some() {
            "sparse_"
        } else {
            ""
        };
        // MiniMax-M3's attention layers without the indexer read every key.
        let dense = model.sparse_indexer.map_or(0, |i| i.dense_layers.min(full));
        for (prefix, shape) in step_parts(step, |b, q, kv| layer_attention(model, b, q, kv)) {
            let sparse_layers = full - model.window_layers().min(full) - dense;
            self.add_attention(
                &shape,
                attention_precisions,
                &format!("{prefix}{sparse}"),
                sparse_layers,
            )?;
            if dense > 0 {
                let every_key = AttentionShape {
                    window: None,
                    ..shape
                };
                self.add_attention(&every_key, attention_precisions, prefix, dense)?;
            }
            if let Some(window) = model.sliding_window {
                let windowed = AttentionShape {
                    window: Some(window.window),
                    ..shape
                };
                let name = format!("window_{prefix}");
                self.add_attention(&windowed, attention_precisions, &name, window.layers)?;
            }
        }
        let attention_width = model.attention_width();
        if model.attention_output_gate {
            // sigmoid(gate) · output, as costly as the SiLU gate of an FFN.
            let gate = Operator::activation(Activation::SiluMul, tokens, attention_width, hidden)?;
            self.add(gate.named("attn_output_gate"), full)?;
        }
        self.add_all(
            self.quantize_op(tokens, attention_width, Module::AttentionOutput, "quantize_o_in")?,
            full,
        )?;
        let output = self.lin(Module::AttentionOutput);
        if let Some(c) = model.compressed_attention {
            self.compressed_attention(step)?;
            // The grouped output projection: o_groups blocks of width / o_groups → o_lora_rank, then o_b.
            let low = c.o_groups * c.o_lora_rank;
            let o_a = Operator::matmul(tokens, c.o_lora_rank, attention_width / c.o_groups, output)?;
            self.add(
                o_a.named("o_a_proj"),
                full * u32::try_from(c.o_groups).unwrap_or(u32::MAX),
            )?;
            self.add(Operator::matmul(tokens, h, low, output)?.named("o_b_proj"), full)?;
        } else {
            self.add(
                Operator::matmul(tokens, h, attention_width, output)?.named("o_proj"),
                full,
            )?;
        }
        self.linear_attention(step)?;
        if let Some(op) = self.all_reduce("attn_all_reduce")? {
            self.add(op, layers)?;
        }
        self.add(Operator::residual_add(tokens, h, hidden)?, 2 * layers)
    }

    /// The Q, K and V projections of `count` layers (MLA's low-rank ones, or one fused QKV GEMM, its query
    /// twice as wide with an output gate) and the heads RoPE rotates: `(query heads, key heads, rotated
    /// dimension)`.
    fn projections(&mut self, count: u32) -> Result<(u64, u64, u64), Error> {
        let (model, tokens, h) = (self.model, self.tokens, self.model.hidden);
        let linear = self.lin(Module::Attention);
        let Some(m) = model.mla else {
            let gate = if model.attention_output_gate { 2 } else { 1 };
            let qkv_width = (gate * model.heads + 2 * model.kv_heads) * model.head_dim;
            self.add(
                Operator::matmul(tokens, qkv_width, h, linear)?.named("qkv_proj"),
                count,
            )?;
            return Ok((model.heads, model.kv_heads, model.head_dim));
        };
        let qk_dim = m.nope_head_dim + m.rope_head_dim;
        // DeepSeek-V4 has no kv_b: its kv projection emits the cached K = V.
        let kv_b = model.compressed_attention.is_none();
        for (width, name) in [
            (m.q_lora_rank, "quantize_q_b_in"),
            (m.kv_lora_rank, "quantize_kv_b_in"),
        ]
        .into_iter()
        .take(if kv_b { 2 } else { 1 })
        {
            self.add_all(self.quantize_op(tokens, width, Module::Attention, name)?, count)?;
        }
        self.add(
            Operator::matmul(tokens, m.q_lora_rank, h, linear)?.named("q_a_proj"),
            count,
        )?;
        self.add(
            Operator::matmul(tokens, model.heads * qk_dim, m.q_lora_rank, linear)?.named("q_b_proj"),
            count,
        )?;
        self.add(
            Operator::matmul(tokens, m.kv_lora_rank + m.rope_head_dim, h, linear)?.named("kv_a_proj"),
            count,
        )?;
        if kv_b {
            let kv_b_width = model.heads * (m.nope_head_dim + m.v_head_dim);
            self.add(
                Operator::matmul(tokens, kv_b_width, m.kv_lora_rank, linear)?.named("kv_b_proj"),
                count,
            )?;
        }
        if model.attention_output_gate {
            // Kimi-K3's output gate: its own projection from the hidden state.
            let gate = Operator::matmul(tokens, model.attention_width(), h, linear)?;
            self.add(gate.named("gate_proj"), count)?;
        }
        Ok((model.heads, 1, m.rope_head_dim))
    }

    /// The feed-forward half of every layer: dense MLPs, routed experts (with expert parallelism's
    /// all-to-alls over `ep` GPUs) and shared experts.
    fn ffn(&mut self, ep: u32) -> Result<(), Error> {
        let (model, config, tokens) = (self.model, self.config, self.tokens);
        let (hidden, layers, h) = (config.hidden(), model.layers, model.hidden);
        self.add(
            Operator::norm(model.norm, tokens, h, hidden)?.named("ffn_norm"),
            layers,
        )?;
        for (format, count, name) in ffn_inputs(config, model) {
            self.add_all(self.quantize_to((tokens, h), format, name)?, count)?;
        }
        let dense = (model.ffn_dim, Module::DenseMlp, self.lin(Module::DenseMlp));
        self.mlp(dense, "", model.dense_layers())?;
        if let Some(moe) = model.moe {
            let width = model.expert_width();
            let shape = MoeShape {
                tokens,
                experts: moe.experts,
                top_k: moe.top_k,
                hidden: width,
                expert_ffn: moe.expert_ffn,
                gated: model.gated_ffn,
            };
            let router = self.lin(Module::Router);
            if let Some(latent) = model.latent_moe {
                let down = Operator::matmul(tokens, latent, h, router)?.named("latent_down_proj");
                self.add(down, model.moe_layers())?;
            }
            // Expert parallel: each GPU dispatches the routed rows of the tokens / e it owns, and gets them back.
            let rows = (tokens * moe.top_k).div_ceil(u64::from(ep));
            let all_to_all = (ep > 1)
                .then(|| Operator::collective(Collective::AllToAll, rows, width, hidden, ep))
                .transpose()?;
            if let Some(op) = &all_to_all {
                self.add(op.clone().named("moe_dispatch_all_to_all"), model.moe_layers())?;
            }
            let mut experts = Operator::moe_experts(&shape, self.lin(Module::RoutedExperts), router)?;
            if model.latent_moe.is_some() {
                // LatentMoE routes from the hidden state, not the latent.
                experts[0] = Operator::gemm(tokens, moe.experts, h, router)?.named("router");
                let up = Operator::matmul(tokens, h, width, router)?.named("latent_up_proj");
                self.add(up, model.moe_layers())?;
            }
            self.add_all(experts, model.moe_layers())?;
            if let Some(op) = all_to_all {
                self.add(op.named("moe_combine_all_to_all"), model.moe_layers())?;
            }
            let down_in = self.quantize_op(
                tokens * moe.top_k,
                moe.expert_ffn,
                Module::RoutedExperts,
                "quantize_expert_down_in",
            )?;
            self.add_all(down_in, model.moe_layers())?;
            let shared = (
                moe.shared_experts * moe.expert_ffn,
                Module::SharedExperts,
                self.lin(Module::SharedExperts),
            );
            self.mlp(shared, "shared_", model.moe_layers())?;
        }
        if let Some(op) = self.all_reduce("ffn_all_reduce")? {
            self.add(op, layers)?;
        }
        Ok(())
    }

    /// One MLP of `width` (its up and gate projections, activation, input quantization and down
    /// projection), its operators named with `prefix`, run `count` times per step.
    fn mlp(
        &mut self,
        (width, module, linear): (u64, Module, OperandPrecisions),
        prefix: &str,
        count: u32,
    ) -> Result<(), Error> {
        let (model, tokens) = (self.model, self.tokens);
        if width == 0 || count == 0 {
            return Ok(());
        }
        let up_width = if model.gated_ffn { 2 * width } else { width };
        let name = |role: &str| format!("{prefix}{role}");
        self.add(
            Operator::matmul(tokens, up_width, model.hidden, linear)?.named(&name("gate_up_proj")),
            count,
        )?;
        self.add(
            Operator::activation(model.activation(), tokens, width, linear.output)?.named(&name("ffn_act")),
            count,
        )?;
        self.add_all(
            self.quantize_op(tokens, width, module, &name("quantize_down_in"))?,
            count,
        )?;
        self.add(
            Operator::matmul(tokens, model.hidden, width, linear)?.named(&name("down_proj")),
            count,
        )
    }

    /// The final norm and the logits of the `logits_rows` sampled rows over the whole vocabulary
    /// (`full_vocab`, gathered over the tensor-parallel group).
    fn head(&mut self, logits_rows: u64, full_vocab: u64) -> Result<(), Error> {
        let (model, hidden, h) = (self.model, self.config.hidden(), self.model.hidden);
        self.add(
            Operator::norm(model.norm, self.tokens, h, hidden)?.named("final_norm"),
            1,
        )?;
        // A step whose only prefill chunk does not end its prompt samples nothing: no logits.
        if logits_rows == 0 {
            return Ok(());
        }
        self.add_all(
            self.quantize_op(logits_rows, h, Module::Head, "quantize_head_in")?,
            1,
        )?;
        self.add(
            Operator::matmul(logits_rows, model.vocab, h, self.lin(Module::Head))?.named("logits"),
            1,
        )?;
        if self.tp > 1 {
            let gather =
                Operator::collective(Collective::AllGather, logits_rows, full_vocab, hidden, self.tp)?;
            self.add(gather.named("logits_all_gather"), 1)?;
        }
        Ok(())
    }
}

/// The attention-like calls of a step with their name prefixes, each `shape(batch, queries, keys)`: one per
/// part present, unprefixed when the step has a single part (so a [`Workload`]'s step names its attention
/// `attention`, as before mixed steps).
fn step_parts(
    step: &StepBatch,
    shape: impl Fn(u64, u64, u64) -> AttentionShape,
) -> Vec<(&'static str, AttentionShape)> {
    let mixed = step.is_mixed();
    let mut parts = Vec::with_capacity(2);
    if step.decode_seqs > 0 {
        let decode = shape(u64::from(step.decode_seqs), 1, u64::from(step.decode_context));
        parts.push((if mixed { "decode_" } else { "" }, decode));
    }
    if step.prefill_seqs > 0 {
        let chunk = u64::from(step.prefill_chunk);
        let prefill = shape(
            u64::from(step.prefill_seqs),
            chunk,
            u64::from(step.prefill_prior) + chunk,
        );
        parts.push((if mixed { "prefill_" } else { "" }, prefill));
    }
    parts
}

/// Attention of one layer over `batch` sequences of `query_len` queries and `kv_len` keys: MHA/GQA heads, or
/// for MLA the absorbed form, MQA over the cached latent (K = latent + rotary key, V = latent); with a
/// sparse-attention indexer each query reads at most its `top_k` selected keys (a window of `top_k`: the
/// same keys counted, wherever they sit).
fn layer_attention(model: &ModelConfig, batch: u64, query_len: u64, kv_len: u64) -> AttentionShape {
    let base = AttentionShape {
        batch,
        query_len,
        kv_len,
        heads: model.heads,
        kv_heads: model.kv_heads,
        head_dim: model.head_dim,
        causal: true,
        fused: true,
        shared_kv: false,
        window: None,
    };
    let window = model.sparse_indexer.map(|i| i.top_k);
    match model.mla {
        Some(m) => AttentionShape {
            kv_heads: 1,
            head_dim: m.kv_lora_rank + m.rope_head_dim,
            shared_kv: true,
            window,
            ..base
        },
        None => AttentionShape { window, ..base },
    }
}

/// The FFN-input quantizations of every layer: one per distinct input format the layer's FFN modules read
/// (dense layers the dense MLP's; MoE layers the routed and the shared experts'), each with the number of
/// layers that run it and its name (`quantize_ffn_in` for the first, by module for the others). A uniform
/// config has one, on every layer.
fn ffn_inputs(
    config: &QuantConfig,
    model: &ModelConfig,
) -> Vec<((Precision, ActivationScale), u32, &'static str)> {
    let key = |module: Module| {
        let f = config.format(module);
        (f.activations, f.activation_scale)
    };
    let mut readers = vec![(key(Module::DenseMlp), model.dense_layers(), "quantize_ffn_in")];
    if let Some(moe) = model.moe {
        readers.push((
            key(Module::RoutedExperts),
            model.moe_layers(),
            "quantize_expert_in",
        ));
        if moe.shared_experts > 0 && key(Module::SharedExperts) != key(Module::RoutedExperts) {
            readers.push((
                key(Module::SharedExperts),
                model.moe_layers(),
                "quantize_shared_in",
            ));
        }
    }
    let mut out: Vec<((Precision, ActivationScale), u32, &'static str)> = Vec::new();
    for (format, count, name) in readers {
        if let Some(entry) = out.iter_mut().find(|(f, ..)| *f == format) {
            entry.1 += count;
        } else {
            let name = if out.is_empty() { "quantize_ffn_in" } else { name };
            out.push((format, count, name));
        }
    }
    out
}

/// The whole model, the part one GPU runs, and how it is split.
pub(super) struct Models<'a> {
    pub(super) full: &'a ModelConfig,
    pub(super) shard: &'a ModelConfig,
    pub(super) parallelism: Parallelism,
}

mod mixers;
#[cfg(test)]
mod tests;
