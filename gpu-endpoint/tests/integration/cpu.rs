//! The CPU backend measures a real small GEMM and GEMV (output checked before timing) and a copy kernel;
//! formats it cannot run are `unsupported` naming the host architecture.

use std::time::Duration;

use gpu_endpoint::backend::cpu::CpuBackend;
use gpu_endpoint::backend::{Backend, BackendError, MatmulSpec};
use gpu_endpoint::device::Device;
use gpu_endpoint::protocol::SamplingPolicy;
use roofline_core::{GemmShape, Precision};

fn backend() -> CpuBackend {
    let policy = SamplingPolicy {
        time_cap: Duration::from_millis(300),
        ..SamplingPolicy::cpu()
    };
    CpuBackend::new(256 << 20)
        .with_copy_bytes(1 << 20)
        .with_policy(policy)
}

#[test]
fn cpu_measures_a_verified_fp32_gemm_and_gemv() {
    let device = Device::new(std::sync::Arc::new(backend()));
    let guard = device.acquire();
    for (m, n, k) in [(48, 40, 56), (1, 96, 80)] {
        let spec = MatmulSpec {
            shape: GemmShape::matmul(m, n, k),
            precision: Precision::Fp32,
        };
        let measured = guard.measure_matmul(&spec).unwrap();
        let rec = measured.measurement.clone();
        assert_eq!(rec.backend, roofline_core::wire::BackendKind::Cpu);
        assert!(rec.verified, "output checked before timing");
        assert!(rec.kernel.starts_with("gemm::gemm FP32"), "{}", rec.kernel);
        assert!(rec.samples >= 1);
        assert!(rec.p10_s <= rec.median_s && rec.median_s <= rec.p90_s);
        assert_eq!(measured.precision, Precision::Fp32);
        assert_eq!(measured.op.flops, 2.0 * (m * n * k) as f64);
        let point = gpu_endpoint::use_cases::point_of(measured, Some(roofline_core::Bound::Memory));
        assert!(
            (point.achieved_flop_per_s() / 1e12 - 2.0 * (m * n * k) as f64 / rec.median_s / 1e12).abs()
                < 1e-12
        );
    }
    let fp64 = guard
        .measure_matmul(&MatmulSpec {
            shape: GemmShape::matmul(16, 16, 16),
            precision: Precision::Fp64,
        })
        .unwrap();
    assert!(fp64.measurement.verified);
}

#[test]
fn cpu_refuses_formats_it_cannot_run_natively() {
    let b = backend();
    for precision in [
        Precision::Fp16,
        Precision::Fp8E4M3,
        Precision::Int4,
        Precision::Nvfp4,
    ] {
        let err = b
            .measure_matmul(&MatmulSpec {
                shape: GemmShape::matmul(1, 64, 64),
                precision,
            })
            .unwrap_err();
        let BackendError::Unsupported(message) = &err else {
            panic!("{err:?}")
        };
        assert!(message.contains(std::env::consts::ARCH), "{message}");
        assert_eq!(err.code(), "unsupported");
    }
}

#[test]
fn cpu_copy_bandwidth_is_positive_and_counts_read_plus_write() {
    let measured = backend().measure_bandwidth().unwrap();
    assert_eq!(measured.bytes, 2.0 * f64::from(1u32 << 20));
    assert!(measured.measurement.median_s > 0.0);
    assert!(measured.measurement.verified);
}

#[test]
fn cpu_device_info_reports_the_host_brand_and_memory() {
    let b = backend();
    let info = b.device_info();
    assert_eq!(info.backend, roofline_core::wire::BackendKind::Cpu);
    assert!(!info.name.trim().is_empty());
    // Where /proc/cpuinfo names the model (x86), the brand is that line's value.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if let Some(model) = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
    {
        assert_eq!(info.name, model.trim());
    }
    if cfg!(target_os = "linux") {
        assert!(info.memory_total_bytes > 0.0, "{info:?}");
        let free_bytes = info.memory_free_bytes.expect("MemAvailable is read on Linux");
        assert!(
            free_bytes > 0.0 && free_bytes <= info.memory_total_bytes,
            "{free_bytes} of {}",
            info.memory_total_bytes
        );
        // Half the available memory, capped by the constructor's bound.
        let budget = b.memory_budget_bytes();
        assert!(budget > 0 && budget <= 256 << 20, "{budget}");
    }
}
