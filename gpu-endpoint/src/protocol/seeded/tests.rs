//! Tests of the counter-based generator: known values, determinism, moments, bounds and independence.

use super::*;

/// 10⁶ values of stream `seed`, as f64.
fn stream(seed: u64) -> Vec<f64> {
    (0..1_000_000u64).map(|i| f64::from(normal_at(seed, i))).collect()
}

/// Σ xᵢ·yᵢ / n over two zero-mean, unit-variance samples: their correlation.
fn correlation(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>() / x.len() as f64
}

#[test]
fn values_match_an_independent_implementation() {
    // Bits from a Python transcription of the module doc (integers exact, f32 rounding through
    // struct.pack): key = mix64(seed + γ), counters 2i+1 and 2i+2, Σ of four 24-bit draws, centred, × scale.
    let cases = [
        (0, 0, 0xbf01_5027),
        (0, 1, 0x3e3c_12f4),
        (42, 1_000_000, 0xbee2_b264),
        (0xC0DA, 123_456_789_012, 0xbb8e_78a9),
    ];
    for (seed, i, bits) in cases {
        let v = normal_at(seed, i);
        assert_eq!(v.to_bits(), bits, "normal_at({seed}, {i}) = {v}");
    }
    // splitmix64's first output from state 0 (mix64(γ)), as published with the algorithm.
    assert_eq!(mix64(GAMMA), 0xE220_A839_7B1D_CDAF);
}

#[test]
fn the_scale_is_sqrt3_over_2_to_the_25() {
    assert_eq!(NORMAL_SCALE, 3f32.sqrt() / (1u64 << 25) as f32);
}

#[test]
fn values_are_deterministic_and_differ_between_seeds() {
    let a: Vec<f32> = (0..1000).map(|i| normal_at(7, i)).collect();
    let b: Vec<f32> = (0..1000).map(|i| normal_at(7, i)).collect();
    let c: Vec<f32> = (0..1000).map(|i| normal_at(8, i)).collect();
    assert_eq!(a, b);
    assert_eq!(a.iter().zip(&c).filter(|(x, y)| x == y).count(), 0);
    assert_eq!(normal_values(7, 1000), a);
}

#[test]
fn a_million_values_have_mean_0_variance_1_and_stay_within_2_sqrt3() {
    let x = stream(42);
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    // Standard error of the mean: σ/√n = 1e-3; 5 of them.
    assert!(mean.abs() < 5e-3, "mean {mean}");
    // Of the variance: √((μ₄ − σ⁴)/n) with μ₄ = 3 − 1.2/4 = 2.7 (Irwin–Hall of 4): 1.3e-3; 5 of them.
    assert!((var - 1.0).abs() < 6.5e-3, "variance {var}");
    // The largest centred sum, 4(2²⁴ − 1), times √3/2²⁵ is below 2·f32(√3), which f32 holds exactly.
    let bound = f64::from(2.0 * 3f32.sqrt());
    let max = x.iter().fold(0f64, |m, v| m.max(v.abs()));
    assert!(max <= bound, "max |v| {max} > {bound}");
    // The tails are reached: |v| > 3 is a sum of four uniforms below 2 − √3 (or above 2 + √3), each with
    // probability (2 − √3)⁴/4! = 2.15e-4: 429 of 10⁶ expected, standard deviation √429 ≈ 21; 5 of them.
    let beyond_3 = x.iter().filter(|v| v.abs() > 3.0).count();
    assert!((325..535).contains(&beyond_3), "{beyond_3} values beyond ±3");
}

#[test]
fn neighbouring_values_and_streams_are_uncorrelated() {
    let x = stream(42);
    let y = stream(43);
    // The correlation of independent unit-variance samples has standard error 1/√n = 1e-3; 5 of them.
    for lag in [1, 2, 7] {
        let c = correlation(&x[..x.len() - lag], &x[lag..]);
        assert!(c.abs() < 5e-3, "lag-{lag} correlation {c}");
    }
    let c = correlation(&x, &y);
    assert!(c.abs() < 5e-3, "seeds 42 and 43 correlate: {c}");
}
