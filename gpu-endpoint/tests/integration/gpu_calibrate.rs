//! `calibrate` with its defaults on a real GPU: compiled only with `--features cuda` and run only when
//! `ROOFLINE_GPU_TESTS=1`. It must succeed on every architecture (Hopper has no INT4 matrix path: the W4A16
//! GEMV is a weight-only ceiling, never an INT4 peak), and every peak's runs agree within 5 % or say why.

use crate::common::gpu_device;
use gpu_endpoint::protocol::PointLimits;
use gpu_endpoint::use_cases::calibrate::{CalibrationRequest, calibrate};
use roofline_core::Precision;
use roofline_core::hardware::PEAK_SPREAD_TARGET;

#[test]
fn gpu_calibrates_with_its_defaults_int4_as_weight_only_and_explains_any_spread() {
    let Some(device) = gpu_device() else { return };
    let info = device.backend().device_info();
    let request = CalibrationRequest::default();
    let result = calibrate(&device.acquire(), None, &request, &PointLimits::default()).unwrap_or_else(|e| {
        panic!(
            "calibrate with its defaults failed on {} ({}): {e}",
            info.name, info.arch
        )
    });
    let quality = result.spec.calibration.clone().expect("a calibration's quality");
    // The figures, for the log of the run.
    println!(
        "{} ({}): copy {:.0} GB/s",
        info.name,
        info.arch,
        result.bandwidth_bytes_per_s / 1e9
    );
    for p in &result.peaks {
        println!(
            "  {} {:.1} TFLOP/s ({})",
            p.precision,
            p.achieved_flop_per_s / 1e12,
            p.measurement.kernel
        );
    }
    for (path, s) in &quality.peaks {
        println!(
            "  {path} runs {:.1}–{:.1} TFLOP/s: {:.1} %",
            s.min / 1e12,
            s.max / 1e12,
            s.relative() * 100.0
        );
    }
    for w in &result.weight_only {
        println!(
            "  {} weight-only {:.0} GB/s ({})",
            w.precision,
            w.bandwidth_bytes_per_s / 1e9,
            w.measurement.kernel
        );
    }
    for f in &result.failed {
        println!("  failed {} ({}): {}", f.precision, f.code, f.message);
    }
    for w in &quality.warnings {
        println!("  warning: {w}");
    }
    println!("  source: {}", result.spec.sources[0]);
    assert!(
        result.peaks.iter().all(|p| p.precision != Precision::Int4),
        "an INT4 peak from a GEMV: {:?}",
        result.peaks.iter().map(|p| p.precision).collect::<Vec<_>>()
    );
    // The CUDA backend times INT4 as the W4A16 GEMV: a weight-only bandwidth between 30 % and 120 % of the
    // copy bandwidth (it streams its weights once; the copy reads and writes).
    let w4 = result
        .weight_only
        .iter()
        .find(|w| w.precision == Precision::Int4)
        .unwrap_or_else(|| panic!("no INT4 weight-only GEMV; failed: {:?}", result.failed));
    let ratio = w4.bandwidth_bytes_per_s / result.bandwidth_bytes_per_s;
    assert!(
        (0.3..1.2).contains(&ratio),
        "W4A16 {:.0} GB/s = {ratio:.2} × copy",
        w4.bandwidth_bytes_per_s / 1e9
    );
    assert!(
        result.spec.sources[0].contains("clock warm-up"),
        "{}",
        result.spec.sources[0]
    );
    // Every peak's runs agree within 5 %, or its warning says why (the clocks, the kernels, no telemetry).
    for (path, s) in &quality.peaks {
        if s.relative() > PEAK_SPREAD_TARGET {
            let warning = quality
                .warnings
                .iter()
                .find(|w| w.starts_with(&format!("{path} peak varied")))
                .unwrap_or_else(|| panic!("{path} spread {:.1} % without a warning", s.relative() * 100.0));
            assert!(warning.contains("SM clock"), "{warning}");
        }
    }
}
