//! Measured serving results ([`parse_measured`], pure: from the file's text) and their comparison with the
//! serving model's prediction at the same load and request lengths ([`compare_measured`]).
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use serde_json::{Map, Value};

use roofline_base::Error;

use roofline_serving::serving::{
    Load, ServingModel, ServingOutcome, ServingPoint, ServingScenario, ServingWorkload,
};

/// Which tool wrote a measured point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchFormat {
    /// `vllm bench serve --save-result` JSON.
    VllmBenchServe,
    /// SGLang `bench_serving` JSONL.
    SglangBenchServing,
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
            BenchFormat::Csv => "CSV",
        }
    }
}

/// One measured serving run, in base units (means over its requests); serializes to the JSON the page
/// keeps in local storage and reads back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeasuredServingPoint {
    /// The tool that wrote it.
    pub format: BenchFormat,
    /// Line of the file it starts on (1-based).
    pub line: usize,
    /// Clients of a closed loop (`--max-concurrency`), if set.
    pub concurrency: Option<u32>,
    /// Poisson request rate, requests/s, if finite.
    pub request_rate: Option<f64>,
    /// Requests completed (JSON formats).
    pub completed: Option<u64>,
    /// Mean input tokens per request (total input / completed), if known.
    pub isl: Option<f64>,
    /// Mean output tokens per request (total output / completed), if known.
    pub osl: Option<f64>,
    /// Mean time to first token, s.
    pub ttft_s: f64,
    /// Mean time per output token after the first, s.
    pub tpot_s: f64,
    /// Mean end-to-end latency, s, if given.
    pub e2e_s: Option<f64>,
    /// Generated tokens/s of the whole server (every GPU of the replica).
    pub output_tokens_per_s: f64,
    /// GPUs of the replica, if the file says (CSV).
    pub gpus: Option<u32>,
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
}

/// Parses measured serving results: `vllm bench serve` JSON, SGLang `bench_serving` JSONL, or CSV (see the
/// docs/design/core.md), detected from the text.
///
/// # Errors
/// [`Error::InvalidInput`] naming the line and field: not JSON or CSV, a required field missing or not a
/// positive number, a run with neither a concurrency nor a finite rate, or no run at all.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_serving::*;
/// use roofline_wire::*;
/// let csv = "concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus\n8,120.5,11.2,690,1\n";
/// let points = parse_measured(csv).unwrap();
/// assert_eq!(points[0].concurrency, Some(8));
/// assert!((points[0].tpot_s - 0.0112).abs() < 1e-12);
/// let bad = parse_measured("concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus\n8,fast,11,690,1\n");
/// assert!(bad.unwrap_err().to_string().contains("line 2: field `ttft_ms`"));
/// ```
pub fn parse_measured(text: &str) -> Result<Vec<MeasuredServingPoint>, Error> {
    let points = if text.trim_start().starts_with('{') {
        parse_json(&python_json(text))?
    } else {
        parse_csv(text)?
    };
    if points.is_empty() {
        return Err(Error::InvalidInput("no measured serving run in the file".into()));
    }
    Ok(points)
}

/// `text` with Python's non-JSON number tokens (`Infinity`, `-Infinity`, `NaN`, which `json.dumps` writes
/// for non-finite floats) outside strings replaced by `null`.
fn python_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            out.push_str("null");
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn parse_json(text: &str) -> Result<Vec<MeasuredServingPoint>, Error> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut points = Vec::new();
    loop {
        let start = stream.byte_offset();
        let line = line_of(
            text,
            start + (text[start..].len() - text[start..].trim_start().len()),
        );
        match stream.next() {
            None => return Ok(points),
            Some(Err(e)) => {
                return Err(Error::InvalidInput(format!("line {}: not JSON: {e}", e.line())));
            }
            Some(Ok(Value::Object(object))) => points.push(json_point(&object, line)?),
            Some(Ok(other)) => {
                return Err(Error::InvalidInput(format!(
                    "line {line}: expected a benchmark result object, found {other}"
                )));
            }
        }
    }
}

/// A field of a JSON result that must be a positive finite number.
fn positive(object: &Map<String, Value>, field: &str, line: usize) -> Result<f64, Error> {
    match object.get(field) {
        None => Err(Error::InvalidInput(format!(
            "line {line}: field `{field}` is missing"
        ))),
        Some(v) => v.as_f64().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| {
            Error::InvalidInput(format!(
                "line {line}: field `{field}` must be a positive number, found {v}"
            ))
        }),
    }
}

/// An optional field: absent or null is `None`; anything else must be a positive finite number.
fn optional_positive(object: &Map<String, Value>, field: &str, line: usize) -> Result<Option<f64>, Error> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => positive(object, field, line).map(Some),
    }
}

fn json_point(object: &Map<String, Value>, line: usize) -> Result<MeasuredServingPoint, Error> {
    let sglang =
        object.contains_key("mean_e2e_latency_ms") || object.contains_key("total_output_tokens_retokenized");
    let (format, e2e_field) = if sglang {
        (BenchFormat::SglangBenchServing, "mean_e2e_latency_ms")
    } else {
        (BenchFormat::VllmBenchServe, "mean_e2el_ms")
    };
    let concurrency = match object.get("max_concurrency") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|&n| n >= 1)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "line {line}: field `max_concurrency` must be a whole number of clients, found {v}"
                    ))
                })?,
        ),
    };
    let request_rate = match object.get("request_rate") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "inf" => None,
        Some(_) => optional_positive(object, "request_rate", line)?,
    };
    if concurrency.is_none() && request_rate.is_none() {
        return Err(Error::InvalidInput(format!(
            "line {line}: field `max_concurrency`: the run sets neither a concurrency nor a finite request_rate; \
             every prompt sent at once has no steady state to compare"
        )));
    }
    let completed = positive(object, "completed", line)?;
    let per_request = |field: &str| positive(object, field, line).map(|total| total / completed);
    Ok(MeasuredServingPoint {
        format,
        line,
        concurrency,
        request_rate,
        completed: Some(completed as u64),
        isl: Some(per_request("total_input_tokens")?),
        osl: Some(per_request("total_output_tokens")?),
        ttft_s: positive(object, "mean_ttft_ms", line)? / 1e3,
        tpot_s: positive(object, "mean_tpot_ms", line)? / 1e3,
        e2e_s: optional_positive(object, e2e_field, line)?.map(|ms| ms / 1e3),
        output_tokens_per_s: positive(object, "output_throughput", line)?,
        gpus: None,
    })
}

/// Required CSV columns.
const CSV_REQUIRED: [&str; 5] = ["concurrency", "ttft_ms", "tpot_ms", "output_tokens_per_s", "gpus"];

fn parse_csv(text: &str) -> Result<Vec<MeasuredServingPoint>, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| Error::InvalidInput(format!("CSV header: {e}")))?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
    let mut required = [0; 5];
    for (slot, name) in required.iter_mut().zip(CSV_REQUIRED) {
        *slot = column(name).ok_or_else(|| {
            Error::InvalidInput(format!(
                "CSV header (line 1): missing column `{name}`; required: {}",
                CSV_REQUIRED.join(", ")
            ))
        })?;
    }
    let [concurrency_at, ttft_at, tpot_at, throughput_at, gpus_at] = required;
    let (isl_at, osl_at, rate_at) = (column("isl"), column("osl"), column("request_rate"));
    let mut points = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            Error::InvalidInput(format!("line {line}: CSV: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let field = |at: usize| -> Result<f64, Error> {
            let raw = record.get(at).unwrap_or("");
            raw.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "line {line}: field `{}`: '{raw}' is not a positive number",
                        &headers[at]
                    ))
                })
        };
        let whole = |at: usize| -> Result<u32, Error> {
            let raw = record.get(at).unwrap_or("");
            raw.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "line {line}: field `{}`: '{raw}' is not a whole number of at least 1",
                    &headers[at]
                ))
            })
        };
        let optional = |at: Option<usize>| -> Result<Option<f64>, Error> {
            match at {
                Some(at) if !record.get(at).unwrap_or("").is_empty() => field(at).map(Some),
                _ => Ok(None),
            }
        };
        points.push(MeasuredServingPoint {
            format: BenchFormat::Csv,
            line,
            concurrency: Some(whole(concurrency_at)?),
            request_rate: optional(rate_at)?,
            completed: None,
            isl: optional(isl_at)?,
            osl: optional(osl_at)?,
            ttft_s: field(ttft_at)? / 1e3,
            tpot_s: field(tpot_at)? / 1e3,
            e2e_s: None,
            output_tokens_per_s: field(throughput_at)?,
            gpus: Some(whole(gpus_at)?),
        });
    }
    Ok(points)
}

/// A measured point beside the prediction at its load and request lengths: measured ÷ predicted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ServingComparison {
    /// The measurement.
    pub measured: MeasuredServingPoint,
    /// The ISL and OSL predicted: the run's mean lengths (rounded), else the caller's.
    pub workload: ServingWorkload,
    /// The prediction at the same load (an unsustainable rate has no ratios).
    pub predicted: ServingOutcome,
    /// Measured ÷ predicted TTFT.
    pub ttft_ratio: Option<f64>,
    /// Measured ÷ predicted TPOT.
    pub tpot_ratio: Option<f64>,
    /// Measured ÷ predicted output tokens/s per GPU (the measurement divided by its own GPUs).
    pub output_throughput_ratio: Option<f64>,
    /// Caveats, e.g. a GPU count that differs from the prediction's.
    pub notes: Vec<String>,
}

/// Predicts every measured point under `scenario` at its load and mean request lengths (the rounded means
/// of the run, else `workload`) and compares: measured ÷ predicted TTFT, TPOT and output tokens/s per GPU.
/// Points predicted with one [`ServingModel`] per distinct workload.
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
        let index = match models.iter().position(|model| model.workload() == lengths) {
            Some(index) => index,
            None => {
                models.push(ServingModel::new(scenario, lengths)?);
                models.len() - 1
            }
        };
        let predicted = models[index].predict(load)?;
        let measured_gpus = m.gpus_or(gpus);
        let mut notes = Vec::new();
        if measured_gpus != gpus {
            notes.push(format!(
                "measured on {measured_gpus} GPUs, predicted on {gpus}: per-GPU throughput compares different splits"
            ));
        }
        let ratio = |f: fn(&MeasuredServingPoint, u32) -> f64, g: fn(&ServingPoint) -> f64| match &predicted {
            ServingOutcome::Steady(p) => Some(f(m, gpus) / g(p)),
            ServingOutcome::Unstable(_) => None,
        };
        out.push(ServingComparison {
            measured: m.clone(),
            workload: lengths,
            ttft_ratio: ratio(|m, _| m.ttft_s, |p| p.ttft_s),
            tpot_ratio: ratio(|m, _| m.tpot_s, |p| p.tpot_s),
            output_throughput_ratio: ratio(MeasuredServingPoint::output_tokens_per_s_per_gpu, |p| {
                p.output_tokens_per_s_per_gpu
            }),
            predicted,
            notes,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `vllm bench serve --save-result` file: the field set `serve.py` writes (trimmed of per-request lists).
    const VLLM: &str = include_str!("../../../tests/data/serving/vllm_bench_serve.json");
    /// Two SGLang `bench_serving` runs appended to one JSONL file, the second at an infinite rate.
    const SGLANG: &str = include_str!("../../../tests/data/serving/sglang_bench_serving.jsonl");
    /// The plain CSV format.
    const CSV: &str = include_str!("../../../tests/data/serving/measured.csv");

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
        assert_eq!((p.isl, p.osl), (Some(1024.0), Some(1024.0)));
        assert!((p.ttft_s - 0.08531).abs() < 1e-12 && (p.tpot_s - 0.01162).abs() < 1e-12);
        assert!((p.e2e_s.unwrap() - 11.97853).abs() < 1e-12);
        assert_eq!(p.output_tokens_per_s, 1361.4);
        assert_eq!(p.load(), Some(Load::Concurrency(16)));
    }

    #[test]
    fn sglang_jsonl_reads_every_line_and_python_infinity() {
        let points = parse_measured(SGLANG).unwrap();
        assert_eq!(points.len(), 2);
        assert!(points.iter().all(|p| p.format == BenchFormat::SglangBenchServing));
        assert_eq!((points[0].line, points[1].line), (1, 2));
        assert_eq!(points[0].concurrency, Some(64));
        // The second run's request_rate is Python's Infinity: no rate, its concurrency stands.
        assert_eq!((points[1].request_rate, points[1].concurrency), (None, Some(128)));
        assert_eq!(points[1].e2e_s, Some(45.3125));
        // A string that merely contains Infinity is left alone.
        assert_eq!(
            python_json(r#"{"a": "Infinity", "b": Infinity}"#),
            r#"{"a": "Infinity", "b": null}"#
        );
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
            err("concurrency,ttft_ms,output_tokens_per_s,gpus\n1,2,3,4\n")
                .contains("missing column `tpot_ms`")
        );
        let e = err(&format!("{header}\n1,10,5,100,1\n2,10,-5,100,1\n"));
        assert!(e.contains("line 3: field `tpot_ms`: '-5'"), "{e}");
        let e = err(&format!("{header}\n0,10,5,100,1\n"));
        assert!(e.contains("line 2: field `concurrency`"), "{e}");
        let e = err(&format!("{header}\n1,10,5,100\n"));
        assert!(e.contains("CSV") && e.contains("line 2"), "{e}");
        let missing = VLLM.replace("\"mean_tpot_ms\"", "\"mean_tpot\"");
        assert!(err(&missing).contains("line 1: field `mean_tpot_ms` is missing"));
        let typed = VLLM.replace("\"output_throughput\": 1361.4", "\"output_throughput\": \"fast\"");
        assert!(err(&typed).contains("field `output_throughput` must be a positive number"));
        let burst = VLLM.replace("\"max_concurrency\": 16", "\"max_concurrency\": null");
        assert!(err(&burst).contains("field `max_concurrency`: the run sets neither"));
        let second = format!("{}\n{{\"completed\": 3", SGLANG.trim_end());
        assert!(err(&second).contains("line 3: not JSON"), "{}", err(&second));
        assert!(err(&format!("{header}\n")).contains("no measured serving run"));
    }

    #[test]
    fn measured_points_compare_with_predictions_at_their_own_load_and_lengths() {
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
        // The vLLM run: 1024/1024 tokens from its totals, predicted at concurrency 16.
        let vllm = &rows[0];
        assert_eq!(vllm.workload, ServingWorkload { isl: 1024, osl: 1024 });
        let mut model = ServingModel::new(scenario, vllm.workload).unwrap();
        let p = model.predict(Load::Concurrency(16)).unwrap().steady().unwrap();
        assert_eq!(vllm.predicted, ServingOutcome::Steady(p.clone()));
        let close = |ratio: Option<f64>, expected: f64| (ratio.unwrap() / expected - 1.0).abs() < 1e-12;
        assert!(close(vllm.tpot_ratio, 0.01162 / p.tpot_s));
        assert!(close(vllm.ttft_ratio, 0.08531 / p.ttft_s));
        assert!(close(
            vllm.output_throughput_ratio,
            1361.4 / p.output_tokens_per_s_per_gpu
        ));
        assert!(vllm.notes.is_empty());
        // CSV rows without lengths take the fallback; the 2-GPU row is divided by its own GPUs, with a note.
        assert_eq!(rows[1].workload, fallback);
        let two = &rows[3];
        let ServingOutcome::Steady(q) = &two.predicted else {
            panic!()
        };
        assert_eq!(
            two.output_throughput_ratio,
            Some(2150.0 / 2.0 / q.output_tokens_per_s_per_gpu)
        );
        assert!(two.notes[0].contains("measured on 2 GPUs, predicted on 1"));
    }
}
