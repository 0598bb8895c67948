//! Model-step measurement on the page: the request for the step the page analyses, the progress of one step
//! job as its SSE events arrive, and each measured operator beside the page's own prediction of it. Pure.

use std::collections::HashMap;

use roofline_core::measured_device::{PointDevice, same_device};
use roofline_core::measurement::MeasuredPoint;
use roofline_core::step_comparison::{StepTotals, measured_over_predicted};
use roofline_core::validation::error_pct;
use roofline_core::wire::{StepDoneEvent, StepJob, StepOperatorEvent, StepRequest};
use roofline_core::{HardwareSpec, Mode, ModelAnalysis, ModelConfig, Phase, find_model};

use crate::models::resolve_model;
use crate::scenario::Scenario;

/// Why the page's step cannot be measured as set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepRequestError {
    /// More than one GPU: the endpoint measures one device.
    #[error("the endpoint measures one GPU's step; set GPUs to 1 (now {gpus})")]
    SeveralGpus {
        /// The scenario's GPU count.
        gpus: u32,
    },
    /// The model is neither a preset nor an imported model.
    #[error(transparent)]
    UnknownModel(#[from] roofline_core::Error),
}

/// The request that measures the step of `scenario` on the endpoint's device, predicted on `hardware` (the
/// spec the page predicts on, in its mode, so both sides predict alike). A model that is not a preset travels
/// with the request.
///
/// # Errors
/// [`StepRequestError`], shown to the user, when the step cannot be measured as set.
pub fn request(
    scenario: &Scenario,
    hardware: &HardwareSpec,
    models: &[ModelConfig],
) -> Result<StepRequest, StepRequestError> {
    if scenario.gpus != 1 {
        return Err(StepRequestError::SeveralGpus { gpus: scenario.gpus });
    }
    let model_config = match find_model(&scenario.model) {
        Ok(_) => None,
        Err(_) => Some(resolve_model(&scenario.model, models)?.clone()),
    };
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    Ok(StepRequest {
        model: scenario.model.clone(),
        model_config,
        config: scenario.config.clone(),
        phase: if scenario.prefill {
            Phase::Prefill
        } else {
            Phase::Decode
        },
        batch: clamp(scenario.batch),
        context: clamp(scenario.context),
        hardware_key: None,
        spec: Some(hardware.clone()),
        mode: Some(Mode::of(hardware)),
    })
}

/// One step job as the page follows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepProgress {
    /// What was asked for.
    pub request: StepRequest,
    /// The job as queued.
    pub job: StepJob,
    /// Operator rows reported so far, in order of arrival, their points in base units.
    pub rows: Vec<StepOperatorEvent<MeasuredPoint>>,
    /// The final event, once it came.
    pub done: Option<StepDoneEvent>,
    /// Set when the event stream broke before `done`.
    pub lost: Option<String>,
}

impl StepProgress {
    /// A job with nothing reported yet.
    #[must_use]
    pub fn new(request: StepRequest, job: StepJob) -> StepProgress {
        StepProgress {
            request,
            job,
            rows: Vec::new(),
            done: None,
            lost: None,
        }
    }

    /// Records a row; returns `false` (and changes nothing) for a replayed row or another job's.
    pub fn on_operator(&mut self, event: StepOperatorEvent<MeasuredPoint>) -> bool {
        let fresh = event.job_id == self.job.id && !self.rows.iter().any(|r| r.index == event.index);
        if fresh {
            self.rows.push(event);
        }
        fresh
    }

    /// Whether the job is over (done, or its stream lost).
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.done.is_some() || self.lost.is_some()
    }

    /// A one-line status, e.g. `measuring 3/22`, `done: 22 measured, 0 failed in 21 s`.
    #[must_use]
    pub fn status(&self) -> String {
        let (n, total) = (self.rows.len(), self.job.operators);
        match (&self.done, &self.lost) {
            (Some(d), _) if d.cancelled => format!("cancelled after {n}/{total}"),
            (Some(d), _) => format!(
                "done: {} measured, {} failed in {}",
                d.measured,
                d.failed,
                crate::format::duration(d.elapsed_s)
            ),
            (None, Some(e)) => format!("stream lost after {n}/{total}: {e}"),
            (None, None) if n == 0 && self.job.position > 0 => {
                format!("queued ({} ahead)", self.job.position)
            }
            (None, None) => format!("measuring {n}/{total}"),
        }
    }

    /// `running`, `done`, `cancelled` or `lost`: the status as a test id value.
    #[must_use]
    pub fn state(&self) -> &'static str {
        match (&self.done, &self.lost) {
            (Some(d), _) if d.cancelled => "cancelled",
            (Some(_), _) => "done",
            (None, Some(_)) => "lost",
            (None, None) => "running",
        }
    }
}

/// One operator row of the page's analysis, measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRow {
    /// Measured time of one instance, in seconds.
    pub time_s: f64,
    /// Measured throughput, in FLOP/s (0 for pure data movement).
    pub flop_per_s: f64,
    /// measured ÷ the page's predicted time − 1, as a percentage; `None` when the measurement ran on another
    /// device than the one predicted.
    pub error_pct: Option<f64>,
    /// What ran, e.g. `NVRTC (roofline step kernels) · rms_norm`.
    pub ran: String,
}

/// The measured step beside the page's prediction of the same step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepComparison {
    /// Measured rows by operator name.
    pub rows: HashMap<String, MeasuredRow>,
    /// Why a row has no measurement, by operator name (e.g. `unsupported: …`).
    pub failures: HashMap<String, String>,
    /// Σ count × measured time and Σ count × the page's predicted time over the measured rows (core's
    /// [`StepTotals`]).
    pub totals: StepTotals,
    /// The page's predicted step time (every row, launch overhead included), in seconds.
    pub predicted_step_s: f64,
    /// Operator rows of the analysis, and how many of them were measured.
    pub rows_total: usize,
    /// The device that ran the measurements, when they ran on another device than the one predicted (then
    /// nothing is compared).
    pub other_device: Option<String>,
    /// The whole step timed end to end, once the job is done and timed it.
    pub end_to_end: Option<EndToEnd>,
    /// Why the done job has no end-to-end time, e.g. `unsupported: not timed end to end: …`.
    pub end_to_end_failure: Option<String>,
}

/// The whole step timed end to end: every kernel launched back to back (a CUDA graph on a GPU).
#[derive(Debug, Clone, PartialEq)]
pub struct EndToEnd {
    /// Measured step time, in seconds.
    pub time_s: f64,
    /// Kernels launched per step.
    pub kernels: u32,
    /// The measured step time − Σ count × measured time of the operators alone, in seconds: launch gaps and
    /// per-kernel overhead when positive, cache reuse between kernels when negative.
    pub overhead_s: f64,
    /// What ran, e.g. `gemm 0.19 (CPU) + plain loops (CPU) · 267 kernels back to back …`.
    pub ran: String,
}

impl StepComparison {
    /// measured ÷ predicted over the measured rows, when comparable.
    #[must_use]
    pub fn ratio(&self) -> Option<f64> {
        self.totals
            .measured_over_predicted()
            .filter(|_| self.other_device.is_none())
    }

    /// The step measured end to end ÷ the page's predicted step time, when comparable.
    #[must_use]
    pub fn end_to_end_ratio(&self) -> Option<f64> {
        let end_to_end = self.end_to_end.as_ref()?;
        (self.other_device.is_none() && self.predicted_step_s > 0.0)
            .then(|| measured_over_predicted(end_to_end.time_s, self.predicted_step_s))
    }
}

/// Compares `progress` with the page's analysis `a` on `hardware`, row by row (matched by operator name and
/// kind), when the job measured the step `current` asks for; `None` for a job of another scenario.
#[must_use]
pub fn compare(
    progress: &StepProgress,
    current: &StepRequest,
    a: &ModelAnalysis,
    hardware: &HardwareSpec,
) -> Option<StepComparison> {
    if !same_step(&progress.request, current) {
        return None;
    }
    let mut c = StepComparison {
        predicted_step_s: a.total_time_s,
        rows_total: a.ops.len(),
        ..StepComparison::default()
    };
    for event in &progress.rows {
        let Some(op) = a
            .ops
            .iter()
            .find(|op| op.name == event.name && op.kind == event.kind)
        else {
            continue;
        };
        if let Some(failure) = &event.failure {
            c.failures.insert(
                event.name.clone(),
                format!("{}: {}", failure.code, failure.message),
            );
        }
        let Some(point) = &event.measured else {
            continue;
        };
        let m = &point.measurement;
        let ran = if m.says_what_ran() {
            format!("{} · {}", m.library, m.kernel)
        } else {
            String::new()
        };
        let time_s = point.time_s();
        let comparable = same_device(point, hardware);
        if !comparable {
            c.other_device = Some(PointDevice::of(point).label());
        }
        c.totals.add(op.count, time_s, op.time_s);
        c.rows.insert(
            event.name.clone(),
            MeasuredRow {
                time_s,
                flop_per_s: point.achieved_flop_per_s(),
                error_pct: comparable.then(|| error_pct(time_s, op.time_s)),
                ran,
            },
        );
    }
    if let Some(done) = &progress.done {
        c.end_to_end = done.end_to_end.as_ref().map(|e| EndToEnd {
            time_s: e.measured_time_s,
            kernels: e.kernels,
            overhead_s: e.overhead_s,
            ran: format!("{} · {}", e.measurement.library, e.measurement.kernel),
        });
        c.end_to_end_failure = done
            .end_to_end_failure
            .as_ref()
            .map(|f| format!("{}: {}", f.code, f.message));
    }
    Some(c)
}

/// Whether two requests measure the same step (model, config, phase, batch, context and predicted device).
fn same_step(a: &StepRequest, b: &StepRequest) -> bool {
    let key = |r: &StepRequest| {
        (
            r.model.clone(),
            r.config.clone(),
            r.phase,
            r.batch,
            r.context,
            r.spec.as_ref().map(|s| s.key.clone()),
            r.mode,
        )
    };
    key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use roofline_core::measurement::{MeasuredOp, Measurement};
    use roofline_core::{Bound, Precision, find_hardware};

    use super::*;

    fn scenario() -> Scenario {
        Scenario {
            hardware: "h100_sxm".into(),
            model: "tinyllama-1.1b".into(),
            config: "bf16".into(),
            batch: 1,
            context: 256,
            ..Scenario::default()
        }
    }

    fn h100() -> HardwareSpec {
        find_hardware("h100_sxm").unwrap().reference().unwrap()
    }

    fn job() -> StepJob {
        StepJob {
            id: "s1".into(),
            position: 0,
            operators: 2,
            distinct: 2,
            hardware_key: "h100_sxm".into(),
            events_url: "/api/v1/steps/s1/events".into(),
        }
    }

    /// A row of `a` measured at `factor` × its predicted time on `device`.
    fn measured(
        a: &ModelAnalysis,
        index: usize,
        factor: f64,
        device: &str,
    ) -> StepOperatorEvent<MeasuredPoint> {
        let op = &a.ops[index];
        StepOperatorEvent {
            job_id: "s1".into(),
            index: u32::try_from(index).unwrap(),
            total: u32::try_from(a.ops.len()).unwrap(),
            name: op.name.clone(),
            kind: op.kind,
            count: op.count,
            shape: op.operator.shape.clone(),
            operands: op.operator.precisions,
            predicted_time_s: op.time_s,
            measured: Some(MeasuredPoint {
                op: MeasuredOp::Other {
                    kind: op.kind,
                    shape: op.operator.shape.clone(),
                },
                operands: Precision::Bf16.into(),
                precision: Precision::Bf16,
                label: op.name.clone(),
                flops: op.flops,
                bytes: op.flops / op.arithmetic_intensity,
                measurement: Measurement {
                    backend: roofline_core::wire::BackendKind::Cuda,
                    device_name: device.into(),
                    library: "cuBLASLt".into(),
                    kernel: "gemm".into(),
                    median_s: op.time_s * factor,
                    ..Measurement::default()
                },
                activation_quantization: None,
                bound: Some(Bound::Memory),
            }),
            measured_over_predicted: Some(factor),
            same_as: None,
            failure: None,
        }
    }

    #[test]
    fn the_request_predicts_on_the_page_spec_and_carries_custom_models() {
        let hw = h100();
        let r = request(&scenario(), &hw, &[]).unwrap();
        assert_eq!((r.batch, r.context, r.phase), (1, 256, Phase::Decode));
        assert_eq!(r.mode, Some(Mode::Reference));
        assert!(r.model_config.is_none() && r.hardware_key.is_none());
        let mut mine = find_model("tinyllama-1.1b").unwrap().clone();
        mine.key = "my-tiny".into();
        let custom = Scenario {
            model: "my-tiny".into(),
            ..scenario()
        };
        let r = request(&custom, &hw, std::slice::from_ref(&mine)).unwrap();
        assert_eq!(r.model_config.as_ref().map(|m| m.key.as_str()), Some("my-tiny"));
        assert!(matches!(
            request(&custom, &hw, &[]),
            Err(StepRequestError::UnknownModel(
                roofline_core::Error::UnknownModel { .. }
            ))
        ));
        let two = Scenario {
            gpus: 2,
            ..scenario()
        };
        assert_eq!(
            request(&two, &hw, &[]),
            Err(StepRequestError::SeveralGpus { gpus: 2 })
        );
        assert!(
            request(&two, &hw, &[])
                .unwrap_err()
                .to_string()
                .contains("one GPU")
        );
    }

    #[test]
    fn rows_are_compared_with_the_page_prediction_of_the_same_step() {
        let hw = h100();
        let s = scenario();
        let a = s.analyze(&hw, &[]).unwrap();
        let req = request(&s, &hw, &[]).unwrap();
        let mut p = StepProgress::new(req.clone(), job());
        // Row 0 ran at twice its predicted time, row 1 at its predicted time.
        assert!(p.on_operator(measured(&a, 0, 2.0, "NVIDIA H100 80GB HBM3")));
        assert!(p.on_operator(measured(&a, 1, 1.0, "NVIDIA H100 80GB HBM3")));
        assert!(
            !p.on_operator(measured(&a, 1, 1.0, "NVIDIA H100 80GB HBM3")),
            "a replay counts once"
        );
        let c = compare(&p, &req, &a, &hw).unwrap();
        let (r0, r1) = (&c.rows[&a.ops[0].name], &c.rows[&a.ops[1].name]);
        assert!((r0.error_pct.unwrap() - 100.0).abs() < 1e-9);
        assert!(r1.error_pct.unwrap().abs() < 1e-9);
        // Σ count × time: (2 c0 t0 + c1 t1) / (c0 t0 + c1 t1).
        let (c0, t0) = (f64::from(a.ops[0].count), a.ops[0].time_s);
        let (c1, t1) = (f64::from(a.ops[1].count), a.ops[1].time_s);
        let expected = (2.0 * c0 * t0 + c1 * t1) / (c0 * t0 + c1 * t1);
        assert!((c.ratio().unwrap() - expected).abs() < 1e-9);
        assert_eq!(c.rows_total, a.ops.len());
        assert_eq!(c.end_to_end, None);
        // Done: the whole step took 1.5 × the page's predicted step, 3 µs more than its operators alone.
        p.done = Some(StepDoneEvent {
            job_id: "s1".into(),
            hardware_key: "h100_sxm".into(),
            mode: Mode::Reference,
            operators: 2,
            measured: 2,
            failed: 0,
            cancelled: false,
            predicted_step_time_s: a.total_time_s,
            predicted_kernels_time_s: 0.0,
            predicted_measured_time_s: 0.0,
            measured_time_s: 0.0,
            measured_over_predicted: None,
            end_to_end: Some(roofline_core::wire::StepEndToEnd {
                kernels: a.kernel_launches,
                measured_time_s: 1.5 * a.total_time_s,
                measured_over_predicted: 1.5,
                overhead_s: 3e-6,
                measurement: Measurement {
                    library: "cuBLASLt".into(),
                    kernel: "CUDA graph".into(),
                    ..Measurement::default()
                },
            }),
            end_to_end_failure: None,
            elapsed_s: 1.0,
        });
        let c = compare(&p, &req, &a, &hw).unwrap();
        let end_to_end = c.end_to_end.as_ref().unwrap();
        assert!((end_to_end.overhead_s - 3e-6).abs() < 1e-15);
        assert_eq!(end_to_end.ran, "cuBLASLt · CUDA graph");
        assert!((c.end_to_end_ratio().unwrap() - 1.5).abs() < 1e-9);
        // Another batch is another step: nothing to compare.
        let other = request(&Scenario { batch: 8, ..s }, &hw, &[]).unwrap();
        assert!(compare(&p, &other, &a, &hw).is_none());
    }

    #[test]
    fn a_step_measured_on_another_device_shows_times_but_no_errors() {
        let hw = h100();
        let s = scenario();
        let a = s.analyze(&hw, &[]).unwrap();
        let req = request(&s, &hw, &[]).unwrap();
        let mut p = StepProgress::new(req.clone(), job());
        p.on_operator(measured(&a, 0, 1.5, "NVIDIA GB10"));
        let c = compare(&p, &req, &a, &hw).unwrap();
        assert!(
            c.other_device.as_deref().is_some_and(|d| d.contains("GB10")),
            "{c:?}"
        );
        assert!(c.rows[&a.ops[0].name].error_pct.is_none());
        assert!(c.ratio().is_none());
    }
}
