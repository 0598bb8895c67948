//! The CUDA backend's kernels for the non-GEMM operators of a model step (`step_ops.cu`, compiled with NVRTC
//! once per process): RMSNorm, LayerNorm and softmax rows, SiLU·mul, GELU, residual add, RoPE, embedding gather,
//! KV-cache write and read, and fused attention with GQA over a contiguous KV cache (causal masking, sliding
//! windows, any query length, MLA's shared K/V).
//!
//! Every operand of an operator is in one format, FP32, BF16 or FP16, and all arithmetic is FP32. Each kernel
//! runs on seeded inputs, its output is checked on sampled rows against an `f64` reference computed from the
//! stored inputs (`step_reference`, shared with the CPU backend), and only then is it timed with the GEMMs'
//! protocol (`timing`: L2 flush before every sample, CUDA events around the launch, warm-up, NVML).
//! [`CudaBackend::prepare_step_operator`] stops before the timing: its [`PreparedKernel`] owns the launch and
//! its buffers and enqueues one run, for a whole step timed end to end (`sequence`). Run-time
//! quantization, FP8/FP4/INT formats, mixed operand formats and the unfused QKᵀ and P·V stages are
//! `unsupported`, naming the operator, the format and the architecture: nothing is measured through a
//! stand-in format.

use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaStream, LaunchConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use roofline_core::ops::{AttentionPart, KernelShape, RowKind};
use roofline_core::{Operator, Precision};

use super::attention::{self, Formats};
use super::buffers::{DeviceBuf, Elem, HostBuf};
use super::inputs::SeededInput;
use super::launch::{Format, Launch, Scalar, Verified, grid_blocks, len_of, to_i32};
use super::{CudaBackend, to_usize};
use crate::backend::step_reference::{
    EPS, MIN_TABLE_ROWS, RowInputs, Stored, attention_elements, check_close, check_sum, checked_rows, seed_of,
};
use crate::backend::{BackendError, Measured};
use crate::protocol::{SampleStats, TelemetrySummary, check_interruption, draw_stoppable, measurement};

/// The library label of every record of this module.
pub(super) const LIBRARY: &str = "NVRTC (roofline step kernels)";
/// Most threads of a block-per-row kernel (`__launch_bounds__(1024)` in step_ops.cu).
const ROW_MAX_THREADS: usize = 1024;

/// Bytes of the device buffers `op` needs (inputs, output, tables) at its operands' element size.
pub(super) fn required_bytes(op: &Operator) -> u64 {
    let p = op.precisions;
    if let Some(KernelShape::Attention { shape, .. }) = op.kernel
        && let Some(formats) = Formats::of(p.activation, p.weight, p.output)
    {
        return u64::try_from(attention::required_bytes(&shape, formats)).unwrap_or(u64::MAX);
    }
    let element = Format::of(p.activation).map_or(4, |f| f.bytes) as u128;
    let elements: u128 = match op.kernel {
        Some(KernelShape::Rows { rows, width, .. }) => {
            3 * u128::from(rows) * u128::from(width) + 2 * u128::from(width)
        }
        Some(KernelShape::Gather { rows, width }) => {
            (u128::from(rows).max(MIN_TABLE_ROWS as u128) + u128::from(rows)) * u128::from(width)
                + u128::from(rows)
        }
        Some(KernelShape::KvWrite { tokens, elements }) => 2 * u128::from(tokens) * u128::from(elements),
        Some(KernelShape::KvRead { tokens, elements }) => u128::from(tokens) * u128::from(elements),
        Some(KernelShape::Attention { shape, .. }) => attention_elements(&shape),
        _ => 0,
    };
    u64::try_from(elements * element).unwrap_or(u64::MAX)
}

/// A step operator prepared as [`CudaBackend::measure_step_operator`] measures it: inputs uploaded, output
/// verified once, and what its record says.
pub(super) struct PreparedKernel {
    launch: Launch,
    /// The operator it runs.
    op: Operator,
    precision: Precision,
    /// The record's kernel text: the function, its access pattern and the kernel shape.
    label: String,
}

impl PreparedKernel {
    /// Enqueues one run on `stream`.
    pub(super) fn enqueue(&mut self, stream: &Arc<CudaStream>) -> Result<(), BackendError> {
        self.launch.enqueue(stream)
    }

    /// The record of this kernel timed with `stats`.
    fn measured(self, backend: &CudaBackend, stats: &SampleStats, telemetry: TelemetrySummary) -> Measured {
        Measured {
            op: self.op,
            precision: self.precision,
            label_suffix: String::new(),
            measurement: measurement(
                backend.run_info(LIBRARY.into(), self.label, true, None),
                stats,
                telemetry,
            ),
        }
    }
}

impl CudaBackend {
    /// Measures one non-GEMM operator of a model step with the NVRTC step kernels.
    ///
    /// # Errors
    /// [`BackendError::Unsupported`] for operators without a kernel description, quantization, unfused
    /// attention stages, head dims over 1024 and operand formats other than one of FP32, BF16 and FP16;
    /// [`BackendError::Verification`] when the output differs from the reference; CUDA failures and the
    /// protocol's interruptions.
    pub(super) fn measure_step_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        let mut kernel = self.prepare_step_operator(op)?;
        let (stats, telemetry) = self.protocol(&mut || kernel.enqueue(&self.stream))?;
        Ok(kernel.measured(self, &stats, telemetry))
    }

    /// Prepares one non-GEMM operator of a model step: seeded inputs, one run checked against the reference.
    ///
    /// # Errors
    /// As [`CudaBackend::measure_step_operator`], without the protocol's.
    pub(super) fn prepare_step_operator(&self, op: &Operator) -> Result<PreparedKernel, BackendError> {
        let unsupported = |why: String| {
            Err(BackendError::Unsupported(format!(
                "{} ({}) in {}: {why} on {} ({})",
                op.name,
                op.kind.name(),
                op.precisions.compute(),
                self.arch(),
                self.name
            )))
        };
        let Some(kernel) = op.kernel else {
            return unsupported("no kernel description to run".into());
        };
        if let KernelShape::Attention { part, .. } = kernel
            && part != AttentionPart::Fused
        {
            return unsupported("the CUDA step kernels run fused attention only, not unfused stages".into());
        }
        let seed = seed_of(&kernel);
        // Before the inputs and the verification run: a stopped point goes no further.
        check_interruption::<BackendError>()?;
        let p = op.precisions;
        let verified = match kernel {
            KernelShape::Rows {
                rows,
                width,
                kind: kind @ (RowKind::Quantize | RowKind::AbsMax),
            } => self.quantize(op, kind, to_usize(rows)?, to_usize(width)?, seed)?,
            KernelShape::KvWrite { tokens, elements } if p.weight != p.activation => {
                self.kv_write_quantized(op, len_of(to_usize(tokens)?, to_usize(elements)?)?, seed)?
            }
            KernelShape::Attention { shape, .. } => self.attention(op, &shape, seed)?,
            KernelShape::Rows { rows, width, kind } => self.rows_op(
                self.step_format(op)?,
                kind,
                to_usize(rows)?,
                to_usize(width)?,
                seed,
            )?,
            KernelShape::Gather { rows, width } => {
                self.gather(self.step_format(op)?, to_usize(rows)?, to_usize(width)?, seed)?
            }
            KernelShape::KvWrite { tokens, elements } => self.kv_write(
                self.step_format(op)?,
                to_usize(tokens)?,
                to_usize(elements)?,
                seed,
            )?,
            KernelShape::KvRead { tokens, elements } => {
                let n = len_of(to_usize(tokens)?, to_usize(elements)?)?;
                self.kv_read(self.step_format(op)?, n, seed)?
            }
            _ => return unsupported("no CUDA step kernel for this operator yet".into()),
        };
        let label = format!(
            "{} ({}), {}",
            verified.launch.name,
            verified.access,
            kernel.label()
        );
        Ok(PreparedKernel {
            launch: verified.launch,
            op: op.clone(),
            precision: p.activation,
            label,
        })
    }

    /// `n` seeded values stored in `elem`, written on the device: the host view the reference reads, and the
    /// buffer.
    fn random_input(
        &self,
        elem: Elem,
        seed: u64,
        n: usize,
    ) -> Result<(SeededInput, Rc<DeviceBuf>), BackendError> {
        let (host, device) = self.seeded_input(elem, seed, n)?;
        Ok((host, Rc::new(device)))
    }

    /// A row-wise operator over `rows` × `width`.
    fn rows_op(
        &self,
        format: Format,
        kind: RowKind,
        rows: usize,
        width: usize,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let n = len_of(rows, width)?;
        let width_arg = Scalar::Int(to_i32(width)?);
        let n_arg = Scalar::Size(n as u64);
        let (cfg, scalars, access) = match kind {
            RowKind::RmsNorm | RowKind::LayerNorm | RowKind::Softmax => {
                let scalars = if kind == RowKind::Softmax {
                    vec![width_arg]
                } else {
                    vec![width_arg, Scalar::Float(EPS as f32)]
                };
                let access = format!("block per row, {}, FP32 block reductions", format.loads(width));
                (row_config(rows, format.chunks(width))?, scalars, access)
            }
            RowKind::SiluMul | RowKind::Gelu | RowKind::ResidualAdd => (
                self.grid_config(format.chunks(n)),
                vec![n_arg],
                format!("grid-stride, {}", format.loads(n)),
            ),
            RowKind::Rope => {
                let chunks = if format.packed(width) { format.chunks(n) } else { n };
                let access = format!("grid-stride, {}, FP32 cos/sin table", format.loads(width));
                (self.grid_config(chunks), vec![width_arg, n_arg], access)
            }
            _ => {
                return Err(BackendError::Unsupported(format!(
                    "{} rows in {}: no CUDA step kernel on {} ({})",
                    kind.name(),
                    format.precision,
                    self.arch(),
                    self.name
                )));
            }
        };
        let RowInputs {
            x,
            second,
            second_per_row,
            beta,
        } = draw_stoppable::<_, BackendError>(|| RowInputs::new(kind, rows, width, seed))?;
        let encode = |values: Vec<f32>| format.elem.encode(&values);
        let inputs = RowInputs {
            x: encode(x),
            // RoPE's cos/sin table stays FP32 in every format.
            second: second.map(|values| {
                if kind == RowKind::Rope {
                    HostBuf::F32(values)
                } else {
                    encode(values)
                }
            }),
            second_per_row,
            beta: beta.map(encode),
        };
        let devices = std::iter::once(&inputs.x)
            .chain(&inputs.second)
            .chain(&inputs.beta)
            .map(|host| host.upload(&self.stream).map(Rc::new))
            .collect::<Result<Vec<_>, _>>()?;
        let out = format.elem.zeros(&self.stream, n)?;
        // SAFETY: the row kernels read rows·width elements of x (and of a full second operand), width of γ and
        // β, width/2·2 FP32 cos/sin values, and write rows·width output elements, allocated just above; the
        // grid is one block per row, or the grid-stride kernels get n = rows·width.
        let launch = unsafe { self.step_launch(format.kernel(kind.name()), cfg, devices, out, scalars)? };
        self.verified(launch, access, |outputs| {
            let got = &outputs[0];
            inputs.check(kind, rows, width, seed, got, format.tolerance)
        })
    }

    /// An embedding gather of `rows` distinct rows of `width` from a table of at least [`MIN_TABLE_ROWS`].
    fn gather(&self, format: Format, rows: usize, width: usize, seed: u64) -> Result<Verified, BackendError> {
        let table_rows = rows.max(MIN_TABLE_ROWS);
        let cfg = row_config(rows, format.chunks(width))?;
        let width_arg = Scalar::Int(to_i32(width)?);
        let (table, table_device) = self.random_input(format.elem, seed, len_of(table_rows, width)?)?;
        // Distinct rows, so that every gathered row comes from DRAM.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ids = rand::seq::index::sample(&mut rng, table_rows, rows)
            .into_iter()
            .map(i32::try_from)
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|_| BackendError::InvalidInput(format!("a table of {table_rows} rows is too large")))?;
        let ids_device = Rc::new(HostBuf::I32(ids.clone()).upload(&self.stream)?);
        let out = format.elem.zeros(&self.stream, rows * width)?;
        // SAFETY: gather reads `rows` ids (one per block), each below table_rows, `width` elements of each
        // chosen table row, and writes rows·width output elements.
        let launch = unsafe {
            self.step_launch(
                format.kernel("gather"),
                cfg,
                vec![table_device, ids_device],
                out,
                vec![width_arg],
            )?
        };
        let access = format!(
            "block per gathered row, {}, distinct rows of a {table_rows}-row table",
            format.loads(width)
        );
        self.verified(launch, access, |outputs| {
            let got = &outputs[0];
            for row in checked_rows(rows, seed) {
                let id = usize::try_from(ids[row]).unwrap_or(0);
                let expected = table.values(id * width, width);
                check_close("gather", row, &got.values(row * width, width), &expected, 0.0)?;
            }
            Ok(())
        })
    }

    /// A KV-cache write: `tokens` × `elements` new K and V elements copied into the cache.
    fn kv_write(
        &self,
        format: Format,
        tokens: usize,
        elements: usize,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let n = len_of(tokens, elements)?;
        let (source, source_device) = self.random_input(format.elem, seed, n)?;
        let cache = format.elem.zeros(&self.stream, n)?;
        // SAFETY: copy reads n source elements and writes n cache elements.
        let launch = unsafe {
            self.step_launch(
                format.kernel("copy"),
                self.grid_config(format.chunks(n)),
                vec![source_device],
                cache,
                vec![Scalar::Size(n as u64)],
            )?
        };
        let access = format!("grid-stride copy, {}", format.loads(n));
        self.verified(launch, access, |outputs| {
            let got = &outputs[0];
            for token in checked_rows(tokens, seed) {
                let start = token * elements;
                check_close(
                    "kv_write",
                    token,
                    &got.values(start, elements),
                    &source.values(start, elements),
                    0.0,
                )?;
            }
            Ok(())
        })
    }

    /// A KV-cache read: `n` cached elements streamed and summed per block (the host checks the total).
    fn kv_read(&self, format: Format, n: usize, seed: u64) -> Result<Verified, BackendError> {
        let cfg = self.grid_config(format.chunks(n));
        let blocks = cfg.grid_dim.0 as usize;
        let (cache, cache_device) = self.random_input(format.elem, seed, n)?;
        let partial = Elem::F32.zeros(&self.stream, blocks)?;
        // SAFETY: kv_read reads n cache elements and writes one FP32 partial sum per block (`blocks` of them).
        let launch = unsafe {
            self.step_launch(
                format.kernel("kv_read"),
                cfg,
                vec![cache_device],
                partial,
                vec![Scalar::Size(n as u64)],
            )?
        };
        let access = format!("grid-stride stream, {}, FP32 block sums", format.loads(n));
        self.verified(launch, access, |outputs| {
            let got = &outputs[0];
            check_sum(got.values(0, blocks).iter().sum(), &cache, n)
        })
    }
}

/// A block-per-row launch: one block per row, one thread per chunk of the row (a multiple of 32, at most
/// [`ROW_MAX_THREADS`]; the kernel loops over the rest).
fn row_config(rows: usize, chunks_per_row: usize) -> Result<LaunchConfig, BackendError> {
    let threads = chunks_per_row.next_multiple_of(32).clamp(32, ROW_MAX_THREADS);
    Ok(LaunchConfig {
        grid_dim: (grid_blocks(rows)?, 1, 1),
        block_dim: (u32::try_from(threads).unwrap_or(32), 1, 1),
        shared_mem_bytes: 0,
    })
}

impl Stored for HostBuf {
    fn at(&self, i: usize) -> f64 {
        self.get(i)
    }
}

#[cfg(test)]
mod tests;
