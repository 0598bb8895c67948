//! Tests of the recommendation: switch, keep, nothing fits, the engine-aware pick and its reasons.

use super::*;
use crate::advisor::advise_model;
use roofline_analysis::analysis::analyze_model;
use roofline_analysis::model::find_model;
use roofline_analysis::quant_config::find_quant_config;
use roofline_base::hardware::find_hardware;
use roofline_base::precision::Architecture;

fn recommend(hw: &str, model: &str, config: &str, batch: u32, context: u32) -> Recommendation {
    let hw = find_hardware(hw).unwrap().reference().unwrap();
    let model = find_model(model).unwrap();
    let w = Workload::decode(batch, context);
    let advice = advise_model(&hw, model, &w, config, &Corrections::REALISTIC).unwrap();
    recommend_model(&hw, model, &w, &Corrections::REALISTIC, &advice).unwrap()
}

#[test]
fn the_pick_is_the_fastest_config_that_fits() {
    let hw = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let model = find_model("llama-3.1-70b").unwrap();
    let w = Workload::decode(8, 4096);
    let advice = advise_model(&hw, model, &w, "bf16", &Corrections::REALISTIC).unwrap();
    let Recommendation::Switch(p) =
        recommend_model(&hw, model, &w, &Corrections::REALISTIC, &advice).unwrap()
    else {
        panic!("BF16 70B does not fit on one H100");
    };
    let fitting = advice.candidates.iter().filter(|c| c.fits_in_memory);
    let fastest = fitting.min_by(|a, b| a.time_s.total_cmp(&b.time_s)).unwrap();
    assert_eq!(p.config, fastest.config);
    assert!(p.memory_bytes <= p.capacity_bytes);
    assert!((p.speedup - fastest.speedup).abs() < 1e-9);
    assert!(p.reason.contains("does not fit"), "{}", p.reason);
}

#[test]
fn a_fitting_fastest_current_config_is_kept() {
    // Switch to the pick, then ask again: the answer is to keep it.
    let Recommendation::Switch(p) = recommend("h100_sxm", "llama-3.1-8b", "bf16", 1, 4096) else {
        panic!("BF16 8B at batch 1 is not the fastest");
    };
    match recommend("h100_sxm", "llama-3.1-8b", &p.config, 1, 4096) {
        Recommendation::Keep(k) => assert_eq!(k.config, p.config),
        other => panic!("{other:?}"),
    }
}

#[test]
fn nothing_fits_says_what_to_change() {
    // 405B on one 24 GB L4: even 4-bit weights exceed memory.
    let Recommendation::NothingFits {
        changes,
        smallest_bytes,
        capacity_bytes,
    } = recommend("l4", "llama-3.1-405b", "bf16", 1, 4096)
    else {
        panic!("405B fits on an L4?");
    };
    assert!(smallest_bytes > capacity_bytes);
    assert!(changes[0].starts_with("Smaller weights"), "{changes:?}");
    assert!(
        changes
            .iter()
            .any(|c| c.contains("weights and activations alone")),
        "{changes:?}"
    );
    assert!(changes.last().unwrap().starts_with("More"), "{changes:?}");
    // 70B at batch 512 × 128k tokens on an H100: the weights fit in 4 bits, the KV cache does not.
    let Recommendation::NothingFits { changes, .. } =
        recommend("h100_sxm", "llama-3.1-70b", "bf16", 512, 131_072)
    else {
        panic!("fits?");
    };
    assert!(
        changes.iter().any(|c| c.starts_with("Shorter context")),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.starts_with("Fewer sequences")),
        "{changes:?}"
    );
}

#[test]
fn memory_fit_shares_add_up() {
    let hw = find_hardware("h100_sxm").unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    let w = Workload::decode(1, 4096);
    let a = analyze_model(
        hw,
        model,
        find_quant_config("bf16").unwrap(),
        &w,
        &Corrections::NONE,
    )
    .unwrap();
    let fit = memory_fit(&a);
    // 79.22 GiB reported, vLLM's 0.92 of it usable.
    let capacity = 79.22 * 1_073_741_824.0;
    assert!(fit.fits && fit.capacity_share == 1.0 && fit.capacity_bytes == capacity);
    assert!((fit.usable_bytes - 0.92 * capacity).abs() < 1.0);
    assert!(
        (fit.weight_share + fit.activation_share + fit.kv_share - a.memory_required_bytes / capacity).abs()
            < 1e-12
    );
    assert!((fit.headroom_bytes - (0.92 * capacity - a.memory_required_bytes)).abs() < 1.0);
    assert_eq!((fit.gpus, fit.weight_bytes), (1, a.weight_bytes));
    assert!((fit.usable_share - 0.92).abs() < 1e-12);
}

#[test]
fn memory_fit_is_per_gpu() {
    // Llama-3.1-70B BF16 does not fit one H100; over four, each GPU holds a quarter of the weights.
    let hw = find_hardware("h100_sxm").unwrap();
    let model = find_model("llama-3.1-70b").unwrap();
    let w = Workload::decode(1, 4096);
    let bf16 = find_quant_config("bf16").unwrap();
    let one = memory_fit(&analyze_model(hw, model, bf16, &w, &Corrections::NONE).unwrap());
    let four = memory_fit(
        &roofline_analysis::analysis::analyze_model_parallel(
            hw,
            model,
            bf16,
            &w,
            &roofline_analysis::parallel::Parallelism::tensor(4),
            &Corrections::NONE,
        )
        .unwrap(),
    );
    assert!(!one.fits && four.fits && four.gpus == 4);
    assert!((four.weight_bytes - one.weight_bytes / 4.0).abs() / one.weight_bytes < 0.01);
    assert!(
        (four.weight_share
            + four.activation_share
            + four.kv_share
            + four.headroom_bytes / four.capacity_bytes
            - four.usable_share)
            .abs()
            < 1e-9
    );
}

#[test]
fn an_engine_choice_keeps_to_the_configs_it_runs_and_says_what_it_costs() {
    // Llama-3.1-8B decode at batch 32 on an L40S (Ada), reference mode: W4A8 (INT4 weights, FP8
    // activations) is the fastest config that fits, but on Ada only TensorRT-LLM lists it
    // (docs/research/low-precision.md §3.5).
    let l40s =
        roofline_base::hardware::find_hardware_in("l40s", roofline_base::hardware::Mode::Reference).unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    let decode = Workload {
        phase: roofline_analysis::analysis::Phase::Decode,
        batch: 32,
        context: 4096,
    };
    let p = Parallelism::SINGLE;
    let advice =
        crate::advisor::advise_model_parallel(l40s, model, &decode, &p, "bf16", &Corrections::REALISTIC)
            .unwrap();
    let pick = |engine| match recommend_model_for_engine(
        l40s,
        model,
        &decode,
        &p,
        &Corrections::REALISTIC,
        &advice,
        engine,
    )
    .unwrap()
    {
        Recommendation::Switch(p) => p,
        other => panic!("{other:?}"),
    };
    let any = pick(None);
    assert_eq!(any.config, "w4a8-int4-fp8");
    assert!(
        any.reason.contains("TensorRT-LLM runs it on Ada"),
        "{}",
        any.reason
    );
    let trt = pick(Some(Engine::TrtLlm));
    assert_eq!(trt.config, "w4a8-int4-fp8");
    // SGLang: the fastest config it runs, and why not W4A8.
    let sglang = pick(Some(Engine::Sglang));
    let config = find_quant_config(&sglang.config).unwrap();
    assert!(engines_running(config, Architecture::Ada).contains(&Engine::Sglang));
    assert!(sglang.time_s > any.time_s);
    assert!(
        sglang.reason.contains("INT4 weights, FP8 activations would be")
            && sglang.reason.contains("it needs TensorRT-LLM on Ada")
            && sglang.reason.contains("SGLang: W4A8: not on Ada"),
        "{}",
        sglang.reason
    );
}
