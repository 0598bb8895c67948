//! `serve`: what a continuous-batching engine delivers on a device, per precision config and GPU count, at
//! each concurrency or request rate: TTFT, TPOT, tokens/s per GPU and per user, the Pareto front, the best
//! point under an SLA, and measured bench results beside their predictions. The model is roofline-core's
//! serving model; this module only parses, reads the measured file and prints.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use roofline_core::{
    Engine, Error, LaunchPlan, Load, METRICS, MetricDefinition, Mode, ModelConfig, Parallelism, QuantConfig,
    Regime, SchedulerKind, ServingComparison, ServingOutcome, ServingPoint, ServingWorkload, Sla, SlaOutcome,
    Sweep, SweepSpec, compare_measured, engines_running, format, launch_plan, matrices_cover, parse_measured,
    sweep,
};

use crate::CliError;
use crate::lists::bounded_distinct;
use crate::output::{emit, json, table};
use crate::predict::{CorrectionArgs, ModelArgs, SpecArgs, parse_config, precisions_line};

/// Most values of each list flag (`--configs`, `--tp`, `--concurrency`, `--rate`), repeats included; repeats are
/// dropped. A longer list is a usage error before any prediction.
pub const MAX_LIST_VALUES: usize = 64;

/// Serving engine on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// vLLM V1 (the OpenAI server's defaults).
    Vllm,
    /// SGLang.
    Sglang,
    /// TensorRT-LLM (LLM API / trtllm-serve).
    Trtllm,
}

impl From<EngineArg> for Engine {
    fn from(e: EngineArg) -> Engine {
        match e {
            EngineArg::Vllm => Engine::Vllm,
            EngineArg::Sglang => Engine::Sglang,
            EngineArg::Trtllm => Engine::TrtLlm,
        }
    }
}

/// Batching on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchedulerArg {
    /// Continuous batching with chunked prefill (what serving engines run).
    Inflight,
    /// Static batches: prefill together, decode together.
    Static,
}

/// `serve` options.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The device and its ceilings.
    #[command(flatten)]
    pub device: SpecArgs,
    /// The model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// One precision config, e.g. `fp8`.
    #[arg(long, value_parser = parse_config, conflicts_with = "configs")]
    pub config: Option<String>,
    /// Precision configs: `all` (every config, the default; those the device cannot run are listed) or a
    /// comma-separated list of keys (at most 64; repeats dropped).
    #[arg(long, value_delimiter = ',', value_parser = parse_config_or_all)]
    pub configs: Vec<String>,
    /// Tensor-parallel degrees to compare: GPUs per replica, comma-separated (e.g. `1,2,4`; at most 64,
    /// repeats dropped).
    #[arg(long = "tp", value_delimiter = ',', default_value = "1",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub tensor_parallel: Vec<u32>,
    /// Expert-parallel degree (MoE models); must divide every --tp.
    #[arg(long = "ep", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub expert_parallel: u32,
    /// Input (prompt) tokens per request.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub isl: u32,
    /// Output tokens per request (at least 2: TPOT is the time between output tokens).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub osl: u32,
    /// Closed-loop concurrencies (clients), comma-separated (at most 64, repeats dropped); default: 1 … the
    /// most that fit.
    #[arg(long, value_delimiter = ',', conflicts_with = "rate",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub concurrency: Vec<u32>,
    /// Open-loop request rates (Poisson arrivals), requests/s, comma-separated (at most 64, repeats dropped).
    #[arg(long, value_delimiter = ',', value_parser = parse_rate)]
    pub rate: Vec<f64>,
    /// Whose scheduling and memory defaults to use.
    #[arg(long, value_enum, default_value = "vllm")]
    pub engine: EngineArg,
    /// Tokens per step (vLLM max_num_batched_tokens, SGLang chunked_prefill_size, TensorRT-LLM
    /// max_num_tokens) instead of the engine's default.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub token_budget: Option<u32>,
    /// Requests running at once (max_num_seqs, max_running_requests, max_batch_size) instead of the default.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_seqs: Option<u32>,
    /// The engine's memory fraction, in (0, 1], instead of its default (vLLM gpu_memory_utilization, SGLang
    /// mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction; each engine's own rule).
    #[arg(long)]
    pub memory_fraction: Option<f64>,
    /// In-flight (continuous) or static batching.
    #[arg(long, value_enum, default_value = "inflight")]
    pub scheduler: SchedulerArg,
    /// SLA: largest TTFT, in ms.
    #[arg(long)]
    pub sla_ttft_ms: Option<f64>,
    /// SLA: largest TPOT, in ms.
    #[arg(long)]
    pub sla_tpot_ms: Option<f64>,
    /// SLA: smallest tokens/s each user sees (1 / TPOT).
    #[arg(long)]
    pub sla_tokens_per_user: Option<f64>,
    /// Measured serving results to compare: `vllm bench serve --save-result` JSON, SGLang `bench_serving`
    /// JSONL, or CSV (concurrency, ttft_ms, tpot_ms, output_tokens_per_s, gpus).
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// Corrections.
    #[command(flatten)]
    pub corrections: CorrectionArgs,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Clap value parser: `all` or a precision-config key.
fn parse_config_or_all(s: &str) -> Result<String, Error> {
    if s.eq_ignore_ascii_case("all") {
        Ok("all".to_owned())
    } else {
        parse_config(s)
    }
}

/// Clap value parser: a positive, finite request rate.
fn parse_rate(s: &str) -> Result<f64, Error> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(Error::InvalidInput(format!(
            "'{s}' is not a positive number of requests/s"
        ))),
    }
}

/// What `serve --json` prints.
#[derive(serde::Serialize)]
struct Report<'a> {
    /// Ceilings of every step time.
    mode: Mode,
    engine: Engine,
    scheduler: SchedulerKind,
    /// Every metric of a point, defined once.
    metrics: &'a [MetricDefinition],
    #[serde(flatten)]
    sweep: &'a Sweep,
    sla: Option<&'a SlaOutcome>,
    /// The commands that serve and measure the recommended point (the SLA's, else the most output per GPU).
    launch: Option<&'a Result<LaunchPlan, String>>,
    measured: Option<&'a [ServingComparison]>,
}

/// The list flags of `serve`, each at most [`MAX_LIST_VALUES`] long and without repeats.
struct Lists {
    configs: Vec<String>,
    tensor_parallel: Vec<u32>,
    concurrency: Vec<u32>,
    rate: Vec<f64>,
}

impl ServeArgs {
    /// The list flags, bounded and deduplicated.
    fn lists(&self) -> Result<Lists, CliError> {
        Ok(Lists {
            configs: bounded_distinct("--configs", &self.configs, MAX_LIST_VALUES)?,
            tensor_parallel: bounded_distinct("--tp", &self.tensor_parallel, MAX_LIST_VALUES)?,
            concurrency: bounded_distinct("--concurrency", &self.concurrency, MAX_LIST_VALUES)?,
            rate: bounded_distinct("--rate", &self.rate, MAX_LIST_VALUES)?,
        })
    }

    /// The configs to sweep: `--config`, the `--configs` list (`listed`), or every config of the table and
    /// the model's checkpoint precisions (`checkpoint`) when it has its own.
    fn configs(&self, model: &ModelConfig, listed: &[String]) -> Result<Vec<QuantConfig>, CliError> {
        let keys: Vec<&str> = match &self.config {
            Some(key) => vec![key.as_str()],
            None if listed.is_empty() || listed.iter().any(|k| k == "all") => {
                return Ok(model.candidate_configs());
            }
            None => listed.iter().map(String::as_str).collect(),
        };
        keys.into_iter()
            .map(|key| model.config(key).map_err(CliError::from))
            .collect()
    }

    fn sla(&self) -> Result<Sla, CliError> {
        let sla = Sla {
            ttft_max_s: self.sla_ttft_ms.map(|ms| ms / 1e3),
            tpot_max_s: self.sla_tpot_ms.map(|ms| ms / 1e3),
            tokens_per_user_min: self.sla_tokens_per_user,
        };
        sla.check().map_err(CliError::from)?;
        Ok(sla)
    }

    fn scheduler(&self) -> SchedulerKind {
        match self.scheduler {
            SchedulerArg::Inflight => SchedulerKind::InFlight,
            SchedulerArg::Static => SchedulerKind::Static,
        }
    }
}

/// Runs `serve`: the sweep, the SLA and the measured comparison, as tables or JSON.
///
/// # Errors
/// [`CliError::Usage`] for a list flag of more than [`MAX_LIST_VALUES`] values, an unknown key, an invalid
/// workload, split or limit, an unreadable or malformed measured file (the message names the line and field),
/// or an SLA limit that is not positive.
pub fn run_serve(args: &ServeArgs) -> Result<(), CliError> {
    let lists = args.lists()?;
    let hardware = args.device.require()?;
    let model = args.model.model()?;
    let owned = args.configs(&model, &lists.configs)?;
    let configs: Vec<&QuantConfig> = owned.iter().collect();
    let sla = args.sla()?;
    let parallelisms: Vec<Parallelism> = lists
        .tensor_parallel
        .iter()
        .map(|&tensor| Parallelism {
            tensor,
            expert: args.expert_parallel,
            pipeline: 1,
        })
        .collect();
    let loads: Vec<Load> = if lists.rate.is_empty() {
        lists.concurrency.iter().copied().map(Load::Concurrency).collect()
    } else {
        lists.rate.iter().copied().map(Load::Rate).collect()
    };
    let workload = ServingWorkload {
        isl: args.isl,
        osl: args.osl,
    };
    let corrections = args.corrections.corrections(&hardware);
    let spec = SweepSpec {
        hardware: &hardware,
        model: &model,
        configs: &configs,
        parallelisms: &parallelisms,
        workload,
        loads: &loads,
        engine: args.engine.into(),
        token_budget: args.token_budget,
        max_seqs: args.max_seqs,
        memory_fraction: args.memory_fraction,
        scheduler: args.scheduler(),
        corrections,
    };
    let sweep = sweep(&spec).map_err(CliError::from)?;
    let sla = (!sla.is_empty()).then(|| sla.evaluate(&sweep));
    let measured = match &args.measured {
        Some(path) => Some(compare_file(path, &spec, &sweep)?),
        None => None,
    };
    let launch = launch(&spec, &sweep, sla.as_ref());
    if args.json {
        return json(&Report {
            mode: Mode::of(&hardware),
            engine: spec.engine,
            scheduler: spec.scheduler,
            metrics: &METRICS,
            sweep: &sweep,
            sla: sla.as_ref(),
            launch: launch.as_ref(),
            measured: measured.as_deref(),
        });
    }
    let mut out = header(&spec, &sweep);
    out.push_str(&points_table(&sweep));
    if !sweep.unstable.is_empty() {
        let mut t = table(&[
            "config",
            "GPUs",
            "rate",
            "largest sustainable",
            "why unsustainable",
        ]);
        for u in &sweep.unstable {
            t.add_row(vec![
                u.config.clone(),
                u.gpus.to_string(),
                format!("{}/s", format::number(u.rate)),
                format!("{}/s", format::number(u.max_sustainable_rate)),
                u.reason.clone(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if !sweep.unsupported.is_empty() {
        let mut t = table(&["config", "not native here"]);
        for u in &sweep.unsupported {
            t.add_row(vec![u.config.clone(), u.reason.clone()]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if let Some(outcome) = &sla {
        out.push_str(&sla_text(outcome));
    }
    if let Some(plan) = &launch {
        out.push_str(&launch_text(plan));
    }
    if let Some(rows) = &measured {
        out.push_str(&measured_table(rows));
    }
    out.push_str(
        "★ Pareto-optimal: no other point has both more tokens/s per user and more output tokens/s per GPU.\n\
         ✗ more requests in flight than fit the KV cache: the rest queue.\n",
    );
    emit(&out)
}

/// Reads and parses the measured file, and compares each run with every config and split of the sweep that
/// has its GPU count (any when the file does not say).
fn compare_file(
    path: &std::path::Path,
    spec: &SweepSpec<'_>,
    sweep: &Sweep,
) -> Result<Vec<ServingComparison>, CliError> {
    let usage = |e: String| CliError::Usage(format!("{}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| usage(e.to_string()))?;
    let measured = parse_measured(&text).map_err(|e| usage(e.to_string()))?;
    let mut rows = Vec::new();
    for fit in sweep.fits.iter().filter(|f| f.memory.fits()) {
        let config = &spec.model.config(&fit.config).map_err(CliError::from)?;
        let runs: Vec<_> = measured
            .iter()
            .filter(|m| m.gpus.is_none_or(|g| g == fit.gpus))
            .cloned()
            .collect();
        let scenario = fit.preset.scenario(
            spec.hardware,
            spec.model,
            config,
            fit.parallelism,
            spec.corrections,
            spec.scheduler,
        );
        rows.extend(compare_measured(scenario, spec.workload, &runs).map_err(|e| usage(e.to_string()))?);
    }
    if rows.is_empty() {
        let mut gpus: Vec<String> = measured
            .iter()
            .filter_map(|m| m.gpus)
            .map(|g| g.to_string())
            .collect();
        gpus.dedup();
        return Err(usage(format!(
            "no measured run matches a prediction: the runs are on {} GPU(s), the configs that fit on --tp {:?}",
            gpus.join(", "),
            sweep
                .fits
                .iter()
                .filter(|f| f.memory.fits())
                .map(|f| f.gpus)
                .collect::<Vec<_>>()
        )));
    }
    Ok(rows)
}

/// The launch plan of the recommended point: the SLA's when one is set, else the point with the most output
/// tokens/s per GPU; `Err` with why when the engine does not serve its config; `None` without a point.
fn launch(
    spec: &SweepSpec<'_>,
    sweep: &Sweep,
    sla: Option<&SlaOutcome>,
) -> Option<Result<LaunchPlan, String>> {
    let open;
    let outcome = match sla {
        Some(o) => o,
        None => {
            open = Sla::default().evaluate(sweep);
            &open
        }
    };
    let point = outcome.recommendation.as_ref()?;
    let fit = sweep
        .fits
        .iter()
        .find(|f| f.config == point.config && f.parallelism == point.parallelism)?;
    let plan = spec
        .model
        .config(&point.config)
        .and_then(|config| launch_plan(spec.model, &config, fit, point, spec.hardware.arch));
    Some(plan.map_err(|e| e.to_string()))
}

/// The launch plan as text: the server line, the benchmark line and the notes.
fn launch_text(plan: &Result<LaunchPlan, String>) -> String {
    match plan {
        Ok(p) => {
            // One argument per line, so the commands fit the table's width and paste as they are.
            let lines = |c: &roofline_core::LaunchCommand| c.parts().join(" \\\n    ");
            let mut out = format!(
                "serve it ({}):\n  {}\nmeasure it:\n  {}\n",
                p.engine.key(),
                lines(&p.serve),
                lines(&p.bench)
            );
            out.extend(p.notes.iter().map(|n| format!("note: {n}\n")));
            out
        }
        Err(why) => format!("no launch line: {why}\n"),
    }
}

fn header(spec: &SweepSpec<'_>, sweep: &Sweep) -> String {
    let scheduler = match spec.scheduler {
        SchedulerKind::InFlight => "in-flight batching",
        SchedulerKind::Static => "static batching",
    };
    let limits = sweep.fits.first().map_or_else(String::new, |f| {
        format!(
            " ({} tokens/step, ≤ {} sequences)",
            f.preset.in_flight.token_budget, f.preset.in_flight.max_seqs
        )
    });
    let mut out = format!(
        "{} · {} · ISL {} OSL {} · {} mode\n{} {scheduler}{limits}\n",
        spec.hardware.name,
        spec.model.name,
        spec.workload.isl,
        spec.workload.osl,
        Mode::of(spec.hardware),
        spec.engine.key(),
    );
    let arch = spec.hardware.arch;
    for config in spec.configs {
        out.push_str(&format!(
            "{}: {}\n",
            config.key,
            precisions_line(spec.model, config)
        ));
        // A config the device runs but the engine does not (its documented quantization support).
        let engines = engines_running(config, arch);
        if matrices_cover(arch)
            && config.check_support(spec.hardware).is_ok()
            && !engines.contains(&spec.engine)
        {
            let others: Vec<&str> = engines.iter().map(|e| e.key()).collect();
            out.push_str(&format!(
                "note: {} does not run {} on {}; engines that do: {}\n",
                spec.engine.key(),
                config.key,
                arch.name(),
                if others.is_empty() {
                    "none".to_owned()
                } else {
                    others.join(", ")
                }
            ));
        }
    }
    for fit in &sweep.fits {
        let m = &fit.memory;
        out.push_str(&format!(
            "{} ×{}: {} weights + {} activations + {} KV cache per GPU: {} sequences of {} tokens fit\n",
            fit.config,
            fit.gpus,
            format::bytes(m.weight_bytes),
            format::bytes(m.activation_bytes),
            format::bytes(m.kv_cache_bytes),
            m.max_sequences,
            m.sequence_tokens
        ));
    }
    out
}

/// A regime in a few characters, for the table.
fn regime_label(regime: Regime) -> &'static str {
    match regime {
        Regime::MemoryBoundDecode => "decode, memory",
        Regime::ComputeBoundDecode => "decode, compute",
        Regime::CommunicationBoundDecode => "decode, comm.",
        Regime::PrefillBound => "prefill",
        Regime::QueueBound => "queue",
    }
}

/// The load of a point: its concurrency, or its rate and the mean in flight.
fn load_label(p: &ServingPoint) -> String {
    match p.load {
        Load::Concurrency(n) => n.to_string(),
        Load::Rate(r) => format!(
            "{}/s ({} in flight)",
            format::number(r),
            format::number(p.concurrency)
        ),
    }
}

fn points_table(sweep: &Sweep) -> String {
    if sweep.points.is_empty() {
        return "no operating point: nothing fits\n".to_owned();
    }
    let mut t = table(&[
        "config",
        "GPUs",
        "load",
        "TTFT",
        "TPOT",
        "tok/s/user",
        "out tok/s/GPU",
        "req/s",
        "batch",
        "mixed",
        "regime",
        "",
    ]);
    for p in &sweep.points {
        let marks = format!(
            "{}{}",
            if p.pareto { "★" } else { "" },
            if p.fits { "" } else { "✗" }
        );
        t.add_row(vec![
            p.config.clone(),
            p.gpus.to_string(),
            load_label(p),
            format::duration(p.ttft_s),
            format::duration(p.tpot_s),
            format::number(p.tokens_per_s_per_user),
            format::number(p.output_tokens_per_s_per_gpu),
            format::number(p.requests_per_s),
            p.decode_batch.to_string(),
            format::percent(p.mixed_step_share),
            regime_label(p.regime).to_owned(),
            marks,
        ]);
    }
    format!("{t}\n")
}

fn sla_text(outcome: &SlaOutcome) -> String {
    let s = &outcome.sla;
    let limits: Vec<String> = [
        s.ttft_max_s.map(|v| format!("TTFT ≤ {}", format::duration(v))),
        s.tpot_max_s.map(|v| format!("TPOT ≤ {}", format::duration(v))),
        s.tokens_per_user_min
            .map(|v| format!("tokens/s per user ≥ {}", format::number(v))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut t = table(&[
        "config",
        "GPUs",
        "best load",
        "out tok/s/GPU",
        "tok/s/user",
        "TTFT",
        "TPOT",
        "why none",
    ]);
    for pick in &outcome.picks {
        let mut row = vec![pick.config.clone(), pick.gpus.to_string()];
        match &pick.best {
            Some(p) => row.extend([
                load_label(p),
                format::number(p.output_tokens_per_s_per_gpu),
                format::number(p.tokens_per_s_per_user),
                format::duration(p.ttft_s),
                format::duration(p.tpot_s),
                String::new(),
            ]),
            None => {
                row.extend(std::iter::repeat_n("—".to_owned(), 5));
                row.push(pick.reason.clone().unwrap_or_default());
            }
        }
        t.add_row(row);
    }
    let mut out = format!("SLA {}:\n{t}\n", limits.join(", "));
    match (&outcome.recommendation, &outcome.reason) {
        (Some(p), _) => out.push_str(&format!(
            "recommended: {} on {} GPU(s) at load {}: {} output tok/s/GPU, {} tok/s/user\n",
            p.config,
            p.gpus,
            load_label(p),
            format::number(p.output_tokens_per_s_per_gpu),
            format::number(p.tokens_per_s_per_user)
        )),
        (None, Some(reason)) => {
            let mut why = table(&["no recommendation"]);
            why.add_row(vec![reason.clone()]);
            out.push_str(&format!("{why}\n"));
        }
        (None, None) => {}
    }
    out
}

fn measured_table(rows: &[ServingComparison]) -> String {
    let mut t = table(&[
        "line",
        "config",
        "GPUs",
        "load",
        "ISL/OSL",
        "TTFT meas.",
        "÷ pred.",
        "TPOT meas.",
        "÷ pred.",
        "out tok/s/GPU meas.",
        "÷ pred.",
    ]);
    let ratio = |r: Option<f64>| r.map_or_else(|| "unstable".to_owned(), |r| format!("{r:.2}"));
    let mut notes = Vec::new();
    for row in rows {
        let (config, gpus, load) = match &row.predicted {
            ServingOutcome::Steady(p) => (p.config.clone(), p.gpus, load_label(p)),
            ServingOutcome::Unstable(u) => {
                (u.config.clone(), u.gpus, format!("{}/s", format::number(u.rate)))
            }
        };
        let m = &row.measured;
        t.add_row(vec![
            m.line.to_string(),
            config,
            m.gpus.unwrap_or(gpus).to_string(),
            load,
            format!("{}/{}", row.workload.isl, row.workload.osl),
            format::duration(m.ttft_s),
            ratio(row.ttft_ratio),
            format::duration(m.tpot_s),
            ratio(row.tpot_ratio),
            format::number(m.output_tokens_per_s / f64::from(m.gpus.unwrap_or(gpus))),
            ratio(row.output_throughput_ratio),
        ]);
        notes.extend(row.notes.iter().map(|n| format!("note (line {}): {n}\n", m.line)));
    }
    let mut out = format!("measured ÷ predicted at each run's load and mean ISL/OSL:\n{t}\n");
    notes.dedup();
    out.extend(notes);
    out
}
