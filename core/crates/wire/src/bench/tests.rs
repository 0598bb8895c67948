//! Each tool's file, written from its documented schema, into base units; errors naming line and field;
//! the one-pass reader on a 20,000-line file; comparisons percentile by percentile.

use super::*;

/// A `vllm bench serve --save-result` file: the field set `serve.py` writes (trimmed of per-request lists).
const VLLM: &str = include_str!("../../../../tests/data/serving/vllm_bench_serve.json");
/// Two SGLang `bench_serving` runs appended to one JSONL file, the second at an infinite rate.
const SGLANG: &str = include_str!("../../../../tests/data/serving/sglang_bench_serving.jsonl");
/// Two `sglang.benchmark.serving` (0.5.23) runs: one at 16 clients, one at 4 requests/s.
const SGLANG_JSONL: &str = include_str!("../../../../tests/data/serving/sglang_benchmark_serving.jsonl");
/// AIPerf 0.13's `profile_export_aiperf.json` (schema 1.4) of a 32-client run.
const AIPERF: &str = include_str!("../../../../tests/data/serving/aiperf_profile_export.json");
/// `vllm bench sweep serve`'s summary.csv: pandas' index column, two runs.
const SWEEP: &str = include_str!("../../../../tests/data/serving/vllm_sweep_summary.csv");
/// InferenceX `agg_bmk.json`: two rows as `utils/process_result.py` writes them.
const INFERENCEX: &str = include_str!("../../../../tests/data/serving/inferencex_agg_bmk.json");
/// The plain CSV format.
const CSV: &str = include_str!("../../../../tests/data/serving/measured.csv");

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn vllm_bench_serve_json_reads_into_base_units() {
    let points = parse_measured(VLLM).unwrap();
    assert_eq!(points.len(), 1);
    let p = &points[0];
    assert_eq!(p.format, BenchFormat::VllmBenchServe);
    assert_eq!(
        (p.concurrency, p.request_rate, p.completed),
        (Some(16), None, Some(160))
    );
    // 163,840 input and 163,840 output tokens over 160 requests: 1024 each.
    assert_eq!((p.isl, p.osl, p.range_ratio), (Some(1024.0), Some(1024.0), None));
    assert!(close(p.ttft_s, 0.08531) && close(p.tpot_s, 0.01162));
    assert!(close(p.e2e_s.unwrap(), 11.97853) && close(p.itl_s.unwrap(), 0.01162));
    assert_eq!(p.output_tokens_per_s, 1361.4);
    assert_eq!(p.load(), Some(Load::Concurrency(16)));
    // Median and P99 (the default --metric-percentiles), no P90.
    assert!(
        close(p.ttft_percentiles.p50_s.unwrap(), 0.07902) && close(p.ttft_percentiles.p99_s.unwrap(), 0.1517)
    );
    assert_eq!(p.ttft_percentiles.p90_s, None);
    assert!(close(p.e2e_percentiles.p99_s.unwrap(), 12.4809));
    assert_eq!(p.client().kind, ClientKind::VllmBenchServe);
    assert_eq!((p.client().requests, p.client().range_ratio()), (Some(160), 0.0));
}

#[test]
fn sglang_jsonl_reads_every_line_nominal_lengths_and_python_infinity() {
    let points = parse_measured(SGLANG).unwrap();
    assert_eq!(points.len(), 2);
    assert!(points.iter().all(|p| p.format == BenchFormat::SglangBenchServing));
    assert_eq!((points[0].line, points[1].line), (1, 2));
    assert_eq!(points[0].concurrency, Some(64));
    // The second run's request_rate is Python's Infinity: no rate, its concurrency stands.
    assert_eq!((points[1].request_rate, points[1].concurrency), (None, Some(128)));
    assert_eq!(points[1].e2e_s, Some(45.3125));
    // The random dataset's nominal lengths and range ratio (1.0: every prompt 1024 tokens).
    assert_eq!((points[0].isl, points[0].range_ratio), (Some(1024.0), Some(1.0)));
    let runs = parse_measured(SGLANG_JSONL).unwrap();
    assert_eq!((runs[0].concurrency, runs[0].range_ratio), (Some(16), Some(0.8)));
    assert!(close(runs[0].ttft_percentiles.p90_s.unwrap(), 0.4102));
    assert!(close(runs[0].e2e_percentiles.p90_s.unwrap(), 10.6004));
    assert_eq!((runs[1].concurrency, runs[1].request_rate), (None, Some(4.0)));
    assert_eq!(runs[1].load(), Some(Load::Rate(4.0)));
    let client = runs[0].client();
    assert_eq!(
        (client.kind, client.range_ratio(), client.requests),
        (ClientKind::SglangBenchServing, 0.8, Some(160))
    );
}

#[test]
fn aiperf_reads_its_units_and_its_itl_as_tpot() {
    let points = parse_measured(AIPERF).unwrap();
    assert_eq!(points.len(), 1);
    let p = &points[0];
    assert_eq!(
        (p.format, p.line, p.concurrency, p.completed),
        (BenchFormat::Aiperf, 1, Some(32), Some(320))
    );
    // inter_token_latency is (E2E − TTFT) / (OSL − 1) per request: vLLM's TPOT, 8.75 ms.
    assert!(close(p.tpot_s, 0.00875) && close(p.tpot_percentiles.p90_s.unwrap(), 0.0091));
    assert!(close(p.ttft_s, 0.1426) && close(p.ttft_percentiles.p99_s.unwrap(), 0.4105));
    assert!(close(p.e2e_s.unwrap(), 9.095) && p.itl_s.is_none());
    assert_eq!(
        (p.isl, p.osl, p.output_tokens_per_s),
        (Some(1024.0), Some(1024.0), 3604.5)
    );
    // A unit it cannot convert is named.
    let bad = AIPERF.replacen("\"unit\": \"ms\"", "\"unit\": \"fortnights\"", 1);
    let e = parse_measured(&bad).unwrap_err().to_string();
    assert!(
        e.contains("field `request_latency` has unit \"fortnights\""),
        "{e}"
    );
    let seconds = AIPERF.replace(
        "\"unit\": \"ms\",\n    \"avg\": 142.6",
        "\"unit\": \"s\",\n    \"avg\": 0.1426",
    );
    assert!(close(parse_measured(&seconds).unwrap()[0].ttft_s, 0.1426));
}

#[test]
fn vllm_sweep_summary_rows_read_as_vllm_results() {
    let points = parse_measured(SWEEP).unwrap();
    assert_eq!(points.len(), 2);
    assert!(points.iter().all(|p| p.format == BenchFormat::VllmSweep));
    assert_eq!((points[0].line, points[1].line), (2, 3));
    assert_eq!(
        (points[0].concurrency, points[1].concurrency),
        (Some(8), Some(32))
    );
    assert_eq!(points[1].isl, Some(1024.0));
    assert!(close(points[1].ttft_percentiles.p99_s.unwrap(), 0.2604));
    assert_eq!(points[0].client().requests, Some(80));
}

#[test]
fn inferencex_rows_read_per_gpu_figures_over_their_gpus() {
    let points = parse_measured(INFERENCEX).unwrap();
    assert_eq!(points.len(), 2);
    let (h200, b200) = (&points[0], &points[1]);
    assert_eq!((h200.line, b200.line), (2, 41));
    assert_eq!((h200.gpus, b200.gpus), (Some(1), Some(8)));
    // Output tokens/s of the whole server: 1205.1 per GPU × tp 8.
    assert!(close(b200.output_tokens_per_s, 9640.8) && close(b200.output_tokens_per_s_per_gpu(1), 1205.1));
    assert!(close(h200.ttft_s, 0.3102) && close(h200.ttft_percentiles.p50_s.unwrap(), 0.2553));
    assert!(close(h200.itl_percentiles.p99_s.unwrap(), 0.0402));
    assert_eq!((h200.isl, h200.range_ratio), (Some(8192.0), Some(0.8)));
    assert_eq!(
        b200.label.as_deref(),
        Some("b200 deepseek-ai/DeepSeek-R1-0528 trt fp4 mtp")
    );
    let client = h200.client();
    assert_eq!(
        (client.kind, client.requests_at(Load::Concurrency(16))),
        (ClientKind::InferenceX, 160)
    );
    let disagg = INFERENCEX.replacen("\"disagg\": false", "\"disagg\": true", 1);
    let e = parse_measured(&disagg).unwrap_err().to_string();
    assert!(e.contains("line 2: field `disagg` is true"), "{e}");
}

#[test]
fn csv_reads_required_and_optional_columns() {
    let points = parse_measured(CSV).unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!((points[0].line, points[2].line), (2, 4));
    assert_eq!(points[2].gpus, Some(2));
    assert_eq!(points[1].isl, Some(4096.0));
    assert_eq!(points[0].isl, None);
    assert!((points[2].ttft_s - 0.4).abs() < 1e-12);
}

#[test]
fn malformed_files_name_the_line_and_field() {
    let err = |text: &str| parse_measured(text).unwrap_err().to_string();
    let header = "concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus";
    assert!(
        err("concurrency,ttft_ms,output_tokens_per_s,gpus\n1,2,3,4\n").contains("missing column `tpot_ms`")
    );
    let e = err(&format!("{header}\n1,10,5,100,1\n2,10,-5,100,1\n"));
    assert!(
        e.contains("line 3: field `tpot_ms` must be a positive number, found -5"),
        "{e}"
    );
    let e = err(&format!("{header}\n0,10,5,100,1\n"));
    assert!(e.contains("line 2: field `concurrency`"), "{e}");
    let e = err(&format!("{header}\n1,10,5,100\n"));
    assert!(e.contains("CSV") && e.contains("line 2"), "{e}");
    let missing = VLLM.replace("\"mean_tpot_ms\"", "\"mean_tpot\"");
    assert!(err(&missing).contains("line 1: field `mean_tpot_ms` is missing"));
    let typed = VLLM.replace("\"output_throughput\": 1361.4", "\"output_throughput\": \"fast\"");
    assert!(err(&typed).contains("field `output_throughput` must be a positive number, found \"fast\""));
    let burst = VLLM.replace("\"max_concurrency\": 16", "\"max_concurrency\": null");
    assert!(err(&burst).contains("field `max_concurrency` is not set and request_rate is infinite"));
    let second = format!("{}\n{{\"completed\": 3", SGLANG.trim_end());
    assert!(err(&second).contains("line 3: not JSON"), "{}", err(&second));
    let broken = format!("{}\n{{\"completed\": 3,}}\n", SGLANG.trim_end());
    assert!(err(&broken).contains("line 3: not JSON"), "{}", err(&broken));
    assert!(err(&format!("{header}\n")).contains("no measured serving run"));
    assert!(err("[1, 2]").contains("line 1: expected a benchmark result object"));
}

/// A JSONL file of `runs` SGLang runs, one per line.
fn jsonl(runs: usize) -> String {
    let line = SGLANG_JSONL.lines().next().unwrap();
    let mut text = String::with_capacity(runs * (line.len() + 1));
    for _ in 0..runs {
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[test]
fn a_long_jsonl_file_is_read_in_one_pass_with_every_line_number() {
    // 20,000 runs: each keeps its own line (the reader counts lines as it scans; see the criterion bench
    // `core/benches/bench_files.rs` for its time), and a bad field on the last line is named there.
    let text = jsonl(20_000);
    let points = parse_measured(&text).unwrap();
    assert_eq!(points.len(), 20_000);
    assert!(points.iter().enumerate().all(|(i, p)| p.line == i + 1));
    let bad = format!(
        "{text}{}\n",
        SGLANG_JSONL
            .lines()
            .next()
            .unwrap()
            .replace("\"completed\": 160", "\"completed\": -1")
    );
    assert!(
        parse_measured(&bad)
            .unwrap_err()
            .to_string()
            .contains("line 20001: field `completed`")
    );
}

#[test]
fn files_over_the_size_cap_and_runs_over_the_row_cap_are_refused() {
    let e = check_bench_size(MAX_BENCH_FILE_BYTES + 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("measured serving files are read up to 64 MiB"), "{e}");
    assert!(check_bench_size(MAX_BENCH_FILE_BYTES).is_ok());
    let csv = format!(
        "concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus\n{}",
        "1,10,5,100,1\n".repeat(MAX_BENCH_RUNS + 1)
    );
    let e = parse_measured(&csv).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "line {}: more than {MAX_BENCH_RUNS} runs",
            MAX_BENCH_RUNS + 2
        )),
        "{e}"
    );
}

#[test]
fn measured_points_compare_with_the_same_clients_simulation() {
    use roofline_analysis::corrections::Corrections;
    use roofline_analysis::model::find_model;
    use roofline_analysis::parallel::Parallelism;
    use roofline_analysis::quant_config::find_quant_config;
    use roofline_base::hardware::{Mode, find_hardware_in};
    use roofline_serving::serving::{Engine, SchedulerKind};
    let hardware = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
    let scenario = Engine::Vllm.preset(hardware, &Parallelism::SINGLE).scenario(
        hardware,
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config("bf16").unwrap(),
        Parallelism::SINGLE,
        Corrections::REALISTIC,
        SchedulerKind::InFlight,
    );
    let fallback = ServingWorkload { isl: 512, osl: 64 };
    let mut measured = parse_measured(VLLM).unwrap();
    measured.extend(parse_measured(CSV).unwrap());
    let rows = compare_measured(scenario, fallback, &measured).unwrap();
    assert_eq!(rows.len(), 4);
    // The vLLM run: 1024/1024 tokens from its totals, its 160 requests from 16 clients simulated.
    let vllm = &rows[0];
    assert_eq!(vllm.workload, ServingWorkload { isl: 1024, osl: 1024 });
    assert_eq!(vllm.client.requests, Some(160));
    let mut model = ServingModel::new(scenario, vllm.workload)
        .unwrap()
        .with_client(vllm.client)
        .unwrap();
    let p = model.predict(Load::Concurrency(16)).unwrap().steady().unwrap();
    assert_eq!(vllm.predicted, ServingOutcome::Steady(p.clone()));
    let ratio = |r: Option<f64>, expected: f64| (r.unwrap() / expected - 1.0).abs() < 1e-12;
    assert!(ratio(vllm.tpot_ratio, 0.01162 / p.tpot_s));
    assert!(ratio(vllm.ttft_ratio, 0.08531 / p.ttft_s));
    assert!(ratio(
        vllm.output_throughput_ratio,
        1361.4 / p.output_tokens_per_s_per_gpu
    ));
    // Mean, median and P99 of TTFT, TPOT, ITL and E2E: twelve statistics, each against its own.
    assert_eq!(vllm.percentiles.len(), 12);
    let p99 = vllm
        .percentiles
        .iter()
        .find(|r| r.metric == LatencyMetric::Ttft && r.percentile == Percentile::P99)
        .unwrap();
    assert_eq!((p99.measured_s, p99.predicted_s), (0.1517, p.ttft_p99_s));
    assert!(vllm.notes.is_empty());
    // CSV rows without lengths take the fallback; the 2-GPU row is divided by its own GPUs, with a note.
    assert_eq!(rows[1].workload, fallback);
    let two = &rows[3];
    let ServingOutcome::Steady(q) = &two.predicted else {
        panic!("{:?}", two.predicted)
    };
    assert_eq!(
        two.output_throughput_ratio,
        Some(2150.0 / 2.0 / q.output_tokens_per_s_per_gpu)
    );
    assert!(two.notes[0].contains("measured on 2 GPUs, predicted on 1"));
}
