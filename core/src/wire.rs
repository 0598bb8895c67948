//! The JSON contract between the web page and `gpu-endpoint` (feature `serde`).
//!
//! Field names of [`AnalyzeRequest`], [`RooflinePoint`] and [`NvmlStatus`] keep the original toolkit's names
//! (`M`, `N`, `K`, `ai`, `tflops`, `time_us`, `bottleneck`, …) because existing users script against them.
//! Units on the wire are the ones in the field names (µs, TFLOP/s, MHz, W, MB); base units everywhere else.

use serde::{Deserialize, Serialize};

use crate::hardware::Mode;
use crate::ops::{OpKind, OperandPrecisions, Operator};
use crate::precision::Precision;
use crate::roofline::{Bound, Prediction};
use crate::units::{MICRO, TERA};

mod step;
pub use step::{StepDoneEvent, StepEndToEnd, StepJob, StepOperatorEvent, StepReport, StepRequest};

/// Every stable machine-readable code of an error response ([`ErrorBody`]) or a failed point ([`Failure`]),
/// `snake_case` on the wire. The endpoint spells codes only through this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// 400: malformed or out-of-range input.
    InvalidInput,
    /// 4xx without a more specific code.
    InvalidRequest,
    /// 401: a bearer token is required.
    Unauthorized,
    /// 403 without a more specific code.
    Forbidden,
    /// 403: a state-changing request from a foreign `Origin`.
    ForbiddenOrigin,
    /// 403: a `Host` header outside the allowlist.
    ForbiddenHost,
    /// 404: unknown hardware key.
    UnknownHardware,
    /// 404: unknown model or precision-config key.
    UnknownKey,
    /// 404: unknown route or job.
    NotFound,
    /// 405.
    MethodNotAllowed,
    /// 408: the request body stopped arriving.
    RequestTimeout,
    /// 413: body or shape too large (also a point whose buffers would not fit).
    TooLarge,
    /// 415: wrong content type.
    UnsupportedMediaType,
    /// 415: a compressed request body.
    UnsupportedEncoding,
    /// 503: the device is busy with another measurement.
    Busy,
    /// 503 without a more specific code.
    Unavailable,
    /// 503: no NVML library or no GPU for telemetry.
    NoNvml,
    /// No device or library to measure on.
    NoGpu,
    /// The server runs without a result store.
    NoStore,
    /// 500: an internal failure (details only in the server log).
    Internal,
    /// The device cannot run this precision or operator natively (the message names the architecture).
    Unsupported,
    /// A CUDA driver, cuBLASLt or NVRTC call failed.
    CudaError,
    /// The kernel's output did not match the reference.
    VerificationFailed,
    /// A point ran past the per-point time cap.
    TimeLimit,
    /// The measurement was cancelled (client gone or job cancelled).
    Cancelled,
    /// A code this build does not know (a newer server), or an error response that was not JSON.
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The wire spelling, e.g. `invalid_input`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::ForbiddenOrigin => "forbidden_origin",
            ErrorCode::ForbiddenHost => "forbidden_host",
            ErrorCode::UnknownHardware => "unknown_hardware",
            ErrorCode::UnknownKey => "unknown_key",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::RequestTimeout => "request_timeout",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::UnsupportedEncoding => "unsupported_encoding",
            ErrorCode::Busy => "busy",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::NoNvml => "no_nvml",
            ErrorCode::NoGpu => "no_gpu",
            ErrorCode::NoStore => "no_store",
            ErrorCode::Internal => "internal",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::CudaError => "cuda_error",
            ErrorCode::VerificationFailed => "verification_failed",
            ErrorCode::TimeLimit => "time_limit",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the wire spelling (`ErrorCode::NotFound == "not_found"`).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The body of every error response: a stable snake_case `code` and a human message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// Human-readable explanation.
    pub message: String,
}

/// `GET /api/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: String,
    /// The endpoint's version (Cargo package version).
    pub version: String,
    /// Active measurement backend.
    pub backend: BackendKind,
    /// Why this backend was chosen (e.g. `libcuda not found`).
    #[serde(default)]
    pub backend_reason: String,
}

/// `GET /api/nvml/status`: one NVML sample (the original toolkit's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NvmlStatus {
    /// Device name as NVML reports it.
    pub device_name: String,
    /// Graphics clock, in MHz.
    pub gpu_clock_mhz: f64,
    /// Memory clock, in MHz.
    pub mem_clock_mhz: f64,
    /// Power draw, in W.
    pub power_draw_w: f64,
    /// Enforced power limit, in W.
    pub power_limit_w: f64,
    /// GPU temperature, in °C.
    pub temperature_c: f64,
    /// Used device memory, in MB (1e6 bytes).
    pub mem_used_mb: f64,
    /// Total device memory, in MB (1e6 bytes).
    pub mem_total_mb: f64,
    /// GPU utilization, in percent.
    pub gpu_utilization_pct: f64,
    /// CUDA compute capability `[major, minor]`.
    pub compute_capability: [u32; 2],
    /// Active clock-throttle reasons (empty when none).
    #[serde(default)]
    pub throttle_reasons: Vec<String>,
}

/// `POST /api/analyze` query string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzeQuery {
    /// Catalog key (aliases accepted); defaults to `gb10`.
    #[serde(default = "default_hardware_key")]
    pub hardware_key: String,
    /// Run FP16, FP8_E4M3, NVFP4, INT8 and INT4 one after another.
    #[serde(default)]
    pub run_all_precisions: bool,
    /// Ceilings of the predictions sent beside the measurements: `datasheet` or `reference` (the default).
    #[serde(default)]
    pub mode: Mode,
    /// Measure on the device (the default). `measure=false` answers the predictions only: it never takes the
    /// device, so it is never refused as busy, and `measured` is empty.
    #[serde(default = "default_true")]
    pub measure: bool,
}

fn default_true() -> bool {
    true
}

fn default_hardware_key() -> String {
    "gb10".to_owned()
}

/// The precisions `run_all_precisions=true` runs, in order (the original toolkit's set).
pub const RUN_ALL_PRECISIONS: [Precision; 5] = [
    Precision::Fp16,
    Precision::Fp8E4M3,
    Precision::Nvfp4,
    Precision::Int8,
    Precision::Int4,
];

/// `POST /api/analyze` body: one matmul shape. `M <= 1` is a GEMV `y[N] = W[N,K]·x[K]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzeRequest {
    /// Rows of the activation (tokens); 1 means GEMV.
    #[serde(rename = "M")]
    pub m: u64,
    /// Output features.
    #[serde(rename = "N")]
    pub n: u64,
    /// Reduction (input features).
    #[serde(rename = "K")]
    pub k: u64,
    /// Precision of weights and activations.
    pub precision: Precision,
    /// Optional explicit list of precisions to run instead of `precision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precisions: Option<Vec<Precision>>,
}

/// Whether a point was predicted or measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointSource {
    /// Predicted by roofline-core.
    Simulated,
    /// Measured on a live device.
    Measured,
}

/// What really ran for a measured point, and under which conditions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Measurement {
    /// Backend that ran it.
    pub backend: BackendKind,
    /// Library, e.g. `cuBLASLt 12.8.4`, `NVRTC`, `gemm 0.19 (CPU)`.
    pub library: String,
    /// Kernel or algorithm that ran, e.g. `cublasLt algo 21`, `W4A16-dequant`.
    pub kernel: String,
    /// Device name.
    pub device_name: String,
    /// Catalog key of the device that ran it (`h100_sxm`), when the device was detected as a catalog entry
    /// (the `matched_key` of `GET /api/device`); absent on the CPU and fake backends, on unknown GPUs and in
    /// older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_key: Option<String>,
    /// Version strings: driver, CUDA, cuBLAS, … (name → version).
    #[serde(default)]
    pub versions: Vec<(String, String)>,
    /// Median of the timed samples, in seconds.
    pub median_s: f64,
    /// 10th percentile, in seconds.
    pub p10_s: f64,
    /// 90th percentile, in seconds.
    pub p90_s: f64,
    /// Number of timed samples.
    pub samples: u32,
    /// Whether the L2 cache was flushed between samples.
    pub l2_flushed: bool,
    /// Whether the output was checked against a reference before timing.
    pub verified: bool,
    /// Padding applied to the shape, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padding: Option<String>,
    /// Median SM clock during the run, in MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<f64>,
    /// Median power during the run, in W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// Maximum temperature during the run, in °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    /// Throttle reasons seen during the run.
    #[serde(default)]
    pub throttle_reasons: Vec<String>,
    /// Unix time of the measurement, in seconds.
    #[serde(default)]
    pub timestamp_unix_s: f64,
}

/// The measurement backend of an endpoint: the GPU through CUDA, the host CPU, or the fake backend of tests;
/// `unknown` for a value a newer endpoint sends that this build does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// NVIDIA GPU through the CUDA driver, cuBLASLt and NVRTC.
    Cuda,
    /// The host CPU (the `gemm` crate and plain loops).
    Cpu,
    /// Tests' fake backend: sleeps, never measures.
    Fake,
    /// Not said, or not known to this build.
    #[default]
    #[serde(other)]
    Unknown,
}

impl BackendKind {
    /// `cuda`, `cpu`, `fake` or `unknown`: the wire spelling.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Cpu => "cpu",
            BackendKind::Fake => "fake",
            BackendKind::Unknown => "unknown",
        }
    }
}

impl From<&str> for BackendKind {
    /// Reads the wire spelling; anything else is [`BackendKind::Unknown`], as in JSON.
    fn from(name: &str) -> Self {
        match name {
            "cuda" => BackendKind::Cuda,
            "cpu" => BackendKind::Cpu,
            "fake" => BackendKind::Fake,
            _ => BackendKind::Unknown,
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What limits a point: the original toolkit's `bottleneck` values (`memory`, `compute`), `interconnect` for
/// a collective, and `unknown` for a measurement with no prediction beside it (and any value a newer
/// endpoint sends that this build does not know).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bottleneck {
    /// Bytes / bandwidth ≥ FLOPs / peak.
    Memory,
    /// FLOPs / peak > bytes / bandwidth.
    Compute,
    /// A collective, limited by the GPU-to-GPU link.
    Interconnect,
    /// Not predicted.
    #[serde(other)]
    Unknown,
}

impl Bottleneck {
    /// `memory`, `compute`, `interconnect` or `unknown`: the wire spelling.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Bottleneck::Memory => "memory",
            Bottleneck::Compute => "compute",
            Bottleneck::Interconnect => "interconnect",
            Bottleneck::Unknown => "unknown",
        }
    }
}

impl From<Bound> for Bottleneck {
    fn from(bound: Bound) -> Self {
        match bound {
            Bound::Memory => Bottleneck::Memory,
            Bound::Compute => Bottleneck::Compute,
            Bound::Interconnect => Bottleneck::Interconnect,
        }
    }
}

impl std::fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One point on the roofline (the original toolkit's `RooflinePoint`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    /// Arithmetic intensity, in FLOP/byte.
    pub ai: f64,
    /// Achieved (measured) or attainable (simulated) throughput, in TFLOP/s (1e12 FLOP/s).
    pub tflops: f64,
    /// Time, in µs.
    pub time_us: f64,
    /// Precision that ran (for a measured point: what really ran, never a stand-in).
    pub precision: Precision,
    /// Shape label of the operator: `MxNxK` for a GEMM or GEMV, the operator's own label otherwise (e.g.
    /// `1x2048` for a norm over one token).
    pub shape: String,
    /// Kind of the operator that ran or was predicted. Absent from older records, which are all GEMMs or
    /// GEMVs of shape `MxNxK`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OpKind>,
    /// Display label, e.g. `GEMV 1x4096x4096 [FP16]`.
    pub label: String,
    /// Simulated or measured.
    pub source: PointSource,
    /// The bound of its prediction; `unknown` for a measurement with no prediction beside it.
    pub bottleneck: Bottleneck,
    /// Effective DRAM bandwidth = bytes / time, in GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gb_s: Option<f64>,
    /// Weight, activation and output precisions of the operator that ran or was predicted (W4A16: INT4
    /// group-128 weights, FP16 activations). Absent from older records, where all are `precision` with its
    /// default output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operands: Option<OperandPrecisions>,
    /// For measured points: what ran and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<Measurement>,
    /// For simulated points: the ceilings of the prediction (absent from measured points and older
    /// records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

impl RooflinePoint {
    /// A simulated point from a prediction.
    #[must_use]
    pub fn simulated(op: &Operator, prediction: &Prediction) -> RooflinePoint {
        let precision = op.precisions.compute();
        RooflinePoint {
            ai: prediction.arithmetic_intensity,
            tflops: prediction.attainable_flop_per_s / TERA,
            time_us: prediction.time_s / MICRO,
            precision,
            shape: op.shape.clone(),
            kind: Some(op.kind),
            label: format!("{} [{precision}]", op.name),
            source: PointSource::Simulated,
            bottleneck: prediction.bound.into(),
            bandwidth_gb_s: Some(prediction.bytes / prediction.time_s / 1e9),
            operands: Some(op.precisions),
            measurement: None,
            mode: Some(prediction.mode),
        }
    }
}

/// A precision that produced no point, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The precision that was asked for (a step's end-to-end timing: its config's compute precision).
    pub precision: Precision,
    /// Stable code: `unsupported`, `no_gpu`, `cuda_error`, `verification_failed`, …
    pub code: ErrorCode,
    /// Human-readable reason, naming the architecture where relevant.
    pub message: String,
}

/// `POST /api/analyze` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeResponse {
    /// Display name of the hardware the prediction used.
    pub hardware: String,
    /// Catalog key of that hardware.
    #[serde(default)]
    pub hardware_key: String,
    /// One predicted point per requested precision the device supports.
    pub simulated: Vec<RooflinePoint>,
    /// Measured points (empty when nothing was measured).
    pub measured: Vec<RooflinePoint>,
    /// Every precision that could not be predicted or measured, with the reason.
    pub failed: Vec<Failure>,
}

// ---------------------------------------------------------------------------------------------------------
// Endpoint types added with issue #5 (device info, benchmark jobs, calibration, stored results).
// ---------------------------------------------------------------------------------------------------------

/// `GET /api/device`: the device the active backend measures on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Active backend.
    pub backend: BackendKind,
    /// Device name (GPU name as the driver reports it, or the host CPU model).
    pub name: String,
    /// Architecture, e.g. `sm_90` or `x86_64`.
    pub arch: String,
    /// CUDA compute capability `[major, minor]` (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<[u32; 2]>,
    /// Total device (or host) memory, in MB (1e6 bytes).
    pub memory_total_mb: f64,
    /// Free device (or host) memory, in MB (1e6 bytes), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_free_mb: Option<f64>,
    /// Streaming multiprocessors (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<u32>,
    /// Logical CPU cores (CPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<u32>,
    /// Maximum SM clock, in MHz, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_max_mhz: Option<f64>,
    /// Maximum memory clock, in MHz, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_clock_max_mhz: Option<f64>,
    /// L2 (GPU) or last-level (CPU) cache, in MB (1e6 bytes), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_mb: Option<f64>,
    /// Version strings: driver, CUDA, cuBLAS, endpoint, … (name → version).
    #[serde(default)]
    pub versions: Vec<(String, String)>,
    /// Catalog key matched from the device name (`NVIDIA H100 80GB HBM3` → `h100_sxm`); null on a CPU.
    pub matched_key: Option<String>,
    /// Precisions the backend can measure natively.
    #[serde(default)]
    pub measurable_precisions: Vec<Precision>,
}

/// `POST /api/benchmarks` body: every shape × every precision, measured one after another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkRequest {
    /// Shapes as `[M, N, K]`; `M <= 1` is a GEMV.
    pub shapes: Vec<[u64; 3]>,
    /// Precisions to run for every shape.
    pub precisions: Vec<Precision>,
    /// Catalog key the points are predicted on (for the prediction sent with each point); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_key: Option<String>,
    /// Ceilings of those predictions: `datasheet` or `reference` (the default).
    #[serde(default)]
    pub mode: Mode,
}

/// `POST /api/benchmarks` answer (202): the job and where it sits in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkJob {
    /// Job id (use in `/api/benchmarks/{id}/events` and `DELETE /api/benchmarks/{id}`).
    pub id: String,
    /// Jobs ahead of this one (0 = runs now).
    pub position: u32,
    /// Points this job will try (shapes × precisions).
    pub total: u32,
    /// URL of the job's SSE event stream.
    pub events_url: String,
}

/// SSE `point` event of a benchmark job: one measured point and its prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkPointEvent {
    /// Job id.
    pub job_id: String,
    /// Index of this point in the job (0-based, over shapes × precisions).
    pub index: u32,
    /// Points the job will try.
    pub total: u32,
    /// The measured point.
    pub point: RooflinePoint,
    /// The roofline prediction for the same operator on `hardware_key`, when one was asked for and exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<RooflinePoint>,
    /// (measured − predicted) / predicted time, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
}

/// SSE `failed` event of a benchmark job: a point that produced no measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkFailedEvent {
    /// Job id.
    pub job_id: String,
    /// Index of this point in the job (0-based).
    pub index: u32,
    /// Points the job will try.
    pub total: u32,
    /// Shape as `MxNxK`.
    pub shape: String,
    /// Why.
    pub failure: Failure,
}

/// SSE `done` event: the job finished (or was cancelled); the stream ends after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkDoneEvent {
    /// Job id.
    pub job_id: String,
    /// Points measured.
    pub measured: u32,
    /// Points failed.
    pub failed: u32,
    /// Whether the job was cancelled before its last point.
    pub cancelled: bool,
}

/// `POST /api/calibrate` body (every field optional; an unknown field is refused, so a misspelt one cannot
/// silently start a full calibration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CalibrateRequest {
    /// Precisions whose achieved peak is measured (default: every precision the backend runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precisions: Option<Vec<Precision>>,
    /// Catalog key whose datasheet spec is the starting point (default: the matched device, else none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_key: Option<String>,
}

/// One calibrated quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedPeak {
    /// Precision that ran.
    pub precision: Precision,
    /// Achieved throughput, in TFLOP/s.
    pub achieved_tflops: f64,
    /// Shape that achieved it, `MxNxK`.
    pub shape: String,
    /// What ran.
    pub measurement: Measurement,
}

/// The fixed per-kernel overhead: a small GEMV's time minus its bytes over the copy bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelOverhead {
    /// Overhead, in µs (never negative).
    pub kernel_overhead_us: f64,
    /// The GEMV's measured median, in µs.
    pub gemv_time_us: f64,
    /// The GEMV's shape, `MxNxK`.
    pub shape: String,
    /// Its precision.
    pub precision: Precision,
    /// What ran.
    pub measurement: Measurement,
}

/// The fixed overhead of a vector kernel: a one-row RMSNorm's time minus its bytes over the copy bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorKernelOverhead {
    /// Overhead, in µs (never negative).
    pub kernel_overhead_us: f64,
    /// The kernel's measured median, in µs.
    pub kernel_time_us: f64,
    /// The operator's shape label, e.g. `256` (elements of the one row).
    pub shape: String,
    /// What ran.
    pub measurement: Measurement,
}

/// `POST /api/calibrate` answer: measured bandwidth and peaks, and the calibrated spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationResult {
    /// Measured device-memory copy bandwidth (read + write bytes / time), in GB/s.
    pub bandwidth_gb_s: f64,
    /// What the copy kernel was and how it was timed.
    pub bandwidth_measurement: Measurement,
    /// Achieved peak per precision.
    pub peaks: Vec<CalibratedPeak>,
    /// The per-kernel overhead of matrix kernels, when it could be measured (the spec's peaks'
    /// `kernel_overhead_s`, or its `kernel_overhead_s` without a vector-kernel figure; else 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_overhead: Option<KernelOverhead>,
    /// The per-kernel overhead of vector kernels (norms, activations, copies), when it could be measured
    /// (the spec's `kernel_overhead_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_kernel_overhead: Option<VectorKernelOverhead>,
    /// Precisions that could not be calibrated, and why.
    pub failed: Vec<Failure>,
    /// The calibrated spec (`provenance: measured`), usable wherever a catalog spec is.
    pub spec: crate::hardware::HardwareSpec,
}

/// `GET /api/results` query: every filter optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ResultsQuery {
    /// Device name, substring match, case-insensitive.
    #[serde(default)]
    pub device: Option<String>,
    /// Precision that ran (any spelling `Precision` parses, e.g. `fp16`).
    #[serde(default)]
    pub precision: Option<Precision>,
    /// Shape `MxNxK`.
    #[serde(default)]
    pub shape: Option<String>,
    /// Only results at or after this Unix time, in seconds.
    #[serde(default)]
    pub since: Option<f64>,
    /// At most this many results (newest first; default 100, max 1000).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `DELETE /api/results` query: which stored measurements to delete. The filters are those of
/// [`ResultsQuery`] (without `shape` and `limit`); at least one filter, or `all=true`, is required, so an
/// empty query never deletes everything by accident.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DeleteResultsQuery {
    /// Device name, substring match, case-insensitive.
    #[serde(default)]
    pub device: Option<String>,
    /// Precision that ran (any spelling `Precision` parses, e.g. `fp16`).
    #[serde(default)]
    pub precision: Option<Precision>,
    /// Only results at or after this Unix time, in seconds.
    #[serde(default)]
    pub since: Option<f64>,
    /// Delete every stored measurement (needed when no filter is given).
    #[serde(default)]
    pub all: bool,
}

/// `DELETE /api/results` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedResults {
    /// How many stored measurements were deleted.
    pub deleted: u64,
}

/// One stored measurement (`GET /api/results`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredResult {
    /// Row id.
    pub id: i64,
    /// Benchmark job that produced it (null for `/api/analyze` and calibration points).
    pub job_id: Option<String>,
    /// Device name.
    pub device: String,
    /// The measured point.
    pub point: RooflinePoint,
    /// The prediction it was compared with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<RooflinePoint>,
    /// Unix time it was stored, in seconds.
    pub created_unix_s: f64,
}

// ---------------------------------------------------------------------------------------------------------
// Command-line JSON outputs (`bench --json`, `validate --json`): the same types are written and read back.
// ---------------------------------------------------------------------------------------------------------

/// `gpu-endpoint bench --json` / `compare --json` output; `validate --measured` reads it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Measured points, in the order they ran.
    pub points: Vec<BenchmarkPointEvent>,
    /// Points that produced no measurement, and why.
    #[serde(default)]
    pub failed: Vec<BenchmarkFailedEvent>,
}

/// One mode's prediction of a measured point (`validate --json`); every field but `reason` is absent when
/// there is no prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeCheck {
    /// Predicted time, in seconds.
    pub predicted_s: Option<f64>,
    /// The roof that limits the prediction.
    pub bound: Option<crate::roofline::Bound>,
    /// (measured − predicted) / predicted, in percent.
    pub error_pct: Option<f64>,
    /// Why there is no prediction.
    pub reason: Option<String>,
}

impl ModeCheck {
    /// The check of one mode, or why there is none.
    #[must_use]
    pub fn of(check: &Result<crate::validation::Check, crate::error::Error>) -> ModeCheck {
        match check {
            Ok(c) => ModeCheck {
                predicted_s: Some(c.predicted_s),
                bound: Some(c.bound),
                error_pct: Some(c.error_pct),
                reason: None,
            },
            Err(e) => ModeCheck {
                predicted_s: None,
                bound: None,
                error_pct: None,
                reason: Some(e.to_string()),
            },
        }
    }
}

/// One measured point and its predictions in every mode (`validate --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidatedPoint {
    /// Shape `MxNxK`.
    pub shape: String,
    /// Precision that ran.
    pub precision: Precision,
    /// GEMV or GEMM.
    pub regime: crate::validation::Regime,
    /// What ran (the measurement's kernel).
    pub kernel: String,
    /// Measured median, in seconds.
    pub measured_s: f64,
    /// On the datasheet spec.
    pub datasheet: ModeCheck,
    /// On the reference spec.
    pub reference: ModeCheck,
    /// On the calibrated spec, when one was given.
    pub calibrated: Option<ModeCheck>,
}

/// Error statistics of each mode (`validate --json`); empty for a mode without predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeStats {
    /// Datasheet mode.
    pub datasheet: Vec<crate::validation::ErrorStats>,
    /// Reference mode.
    pub reference: Vec<crate::validation::ErrorStats>,
    /// Calibrated mode.
    pub calibrated: Vec<crate::validation::ErrorStats>,
}

/// `roofline validate --json` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// The catalog spec the datasheet predictions used.
    pub datasheet_spec: crate::hardware::HardwareSpec,
    /// The calibrated spec, when one was given.
    pub calibrated_spec: Option<crate::hardware::HardwareSpec>,
    /// Every measured point.
    pub rows: Vec<ValidatedPoint>,
    /// Median and p90 |error| by precision and regime, per mode.
    pub stats: ModeStats,
}

#[cfg(test)]
mod tests {
    use super::{Bottleneck, ErrorCode};
    use crate::roofline::Bound;

    #[test]
    fn bottlenecks_keep_the_original_spelling_and_read_unknown_values() {
        for (b, text) in [
            (Bottleneck::Memory, "\"memory\""),
            (Bottleneck::Compute, "\"compute\""),
            (Bottleneck::Unknown, "\"unknown\""),
        ] {
            assert_eq!(serde_json::to_string(&b).unwrap(), text);
            assert_eq!(serde_json::from_str::<Bottleneck>(text).unwrap(), b);
        }
        // A value from a newer endpoint is not an error: it reads as unknown.
        assert_eq!(
            serde_json::from_str::<Bottleneck>("\"l2\"").unwrap(),
            Bottleneck::Unknown
        );
        assert_eq!(Bottleneck::from(Bound::Compute), Bottleneck::Compute);
    }

    #[test]
    fn error_codes_keep_their_wire_spelling() {
        for code in [
            ErrorCode::InvalidInput,
            ErrorCode::ForbiddenOrigin,
            ErrorCode::NoNvml,
            ErrorCode::TimeLimit,
        ] {
            assert_eq!(
                serde_json::to_string(&code).unwrap(),
                format!("\"{}\"", code.as_str())
            );
            assert_eq!(
                serde_json::from_str::<ErrorCode>(&format!("\"{code}\"")).unwrap(),
                code
            );
        }
        // A code from a newer server still parses.
        assert_eq!(
            serde_json::from_str::<ErrorCode>("\"quota_exceeded\"").unwrap(),
            ErrorCode::Unknown
        );
    }
}
