//! `serve`'s simulation options: the scenario presets, the benchmark client, the statistic tables and SLAs
//! read, speculative decoding and the prefix cache.

use clap::{Args, ValueEnum};
use roofline_core::{
    Arrival, BenchClient, ClientKind, EngineFeatures, Error, MAX_DRAFT_TOKENS, MAX_REQUESTS, ModelConfig,
    Percentile, ServingWorkload, SpecDecoding, SpecMethod, find_model,
};

use crate::CliError;

/// InferenceX's single-turn scenarios: ISL/OSL with its client (lengths from 0.8 × L to L, 10 × concurrency
/// requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScenarioArg {
    /// 1024 in, 1024 out.
    #[value(name = "1k1k")]
    OneKOneK,
    /// 8192 in, 1024 out (InferenceX's default since 2026-07).
    #[value(name = "8k1k")]
    EightKOneK,
    /// 1024 in, 8192 out.
    #[value(name = "1k8k")]
    OneKEightK,
}

impl ScenarioArg {
    /// Its nominal lengths.
    #[must_use]
    pub const fn workload(self) -> ServingWorkload {
        let (isl, osl) = match self {
            ScenarioArg::OneKOneK => (1024, 1024),
            ScenarioArg::EightKOneK => (8192, 1024),
            ScenarioArg::OneKEightK => (1024, 8192),
        };
        ServingWorkload { isl, osl }
    }
}

/// The benchmark client on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientArg {
    /// `vllm bench serve`: lengths L·(1 ± r), 1000 requests.
    Vllm,
    /// SGLang `bench_serving`: lengths from max(L·r, 1) to L, 1000 requests.
    Sglang,
    /// InferenceX's benchmark_serving.py: lengths from L·r to L (r = 0.8), 10 × concurrency requests.
    Inferencex,
}

impl From<ClientArg> for ClientKind {
    fn from(c: ClientArg) -> ClientKind {
        match c {
            ClientArg::Vllm => ClientKind::VllmBenchServe,
            ClientArg::Sglang => ClientKind::SglangBenchServing,
            ClientArg::Inferencex => ClientKind::InferenceX,
        }
    }
}

/// Open-loop arrivals on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArrivalArg {
    /// Exponential gaps (Poisson).
    Poisson,
    /// Equal gaps.
    Constant,
}

/// Clap value parser: `50`, `90`, `99` or `mean`.
fn parse_percentile(s: &str) -> Result<Percentile, Error> {
    match s.to_ascii_lowercase().trim_start_matches('p') {
        "50" => Ok(Percentile::P50),
        "90" => Ok(Percentile::P90),
        "99" => Ok(Percentile::P99),
        "mean" => Ok(Percentile::Mean),
        _ => Err(Error::InvalidInput(format!(
            "'{s}' is not a percentile; valid: 50, 90, 99, mean"
        ))),
    }
}

/// Clap value parser: a speculative method.
fn parse_spec_method(s: &str) -> Result<SpecMethod, Error> {
    SpecMethod::parse(s)
}

/// The simulation's options.
#[derive(Debug, Clone, Args)]
pub struct TrafficArgs {
    /// InferenceX scenario: 1k1k, 8k1k or 1k8k (sets --isl/--osl and the InferenceX client).
    #[arg(long, value_enum, conflicts_with_all = ["isl", "osl"])]
    pub scenario: Option<ScenarioArg>,
    /// The statistic the table and the SLA read: 50, 90 (InferenceX's), 99 or mean.
    #[arg(long, default_value = "90", value_parser = parse_percentile)]
    pub percentile: Percentile,
    /// Whose client rules the simulation follows (default vllm; inferencex with --scenario).
    #[arg(long, value_enum)]
    pub client: Option<ClientArg>,
    /// Requests the client counts (--num-prompts; default: the client's own).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_REQUESTS)))]
    pub requests: Option<u32>,
    /// Seed of the drawn lengths and arrival times.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// --random-range-ratio of the client (its own rule; default: the client's own).
    #[arg(long)]
    pub random_range_ratio: Option<f64>,
    /// Gaps between open-loop arrivals.
    #[arg(long, value_enum, default_value = "poisson")]
    pub arrival: ArrivalArg,
    /// Speculative decoding: mtp, eagle3, ngram or draft_model.
    #[arg(long, value_parser = parse_spec_method)]
    pub spec_method: Option<SpecMethod>,
    /// Draft tokens per step, k (1 … 16; default 3).
    #[arg(long, requires = "spec_method")]
    pub spec_draft_tokens: Option<u32>,
    /// Mean acceptance length, bonus token included, in [1, k + 1] (default: the method's published one).
    #[arg(long, requires = "spec_method")]
    pub spec_acceptance: Option<f64>,
    /// The draft model's preset key (speculative method draft_model).
    #[arg(long, requires = "spec_method")]
    pub spec_draft_model: Option<String>,
    /// Share of every prompt served from the prefix cache, in [0, 1).
    #[arg(long, default_value_t = 0.0)]
    pub prefix_hit_rate: f64,
}

impl TrafficArgs {
    /// The client: `--client`, or InferenceX's with `--scenario`, with the count, seed, range and arrivals.
    ///
    /// # Errors
    /// [`CliError::Usage`] from [`BenchClient::check`].
    pub fn client(&self) -> Result<BenchClient, CliError> {
        let kind = match (self.client, self.scenario) {
            (Some(c), _) => c.into(),
            (None, Some(_)) => ClientKind::InferenceX,
            (None, None) => ClientKind::VllmBenchServe,
        };
        let client = BenchClient {
            range_ratio: self.random_range_ratio,
            requests: self.requests,
            seed: self.seed,
            arrival: match self.arrival {
                ArrivalArg::Poisson => Arrival::Poisson,
                ArrivalArg::Constant => Arrival::Constant,
            },
            ..BenchClient::of(kind)
        };
        client.check()?;
        Ok(client)
    }

    /// The draft model of `--spec-draft-model`, if given.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an unknown key.
    pub fn draft_model(&self) -> Result<Option<&'static ModelConfig>, CliError> {
        self.spec_draft_model
            .as_deref()
            .map(|key| find_model(key).map_err(CliError::from))
            .transpose()
    }

    /// Speculative decoding and the prefix cache, with `draft` as the draft model.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the field: draft tokens outside 1 … 16, an acceptance outside [1, k + 1],
    /// no published acceptance for the method, a draft model missing or not wanted, a hit rate outside
    /// [0, 1).
    pub fn features<'a>(&self, draft: Option<&'a ModelConfig>) -> Result<EngineFeatures<'a>, CliError> {
        let speculative = self
            .spec_method
            .map(|method| {
                let k = self.spec_draft_tokens.unwrap_or(3).min(MAX_DRAFT_TOKENS + 1);
                SpecDecoding::new(method, k, self.spec_acceptance)
            })
            .transpose()?;
        let features = EngineFeatures {
            speculative,
            draft_model: draft,
            prefix_hit_rate: self.prefix_hit_rate,
        };
        features.check()?;
        Ok(features)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_parse() {
        assert_eq!(parse_percentile("P90").unwrap(), Percentile::P90);
        assert_eq!(parse_percentile("mean").unwrap(), Percentile::Mean);
        assert!(
            parse_percentile("95")
                .unwrap_err()
                .to_string()
                .contains("valid: 50, 90, 99, mean")
        );
    }
}
