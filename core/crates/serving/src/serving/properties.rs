//! Property tests of the serving model: for random valid workloads on catalog devices, every metric is
//! finite and positive, TTFT is at least the prompt's own isolated prefill, and TPOT at least the isolated
//! decode step at the point's decode batch.

use proptest::prelude::*;

use super::{Engine, Load, SchedulerKind, ServingModel, ServingOutcome, ServingWorkload};
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
    ) {
        let Ok(hardware) = catalog()[device].in_mode(Mode::Reference) else { return Ok(()) };
        let config = find_quant_config(if fp8 { "fp8" } else { "bf16" }).unwrap();
        let model = find_model(MODELS[model]).unwrap();
        let kind = if in_flight { SchedulerKind::InFlight } else { SchedulerKind::Static };
        let scenario = engine.preset(&hardware, &Parallelism::SINGLE)
            .scenario(&hardware, model, config, Parallelism::SINGLE, Corrections::REALISTIC, kind);
        let workload = ServingWorkload { isl, osl };
        // Unsupported formats, whole prompts over the budget and models that do not fit are errors, not points.
        let Ok(mut serving) = ServingModel::new(scenario, workload) else { return Ok(()) };
        if !serving.memory().fits() {
            return Ok(());
        }
        let load = if closed { Load::Concurrency(clients) } else { Load::Rate(rate) };
        let outcome = serving.predict(load);
        let Ok(ServingOutcome::Steady(p)) = outcome else {
            // Only an open-loop rate may be unsustainable, and never refused.
            prop_assert!(matches!(outcome, Ok(ServingOutcome::Unstable(_))) && !closed, "{outcome:?}");
            return Ok(());
        };
        for (name, v) in [
            ("ttft_s", p.ttft_s), ("tpot_s", p.tpot_s), ("e2e_s", p.e2e_s), ("requests_per_s", p.requests_per_s),
            ("output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu),
            ("input_output_tokens_per_s_per_gpu", p.input_output_tokens_per_s_per_gpu),
            ("tokens_per_s_per_user", p.tokens_per_s_per_user), ("decode_step_s", p.decode_step_s),
            ("mixed_step_s", p.mixed_step_s), ("mean_step_s", p.mean_step_s), ("concurrency", p.concurrency),
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
        let prefill = step(Phase::Prefill, 1, isl);
        prop_assert!(p.ttft_s >= prefill * (1.0 - 1e-12), "TTFT {} < own prefill {prefill}: {p:?}", p.ttft_s);
        let decode = step(Phase::Decode, p.decode_batch, isl + osl / 2);
        prop_assert!(p.tpot_s >= decode * (1.0 - 1e-12), "TPOT {} < decode step {decode}: {p:?}", p.tpot_s);
    }
}
