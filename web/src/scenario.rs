//! The scenario the page looks at (device, model, config, workload, GPUs, mode and corrections, the kernel
//! spot check) and its evaluation through `roofline_core`: the kernel rows, the model step, the advice and
//! the recommendation, and the reference ceilings predictions use.

use roofline_core::hardware::Sourced;
use roofline_core::{
    Advice, Corrections, Engine, Error, GemmFamily, HardwareSpec, MemoryFraction, Mode, ModelAnalysis,
    ModelConfig, OpAnalysis, Operator, Parallelism, Phase, Precision, QuantConfig, QuantizeKernel,
    Recommendation, VLLM_GPU_MEMORY_UTILIZATION, Workload, advise_model_parallel, analyze_model_parallel,
    analyze_operator, find_quant_config, recommend_model_for_engine,
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

impl Scenario {
    /// The engine whose defaults the serving view takes: the scenario's, else core's default engine (vLLM).
    #[must_use]
    pub fn serving_engine(&self) -> Engine {
        self.engine.unwrap_or_default()
    }

    /// The memory fraction the serving view gives its engine instead of the engine's default: the page's
    /// memory setting (vLLM's `gpu_memory_utilization`) when the engine is vLLM and the setting is not vLLM's
    /// default; `None` (the engine's own default) otherwise.
    #[must_use]
    pub fn serving_memory_fraction(&self) -> Option<f64> {
        (self.serving_engine() == Engine::Vllm && self.memory_fraction != VLLM_GPU_MEMORY_UTILIZATION)
            .then_some(self.memory_fraction)
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

    /// The corrections of predictions on `hw`, as `roofline_core` takes them: the device's
    /// ([`Corrections::for_spec`]), plus the user's launch floor and wave quantization (the toggles only
    /// add), and the scenario's engine memory fraction.
    #[must_use]
    pub fn core_corrections(&self, hw: &HardwareSpec) -> Corrections {
        let base = Corrections::for_spec(hw);
        Corrections {
            launch_floor: base.launch_floor || self.corrections.launch_floor,
            wave_quantization: base.wave_quantization || self.corrections.wave_quantization,
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
mod tests;
