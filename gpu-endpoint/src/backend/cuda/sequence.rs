//! A whole model step timed end to end ([`crate::backend::Backend::measure_step`]): every distinct operator is
//! prepared once, exactly as its single-operator measurement prepares it (`gemm`: inputs, correctness gate,
//! best heuristic algorithm; `step_ops`: inputs and one verified run), with all buffers held at once. The
//! step's launch order is then captured into a CUDA graph and replayed once per sample with the GEMMs'
//! protocol (`timing`: the L2 flushed before each replay only, CUDA events around the replay, warm-up, NVML).
//! When capture or instantiation fails, the same launches run eagerly and the record says why.
//!
//! Capture needs a capturable stream: the backend's one stream is created with `new_stream` (the legacy NULL
//! stream cannot be captured) and cudarc's event tracking is off (see `CudaBackend::open`), so no launch
//! inside the capture waits on an event recorded outside it.

use std::sync::Arc;

use cudarc::driver::sys as drv_sys;
use cudarc::driver::{CudaGraph, CudaStream, DriverError};
use roofline_core::{Operator, Precision};

use super::gemm::{PreparedMatmul, Workspace};
use super::step_ops::{self, PreparedKernel};
use super::{CudaBackend, cuda_err};
use crate::backend::{BackendError, StepTiming, prepare_step};
use crate::protocol::measurement;

/// A distinct operator of the step, ready to enqueue (boxed: large values, one per distinct operator).
enum Prepared {
    /// A GEMM or GEMV through cuBLASLt.
    Matmul(Box<PreparedMatmul>),
    /// A non-GEMM operator through an NVRTC step kernel.
    Kernel(Box<PreparedKernel>),
}

/// How the step's launches ran, for the record.
#[derive(Debug, Clone, PartialEq)]
enum Replay {
    /// One CUDA graph launch per sample; `nodes` as the driver counts them (cuBLASLt may add kernels or memsets
    /// of its own), when it says.
    Graph { nodes: Option<usize> },
    /// The launches one by one, because the graph could not be captured or instantiated.
    Eager { why: String },
}

impl CudaBackend {
    /// Times the step whose distinct operators are `ops` and whose launch order is `schedule` (indices into
    /// `ops`): prepares every operator, captures the launches into a CUDA graph (or falls back to eager
    /// launches) and times one whole step per sample.
    ///
    /// # Errors
    /// The first preparation error, naming its operator; [`BackendError::InvalidInput`] for an index outside
    /// `ops`; CUDA failures and the protocol's interruptions.
    pub(super) fn measure_sequence(
        &self,
        ops: &[Operator],
        schedule: &[usize],
    ) -> Result<StepTiming, BackendError> {
        let mut workspace = self.workspace()?;
        let mut prepared = prepare_step(
            ops,
            |spec| {
                if spec.precision == Precision::Int4 {
                    return Err(BackendError::Unsupported(
                        "INT4 matmuls run as the W4A16 GEMV, which is not a step kernel yet".into(),
                    ));
                }
                self.prepare_lt(spec, &mut workspace)
                    .map(|matmul| Prepared::Matmul(Box::new(matmul)))
            },
            |op| {
                self.prepare_step_operator(op)
                    .map(|kernel| Prepared::Kernel(Box::new(kernel)))
            },
        )?;
        // Any earlier asynchronous failure surfaces here, as itself, not as a capture failure.
        self.stream
            .synchronize()
            .map_err(|e| cuda_err("synchronize before capture", e))?;
        // Declared after `prepared`, so the graph is destroyed before the buffers it launches on are freed.
        let graph = self.capture(&mut prepared, schedule, &mut workspace);
        let (replay, (stats, telemetry)) = match &graph {
            Ok(graph) => (
                Replay::Graph {
                    nodes: graph_nodes(graph),
                },
                self.protocol(&mut || graph.launch().map_err(|e| cuda_err("CUDA graph launch", e)))?,
            ),
            Err(why) => {
                tracing::warn!(reason = %why, "CUDA graph capture failed; timing the step as eager launches");
                (
                    Replay::Eager { why: why.to_string() },
                    self.protocol(&mut || self.enqueue_schedule(&mut prepared, schedule, &mut workspace))?,
                )
            }
        };
        let has_matmul = prepared.iter().any(|p| matches!(p, Prepared::Matmul(_)));
        let has_kernel = prepared.iter().any(|p| matches!(p, Prepared::Kernel(_)));
        let library = step_library(has_matmul.then(|| self.lt_library()), has_kernel);
        let padding: Vec<String> = ops
            .iter()
            .zip(&prepared)
            .filter_map(|(op, p)| match p {
                Prepared::Matmul(m) => m.padding().map(|note| format!("{}: {note}", op.name)),
                Prepared::Kernel(_) => None,
            })
            .collect();
        let kernel = step_label(schedule.len(), ops.len(), &replay);
        let padding = (!padding.is_empty()).then(|| padding.join("; "));
        Ok(StepTiming {
            kernels: u32::try_from(schedule.len()).unwrap_or(u32::MAX),
            measurement: measurement(self.run_info(library, kernel, true, padding), &stats, telemetry),
        })
    }

    /// Enqueues the launches of `schedule` (indices into `prepared`) in order on the backend's stream.
    fn enqueue_schedule(
        &self,
        prepared: &mut [Prepared],
        schedule: &[usize],
        workspace: &mut Workspace,
    ) -> Result<(), BackendError> {
        let n_prepared = prepared.len();
        for &index in schedule {
            match prepared.get_mut(index) {
                Some(Prepared::Matmul(matmul)) => matmul.enqueue(self, workspace)?,
                Some(Prepared::Kernel(kernel)) => kernel.enqueue(&self.stream)?,
                None => {
                    return Err(BackendError::InvalidInput(format!(
                        "launch order names operator {index} of {n_prepared}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Captures the launches of `schedule` into a CUDA graph, instantiated and uploaded, or says why it could
    /// not. The stream leaves capture mode whatever happens.
    fn capture(
        &self,
        prepared: &mut [Prepared],
        schedule: &[usize],
        workspace: &mut Workspace,
    ) -> Result<CudaGraph, CaptureError> {
        let capture = Capture::begin(&self.stream).map_err(CaptureError::Begin)?;
        let enqueued = self.enqueue_schedule(prepared, schedule, workspace);
        let ended = capture.end();
        enqueued.map_err(CaptureError::Launch)?;
        let graph = ended.map_err(CaptureError::End)?.ok_or(CaptureError::Empty)?;
        graph.upload().map_err(CaptureError::Upload)?;
        Ok(graph)
    }
}

/// Why a step's launches could not be captured into a CUDA graph (they then run eagerly).
#[derive(Debug, thiserror::Error)]
enum CaptureError {
    /// The stream would not enter capture mode.
    #[error("cuStreamBeginCapture: {0:?}")]
    Begin(DriverError),
    /// A launch failed while being captured.
    #[error("a launch failed during capture: {0}")]
    Launch(BackendError),
    /// Ending the capture or instantiating its graph failed.
    #[error("cuStreamEndCapture or cuGraphInstantiate: {0:?}")]
    End(DriverError),
    /// The capture ended without a graph.
    #[error("the capture recorded no graph")]
    Empty,
    /// The instantiated graph could not be uploaded.
    #[error("cuGraphUpload: {0:?}")]
    Upload(DriverError),
}

/// A stream capture in progress. Dropped without [`Capture::end`] (an early return, a panic), it ends the
/// capture and discards the partial graph, so the stream never stays in capture mode.
struct Capture<'a> {
    stream: &'a Arc<CudaStream>,
    open: bool,
}

impl<'a> Capture<'a> {
    /// Begins capturing `stream` in thread-local mode: only this thread's unsafe calls (allocations,
    /// synchronous copies) would invalidate it, and between `begin` and `end` it only enqueues launches.
    fn begin(stream: &'a Arc<CudaStream>) -> Result<Capture<'a>, DriverError> {
        stream.begin_capture(drv_sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        Ok(Capture { stream, open: true })
    }

    /// Ends the capture and instantiates its graph.
    fn end(mut self) -> Result<Option<CudaGraph>, DriverError> {
        self.open = false;
        let ended = self.stream.end_capture(drv_sys::CUgraphInstantiate_flags(0));
        if ended.is_err() {
            // cudarc returns an error stored by an earlier call before it reaches cuStreamEndCapture.
            abandon_capture(self.stream);
        }
        ended
    }
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        if self.open {
            abandon_capture(self.stream);
        }
    }
}

/// Ends a capture still open on `stream` and destroys its partial graph; does nothing when the stream is not
/// capturing.
fn abandon_capture(stream: &CudaStream) {
    let mut status = drv_sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: the stream is live (the caller holds it); cuStreamIsCapturing writes one status.
    let queried = unsafe { drv_sys::cuStreamIsCapturing(stream.cu_stream(), &mut status) };
    if queried == drv_sys::CUresult::CUDA_SUCCESS
        && status == drv_sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
    {
        return;
    }
    let mut graph: drv_sys::CUgraph = std::ptr::null_mut();
    // SAFETY: the stream is live and its capture was begun on this thread, whose context is still current;
    // cuStreamEndCapture writes one graph handle (null when the capture was invalidated), which nothing else
    // owns, so it is destroyed here exactly once.
    unsafe {
        let _ = drv_sys::cuStreamEndCapture(stream.cu_stream(), &mut graph);
        if !graph.is_null() {
            let _ = drv_sys::cuGraphDestroy(graph);
        }
    }
}

/// Nodes of `graph`, or `None` when the driver does not say.
fn graph_nodes(graph: &CudaGraph) -> Option<usize> {
    let mut count = 0usize;
    // SAFETY: the graph is live (owned by `graph`); with a null node array cuGraphGetNodes writes only the count.
    let status = unsafe { drv_sys::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut count) };
    (status == drv_sys::CUresult::CUDA_SUCCESS).then_some(count)
}

/// The record's library: cuBLASLt (its label, when the step has matmuls) and the step kernels (when it has
/// other operators).
fn step_library(lt: Option<String>, kernels: bool) -> String {
    lt.into_iter()
        .chain(kernels.then(|| step_ops::LIBRARY.to_owned()))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The record's kernel text of a step of `launches` launches of `distinct` operators run as `replay`.
fn step_label(launches: usize, distinct: usize, replay: &Replay) -> String {
    let of = format!("{launches} kernels of {distinct} distinct operators");
    match replay {
        Replay::Graph { nodes } => {
            let nodes = nodes.map_or_else(String::new, |n| format!(", {n} graph nodes"));
            format!(
                "CUDA graph of {of} (captured once, replayed per sample{nodes}), L2 flushed before each step only"
            )
        }
        Replay::Eager { why } => format!(
            "eager launches of {of} (CUDA graph capture failed: {why}), L2 flushed before each step only"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_says_how_the_step_ran() {
        let graph = step_label(156, 12, &Replay::Graph { nodes: Some(160) });
        assert_eq!(
            graph,
            "CUDA graph of 156 kernels of 12 distinct operators (captured once, replayed per sample, 160 graph \
             nodes), L2 flushed before each step only"
        );
        let eager = step_label(
            3,
            2,
            &Replay::Eager {
                why: "cuStreamBeginCapture: X".into(),
            },
        );
        assert!(
            eager.starts_with(
                "eager launches of 3 kernels of 2 distinct operators (CUDA graph capture failed: "
            ),
            "{eager}"
        );
        assert_eq!(
            step_library(Some("cuBLASLt 13.1.0".into()), true),
            "cuBLASLt 13.1.0 + NVRTC (roofline step kernels)"
        );
        assert_eq!(step_library(None, true), "NVRTC (roofline step kernels)");
        assert_eq!(
            step_library(Some("cuBLASLt 13.1.0".into()), false),
            "cuBLASLt 13.1.0"
        );
    }
}
