//! The request-level simulation: the engine's scheduler step by step and the benchmark client request by
//! request, with KV blocks allocated as tokens arrive, preemption, speculative decoding and prefix caching.
//! Events (arrivals, prefill steps, completions, preemptions) are simulated one by one; the decode steps
//! between them are advanced in closed form, so a run costs per event, not per token. Pure and seeded.
//!
//! Its rules and their sources: docs/validation/serving.md.

mod advance;
mod client;
mod cost;
mod plan;
mod speculative;
mod stats;
#[cfg(test)]
pub(crate) mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use roofline_analysis::model::ModelConfig;
use roofline_base::Error;

pub use client::{Arrival, BenchClient, ClientKind, MAX_REQUESTS};
use cost::Chunk;
pub(crate) use cost::StepCost;
pub use speculative::{MAX_DRAFT_TOKENS, SpecDecoding, SpecMethod};
use stats::{Gaps, summarize};
pub use stats::{Percentile, Summary};

use super::{Engine, Load, Scheduler, ServingScenario, ServingWorkload};

/// Engine features beyond batching: speculative decoding and prefix caching.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EngineFeatures<'a> {
    /// Speculative decoding, if on.
    pub speculative: Option<SpecDecoding>,
    /// The draft model of [`SpecMethod::DraftModel`] (the same device, split and precision config).
    pub draft_model: Option<&'a ModelConfig>,
    /// Share of every prompt served from the prefix cache, in [0, 1): the first ⌊h · ISL⌋ tokens (whole
    /// blocks, at least one token left to compute) skip prefill, and their KV is held once for all.
    pub prefix_hit_rate: f64,
}

impl EngineFeatures<'_> {
    /// Checks the speculative settings, that a draft model is given exactly for
    /// [`SpecMethod::DraftModel`], and the hit rate.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field.
    pub fn check(&self) -> Result<(), Error> {
        if let Some(spec) = &self.speculative {
            spec.check()?;
        }
        let wants_draft = self
            .speculative
            .is_some_and(|s| s.method == SpecMethod::DraftModel);
        if wants_draft != self.draft_model.is_some() {
            return Err(Error::InvalidInput(if wants_draft {
                "speculative method draft_model needs a draft model".into()
            } else {
                "a draft model is only used by speculative method draft_model".into()
            }));
        }
        let h = self.prefix_hit_rate;
        if !(0.0..1.0).contains(&h) {
            return Err(Error::InvalidInput(format!(
                "prefix hit rate must be in [0, 1), got {h}"
            )));
        }
        Ok(())
    }
}

/// What a simulated run measured, as the benchmark client reports it (base units).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Run {
    pub ttft: Summary,
    pub tpot: Summary,
    pub itl: Summary,
    pub e2e: Summary,
    /// E2E / OSL per request (InferenceX's normalized interactivity is 1 / its P90).
    pub e2e_per_token: Summary,
    pub completed: u32,
    pub duration_s: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    /// Mean time from send to the first step that scheduled the request.
    pub queue_s: f64,
    pub preemptions: u32,
    /// Engine steps, and events (steps simulated one by one plus closed-form decode spans).
    pub steps: u64,
    pub events: u64,
    /// Time-weighted mean of the requests running.
    pub mean_running: f64,
    /// Mean decode rows of decode-only steps, and of prefill-carrying ones.
    pub decode_rows: f64,
    pub mixed_rows: f64,
    /// Mean prompt tokens of prefill-carrying steps.
    pub prefill_tokens: f64,
    /// Share of steps carrying prompt tokens, and the mean step times.
    pub prefill_step_share: f64,
    pub decode_step_s: f64,
    pub prefill_step_s: f64,
    pub mean_step_s: f64,
    /// Mean context of decode rows over decode-only steps.
    pub decode_context: f64,
    /// Most KV tokens held at once (one GPU's cache, the shared prefix included).
    pub peak_kv_tokens: f64,
    /// Whether memory ever held back a request: admission refused for KV space, or a preemption.
    pub kv_limited: bool,
}

/// How the engine forms its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batching {
    /// vLLM V1: decode rows and prompt chunks in one step, chunked prefill, admission by free blocks,
    /// preemption (recompute) of the last admitted request.
    Vllm,
    /// SGLang: prefill batches as their own steps, admission by its new-token-ratio reserve.
    Sglang,
    /// TensorRT-LLM: whole prompts beside generation rows, admission with the full request reserved.
    TrtLlm,
    /// Static batches: prefill together, decode together, admit again when all finished.
    Static,
}

/// One request.
#[derive(Debug, Clone, Copy)]
struct Req {
    isl: u32,
    osl: u32,
    sent_s: f64,
    /// Prompt tokens served from the prefix cache.
    cached: u32,
    /// Tokens to prefill: the prompt, or the prompt and the output so far after a preemption.
    target: u32,
    /// Of those, computed (the cached ones included).
    computed: u32,
    /// KV tokens held while prefilling (whole blocks).
    held: u32,
    /// Output tokens before the current decode phase.
    generated: u32,
    /// Decode counter when it joined the decode rows, and when it will finish.
    g0: u64,
    done_g: u64,
    /// Bumped on every preemption (stale heap entries are skipped).
    epoch: u32,
    scheduled_s: f64,
    first_token_s: f64,
    last_token_s: f64,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Unsent,
    Waiting,
    Prefilling,
    Decoding,
    Finished,
}

/// The simulation of one run.
struct Sim<'c, 'a> {
    cost: &'c mut StepCost<'a>,
    draft: Option<&'c mut StepCost<'a>>,
    batching: Batching,
    token_budget: u32,
    max_seqs: u32,
    block: u32,
    spec: Option<SpecDecoding>,
    /// Tokens each decode step adds to a decode row (the acceptance length, 1 without speculation).
    alpha: f64,
    width: u32,
    reqs: Vec<Req>,
    /// Closed loop: at most this many requests in flight (sent, unfinished).
    window: Option<u32>,
    next_send: usize,
    in_flight: u32,
    waiting: VecDeque<u32>,
    /// Running requests in admission order; finished or preempted ones are skipped (`live` counts the rest).
    running: Vec<u32>,
    live: u32,
    prefilling: VecDeque<u32>,
    /// The decode rows, aggregated: count, Σ (own KV tokens at their entry − α · g0), Σ cached, Σ OSL −
    /// output at entry.
    rows: u32,
    own_base: f64,
    cached_sum: f64,
    left_base: f64,
    g: u64,
    done: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// Decode rows that joined since the last decode step, by the time of their last token.
    fresh: Vec<(f64, u32)>,
    last_decode_end_s: f64,
    /// KV tokens the requests' own tokens may hold, and the shared prefix held once beside them.
    capacity: f64,
    shared: u32,
    prefill_held: f64,
    /// KV tokens reserved for the running requests' whole prompts and outputs (TensorRT-LLM's
    /// guaranteed-no-evict admission, static batches).
    reserved: f64,
    /// SGLang's new-token ratio: its value at the last reset and the decode counter then.
    ratio_base: f64,
    ratio_g: u64,
    now: f64,
    chunks: Vec<(u32, Chunk)>,
    /// The chunks of the step being run (reused).
    scratch: Vec<Chunk>,
    span_limit: u64,
    acc: Accumulators,
    itl: Gaps,
}

/// Running sums for the run's step statistics.
#[derive(Debug, Default)]
struct Accumulators {
    decode_steps: f64,
    decode_time: f64,
    decode_rows: f64,
    decode_context: f64,
    prefill_steps: f64,
    prefill_time: f64,
    prefill_rows: f64,
    prefill_tokens: f64,
    running_time: f64,
    events: u64,
    preemptions: u32,
    peak_kv: f64,
    kv_limited: bool,
}

/// What one run simulates.
pub(super) struct Inputs<'s, 'a> {
    pub scenario: &'s ServingScenario<'a>,
    /// KV tokens one GPU's cache holds.
    pub kv_tokens: f64,
    pub workload: ServingWorkload,
    pub client: &'s BenchClient,
    pub load: Load,
    /// Most decode steps advanced at once (1: step by step, the reference the spans are checked against).
    pub span_limit: u64,
}

/// Simulates a run: the client's requests at the load through the scenario's engine.
///
/// # Errors
/// A request longer than the KV cache holds (engines refuse such a `max_model_len`), a prompt no step can
/// hold, or a step the analysis refuses.
pub(super) fn simulate<'a>(
    cost: &mut StepCost<'a>,
    draft: Option<&mut StepCost<'a>>,
    inputs: &Inputs<'_, 'a>,
) -> Result<Run, Error> {
    let mut sim = Sim::new(cost, draft, inputs);
    if let Some(r) = sim
        .reqs
        .iter()
        .find(|r| f64::from(r.isl - r.cached + r.osl) > sim.capacity)
    {
        return Err(Error::InvalidInput(format!(
            "a request of {} + {} tokens needs more KV than the cache holds ({:.0} tokens per GPU): the engine \
             refuses a max_model_len it cannot hold",
            r.isl, r.osl, sim.capacity
        )));
    }
    sim.run()?;
    Ok(sim.results())
}

impl<'c, 'a> Sim<'c, 'a> {
    fn new(
        cost: &'c mut StepCost<'a>,
        draft: Option<&'c mut StepCost<'a>>,
        inputs: &Inputs<'_, 'a>,
    ) -> Sim<'c, 'a> {
        let Inputs {
            scenario,
            kv_tokens,
            workload,
            client,
            load,
            span_limit,
        } = *inputs;
        let (batching, token_budget, max_seqs) = match scenario.scheduler {
            Scheduler::Static { max_seqs } => (Batching::Static, scenario.memory.profile_tokens, max_seqs),
            Scheduler::InFlight(f) => (
                match (f.mixed_prefill, f.chunked_prefill) {
                    (false, _) => Batching::Sglang,
                    (true, false) => Batching::TrtLlm,
                    (true, true) => Batching::Vllm,
                },
                f.token_budget,
                f.max_seqs,
            ),
        };
        // KV block sizes: vLLM `block_size` 16 (vllm/config/cache.py), SGLang `page_size` 1
        // (server_args.py), TensorRT-LLM `tokens_per_block` 32 (llmapi/llm_args.py).
        let block = match scenario.engine {
            Engine::Vllm => 16,
            Engine::Sglang => 1,
            Engine::TrtLlm => 32,
        };
        let features = scenario.features;
        let shared = prefix_tokens(workload.isl, features.prefix_hit_rate, block);
        let reqs = client
            .requests(workload, load)
            .into_iter()
            .map(|s| Req {
                isl: s.isl,
                osl: s.osl.max(1),
                sent_s: s.at_s,
                cached: shared.min(s.isl - 1),
                target: s.isl,
                computed: 0,
                held: 0,
                generated: 0,
                g0: 0,
                done_g: 0,
                epoch: 0,
                scheduled_s: f64::NAN,
                first_token_s: f64::NAN,
                last_token_s: f64::NAN,
                state: State::Unsent,
            })
            .collect();
        let spec = features.speculative;
        Sim {
            cost,
            draft,
            batching,
            token_budget,
            max_seqs,
            block,
            spec,
            alpha: spec.map_or(1.0, |s| s.acceptance_length),
            width: spec.map_or(1, |s| s.width()),
            reqs,
            window: match load {
                Load::Concurrency(n) => Some(n),
                Load::Rate(_) => None,
            },
            next_send: 0,
            in_flight: 0,
            waiting: VecDeque::new(),
            running: Vec::new(),
            live: 0,
            prefilling: VecDeque::new(),
            rows: 0,
            own_base: 0.0,
            cached_sum: 0.0,
            left_base: 0.0,
            g: 0,
            done: BinaryHeap::new(),
            fresh: Vec::new(),
            last_decode_end_s: 0.0,
            capacity: (kv_tokens - f64::from(shared)).max(0.0),
            shared,
            prefill_held: 0.0,
            reserved: 0.0,
            ratio_base: SGLANG_INIT_RATIO,
            ratio_g: 0,
            now: 0.0,
            chunks: Vec::new(),
            scratch: Vec::new(),
            span_limit: span_limit.max(1),
            acc: Accumulators::default(),
            itl: Gaps::new(),
        }
    }

    /// Sends what the client sends by now: the next requests while the closed loop's window has room, or
    /// every open-loop request whose time has come.
    fn send(&mut self) {
        while self.next_send < self.reqs.len() {
            let r = &mut self.reqs[self.next_send];
            let due = match self.window {
                Some(n) => self.in_flight < n,
                None => r.sent_s <= self.now,
            };
            if !due {
                return;
            }
            if self.window.is_some() {
                r.sent_s = self.now;
            }
            r.state = State::Waiting;
            self.waiting.push_back(self.next_send as u32);
            self.in_flight += 1;
            self.next_send += 1;
        }
    }

    /// The send time of the next open-loop request, if one is still to come.
    fn next_arrival_s(&self) -> Option<f64> {
        match self.window {
            None => self.reqs.get(self.next_send).map(|r| r.sent_s),
            Some(_) => None,
        }
    }

    fn run(&mut self) -> Result<(), Error> {
        let total = self.reqs.len();
        let mut finished = 0;
        while finished < total {
            self.send();
            let plan = self.plan()?;
            finished += match plan {
                Plan::Idle => {
                    let Some(at) = self.next_arrival_s() else {
                        return Err(Error::InvalidInput(format!(
                            "the simulation stalled with {} requests waiting: none fits the engine (KV cache of \
                             {:.0} tokens, token budget {})",
                            self.waiting.len(),
                            self.capacity,
                            self.token_budget
                        )));
                    };
                    self.now = self.now.max(at);
                    self.ratio_base = SGLANG_INIT_RATIO;
                    self.ratio_g = self.g;
                    0
                }
                Plan::Step { decode } => self.step(decode)?,
                Plan::Decode => self.decode_span()?,
            };
        }
        Ok(())
    }

    fn results(self) -> Run {
        let n = self.reqs.len();
        let (mut ttft, mut e2e, mut tpot, mut per_token) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut queue, mut input_tokens, mut output_tokens) = (0.0, 0.0, 0.0);
        let (mut start, mut end) = (f64::INFINITY, 0.0_f64);
        for r in self.reqs.iter().filter(|r| r.state == State::Finished) {
            ttft.push(r.first_token_s - r.sent_s);
            e2e.push(r.last_token_s - r.sent_s);
            per_token.push((r.last_token_s - r.sent_s) / f64::from(r.osl));
            if r.osl > 1 {
                tpot.push((r.last_token_s - r.first_token_s) / f64::from(r.osl - 1));
            }
            queue += r.scheduled_s - r.sent_s;
            input_tokens += f64::from(r.isl);
            output_tokens += f64::from(r.osl);
            start = start.min(r.sent_s);
            end = end.max(r.last_token_s);
        }
        let completed = e2e.len();
        let a = &self.acc;
        let steps = a.decode_steps + a.prefill_steps;
        let busy = a.decode_time + a.prefill_time;
        let per = |x: f64, n: f64| if n > 0.0 { x / n } else { 0.0 };
        Run {
            ttft: summarize(&mut ttft),
            tpot: summarize(&mut tpot),
            itl: self.itl.summary(),
            e2e: summarize(&mut e2e),
            e2e_per_token: summarize(&mut per_token),
            completed: completed as u32,
            duration_s: end - start,
            input_tokens,
            output_tokens,
            queue_s: per(queue, completed as f64),
            preemptions: a.preemptions,
            steps: steps as u64,
            events: a.events,
            mean_running: per(a.running_time, busy),
            decode_rows: per(a.decode_rows, a.decode_steps),
            mixed_rows: per(a.prefill_rows, a.prefill_steps),
            prefill_tokens: per(a.prefill_tokens, a.prefill_steps),
            prefill_step_share: per(a.prefill_steps, steps),
            decode_step_s: per(a.decode_time, a.decode_steps),
            prefill_step_s: per(a.prefill_time, a.prefill_steps),
            mean_step_s: per(busy, steps),
            decode_context: per(a.decode_context, a.decode_rows),
            peak_kv_tokens: a.peak_kv + f64::from(self.shared),
            kv_limited: a.kv_limited,
        }
    }
}

/// SGLang's initial new-token ratio (`SGLANG_INIT_NEW_TOKEN_RATIO`, python/sglang/srt/environ.py).
const SGLANG_INIT_RATIO: f64 = 0.7;

/// Tokens of an ISL-token prompt served from the prefix cache at hit rate `h`: whole blocks of ⌊h · ISL⌋.
fn prefix_tokens(isl: u32, h: f64, block: u32) -> u32 {
    let tokens = (h * f64::from(isl)).floor() as u32;
    tokens / block * block
}

/// What the scheduler runs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Nothing to run until the next arrival.
    Idle,
    /// One step with the prompt chunks in `Sim::chunks`, and the decode rows when `decode`.
    Step { decode: bool },
    /// Decode rows only, until the next event.
    Decode,
}
