//! How the CUDA backend's NVRTC step kernels are launched and checked, shared by `step_ops`, `attention` and
//! `quantize`: the one-format operand rule ([`Format`], `step_format`), a [`Launch`] that owns its buffers and
//! enqueues one run, its verification ([`Verified`]), grid sizes, and the module of step_ops.cu.

use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use roofline_core::{Operator, Precision};

use super::buffers::{DeviceBuf, Elem, HostBuf};
use super::nvrtc::cached;
use super::{CudaBackend, cuda_err};
use crate::backend::BackendError;

/// CUDA C source of the step kernels.
pub(super) const STEP_KERNELS_SRC: &str = include_str!("step_ops.cu");
/// Threads of a grid-stride kernel (`__launch_bounds__(256)`).
pub(super) const GRID_THREADS: usize = 256;
/// Most blocks per SM of a grid-stride launch (the loop covers the rest).
const GRID_BLOCKS_PER_SM: usize = 16;
/// Largest grid, in blocks.
pub(super) const MAX_GRID_BLOCKS: usize = (1 << 31) - 1;

/// The one element format of a step operator's operands.
#[derive(Debug, Clone, Copy)]
pub(super) struct Format {
    pub(super) precision: Precision,
    pub(super) elem: Elem,
    /// Kernel-name suffix in step_ops.cu.
    suffix: &'static str,
    /// Bytes per element.
    pub(super) bytes: usize,
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
    pub(super) fn packed(self, len: usize) -> bool {
        len.is_multiple_of(16 / self.bytes)
    }

    /// Work items of a kernel over `len` elements: packs, or elements.
    pub(super) fn chunks(self, len: usize) -> usize {
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
    pub(super) launch: Launch,
    pub(super) access: String,
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
    pub(super) fn enqueue(&mut self, stream: &Arc<CudaStream>) -> Result<(), BackendError> {
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
