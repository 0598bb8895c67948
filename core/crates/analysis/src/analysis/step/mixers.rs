//! The operators a step adds for attention beside softmax attention over a KV cache (DeepSeek Sparse
//! Attention's indexer on the attention layers, DeepSeek-V4's compressed entries, Gated DeltaNet on the
//! linear-attention layers), and an MTP drafter's input projection.

use super::{StepBatch, StepOps, step_parts};
use crate::model::SparseIndexer;
use crate::ops::{Activation, AttentionShape, LinearAttentionShape, OperandPrecisions, Operator};
use crate::quant_config::Module;
use roofline_base::Error;
use roofline_base::precision::Precision;

impl StepOps<'_> {
    /// An MTP layer's input, `count` times: the next token's embedding and the previous hidden state, each
    /// normalized (`enorm`, `hnorm`), concatenated and projected back to the hidden size (`eh_proj`, 2·H → H,
    /// in the attention's format).
    pub(super) fn mtp_input(&mut self, count: u32) -> Result<(), Error> {
        let (model, tokens, hidden) = (self.model, self.tokens, self.config.hidden());
        let norms = Operator::norm(model.norm, tokens, 2 * model.hidden, hidden)?;
        self.add(norms.named("mtp_norms"), count)?;
        let projection = Operator::matmul(
            tokens,
            model.hidden,
            2 * model.hidden,
            self.lin(Module::Attention),
        )?;
        self.add(projection.named("mtp_eh_proj"), count)
    }

    /// The sparse-attention indexer on those of `attention` layers that have it: its projections (the query
    /// from MLA's compressed query, the key and the head weights from the layer input; MSA's query and key
    /// from the layer input; in the attention's format), the write of each token's index key, and per part
    /// of the step the FP8 logits over every cached key and their top-k.
    pub(super) fn indexer(&mut self, step: &StepBatch, attention: u32) -> Result<(), Error> {
        let (model, tokens) = (self.model, self.tokens);
        let Some(ix) = model.sparse_indexer else {
            return Ok(());
        };
        let count = ix.sparse_layers(attention);
        let linear = self.lin(Module::Attention);
        // DSA's query from MLA's compressed query; MSA's with its key from the layer input.
        if let (Some(mla), false) = (model.mla, ix.msa) {
            let q_proj = Operator::matmul(tokens, ix.heads * ix.head_dim, mla.q_lora_rank, linear)?;
            self.add(q_proj.named("indexer_q_proj"), count)?;
        }
        let k_proj = Operator::matmul(tokens, ix.key_weights_width(), model.hidden, linear)?;
        self.add(k_proj.named("indexer_k_proj"), count)?;
        let write =
            Operator::kv_cache_write(tokens, ix.head_dim, self.config.hidden(), SparseIndexer::CACHE)?;
        self.add(write.named("indexer_cache_write"), count)?;
        let shape = |batch, query_len, kv_len| AttentionShape {
            batch,
            query_len,
            kv_len,
            heads: ix.heads,
            kv_heads: 1,
            head_dim: ix.head_dim,
            causal: true,
            fused: true,
            shared_kv: true,
            window: None,
        };
        for (prefix, shape) in step_parts(step, shape) {
            let logits = Operator::indexer_logits(&shape, SparseIndexer::CACHE)?;
            self.add(logits.named(&format!("{prefix}indexer_logits")), count)?;
            let top_k = Operator::indexer_top_k(&shape, ix.top_k)?;
            self.add(top_k.named(&format!("{prefix}indexer_top_k")), count)?;
        }
        Ok(())
    }

    /// DeepSeek-V4's compressed entries (the sliding window is the model's `sliding_window`): the
    /// compressors' projections, and per part of the step each query's attention over the entries it sees,
    /// taken at their mean over the part's queries, ⌊(Skv − (Sq − 1)/2) / ratio⌋ (exact in decode): on CSA
    /// layers at most `top_k` of them, picked by the indexer's logits over all of them; on HCA layers all.
    pub(super) fn compressed_attention(&mut self, step: &StepBatch) -> Result<(), Error> {
        let (model, config, tokens) = (self.model, self.config, self.tokens);
        let (Some(c), Some(mla)) = (model.compressed_attention, model.mla) else {
            return Ok(());
        };
        let (ix, h, d) = (c.indexer, model.hidden, model.kv_elements_per_token());
        let linear = self.lin(Module::Attention);
        let projections = [
            (4 * d, h, c.csa_layers, "csa_compressor_proj"),
            (4 * ix.head_dim + ix.heads, h, c.csa_layers, "csa_indexer_k_proj"),
            (
                ix.heads * ix.head_dim,
                mla.q_lora_rank,
                c.csa_layers,
                "csa_indexer_q_proj",
            ),
            (2 * d, h, c.hca_layers, "hca_compressor_proj"),
        ];
        for (width, input, count, name) in projections {
            self.add(Operator::matmul(tokens, width, input, linear)?.named(name), count)?;
        }
        let precisions = OperandPrecisions {
            weight: config.kv_cache,
            activation: config.attention,
            output: config.hidden(),
        };
        let shape = |batch, query_len, kv_len| AttentionShape {
            batch,
            query_len,
            kv_len,
            heads: model.heads,
            kv_heads: 1,
            head_dim: d,
            causal: false,
            fused: true,
            shared_kv: true,
            window: None,
        };
        for (prefix, part) in step_parts(step, shape) {
            let seen = part.kv_len - (part.query_len - 1) / 2;
            let (csa, hca) = (seen / c.csa_ratio.max(1), seen / c.hca_ratio.max(1));
            if csa > 0 {
                let keys = AttentionShape {
                    heads: ix.heads,
                    head_dim: ix.head_dim,
                    kv_len: csa,
                    ..part
                };
                let logits = Operator::indexer_logits(&keys, SparseIndexer::CACHE)?;
                self.add(logits.named(&format!("{prefix}csa_indexer_logits")), c.csa_layers)?;
                let top_k = Operator::indexer_top_k(&keys, ix.top_k)?;
                self.add(top_k.named(&format!("{prefix}csa_indexer_top_k")), c.csa_layers)?;
            }
            for (entries, count, kind) in [
                (csa.min(ix.top_k), c.csa_layers, "csa"),
                (hca, c.hca_layers, "hca"),
            ] {
                if entries == 0 {
                    continue;
                }
                let read = AttentionShape {
                    kv_len: entries,
                    ..part
                };
                self.add_attention(&read, precisions, &format!("{prefix}{kind}_"), count)?;
            }
        }
        Ok(())
    }

    /// Gated DeltaNet on the linear-attention layers: the input projection (q, k, v, the gate z, β and α in
    /// one GEMM), per part of the step the causal convolution and the gated delta rule (recurrent for decode
    /// rows, chunked for a prefill chunk), the gated RMSNorm and the output projection.
    pub(super) fn linear_attention(&mut self, step: &StepBatch) -> Result<(), Error> {
        let (model, tokens, hidden) = (self.model, self.tokens, self.config.hidden());
        let count = model.linear_attention_layers();
        let Some(l) = model.linear_attention.filter(|_| count > 0) else {
            return Ok(());
        };
        let linear = self.lin(Module::Attention);
        let in_proj = Operator::matmul(tokens, l.in_proj_width(), model.hidden, linear)?;
        self.add(in_proj.named("linear_in_proj"), count)?;
        if l.kda {
            // KDA's per-channel decay: f_b from the f_a output of the input projection.
            let decay = Operator::matmul(tokens, l.decay_width(), l.key_head_dim, linear)?;
            self.add(decay.named("linear_decay_proj"), count)?;
        }
        let mixed = step.is_mixed();
        let parts = [
            (step.decode_seqs, 1, "decode_"),
            (step.prefill_seqs, step.prefill_chunk, "prefill_"),
        ];
        for (batch, new_tokens, prefix) in parts.into_iter().filter(|p| p.0 > 0) {
            let prefix = if mixed { prefix } else { "" };
            let shape = LinearAttentionShape {
                batch: u64::from(batch),
                tokens: u64::from(new_tokens),
                key_heads: l.key_heads,
                value_heads: l.value_heads,
                key_head_dim: l.key_head_dim,
                value_head_dim: l.value_head_dim,
                conv_kernel: l.conv_kernel,
            };
            // The window in the model's 16-bit dtype (vLLM's conv state).
            let conv = Operator::causal_conv(&shape, hidden, Precision::Bf16)?;
            self.add(conv.named(&format!("{prefix}causal_conv")), count)?;
            let rule = Operator::gated_delta_rule(&shape, l.state, hidden)?;
            let name = format!("{prefix}{}", rule.name);
            self.add(rule.named(&name), count)?;
        }
        // RMSNorm of each head's output times silu(z): two inputs, one output, as the SiLU gate of an FFN.
        let gated_norm = Operator::activation(Activation::SiluMul, tokens, l.value_width(), hidden)?;
        self.add(gated_norm.named("linear_gated_norm"), count)?;
        self.add_all(
            self.quantize_op(
                tokens,
                l.value_width(),
                Module::AttentionOutput,
                "quantize_linear_out_in",
            )?,
            count,
        )?;
        let output = self.lin(Module::AttentionOutput);
        let out_proj = Operator::matmul(tokens, model.hidden, l.value_width(), output)?;
        self.add(out_proj.named("linear_out_proj"), count)
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::{ModelAnalysis, StepBatch, Workload, analyze_step};
    use crate::corrections::Corrections;
    use crate::model::find_model;
    use crate::parallel::Parallelism;
    use crate::quant_config::find_quant_config;
    use roofline_base::hardware::find_hardware;

    fn step(model: &str, config: &str, step: &StepBatch) -> ModelAnalysis {
        analyze_step(
            find_hardware("h200_sxm").unwrap(),
            find_model(model).unwrap(),
            find_quant_config(config).unwrap(),
            step,
            &Parallelism::SINGLE,
            &Corrections::NONE,
        )
        .unwrap()
    }

    /// (count, kv_bytes, flops) of the row named `name`.
    fn row(a: &ModelAnalysis, name: &str) -> (u32, f64, f64) {
        let op = a.ops.iter().find(|o| o.name == name).unwrap_or_else(|| {
            panic!(
                "no {name} in {:?}",
                a.ops.iter().map(|o| &o.name).collect::<Vec<_>>()
            )
        });
        (op.count, op.kv_bytes, op.flops)
    }

    #[test]
    fn qwen35_decode_reads_the_state_of_45_layers_and_the_cache_of_15() {
        let a = step(
            "qwen3.5-397b-a17b",
            "bf16",
            &StepBatch::of(&Workload::decode(4, 4096)),
        );
        // Each of 45 Gated DeltaNet layers reads and writes 4 sequences' 64 · 128 · 128 FP32 states:
        // 2 · 4 · 4,194,304 B; 7 · 4 · 64 · 128² FLOPs.
        assert_eq!(row(&a, "recurrent_delta_rule"), (45, 33_554_432.0, 29_360_128.0));
        // Their convolution windows: 2 · 4 · 12,288 channels · 3 taps · 2 B.
        assert_eq!(row(&a, "causal_conv").1, 589_824.0);
        // The 15 full-attention layers read 4 · 4096 tokens of 2 · 2 KV heads · 256 · 2 B.
        assert_eq!(row(&a, "attention").0, 15);
        assert_eq!(row(&a, "attention").1, 4.0 * 4096.0 * 2048.0);
        // Q with its output gate, K and V: 4 tokens · (2 · 32 + 2 · 2) · 256 outputs · 4096 inputs · 2.
        assert_eq!(row(&a, "qkv_proj"), (15, 0.0, 2.0 * 4.0 * 17_408.0 * 4096.0));
        assert_eq!(row(&a, "attn_output_gate").0, 15);
        // The linear layers' projections: 20,608 outputs in, 8192 inputs out.
        assert_eq!(
            row(&a, "linear_in_proj"),
            (45, 0.0, 2.0 * 4.0 * 20_608.0 * 4096.0)
        );
        assert_eq!(row(&a, "linear_out_proj"), (45, 0.0, 2.0 * 4.0 * 4096.0 * 8192.0));
        // The memory of the step's sequences: their KV and their states.
        assert_eq!(a.kv_cache_bytes, 4.0 * (4096.0 * 30_720.0 + 192_061_440.0));
    }

    #[test]
    fn qwen35_prefill_runs_the_chunked_rule_and_a_mixed_step_both() {
        let prefill = step(
            "qwen3.5-397b-a17b",
            "bf16",
            &StepBatch::of(&Workload {
                phase: crate::Phase::Prefill,
                batch: 1,
                context: 8192,
            }),
        );
        // 8192 tokens · 64 value heads · (6 · 128² + 64 · (6 · 128 + 4 · 128)) FLOPs a layer.
        assert_eq!(row(&prefill, "chunked_delta_rule").2, 8192.0 * 64.0 * 180_224.0);
        let mixed = StepBatch {
            decode_seqs: 8,
            decode_context: 2048,
            prefill_seqs: 1,
            prefill_chunk: 512,
            prefill_prior: 1024,
            prefill_completing: 0,
        };
        let a = step("qwen3.5-397b-a17b", "bf16", &mixed);
        assert_eq!(row(&a, "decode_recurrent_delta_rule").0, 45);
        assert_eq!(row(&a, "prefill_chunked_delta_rule").0, 45);
        assert_eq!(row(&a, "decode_causal_conv").0, 45);
    }

    #[test]
    fn sparse_attention_reads_top_k_keys_and_the_indexer_reads_them_all() {
        let decode = |context| {
            step(
                "deepseek-v3.2",
                "fp8-block-fp8kv",
                &StepBatch::of(&Workload::decode(1, context)),
            )
        };
        for context in [32_768, 131_072] {
            let a = decode(context);
            // Sparse MLA: at most 2048 cached latents of 576 FP8 elements, whatever the context.
            assert_eq!(
                row(&a, "sparse_attention"),
                (61, 2048.0 * 576.0, row(&a, "sparse_attention").2)
            );
            // The indexer: every cached key, 128 FP8 elements and a 4 B scale each.
            let f = context as f64;
            assert_eq!(row(&a, "indexer_logits"), (61, f * 132.0, f * 64.0 * 259.0));
            assert_eq!(row(&a, "indexer_top_k").0, 61);
        }
        // Below top-k, every key is read: the window is the context.
        assert_eq!(row(&decode(1000), "sparse_attention").1, 1000.0 * 576.0);
        // The index key of each new token is written, 132 B a layer; the indexer's projections run.
        let a = decode(4096);
        assert_eq!(row(&a, "indexer_cache_write").1, 132.0);
        assert_eq!(row(&a, "indexer_q_proj").2, 2.0 * 8192.0 * 1536.0);
        assert_eq!(row(&a, "indexer_k_proj").2, 2.0 * 192.0 * 7168.0);
        // The step's cache: 4096 tokens of 61 · (576 + 132) B.
        assert_eq!(a.kv_cache_bytes, 4096.0 * 43_188.0);
    }

    #[test]
    fn deepseek_v4_reads_a_window_top_k_csa_entries_and_every_hca_entry() {
        let a = step(
            "deepseek-v4-flash",
            "fp8-block-fp8kv",
            &StepBatch::of(&Workload::decode(1, 32_768)),
        );
        // Every layer: the last 128 tokens, 512 FP8 elements each.
        assert_eq!(row(&a, "window_attention").0, 43);
        assert_eq!(row(&a, "window_attention").1, 128.0 * 512.0);
        // 21 CSA layers: 32,768 / 4 = 8192 entries, of which the top 512; the indexer scores all 8192 keys
        // of 128 FP8 and a 4 B scale.
        assert_eq!(row(&a, "csa_attention").0, 21);
        assert_eq!(row(&a, "csa_attention").1, 512.0 * 512.0);
        assert_eq!(row(&a, "csa_indexer_logits").1, 8192.0 * 132.0);
        // 20 HCA layers: all 32,768 / 128 = 256 entries.
        assert_eq!(row(&a, "hca_attention").0, 20);
        assert_eq!(row(&a, "hca_attention").1, 256.0 * 512.0);
        // No kv_b; the grouped output: 8 blocks of 4096 → 1024, then 8192 → 4096.
        assert!(a.ops.iter().all(|o| o.name != "kv_b_proj"));
        assert_eq!(row(&a, "o_a_proj"), (43 * 8, 0.0, 2.0 * 1024.0 * 4096.0));
        assert_eq!(row(&a, "o_b_proj").2, 2.0 * 4096.0 * 8192.0);
    }

    #[test]
    fn kimi_k3_decode_reads_kda_state_gated_mla_and_latent_experts() {
        let a = step("kimi-k3", "bf16", &StepBatch::of(&Workload::decode(1, 4096)));
        // 69 KDA layers read and write one 96 · 128 · 128 FP32 state: 2 · 6,291,456 B; 7 · 96 · 128² FLOPs.
        assert_eq!(row(&a, "recurrent_delta_rule"), (69, 12_582_912.0, 11_010_048.0));
        // The input projection q, k, v, gate (4 · 12,288), β (96) and f_a (128); f_b 128 → 12,288.
        assert_eq!(row(&a, "linear_in_proj").2, 2.0 * 7168.0 * 49_376.0);
        assert_eq!(row(&a, "linear_decay_proj").2, 2.0 * 128.0 * 12_288.0);
        // 24 MLA layers: the output gate 7168 → 96 · 128, and 4096 latents of 576 BF16 elements.
        assert_eq!(row(&a, "gate_proj"), (24, 0.0, 2.0 * 7168.0 * 12_288.0));
        assert_eq!(row(&a, "attention").1, 4096.0 * 576.0 * 2.0);
        // 92 LatentMoE layers: router from the hidden state, 16 experts of 3072 on the 3584 latent.
        assert_eq!(row(&a, "router"), (92, 0.0, 2.0 * 896.0 * 7168.0));
        assert_eq!(row(&a, "latent_down_proj").2, 2.0 * 3584.0 * 7168.0);
        assert_eq!(row(&a, "latent_up_proj").2, 2.0 * 7168.0 * 3584.0);
        assert_eq!(row(&a, "expert_gate_up").2, 2.0 * 16.0 * 6144.0 * 3584.0);
    }

    #[test]
    fn minimax_m3_decode_reads_top_blocks_on_57_layers_and_every_key_on_3() {
        let a = step("minimax-m3", "bf16", &StepBatch::of(&Workload::decode(1, 32_768)));
        // 57 MSA layers: 16 blocks of 128 = 2048 keys of 2 · 4 · 128 BF16; the first 3 layers all 32,768.
        assert_eq!(row(&a, "sparse_attention").0, 57);
        assert_eq!(row(&a, "sparse_attention").1, 2048.0 * 2048.0);
        assert_eq!(row(&a, "attention").0, 3);
        assert_eq!(row(&a, "attention").1, 32_768.0 * 2048.0);
        // The indexer scores every cached key (128 FP8 and a 4 B scale) with 4 heads; its query and key come
        // from the layer input: 6144 → 5 · 128.
        assert_eq!(row(&a, "indexer_logits").1, 32_768.0 * 132.0);
        assert_eq!(row(&a, "indexer_k_proj"), (57, 0.0, 2.0 * 640.0 * 6144.0));
        assert!(a.ops.iter().all(|o| o.name != "indexer_q_proj"));
    }
}
