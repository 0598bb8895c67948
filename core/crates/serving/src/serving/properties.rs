//! Property tests of the serving simulation: for random valid workloads, engines, clients and loads on
//! catalog devices, every metric is finite and positive, percentiles are ordered, every request completes,
//! TTFT is at least the prompt's own isolated prefill and TPOT at least the fastest decode step.

use proptest::prelude::*;

use super::{
    BenchClient, ClientKind, Engine, Load, SchedulerKind, ServingModel, ServingOutcome, ServingWorkload,
};
use roofline_analysis::analysis::{Phase, Workload, analyze_model};
use roofline_analysis::corrections::Corrections;
use roofline_analysis::model::find_model;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::find_quant_config;
use roofline_base::hardware::{Mode, catalog};

/// Models small enough for one GPU of most catalog devices, covering GQA, sliding windows and MoE.
const MODELS: [&str; 5] = [
    "tinyllama-1.1b",
    "llama-3.1-8b",
    "qwen2.5-7b",
    "gpt-oss-20b",
    "mixtral-8x7b",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_metric_is_finite_and_bounded_by_the_isolated_steps(
        device in 0..catalog().len(), model in 0..MODELS.len(), fp8 in any::<bool>(),
        engine in prop::sample::select(Engine::ALL.to_vec()), in_flight in any::<bool>(),
        isl in 1u32..12_000, osl in 2u32..3000, clients in 1u32..600, rate in 0.01f64..50.0, closed in any::<bool>(),
        tool in prop::sample::select(vec![ClientKind::VllmBenchServe, ClientKind::SglangBenchServing, ClientKind::InferenceX]),
        ratio in 0.0f64..0.99, seed in any::<u64>(),
    ) {
        let Ok(hardware) = catalog()[device].in_mode(Mode::Reference) else { return Ok(()) };
        let config = find_quant_config(if fp8 { "fp8" } else { "bf16" }).unwrap();
        let model = find_model(MODELS[model]).unwrap();
        let kind = if in_flight { SchedulerKind::InFlight } else { SchedulerKind::Static };
        let scenario = engine.preset(&hardware, &Parallelism::SINGLE)
            .scenario(&hardware, model, config, Parallelism::SINGLE, Corrections::REALISTIC, kind);
        let workload = ServingWorkload { isl, osl };
        // Unsupported formats, whole prompts over the budget and models that do not fit are errors, not points.
        let Ok(serving) = ServingModel::new(scenario, workload) else { return Ok(()) };
        let client = BenchClient { kind: tool, range_ratio: Some(ratio), requests: Some(48), seed, ..BenchClient::default() };
        let mut serving = serving.with_client(client).unwrap();
        if !serving.memory().fits() {
            return Ok(());
        }
        let load = if closed { Load::Concurrency(clients) } else { Load::Rate(rate) };
        let outcome = serving.predict(load);
        // Whole prompts drawn longer than an unchunked budget are refused, never panics.
        // So are requests drawn longer than the whole KV cache.
        if let Err(e) = &outcome {
            let e = e.to_string();
            prop_assert!(e.contains("prefill is not chunked") || e.contains("needs more KV than the cache holds"), "{e}");
            return Ok(());
        }
        let Ok(ServingOutcome::Steady(p)) = outcome else {
            // Only an open-loop rate may be unsustainable.
            prop_assert!(matches!(outcome, Ok(ServingOutcome::Unstable(_))) && !closed, "{outcome:?}");
            return Ok(());
        };
        prop_assert_eq!(p.requests, 48);
        for (name, [a, b, c]) in [
            ("ttft", [p.ttft_p50_s, p.ttft_p90_s, p.ttft_p99_s]), ("tpot", [p.tpot_p50_s, p.tpot_p90_s, p.tpot_p99_s]),
            ("itl", [p.itl_p50_s, p.itl_p90_s, p.itl_p99_s]), ("e2e", [p.e2e_p50_s, p.e2e_p90_s, p.e2e_p99_s]),
        ] {
            prop_assert!(a <= b && b <= c && a > 0.0, "{name}: {a} {b} {c}: {p:?}");
        }
        for (name, v) in [
            ("ttft_s", p.ttft_s), ("tpot_s", p.tpot_s), ("e2e_s", p.e2e_s), ("requests_per_s", p.requests_per_s),
            ("output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu),
            ("input_output_tokens_per_s_per_gpu", p.input_output_tokens_per_s_per_gpu),
            ("tokens_per_s_per_user", p.tokens_per_s_per_user), ("decode_step_s", p.decode_step_s),
            ("mean_step_s", p.mean_step_s), ("concurrency", p.concurrency), ("duration_s", p.duration_s),
            ("normalized_interactivity", p.normalized_interactivity),
            ("memory_used_bytes_per_gpu", p.memory_used_bytes_per_gpu),
        ] {
            prop_assert!(v.is_finite() && v > 0.0, "{name} = {v}: {p:?}");
        }
        prop_assert!(p.queue_s >= 0.0 && (0.0..=1.0).contains(&p.mixed_step_share), "{p:?}");
        let step = |phase, batch, context| {
            analyze_model(&hardware, model, config, &Workload { phase, batch, context }, &Corrections::REALISTIC)
                .unwrap()
                .total_time_s
        };
        // The shortest prompt the client may draw, alone; the fastest decode step, one row at the shortest
        // context (2 % for the grid's interpolation).
        let shortest = |nominal: u32| match tool {
            ClientKind::VllmBenchServe => ((f64::from(nominal) * (1.0 - ratio)).floor() as u32).max(1),
            _ => ((f64::from(nominal) * ratio).floor() as u32).clamp(1, nominal),
        };
        let prefill = step(Phase::Prefill, 1, shortest(isl));
        prop_assert!(p.ttft_p50_s >= 0.98 * prefill.min(p.ttft_p99_s), "TTFT {} < own prefill {prefill}: {p:?}", p.ttft_s);
        prop_assert!(p.ttft_s >= 0.98 * prefill, "TTFT {} < own prefill {prefill}: {p:?}", p.ttft_s);
        let decode = step(Phase::Decode, 1, shortest(isl));
        prop_assert!(p.tpot_s >= 0.98 * decode, "TPOT {} < fastest decode step {decode}: {p:?}", p.tpot_s);
    }
}
