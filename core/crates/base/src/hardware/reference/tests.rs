//! Tests of the reference rules: catalog devices below their datasheets, the nearest measurement, family fractions.
use super::*;
use crate::hardware::{Mode, Provenance, catalog, find_hardware, find_hardware_in};
use crate::precision::GemmFamily;

#[test]
fn every_catalog_device_has_a_reference_spec_below_its_datasheet() {
    for h in catalog() {
        let r = find_hardware_in(&h.key, Mode::Reference).unwrap();
        assert_eq!(Mode::of(r), Mode::Reference);
        assert!(
            r.dram_bandwidth_bytes_per_s < h.dram_bandwidth_bytes_per_s,
            "{}",
            h.key
        );
        assert_eq!(r.peaks.len(), h.peaks.len(), "{}", h.key);
        for (rp, dp) in r.peaks.iter().zip(&h.peaks) {
            assert!(rp.dense_flop_per_s < dp.dense_flop_per_s, "{} {}", h.key, dp.path);
            assert_eq!(rp.kernel_overhead_s, Some(MATRIX_KERNEL_FLOOR_S));
        }
        assert_eq!(r.kernel_overhead_s, VECTOR_KERNEL_FLOOR_S);
        // Reference of a reference would count the losses twice.
        assert!(r.reference().is_err());
    }
}

#[test]
fn reference_rules_pick_the_nearest_measurement() {
    let basis = |key: &str, path| {
        find_hardware(key)
            .unwrap()
            .reference_ceilings()
            .gemm_fraction(path)
            .unwrap()
            .clone()
    };
    // H200 publishes FP8 only (73.4 %); its BF16 is H100 SXM's measured 80.3 % (same architecture).
    let h200_bf16 = basis("h200_sxm", ComputePath::Bf16);
    assert_eq!(h200_bf16.value, 0.803);
    assert!(h200_bf16.basis.contains("h100_sxm"), "{}", h200_bf16.basis);
    assert_eq!(basis("h200_sxm", ComputePath::Fp8).value, 0.734);
    assert!(basis("h200_sxm", ComputePath::Fp8).basis.starts_with("measured"));
    // GB10: NVFP4 measured 356 of 500 TFLOP/s; BF16 from its own FP8 (188 of 250).
    assert_eq!(basis("gb10", ComputePath::Fp4).value, 0.71);
    assert_eq!(basis("gb10", ComputePath::Bf16).value, 0.75);
    // B200 has no FP4 measurement: its FP8 76.3 %.
    assert_eq!(basis("b200", ComputePath::Fp4).value, 0.763);
    // TPU v5e has nothing: the median of the nine measured BF16 fractions
    // (0.511 0.600 0.622 0.677 0.729 0.776 0.786 0.803 0.869) is 0.729.
    let tpu = basis("tpu_v5e", ComputePath::Bf16);
    assert_eq!(tpu.value, 0.729);
    assert!(tpu.basis.starts_with("derived: median"));
    // DRAM: the median of the seven measured fractions (0.715 0.738 0.81 0.899 0.91 0.97 0.977) is 0.899.
    let b200 = find_hardware("b200").unwrap().reference_ceilings();
    assert_eq!(b200.dram_fraction.value, 0.899);
    // A custom device gets the same rules for its architecture.
    let mut custom = find_hardware("h100_sxm").unwrap().clone();
    custom.provenance = Provenance::Custom;
    custom.reference = None;
    assert_eq!(
        custom
            .reference_ceilings()
            .gemm_fraction(ComputePath::Bf16)
            .unwrap()
            .value,
        0.803
    );
}

#[test]
fn family_fractions_follow_the_rules() {
    // B200 NVFP4: 0.42 of 9 PFLOP/s (vLLM CUTLASS, FlashInfer), no longer FP8's 0.763.
    let b200 = find_hardware("b200").unwrap().reference_ceilings();
    let measured = b200.family(GemmFamily::Nvfp4, ComputePath::Fp4).unwrap();
    assert_eq!(measured.gemm_fraction.value, 0.42);
    assert!(measured.gemm_fraction.basis.starts_with("measured"));
    // B300 measures no FP4: B200's NVFP4 × B300's FP8 fraction 0.745 / B200's 0.763 (rule 4).
    let b300 = find_hardware("b300").unwrap().reference_ceilings();
    let nvfp4 = b300.family(GemmFamily::Nvfp4, ComputePath::Fp4).unwrap();
    assert!((nvfp4.gemm_fraction.value - 0.42 * 0.745 / 0.763).abs() < 1e-12);
    assert!(
        nvfp4.gemm_fraction.basis.contains("b200"),
        "{}",
        nvfp4.gemm_fraction.basis
    );
    // GB200 FP8 per-tensor: B200's 0.565 × 0.723 / 0.763 (research: 0.54).
    let gb200 = find_hardware("gb200").unwrap().reference_ceilings();
    let fp8 = gb200.family(GemmFamily::Fp8Tensor, ComputePath::Fp8).unwrap();
    assert!((fp8.gemm_fraction.value - 0.565 * 0.723 / 0.763).abs() < 1e-12);
    // Weight-only at large M: the activations' path × 0.75 (H100 BF16: 0.803 × 0.75).
    let h100 = find_hardware("h100_sxm").unwrap().reference_ceilings();
    let w4a16 = h100.family(GemmFamily::WeightOnly, ComputePath::Bf16).unwrap();
    assert!((w4a16.gemm_fraction.value - 0.803 * 0.75).abs() < 1e-12);
    // INT8 on an H100: nothing measured, its FP8 per-tensor figure; on an A100 (no FP8), the INT8 path's.
    assert_eq!(
        h100.family(GemmFamily::Int8, ComputePath::Int8)
            .unwrap()
            .gemm_fraction
            .value,
        0.666
    );
    let a100 = find_hardware("a100_sxm_80gb").unwrap().reference_ceilings();
    assert_eq!(
        a100.family(GemmFamily::Int8, ComputePath::Int8)
            .unwrap()
            .gemm_fraction
            .value,
        0.869
    );
    // Hopper runs no FP4 or MX family; CDNA4 runs MXFP4 but not NVFP4.
    assert!(h100.family(GemmFamily::Nvfp4, ComputePath::Fp4).is_none());
    let mi355 = find_hardware("mi355x").unwrap().reference_ceilings();
    assert!(mi355.family(GemmFamily::Mxfp4, ComputePath::Fp4).is_some());
    assert!(mi355.family(GemmFamily::Nvfp4, ComputePath::Fp4).is_none());
}

#[test]
fn small_m_floors_come_from_the_fit_of_the_small_m_measurement() {
    use GemmFamily::{Int8, Mxfp4, Nvfp4, WeightOnly};
    // (device, family, path, DRAM fraction where its own, floor, what the floor's basis starts with or names).
    let cases = [
        // B200 NVFP4: SGLang's FlashInfer CuTe-DSL linear, 7.89 µs intercept − the 1.9 µs block quantization.
        ("b200", Nvfp4, ComputePath::Fp4, Some(0.74), 6.0e-6, "measured"),
        // MXFP4 on the B200 and NVFP4 on the B300 take that measurement, and say so.
        ("b200", Mxfp4, ComputePath::Fp4, None, 6.0e-6, "derived"),
        ("b300", Nvfp4, ComputePath::Fp4, None, 6.0e-6, "derived: b200"),
        // A100 W4A16 and W8A8 (TensorRT-LLM plugins); the RTX 4090 takes the L40S's (same architecture).
        (
            "a100_sxm_80gb",
            WeightOnly,
            ComputePath::Fp16,
            Some(0.839),
            22.3e-6,
            "measured",
        ),
        (
            "a100_sxm_80gb",
            Int8,
            ComputePath::Int8,
            Some(0.877),
            13.6e-6,
            "measured",
        ),
        (
            "rtx_4090",
            WeightOnly,
            ComputePath::Fp16,
            None,
            6.0e-6,
            "derived: l40s",
        ),
        // A measurement without a fitted floor (Marlin on the H100) keeps the family's constant.
        (
            "h100_sxm",
            WeightOnly,
            ComputePath::Fp16,
            None,
            WEIGHT_ONLY_GEMM_FLOOR_S,
            "derived",
        ),
    ];
    for (key, family, path, dram, floor, basis) in cases {
        let hardware = find_hardware(key).unwrap();
        let ceilings = hardware.reference_ceilings();
        let f = ceilings.family(family, path).unwrap();
        if let Some(dram) = dram {
            assert_eq!(f.dram_fraction.value, dram, "{key} {family}");
        }
        assert_eq!(f.kernel_floor.value, floor, "{key} {family}");
        assert!(
            f.kernel_floor.basis.starts_with(basis),
            "{key} {family}: {}",
            f.kernel_floor.basis
        );
    }
}
