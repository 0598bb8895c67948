//! Whole-model analysis cost: what the page recomputes on every slider move.
//!
//! Llama-3.1-70B on a B200 in reference mode, the default (every config is native there): every precision
//! config in decode and prefill, the model advisor (which analyses every config once more plus its
//! baseline), and building a reference spec from the catalog (done on every device change).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_core::{
    Corrections, Mode, Phase, Workload, advise_model, analyze_model, find_hardware, find_hardware_in,
    find_model, quant_configs,
};

fn analysis(c: &mut Criterion) {
    let hardware = find_hardware_in("b200", Mode::Reference).unwrap();
    c.bench_function("b200/reference spec", |b| {
        b.iter(|| black_box(find_hardware("b200").unwrap().reference().unwrap()));
    });
    let model = find_model("llama-3.1-70b").unwrap();
    for (label, phase) in [("decode", Phase::Decode), ("prefill", Phase::Prefill)] {
        let workload = Workload {
            phase,
            batch: 8,
            context: 4096,
        };
        c.bench_function(
            &format!("llama-3.1-70b/{label}/all {} configs", quant_configs().len()),
            |b| {
                b.iter(|| {
                    for config in quant_configs() {
                        black_box(
                            analyze_model(hardware, model, config, &workload, &Corrections::REALISTIC)
                                .unwrap(),
                        );
                    }
                });
            },
        );
    }
    let decode = Workload {
        phase: Phase::Decode,
        batch: 1,
        context: 4096,
    };
    c.bench_function("llama-3.1-70b/advise_model", |b| {
        b.iter(|| {
            black_box(advise_model(hardware, model, &decode, "bf16", &Corrections::REALISTIC).unwrap())
        });
    });
}

criterion_group!(benches, analysis);
criterion_main!(benches);
