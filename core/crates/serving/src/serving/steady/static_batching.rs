//! Static batching: a batch of prompts prefilled together in one step, then decoded together (the isolated
//! steps of today's analysis), at a concurrency or a rate. The formulas are in docs/design/core.md (steady.rs).

use roofline_base::Error;

use super::{Parts, Shape, Times, decode_regime};
use crate::serving::{Load, Regime, ServingModel, ServingOutcome, ServingPoint};

impl ServingModel<'_> {
    /// The static cycle of a batch of `batch`: its prefill step, decode step and cycle time.
    fn static_cycle(&mut self, batch: u32) -> Result<(Times, f64), Error> {
        let tokens = batch.checked_mul(self.workload.isl).ok_or_else(|| {
            Error::InvalidInput(format!(
                "a static batch of {batch} prompts of {} tokens is too large",
                self.workload.isl
            ))
        })?;
        let prefill = self.step(0, tokens)?;
        let times = Times {
            decode: self.step(batch, 0)?,
            mixed: prefill,
            own_prefill_s: prefill.time_s,
        };
        let cycle_s = times.mixed.time_s + f64::from(self.workload.osl - 1) * times.decode.time_s;
        Ok((times, cycle_s))
    }

    fn static_point(
        &self,
        load: Load,
        concurrency: f64,
        batch: u32,
        times: Times,
        x: f64,
        wait_s: f64,
    ) -> ServingPoint {
        let osl = f64::from(self.workload.osl);
        let (t_p, t_d) = (times.mixed.time_s, times.decode.time_s);
        let regime = if concurrency > f64::from(batch) && matches!(load, Load::Concurrency(_)) {
            Regime::QueueBound
        } else if t_p >= (osl - 1.0) * t_d {
            Regime::PrefillBound
        } else {
            decode_regime(times.decode.bound)
        };
        self.point(Parts {
            load,
            concurrency,
            admitted: batch,
            shape: Shape {
                decode: batch,
                mixed_decode: 0,
                prefill: batch * self.workload.isl,
            },
            times,
            x,
            ttft_s: t_p + wait_s,
            tpot_s: t_d,
            queue_s: wait_s,
            mixed_step_share: 1.0 / osl,
            mean_step_s: (t_p + (osl - 1.0) * t_d) / osl,
            regime,
        })
    }

    /// The largest static batch: max_seqs, the sequences that fit, and the prompts whose tokens fit the
    /// activation memory the engine reserved (its profiling step; at least one prompt), since the whole
    /// batch is prefilled in one step.
    fn static_cap(&self, max_seqs: u32) -> u32 {
        let prompts = (self.scenario.memory.profile_tokens / self.workload.isl).max(1);
        self.admission_cap(max_seqs).min(prompts)
    }

    pub(super) fn closed_static(&mut self, max_seqs: u32, clients: u32) -> Result<ServingPoint, Error> {
        let batch = clients.min(self.static_cap(max_seqs));
        let (times, cycle_s) = self.static_cycle(batch)?;
        let x = f64::from(batch) / cycle_s;
        let queue_s = f64::from(clients - batch) / x;
        Ok(self.static_point(
            Load::Concurrency(clients),
            f64::from(clients),
            batch,
            times,
            x,
            queue_s,
        ))
    }

    pub(super) fn open_static(&mut self, max_seqs: u32, rate: f64) -> Result<ServingOutcome, Error> {
        let cap = self.static_cap(max_seqs);
        let (_, cap_cycle_s) = self.static_cycle(cap)?;
        if rate * cap_cycle_s > f64::from(cap) {
            return Ok(ServingOutcome::Unstable(self.unstable(
                rate,
                f64::from(cap) / cap_cycle_s,
                format!(
                    "a static batch of {cap} (the most the engine admits) completes {:.3} requests/s",
                    f64::from(cap) / cap_cycle_s
                ),
            )));
        }
        // The smallest batch whose cycle serves the arrivals during it: λ·C(b) ≤ b.
        let (mut lo, mut hi) = (1, cap);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if rate * self.static_cycle(mid)?.1 <= f64::from(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let (times, cycle_s) = self.static_cycle(lo)?;
        // An arrival waits for the batch in progress: half a deterministic cycle on average.
        let wait_s = 0.5 * cycle_s;
        let e2e_s = wait_s + cycle_s;
        Ok(ServingOutcome::Steady(self.static_point(
            Load::Rate(rate),
            rate * e2e_s,
            lo,
            times,
            rate,
            wait_s,
        )))
    }
}
