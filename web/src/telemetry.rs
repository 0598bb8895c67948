//! Live telemetry helpers: a bounded window of NVML samples, sparkline geometry and throttle detection. Pure.

use roofline_core::wire::NvmlStatus;

/// Samples kept for the sparklines.
pub const WINDOW: usize = 60;

/// Appends `sample`, dropping the oldest beyond [`WINDOW`].
pub fn push_sample(window: &mut Vec<NvmlStatus>, sample: NvmlStatus) {
    window.push(sample);
    if window.len() > WINDOW {
        window.drain(..window.len() - WINDOW);
    }
}

/// The `points` attribute of an SVG polyline drawing `values` in a `width`×`height` box (the lowest value
/// at the bottom, the highest at the top; a flat series is drawn mid-height). Empty for no values.
#[must_use]
pub fn sparkline(values: &[f64], width: f64, height: f64) -> String {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    let step = if values.len() > 1 {
        width / (values.len() - 1) as f64
    } else {
        0.0
    };
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let y = if hi > lo {
                height - (v - lo) / (hi - lo) * height
            } else {
                height / 2.0
            };
            format!("{:.1},{:.1}", i as f64 * step, y)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Throttle reasons that lower clocks (NVML's `GPU_IDLE` only means nothing is running).
#[must_use]
pub fn throttling(sample: &NvmlStatus) -> Vec<String> {
    sample
        .throttle_reasons
        .iter()
        .filter(|r| r.as_str() != "GPU_IDLE")
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(power_draw_w: f64, reasons: &[&str]) -> NvmlStatus {
        NvmlStatus {
            device_name: "GPU".into(),
            gpu_clock_mhz: 1980.0,
            mem_clock_mhz: 2619.0,
            power_draw_w,
            power_limit_w: 700.0,
            temperature_c: 60.0,
            mem_used_mb: 1.0,
            mem_total_mb: 80e3,
            gpu_utilization_pct: 100.0,
            compute_capability: [9, 0],
            throttle_reasons: reasons.iter().map(|r| (*r).to_owned()).collect(),
        }
    }

    #[test]
    fn window_keeps_the_newest_samples() {
        let mut w = Vec::new();
        for i in 0..WINDOW + 5 {
            push_sample(&mut w, sample(i as f64, &[]));
        }
        assert_eq!(w.len(), WINDOW);
        assert_eq!(w[0].power_draw_w, 5.0);
    }

    #[test]
    fn sparkline_spans_the_box() {
        assert_eq!(
            sparkline(&[1.0, 3.0, 2.0], 100.0, 20.0),
            "0.0,20.0 50.0,0.0 100.0,10.0"
        );
        assert_eq!(sparkline(&[5.0], 100.0, 20.0), "0.0,10.0");
        assert_eq!(sparkline(&[], 100.0, 20.0), "");
    }

    #[test]
    fn idle_is_not_throttling() {
        assert!(throttling(&sample(1.0, &["GPU_IDLE"])).is_empty());
        assert_eq!(
            throttling(&sample(1.0, &["GPU_IDLE", "SW_POWER_CAP"])),
            ["SW_POWER_CAP"]
        );
    }
}
