//! The roofline: time = max(FLOPs / peak, bytes / bandwidth).

use crate::ops::CollectiveShape;
use crate::ops::Operator;
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Mode};

/// Which roof limits an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Bound {
    /// Bytes / bandwidth ≥ FLOPs / peak (a tie counts as memory-bound).
    Memory,
    /// FLOPs / peak > bytes / bandwidth.
    Compute,
    /// A collective: limited by the GPU-to-GPU link (its bandwidth and latency), not by DRAM or compute.
    Interconnect,
}

impl Bound {
    /// `memory` or `compute` (the original toolkit's `bottleneck` values), or `interconnect`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Bound::Memory => "memory",
            Bound::Compute => "compute",
            Bound::Interconnect => "interconnect",
        }
    }
}

/// The roofline prediction of one operator on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The ceilings it comes from ([`Mode::of`] the spec).
    pub mode: Mode,
    /// Work, in FLOP.
    pub flops: f64,
    /// DRAM traffic, in bytes.
    pub bytes: f64,
    /// Arithmetic intensity, in FLOP/byte.
    pub arithmetic_intensity: f64,
    /// Dense peak of the compute path, in FLOP/s.
    pub peak_flop_per_s: f64,
    /// DRAM bandwidth used (a collective: the link bandwidth of its group, one direction), in bytes/s.
    pub bandwidth_bytes_per_s: f64,
    /// Ridge point = peak / bandwidth, in FLOP/byte.
    pub ridge_point: f64,
    /// Attainable throughput = min(peak, AI · bandwidth), in FLOP/s.
    pub attainable_flop_per_s: f64,
    /// FLOPs / peak, in seconds.
    pub compute_time_s: f64,
    /// Bytes / bandwidth (a collective: link bytes / link bandwidth), in seconds.
    pub memory_time_s: f64,
    /// Fixed time the kernel adds ([`HardwareSpec::kernel_overhead_for`]; 0 on datasheet specs), in seconds.
    pub kernel_overhead_s: f64,
    /// Predicted time = max(compute, memory) + the kernel overhead, in seconds.
    pub time_s: f64,
    /// Which roof limits it.
    pub bound: Bound,
}

/// Predicts one operator on one device with the ideal roofline.
///
/// time = max(FLOPs / peak, bytes / bandwidth) + [`HardwareSpec::kernel_overhead_for`] the operator's path
/// (0 on datasheet specs, the floors on reference specs, measured on calibrated ones). Matrix operators use
/// the dense peak of their compute path, and a GEMM whose kernel family has its own ceiling on the spec
/// ([`HardwareSpec::gemm_family`]: reference specs) that family's throughput, small-M bandwidth and floor;
/// vector operators (norms, activations, lookups) use [`HardwareSpec::vector_flop_per_s`], and an
/// activation-quantization kernel its own floor ([`HardwareSpec::quantize_overhead_s`]). A collective
/// ([`crate::ops::OpKind::Collective`]) takes link bytes / link bandwidth + the collective's latency from the
/// spec's [`roofline_base::hardware::Interconnect`], bound [`Bound::Interconnect`].
///
/// # Errors
/// [`Error::Unsupported`] when the device has no native path for a matrix operator's compute precision;
/// [`Error::InvalidInput`] for a collective on a device without an interconnect figure or beyond its
/// scale-up domain.
///
/// # Examples
/// ```
/// use roofline_base::{find_hardware, Precision};
/// use roofline_analysis::{predict, Bound, Operator};
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let op = Operator::gemm(8192, 8192, 8192, Precision::Bf16.into()).unwrap();
/// let p = predict(h100, &op).unwrap();
/// assert_eq!(p.bound, Bound::Compute);
/// assert!((p.time_s - 2.0 * 8192f64.powi(3) / 989.4e12).abs() < 1e-12);
/// ```
pub fn predict(hardware: &HardwareSpec, op: &Operator) -> Result<Prediction, Error> {
    if let Some(c) = op.collective {
        return predict_collective(hardware, op, c);
    }
    let (peak, bandwidth, kernel_overhead_s) = if op.kind.uses_matrix_units() {
        let precision = op.precisions.compute();
        let path = precision.compute_path();
        let peak = hardware.dense_peak_for(precision)?;
        match op
            .gemm_family()
            .and_then(|family| hardware.gemm_family(family, path))
        {
            Some(family) => (
                family.dense_flop_per_s,
                family.bandwidth_bytes_per_s,
                family.kernel_overhead_s,
            ),
            None => (
                peak,
                hardware.dram_bandwidth_bytes_per_s,
                hardware.kernel_overhead_for(Some(path)),
            ),
        }
    } else {
        let overhead = op.quantize.map_or_else(
            || hardware.kernel_overhead_for(None),
            |kernel| hardware.quantize_overhead_s(kernel),
        );
        (
            hardware.vector_flop_per_s(),
            hardware.dram_bandwidth_bytes_per_s,
            overhead,
        )
    };
    let bytes = op.bytes();
    let arithmetic_intensity = if bytes > 0.0 { op.flops / bytes } else { 0.0 };
    let compute_time_s = op.flops / peak;
    let memory_time_s = bytes / bandwidth;
    let bound = if memory_time_s >= compute_time_s {
        Bound::Memory
    } else {
        Bound::Compute
    };
    Ok(Prediction {
        mode: Mode::of(hardware),
        flops: op.flops,
        bytes,
        arithmetic_intensity,
        peak_flop_per_s: peak,
        bandwidth_bytes_per_s: bandwidth,
        ridge_point: peak / bandwidth,
        attainable_flop_per_s: peak.min(arithmetic_intensity * bandwidth),
        compute_time_s,
        memory_time_s,
        kernel_overhead_s,
        time_s: compute_time_s.max(memory_time_s) + kernel_overhead_s,
        bound,
    })
}

/// A collective: link bytes over the group's link bandwidth plus the collective's latency (its
/// `kernel_overhead_s`); no FLOPs, so intensity, peak, ridge point and attainable throughput are 0.
fn predict_collective(
    hardware: &HardwareSpec,
    op: &Operator,
    c: CollectiveShape,
) -> Result<Prediction, Error> {
    let link = hardware
        .interconnect_for(c.gpus)?
        .ok_or_else(|| Error::InvalidInput(format!("{} runs on one GPU: no collective", hardware.key)))?;
    let bandwidth = link.group_bandwidth_bytes_per_s(c.gpus);
    let bytes = op.bytes();
    let memory_time_s = bytes / bandwidth;
    let kernel_overhead_s = link.latency_s(c.collective, c.gpus);
    Ok(Prediction {
        mode: Mode::of(hardware),
        flops: 0.0,
        bytes,
        arithmetic_intensity: 0.0,
        peak_flop_per_s: 0.0,
        bandwidth_bytes_per_s: bandwidth,
        ridge_point: 0.0,
        attainable_flop_per_s: 0.0,
        compute_time_s: 0.0,
        memory_time_s,
        kernel_overhead_s,
        time_s: memory_time_s + kernel_overhead_s,
        bound: Bound::Interconnect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::OperandPrecisions;
    use roofline_base::hardware::{Calibration, Mode, find_hardware, find_hardware_in};
    use roofline_base::precision::{ComputePath, GemmFamily, Precision};

    #[test]
    fn a_calibrated_kernel_overhead_is_added_to_the_roofline_time() {
        // H100 SXM FP16 GEMV 4096²: 33,570,816 B / 3.35e12 B/s = 10.021 µs, plus 5 µs of overhead.
        let mut h100 = find_hardware("h100_sxm").unwrap().clone();
        h100.kernel_overhead_s = 5e-6;
        h100.check().unwrap();
        let p = predict(
            &h100,
            &Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap(),
        )
        .unwrap();
        assert!(
            (p.time_s - (33_570_816.0 / 3.35e12 + 5e-6)).abs() < 1e-15,
            "{p:?}"
        );
        assert_eq!(p.bound, Bound::Memory);
        h100.kernel_overhead_s = -1e-6;
        assert!(h100.check().is_err());
    }

    #[test]
    fn gb10_fp16_gemv_time_is_bytes_over_273_gb_per_s() {
        // 33,570,816 B / 273e9 B/s = 122.97 µs, memory-bound (AI ≈ 1 ≪ ridge 125e12/273e9 = 457.9).
        let p = predict(
            find_hardware("gb10").unwrap(),
            &Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap(),
        )
        .unwrap();
        assert!((p.time_s - 122.970_021_978e-6).abs() < 1e-12);
        assert_eq!(p.bound, Bound::Memory);
        assert!((p.ridge_point - 457.875_457_875).abs() < 1e-6);
        assert!((p.attainable_flop_per_s - p.flops / p.time_s).abs() / p.attainable_flop_per_s < 1e-12);
    }

    #[test]
    fn unsupported_precision_is_an_error_not_a_fallback() {
        let op = Operator::gemv(4096, 4096, Precision::Nvfp4.into()).unwrap();
        assert!(matches!(
            predict(find_hardware("h100_sxm").unwrap(), &op),
            Err(Error::Unsupported { .. })
        ));
    }
    /// A GEMV 1×4096×4096 of every family, in reference mode: time = bytes / (datasheet bandwidth × the
    /// family's small-M fraction) + the family's floor, each written out from the format's exact bytes.
    #[test]
    fn small_kernels_take_their_bytes_over_the_family_bandwidth_plus_the_family_floor() {
        let mn = 4096.0 * 4096.0;
        let cases = [
            // BF16 on an H100 SXM: 2·4096² + 2·4096 + 2·4096 B at 3.35 TB/s × 0.899 (copy kernel), + 5 µs.
            (
                "h100_sxm",
                Precision::Bf16,
                Precision::Bf16,
                2.0 * mn + 16_384.0,
                3.35e12 * 0.899,
                5e-6,
            ),
            // FP8 per-tensor: 4096² + 4096 B in, 2·4096 B FP16 out; FP8 family small-M = the DRAM fraction.
            (
                "h100_sxm",
                Precision::Fp8E4M3,
                Precision::Fp8E4M3,
                mn + 4096.0 + 8192.0,
                3.35e12 * 0.899,
                5e-6,
            ),
            // FP8 block: weights + 32·32 FP32 block scales, activations + 32 FP32 group scales; 7.6 µs floor.
            (
                "h100_sxm",
                Precision::Fp8Block128,
                Precision::Fp8Group128,
                mn + 1024.0 * 4.0 + 4096.0 + 32.0 * 4.0 + 8192.0,
                3.35e12 * 0.899,
                7.6e-6,
            ),
            // AWQ W4A16: 4.15625 bits per weight, FP16 activations; Marlin streams 0.495 of 3.35 TB/s
            // (inclusionAI/humming#2), 6.7 µs floor.
            (
                "h100_sxm",
                Precision::Int4G128Zp,
                Precision::Fp16,
                mn * 4.156_25 / 8.0 + 16_384.0,
                3.35e12 * 0.495,
                6.7e-6,
            ),
            // NVFP4 W4A4 on a B200: 4.5 bits + the FP32 tensor scale on both; 0.74 of 7.7 TB/s and 6.0 µs
            // (SGLang's FlashInfer CuTe-DSL NVFP4 linear streaming from DRAM, AIConfigurator's collection).
            (
                "b200",
                Precision::Nvfp4,
                Precision::Nvfp4,
                mn * 4.5 / 8.0 + 4.0 + 4096.0 * 4.5 / 8.0 + 4.0 + 8192.0,
                7.7e12 * 0.74,
                6.0e-6,
            ),
            // MXFP8 on a B200: 8.25 bits on both; the B200's DRAM fraction (the catalog median, 0.899); 5.1 µs.
            (
                "b200",
                Precision::Mxfp8E4M3,
                Precision::Mxfp8E4M3,
                mn * 8.25 / 8.0 + 4096.0 * 8.25 / 8.0 + 8192.0,
                7.7e12 * 0.899,
                5.1e-6,
            ),
            // INT8 W8A8 on an A100 80 GB: 2039 GB/s × 0.877 and 13.6 µs (TensorRT-LLM's SmoothQuant GEMM
            // streaming from DRAM, AIConfigurator's collection).
            (
                "a100_sxm_80gb",
                Precision::Int8,
                Precision::Int8,
                mn + 4096.0 + 8192.0,
                2039e9 * 0.877,
                13.6e-6,
            ),
        ];
        for (key, weight, activation, bytes, bandwidth, floor) in cases {
            let spec = find_hardware_in(key, Mode::Reference).unwrap();
            let precisions = OperandPrecisions {
                weight,
                activation,
                output: activation.default_output(),
            };
            let op = Operator::gemv(4096, 4096, precisions).unwrap();
            assert_eq!(op.bytes(), bytes, "{key} {weight}");
            let p = predict(spec, &op).unwrap();
            let expected = bytes / bandwidth + floor;
            assert!(
                (p.time_s / expected - 1.0).abs() < 1e-12,
                "{key} {weight}×{activation}: {} vs {expected}",
                p.time_s
            );
        }
    }

    #[test]
    fn large_gemms_run_at_the_family_fraction() {
        let flops = 2.0 * 8192f64.powi(3);
        let time = |key: &str, precision: Precision| {
            let spec = find_hardware_in(key, Mode::Reference).unwrap();
            predict(spec, &Operator::gemm(8192, 8192, 8192, precision.into()).unwrap())
                .unwrap()
                .time_s
        };
        // H100 FP8 per-tensor: the median of four torch._scaled_mm measurements, 0.666 of 1978.9 TFLOP/s.
        let h100 = time("h100_sxm", Precision::Fp8E4M3);
        assert!((h100 - (flops / (1978.9e12 * 0.666) + 5e-6)).abs() < 1e-12);
        // B200 NVFP4: 0.42 of 9 PFLOP/s (vLLM CUTLASS, FlashInfer), no longer FP8's 0.763; the 6.0 µs floor
        // of its small-M fit.
        let b200 = time("b200", Precision::Nvfp4);
        assert!((b200 - (flops / (9000e12 * 0.42) + 6.0e-6)).abs() < 1e-12);
        // BF16 keeps its path's measured MAMF fraction, 0.803 of 989.4 TFLOP/s.
        let bf16 = time("h100_sxm", Precision::Bf16);
        assert!((bf16 - (flops / (989.4e12 * 0.803) + 5e-6)).abs() < 1e-12);
    }

    /// Decode GEMVs in reference mode from the engines' small-M figures (docs/validation/low-precision.md).
    #[test]
    fn decode_gemvs_take_the_engines_small_m_bandwidth_and_floor() {
        let gemv = |key: &str, n: u64, k: u64, precisions: OperandPrecisions| {
            let spec = find_hardware_in(key, Mode::Reference).unwrap();
            let op = Operator::gemv(n, k, precisions).unwrap();
            (op.bytes(), predict(spec, &op).unwrap())
        };
        // Llama-3.1-8B's gate_up projection, NVFP4 W4A4 on a B200 (N = 28672, K = 4096). Bytes: weights
        // 28672·4096 × 4.5 bits / 8 = 66 060 288 + the 4 B tensor scale; x 4096 × 4.5 / 8 = 2 304 + 4; y
        // 28672 × 2 = 57 344: 66 119 944 B. SGLang's FlashInfer CuTe-DSL NVFP4 linear streams 0.74 of
        // 7.7 TB/s = 5.698 TB/s: 11.604 µs, + the 6.0 µs floor = 17.604 µs (0.33 and 4.1 µs gave 30.1 µs).
        let (bytes, p) = gemv("b200", 28_672, 4096, Precision::Nvfp4.into());
        assert_eq!(bytes, 66_119_944.0);
        assert_eq!(p.bound, Bound::Memory);
        let expected = 66_119_944.0 / (7.7e12 * 0.74) + 6.0e-6;
        assert!((p.time_s - expected).abs() < 1e-12, "{} vs {expected}", p.time_s);
        assert!((p.time_s - 17.604e-6).abs() < 1e-9, "{}", p.time_s);
        // A W4A16 GEMV 1×4096×4096 on an A100 80 GB (INT4 g128 weights, FP16 activations). Bytes: 4096² ×
        // 4.125 bits / 8 = 8 650 752, + x and y 4096 × 2 B each: 8 667 136 B. TensorRT-LLM's weight-only
        // GEMV streams 0.839 of 2039 GB/s = 1.7107 TB/s: 5.066 µs, + its 22.3 µs floor = 27.366 µs (the
        // copy fraction 0.91 and the 6.7 µs constant gave 11.37 µs; it measured 20.5 µs per-channel).
        let (bytes, p) = gemv("a100_sxm_80gb", 4096, 4096, OperandPrecisions::W4A16_INT4);
        assert_eq!(bytes, 8_667_136.0);
        let expected = 8_667_136.0 / (2039e9 * 0.839) + 22.3e-6;
        assert!((p.time_s - expected).abs() < 1e-12, "{} vs {expected}", p.time_s);
        assert!((p.time_s - 27.366e-6).abs() < 1e-9, "{}", p.time_s);
    }

    /// A calibration (roofline-base) whose weight-only GEMV bandwidth is what `predict` then takes.
    #[test]
    fn a_weight_only_gemv_calibrates_the_weight_only_ceiling_not_an_int4_peak() {
        let h200 = find_hardware("h200_sxm").unwrap();
        let calibration = Calibration {
            device_name: "NVIDIA H200".into(),
            dram_bandwidth_bytes_per_s: 4.117e12,
            kernel_overhead_s: 6.5e-6,
            vector_kernel_overhead_s: Some(4.3e-6),
            peaks: vec![(ComputePath::Fp16, 783e12)],
            weight_only: vec![(ComputePath::Fp16, 3.9e12)],
            source: "test".into(),
            quality: None,
        };
        let cal = h200.calibrated(&calibration).unwrap();
        assert!(cal.peak(ComputePath::Int4).is_none(), "Hopper has no INT4 path");
        let ceiling = cal
            .gemm_family(GemmFamily::WeightOnly, ComputePath::Fp16)
            .unwrap();
        assert_eq!(
            (
                ceiling.bandwidth_bytes_per_s,
                ceiling.kernel_overhead_s,
                ceiling.dense_flop_per_s
            ),
            (3.9e12, 6.5e-6, 783e12)
        );
        assert!(
            cal.notes.contains("Weight-only GEMMs on FP16 stream 3900 GB/s"),
            "{}",
            cal.notes
        );
        // The W4A16 GEMV 1×4096×4096 (8 667 136 B) is predicted at 8 667 136 / 3.9e12 + 6.5 µs = 8.7224 µs.
        let op = Operator::matmul(1, 4096, 4096, OperandPrecisions::W4A16_INT4).unwrap();
        let t = predict(&cal, &op).unwrap().time_s;
        assert!((t - (8_667_136.0 / 3.9e12 + 6.5e-6)).abs() < 1e-15, "{t}");
        // An INT4 compute peak on Hopper stays an error naming the architecture.
        let int4_peak = Calibration {
            peaks: vec![(ComputePath::Int4, 5e12)],
            ..calibration.clone()
        };
        assert!(matches!(
            h200.calibrated(&int4_peak),
            Err(Error::Unsupported { .. })
        ));
        let no_bandwidth = Calibration {
            weight_only: vec![(ComputePath::Fp16, f64::NAN)],
            ..calibration
        };
        assert!(matches!(
            h200.calibrated(&no_bandwidth),
            Err(Error::InvalidInput(_))
        ));
    }
}
