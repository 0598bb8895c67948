//! Tests of the attention kernels' planning that need no GPU, and their NVRTC compilation where NVRTC is
//! installed (it needs no GPU).

use super::*;

/// An H200 / H100: 132 SMs, 227 KiB of opt-in shared memory per block (232,448 bytes).
const SMS: u64 = 132;
const HOPPER_SMEM: u64 = 232_448;

fn shape(
    batch: u64,
    heads: u64,
    kv_heads: u64,
    query_len: u64,
    kv_len: u64,
    head_dim: u64,
) -> AttentionShape {
    AttentionShape {
        batch,
        query_len,
        kv_len,
        heads,
        kv_heads,
        head_dim,
        causal: true,
        fused: true,
        shared_kv: false,
        window: None,
    }
}

fn bf16() -> Formats {
    Formats::of(Precision::Bf16, Precision::Bf16, Precision::Bf16).unwrap()
}

#[test]
fn formats_are_a_16_bit_q_with_its_own_or_an_fp8_cache() {
    use Precision::{Bf16, Fp8E4M3, Fp16, Fp32};
    assert!(Formats::of(Bf16, Fp8E4M3, Bf16).is_some());
    assert!(Formats::of(Fp8E4M3, Fp8E4M3, Fp16).is_some());
    assert!(Formats::of(Fp16, Fp16, Fp16).is_some());
    for (q, kv, out) in [
        (Fp16, Bf16, Fp16),
        (Fp8E4M3, Bf16, Bf16),
        (Bf16, Bf16, Fp8E4M3),
        (Fp32, Fp32, Fp32),
    ] {
        assert!(Formats::of(q, kv, out).is_none(), "{q} {kv} {out}");
    }
}

#[test]
fn decode_packs_the_group_into_one_row_warp_and_splits_keys() {
    // Llama-3.1-8B decode, batch 32, 4096 cached tokens: 4 query heads per KV head fill one 16-row warp; the
    // other 3 warps split each 64-key tile. 256 (sequence, KV head) blocks are under 3 · 132 = 396, so the keys
    // split in ceil(396 / 256) = 2. Shared memory: Q 16 × 136 + 2 stages × (K + V) 64 × 136, 2 bytes each.
    let p = plan(&shape(32, 32, 8, 1, 4096, 128), bf16(), SMS, HOPPER_SMEM).unwrap();
    assert_eq!((p.wr, p.wk, p.mt, p.block_n, p.dv_slice), (1, 4, 1, 64, 128));
    assert_eq!((p.row_tiles, p.splits), (1, 2));
    assert_eq!(p.smem_bytes, 2 * (16 * 136 + 2 * 2 * 64 * 136));
    assert_eq!(p.threads(), 128);
    // Batch 1: 8 blocks, so the keys split until 396 blocks or 4 tiles of 64 keys each: min(50, 16).
    assert_eq!(
        plan(&shape(1, 32, 8, 1, 4096, 128), bf16(), SMS, HOPPER_SMEM)
            .unwrap()
            .splits,
        16
    );
}

#[test]
fn prefill_uses_four_row_warps_and_no_split() {
    // 2048 queries × 4 heads = 8192 rows per KV head: 128 tiles of 64 rows, × 8 KV heads ≥ 396 blocks.
    let p = plan(&shape(1, 32, 8, 2048, 2048, 128), bf16(), SMS, HOPPER_SMEM).unwrap();
    assert_eq!((p.wr, p.wk, p.block_n, p.row_tiles, p.splits), (4, 1, 64, 128, 1));
    assert_eq!(p.smem_bytes, 2 * (64 * 136 + 2 * 2 * 64 * 136));
}

#[test]
fn mla_runs_as_mqa_over_the_latent_in_output_slices() {
    // DeepSeek-V3 decode, batch 8, 1024 tokens: 128 heads over one 576-wide latent (K = V); 3 slices of 192
    // output columns, 2 row tiles of 64 heads; 48 blocks, so min(ceil(396 / 48), 1024 / (4 · 32)) = 8 splits.
    let mla = AttentionShape {
        shared_kv: true,
        ..shape(8, 128, 1, 1, 1024, 576)
    };
    let p = plan(&mla, bf16(), SMS, HOPPER_SMEM).unwrap();
    assert_eq!(
        (p.dv_slice, p.block_n, p.wr, p.row_tiles, p.splits),
        (192, 32, 4, 2, 8)
    );
    // Q 64 × 584 and two K stages of 32 × 584 (V is K), 2 bytes each.
    assert_eq!(p.smem_bytes, 2 * (64 * 584 + 2 * 32 * 584));
}

#[test]
fn windows_bound_the_split_and_small_shared_memory_shrinks_the_tile() {
    // Gemma 3 decode with a 1024-token window over 8192 tokens: only the window's 1024 keys are split, into at
    // most 1024 / 256 = 4 blocks.
    let swa = AttentionShape {
        window: Some(1024),
        ..shape(4, 16, 8, 1, 8192, 256)
    };
    let p = plan(&swa, bf16(), SMS, HOPPER_SMEM).unwrap();
    assert_eq!((p.wk, p.block_n, p.splits), (4, 64, 4));
    assert_eq!(p.smem_bytes, 2 * (16 * 264 + 2 * 2 * 64 * 264));
    // Ada's 99 KiB (101,376 bytes) do not hold those 143,616 bytes: 2 key warps of 32-key tiles instead.
    let ada = plan(&swa, bf16(), 142, 101_376).unwrap();
    assert_eq!((ada.wk, ada.block_n), (2, 32));
    assert!(ada.smem_bytes + 1024 <= 101_376);
}

#[test]
fn head_dims_the_kernel_cannot_run_are_unsupported() {
    for (d, shared) in [(72, false), (320, false), (640, true), (0, false)] {
        let s = AttentionShape {
            shared_kv: shared,
            ..shape(1, 8, 8, 1, 128, d)
        };
        let err = plan(&s, bf16(), SMS, HOPPER_SMEM).unwrap_err();
        assert!(matches!(err, BackendError::Unsupported(_)), "{d}: {err}");
    }
}

#[test]
fn fp8_caches_are_staged_and_converted() {
    // An FP8 cache: one converted K/V tile plus two stages of bytes (64 × 128 each for K and V).
    let f = Formats::of(Precision::Fp8E4M3, Precision::Fp8E4M3, Precision::Fp16).unwrap();
    let p = plan(&shape(32, 32, 8, 1, 4096, 128), f, SMS, HOPPER_SMEM).unwrap();
    assert_eq!(p.smem_bytes, 2 * (16 * 136 + 2 * 64 * 136) + 2 * 2 * 64 * 128);
    assert!(
        p.describe().contains("FP8 E4M3 converted in shared memory"),
        "{}",
        p.describe()
    );
    assert_eq!(f.tolerance(), 4e-3);
}

#[test]
fn attention_tiles_fit_the_shared_memory_budget() {
    for d in 1..=ATTENTION_MAX_HEAD_DIM {
        let tile = attention_tile(d);
        assert!(tile >= 1);
        assert!(d + 2 * tile * d + tile <= ATTENTION_SHARED_FLOATS, "d = {d}");
    }
    assert_eq!((attention_tile(64), attention_tile(128)), (63, 31));
}

/// Every configuration `plan` picks for the presets' head dims compiles for sm_90, where NVRTC is installed.
#[test]
fn planned_attention_kernels_compile_with_nvrtc() {
    if !super::super::nvrtc::nvrtc_for_tests() {
        return;
    }
    let fp8 = Formats::of(Precision::Fp8E4M3, Precision::Fp8E4M3, Precision::Fp16).unwrap();
    let mla = AttentionShape {
        shared_kv: true,
        ..shape(8, 128, 1, 1, 1024, 576)
    };
    for (s, f) in [
        (shape(32, 32, 8, 1, 4096, 128), bf16()),
        (shape(1, 32, 8, 2048, 2048, 128), fp8),
        (shape(1, 32, 4, 1, 256, 64), bf16()),
        (shape(4, 16, 8, 1, 8192, 256), bf16()),
        (mla, bf16()),
    ] {
        let p = plan(&s, f, SMS, HOPPER_SMEM).unwrap();
        let mut options = vec![
            "-std=c++14".to_owned(),
            "--gpu-architecture=compute_90".to_owned(),
        ];
        options.extend(p.defines());
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(
            ATTENTION_SRC,
            cudarc::nvrtc::CompileOptions {
                options,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{p:?}: {e:?}"))
        .to_src();
        assert!(ptx.contains(".entry attention_mma("), "{p:?}");
        assert!(ptx.contains("mma.sync.aligned.m16n8k16"), "{p:?}");
    }
}
