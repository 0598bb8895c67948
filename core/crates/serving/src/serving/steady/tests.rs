//! Tests of the steady state: hand-derived shares, Little's law, the prefill capacity, open and static loads.
use super::*;
use crate::serving::{Engine, SchedulerKind, ServingScenario, ServingWorkload};
use roofline_analysis::analysis::{Phase, Workload, analyze_model};
use roofline_analysis::corrections::Corrections;
use roofline_analysis::model::find_model;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::find_quant_config;
use roofline_base::hardware::{Mode, find_hardware_in};

fn scenario(model: &str, config: &str, engine: Engine, kind: SchedulerKind) -> ServingScenario<'static> {
    let hardware = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    engine.preset(hardware, &Parallelism::SINGLE).scenario(
        hardware,
        find_model(model).unwrap(),
        find_quant_config(config).unwrap(),
        Parallelism::SINGLE,
        Corrections::REALISTIC,
        kind,
    )
}

fn serving(engine: Engine, isl: u32, osl: u32) -> ServingModel<'static> {
    let s = scenario("llama-3.1-8b", "bf16", engine, SchedulerKind::InFlight);
    ServingModel::new(s, ServingWorkload { isl, osl }).unwrap()
}

fn at(model: &mut ServingModel<'_>, clients: u32) -> ServingPoint {
    model
        .predict(Load::Concurrency(clients))
        .unwrap()
        .steady()
        .unwrap()
}

/// The isolated step of `phase`, batch and context, as today's analysis gives it.
fn isolated(model: &ServingModel<'_>, phase: Phase, batch: u32, context: u32) -> f64 {
    let s = model.scenario();
    analyze_model(
        s.hardware,
        s.model,
        s.config,
        &Workload {
            phase,
            batch,
            context,
        },
        &s.corrections,
    )
    .unwrap()
    .total_time_s
}

#[test]
fn one_user_decodes_at_the_isolated_decode_step() {
    // Concurrency 1, a long OSL: no other request's prefill ever shares a step, so TPOT is the decode step
    // of batch 1 at the mean context 1024 + 4096/2, and TTFT the prefill of the prompt alone.
    let mut model = serving(Engine::Vllm, 1024, 4096);
    let p = at(&mut model, 1);
    let decode = isolated(&model, Phase::Decode, 1, 1024 + 2048);
    assert!((p.tpot_s / decode - 1.0).abs() < 0.02, "{} vs {decode}", p.tpot_s);
    assert_eq!(p.tpot_s, decode);
    assert_eq!(p.ttft_s, isolated(&model, Phase::Prefill, 1, 1024));
    assert_eq!((p.decode_batch, p.admitted, p.queue_s), (1, 1, 0.0));
    // Throughput: one request per TTFT + 4095 · TPOT, its 4096 tokens on one GPU.
    let x = 1.0 / (p.ttft_s + 4095.0 * p.tpot_s);
    assert!((p.output_tokens_per_s_per_gpu - 4096.0 * x).abs() < 1e-9 * p.output_tokens_per_s_per_gpu);
    assert_eq!(p.regime, Regime::MemoryBoundDecode);
}

#[test]
fn other_requests_prefills_raise_tpot_by_the_mixed_step_share() {
    // ISL 4096: each arriving prompt adds a long mixed step to every decoding request's token stream.
    let mut model = serving(Engine::Vllm, 4096, 1024);
    let one = at(&mut model, 1);
    let busy = at(&mut model, 64);
    assert!(busy.tpot_s > one.tpot_s);
    // Batching alone (the decode step at the same batch) explains only part of it.
    let decode = isolated(&model, Phase::Decode, busy.decode_batch, 4096 + 512);
    assert_eq!(busy.decode_step_s, decode);
    assert!(busy.tpot_s > 1.2 * decode, "{} vs {decode}", busy.tpot_s);
    // The rest is the share f' of the steps carrying the other 63 requests' prefills:
    // TPOT = (1 − f')·T_d + f'·T_m, with m' = X·ISL/s · 63/64 prefill steps per second and
    // f' = m' / (m' + (1 − m'·T_m) / T_d).
    let (t_d, t_m) = (busy.decode_step_s, busy.mixed_step_s);
    let m = busy.requests_per_s * 4096.0 / f64::from(busy.prefill_tokens_per_step) * 63.0 / 64.0;
    let share = m / (m + (1.0 - m * t_m) / t_d);
    let expected = (1.0 - share) * t_d + share * t_m;
    assert!(
        (busy.tpot_s / expected - 1.0).abs() < 1e-12,
        "{} vs {expected}",
        busy.tpot_s
    );
    assert!((share / busy.mixed_step_share - 63.0 / 64.0).abs() < 0.01);
}

#[test]
fn throughput_per_gpu_rises_then_saturates() {
    let mut model = serving(Engine::Vllm, 1024, 1024);
    let most = model.memory().max_sequences;
    let points: Vec<ServingPoint> = crate::concurrency_grid(most)
        .into_iter()
        .map(|n| at(&mut model, n))
        .collect();
    for pair in points.windows(2) {
        assert!(pair[1].output_tokens_per_s_per_gpu > pair[0].output_tokens_per_s_per_gpu);
        assert!(pair[1].tokens_per_s_per_user < pair[0].tokens_per_s_per_user);
    }
    // The gain per doubling shrinks: ×1.9 from 8 to 16 users, far less from 96 to 192.
    let at_n = |n: u32| points.iter().find(|p| p.concurrency == f64::from(n)).unwrap();
    let early = at_n(16).output_tokens_per_s_per_gpu / at_n(8).output_tokens_per_s_per_gpu;
    let late = at_n(192).output_tokens_per_s_per_gpu / at_n(96).output_tokens_per_s_per_gpu;
    assert!(early > 1.8 && late < 1.6, "{early} {late}");
    // Beyond what fits, more clients only queue: the same throughput, a longer TTFT.
    let full = points.last().unwrap();
    let over = at(&mut model, 2 * most);
    assert_eq!(over.output_tokens_per_s_per_gpu, full.output_tokens_per_s_per_gpu);
    assert!(!over.fits && full.fits);
    assert_eq!(over.regime, Regime::QueueBound);
    // Little's law for the queue: the `most` extra clients wait most / X each.
    let wait = f64::from(most) / over.requests_per_s;
    assert!((over.queue_s - wait).abs() < 1e-9 * wait);
    assert!((over.ttft_s - full.ttft_s - wait).abs() < 1e-9 * wait);
}

#[test]
fn ttft_grows_once_prefill_demand_nears_the_budget() {
    // 2048-token prompts, 32-token answers: prefill is most of the work. vLLM's budget of 8192 tokens a
    // step holds four prompts at most.
    let mut model = serving(Engine::Vllm, 2048, 32);
    let light = at(&mut model, 16);
    let heavy = at(&mut model, 192);
    assert_eq!(light.queue_s, 0.0);
    assert_eq!(heavy.regime, Regime::PrefillBound);
    assert!(
        heavy.ttft_s > 10.0 * light.ttft_s,
        "{} {}",
        heavy.ttft_s,
        light.ttft_s
    );
    // At the cap every step carries prefill, packed to the budget less the decode rows, and the throughput
    // is the prefill capacity: X = s / (ISL · T_m).
    assert_eq!(heavy.mixed_step_share, 1.0);
    assert_eq!(heavy.prefill_tokens_per_step, 8192 - heavy.mixed_decode_rows);
    let capacity = f64::from(heavy.prefill_tokens_per_step) / (2048.0 * heavy.mixed_step_s);
    assert!((heavy.requests_per_s / capacity - 1.0).abs() < 1e-12);
    // The excess waits inside the engine: TTFT = n / X − 31 · TPOT.
    assert!((heavy.ttft_s - (192.0 / heavy.requests_per_s - 31.0 * heavy.tpot_s)).abs() < 1e-9);
}

#[test]
fn sglang_pauses_decoding_for_its_prefill_steps() {
    let mut model = serving(Engine::Sglang, 4096, 1024);
    let p = at(&mut model, 32);
    assert_eq!(p.mixed_decode_rows, 0);
    // TPOT = T_d / (1 − m'·T_p): decode steps only run in the time the others' prefill steps leave.
    let m = p.requests_per_s * 4096.0 / f64::from(p.prefill_tokens_per_step) * 31.0 / 32.0;
    let expected = p.decode_step_s / (1.0 - m * p.mixed_step_s);
    assert!((p.tpot_s / expected - 1.0).abs() < 1e-12);
    // Its prefill step is a prefill of the prompt alone.
    assert_eq!(p.mixed_step_s, isolated(&model, Phase::Prefill, 1, 4096));
}

#[test]
fn static_batching_is_todays_isolated_steps() {
    let s = scenario("llama-3.1-8b", "bf16", Engine::Vllm, SchedulerKind::Static);
    let mut model = ServingModel::new(s, ServingWorkload { isl: 1024, osl: 256 }).unwrap();
    // vLLM's H100 profiling step of 8192 tokens holds the activations of 8 prompts of 1024 tokens.
    let p = at(&mut model, 8);
    let prefill = isolated(&model, Phase::Prefill, 8, 1024);
    let decode = isolated(&model, Phase::Decode, 8, 1024 + 128);
    assert_eq!((p.ttft_s, p.tpot_s), (prefill, decode));
    let x = 8.0 / (prefill + 255.0 * decode);
    assert!((p.requests_per_s - x).abs() < 1e-12 * x);
    // Sixteen clients: a batch of 8 runs, the other 8 wait 8 / X.
    let queued = at(&mut model, 16);
    assert_eq!((queued.admitted, queued.regime), (8, Regime::QueueBound));
    assert!((queued.queue_s - 8.0 / x).abs() < 1e-9);
    // One user: the same as in-flight batching.
    let mut in_flight = serving(Engine::Vllm, 1024, 256);
    let (a, b) = (at(&mut model, 1), at(&mut in_flight, 1));
    assert_eq!((a.ttft_s, a.tpot_s), (b.ttft_s, b.tpot_s));
    // A rate: the smallest batch whose cycle serves its arrivals.
    let rated = model.predict(Load::Rate(2.0)).unwrap().steady().unwrap();
    let cycle = rated.mixed_step_s + 255.0 * rated.decode_step_s;
    assert!(2.0 * cycle <= f64::from(rated.admitted));
    assert!(rated.ttft_s > rated.mixed_step_s);
}

#[test]
fn open_loop_rates_are_steady_below_the_largest_sustainable_and_unstable_above() {
    let mut model = serving(Engine::Vllm, 1024, 1024);
    let steady = model.predict(Load::Rate(2.0)).unwrap().steady().unwrap();
    // Little's law: requests in flight = rate · E2E.
    assert!((steady.concurrency - 2.0 * steady.e2e_s).abs() < 1e-9);
    assert!(steady.tpot_s > 0.0 && steady.ttft_s > 0.0);
    let ServingOutcome::Unstable(u) = model.predict(Load::Rate(100.0)).unwrap() else {
        panic!("100 requests/s of 1k/1k on one H100 cannot be steady");
    };
    assert!(u.max_sustainable_rate > 2.0 && u.max_sustainable_rate < 100.0);
    assert!(!u.reason.is_empty());
    let just_below = model.predict(Load::Rate(0.99 * u.max_sustainable_rate)).unwrap();
    let just_above = model.predict(Load::Rate(1.01 * u.max_sustainable_rate)).unwrap();
    assert!(matches!(just_below, ServingOutcome::Steady(_)));
    assert!(matches!(just_above, ServingOutcome::Unstable(_)));
}

#[test]
fn bad_loads_and_workloads_are_errors_naming_the_field() {
    let s = scenario("llama-3.1-8b", "bf16", Engine::Vllm, SchedulerKind::InFlight);
    let err = ServingModel::new(s, ServingWorkload { isl: 1024, osl: 1 }).unwrap_err();
    assert!(err.to_string().contains("osl must be at least 2"), "{err}");
    let mut model = serving(Engine::Vllm, 128, 128);
    for load in [Load::Concurrency(0), Load::Rate(0.0), Load::Rate(f64::INFINITY)] {
        assert!(
            matches!(model.predict(load), Err(Error::InvalidInput(_))),
            "{load:?}"
        );
    }
    // 141 GB of Llama-3.1-70B weights do not fit one 80 GB H100.
    let big = scenario("llama-3.1-70b", "bf16", Engine::Vllm, SchedulerKind::InFlight);
    let mut model = ServingModel::new(big, ServingWorkload { isl: 128, osl: 128 }).unwrap();
    let err = model.predict(Load::Concurrency(1)).unwrap_err().to_string();
    assert!(err.contains("does not fit") && err.contains("141"), "{err}");
    // Unsupported: FP8 on an A100 names the architecture.
    let a100 = find_hardware_in("a100_sxm_80gb", Mode::Reference).unwrap();
    let fp8 = ServingScenario {
        hardware: a100,
        config: find_quant_config("fp8").unwrap(),
        ..s
    };
    let err = ServingModel::new(fp8, ServingWorkload { isl: 128, osl: 128 }).unwrap_err();
    assert!(matches!(err, Error::Unsupported { ref arch, .. } if arch.contains("Ampere")));
}

#[test]
fn a_point_serializes_every_defined_metric() {
    let mut model = serving(Engine::Vllm, 512, 128);
    let json = serde_json::to_value(at(&mut model, 8)).unwrap();
    for metric in crate::METRICS {
        assert!(json.get(metric.key).is_some(), "{}", metric.key);
    }
    assert_eq!(json["regime"], "memory_bound_decode");
    assert_eq!(json["load"]["concurrency"], 8);
}
