//! Tests of the seeded inputs: the host view against the host encoder (no GPU), the kernel's source, and,
//! with `ROOFLINE_GPU_TESTS=1` on a GPU, the device buffers against the host view bit for bit and the time
//! of a 2 GiB fill.

use std::time::Instant;

use super::*;
use crate::backend::cuda::buffers::HostBuf;
use crate::protocol::NORMAL_SCALE_BITS;

/// Every format `device_normal` writes, and E2M1 (encoded on the host).
const FORMATS: [Elem; 7] = [
    Elem::F32,
    Elem::F16,
    Elem::Bf16,
    Elem::E4M3,
    Elem::E5M2,
    Elem::I8,
    Elem::E2M1,
];

/// Values at the edges of every format: ties, saturation, subnormals, infinities and NaN.
fn edge_values() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-9,
        448.0,
        464.0,
        480.0,
        57_344.0,
        61_440.0,
        1e6,
        // I8 ties at ±0.5/32 and ±126.5/32; E2M1 ties at 0.25 and 5.
        0.5 / 32.0,
        126.5 / 32.0,
        0.25,
        5.0,
    ];
    // One E4M3/E5M2/BF16 tie per binade, and the values either side of it.
    for e in -20..20 {
        let tie = (1.0 + 1.0 / 16.0) * 2f32.powi(e);
        v.extend([tie, tie.next_up(), tie.next_down()]);
    }
    let negated: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

#[test]
fn stored_values_are_what_the_host_encoder_stores() {
    for elem in FORMATS {
        let mut values = normal_values(5, 100_001);
        let normals = values.len();
        values.extend(edge_values());
        let encoded = elem.encode(&values);
        let input = SeededInput { elem, seed: 5 };
        for (i, &v) in values.iter().enumerate() {
            let stored = elem.stored(v);
            assert_eq!(
                stored.to_bits(),
                encoded.get(i).to_bits(),
                "{elem:?}: {v} is stored as {stored}, encoded as {}",
                encoded.get(i)
            );
            if i < normals {
                assert_eq!(input.get(i).to_bits(), stored.to_bits(), "{elem:?} element {i}");
            }
        }
    }
}

#[test]
fn int4_weights_round_half_away_from_zero_within_minus_8_and_7() {
    let mut seen = [0usize; 16];
    for i in 0..100_000 {
        let q = int4_at(3, i);
        let v = normal_at(3, i as u64) * 3.0;
        assert!((f32::from(q) - v.clamp(-8.0, 7.0)).abs() <= 0.5, "{v} → {q}");
        seen[(q + 8) as usize] += 1;
    }
    // |v · 3| ≤ 6√3 ≈ 10.4: every level is used, the clamped ends most rarely.
    assert!(seen.iter().all(|&c| c > 0), "{seen:?}");
}

#[test]
fn the_generator_kernel_spells_the_host_constants_and_compiles() {
    let src = super::super::nvrtc::KERNELS_SRC;
    for constant in [
        format!("{NORMAL_SCALE_BITS:#010x}u"),
        "0x9E3779B97F4A7C15ull".into(),
        "0xBF58476D1CE4E5B9ull".into(),
        "0x94D049BB133111EBull".into(),
    ] {
        assert!(src.contains(&constant), "inputs.cu lacks {constant}");
    }
    if !super::super::nvrtc::nvrtc_for_tests() {
        return;
    }
    let ptx = super::super::nvrtc::compile(src).unwrap().to_src();
    assert!(
        ptx.contains(".entry seeded_fill("),
        "seeded_fill missing from the PTX"
    );
}

/// The CUDA backend when `ROOFLINE_GPU_TESTS=1`.
fn gpu() -> Option<CudaBackend> {
    if std::env::var("ROOFLINE_GPU_TESTS").as_deref() != Ok("1") {
        eprintln!("skipped: set ROOFLINE_GPU_TESTS=1 to run the GPU tests");
        return None;
    }
    Some(CudaBackend::open().expect("ROOFLINE_GPU_TESTS=1 but no CUDA device"))
}

/// Asserts that element `i` of `device` is `input`'s element `i`, for every `i` of `indices`.
fn assert_same(device: &HostBuf, input: SeededInput, indices: impl Iterator<Item = usize>) {
    let mut checked = 0;
    for i in indices {
        let (got, want) = (device.get(i), input.get(i));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{:?} seed {} element {i}: device {got}, host {want} (normal_at {})",
            input.elem,
            input.seed,
            normal_at(input.seed, i as u64)
        );
        checked += 1;
    }
    eprintln!("{:?}: {checked} elements equal bit for bit", input.elem);
}

#[test]
fn device_inputs_equal_the_host_view_bit_for_bit() {
    let Some(backend) = gpu() else { return };
    // An odd length: the grid-stride loop's tail, and more items than one launch has threads.
    let n = 1_000_003;
    for elem in FORMATS {
        for seed in [0, 0xC0DA, u64::MAX] {
            let (input, buf) = backend.seeded_input(elem, seed, n).unwrap();
            assert_same(&buf.download(&backend.stream).unwrap(), input, 0..n);
        }
    }
    let words = backend.device_int4(9, 8 * 100_003).unwrap();
    let words = backend.stream.clone_dtoh(&words).unwrap();
    for (i, q) in (0..8 * words.len()).map(|i| (i, (words[i / 8] >> (4 * (i % 8))) & 0xF)) {
        assert_eq!(q as i32 - 8, i32::from(int4_at(9, i)), "INT4 weight {i}");
    }
}

#[test]
fn two_gib_of_bf16_inputs_are_generated_in_well_under_a_second() {
    let Some(backend) = gpu() else { return };
    // The first call compiles the kernels: not timed.
    backend.device_normal(Elem::Bf16, 1, 1024).unwrap();
    let n = 1usize << 30;
    let start = Instant::now();
    let buf = backend.device_normal(Elem::Bf16, 77, n).unwrap();
    backend.stream.synchronize().unwrap();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "2 GiB BF16 seeded input on {}: {:.1} ms (allocation, zeroing and fill; {:.0} GB/s)",
        backend.name,
        seconds * 1e3,
        2.0 * n as f64 / seconds / 1e9
    );
    assert!(seconds < 1.0, "2 GiB BF16 took {seconds:.3} s");
    let host = buf.download(&backend.stream).unwrap();
    let input = SeededInput {
        elem: Elem::Bf16,
        seed: 77,
    };
    assert_same(&host, input, (0..n).step_by(1009).chain(n - 1000..n));
}
