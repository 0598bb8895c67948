//! `serve`: what a serving engine delivers to a benchmark client on a device, per precision config and GPU
//! count, at each concurrency or request rate, simulated request by request: TTFT, TPOT, ITL and E2E (mean,
//! P50, P90, P99), tokens/s per GPU and per user, the Pareto front, the best point under an SLA at the chosen
//! statistic, and measured bench results beside the simulation of the same client. The model is
//! roofline-core's; this module only parses, reads the measured file and prints.

mod tables;
pub mod traffic;

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use roofline_core::{
    BenchClient, Engine, EngineFeatures, Error, LaunchPlan, Load, METRICS, MetricDefinition, Mode,
    ModelConfig, Parallelism, Percentile, QuantConfig, SchedulerKind, ServingComparison, ServingWorkload,
    Sla, SlaOutcome, Sweep, SweepSpec, check_bench_size, compare_measured, format, launch_plan,
    parse_measured, sweep,
};

use crate::CliError;
use crate::lists::bounded_distinct;
use crate::output::{emit, json, table};
use crate::predict::{CorrectionArgs, ModelArgs, SpecArgs, parse_config};
use tables::{header, measured_table, points_table, sla_text};
use traffic::TrafficArgs;

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
    /// Input (prompt) tokens per request (the nominal length the client draws around).
    #[arg(long, required_unless_present = "scenario", value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub isl: Option<u32>,
    /// Output tokens per request (at least 2: TPOT is the time between output tokens).
    #[arg(long, required_unless_present = "scenario", value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub osl: Option<u32>,
    /// Closed-loop concurrencies (clients), comma-separated (at most 64, repeats dropped); default: 1 … the
    /// most that fit.
    #[arg(long, value_delimiter = ',', conflicts_with = "rate",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub concurrency: Vec<u32>,
    /// Open-loop request rates, requests/s, comma-separated (at most 64, repeats dropped).
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
    /// Measured serving results to compare (at most 64 MiB): `vllm bench serve --save-result` JSON, SGLang
    /// JSONL, AIPerf profile_export_aiperf.json, vllm bench sweep summary.csv, InferenceX agg_bmk.json, or
    /// CSV (concurrency, ttft_ms, tpot_ms, output_tokens_per_s, gpus).
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// The simulated client, the statistic read, speculative decoding and the prefix cache.
    #[command(flatten)]
    pub traffic: TrafficArgs,
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
    /// The client simulated.
    client: BenchClient,
    /// The statistic the tables and the SLA read.
    percentile: Percentile,
    /// Speculative decoding and the prefix cache.
    speculative: Option<roofline_core::SpecDecoding>,
    prefix_hit_rate: f64,
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

    /// `--isl`/`--osl`, or the scenario's.
    fn workload(&self) -> Result<ServingWorkload, CliError> {
        match (self.traffic.scenario, self.isl, self.osl) {
            (Some(s), _, _) => Ok(s.workload()),
            (None, Some(isl), Some(osl)) => Ok(ServingWorkload { isl, osl }),
            _ => Err(CliError::Usage(
                "--isl and --osl (or --scenario) are required".into(),
            )),
        }
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
    let draft = args.traffic.draft_model()?;
    let features: EngineFeatures<'_> = args.traffic.features(draft)?;
    let spec = SweepSpec {
        hardware: &hardware,
        model: &model,
        configs: &configs,
        parallelisms: &parallelisms,
        workload: args.workload()?,
        loads: &loads,
        engine: args.engine.into(),
        token_budget: args.token_budget,
        max_seqs: args.max_seqs,
        memory_fraction: args.memory_fraction,
        scheduler: args.scheduler(),
        corrections: args.corrections.corrections(&hardware),
        client: args.traffic.client()?,
        features,
    };
    let sweep = sweep(&spec).map_err(CliError::from)?;
    let percentile = args.traffic.percentile;
    let sla = (!sla.is_empty()).then(|| sla.evaluate_at(&sweep, percentile));
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
            client: spec.client,
            percentile,
            speculative: spec.features.speculative,
            prefix_hit_rate: spec.features.prefix_hit_rate,
            metrics: &METRICS,
            sweep: &sweep,
            sla: sla.as_ref(),
            launch: launch.as_ref(),
            measured: measured.as_deref(),
        });
    }
    emit(&report_text(
        &spec,
        &sweep,
        percentile,
        sla.as_ref(),
        launch.as_ref(),
        measured.as_deref(),
    ))
}

/// The tables of a run: header, points, unstable rates, unsupported configs, SLA, launch lines and measured
/// runs.
fn report_text(
    spec: &SweepSpec<'_>,
    sweep: &Sweep,
    percentile: Percentile,
    sla: Option<&SlaOutcome>,
    launch: Option<&Result<LaunchPlan, String>>,
    measured: Option<&[ServingComparison]>,
) -> String {
    let mut out = header(spec, sweep);
    out.push_str(&points_table(sweep, percentile));
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
    if let Some(outcome) = sla {
        out.push_str(&sla_text(outcome));
    }
    if let Some(plan) = launch {
        out.push_str(&launch_text(plan));
    }
    if let Some(rows) = measured {
        out.push_str(&measured_table(rows));
    }
    out.push_str(
        "★ Pareto-optimal: no other point has both more tokens/s per user and more output tokens/s per GPU.\n\
         ✗ the KV cache held requests back: admission waited for memory, or requests were preempted.\n",
    );
    out
}

/// Reads and parses the measured file, and compares each run with every config and split of the sweep that
/// has its GPU count (any when the file does not say).
fn compare_file(
    path: &std::path::Path,
    spec: &SweepSpec<'_>,
    sweep: &Sweep,
) -> Result<Vec<ServingComparison>, CliError> {
    let usage = |e: String| CliError::Usage(format!("{}: {e}", path.display()));
    let size = std::fs::metadata(path).map_err(|e| usage(e.to_string()))?.len();
    check_bench_size(size).map_err(|e| usage(e.to_string()))?;
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
        let scenario = roofline_core::ServingScenario {
            features: spec.features,
            ..fit.preset.scenario(
                spec.hardware,
                spec.model,
                config,
                fit.parallelism,
                spec.corrections,
                spec.scheduler,
            )
        };
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
