//! Corrections below the ideal roofline, each switchable, and the corrected analysis of one operator.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use crate::memory::MemoryFraction;
use crate::ops::{GemmShape, OpKind, OperandPrecisions, Operator};
use crate::roofline::{Bound, predict};
use roofline_base::Error;
use roofline_base::hardware::{HardwareSpec, Mode};
use roofline_base::precision::{ActivationScale, Precision};

/// Minimum time of one kernel, in seconds (4 µs).
///
/// An assumption, not a measurement of any catalogued device: host-side launch plus the GPU's kernel
/// start/drain is commonly quoted at 2–5 µs per launch without CUDA Graphs. Calibrate it per system.
pub const KERNEL_LAUNCH_FLOOR_S: f64 = 4e-6;

/// Output tile edge (M and N) assumed for wave quantization, in elements (128×128, CUTLASS's default).
pub const WAVE_TILE: u64 = 128;

/// Host-side cost of launching one step as a CUDA graph, in seconds (15 µs).
///
/// Source: ahrefs/ocannl #488, a CUDA graph launch measured at ≈ 15 µs plus 0.58 µs per node (the per-node
/// part is inside the per-kernel floors here).
pub const GRAPH_LAUNCH_S: f64 = 15e-6;

/// Host-side cost of one eager kernel launch, in seconds (6.4 µs; same source as [`GRAPH_LAUNCH_S`]).
pub const EAGER_LAUNCH_S: f64 = 6.4e-6;

/// How a whole step's kernels are launched from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum StepLaunch {
    /// No host overhead (the ideal bound).
    #[default]
    Ignored,
    /// One CUDA graph per step, as serving engines run decode: the step adds [`GRAPH_LAUNCH_S`].
    CudaGraphs,
    /// One host launch per kernel: the step takes max(Σ kernel times, kernels · [`EAGER_LAUNCH_S`]), since
    /// the GPU idles whenever kernels are shorter than their launches.
    Eager,
}

impl StepLaunch {
    /// Time the host launch adds to a step whose kernels take `kernels_s` in all, in seconds.
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::StepLaunch;
    /// // 100 kernels of 1 µs launched eagerly: the host needs 640 µs, the GPU idles 540 µs of them.
    /// assert!((StepLaunch::Eager.overhead_s(100e-6, 100) - 540e-6).abs() < 1e-12);
    /// assert_eq!(StepLaunch::CudaGraphs.overhead_s(100e-6, 100), 15e-6);
    /// ```
    #[must_use]
    pub fn overhead_s(self, kernels_s: f64, kernels: u32) -> f64 {
        match self {
            StepLaunch::Ignored => 0.0,
            StepLaunch::CudaGraphs => GRAPH_LAUNCH_S,
            StepLaunch::Eager => (f64::from(kernels) * EAGER_LAUNCH_S - kernels_s).max(0.0),
        }
    }
}

/// Which corrections to apply on top of the ideal roofline, and the engine memory rule of the fit. `Default`
/// applies none, with vLLM's memory rule.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Corrections {
    /// Raise every kernel to at least [`KERNEL_LAUNCH_FLOOR_S`].
    pub launch_floor: bool,
    /// Divide GEMM compute time by the wave efficiency on the device's SM count.
    pub wave_quantization: bool,
    /// Quantize FP8/INT8/FP4 activations in their own kernel before each linear layer.
    pub activation_quantization: bool,
    /// Host launch overhead of a whole step.
    pub step_launch: StepLaunch,
    /// How the serving engine splits device memory: the step's memory fit ([`crate::StepMemory`]).
    pub memory: MemoryFraction,
}

impl Corrections {
    /// The ideal roofline: no correction.
    pub const NONE: Corrections = Corrections {
        launch_floor: false,
        wave_quantization: false,
        activation_quantization: false,
        step_launch: StepLaunch::Ignored,
        memory: MemoryFraction::VLLM,
    };
    /// What real engines pay on top of the ceilings: activation quantization kernels and one CUDA graph
    /// launch per step (the per-kernel floors come with the spec).
    ///
    /// Wave quantization stays off: on the H100 SXM suite of docs/validation it made reference predictions
    /// worse (median |error| 3.2 % → 5.1 %, p90 12.6 % → 31.7 %), because cuBLASLt splits K (split-K,
    /// stream-K) to fill the SMs where 128×128 tiles would leave them idle. A smooth max(compute, memory) at
    /// the ridge point was tried too and also made the median worse once the per-kernel floor is added.
    pub const REALISTIC: Corrections = Corrections {
        launch_floor: false,
        wave_quantization: false,
        activation_quantization: true,
        step_launch: StepLaunch::CudaGraphs,
        memory: MemoryFraction::VLLM,
    };
    /// Every correction (the fixed launch floor included).
    pub const ALL: Corrections = Corrections {
        launch_floor: true,
        ..Corrections::REALISTIC
    };

    /// The corrections of predictions on `hardware`: those of its mode ([`Corrections::for_mode`]), with no
    /// step launch on the endpoint's host CPU ([`HardwareSpec::is_cpu_host`]: its CPU backend calls kernels
    /// as plain functions, whose fixed cost its calibrated per-kernel overhead already holds).
    #[must_use]
    pub fn for_spec(hardware: &HardwareSpec) -> Corrections {
        let mode = Corrections::for_mode(Mode::of(hardware));
        if hardware.is_cpu_host() {
            Corrections {
                step_launch: StepLaunch::Ignored,
                ..mode
            }
        } else {
            mode
        }
    }

    /// The corrections of `mode`: none for the datasheet bound, [`Corrections::REALISTIC`] otherwise.
    #[must_use]
    pub const fn for_mode(mode: Mode) -> Corrections {
        match mode {
            Mode::Datasheet => Corrections::NONE,
            Mode::Reference | Mode::Calibrated => Corrections::REALISTIC,
        }
    }
}

/// Wave efficiency of `tiles` output tiles on `sm_count` SMs: tiles / (⌈tiles / SMs⌉ · SMs), in (0, 1].
///
/// # Examples
/// ```
/// // 4096×4096 output on an H100 SXM (132 SMs): 1024 tiles in 8 waves, 1024 / 1056 = 0.97.
/// assert!((roofline_analysis::wave_efficiency(1024, 132) - 1024.0 / 1056.0).abs() < 1e-12);
/// ```
#[must_use]
pub fn wave_efficiency(tiles: u64, sm_count: u32) -> f64 {
    let sms = f64::from(sm_count.max(1));
    let tiles = tiles.max(1) as f64;
    tiles / ((tiles / sms).ceil() * sms)
}

/// The corrected roofline analysis of one operator (per instance; `count` instances in a model).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct OpAnalysis {
    /// Role or display name, e.g. `qkv_proj`.
    pub name: String,
    /// Kind.
    pub kind: OpKind,
    /// Shape label.
    pub shape: String,
    /// How many times the operator runs (e.g. once per layer).
    pub count: u32,
    /// Precision it computes in (matrix operators) or stores activations in (vector operators).
    pub precision: Precision,
    /// Work per instance, in FLOP.
    pub flops: f64,
    /// DRAM traffic per instance, in bytes.
    pub bytes: f64,
    /// Weight bytes per instance.
    pub weight_bytes: f64,
    /// KV-cache bytes per instance.
    pub kv_bytes: f64,
    /// Arithmetic intensity, in FLOP/byte.
    pub arithmetic_intensity: f64,
    /// Peak it runs against (tensor path or vector units), in FLOP/s.
    pub peak_flop_per_s: f64,
    /// Ridge point = peak / bandwidth, in FLOP/byte.
    pub ridge_point: f64,
    /// Attainable throughput = FLOPs / time after corrections, in FLOP/s.
    pub attainable_flop_per_s: f64,
    /// Compute time per instance after wave quantization, in seconds.
    pub compute_time_s: f64,
    /// Memory time per instance, in seconds.
    pub memory_time_s: f64,
    /// Ideal roofline time per instance, max(FLOPs / peak, bytes / bandwidth) + the kernel overhead, in
    /// seconds.
    pub ideal_time_s: f64,
    /// Fixed time the kernel adds (the spec's per-kernel floor or measured overhead), in seconds.
    pub kernel_overhead_s: f64,
    /// Predicted time per instance after corrections, in seconds.
    pub time_s: f64,
    /// Which roof limits it (after wave quantization).
    pub bound: Bound,
    /// Wave efficiency applied to the compute time (1 when off or not a GEMM).
    pub wave_efficiency: f64,
    /// Whether the launch floor set the time.
    pub launch_bound: bool,
    /// The operator itself (operand precisions, GEMM shape or kernel description): what a measurement runs.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub operator: Operator,
}

impl OpAnalysis {
    /// Time of all instances, `count · time_s`, in seconds.
    #[must_use]
    pub fn total_time_s(&self) -> f64 {
        f64::from(self.count) * self.time_s
    }
}

/// Analyses one operator on one device: the roofline of [`predict`] plus the enabled `corrections`.
///
/// # Errors
/// [`Error::Unsupported`] when the device has no native path for a matrix operator's precision.
///
/// # Examples
/// ```
/// use roofline_base::{find_hardware, Precision};
/// use roofline_analysis::{analyze_operator, Corrections, Operator};
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let tiny = Operator::gemv(64, 64, Precision::Bf16.into()).unwrap();
/// let ideal = analyze_operator(h100, &tiny, &Corrections::NONE).unwrap();
/// let floored = analyze_operator(h100, &tiny, &Corrections::ALL).unwrap();
/// assert!(ideal.time_s < 1e-8);
/// assert_eq!(floored.time_s, roofline_analysis::KERNEL_LAUNCH_FLOOR_S);
/// ```
pub fn analyze_operator(
    hardware: &HardwareSpec,
    op: &Operator,
    corrections: &Corrections,
) -> Result<OpAnalysis, Error> {
    let p = predict(hardware, op)?;
    let wave_efficiency = match (corrections.wave_quantization, op.gemm, hardware.sm_count) {
        (true, Some(g), Some(sms)) => wave_efficiency(
            g.batch
                .saturating_mul(g.m.div_ceil(WAVE_TILE))
                .saturating_mul(g.n.div_ceil(WAVE_TILE)),
            sms,
        ),
        _ => 1.0,
    };
    let compute_time_s = p.compute_time_s / wave_efficiency;
    let roofline_time_s = compute_time_s.max(p.memory_time_s) + p.kernel_overhead_s;
    let launch_bound = corrections.launch_floor && roofline_time_s < KERNEL_LAUNCH_FLOOR_S;
    let time_s = if launch_bound {
        KERNEL_LAUNCH_FLOOR_S
    } else {
        roofline_time_s
    };
    Ok(OpAnalysis {
        name: op.name.clone(),
        kind: op.kind,
        shape: op.shape.clone(),
        count: 1,
        precision: op.precisions.compute(),
        flops: p.flops,
        bytes: p.bytes,
        weight_bytes: op.weight_bytes,
        kv_bytes: op.kv_bytes,
        arithmetic_intensity: p.arithmetic_intensity,
        peak_flop_per_s: p.peak_flop_per_s,
        ridge_point: p.ridge_point,
        attainable_flop_per_s: p.flops / time_s,
        compute_time_s,
        memory_time_s: p.memory_time_s,
        ideal_time_s: p.time_s,
        kernel_overhead_s: p.kernel_overhead_s,
        time_s,
        bound: if p.bound == Bound::Interconnect {
            Bound::Interconnect
        } else if p.memory_time_s >= compute_time_s {
            Bound::Memory
        } else {
            Bound::Compute
        },
        wave_efficiency,
        launch_bound,
        operator: op.clone(),
    })
}

/// One linear layer as engines run it: the activation-quantization kernels of its input (where its
/// activations are narrower than what the previous layer wrote) and the GEMM.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LinearAnalysis {
    /// The quantization kernels, in launch order (empty when the input needs none or the correction is off).
    pub quantize: Vec<OpAnalysis>,
    /// The GEMM (or GEMV, or batched GEMM).
    pub gemm: OpAnalysis,
    /// Σ time of the kernels, in seconds.
    pub time_s: f64,
}

/// Analyses one linear layer of `shape` in `precisions` whose input arrives in `input` (the hidden format
/// the previous layer wrote): with [`Corrections::activation_quantization`], the kernels that quantize its
/// B·M×K input to the activation format under `scale` ([`Operator::activation_quantization`]), then the
/// GEMM, each with its own roofline and floor. A framework's "FP8 Linear" is this, not a bare GEMM.
///
/// # Errors
/// As [`analyze_operator`], and [`Error::InvalidInput`] for a zero or oversized dimension.
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// let h100 = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
/// let shape = GemmShape { batch: 1, m: 1, n: 4096, k: 4096 };
/// let fp8 = analyze_linear(h100, shape, Precision::Fp8E4M3.into(), Precision::Bf16,
///     ActivationScale::DynamicPerTensor, &Corrections::REALISTIC).unwrap();
/// // Dynamic per-tensor FP8: the absolute-maximum reduction, the quantization, the GEMV.
/// assert_eq!(fp8.quantize.len(), 2);
/// assert!((fp8.time_s - fp8.quantize.iter().map(|q| q.time_s).sum::<f64>() - fp8.gemm.time_s).abs() < 1e-15);
/// ```
pub fn analyze_linear(
    hardware: &HardwareSpec,
    shape: GemmShape,
    precisions: OperandPrecisions,
    input: Precision,
    scale: ActivationScale,
    corrections: &Corrections,
) -> Result<LinearAnalysis, Error> {
    let gemm_op = if shape.batch == 1 {
        Operator::matmul(shape.m, shape.n, shape.k, precisions)?
    } else {
        Operator::batched_gemm(shape.batch, shape.m, shape.n, shape.k, precisions)?
    };
    let gemm = analyze_operator(hardware, &gemm_op, corrections)?;
    let quantize = if corrections.activation_quantization && precisions.activation != input {
        Operator::activation_quantization(
            shape.batch.saturating_mul(shape.m),
            shape.k,
            input,
            precisions.activation,
            scale,
        )?
        .iter()
        .map(|op| analyze_operator(hardware, op, corrections))
        .collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    let time_s = quantize.iter().map(|q| q.time_s).sum::<f64>() + gemm.time_s;
    Ok(LinearAnalysis {
        quantize,
        gemm,
        time_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_base::hardware::find_hardware;

    #[test]
    fn the_endpoints_host_cpu_launches_no_cuda_graph() {
        use roofline_base::hardware::{CPU_HOST_KEY, Calibration, HardwareSpec};
        let cpu = HardwareSpec::uncatalogued(CPU_HOST_KEY, "Host CPU", "x86-64", 64e9)
            .calibrated(&Calibration {
                device_name: "Host CPU".into(),
                dram_bandwidth_bytes_per_s: 20e9,
                kernel_overhead_s: 1e-6,
                vector_kernel_overhead_s: None,
                peaks: vec![(roofline_base::precision::ComputePath::Fp32, 1e12)],
                weight_only: Vec::new(),
                source: "test".into(),
                quality: None,
            })
            .unwrap();
        assert_eq!(
            Corrections::for_spec(&cpu),
            Corrections {
                step_launch: StepLaunch::Ignored,
                ..Corrections::REALISTIC
            }
        );
        // A GPU keeps its mode's corrections, one CUDA graph launch per step included.
        let h100 = find_hardware("h100_sxm").unwrap();
        assert_eq!(Corrections::for_spec(h100), Corrections::NONE, "datasheet mode");
        let reference = h100.reference().unwrap();
        assert_eq!(Corrections::for_spec(&reference), Corrections::REALISTIC);
    }

    #[test]
    fn wave_quantization_penalizes_a_partial_last_wave() {
        let h100 = find_hardware("h100_sxm").unwrap();
        // 133 tiles of 128×128 on 132 SMs: 2 waves, efficiency 133 / 264 = 0.504.
        let op = Operator::gemm(128 * 7, 128 * 19, 16_384, Precision::Bf16.into()).unwrap();
        let ideal = analyze_operator(h100, &op, &Corrections::NONE).unwrap();
        let waved = analyze_operator(
            h100,
            &op,
            &Corrections {
                wave_quantization: true,
                ..Corrections::NONE
            },
        )
        .unwrap();
        assert_eq!(ideal.wave_efficiency, 1.0);
        assert!((waved.wave_efficiency - 133.0 / 264.0).abs() < 1e-12);
        assert!((waved.compute_time_s * waved.wave_efficiency - ideal.compute_time_s).abs() < 1e-15);
        assert!(waved.time_s >= ideal.time_s);
        // A device without a published SM count is left uncorrected (GB200 publishes none).
        let gb200 = find_hardware("gb200").unwrap();
        assert_eq!(
            analyze_operator(gb200, &op, &Corrections::ALL)
                .unwrap()
                .wave_efficiency,
            1.0
        );
    }

    #[test]
    fn launch_floor_applies_only_below_the_floor() {
        let h100 = find_hardware("h100_sxm").unwrap();
        let big = Operator::gemm(8192, 8192, 8192, Precision::Bf16.into()).unwrap();
        let a = analyze_operator(h100, &big, &Corrections::ALL).unwrap();
        assert!(!a.launch_bound);
        assert_eq!(a.count, 1);
        assert!((a.total_time_s() - a.time_s).abs() < 1e-18);
        let small = Operator::residual_add(1, 4096, Precision::Bf16).unwrap();
        let s = analyze_operator(h100, &small, &Corrections::ALL).unwrap();
        assert!(s.launch_bound);
        assert_eq!(s.time_s, KERNEL_LAUNCH_FLOOR_S);
        assert_eq!(s.peak_flop_per_s, 67e12);
    }
}
