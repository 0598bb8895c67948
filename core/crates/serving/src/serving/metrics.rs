//! The metrics of one serving operating point ([`ServingPoint`]), each defined once in [`METRICS`] (the
//! CLI and the page show these definitions as tooltips), and what limits the point ([`Regime`]).

use roofline_analysis::parallel::Parallelism;
use roofline_base::hardware::Mode;

use super::{Load, Percentile, ServingWorkload};

/// One metric: its key (the JSON field of [`ServingPoint`]), display name, unit and definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MetricDefinition {
    /// Field name in [`ServingPoint`] and the CLI's JSON.
    pub key: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Base unit.
    pub unit: &'static str,
    /// What it counts, and how.
    pub definition: &'static str,
}

/// Every serving metric, defined once (each latency also has `_p50_s`, `_p90_s` and `_p99_s` fields: the
/// median and percentiles over the run's requests, numpy's linear percentile as the benchmark tools compute
/// it).
pub const METRICS: [MetricDefinition; 20] = [
    MetricDefinition {
        key: "ttft_s",
        name: "TTFT",
        unit: "s",
        definition: "Mean time to first token over the run's requests: from the client sending a request to its \
                     first output token, queueing included (the client-side TTFT of vllm bench serve).",
    },
    MetricDefinition {
        key: "tpot_s",
        name: "TPOT",
        unit: "s",
        definition: "Mean time per output token after the first: (E2E − TTFT) / (OSL − 1) per request, the \
                     definition vllm bench serve uses (AIPerf's inter_token_latency); other requests' prefills \
                     interleaved with decoding are included.",
    },
    MetricDefinition {
        key: "itl_s",
        name: "ITL",
        unit: "s",
        definition: "Mean gap between a request's streamed chunks over every gap of the run (vllm bench serve's \
                     ITL): one decode step, the steps of other prompts between, or a speculative step's several \
                     tokens at once.",
    },
    MetricDefinition {
        key: "e2e_s",
        name: "E2E latency",
        unit: "s",
        definition: "Mean end-to-end latency of a request: from sending it to its last token.",
    },
    MetricDefinition {
        key: "normalized_interactivity",
        name: "E2E normalized interactivity",
        unit: "tok/s",
        definition: "1 / P90 over requests of E2E / OSL: InferenceX's default x-axis, about 1 / (TPOT + TTFT / \
                     OSL).",
    },
    MetricDefinition {
        key: "output_tokens_per_s_per_gpu",
        name: "output tokens/s per GPU",
        unit: "tok/s",
        definition: "Generated tokens of the run over its duration (first request sent to last token), divided by \
                     every GPU of the replica (vllm bench serve's output_throughput per GPU).",
    },
    MetricDefinition {
        key: "input_output_tokens_per_s_per_gpu",
        name: "input+output tokens/s per GPU",
        unit: "tok/s",
        definition: "Prompt and generated tokens of the run over its duration, divided by the replica's GPUs \
                     (InferenceX's tput_per_gpu).",
    },
    MetricDefinition {
        key: "tokens_per_s_per_user",
        name: "tokens/s per user",
        unit: "tok/s",
        definition: "Decode speed one user sees: 1 / mean TPOT (InferenceX's interactivity).",
    },
    MetricDefinition {
        key: "requests_per_s",
        name: "requests/s",
        unit: "req/s",
        definition: "Completed requests over the run's duration (throughput X).",
    },
    MetricDefinition {
        key: "concurrency",
        name: "concurrency",
        unit: "requests",
        definition: "Requests in flight, queued ones included: the clients N of a closed loop, or rate · mean E2E \
                     (Little's law) in an open loop. Not the decode batch.",
    },
    MetricDefinition {
        key: "requests",
        name: "requests",
        unit: "requests",
        definition: "Requests the client counted (its --num-prompts; warm-up and test requests, which run before \
                     and leave the engine idle, are not simulated).",
    },
    MetricDefinition {
        key: "decode_batch",
        name: "decode batch",
        unit: "sequences",
        definition: "Mean decode rows of the decode-only steps.",
    },
    MetricDefinition {
        key: "mixed_step_share",
        name: "prefill-step share",
        unit: "fraction",
        definition: "Share of the engine's steps that carry prompt tokens (mixed steps, or SGLang's prefill \
                     steps).",
    },
    MetricDefinition {
        key: "decode_step_s",
        name: "decode step",
        unit: "s",
        definition: "Mean time of the steps of decode rows only.",
    },
    MetricDefinition {
        key: "mixed_step_s",
        name: "prefill-carrying step",
        unit: "s",
        definition: "Mean time of the steps that carry prompt tokens (with the decode rows when prefill is mixed).",
    },
    MetricDefinition {
        key: "memory_used_bytes_per_gpu",
        name: "memory per GPU",
        unit: "B",
        definition: "Weights + activation estimate + the most KV cache the run held at once, on one GPU.",
    },
    MetricDefinition {
        key: "preemptions",
        name: "preemptions",
        unit: "requests",
        definition: "Requests the engine preempted when its KV cache ran out (their KV freed, their prompt and \
                     output recomputed later).",
    },
    MetricDefinition {
        key: "fits",
        name: "fits",
        unit: "",
        definition: "Whether the KV cache never held a request back: no admission waited for memory and no \
                     request was preempted.",
    },
    MetricDefinition {
        key: "simulated_steps",
        name: "simulated steps",
        unit: "steps",
        definition: "Engine steps the run took, from its first request to its last token.",
    },
    MetricDefinition {
        key: "simulated_events",
        name: "simulated events",
        unit: "events",
        definition: "What the simulation cost: steps carrying prompt tokens, one by one, and spans of decode-only \
                     steps between events, each in closed form.",
    },
];

/// What limits a serving point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Regime {
    /// Decode steps dominate and are bound by DRAM bandwidth (weights and KV reads).
    MemoryBoundDecode,
    /// Decode steps dominate and are bound by the matrix units.
    ComputeBoundDecode,
    /// Decode steps dominate and their collectives take the largest share.
    CommunicationBoundDecode,
    /// Prefill takes most of the engine's time, or its chunk capacity caps the throughput.
    PrefillBound,
    /// Requests wait for admission: more in flight than the engine runs at once (max_seqs or KV cache).
    QueueBound,
}

impl Regime {
    /// Display name, e.g. `memory-bound decode`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Regime::MemoryBoundDecode => "memory-bound decode",
            Regime::ComputeBoundDecode => "compute-bound decode",
            Regime::CommunicationBoundDecode => "communication-bound decode",
            Regime::PrefillBound => "prefill-bound",
            Regime::QueueBound => "queue-bound",
        }
    }
}

/// One operating point: the simulated run as its benchmark client reports it (definitions in [`METRICS`];
/// base units).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ServingPoint {
    /// Device key.
    pub hardware: String,
    /// Model key.
    pub model: String,
    /// Precision config key.
    pub config: String,
    /// The ceilings the step times come from.
    pub mode: Mode,
    /// How a replica is split.
    pub parallelism: Parallelism,
    /// GPUs of the replica (every per-GPU figure divides by these).
    pub gpus: u32,
    /// ISL and OSL.
    pub workload: ServingWorkload,
    /// The load asked for.
    pub load: Load,
    /// Requests in flight, queued ones included (N, or rate · E2E).
    pub concurrency: f64,
    /// Requests the engine runs at once (the rest wait): min(concurrency, max_seqs, sequences that fit).
    pub admitted: u32,
    /// Decode rows a decoding request's step holds, itself included.
    pub decode_batch: u32,
    /// Decode rows in a step that carries prefill (0 when prefill runs in its own steps).
    pub mixed_decode_rows: u32,
    /// Prefill tokens a prefill-carrying step holds.
    pub prefill_tokens_per_step: u32,
    /// Share of steps that carry prefill, in [0, 1].
    pub mixed_step_share: f64,
    /// Step of decode rows only, in s.
    pub decode_step_s: f64,
    /// Step carrying prefill, in s.
    pub mixed_step_s: f64,
    /// Mean step over all steps, in s.
    pub mean_step_s: f64,
    /// Mean time to first token, in s.
    pub ttft_s: f64,
    /// Median TTFT, in s.
    pub ttft_p50_s: f64,
    /// 90th-percentile TTFT, in s.
    pub ttft_p90_s: f64,
    /// 99th-percentile TTFT, in s.
    pub ttft_p99_s: f64,
    /// Mean time per output token after the first ((E2E − TTFT) / (OSL − 1) per request), in s.
    pub tpot_s: f64,
    /// Median TPOT, in s.
    pub tpot_p50_s: f64,
    /// 90th-percentile TPOT, in s.
    pub tpot_p90_s: f64,
    /// 99th-percentile TPOT, in s.
    pub tpot_p99_s: f64,
    /// Mean gap between a request's streamed chunks (ITL), in s.
    pub itl_s: f64,
    /// Median ITL, in s.
    pub itl_p50_s: f64,
    /// 90th-percentile ITL, in s.
    pub itl_p90_s: f64,
    /// 99th-percentile ITL, in s.
    pub itl_p99_s: f64,
    /// Mean end-to-end latency, in s.
    pub e2e_s: f64,
    /// Median E2E latency, in s.
    pub e2e_p50_s: f64,
    /// 90th-percentile E2E latency, in s.
    pub e2e_p90_s: f64,
    /// 99th-percentile E2E latency, in s.
    pub e2e_p99_s: f64,
    /// 1 / P90(E2E / OSL) over requests, in tokens/s (InferenceX's E2E normalized interactivity).
    pub normalized_interactivity: f64,
    /// Part of TTFT spent waiting: for admission, or for prefill capacity, in s.
    pub queue_s: f64,
    /// Completed requests per second.
    pub requests_per_s: f64,
    /// Output tokens per second per GPU.
    pub output_tokens_per_s_per_gpu: f64,
    /// Input and output tokens per second per GPU.
    pub input_output_tokens_per_s_per_gpu: f64,
    /// 1 / TPOT, in tokens/s.
    pub tokens_per_s_per_user: f64,
    /// Weights one GPU holds, in bytes.
    pub weight_bytes_per_gpu: f64,
    /// KV cache the admitted sequences reserve at ISL + OSL tokens on one GPU, in bytes.
    pub kv_cache_bytes_per_gpu: f64,
    /// Activation estimate of one GPU ([`roofline_analysis::memory::activation_bytes`]), in bytes.
    pub activation_bytes_per_gpu: f64,
    /// Weights + activations + KV cache of one GPU, in bytes.
    pub memory_used_bytes_per_gpu: f64,
    /// Sequences the KV cache holds at full length.
    pub max_concurrency: u32,
    /// Whether every request in flight fits (concurrency ≤ max_concurrency).
    pub fits: bool,
    /// What limits the point.
    pub regime: Regime,
    /// Not dominated in both tokens/s per user and output tokens/s per GPU by another point of its sweep.
    pub pareto: bool,
    /// Requests the client counted (warm-up and test requests excluded).
    pub requests: u32,
    /// Wall time of the run from the first request sent to the last token, in s.
    pub duration_s: f64,
    /// Requests preempted (their KV freed and recomputed) during the run.
    pub preemptions: u32,
    /// Engine steps simulated, and the events that cost the simulation (steps one by one, decode spans).
    pub simulated_steps: u64,
    /// Events simulated: steps with prompt tokens one by one, and spans of decode-only steps.
    pub simulated_events: u64,
}

impl ServingPoint {
    /// TTFT at `p`, in s.
    #[must_use]
    pub const fn ttft_at(&self, p: Percentile) -> f64 {
        match p {
            Percentile::Mean => self.ttft_s,
            Percentile::P50 => self.ttft_p50_s,
            Percentile::P90 => self.ttft_p90_s,
            Percentile::P99 => self.ttft_p99_s,
        }
    }

    /// TPOT at `p`, in s.
    #[must_use]
    pub const fn tpot_at(&self, p: Percentile) -> f64 {
        match p {
            Percentile::Mean => self.tpot_s,
            Percentile::P50 => self.tpot_p50_s,
            Percentile::P90 => self.tpot_p90_s,
            Percentile::P99 => self.tpot_p99_s,
        }
    }

    /// Tokens/s per user at `p`: 1 / TPOT at `p` (what an SLA's tokens/s-per-user limit is checked against).
    #[must_use]
    pub fn tokens_per_s_per_user_at(&self, p: Percentile) -> f64 {
        1.0 / self.tpot_at(p)
    }

    /// ITL at `p`, in s.
    #[must_use]
    pub const fn itl_at(&self, p: Percentile) -> f64 {
        match p {
            Percentile::Mean => self.itl_s,
            Percentile::P50 => self.itl_p50_s,
            Percentile::P90 => self.itl_p90_s,
            Percentile::P99 => self.itl_p99_s,
        }
    }

    /// E2E latency at `p`, in s.
    #[must_use]
    pub const fn e2e_at(&self, p: Percentile) -> f64 {
        match p {
            Percentile::Mean => self.e2e_s,
            Percentile::P50 => self.e2e_p50_s,
            Percentile::P90 => self.e2e_p90_s,
            Percentile::P99 => self.e2e_p99_s,
        }
    }
}

/// A rate the engine cannot sustain: the queue would grow without bound.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Unstable {
    /// Precision config key.
    pub config: String,
    /// GPUs of the replica.
    pub gpus: u32,
    /// The rate asked for, in requests/s.
    pub rate: f64,
    /// The largest rate the engine sustains, in requests/s (0 when none).
    pub max_sustainable_rate: f64,
    /// Why: prefill utilization ρ ≥ 1, or more requests in flight than the engine admits.
    pub reason: String,
}

/// The result at one load: a simulated run, or an unsustainable rate. Not boxed: a point is made once per
/// load and moved, and the page and the wire read it by value.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ServingOutcome {
    /// A sustainable load: its simulated run.
    Steady(ServingPoint),
    /// The rate exceeds what the engine sustains.
    Unstable(Unstable),
}

impl ServingOutcome {
    /// The point, if the load is sustainable.
    #[must_use]
    pub fn steady(self) -> Option<ServingPoint> {
        match self {
            ServingOutcome::Steady(p) => Some(p),
            ServingOutcome::Unstable(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::sim::tests::scenario;
    use crate::serving::{BenchClient, Engine, ServingModel};

    /// A point of two requests from one user.
    fn one_point() -> ServingPoint {
        let scenario = scenario(Engine::Vllm, None);
        let client = BenchClient {
            requests: Some(2),
            ..BenchClient::default()
        };
        let mut model = ServingModel::new(scenario, ServingWorkload { isl: 64, osl: 8 })
            .unwrap()
            .with_client(client)
            .unwrap();
        model.predict(Load::Concurrency(1)).unwrap().steady().unwrap()
    }

    #[test]
    fn every_metric_is_defined_once_with_a_unit_and_a_definition() {
        let mut keys: Vec<_> = METRICS.iter().map(|m| m.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), METRICS.len());
        assert!(
            METRICS
                .iter()
                .all(|m| !m.name.is_empty() && m.definition.len() > 30)
        );
        // TPOT is vllm bench serve's definition, named as such.
        let tpot = METRICS.iter().find(|m| m.key == "tpot_s").unwrap();
        assert!(tpot.definition.contains("(E2E − TTFT) / (OSL − 1)"));
        // Every metric names a field of the point's JSON.
        let point = serde_json::to_value(one_point()).unwrap();
        for m in METRICS {
            assert!(
                point.get(m.key).is_some(),
                "{} is not a field of ServingPoint",
                m.key
            );
        }
    }
}
