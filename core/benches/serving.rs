//! Serving sweep cost: what `roofline serve` and the page recompute for one scenario.
//!
//! Llama-3.1-8B at ISL 1024 / OSL 1024 on one H100 SXM in reference mode with vLLM's defaults: every
//! precision config the device runs × the concurrency grid up to the most that fit (capped at 512), Pareto
//! marking included. Target: ≤ 50 ms natively.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_core::{
    Mode, QuantConfig, ServingWorkload, SweepSpec, find_hardware_in, find_model, quant_configs, sweep,
};

fn serving(c: &mut Criterion) {
    let hardware = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    let configs: Vec<&QuantConfig> = quant_configs()
        .iter()
        .filter(|config| config.check_support(hardware).is_ok())
        .collect();
    let spec = SweepSpec::new(
        hardware,
        model,
        &configs,
        ServingWorkload { isl: 1024, osl: 1024 },
    );
    let points = sweep(&spec).unwrap().points.len();
    c.bench_function(
        &format!(
            "llama-3.1-8b/h100_sxm/sweep of {} configs, {points} points",
            configs.len()
        ),
        |b| b.iter(|| black_box(sweep(&spec).unwrap())),
    );
}

criterion_group!(benches, serving);
criterion_main!(benches);
