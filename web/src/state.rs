//! Page state: the scenario being looked at, with the domain methods that evaluate it through `roofline_core`.

use roofline_core::hardware::Sourced;
use roofline_core::{
    Advice, Corrections, Engine, Error, GemmFamily, HardwareSpec, Mode, ModelAnalysis, ModelConfig, Operator,
    Parallelism, Phase, Precision, Prediction, QuantConfig, QuantizeKernel, Recommendation, Workload,
    advise_model_parallel, analyze_model_parallel, catalog, find_quant_config, predict,
    recommend_model_for_engine,
};
use serde::{Deserialize, Serialize};

use crate::models::resolve_model;

/// Precisions ticked by default in the kernel view.
pub const DEFAULT_PRECISIONS: [Precision; 6] = [
    Precision::Fp16,
    Precision::Bf16,
    Precision::Fp8E4M3,
    Precision::Nvfp4,
    Precision::Int8,
    Precision::Int4,
];

/// A named GEMV/GEMM shape offered as a one-click preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuickShape {
    /// Button label.
    pub label: &'static str,
    /// Rows of the activation (batch × tokens).
    pub m: u64,
    /// Output features.
    pub n: u64,
    /// Input features.
    pub k: u64,
}

/// The kernel view's quick shapes (Llama-3-8B sizes).
pub const QUICK_SHAPES: [QuickShape; 3] = [
    QuickShape {
        label: "Decode 1×4096×4096",
        m: 1,
        n: 4096,
        k: 4096,
    },
    QuickShape {
        label: "FFN 1×14336×4096",
        m: 1,
        n: 14336,
        k: 4096,
    },
    QuickShape {
        label: "Prefill 2048×4096×4096",
        m: 2048,
        n: 4096,
        k: 4096,
    },
];

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
    /// The prediction, or why there is none (unsupported precision, invalid shape).
    pub prediction: Result<Prediction, Error>,
}

impl KernelSpec {
    /// Evaluates every precision on `hw`; unsupported ones stay in the list as errors.
    #[must_use]
    pub fn evaluate(&self, hw: &HardwareSpec) -> Vec<KernelRow> {
        self.precisions
            .iter()
            .map(|&precision| {
                let op = Operator::matmul(self.m, self.n, self.k, precision.into());
                let prediction = op.clone().and_then(|op| predict(hw, &op));
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

/// The device shown by default and when a key resolves to nothing.
pub const DEFAULT_HARDWARE: &str = "gb10";
/// Default model preset.
pub const DEFAULT_MODEL: &str = "llama-3.1-8b";
/// Default precision config.
pub const DEFAULT_CONFIG: &str = "nvfp4-w4a4";
/// Range of the batch slider.
pub const BATCH_RANGE: (u64, u64) = (1, 512);
/// Range of the context slider, in tokens.
pub const CONTEXT_RANGE: (u64, u64) = (32, 131_072);
/// The GPU counts offered (tensor-parallel degrees within one scale-up domain).
pub const GPU_COUNTS: [u32; 4] = [1, 2, 4, 8];
/// The largest GPU count a link may ask for (core refuses what the device's domain cannot hold).
pub const MAX_GPUS: u64 = 1024;

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
const fn legacy_mode(calibrated: bool) -> Mode {
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
    /// The serving engine the advice keeps to (its documented quantization support); `None`: any of vLLM,
    /// SGLang and TensorRT-LLM (and in scenarios saved before it existed).
    pub engine: Option<Engine>,
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
            engine: None,
        }
    }
}

impl Scenario {
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

    /// The corrections of predictions in `mode`, as `roofline_core` takes them: those of the mode
    /// ([`Corrections::for_mode`]) plus the user's launch floor and wave quantization (the toggles only add).
    #[must_use]
    pub fn core_corrections(&self, mode: Mode) -> Corrections {
        let base = Corrections::for_mode(mode);
        Corrections {
            launch_floor: base.launch_floor || self.corrections.launch_floor,
            wave_quantization: base.wave_quantization || self.corrections.wave_quantization,
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
            &self.core_corrections(Mode::of(hw)),
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
            &self.core_corrections(Mode::of(hw)),
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
            &self.core_corrections(Mode::of(hw)),
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

    /// A short label for pins and exports, e.g. `GB10 · NVFP4 W4A4 · decode B1 S4096`.
    #[must_use]
    pub fn label(&self) -> String {
        let config = find_quant_config(&self.config).map_or(self.config.clone(), |c| c.name.clone());
        let phase = if self.prefill { "prefill" } else { "decode" };
        let gpus = if self.gpus == 1 {
            String::new()
        } else {
            format!(" · {} GPUs", self.gpus)
        };
        format!(
            "{} · {} · {config} · {phase} B{} S{}{gpus}",
            self.hardware, self.model, self.batch, self.context
        )
    }

    /// Whether going from `self` to `next` is a discrete change (a new history entry) rather than a
    /// continuous one (slider drags and typing in M/N/K, which replace the current entry).
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
            ..s.clone()
        };
        continuous(self) != continuous(next)
    }

    /// The URL query (without `?`) that restores this scenario exactly, form-urlencoded.
    #[must_use]
    pub fn to_query(&self) -> String {
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(self.query_pairs())
            .finish()
    }

    /// The query's fields in order; `tp` and `ep` only when they are not 1.
    fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let c = self.corrections;
        let flags: String = [(c.launch_floor, 'l'), (c.wave_quantization, 'w')]
            .iter()
            .filter_map(|&(on, f)| on.then_some(f))
            .collect();
        let precisions: Vec<&str> = self.kernel.precisions.iter().map(|p| p.name()).collect();
        let pairs = [
            ("hw", self.hardware.clone()),
            ("model", self.model.clone()),
            ("cfg", self.config.clone()),
            (
                "phase",
                if self.prefill { "prefill" } else { "decode" }.to_owned(),
            ),
            ("b", self.batch.to_string()),
            ("s", self.context.to_string()),
            ("tp", self.gpus.to_string()),
            ("ep", self.experts.to_string()),
            ("mode", c.mode.name().to_owned()),
            ("corr", flags),
            ("m", self.kernel.m.to_string()),
            ("n", self.kernel.n.to_string()),
            ("k", self.kernel.k.to_string()),
            ("p", precisions.join(",")),
            (
                "eng",
                self.engine.map_or_else(String::new, |e| e.key().to_owned()),
            ),
        ];
        pairs
            .into_iter()
            .filter(|(k, _)| {
                (*k != "tp" || self.gpus != 1)
                    && (*k != "ep" || self.experts != 1)
                    && (*k != "eng" || self.engine.is_some())
            })
            .collect()
    }

    /// Reads a form-urlencoded URL query (with or without `?`; `%20` and `+` both read as a space); absent or
    /// unreadable fields keep their defaults, numbers are clamped to the slider ranges. A missing `mode` is
    /// reference, or calibrated for an older link whose `corr` flags hold `c` (calibrated roofs on). Returns
    /// `None` when the query names no scenario field.
    #[must_use]
    pub fn from_query(query: &str) -> Option<Scenario> {
        let mut s = Scenario::default();
        let (mut any, mut mode, mut legacy_calibrated) = (false, None, false);
        for (key, value) in form_urlencoded::parse(query.trim_start_matches('?').as_bytes()) {
            let num = |lo: u64, hi: u64| value.parse::<u64>().ok().map(|v| v.clamp(lo, hi));
            any |= match key.as_ref() {
                "hw" => {
                    s.hardware = value.into_owned();
                    true
                }
                "model" => {
                    s.model = value.into_owned();
                    true
                }
                "cfg" => {
                    s.config = value.into_owned();
                    true
                }
                "phase" => {
                    s.prefill = value == "prefill";
                    true
                }
                "b" => num(BATCH_RANGE.0, BATCH_RANGE.1).map(|v| s.batch = v).is_some(),
                "s" => num(CONTEXT_RANGE.0, CONTEXT_RANGE.1)
                    .map(|v| s.context = v)
                    .is_some(),
                "tp" => num(1, MAX_GPUS)
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| s.gpus = v)
                    .is_some(),
                "ep" => num(1, MAX_GPUS)
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| s.experts = v)
                    .is_some(),
                "mode" => {
                    mode = Mode::parse(&value).ok();
                    mode.is_some()
                }
                "corr" => {
                    s.corrections.launch_floor = value.contains('l');
                    s.corrections.wave_quantization = value.contains('w');
                    legacy_calibrated = value.contains('c');
                    true
                }
                "m" => num(1, roofline_core::ops::MAX_DIM)
                    .map(|v| s.kernel.m = v)
                    .is_some(),
                "n" => num(1, roofline_core::ops::MAX_DIM)
                    .map(|v| s.kernel.n = v)
                    .is_some(),
                "k" => num(1, roofline_core::ops::MAX_DIM)
                    .map(|v| s.kernel.k = v)
                    .is_some(),
                "p" => {
                    s.kernel.precisions = value.split(',').filter_map(|n| n.parse().ok()).collect();
                    true
                }
                "eng" => {
                    s.engine = Engine::parse(&value).ok();
                    s.engine.is_some()
                }
                _ => false,
            };
        }
        s.corrections.mode = mode.unwrap_or(legacy_mode(legacy_calibrated));
        any.then_some(s)
    }
}

/// What a share link carries: the scenario, the custom devices it and its pins need (compact JSON, validated
/// on the way in), and the pins (`None` when the link has none: older links keep the saved pins).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLink {
    /// The scenario.
    pub scenario: Scenario,
    /// Custom devices named by the scenario or its pins.
    pub devices: Vec<HardwareSpec>,
    /// Imported models named by the scenario or its pins.
    pub models: Vec<ModelConfig>,
    /// Devices and models in the link that could not be read (shown as a notice, never silently dropped).
    pub bad_devices: Vec<String>,
    /// The pins, when the link lists them.
    pub pins: Option<Vec<Scenario>>,
}

impl SharedLink {
    /// The form-urlencoded URL query (without `?`) for `scenario` with the custom devices and imported models
    /// that it and `pins` use, and the pins: `…&dev=<compact JSON>&mdl=<compact JSON>&pins=<n>&pin=<query>…`
    /// (`pins=0` when there are none).
    #[must_use]
    pub fn query(
        scenario: &Scenario,
        custom: &[HardwareSpec],
        models: &[ModelConfig],
        pins: &[Scenario],
    ) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.extend_pairs(scenario.query_pairs());
        let mut keys: Vec<&str> = Vec::new();
        for key in std::iter::once(&scenario.hardware).chain(pins.iter().map(|p| &p.hardware)) {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
        for spec in keys.iter().filter_map(|k| custom.iter().find(|h| h.key == *k)) {
            let json = serde_json::to_string(spec).unwrap_or_default();
            q.append_pair("dev", &json);
        }
        let mut model_keys: Vec<&str> = Vec::new();
        for key in std::iter::once(&scenario.model).chain(pins.iter().map(|p| &p.model)) {
            if !model_keys.contains(&key.as_str()) {
                model_keys.push(key);
            }
        }
        for model in model_keys
            .iter()
            .filter_map(|k| models.iter().find(|m| m.key == *k))
        {
            let json = serde_json::to_string(model).unwrap_or_default();
            q.append_pair("mdl", &json);
        }
        q.append_pair("pins", &pins.len().to_string());
        for pin in pins {
            q.append_pair("pin", &pin.to_query());
        }
        q.finish()
    }

    /// Reads a link's query; `None` when it names no scenario field.
    #[must_use]
    pub fn from_query(query: &str) -> Option<SharedLink> {
        let scenario = Scenario::from_query(query)?;
        let (mut devices, mut models, mut bad_devices, mut pins, mut any_pins) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), false);
        for (key, value) in form_urlencoded::parse(query.trim_start_matches('?').as_bytes()) {
            match key.as_ref() {
                "dev" => match HardwareSpec::from_json(&value) {
                    Ok(mut spec) if roofline_core::find_hardware(&spec.key).is_err() => {
                        if spec.provenance != roofline_core::Provenance::Measured {
                            spec.provenance = roofline_core::Provenance::Custom;
                        }
                        devices.push(spec);
                    }
                    Ok(spec) => bad_devices.push(format!("'{}' is a catalog key", spec.key)),
                    Err(e) => bad_devices.push(e.to_string()),
                },
                "mdl" => match serde_json::from_str::<ModelConfig>(&value) {
                    Ok(model) if roofline_core::find_model(&model.key).is_ok() => {
                        bad_devices.push(format!("model '{}' is a preset key", model.key));
                    }
                    Ok(model) => match model.check() {
                        Ok(()) => models.push(model),
                        Err(e) => bad_devices.push(format!("model '{}': {e}", model.key)),
                    },
                    Err(e) => bad_devices.push(format!("model: {e}")),
                },
                "pins" => any_pins = true,
                "pin" => {
                    any_pins = true;
                    pins.extend(Scenario::from_query(&value));
                }
                _ => {}
            }
        }
        Some(SharedLink {
            scenario,
            devices,
            models,
            bad_devices,
            pins: any_pins.then_some(pins),
        })
    }
}

/// Reads a typed whole number in `lo..=hi`, or says why it is not one (shown beside the input; the scenario
/// keeps its previous value, and the message says so).
///
/// # Errors
/// `not a whole number`, `must be at least …` or `must be at most …`.
pub fn parse_in_range(text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let t = text.trim();
    if t.strip_prefix('-')
        .is_some_and(|rest| rest.parse::<f64>().is_ok())
    {
        return Err(format!("must be at least {lo}"));
    }
    match t.parse::<u64>() {
        Ok(v) if v < lo => Err(format!("must be at least {lo}")),
        Ok(v) if v > hi => Err(format!("must be at most {hi}")),
        Ok(v) => Ok(v),
        Err(_) => Err("not a whole number".to_owned()),
    }
}

/// Steps per factor of two on the log sliders.
pub const SLIDER_STEPS_PER_OCTAVE: f64 = 4.0;

/// Slider position of `value` on a log₂ scale over `range` (0 at the low end).
#[must_use]
pub fn log_slider_position(value: u64, range: (u64, u64)) -> f64 {
    ((value.clamp(range.0, range.1) as f64 / range.0 as f64).log2() * SLIDER_STEPS_PER_OCTAVE).round()
}

/// The value at slider position `pos` (inverse of [`log_slider_position`], rounded to an integer).
#[must_use]
pub fn log_slider_value(pos: f64, range: (u64, u64)) -> u64 {
    ((range.0 as f64 * (pos / SLIDER_STEPS_PER_OCTAVE).exp2()).round() as u64).clamp(range.0, range.1)
}

/// Finds a device among the catalog and the user's custom devices (custom keys shadow nothing: they are
/// validated to differ from catalog keys when added).
#[must_use]
pub fn resolve_hardware(key: &str, custom: &[HardwareSpec]) -> Option<HardwareSpec> {
    custom
        .iter()
        .find(|h| h.key == key)
        .cloned()
        .or_else(|| roofline_core::find_hardware(key).ok().cloned())
}

/// Every selectable device: the catalog, then custom ones.
pub fn all_hardware(custom: &[HardwareSpec]) -> impl Iterator<Item = &HardwareSpec> {
    catalog().iter().chain(custom.iter())
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

    #[test]
    fn default_scenario_reproduces_core_gb10_gemv() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let rows = KernelSpec::default().evaluate(&hw);
        let fp16 = rows.iter().find(|r| r.precision == Precision::Fp16).unwrap();
        assert!((fp16.prediction.as_ref().unwrap().time_s - 122.970_021_978e-6).abs() < 1e-12);
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
    fn query_round_trips_every_field() {
        let s = Scenario {
            hardware: "my gpu/β".to_owned(),
            model: "llama-3.1-70b".to_owned(),
            config: "fp8".to_owned(),
            prefill: true,
            batch: 64,
            context: 131_072,
            gpus: 4,
            experts: 2,
            corrections: CorrectionToggles {
                launch_floor: true,
                wave_quantization: false,
                mode: Mode::Datasheet,
            },
            kernel: KernelSpec {
                m: 2048,
                n: 14336,
                k: 4096,
                precisions: vec![Precision::Bf16, Precision::Nvfp4],
            },
            engine: Some(Engine::Sglang),
        };
        assert_eq!(Scenario::from_query(&format!("?{}", s.to_query())), Some(s));
        assert_eq!(Scenario::from_query("?utm_source=x"), None);
    }

    #[test]
    fn reserved_and_non_ascii_characters_round_trip_and_old_links_still_read() {
        let awkward = "a&b=c%d+e fβ";
        let s = Scenario {
            hardware: awkward.to_owned(),
            kernel: KernelSpec {
                precisions: vec![Precision::Fp16, Precision::Int8],
                ..KernelSpec::default()
            },
            ..Scenario::default()
        };
        let pin = Scenario {
            model: awkward.to_owned(),
            ..Scenario::default()
        };
        let query = SharedLink::query(&s, &[], &[], std::slice::from_ref(&pin));
        let link = SharedLink::from_query(&query).unwrap();
        assert_eq!(
            (&link.scenario, &link.pins),
            (&s, &Some(vec![pin.clone()])),
            "{query}"
        );
        // The hand-written encoder these links had before escaped a space as `%20` and kept `,` as it is.
        let old = "hw=a%26b%3Dc%25d%2Be%20f%CE%B2&p=FP16,INT8&pins=1\
                   &pin=model%3Da%2526b%253Dc%2525d%252Be%2520f%25CE%25B2";
        let link = SharedLink::from_query(old).unwrap();
        assert_eq!((link.scenario, link.pins), (s, Some(vec![pin])));
    }

    #[test]
    fn the_default_scenario_is_in_reference_mode_with_realistic_corrections() {
        let s = Scenario::default();
        assert_eq!(s.corrections.mode, Mode::Reference);
        assert_eq!(s.core_corrections(Mode::Reference), Corrections::REALISTIC);
        assert_eq!(s.core_corrections(Mode::Datasheet), Corrections::NONE);
        let mut toggled = s.clone();
        toggled.corrections.wave_quantization = true;
        assert_eq!(
            toggled.core_corrections(Mode::Reference),
            Corrections {
                wave_quantization: true,
                ..Corrections::REALISTIC
            },
            "the toggles add to the mode's corrections"
        );
    }

    #[test]
    fn every_mode_round_trips_through_the_url() {
        for mode in Mode::ALL {
            let mut s = Scenario::default();
            s.corrections.mode = mode;
            let query = s.to_query();
            assert!(query.contains(&format!("mode={mode}")), "{query}");
            assert_eq!(Scenario::from_query(&query), Some(s));
        }
    }

    #[test]
    fn old_links_and_saved_states_keep_their_mode() {
        // Before modes, `c` among the corrections meant calibrated roofs; without it, datasheet roofs, which
        // now read as the default mode.
        let old = Scenario::from_query("hw=gb10&corr=lc").unwrap();
        assert_eq!(old.corrections.mode, Mode::Calibrated);
        assert!(old.corrections.launch_floor && !old.corrections.wave_quantization);
        assert_eq!(
            Scenario::from_query("hw=gb10&corr=w").unwrap().corrections.mode,
            Mode::Reference
        );
        assert_eq!(
            Scenario::from_query("hw=gb10").unwrap().corrections.mode,
            Mode::Reference
        );
        assert_eq!(
            Scenario::from_query("corr=c&mode=datasheet")
                .unwrap()
                .corrections
                .mode,
            Mode::Datasheet,
            "an explicit mode wins"
        );
        assert_eq!(
            Scenario::from_query("hw=gb10&mode=ideal")
                .unwrap()
                .corrections
                .mode,
            Mode::Reference
        );
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
        let s = Scenario::default();
        let gb10 = resolve_hardware("gb10", &[]).unwrap();
        assert_eq!(s.used_reference_ceilings(&gb10, &[]), None);
        let used = s
            .used_reference_ceilings(&gb10.reference().unwrap(), &[])
            .unwrap();
        let what: Vec<_> = used.iter().map(|c| c.what.as_str()).collect();
        // The default config (NVFP4 W4A4) computes on the FP4 path, in the NVFP4 family, and quantizes its
        // activations in one block kernel.
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
    fn share_links_carry_custom_devices_and_pins() {
        let mut mine = resolve_hardware("h100_sxm", &[]).unwrap();
        mine.key = "my_gpu".into();
        mine.name = "My GPU".into();
        mine.provenance = roofline_core::Provenance::Custom;
        let s = Scenario {
            hardware: "my_gpu".into(),
            batch: 8,
            ..Scenario::default()
        };
        let pin = Scenario {
            hardware: "h100_sxm".into(),
            ..Scenario::default()
        };
        let query = SharedLink::query(&s, std::slice::from_ref(&mine), &[], std::slice::from_ref(&pin));
        let link = SharedLink::from_query(&query).unwrap();
        assert_eq!(link.scenario, s);
        assert_eq!(link.devices, vec![mine.clone()]);
        assert_eq!(link.pins, Some(vec![pin]));
        assert!(link.bad_devices.is_empty());
        // No pins listed: the saved ones stay; an unreadable device is reported.
        let link = SharedLink::from_query("hw=my_gpu&dev=%7Bnope").unwrap();
        assert_eq!(
            (link.pins, link.devices.len(), link.bad_devices.len()),
            (None, 0, 1)
        );
        // Removing the last pin is carried too.
        let none = SharedLink::query(&s, &[mine], &[], &[]);
        assert_eq!(SharedLink::from_query(&none).unwrap().pins, Some(Vec::new()));
    }

    #[test]
    fn share_links_carry_imported_models_and_the_gpu_count_only_when_not_one() {
        let json = include_str!("../../core/tests/data/hf/qwen3-8b.json");
        let model = crate::models::import_model(None, json, &[]).unwrap();
        let s = Scenario {
            model: model.key.clone(),
            gpus: 2,
            ..Scenario::default()
        };
        let query = SharedLink::query(&s, &[], std::slice::from_ref(&model), &[]);
        assert!(query.contains("&tp=2&"), "{query}");
        let link = SharedLink::from_query(&query).unwrap();
        assert_eq!((link.scenario, link.models), (s, vec![model.clone()]));
        // Presets are not carried, one GPU is not written, and older links read as one GPU.
        let plain = SharedLink::query(&Scenario::default(), &[], &[model], &[]);
        assert!(!plain.contains("mdl=") && !plain.contains("tp="), "{plain}");
        assert_eq!(SharedLink::from_query(&plain).unwrap().scenario.gpus, 1);
        let saved: Scenario = serde_json::from_str(r#"{"batch": 4}"#).unwrap();
        assert_eq!(saved.gpus, 1);
        // A model link that is not a model, or claims a preset's key, is reported.
        let preset = serde_json::to_string(roofline_core::find_model("llama-3.1-8b").unwrap()).unwrap();
        let bad = format!(
            "hw=gb10&mdl=%7Bnope&{}",
            form_urlencoded::Serializer::new(String::new())
                .append_pair("mdl", &preset)
                .finish()
        );
        let link = SharedLink::from_query(&bad).unwrap();
        assert_eq!((link.models.len(), link.bad_devices.len()), (0, 2));
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
    fn typed_numbers_are_checked_with_a_reason() {
        assert_eq!(parse_in_range(" 8 ", 1, 512), Ok(8));
        assert_eq!(parse_in_range("-5", 1, 512), Err("must be at least 1".to_owned()));
        assert_eq!(parse_in_range("0", 1, 512), Err("must be at least 1".to_owned()));
        assert_eq!(
            parse_in_range("600", 1, 512),
            Err("must be at most 512".to_owned())
        );
        assert_eq!(
            parse_in_range("2.5", 1, 512),
            Err("not a whole number".to_owned())
        );
    }

    #[test]
    fn query_clamps_and_ignores_garbage() {
        let s = Scenario::from_query("b=100000&s=1&p=FP16,nope,INT8&m=abc").unwrap();
        assert_eq!((s.batch, s.context, s.kernel.m), (512, 32, 1));
        assert_eq!(s.kernel.precisions, vec![Precision::Fp16, Precision::Int8]);
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
    }

    #[test]
    fn log_sliders_hit_the_ends_and_powers_of_two() {
        let max = log_slider_position(CONTEXT_RANGE.1, CONTEXT_RANGE);
        assert_eq!(max, 48.0);
        assert_eq!(log_slider_value(max, CONTEXT_RANGE), 131_072);
        assert_eq!(log_slider_value(0.0, CONTEXT_RANGE), 32);
        assert_eq!(
            log_slider_value(log_slider_position(4096, CONTEXT_RANGE), CONTEXT_RANGE),
            4096
        );
        assert_eq!(
            log_slider_value(log_slider_position(64, BATCH_RANGE), BATCH_RANGE),
            64
        );
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
        .evaluate(&hw);
        assert!(
            rows.iter()
                .all(|r| matches!(r.prediction, Err(Error::InvalidInput(_))))
        );
    }
}
