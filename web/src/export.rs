//! Results as JSON and CSV, with provenance columns (mode, device source, scenario, tool version). Pure.

use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::RooflinePoint;
use roofline_core::{
    Bound, Corrections, HardwareSpec, Mode, ModelAnalysis, OpAnalysis, Precision, ServingComparison,
    ServingOutcome, SlaOutcome, Sweep,
};
use serde::Serialize;

use crate::scenario::{KernelRow, Scenario};
use crate::serving::measured::{Compared, RanOn, ServingRun};
use crate::serving_inputs::engine_name;

/// This page's version, recorded in every export.
pub const TOOL: &str = concat!("roofline-web ", env!("CARGO_PKG_VERSION"));

/// Provenance shared by every exported row: device key, the mode of the predictions and where the device's
/// numbers come from, scenario, corrections, tool.
fn provenance(s: &Scenario, hw: &HardwareSpec) -> Vec<String> {
    let c = s.core_corrections(hw);
    vec![
        hw.key.clone(),
        hw.name.clone(),
        Mode::of(hw).name().to_owned(),
        format!("{:?}", hw.provenance).to_lowercase(),
        s.model.clone(),
        s.config.clone(),
        if s.prefill { "prefill" } else { "decode" }.to_owned(),
        s.batch.to_string(),
        s.context.to_string(),
        s.gpus.to_string(),
        s.experts.to_string(),
        format!(
            "launch_floor={} wave_quantization={} activation_quantization={} step_launch={:?}",
            c.launch_floor, c.wave_quantization, c.activation_quantization, c.step_launch
        ),
        TOOL.to_owned(),
    ]
}

/// What ran for a measured point (empty for predictions): device, backend, library, kernel, versions, the
/// sample statistics and conditions, and when.
fn measurement_columns(point: Option<&MeasuredPoint>) -> Vec<String> {
    let Some(m) = point.map(|p| &p.measurement).filter(|m| m.says_what_ran()) else {
        return vec![String::new(); 10];
    };
    let optional = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    vec![
        m.device_name.clone(),
        m.backend.name().to_owned(),
        m.library.clone(),
        m.kernel.clone(),
        m.versions
            .iter()
            .map(|(name, version)| format!("{name}={version}"))
            .collect::<Vec<_>>()
            .join(" "),
        format!(
            "{} samples p10={} p90={} l2_flushed={} verified={}",
            m.samples, m.p10_s, m.p90_s, m.l2_flushed, m.verified
        ),
        optional(m.sm_clock_mhz),
        optional(m.power_w),
        m.throttle_reasons.join(" "),
        m.timestamp_unix_s.to_string(),
    ]
}

/// The serving results of an export: every kept measured run, and (when the serving view's sweep ran) the
/// sweep, its SLA outcome and the runs compared with their scenario's prediction.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServingExport<'a> {
    /// Every imported serving run, with the scenario it ran with.
    pub runs: &'a [ServingRun],
    /// The view's sweep.
    pub sweep: Option<&'a Sweep>,
    /// Its SLA outcome.
    pub outcome: Option<&'a SlaOutcome>,
    /// The runs of the view's scenario, with their error.
    pub compared: Option<&'a Compared>,
}

/// Serving columns of [`results_csv`]: the load, lengths, measured and predicted TTFT, TPOT and output
/// tokens/s per GPU, and measured ÷ predicted.
const SERVING_COLUMNS: usize = 12;

/// Header of [`results_csv`].
pub const CSV_HEADER: &str = "source,item,count,precision,ai_flop_per_byte,flops,bytes,time_s,bound,\
hardware,device,mode,hardware_provenance,model,config,phase,batch,context,gpus,expert_parallel,corrections,tool,\
measured_device,measured_backend,measured_library,measured_kernel,measured_versions,measured_samples,\
measured_sm_clock_mhz,measured_power_w,measured_throttle,measured_at_unix_s,\
serving_load,serving_isl,serving_osl,measured_ttft_s,measured_tpot_s,measured_output_tokens_per_s_per_gpu,\
predicted_ttft_s,predicted_tpot_s,predicted_output_tokens_per_s_per_gpu,ttft_ratio,tpot_ratio,\
output_throughput_ratio";

/// One CSV record of a kept serving run (`serving-measured`): its file and line, its scenario in the
/// provenance columns, and the serving columns, with the prediction and ratios when it was compared.
fn serving_record(
    run: &ServingRun,
    compared: Option<&Compared>,
    s: &Scenario,
    hw: &HardwareSpec,
) -> Vec<String> {
    let (m, r) = (&run.measured, &run.ran_on);
    let row = compared.and_then(|c| c.rows.iter().find(|row| row.run == *run));
    let comparison = row.and_then(|row| row.comparison.as_ref().ok());
    let predicted = comparison.and_then(|c| match &c.predicted {
        ServingOutcome::Steady(p) => Some(p),
        ServingOutcome::Unstable(_) => None,
    });
    let text = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut ran = s.clone();
    r.apply(&mut ran);
    ran.gpus = run.gpus();
    let mut prov = provenance(&ran, hw);
    prov[0].clone_from(&r.hardware);
    // The mode and corrections of a prediction, only when there is one (the run is on the view's device).
    if comparison.is_none() {
        (prov[1], prov[2], prov[10]) = (String::new(), String::new(), String::new());
    }
    (prov[5], prov[6], prov[7]) = ("serving".into(), String::new(), String::new());
    let load = match (m.concurrency, m.request_rate) {
        (Some(n), _) => format!("concurrency {n}"),
        (None, Some(rate)) => format!("{rate} requests/s"),
        (None, None) => String::new(),
    };
    let lengths = comparison.map(|c| (c.workload.isl.to_string(), c.workload.osl.to_string()));
    let (isl, osl) = lengths.unwrap_or_else(|| (text(m.isl), text(m.osl)));
    [
        "serving-measured".to_owned(),
        format!("{}:{}", run.file, m.line),
        "1".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        text(m.e2e_s),
        predicted.map(|p| p.regime.name().to_owned()).unwrap_or_default(),
    ]
    .into_iter()
    .chain(prov)
    .chain([
        r.hardware.clone(),
        m.format.name().to_owned(),
        engine_name(r.engine).to_owned(),
    ])
    .chain(std::iter::repeat_n(String::new(), 7))
    .chain([
        load,
        isl,
        osl,
        m.ttft_s.to_string(),
        m.tpot_s.to_string(),
        run.output_tokens_per_s_per_gpu().to_string(),
        text(predicted.map(|p| p.ttft_s)),
        text(predicted.map(|p| p.tpot_s)),
        text(predicted.map(|p| p.output_tokens_per_s_per_gpu)),
        text(comparison.and_then(|c| c.ttft_ratio)),
        text(comparison.and_then(|c| c.tpot_ratio)),
        text(comparison.and_then(|c| c.output_throughput_ratio)),
    ])
    .collect()
}

/// The leading CSV fields of one predicted operator: `source` (`predicted` or `kernel`), its name, count
/// and precision, then `p`'s arithmetic intensity (FLOP/byte), FLOP, bytes, time (s) and bound.
fn prediction_fields(
    source: &str,
    name: &str,
    count: u32,
    precision: Precision,
    p: &OpAnalysis,
) -> Vec<String> {
    vec![
        source.to_owned(),
        name.to_owned(),
        count.to_string(),
        precision.name().into(),
        p.arithmetic_intensity.to_string(),
        p.flops.to_string(),
        p.bytes.to_string(),
        p.time_s.to_string(),
        p.bound.name().into(),
    ]
}

/// One CSV record per model operator (`predicted`), kernel prediction (`kernel`), measured point
/// (`measured`) and kept serving run (`serving-measured`), quoted by the `csv` crate where a field needs it.
#[must_use]
pub fn results_csv(
    s: &Scenario,
    hw: &HardwareSpec,
    analysis: Option<&ModelAnalysis>,
    kernel: &[KernelRow],
    measured: &[MeasuredPoint],
    serving: &ServingExport<'_>,
) -> String {
    let prov = provenance(s, hw);
    let mut records = vec![CSV_HEADER.split(',').map(str::to_owned).collect::<Vec<_>>()];
    let mut push = |fields: Vec<String>, point: Option<&MeasuredPoint>| {
        records.push(
            fields
                .into_iter()
                .chain(prov.iter().cloned())
                .chain(measurement_columns(point))
                .chain(std::iter::repeat_n(String::new(), SERVING_COLUMNS))
                .collect(),
        );
    };
    for op in analysis.map_or(&[][..], |a| &a.ops) {
        push(
            prediction_fields("predicted", &op.name, op.count, op.precision, op),
            None,
        );
    }
    for row in kernel {
        if let (Ok(op), Ok(p)) = (&row.op, &row.prediction) {
            push(prediction_fields("kernel", &op.name, 1, row.precision, p), None);
        }
    }
    for m in measured {
        push(
            vec![
                "measured".into(),
                m.label.clone(),
                "1".into(),
                m.precision.name().into(),
                m.arithmetic_intensity().to_string(),
                String::new(),
                String::new(),
                m.time_s().to_string(),
                m.bound.map_or("unknown", Bound::name).to_owned(),
            ],
            Some(m),
        );
    }
    for run in serving.runs {
        records.push(serving_record(run, serving.compared, s, hw));
    }
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for record in &records {
        // Writing to memory cannot fail.
        let _ = writer.write_record(record);
    }
    writer
        .into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// The same results as JSON: the mode, scenario, corrections, device (its `sources` give the basis of every
/// reference figure), analysis, kernel points, measured points, and `serving`: the sweep, its SLA outcome,
/// every kept serving run and the comparisons of those of the view's scenario.
#[must_use]
pub fn results_json(
    s: &Scenario,
    hw: &HardwareSpec,
    analysis: Option<&ModelAnalysis>,
    kernel: &[KernelRow],
    measured: &[MeasuredPoint],
    serving: &ServingExport<'_>,
) -> String {
    let kernel: Vec<RooflinePoint> = kernel
        .iter()
        .filter_map(|r| {
            let (op, a) = (r.op.as_ref().ok()?, r.prediction.as_ref().ok()?);
            // The roofline of the kernel with the corrections applied (the launch floor may set its time).
            let mut p = roofline_core::predict(hw, op).ok()?;
            (p.time_s, p.attainable_flop_per_s) = (a.time_s, a.attainable_flop_per_s);
            Some(RooflinePoint::simulated(op, &p))
        })
        .collect();
    let comparisons = serving
        .compared
        .map(|c| c.rows.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|row| ComparisonJson {
            file: &row.run.file,
            line: row.run.measured.line,
            ran_on: &row.run.ran_on,
            on_chart: row.on_chart,
            comparison: row.comparison.as_ref().ok(),
            error: row.comparison.as_ref().err().map(ToString::to_string),
        })
        .collect();
    roofline_core::json::to_pretty_json(&ResultsJson {
        tool: TOOL,
        mode: Mode::of(hw),
        device: &hw.name,
        scenario: s,
        corrections: s.core_corrections(hw),
        hardware: hw,
        analysis,
        kernel,
        measured: measured.iter().map(RooflinePoint::from).collect(),
        serving: ServingJson {
            sweep: serving.sweep,
            sla: serving.outcome,
            runs: serving.runs,
            comparisons,
        },
    })
}

/// The document [`results_json`] writes.
#[derive(Serialize)]
struct ResultsJson<'a> {
    tool: &'a str,
    mode: Mode,
    device: &'a str,
    scenario: &'a Scenario,
    corrections: Corrections,
    hardware: &'a HardwareSpec,
    analysis: Option<&'a ModelAnalysis>,
    kernel: Vec<RooflinePoint>,
    measured: Vec<RooflinePoint>,
    serving: ServingJson<'a>,
}

/// Its `serving` member.
#[derive(Serialize)]
struct ServingJson<'a> {
    sweep: Option<&'a Sweep>,
    sla: Option<&'a SlaOutcome>,
    runs: &'a [ServingRun],
    comparisons: Vec<ComparisonJson<'a>>,
}

/// A kept run of the view's scenario with its comparison or why there is none.
#[derive(Serialize)]
struct ComparisonJson<'a> {
    file: &'a str,
    line: usize,
    ran_on: &'a RanOn,
    on_chart: bool,
    comparison: Option<&'a ServingComparison>,
    error: Option<String>,
}

/// Reads measured points from a JSON export of this page (`measured` field) or a bare array of points.
///
/// # Errors
/// [`ImportError`] naming what could not be read.
pub fn import_measured(json: &str) -> Result<Vec<MeasuredPoint>, ImportError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(ImportError::Json)?;
    let list = value.get("measured").unwrap_or(&value);
    // Read from text, not from the `Value`: one copy of the points' derived code in the wasm.
    let points: Vec<RooflinePoint> =
        serde_json::from_str(&list.to_string()).map_err(ImportError::NotPoints)?;
    Ok(points.iter().map(MeasuredPoint::from).collect())
}

/// Why measured points could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The text is not JSON.
    #[error("invalid JSON: {0}")]
    Json(serde_json::Error),
    /// The JSON (or its `measured` field) is not a list of roofline points.
    #[error("not a list of roofline points: {0}")]
    NotPoints(serde_json::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::resolve_hardware;

    /// The records of `csv` as a CSV reader sees them (quoted fields unquoted).
    fn records(csv: &str) -> Vec<csv::StringRecord> {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(csv.as_bytes())
            .records()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn csv_has_provenance_on_every_row() {
        let s = Scenario::default();
        let hw = resolve_hardware(&s.hardware, &[]).unwrap();
        let a = s.analyze(&hw, &[]).unwrap();
        let rows = s.kernel.evaluate(&hw, &s.core_corrections(&hw));
        let csv = results_csv(&s, &hw, Some(&a), &rows, &[], &ServingExport::default());
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        let columns = CSV_HEADER.split(',').count();
        assert!(records(&csv)[1..].iter().all(|r| r.len() == columns
            && (&r[9], &r[10], &r[11], &r[12]) == ("gb10", hw.name.as_str(), "datasheet", "datasheet")));
        // One GPU, no expert parallel: the `gpus` and `expert_parallel` columns.
        assert_eq!((&records(&csv)[1][18], &records(&csv)[1][19]), ("1", "1"));
        assert_eq!(lines.len(), 1 + a.ops.len() + 5);
        let reference = hw.reference().unwrap();
        let rows = s.kernel.evaluate(&reference, &s.core_corrections(&reference));
        let csv = results_csv(&s, &reference, None, &rows, &[], &ServingExport::default());
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.contains(&format!(",gb10,{},reference,reference,", reference.name))
                && row.contains("activation_quantization=true step_launch=CudaGraphs"),
            "{row}"
        );
    }

    #[test]
    fn measured_rows_say_what_ran() {
        let s = Scenario::default();
        let hw = resolve_hardware(&s.hardware, &[]).unwrap();
        let mut point =
            crate::measured::tests::measured_point("64x256x256", roofline_core::Precision::Fp32, 1e-4, 1.7e9);
        let csv = results_csv(&s, &hw, None, &[], &[point.clone()], &ServingExport::default());
        let row = csv.lines().nth(1).unwrap();
        assert_eq!(records(&csv)[1].len(), CSV_HEADER.split(',').count());
        assert!(
            row.starts_with("measured,") && row.contains(",Test CPU,cpu,") && row.contains(",1700000000,"),
            "{row}"
        );
        // A label with a comma and a quote stays one field and reads back intact.
        point.label = "GEMM 64x256x256 [FP32], \"W4A16\"".to_owned();
        let csv = results_csv(&s, &hw, None, &[], &[point], &ServingExport::default());
        let record = &records(&csv)[1];
        assert_eq!(record.len(), CSV_HEADER.split(',').count());
        assert_eq!(&record[1], "GEMM 64x256x256 [FP32], \"W4A16\"");
    }

    #[test]
    fn json_export_round_trips_measured_points() {
        let s = Scenario::default();
        let hw = resolve_hardware(&s.hardware, &[]).unwrap();
        let rows = s.kernel.evaluate(&hw, &s.core_corrections(&hw));
        let op = rows[0].op.as_ref().unwrap();
        let measurement = roofline_core::measurement::Measurement {
            median_s: 2.0 * roofline_core::predict(&hw, op).unwrap().time_s,
            ..roofline_core::measurement::Measurement::default()
        };
        let point = MeasuredPoint::of_operator(op, op.precisions.compute(), "", measurement);
        let json = results_json(
            &s,
            &hw,
            None,
            &rows,
            std::slice::from_ref(&point),
            &ServingExport::default(),
        );
        assert_eq!(import_measured(&json).unwrap(), vec![point]);
        assert!(import_measured("{").is_err());
    }

    #[test]
    fn imported_points_are_exported_byte_for_byte() {
        // Every point of an endpoint's stored listing (gpu-endpoint's golden of a store written before
        // measured values moved to base units): real CPU and fake GEMVs, GEMMs, W4A16 and step operators.
        let listing: serde_json::Value = serde_json::from_str(include_str!(
            "../../gpu-endpoint/tests/data/store-v3-results.json"
        ))
        .unwrap();
        let points: Vec<String> = listing["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["point"].to_string())
            .collect();
        let file = format!("[{}]", points.join(","));
        let imported = import_measured(&file).unwrap();
        let s = Scenario::default();
        let hw = resolve_hardware(&s.hardware, &[]).unwrap();
        let json = results_json(&s, &hw, None, &[], &imported, &ServingExport::default());
        let exported: serde_json::Value = serde_json::from_str(&json).unwrap();
        let exported: Vec<String> = exported["measured"]
            .as_array()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(exported, points);
    }

    #[test]
    fn json_export_says_the_mode() {
        let s = Scenario::default();
        let hw = crate::calibration::effective_hardware(&s, &[]).unwrap().spec;
        let json = results_json(
            &s,
            &hw,
            None,
            &s.kernel.evaluate(&hw, &s.core_corrections(&hw)),
            &[],
            &ServingExport::default(),
        );
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["mode"], "reference");
        assert_eq!(value["device"], hw.name.as_str());
        assert_eq!(value["hardware"]["provenance"], "reference");
        assert_eq!(value["corrections"]["step_launch"], "cuda_graphs");
        assert_eq!(value["kernel"][0]["mode"], "reference");
    }

    #[test]
    fn serving_runs_are_exported_with_their_scenario_and_error() {
        use crate::serving::measured::{RanOn, add, compare, read};
        use crate::serving::tests::{h100_llama, swept};
        let (mut s, hw) = h100_llama();
        s.config = "bf16".into();
        let vllm = include_str!("../../core/tests/data/serving/vllm_bench_serve.json");
        let mut runs = Vec::new();
        add(&mut runs, &read("run.json", vllm, &s).unwrap());
        let mut elsewhere = read("h200.json", vllm, &s).unwrap();
        elsewhere.ran_on.hardware = "h200_sxm".into();
        add(&mut runs, &elsewhere);
        let (key, sweep) = swept(&s, &hw);
        let compared = compare(&runs, &RanOn::of(&s), &key, &sweep);
        let serving = ServingExport {
            runs: &runs,
            sweep: Some(&sweep),
            outcome: None,
            compared: Some(&compared),
        };
        let csv = results_csv(&s, &hw, None, &[], &[], &serving);
        let rows = records(&csv);
        assert_eq!(rows.len(), 3);
        let columns = CSV_HEADER.split(',').count();
        assert!(rows.iter().all(|r| r.len() == columns));
        let column = |name: &str| CSV_HEADER.split(',').position(|c| c == name).unwrap();
        let here = &rows[1];
        assert_eq!(
            (&here[0], &here[1], &here[9]),
            ("serving-measured", "run.json:1", "h100_sxm")
        );
        assert_eq!(
            (&here[column("serving_load")], &here[column("serving_isl")]),
            ("concurrency 16", "1024")
        );
        // TPOT 11.62 ms measured, divided by the prediction of BF16 at concurrency 16.
        let ratio = compared.rows[0].comparison.as_ref().unwrap().tpot_ratio.unwrap();
        assert_eq!(here[column("tpot_ratio")], ratio.to_string());
        let tpot: f64 = here[column("measured_tpot_s")].parse().unwrap();
        assert!((tpot - 0.01162).abs() < 1e-15, "{tpot}");
        // The H200 run keeps its device and has no prediction beside it.
        let other = &rows[2];
        assert_eq!((&other[9], &other[10]), ("h200_sxm", ""));
        assert_eq!(&other[column("tpot_ratio")], "");
        let json: serde_json::Value =
            serde_json::from_str(&results_json(&s, &hw, None, &[], &[], &serving)).unwrap();
        assert_eq!(json["serving"]["runs"].as_array().unwrap().len(), 2);
        assert_eq!(json["serving"]["runs"][1]["ran_on"]["hardware"], "h200_sxm");
        assert_eq!(
            json["serving"]["comparisons"][0]["comparison"]["tpot_ratio"],
            ratio
        );
        assert_eq!(json["serving"]["sweep"]["hardware"], "h100_sxm");
    }
}
