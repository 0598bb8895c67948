//! `predict` and `advise`: whole-model roofline analysis and quantization advice from the command line, for
//! scripting, and [`SpecArgs`], the device and ceilings (`--hardware`, `--spec`, `--mode`) every predicting
//! subcommand takes. The analysis is roofline-core's; this module only parses keys and prints.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use roofline_core::{
    Corrections, Engine, Error, HardwareSpec, MAX_CONFIG_JSON_BYTES, Mode, ModelConfig, Parallelism, Phase,
    QuantConfig, Recommendation, StepLaunch, Workload, advise_model_parallel, analyze_model_parallel,
    engine_support, find_hardware, find_model, find_quant_config, format, matrices_cover,
    recommend_model_for_engine,
};

use crate::CliError;
use crate::output::{emit, json, table};

/// Inference phase on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PhaseArg {
    /// All `context` prompt tokens at once (TTFT).
    Prefill,
    /// One token per sequence over `context` cached tokens (TPOT).
    Decode,
}

/// The serving engine whose quantization support the advice keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoiceArg {
    /// Any of vLLM, SGLang and TensorRT-LLM.
    Any,
    /// vLLM.
    Vllm,
    /// SGLang.
    Sglang,
    /// TensorRT-LLM.
    Trtllm,
}

impl EngineChoiceArg {
    /// The engine, `None` for any.
    #[must_use]
    pub const fn engine(self) -> Option<Engine> {
        match self {
            EngineChoiceArg::Any => None,
            EngineChoiceArg::Vllm => Some(Engine::Vllm),
            EngineChoiceArg::Sglang => Some(Engine::Sglang),
            EngineChoiceArg::Trtllm => Some(Engine::TrtLlm),
        }
    }
}

/// The device predictions run on and its ceilings.
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// Hardware catalog key, e.g. `h100_sxm` (aliases `b10`, `h100`, `a100`).
    #[arg(long, value_parser = parse_hardware)]
    pub hardware: Option<String>,
    /// A device spec JSON instead of a catalog key: a `calibrate --json` output (its `spec`) or a custom
    /// `HardwareSpec`.
    #[arg(long, value_name = "FILE", conflicts_with = "hardware")]
    pub spec: Option<PathBuf>,
    /// Ceilings: `reference` (what tuned libraries reach; the default), `datasheet` (the ideal bound) or
    /// `calibrated` (a measured --spec; the default when --spec is one).
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
}

impl SpecArgs {
    /// The spec in the chosen mode, or `None` when neither `--hardware` nor `--spec` was given.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an unreadable or invalid spec file, or a spec that cannot be put in the mode
    /// (e.g. `--mode calibrated` without a measured spec; the message says how to get one).
    pub fn resolve(&self) -> Result<Option<HardwareSpec>, CliError> {
        let base = match (&self.hardware, &self.spec) {
            (Some(key), _) => find_hardware(key).map_err(CliError::from)?.clone(),
            (None, Some(path)) => read_spec(path)?,
            (None, None) => return Ok(None),
        };
        let mode = self.mode.unwrap_or(match Mode::of(&base) {
            Mode::Calibrated => Mode::Calibrated,
            _ => Mode::Reference,
        });
        base.in_mode(mode).map(Some).map_err(CliError::from)
    }

    /// [`SpecArgs::resolve`] for subcommands that need a device.
    ///
    /// # Errors
    /// As [`SpecArgs::resolve`], and [`CliError::Usage`] when no device was given.
    pub fn require(&self) -> Result<HardwareSpec, CliError> {
        self.resolve()?
            .ok_or_else(|| CliError::Usage("give the device: --hardware KEY or --spec FILE".into()))
    }
}

/// Reads a spec file: a `calibrate --json` output (its `spec` field) or a bare `HardwareSpec`.
fn read_spec(path: &std::path::Path) -> Result<HardwareSpec, CliError> {
    let usage = |e: String| CliError::Usage(format!("{}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| usage(e.to_string()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| usage(e.to_string()))?;
    let spec = value.get("spec").unwrap_or(&value);
    HardwareSpec::from_json(&spec.to_string()).map_err(|e| usage(e.to_string()))
}

/// Reads a model file of at most [`MAX_CONFIG_JSON_BYTES`], never more of it (a larger file, a device or a
/// pipe is refused after that many bytes).
fn read_capped(path: &std::path::Path) -> Result<String, CliError> {
    use std::io::Read;
    let usage = |e: String| CliError::Usage(format!("{}: {e}", path.display()));
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CONFIG_JSON_BYTES as u64 + 1).read_to_string(&mut text))
        .map_err(|e| usage(e.to_string()))?;
    if text.len() > MAX_CONFIG_JSON_BYTES {
        return Err(usage(format!(
            "larger than the limit of {MAX_CONFIG_JSON_BYTES} bytes (16 MiB) for a model file"
        )));
    }
    Ok(text)
}

/// Reads and imports a Hugging Face `config.json`, with the ModelOpt `hf_quant_config.json` beside it when a
/// second file is given (core parses and tells them apart; the CLI only reads the files).
fn read_model(paths: &[PathBuf]) -> Result<ModelConfig, CliError> {
    let texts = paths
        .iter()
        .map(|p| read_capped(p))
        .collect::<Result<Vec<_>, _>>()?;
    let path = paths
        .first()
        .map_or_else(|| std::path::Path::new("config.json"), PathBuf::as_path);
    let usage = |e: String| {
        let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        CliError::Usage(format!("{}: {e}", files.join(" + ")))
    };
    let stem = path
        .file_stem()
        .map_or_else(|| "model".to_owned(), |s| s.to_string_lossy().into_owned());
    let name_or_path = || -> Option<String> {
        let value: serde_json::Value = texts.iter().find_map(|t| serde_json::from_str(t).ok())?;
        let name = value.get("_name_or_path")?.as_str()?;
        name.rsplit('/').find(|part| !part.is_empty()).map(str::to_owned)
    };
    let key = match name_or_path() {
        Some(name) if stem == "config" => name,
        _ => stem,
    }
    .to_ascii_lowercase();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    ModelConfig::from_hf_files(&key, &texts).map_err(|e| usage(e.to_string()))
}

fn parse_mode(s: &str) -> Result<Mode, Error> {
    Mode::parse(s)
}

/// Host launch of a step on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LaunchArg {
    /// One CUDA graph per step (the default outside datasheet mode).
    Graphs,
    /// One host launch per kernel.
    Eager,
    /// No host overhead (the default in datasheet mode).
    None,
}

/// The model to analyse: a preset or a Hugging Face `config.json` (every model-taking subcommand).
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Model preset key, e.g. `llama-3.1-8b`.
    #[arg(long, value_parser = parse_model, required_unless_present = "model_file")]
    pub model: Option<String>,
    /// A Hugging Face `config.json` instead of a preset (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE,
    /// Qwen3-Next, Qwen3.5/3.6, DeepSeek-V3/V3.2/V4, Kimi-K2.5, Kimi-K3, GLM-4.x, GLM-5, MiniMax-M2/M3,
    /// gpt-oss, Gemma 3, Llama 4); given twice, the second (either order) may be the NVIDIA ModelOpt `hf_quant_config.json`
    /// beside it. The model's key is the first file's stem, or the config's `_name_or_path` when the file is
    /// called `config.json`. Each file is read up to 16 MiB.
    #[arg(long, value_name = "FILE", conflicts_with = "model", num_args = 1, action = clap::ArgAction::Append)]
    pub model_file: Vec<PathBuf>,
}

impl ModelArgs {
    /// The preset of `--model`, or the model `--model-file` describes.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an unknown preset, or a model file that cannot be read or imported (the
    /// message names the file and the field).
    pub fn model(&self) -> Result<ModelConfig, CliError> {
        match (&self.model, self.model_file.as_slice()) {
            (_, []) => match &self.model {
                Some(key) => find_model(key).cloned().map_err(CliError::from),
                None => Err(CliError::Usage(
                    "give the model: --model KEY or --model-file config.json".into(),
                )),
            },
            (_, paths) if paths.len() > 2 => Err(CliError::Usage(format!(
                "--model-file takes a config.json and at most one hf_quant_config.json, got {} files",
                paths.len()
            ))),
            (_, paths) => read_model(paths),
        }
    }
}

/// The corrections on top of the mode's ceilings (every step-analysing subcommand).
#[derive(Debug, Clone, Args)]
pub struct CorrectionArgs {
    /// Host launch of the whole step (default: graphs, none in datasheet mode).
    #[arg(long, value_enum)]
    pub launch: Option<LaunchArg>,
    /// Apply the fixed 4 µs per-kernel launch floor (a max, not the spec's additive floors).
    #[arg(long)]
    pub launch_floor: bool,
    /// Apply GEMM wave quantization on the device's SM count.
    #[arg(long)]
    pub wave_quantization: bool,
}

impl CorrectionArgs {
    /// The corrections of the spec's mode, with the flags on top.
    #[must_use]
    pub fn corrections(&self, hardware: &HardwareSpec) -> Corrections {
        let mode = Corrections::for_spec(hardware);
        Corrections {
            launch_floor: self.launch_floor,
            wave_quantization: self.wave_quantization || mode.wave_quantization,
            step_launch: match self.launch {
                Some(LaunchArg::Graphs) => StepLaunch::CudaGraphs,
                Some(LaunchArg::Eager) => StepLaunch::Eager,
                Some(LaunchArg::None) => StepLaunch::Ignored,
                None => mode.step_launch,
            },
            ..mode
        }
    }
}

/// The scenario shared by `predict` and `advise`.
#[derive(Debug, Clone, Args)]
pub struct ScenarioArgs {
    /// The device and its ceilings.
    #[command(flatten)]
    pub device: SpecArgs,
    /// The model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Prefill or decode.
    #[arg(long, value_enum, default_value = "decode")]
    pub phase: PhaseArg,
    /// Sequences in the batch.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub batch: u32,
    /// Prompt length (prefill) or tokens already in the KV cache (decode).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub context: u32,
    /// Tensor-parallel degree: GPUs of one scale-up domain the heads, FFN and vocabulary are split over
    /// (needs the device's interconnect figures; at most its domain size).
    #[arg(long = "tp", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub tensor_parallel: u32,
    /// Expert-parallel degree (MoE models): GPUs of the tensor-parallel group the routed experts are divided
    /// between (dispatch and combine all-to-alls); must divide --tp.
    #[arg(long = "ep", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub expert_parallel: u32,
    /// Corrections.
    #[command(flatten)]
    pub corrections: CorrectionArgs,
    /// The serving engine: advice keeps to the configs it runs on the device (its documented quantization
    /// support), predictions say whether it runs the config.
    #[arg(long, value_enum, default_value = "any")]
    pub engine: EngineChoiceArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl ScenarioArgs {
    fn workload(&self) -> Workload {
        let phase = match self.phase {
            PhaseArg::Prefill => Phase::Prefill,
            PhaseArg::Decode => Phase::Decode,
        };
        Workload {
            phase,
            batch: self.batch,
            context: self.context,
        }
    }

    fn parallelism(&self) -> Parallelism {
        Parallelism {
            tensor: self.tensor_parallel,
            expert: self.expert_parallel,
            pipeline: 1,
        }
    }
}

/// `predict` options.
#[derive(Debug, Clone, Args)]
pub struct PredictArgs {
    /// Scenario.
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Precision config key, e.g. `bf16`, `fp8`, `nvfp4-w4a16`, or `checkpoint` (the default): the precisions
    /// the model's checkpoint stores, module by module (a `--model-file`'s `quantization_config`, a preset's
    /// published checkpoint; BF16 when it has none).
    #[arg(long, value_parser = parse_config, default_value = "checkpoint")]
    pub config: String,
}

/// `advise` options.
#[derive(Debug, Clone, Args)]
pub struct AdviseArgs {
    /// Scenario.
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// The config run today (never recommended back); `checkpoint` for the model's own precisions.
    #[arg(long, value_parser = parse_config, default_value = "bf16")]
    pub current: String,
}

/// Clap value parser: a catalog device key (case-insensitive) → its canonical key, or the error listing
/// every valid key. Shared by every subcommand that takes `--hardware`.
///
/// # Errors
/// Core's unknown-hardware message.
pub fn parse_hardware(s: &str) -> Result<String, Error> {
    find_hardware(s).map(|h| h.key.clone())
}

/// Clap value parser: a model preset key → its canonical key, or the error listing every valid key.
///
/// # Errors
/// Core's unknown-model message.
pub fn parse_model(s: &str) -> Result<String, Error> {
    find_model(s).map(|m| m.key.clone())
}

/// Clap value parser: a precision-config key (or `checkpoint`, resolved against the model later) → its
/// canonical key, or the error listing every valid key.
///
/// # Errors
/// Core's unknown-config message.
pub fn parse_config(s: &str) -> Result<String, Error> {
    if s.trim().eq_ignore_ascii_case("checkpoint") {
        return Ok("checkpoint".to_owned());
    }
    find_quant_config(s).map(|c| c.key.clone())
}

/// The line naming each module's format of `config` for `model`.
#[must_use]
pub fn precisions_line(model: &ModelConfig, config: &QuantConfig) -> String {
    format!("precisions: {}", config.module_summary(&model.modules()))
}

/// Which engines run `config` on `hardware` (their documented quantization support): one line, or none for an
/// architecture outside the engines' matrices; with `engine` chosen, whether it does and why.
#[must_use]
pub fn engines_line(hardware: &HardwareSpec, config: &QuantConfig, engine: Option<Engine>) -> Option<String> {
    let arch = hardware.arch;
    if !matrices_cover(arch) {
        return None;
    }
    let support = engine_support(config, arch);
    let names = |runs: bool| {
        support
            .iter()
            .filter(|s| s.runs == runs)
            .map(|s| s.engine.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(
        match engine.and_then(|e| support.iter().find(|s| s.engine == e)) {
            Some(s) if s.runs => format!(
                "engine: {} runs {} on {}",
                s.engine.name(),
                config.key,
                arch.name()
            ),
            Some(s) => format!(
                "warning: {} does not run {} on {} ({}); engines that do: {}",
                s.engine.name(),
                config.key,
                arch.name(),
                s.basis,
                match names(true) {
                    n if n.is_empty() => "none".to_owned(),
                    n => n,
                }
            ),
            None => match (names(true), names(false)) {
                (yes, no) if no.is_empty() => format!("engines: {yes} run {} on {}", config.key, arch.name()),
                (yes, no) if yes.is_empty() => format!(
                    "engines: none of vLLM, SGLang, TensorRT-LLM lists {} on {} ({no})",
                    config.key,
                    arch.name()
                ),
                (yes, no) => format!("engines: {yes} run {} on {}; not {no}", config.key, arch.name()),
            },
        },
    )
}

/// Prints the per-operator analysis and the totals.
///
/// # Errors
/// [`CliError::Usage`] when the device cannot run the config (the message names the architecture).
pub fn run_predict(args: &PredictArgs) -> Result<(), CliError> {
    let s = &args.scenario;
    let hardware = s.device.require()?;
    let model = &s.model.model()?;
    let config = &model.config(&args.config).map_err(CliError::from)?;
    let analysis = analyze_model_parallel(
        &hardware,
        model,
        config,
        &s.workload(),
        &s.parallelism(),
        &s.corrections.corrections(&hardware),
    )
    .map_err(CliError::from)?;
    if s.json {
        return json(&analysis);
    }
    let mut ops = table(&[
        "op",
        "count",
        "AI (FLOP/B)",
        "GFLOP",
        "MB",
        "µs",
        "% time",
        "bound",
    ]);
    let mut sorted: Vec<_> = analysis.ops.iter().collect();
    sorted.sort_by(|a, b| (b.time_s * f64::from(b.count)).total_cmp(&(a.time_s * f64::from(a.count))));
    for op in sorted {
        let total_s = op.time_s * f64::from(op.count);
        ops.add_row(vec![
            op.name.clone(),
            op.count.to_string(),
            format!("{:.2}", op.arithmetic_intensity),
            format!("{:.3}", op.flops * f64::from(op.count) / 1e9),
            format!("{:.2}", op.bytes * f64::from(op.count) / 1e6),
            format!("{:.2}", total_s * 1e6),
            format!("{:.1}", 100.0 * total_s / analysis.total_time_s),
            op.bound.name().to_owned(),
        ]);
    }
    let p = analysis.parallelism;
    let gpus = match (analysis.gpus, p.expert) {
        (1, _) => String::new(),
        (n, 1) => format!(" ×{n} (TP {})", p.tensor),
        (n, e) => format!(" ×{n} (TP {}, EP {e})", p.tensor),
    };
    let mut out = format!(
        "{}{gpus} · {} · {} · {:?} batch {} context {} · {} mode\n{ops}\n",
        hardware.name, model.name, config.name, s.phase, s.batch, s.context, analysis.mode
    );
    let params = model.parameters();
    let mut totals = table(&["metric", "value"]);
    let time_row = match (analysis.ttft_s, analysis.tpot_s) {
        (Some(t), _) => ("TTFT", format::duration(t)),
        (_, Some(t)) => ("TPOT", format::duration(t)),
        _ => ("step", format::duration(analysis.total_time_s)),
    };
    for (name, value) in [
        time_row,
        (
            "tokens/s (whole batch)",
            format::tokens_per_s(analysis.tokens_per_s),
        ),
        (
            "kernels, launch overhead",
            format!(
                "{}, {}",
                analysis.kernel_launches,
                format::duration(analysis.launch_overhead_s)
            ),
        ),
        ("total FLOP", format::flops(analysis.total_flops)),
        ("total bytes", format::bytes(analysis.total_bytes)),
        (
            "aggregate AI (FLOP/B)",
            format::intensity(analysis.aggregate_arithmetic_intensity),
        ),
        ("bound", analysis.bound.name().to_owned()),
        (
            "parameters (total, active)",
            format!(
                "{}, {}",
                format::parameters(params.total),
                format::parameters(params.active)
            ),
        ),
        ("weights", format::bytes(analysis.weight_bytes)),
        ("KV cache", format::bytes(analysis.kv_cache_bytes)),
        ("GPUs", analysis.gpus.to_string()),
        (
            "weights, KV cache per GPU",
            format!(
                "{}, {}",
                format::bytes(analysis.weight_bytes_per_gpu),
                format::bytes(analysis.kv_cache_bytes_per_gpu)
            ),
        ),
        (
            "fits in memory (per GPU)",
            format!(
                "{} ({} of {})",
                analysis.fits_in_memory,
                format::bytes(analysis.memory_required_bytes),
                format::bytes(analysis.memory_capacity_bytes)
            ),
        ),
        (
            "communication",
            format!(
                "{}, {} of the step, {} sent per GPU",
                format::duration(analysis.communication_time_s),
                format::percent(analysis.communication_fraction),
                format::bytes(analysis.communication_bytes)
            ),
        ),
    ] {
        totals.add_row(vec![name.to_owned(), value]);
    }
    out.push_str(&format!("{totals}\n"));
    out.push_str(&format!("{}\n", precisions_line(model, config)));
    if let Some(line) = engines_line(&hardware, config, s.engine.engine()) {
        out.push_str(&format!("{line}\n"));
    }
    for note in &analysis.approximations {
        out.push_str(&format!("note: {note}\n"));
    }
    emit(&out)
}

/// Prints the ranked candidates, the configs the device cannot run and the warnings.
///
/// # Errors
/// [`CliError::Usage`] for an invalid scenario or a device with no baseline.
pub fn run_advise(args: &AdviseArgs) -> Result<(), CliError> {
    let s = &args.scenario;
    let hardware = s.device.require()?;
    let model = &s.model.model()?;
    let advice = advise_model_parallel(
        &hardware,
        model,
        &s.workload(),
        &s.parallelism(),
        &args.current,
        &s.corrections.corrections(&hardware),
    )
    .map_err(CliError::from)?;
    if s.json {
        return json(&advice);
    }
    let recommendation = recommend_model_for_engine(
        &hardware,
        model,
        &s.workload(),
        &s.parallelism(),
        &s.corrections.corrections(&hardware),
        &advice,
        s.engine.engine(),
    )
    .map_err(CliError::from)?;
    let mut candidates = table(&[
        "rank",
        "config",
        "time ms",
        "speedup",
        "memory saved GB",
        "fits",
        "min GPUs",
        "break-even batch",
        "engines",
        "reason",
    ]);
    for (rank, c) in advice.candidates.iter().enumerate() {
        candidates.add_row(vec![
            (rank + 1).to_string(),
            c.config.clone(),
            format!("{:.3}", c.time_s * 1e3),
            format!("{:.2}×", c.speedup),
            format!("{:.2}", c.memory_saved_bytes / 1e9),
            c.fits_in_memory.to_string(),
            c.min_gpus.map_or_else(|| "—".to_owned(), |g| g.to_string()),
            c.break_even_batch
                .map_or_else(|| "—".to_owned(), |b| b.to_string()),
            match c.engines.as_slice() {
                [] => "—".to_owned(),
                engines => engines.iter().map(|e| e.key()).collect::<Vec<_>>().join(" "),
            },
            c.reason.clone(),
        ]);
    }
    let mut out = format!(
        "{} · {} · current {} · speedups vs {} · {} mode\n{candidates}\n",
        hardware.name,
        model.name,
        advice.current,
        advice.baseline,
        Mode::of(&hardware)
    );
    for skipped in &advice.skipped {
        out.push_str(&format!(
            "not native here: {} — {}\n",
            skipped.config, skipped.reason
        ));
    }
    for warning in &advice.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out.push_str(&match recommendation {
        Recommendation::Switch(p) => format!("recommendation: switch to {} — {}\n", p.config, p.reason),
        Recommendation::Keep(p) => format!("recommendation: keep {} — {}\n", p.config, p.reason),
        Recommendation::NothingFits { changes, .. } => {
            format!("recommendation: nothing fits — {}\n", changes.join("; "))
        }
    });
    emit(&out)
}
