//! The CPU backend's kernels for the non-GEMM operators of a model step, in FP32 with plain loops: RMSNorm
//! and LayerNorm over rows, SiLU·mul and GELU, residual add, RoPE, softmax rows, embedding gather, KV-cache
//! write and read, and attention with GQA over a contiguous KV cache (softmax, causal masking, sliding
//! windows).
//!
//! Each kernel runs on seeded inputs ([`random_normal`]), is checked against an `f64` reference on sampled
//! rows before timing, and is timed with the protocol of [`CpuBackend::sample_flushed`]. Attention runs its
//! (sequence, head) pairs on the rayon pool; every other kernel runs on one thread, and the record says so.
//! Quantization (FP8, INT8, FP4 outputs) and every operand format but FP32 are `unsupported`: the CPU runs
//! none of them natively, and nothing is measured through a stand-in.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roofline_core::ops::{AttentionPart, KernelShape, RowKind};
use roofline_core::{AttentionShape, Operator, Precision};

use super::cpu::CpuBackend;
use super::{BackendError, Measured};
use crate::protocol::{SampleStats, TelemetrySummary, measurement, random_normal};

/// The library label of every record of this module.
pub const LIBRARY: &str = "plain loops (CPU)";
/// Normalization epsilon.
const EPS: f64 = 1e-5;
/// Rows checked against the reference (the first, the last, and random ones).
const CHECKED_ROWS: usize = 16;
/// Relative tolerance of the reference check (FP32 arithmetic against `f64`).
const REL_TOL: f64 = 1e-4;
/// Smallest table an embedding gather picks rows from (only the gathered rows are read, so the table size
/// does not change the bytes moved).
const MIN_TABLE_ROWS: usize = 4096;

/// Bytes of the FP32 buffers `op` needs on the CPU (inputs, outputs and tables).
#[must_use]
pub fn required_bytes(op: &Operator) -> u64 {
    let elements: u128 = match op.kernel {
        Some(KernelShape::Rows { rows, width, .. }) => 4 * u128::from(rows) * u128::from(width),
        Some(KernelShape::Gather { rows, width }) => {
            (u128::from(rows).max(MIN_TABLE_ROWS as u128) * 4 + u128::from(rows)) * u128::from(width)
        }
        Some(KernelShape::KvWrite { tokens, elements } | KernelShape::KvRead { tokens, elements }) => {
            2 * u128::from(tokens) * u128::from(elements)
        }
        Some(KernelShape::Attention { shape, .. }) => {
            let q = u128::from(shape.batch * shape.heads * shape.query_len * shape.head_dim);
            let kv = u128::from(shape.batch * shape.kv_heads * shape.kv_len * shape.head_dim);
            2 * q + 2 * kv
        }
        _ => 0,
    };
    u64::try_from(elements * 4).unwrap_or(u64::MAX)
}

/// Measures one non-GEMM operator of a model step in FP32.
///
/// # Errors
/// [`BackendError::Unsupported`] for an operand format other than FP32, quantization, unfused attention
/// stages and operators without a kernel description; [`BackendError::Verification`] when the output
/// differs from the reference; the protocol's interruptions.
pub fn measure(cpu: &CpuBackend, op: &Operator) -> Result<Measured, BackendError> {
    let Some(kernel) = op.kernel else {
        return Err(BackendError::Unsupported(format!(
            "{} ({}) has no kernel description to run on the host CPU",
            op.name,
            op.kind.name()
        )));
    };
    for (role, precision) in [
        ("weights", op.precisions.weight),
        ("activations", op.precisions.activation),
        ("output", op.precisions.output),
    ] {
        if precision != Precision::Fp32 {
            return Err(BackendError::Unsupported(format!(
                "{} {role} in {precision} cannot be measured natively on the host CPU ({}): the CPU backend \
                 runs step operators in FP32 only (use the fp32 config)",
                op.name,
                cpu.arch()
            )));
        }
    }
    let seed = seed_of(&kernel);
    let (stats, threads) = match kernel {
        KernelShape::Rows {
            kind: RowKind::Quantize,
            ..
        } => {
            return Err(BackendError::Unsupported(format!(
                "{} (quantize) has no CPU path: the host CPU ({}) runs no FP8, INT8 or FP4 format",
                op.name,
                cpu.arch()
            )));
        }
        KernelShape::Rows { rows, width, kind } => (rows_op(cpu, kind, size(rows)?, size(width)?, seed)?, 1),
        KernelShape::Gather { rows, width } => (gather(cpu, size(rows)?, size(width)?, seed)?, 1),
        KernelShape::KvWrite { tokens, elements } => {
            (kv_write(cpu, size(tokens)? * size(elements)?, seed)?, 1)
        }
        KernelShape::KvRead { tokens, elements } => (kv_read(cpu, size(tokens)? * size(elements)?, seed)?, 1),
        KernelShape::Attention {
            shape,
            part: AttentionPart::Fused,
        } => (attention(cpu, &shape, seed)?, rayon::current_num_threads()),
        KernelShape::Attention { .. } => {
            return Err(BackendError::Unsupported(format!(
                "{}: the CPU backend runs fused attention only, not unfused attention stages",
                op.name
            )));
        }
        _ => {
            return Err(BackendError::Unsupported(format!(
                "{} ({}): no CPU kernel for this operator yet",
                op.name,
                op.kind.name()
            )));
        }
    };
    let kernel_label = format!(
        "{} f32, {} thread{}",
        kernel.label(),
        threads,
        if threads == 1 { "" } else { "s" }
    );
    let mut run = cpu.run_info(kernel_label, true);
    run.library = LIBRARY.into();
    Ok(Measured {
        op: op.clone(),
        precision: Precision::Fp32,
        label_suffix: String::new(),
        measurement: measurement(run, &stats, TelemetrySummary::default()),
    })
}

fn size(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidInput(format!("{v} does not fit in memory")))
}

/// A seed from the kernel's description, so the same operator always gets the same inputs.
fn seed_of(kernel: &KernelShape) -> u64 {
    kernel.label().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Rows to check: the first, the last and random ones.
fn checked_rows(rows: usize, seed: u64) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0c0f_fee0);
    let mut picked = vec![0, rows - 1];
    picked.extend((0..CHECKED_ROWS.min(rows)).map(|_| rng.random_range(0..rows)));
    picked
}

/// Compares `got` with the `f64` reference of one row; the tolerance scales with the row's magnitude.
fn check_row(what: &str, row: usize, got: &[f32], reference: &[f64]) -> Result<(), BackendError> {
    let scale = reference.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (col, (&g, &r)) in got.iter().zip(reference).enumerate() {
        let err = (f64::from(g) - r).abs();
        if !g.is_finite() || err > REL_TOL * scale {
            return Err(BackendError::Verification(format!(
                "{what}: row {row} column {col} = {g}, reference {r} (error {err:.3e})"
            )));
        }
    }
    Ok(())
}

/// Lanes of the partial sums of [`dot`]: independent accumulators, so the reduction vectorizes instead of
/// waiting on one add chain.
const LANES: usize = 8;

/// Σ a·b in `f32` over [`LANES`] partial sums.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (ca, cb) in a_chunks.zip(b_chunks) {
        for lane in 0..LANES {
            acc[lane] += ca[lane] * cb[lane];
        }
    }
    acc.iter().sum::<f32>() + tail
}

fn gelu(x: f64) -> f64 {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh())
}

/// One row of a row-wise operator, in `f32`: `a` is the input (gate for SiLU·mul), `b` the second input
/// (up, the residual, γ for norms, cos/sin for RoPE), `beta` LayerNorm's β.
fn row_f32(kind: RowKind, a: &[f32], b: &[f32], beta: &[f32], out: &mut [f32]) {
    let width = a.len();
    match kind {
        RowKind::RmsNorm => {
            let sum_sq = dot(a, a);
            let inv = 1.0 / (sum_sq / width as f32 + EPS as f32).sqrt();
            for ((o, x), g) in out.iter_mut().zip(a).zip(b) {
                *o = x * inv * g;
            }
        }
        RowKind::LayerNorm => {
            let mean = a.iter().sum::<f32>() / width as f32;
            let var = a.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / width as f32;
            let inv = 1.0 / (var + EPS as f32).sqrt();
            for (((o, x), g), be) in out.iter_mut().zip(a).zip(b).zip(beta) {
                *o = (x - mean) * inv * g + be;
            }
        }
        RowKind::SiluMul => {
            for ((o, g), u) in out.iter_mut().zip(a).zip(b) {
                *o = g / (1.0 + (-g).exp()) * u;
            }
        }
        RowKind::Gelu => {
            let c = (2.0f32 / std::f32::consts::PI).sqrt();
            for (o, x) in out.iter_mut().zip(a) {
                *o = 0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh());
            }
        }
        RowKind::ResidualAdd => {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o = x + y;
            }
        }
        RowKind::Rope => {
            // b holds cos then sin, width / 2 each; pairs (2i, 2i + 1) rotate by angle i.
            let half = width / 2;
            let (cos, sin) = b.split_at(half);
            for i in 0..half {
                let (x0, x1) = (a[2 * i], a[2 * i + 1]);
                out[2 * i] = x0 * cos[i] - x1 * sin[i];
                out[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
            }
            if width % 2 == 1 {
                out[width - 1] = a[width - 1];
            }
        }
        RowKind::Softmax => {
            let max = a.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for (o, x) in out.iter_mut().zip(a) {
                *o = (x - max).exp();
                sum += *o;
            }
            let inv = 1.0 / sum;
            for o in out.iter_mut() {
                *o *= inv;
            }
        }
        _ => out.copy_from_slice(a),
    }
}

/// The `f64` reference of one row (same argument roles as [`row_f32`]).
fn row_f64(kind: RowKind, a: &[f32], b: &[f32], beta: &[f32]) -> Vec<f64> {
    let x: Vec<f64> = a.iter().map(|&v| f64::from(v)).collect();
    let y = |i: usize| f64::from(b[i]);
    let width = x.len() as f64;
    match kind {
        RowKind::RmsNorm => {
            let inv = 1.0 / (x.iter().map(|v| v * v).sum::<f64>() / width + EPS).sqrt();
            x.iter().enumerate().map(|(i, v)| v * inv * y(i)).collect()
        }
        RowKind::LayerNorm => {
            let mean = x.iter().sum::<f64>() / width;
            let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / width;
            let inv = 1.0 / (var + EPS).sqrt();
            x.iter()
                .enumerate()
                .map(|(i, v)| (v - mean) * inv * y(i) + f64::from(beta[i]))
                .collect()
        }
        RowKind::SiluMul => x
            .iter()
            .enumerate()
            .map(|(i, g)| g / (1.0 + (-g).exp()) * y(i))
            .collect(),
        RowKind::Gelu => x.iter().map(|&v| gelu(v)).collect(),
        RowKind::ResidualAdd => x.iter().enumerate().map(|(i, v)| v + y(i)).collect(),
        RowKind::Rope => {
            let half = x.len() / 2;
            let mut out = x.clone();
            for i in 0..half {
                let (c, s) = (y(i), y(half + i));
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
        _ => x,
    }
}

/// A row-wise operator over `rows` × `width`: inputs, the per-row second operand, the output.
fn rows_op(
    cpu: &CpuBackend,
    kind: RowKind,
    rows: usize,
    width: usize,
    seed: u64,
) -> Result<SampleStats, BackendError> {
    let n = rows * width;
    let a = random_normal(seed, n);
    // The second operand: a second full input (SiLU·mul's up, the residual), one row (γ; RoPE's cos and sin,
    // the tables staying cached as the model assumes), or nothing.
    let (b, b_per_row) = match kind {
        RowKind::SiluMul | RowKind::ResidualAdd => (random_normal(seed.wrapping_add(1), n), true),
        RowKind::RmsNorm | RowKind::LayerNorm => (random_normal(seed.wrapping_add(1), width), false),
        RowKind::Rope => {
            let half = width / 2;
            let mut table = vec![0.0f32; 2 * half];
            for i in 0..half {
                // Position 1000 with the usual base of 10000.
                let angle = 1000.0 * 10_000f64.powf(-2.0 * i as f64 / width as f64);
                table[i] = angle.cos() as f32;
                table[half + i] = angle.sin() as f32;
            }
            (table, false)
        }
        _ => (Vec::new(), false),
    };
    let beta = if kind == RowKind::LayerNorm {
        random_normal(seed.wrapping_add(2), width)
    } else {
        Vec::new()
    };
    let mut out = vec![0.0f32; n];
    let run = |out: &mut [f32]| {
        for (r, o) in out.chunks_exact_mut(width).enumerate() {
            let x = &a[r * width..(r + 1) * width];
            let second = if b_per_row {
                &b[r * width..(r + 1) * width]
            } else {
                &b[..]
            };
            row_f32(kind, x, second, &beta, o);
        }
    };
    run(&mut out);
    for r in checked_rows(rows, seed) {
        let x = &a[r * width..(r + 1) * width];
        let second = if b_per_row {
            &b[r * width..(r + 1) * width]
        } else {
            &b[..]
        };
        let reference = row_f64(kind, x, second, &beta);
        check_row(kind.name(), r, &out[r * width..(r + 1) * width], &reference)?;
    }
    let stats = cpu.sample_flushed(|| run(&mut out))?;
    std::hint::black_box(&out);
    Ok(stats)
}

/// An embedding gather of `rows` rows of `width` from a table of at least [`MIN_TABLE_ROWS`] rows.
fn gather(cpu: &CpuBackend, rows: usize, width: usize, seed: u64) -> Result<SampleStats, BackendError> {
    let table_rows = (4 * rows).max(MIN_TABLE_ROWS);
    let table = random_normal(seed, table_rows * width);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids: Vec<usize> = (0..rows).map(|_| rng.random_range(0..table_rows)).collect();
    let mut out = vec![0.0f32; rows * width];
    let run = |out: &mut [f32]| {
        for (o, &id) in out.chunks_exact_mut(width).zip(&ids) {
            o.copy_from_slice(&table[id * width..(id + 1) * width]);
        }
    };
    run(&mut out);
    for r in checked_rows(rows, seed) {
        let id = ids[r];
        if out[r * width..(r + 1) * width] != table[id * width..(id + 1) * width] {
            return Err(BackendError::Verification(format!(
                "gather: row {r} is not table row {id}"
            )));
        }
    }
    let stats = cpu.sample_flushed(|| run(&mut out))?;
    std::hint::black_box(&out);
    Ok(stats)
}

/// A KV-cache write: `n` new elements (K and V of the new tokens) copied into the cache.
fn kv_write(cpu: &CpuBackend, n: usize, seed: u64) -> Result<SampleStats, BackendError> {
    let new = random_normal(seed, n);
    let mut cache = vec![0.0f32; n];
    cache.copy_from_slice(&new);
    if cache != new {
        return Err(BackendError::Verification(
            "kv_write: the cache differs from the new tokens".into(),
        ));
    }
    let stats = cpu.sample_flushed(|| cache.copy_from_slice(&new))?;
    std::hint::black_box(&cache);
    Ok(stats)
}

/// A KV-cache read: `n` cached elements streamed (summed, so the read cannot be skipped).
fn kv_read(cpu: &CpuBackend, n: usize, seed: u64) -> Result<SampleStats, BackendError> {
    let cache = random_normal(seed, n);
    let sum = |cache: &[f32]| cache.iter().fold(0.0f32, |s, v| s + v);
    let got = f64::from(sum(&cache));
    let reference: f64 = cache.iter().map(|&v| f64::from(v)).sum();
    let magnitude: f64 = cache.iter().map(|&v| f64::from(v).abs()).sum();
    if (got - reference).abs() > REL_TOL * magnitude.max(1.0) {
        return Err(BackendError::Verification(format!(
            "kv_read: sum {got}, reference {reference}"
        )));
    }
    let stats = cpu.sample_flushed(|| {
        std::hint::black_box(sum(std::hint::black_box(&cache)));
    })?;
    Ok(stats)
}

/// The keys query `i` (of `query_len`, the last ones of `kv_len`) attends to: `lo..hi`.
fn key_range(shape: &AttentionShape, i: usize) -> (usize, usize) {
    let (sq, skv) = (shape.query_len as usize, shape.kv_len as usize);
    let position = skv - sq + i;
    let hi = if shape.causal { position + 1 } else { skv };
    let lo = shape
        .window
        .map_or(0, |w| (position + 1).saturating_sub(w as usize));
    (lo, hi)
}

/// Attention of one (sequence, head) pair: `q` is `query_len` × d, `k` and `v` `kv_len` × d, `out`
/// `query_len` × d; `scores` is scratch of `kv_len`.
fn attention_head(
    shape: &AttentionShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    out: &mut [f32],
    scores: &mut [f32],
) {
    let d = shape.head_dim as usize;
    let scale = 1.0 / (d as f32).sqrt();
    for (i, (qi, oi)) in q.chunks_exact(d).zip(out.chunks_exact_mut(d)).enumerate() {
        let (lo, hi) = key_range(shape, i);
        let mut max = f32::NEG_INFINITY;
        for j in lo..hi {
            let kj = &k[j * d..(j + 1) * d];
            let s = dot(qi, kj) * scale;
            scores[j] = s;
            max = max.max(s);
        }
        let mut sum = 0.0f32;
        for s in &mut scores[lo..hi] {
            *s = (*s - max).exp();
            sum += *s;
        }
        oi.fill(0.0);
        for j in lo..hi {
            let p = scores[j] / sum;
            for (o, vj) in oi.iter_mut().zip(&v[j * d..(j + 1) * d]) {
                *o += p * vj;
            }
        }
    }
}

/// The `f64` reference output of one query `q` of `d` elements over keys `lo..hi` of `k` and `v`.
fn attention_reference(d: usize, (lo, hi): (usize, usize), q: &[f32], k: &[f32], v: &[f32]) -> Vec<f64> {
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = (lo..hi)
        .map(|j| {
            q.iter()
                .zip(&k[j * d..(j + 1) * d])
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum::<f64>()
                * scale
        })
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    let mut out = vec![0.0f64; d];
    for (idx, j) in (lo..hi).enumerate() {
        for (o, &vj) in out.iter_mut().zip(&v[j * d..(j + 1) * d]) {
            *o += e[idx] / sum * f64::from(vj);
        }
    }
    out
}

/// Attention over a contiguous KV cache: Q `[B, H, Sq, d]`, K and V `[B, kv_heads, Skv, d]` (one tensor
/// with `shared_kv`), O `[B, H, Sq, d]`; query head h reads KV head h / (H / kv_heads).
fn attention(cpu: &CpuBackend, shape: &AttentionShape, seed: u64) -> Result<SampleStats, BackendError> {
    let (b, h, kvh) = (size(shape.batch)?, size(shape.heads)?, size(shape.kv_heads)?);
    let (sq, skv, d) = (size(shape.query_len)?, size(shape.kv_len)?, size(shape.head_dim)?);
    let group = h / kvh;
    let q = random_normal(seed, b * h * sq * d);
    let k = random_normal(seed.wrapping_add(1), b * kvh * skv * d);
    let v = if shape.shared_kv {
        Vec::new()
    } else {
        random_normal(seed.wrapping_add(2), b * kvh * skv * d)
    };
    let values: &[f32] = if shape.shared_kv { &k } else { &v };
    let head_q = sq * d;
    let head_kv = skv * d;
    let mut out = vec![0.0f32; b * h * sq * d];
    let run = |out: &mut [f32]| {
        out.par_chunks_mut(head_q).enumerate().for_each_init(
            || vec![0.0f32; skv],
            |scores, (pair, o)| {
                let (seq, head) = (pair / h, pair % h);
                let kv = (seq * kvh + head / group) * head_kv;
                attention_head(
                    shape,
                    &q[pair * head_q..(pair + 1) * head_q],
                    &k[kv..kv + head_kv],
                    &values[kv..kv + head_kv],
                    o,
                    scores,
                );
            },
        );
    };
    run(&mut out);
    // Check sampled (sequence, head, query) rows.
    let rows = b * h * sq;
    for row in checked_rows(rows, seed) {
        let (pair, i) = (row / sq, row % sq);
        let (seq, head) = (pair / h, pair % h);
        let kv = (seq * kvh + head / group) * head_kv;
        let reference = attention_reference(
            d,
            key_range(shape, i),
            &q[row * d..(row + 1) * d],
            &k[kv..kv + head_kv],
            &values[kv..kv + head_kv],
        );
        check_row("attention", row, &out[row * d..(row + 1) * d], &reference)?;
    }
    let stats = cpu.sample_flushed(|| run(&mut out))?;
    std::hint::black_box(&out);
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_prefill_queries_see_keys_up_to_their_position() {
        let shape = AttentionShape {
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
        assert_eq!(key_range(&shape, 0), (0, 1));
        assert_eq!(key_range(&shape, 3), (0, 4));
        let windowed = AttentionShape {
            window: Some(2),
            ..shape
        };
        assert_eq!(key_range(&windowed, 3), (2, 4));
        let decode = AttentionShape {
            query_len: 1,
            kv_len: 256,
            ..shape
        };
        assert_eq!(key_range(&decode, 0), (0, 256));
    }

    fn fast_cpu() -> CpuBackend {
        CpuBackend::new(1 << 30).with_policy(crate::protocol::SamplingPolicy {
            warmup_runs: 1,
            min_samples: 2,
            max_samples: 3,
            target_rel_noise: 1.0,
            time_cap: std::time::Duration::from_millis(200),
        })
    }

    fn attention_op(query_len: u64, kv_len: u64, window: Option<u64>, shared_kv: bool) -> Operator {
        let shape = AttentionShape {
            batch: 2,
            query_len,
            kv_len,
            heads: 8,
            kv_heads: 2,
            head_dim: 16,
            causal: true,
            fused: true,
            shared_kv,
            window,
        };
        Operator::attention(&shape, Precision::Fp32.into())
            .unwrap()
            .remove(0)
    }

    #[test]
    fn every_step_kernel_runs_verified_in_fp32() {
        use roofline_core::{Activation, Norm};
        let fp32 = Precision::Fp32;
        let cpu = fast_cpu();
        let ops = [
            Operator::norm(Norm::RmsNorm, 3, 256, fp32).unwrap(),
            Operator::norm(Norm::LayerNorm, 3, 256, fp32).unwrap(),
            Operator::activation(Activation::SiluMul, 2, 512, fp32).unwrap(),
            Operator::activation(Activation::Gelu, 2, 512, fp32).unwrap(),
            Operator::residual_add(2, 256, fp32).unwrap(),
            Operator::rope(2, 8, 2, 64, fp32).unwrap(),
            Operator::embedding(3, 256, fp32, fp32).unwrap(),
            Operator::kv_cache_write(2, 256, fp32, fp32).unwrap(),
            Operator::kv_cache_read(64, 256, fp32).unwrap(),
            // Decode with GQA, causal prefill, a sliding window and MLA's shared K/V.
            attention_op(1, 100, None, false),
            attention_op(33, 33, None, false),
            attention_op(20, 50, Some(8), false),
            attention_op(1, 40, None, true),
        ];
        for op in ops {
            let measured = measure(&cpu, &op).unwrap_or_else(|e| panic!("{}: {e}", op.name));
            let m = &measured.measurement;
            assert!(
                m.verified && m.median_s > 0.0 && m.median_s.is_finite(),
                "{}",
                op.name
            );
            assert_eq!(m.library, LIBRARY);
            assert!(m.kernel.contains("f32"), "{}", m.kernel);
            assert_eq!(measured.op.name, op.name);
        }
    }

    #[test]
    fn quantize_and_narrow_formats_are_unsupported() {
        let cpu = fast_cpu();
        let quantize = Operator::quantize_activations(1, 256, Precision::Fp32, Precision::Fp8E4M3).unwrap();
        let bf16 = Operator::residual_add(1, 256, Precision::Bf16).unwrap();
        let unfused = Operator::attention(
            &AttentionShape {
                fused: false,
                ..*attention_shape(&attention_op(1, 16, None, false))
            },
            Precision::Fp32.into(),
        )
        .unwrap()
        .remove(0);
        for op in [quantize, bf16, unfused] {
            assert!(
                matches!(measure(&cpu, &op), Err(BackendError::Unsupported(_))),
                "{}",
                op.name
            );
        }
    }

    fn attention_shape(op: &Operator) -> &AttentionShape {
        match &op.kernel {
            Some(KernelShape::Attention { shape, .. }) => shape,
            _ => panic!("not attention"),
        }
    }

    #[test]
    fn rows_match_hand_computed_values() {
        let mut out = [0.0f32; 2];
        // RMSNorm of (3, 4): rms = sqrt(12.5); γ = 1.
        row_f32(RowKind::RmsNorm, &[3.0, 4.0], &[1.0, 1.0], &[], &mut out);
        let rms = (12.5f32 + EPS as f32).sqrt();
        assert!((out[0] - 3.0 / rms).abs() < 1e-6 && (out[1] - 4.0 / rms).abs() < 1e-6);
        row_f32(RowKind::ResidualAdd, &[1.0, 2.0], &[10.0, 20.0], &[], &mut out);
        assert_eq!(out, [11.0, 22.0]);
        // RoPE by 90°: (1, 0) → (0, 1).
        row_f32(RowKind::Rope, &[1.0, 0.0], &[0.0, 1.0], &[], &mut out);
        assert!(out[0].abs() < 1e-7 && (out[1] - 1.0).abs() < 1e-7);
        row_f32(RowKind::Softmax, &[0.0, 0.0], &[], &[], &mut out);
        assert_eq!(out, [0.5, 0.5]);
        // 11 elements: one chunk of 8 lanes and a tail of 3; Σ i² for i = 1..=11 = 506.
        let v: Vec<f32> = (1..=11).map(|i| i as f32).collect();
        assert_eq!(dot(&v, &v), 506.0);
    }
}
