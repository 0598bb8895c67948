//! The benchmark client as the tools run it: how many requests, their lengths (fixed or drawn with the
//! tool's `--random-range-ratio` rule), and when each is sent (closed loop or seeded open-loop arrivals).

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use roofline_base::Error;

use crate::serving::{Load, ServingWorkload};

/// Most requests one simulated run may hold.
pub const MAX_REQUESTS: u32 = 1_000_000;

/// The tool whose client rules a run follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ClientKind {
    /// `vllm bench serve` (vLLM ≥ 0.10 `vllm/benchmarks/datasets.py` `RandomDataset`): lengths uniform in
    /// [⌊L·(1 − r)⌋, ⌈L·(1 + r)⌉]; `--num-prompts` 1000 by default; one test prompt before the run and no
    /// warm-up (`--num-warmups` 0), neither counted.
    #[default]
    VllmBenchServe,
    /// SGLang `python -m sglang.benchmark.serving`: lengths uniform in [max(⌊L·r⌋, 1), L] (so r = 0 draws
    /// from 1 … L); `--num-prompts` 1000 by default.
    SglangBenchServing,
    /// InferenceX's `utils/bench_serving/benchmark_serving.py` as `benchmarks/benchmark_lib.sh` runs it:
    /// lengths uniform in [⌊L·r⌋, L] with r = 0.8, 10 × concurrency prompts, 2 × concurrency warm-up
    /// requests before the run (not counted), `--ignore-eos`.
    #[cfg_attr(feature = "serde", serde(rename = "inferencex"))]
    InferenceX,
}

impl ClientKind {
    /// The tool's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ClientKind::VllmBenchServe => "vllm bench serve",
            ClientKind::SglangBenchServing => "SGLang bench_serving",
            ClientKind::InferenceX => "InferenceX benchmark_serving.py",
        }
    }

    /// The range ratio the tool runs with when none is given: 0 (fixed lengths for vLLM, 1 … L for
    /// SGLang), 0.8 for InferenceX (`RANDOM_RANGE_RATIO`).
    #[must_use]
    pub const fn default_range_ratio(self) -> f64 {
        match self {
            ClientKind::VllmBenchServe | ClientKind::SglangBenchServing => 0.0,
            ClientKind::InferenceX => 0.8,
        }
    }

    /// Inclusive bounds of a length drawn around `nominal` with range ratio `r`.
    fn bounds(self, nominal: u32, r: f64) -> (u32, u32) {
        let l = f64::from(nominal);
        match self {
            ClientKind::VllmBenchServe => (
                ((l * (1.0 - r)).floor() as u32).max(1),
                ((l * (1.0 + r)).ceil() as u32).max(1),
            ),
            ClientKind::SglangBenchServing | ClientKind::InferenceX => {
                (((l * r).floor() as u32).clamp(1, nominal), nominal)
            }
        }
    }
}

/// Open-loop inter-arrival times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Arrival {
    /// Exponential gaps (a Poisson process; `vllm bench serve --burstiness 1`).
    #[default]
    Poisson,
    /// Equal gaps of 1 / rate.
    Constant,
}

/// The benchmark client of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BenchClient {
    /// Whose rules.
    pub kind: ClientKind,
    /// `--random-range-ratio`, in [0, 1); `None`: the tool's default.
    pub range_ratio: Option<f64>,
    /// Requests counted (`--num-prompts`); `None`: the tool's default.
    pub requests: Option<u32>,
    /// Seed of the lengths and arrival times.
    pub seed: u64,
    /// Gaps of an open-loop run.
    pub arrival: Arrival,
}

impl Default for BenchClient {
    fn default() -> Self {
        BenchClient::of(ClientKind::VllmBenchServe)
    }
}

/// One request as the client sends it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Sent {
    pub isl: u32,
    pub osl: u32,
    /// Send time of an open-loop request (closed loops send on completions).
    pub at_s: f64,
}

impl BenchClient {
    /// `kind`'s client with its defaults and seed 0.
    #[must_use]
    pub const fn of(kind: ClientKind) -> BenchClient {
        BenchClient {
            kind,
            range_ratio: None,
            requests: None,
            seed: 0,
            arrival: Arrival::Poisson,
        }
    }

    /// The range ratio in force.
    #[must_use]
    pub fn range_ratio(&self) -> f64 {
        self.range_ratio.unwrap_or(self.kind.default_range_ratio())
    }

    /// Requests counted at `load`: the given count, else the tool's: 10 × N for InferenceX at N users
    /// (1000 at a rate), 1000 for vLLM and SGLang.
    #[must_use]
    pub fn requests_at(&self, load: Load) -> u32 {
        self.requests.unwrap_or(match (self.kind, load) {
            (ClientKind::InferenceX, Load::Concurrency(n)) => n.saturating_mul(10),
            _ => 1000,
        })
    }

    /// Checks the range ratio (vLLM: [0, 1), as it refuses 1; SGLang and InferenceX: [0, 1], 1 being
    /// fixed lengths) and the request count (1 … [`MAX_REQUESTS`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field.
    pub fn check(&self) -> Result<(), Error> {
        let r = self.range_ratio();
        let below_one = self.kind == ClientKind::VllmBenchServe;
        if !(r >= 0.0 && (r < 1.0 || (r == 1.0 && !below_one))) {
            return Err(Error::InvalidInput(format!(
                "random range ratio must be in [0, {}, got {r}",
                if below_one {
                    "1) for vllm bench serve"
                } else {
                    "1]"
                }
            )));
        }
        if let Some(n) = self.requests
            && !(1..=MAX_REQUESTS).contains(&n)
        {
            return Err(Error::InvalidInput(format!(
                "requests must be 1 to {MAX_REQUESTS}, got {n}"
            )));
        }
        Ok(())
    }

    /// The requests of a run at `load`: lengths drawn (every input length, then every output length, as
    /// the tools draw them) and, at a rate, send times from 0.
    pub(super) fn requests(&self, workload: ServingWorkload, load: Load) -> Vec<Sent> {
        let n = self.requests_at(load).min(MAX_REQUESTS) as usize;
        let mut rng = XorShiftRng::seed_from_u64(self.seed);
        let r = self.range_ratio();
        let mut draw = |nominal: u32| -> Vec<u32> {
            let (lo, hi) = self.kind.bounds(nominal, r);
            (0..n)
                .map(|_| {
                    if lo == hi {
                        lo
                    } else {
                        lo + (rng.next_u64() % u64::from(hi - lo + 1)) as u32
                    }
                })
                .collect()
        };
        let isl = draw(workload.isl);
        let osl = draw(workload.osl);
        let mut at_s = 0.0;
        let mut sent = Vec::with_capacity(n);
        for (isl, osl) in isl.into_iter().zip(osl) {
            sent.push(Sent { isl, osl, at_s });
            if let Load::Rate(rate) = load {
                at_s += match self.arrival {
                    Arrival::Constant => 1.0 / rate,
                    // 53 random bits: u in [0, 1), so 1 − u is in (0, 1].
                    Arrival::Poisson => {
                        -(1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).ln() / rate
                    }
                };
            }
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_draws_lengths_by_its_own_rule() {
        let w = ServingWorkload { isl: 1000, osl: 100 };
        let load = Load::Concurrency(4);
        let draw = |kind, r| {
            let client = BenchClient {
                range_ratio: Some(r),
                requests: Some(4000),
                ..BenchClient::of(kind)
            };
            let sent = client.requests(w, load);
            let isl: Vec<u32> = sent.iter().map(|s| s.isl).collect();
            (
                *isl.iter().min().unwrap(),
                *isl.iter().max().unwrap(),
                sent.iter().map(|s| f64::from(s.isl)).sum::<f64>() / 4000.0,
            )
        };
        // vLLM, r = 0.2: [800, 1200], mean 1000. SGLang and InferenceX, r = 0.8: [800, 1000], mean 900.
        let (lo, hi, mean) = draw(ClientKind::VllmBenchServe, 0.2);
        assert!(
            (lo, hi) == (800, 1200) && (mean - 1000.0).abs() < 10.0,
            "{lo} {hi} {mean}"
        );
        let (lo, hi, mean) = draw(ClientKind::InferenceX, 0.8);
        assert!(
            (lo, hi) == (800, 1000) && (mean - 900.0).abs() < 5.0,
            "{lo} {hi} {mean}"
        );
        // SGLang's r = 0 draws from 1 to L.
        let (lo, hi, _) = draw(ClientKind::SglangBenchServing, 0.0);
        assert!(lo < 10 && hi == 1000, "{lo} {hi}");
        assert_eq!(draw(ClientKind::VllmBenchServe, 0.0), (1000, 1000, 1000.0));
    }

    #[test]
    fn counts_arrivals_and_seeds() {
        let w = ServingWorkload { isl: 100, osl: 10 };
        let inferencex = BenchClient::of(ClientKind::InferenceX);
        assert_eq!(inferencex.requests_at(Load::Concurrency(64)), 640);
        assert_eq!(BenchClient::default().requests_at(Load::Concurrency(64)), 1000);
        let client = BenchClient {
            requests: Some(20_000),
            ..BenchClient::default()
        };
        let sent = client.requests(w, Load::Rate(4.0));
        // Poisson at 4/s: 20,000 arrivals span about 5000 s (a relative deviation of 1/√20000 = 0.7 %).
        let span = sent.last().unwrap().at_s;
        assert!((span / 5000.0 - 1.0).abs() < 0.03, "{span}");
        assert_eq!(sent, client.requests(w, Load::Rate(4.0)));
        let other = BenchClient { seed: 1, ..client }.requests(w, Load::Rate(4.0));
        assert_ne!(sent[1].at_s, other[1].at_s);
        let constant = BenchClient {
            arrival: Arrival::Constant,
            ..client
        }
        .requests(w, Load::Rate(4.0));
        assert_eq!(constant[3].at_s, 0.75);
        assert!(
            BenchClient {
                range_ratio: Some(1.0),
                ..client
            }
            .check()
            .is_err()
        );
        assert!(
            BenchClient {
                requests: Some(0),
                ..client
            }
            .check()
            .is_err()
        );
    }
}
