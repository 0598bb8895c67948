//! The serving model: what a continuous-batching engine delivers at an operating point, built from the
//! engine's steps ([`roofline_analysis::analysis::analyze_step`]) and its memory rule ([`roofline_analysis::memory::memory_budget`]), with nothing
//! fitted.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

mod engine;
mod launch;
mod layouts;
mod metrics;
#[cfg(test)]
mod properties;
mod sizing;
mod steady;
mod support;
mod sweep;

use std::collections::BTreeMap;

use roofline_analysis::analysis::{StepBatch, analyze_step};
use roofline_analysis::corrections::Corrections;
use roofline_analysis::memory::{MemoryBudget, MemoryRule, memory_budget};
use roofline_analysis::model::ModelConfig;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::QuantConfig;
use roofline_analysis::roofline::Bound;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;

pub use engine::{Engine, EnginePreset, InFlight, Scheduler, SchedulerKind};
pub use launch::{LaunchArg, LaunchCommand, LaunchPlan, launch_plan, model_id};
pub use layouts::{LAYOUT_GPUS, layout_name, layouts};
pub use metrics::{METRICS, MetricDefinition, Regime, ServingOutcome, ServingPoint, Unstable};
pub use sizing::{Alternative, GpuCountBest, NotServed, Sizing, SizingSpec, SlaLimit};
pub use support::{
    EngineSupport, Scheme, Unserved, engine_support, engines_running, kv_cache_dtype, matrices_cover,
    runs_scheme, schemes, serves,
};
pub use sweep::{
    CONCURRENCY_GRID, ConfigFit, Sla, SlaOutcome, SlaPick, Sweep, SweepSpec, UnsupportedConfig,
    concurrency_grid, sweep,
};

/// The requests of a serving workload: every request has the same prompt and output length.
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
    /// Open loop: Poisson arrivals at this many requests per second.
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
}

/// The time of one step and the roof that bounds most of it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StepTime {
    time_s: f64,
    bound: Bound,
}

/// A scenario and a workload, ready to predict any load; step times are memoized per (decode rows, prefill
/// tokens), so a sweep over loads analyses each distinct step once.
#[derive(Debug)]
pub struct ServingModel<'a> {
    scenario: ServingScenario<'a>,
    workload: ServingWorkload,
    budget: MemoryBudget,
    steps: BTreeMap<(u32, u32), StepTime>,
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
        let budget = memory_budget(
            scenario.hardware,
            scenario.model,
            scenario.config,
            &scenario.parallelism,
            &scenario.memory,
            workload.sequence_tokens(),
        )?;
        Ok(ServingModel {
            scenario,
            workload,
            budget,
            steps: BTreeMap::new(),
        })
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

    /// The step of `decode_rows` decode rows over the mean context ISL + OSL/2, plus `prefill_tokens` prompt
    /// tokens as whole prompts where they hold one (⌈tokens / ISL⌉ sequences of an equal chunk), or one
    /// chunk of a longer prompt over the mean prior context of its chunks, (ISL − chunk) / 2. Every prefill
    /// sequence is counted as completing (one logits row each): exact for whole prompts, one extra row for
    /// a chunk that does not end its prompt.
    fn step_batch(&self, decode_rows: u32, prefill_tokens: u32) -> StepBatch {
        let isl = self.workload.isl;
        let prefill_seqs = prefill_tokens.div_ceil(isl);
        let prefill_chunk = prefill_tokens.div_ceil(prefill_seqs.max(1));
        StepBatch {
            decode_seqs: decode_rows,
            decode_context: if decode_rows > 0 {
                isl + self.workload.osl / 2
            } else {
                0
            },
            prefill_seqs,
            prefill_chunk,
            prefill_prior: if prefill_seqs > 0 {
                (isl - prefill_chunk) / 2
            } else {
                0
            },
            prefill_completing: prefill_seqs,
        }
    }

    /// The time of the step of [`ServingModel::step_batch`], analysed once per distinct step.
    fn step(&mut self, decode_rows: u32, prefill_tokens: u32) -> Result<StepTime, Error> {
        if let Some(t) = self.steps.get(&(decode_rows, prefill_tokens)) {
            return Ok(*t);
        }
        let s = &self.scenario;
        let analysis = analyze_step(
            s.hardware,
            s.model,
            s.config,
            &self.step_batch(decode_rows, prefill_tokens),
            &s.parallelism,
            &s.corrections,
        )?;
        let t = StepTime {
            time_s: analysis.total_time_s,
            bound: analysis.bound,
        };
        self.steps.insert((decode_rows, prefill_tokens), t);
        Ok(t)
    }
}
