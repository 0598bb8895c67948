//! The top floor of `roofline-core`: the serving model ([`ServingModel`]: engines, schedulers, the
//! request-level simulation of an engine and a benchmark client at a concurrency or a rate, sweeps and
//! SLAs), the quantization advisor ([`advise_model`]) and its one answer ([`recommend_model`]). Built on
//! `roofline-base` and `roofline-analysis`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod advisor;
#[cfg(test)]
mod properties;
pub mod recommendation;
pub mod serving;

pub use advisor::{
    Advice, Candidate, Skipped, TENSOR_PARALLEL_DEGREES, advise_model, advise_model_parallel, advise_operator,
};
pub use recommendation::{
    MemoryFit, Pick, Recommendation, memory_fit, recommend_model, recommend_model_for_engine,
    recommend_model_parallel,
};
pub use serving::{
    Alternative, Arrival, BenchClient, CONCURRENCY_GRID, ClientKind, ConfigFit, Engine, EngineFeatures,
    EnginePreset, EngineSupport, GpuCountBest, InFlight, LAYOUT_GPUS, LaunchArg, LaunchCommand, LaunchPlan,
    Load, MAX_DRAFT_TOKENS, MAX_REQUESTS, METRICS, MetricDefinition, NotServed, Percentile, Regime,
    Scheduler, SchedulerKind, Scheme, ServingModel, ServingOutcome, ServingPoint, ServingScenario,
    ServingWorkload, Sizing, SizingSpec, Sla, SlaLimit, SlaOutcome, SlaPick, SpecDecoding, SpecMethod,
    Summary, Sweep, SweepSpec, Unserved, Unstable, UnsupportedConfig, concurrency_grid, engine_support,
    engines_running, kv_cache_dtype, launch_plan, layout_name, layouts, matrices_cover, model_id,
    runs_scheme, schemes, serves, sweep,
};
