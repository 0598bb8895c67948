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

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use roofline_core::ops::{AttentionPart, KernelShape, RowKind};
use roofline_core::{Operator, Precision};

use super::attention::{self, Formats};
use super::buffers::{DeviceBuf, Elem, HostBuf};
use super::inputs::SeededInput;
use super::nvrtc::cached;
use super::{CudaBackend, cuda_err, to_usize};
use crate::backend::step_reference::{
    EPS, MIN_TABLE_ROWS, RowInputs, Stored, attention_elements, check_close, check_sum, checked_rows, seed_of,
};
use crate::backend::{BackendError, Measured};
use crate::protocol::{SampleStats, TelemetrySummary, check_interruption, measurement};

/// CUDA C source of the step kernels.
const STEP_KERNELS_SRC: &str = include_str!("step_ops.cu");
/// The library label of every record of this module.
pub(super) const LIBRARY: &str = "NVRTC (roofline step kernels)";
/// Most threads of a block-per-row kernel (`__launch_bounds__(1024)` in step_ops.cu).
const ROW_MAX_THREADS: usize = 1024;
/// Threads of a grid-stride kernel (`__launch_bounds__(256)`).
const GRID_THREADS: usize = 256;
/// Most blocks per SM of a grid-stride launch (the loop covers the rest).
const GRID_BLOCKS_PER_SM: usize = 16;
/// Largest grid, in blocks.
const MAX_GRID_BLOCKS: usize = (1 << 31) - 1;

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

/// The one element format of a step operator's operands.
#[derive(Debug, Clone, Copy)]
pub(super) struct Format {
    precision: Precision,
    pub(super) elem: Elem,
    /// Kernel-name suffix in step_ops.cu.
    suffix: &'static str,
    /// Bytes per element.
    bytes: usize,
    /// Error allowed relative to a row's largest reference magnitude (at least 1): FP32 arithmetic and one
    /// rounding to the format.
    pub(super) tolerance: f64,
}

impl Format {
    pub(super) fn of(precision: Precision) -> Option<Format> {
        let (elem, suffix, bytes, tolerance) = match precision {
            Precision::Fp32 => (Elem::F32, "f32", 4, 1e-4),
            Precision::Bf16 => (Elem::Bf16, "bf16", 2, 1.6e-2),
            Precision::Fp16 => (Elem::F16, "f16", 2, 4e-3),
            _ => return None,
        };
        Some(Format {
            precision,
            elem,
            suffix,
            bytes,
            tolerance,
        })
    }

    /// Whether the kernels move `len` elements in 16-byte packs (they do when the pack width divides `len`).
    fn packed(self, len: usize) -> bool {
        len.is_multiple_of(16 / self.bytes)
    }

    /// Work items of a kernel over `len` elements: packs, or elements.
    fn chunks(self, len: usize) -> usize {
        if self.packed(len) {
            len / (16 / self.bytes)
        } else {
            len
        }
    }

    pub(super) fn loads(self, len: usize) -> &'static str {
        if self.packed(len) {
            "16-byte loads"
        } else {
            "element loads"
        }
    }

    /// The kernel-name suffix, e.g. `bf16`.
    pub(super) fn suffix(self) -> &'static str {
        self.suffix
    }

    /// The kernel `stem` in this format, e.g. `rms_norm_bf16`.
    pub(super) fn kernel(self, stem: &str) -> String {
        format!("{stem}_{}", self.suffix)
    }
}

/// A launch checked once against the reference, and its access pattern for the record.
pub(super) struct Verified {
    launch: Launch,
    access: String,
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

/// A scalar kernel argument.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scalar {
    Int(i32),
    Size(u64),
    Float(f32),
}

/// One launch of a step kernel with the buffers it owns: the arguments are the inputs (shared, so that one
/// buffer can be passed twice, e.g. MLA's shared K/V), the outputs, then the scalars.
pub(super) struct Launch {
    pub(super) name: String,
    pub(super) function: CudaFunction,
    pub(super) cfg: LaunchConfig,
    pub(super) inputs: Vec<Rc<DeviceBuf>>,
    /// Written by the kernel, in argument order after the inputs.
    pub(super) outputs: Vec<DeviceBuf>,
    pub(super) scalars: Vec<Scalar>,
}

impl Launch {
    /// Enqueues the kernel once on `stream`.
    fn enqueue(&mut self, stream: &Arc<CudaStream>) -> Result<(), BackendError> {
        let mut pointers = Vec::with_capacity(self.inputs.len() + self.outputs.len());
        let mut guards = Vec::with_capacity(self.inputs.len() + self.outputs.len());
        for input in &self.inputs {
            let (pointer, guard) = input.ptr(stream);
            pointers.push(pointer);
            guards.push(guard);
        }
        for output in &mut self.outputs {
            let (pointer, guard) = output.ptr_mut(stream);
            pointers.push(pointer);
            guards.push(guard);
        }
        let mut builder = stream.launch_builder(&self.function);
        for pointer in &pointers {
            builder.arg(pointer);
        }
        for scalar in &self.scalars {
            match scalar {
                Scalar::Int(v) => builder.arg(v),
                Scalar::Size(v) => builder.arg(v),
                Scalar::Float(v) => builder.arg(v),
            };
        }
        // SAFETY: `step_launch`'s contract: the kernel accesses only the buffers passed here, which `self` owns;
        // the guards are dropped once the launch is enqueued.
        unsafe { builder.launch(self.cfg) }.map_err(|e| cuda_err("step kernel launch", e))?;
        drop(guards);
        Ok(())
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

    /// The one format of `op`'s operands, or why the step kernels cannot run them.
    pub(super) fn step_format(&self, op: &Operator) -> Result<Format, BackendError> {
        let p = op.precisions;
        let format = |role: &str, precision: Precision| {
            Format::of(precision).ok_or_else(|| {
                BackendError::Unsupported(format!(
                    "{} {role} in {precision}: no CUDA step kernel on {} ({}); the step kernels run FP32, BF16 \
                     and FP16 operands with FP32 arithmetic, and no other format stands in",
                    op.name,
                    self.arch(),
                    self.name
                ))
            })
        };
        let weight = format("weights (table, KV cache)", p.weight)?;
        let activation = format("activations", p.activation)?;
        let output = format("output", p.output)?;
        if weight.precision != activation.precision || activation.precision != output.precision {
            return Err(BackendError::Unsupported(format!(
                "{}: {} weights (table, KV cache), {} activations and {} output: the CUDA step kernels on {} ({}) \
                 run one operand format per operator",
                op.name,
                p.weight,
                p.activation,
                p.output,
                self.arch(),
                self.name
            )));
        }
        Ok(activation)
    }

    /// A launch of the step kernel `name` of step_ops.cu.
    ///
    /// # Safety
    /// The kernel launched with `cfg`, `inputs`, `out` and `scalars` must access only elements inside those
    /// buffers.
    pub(super) unsafe fn step_launch(
        &self,
        name: String,
        cfg: LaunchConfig,
        inputs: Vec<Rc<DeviceBuf>>,
        out: DeviceBuf,
        scalars: Vec<Scalar>,
    ) -> Result<Launch, BackendError> {
        let module = cached(&self.step_module, || self.load_module(STEP_KERNELS_SRC))?;
        let function = module
            .load_function(&name)
            .map_err(|e| cuda_err(&format!("load {name}"), e))?;
        Ok(Launch {
            name,
            function,
            cfg,
            inputs,
            outputs: vec![out],
            scalars,
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

    /// A grid-stride launch over `chunks` work items (the loop covers what the grid does not).
    pub(super) fn grid_config(&self, chunks: usize) -> LaunchConfig {
        let max_blocks = GRID_BLOCKS_PER_SM * self.sm_count.max(1) as usize;
        let blocks = chunks.div_ceil(GRID_THREADS).clamp(1, max_blocks);
        LaunchConfig {
            grid_dim: (u32::try_from(blocks).unwrap_or(u32::MAX), 1, 1),
            block_dim: (GRID_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Runs `launch` once and checks its outputs (downloaded, in argument order) with `check`; `access`
    /// describes the kernel's access pattern for the record.
    pub(super) fn verified(
        &self,
        mut launch: Launch,
        access: String,
        check: impl FnOnce(&[HostBuf]) -> Result<(), BackendError>,
    ) -> Result<Verified, BackendError> {
        launch.enqueue(&self.stream)?;
        let outputs = launch
            .outputs
            .iter()
            .map(|out| out.download(&self.stream))
            .collect::<Result<Vec<_>, _>>()?;
        check(&outputs)?;
        Ok(Verified { launch, access })
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
        } = RowInputs::new(kind, rows, width, seed);
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

/// `blocks` as a grid size.
pub(super) fn grid_blocks(blocks: usize) -> Result<u32, BackendError> {
    u32::try_from(blocks)
        .ok()
        .filter(|_| blocks <= MAX_GRID_BLOCKS)
        .ok_or_else(|| {
            BackendError::InvalidInput(format!(
                "{blocks} blocks exceed the CUDA grid limit of {MAX_GRID_BLOCKS}"
            ))
        })
}

pub(super) fn to_i32(v: usize) -> Result<i32, BackendError> {
    i32::try_from(v)
        .map_err(|_| BackendError::InvalidInput(format!("{v} is too large for a kernel argument")))
}

/// `a · b` elements, or an error when the product overflows.
pub(super) fn len_of(a: usize, b: usize) -> Result<usize, BackendError> {
    a.checked_mul(b)
        .ok_or_else(|| BackendError::InvalidInput(format!("{a} × {b} elements do not fit in memory")))
}

impl Stored for HostBuf {
    fn at(&self, i: usize) -> f64 {
        self.get(i)
    }
}

#[cfg(test)]
mod tests;
