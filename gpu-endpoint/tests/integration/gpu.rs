//! Real-GPU tests: compiled only with `--features cuda` and run only when `ROOFLINE_GPU_TESTS=1`
//! (so `cargo test --features cuda` passes on a machine without a GPU).

use crate::common::gpu_device;
use gpu_endpoint::backend::MatmulSpec;
use roofline_core::Precision;

#[test]
fn gpu_measures_verified_cublaslt_points_and_labels_only_what_ran() {
    let Some(device) = gpu_device() else { return };
    let info = device.backend().device_info();
    assert_eq!(info.backend, roofline_core::wire::BackendKind::Cuda);
    let guard = device.acquire();
    for precision in [
        Precision::Fp32,
        Precision::Tf32,
        Precision::Fp16,
        Precision::Bf16,
        Precision::Fp8E4M3,
        Precision::Int8,
    ] {
        let spec = MatmulSpec {
            m: 256,
            n: 4096,
            k: 4096,
            precision,
        };
        match guard.measure_matmul(&spec) {
            Ok(m) => {
                assert_eq!(m.precision, precision);
                assert!(m.measurement.verified, "{precision}");
                assert!(
                    m.measurement.kernel.contains("cublasLtMatmul"),
                    "{}",
                    m.measurement.kernel
                );
                assert!(m.measurement.samples >= 1);
            }
            Err(e) => assert_eq!(e.code(), "unsupported", "{precision}: {e}"),
        }
    }
    let w4 = guard
        .measure_matmul(&MatmulSpec {
            m: 1,
            n: 4096,
            k: 4096,
            precision: Precision::Int4,
        })
        .unwrap();
    assert!(w4.measurement.kernel.starts_with("W4A16-dequant"));
    let nvfp4 = guard.measure_matmul(&MatmulSpec {
        m: 128,
        n: 4096,
        k: 4096,
        precision: Precision::Nvfp4,
    });
    if info.compute_capability.unwrap()[0] < 10 {
        let err = nvfp4.unwrap_err();
        assert_eq!(err.code(), "unsupported");
        assert!(err.to_string().contains(&info.arch));
    }
    let bw = guard.measure_bandwidth().unwrap();
    assert!(bw.measurement.verified && bw.bytes > 0.0);
}
