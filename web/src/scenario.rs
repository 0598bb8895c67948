//! The scenario the page looks at (device, model, config, workload, GPUs, mode and corrections, the kernel
//! spot check) and its evaluation through `roofline_core`: the kernel rows, the model step, the advice and
//! the recommendation, and the reference ceilings predictions use.

use roofline_core::hardware::Sourced;
use roofline_core::{
    Advice, Corrections, Engine, Error, GemmFamily, HardwareSpec, MemoryFraction, Mode, ModelAnalysis,
    ModelConfig, OpAnalysis, Operator, Parallelism, Phase, Precision, QuantConfig, QuantizeKernel,
    Recommendation, StepLaunch, VLLM_GPU_MEMORY_UTILIZATION, Workload, advise_model_parallel,
    analyze_model_parallel, analyze_operator, find_quant_config, recommend_model_for_engine,
};
use serde::{Deserialize, Serialize};

use crate::models::resolve_model;
use crate::presets::{DEFAULT_CONFIG, DEFAULT_HARDWARE, DEFAULT_MODEL, DEFAULT_PRECISIONS};
use crate::serving_inputs::{ServingInputs, View};

/// A matrix-multiply spot check: one shape in several precisions on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSpec {
    /// Rows of the activation; 1 means GEMV.
    pub m: u64,
    /// Output features.
    pub n: u64,
    /// Input features.
    pub k: u64,
    /// Precisions to evaluate, in display order.
    pub precisions: Vec<Precision>,
}

impl Default for KernelSpec {
    /// GEMV 1×4096×4096 in the default precisions (the e2e test's scenario on GB10).
    fn default() -> Self {
        KernelSpec {
            m: 1,
            n: 4096,
            k: 4096,
            precisions: DEFAULT_PRECISIONS.to_vec(),
        }
    }
}

/// One precision's outcome in the kernel view.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    /// The precision asked for.
    pub precision: Precision,
    /// The operator (GEMV when M = 1), or why the shape is invalid.
    pub op: Result<Operator, Error>,
    /// The prediction with the scenario's corrections (launch floor, wave quantization), or why there is
    /// none (unsupported precision, invalid shape).
    pub prediction: Result<OpAnalysis, Error>,
}

impl KernelSpec {
    /// Evaluates every precision on `hw` with `corrections` (core's `analyze_operator`: the kernel's
    /// roofline plus the launch floor and wave quantization when on); unsupported ones stay in the list as
    /// errors.
    #[must_use]
    pub fn evaluate(&self, hw: &HardwareSpec, corrections: &Corrections) -> Vec<KernelRow> {
        self.precisions
            .iter()
            .map(|&precision| {
                let op = Operator::matmul(self.m, self.n, self.k, precision.into());
                let prediction = op.clone().and_then(|op| analyze_operator(hw, &op, corrections));
                KernelRow {
                    precision,
                    op,
                    prediction,
                }
            })
            .collect()
    }

    /// Adds `p` if absent (keeping [`Precision::ALL`] order) or removes it if present.
    pub fn toggle(&mut self, p: Precision) {
        if self.precisions.contains(&p) {
            self.precisions.retain(|q| *q != p);
        } else {
            self.precisions.push(p);
            self.precisions
                .sort_by_key(|q| Precision::ALL.iter().position(|a| a == q));
        }
    }
}

/// The prediction mode and the corrections the user adds on top of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "SavedToggles")]
pub struct CorrectionToggles {
    /// A per-kernel launch-latency floor.
    pub launch_floor: bool,
    /// Wave quantization of GEMM tiles over the SMs.
    pub wave_quantization: bool,
    /// Which ceilings predictions use (reference by default).
    pub mode: Mode,
}

/// [`CorrectionToggles`] as saved by any version: before modes, `calibrated: true` meant calibrated roofs;
/// a missing mode is reference.
#[derive(Default, Deserialize)]
#[serde(default)]
struct SavedToggles {
    launch_floor: bool,
    wave_quantization: bool,
    calibrated: bool,
    mode: Option<Mode>,
}

impl From<SavedToggles> for CorrectionToggles {
    fn from(t: SavedToggles) -> Self {
        CorrectionToggles {
            launch_floor: t.launch_floor,
            wave_quantization: t.wave_quantization,
            mode: t.mode.unwrap_or(legacy_mode(t.calibrated)),
        }
    }
}

/// The mode of a link or saved state from before modes: calibrated roofs on, or the default.
pub(crate) const fn legacy_mode(calibrated: bool) -> Mode {
    if calibrated {
        Mode::Calibrated
    } else {
        Mode::Reference
    }
}

/// Everything that defines what the page shows; encoded in the URL and saved locally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scenario {
    /// Device key (catalog or custom).
    pub hardware: String,
    /// Model preset key.
    pub model: String,
    /// Precision config key.
    pub config: String,
    /// Prefill (true) or decode (false).
    pub prefill: bool,
    /// Sequences per step.
    pub batch: u64,
    /// Context length, tokens.
    pub context: u64,
    /// GPUs the step is split over by tensor parallelism (1 in scenarios saved before it existed).
    pub gpus: u32,
    /// Expert-parallel degree within those GPUs (MoE models; 1 = experts split like the dense FFN).
    pub experts: u32,
    /// Corrections to the ideal roofline.
    pub corrections: CorrectionToggles,
    /// The kernel spot check.
    pub kernel: KernelSpec,
    /// The engine's share of device memory the fit uses, vLLM's `gpu_memory_utilization` (0.92 by default,
    /// [`VLLM_GPU_MEMORY_UTILIZATION`]; scenarios saved before it existed read the default).
    pub memory_fraction: f64,
    /// The serving engine the advice keeps to (its documented quantization support) and whose defaults the
    /// serving view takes ([`Scenario::serving_engine`]); `None`: any of vLLM, SGLang and TensorRT-LLM (and
    /// in scenarios saved before it existed).
    pub engine: Option<Engine>,
    /// The view the page shows (the step in scenarios saved before the serving view existed).
    pub view: View,
    /// The serving view's inputs (defaults in scenarios saved before it existed).
    pub serving: ServingInputs,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            hardware: DEFAULT_HARDWARE.to_owned(),
            model: DEFAULT_MODEL.to_owned(),
            config: DEFAULT_CONFIG.to_owned(),
            prefill: false,
            batch: 1,
            context: 4096,
            gpus: 1,
            experts: 1,
            corrections: CorrectionToggles::default(),
            kernel: KernelSpec::default(),
            memory_fraction: VLLM_GPU_MEMORY_UTILIZATION,
            engine: None,
            view: View::default(),
            serving: ServingInputs::default(),
        }
    }
}

/// The memory fractions the page accepts: 0.05 to 1 of device memory.
pub const MEMORY_FRACTION_RANGE: (f64, f64) = (0.05, 1.0);

/// How a device launches a step's kernels from the host: one CUDA graph per step on a GPU; nothing to add
/// on the endpoint's CPU backend (a calibrated `cpu_host` spec), which calls its kernels as plain functions
/// whose fixed cost its calibrated per-kernel overhead already holds.
#[must_use]
pub fn step_launch_of(hw: &HardwareSpec) -> StepLaunch {
    if hw.calibrated_base().is_some_and(|base| base.starts_with("cpu_")) {
        StepLaunch::Ignored
    } else {
        StepLaunch::CudaGraphs
    }
}

impl Scenario {
    /// The engine whose defaults the serving view takes: the scenario's, else core's default engine (vLLM).
    #[must_use]
    pub fn serving_engine(&self) -> Engine {
        self.engine.unwrap_or_default()
    }

    /// The workload of the scenario, as `roofline_core` takes it.
    #[must_use]
    pub fn workload(&self) -> Workload {
        let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        Workload {
            phase: if self.prefill {
                Phase::Prefill
            } else {
                Phase::Decode
            },
            batch: clamp(self.batch),
            context: clamp(self.context),
        }
    }

    /// The corrections of predictions on `hw`, as `roofline_core` takes them: those of its mode
    /// ([`Corrections::for_mode`]) with the device's step launch ([`step_launch_of`], outside datasheet
    /// mode), plus the user's launch floor and wave quantization (the toggles only add), and the scenario's
    /// engine memory fraction.
    #[must_use]
    pub fn core_corrections(&self, hw: &HardwareSpec) -> Corrections {
        let base = Corrections::for_mode(Mode::of(hw));
        let step_launch = match base.step_launch {
            StepLaunch::Ignored => StepLaunch::Ignored,
            _ => step_launch_of(hw),
        };
        Corrections {
            launch_floor: base.launch_floor || self.corrections.launch_floor,
            wave_quantization: base.wave_quantization || self.corrections.wave_quantization,
            step_launch,
            memory: MemoryFraction::OfCapacity(self.memory_fraction),
            ..base
        }
    }

    /// How the step is split over GPUs: tensor parallel over [`Scenario::gpus`], the routed experts divided
    /// between [`Scenario::experts`] of them.
    #[must_use]
    pub const fn parallelism(&self) -> Parallelism {
        Parallelism {
            tensor: self.gpus,
            expert: self.experts,
            pipeline: 1,
        }
    }

    /// Sets the GPU count; an expert-parallel degree that no longer divides it goes back to 1.
    pub fn set_gpus(&mut self, gpus: u32) {
        self.gpus = gpus;
        if self.experts == 0 || !gpus.is_multiple_of(self.experts) {
            self.experts = 1;
        }
    }

    /// Analyses the whole model step on `hw` over the scenario's GPUs, with the corrections of the mode `hw`
    /// is in ([`Mode::of`]); `models` are the user's imported models.
    ///
    /// # Errors
    /// An unknown model or config key, or anything `analyze_model_parallel` rejects (unsupported formats, a
    /// GPU count that does not divide the heads, a device without an interconnect figure).
    pub fn analyze(&self, hw: &HardwareSpec, models: &[ModelConfig]) -> Result<ModelAnalysis, Error> {
        let model = resolve_model(&self.model, models)?;
        let config = model.config(&self.config)?;
        analyze_model_parallel(
            hw,
            model,
            &config,
            &self.workload(),
            &self.parallelism(),
            &self.core_corrections(hw),
        )
    }

    /// Ranks the precision configs for this scenario on `hw` over its GPUs (the advisor); each candidate
    /// also says the fewest GPUs it fits on.
    ///
    /// # Errors
    /// An unknown model key, or anything `advise_model_parallel` rejects.
    pub fn advise(&self, hw: &HardwareSpec, models: &[ModelConfig]) -> Result<Advice, Error> {
        advise_model_parallel(
            hw,
            resolve_model(&self.model, models)?,
            &self.workload(),
            &self.parallelism(),
            &self.config,
            &self.core_corrections(hw),
        )
    }

    /// The advisor's one answer on `hw` over the scenario's GPUs from `advice` (this scenario's advice on
    /// `hw`): the fastest config that fits per GPU and that the scenario's engine runs, or what to change.
    ///
    /// # Errors
    /// An unknown model key, or anything `recommend_model_for_engine` rejects.
    pub fn recommend(
        &self,
        hw: &HardwareSpec,
        models: &[ModelConfig],
        advice: &Advice,
    ) -> Result<Recommendation, Error> {
        recommend_model_for_engine(
            hw,
            resolve_model(&self.model, models)?,
            &self.workload(),
            &self.parallelism(),
            &self.core_corrections(hw),
            advice,
            self.engine,
        )
    }

    /// The config the scenario names for its model (`checkpoint` resolves to the model's own precisions).
    ///
    /// # Errors
    /// An unknown model or config key.
    pub fn quant_config(&self, models: &[ModelConfig]) -> Result<QuantConfig, Error> {
        resolve_model(&self.model, models)?.config(&self.config)
    }

    /// The reference ceilings behind predictions on `hw` when it is a reference spec: the DRAM fraction, the
    /// GEMM fraction of the config's compute path (when the device has that path), for each GEMM kernel family
    /// of the config (every module's) its large-shape fraction, small-M DRAM fraction and floor, the kernel
    /// floors, and the floor of each activation-quantization kernel the config runs; each with its basis
    /// (`measured: …` with the source, or `derived: …` with the rule).
    #[must_use]
    pub fn used_reference_ceilings(
        &self,
        hw: &HardwareSpec,
        models: &[ModelConfig],
    ) -> Option<Vec<UsedCeiling>> {
        let ceilings = hw
            .reference
            .as_ref()
            .filter(|_| Mode::of(hw) == Mode::Reference)?;
        let row = |what: String, value: fn(f64) -> CeilingValue, figure: &Sourced| UsedCeiling {
            what,
            value: value(figure.value),
            basis: figure.basis.clone(),
        };
        let config = self.quant_config(models).ok();
        let mut used = vec![row(
            "DRAM bandwidth".into(),
            CeilingValue::Fraction,
            &ceilings.dram_fraction,
        )];
        if let Some(c) = &config {
            let path = c.compute_path();
            if let Some(fraction) = ceilings.gemm_fraction(path) {
                used.push(row(format!("{path} GEMM peak"), CeilingValue::Fraction, fraction));
            }
        }
        let formats: Vec<_> = config
            .iter()
            .flat_map(|c| std::iter::once(c.default_linear()).chain(c.modules.iter().map(|m| m.format)))
            .collect();
        let mut families: Vec<(GemmFamily, roofline_core::ComputePath)> = Vec::new();
        let mut kernels: Vec<QuantizeKernel> = Vec::new();
        for f in &formats {
            let key = (
                GemmFamily::of(f.weights, f.activations),
                f.activations.compute_path(),
            );
            if !families.contains(&key) {
                families.push(key);
            }
            let hidden = config.as_ref().map(QuantConfig::hidden);
            if hidden != Some(f.activations) {
                for &k in QuantizeKernel::for_input(f.activations, f.activation_scale) {
                    if !kernels.contains(&k) {
                        kernels.push(k);
                    }
                }
            }
        }
        for (family, path) in families {
            if let Some(f) = ceilings.family(family, path) {
                used.push(row(
                    format!("{family} GEMM on {path}"),
                    CeilingValue::Fraction,
                    &f.gemm_fraction,
                ));
                used.push(row(
                    format!("{family} small-M bandwidth"),
                    CeilingValue::Fraction,
                    &f.dram_fraction,
                ));
                used.push(row(
                    format!("{family} kernel floor"),
                    CeilingValue::Seconds,
                    &f.kernel_floor,
                ));
            }
        }
        used.push(row(
            "matrix kernel floor".into(),
            CeilingValue::Seconds,
            &ceilings.matrix_kernel_floor,
        ));
        used.push(row(
            "vector kernel floor".into(),
            CeilingValue::Seconds,
            &ceilings.vector_kernel_floor,
        ));
        for kernel in kernels {
            if let Some(q) = ceilings.quantize_floors.iter().find(|q| q.kernel == kernel) {
                used.push(row(
                    format!("{} floor", kernel.name()),
                    CeilingValue::Seconds,
                    &q.floor,
                ));
            }
        }
        Some(used)
    }

    /// A short label for pins and exports with names, not keys, e.g. `NVIDIA GB10 (DGX Spark) · Llama 3.1
    /// 8B · NVFP4 W4A4 · decode B1 S4096` (`models`: the imported ones; `custom`: the user's devices).
    #[must_use]
    pub fn label(&self, custom: &[HardwareSpec], models: &[ModelConfig]) -> String {
        let config = find_quant_config(&self.config).map_or(self.config.clone(), |c| c.name.clone());
        let device = crate::presets::resolve_hardware(&self.hardware, custom)
            .map_or(self.hardware.clone(), |h| h.name);
        let model = resolve_model(&self.model, models).map_or(self.model.clone(), |m| m.name.clone());
        let phase = if self.prefill { "prefill" } else { "decode" };
        format!(
            "{device} · {model} · {config} · {phase} B{} S{}{}",
            self.batch,
            self.context,
            gpus_label(self.gpus, self.experts).map_or(String::new(), |g| format!(" · {g}"))
        )
    }

    /// Replaces a model or config key that names nothing (a mistyped or foreign link) with the default, so
    /// no select is left blank and nothing unknown is saved; returns what was replaced, e.g. `unknown model
    /// 'gpt-5': showing Llama 3.1 8B`. Devices are left alone: an unknown one shows as asked, with a notice.
    pub fn replace_unknown_keys(&mut self, models: &[ModelConfig]) -> Vec<String> {
        let mut replaced = Vec::new();
        if resolve_model(&self.model, models).is_err() {
            let default = Scenario::default().model;
            let name = resolve_model(&default, models).map_or(default.clone(), |m| m.name.clone());
            replaced.push(format!("unknown model '{}': showing {name}", self.model));
            self.model = default;
        }
        if find_quant_config(&self.config).is_err() {
            let default = Scenario::default().config;
            let name = find_quant_config(&default).map_or(default.clone(), |c| c.name.clone());
            replaced.push(format!(
                "unknown precision config '{}': showing {name}",
                self.config
            ));
            self.config = default;
        }
        replaced
    }

    /// Whether going from `self` to `next` is a discrete change (a new history entry) rather than a
    /// continuous one (slider drags and typing in M/N/K or the serving view's numbers, which replace the
    /// current entry).
    #[must_use]
    pub fn is_discrete_change(&self, next: &Scenario) -> bool {
        let continuous = |s: &Scenario| Scenario {
            batch: 0,
            context: 0,
            kernel: KernelSpec {
                m: 0,
                n: 0,
                k: 0,
                ..s.kernel.clone()
            },
            serving: s.serving.typed_numbers_cleared(),
            ..s.clone()
        };
        continuous(self) != continuous(next)
    }
}

/// How a step is split, e.g. `8 GPUs (TP 8, EP 8)`, `4 GPUs (TP 4)`; `None` on one GPU.
#[must_use]
pub fn gpus_label(gpus: u32, experts: u32) -> Option<String> {
    match (gpus, experts) {
        (1, _) => None,
        (g, 1) => Some(format!("{g} GPUs (TP {g})")),
        (g, e) => Some(format!("{g} GPUs (TP {g}, EP {e})")),
    }
}

/// What a reference ceiling scales or adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CeilingValue {
    /// A fraction of the datasheet figure, in (0, 1].
    Fraction(f64),
    /// A fixed time per kernel, in seconds.
    Seconds(f64),
}

/// One reference ceiling that predictions use, with why it has its value.
#[derive(Debug, Clone, PartialEq)]
pub struct UsedCeiling {
    /// What it applies to, e.g. `DRAM bandwidth`, `FP4 GEMM peak`, `matrix kernel floor`.
    pub what: String,
    /// The figure.
    pub value: CeilingValue,
    /// `measured: …` with its source, or `derived: …` with its rule.
    pub basis: String,
}

impl UsedCeiling {
    /// Whether the figure is a published measurement (`measured`) or follows a stated rule (`derived`, or
    /// `source` for a published model constant such as NCCL's latencies).
    #[must_use]
    pub fn provenance(&self) -> &'static str {
        if self.basis.starts_with("measured") {
            "measured"
        } else if self.basis.starts_with("source") {
            "source"
        } else {
            "derived"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::resolve_hardware;

    #[test]
    fn default_scenario_reproduces_core_gb10_gemv() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let rows = KernelSpec::default().evaluate(&hw, &Corrections::NONE);
        let fp16 = rows.iter().find(|r| r.precision == Precision::Fp16).unwrap();
        assert!((fp16.prediction.as_ref().unwrap().time_s - 122.970_021_978e-6).abs() < 1e-12);
        // The launch floor lifts a kernel that would finish sooner; this GEMV (123 µs) stays, a 1×64×64
        // one (8 KiB at 273 GB/s: 30 ns) takes the 4 µs floor.
        let floored = Corrections {
            launch_floor: true,
            ..Corrections::NONE
        };
        let tiny = KernelSpec {
            n: 64,
            k: 64,
            ..KernelSpec::default()
        };
        let rows = tiny.evaluate(&hw, &floored);
        let fp16 = rows.iter().find(|r| r.precision == Precision::Fp16).unwrap();
        assert_eq!(
            fp16.prediction.as_ref().unwrap().time_s,
            roofline_core::KERNEL_LAUNCH_FLOOR_S
        );
        let int4 = rows.iter().find(|r| r.precision == Precision::Int4).unwrap();
        assert!(
            matches!(int4.prediction, Err(Error::Unsupported { .. })),
            "INT4 on GB10 is reported, not dropped"
        );
        assert_eq!(rows.len(), DEFAULT_PRECISIONS.len());
    }

    #[test]
    fn toggle_keeps_canonical_order() {
        let mut spec = KernelSpec {
            precisions: vec![Precision::Int8],
            ..KernelSpec::default()
        };
        spec.toggle(Precision::Fp16);
        assert_eq!(spec.precisions, vec![Precision::Fp16, Precision::Int8]);
        spec.toggle(Precision::Int8);
        assert_eq!(spec.precisions, vec![Precision::Fp16]);
    }

    #[test]
    fn the_default_scenario_is_in_reference_mode_with_realistic_corrections() {
        let s = Scenario::default();
        let gb10 = resolve_hardware("gb10", &[]).unwrap();
        let reference = gb10.reference().unwrap();
        assert_eq!(s.corrections.mode, Mode::Reference);
        assert_eq!(s.core_corrections(&reference), Corrections::REALISTIC);
        assert_eq!(s.core_corrections(&gb10), Corrections::NONE);
        let mut toggled = s.clone();
        toggled.corrections.wave_quantization = true;
        toggled.memory_fraction = 0.8;
        assert_eq!(
            toggled.core_corrections(&reference),
            Corrections {
                wave_quantization: true,
                memory: roofline_core::MemoryFraction::OfCapacity(0.8),
                ..Corrections::REALISTIC
            },
            "the toggles add to the mode's corrections"
        );
        // A host CPU calibrated by the endpoint launches no CUDA graph.
        let cpu = HardwareSpec::uncatalogued("cpu_host", "Host CPU", "x86-64", 64e9)
            .calibrated(&roofline_core::hardware::Calibration {
                device_name: "Host CPU".into(),
                dram_bandwidth_bytes_per_s: 20e9,
                kernel_overhead_s: 1e-6,
                vector_kernel_overhead_s: None,
                peaks: vec![(roofline_core::ComputePath::Fp32, 1e12)],
                source: "test".into(),
                quality: None,
            })
            .unwrap();
        assert_eq!(step_launch_of(&cpu), StepLaunch::Ignored);
        assert_eq!(s.core_corrections(&cpu).step_launch, StepLaunch::Ignored);
        assert_eq!(step_launch_of(&reference), StepLaunch::CudaGraphs);
    }

    #[test]
    fn unknown_models_and_configs_are_replaced_and_named() {
        let mut s = Scenario {
            model: "gpt-5".into(),
            config: "zzz".into(),
            ..Scenario::default()
        };
        let replaced = s.replace_unknown_keys(&[]);
        assert_eq!(
            replaced,
            [
                "unknown model 'gpt-5': showing Llama 3.1 8B".to_owned(),
                "unknown precision config 'zzz': showing BF16 baseline".to_owned()
            ]
        );
        assert_eq!((s.model.as_str(), s.config.as_str()), ("llama-3.1-8b", "bf16"));
        assert!(Scenario::default().replace_unknown_keys(&[]).is_empty());
        // Names, not keys, and the split on several GPUs.
        let label = Scenario {
            gpus: 8,
            experts: 8,
            ..Scenario::default()
        }
        .label(&[], &[]);
        assert!(
            label.starts_with("NVIDIA GB10") && label.ends_with("· 8 GPUs (TP 8, EP 8)"),
            "{label}"
        );
    }

    #[test]
    fn saved_states_keep_their_mode() {
        // Before modes, `calibrated: true` meant calibrated roofs; without it, datasheet roofs, which now read
        // as the default mode.
        let saved = |json: &str| serde_json::from_str::<CorrectionToggles>(json).unwrap().mode;
        assert_eq!(
            saved(r#"{"launch_floor":false,"wave_quantization":true,"calibrated":true}"#),
            Mode::Calibrated
        );
        assert_eq!(
            saved(r#"{"launch_floor":false,"wave_quantization":false,"calibrated":false}"#),
            Mode::Reference
        );
        assert_eq!(saved(r#"{"mode":"datasheet"}"#), Mode::Datasheet);
        let toggles = CorrectionToggles {
            mode: Mode::Calibrated,
            ..CorrectionToggles::default()
        };
        let json = serde_json::to_string(&toggles).unwrap();
        assert_eq!(serde_json::from_str::<CorrectionToggles>(&json).unwrap(), toggles);
    }

    #[test]
    fn reference_ceilings_are_listed_with_their_basis_in_reference_mode_only() {
        let s = Scenario {
            config: "nvfp4-w4a4".into(),
            ..Scenario::default()
        };
        let gb10 = resolve_hardware("gb10", &[]).unwrap();
        assert_eq!(s.used_reference_ceilings(&gb10, &[]), None);
        let used = s
            .used_reference_ceilings(&gb10.reference().unwrap(), &[])
            .unwrap();
        let what: Vec<_> = used.iter().map(|c| c.what.as_str()).collect();
        // NVFP4 W4A4 computes on the FP4 path, in the NVFP4 family, and quantizes its activations in one
        // block kernel.
        assert_eq!(
            what,
            [
                "DRAM bandwidth",
                "FP4 GEMM peak",
                "NVFP4 GEMM on FP4",
                "NVFP4 small-M bandwidth",
                "NVFP4 kernel floor",
                "matrix kernel floor",
                "vector kernel floor",
                "block quantize floor",
            ]
        );
        let ceilings = gb10.reference_ceilings();
        assert_eq!(
            used[0].value,
            CeilingValue::Fraction(ceilings.dram_fraction.value)
        );
        assert_eq!(used[0].basis, ceilings.dram_fraction.basis);
        // GB10's NVFP4 GEMM fraction is its own published measurement (356 of 500 TFLOP/s); its 4.1 µs floor
        // a stated derivation.
        assert_eq!(used[2].value, CeilingValue::Fraction(0.712));
        assert_eq!(used[2].provenance(), "measured");
        assert_eq!(used[4].value, CeilingValue::Seconds(4.1e-6));
        assert_eq!(used[4].provenance(), "derived");
        assert_eq!(used[5].value, CeilingValue::Seconds(5e-6));
        assert!(
            used.iter().all(|c| c.basis.starts_with("measured")
                || c.basis.starts_with("derived")
                || c.basis.starts_with("source")),
            "{used:?}"
        );
        // The default config (BF16) computes on the BF16 path, without quantization kernels.
        let bf16 = Scenario::default()
            .used_reference_ceilings(&gb10.reference().unwrap(), &[])
            .unwrap();
        let what: Vec<_> = bf16.iter().map(|c| c.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "DRAM bandwidth",
                "BF16 GEMM peak",
                "matrix kernel floor",
                "vector kernel floor"
            ]
        );
    }

    #[test]
    fn a_checkpoint_config_is_analysed_as_the_model_stores_it() {
        // gpt-oss-120b's own precisions: MXFP4 experts, BF16 rest, about 65 GB of weights (65,168,599,680 B:
        // core/tests/integration/hf_config.rs writes the sum out).
        let s = Scenario {
            hardware: "h100_sxm".into(),
            model: "gpt-oss-120b".into(),
            config: "checkpoint".into(),
            ..Scenario::default()
        };
        let h100 = resolve_hardware("h100_sxm", &[]).unwrap().reference().unwrap();
        let a = s.analyze(&h100, &[]).unwrap();
        assert_eq!(a.weight_bytes, 65_168_599_680.0);
        assert_eq!(
            roofline_core::summarize_modules(&a.modules),
            "attention, router, embeddings, head: BF16 · routed experts: MXFP4 weights, BF16 activations"
        );
        // The weight-only family's ceilings are listed.
        let used = s.used_reference_ceilings(&h100, &[]).unwrap();
        assert!(
            used.iter().any(|c| c.what == "weight-only GEMM on BF16"),
            "{used:?}"
        );
    }

    #[test]
    fn the_gpu_count_splits_the_step_and_bad_counts_are_core_errors() {
        let h100 = resolve_hardware("h100_sxm", &[]).unwrap();
        let s = Scenario {
            hardware: "h100_sxm".into(),
            model: "llama-3.1-70b".into(),
            config: "bf16".into(),
            ..Scenario::default()
        };
        let one = s.analyze(&h100, &[]).unwrap();
        let four = Scenario { gpus: 4, ..s.clone() }.analyze(&h100, &[]).unwrap();
        assert!(!one.fits_in_memory && four.fits_in_memory && four.gpus == 4);
        // Expert parallel on a MoE model adds the all-to-alls; a GPU count it does not divide resets it.
        let moe = Scenario {
            model: "qwen3-30b-a3b".into(),
            gpus: 4,
            experts: 4,
            ..s.clone()
        };
        let a = moe.analyze(&h100, &[]).unwrap();
        assert!(a.ops.iter().any(|o| o.name == "moe_dispatch_all_to_all"));
        let mut fewer = moe.clone();
        fewer.set_gpus(2);
        assert_eq!((fewer.gpus, fewer.experts), (2, 1));
        fewer.set_gpus(8);
        assert_eq!(fewer.experts, 1);
        assert!(matches!(
            Scenario {
                experts: 2,
                ..s.clone()
            }
            .analyze(&h100, &[]),
            Err(Error::InvalidInput(_))
        ));
        assert!(four.communication_fraction > 0.0);
        let split = Scenario { gpus: 4, ..s.clone() };
        let advice = split.advise(&h100, &[]).unwrap();
        assert!(advice.candidates.iter().any(|c| c.min_gpus.is_some()));
        let answer = split.recommend(&h100, &[], &advice).unwrap();
        assert!(
            !matches!(answer, Recommendation::NothingFits { .. }),
            "{answer:?}"
        );
        assert!(matches!(
            Scenario { gpus: 3, ..s.clone() }.analyze(&h100, &[]),
            Err(Error::InvalidInput(_))
        ));
        let rtx = resolve_hardware("rtx_5090", &[]).unwrap();
        assert!(matches!(
            Scenario {
                gpus: 2,
                hardware: "rtx_5090".into(),
                ..s
            }
            .analyze(&rtx, &[]),
            Err(Error::InvalidInput(_))
        ));
    }

    #[test]
    fn sliders_replace_and_pickers_push() {
        let a = Scenario::default();
        assert!(!a.is_discrete_change(&Scenario {
            batch: 8,
            context: 512,
            ..a.clone()
        }));
        assert!(a.is_discrete_change(&Scenario {
            prefill: true,
            ..a.clone()
        }));
        assert!(a.is_discrete_change(&Scenario {
            hardware: "h100_sxm".into(),
            ..a.clone()
        }));
        // Typing the serving view's numbers replaces; picking its scheduler or view pushes.
        let mut typed = a.clone();
        (typed.serving.isl, typed.serving.sla.tpot_max_s) = (4096, Some(0.02));
        assert!(!a.is_discrete_change(&typed));
        let mut picked = a.clone();
        picked.serving.scheduler = roofline_core::SchedulerKind::Static;
        assert!(a.is_discrete_change(&picked));
        assert!(a.is_discrete_change(&Scenario {
            view: View::Serving,
            ..a.clone()
        }));
    }

    #[test]
    fn default_scenario_analyses_on_gb10_in_the_mode_of_its_spec() {
        let s = Scenario::default();
        let gb10 = resolve_hardware("gb10", &[]).unwrap();
        let datasheet = s.analyze(&gb10, &[]).unwrap();
        assert!(datasheet.tpot_s.unwrap() > 0.0 && datasheet.fits_in_memory);
        assert_eq!(
            (datasheet.mode, datasheet.launch_overhead_s),
            (Mode::Datasheet, 0.0)
        );
        let reference = s.analyze(&gb10.reference().unwrap(), &[]).unwrap();
        assert_eq!(reference.mode, Mode::Reference);
        assert_eq!(reference.corrections, Corrections::REALISTIC);
        assert!(reference.launch_overhead_s > 0.0);
        assert!(reference.tpot_s.unwrap() > datasheet.tpot_s.unwrap());
    }

    #[test]
    fn invalid_shape_is_an_error_row() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let rows = KernelSpec {
            n: 0,
            ..KernelSpec::default()
        }
        .evaluate(&hw, &Corrections::NONE);
        assert!(
            rows.iter()
                .all(|r| matches!(r.prediction, Err(Error::InvalidInput(_))))
        );
    }
}
