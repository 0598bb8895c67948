//! The middle floor of `roofline-core`: operator FLOP/byte models ([`ops`]), precision configs
//! ([`quant_config`]), the roofline itself ([`predict`]) and its [`Corrections`], transformer models and
//! their import ([`model`]), the KV-cache rule ([`memory`]), multi-GPU splits ([`Parallelism`]), one step of
//! a model ([`analyze_model`], [`analyze_step`]), and measurements against predictions ([`measurement`],
//! [`validation`], [`measured_device`], [`step_comparison`]). Built on `roofline-base` only.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analysis;
pub mod corrections;
pub mod measured_device;
pub mod measurement;
pub mod memory;
pub mod model;
pub mod ops;
pub mod parallel;
pub mod quant_config;
pub mod roofline;
pub mod step_comparison;
pub mod validation;

pub use analysis::{
    ModelAnalysis, Phase, StepBatch, Workload, analyze_model, analyze_model_parallel, analyze_mtp_step,
    analyze_step,
};
pub use corrections::{
    Corrections, EAGER_LAUNCH_S, GRAPH_LAUNCH_S, KERNEL_LAUNCH_FLOOR_S, LinearAnalysis, OpAnalysis,
    StepLaunch, WAVE_TILE, analyze_linear, analyze_operator, wave_efficiency,
};
pub use memory::{
    MemoryBudget, MemoryFraction, MemoryRule, StepMemory, VLLM_GPU_MEMORY_UTILIZATION, activation_bytes,
    device_capacity_bytes, memory_budget, step_memory, vllm_limits,
};
#[cfg(feature = "serde")]
pub use model::MAX_CONFIG_JSON_BYTES;
pub use model::{
    LinearAttention, MlaConfig, ModelConfig, MoeConfig, ParamCount, SlidingWindow, SparseIndexer, find_model,
    model_presets,
};
pub use ops::{
    Activation, AttentionShape, GemmShape, LinearAttentionShape, MoeShape, Norm, OpKind, OperandPrecisions,
    Operator,
};
pub use parallel::Parallelism;
pub use quant_config::{
    LinearFormat, Module, ModuleFormat, QuantConfig, find_quant_config, quant_configs, summarize_modules,
};
pub use roofline::{Bound, Prediction, predict};
