//! Running what was planned: one step with prompt chunks, or a span of decode-only steps up to the next
//! event in closed form (step times linear in the decode counter between its first and last step), with
//! the tokens, gaps and completions they produce.

use std::cmp::Reverse;

use roofline_base::Error;

use super::cost::{Chunk, StepLoad};
use super::{Batching, Sim, SpecMethod, State};

/// The smallest j ≥ 1 with j·t0 + slope·j(j − 1)/2 ≥ `span` (steps whose times start at `t0` and grow by
/// `slope` each).
fn steps_covering(span: f64, t0: f64, slope: f64) -> u64 {
    let j = if slope.abs() < 1e-18 * t0.max(1e-30) {
        span / t0
    } else {
        let (a, b) = (slope / 2.0, t0 - slope / 2.0);
        (-b + (b * b + 4.0 * a * span).max(0.0).sqrt()) / (2.0 * a)
    };
    (j.ceil().max(1.0) as u64).max(1)
}

impl Sim<'_, '_> {
    /// The drafter's time in a step of `rows` decode rows at `context` and `prompt_tokens` prompt tokens:
    /// k one-layer passes over the rows (an MTP module or an EAGLE head: a decoder layer's share of the
    /// target's step and the logits), one over the prompt tokens, nothing for n-gram lookup (CPU), or k
    /// decode steps and the prompt's prefill of the draft model.
    fn drafter_s(&mut self, rows: u32, context: f64, chunks: &[Chunk]) -> Result<f64, Error> {
        let Some(spec) = self.spec else { return Ok(0.0) };
        let k = f64::from(spec.draft_tokens);
        let prompt: f64 = chunks.iter().map(|c| f64::from(c.tokens)).sum();
        match spec.method {
            SpecMethod::Ngram => Ok(0.0),
            SpecMethod::Mtp | SpecMethod::Eagle3 => {
                let decode = if rows > 0 {
                    k * self.cost.layer_and_head_s(rows, context, 0.0)?
                } else {
                    0.0
                };
                let prefill = if prompt > 0.0 {
                    self.cost.layer_and_head_s(0, 0.0, prompt)?
                } else {
                    0.0
                };
                Ok(decode + prefill)
            }
            SpecMethod::DraftModel => {
                let Some(draft) = self.draft.as_deref_mut() else {
                    return Ok(0.0);
                };
                let decode = if rows > 0 {
                    k * draft.step_s(&StepLoad {
                        rows,
                        context,
                        width: 1,
                        chunks: &[],
                        completing: 0,
                    })?
                } else {
                    0.0
                };
                let prefill = if chunks.is_empty() {
                    0.0
                } else {
                    draft.step_s(&StepLoad {
                        rows: 0,
                        context: 0.0,
                        width: 1,
                        chunks,
                        completing: 0,
                    })?
                };
                Ok(decode + prefill)
            }
        }
    }

    /// A decode-only step at decode counter `g`.
    fn decode_step_s(&mut self, g: u64) -> Result<f64, Error> {
        let context = self.context_at(g);
        let load = StepLoad {
            rows: self.rows,
            context,
            width: self.width,
            chunks: &[],
            completing: 0,
        };
        Ok(self.cost.step_s(&load)? + self.drafter_s(self.rows, context, &[])?)
    }

    /// The gaps of the decode rows' first token in a decode step from `start` lasting `t`: since the last
    /// decode step for the rows that ran in it, since their own last token for those that joined after.
    fn first_gaps(&mut self, start: f64, t: f64) {
        let fresh: u32 = self.fresh.iter().map(|c| c.1).sum();
        for &(at, count) in &self.fresh {
            self.itl.add(start - at + t, f64::from(count));
        }
        self.itl.add(
            start - self.last_decode_end_s + t,
            f64::from(self.rows.saturating_sub(fresh)),
        );
        self.fresh.clear();
    }

    fn note_kv(&mut self, g: u64) {
        self.acc.peak_kv = self.acc.peak_kv.max(self.kv_need_at(g));
    }

    /// Runs one step with the planned chunks (and the decode rows when `decode`); returns the requests it
    /// finished.
    pub(super) fn step(&mut self, decode: bool) -> Result<usize, Error> {
        let rows = if decode { self.rows } else { 0 };
        let context = self.context_at(self.g);
        let mut chunks = std::mem::take(&mut self.scratch);
        chunks.clear();
        chunks.extend(self.chunks.iter().map(|c| c.1));
        let completing = self
            .chunks
            .iter()
            .filter(|(id, _)| {
                let r = &self.reqs[*id as usize];
                r.computed == r.target
            })
            .count() as u32;
        let load = StepLoad {
            rows,
            context,
            width: self.width,
            chunks: &chunks,
            completing,
        };
        let t = self.cost.step_s(&load)? + self.drafter_s(rows, context, &chunks)?;
        let prompt_tokens: f64 = chunks.iter().map(|c| f64::from(c.tokens)).sum();
        self.scratch = chunks;
        self.note_kv(self.g);
        if decode {
            self.first_gaps(self.now, t);
        }
        let a = &mut self.acc;
        a.prefill_steps += 1.0;
        a.prefill_time += t;
        a.prefill_rows += f64::from(rows);
        a.prefill_tokens += prompt_tokens;
        a.running_time += f64::from(self.live) * t;
        a.events += 1;
        self.now += t;
        let mut finished = 0;
        if decode {
            self.g += 1;
            self.last_decode_end_s = self.now;
            finished += self.complete_due();
        }
        for i in 0..self.chunks.len() {
            let id = self.chunks[i].0;
            let r = &self.reqs[id as usize];
            if r.state == State::Prefilling && r.computed == r.target {
                finished += self.join_decode(id);
            }
        }
        Ok(finished)
    }

    /// Runs decode-only steps up to the next event: the first completion, the last step the KV cache holds,
    /// or the step during which the next open-loop request arrives. Returns the requests finished.
    pub(super) fn decode_span(&mut self) -> Result<usize, Error> {
        let done_g = loop {
            let Some(&Reverse((done_g, id, epoch))) = self.done.peek() else {
                return Err(Error::InvalidInput(
                    "decode rows with no completion scheduled".into(),
                ));
            };
            let r = &self.reqs[id as usize];
            if r.epoch == epoch && r.state == State::Decoding {
                break done_g;
            }
            self.done.pop();
        };
        let mut k = done_g.saturating_sub(self.g).max(1);
        if matches!(self.batching, Batching::Vllm | Batching::Sglang) {
            let free = self.capacity - self.kv_need_at(self.g);
            let per_step = self.alpha * f64::from(self.rows);
            k = k.min(1 + (free.max(0.0) / per_step).floor() as u64);
        }
        k = k.min(self.span_limit);
        let t0 = self.decode_step_s(self.g)?;
        let slope = if k > 1 {
            (self.decode_step_s(self.g + k - 1)? - t0) / (k - 1) as f64
        } else {
            0.0
        };
        if let Some(at) = self.next_arrival_s()
            && at > self.now
        {
            k = k.min(steps_covering(at - self.now, t0, slope));
        }
        let kf = k as f64;
        let total = kf * t0 + slope * kf * (kf - 1.0) / 2.0;
        let rows = f64::from(self.rows);
        self.first_gaps(self.now, t0);
        if k > 1 {
            let later = total - t0;
            self.itl.add_ramp(
                t0 + slope,
                t0 + slope * (kf - 1.0),
                rows * (kf - 1.0),
                rows * later,
            );
        }
        self.note_kv(self.g + k - 1);
        let a = &mut self.acc;
        a.decode_steps += kf;
        a.decode_time += total;
        a.decode_rows += rows * kf;
        a.decode_context += kf * (self.own_base + self.cached_sum + self.alpha * rows * self.g as f64)
            + self.alpha * rows * kf * (kf - 1.0) / 2.0;
        a.running_time += f64::from(self.live) * total;
        a.events += 1;
        self.now += total;
        self.g += k;
        self.last_decode_end_s = self.now;
        Ok(self.complete_due())
    }

    /// Request `id` finished its prompt now: its first token (or, after a preemption, its next one), then
    /// the decode rows unless its output is complete. Returns 1 when it finished.
    fn join_decode(&mut self, id: u32) -> usize {
        let (now, g, alpha) = (self.now, self.g, self.alpha);
        self.prefilling.retain(|&p| p != id);
        let r = &mut self.reqs[id as usize];
        self.prefill_held -= f64::from(r.held);
        r.held = 0;
        if r.first_token_s.is_nan() {
            r.first_token_s = now;
        } else {
            self.itl.add(now - r.last_token_s, 1.0);
        }
        r.last_token_s = now;
        let emitted = r.generated + 1;
        if emitted >= r.osl {
            self.finish(id);
            return 1;
        }
        r.state = State::Decoding;
        r.g0 = g;
        r.done_g = g + (f64::from(r.osl - emitted) / alpha).ceil() as u64;
        let r = *r;
        self.rows += 1;
        self.own_base += f64::from(r.target - r.cached + 1) - alpha * g as f64;
        self.cached_sum += f64::from(r.cached);
        self.left_base += f64::from(r.osl - emitted) + alpha * g as f64;
        self.done.push(Reverse((r.done_g, id, r.epoch)));
        match self.fresh.last_mut() {
            Some(last) if last.0 == now => last.1 += 1,
            _ => self.fresh.push((now, 1)),
        }
        0
    }

    /// Removes decode row `id` from the aggregate (and from the rows yet to step, if it is one).
    pub(super) fn leave_decode(&mut self, id: u32) {
        let r = self.reqs[id as usize];
        let alpha = self.alpha;
        self.rows -= 1;
        self.own_base -= f64::from(r.target - r.cached + 1) - alpha * r.g0 as f64;
        self.cached_sum -= f64::from(r.cached);
        self.left_base -= f64::from(r.osl - r.generated - 1) + alpha * r.g0 as f64;
        if r.g0 == self.g
            && let Some(cohort) = self.fresh.iter_mut().find(|c| c.0 == r.last_token_s && c.1 > 0)
        {
            cohort.1 -= 1;
        }
    }

    /// Finishes every decode row due by the current decode counter, now.
    fn complete_due(&mut self) -> usize {
        let mut finished = 0;
        while let Some(&Reverse((done_g, id, epoch))) = self.done.peek() {
            if done_g > self.g {
                break;
            }
            self.done.pop();
            let r = &self.reqs[id as usize];
            if r.epoch != epoch || r.state != State::Decoding {
                continue;
            }
            self.leave_decode(id);
            self.finish(id);
            finished += 1;
        }
        finished
    }

    fn finish(&mut self, id: u32) {
        let now = self.now;
        let r = &mut self.reqs[id as usize];
        r.state = State::Finished;
        r.last_token_s = now;
        let full = f64::from(r.target - r.cached + r.osl - r.generated);
        self.reserved -= full;
        self.in_flight -= 1;
        self.live -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::steps_covering;

    #[test]
    fn steps_covering_solves_the_ramp() {
        // Steps of 1, 2, 3, 4 s: 6 s are covered after 3 steps, 6.5 s after 4; constant 2 s steps: 5 s in 3.
        assert_eq!(steps_covering(6.0, 1.0, 1.0), 3);
        assert_eq!(steps_covering(6.5, 1.0, 1.0), 4);
        assert_eq!(steps_covering(5.0, 2.0, 0.0), 3);
        assert_eq!(steps_covering(1e-9, 2.0, 0.0), 1);
    }
}
