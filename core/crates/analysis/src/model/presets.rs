//! The model presets: data only, each transcribed from its published Hugging Face `config.json` with the
//! source and the published parameter count.

use std::sync::LazyLock;

use super::{
    CompressedAttention, LinearAttention, MlaConfig, ModelConfig, MoeConfig, SlidingWindow, SparseIndexer,
};
use crate::ops::Norm;
use crate::quant_config::{LinearFormat, Module, ModuleFormat, QuantConfig};
use roofline_base::precision::{ActivationScale, Precision};

/// The checkpoint of DeepSeek-V3, DeepSeek-R1 and Kimi K2: every decoder linear layer in FP8 with FP32 scales
/// per 128×128 block (`quantization_config`: `quant_method` fp8, `weight_block_size` [128, 128],
/// `activation_scheme` dynamic; DeepSeek-V3 `README_WEIGHTS.md`), the head and embeddings in BF16.
fn fp8_block_checkpoint() -> Option<QuantConfig> {
    Some(QuantConfig::checkpoint(
        "fp8 (128×128 blocks)",
        LinearFormat {
            weights: Precision::Fp8Block128,
            activations: Precision::Fp8Group128,
            activation_scale: ActivationScale::DynamicPerToken,
        },
        None,
        Vec::new(),
    ))
}

/// The checkpoint of gpt-oss: MXFP4 MoE experts run W4A16, attention, router, embeddings and head in BF16
/// (`quantization_config`: `quant_method` mxfp4, `modules_to_not_convert` self_attn, mlp.router,
/// embed_tokens, lm_head; huggingface.co/openai/gpt-oss-120b config.json).
fn mxfp4_checkpoint() -> Option<QuantConfig> {
    Some(QuantConfig::checkpoint(
        "mxfp4 (MoE experts, W4A16)",
        LinearFormat {
            weights: Precision::Mxfp4,
            activations: Precision::Bf16,
            activation_scale: ActivationScale::DynamicPerTensor,
        },
        None,
        vec![ModuleFormat {
            module: Module::Attention,
            format: LinearFormat::plain(Precision::Bf16),
        }],
    ))
}

/// A dense Llama-style config: gated SiLU FFN, RMSNorm, no MoE, MLA or sliding window, no checkpoint
/// (the presets' base, and the Hugging Face import's before its MoE, MLA and window are set).
#[allow(clippy::too_many_arguments)]
pub(super) fn dense(
    key: &str,
    name: &str,
    (layers, hidden, heads, kv_heads, head_dim): (u32, u64, u64, u64, u64),
    (ffn_dim, vocab, tied_embeddings): (u64, u64, bool),
    published_params: f64,
    source: &str,
) -> ModelConfig {
    ModelConfig {
        key: key.to_owned(),
        name: name.to_owned(),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        ffn_dim,
        vocab,
        gated_ffn: true,
        tied_embeddings,
        norm: Norm::RmsNorm,
        moe: None,
        mla: None,
        sliding_window: None,
        linear_attention: None,
        sparse_indexer: None,
        compressed_attention: None,
        attention_output_gate: false,
        latent_moe: None,
        mtp_layers: 0,
        published_params,
        published_active_params: None,
        source: source.to_owned(),
        checkpoint: None,
    }
}

pub(super) static PRESETS: LazyLock<Vec<ModelConfig>> = LazyLock::new(|| {
    let mut presets = vec![
        dense(
            "llama-3.1-8b",
            "Llama 3.1 8B",
            (32, 4096, 32, 8, 128),
            (14_336, 128_256, false),
            8.03e9,
            "huggingface.co/meta-llama/Llama-3.1-8B config.json; 8.03B per the model card",
        ),
        dense(
            "llama-3.1-70b",
            "Llama 3.1 70B",
            (80, 8192, 64, 8, 128),
            (28_672, 128_256, false),
            70.6e9,
            "huggingface.co/meta-llama/Llama-3.1-70B config.json; 70.6B per the model card",
        ),
        dense(
            "llama-3.1-405b",
            "Llama 3.1 405B",
            (126, 16_384, 128, 8, 128),
            (53_248, 128_256, false),
            405.9e9,
            "huggingface.co/meta-llama/Llama-3.1-405B config.json; 405.9B per the model card",
        ),
        dense(
            "llama-3.2-1b",
            "Llama 3.2 1B",
            (16, 2048, 32, 8, 64),
            (8192, 128_256, true),
            1.24e9,
            "huggingface.co/meta-llama/Llama-3.2-1B config.json; 1.24B per the model card",
        ),
        dense(
            "llama-3.2-3b",
            "Llama 3.2 3B",
            (28, 3072, 24, 8, 128),
            (8192, 128_256, true),
            3.21e9,
            "huggingface.co/meta-llama/Llama-3.2-3B config.json; 3.21B per the model card",
        ),
        dense(
            "qwen2.5-7b",
            "Qwen2.5 7B",
            (28, 3584, 28, 4, 128),
            (18_944, 152_064, false),
            7.61e9,
            "huggingface.co/Qwen/Qwen2.5-7B config.json; 7.61B per the model card (QKV biases omitted, 0.1M)",
        ),
        dense(
            "qwen2.5-72b",
            "Qwen2.5 72B",
            (80, 8192, 64, 8, 128),
            (29_568, 152_064, false),
            72.7e9,
            "huggingface.co/Qwen/Qwen2.5-72B config.json; 72.7B per the model card (QKV biases omitted)",
        ),
        ModelConfig {
            sliding_window: window(4096, 32),
            ..dense(
                "mistral-7b",
                "Mistral 7B v0.1",
                (32, 4096, 32, 8, 128),
                (14_336, 32_000, false),
                7.24e9,
                "huggingface.co/mistralai/Mistral-7B-v0.1 config.json (sliding_window 4096 on every layer); 7.24B per the model page",
            )
        },
        ModelConfig {
            moe: Some(MoeConfig {
                experts: 8,
                top_k: 2,
                shared_experts: 0,
                expert_ffn: 14_336,
                dense_layers: 0,
            }),
            published_active_params: Some(12.9e9),
            ..dense(
                "mixtral-8x7b",
                "Mixtral 8x7B",
                (32, 4096, 32, 8, 128),
                (14_336, 32_000, false),
                46.7e9,
                "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json; 46.7B total, 12.9B active (Mistral AI)",
            )
        },
        ModelConfig {
            checkpoint: fp8_block_checkpoint(),
            moe: Some(MoeConfig {
                experts: 256,
                top_k: 8,
                shared_experts: 1,
                expert_ffn: 2048,
                dense_layers: 3,
            }),
            mla: Some(DEEPSEEK_V3_MLA),
            mtp_layers: 1,
            published_active_params: Some(37e9),
            ..dense(
                "deepseek-v3",
                "DeepSeek-V3 (MLA approximated)",
                (61, 7168, 128, 128, 128),
                (18_432, 129_280, false),
                671e9,
                "huggingface.co/deepseek-ai/DeepSeek-V3 config.json; 671B total, 37B active (technical report, arXiv:2412.19437; MTP module excluded)",
            )
        },
        dense(
            "tinyllama-1.1b",
            "TinyLlama 1.1B",
            (22, 2048, 32, 4, 64),
            (5632, 32_000, false),
            1.1e9,
            "huggingface.co/TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T config.json; 1.1B",
        ),
        dense(
            "qwen3-4b",
            "Qwen3 4B",
            (36, 2560, 32, 8, 128),
            (9728, 151_936, true),
            4.0e9,
            "huggingface.co/Qwen/Qwen3-4B config.json; 4.0B (3.6B non-embedding) per the model card (QK norms omitted)",
        ),
        dense(
            "qwen3-8b",
            "Qwen3 8B",
            (36, 4096, 32, 8, 128),
            (12_288, 151_936, false),
            8.2e9,
            "huggingface.co/Qwen/Qwen3-8B config.json; 8.2B (6.95B non-embedding) per the model card (QK norms omitted)",
        ),
        dense(
            "qwen3-14b",
            "Qwen3 14B",
            (40, 5120, 40, 8, 128),
            (17_408, 151_936, false),
            14.8e9,
            "huggingface.co/Qwen/Qwen3-14B config.json; 14.8B (13.2B non-embedding) per the model card (QK norms omitted)",
        ),
        dense(
            "qwen3-32b",
            "Qwen3 32B",
            (64, 5120, 64, 8, 128),
            (25_600, 151_936, false),
            32.8e9,
            "huggingface.co/Qwen/Qwen3-32B config.json; 32.8B (31.2B non-embedding) per the model card (QK norms omitted)",
        ),
        ModelConfig {
            moe: moe(128, 8, 0, 768, 0),
            published_active_params: Some(3.3e9),
            ..dense(
                "qwen3-30b-a3b",
                "Qwen3 30B-A3B",
                (48, 2048, 32, 4, 128),
                (6144, 151_936, false),
                30.5e9,
                "huggingface.co/Qwen/Qwen3-30B-A3B config.json; 30.5B total, 3.3B active per the model card",
            )
        },
        ModelConfig {
            moe: moe(128, 8, 0, 1536, 0),
            published_active_params: Some(22e9),
            ..dense(
                "qwen3-235b-a22b",
                "Qwen3 235B-A22B",
                (94, 4096, 64, 4, 128),
                (12_288, 151_936, false),
                235e9,
                "huggingface.co/Qwen/Qwen3-235B-A22B config.json; 235B total, 22B active per the model card",
            )
        },
        ModelConfig {
            checkpoint: mxfp4_checkpoint(),
            moe: moe(32, 4, 0, 2880, 0),
            sliding_window: window(128, 12),
            published_active_params: Some(3.61e9),
            ..dense(
                "gpt-oss-20b",
                "gpt-oss-20b",
                (24, 2880, 64, 8, 64),
                (2880, 201_088, false),
                20.91e9,
                "huggingface.co/openai/gpt-oss-20b config.json (128-token window on alternate layers); 20.91B total, \
                 3.61B active without the embedding (gpt-oss model card, arXiv:2508.10925; '21B, 3.6B active' on \
                 the model page); attention sinks and biases omitted (7M)",
            )
        },
        ModelConfig {
            checkpoint: mxfp4_checkpoint(),
            moe: moe(128, 4, 0, 2880, 0),
            sliding_window: window(128, 18),
            published_active_params: Some(5.13e9),
            ..dense(
                "gpt-oss-120b",
                "gpt-oss-120b",
                (36, 2880, 64, 8, 64),
                (2880, 201_088, false),
                116.83e9,
                "huggingface.co/openai/gpt-oss-120b config.json (128-token window on alternate layers); 116.83B total, \
                 5.13B active without the embedding (gpt-oss model card, arXiv:2508.10925; '117B, 5.1B active' on \
                 the model page); attention sinks and biases omitted (40M)",
            )
        },
        ModelConfig {
            moe: moe(16, 1, 1, 8192, 0),
            sliding_window: chunked(8192, 36),
            published_active_params: Some(17e9),
            ..dense(
                "llama-4-scout",
                "Llama 4 Scout 17B-16E",
                (48, 5120, 40, 8, 128),
                (16_384, 202_048, false),
                109e9,
                "huggingface.co/meta-llama/Llama-4-Scout-17B-16E config.json (text_config; chunked attention of 8192 \
                 on 3 of 4 layers); 109B total, 17B active per the model card, the total including the vision \
                 encoder (0.83B, not modelled)",
            )
        },
        ModelConfig {
            moe: moe(128, 1, 1, 8192, 24),
            sliding_window: chunked(8192, 36),
            published_active_params: Some(17e9),
            ..dense(
                "llama-4-maverick",
                "Llama 4 Maverick 17B-128E",
                (48, 5120, 40, 8, 128),
                (16_384, 202_048, false),
                400e9,
                "huggingface.co/meta-llama/Llama-4-Maverick-17B-128E config.json (text_config; MoE on every other \
                 layer, chunked attention of 8192 on 3 of 4 layers); 400B total, 17B active per the model card \
                 (vision encoder not modelled)",
            )
        },
        ModelConfig {
            sliding_window: window(1024, 40),
            ..dense(
                "gemma-3-12b",
                "Gemma 3 12B (text)",
                (48, 3840, 16, 8, 256),
                (15_360, 262_208, true),
                11.771e9,
                "huggingface.co/google/gemma-3-12b-pt config.json (text_config; 1024-token window on 5 of 6 \
                 layers); 1,012M embedding + 10,759M non-embedding (Gemma 3 technical report, arXiv:2503.19786, \
                 Table 1; the 417M vision encoder not modelled); GeGLU analysed as a gated FFN",
            )
        },
        ModelConfig {
            sliding_window: window(1024, 52),
            ..dense(
                "gemma-3-27b",
                "Gemma 3 27B (text)",
                (62, 5376, 32, 16, 128),
                (21_504, 262_208, true),
                27.016e9,
                "huggingface.co/google/gemma-3-27b-pt config.json (text_config; 1024-token window on 5 of 6 \
                 layers); 1,416M embedding + 25,600M non-embedding (Gemma 3 technical report, arXiv:2503.19786, \
                 Table 1; the 417M vision encoder not modelled); GeGLU analysed as a gated FFN",
            )
        },
        ModelConfig {
            checkpoint: fp8_block_checkpoint(),
            moe: moe(256, 8, 1, 2048, 3),
            mla: Some(DEEPSEEK_V3_MLA),
            mtp_layers: 1,
            published_active_params: Some(37e9),
            ..dense(
                "deepseek-r1",
                "DeepSeek-R1 (MLA approximated)",
                (61, 7168, 128, 128, 128),
                (18_432, 129_280, false),
                671e9,
                "huggingface.co/deepseek-ai/DeepSeek-R1 config.json (the DeepSeek-V3 architecture); 671B total, \
                 37B active per the model card (MTP module excluded)",
            )
        },
        ModelConfig {
            checkpoint: fp8_block_checkpoint(),
            moe: moe(384, 8, 1, 2048, 1),
            mla: Some(DEEPSEEK_V3_MLA),
            published_active_params: Some(32e9),
            ..dense(
                "kimi-k2",
                "Kimi K2 (MLA approximated)",
                (61, 7168, 64, 64, 128),
                (18_432, 163_840, false),
                1e12,
                "huggingface.co/moonshotai/Kimi-K2-Instruct config.json (the DeepSeek-V3 architecture); '1T' total, \
                 '32B' activated per the model card (the Kimi K2 report, arXiv:2507.20534, says 1.04T; the \
                 structure gives 1.026T)",
            )
        },
        dense(
            "mistral-small-3",
            "Mistral Small 3 24B",
            (40, 5120, 32, 8, 128),
            (32_768, 131_072, false),
            24e9,
            "huggingface.co/mistralai/Mistral-Small-24B-Base-2501 config.json; '24B parameters' per the model card",
        ),
    ];
    presets.extend(served_in_2026());
    presets.extend(next_wave());
    presets
});

/// The models served in 2026 (issue 35): hybrid linear attention, DeepSeek Sparse Attention, GLM, MiniMax
/// and Kimi-K2.5, each from its published `config.json` (core/tests/data/hf/README.md for the files).
fn served_in_2026() -> Vec<ModelConfig> {
    vec![
        ModelConfig {
            moe: moe(512, 10, 1, 512, 0),
            linear_attention: gated_delta_net(36, 32),
            attention_output_gate: true,
            published_active_params: Some(3e9),
            ..dense(
                "qwen3-next-80b-a3b",
                "Qwen3-Next 80B-A3B",
                (48, 2048, 16, 2, 256),
                (5120, 151_936, false),
                80e9,
                "huggingface.co/Qwen/Qwen3-Next-80B-A3B-Thinking config.json (Gated DeltaNet on 3 of 4 layers); \
                 '80B total, 3B activated' per the model card",
            )
        },
        ModelConfig {
            moe: moe(512, 10, 1, 1024, 0),
            linear_attention: gated_delta_net(45, 64),
            attention_output_gate: true,
            mtp_layers: 1,
            published_active_params: Some(17e9),
            ..dense(
                "qwen3.5-397b-a17b",
                "Qwen3.5 397B-A17B (text)",
                (60, 4096, 32, 2, 256),
                (1024, 248_320, false),
                397e9,
                "huggingface.co/Qwen/Qwen3.5-397B-A17B config.json (text_config; Gated DeltaNet on 3 of 4 layers); \
                 '397B total, 17B activated' per the model card, the vision encoder (0.4B) not modelled",
            )
        },
        ModelConfig {
            moe: moe(256, 8, 1, 512, 0),
            linear_attention: gated_delta_net(30, 32),
            attention_output_gate: true,
            mtp_layers: 1,
            published_active_params: Some(3e9),
            ..dense(
                "qwen3.6-35b-a3b",
                "Qwen3.6 35B-A3B (text)",
                (40, 2048, 16, 2, 256),
                (512, 248_320, false),
                35e9,
                "huggingface.co/nvidia/Qwen3.6-35B-A3B-NVFP4 config.json (text_config, the architecture of \
                 Qwen/Qwen3.6-35B-A3B; Gated DeltaNet on 3 of 4 layers); '35B total, 3B activated' per the model \
                 card, the vision encoder (0.4B) not modelled",
            )
        },
        ModelConfig {
            checkpoint: fp8_block_checkpoint(),
            moe: moe(256, 8, 1, 2048, 3),
            mla: Some(DEEPSEEK_V3_MLA),
            sparse_indexer: indexer(64),
            mtp_layers: 1,
            published_active_params: Some(37e9),
            ..dense(
                "deepseek-v3.2",
                "DeepSeek-V3.2 (MLA approximated, sparse attention)",
                (61, 7168, 128, 128, 128),
                (18_432, 129_280, false),
                685e9,
                "huggingface.co/deepseek-ai/DeepSeek-V3.2 config.json (DeepSeek-V3 with the lightning indexer: 64 \
                 heads of 128, top 2048); 685B per the model page including the 14B MTP module (DeepSeek-V3's \
                 671B + 14B convention), 37B active",
            )
        },
        ModelConfig {
            checkpoint: fp8_block_checkpoint(),
            moe: moe(256, 8, 1, 2048, 3),
            mla: Some(MlaConfig {
                q_lora_rank: 2048,
                kv_lora_rank: 512,
                rope_head_dim: 64,
                nope_head_dim: 192,
                v_head_dim: 256,
            }),
            sparse_indexer: indexer(32),
            mtp_layers: 1,
            published_active_params: Some(40e9),
            ..dense(
                "glm-5",
                "GLM-5 (MLA approximated, sparse attention)",
                (78, 6144, 64, 64, 256),
                (12_288, 154_880, false),
                744e9,
                "huggingface.co/zai-org/GLM-5-FP8 config.json (GlmMoeDsaForCausalLM: MLA with DeepSeek Sparse \
                 Attention, 32 indexer heads); 744B total, 40B active (GLM-5 report, arXiv:2602.15763, Table 1)",
            )
        },
        ModelConfig {
            moe: moe(160, 8, 1, 1536, 3),
            mtp_layers: 1,
            published_active_params: Some(32e9),
            ..dense(
                "glm-4.6",
                "GLM-4.6",
                (92, 5120, 96, 8, 128),
                (12_288, 151_552, false),
                355e9,
                "the Glm4MoeForCausalLM structure GLM-4.5, 4.6 and 4.7 share (zai-org/GLM-4.7-FP8 config.json as \
                 ai-dynamo/aiconfigurator transcribes it; 1 MTP layer, partial RoPE and QK norms not modelled); \
                 355B total, 32B active (GLM-5 report, arXiv:2602.15763, Table 1, for GLM-4.5)",
            )
        },
        ModelConfig {
            checkpoint: fp8_block_checkpoint(),
            moe: moe(256, 8, 0, 1536, 0),
            mtp_layers: 3,
            published_active_params: Some(10e9),
            ..dense(
                "minimax-m2.5",
                "MiniMax-M2.5",
                (62, 3072, 48, 8, 128),
                (1536, 200_064, false),
                230e9,
                "huggingface.co/MiniMaxAI/MiniMax-M2.5 config.json (intermediate_size is the experts' width; 3 MTP \
                 modules); '230B total, 10B active' per the model card (MiniMax-M2's architecture)",
            )
        },
        ModelConfig {
            checkpoint: int4_experts_checkpoint(),
            moe: moe(384, 8, 1, 2048, 1),
            mla: Some(DEEPSEEK_V3_MLA),
            published_active_params: Some(32e9),
            ..dense(
                "kimi-k2.5",
                "Kimi K2.5 (text, MLA approximated)",
                (61, 7168, 64, 64, 128),
                (18_432, 163_840, false),
                1e12,
                "huggingface.co/moonshotai/Kimi-K2.5 config.json (text_config: Kimi K2's DeepSeek-V3 architecture; \
                 routed experts in compressed-tensors INT4 groups of 32); '1T' total, '32B' activated per the model \
                 card, the MoonViT vision encoder not modelled",
            )
        },
    ]
}

/// The next wave (issue 35, item 4): DeepSeek-V4 Flash and Pro, Kimi-K3, MiniMax-M3.
fn next_wave() -> Vec<ModelConfig> {
    vec![
        deepseek_v4(
            ("deepseek-v4-flash", "DeepSeek-V4-Flash (compressed attention)"),
            (43, 4096, 64, 1024),
            (21, 20, 512, 8),
            (256, 284e9, 13e9),
        ),
        deepseek_v4(
            ("deepseek-v4-pro", "DeepSeek-V4-Pro (compressed attention)"),
            (61, 7168, 128, 1536),
            (30, 31, 1024, 16),
            (384, 1.6e12, 49e9),
        ),
        ModelConfig {
            checkpoint: w4a16_experts_checkpoint("mxfp4-pack-quantized", Precision::Mxfp4),
            moe: moe(896, 16, 2, 3072, 1),
            mla: Some(DEEPSEEK_V3_MLA),
            linear_attention: Some(LinearAttention {
                layers: 69,
                key_heads: 96,
                value_heads: 96,
                key_head_dim: 128,
                value_head_dim: 128,
                conv_kernel: 4,
                state: Precision::Fp32,
                kda: true,
            }),
            attention_output_gate: true,
            latent_moe: Some(3584),
            ..dense(
                "kimi-k3",
                "Kimi-K3 (text, KDA + gated MLA, LatentMoE)",
                (93, 7168, 96, 96, 128),
                (33_792, 163_840, false),
                2.8e12,
                "moonshotai/Kimi-K3 config.json text_config as ai-dynamo/aiconfigurator 095f58a copies it (69 Kimi \
                 Delta Attention layers of 96 × 128, 24 MLA layers with an output gate, 896 experts of 3072 in a \
                 3584 latent, 2 shared; routed experts in compressed-tensors MXFP4); '2.8T' per InferenceX \
                 (README, 2026/07) and aiconfigurator's kimi_k3.py; no published active count; AttnRes, SiTU \
                 and the vision tower not modelled",
            )
        },
        ModelConfig {
            moe: moe(128, 4, 1, 3072, 3),
            sparse_indexer: Some(SparseIndexer {
                heads: 4,
                head_dim: 128,
                top_k: 2048,
                msa: true,
                dense_layers: 3,
            }),
            mtp_layers: 7,
            published_active_params: Some(26e9),
            ..dense(
                "minimax-m3",
                "MiniMax-M3 (text, MiniMax Sparse Attention)",
                (60, 6144, 64, 4, 128),
                (12_288, 200_064, false),
                427e9,
                "MiniMaxAI/MiniMax-M3 config.json as ai-dynamo/aiconfigurator 095f58a copies it (GQA 64/4 with \
                 MSA's 4 × 128 indexer and top 16 blocks of 128 on 57 layers, 3 dense layers of 12,288, 128 \
                 experts of 3072 and 1 shared, 7 MTP modules); '427B/26B-active' per SemiAnalysisAI/InferenceX \
                 (vLLM recipe, benchmarks/single_node/fixed_seq_len/deprecated/minimaxm3_fp8_h200.sh); QK norms \
                 and the vision tower not modelled",
            )
        },
    ]
}

/// DeepSeek-V4 (huggingface.co/deepseek-ai/DeepSeek-V4-Flash and -Pro config.json): `(layers, hidden, heads,
/// q_lora_rank)`, `(CSA layers, HCA layers, index_topk, o_groups)`, `(routed experts, published total,
/// published active)`; the rest is common to both files: shared-KV MQA of 512 (64 rotated), a window of
/// 128, CSA every 4 tokens with a 64 × 128 indexer, HCA every 128, o_lora_rank 1024, 4 mHC streams, 6 of
/// the experts (3072 wide on Pro, 2048 on Flash) and 1 shared, vocabulary 129,280, 1 MTP layer; FP8 blocks
/// and FP4 routed experts (`expert_dtype`).
fn deepseek_v4(
    (key, name): (&str, &str),
    (layers, hidden, heads, q_lora_rank): (u32, u64, u64, u64),
    (csa_layers, hca_layers, top_k, o_groups): (u32, u32, u64, u64),
    (experts, total, active): (u64, f64, f64),
) -> ModelConfig {
    let expert_ffn = if experts == 384 { 3072 } else { 2048 };
    let mut checkpoint = fp8_block_checkpoint().expect("fp8 checkpoint");
    checkpoint.name = format!("{} + FP4 experts", checkpoint.name);
    checkpoint.modules.push(ModuleFormat {
        module: Module::RoutedExperts,
        format: LinearFormat {
            weights: Precision::Mxfp4,
            activations: Precision::Bf16,
            ..checkpoint.format(Module::RoutedExperts)
        },
    });
    ModelConfig {
        checkpoint: Some(checkpoint),
        moe: moe(experts, 6, 1, expert_ffn, 0),
        mla: Some(MlaConfig {
            q_lora_rank,
            kv_lora_rank: 448,
            rope_head_dim: 64,
            nope_head_dim: 448,
            v_head_dim: 512,
        }),
        sliding_window: window(128, layers),
        compressed_attention: Some(CompressedAttention {
            csa_layers,
            csa_ratio: 4,
            hca_layers,
            hca_ratio: 128,
            indexer: SparseIndexer {
                heads: 64,
                head_dim: 128,
                top_k,
                msa: false,
                dense_layers: 0,
            },
            o_groups,
            o_lora_rank: 1024,
            hc_mult: 4,
        }),
        mtp_layers: 1,
        published_active_params: Some(active),
        ..dense(
            key,
            name,
            (layers, hidden, heads, 1, 512),
            (expert_ffn, 129_280, false),
            total,
            &format!(
                "huggingface.co/deepseek-ai/{} config.json (compress_ratios: {csa_layers} CSA layers, \
                 {hca_layers} HCA, the others a 128-token window only); {:.0}B total, {:.0}B activated per the \
                 model card",
                if experts == 384 {
                    "DeepSeek-V4-Pro"
                } else {
                    "DeepSeek-V4-Flash"
                },
                total / 1e9,
                active / 1e9
            ),
        )
    }
}

/// Gated DeltaNet on `layers` layers with 16 key heads, `value_heads` value heads of 128 and a 4-tap
/// convolution, the state in FP32 (every Qwen3-Next, Qwen3.5 and Qwen3.6 config).
const fn gated_delta_net(layers: u32, value_heads: u64) -> Option<LinearAttention> {
    Some(LinearAttention {
        layers,
        key_heads: 16,
        value_heads,
        key_head_dim: 128,
        value_head_dim: 128,
        conv_kernel: 4,
        state: Precision::Fp32,
        kda: false,
    })
}

/// DeepSeek Sparse Attention's indexer: `heads` heads of 128, the top 2048 keys (DeepSeek-V3.2, GLM-5).
const fn indexer(heads: u64) -> Option<SparseIndexer> {
    Some(SparseIndexer {
        heads,
        head_dim: 128,
        top_k: 2048,
        msa: false,
        dense_layers: 0,
    })
}

/// Kimi-K2.5's checkpoint: the routed experts in INT4 groups of 32 (compressed-tensors `pack-quantized`,
/// symmetric), run W4A16 in BF16; attention, shared experts, the dense layer and the head in BF16 (its
/// `ignore` list).
fn int4_experts_checkpoint() -> Option<QuantConfig> {
    w4a16_experts_checkpoint("pack-quantized", Precision::Int4G32)
}

/// Kimi's compressed-tensors checkpoints: routed experts in `weights` (W4A16, compressed-tensors `format`),
/// attention, dense MLP and shared experts in BF16.
fn w4a16_experts_checkpoint(format: &str, weights: Precision) -> Option<QuantConfig> {
    let bf16 = LinearFormat::plain(Precision::Bf16);
    Some(QuantConfig::checkpoint(
        &format!("compressed-tensors ({format})"),
        LinearFormat {
            weights,
            activations: Precision::Bf16,
            activation_scale: ActivationScale::DynamicPerTensor,
        },
        None,
        [Module::Attention, Module::DenseMlp, Module::SharedExperts]
            .map(|module| ModuleFormat { module, format: bf16 })
            .to_vec(),
    ))
}

/// DeepSeek-V3's multi-head latent attention, shared by DeepSeek-R1 and Kimi K2.
const DEEPSEEK_V3_MLA: MlaConfig = MlaConfig {
    q_lora_rank: 1536,
    kv_lora_rank: 512,
    rope_head_dim: 64,
    nope_head_dim: 128,
    v_head_dim: 128,
};

/// A MoE layout: routed experts, experts per token, shared experts, expert width, dense-FFN layers.
const fn moe(
    experts: u64,
    top_k: u64,
    shared_experts: u64,
    expert_ffn: u64,
    dense_layers: u32,
) -> Option<MoeConfig> {
    Some(MoeConfig {
        experts,
        top_k,
        shared_experts,
        expert_ffn,
        dense_layers,
    })
}

/// A sliding window of `window` tokens on `layers` layers.
const fn window(window: u64, layers: u32) -> Option<SlidingWindow> {
    Some(SlidingWindow {
        window,
        layers,
        chunked: false,
    })
}

/// Llama 4 chunked attention: chunks of `window` tokens on `layers` layers.
const fn chunked(window: u64, layers: u32) -> Option<SlidingWindow> {
    Some(SlidingWindow {
        window,
        layers,
        chunked: true,
    })
}
