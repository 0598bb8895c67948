//! Fused attention of a model step on the tensor cores (`attention.cu`, FlashAttention-2 style, FlashDecoding
//! splits): [`plan`] picks the kernel configuration (NVRTC macros) and launch geometry for a shape and the
//! device, and `CudaBackend::attention_mma` runs and verifies it. Q, K and V in BF16 or FP16, or an FP8 E4M3 KV
//! cache (and FP8 Q) read as stored and converted in shared memory; FP32 accumulation. Shapes it cannot run
//! (FP32, head dims not a multiple of 16 or over 256 outside MLA, GPUs before sm_80) fall back to the scalar
//! kernel of step_ops.cu or are `unsupported`. Design and measurements: docs/validation/attention.md.

use std::rc::Rc;

use cudarc::driver::LaunchConfig;
use cudarc::driver::sys::CUfunction_attribute;
use roofline_core::{AttentionShape, Precision};

use roofline_core::Operator;

use super::buffers::Elem;
use super::launch::{Format, Launch, Scalar, Verified, grid_blocks, len_of, to_i32};
use super::{CudaBackend, cuda_err, to_usize};
use crate::backend::BackendError;
use crate::backend::step_reference::{AttentionInputs, attention_elements};
use crate::protocol::draw_stoppable;

/// CUDA C source of the tensor-core attention kernel.
const ATTENTION_SRC: &str = include_str!("attention.cu");
/// Largest head dim of the kernel: 256, or 576 with MLA's shared K/V (DeepSeek-V3's 512 + 64).
const MAX_HEAD_DIM: u64 = 256;
const MAX_SHARED_KV_HEAD_DIM: u64 = 576;
/// Blocks the split-KV decode aims for, per SM (several small blocks keep every SM streaming).
const BLOCKS_PER_SM: u64 = 3;
/// Fewest key tiles per split.
const MIN_TILES_PER_SPLIT: u64 = 4;
/// Threads of an attention block (`ATTENTION_THREADS` in step_ops.cu).
const ATTENTION_THREADS: u32 = 128;
/// Largest head dimension of the attention kernel (`ATTENTION_THREADS · ATTENTION_DIMS_PER_THREAD`).
const ATTENTION_MAX_HEAD_DIM: usize = 1024;
/// Shared memory of an attention block, in floats (32 KiB: under the 48 KiB that needs no opt-in).
const ATTENTION_SHARED_FLOATS: usize = 8192;
/// Most keys per attention tile.
const ATTENTION_MAX_TILE: usize = 64;

/// An operand format of the kernel (its `*_FMT` macro value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AttnFmt {
    Bf16,
    F16,
    E4M3,
}

impl AttnFmt {
    pub(super) fn of(p: Precision) -> Option<AttnFmt> {
        match p {
            Precision::Bf16 => Some(AttnFmt::Bf16),
            Precision::Fp16 => Some(AttnFmt::F16),
            Precision::Fp8E4M3 => Some(AttnFmt::E4M3),
            _ => None,
        }
    }

    fn macro_value(self) -> u8 {
        match self {
            AttnFmt::Bf16 => 0,
            AttnFmt::F16 => 1,
            AttnFmt::E4M3 => 2,
        }
    }

    pub(super) fn elem(self) -> Elem {
        match self {
            AttnFmt::Bf16 => Elem::Bf16,
            AttnFmt::F16 => Elem::F16,
            AttnFmt::E4M3 => Elem::E4M3,
        }
    }

    fn bytes(self) -> u64 {
        if self == AttnFmt::E4M3 { 1 } else { 2 }
    }

    fn name(self) -> &'static str {
        match self {
            AttnFmt::Bf16 => "BF16",
            AttnFmt::F16 => "FP16",
            AttnFmt::E4M3 => "FP8 E4M3",
        }
    }
}

/// The kernel's operand formats: Q, the KV cache, the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Formats {
    pub(super) q: AttnFmt,
    pub(super) kv: AttnFmt,
    pub(super) out: AttnFmt,
}

impl Formats {
    /// The formats of an attention operator (Q = activations, KV = weights, output), if the kernel runs them:
    /// Q BF16 or FP16 with a KV cache in the same format or FP8 E4M3, or FP8 Q with an FP8 cache; output BF16
    /// or FP16.
    pub(super) fn of(q: Precision, kv: Precision, out: Precision) -> Option<Formats> {
        let f = Formats {
            q: AttnFmt::of(q)?,
            kv: AttnFmt::of(kv)?,
            out: AttnFmt::of(out)?,
        };
        let ok = f.out != AttnFmt::E4M3 && (f.kv == f.q || f.kv == AttnFmt::E4M3);
        ok.then_some(f)
    }

    /// Error allowed relative to a row's largest reference magnitude: one rounding of P and of the output to
    /// the tensor-core and output formats (BF16 8 bits of mantissa, FP16 11), FP32 accumulation.
    pub(super) fn tolerance(self) -> f64 {
        if self.q == AttnFmt::Bf16 || self.out == AttnFmt::Bf16 {
            1.6e-2
        } else {
            4e-3
        }
    }
}

/// One configuration of attention.cu and its launch for one shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) head_dim: u64,
    /// Output columns per block.
    pub(super) dv_slice: u64,
    /// Keys per tile.
    pub(super) block_n: u64,
    /// Row warps (16·mt query rows each), key warps, m-tiles per warp.
    pub(super) wr: u64,
    pub(super) wk: u64,
    pub(super) mt: u64,
    pub(super) formats: Formats,
    pub(super) shared_kv: bool,
    pub(super) row_tiles: u64,
    pub(super) splits: u64,
    /// Dynamic shared memory per block, in bytes.
    pub(super) smem_bytes: u64,
}

impl Plan {
    fn rows(&self) -> u64 {
        16 * self.mt * self.wr
    }

    fn slices(&self) -> u64 {
        self.head_dim / self.dv_slice
    }

    pub(super) fn threads(&self) -> u64 {
        32 * self.wr * self.wk
    }

    /// The NVRTC macros of this configuration.
    fn defines(&self) -> Vec<String> {
        [
            ("HEAD_DIM", self.head_dim),
            ("DV_SLICE", self.dv_slice),
            ("BLOCK_N", self.block_n),
            ("WR", self.wr),
            ("WK", self.wk),
            ("MT", self.mt),
            ("Q_FMT", u64::from(self.formats.q.macro_value())),
            ("KV_FMT", u64::from(self.formats.kv.macro_value())),
            ("O_FMT", u64::from(self.formats.out.macro_value())),
            ("SHARED_KV", u64::from(self.shared_kv)),
        ]
        .iter()
        .map(|(name, value)| format!("-D{name}={value}"))
        .collect()
    }

    /// Shared memory of the main loop, the epilogue and the split combine (attention.cu's layout), the largest.
    fn shared_bytes(&self) -> u64 {
        let (d, dv, bn, rows) = (self.head_dim, self.dv_slice, self.block_n, self.rows());
        let staged = self.formats.kv == AttnFmt::E4M3;
        let v_tile = if self.shared_kv { 0 } else { bn * (dv + 8) };
        let tiles = if staged { 1 } else { 2 };
        let mut main = 2 * (rows * (d + 8) + tiles * (bn * (d + 8) + v_tile));
        if staged {
            main += 2 * (bn * d + if self.shared_kv { 0 } else { bn * dv });
        }
        let epilogue = 4 * self.wk * rows * (dv + 2);
        let combine = 4 * self.splits * rows;
        main.max(epilogue).max(combine)
    }

    /// Workspace floats of the split partial outputs and (max, sum) pairs (1 each without splits).
    fn workspace(&self, shape: &AttentionShape) -> (u64, u64) {
        if self.splits == 1 {
            return (1, 1);
        }
        let rows = shape.batch * shape.heads * shape.query_len;
        (
            self.splits * rows * self.head_dim,
            self.splits * self.slices() * rows * 2,
        )
    }

    /// What the record says ran.
    fn describe(&self) -> String {
        let f = self.formats;
        format!(
            "tensor cores (mma.sync m16n8k16, {} operands, FP32 accumulation); Q {}, KV cache {}{}, output {}; \
             {} query rows per block (GQA heads packed), {} key warps, {} keys per tile, cp.async double buffer; \
             {}{}",
            if f.q == AttnFmt::Bf16 { "BF16" } else { "FP16" },
            f.q.name(),
            f.kv.name(),
            if f.kv == AttnFmt::E4M3 {
                " converted in shared memory"
            } else {
                ""
            },
            f.out.name(),
            self.rows(),
            self.wk,
            self.block_n,
            if self.splits > 1 {
                format!("KV split over {} blocks, combined in-kernel", self.splits)
            } else {
                "no KV split".into()
            },
            if self.slices() > 1 {
                format!(", {} output slices of {}", self.slices(), self.dv_slice)
            } else {
                String::new()
            }
        )
    }
}

/// The configuration for `shape` in `formats` on a device with `sm_count` SMs and `max_smem` bytes of shared
/// memory per block (opt-in), or why the kernel cannot run it.
///
/// Few query rows per KV head (decode): one row warp per 16 rows and the rest of 4 warps splitting each key
/// tile, and the keys split over blocks until about [`BLOCKS_PER_SM`] blocks per SM run; many (prefill): 4
/// row warps of 16 rows. Smaller key tiles where shared memory is short.
///
/// # Errors
/// [`BackendError::Unsupported`] naming the head dim or the shared memory that does not fit.
pub(super) fn plan(
    shape: &AttentionShape,
    formats: Formats,
    sm_count: u64,
    max_smem: u64,
) -> Result<Plan, BackendError> {
    let d = shape.head_dim;
    let limit = if shape.shared_kv {
        MAX_SHARED_KV_HEAD_DIM
    } else {
        MAX_HEAD_DIM
    };
    if d == 0 || !d.is_multiple_of(16) || d > limit {
        return Err(BackendError::Unsupported(format!(
            "head dim {d}: the tensor-core attention kernel runs multiples of 16 up to {limit}"
        )));
    }
    let dv_slice = if d <= MAX_HEAD_DIM {
        d
    } else {
        [192, 128, 96, 64, 32, 16]
            .into_iter()
            .find(|s| d.is_multiple_of(*s))
            .unwrap_or(16)
    };
    let group = shape.heads / shape.kv_heads.max(1);
    let rows = group * shape.query_len;
    let wr = rows.div_ceil(16).clamp(1, 4);
    let decode_wk = match wr {
        1 => 4,
        2 => 2,
        _ => 1,
    };
    // Candidates, widest first: (key warps, keys per tile).
    let candidates: [(u64, u64); 3] = if decode_wk > 1 {
        [(decode_wk, 64), (decode_wk.min(2), 32), (1, 16)]
    } else if d <= 128 {
        [(1, 64), (1, 32), (1, 16)]
    } else {
        [(1, 32), (1, 16), (1, 16)]
    };
    for (wk, block_n) in candidates {
        let mut p = Plan {
            head_dim: d,
            dv_slice,
            block_n,
            wr,
            wk,
            mt: 1,
            formats,
            shared_kv: shape.shared_kv,
            row_tiles: rows.div_ceil(16 * wr),
            splits: 1,
            smem_bytes: 0,
        };
        p.splits = splits(&p, shape, sm_count);
        p.smem_bytes = p.shared_bytes();
        // 1 KiB of margin for the kernel's static shared memory.
        if p.smem_bytes + 1024 <= max_smem {
            return Ok(p);
        }
    }
    Err(BackendError::Unsupported(format!(
        "head dim {d}: the tensor-core attention kernel needs more shared memory than the {max_smem} bytes a \
         block may use"
    )))
}

/// Blocks per (sequence, KV head) along the keys: 1 when the other dimensions fill the GPU, else enough for
/// about [`BLOCKS_PER_SM`] blocks per SM, each with at least [`MIN_TILES_PER_SPLIT`] tiles.
fn splits(p: &Plan, shape: &AttentionShape, sm_count: u64) -> u64 {
    let base = p.row_tiles * p.slices() * shape.batch * shape.kv_heads;
    let target = BLOCKS_PER_SM * sm_count.max(1);
    if base >= target {
        return 1;
    }
    let span = match shape.window {
        Some(w) if shape.causal && shape.query_len == 1 => w.min(shape.kv_len),
        _ => shape.kv_len,
    };
    target
        .div_ceil(base)
        .min(span / (MIN_TILES_PER_SPLIT * p.block_n))
        .max(1)
}

impl CudaBackend {
    /// The largest dynamic shared memory a block may opt into, in bytes.
    fn max_block_smem(&self) -> u64 {
        use cudarc::driver::sys::CUdevice_attribute as A;
        let optin = self
            .ctx
            .attribute(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .unwrap_or(48 << 10);
        u64::try_from(optin).unwrap_or(48 << 10)
    }

    /// Whether the tensor-core kernel can run `shape` in `formats` here: mma.sync with BF16 needs sm_80.
    pub(super) fn attention_plan(
        &self,
        shape: &AttentionShape,
        formats: Formats,
    ) -> Result<Plan, BackendError> {
        if self.cc.0 < 8 {
            return Err(BackendError::Unsupported(format!(
                "the tensor-core attention kernel needs sm_80 (BF16 mma.sync), not {}",
                self.arch()
            )));
        }
        plan(shape, formats, u64::from(self.sm_count), self.max_block_smem())
    }

    /// Fused attention of `op`: the tensor-core kernel where it runs the shape and formats, else the scalar
    /// kernel for one FP32, BF16 or FP16 format.
    ///
    /// # Errors
    /// [`BackendError::Unsupported`] naming the operator, format and architecture when neither kernel runs it;
    /// the verification's and CUDA's errors.
    pub(super) fn attention(
        &self,
        op: &Operator,
        shape: &AttentionShape,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let p = op.precisions;
        let mma = Formats::of(p.activation, p.weight, p.output).map(|f| (f, self.attention_plan(shape, f)));
        match mma {
            Some((_, Ok(plan))) => return self.attention_mma(shape, &plan, seed),
            // Formats only the tensor-core kernel runs (an FP8 cache, mixed formats): say why it cannot.
            Some((f, Err(BackendError::Unsupported(why)))) if f.kv != f.q || f.out != f.q => {
                return Err(BackendError::Unsupported(format!(
                    "{}: {} Q, {} KV cache, {} output: {why} on {} ({})",
                    op.name,
                    p.activation,
                    p.weight,
                    p.output,
                    self.arch(),
                    self.name
                )));
            }
            Some((_, Err(e))) if !matches!(e, BackendError::Unsupported(_)) => return Err(e),
            _ => {}
        }
        let format = self.step_format(op)?;
        if shape.head_dim > ATTENTION_MAX_HEAD_DIM as u64 {
            return Err(BackendError::Unsupported(format!(
                "{}: head dim {} is over the scalar attention kernel's {ATTENTION_MAX_HEAD_DIM} on {} ({})",
                op.name,
                shape.head_dim,
                self.arch(),
                self.name
            )));
        }
        self.attention_scalar(format, shape, seed)
    }

    /// Fused attention on the CUDA cores (step_ops.cu `attention_*`, one block per query row) over a contiguous KV
    /// cache: Q `[B, H, Sq, d]`, K and V `[B, kv_heads, Skv, d]` (one
    /// tensor with `shared_kv`), O `[B, H, Sq, d]`; query head h reads KV head h / (H / kv_heads).
    fn attention_scalar(
        &self,
        format: Format,
        shape: &AttentionShape,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let (b, h, kvh) = (
            to_usize(shape.batch)?,
            to_usize(shape.heads)?,
            to_usize(shape.kv_heads)?,
        );
        let (sq, skv, d) = (
            to_usize(shape.query_len)?,
            to_usize(shape.kv_len)?,
            to_usize(shape.head_dim)?,
        );
        let rows = len_of(len_of(b, h)?, sq)?;
        let kv_elements = len_of(len_of(len_of(b, kvh)?, skv)?, d)?;
        let tile = attention_tile(d);
        let cfg = LaunchConfig {
            grid_dim: (grid_blocks(rows)?, 1, 1),
            block_dim: (ATTENTION_THREADS, 1, 1),
            shared_mem_bytes: u32::try_from(4 * (d + 2 * tile * d + tile)).unwrap_or(u32::MAX),
        };
        let window = shape.window.map_or(0, |w| i32::try_from(w).unwrap_or(i32::MAX));
        let scalars = vec![
            Scalar::Int(to_i32(h)?),
            Scalar::Int(to_i32(kvh)?),
            Scalar::Int(to_i32(sq)?),
            Scalar::Int(to_i32(skv)?),
            Scalar::Int(to_i32(d)?),
            Scalar::Int(i32::from(shape.causal)),
            Scalar::Int(window),
            Scalar::Float((1.0 / (d as f64).sqrt()) as f32),
            Scalar::Int(to_i32(tile)?),
        ];
        let q_elements = len_of(rows, d)?;
        let AttentionInputs { q, k, v } = draw_stoppable::<_, BackendError>(|| {
            AttentionInputs::new(q_elements, kv_elements, shape.shared_kv, seed)
        })?;
        let encode = |values: Vec<f32>| format.elem.encode(&values);
        let inputs = AttentionInputs {
            q: encode(q),
            k: encode(k),
            v: v.map(encode),
        };
        let q_device = Rc::new(inputs.q.upload(&self.stream)?);
        let k_device = Rc::new(inputs.k.upload(&self.stream)?);
        // MLA's shared K/V: the one buffer is passed as both K and V.
        let v_device = match &inputs.v {
            Some(v) => Rc::new(v.upload(&self.stream)?),
            None => Rc::clone(&k_device),
        };
        let out = format.elem.zeros(&self.stream, rows * d)?;
        // SAFETY: one block per (sequence, head, query) row, B·H·Sq of them: each reads d elements of Q, the
        // keys lo..hi < Skv of its KV head in K and V (B·kv_heads·Skv·d elements each), writes d output elements,
        // and uses 4·(d + 2·tile·d + tile) bytes of dynamic shared memory, the size set in `cfg`.
        let launch = unsafe {
            self.step_launch(
                format.kernel("attention"),
                cfg,
                vec![q_device, k_device, v_device],
                out,
                scalars,
            )?
        };
        let access = format!(
            "block per (sequence, head, query), K/V tiles of {tile} keys staged in shared memory with {}, online \
             softmax, FP32 accumulators",
            format.loads(d)
        );
        self.verified(launch, access, |outputs| {
            let got = &outputs[0];
            inputs.check(shape, seed, got, format.tolerance)
        })
    }

    /// Fused attention on the tensor cores: Q `[B, H, Sq, d]`, K and V `[B, kv_heads, Skv, d]` (one tensor with
    /// `shared_kv`), O `[B, H, Sq, d]`, run once and checked against the `f64` reference of the stored inputs.
    pub(super) fn attention_mma(
        &self,
        shape: &AttentionShape,
        plan: &Plan,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let f = plan.formats;
        let [b, h, kvh, sq, skv] = [
            shape.batch,
            shape.heads,
            shape.kv_heads,
            shape.query_len,
            shape.kv_len,
        ]
        .map(to_usize);
        let (b, h, kvh, sq, skv, d) = (b?, h?, kvh?, sq?, skv?, to_usize(shape.head_dim)?);
        let rows = len_of(len_of(b, h)?, sq)?;
        let kv_elements = len_of(len_of(len_of(b, kvh)?, skv)?, d)?;
        // Seeded inputs written on the device; the reference reads their stored values on the rows it samples.
        let (q_in, q_device) = self.seeded_input(f.q.elem(), seed, len_of(rows, d)?)?;
        let (k_in, k_device) = self.seeded_input(f.kv.elem(), seed.wrapping_add(1), kv_elements)?;
        let k_device = Rc::new(k_device);
        let (v_in, v_device) = if shape.shared_kv {
            (None, Rc::clone(&k_device))
        } else {
            let (v_in, v) = self.seeded_input(f.kv.elem(), seed.wrapping_add(2), kv_elements)?;
            (Some(v_in), Rc::new(v))
        };
        let inputs = AttentionInputs {
            q: q_in,
            k: k_in,
            v: v_in,
        };
        let (ws_o, ws_ml) = plan.workspace(shape);
        let counters = to_usize(shape.batch * shape.kv_heads * plan.row_tiles * plan.slices())?;
        let outputs = vec![
            Elem::F32.zeros(&self.stream, to_usize(ws_o)?)?,
            Elem::F32.zeros(&self.stream, to_usize(ws_ml)?)?,
            Elem::I32.zeros(&self.stream, counters)?,
            f.out.elem().zeros(&self.stream, rows * d)?,
        ];
        let key = format!("attention {}", plan.defines().join(" "));
        let module = self.variant_module(&key, ATTENTION_SRC, plan.defines())?;
        let function = module
            .load_function("attention_mma")
            .map_err(|e| cuda_err("load attention_mma", e))?;
        let smem = u32::try_from(plan.smem_bytes).unwrap_or(u32::MAX);
        function
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                i32::try_from(smem).unwrap_or(i32::MAX),
            )
            .map_err(|e| cuda_err("attention shared memory", e))?;
        let cfg = LaunchConfig {
            grid_dim: (
                grid_blocks(to_usize(plan.row_tiles * plan.slices() * plan.splits)?)?,
                grid_blocks(b * kvh)?,
                1,
            ),
            block_dim: (u32::try_from(plan.threads()).unwrap_or(128), 1, 1),
            shared_mem_bytes: smem,
        };
        let window = shape.window.map_or(0, |w| i32::try_from(w).unwrap_or(i32::MAX));
        let scale_log2 = std::f64::consts::LOG2_E / (d as f64).sqrt();
        let scalars = vec![
            Scalar::Int(to_i32(h)?),
            Scalar::Int(to_i32(kvh)?),
            Scalar::Int(to_i32(sq)?),
            Scalar::Int(to_i32(skv)?),
            Scalar::Int(i32::from(shape.causal)),
            Scalar::Int(window),
            Scalar::Float(scale_log2 as f32),
            // The per-tensor scales of FP8 Q, K and V are 1 here (the stored values are the real ones).
            Scalar::Float(1.0),
            Scalar::Int(to_i32(to_usize(plan.splits)?)?),
            Scalar::Int(to_i32(to_usize(plan.row_tiles)?)?),
        ];
        let launch = Launch {
            name: "attention_mma".into(),
            function,
            cfg,
            inputs: vec![Rc::new(q_device), k_device, v_device],
            outputs,
            scalars,
        };
        let tolerance = f.tolerance();
        // SAFETY (enqueued by `verified`): grid (row tiles × slices × splits, B·kv_heads) of plan.threads()
        // threads; each block reads its rows of Q (B·H·Sq·d elements), its KV head's keys < Skv of K and V
        // (B·kv_heads·Skv·d each), writes its rows' output columns (B·H·Sq·d), the workspace floats `workspace`
        // sized above and one counter of B·kv_heads·row_tiles·slices, with plan.smem_bytes of dynamic shared
        // memory (the attribute set above).
        self.verified(launch, plan.describe(), |outputs| {
            inputs.check(shape, seed, &outputs[3], tolerance)
        })
    }
}

/// Keys per attention tile for head dim `d`: as many as fit [`ATTENTION_SHARED_FLOATS`] with Q, the K and V
/// tiles and the scores, at most [`ATTENTION_MAX_TILE`].
fn attention_tile(d: usize) -> usize {
    (ATTENTION_SHARED_FLOATS.saturating_sub(d) / (2 * d + 1)).clamp(1, ATTENTION_MAX_TILE)
}

/// Bytes of the buffers of the tensor-core kernel for `shape` in `formats`: Q, K, V, the output, and a bound on
/// the split workspace (FP32 partial rows of at most [`BLOCKS_PER_SM`] blocks per SM on 256 SMs, more than any
/// GPU has, of 64 rows each, plus one partial per output element).
pub(super) fn required_bytes(shape: &AttentionShape, formats: Formats) -> u128 {
    let q = u128::from(shape.batch * shape.heads * shape.query_len * shape.head_dim);
    let kv = attention_elements(shape) - 2 * q;
    let workspace = 4 * (q + u128::from(BLOCKS_PER_SM * 256 * 64 * shape.head_dim));
    q * u128::from(formats.q.bytes() + formats.out.bytes()) + kv * u128::from(formats.kv.bytes()) + workspace
}

#[cfg(test)]
mod tests;
