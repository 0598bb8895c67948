//! What the CPU and CUDA backends share to check the non-GEMM operators of a model step: seeded inputs, the
//! rows sampled for the check, and the `f64` references (row-wise operators, attention with GQA, causal
//! masking and sliding windows, the KV-cache read's total).
//!
//! The references read the values the kernel read ([`Stored`]): the CPU's FP32 inputs, or the CUDA backend's
//! inputs as stored in their element format.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roofline_core::AttentionShape;
use roofline_core::ops::{KernelShape, RowKind};

use super::BackendError;
use crate::protocol::random_normal;

/// Normalization epsilon.
pub(super) const EPS: f64 = 1e-5;
/// Smallest embedding table a gather picks its rows from (only the gathered rows are read, so the table size
/// does not change the bytes moved).
pub(super) const MIN_TABLE_ROWS: usize = 4096;
/// Rows checked against the reference besides the first and the last.
const CHECKED_ROWS: usize = 16;
/// Error allowed on the KV-cache read's total, relative to Σ|x| (FP32 accumulation in every format).
const SUM_TOLERANCE: f64 = 1e-4;

/// Elements as a kernel read them, as `f64`.
pub(super) trait Stored {
    /// Element `i`.
    fn at(&self, i: usize) -> f64;

    /// `len` elements from `start`.
    fn values(&self, start: usize, len: usize) -> Vec<f64> {
        (start..start + len).map(|i| self.at(i)).collect()
    }
}

impl Stored for Vec<f32> {
    fn at(&self, i: usize) -> f64 {
        f64::from(self[i])
    }
}

/// A seed from the kernel's description, so the same operator always gets the same inputs.
pub(super) fn seed_of(kernel: &KernelShape) -> u64 {
    kernel.label().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Rows to check: the first, the last and [`CHECKED_ROWS`] random ones.
pub(super) fn checked_rows(rows: usize, seed: u64) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0c0f_fee0);
    let mut picked = vec![0, rows - 1];
    picked.extend((0..CHECKED_ROWS.min(rows)).map(|_| rng.random_range(0..rows)));
    picked
}

/// Compares one output row with its reference; the allowed error is `tolerance` times the row's largest
/// reference magnitude (at least 1). A tolerance of 0 asks for exact copies.
pub(super) fn check_close(
    what: &str,
    row: usize,
    got: &[f64],
    reference: &[f64],
    tolerance: f64,
) -> Result<(), BackendError> {
    let scale = reference.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (col, (&g, &r)) in got.iter().zip(reference).enumerate() {
        let err = (g - r).abs();
        if !g.is_finite() || err > tolerance * scale {
            return Err(BackendError::Verification(format!(
                "{what}: row {row} column {col} = {g}, reference {r} (error {err:.3e})"
            )));
        }
    }
    Ok(())
}

/// Checks a KV-cache read's `total` against the `f64` sum of the `n` stored elements of `cache`.
pub(super) fn check_sum(total: f64, cache: &impl Stored, n: usize) -> Result<(), BackendError> {
    let stored = cache.values(0, n);
    let reference: f64 = stored.iter().sum();
    let magnitude: f64 = stored.iter().map(|v| v.abs()).sum();
    if (total - reference).abs() > SUM_TOLERANCE * magnitude.max(1.0) || !total.is_finite() {
        return Err(BackendError::Verification(format!(
            "kv_read: sum {total}, reference {reference}"
        )));
    }
    Ok(())
}

/// Heads, KV heads, query length, KV length and head dim of `shape`, as indices (the shape's buffers are
/// allocated before any kernel indexes them, so each fits in `usize`).
pub(super) fn attention_dims(shape: &AttentionShape) -> [usize; 5] {
    [
        shape.heads,
        shape.kv_heads,
        shape.query_len,
        shape.kv_len,
        shape.head_dim,
    ]
    .map(|v| usize::try_from(v).unwrap_or(usize::MAX))
}

/// The inputs of a row-wise operator over `rows` × `width`.
pub(super) struct RowInputs<B> {
    /// The input (SiLU·mul's gate), `rows · width` elements.
    pub(super) x: B,
    /// The second operand: a full tensor (SiLU·mul's up, the residual), one row (γ), RoPE's cos then sin
    /// (`width / 2` each; the table stays cached, as the model assumes), or none.
    pub(super) second: Option<B>,
    /// Whether `second` is a full tensor rather than one row that every row reads.
    pub(super) second_per_row: bool,
    /// LayerNorm's β, one row.
    pub(super) beta: Option<B>,
}

impl RowInputs<Vec<f32>> {
    /// Seeded standard-normal inputs of `kind` (RoPE's table at position 1000).
    pub(super) fn new(kind: RowKind, rows: usize, width: usize, seed: u64) -> Self {
        let (second, second_per_row) = match kind {
            RowKind::SiluMul | RowKind::ResidualAdd => {
                (Some(random_normal(seed.wrapping_add(1), rows * width)), true)
            }
            RowKind::RmsNorm | RowKind::LayerNorm => {
                (Some(random_normal(seed.wrapping_add(1), width)), false)
            }
            RowKind::Rope => (Some(rope_table(width)), false),
            _ => (None, false),
        };
        RowInputs {
            x: random_normal(seed, rows * width),
            second,
            second_per_row,
            beta: (kind == RowKind::LayerNorm).then(|| random_normal(seed.wrapping_add(2), width)),
        }
    }
}

impl<B: Stored> RowInputs<B> {
    /// Checks sampled rows of `got`, the output of `kind` over `rows` × `width`, against the `f64` reference
    /// computed from these inputs.
    pub(super) fn check(
        &self,
        kind: RowKind,
        rows: usize,
        width: usize,
        seed: u64,
        got: &impl Stored,
        tolerance: f64,
    ) -> Result<(), BackendError> {
        let second_len = if kind == RowKind::Rope {
            2 * (width / 2)
        } else {
            width
        };
        let beta = self
            .beta
            .as_ref()
            .map_or_else(Vec::new, |beta| beta.values(0, width));
        for row in checked_rows(rows, seed) {
            let second = match &self.second {
                Some(second) if self.second_per_row => second.values(row * width, width),
                Some(second) => second.values(0, second_len),
                None => Vec::new(),
            };
            let reference = row_reference(kind, &self.x.values(row * width, width), &second, &beta);
            check_close(
                kind.name(),
                row,
                &got.values(row * width, width),
                &reference,
                tolerance,
            )?;
        }
        Ok(())
    }
}

/// RoPE's FP32 cos then sin of `width / 2` angles each, at position 1000 with the usual base of 10000 (at
/// least one value, so the buffer is never empty).
fn rope_table(width: usize) -> Vec<f32> {
    let half = width / 2;
    let mut table = vec![0.0f32; (2 * half).max(1)];
    for i in 0..half {
        let angle = 1000.0 * 10_000f64.powf(-2.0 * i as f64 / width as f64);
        table[i] = angle.cos() as f32;
        table[half + i] = angle.sin() as f32;
    }
    table
}

fn gelu(x: f64) -> f64 {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh())
}

/// The `f64` reference of one row: `x` the input (the gate of SiLU·mul), `second` the second operand (up, the
/// residual, γ, RoPE's cos then sin), `beta` LayerNorm's β.
fn row_reference(kind: RowKind, x: &[f64], second: &[f64], beta: &[f64]) -> Vec<f64> {
    let width = x.len() as f64;
    match kind {
        RowKind::RmsNorm => {
            let inv = 1.0 / (x.iter().map(|v| v * v).sum::<f64>() / width + EPS).sqrt();
            x.iter().zip(second).map(|(v, g)| v * inv * g).collect()
        }
        RowKind::LayerNorm => {
            let mean = x.iter().sum::<f64>() / width;
            let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / width;
            let inv = 1.0 / (var + EPS).sqrt();
            x.iter()
                .zip(second)
                .zip(beta)
                .map(|((v, g), b)| (v - mean) * inv * g + b)
                .collect()
        }
        RowKind::SiluMul => x
            .iter()
            .zip(second)
            .map(|(g, u)| g / (1.0 + (-g).exp()) * u)
            .collect(),
        RowKind::Gelu => x.iter().map(|&v| gelu(v)).collect(),
        RowKind::ResidualAdd => x.iter().zip(second).map(|(a, b)| a + b).collect(),
        RowKind::Rope => {
            let half = x.len() / 2;
            let mut out = x.to_vec();
            for i in 0..half {
                let (c, s) = (second[i], second[half + i]);
                out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
                out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
            }
            out
        }
        RowKind::Softmax => {
            let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = x.iter().map(|v| (v - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            e.iter().map(|v| v / sum).collect()
        }
        _ => x.to_vec(),
    }
}

/// Elements of attention's Q, K, V and output buffers: Q and O `[B, H, Sq, d]`, K and V `[B, kv_heads, Skv, d]`.
pub(super) fn attention_elements(shape: &AttentionShape) -> u128 {
    let q = u128::from(shape.batch * shape.heads * shape.query_len * shape.head_dim);
    let kv = u128::from(shape.batch * shape.kv_heads * shape.kv_len * shape.head_dim);
    2 * q + 2 * kv
}

/// The inputs of attention: Q `[B, H, Sq, d]`, K and V `[B, kv_heads, Skv, d]`; no V with `shared_kv`
/// (MLA's one K/V tensor).
pub(super) struct AttentionInputs<B> {
    pub(super) q: B,
    pub(super) k: B,
    pub(super) v: Option<B>,
}

impl AttentionInputs<Vec<f32>> {
    /// Seeded standard-normal Q of `q_len` elements, K and V of `kv_len` each.
    pub(super) fn new(q_len: usize, kv_len: usize, shared_kv: bool, seed: u64) -> Self {
        AttentionInputs {
            q: random_normal(seed, q_len),
            k: random_normal(seed.wrapping_add(1), kv_len),
            v: (!shared_kv).then(|| random_normal(seed.wrapping_add(2), kv_len)),
        }
    }
}

impl<B> AttentionInputs<B> {
    /// The values tensor: V, or K when they are one tensor.
    pub(super) fn values(&self) -> &B {
        self.v.as_ref().unwrap_or(&self.k)
    }
}

impl<B: Stored> AttentionInputs<B> {
    /// Checks sampled (sequence, head, query) rows of `got`, the output of `shape`, against the `f64`
    /// reference computed from these inputs; query head h reads KV head h / (H / kv_heads).
    pub(super) fn check(
        &self,
        shape: &AttentionShape,
        seed: u64,
        got: &impl Stored,
        tolerance: f64,
    ) -> Result<(), BackendError> {
        let [h, kvh, sq, skv, d] = attention_dims(shape);
        let group = h / kvh;
        for row in checked_rows(shape.batch as usize * h * sq, seed) {
            let (pair, i) = (row / sq, row % sq);
            let (seq, head) = (pair / h, pair % h);
            let kv_base = (seq * kvh + head / group) * skv * d;
            let reference = attention_reference(
                d,
                key_range(shape, i),
                &self.q.values(row * d, d),
                &self.k,
                self.values(),
                kv_base,
            );
            check_close("attention", row, &got.values(row * d, d), &reference, tolerance)?;
        }
        Ok(())
    }
}

/// The keys query `i` attends to, `lo..hi`: it sits at position Skv − Sq + i; the causal mask stops at its
/// position and a window (causal only) keeps the last `window` keys up to it.
pub(super) fn key_range(shape: &AttentionShape, i: usize) -> (usize, usize) {
    let (sq, skv) = (shape.query_len as usize, shape.kv_len as usize);
    if !shape.causal {
        return (0, skv);
    }
    let position = skv - sq + i;
    let lo = shape
        .window
        .map_or(0, |w| (position + 1).saturating_sub(w as usize));
    (lo, position + 1)
}

/// The `f64` attention output of query `q` (`d` elements) over keys `lo..hi` of the KV head at `base` in `k`
/// and `v`.
fn attention_reference(
    d: usize,
    (lo, hi): (usize, usize),
    q: &[f64],
    k: &impl Stored,
    v: &impl Stored,
    base: usize,
) -> Vec<f64> {
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = (lo..hi)
        .map(|j| {
            q.iter()
                .enumerate()
                .map(|(e, qe)| qe * k.at(base + j * d + e))
                .sum::<f64>()
                * scale
        })
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let sum: f64 = weights.iter().sum();
    let mut out = vec![0.0f64; d];
    for (j, w) in (lo..hi).zip(&weights) {
        for (e, o) in out.iter_mut().enumerate() {
            *o += w / sum * v.at(base + j * d + e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_mask_and_the_window() {
        let prefill = AttentionShape {
            batch: 1,
            query_len: 4,
            kv_len: 4,
            heads: 2,
            kv_heads: 1,
            head_dim: 8,
            causal: true,
            fused: true,
            shared_kv: false,
            window: None,
        };
        assert_eq!(key_range(&prefill, 0), (0, 1));
        assert_eq!(key_range(&prefill, 3), (0, 4));
        let chunk = AttentionShape {
            kv_len: 10,
            ..prefill
        };
        assert_eq!(key_range(&chunk, 0), (0, 7));
        assert_eq!(key_range(&chunk, 3), (0, 10));
        let windowed = AttentionShape {
            window: Some(3),
            ..chunk
        };
        assert_eq!(key_range(&windowed, 3), (7, 10));
        let full = AttentionShape {
            causal: false,
            ..chunk
        };
        assert_eq!(key_range(&full, 0), (0, 10));
        let decode = AttentionShape {
            query_len: 1,
            kv_len: 256,
            ..prefill
        };
        assert_eq!(key_range(&decode, 0), (0, 256));
    }

    #[test]
    fn row_references_match_hand_computed_values() {
        // RMSNorm of (3, 4) with γ = 1: x / sqrt(12.5 + ε).
        let rms = (12.5 + EPS).sqrt();
        let out = row_reference(RowKind::RmsNorm, &[3.0, 4.0], &[1.0, 1.0], &[]);
        assert!((out[0] - 3.0 / rms).abs() < 1e-12 && (out[1] - 4.0 / rms).abs() < 1e-12);
        // RoPE by 90°: (1, 0) → (0, 1).
        let out = row_reference(RowKind::Rope, &[1.0, 0.0], &[0.0, 1.0], &[]);
        assert!(out[0].abs() < 1e-12 && (out[1] - 1.0).abs() < 1e-12);
        assert_eq!(row_reference(RowKind::Softmax, &[0.0, 0.0], &[], &[]), [0.5, 0.5]);
        assert!(check_close("copy", 0, &[1.0, 2.0], &[1.0, 2.0], 0.0).is_ok());
        assert!(check_close("copy", 0, &[1.0, 2.5], &[1.0, 2.0], 0.0).is_err());
    }

    #[test]
    fn a_wrong_row_or_total_fails_the_check() {
        let (rows, width) = (4, 8);
        let inputs = RowInputs::new(RowKind::ResidualAdd, rows, width, 7);
        let mut sum: Vec<f32> = (0..rows * width)
            .map(|i| inputs.x[i] + inputs.second.as_ref().unwrap()[i])
            .collect();
        let check = |got: &Vec<f32>| inputs.check(RowKind::ResidualAdd, rows, width, 7, got, 1e-6);
        assert!(check(&sum).is_ok());
        // The last row is always checked.
        sum[rows * width - 1] += 1.0;
        assert!(matches!(check(&sum), Err(BackendError::Verification(_))));
        assert!(check_sum(10.0, &vec![4.0f32, 6.0], 2).is_ok());
        assert!(check_sum(f64::NAN, &vec![4.0f32, 6.0], 2).is_err());
    }
}
