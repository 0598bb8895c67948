//! Measured serving runs beside the prediction: any file core's `parse_measured` reads (`vllm bench serve`
//! JSON, SGLang JSONL, AIPerf, `vllm bench sweep` CSV, InferenceX rows, plain CSV; [`read`]), the scenario it ran with
//! ([`RanOn`], asked on import), the runs kept in local storage without duplicates ([`add`]), and their
//! comparison with core's prediction — only against the scenario they ran with ([`compare`]).

use roofline_core::{
    BenchFormat, Engine, Error, MeasuredServingPoint, Parallelism, SchedulerKind, ServingComparison,
    ServingScenario, Sweep, VLLM_GPU_MEMORY_UTILIZATION, compare_measured, find_quant_config, parse_measured,
};
use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;
use crate::serving::SweepKey;
use crate::serving_inputs::engine_name;

/// The scenario a measured run ran with; it is only ever compared with predictions of this scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanOn {
    /// Device key.
    pub hardware: String,
    /// Model key.
    pub model: String,
    /// Precision config key.
    pub config: String,
    /// GPUs of the replica (tensor parallel).
    pub gpus: u32,
    /// Expert-parallel degree within them.
    pub experts: u32,
    /// The engine that served it.
    pub engine: Engine,
    /// Its batching.
    pub scheduler: SchedulerKind,
    /// Its token budget, when not the engine's default.
    pub token_budget: Option<u32>,
    /// Its max running requests, when not the engine's default.
    pub max_seqs: Option<u32>,
    /// Its memory fraction, when not the engine's default ([`Scenario::serving_memory_fraction`]; runs kept
    /// before it was recorded read as the default).
    #[serde(default)]
    pub memory_fraction: Option<f64>,
}

impl RanOn {
    /// The scenario the page shows now, with its config.
    #[must_use]
    pub fn of(s: &Scenario) -> RanOn {
        RanOn {
            hardware: s.hardware.clone(),
            model: s.model.clone(),
            config: s.config.clone(),
            gpus: s.gpus,
            experts: s.experts,
            engine: s.serving_engine(),
            scheduler: s.serving.scheduler,
            token_budget: s.serving.token_budget,
            max_seqs: s.serving.max_seqs,
            memory_fraction: s.serving_memory_fraction(),
        }
    }

    /// Sets `s` to this scenario: device, model, config, GPU split, engine and its limits (the rest of `s`
    /// stays).
    pub fn apply(&self, s: &mut Scenario) {
        s.hardware.clone_from(&self.hardware);
        s.model.clone_from(&self.model);
        s.config.clone_from(&self.config);
        s.set_gpus(self.gpus);
        s.experts = self.experts;
        (s.engine, s.serving.scheduler) = (Some(self.engine), self.scheduler);
        (s.serving.token_budget, s.serving.max_seqs) = (self.token_budget, self.max_seqs);
        s.memory_fraction = self.memory_fraction.unwrap_or(VLLM_GPU_MEMORY_UTILIZATION);
    }

    /// E.g. `h100_sxm · llama-3.1-8b · fp8 · 1 GPU · vLLM`.
    #[must_use]
    pub fn label(&self) -> String {
        let gpus = if self.gpus == 1 {
            "1 GPU".to_owned()
        } else {
            format!("{} GPUs", self.gpus)
        };
        format!(
            "{} · {} · {} · {gpus} · {}",
            self.hardware,
            self.model,
            self.config,
            engine_name(self.engine)
        )
    }

    /// The first thing, other than the config, in which `view` (the scenario the page shows) is not what ran
    /// (`None`: the view predicts this run's scenario).
    #[must_use]
    pub fn differs_from(&self, view: &RanOn) -> Option<&'static str> {
        [
            (self.hardware != view.hardware, "device"),
            (self.model != view.model, "model"),
            (
                self.gpus != view.gpus || self.experts != view.experts,
                "GPU split",
            ),
            (self.engine != view.engine, "engine"),
            (
                self.scheduler != view.scheduler
                    || self.token_budget != view.token_budget
                    || self.max_seqs != view.max_seqs
                    || self.memory_fraction != view.memory_fraction,
                "engine limits",
            ),
        ]
        .into_iter()
        .find_map(|(differs, what)| differs.then_some(what))
    }
}

/// A measured run kept by the page: the file it came from, what it ran on, and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServingRun {
    /// The file's name.
    pub file: String,
    /// The scenario it ran with.
    pub ran_on: RanOn,
    /// What it measured (core's point, as local storage keeps it).
    pub measured: MeasuredServingPoint,
}

impl ServingRun {
    /// GPUs it ran on: the file's figure (CSV), else the scenario's.
    #[must_use]
    pub fn gpus(&self) -> u32 {
        self.measured.gpus_or(self.ran_on.gpus)
    }

    /// The layout it ran on: tensor parallel over its GPUs, experts as the scenario said.
    #[must_use]
    pub fn layout(&self) -> Parallelism {
        Parallelism {
            tensor: self.gpus(),
            expert: self.ran_on.experts,
            pipeline: 1,
        }
    }

    /// Output tokens/s per GPU it measured (core's rule).
    #[must_use]
    pub fn output_tokens_per_s_per_gpu(&self) -> f64 {
        self.measured.output_tokens_per_s_per_gpu(self.ran_on.gpus)
    }
}

/// A file read but not yet added: its runs and the scenario they will be recorded with (the page's current
/// one, editable before confirming).
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The file's name.
    pub file: String,
    /// The tool that wrote it (of its first run).
    pub tool: BenchFormat,
    /// Its runs.
    pub runs: Vec<MeasuredServingPoint>,
    /// What they ran with.
    pub ran_on: RanOn,
}

/// Reads a measured serving file with core's `parse_measured`; the runs are taken as run with the page's
/// current scenario `s`, except the engine a JSON file names by its format (vLLM, SGLang) and the GPU count
/// a CSV gives for every row.
///
/// # Errors
/// Core's parse error, naming the line and field.
pub fn read(file: &str, text: &str, s: &Scenario) -> Result<Pending, Error> {
    let runs = parse_measured(text)?;
    let tool = runs.first().map_or(BenchFormat::Csv, |r| r.format);
    let mut ran_on = RanOn::of(s);
    match tool {
        BenchFormat::VllmBenchServe | BenchFormat::VllmSweep => ran_on.engine = Engine::Vllm,
        BenchFormat::SglangBenchServing => ran_on.engine = Engine::Sglang,
        BenchFormat::Aiperf | BenchFormat::InferenceX | BenchFormat::Csv => {}
    }
    if let Some(gpus) = runs.first().and_then(|r| r.gpus)
        && runs.iter().all(|r| r.gpus == Some(gpus))
    {
        ran_on.gpus = gpus;
    }
    Ok(Pending {
        file: file.to_owned(),
        tool,
        runs,
        ran_on,
    })
}

/// What [`add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Runs not kept before.
    pub new: usize,
    /// Runs already kept (their scenario is now the confirmed one).
    pub known: usize,
}

/// Adds the confirmed runs of `pending` to `runs`. A run already kept (the same measurement from the same
/// file name) is not added again: a re-imported file adds nothing, and its runs take the scenario just
/// confirmed.
pub fn add(runs: &mut Vec<ServingRun>, pending: &Pending) -> Added {
    let mut added = Added { new: 0, known: 0 };
    for measured in &pending.runs {
        match runs
            .iter_mut()
            .find(|r| r.file == pending.file && r.measured == *measured)
        {
            Some(kept) => {
                kept.ran_on.clone_from(&pending.ran_on);
                added.known += 1;
            }
            None => {
                runs.push(ServingRun {
                    file: pending.file.clone(),
                    ran_on: pending.ran_on.clone(),
                    measured: measured.clone(),
                });
                added.new += 1;
            }
        }
    }
    added
}

/// A kept run compared with the prediction of its own scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRow {
    /// The run.
    pub run: ServingRun,
    /// Measured ÷ predicted at its load and mean lengths (core's `compare_measured`), or why there is none.
    pub comparison: Result<ServingComparison, Error>,
    /// Whether it ran at the view's ISL and OSL, so it sits on the chart's axes beside the curves.
    pub on_chart: bool,
}

/// Runs of another scenario than the view's: counted, never drawn or compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Elsewhere {
    /// What they ran with.
    pub ran_on: RanOn,
    /// How many.
    pub runs: usize,
    /// What differs, e.g. `another device`, or why the config has no prediction here.
    pub why: String,
}

/// The kept runs split by the view's scenario.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Compared {
    /// Runs of the view's scenario (any config it predicts), each with its error.
    pub rows: Vec<MeasuredRow>,
    /// Runs of other scenarios, grouped by scenario.
    pub elsewhere: Vec<Elsewhere>,
}

/// Compares each kept run that ran with the view's scenario `view` (device, model, engine and its limits; any
/// config and layout the sweep predicts) with core's simulation of its own client under the sweep's engine
/// preset for its config and layout, with the view's speculative decoding and prefix cache, at the run's
/// load and mean lengths (`key.workload` where the file gives none), percentile by percentile; the others are
/// counted per scenario with what differs.
#[must_use]
pub fn compare(runs: &[ServingRun], view: &RanOn, key: &SweepKey, sweep: &Sweep) -> Compared {
    let mut out = Compared::default();
    let mut here: Vec<&ServingRun> = Vec::new();
    for run in runs {
        // The view sweeps every layout: a run's own split is compared with that layout's prediction.
        let same_split = RanOn {
            gpus: run.ran_on.gpus,
            experts: run.ran_on.experts,
            ..view.clone()
        };
        let why = run
            .ran_on
            .differs_from(&same_split)
            .map(|what| format!("another {what}"))
            .or_else(|| config_missing(&run.ran_on.config, sweep))
            .or_else(|| layout_missing(run, sweep));
        match why {
            None => here.push(run),
            Some(why) => match out
                .elsewhere
                .iter_mut()
                .find(|e| e.ran_on == run.ran_on && e.why == why)
            {
                Some(e) => e.runs += 1,
                None => out.elsewhere.push(Elsewhere {
                    ran_on: run.ran_on.clone(),
                    runs: 1,
                    why,
                }),
            },
        }
    }
    for fit in sweep.fits.iter().filter(|f| f.memory.fits()) {
        let mine: Vec<&ServingRun> = here
            .iter()
            .copied()
            .filter(|r| r.ran_on.config == fit.config && r.layout() == fit.parallelism)
            .collect();
        let Ok(config) = find_quant_config(&fit.config) else {
            continue;
        };
        if mine.is_empty() {
            continue;
        }
        let scenario = ServingScenario {
            features: key.features(),
            ..fit.preset.scenario(
                &key.hardware,
                &key.model,
                config,
                fit.parallelism,
                key.corrections,
                key.scheduler,
            )
        };
        let points: Vec<MeasuredServingPoint> = mine.iter().map(|r| r.measured.clone()).collect();
        match compare_measured(scenario, key.workload, &points) {
            Ok(comparisons) => out
                .rows
                .extend(mine.iter().zip(comparisons).map(|(run, c)| MeasuredRow {
                    on_chart: c.workload == key.workload,
                    run: (*run).clone(),
                    comparison: Ok(c),
                })),
            Err(e) => out.rows.extend(mine.iter().map(|run| MeasuredRow {
                run: (*run).clone(),
                comparison: Err(e.clone()),
                on_chart: false,
            })),
        }
    }
    out
}

/// Why `run`'s layout has no prediction in `sweep`: the sweep has no such split (one the device's domain or
/// the model's heads refuse), or the config does not fit on it.
fn layout_missing(run: &ServingRun, sweep: &Sweep) -> Option<String> {
    let layout = run.layout();
    match sweep
        .fits
        .iter()
        .find(|f| f.config == run.ran_on.config && f.parallelism == layout)
    {
        Some(fit) if fit.memory.fits() => None,
        Some(_) => Some(format!(
            "{} does not fit on {}",
            run.ran_on.config,
            roofline_core::layout_name(&layout)
        )),
        None => Some(format!(
            "no prediction on {}",
            roofline_core::layout_name(&layout)
        )),
    }
}

/// Why `config` has no prediction in `sweep`: the device cannot run it (core's reason, naming the
/// architecture), it does not fit, or it is no config.
fn config_missing(config: &str, sweep: &Sweep) -> Option<String> {
    if let Some(u) = sweep.unsupported.iter().find(|u| u.config == config) {
        return Some(u.reason.clone());
    }
    match sweep.fits.iter().find(|f| f.config == config) {
        Some(fit) if fit.memory.fits() => None,
        Some(_) => Some(format!("{config} does not fit in this device's memory")),
        None => Some(format!("'{config}' is not a precision config")),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::serving::tests::{h100_llama, swept};
    use roofline_core::{Load, ServingOutcome};

    /// The committed `vllm bench serve --save-result` file: Llama-3.1-8B at concurrency 16, ISL/OSL 1024.
    pub(crate) const VLLM: &str = include_str!("../../../core/tests/data/serving/vllm_bench_serve.json");
    const SGLANG: &str = include_str!("../../../core/tests/data/serving/sglang_bench_serving.jsonl");
    const CSV: &str = include_str!("../../../core/tests/data/serving/measured.csv");

    #[test]
    fn saved_runs_read_back_as_cores_points() {
        for text in [VLLM, SGLANG, CSV] {
            for point in parse_measured(text).unwrap() {
                // Local storage's JSON gives back the same bits (serde_json's float_roundtrip).
                let json = serde_json::to_string(&point).unwrap();
                assert_eq!(
                    serde_json::from_str::<MeasuredServingPoint>(&json).unwrap(),
                    point
                );
            }
        }
    }

    #[test]
    fn a_file_is_taken_as_run_on_the_current_scenario_with_its_own_engine_and_gpus() {
        let (s, _) = h100_llama();
        let vllm = read("run.json", VLLM, &s).unwrap();
        assert_eq!((vllm.tool, vllm.runs.len()), (BenchFormat::VllmBenchServe, 1));
        assert_eq!(vllm.ran_on, RanOn::of(&s));
        let mut sglang_view = s.clone();
        sglang_view.engine = Some(Engine::TrtLlm);
        let sglang = read("sg.jsonl", SGLANG, &sglang_view).unwrap();
        assert_eq!(sglang.ran_on.engine, Engine::Sglang, "the file says which engine");
        // The CSV's rows are on 1, 1 and 2 GPUs: no one count for the file, the view's stays.
        assert_eq!(read("m.csv", CSV, &s).unwrap().ran_on.gpus, 1);
        let two = "concurrency,ttft_ms,tpot_ms,output_tokens_per_s,gpus\n8,100,10,1500,2\n";
        assert_eq!(read("two.csv", two, &s).unwrap().ran_on.gpus, 2);
        let err = read("bad.json", &VLLM.replace("\"mean_tpot_ms\"", "\"mean_tpot\""), &s).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid input: line 1: field `mean_tpot_ms` is missing"
        );
    }

    #[test]
    fn re_importing_a_file_adds_nothing_and_takes_the_new_scenario() {
        let (s, _) = h100_llama();
        let mut runs = Vec::new();
        let pending = read("run.json", VLLM, &s).unwrap();
        assert_eq!(add(&mut runs, &pending), Added { new: 1, known: 0 });
        // Kept, saved and read back (as after a reload), then imported again.
        runs = serde_json::from_str(&serde_json::to_string(&runs).unwrap()).unwrap();
        let mut again = pending.clone();
        again.ran_on.config = "bf16".into();
        assert_eq!(add(&mut runs, &again), Added { new: 0, known: 1 });
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].ran_on.config, "bf16");
        let csv = read("m.csv", CSV, &s).unwrap();
        assert_eq!(add(&mut runs, &csv), Added { new: 3, known: 0 });
        assert_eq!(runs.len(), 4);
    }

    #[test]
    fn runs_are_compared_only_with_the_scenario_they_ran() {
        let (s, hw) = h100_llama();
        let (key, sweep) = swept(&s, &hw);
        let mut runs = Vec::new();
        let mut pending = read("run.json", VLLM, &s).unwrap();
        pending.ran_on.config = "bf16".into();
        add(&mut runs, &pending);
        // The same file said to have run on an H200, and on an FP4 config Hopper cannot run.
        let mut h200 = pending.clone();
        (h200.file, h200.ran_on.hardware) = ("h200.json".into(), "h200_sxm".into());
        add(&mut runs, &h200);
        let mut fp4 = pending.clone();
        (fp4.file, fp4.ran_on.config) = ("fp4.json".into(), "nvfp4-w4a4".into());
        add(&mut runs, &fp4);
        let compared = compare(&runs, &RanOn::of(&s), &key, &sweep);
        assert_eq!(compared.rows.len(), 1);
        let row = &compared.rows[0];
        assert!(row.on_chart, "ISL/OSL 1024 from the file's totals, as the view");
        let c = row.comparison.as_ref().unwrap();
        // Core simulates the file's own client at its load: vllm bench serve's 160 requests from 16 users.
        let ServingOutcome::Steady(predicted) = &c.predicted else {
            panic!("{:?}", c.predicted)
        };
        assert_eq!((predicted.load, predicted.requests), (Load::Concurrency(16), 160));
        assert_eq!(c.client.requests, Some(160));
        assert!((c.tpot_ratio.unwrap() - 0.01162 / predicted.tpot_s).abs() < 1e-12);
        assert!(
            (c.output_throughput_ratio.unwrap() - 1361.4 / predicted.output_tokens_per_s_per_gpu).abs()
                < 1e-12
        );
        let whys: Vec<&str> = compared.elsewhere.iter().map(|e| e.why.as_str()).collect();
        assert_eq!(whys.len(), 2, "{whys:?}");
        assert_eq!(whys[0], "another device");
        assert!(whys[1].contains("Hopper"), "{}", whys[1]);
    }
}
