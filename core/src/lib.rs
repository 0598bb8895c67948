//! Roofline model of GPU kernels and LLM inference: a hardware spec plus an operator shape and its
//! precisions in, a prediction out (FLOPs, bytes, intensity, attainable FLOP/s, time, bound), scaled up to
//! whole transformer models, serving sweeps and quantization advice. Pure: no IO, clock, async or GPU; it
//! builds for native targets and `wasm32-unknown-unknown`, in base units (FLOP, bytes, seconds).
//!
//! This crate is a facade: it re-exports the layers of `core/crates/` (ARCHITECTURE.md), bottom to top
//! `roofline-base` (units, precision, error, hardware), `roofline-analysis` (operators to one step of a
//! model), `roofline-serving` (serving, advisor, recommendation) and `roofline-wire` (what crosses an edge,
//! feature `serde`), so every path `roofline_core::…` stays where it was.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use roofline_analysis::{measured_device, measurement, ops, roofline, step_comparison, validation};
#[cfg(feature = "serde")]
pub use roofline_base::json;
pub use roofline_base::{format, hardware, precision, units};
#[cfg(feature = "serde")]
pub use roofline_wire::wire;

#[cfg(feature = "serde")]
pub use roofline_analysis::MAX_CONFIG_JSON_BYTES;
pub use roofline_analysis::{
    Activation, AttentionShape, Bound, Corrections, EAGER_LAUNCH_S, GRAPH_LAUNCH_S, GemmShape,
    KERNEL_LAUNCH_FLOOR_S, LinearAnalysis, LinearAttention, LinearAttentionShape, LinearFormat, MemoryBudget,
    MemoryFraction, MemoryRule, MlaConfig, ModelAnalysis, ModelConfig, Module, ModuleFormat, MoeConfig,
    MoeShape, Norm, OpAnalysis, OpKind, OperandPrecisions, Operator, Parallelism, ParamCount, Phase,
    Prediction, QuantConfig, SlidingWindow, SparseIndexer, StepBatch, StepLaunch, StepMemory,
    VLLM_GPU_MEMORY_UTILIZATION, WAVE_TILE, Workload, activation_bytes, analyze_linear, analyze_model,
    analyze_model_parallel, analyze_mtp_step, analyze_operator, analyze_step, device_capacity_bytes,
    find_model, find_quant_config, memory_budget, model_presets, predict, quant_configs, step_memory,
    summarize_modules, vllm_limits, wave_efficiency,
};
pub use roofline_base::{
    ActivationScale, Architecture, BlockScale, ComputePath, E2M1_CODEBOOK, ElementLayout, Encoding, Error,
    FormatInfo, GemmFamily, HardwareSpec, INT2_CODEBOOK, Mode, NF4_CODEBOOK, Peak, Precision, Provenance,
    QuantizeKernel, ReferenceCeilings, calibrated_key, catalog, find_hardware, find_hardware_in,
    format_catalog, format_info, int4_group_bits,
};
pub use roofline_serving::{
    Advice, Alternative, Arrival, BenchClient, CONCURRENCY_GRID, Candidate, ClientKind, ConfigFit, Engine,
    EngineFeatures, EnginePreset, EngineSupport, GpuCountBest, InFlight, LAYOUT_GPUS, LaunchArg,
    LaunchCommand, LaunchPlan, Load, MAX_DRAFT_TOKENS, MAX_REQUESTS, METRICS, MemoryFit, MetricDefinition,
    NotServed, Percentile, Pick, Recommendation, Regime, Scheduler, SchedulerKind, Scheme, ServingModel,
    ServingOutcome, ServingPoint, ServingScenario, ServingWorkload, Sizing, SizingSpec, Skipped, Sla,
    SlaLimit, SlaOutcome, SlaPick, SpecDecoding, SpecMethod, Summary, Sweep, SweepSpec,
    TENSOR_PARALLEL_DEGREES, Unserved, Unstable, UnsupportedConfig, advise_model, advise_model_parallel,
    advise_operator, concurrency_grid, engine_support, engines_running, kv_cache_dtype, launch_plan,
    layout_name, layouts, matrices_cover, memory_fit, model_id, recommend_model, recommend_model_for_engine,
    recommend_model_parallel, runs_scheme, schemes, serves, sweep,
};
#[cfg(feature = "serde")]
pub use roofline_wire::{
    BenchFormat, LatencyMetric, MAX_BENCH_FILE_BYTES, MAX_BENCH_RUNS, MeasuredPercentiles,
    MeasuredServingPoint, PercentileRatio, ServingComparison, check_bench_size, compare_measured,
    parse_measured,
};
