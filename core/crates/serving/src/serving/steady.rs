//! The steady state of a serving engine at a load: a mean-value model built from step times, with nothing
//! fitted. Full derivation with sources: docs/validation/serving.md.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use roofline_analysis::roofline::Bound;
use roofline_base::Error;

use super::{
    InFlight, Load, Regime, Scheduler, ServingModel, ServingOutcome, ServingPoint, StepTime, Unstable,
};

/// Most fixed-point iterations over the step shapes (each costs at most three step analyses).
const MAX_ITERATIONS: usize = 64;

/// Bisection steps for a throughput or rate (relative width 2^-60 of the bracket).
const BISECTIONS: usize = 60;

/// The step shapes of a steady state: decode rows seen by a decoding request, decode rows in a
/// prefill-carrying step, prefill tokens in that step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    decode: u32,
    mixed_decode: u32,
    prefill: u32,
}

/// The step times of a shape.
#[derive(Debug, Clone, Copy)]
struct Times {
    decode: StepTime,
    mixed: StepTime,
    /// The prompt's own prefill steps, from its first chunk to the step that emits its first token.
    own_prefill_s: f64,
}

/// The flow through the engine at one shape.
#[derive(Debug, Clone, Copy)]
struct Flow {
    /// Throughput, requests/s.
    x: f64,
    tpot_s: f64,
    /// Time from arrival at the engine to the first token (no admission queue), s.
    ttft_engine_s: f64,
    /// Waiting inside the engine (for prefill capacity or the prefill queue), s.
    engine_wait_s: f64,
    /// The prefill capacity caps the throughput.
    capped: bool,
}

impl ServingModel<'_> {
    /// The steady state at `load`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a concurrency of 0, a rate that is not positive and finite, a model that
    /// does not fit the device at all (weights and activations leave no KV cache), or a step the analysis
    /// refuses (e.g. more tokens than [`roofline_analysis::ops::MAX_DIM`]).
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
    /// // prefills: far more tokens per GPU, each user a little slower.
    /// assert!(many.output_tokens_per_s_per_gpu > 20.0 * one.output_tokens_per_s_per_gpu);
    /// assert!(many.tpot_s > one.tpot_s);
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
        match (self.scenario.scheduler, load) {
            (_, Load::Concurrency(0)) => Err(Error::InvalidInput("concurrency must be at least 1".into())),
            (_, Load::Rate(rate)) if !(rate.is_finite() && rate > 0.0) => Err(Error::InvalidInput(format!(
                "request rate must be positive and finite, got {rate}"
            ))),
            (Scheduler::InFlight(f), Load::Concurrency(clients)) => {
                self.closed_in_flight(f, clients).map(ServingOutcome::Steady)
            }
            (Scheduler::InFlight(f), Load::Rate(rate)) => self.open_in_flight(f, rate),
            (Scheduler::Static { max_seqs }, Load::Concurrency(clients)) => {
                self.closed_static(max_seqs, clients).map(ServingOutcome::Steady)
            }
            (Scheduler::Static { max_seqs }, Load::Rate(rate)) => self.open_static(max_seqs, rate),
        }
    }

    /// Requests the engine runs at once: max_seqs or the sequences that fit, whichever is smaller.
    fn admission_cap(&self, max_seqs: u32) -> u32 {
        max_seqs.min(self.budget.max_sequences)
    }

    /// Prefill tokens a prefill-carrying step can take: the budget, less its decode rows when mixed.
    fn chunk_capacity(f: &InFlight, mixed_decode: u32) -> u32 {
        if f.mixed_prefill {
            f.token_budget.saturating_sub(mixed_decode).max(1)
        } else {
            f.token_budget
        }
    }

    /// Prefill tokens of a step with capacity `capacity` when `arriving` prompt tokens arrive per step:
    /// min(capacity, max(min(ISL, capacity), arriving)) when chunked; whole prompts otherwise (as many as
    /// arrive, at least one, at most what fits).
    fn prefill_tokens(&self, f: &InFlight, capacity: u32, arriving: f64) -> u32 {
        let isl = self.workload.isl;
        if f.chunked_prefill {
            let least = isl.min(capacity);
            (arriving.round().min(f64::from(capacity)) as u32).max(least)
        } else {
            let most = (capacity / isl).max(1);
            let prompts = ((arriving / f64::from(isl)).round() as u32).clamp(1, most);
            prompts * isl
        }
    }

    /// The shape of `others` decoding requests beside a decoding one, with `arriving` prompt tokens per
    /// step, under an admission cap of `cap`.
    fn shape(&self, f: &InFlight, cap: u32, others: f64, arriving: f64) -> Shape {
        let decode = ((1.0 + others).round() as u32).clamp(1, cap);
        let mixed_decode = if f.mixed_prefill {
            (others.round() as u32).min(cap - 1)
        } else {
            0
        };
        let capacity = Self::chunk_capacity(f, mixed_decode);
        Shape {
            decode,
            mixed_decode,
            prefill: self.prefill_tokens(f, capacity, arriving),
        }
    }

    /// The lightest shape: one decode row, no other decode row beside a prefill, one prompt's chunk.
    fn lightest(&self, f: &InFlight, cap: u32) -> Shape {
        self.shape(f, cap, 0.0, 0.0)
    }

    /// The step times of `shape`, and the prompt's own prefill: its one step, or when chunked over
    /// k = ⌈ISL / c⌉ steps, k − 1 full chunks and the step of the remainder.
    fn times(&mut self, f: &InFlight, shape: Shape) -> Result<Times, Error> {
        let decode = self.step(shape.decode, 0)?;
        let mixed = self.step(shape.mixed_decode, shape.prefill)?;
        let isl = self.workload.isl;
        let capacity = Self::chunk_capacity(f, shape.mixed_decode);
        let own_prefill_s = if f.chunked_prefill && isl > capacity {
            let full_chunks = (isl - 1) / capacity;
            let last = self.step(shape.mixed_decode, isl - full_chunks * capacity)?;
            f64::from(full_chunks) * self.step(shape.mixed_decode, capacity)?.time_s + last.time_s
        } else {
            mixed.time_s
        };
        Ok(Times {
            decode,
            mixed,
            own_prefill_s,
        })
    }

    /// TPOT when `others_prefill` prefill-carrying steps of other requests run per second.
    fn tpot_s(f: &InFlight, others_prefill: f64, t: &Times) -> f64 {
        let (t_d, t_m) = (t.decode.time_s, t.mixed.time_s);
        if f.mixed_prefill {
            // 1 / (m' + (1 − m'·T_m) / T_d), written so that m' = 0 gives T_d exactly.
            t_d / (1.0 - others_prefill * (t_m - t_d))
        } else {
            t_d / (1.0 - others_prefill * t_m)
        }
    }

    /// Mean residual of the step in progress, E[T²] / (2·E[T]), over steps of which `others_prefill` per
    /// second carry prefill.
    fn residual_s(others_prefill: f64, t: &Times) -> f64 {
        let (t_d, t_m) = (t.decode.time_s, t.mixed.time_s);
        let steps_per_s = others_prefill + (1.0 - others_prefill * t_m) / t_d;
        let share = others_prefill / steps_per_s;
        (share * t_m * t_m + (1.0 - share) * t_d * t_d) / (2.0 * (share * t_m + (1.0 - share) * t_d))
    }

    /// Closed loop at one shape: X from Little's law, n = X · (TTFT + (OSL − 1) · TPOT).
    fn closed_flow(&self, f: &InFlight, n: u32, shape: Shape, t: &Times) -> Flow {
        let (isl, osl) = (f64::from(self.workload.isl), f64::from(self.workload.osl));
        let s = f64::from(shape.prefill);
        let t_m = t.mixed.time_s;
        let others = f64::from(n - 1) / f64::from(n);
        let prefill_s = t.own_prefill_s;
        let at = |x: f64| {
            let others_prefill = x * isl / s * others;
            let tpot_s = Self::tpot_s(f, others_prefill, t);
            let residual_s = if n > 1 {
                Self::residual_s(others_prefill, t)
            } else {
                0.0
            };
            (tpot_s, residual_s + prefill_s)
        };
        let in_flight = |x: f64| {
            let (tpot_s, ttft_s) = at(x);
            x * (ttft_s + (osl - 1.0) * tpot_s)
        };
        let x_cap = s / (isl * t_m);
        let n_f = f64::from(n);
        if in_flight(x_cap) <= n_f {
            let (tpot_s, ttft_s) = at(x_cap);
            let ttft_engine_s = n_f / x_cap - (osl - 1.0) * tpot_s;
            return Flow {
                x: x_cap,
                tpot_s,
                ttft_engine_s,
                engine_wait_s: ttft_engine_s - ttft_s,
                capped: true,
            };
        }
        let (mut lo, mut hi) = (0.0, x_cap);
        for _ in 0..BISECTIONS {
            let mid = 0.5 * (lo + hi);
            if in_flight(mid) < n_f {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let x = 0.5 * (lo + hi);
        let (tpot_s, ttft_engine_s) = at(x);
        Flow {
            x,
            tpot_s,
            ttft_engine_s,
            engine_wait_s: 0.0,
            capped: false,
        }
    }

    /// Prefill-carrying steps per second and the mean step at throughput `x`: (m, T̄, f).
    fn step_mix(&self, shape: Shape, t: &Times, x: f64) -> (f64, f64, f64) {
        let m = x * f64::from(self.workload.isl) / f64::from(shape.prefill);
        let steps_per_s = m + ((1.0 - m * t.mixed.time_s) / t.decode.time_s).max(0.0);
        (m, 1.0 / steps_per_s, m / steps_per_s)
    }

    fn closed_in_flight(&mut self, f: InFlight, clients: u32) -> Result<ServingPoint, Error> {
        let n = clients.min(self.admission_cap(f.max_seqs));
        let mut shape = self.lightest(&f, n);
        let mut iterations = 0;
        let (times, flow) = loop {
            // Capped by its prefill capacity, the engine packs more prompt tokens per step: the fewest that
            // keep up with the demand, at most the budget.
            shape = self.densest_needed(&f, shape, |model, shape, times| {
                !model.closed_flow(&f, n, shape, times).capped
            })?;
            let times = self.times(&f, shape)?;
            let flow = self.closed_flow(&f, n, shape, &times);
            let q = flow.x * f64::from(self.workload.osl - 1) * flow.tpot_s / f64::from(n);
            let (_, mean_step_s, _) = self.step_mix(shape, &times, flow.x);
            let arriving = flow.x * f64::from(self.workload.isl) * mean_step_s;
            let next = self.heavier(&f, shape, self.shape(&f, n, f64::from(n - 1) * q, arriving));
            iterations += 1;
            if next == shape || iterations >= MAX_ITERATIONS {
                break (times, flow);
            }
            shape = next;
        };
        let queue_s = f64::from(clients - n) / flow.x;
        let (m, mean_step_s, share) = self.step_mix(shape, &times, flow.x);
        let regime = if clients > n {
            Regime::QueueBound
        } else if flow.capped || m * times.mixed.time_s >= 0.5 {
            Regime::PrefillBound
        } else {
            decode_regime(times.decode.bound)
        };
        Ok(self.point(Parts {
            load: Load::Concurrency(clients),
            concurrency: f64::from(clients),
            admitted: n,
            shape,
            times,
            x: flow.x,
            ttft_s: flow.ttft_engine_s + queue_s,
            tpot_s: flow.tpot_s,
            queue_s: queue_s + flow.engine_wait_s,
            mixed_step_share: share,
            mean_step_s,
            regime,
        }))
    }

    /// Open loop at one shape whose prefill steps keep up with the arrivals: the flow, or why the rate is
    /// unsustainable.
    fn open_flow(
        &mut self,
        f: &InFlight,
        cap: u32,
        rate: f64,
        shape: Shape,
        t: &Times,
    ) -> Result<OpenFlow, Error> {
        let (isl, osl) = (f64::from(self.workload.isl), f64::from(self.workload.osl));
        let capacity = Self::chunk_capacity(f, shape.mixed_decode);
        let full_tokens = if f.chunked_prefill {
            capacity
        } else {
            (capacity / self.workload.isl).max(1) * self.workload.isl
        };
        let full = self.step(shape.mixed_decode, full_tokens)?;
        let service_s = isl * full.time_s / f64::from(full_tokens);
        let rho = rate * service_s;
        if rho >= 1.0 {
            return Ok(OpenFlow::Unstable(format!(
                "prefill utilization ρ = {rho:.2} ≥ 1: {} requests/s of {} prompt tokens need more than the {full_tokens} \
                 tokens per step the engine prefills",
                roofline_base::format::number(rate),
                self.workload.isl
            )));
        }
        let prefill_per_s = rate * isl / f64::from(shape.prefill);
        let wait_s = rho * service_s / (2.0 * (1.0 - rho));
        let tpot_s = Self::tpot_s(f, prefill_per_s, t);
        let prefill_s = t.own_prefill_s;
        let busy = 1.0 - (-rate * (wait_s + prefill_s + (osl - 1.0) * tpot_s)).exp();
        let ttft_engine_s = busy * Self::residual_s(prefill_per_s, t) + wait_s + prefill_s;
        let in_flight = rate * (ttft_engine_s + (osl - 1.0) * tpot_s);
        if in_flight > f64::from(cap) {
            return Ok(OpenFlow::Unstable(format!(
                "{in_flight:.0} requests in flight exceed the {cap} the engine admits (max_seqs {}, KV cache {})",
                f.max_seqs, self.budget.max_sequences
            )));
        }
        Ok(OpenFlow::Steady(Flow {
            x: rate,
            tpot_s,
            ttft_engine_s,
            engine_wait_s: wait_s,
            capped: false,
        }))
    }

    /// The open-loop fixed point at `rate`: its shape, times and flow, or why it is unsustainable.
    fn open_fixed_point(&mut self, f: &InFlight, rate: f64) -> Result<FixedPoint, Error> {
        let cap = self.admission_cap(f.max_seqs);
        let isl = f64::from(self.workload.isl);
        let mut shape = self.lightest(f, cap);
        let mut iterations = 0;
        loop {
            // Prefill steps too small for the arrivals: the fewest tokens per step that keep up.
            shape = self.densest_needed(f, shape, |_, shape, times| {
                rate * isl / f64::from(shape.prefill) * times.mixed.time_s < 1.0
            })?;
            let times = self.times(f, shape)?;
            let flow = match self.open_flow(f, cap, rate, shape, &times)? {
                OpenFlow::Steady(flow) => flow,
                OpenFlow::Unstable(reason) => return Ok(FixedPoint::Unstable(reason)),
            };
            let others = rate * f64::from(self.workload.osl - 1) * flow.tpot_s;
            let (_, mean_step_s, _) = self.step_mix(shape, &times, rate);
            let next = self.heavier(f, shape, self.shape(f, cap, others, rate * isl * mean_step_s));
            iterations += 1;
            if next == shape || iterations >= MAX_ITERATIONS {
                return Ok(FixedPoint::Steady(shape, times, flow));
            }
            shape = next;
        }
    }

    /// `next`, never lighter than `shape`: the iteration climbs from the lightest shape to the least fixed
    /// point, so rounding cannot make it oscillate.
    fn heavier(&self, f: &InFlight, shape: Shape, next: Shape) -> Shape {
        let mixed_decode = next.mixed_decode.max(shape.mixed_decode);
        Shape {
            decode: next.decode.max(shape.decode),
            mixed_decode,
            prefill: next.prefill.max(shape.prefill).min(self.prefill_tokens(
                f,
                Self::chunk_capacity(f, mixed_decode),
                f64::INFINITY,
            )),
        }
    }

    /// `shape` with the fewest prefill tokens per step (from its own up to the chunk capacity, by
    /// bisection) at which `keeps_up` holds; the capacity when none does.
    fn densest_needed(
        &mut self,
        f: &InFlight,
        shape: Shape,
        keeps_up: impl Fn(&Self, Shape, &Times) -> bool,
    ) -> Result<Shape, Error> {
        let with = |prefill: u32| Shape { prefill, ..shape };
        let times = self.times(f, shape)?;
        if keeps_up(self, shape, &times) {
            return Ok(shape);
        }
        let isl = self.workload.isl;
        let most = self.prefill_tokens(f, Self::chunk_capacity(f, shape.mixed_decode), f64::INFINITY);
        // Whole prompts when prefill is not chunked: search in prompts, not tokens.
        let unit = if f.chunked_prefill { 1 } else { isl };
        let (mut lo, mut hi) = (shape.prefill / unit, most / unit);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            let candidate = with(mid * unit);
            let times = self.times(f, candidate)?;
            if keeps_up(self, candidate, &times) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(with(hi * unit))
    }

    fn open_in_flight(&mut self, f: InFlight, rate: f64) -> Result<ServingOutcome, Error> {
        let (shape, times, flow) = match self.open_fixed_point(&f, rate)? {
            FixedPoint::Steady(shape, times, flow) => (shape, times, flow),
            FixedPoint::Unstable(reason) => {
                let mut lo = 0.0;
                let mut hi = rate;
                for _ in 0..BISECTIONS {
                    let mid = 0.5 * (lo + hi);
                    if matches!(self.open_fixed_point(&f, mid)?, FixedPoint::Steady(..)) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                return Ok(ServingOutcome::Unstable(self.unstable(rate, lo, reason)));
            }
        };
        let (m, mean_step_s, share) = self.step_mix(shape, &times, rate);
        let e2e_s = flow.ttft_engine_s + f64::from(self.workload.osl - 1) * flow.tpot_s;
        let concurrency = rate * e2e_s;
        let regime = if m * times.mixed.time_s >= 0.5 {
            Regime::PrefillBound
        } else {
            decode_regime(times.decode.bound)
        };
        Ok(ServingOutcome::Steady(self.point(Parts {
            load: Load::Rate(rate),
            concurrency,
            admitted: (concurrency.ceil() as u32).clamp(1, self.budget.max_sequences),
            shape,
            times,
            x: rate,
            ttft_s: flow.ttft_engine_s,
            tpot_s: flow.tpot_s,
            queue_s: flow.engine_wait_s,
            mixed_step_share: share,
            mean_step_s,
            regime,
        })))
    }

    fn unstable(&self, rate: f64, max_sustainable_rate: f64, reason: String) -> Unstable {
        Unstable {
            config: self.scenario.config.key.clone(),
            gpus: self.scenario.parallelism.gpus(),
            rate,
            max_sustainable_rate,
            reason,
        }
    }

    fn point(&self, p: Parts) -> ServingPoint {
        let s = &self.scenario;
        let gpus = s.parallelism.gpus();
        let (isl, osl) = (f64::from(self.workload.isl), f64::from(self.workload.osl));
        let b = &self.budget;
        ServingPoint {
            hardware: s.hardware.key.clone(),
            model: s.model.key.clone(),
            config: s.config.key.clone(),
            mode: roofline_base::Mode::of(s.hardware),
            parallelism: s.parallelism,
            gpus,
            workload: self.workload,
            load: p.load,
            concurrency: p.concurrency,
            admitted: p.admitted,
            decode_batch: p.shape.decode,
            mixed_decode_rows: p.shape.mixed_decode,
            prefill_tokens_per_step: p.shape.prefill,
            mixed_step_share: p.mixed_step_share,
            decode_step_s: p.times.decode.time_s,
            mixed_step_s: p.times.mixed.time_s,
            mean_step_s: p.mean_step_s,
            ttft_s: p.ttft_s,
            tpot_s: p.tpot_s,
            e2e_s: p.ttft_s + (osl - 1.0) * p.tpot_s,
            queue_s: p.queue_s,
            requests_per_s: p.x,
            output_tokens_per_s_per_gpu: p.x * osl / f64::from(gpus),
            input_output_tokens_per_s_per_gpu: p.x * (isl + osl) / f64::from(gpus),
            tokens_per_s_per_user: 1.0 / p.tpot_s,
            weight_bytes_per_gpu: b.weight_bytes,
            kv_cache_bytes_per_gpu: f64::from(p.admitted) * b.kv_bytes_per_sequence,
            activation_bytes_per_gpu: b.activation_bytes,
            memory_used_bytes_per_gpu: b.used_bytes(p.admitted),
            max_concurrency: b.max_sequences,
            fits: p.concurrency <= f64::from(b.max_sequences),
            regime: p.regime,
            pareto: false,
        }
    }
}

/// The open-loop fixed point at a rate: its shape, step times and flow, or why the rate is unsustainable.
enum FixedPoint {
    Steady(Shape, Times, Flow),
    Unstable(String),
}

/// The open loop at one shape.
enum OpenFlow {
    /// A steady flow.
    Steady(Flow),
    /// The rate is unsustainable, and why.
    Unstable(String),
}

/// The pieces of a point, before the per-GPU and memory figures.
struct Parts {
    load: Load,
    concurrency: f64,
    admitted: u32,
    shape: Shape,
    times: Times,
    x: f64,
    ttft_s: f64,
    tpot_s: f64,
    queue_s: f64,
    mixed_step_share: f64,
    mean_step_s: f64,
    regime: Regime,
}

fn decode_regime(bound: Bound) -> Regime {
    match bound {
        Bound::Compute => Regime::ComputeBoundDecode,
        Bound::Interconnect => Regime::CommunicationBoundDecode,
        _ => Regime::MemoryBoundDecode,
    }
}

mod static_batching;
#[cfg(test)]
mod tests;
