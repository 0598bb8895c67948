//! Counter-based seeded inputs: value `i` of stream `seed` is a pure function of `(seed, i)` ([`normal_at`]),
//! so a GPU kernel (the CUDA backend's `inputs.cu`) fills a buffer in milliseconds and the host recomputes any
//! element bit for bit without generating the others (the reference of a sampled output needs only its row).
//!
//! Bits: splitmix64's output function ([`mix64`]) over the Weyl sequence `key + c·γ`. Value: Irwin–Hall of
//! four uniforms with 24-bit fractions, `(u₀+u₁+u₂+u₃ − 2)·√3`, summed exactly in integers and scaled by one
//! IEEE f32 multiply (no transcendental function, nothing to contract into an FMA), so host and device agree.
//! Distribution: mean 0, variance 1 (each uniform's is 1/12), bounded by ±2√3 ≈ ±3.4641, excess kurtosis
//! −0.3; never constant or zero-filled (benchmarking.md §1.2-4).

use rayon::prelude::*;

/// splitmix64's Weyl increment γ = 2⁶⁴/φ, odd.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The bits of [`NORMAL_SCALE`], as `inputs.cu` spells the constant (a test keeps the two equal).
pub const NORMAL_SCALE_BITS: u32 = 0x335d_b3d7;

/// √3 / 2²⁵: from the centred integer sum `Σ(2kⱼ − (2²⁴ − 1))` (`kⱼ` the 24-bit draws) to the value.
const NORMAL_SCALE: f32 = f32::from_bits(NORMAL_SCALE_BITS);

/// splitmix64's output function (Steele, Lea and Flood, OOPSLA 2014; `java.util.SplittableRandom`): a
/// bijection of `u64` whose outputs over `key + c·γ` pass BigCrush.
#[must_use]
const fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The key of stream `seed`: splitmix64's first output from state `seed` (the generator kernel's argument).
#[must_use]
pub const fn stream_key(seed: u64) -> u64 {
    mix64(seed.wrapping_add(GAMMA))
}

/// Value `i` of the seeded stream `seed`: mean 0, variance 1, |v| ≤ 2√3 (see the module doc). Counters
/// `2i + 1` and `2i + 2` of the stream give its 96 bits (four 24-bit uniforms).
#[must_use]
pub fn normal_at(seed: u64, i: u64) -> f32 {
    let key = stream_key(seed);
    let counter = i.wrapping_mul(2);
    let h1 = mix64(key.wrapping_add(counter.wrapping_add(1).wrapping_mul(GAMMA)));
    let h2 = mix64(key.wrapping_add(counter.wrapping_add(2).wrapping_mul(GAMMA)));
    const MASK: u64 = (1 << 24) - 1;
    // kⱼ + ½ over 2²⁴ is a uniform on (0, 1) of mean exactly ½; 2kⱼ − (2²⁴ − 1) is it centred, over 2²⁵.
    let sum = (h1 >> 40) + (h1 & MASK) + (h2 >> 40) + (h2 & MASK);
    let centred = (2 * sum) as i64 - 4 * MASK as i64;
    // |centred| < 2²⁶: the conversion rounds to nearest even, the multiply once more; both are IEEE.
    centred as f32 * NORMAL_SCALE
}

/// Values `0..n` of stream `seed` ([`normal_at`]), computed in parallel: a host copy where a whole buffer is
/// needed (formats the device generator does not write).
#[must_use]
pub fn normal_values(seed: u64, n: usize) -> Vec<f32> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| normal_at(seed, i))
        .collect()
}

#[cfg(test)]
mod tests;
