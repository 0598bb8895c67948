//! Seeded inputs generated on the device: `seeded_fill` (inputs.cu, compiled with kernels.cu) writes values
//! `0..n` of a seeded stream ([`normal_at`]) in a buffer's element format, one grid-stride launch on the
//! backend's stream (milliseconds for gigabytes, where drawing them on the host took ~5 s per GB and could not
//! be interrupted). [`SeededInput`] gives the host the stored value of any one element, so a reference check
//! recomputes only the rows of the outputs it samples.

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, DevicePtrMut, LaunchConfig, PushKernelArg};

use super::buffers::{DeviceBuf, Elem};
use super::{CudaBackend, cuda_err};
use crate::backend::BackendError;
use crate::backend::step_reference::Stored;
use crate::protocol::{check_interruption, normal_at, normal_values, stream_key};

/// Threads per block of `seeded_fill`.
const THREADS: usize = 256;
/// Most blocks per SM of one launch (the grid-stride loop covers the rest).
const BLOCKS_PER_SM: usize = 16;
/// W4A16 weights per 32-bit word.
const INT4_PER_WORD: usize = 8;

/// What `seeded_fill` writes per item: its `format` argument (`FILL_*` in inputs.cu).
#[derive(Debug, Clone, Copy)]
enum Fill {
    F32 = 0,
    F16 = 1,
    Bf16 = 2,
    E4M3 = 3,
    E5M2 = 4,
    I8 = 5,
    /// Eight W4A16 weights ([`int4_at`]) per 32-bit item.
    Int4 = 6,
}

impl Fill {
    /// The device fill of `elem`, or `None` for a format encoded on the host: E2M1 (packed two per byte, run
    /// only by the block-scaled FP4 GEMMs of sm_100+) and I32 (an output, never an input).
    fn of(elem: Elem) -> Option<Fill> {
        match elem {
            Elem::F32 => Some(Fill::F32),
            Elem::F16 => Some(Fill::F16),
            Elem::Bf16 => Some(Fill::Bf16),
            Elem::E4M3 => Some(Fill::E4M3),
            Elem::E5M2 => Some(Fill::E5M2),
            Elem::I8 => Some(Fill::I8),
            Elem::E2M1 | Elem::I32 => None,
        }
    }
}

/// A seeded input as the host sees it: element `i` is value `i` of stream `seed` stored in `elem`
/// ([`Elem::stored`] of [`normal_at`]), bit for bit what [`CudaBackend::device_normal`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SeededInput {
    pub(super) elem: Elem,
    pub(super) seed: u64,
}

impl SeededInput {
    /// The stored value of element `i`.
    pub(super) fn get(&self, i: usize) -> f64 {
        self.elem.stored(normal_at(self.seed, i as u64))
    }
}

impl Stored for SeededInput {
    fn at(&self, i: usize) -> f64 {
        self.get(i)
    }
}

/// W4A16 weight `i` of stream `seed`: `round(v · 3)` (half away from zero) within [−8, 7].
pub(super) fn int4_at(seed: u64, i: usize) -> i8 {
    ((normal_at(seed, i as u64) * 3.0).round() as i32).clamp(-8, 7) as i8
}

impl CudaBackend {
    /// `n` values of stream `seed` stored in `elem` ([`SeededInput`]), written on the device by one launch on
    /// the backend's stream (E2M1 and I32: encoded on the host and uploaded, see [`Fill::of`]). The point's
    /// limits are checked before and after.
    ///
    /// # Errors
    /// The interruption, or a CUDA error (allocation, compile, launch).
    pub(super) fn device_normal(&self, elem: Elem, seed: u64, n: usize) -> Result<DeviceBuf, BackendError> {
        check_interruption::<BackendError>()?;
        let buf = match Fill::of(elem) {
            Some(fill) => {
                let mut buf = elem.zeros(&self.stream, n)?;
                let (ptr, guard) = buf.ptr_mut(&self.stream);
                // SAFETY: `buf` holds `n` elements of the fill's size; its guard lives until the launch is
                // enqueued.
                unsafe { self.fill(ptr, n, seed, fill) }?;
                drop(guard);
                buf
            }
            None => elem.encode(&normal_values(seed, n)).upload(&self.stream)?,
        };
        check_interruption::<BackendError>()?;
        Ok(buf)
    }

    /// The seeded input `seed` in `elem`: its host view and its device buffer of `n` elements.
    ///
    /// # Errors
    /// As [`CudaBackend::device_normal`].
    pub(super) fn seeded_input(
        &self,
        elem: Elem,
        seed: u64,
        n: usize,
    ) -> Result<(SeededInput, DeviceBuf), BackendError> {
        Ok((SeededInput { elem, seed }, self.device_normal(elem, seed, n)?))
    }

    /// `n` W4A16 weights of stream `seed` ([`int4_at`]), eight per word, weight `8w + j` in bits `4j..4j+3`
    /// of word `w` as `q + 8`. The point's limits are checked before and after.
    ///
    /// # Errors
    /// `n` not a multiple of 8, the interruption, or a CUDA error.
    pub(super) fn device_int4(&self, seed: u64, n: usize) -> Result<CudaSlice<u32>, BackendError> {
        if !n.is_multiple_of(INT4_PER_WORD) {
            return Err(BackendError::InvalidInput(format!(
                "{n} INT4 weights do not fill whole {INT4_PER_WORD}-weight words"
            )));
        }
        check_interruption::<BackendError>()?;
        let words = n / INT4_PER_WORD;
        let mut buf = self
            .stream
            .alloc_zeros::<u32>(words)
            .map_err(|e| cuda_err("alloc", e))?;
        let (ptr, guard) = buf.device_ptr_mut(&self.stream);
        // SAFETY: `buf` holds `words` 32-bit items; its guard lives until the launch is enqueued.
        unsafe { self.fill(ptr, words, seed, Fill::Int4) }?;
        drop(guard);
        check_interruption::<BackendError>()?;
        Ok(buf)
    }

    /// Enqueues `seeded_fill` writing `items` items of `fill` at `out`.
    ///
    /// # Safety
    /// `out` must point at a live allocation of at least `items` items of `fill`'s size.
    unsafe fn fill(&self, out: CUdeviceptr, items: usize, seed: u64, fill: Fill) -> Result<(), BackendError> {
        let kernels = self.kernels()?;
        let max_blocks = BLOCKS_PER_SM * self.sm_count.max(1) as usize;
        let blocks = items.div_ceil(THREADS).clamp(1, max_blocks);
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(blocks).unwrap_or(u32::MAX), 1, 1),
            block_dim: (THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let (n, key, format) = (items as u64, stream_key(seed), fill as i32);
        let mut builder = self.stream.launch_builder(&kernels.seeded_fill);
        builder.arg(&out).arg(&n).arg(&key).arg(&format);
        // SAFETY: the kernel writes items 0..items at `out`, which the caller guarantees are allocated.
        unsafe { builder.launch(cfg) }
            .map(|_| ())
            .map_err(|e| cuda_err("seeded_fill launch", e))
    }
}

#[cfg(test)]
mod tests;
