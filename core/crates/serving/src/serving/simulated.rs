//! A load's operating point from the simulation: the run the benchmark client would report, per GPU and
//! with what limited it; an open-loop rate above what the engine sustains is `Unstable`.

use roofline_analysis::roofline::Bound;
use roofline_base::Error;

use super::sim::{self, Run};
use super::{Load, Regime, Scheduler, ServingModel, ServingOutcome, ServingPoint, Unstable};

/// Requests of the closed loop that measures the saturation throughput: at least this many, and ten per
/// client.
const SATURATION_REQUESTS: u32 = 1000;

impl ServingModel<'_> {
    /// KV tokens one GPU's cache holds (its bytes over one token's bytes at the workload's length).
    pub(super) fn kv_tokens(&self) -> f64 {
        let b = &self.budget;
        b.kv_cache_bytes / (b.kv_bytes_per_sequence / b.sequence_tokens as f64)
    }

    /// Simulates one run of the client at `load` (`span_limit` 1: every decode step on its own).
    pub(super) fn run(&mut self, load: Load, span_limit: u64) -> Result<Run, Error> {
        let kv_tokens = self.kv_tokens();
        sim::simulate(
            &mut self.cost,
            self.draft.as_mut(),
            &sim::Inputs {
                scenario: &self.scenario,
                kv_tokens,
                workload: self.workload,
                client: &self.client,
                load,
                span_limit,
            },
        )
    }

    /// The most requests per second the engine completes with its queue never empty: a closed loop at its
    /// admission limit (`max_seqs`), simulated once.
    fn saturation(&mut self) -> Result<f64, Error> {
        if let Some(x) = self.saturation {
            return Ok(x);
        }
        let n = self.scenario.scheduler.max_seqs();
        let client = self.client;
        self.client.requests = Some(n.saturating_mul(10).clamp(SATURATION_REQUESTS, sim::MAX_REQUESTS));
        let run = self.run(Load::Concurrency(n), u64::MAX);
        self.client = client;
        let run = run?;
        let x = f64::from(run.completed) / run.duration_s;
        self.saturation = Some(x);
        Ok(x)
    }

    /// The operating point at `load`: the simulated run of the benchmark client (see [`super::sim`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a concurrency of 0, a rate that is not positive and finite, a model that
    /// does not fit the device at all (weights and activations leave no KV cache), a prompt no step can
    /// hold, or a step the analysis refuses (e.g. more tokens than [`roofline_analysis::ops::MAX_DIM`]).
    ///
    /// # Examples
    /// ```
    /// use roofline_base::*;
    /// use roofline_analysis::*;
    /// use roofline_serving::*;
    /// let h100 = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    /// let model = find_model("llama-3.1-8b").unwrap();
    /// let bf16 = find_quant_config("bf16").unwrap();
    /// let vllm = Engine::Vllm.preset(h100, &Parallelism::SINGLE);
    /// let scenario = vllm.scenario(
    ///     h100, model, bf16, Parallelism::SINGLE, Corrections::REALISTIC, SchedulerKind::InFlight,
    /// );
    /// let mut serving = ServingModel::new(scenario, ServingWorkload { isl: 1024, osl: 1024 }).unwrap();
    /// let one = serving.predict(Load::Concurrency(1)).unwrap().steady().unwrap();
    /// let many = serving.predict(Load::Concurrency(64)).unwrap().steady().unwrap();
    /// // One user alone decodes at the isolated decode step; 64 share the weights' reads and each other's
    /// // prefills: far more tokens per GPU, each user a little slower, and the TTFT tail longer.
    /// assert!(many.output_tokens_per_s_per_gpu > 20.0 * one.output_tokens_per_s_per_gpu);
    /// assert!(many.tpot_s > one.tpot_s && many.ttft_p99_s > many.ttft_p50_s);
    /// assert_eq!(serving.memory().max_sequences, 225);
    /// ```
    pub fn predict(&mut self, load: Load) -> Result<ServingOutcome, Error> {
        if !self.budget.fits() {
            let b = &self.budget;
            return Err(Error::InvalidInput(format!(
                "{} in {} does not fit one {} per GPU: {:.1} GB of weights and {:.1} GB of activations leave no KV cache",
                self.scenario.model.key,
                self.scenario.config.key,
                self.scenario.hardware.key,
                b.weight_bytes / 1e9,
                b.activation_bytes / 1e9
            )));
        }
        match load {
            Load::Concurrency(0) => return Err(Error::InvalidInput("concurrency must be at least 1".into())),
            Load::Rate(rate) if !(rate.is_finite() && rate > 0.0) => {
                return Err(Error::InvalidInput(format!(
                    "request rate must be positive and finite, got {rate}"
                )));
            }
            Load::Rate(rate) => {
                let most = self.saturation()?;
                if rate >= most {
                    return Ok(ServingOutcome::Unstable(Unstable {
                        config: self.scenario.config.key.clone(),
                        gpus: self.scenario.parallelism.gpus(),
                        rate,
                        max_sustainable_rate: most,
                        reason: format!(
                            "{} requests/s exceed the {} the engine completes with its queue never empty",
                            roofline_base::format::number(rate),
                            roofline_base::format::number(most)
                        ),
                    }));
                }
            }
            Load::Concurrency(_) => {}
        }
        let run = self.run(load, u64::MAX)?;
        let bound = self
            .cost
            .decode_bound(run.decode_rows.round() as u32, run.decode_context)?;
        Ok(ServingOutcome::Steady(self.point_of(load, &run, bound)))
    }

    fn point_of(&self, load: Load, run: &Run, decode_bound: Bound) -> ServingPoint {
        let s = &self.scenario;
        let gpus = s.parallelism.gpus();
        let b = &self.budget;
        let per_s = |x: f64| x / run.duration_s;
        let concurrency = match load {
            Load::Concurrency(n) => f64::from(n),
            Load::Rate(r) => r * run.e2e.mean,
        };
        let max_running = match s.scheduler {
            Scheduler::Static { max_seqs } => max_seqs,
            Scheduler::InFlight(f) => f.max_seqs,
        };
        let regime = if run.kv_limited || concurrency > f64::from(max_running) {
            Regime::QueueBound
        } else if run.queue_s > 0.5 * run.ttft.mean
            || run.prefill_step_share * run.prefill_step_s >= 0.5 * run.mean_step_s
        {
            // Prompts wait for the token budget, or prefill takes most of the engine's time.
            Regime::PrefillBound
        } else {
            match decode_bound {
                Bound::Compute => Regime::ComputeBoundDecode,
                Bound::Interconnect => Regime::CommunicationBoundDecode,
                Bound::Memory => Regime::MemoryBoundDecode,
            }
        };
        let kv_bytes_per_token = b.kv_bytes_per_sequence / b.sequence_tokens as f64;
        let kv_bytes = run.peak_kv_tokens * kv_bytes_per_token;
        ServingPoint {
            hardware: s.hardware.key.clone(),
            model: s.model.key.clone(),
            config: s.config.key.clone(),
            mode: roofline_base::Mode::of(s.hardware),
            parallelism: s.parallelism,
            gpus,
            workload: self.workload,
            load,
            concurrency,
            admitted: (run.mean_running.round() as u32).clamp(1, max_running),
            decode_batch: run.decode_rows.round() as u32,
            mixed_decode_rows: run.mixed_rows.round() as u32,
            prefill_tokens_per_step: run.prefill_tokens.round() as u32,
            mixed_step_share: run.prefill_step_share,
            decode_step_s: run.decode_step_s,
            mixed_step_s: run.prefill_step_s,
            mean_step_s: run.mean_step_s,
            ttft_s: run.ttft.mean,
            ttft_p50_s: run.ttft.p50,
            ttft_p90_s: run.ttft.p90,
            ttft_p99_s: run.ttft.p99,
            tpot_s: run.tpot.mean,
            tpot_p50_s: run.tpot.p50,
            tpot_p90_s: run.tpot.p90,
            tpot_p99_s: run.tpot.p99,
            itl_s: run.itl.mean,
            itl_p50_s: run.itl.p50,
            itl_p90_s: run.itl.p90,
            itl_p99_s: run.itl.p99,
            e2e_s: run.e2e.mean,
            e2e_p50_s: run.e2e.p50,
            e2e_p90_s: run.e2e.p90,
            e2e_p99_s: run.e2e.p99,
            normalized_interactivity: 1.0 / run.e2e_per_token.p90,
            queue_s: run.queue_s,
            requests_per_s: per_s(f64::from(run.completed)),
            output_tokens_per_s_per_gpu: per_s(run.output_tokens) / f64::from(gpus),
            input_output_tokens_per_s_per_gpu: per_s(run.input_tokens + run.output_tokens) / f64::from(gpus),
            tokens_per_s_per_user: 1.0 / run.tpot.mean,
            weight_bytes_per_gpu: b.weight_bytes,
            kv_cache_bytes_per_gpu: kv_bytes,
            activation_bytes_per_gpu: b.activation_bytes,
            memory_used_bytes_per_gpu: b.weight_bytes + b.activation_bytes + kv_bytes,
            max_concurrency: b.max_sequences,
            fits: !run.kv_limited,
            regime,
            pareto: false,
            requests: run.completed,
            duration_s: run.duration_s,
            preemptions: run.preemptions,
            simulated_steps: run.steps,
            simulated_events: run.events,
        }
    }
}
