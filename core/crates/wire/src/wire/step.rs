//! The wire types of a model-step measurement: `POST /api/steps` measures every operator of one prefill or
//! decode step (as [`roofline_analysis::analysis::analyze_model`] lists them) beside its prediction, and streams one `operator`
//! event per operator row, then `done`.

use serde::{Deserialize, Serialize};

use super::legacy::reads_legacy_units;
use super::{Failure, Measurement, RooflinePoint};
use roofline_analysis::analysis::Phase;
use roofline_analysis::model::ModelConfig;
use roofline_analysis::ops::{OpKind, OperandPrecisions};
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Mode};
use roofline_base::units::MICRO;

/// `POST /api/steps` body: the scenario the page analyses, and the device its predictions are for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRequest {
    /// Model preset key, e.g. `tinyllama-1.1b`; with `model_config`, that model's key.
    pub model: String,
    /// A model that is not a preset (e.g. imported from a Hugging Face `config.json` on the page); its `key`
    /// must equal `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_config: Option<ModelConfig>,
    /// Precision config key, e.g. `fp32` (the only one the CPU backend runs) or `bf16`.
    pub config: String,
    /// Prefill or decode.
    pub phase: Phase,
    /// Sequences in the batch.
    pub batch: u32,
    /// Prompt length (prefill) or cached tokens (decode).
    pub context: u32,
    /// Catalog key the step is predicted on. Without it and without `spec`, the endpoint uses the device it
    /// measures (its catalog key) or its latest calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_key: Option<String>,
    /// A device spec to predict on instead of a catalog key (e.g. a calibrated spec, `<key>_measured`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<HardwareSpec>,
    /// Ceilings of the predictions; default `reference`, or `calibrated` for a measured spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

/// Most layers of a model whose step is measured: 8× the deepest decoder among the presets (Llama 3.1 405B,
/// 126 layers). A step's work and its launch order grow with its layers; this bounds both before any is done.
pub const MAX_STEP_LAYERS: u32 = 1024;
/// Largest batch × context of a step measurement (tokens in the KV cache or the prompt): 2^20, eight
/// sequences at Llama 3.1's 131,072-token context.
pub const MAX_STEP_TOKENS: u64 = 1 << 20;
/// Most kernels one measured step launches (Σ count of its operator rows, the length of its launch order):
/// 2^16, 64 per layer at [`MAX_STEP_LAYERS`] (a preset layer launches at most 38: DeepSeek-V4-Pro's window,
/// compressed and indexed attention beside its projections and MoE rows).
pub const MAX_STEP_KERNELS: u32 = 1 << 16;

impl StepRequest {
    /// Checks the bounds of a step measurement that need no analysis: `model` (the request's model, resolved)
    /// has at most [`MAX_STEP_LAYERS`] layers and batch × context is at most [`MAX_STEP_TOKENS`]. O(1): the
    /// endpoint checks it before any work that grows with the request.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the bound.
    ///
    /// # Examples
    /// ```
    /// use roofline_wire::wire::{StepRequest, MAX_STEP_LAYERS};
    /// use roofline_analysis::{Phase, find_model};
    /// let mut model = find_model("tinyllama-1.1b").unwrap().clone();
    /// let request = StepRequest { model: model.key.clone(), model_config: None, config: "fp32".into(),
    ///     phase: Phase::Decode, batch: 1, context: 256, hardware_key: None, spec: None, mode: None };
    /// assert!(request.check_bounds(&model).is_ok());
    /// model.layers = MAX_STEP_LAYERS + 1;
    /// assert!(request.check_bounds(&model).unwrap_err().to_string().contains("1024 layers"));
    /// ```
    pub fn check_bounds(&self, model: &ModelConfig) -> Result<(), Error> {
        if model.layers > MAX_STEP_LAYERS {
            return Err(Error::InvalidInput(format!(
                "a step measurement takes models of at most {MAX_STEP_LAYERS} layers, {} has {}",
                model.key, model.layers
            )));
        }
        let tokens = u64::from(self.batch) * u64::from(self.context);
        if tokens > MAX_STEP_TOKENS {
            return Err(Error::InvalidInput(format!(
                "batch × context must be at most {MAX_STEP_TOKENS} tokens for a step measurement, got {tokens}"
            )));
        }
        Ok(())
    }
}

/// `POST /api/steps` answer (202): the job and where it sits in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepJob {
    /// Job id (use in `/api/steps/{id}/events` and `DELETE /api/steps/{id}`).
    pub id: String,
    /// Step jobs ahead of this one (0 = runs now, once the device is free).
    pub position: u32,
    /// Operator rows of the step (one `operator` event each).
    pub operators: u32,
    /// Distinct operators the job measures (rows with the same kernel, shape and precisions share one).
    pub distinct: u32,
    /// Device key of the predictions.
    pub hardware_key: String,
    /// URL of the job's SSE event stream.
    pub events_url: String,
}

/// SSE `operator` event: one operator row of the step, its prediction, and its measurement or failure. Reads
/// the older `predicted_time_us` (µs) too. `M` is the measured point: a [`RooflinePoint`] on the wire (the
/// default, the only form that serializes), the domain's `MeasuredPoint` in the endpoint and the page
/// ([`StepOperatorEvent::map`] converts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
// An absent optional point is `None`: no `Default` asked of the point types.
#[serde(bound(deserialize = "M: Deserialize<'de>"))]
pub struct StepOperatorEvent<M = RooflinePoint> {
    /// Job id.
    pub job_id: String,
    /// Index of the row in the step's operator list (0-based, the order of the analysis).
    pub index: u32,
    /// Operator rows of the step.
    pub total: u32,
    /// Role name, e.g. `qkv_proj`, `attention`, `ffn_act`.
    pub name: String,
    /// Kind.
    pub kind: OpKind,
    /// Times the operator runs per step (e.g. once per layer).
    pub count: u32,
    /// Shape label of the analysis, e.g. `1x2560x2048`.
    pub shape: String,
    /// Precisions of its tensors.
    pub operands: OperandPrecisions,
    /// Predicted time of one instance, in seconds.
    pub predicted_time_s: f64,
    /// The measured point (one instance), when the operator was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<M>,
    /// measured ÷ predicted time, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_over_predicted: Option<f64>,
    /// The earlier row whose measurement this row shares (same kernel, shape and precisions), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_as: Option<String>,
    /// Why the operator has no measurement (`unsupported`, `time_limit`, `verification_failed`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

impl<M> StepOperatorEvent<M> {
    /// The same row with its measured point converted by `convert` (to the wire and back).
    pub fn map<'a, N>(&'a self, convert: impl Fn(&'a M) -> N) -> StepOperatorEvent<N> {
        StepOperatorEvent {
            job_id: self.job_id.clone(),
            index: self.index,
            total: self.total,
            name: self.name.clone(),
            kind: self.kind,
            count: self.count,
            shape: self.shape.clone(),
            operands: self.operands,
            predicted_time_s: self.predicted_time_s,
            measured: self.measured.as_ref().map(convert),
            measured_over_predicted: self.measured_over_predicted,
            same_as: self.same_as.clone(),
            failure: self.failure.clone(),
        }
    }
}

/// SSE `done` event: the step's totals; the stream ends after it.
///
/// The measured step time is Σ count × measured time over the measured rows, and it is compared with the
/// same sum of predicted times over the same rows, so a failed row changes neither side. Reads the older
/// `*_time_us` fields (µs) too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct StepDoneEvent {
    /// Job id.
    pub job_id: String,
    /// Device key of the predictions.
    pub hardware_key: String,
    /// Ceilings of the predictions.
    pub mode: Mode,
    /// Operator rows of the step.
    pub operators: u32,
    /// Rows with a measurement.
    pub measured: u32,
    /// Rows with a failure.
    pub failed: u32,
    /// Whether the job was cancelled: before its last row (the rows after it have no event), or while the
    /// whole step was timed end to end (then `end_to_end` and `end_to_end_failure` are both absent).
    pub cancelled: bool,
    /// Predicted step time (the sum of kernel times plus the step's launch overhead; TPOT in decode, TTFT in
    /// prefill), in seconds.
    pub predicted_step_time_s: f64,
    /// Σ count × predicted time over every row, in seconds.
    pub predicted_kernels_time_s: f64,
    /// Σ count × predicted time over the measured rows, in seconds.
    pub predicted_measured_time_s: f64,
    /// Σ count × measured time over the measured rows, in seconds.
    pub measured_time_s: f64,
    /// `measured_time_s / predicted_measured_time_s`, when at least one row was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_over_predicted: Option<f64>,
    /// The whole step timed end to end, when every row was measured and the backend times sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_to_end: Option<StepEndToEnd>,
    /// Why the step has no end-to-end time (rows without a measurement, no sequence timing on the backend,
    /// too large, time limit), when it was not cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_to_end_failure: Option<Failure>,
    /// Wall-clock time the measurements took (each operator, then the end-to-end timing), in seconds.
    pub elapsed_s: f64,
}

/// The whole step timed end to end: every kernel of the step launched back to back in the order the model
/// runs them, layer by layer ([`roofline_analysis::analysis::ModelAnalysis::launch_order`]); a CUDA graph of the step on a GPU.
/// Beside the sum of the operators measured one by one, it shows what the sum-of-kernels model leaves out:
/// launch gaps and per-kernel overhead, and cache reuse from one kernel to the next. Reads the older
/// `measured_time_us` and `overhead_us` (µs) too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct StepEndToEnd {
    /// Kernels launched per step (Σ count over the rows).
    pub kernels: u32,
    /// Measured time of the whole step (median over samples), in seconds.
    pub measured_time_s: f64,
    /// `measured_time_s` ÷ the predicted step time (`predicted_step_time_s`, launch overhead included).
    pub measured_over_predicted: f64,
    /// `measured_time_s` − Σ count × measured time of each operator alone, in seconds: launch gaps and
    /// per-kernel overhead when positive, cache reuse between kernels when negative.
    pub overhead_s: f64,
    /// The record: its `kernel` says how the sequence ran (e.g. a CUDA graph), its times are the step's, in
    /// seconds; samples, clocks and versions as for any measurement.
    pub measurement: Measurement,
}

/// The output of `gpu-endpoint bench-model --json`: the request, every operator row and the totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// What was measured.
    pub request: StepRequest,
    /// One entry per operator row, in step order.
    pub operators: Vec<StepOperatorEvent>,
    /// The totals.
    pub done: StepDoneEvent,
}

reads_legacy_units!(
    StepOperatorEvent,
    [("predicted_time_us", "predicted_time_s", MICRO)]
);
reads_legacy_units!(
    StepDoneEvent,
    [
        ("predicted_step_time_us", "predicted_step_time_s", MICRO),
        ("predicted_kernels_time_us", "predicted_kernels_time_s", MICRO),
        ("predicted_measured_time_us", "predicted_measured_time_s", MICRO),
        ("measured_time_us", "measured_time_s", MICRO),
    ]
);
reads_legacy_units!(
    StepEndToEnd,
    [
        ("measured_time_us", "measured_time_s", MICRO),
        ("overhead_us", "overhead_s", MICRO)
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_from_the_page_json() {
        let request: StepRequest = serde_json::from_str(
            r#"{"model":"tinyllama-1.1b","config":"fp32","phase":"decode","batch":1,"context":256,"hardware_key":"h100_sxm"}"#,
        )
        .unwrap();
        assert_eq!(
            (request.phase, request.batch, request.mode),
            (Phase::Decode, 1, None)
        );
        assert!(
            serde_json::from_str::<StepRequest>(
                r#"{"model":"x","config":"fp32","phase":"decode","batch":1,"context":1,"typo":1}"#
            )
            .is_err()
        );
    }

    #[test]
    fn a_step_report_saved_with_the_old_unit_names_reads_in_seconds() {
        // Events as `bench-model --json` wrote them when times were in µs.
        let operator: StepOperatorEvent = serde_json::from_str(
            r#"{"job_id":"s1","index":0,"total":2,"name":"qkv_proj","kind":"gemv","count":22,"shape":"1x2560x2048","operands":{"weight":"BF16","activation":"BF16","output":"BF16"},"predicted_time_us":12.5}"#,
        )
        .unwrap();
        assert!((operator.predicted_time_s - 12.5e-6).abs() < 1e-18);
        let done: StepDoneEvent = serde_json::from_str(
            r#"{"job_id":"s1","hardware_key":"h100_sxm","mode":"reference","operators":2,"measured":2,"failed":0,"cancelled":false,"predicted_step_time_us":1500.0,"predicted_kernels_time_us":1200.0,"predicted_measured_time_us":1100.0,"measured_time_us":1320.0,"measured_over_predicted":1.2,"end_to_end":{"kernels":400,"measured_time_us":1650.0,"measured_over_predicted":1.1,"overhead_us":-30.0,"measurement":{"backend":"cuda","library":"CUDA graph","kernel":"graph","device_name":"NVIDIA H100 80GB HBM3","median_s":0.00165,"p10_s":0.00164,"p90_s":0.00166,"samples":50,"l2_flushed":false,"verified":true}},"elapsed_s":3.0}"#,
        )
        .unwrap();
        // 1500, 1200, 1100 and 1320 µs; the end-to-end 1650 µs and −30 µs.
        let seconds = [
            done.predicted_step_time_s,
            done.predicted_kernels_time_s,
            done.predicted_measured_time_s,
            done.measured_time_s,
        ];
        for (got, want) in seconds.into_iter().zip([1.5e-3, 1.2e-3, 1.1e-3, 1.32e-3]) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
        let end_to_end = done.end_to_end.as_ref().unwrap();
        assert!((end_to_end.measured_time_s - 1.65e-3).abs() < 1e-15);
        assert!((end_to_end.overhead_s + 3e-5).abs() < 1e-15);
        assert_eq!((end_to_end.kernels, done.elapsed_s), (400, 3.0));

        // Written back: the new names only, read unchanged.
        let written = serde_json::to_string(&done).unwrap();
        assert!(
            written.contains("\"overhead_s\":") && !written.contains("_us\""),
            "{written}"
        );
        assert_eq!(serde_json::from_str::<StepDoneEvent>(&written).unwrap(), done);
    }

    #[test]
    fn every_preset_step_launches_far_fewer_kernels_per_layer_than_the_bound_allows() {
        // MAX_STEP_KERNELS allows 64 kernels per layer at MAX_STEP_LAYERS; the presets launch at most 38
        // (DeepSeek-V4-Pro, printed), so a model of their kind at the layer bound stays under the kernel
        // bound with a 1.5× margin.
        let h100 = roofline_base::hardware::find_hardware("h100_sxm").unwrap();
        let bf16 = roofline_analysis::quant_config::find_quant_config("bf16").unwrap();
        let (mut most, mut deepest) = (0.0f64, "");
        for model in roofline_analysis::model::model_presets() {
            for phase in [Phase::Prefill, Phase::Decode] {
                let workload = roofline_analysis::analysis::Workload {
                    phase,
                    batch: 4,
                    context: 2048,
                };
                let analysis = roofline_analysis::analysis::analyze_model(
                    h100,
                    model,
                    bf16,
                    &workload,
                    &roofline_analysis::corrections::Corrections::NONE,
                )
                .unwrap();
                let per_layer = f64::from(analysis.kernel_launches) / f64::from(model.layers);
                if per_layer > most {
                    (most, deepest) = (per_layer, &model.key);
                }
            }
        }
        println!("most kernels per layer of a preset: {most:.1} ({deepest})");
        assert!(most <= 40.0, "{most} ({deepest})");
        assert!(f64::from(MAX_STEP_KERNELS) / f64::from(MAX_STEP_LAYERS) >= 1.5 * most);
    }
}
