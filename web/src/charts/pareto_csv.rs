//! The serving chart as CSV: what is drawn, point by point, with the scenario on every record.

use crate::charts::pareto_series::ParetoData;

/// The chart as CSV: one record per point of each shown series and of each front (the x column named for
/// what the x axis shows), with `caption` (mode, device, model, lengths, engine) on every record.
#[must_use]
pub fn chart_csv(data: &ParetoData, caption: &str) -> String {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let header = [
        "what",
        "config",
        "tensor_parallel",
        "expert_parallel",
        "concurrency",
        data.x_name.1.as_str(),
        "output_tokens_per_s_per_gpu",
        "scenario",
    ];
    // Writing to memory cannot fail.
    let _ = writer.write_record(header);
    for s in data.series.iter().filter(|s| s.visible) {
        for (&(x, y), n) in s.line.iter().zip(&s.concurrency) {
            let _ = writer.write_record([
                "series".to_owned(),
                s.config.clone(),
                s.layout.tensor.to_string(),
                s.layout.expert.to_string(),
                n.to_string(),
                x.to_string(),
                y.to_string(),
                caption.to_owned(),
            ]);
        }
    }
    for f in &data.fronts {
        for &(x, y) in &f.line {
            let fields = [
                f.label.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ];
            let _ = writer.write_record(fields.into_iter().chain([
                x.to_string(),
                y.to_string(),
                caption.to_owned(),
            ]));
        }
    }
    writer
        .into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}
