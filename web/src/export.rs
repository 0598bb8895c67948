//! Results as JSON and CSV, with provenance columns (mode, device source, scenario, tool version). Pure.

use roofline_core::wire::RooflinePoint;
use roofline_core::{HardwareSpec, Mode, ModelAnalysis};
use serde_json::json;

use crate::scenario::{KernelRow, Scenario};

/// This page's version, recorded in every export.
pub const TOOL: &str = concat!("roofline-web ", env!("CARGO_PKG_VERSION"));

/// Provenance shared by every exported row: device key, the mode of the predictions and where the device's
/// numbers come from, scenario, corrections, tool.
fn provenance(s: &Scenario, hw: &HardwareSpec) -> Vec<String> {
    let c = s.core_corrections(Mode::of(hw));
    vec![
        hw.key.clone(),
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
fn measurement_columns(point: Option<&RooflinePoint>) -> Vec<String> {
    let Some(m) = point.and_then(|p| p.measurement.as_ref()) else {
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

/// Header of [`results_csv`].
pub const CSV_HEADER: &str = "source,item,count,precision,ai_flop_per_byte,flops,bytes,time_s,bound,\
hardware,mode,hardware_provenance,model,config,phase,batch,context,gpus,expert_parallel,corrections,tool,\
measured_device,measured_backend,measured_library,measured_kernel,measured_versions,measured_samples,\
measured_sm_clock_mhz,measured_power_w,measured_throttle,measured_at_unix_s";

/// One CSV record per model operator (`predicted`), kernel prediction (`kernel`) and measured point
/// (`measured`), quoted by the `csv` crate where a field needs it.
#[must_use]
pub fn results_csv(
    s: &Scenario,
    hw: &HardwareSpec,
    analysis: Option<&ModelAnalysis>,
    kernel: &[KernelRow],
    measured: &[RooflinePoint],
) -> String {
    let prov = provenance(s, hw);
    let mut records = vec![CSV_HEADER.split(',').map(str::to_owned).collect::<Vec<_>>()];
    let mut push = |fields: Vec<String>, point: Option<&RooflinePoint>| {
        records.push(
            fields
                .into_iter()
                .chain(prov.iter().cloned())
                .chain(measurement_columns(point))
                .collect(),
        );
    };
    for op in analysis.map_or(&[][..], |a| &a.ops) {
        push(
            vec![
                "predicted".into(),
                op.name.clone(),
                op.count.to_string(),
                op.precision.name().into(),
                op.arithmetic_intensity.to_string(),
                op.flops.to_string(),
                op.bytes.to_string(),
                op.time_s.to_string(),
                op.bound.name().into(),
            ],
            None,
        );
    }
    for row in kernel {
        if let (Ok(op), Ok(p)) = (&row.op, &row.prediction) {
            push(
                vec![
                    "kernel".into(),
                    op.name.clone(),
                    "1".into(),
                    row.precision.name().into(),
                    p.arithmetic_intensity.to_string(),
                    p.flops.to_string(),
                    p.bytes.to_string(),
                    p.time_s.to_string(),
                    p.bound.name().into(),
                ],
                None,
            );
        }
    }
    for m in measured {
        push(
            vec![
                "measured".into(),
                m.label.clone(),
                "1".into(),
                m.precision.name().into(),
                m.ai.to_string(),
                String::new(),
                String::new(),
                (m.time_us * 1e-6).to_string(),
                m.bottleneck.name().to_owned(),
            ],
            Some(m),
        );
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
/// reference figure), analysis, kernel points and measured points.
#[must_use]
pub fn results_json(
    s: &Scenario,
    hw: &HardwareSpec,
    analysis: Option<&ModelAnalysis>,
    kernel: &[KernelRow],
    measured: &[RooflinePoint],
) -> String {
    let kernel: Vec<RooflinePoint> = kernel
        .iter()
        .filter_map(|r| {
            Some(RooflinePoint::simulated(
                r.op.as_ref().ok()?,
                r.prediction.as_ref().ok()?,
            ))
        })
        .collect();
    let mode = Mode::of(hw);
    let value = json!({
        "tool": TOOL,
        "mode": mode,
        "scenario": s,
        "corrections": s.core_corrections(mode),
        "hardware": hw,
        "analysis": analysis,
        "kernel": kernel,
        "measured": measured,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// Reads measured points from a JSON export of this page (`measured` field) or a bare array of points.
///
/// # Errors
/// [`ImportError`] naming what could not be read.
pub fn import_measured(json: &str) -> Result<Vec<RooflinePoint>, ImportError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(ImportError::Json)?;
    let list = value.get("measured").cloned().unwrap_or(value);
    serde_json::from_value(list).map_err(ImportError::NotPoints)
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
        let rows = s.kernel.evaluate(&hw);
        let csv = results_csv(&s, &hw, Some(&a), &rows, &[]);
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        let columns = CSV_HEADER.split(',').count();
        assert!(
            records(&csv)[1..]
                .iter()
                .all(|r| r.len() == columns && (&r[9], &r[10], &r[11]) == ("gb10", "datasheet", "datasheet"))
        );
        // One GPU, no expert parallel: the `gpus` and `expert_parallel` columns.
        assert_eq!((&records(&csv)[1][17], &records(&csv)[1][18]), ("1", "1"));
        assert_eq!(lines.len(), 1 + a.ops.len() + 5);
        let reference = hw.reference().unwrap();
        let csv = results_csv(&s, &reference, None, &s.kernel.evaluate(&reference), &[]);
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.contains(",gb10,reference,reference,")
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
        let csv = results_csv(&s, &hw, None, &[], &[point.clone()]);
        let row = csv.lines().nth(1).unwrap();
        assert_eq!(records(&csv)[1].len(), CSV_HEADER.split(',').count());
        assert!(
            row.starts_with("measured,") && row.contains(",Test CPU,cpu,") && row.ends_with(",1700000000"),
            "{row}"
        );
        // A label with a comma and a quote stays one field and reads back intact.
        point.label = "GEMM 64x256x256 [FP32], \"W4A16\"".to_owned();
        let csv = results_csv(&s, &hw, None, &[], &[point]);
        let record = &records(&csv)[1];
        assert_eq!(record.len(), CSV_HEADER.split(',').count());
        assert_eq!(&record[1], "GEMM 64x256x256 [FP32], \"W4A16\"");
    }

    #[test]
    fn json_export_round_trips_measured_points() {
        let s = Scenario::default();
        let hw = resolve_hardware(&s.hardware, &[]).unwrap();
        let rows = s.kernel.evaluate(&hw);
        let point =
            RooflinePoint::simulated(rows[0].op.as_ref().unwrap(), rows[0].prediction.as_ref().unwrap());
        let json = results_json(&s, &hw, None, &rows, std::slice::from_ref(&point));
        assert_eq!(import_measured(&json).unwrap(), vec![point]);
        assert!(import_measured("{").is_err());
    }

    #[test]
    fn json_export_says_the_mode() {
        let s = Scenario::default();
        let hw = crate::calibration::effective_hardware(&s, &[]).unwrap().spec;
        let json = results_json(&s, &hw, None, &s.kernel.evaluate(&hw), &[]);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["mode"], "reference");
        assert_eq!(value["hardware"]["provenance"], "reference");
        assert_eq!(value["corrections"]["step_launch"], "cuda_graphs");
        assert_eq!(value["kernel"][0]["mode"], "reference");
    }
}
