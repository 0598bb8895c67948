//! Hand-derived scenarios of docs/validation/serving.md §5, each against `analyze_step` run on the step
//! shapes the rules give, and the closed-form decode spans against the step-by-step reference.

use roofline_analysis::analysis::{StepBatch, analyze_step};
use roofline_analysis::corrections::Corrections;
use roofline_analysis::model::find_model;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::find_quant_config;
use roofline_base::hardware::{HardwareSpec, Mode, find_hardware_in};

use super::{BenchClient, EngineFeatures, Run, SpecDecoding, SpecMethod};
use crate::serving::{Engine, Load, SchedulerKind, ServingModel, ServingScenario, ServingWorkload};

fn h100() -> &'static HardwareSpec {
    find_hardware_in("h100_sxm", Mode::Reference).unwrap()
}

/// Llama-3.1-8B BF16 on one H100 SXM (reference mode) under `engine`'s defaults, its memory fraction
/// replaced by `fraction` where given.
pub(crate) fn scenario(engine: Engine, fraction: Option<f64>) -> ServingScenario<'static> {
    let hardware = h100();
    engine
        .preset(hardware, &Parallelism::SINGLE)
        .with_memory_fraction(fraction)
        .scenario(
            hardware,
            find_model("llama-3.1-8b").unwrap(),
            find_quant_config("bf16").unwrap(),
            Parallelism::SINGLE,
            Corrections::REALISTIC,
            SchedulerKind::InFlight,
        )
}

/// `requests` requests of `isl`/`osl` from `clients` users under `scenario`, simulated with decode steps
/// advanced `span` at a time.
fn run_with(
    scenario: ServingScenario<'static>,
    isl: u32,
    osl: u32,
    clients: u32,
    requests: u32,
    span: u64,
) -> Run {
    let client = BenchClient {
        requests: Some(requests),
        ..BenchClient::default()
    };
    let mut model = ServingModel::new(scenario, ServingWorkload { isl, osl })
        .unwrap()
        .with_client(client)
        .unwrap();
    model.run(Load::Concurrency(clients), span).unwrap()
}

fn run(engine: Engine, isl: u32, osl: u32, clients: u32, requests: u32) -> Run {
    run_with(scenario(engine, None), isl, osl, clients, requests, u64::MAX)
}

/// `analyze_step`'s time of `step` for Llama-3.1-8B BF16 on the H100 (reference mode, realistic
/// corrections).
fn exact(step: StepBatch) -> f64 {
    analyze_step(
        h100(),
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config("bf16").unwrap(),
        &step,
        &Parallelism::SINGLE,
        &Corrections::REALISTIC,
    )
    .unwrap()
    .total_time_s
}

fn prefill(prompts: u32, tokens: u32, decode_rows: u32, context: u32) -> f64 {
    exact(StepBatch {
        decode_seqs: decode_rows,
        decode_context: context,
        prefill_seqs: prompts,
        prefill_chunk: tokens,
        prefill_prior: 0,
        prefill_completing: prompts,
    })
}

fn decode(rows: u32, context: u32) -> f64 {
    exact(StepBatch {
        decode_seqs: rows,
        decode_context: context,
        ..StepBatch::default()
    })
}

fn close(got: f64, want: f64, tolerance: f64) -> bool {
    (got / want - 1.0).abs() <= tolerance
}

#[test]
fn one_user_sees_its_prefill_then_the_decode_step() {
    // One user, ISL 1024 / OSL 256, 5 requests one after another: each runs alone. TTFT = the prefill of
    // one 1024-token prompt; TPOT = the mean of the 255 decode steps of one row over contexts 1025 … 1279,
    // which is the decode step at the mean context 1152 (attention is linear in the context).
    let r = run(Engine::Vllm, 1024, 256, 1, 5);
    let ttft = prefill(1, 1024, 0, 0);
    let tpot = decode(1, 1152);
    assert!(
        close(r.ttft.mean, ttft, 1e-9) && close(r.ttft.p99, ttft, 1e-9),
        "TTFT {:?} vs {ttft}",
        r.ttft
    );
    assert!(
        close(r.tpot.mean, tpot, 1e-3) && close(r.tpot.p90, tpot, 1e-3),
        "TPOT {:?} vs {tpot}",
        r.tpot
    );
    assert!(close(r.itl.p50, tpot, 0.01), "ITL {:?} vs {tpot}", r.itl);
    assert_eq!((r.completed, r.preemptions), (5, 0));
    // E2E = TTFT + 255 · TPOT; five runs back to back.
    assert!(close(r.e2e.mean, ttft + 255.0 * r.tpot.mean, 1e-9));
    assert!(close(r.duration_s, 5.0 * r.e2e.mean, 1e-9));
    // Events, not tokens: a prefill step and one decode span per request.
    assert_eq!((r.steps, r.events), (5 * 256, 10));
}

#[test]
fn users_in_phase_whose_prompts_fit_one_step_all_wait_for_it() {
    // Eight users at t = 0, ISL 1024: 8 × 1024 = 8192 tokens, vLLM's budget on the H100, so the first step
    // prefills all eight prompts and each first token comes after exactly that step.
    let r = run(Engine::Vllm, 1024, 64, 8, 8);
    let wave = prefill(8, 1024, 0, 0);
    assert!(
        close(r.ttft.mean, wave, 1e-6) && close(r.ttft.p99, wave, 1e-6),
        "{:?} vs {wave}",
        r.ttft
    );
    // They decode together: 63 steps of 8 rows, the first at context 1025, the last at 1087.
    let tpot = decode(8, 1056);
    assert!(close(r.tpot.mean, tpot, 1e-3), "{:?} vs {tpot}", r.tpot);
}

#[test]
fn users_whose_prompts_need_chunks_get_their_first_tokens_chunk_by_chunk() {
    // Four users at t = 0, ISL 4096, budget 8192 (vLLM, H100):
    // step 1: prompts A and B whole (8192 tokens) → A, B first tokens at T1;
    // step 2: A, B decode (2 rows at context 4097) + C whole (4096) + 4094 tokens of D → C at T1 + T2;
    // step 3: A, B, C decode (3 rows) + D's last 2 tokens after its 4094 → D at T1 + T2 + T3.
    let r = run(Engine::Vllm, 4096, 16, 4, 4);
    let t1 = prefill(2, 4096, 0, 0);
    let t2 = exact(StepBatch {
        decode_seqs: 2,
        decode_context: 4097,
        prefill_seqs: 1,
        prefill_chunk: 4096,
        prefill_prior: 0,
        prefill_completing: 1,
    }) + exact(StepBatch {
        prefill_seqs: 1,
        prefill_chunk: 4094,
        ..StepBatch::default()
    }) - exact(StepBatch {
        prefill_seqs: 1,
        prefill_chunk: 1,
        ..StepBatch::default()
    });
    let t3 = exact(StepBatch {
        decode_seqs: 3,
        decode_context: 4097,
        prefill_seqs: 1,
        prefill_chunk: 2,
        prefill_prior: 4094,
        prefill_completing: 1,
    });
    // Mean TTFT = (2·T1 + (T1 + T2) + (T1 + T2 + T3)) / 4; step 2 is estimated to 2 % (its two chunks
    // of different lengths are one 8190-token GEMM, split here into a 4096 and a 4094 prompt by hand).
    let mean = (4.0 * t1 + 2.0 * t2 + t3) / 4.0;
    assert!(
        close(r.ttft.mean, mean, 0.02),
        "{:?} vs {mean} (T1 {t1}, T2 {t2}, T3 {t3})",
        r.ttft
    );
    assert!(close(r.ttft.p50, t1 + t2 / 2.0, 0.02), "{:?}", r.ttft);
}

#[test]
fn a_cache_too_small_for_every_user_preempts_in_vllm_and_queues_in_tensorrt_llm() {
    // ISL 1024 / OSL 1024 needs 2048 tokens (268 MB) per sequence. vLLM at a memory fraction of 0.27:
    // 0.27 · 85.06 GB − 16.06 GB of weights − 1.63 GB of activations = 5.28 GB of KV, 40,278 tokens, 19
    // sequences at full length. TensorRT-LLM takes its fraction of what is free after weights and
    // activations: 0.078 · (85.06 − 16.06 − 1.63) GB = 5.25 GB, 19 sequences too. 32 users: vLLM admits
    // by the prompt's blocks (32 · 1024 tokens fit), runs out while decoding and preempts (recomputing);
    // TensorRT-LLM reserves each request whole, so at most 19 run and the rest wait.
    let (vllm_scenario, trt_scenario) = (
        scenario(Engine::Vllm, Some(0.27)),
        scenario(Engine::TrtLlm, Some(0.078)),
    );
    let workload = ServingWorkload { isl: 1024, osl: 1024 };
    for s in [vllm_scenario, trt_scenario] {
        assert_eq!(ServingModel::new(s, workload).unwrap().memory().max_sequences, 19);
    }
    let vllm = run_with(vllm_scenario, 1024, 1024, 32, 64, u64::MAX);
    assert!(vllm.preemptions > 0 && vllm.kv_limited, "{vllm:?}");
    assert_eq!(vllm.completed, 64);
    let trt = run_with(trt_scenario, 1024, 1024, 32, 64, u64::MAX);
    assert_eq!(trt.preemptions, 0);
    assert!(
        trt.kv_limited && trt.mean_running <= 19.0 && trt.mean_running > 15.0,
        "{trt:?}"
    );
    // Neither holds more KV than its cache has.
    for (s, r) in [(vllm_scenario, &vllm), (trt_scenario, &trt)] {
        let cache = ServingModel::new(s, workload).unwrap().kv_tokens();
        assert!(r.peak_kv_tokens <= cache + 16.0, "{} > {cache}", r.peak_kv_tokens);
    }
}

#[test]
fn speculation_with_acceptance_one_is_plain_decoding_in_verify_steps_plus_the_drafter() {
    // One user, MTP with 2 drafts accepted at 1.0: the same 255 decode steps as plain decoding, each a verify
    // step of 3 query tokens plus 2 drafter passes; n-gram lookup (no GPU drafter) leaves the verify step
    // alone, which costs more than the plain step, by little (the weights are read once either way).
    let spec = |method| {
        let mut s = scenario(Engine::Vllm, None);
        s.features = EngineFeatures {
            speculative: Some(SpecDecoding::new(method, 2, Some(1.0)).unwrap()),
            ..EngineFeatures::default()
        };
        run_with(s, 1024, 256, 1, 3, u64::MAX)
    };
    let plain = run(Engine::Vllm, 1024, 256, 1, 3);
    let (ngram, mtp) = (spec(SpecMethod::Ngram), spec(SpecMethod::Mtp));
    assert_eq!((plain.steps, ngram.steps, mtp.steps), (3 * 256, 3 * 256, 3 * 256));
    assert!(
        ngram.tpot.mean > plain.tpot.mean && ngram.tpot.mean < 1.1 * plain.tpot.mean,
        "{ngram:?}"
    );
    assert!(mtp.tpot.mean > ngram.tpot.mean, "{mtp:?}");
    // Acceptance 3 (every draft taken): 255 tokens in ⌈255 / 3⌉ = 85 steps.
    let mut s = scenario(Engine::Vllm, None);
    s.features.speculative = Some(SpecDecoding::new(SpecMethod::Ngram, 2, Some(3.0)).unwrap());
    let fast = run_with(s, 1024, 256, 1, 3, u64::MAX);
    assert_eq!(fast.steps, 3 * (1 + 85));
    assert!(
        close(fast.tpot.mean, ngram.tpot.mean * 85.0 / 255.0, 0.01),
        "{fast:?}"
    );
}

#[test]
fn sglang_keeps_waves_in_phase_and_vllm_spreads_them() {
    // 16 users, ISL 4096, 8192-token prefill batches: SGLang prefills two prompts per step while decoding
    // waits, so the wave's first tokens come after 1, 2, …, 8 prefill steps: mean TTFT 4.5 prefill steps,
    // every wave (they finish together and return together). vLLM mixes the next prompts into decode
    // steps: after the first wave completions arrive in smaller groups and TTFT falls.
    let sglang = run(Engine::Sglang, 4096, 64, 16, 64);
    let step = prefill(2, 4096, 0, 0);
    assert!(
        close(sglang.ttft.mean, 4.5 * step, 0.01),
        "{:?} vs {}",
        sglang.ttft,
        4.5 * step
    );
    assert!(close(sglang.ttft.p99, 8.0 * step, 0.02), "{:?}", sglang.ttft);
    let vllm = run(Engine::Vllm, 4096, 64, 16, 64);
    assert!(
        vllm.ttft.mean < sglang.ttft.mean,
        "{:?} vs {:?}",
        vllm.ttft,
        sglang.ttft
    );
}

#[test]
fn closed_form_spans_match_the_step_by_step_reference() {
    for (engine, isl, osl, clients, requests) in [
        (Engine::Vllm, 1024, 128, 4, 12),
        (Engine::Vllm, 300, 500, 16, 40),
        (Engine::Sglang, 2048, 200, 8, 24),
        (Engine::TrtLlm, 512, 300, 12, 30),
    ] {
        let s = scenario(engine, None);
        let fast = run_with(s, isl, osl, clients, requests, u64::MAX);
        let slow = run_with(s, isl, osl, clients, requests, 1);
        assert_eq!(
            (fast.steps, fast.completed),
            (slow.steps, slow.completed),
            "{engine:?}"
        );
        assert!(
            fast.events * 4 < slow.events,
            "{engine:?}: {} vs {} events",
            fast.events,
            slow.events
        );
        for (name, a, b) in [
            ("ttft", fast.ttft.mean, slow.ttft.mean),
            ("ttft p99", fast.ttft.p99, slow.ttft.p99),
            ("tpot", fast.tpot.mean, slow.tpot.mean),
            ("tpot p90", fast.tpot.p90, slow.tpot.p90),
            ("itl p50", fast.itl.p50, slow.itl.p50),
            ("e2e", fast.e2e.mean, slow.e2e.mean),
            ("duration", fast.duration_s, slow.duration_s),
        ] {
            assert!(close(a, b, 1e-4), "{engine:?} {name}: spans {a} vs steps {b}");
        }
    }
}
