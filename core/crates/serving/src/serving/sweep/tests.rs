//! Tests of sweeps, their Pareto fronts and the SLA filter.

use super::*;
use roofline_analysis::memory::MemoryFraction;
use roofline_analysis::model::find_model;
use roofline_analysis::quant_config::quant_configs;
use roofline_base::hardware::{Mode, find_hardware_in};

#[test]
fn each_keeps_the_items_order_whatever_thread_runs_them() {
    let items: Vec<u64> = (0..200).collect();
    // Uneven work, so the threads finish out of order.
    let out = each(&items, |&i| (0..(i % 7) * 10_000).fold(i, |a, b| a ^ b) ^ i);
    let expected: Vec<u64> = items
        .iter()
        .map(|&i| (0..(i % 7) * 10_000).fold(i, |a, b| a ^ b) ^ i)
        .collect();
    assert_eq!(out, expected);
    assert!(each(&[] as &[u64], |&i| i).is_empty());
}

/// `configs` for Llama-3.1-8B on one H100 SXM (reference) at ISL 1024 / OSL 1024, the rest as
/// [`SweepSpec::new`].
fn h100_llama<'a>(configs: &'a [&'a QuantConfig]) -> SweepSpec<'a> {
    SweepSpec::new(
        find_hardware_in("h100_sxm", Mode::Reference).unwrap(),
        find_model("llama-3.1-8b").unwrap(),
        configs,
        ServingWorkload { isl: 1024, osl: 1024 },
    )
}

fn h100_sweep(loads: &[Load]) -> Sweep {
    let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
    sweep(&SweepSpec {
        loads,
        ..h100_llama(&configs)
    })
    .unwrap()
}

#[test]
fn a_memory_fraction_replaces_the_engines_value_and_keeps_its_rule() {
    let configs = [roofline_analysis::quant_config::find_quant_config("bf16").unwrap()];
    let run = |memory_fraction| {
        sweep(&SweepSpec {
            memory_fraction,
            ..h100_llama(&configs)
        })
    };
    let fit = |memory_fraction| run(memory_fraction).unwrap().fits.remove(0);
    let (default, half) = (fit(None), fit(Some(0.5)));
    // vLLM's rule, KV = capacity · f − weights − activations: from 0.92 to 0.5 the KV cache loses
    // 0.42 of the capacity, weights and activations unchanged.
    assert_eq!(default.preset.fraction, MemoryFraction::OfCapacity(0.92));
    assert_eq!(half.preset.fraction, MemoryFraction::OfCapacity(0.5));
    let lost = default.memory.kv_cache_bytes - half.memory.kv_cache_bytes;
    assert!(
        (lost - 0.42 * default.memory.capacity_bytes).abs() < 1e-6 * lost,
        "{lost}"
    );
    // Fewer sequences fit: each holds 2048 tokens of K and V (2 × 32 layers × 8 KV heads × 128 × 2 bytes
    // = 131,072 bytes per token, Llama-3.1-8B's config).
    assert_eq!(half.memory.kv_bytes_per_sequence, 2048.0 * 131_072.0);
    assert!(half.memory.max_sequences < default.memory.max_sequences);
    // Outside (0, 1] is an error, not a silent default.
    let err = run(Some(1.5)).unwrap_err();
    assert!(
        err.to_string()
            .contains("memory fraction must be in (0, 1], got 1.5"),
        "{err}"
    );
}

#[test]
fn the_grid_stops_at_what_fits() {
    assert_eq!(concurrency_grid(1), [1]);
    assert_eq!(concurrency_grid(202).last(), Some(&202));
    assert_eq!(concurrency_grid(202).len(), 16);
    assert_eq!(concurrency_grid(5000), CONCURRENCY_GRID);
    assert_eq!(concurrency_grid(2048), CONCURRENCY_GRID);
    assert_eq!(concurrency_grid(1024).last(), Some(&1024));
}

#[test]
fn a_sweep_covers_every_config_the_device_runs_and_lists_the_rest() {
    let s = h100_sweep(&[]);
    let runs = |key: &str| s.fits.iter().any(|f| f.config == key);
    assert!(runs("bf16") && runs("fp8") && runs("w4a16-int4"));
    // Hopper has no FP4 path: listed with the architecture, never silently dropped.
    let nvfp4 = s.unsupported.iter().find(|u| u.config == "nvfp4-w4a4").unwrap();
    assert!(nvfp4.reason.contains("Hopper"), "{}", nvfp4.reason);
    assert_eq!(s.fits.len() + s.unsupported.len(), quant_configs().len());
    // Each config runs the grid up to its own limit: BF16 holds 225 sequences of 2048 tokens (memory.rs).
    let bf16: Vec<f64> = s
        .points
        .iter()
        .filter(|p| p.config == "bf16")
        .map(|p| p.concurrency)
        .collect();
    assert_eq!(bf16.len(), 16);
    assert_eq!(bf16.last(), Some(&225.0));
    assert!(s.points.iter().all(|p| p.fits));
}

#[test]
fn pareto_points_are_exactly_the_undominated_ones() {
    let s = h100_sweep(&[]);
    let dominates = |a: &ServingPoint, b: &ServingPoint| {
        a.tokens_per_s_per_user >= b.tokens_per_s_per_user
            && a.output_tokens_per_s_per_gpu >= b.output_tokens_per_s_per_gpu
            && (a.tokens_per_s_per_user > b.tokens_per_s_per_user
                || a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu)
    };
    let front = s.points.iter().filter(|p| p.pareto).count();
    assert!(front >= 2 && front < s.points.len(), "{front}");
    for p in &s.points {
        assert_eq!(
            p.pareto,
            !s.points.iter().any(|o| dominates(o, p)),
            "{} {}",
            p.config,
            p.concurrency
        );
    }
}

/// A sweep of two configs with three points each, whose metrics are set by hand.
fn tiny() -> Sweep {
    let mut s = h100_sweep(&[Load::Concurrency(1), Load::Concurrency(8), Load::Concurrency(32)]);
    s.fits.retain(|f| f.config == "bf16" || f.config == "fp8");
    s.points.retain(|p| p.config == "bf16" || p.config == "fp8");
    // (config, concurrency, TTFT s, TPOT s, output tokens/s per GPU)
    let table = [
        ("bf16", 1, 0.05, 0.010, 100.0),
        ("bf16", 8, 0.08, 0.015, 500.0),
        ("bf16", 32, 0.30, 0.030, 1000.0),
        ("fp8", 1, 0.04, 0.008, 120.0),
        ("fp8", 8, 0.06, 0.012, 700.0),
        ("fp8", 32, 0.50, 0.025, 1200.0),
    ];
    for p in &mut s.points {
        let row = table
            .iter()
            .find(|r| r.0 == p.config && f64::from(r.1) == p.concurrency)
            .unwrap();
        (p.ttft_s, p.tpot_s, p.output_tokens_per_s_per_gpu) = (row.2, row.3, row.4);
        p.tokens_per_s_per_user = 1.0 / row.3;
    }
    s
}

#[test]
fn the_sla_picks_the_most_output_per_gpu_among_points_meeting_it() {
    // TTFT ≤ 100 ms and TPOT ≤ 20 ms: concurrency 32 breaks both limits for BF16 and TTFT for FP8;
    // concurrency 8 meets them in both: BF16 500, FP8 700 tokens/s per GPU → FP8 at 8.
    let sla = Sla {
        ttft_max_s: Some(0.1),
        tpot_max_s: Some(0.02),
        tokens_per_user_min: None,
    };
    let out = sla.evaluate(&tiny());
    let best = |config: &str| {
        let pick = out.picks.iter().find(|p| p.config == config).unwrap();
        pick.best.as_ref().map(|p| p.concurrency)
    };
    assert_eq!((best("bf16"), best("fp8")), (Some(8.0), Some(8.0)));
    let r = out.recommendation.unwrap();
    assert_eq!((r.config.as_str(), r.concurrency), ("fp8", 8.0));
    assert!(out.reason.is_none());
    // 60 tokens/s per user at least (TPOT ≤ 16.7 ms): FP8 at 8 (83/s) still; BF16 at 8 (66.7/s) too.
    let users = Sla {
        tokens_per_user_min: Some(60.0),
        ..Sla::default()
    };
    assert_eq!(users.evaluate(&tiny()).recommendation.unwrap().concurrency, 8.0);
}

#[test]
fn an_impossible_sla_names_the_binding_limit_at_the_least_load() {
    // TPOT ≤ 5 ms: one user already sees 10 ms (BF16) and 8 ms (FP8); FP8 is the closer (1.6× over).
    let sla = Sla {
        tpot_max_s: Some(0.005),
        ..Sla::default()
    };
    let out = sla.evaluate(&tiny());
    assert!(out.recommendation.is_none());
    let reason = out.reason.unwrap();
    assert_eq!(
        reason,
        "no config meets the SLA; the closest: TPOT at concurrency 1 is 8.00 ms > 5.00 ms: even one user is \
         too slow on h100_sxm in fp8"
    );
    let bf16 = out.picks.iter().find(|p| p.config == "bf16").unwrap();
    assert!(
        bf16.reason
            .as_ref()
            .unwrap()
            .starts_with("TPOT at concurrency 1 is 10.0 ms > 5.00 ms")
    );
    assert!(
        Sla {
            ttft_max_s: Some(-1.0),
            ..Sla::default()
        }
        .check()
        .is_err()
    );
}
