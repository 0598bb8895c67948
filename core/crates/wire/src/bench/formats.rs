//! One run of each tool's file into a [`MeasuredServingPoint`]: `vllm bench serve` JSON and `vllm bench
//! sweep` summary rows, SGLang `sglang.benchmark.serving` JSONL, AIPerf `profile_export_aiperf.json`,
//! InferenceX `agg_bmk.json` rows and the plain CSV, each field named as the tool writes it.

use roofline_base::Error;
use serde_json::{Map, Value};

use super::fields::{Fields, JsonRow};
use super::{BenchFormat, MeasuredPercentiles, MeasuredServingPoint};

/// Which tool wrote a JSON object, from its fields.
pub(super) fn json_format(map: &Map<String, Value>) -> BenchFormat {
    let has = |key: &str| map.contains_key(key);
    if has("time_to_first_token") || has("inter_token_latency") || has("input_config") {
        BenchFormat::Aiperf
    } else if has("tput_per_gpu") || (has("conc") && has("hw")) {
        BenchFormat::InferenceX
    } else if has("mean_e2e_latency_ms") || has("total_output_tokens_retokenized") {
        BenchFormat::SglangBenchServing
    } else {
        BenchFormat::VllmBenchServe
    }
}

/// The statistics of one metric, in seconds, from fields named `prefix` `_` stat `_` `metric` `suffix`
/// (`median_ttft_ms`, `p90_ttft_ms`, …; `divisor` 1e3 for milliseconds).
fn named_percentiles(
    row: &impl Fields,
    metric: &str,
    suffix: &str,
    divisor: f64,
) -> Result<MeasuredPercentiles, Error> {
    let at = |stat: &str| -> Result<Option<f64>, Error> {
        Ok(row
            .optional(&format!("{stat}_{metric}{suffix}"))?
            .map(|x| x / divisor))
    };
    Ok(MeasuredPercentiles {
        p50_s: at("median")?.or(at("p50")?),
        p90_s: at("p90")?,
        p99_s: at("p99")?,
    })
}

/// A run as `vllm bench serve` (and SGLang, with `e2e` = `e2e_latency`) writes it: one JSON object, or one
/// row of `vllm bench sweep`'s summary.csv (the same fields, one column each).
pub(super) fn vllm_like(row: &impl Fields, format: BenchFormat) -> Result<MeasuredServingPoint, Error> {
    let e2e = if format == BenchFormat::SglangBenchServing {
        "e2e_latency"
    } else {
        "e2el"
    };
    let concurrency = row.optional_count("max_concurrency")?;
    let request_rate = row.rate("request_rate")?;
    if concurrency.is_none() && request_rate.is_none() {
        return Err(row.invalid(
            "max_concurrency",
            "is not set and request_rate is infinite: every prompt sent at once has no load to simulate",
        ));
    }
    let completed = row.required("completed")?;
    // SGLang's random dataset records its nominal lengths and range ratio (absent: the tool's default);
    // otherwise the run's means.
    let nominal = match (
        row.text("dataset_name").as_deref(),
        row.optional("random_input_len")?,
    ) {
        (Some("random"), Some(isl)) => Some((isl, row.required("random_output_len")?)),
        _ => None,
    };
    let (isl, osl, range_ratio) = match nominal {
        Some((isl, osl)) => {
            let ratio = row.optional("random_range_ratio")?;
            (
                isl,
                osl,
                Some(ratio.unwrap_or(format.client_kind().default_range_ratio())),
            )
        }
        None => (
            row.required("total_input_tokens")? / completed,
            row.required("total_output_tokens")? / completed,
            None,
        ),
    };
    Ok(MeasuredServingPoint {
        format,
        line: row.line(),
        concurrency,
        request_rate,
        completed: Some(completed as u64),
        isl: Some(isl),
        osl: Some(osl),
        ttft_s: row.required("mean_ttft_ms")? / 1e3,
        tpot_s: row.required("mean_tpot_ms")? / 1e3,
        e2e_s: row.optional_ms(&format!("mean_{e2e}_ms"))?,
        output_tokens_per_s: row.required("output_throughput")?,
        gpus: None,
        itl_s: row.optional_ms("mean_itl_ms")?,
        ttft_percentiles: named_percentiles(row, "ttft", "_ms", 1e3)?,
        tpot_percentiles: named_percentiles(row, "tpot", "_ms", 1e3)?,
        itl_percentiles: named_percentiles(row, "itl", "_ms", 1e3)?,
        e2e_percentiles: named_percentiles(row, e2e, "_ms", 1e3)?,
        range_ratio,
        label: None,
    })
}

/// Range ratio of InferenceX's fixed-length runs: `RANDOM_RANGE_RATIO` 0.8 of its workflow
/// (benchmarks/benchmark_lib.sh), which the row does not record.
const INFERENCEX_RANGE_RATIO: f64 = 0.8;

/// An InferenceX `agg_bmk.json` row (`utils/process_result.py`): nominal ISL/OSL, `conc`, latencies in
/// seconds (the tool's `*_ms` keys divided by 1000, `_ms` dropped), output tokens/s per GPU over tp · pp ·
/// pcp GPUs. Disaggregated (multinode) rows are refused: the simulation serves one aggregated replica.
pub(super) fn inferencex(map: &Map<String, Value>, line: usize) -> Result<MeasuredServingPoint, Error> {
    let row = JsonRow { map, line };
    let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag("disagg") || flag("is_multinode") {
        return Err(row.invalid(
            "disagg",
            "is true: disaggregated prefill/decode runs are not simulated",
        ));
    }
    let whole = |key: &str| -> Result<u32, Error> { Ok(row.optional_count(key)?.unwrap_or(1)) };
    let gpus = row
        .optional_count("tp")?
        .ok_or_else(|| row.invalid("tp", "is missing"))?
        .saturating_mul(whole("pp")?)
        .saturating_mul(whole("pcp_size")?);
    let seconds = |metric: &str| named_percentiles(&row, metric, "", 1.0);
    let label = ["hw", "model", "framework", "precision", "spec_decoding"]
        .iter()
        .filter_map(|k| row.text(k))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(MeasuredServingPoint {
        format: BenchFormat::InferenceX,
        line,
        concurrency: Some(
            row.optional_count("conc")?
                .ok_or_else(|| row.invalid("conc", "is missing"))?,
        ),
        request_rate: None,
        completed: None,
        isl: Some(row.required("isl")?),
        osl: Some(row.required("osl")?),
        ttft_s: row.required("mean_ttft")?,
        tpot_s: row.required("mean_tpot")?,
        e2e_s: row.optional("mean_e2el")?,
        output_tokens_per_s: row.required("output_tput_per_gpu")? * f64::from(gpus),
        gpus: Some(gpus),
        itl_s: row.optional("mean_itl")?,
        ttft_percentiles: seconds("ttft")?,
        tpot_percentiles: seconds("tpot")?,
        itl_percentiles: seconds("itl")?,
        e2e_percentiles: seconds("e2el")?,
        range_ratio: Some(INFERENCEX_RANGE_RATIO),
        label: (!label.is_empty()).then_some(label),
    })
}

/// Seconds per unit of an AIPerf `unit`.
fn unit_seconds(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-9),
        "us" | "µs" => Some(1e-6),
        "ms" => Some(1e-3),
        "s" | "sec" | "seconds" => Some(1.0),
        _ => None,
    }
}

/// One AIPerf metric object `{unit, avg, p50, p90, p99, …}`: its mean and percentiles in seconds (or in its
/// own unit when `time` is false).
fn aiperf_stat(
    map: &Map<String, Value>,
    key: &str,
    line: usize,
    time: bool,
) -> Result<Option<(f64, MeasuredPercentiles)>, Error> {
    let Some(value) = map.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let invalid = |what: String| Error::InvalidInput(format!("line {line}: field `{key}` {what}"));
    let Value::Object(stat) = value else {
        return Err(invalid(format!(
            "must be an object with `unit` and `avg`, found {value}"
        )));
    };
    let scale = if time {
        let unit = stat.get("unit").and_then(Value::as_str).unwrap_or("");
        unit_seconds(unit).ok_or_else(|| invalid(format!("has unit \"{unit}\"; expected ns, us, ms or s")))?
    } else {
        1.0
    };
    let row = JsonRow { map: stat, line };
    let at = |k: &str| -> Result<Option<f64>, Error> {
        row.optional(k)
            .map(|v| v.map(|x| x * scale))
            .map_err(|e| invalid(e.to_string()))
    };
    let avg = at("avg")?.ok_or_else(|| invalid("has no `avg`".into()))?;
    Ok(Some((
        avg,
        MeasuredPercentiles {
            p50_s: at("p50")?,
            p90_s: at("p90")?,
            p99_s: at("p99")?,
        },
    )))
}

/// The load of an AIPerf run from `input_config`: `loadgen.concurrency` / `loadgen.request_rate`, or the
/// profiling phase's (`phases[]` with `type` concurrency or request_rate).
fn aiperf_load(map: &Map<String, Value>) -> (Option<u32>, Option<f64>) {
    let config = map.get("input_config");
    let number = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_f64)
            .filter(|x| *x > 0.0)
    };
    let loadgen = config.and_then(|c| c.get("loadgen"));
    let phase = config
        .and_then(|c| c.get("phases"))
        .and_then(Value::as_array)
        .and_then(|phases| {
            phases
                .iter()
                .rfind(|p| p.get("concurrency").is_some() || p.get("request_rate").is_some())
        });
    let concurrency = number(loadgen, "concurrency").or_else(|| number(phase, "concurrency"));
    let rate = number(loadgen, "request_rate").or_else(|| number(phase, "request_rate"));
    (concurrency.map(|c| c as u32), rate)
}

/// AIPerf's `profile_export_aiperf.json`: each metric an object with its `unit`; `inter_token_latency` is
/// vLLM's TPOT ((E2E − TTFT) / (OSL − 1) per request), `inter_chunk_latency` vLLM's ITL.
pub(super) fn aiperf(map: &Map<String, Value>, line: usize) -> Result<MeasuredServingPoint, Error> {
    let required = |key: &str, time: bool| -> Result<(f64, MeasuredPercentiles), Error> {
        aiperf_stat(map, key, line, time)?
            .ok_or_else(|| Error::InvalidInput(format!("line {line}: field `{key}` is missing")))
    };
    let (concurrency, request_rate) = aiperf_load(map);
    if concurrency.is_none() && request_rate.is_none() {
        return Err(Error::InvalidInput(format!(
            "line {line}: field `input_config`: neither `loadgen.concurrency` nor `loadgen.request_rate` is set"
        )));
    }
    let (ttft, ttft_p) = required("time_to_first_token", true)?;
    let (tpot, tpot_p) = required("inter_token_latency", true)?;
    let e2e = aiperf_stat(map, "request_latency", line, true)?;
    let itl = aiperf_stat(map, "inter_chunk_latency", line, true)?;
    let count = aiperf_stat(map, "request_count", line, false)?.map(|s| s.0);
    let mean_length =
        |key: &str| -> Result<Option<f64>, Error> { Ok(aiperf_stat(map, key, line, false)?.map(|s| s.0)) };
    Ok(MeasuredServingPoint {
        format: BenchFormat::Aiperf,
        line,
        concurrency,
        request_rate,
        completed: count.map(|c| c as u64),
        isl: mean_length("input_sequence_length")?,
        osl: mean_length("output_sequence_length")?,
        ttft_s: ttft,
        tpot_s: tpot,
        e2e_s: e2e.map(|s| s.0),
        output_tokens_per_s: required("output_token_throughput", false)?.0,
        gpus: None,
        itl_s: itl.map(|s| s.0),
        ttft_percentiles: ttft_p,
        tpot_percentiles: tpot_p,
        itl_percentiles: itl.map(|s| s.1).unwrap_or_default(),
        e2e_percentiles: e2e.map(|s| s.1).unwrap_or_default(),
        range_ratio: None,
        label: None,
    })
}

/// The plain CSV's row: `concurrency`, `ttft_ms`, `tpot_ms`, `output_tokens_per_s` (the whole server) and
/// `gpus` required; `isl`, `osl`, `request_rate` optional.
pub(super) fn plain_csv(row: &impl Fields) -> Result<MeasuredServingPoint, Error> {
    let count = |key: &str| -> Result<u32, Error> {
        row.optional_count(key)?
            .ok_or_else(|| row.invalid(key, "must be a whole number of at least 1"))
    };
    Ok(MeasuredServingPoint {
        format: BenchFormat::Csv,
        line: row.line(),
        concurrency: Some(count("concurrency")?),
        request_rate: row.optional("request_rate")?,
        completed: None,
        isl: row.optional("isl")?,
        osl: row.optional("osl")?,
        ttft_s: row.required("ttft_ms")? / 1e3,
        tpot_s: row.required("tpot_ms")? / 1e3,
        e2e_s: None,
        output_tokens_per_s: row.required("output_tokens_per_s")?,
        gpus: Some(count("gpus")?),
        itl_s: None,
        ttft_percentiles: MeasuredPercentiles::default(),
        tpot_percentiles: MeasuredPercentiles::default(),
        itl_percentiles: MeasuredPercentiles::default(),
        e2e_percentiles: MeasuredPercentiles::default(),
        range_ratio: None,
        label: None,
    })
}
