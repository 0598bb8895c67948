//! Serving simulation cost: what `roofline serve --scenario` and the page recompute for one device.
//!
//! Llama-3.1-8B on one H200 SXM in reference mode with vLLM's defaults and InferenceX's client (lengths
//! from 0.8 × L to L, 10 × concurrency requests): every precision config the device runs × the concurrency
//! grid 1 … 512 (capped at what fits), at 1k/1k and at 8k/1k, Pareto marking included. Target: ≤ 100 ms
//! natively for both sweeps together.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_core::{
    BenchClient, ClientKind, Mode, QuantConfig, ServingWorkload, SweepSpec, find_hardware_in, find_model,
    quant_configs, sweep,
};

fn serving(c: &mut Criterion) {
    let hardware = find_hardware_in("h200_sxm", Mode::Reference).unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    let configs: Vec<&QuantConfig> = quant_configs()
        .iter()
        .filter(|config| config.check_support(hardware).is_ok())
        .collect();
    let specs: Vec<SweepSpec<'_>> = [(1024, 1024), (8192, 1024)]
        .into_iter()
        .map(|(isl, osl)| SweepSpec {
            client: BenchClient::of(ClientKind::InferenceX),
            ..SweepSpec::new(hardware, model, &configs, ServingWorkload { isl, osl })
        })
        .collect();
    let runs: Vec<_> = specs.iter().map(|s| sweep(s).unwrap()).collect();
    let points: usize = runs.iter().map(|r| r.points.len()).sum();
    let steps: u64 = runs
        .iter()
        .flat_map(|r| &r.points)
        .map(|p| p.simulated_steps)
        .sum();
    let events: u64 = runs
        .iter()
        .flat_map(|r| &r.points)
        .map(|p| p.simulated_events)
        .sum();
    c.bench_function(
        &format!(
            "llama-3.1-8b/h200_sxm/{} configs x 1..512 users x 1k1k+8k1k: {points} points, {steps} steps, {events} events",
            configs.len()
        ),
        |b| b.iter(|| specs.iter().map(|s| black_box(sweep(s).unwrap()).points.len()).sum::<usize>()),
    );
}

criterion_group!(benches, serving);
criterion_main!(benches);
