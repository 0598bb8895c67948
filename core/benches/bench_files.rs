//! Reading a measured serving file: 20,000 SGLang JSONL runs (one per line, `sglang.benchmark.serving`'s
//! fields), parsed into base units with every line number. Target: ≤ 1 s.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_core::parse_measured;

const RUN: &str = include_str!("../tests/data/serving/sglang_benchmark_serving.jsonl");

fn bench_files(c: &mut Criterion) {
    let line = RUN.lines().next().unwrap();
    let text: String = std::iter::repeat_n(format!("{line}\n"), 20_000).collect();
    c.bench_function(
        &format!(
            "parse 20,000 SGLang JSONL lines ({:.1} MB)",
            text.len() as f64 / 1e6
        ),
        |b| b.iter(|| black_box(parse_measured(&text).unwrap()).len()),
    );
}

criterion_group!(benches, bench_files);
criterion_main!(benches);
