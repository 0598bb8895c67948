//! The CPU backend's kernels for the non-GEMM operators of a model step, in FP32 with plain loops: RMSNorm
//! and LayerNorm over rows, SiLU·mul and GELU, residual add, RoPE, softmax rows, embedding gather, KV-cache
//! write and read, and attention with GQA over a contiguous KV cache (softmax, causal masking, sliding
//! windows).
//!
//! Each kernel runs on seeded inputs (drawn with [`draw_stoppable`]: they stop with the point), is checked
//! against an `f64` reference on sampled rows before timing (`step_reference`, shared with the CUDA backend),
//! and is timed with [`CpuHost::sample_flushed`]. Attention runs its (sequence, head) pairs on the rayon
//! pool, every other kernel on one thread, as the record says. Quantization (FP8, INT8, FP4 outputs) and every
//! operand format but FP32 are `unsupported`: the CPU runs none natively, nothing is measured as a stand-in.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roofline_core::ops::{AttentionPart, KernelShape, RowKind};
use roofline_core::{AttentionShape, Operator, Precision};

use super::cpu_host::CpuHost;
use super::step_reference::{
    AttentionInputs, EPS, MIN_TABLE_ROWS, RowInputs, attention_dims, attention_elements, check_sum,
    checked_rows, key_range, seed_of,
};
use super::{BackendError, Measured};
use crate::protocol::{
    StopCheck, TelemetrySummary, check_interruption, draw_stoppable, measurement, stop_due, try_random_normal,
};

/// The library label of every record of this module.
pub const LIBRARY: &str = "plain loops (CPU)";
/// Relative tolerance of the reference check (FP32 arithmetic against `f64`).
const REL_TOL: f64 = 1e-4;

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
        Some(KernelShape::Attention { shape, .. }) => attention_elements(&shape),
        _ => 0,
    };
    u64::try_from(elements * 4).unwrap_or(u64::MAX)
}

/// A kernel ready to run on the host: inputs allocated, output checked once against the reference.
pub struct Kernel {
    run: Box<dyn FnMut()>,
    /// What runs, for the record, e.g. `rms_norm 1x2048 f32, 1 thread`.
    pub label: String,
}

impl Kernel {
    /// A kernel that runs `run`, described by `label`.
    pub fn new(label: String, run: impl FnMut() + 'static) -> Kernel {
        Kernel {
            run: Box::new(run),
            label,
        }
    }

    /// Runs the kernel once.
    pub fn run(&mut self) {
        (self.run)();
    }
}

/// Measures one non-GEMM operator of a model step in FP32: [`prepare`], then the protocol of
/// [`CpuHost::sample_flushed`].
///
/// # Errors
/// [`prepare`]'s; the protocol's interruptions.
pub(super) fn measure(cpu: &CpuHost, op: &Operator) -> Result<Measured, BackendError> {
    let mut kernel = prepare(cpu, op)?;
    let stats = cpu.sample_flushed(|| kernel.run())?;
    let mut run = cpu.run_info(kernel.label, true);
    run.library = LIBRARY.into();
    Ok(Measured {
        op: op.clone(),
        precision: Precision::Fp32,
        label_suffix: String::new(),
        measurement: measurement(run, &stats, TelemetrySummary::default()),
    })
}

/// Prepares one non-GEMM operator of a model step in FP32: seeded inputs, one run checked against the
/// reference.
///
/// # Errors
/// [`BackendError::Unsupported`] for an operand format other than FP32, quantization, unfused attention
/// stages and operators without a kernel description; [`BackendError::Verification`] when the output
/// differs from the reference.
pub(super) fn prepare(cpu: &CpuHost, op: &Operator) -> Result<Kernel, BackendError> {
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
    check_interruption::<BackendError>()?;
    let (run, threads): (Box<dyn FnMut()>, usize) = match kernel {
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
        KernelShape::Rows { rows, width, kind } => (rows_op(kind, size(rows)?, size(width)?, seed)?, 1),
        KernelShape::Gather { rows, width } => (gather(size(rows)?, size(width)?, seed)?, 1),
        KernelShape::KvWrite { tokens, elements } => (kv_write(size(tokens)? * size(elements)?, seed)?, 1),
        KernelShape::KvRead { tokens, elements } => (kv_read(size(tokens)? * size(elements)?, seed)?, 1),
        KernelShape::Attention {
            shape,
            part: AttentionPart::Fused,
        } => (attention(shape, seed)?, rayon::current_num_threads()),
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
    let label = format!(
        "{} f32, {} thread{}",
        kernel.label(),
        threads,
        if threads == 1 { "" } else { "s" }
    );
    Ok(Kernel { run, label })
}

fn size(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidInput(format!("{v} does not fit in memory")))
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

/// A row-wise operator over `rows` × `width`: inputs, the per-row second operand, the output.
fn rows_op(kind: RowKind, rows: usize, width: usize, seed: u64) -> Result<Box<dyn FnMut()>, BackendError> {
    let inputs = draw_stoppable::<_, BackendError>(|| RowInputs::new(kind, rows, width, seed))?;
    let mut out = vec![0.0f32; rows * width];
    let stop = StopCheck::current();
    run_rows(kind, &inputs, width, &mut out, stop.as_ref());
    check_interruption::<BackendError>()?;
    inputs.check(kind, rows, width, seed, &out, REL_TOL)?;
    Ok(Box::new(move || {
        run_rows(kind, &inputs, width, &mut out, stop.as_ref());
        std::hint::black_box(&out);
    }))
}

/// Rows of a row-wise operator between two checks of the point's limits.
const ROWS_PER_CHECK: usize = 64;

/// `kind` over every row of `inputs` into `out`, stopping early (rows left unwritten) once `stop` is due.
fn run_rows(
    kind: RowKind,
    inputs: &RowInputs<Vec<f32>>,
    width: usize,
    out: &mut [f32],
    stop: Option<&StopCheck>,
) {
    let second = inputs.second.as_deref().unwrap_or_default();
    let beta = inputs.beta.as_deref().unwrap_or_default();
    for (r, o) in out.chunks_exact_mut(width).enumerate() {
        if r % ROWS_PER_CHECK == 0 && stop_due(stop) {
            return;
        }
        let second_row = if inputs.second_per_row {
            &second[r * width..(r + 1) * width]
        } else {
            second
        };
        row_f32(kind, &inputs.x[r * width..(r + 1) * width], second_row, beta, o);
    }
}

/// An embedding gather of `rows` rows of `width` from a table of at least [`MIN_TABLE_ROWS`] rows.
fn gather(rows: usize, width: usize, seed: u64) -> Result<Box<dyn FnMut()>, BackendError> {
    let table_rows = (4 * rows).max(MIN_TABLE_ROWS);
    let table = try_random_normal::<BackendError>(seed, table_rows * width)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids: Vec<usize> = (0..rows).map(|_| rng.random_range(0..table_rows)).collect();
    let mut out = vec![0.0f32; rows * width];
    gather_rows(&table, &ids, &mut out);
    for r in checked_rows(rows, seed) {
        let id = ids[r];
        if out[r * width..(r + 1) * width] != table[id * width..(id + 1) * width] {
            return Err(BackendError::Verification(format!(
                "gather: row {r} is not table row {id}"
            )));
        }
    }
    Ok(Box::new(move || {
        gather_rows(&table, &ids, &mut out);
        std::hint::black_box(&out);
    }))
}

/// Copies table row `ids[r]` into row r of `out` (rows of `out.len() / ids.len()`).
fn gather_rows(table: &[f32], ids: &[usize], out: &mut [f32]) {
    let width = out.len() / ids.len().max(1);
    for (o, &id) in out.chunks_exact_mut(width).zip(ids) {
        o.copy_from_slice(&table[id * width..(id + 1) * width]);
    }
}

/// A KV-cache write: `n` new elements (K and V of the new tokens) copied into the cache.
fn kv_write(n: usize, seed: u64) -> Result<Box<dyn FnMut()>, BackendError> {
    let new = try_random_normal::<BackendError>(seed, n)?;
    let mut cache = vec![0.0f32; n];
    cache.copy_from_slice(&new);
    if cache != new {
        return Err(BackendError::Verification(
            "kv_write: the cache differs from the new tokens".into(),
        ));
    }
    Ok(Box::new(move || {
        cache.copy_from_slice(&new);
        std::hint::black_box(&cache);
    }))
}

/// A KV-cache read: `n` cached elements streamed (summed, so the read cannot be skipped).
fn kv_read(n: usize, seed: u64) -> Result<Box<dyn FnMut()>, BackendError> {
    let cache = try_random_normal::<BackendError>(seed, n)?;
    let sum = |cache: &[f32]| cache.iter().fold(0.0f32, |s, v| s + v);
    check_sum(f64::from(sum(&cache)), &cache, n)?;
    Ok(Box::new(move || {
        std::hint::black_box(sum(std::hint::black_box(&cache)));
    }))
}

/// Attention of one (sequence, head) pair: `q` is `query_len` × d, `k` and `v` `kv_len` × d, `out`
/// `query_len` × d; `scores` is scratch of `kv_len`. `stop` is checked before every query row (one row is at
/// most `kv_len` × d × 4 FLOPs).
fn attention_head(
    shape: &AttentionShape,
    (q, k, v): (&[f32], &[f32], &[f32]),
    out: &mut [f32],
    scores: &mut [f32],
    stop: Option<&StopCheck>,
) {
    let d = shape.head_dim as usize;
    let scale = 1.0 / (d as f32).sqrt();
    for (i, (qi, oi)) in q.chunks_exact(d).zip(out.chunks_exact_mut(d)).enumerate() {
        if stop_due(stop) {
            return;
        }
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

/// Attention over a contiguous KV cache: Q `[B, H, Sq, d]`, K and V `[B, kv_heads, Skv, d]` (one tensor
/// with `shared_kv`), O `[B, H, Sq, d]`; query head h reads KV head h / (H / kv_heads).
fn attention(shape: AttentionShape, seed: u64) -> Result<Box<dyn FnMut()>, BackendError> {
    let (b, h, kvh) = (size(shape.batch)?, size(shape.heads)?, size(shape.kv_heads)?);
    let (sq, skv, d) = (size(shape.query_len)?, size(shape.kv_len)?, size(shape.head_dim)?);
    let (q_len, kv_len) = (b * h * sq * d, b * kvh * skv * d);
    let inputs =
        draw_stoppable::<_, BackendError>(|| AttentionInputs::new(q_len, kv_len, shape.shared_kv, seed))?;
    let mut out = vec![0.0f32; b * h * sq * d];
    // The pool's threads cannot see this thread's limits: they check them through `stop`.
    let stop = StopCheck::current();
    run_attention(&shape, &inputs, &mut out, stop.as_ref());
    check_interruption::<BackendError>()?;
    inputs.check(&shape, seed, &out, REL_TOL)?;
    Ok(Box::new(move || {
        run_attention(&shape, &inputs, &mut out, stop.as_ref());
        std::hint::black_box(&out);
    }))
}

/// Every (sequence, head) pair of `shape` on the rayon pool, each stopping early once `stop` is due.
fn run_attention(
    shape: &AttentionShape,
    inputs: &AttentionInputs<Vec<f32>>,
    out: &mut [f32],
    stop: Option<&StopCheck>,
) {
    let [h, kvh, sq, skv, d] = attention_dims(shape);
    let group = h / kvh;
    let (q, k, values) = (&inputs.q, &inputs.k, inputs.values());
    let (head_q, head_kv) = (sq * d, skv * d);
    out.par_chunks_mut(head_q).enumerate().for_each_init(
        || vec![0.0f32; skv],
        |scores, (pair, o)| {
            let (seq, head) = (pair / h, pair % h);
            let kv = (seq * kvh + head / group) * head_kv;
            let operands = (
                &q[pair * head_q..(pair + 1) * head_q],
                &k[kv..kv + head_kv],
                &values[kv..kv + head_kv],
            );
            attention_head(shape, operands, o, scores, stop);
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;

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
            let measured = measure(&cpu.host, &op).unwrap_or_else(|e| panic!("{}: {e}", op.name));
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
                matches!(measure(&cpu.host, &op), Err(BackendError::Unsupported(_))),
                "{}",
                op.name
            );
        }
    }

    #[test]
    fn a_long_attention_stops_within_a_row_of_its_cap_or_its_cancellation() {
        use std::time::{Duration, Instant};
        // Causal prefill of 2048 tokens, 32 heads of 128 over 8 KV heads: 4 · 2048² / 2 · 128 · 32 = 3.4e10
        // FLOPs, a minute of plain loops in a debug build. Its verification run is where both stop.
        let long = Operator::attention(
            &AttentionShape {
                batch: 1,
                query_len: 2048,
                kv_len: 2048,
                heads: 32,
                kv_heads: 8,
                head_dim: 128,
                causal: true,
                fused: true,
                shared_kv: false,
                window: None,
            },
            Precision::Fp32.into(),
        )
        .unwrap()
        .remove(0);
        let cpu = fast_cpu();
        let cap = Duration::from_millis(300);
        let limits = crate::protocol::PointLimits::new(cap);
        let start = Instant::now();
        let capped = limits.run(|| measure(&cpu.host, &long));
        let stopped_after = start.elapsed();
        assert!(matches!(capped, Err(BackendError::TimeLimit(_))), "{capped:?}");
        assert!(stopped_after < cap + Duration::from_secs(1), "{stopped_after:?}");
        // Cancelled from another thread (a DELETE, a client gone) 300 ms in.
        let limits = crate::protocol::PointLimits::new(Duration::from_secs(600));
        let canceller = limits.clone();
        let start = Instant::now();
        let cancelled = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                canceller.cancel();
            });
            limits.run(|| measure(&cpu.host, &long))
        });
        let stopped_after = start.elapsed();
        assert_eq!(cancelled.unwrap_err(), BackendError::Cancelled);
        assert!(
            stopped_after < Duration::from_millis(300) + Duration::from_secs(1),
            "{stopped_after:?}"
        );
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
