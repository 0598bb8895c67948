//! Roofline model of GPU kernels and LLM inference.
//!
//! `roofline-core` turns a hardware spec (datasheet or measured) plus an operator shape and its precisions
//! into a prediction: FLOPs, bytes moved, arithmetic intensity, ridge point, attainable FLOP/s, time and
//! whether the operator is memory-bound or compute-bound. It scales that up to whole transformer models
//! (prefill and decode, TTFT/TPOT, KV cache, memory fit) and advises on quantization. It is pure: no IO, no
//! clock, no async, no GPU; it builds for native targets and for `wasm32-unknown-unknown`.
//!
//! Brief overview:
//! - [`HardwareSpec`] and [`catalog`]: the sourced accelerator catalog (dense and sparse peaks kept apart),
//!   custom devices and calibrated specs ([`HardwareSpec::calibrated`]).
//! - [`Precision`], [`format_info`] and [`ComputePath`]: number formats, their layouts, and the matrix-unit
//!   paths each [`Architecture`] runs natively.
//! - [`QuantConfig`] and [`quant_configs`]: weight / activation / KV-cache / attention formats of a model.
//! - [`Operator`]: FLOP and byte models (GEMV, GEMM, batched GEMM, attention, MoE, vector operators).
//! - [`predict`] and [`Prediction`]: the roofline itself; [`analyze_operator`] adds the [`Corrections`].
//! - [`ModelConfig`], [`model_presets`] and [`analyze_model`]: whole-model prefill and decode analysis;
//!   [`analyze_model_parallel`] splits it over GPUs ([`Parallelism`], collectives over the device's
//!   [`hardware::Interconnect`]).
//! - [`advise_model`] and [`advise_operator`]: quantization advice ranked by predicted time.
//! - [`measurement::MeasuredPoint`], [`validation`], [`measured_device`] and [`step_comparison`]:
//!   measurements in base units against their predictions, on the device that ran them.
//! - [`wire`]: the JSON types shared by the web page and the endpoint (feature `serde`).
//!
//! Everything inside is in base units: FLOP, bytes, seconds, FLOP/s, bytes/s.
//!
//! # Examples
//! ```
//! use roofline_core::{find_hardware, predict, Operator, Precision};
//! let gb10 = find_hardware("gb10").unwrap();
//! // y[4096] = W[4096, 4096] · x[4096] in FP16 moves 2·4096² + 2·4096 + 2·4096 bytes.
//! let op = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
//! let p = predict(gb10, &op).unwrap();
//! assert_eq!(p.bytes, 33_570_816.0);
//! assert!((p.time_s - 33_570_816.0 / 273e9).abs() < 1e-12);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod advisor;
mod analysis;
mod corrections;
mod error;
pub mod format;
pub mod hardware;
#[cfg(feature = "serde")]
pub mod json;
pub mod measured_device;
pub mod measurement;
mod memory;
mod model;
pub mod ops;
mod parallel;
pub mod precision;
#[cfg(test)]
mod properties;
mod quant_config;
mod recommendation;
pub mod roofline;
mod serving;
pub mod step_comparison;
pub mod units;
pub mod validation;
#[cfg(feature = "serde")]
pub mod wire;

pub use advisor::{
    Advice, Candidate, Skipped, TENSOR_PARALLEL_DEGREES, advise_model, advise_model_parallel, advise_operator,
};
pub use analysis::{
    ModelAnalysis, Phase, StepBatch, Workload, analyze_model, analyze_model_parallel, analyze_step,
};
pub use corrections::{
    Corrections, EAGER_LAUNCH_S, GRAPH_LAUNCH_S, KERNEL_LAUNCH_FLOOR_S, LinearAnalysis, OpAnalysis,
    StepLaunch, WAVE_TILE, analyze_linear, analyze_operator, wave_efficiency,
};
pub use error::Error;
pub use hardware::{
    HardwareSpec, Mode, Peak, Provenance, ReferenceCeilings, calibrated_key, catalog, find_hardware,
    find_hardware_in,
};
pub use memory::{
    MemoryBudget, MemoryFraction, MemoryRule, StepMemory, VLLM_GPU_MEMORY_UTILIZATION, activation_bytes,
    device_capacity_bytes, memory_budget, step_memory, vllm_limits,
};
pub use model::{MlaConfig, ModelConfig, MoeConfig, ParamCount, SlidingWindow, find_model, model_presets};
pub use ops::{Activation, AttentionShape, GemmShape, MoeShape, Norm, OpKind, OperandPrecisions, Operator};
pub use parallel::Parallelism;
pub use precision::{
    ActivationScale, Architecture, BlockScale, ComputePath, E2M1_CODEBOOK, ElementLayout, Encoding,
    FormatInfo, GemmFamily, INT2_CODEBOOK, NF4_CODEBOOK, Precision, QuantizeKernel, format_catalog,
    format_info, int4_group_bits,
};
pub use quant_config::{
    LinearFormat, Module, ModuleFormat, QuantConfig, find_quant_config, quant_configs, summarize_modules,
};
pub use recommendation::{
    MemoryFit, Pick, Recommendation, memory_fit, recommend_model, recommend_model_for_engine,
    recommend_model_parallel,
};
pub use roofline::{Bound, Prediction, predict};
#[cfg(feature = "serde")]
pub use serving::{BenchFormat, MeasuredServingPoint, ServingComparison, compare_measured, parse_measured};
pub use serving::{
    CONCURRENCY_GRID, ConfigFit, Engine, EnginePreset, EngineSupport, InFlight, Load, METRICS,
    MetricDefinition, Regime, Scheduler, SchedulerKind, Scheme, ServingModel, ServingOutcome, ServingPoint,
    ServingScenario, ServingWorkload, Sla, SlaOutcome, SlaPick, Sweep, SweepSpec, Unstable,
    UnsupportedConfig, concurrency_grid, engine_support, engines_running, matrices_cover, runs_scheme,
    schemes, sweep,
};
