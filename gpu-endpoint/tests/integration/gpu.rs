//! Real-GPU tests: compiled only with `--features cuda` and run only when `ROOFLINE_GPU_TESTS=1`
//! (so `cargo test --features cuda` passes on a machine without a GPU). FP32, FP16 and BF16 must measure;
//! TF32, FP8, INT8 and NVFP4 may be `unsupported` only where the architecture lacks them, naming it. A
//! batched BF16 GEMM (MoE experts) measures as one strided-batched cuBLASLt matmul.

use crate::common::gpu_device;
use gpu_endpoint::backend::{MatmulSpec, Measured};
use roofline_core::{GemmShape, Precision};

/// A cuBLASLt measurement of `precision`, verified, labelled with the precision that ran.
fn assert_verified_cublaslt(m: &Measured, precision: Precision) {
    assert_eq!(m.precision, precision);
    assert!(m.measurement.verified, "{precision}");
    assert!(
        m.measurement.kernel.contains("cublasLtMatmul"),
        "{}",
        m.measurement.kernel
    );
    assert!(m.measurement.samples >= 1);
}

#[test]
fn gpu_measures_verified_cublaslt_points_and_labels_only_what_ran() {
    let Some(device) = gpu_device() else { return };
    let info = device.backend().device_info();
    assert_eq!(info.backend, roofline_core::wire::BackendKind::Cuda);
    let cc = info
        .compute_capability
        .expect("a CUDA device has a compute capability");
    assert!(
        cc[0] >= 8,
        "the GPU tests need Ampere (sm_80) or later for BF16, got {}",
        info.arch
    );
    let guard = device.acquire();
    let gemm = |precision| {
        guard.measure_matmul(&MatmulSpec {
            shape: GemmShape::matmul(256, 4096, 4096),
            precision,
        })
    };
    // FP32, FP16 and BF16 have matrix paths on every sm_80+ GPU: they must measure.
    for precision in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
        let m = gemm(precision).unwrap_or_else(|e| panic!("{precision} must measure on {}: {e}", info.arch));
        assert_verified_cublaslt(&m, precision);
    }
    // TF32, FP8 and INT8 measure where the architecture has them, else are `unsupported` naming it.
    for precision in [Precision::Tf32, Precision::Fp8E4M3, Precision::Int8] {
        match gemm(precision) {
            Ok(m) => assert_verified_cublaslt(&m, precision),
            Err(e) => {
                assert_eq!(e.code(), "unsupported", "{precision}: {e}");
                assert!(e.to_string().contains(&info.arch), "{precision}: {e}");
            }
        }
    }
    let w4 = guard
        .measure_matmul(&MatmulSpec {
            shape: GemmShape::matmul(1, 4096, 4096),
            precision: Precision::Int4,
        })
        .unwrap();
    assert!(w4.measurement.kernel.starts_with("W4A16-dequant"));
    let nvfp4 = guard.measure_matmul(&MatmulSpec {
        shape: GemmShape::matmul(128, 4096, 4096),
        precision: Precision::Nvfp4,
    });
    // Block-scaled FP4 needs sm_100+: below, it is `unsupported` naming the architecture.
    match nvfp4 {
        Ok(m) => assert!(cc[0] >= 10 && m.measurement.verified, "{}", m.measurement.kernel),
        Err(e) => {
            assert_eq!(e.code(), "unsupported", "{e}");
            assert!(e.to_string().contains(&info.arch), "{e}");
        }
    }
    let bw = guard.measure_bandwidth().unwrap();
    assert!(bw.measurement.verified && bw.bytes > 0.0);
}

#[test]
fn gpu_measures_a_verified_strided_batched_bf16_gemm() {
    let Some(device) = gpu_device() else { return };
    // 8 experts, 16 routed rows each, 1024 -> 2048 features, each expert its own weights.
    let shape = GemmShape {
        batch: 8,
        ..GemmShape::matmul(16, 2048, 1024)
    };
    let m = device
        .acquire()
        .measure_matmul(&MatmulSpec {
            shape,
            precision: Precision::Bf16,
        })
        .unwrap_or_else(|e| panic!("BF16 {shape} must measure: {e}"));
    assert_verified_cublaslt(&m, Precision::Bf16);
    let record = &m.measurement;
    assert!(
        record
            .kernel
            .starts_with("cublasLtMatmul strided-batched (batch count 8,"),
        "{}",
        record.kernel
    );
    assert_eq!(m.op.kind, roofline_core::OpKind::BatchedGemm);
    // 2·8·16·2048·1024 = 536,870,912 FLOP; 8 · 2 B · (16·1024 + 2048·1024 + 16·2048) = 34,340,864 B.
    assert_eq!(m.op.flops, 536_870_912.0);
    assert_eq!(m.op.bytes(), 34_340_864.0);
    // Memory-bound: no HBM moves 34 MB in under 3.4 µs (10 TB/s); a batch run one by one would still be far
    // below 1 ms.
    assert!(
        (3.4e-6..1e-3).contains(&record.median_s),
        "{:.2} µs ({})",
        record.median_s * 1e6,
        record.kernel
    );
    eprintln!(
        "BF16 {shape}: {:.2} µs, {:.0} GB/s; {}",
        record.median_s * 1e6,
        m.op.bytes() / record.median_s / 1e9,
        record.kernel
    );
}
