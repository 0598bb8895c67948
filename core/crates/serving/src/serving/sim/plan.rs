//! What each engine schedules next: the rules of vLLM V1, SGLang, TensorRT-LLM and static batching, each
//! cited to the engine's source, with the KV accounting they admit and preempt by.

use roofline_base::Error;

use super::cost::Chunk;
use super::{Batching, Plan, Req, SGLANG_INIT_RATIO, Sim, State};

/// SGLang's floor of the new-token ratio: `SGLANG_INIT_NEW_TOKEN_RATIO` 0.7 × `…_MIN_NEW_TOKEN_RATIO_FACTOR`
/// 0.14 (python/sglang/srt/environ.py; `Scheduler.init_schedule_policy`).
const SGLANG_MIN_RATIO: f64 = SGLANG_INIT_RATIO * 0.14;

/// SGLang's decay of the ratio per decode step: (init − min) / `SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS` (600).
const SGLANG_RATIO_DECAY: f64 = (SGLANG_INIT_RATIO - SGLANG_MIN_RATIO) / 600.0;

/// SGLang's cap on the output tokens one request reserves (`SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION`).
const SGLANG_CLIP_NEW_TOKENS: u32 = 4096;

/// Decode steps SGLang assumes each running request still needs after a retraction
/// (`SGLANG_RETRACT_DECODE_STEPS`, `ScheduleBatch.retract_decode`).
const SGLANG_RETRACT_STEPS: f64 = 20.0;

impl Sim<'_, '_> {
    /// Σ own KV tokens of the decode rows at decode counter `g`.
    pub(super) fn own_at(&self, g: u64) -> f64 {
        self.own_base + self.alpha * f64::from(self.rows) * g as f64
    }

    /// Mean context of the decode rows at decode counter `g`.
    pub(super) fn context_at(&self, g: u64) -> f64 {
        if self.rows == 0 {
            return 0.0;
        }
        (self.own_at(g) + self.cached_sum) / f64::from(self.rows)
    }

    /// KV tokens a decode step at counter `g` needs: the prefills' blocks, every decode row's tokens with
    /// half a block of rounding on average, and k lookahead slots per row under speculation.
    pub(super) fn kv_need_at(&self, g: u64) -> f64 {
        let rows = f64::from(self.rows);
        self.prefill_held
            + self.own_at(g)
            + rows * (f64::from(self.block) - 1.0) / 2.0
            + rows * f64::from(self.width - 1)
    }

    /// A request's whole remaining KV: prompt (less the cache hit) and output.
    fn full(r: &Req) -> f64 {
        f64::from(r.target - r.cached + r.osl - r.generated)
    }

    fn blocks(&self, tokens: u32) -> u32 {
        tokens.div_ceil(self.block) * self.block
    }

    /// Extra KV tokens request `id` needs for `chunk` more prompt tokens.
    fn chunk_need(&self, id: u32, chunk: u32) -> f64 {
        let r = &self.reqs[id as usize];
        f64::from(self.blocks(r.computed.max(r.cached) + chunk - r.cached) - r.held)
    }

    fn chunk_fits(&self, id: u32, chunk: u32) -> bool {
        self.kv_need_at(self.g) + self.chunk_need(id, chunk) <= self.capacity
    }

    /// Schedules `chunk` prompt tokens of `id` in this step: allocates their blocks and records the chunk.
    fn take_chunk(&mut self, id: u32, chunk: u32) {
        let need = self.chunk_need(id, chunk);
        let r = &mut self.reqs[id as usize];
        let prior = r.computed;
        r.computed += chunk;
        r.held += need as u32;
        self.prefill_held += need;
        self.chunks.push((id, Chunk { tokens: chunk, prior }));
    }

    /// Moves `id`, the head of the waiting queue (as the caller read it), into the running requests.
    fn admit(&mut self, id: u32) {
        let head = self.waiting.pop_front();
        debug_assert_eq!(head, Some(id), "admit takes the head of the waiting queue");
        let now = self.now;
        let r = &mut self.reqs[id as usize];
        r.state = State::Prefilling;
        r.computed = r.cached;
        if r.scheduled_s.is_nan() {
            r.scheduled_s = now;
        }
        self.reserved += Self::full(r);
        self.running.push(id);
        self.live += 1;
        self.prefilling.push_back(id);
    }

    /// Preempts the last admitted running request (vLLM V1 `Scheduler.schedule`: `self.running.pop()`;
    /// SGLang's `retract_decode` takes the request with the least output, the newest): frees its KV and
    /// returns it to the front of the waiting queue to be recomputed, prompt and output so far. Returns
    /// false when nothing runs.
    pub(super) fn preempt_last(&mut self) -> bool {
        while let Some(id) = self.running.pop() {
            let r = self.reqs[id as usize];
            match r.state {
                State::Prefilling => {
                    self.prefilling.retain(|&p| p != id);
                    self.prefill_held -= f64::from(r.held);
                }
                State::Decoding => {
                    self.leave_decode(id);
                    let out =
                        (f64::from(r.generated + 1) + self.alpha * (self.g - r.g0) as f64).floor() as u32;
                    let r = &mut self.reqs[id as usize];
                    r.generated = out.min(r.osl - 1);
                    r.target = r.isl + r.generated;
                }
                _ => continue,
            }
            self.reserved -= Self::full(&r);
            let r = &mut self.reqs[id as usize];
            (r.held, r.computed, r.state) = (0, 0, State::Waiting);
            r.epoch += 1;
            self.waiting.push_front(id);
            self.live -= 1;
            self.acc.preemptions += 1;
            self.acc.kv_limited = true;
            return true;
        }
        false
    }

    /// Preempts until the decode rows' next step fits the cache.
    fn make_room(&mut self) -> bool {
        let mut preempted = false;
        while self.rows > 0 && self.kv_need_at(self.g) > self.capacity && self.preempt_last() {
            preempted = true;
        }
        preempted
    }

    pub(super) fn plan(&mut self) -> Result<Plan, Error> {
        self.chunks.clear();
        match self.batching {
            Batching::Vllm | Batching::TrtLlm => self.plan_mixed(),
            Batching::Sglang => self.plan_sglang(),
            Batching::Static => self.plan_static(),
        }
    }

    fn after_planning(&self) -> Plan {
        match (self.chunks.is_empty(), self.rows) {
            (false, rows) => Plan::Step { decode: rows > 0 },
            (true, 0) => Plan::Idle,
            (true, _) => Plan::Decode,
        }
    }

    /// vLLM V1 (`vllm/v1/core/sched/scheduler.py` `Scheduler.schedule`): running requests first, each decode
    /// row 1 + k tokens of the `max_num_batched_tokens` budget, then partial prefills in admission order;
    /// when blocks run out the last admitted request is preempted, and no waiting request is admitted in a
    /// step that preempted. Waiting requests follow first come, first served, while the budget lasts and
    /// fewer than `max_num_seqs` run, each prompt chunked to what the budget leaves and admitted only when
    /// `KVCacheManager.allocate_slots` finds its blocks.
    ///
    /// TensorRT-LLM (`tensorrt_llm/_torch/pyexecutor/scheduler.py`): the capacity scheduler's default
    /// `GUARANTEED_NO_EVICT` admits a request only when its whole prompt and output fit beside every running
    /// request's, and the micro-batch scheduler adds whole context requests while `max_num_tokens` holds
    /// them (no chunking by default), generation requests first.
    fn plan_mixed(&mut self) -> Result<Plan, Error> {
        let vllm = self.batching == Batching::Vllm;
        let mut preempted = vllm && self.make_room();
        let mut budget = i64::from(self.token_budget) - i64::from(self.rows * self.width);
        let mut i = 0;
        while i < self.prefilling.len() && budget > 0 {
            let id = self.prefilling[i];
            let r = self.reqs[id as usize];
            let chunk = (r.target - r.computed).min(budget as u32);
            while vllm && !self.chunk_fits(id, chunk) && self.preempt_last() {
                preempted = true;
            }
            if self.reqs[id as usize].state != State::Prefilling {
                continue;
            }
            self.take_chunk(id, chunk);
            budget -= i64::from(chunk);
            i += 1;
        }
        while !preempted && budget > 0 && self.live < self.max_seqs {
            let Some(&id) = self.waiting.front() else { break };
            let r = self.reqs[id as usize];
            let remaining = r.target - r.cached;
            let chunk = if vllm {
                remaining.min(budget as u32)
            } else if i64::from(remaining) > budget {
                if remaining > self.token_budget {
                    return Err(whole_prompt_error(remaining, self.token_budget));
                }
                break;
            } else {
                remaining
            };
            let admits = if vllm {
                self.kv_need_at(self.g) + f64::from(self.blocks(chunk)) <= self.capacity
            } else {
                self.reserved + Self::full(&r) <= self.capacity
            };
            if !admits {
                self.acc.kv_limited = true;
                break;
            }
            self.admit(id);
            self.take_chunk(id, chunk);
            budget -= i64::from(chunk);
        }
        Ok(self.after_planning())
    }

    /// SGLang's new-token ratio at the current decode counter: decayed per decode step from its last reset
    /// to the floor (`Scheduler.update_running_batch`).
    fn sglang_ratio(&self) -> f64 {
        (self.ratio_base - SGLANG_RATIO_DECAY * (self.g - self.ratio_g) as f64).max(SGLANG_MIN_RATIO)
    }

    /// SGLang's `PrefillAdder.rem_total_tokens`: free tokens less each running request's remaining output
    /// (clipped to 4096) × the new-token ratio, and the partial prompts still to come.
    fn sglang_room(&self) -> f64 {
        let ratio = self.sglang_ratio();
        let rows = f64::from(self.rows);
        let left = (self.left_base - self.alpha * rows * self.g as f64)
            .min(f64::from(SGLANG_CLIP_NEW_TOKENS) * rows);
        let prefills: f64 = self
            .prefilling
            .iter()
            .map(|&id| {
                let r = &self.reqs[id as usize];
                f64::from(r.target - r.computed)
                    + ratio * f64::from((r.osl - r.generated).min(SGLANG_CLIP_NEW_TOKENS))
            })
            .sum();
        self.capacity - self.kv_need_at(self.g) - ratio * left.max(0.0) - prefills
    }

    /// SGLang (`python/sglang/srt/managers/scheduler.py` `get_next_batch_to_run`, `schedule_policy.py`
    /// `PrefillAdder`): whenever a prefill batch can be formed it runs as its own step and decoding pauses
    /// (`enable_mixed_chunk` off). The batch takes the partial prompt first, then waiting requests first
    /// come, first served while `chunked_prefill_size` tokens last and fewer than `max_running_requests`
    /// run; a request is admitted only when its prompt and min(output, 4096) tokens fit the room
    /// [`Self::sglang_room`] leaves, and a prompt longer than the budget left is chunked and ends the batch.
    /// With no prefill batch, all decode rows step; a step that does not fit retracts the newest requests
    /// and resets the ratio to (output so far + 20 · rows) / (Σ output + 1).
    fn plan_sglang(&mut self) -> Result<Plan, Error> {
        let mut budget = self.token_budget;
        let mut i = 0;
        while i < self.prefilling.len() && budget > 0 {
            let id = self.prefilling[i];
            let r = self.reqs[id as usize];
            let chunk = (r.target - r.computed).min(budget);
            self.take_chunk(id, chunk);
            budget -= chunk;
            i += 1;
        }
        let mut offset = 0.0;
        while budget > 0 && self.live < self.max_seqs {
            let Some(&id) = self.waiting.front() else { break };
            let r = self.reqs[id as usize];
            let remaining = r.target - r.cached;
            let need = f64::from(remaining) + f64::from((r.osl - r.generated).min(SGLANG_CLIP_NEW_TOKENS));
            if need >= self.sglang_room() - offset {
                self.acc.kv_limited = true;
                break;
            }
            offset += need;
            self.admit(id);
            let chunk = remaining.min(budget);
            self.take_chunk(id, chunk);
            budget -= chunk;
            if chunk < remaining {
                break;
            }
        }
        if !self.chunks.is_empty() {
            return Ok(Plan::Step { decode: false });
        }
        if self.make_room() {
            let rows = f64::from(self.rows);
            let left = (self.left_base - self.alpha * rows * self.g as f64).max(0.0);
            let total = self.total_output();
            self.ratio_base = ((total - left + SGLANG_RETRACT_STEPS * rows) / (total + 1.0)).min(1.0);
            self.ratio_g = self.g;
        }
        Ok(self.after_planning())
    }

    /// Σ OSL of the decode rows.
    fn total_output(&self) -> f64 {
        self.running
            .iter()
            .filter(|&&id| self.reqs[id as usize].state == State::Decoding)
            .map(|&id| f64::from(self.reqs[id as usize].osl))
            .sum()
    }

    /// Static batching: when nothing runs, a batch of waiting requests (at most `max_seqs`, their prompts
    /// within the profiled token budget, at least one, and their whole KV reserved) is prefilled in one
    /// step and decoded until every one finishes.
    fn plan_static(&mut self) -> Result<Plan, Error> {
        if self.live > 0 {
            return Ok(self.after_planning());
        }
        let mut tokens = 0;
        while self.live < self.max_seqs {
            let Some(&id) = self.waiting.front() else { break };
            let r = self.reqs[id as usize];
            let remaining = r.target - r.cached;
            if self.live > 0 && tokens + remaining > self.token_budget {
                break;
            }
            if self.reserved + Self::full(&r) > self.capacity {
                self.acc.kv_limited = true;
                break;
            }
            self.admit(id);
            self.take_chunk(id, remaining);
            tokens += remaining;
        }
        Ok(self.after_planning())
    }
}

fn whole_prompt_error(tokens: u32, budget: u32) -> Error {
    Error::InvalidInput(format!(
        "a prompt of {tokens} tokens exceeds the token budget ({budget}) and prefill is not chunked: it never fits \
         a step"
    ))
}
