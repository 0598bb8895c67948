//! The serving model: what a serving engine delivers to a benchmark client, simulated request by request
//! ([`sim`]) from the engine's steps ([`roofline_analysis::analysis::analyze_step`]), its scheduler and its
//! memory rule ([`roofline_analysis::memory::memory_budget`]), with nothing fitted.
//!
//! Its rules and derivations: docs/validation/serving.md and docs/design/core.md.

mod engine;
mod launch;
mod layouts;
mod metrics;
#[cfg(test)]
mod properties;
pub mod sim;
mod simulated;
mod sizing;
mod support;
mod sweep;

use roofline_analysis::corrections::Corrections;
use roofline_analysis::memory::{MemoryBudget, MemoryRule, memory_budget};
use roofline_analysis::model::ModelConfig;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;

pub use engine::{Engine, EnginePreset, InFlight, Scheduler, SchedulerKind};
pub use launch::{LaunchArg, LaunchCommand, LaunchPlan, launch_plan, model_id};
pub use layouts::{LAYOUT_GPUS, layout_name, layouts};
pub use metrics::{METRICS, MetricDefinition, Regime, ServingOutcome, ServingPoint, Unstable};
pub use sim::{
    Arrival, BenchClient, ClientKind, EngineFeatures, MAX_DRAFT_TOKENS, MAX_REQUESTS, Percentile,
    SpecDecoding, SpecMethod, Summary,
};
pub use sizing::{Alternative, GpuCountBest, NotServed, Sizing, SizingSpec, SlaLimit};
pub use support::{
    EngineSupport, Scheme, Unserved, engine_support, engines_running, kv_cache_dtype, matrices_cover,
    runs_scheme, schemes, serves,
};
pub use sweep::{
    CONCURRENCY_GRID, ConfigFit, Sla, SlaOutcome, SlaPick, Sweep, SweepSpec, UnsupportedConfig,
    concurrency_grid, sweep,
};

/// The nominal request lengths of a serving workload: every request's, or those the client draws around
/// ([`BenchClient`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServingWorkload {
    /// Input (prompt) tokens per request, ISL.
    pub isl: u32,
    /// Output tokens per request, OSL (at least 2: TPOT is the time between output tokens).
    pub osl: u32,
}

impl ServingWorkload {
    /// Checks the lengths.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an ISL of 0 or an OSL below 2 (one output token has no TPOT), naming the
    /// field.
    pub fn check(&self) -> Result<(), Error> {
        if self.isl == 0 {
            return Err(Error::InvalidInput("isl must be at least 1 token".into()));
        }
        if self.osl < 2 {
            return Err(Error::InvalidInput(format!(
                "osl must be at least 2 tokens (got {}): TPOT is the time between output tokens, and one token has none",
                self.osl
            )));
        }
        Ok(())
    }

    /// Tokens one sequence holds at its longest: ISL + OSL.
    #[must_use]
    pub fn sequence_tokens(&self) -> u64 {
        u64::from(self.isl) + u64::from(self.osl)
    }
}

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Load {
    /// Closed loop: N clients, each sending its next request the moment the previous one finishes.
    Concurrency(u32),
    /// Open loop: arrivals at this many requests per second (Poisson or constant gaps, the client's).
    Rate(f64),
}

/// What is served and how: device, model, precision config, GPU split, corrections, scheduler and memory
/// rule.
#[derive(Debug, Clone, Copy)]
pub struct ServingScenario<'a> {
    /// The device (its mode sets the ceilings).
    pub hardware: &'a HardwareSpec,
    /// The model.
    pub model: &'a ModelConfig,
    /// The precision config.
    pub config: &'a QuantConfig,
    /// How one replica is split over GPUs.
    pub parallelism: Parallelism,
    /// The corrections applied to every step.
    pub corrections: Corrections,
    /// How the engine batches.
    pub scheduler: Scheduler,
    /// How the engine sizes its KV cache.
    pub memory: MemoryRule,
    /// Whose scheduling and KV rules the simulation follows.
    pub engine: Engine,
    /// Speculative decoding and prefix caching.
    pub features: EngineFeatures<'a>,
}

/// A scenario, a workload and a benchmark client, ready to predict any load by simulation; step times are
/// memoized across loads, so a sweep analyses each step shape once.
#[derive(Debug)]
pub struct ServingModel<'a> {
    scenario: ServingScenario<'a>,
    workload: ServingWorkload,
    budget: MemoryBudget,
    client: BenchClient,
    cost: sim::StepCost<'a>,
    draft: Option<sim::StepCost<'a>>,
    /// Throughput with the queue never empty (requests/s), once simulated.
    saturation: Option<f64>,
}

impl<'a> ServingModel<'a> {
    /// Checks the scenario and sizes the memory.
    ///
    /// # Errors
    /// - [`Error::InvalidInput`] from [`ServingWorkload::check`], [`Scheduler::check`],
    ///   [`roofline_analysis::memory::memory_budget`], or a whole prompt longer than the token budget when prefill is not
    ///   chunked.
    /// - [`Error::Unsupported`] when the device lacks a format of the config (naming the architecture).
    pub fn new(scenario: ServingScenario<'a>, workload: ServingWorkload) -> Result<ServingModel<'a>, Error> {
        workload.check()?;
        scenario.scheduler.check()?;
        if let Scheduler::InFlight(f) = scenario.scheduler
            && !f.chunked_prefill
            && workload.isl > f.token_budget
        {
            return Err(Error::InvalidInput(format!(
                "isl ({}) exceeds the token budget ({}) and prefill is not chunked: the prompt never fits a step",
                workload.isl, f.token_budget
            )));
        }
        scenario.config.check_support(scenario.hardware)?;
        scenario.features.check()?;
        let budget = memory_budget(
            scenario.hardware,
            scenario.model,
            scenario.config,
            &scenario.parallelism,
            &scenario.memory,
            workload.sequence_tokens(),
        )?;
        let draft = scenario
            .features
            .draft_model
            .map(|model| sim::StepCost::new(ServingScenario { model, ..scenario }));
        Ok(ServingModel {
            scenario,
            workload,
            budget,
            client: BenchClient::default(),
            cost: sim::StepCost::new(scenario),
            draft,
            saturation: None,
        })
    }

    /// This model with `client` sending the requests (`vllm bench serve`'s rules by default).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] from [`BenchClient::check`].
    pub fn with_client(mut self, client: BenchClient) -> Result<ServingModel<'a>, Error> {
        client.check()?;
        self.client = client;
        self.saturation = None;
        Ok(self)
    }

    /// The benchmark client.
    #[must_use]
    pub fn client(&self) -> &BenchClient {
        &self.client
    }

    /// The scenario.
    #[must_use]
    pub fn scenario(&self) -> &ServingScenario<'a> {
        &self.scenario
    }

    /// The workload.
    #[must_use]
    pub fn workload(&self) -> ServingWorkload {
        self.workload
    }

    /// One GPU's memory budget: weights, activations, KV cache and the sequences that fit.
    #[must_use]
    pub fn memory(&self) -> &MemoryBudget {
        &self.budget
    }
}
