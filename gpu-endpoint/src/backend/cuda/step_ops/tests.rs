//! Tests of the step kernels that need no GPU: NVRTC compilation, formats, tiles and buffer sizes.

use super::*;

/// Every kernel this module launches is in the NVRTC output, where NVRTC is installed (it needs no GPU).
#[test]
fn every_step_kernel_compiles_with_nvrtc() {
    if !super::super::nvrtc::nvrtc_for_tests() {
        return;
    }
    let ptx = super::super::nvrtc::compile(super::super::launch::STEP_KERNELS_SRC)
        .unwrap()
        .to_src();
    let stems = [
        RowKind::RmsNorm.name(),
        RowKind::LayerNorm.name(),
        RowKind::Softmax.name(),
        RowKind::SiluMul.name(),
        RowKind::Gelu.name(),
        RowKind::ResidualAdd.name(),
        RowKind::Rope.name(),
        "gather",
        "copy",
        "kv_read",
        "attention",
    ];
    for precision in [Precision::Fp32, Precision::Bf16, Precision::Fp16] {
        let format = Format::of(precision).unwrap();
        for stem in stems {
            let name = format.kernel(stem);
            assert!(ptx.contains(&format!(".entry {name}(")), "{name} missing");
        }
    }
}

#[test]
fn only_fp32_bf16_and_fp16_have_step_kernels() {
    assert_eq!(Format::of(Precision::Bf16).unwrap().kernel("rope"), "rope_bf16");
    for precision in [
        Precision::Fp8E4M3,
        Precision::Int8,
        Precision::Nvfp4,
        Precision::Tf32,
    ] {
        assert!(Format::of(precision).is_none(), "{precision}");
    }
    let bf16 = Format::of(Precision::Bf16).unwrap();
    // 2048 BF16 elements are 256 packs of 8; an odd width falls back to elements.
    assert_eq!((bf16.chunks(2048), bf16.chunks(2047)), (256, 2047));
}

#[test]
fn buffers_are_sized_at_the_operand_format() {
    let bf16 = Operator::residual_add(2, 1024, Precision::Bf16).unwrap();
    let fp32 = Operator::residual_add(2, 1024, Precision::Fp32).unwrap();
    // Two inputs and the output of 2 × 1024, plus two rows of slack for γ and β.
    assert_eq!(required_bytes(&bf16), (3 * 2048 + 2 * 1024) * 2);
    assert_eq!(required_bytes(&fp32), 2 * required_bytes(&bf16));
}
