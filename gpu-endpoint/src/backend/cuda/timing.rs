//! The timing protocol on the GPU: an L2 flush by reading before every sample, CUDA events around the
//! launch only, and NVML sampled throughout (docs/research/benchmarking.md §2).

use cudarc::driver::sys as drv_sys;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{CudaBackend, cuda_err};
use crate::backend::BackendError;
use crate::protocol::{SampleStats, TelemetrySummary, sample};

/// The L2 flush run before every timed sample.
pub(super) struct Flush {
    buf: CudaSlice<u8>,
    sink: CudaSlice<f32>,
    n4: u64,
    cfg: LaunchConfig,
    kernel: CudaFunction,
}

impl CudaBackend {
    /// A zeroed buffer of max(2 × L2, 256 MB) and the kernel that reads it (see `flush_read`).
    pub(super) fn flush_buffer(&self) -> Result<Flush, BackendError> {
        let bytes = (2 * self.l2_bytes).max(256 << 20).next_multiple_of(16);
        let buf = self
            .stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| cuda_err("flush buffer", e))?;
        let sink = self
            .stream
            .alloc_zeros::<f32>(1)
            .map_err(|e| cuda_err("flush sink", e))?;
        Ok(Flush {
            buf,
            sink,
            n4: (bytes / 16) as u64,
            cfg: LaunchConfig {
                grid_dim: (self.sm_count.max(1) * 8, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            },
            kernel: self.kernels()?.flush_read.clone(),
        })
    }

    /// Times `launch` with CUDA events: flush (async, no sync), start, launch, stop.
    pub(super) fn time_once(
        &self,
        flush: &mut Flush,
        launch: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<f64, BackendError> {
        let flags = Some(drv_sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.ctx.new_event(flags).map_err(|e| cuda_err("event", e))?;
        let stop = self.ctx.new_event(flags).map_err(|e| cuda_err("event", e))?;
        let mut builder = self.stream.launch_builder(&flush.kernel);
        builder.arg(&flush.buf).arg(&flush.n4).arg(&mut flush.sink);
        // SAFETY: `buf` holds n4 16-byte values (its size is a multiple of 16, the allocation 256-byte
        // aligned); `sink` is one f32.
        unsafe { builder.launch(flush.cfg) }.map_err(|e| cuda_err("flush", e))?;
        start.record(&self.stream).map_err(|e| cuda_err("record", e))?;
        launch()?;
        stop.record(&self.stream).map_err(|e| cuda_err("record", e))?;
        let ms = start.elapsed_ms(&stop).map_err(|e| cuda_err("elapsed", e))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// The protocol around a launch closure, with NVML sampled throughout.
    pub(super) fn protocol(
        &self,
        launch: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<(SampleStats, TelemetrySummary), BackendError> {
        let mut flush = self.flush_buffer()?;
        let mut run = || sample(&self.policy, || Ok(()), || self.time_once(&mut flush, launch));
        match &self.nvml {
            Some(nvml) => {
                let (stats, telemetry) = nvml.sample_during(run);
                Ok((stats?, telemetry))
            }
            None => Ok((run()?, TelemetrySummary::default())),
        }
    }
}
