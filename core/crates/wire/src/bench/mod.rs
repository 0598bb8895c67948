//! Measured serving results ([`parse_measured`], pure: from the file's text, in one pass, within
//! [`MAX_BENCH_FILE_BYTES`]) and their comparison, percentile by percentile, with the simulation of the same
//! client at the same load and lengths ([`compare_measured`]).
//!
//! Its rules and derivations: docs/design/core.md and docs/validation/serving.md.

mod fields;
mod formats;
mod scan;
#[cfg(test)]
mod tests;

use roofline_base::Error;
use serde_json::{Map, Value};

use roofline_serving::serving::{
    BenchClient, ClientKind, Load, Percentile, ServingModel, ServingOutcome, ServingPoint, ServingScenario,
    ServingWorkload,
};

use fields::CsvRow;

/// Largest measured-serving file read, in bytes (64 MiB: about 100,000 JSONL runs); the CLI and the page's
/// import refuse larger files before reading them.
pub const MAX_BENCH_FILE_BYTES: u64 = 64 << 20;

/// Most runs one file may hold.
pub const MAX_BENCH_RUNS: usize = 100_000;

/// Which tool wrote a measured point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchFormat {
    /// `vllm bench serve --save-result` JSON.
    VllmBenchServe,
    /// SGLang `bench_serving` / `sglang.benchmark.serving` JSONL.
    SglangBenchServing,
    /// AIPerf `profile_export_aiperf.json`.
    Aiperf,
    /// `vllm bench sweep serve` summary.csv.
    VllmSweep,
    /// InferenceX `agg_bmk.json` rows.
    #[serde(rename = "inferencex")]
    InferenceX,
    /// Plain CSV.
    Csv,
}

impl BenchFormat {
    /// The tool's name, e.g. `vllm bench serve`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            BenchFormat::VllmBenchServe => "vllm bench serve",
            BenchFormat::SglangBenchServing => "SGLang bench_serving",
            BenchFormat::Aiperf => "AIPerf",
            BenchFormat::VllmSweep => "vllm bench sweep",
            BenchFormat::InferenceX => "InferenceX",
            BenchFormat::Csv => "CSV",
        }
    }

    /// The client whose rules the run followed: vLLM's for its own files, AIPerf's concurrency phase (fixed
    /// lengths, N at once) and the plain CSV; SGLang's and InferenceX's their own.
    #[must_use]
    pub const fn client_kind(self) -> ClientKind {
        match self {
            BenchFormat::SglangBenchServing => ClientKind::SglangBenchServing,
            BenchFormat::InferenceX => ClientKind::InferenceX,
            BenchFormat::VllmBenchServe | BenchFormat::Aiperf | BenchFormat::VllmSweep | BenchFormat::Csv => {
                ClientKind::VllmBenchServe
            }
        }
    }
}

/// Median, P90 and P99 of one metric of a run, where the file has them, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct MeasuredPercentiles {
    /// Median.
    pub p50_s: Option<f64>,
    /// 90th percentile.
    pub p90_s: Option<f64>,
    /// 99th percentile.
    pub p99_s: Option<f64>,
}

/// One measured serving run, in base units; serializes to the JSON the page keeps in local storage and
/// reads back (fields added later read as absent from older JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeasuredServingPoint {
    /// The tool that wrote it.
    pub format: BenchFormat,
    /// Line of the file it starts on (1-based).
    pub line: usize,
    /// Clients of a closed loop (`--max-concurrency`), if set.
    pub concurrency: Option<u32>,
    /// Request rate, requests/s, if finite.
    pub request_rate: Option<f64>,
    /// Requests completed (JSON formats).
    pub completed: Option<u64>,
    /// Input tokens per request: the run's mean, or the nominal length when `range_ratio` is set.
    pub isl: Option<f64>,
    /// Output tokens per request, as `isl`.
    pub osl: Option<f64>,
    /// Mean time to first token, s.
    pub ttft_s: f64,
    /// Mean time per output token after the first, s.
    pub tpot_s: f64,
    /// Mean end-to-end latency, s, if given.
    pub e2e_s: Option<f64>,
    /// Generated tokens/s of the whole server (every GPU of the replica).
    pub output_tokens_per_s: f64,
    /// GPUs of the replica, if the file says (CSV, InferenceX).
    pub gpus: Option<u32>,
    /// Mean inter-token (inter-chunk) latency, s, if given.
    #[serde(default)]
    pub itl_s: Option<f64>,
    /// TTFT percentiles.
    #[serde(default)]
    pub ttft_percentiles: MeasuredPercentiles,
    /// TPOT percentiles.
    #[serde(default)]
    pub tpot_percentiles: MeasuredPercentiles,
    /// ITL percentiles.
    #[serde(default)]
    pub itl_percentiles: MeasuredPercentiles,
    /// E2E latency percentiles.
    #[serde(default)]
    pub e2e_percentiles: MeasuredPercentiles,
    /// The client's `--random-range-ratio` when `isl`/`osl` are its nominal lengths (SGLang's random dataset,
    /// InferenceX); `None` when they are the run's means.
    #[serde(default)]
    pub range_ratio: Option<f64>,
    /// What ran, where the file says (InferenceX: device, model, framework, precision, speculative method).
    #[serde(default)]
    pub label: Option<String>,
}

impl MeasuredServingPoint {
    /// GPUs it ran on: the file's own count, else `scenario_gpus` (those of the scenario it is taken to have
    /// run with).
    #[must_use]
    pub fn gpus_or(&self, scenario_gpus: u32) -> u32 {
        self.gpus.unwrap_or(scenario_gpus)
    }

    /// Output tokens/s per GPU: the whole server's rate over every GPU it ran on ([`Self::gpus_or`]).
    #[must_use]
    pub fn output_tokens_per_s_per_gpu(&self, scenario_gpus: u32) -> f64 {
        self.output_tokens_per_s / f64::from(self.gpus_or(scenario_gpus).max(1))
    }

    /// The load it ran at: its concurrency, else its rate.
    #[must_use]
    pub fn load(&self) -> Option<Load> {
        self.concurrency
            .map(Load::Concurrency)
            .or(self.request_rate.map(Load::Rate))
    }

    /// The client that sent its requests, as the simulation replays it: the tool's rules, its request
    /// count, and its range ratio when the lengths are nominal (fixed lengths at the means otherwise).
    #[must_use]
    pub fn client(&self) -> BenchClient {
        let kind = self.format.client_kind();
        let fixed = match kind {
            ClientKind::VllmBenchServe => 0.0,
            ClientKind::SglangBenchServing | ClientKind::InferenceX => 1.0,
        };
        BenchClient {
            range_ratio: Some(self.range_ratio.unwrap_or(fixed)),
            requests: self.completed.and_then(|n| u32::try_from(n).ok()),
            ..BenchClient::of(kind)
        }
    }

    /// The measured statistic `p` of `metric`, if the file has it.
    #[must_use]
    pub fn measured(&self, metric: LatencyMetric, p: Percentile) -> Option<f64> {
        let (mean, pct) = match metric {
            LatencyMetric::Ttft => (Some(self.ttft_s), &self.ttft_percentiles),
            LatencyMetric::Tpot => (Some(self.tpot_s), &self.tpot_percentiles),
            LatencyMetric::Itl => (self.itl_s, &self.itl_percentiles),
            LatencyMetric::E2e => (self.e2e_s, &self.e2e_percentiles),
        };
        match p {
            Percentile::Mean => mean,
            Percentile::P50 => pct.p50_s,
            Percentile::P90 => pct.p90_s,
            Percentile::P99 => pct.p99_s,
        }
    }
}

/// Refuses a file over [`MAX_BENCH_FILE_BYTES`] (called before reading it, and by [`parse_measured`]).
///
/// # Errors
/// [`Error::InvalidInput`] naming the size and the limit.
pub fn check_bench_size(bytes: u64) -> Result<(), Error> {
    if bytes > MAX_BENCH_FILE_BYTES {
        return Err(Error::InvalidInput(format!(
            "the file is {:.1} MiB; measured serving files are read up to {} MiB",
            bytes as f64 / f64::from(1 << 20),
            MAX_BENCH_FILE_BYTES >> 20
        )));
    }
    Ok(())
}

/// Parses measured serving results, detected from the text: `vllm bench serve` JSON (one object, or one per
/// line), SGLang JSONL, AIPerf `profile_export_aiperf.json`, InferenceX `agg_bmk.json` (an array of rows),
/// `vllm bench sweep` summary.csv or the plain CSV. One pass over the text, keeping only the runs.
///
/// # Errors
/// [`Error::InvalidInput`] naming the line and field: a file over [`MAX_BENCH_FILE_BYTES`] or with more than
/// [`MAX_BENCH_RUNS`] runs, not JSON or CSV, a required field missing or not a positive number, a unit not
/// understood, a run with neither a concurrency nor a finite rate, or no run at all.
///
/// # Examples
/// ```
/// use roofline_wire::*;
/// let csv = "concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus\n8,120.5,11.2,690,1\n";
/// let points = parse_measured(csv).unwrap();
/// assert_eq!(points[0].concurrency, Some(8));
/// assert!((points[0].tpot_s - 0.0112).abs() < 1e-12);
/// let bad = parse_measured("concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus\n8,fast,11,690,1\n");
/// assert!(bad.unwrap_err().to_string().contains("line 2: field `ttft_ms`"));
/// ```
pub fn parse_measured(text: &str) -> Result<Vec<MeasuredServingPoint>, Error> {
    check_bench_size(text.len() as u64)?;
    let first = text.trim_start().as_bytes().first();
    let points = if matches!(first, Some(b'{' | b'[')) {
        parse_json(text)?
    } else {
        parse_csv(text)?
    };
    if points.is_empty() {
        return Err(Error::InvalidInput("no measured serving run in the file".into()));
    }
    Ok(points)
}

fn too_many(line: usize) -> Error {
    Error::InvalidInput(format!(
        "line {line}: more than {MAX_BENCH_RUNS} runs in one file"
    ))
}

fn parse_json(text: &str) -> Result<Vec<MeasuredServingPoint>, Error> {
    let mut points = Vec::new();
    for span in scan::Objects::new(text) {
        let span = span?;
        let map: Map<String, Value> = serde_json::from_str(&scan::python_json(span.text))
            .map_err(|e| Error::InvalidInput(format!("line {}: not JSON: {e}", span.line + e.line() - 1)))?;
        if points.len() == MAX_BENCH_RUNS {
            return Err(too_many(span.line));
        }
        let row = fields::JsonRow {
            map: &map,
            line: span.line,
        };
        points.push(match formats::json_format(&map) {
            BenchFormat::Aiperf => formats::aiperf(&map, span.line)?,
            BenchFormat::InferenceX => formats::inferencex(&map, span.line)?,
            format => formats::vllm_like(&row, format)?,
        });
    }
    Ok(points)
}

/// Columns the plain CSV requires.
const CSV_REQUIRED: [&str; 5] = ["concurrency", "ttft_ms", "tpot_ms", "output_tokens_per_s", "gpus"];

/// A CSV file: `vllm bench sweep` summary.csv when its header has `mean_ttft_ms` (pandas' unnamed index
/// first), else the plain format.
fn parse_csv(text: &str) -> Result<Vec<MeasuredServingPoint>, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| Error::InvalidInput(format!("CSV header: {e}")))?
        .clone();
    let has = |name: &str| headers.iter().any(|h| h.eq_ignore_ascii_case(name));
    let sweep = has("mean_ttft_ms");
    if !sweep && let Some(name) = CSV_REQUIRED.iter().find(|n| !has(n)) {
        return Err(Error::InvalidInput(format!(
            "CSV header (line 1): missing column `{name}`; required: {} (or vllm bench sweep's summary.csv)",
            CSV_REQUIRED.join(", ")
        )));
    }
    let mut points = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(points),
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(0, csv::Position::line);
                return Err(Error::InvalidInput(format!("line {line}: CSV: {e}")));
            }
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
        if points.len() == MAX_BENCH_RUNS {
            return Err(too_many(line));
        }
        let row = CsvRow {
            headers: &headers,
            record: &record,
            line,
        };
        points.push(if sweep {
            formats::vllm_like(&row, BenchFormat::VllmSweep)?
        } else {
            formats::plain_csv(&row)?
        });
    }
}

/// A latency metric a run reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyMetric {
    /// Time to first token.
    Ttft,
    /// Time per output token after the first.
    Tpot,
    /// Inter-token (inter-chunk) latency.
    Itl,
    /// End-to-end latency.
    E2e,
}

impl LatencyMetric {
    /// Every metric.
    pub const ALL: [LatencyMetric; 4] = [
        LatencyMetric::Ttft,
        LatencyMetric::Tpot,
        LatencyMetric::Itl,
        LatencyMetric::E2e,
    ];

    /// `TTFT`, `TPOT`, `ITL` or `E2E`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            LatencyMetric::Ttft => "TTFT",
            LatencyMetric::Tpot => "TPOT",
            LatencyMetric::Itl => "ITL",
            LatencyMetric::E2e => "E2E",
        }
    }

    /// The simulated statistic `p` of this metric at `point`.
    #[must_use]
    pub const fn predicted(self, point: &ServingPoint, p: Percentile) -> f64 {
        match self {
            LatencyMetric::Ttft => point.ttft_at(p),
            LatencyMetric::Tpot => point.tpot_at(p),
            LatencyMetric::Itl => point.itl_at(p),
            LatencyMetric::E2e => point.e2e_at(p),
        }
    }
}

/// One statistic measured and simulated.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PercentileRatio {
    /// The metric.
    pub metric: LatencyMetric,
    /// The statistic.
    pub percentile: Percentile,
    /// Measured, in s.
    pub measured_s: f64,
    /// Simulated, in s.
    pub predicted_s: f64,
    /// Measured ÷ simulated.
    pub ratio: f64,
}

/// A measured point beside the simulation of the same client at its load and lengths: measured ÷ predicted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ServingComparison {
    /// The measurement.
    pub measured: MeasuredServingPoint,
    /// The ISL and OSL simulated: the run's (rounded), else the caller's.
    pub workload: ServingWorkload,
    /// The client simulated: the run's tool, request count and length rule.
    pub client: BenchClient,
    /// The simulated run (an unsustainable rate has no ratios).
    pub predicted: ServingOutcome,
    /// Measured ÷ predicted mean TTFT.
    pub ttft_ratio: Option<f64>,
    /// Measured ÷ predicted mean TPOT.
    pub tpot_ratio: Option<f64>,
    /// Measured ÷ predicted output tokens/s per GPU (the measurement divided by its own GPUs).
    pub output_throughput_ratio: Option<f64>,
    /// Every statistic the file has, mean and percentiles, measured ÷ simulated.
    pub percentiles: Vec<PercentileRatio>,
    /// Caveats, e.g. a GPU count that differs from the prediction's.
    pub notes: Vec<String>,
}

/// Simulates every measured point under `scenario` with its own client ([`MeasuredServingPoint::client`]) at
/// its load and lengths (the run's, rounded, else `workload`'s) and compares: measured ÷ simulated for every
/// statistic the file has, and output tokens/s per GPU. One [`ServingModel`] per distinct lengths and client.
///
/// # Errors
/// As [`ServingModel::new`] and [`ServingModel::predict`] (e.g. a run's mean OSL below 2).
pub fn compare_measured(
    scenario: ServingScenario<'_>,
    workload: ServingWorkload,
    measured: &[MeasuredServingPoint],
) -> Result<Vec<ServingComparison>, Error> {
    let mut models: Vec<ServingModel<'_>> = Vec::new();
    let mut out = Vec::with_capacity(measured.len());
    let gpus = scenario.parallelism.gpus();
    for m in measured {
        let lengths = ServingWorkload {
            isl: m.isl.map_or(workload.isl, |x| x.round() as u32),
            osl: m.osl.map_or(workload.osl, |x| x.round() as u32),
        };
        let Some(load) = m.load() else {
            return Err(Error::InvalidInput(format!(
                "line {}: the run has neither a concurrency nor a rate",
                m.line
            )));
        };
        let client = m.client();
        let index = match models
            .iter()
            .position(|model| model.workload() == lengths && *model.client() == client)
        {
            Some(index) => index,
            None => {
                models.push(ServingModel::new(scenario, lengths)?.with_client(client)?);
                models.len() - 1
            }
        };
        let predicted = models[index].predict(load)?;
        out.push(comparison(m, lengths, client, predicted, gpus));
    }
    Ok(out)
}

fn comparison(
    m: &MeasuredServingPoint,
    workload: ServingWorkload,
    client: BenchClient,
    predicted: ServingOutcome,
    gpus: u32,
) -> ServingComparison {
    let measured_gpus = m.gpus_or(gpus);
    let mut notes = Vec::new();
    if measured_gpus != gpus {
        notes.push(format!(
            "measured on {measured_gpus} GPUs, predicted on {gpus}: per-GPU throughput compares different splits"
        ));
    }
    let mut percentiles = Vec::new();
    if let ServingOutcome::Steady(p) = &predicted {
        for metric in LatencyMetric::ALL {
            for percentile in [
                Percentile::Mean,
                Percentile::P50,
                Percentile::P90,
                Percentile::P99,
            ] {
                if let Some(measured_s) = m.measured(metric, percentile) {
                    let predicted_s = metric.predicted(p, percentile);
                    percentiles.push(PercentileRatio {
                        metric,
                        percentile,
                        measured_s,
                        predicted_s,
                        ratio: measured_s / predicted_s,
                    });
                }
            }
        }
    }
    let ratio = |f: fn(&MeasuredServingPoint, u32) -> f64, g: fn(&ServingPoint) -> f64| match &predicted {
        ServingOutcome::Steady(p) => Some(f(m, gpus) / g(p)),
        ServingOutcome::Unstable(_) => None,
    };
    ServingComparison {
        measured: m.clone(),
        workload,
        client,
        ttft_ratio: ratio(|m, _| m.ttft_s, |p| p.ttft_s),
        tpot_ratio: ratio(|m, _| m.tpot_s, |p| p.tpot_s),
        output_throughput_ratio: ratio(MeasuredServingPoint::output_tokens_per_s_per_gpu, |p| {
            p.output_tokens_per_s_per_gpu
        }),
        predicted,
        percentiles,
        notes,
    }
}
