//! The commands that run a predicted operating point ([`launch_plan`]): the engine's server with the
//! prediction's GPU split, limits, memory fraction, request length and precisions, and `vllm bench serve`
//! at the point's load, whose `--save-result` file the page and `roofline serve --measured` compare with the
//! prediction. Every flag names the engine documentation or source file it comes from.

use roofline_analysis::model::ModelConfig;
use roofline_analysis::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::precision::{Architecture, Precision};

use super::{ConfigFit, Engine, Load, Scheme, ServingPoint, kv_cache_dtype, schemes, serves};

/// One argument of a command: the flag (or a positional value when `flag` is empty), its value, and where
/// the engine documents it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LaunchArg {
    /// `--tensor-parallel-size`, or empty for a positional argument.
    pub flag: &'static str,
    /// Its value; `None` for a switch.
    pub value: Option<String>,
    /// The documentation or source file the flag is read from.
    pub source: &'static str,
}

/// A command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LaunchCommand {
    /// A command run first with `&&` (writing TensorRT-LLM's options file), if any.
    pub prelude: Option<String>,
    /// The program and its subcommand, e.g. `vllm serve`.
    pub program: &'static str,
    /// Its arguments, in order.
    pub args: Vec<LaunchArg>,
}

impl LaunchCommand {
    /// The command as one shell line; values with characters the shell would read are single-quoted.
    #[must_use]
    pub fn line(&self) -> String {
        self.parts().join(" ")
    }

    /// The command in words a shell reads as one: the prelude with its `&&`, the program, then each
    /// argument with its value (for printing one per line with `\` continuations).
    #[must_use]
    pub fn parts(&self) -> Vec<String> {
        let quote = |v: &str| {
            if v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@".contains(c))
            {
                v.to_owned()
            } else {
                format!("'{}'", v.replace('\'', r"'\''"))
            }
        };
        let mut parts: Vec<String> = self.prelude.iter().map(|p| format!("{p} &&")).collect();
        parts.push(self.program.to_owned());
        for arg in &self.args {
            let value = arg.value.as_deref().map(quote);
            parts.push(match (arg.flag, value) {
                ("", Some(v)) => v,
                (flag, Some(v)) => format!("{flag} {v}"),
                (flag, None) => flag.to_owned(),
            });
        }
        parts
    }

    /// The value of `flag`, if the command has it.
    #[must_use]
    pub fn value(&self, flag: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|a| a.flag == flag)
            .and_then(|a| a.value.as_deref())
    }
}

/// What runs a predicted point: the server, the benchmark at its load, and what the commands need.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LaunchPlan {
    /// The engine.
    pub engine: Engine,
    /// The server.
    pub serve: LaunchCommand,
    /// `vllm bench serve` against it at the point's load.
    pub bench: LaunchCommand,
    /// What the commands assume (a quantized checkpoint to serve).
    pub notes: Vec<String>,
}

/// The Hugging Face repository `model` was read from (a preset's `source` names it), else its key.
#[must_use]
pub fn model_id(model: &ModelConfig) -> String {
    model
        .source
        .split_once("huggingface.co/")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .map_or_else(|| model.key.clone(), str::to_owned)
}

/// The engine's flags for the linear layers of `config` served from `model`'s checkpoint: a 16-bit type,
/// an online quantization, or none (the engine reads a quantized checkpoint's `quantization_config`), and
/// the note naming the checkpoint to serve in that case.
fn precision_args(
    engine: Engine,
    model: &ModelConfig,
    config: &QuantConfig,
) -> (Vec<LaunchArg>, Option<String>) {
    let own = model.checkpoint_config();
    // The published checkpoint stores the config's linear formats (scales are the checkpoint's own).
    let published = config.key == "checkpoint"
        || (model.checkpoint.is_some()
            && (own.weights, own.activations) == (config.weights, config.activations));
    let scheme = schemes(config)[0];
    let (dtype_flag, quantization_flag, dtype_source, online_source) = match engine {
        Engine::Vllm => (
            "--dtype",
            "--quantization",
            "vLLM engine args, ModelConfig.dtype",
            "vLLM docs features/quantization/fp8.md and bnb.md: online quantization of a 16-bit checkpoint",
        ),
        Engine::Sglang => (
            "--dtype",
            "--quantization",
            "SGLang server arguments (server_args.py --dtype)",
            "SGLang docs advanced_features/quantization.md: online FP8 quantization of a 16-bit checkpoint",
        ),
        Engine::TrtLlm => ("", "", "", ""),
    };
    if scheme == Scheme::Plain16 || scheme == Scheme::Fp32 {
        let dtype = match config.activations {
            Precision::Fp16 => "float16",
            Precision::Fp32 => "float32",
            _ => "bfloat16",
        };
        return match engine {
            Engine::TrtLlm => (Vec::new(), None),
            _ => (vec![arg(dtype_flag, dtype, dtype_source)], None),
        };
    }
    if published {
        return (Vec::new(), None);
    }
    let online = match (engine, scheme) {
        (Engine::Vllm | Engine::Sglang, Scheme::Fp8Tensor) => Some("fp8"),
        (Engine::Vllm, Scheme::Nf4) => Some("bitsandbytes"),
        _ => None,
    };
    match online {
        Some(method) => (vec![arg(quantization_flag, method, online_source)], None),
        None => (
            Vec::new(),
            Some(format!(
                "serve a {} checkpoint of {} ({}): {} reads its quantization_config, so no flag is needed",
                config.name,
                model_id(model),
                config.method,
                engine.name()
            )),
        ),
    }
}

/// An argument with a value.
fn arg(flag: &'static str, value: impl ToString, source: &'static str) -> LaunchArg {
    LaunchArg {
        flag,
        value: Some(value.to_string()),
        source,
    }
}

/// The model argument: the repository, or a placeholder naming the checkpoint the plan needs.
fn model_arg(model: &ModelConfig, config: &QuantConfig, needs_checkpoint: bool) -> String {
    if needs_checkpoint {
        format!("<{} checkpoint of {}>", config.name, model_id(model))
    } else {
        model_id(model)
    }
}

/// The server command of `engine` for `fit` (its split, limits and memory fraction) at `max_len` tokens per
/// request, with `precision` (the linear layers) and `kv` (the KV cache's setting value).
fn serve_command(
    engine: Engine,
    model: String,
    fit: &ConfigFit,
    max_len: u64,
    precision: Vec<LaunchArg>,
    kv: &'static str,
) -> LaunchCommand {
    let p = fit.parallelism;
    let limits = fit.preset.in_flight;
    let fraction = fit.preset.fraction.value();
    let (program, mut args, prelude) = match engine {
        Engine::Vllm => (
            "vllm serve",
            vec![
                arg("", model, "vLLM CLI: vllm serve <model>"),
                arg(
                    "--tensor-parallel-size",
                    p.tensor,
                    "vLLM engine args, ParallelConfig",
                ),
                arg(
                    "--max-num-seqs",
                    limits.max_seqs,
                    "vLLM engine args, SchedulerConfig",
                ),
                arg(
                    "--max-num-batched-tokens",
                    limits.token_budget,
                    "vLLM engine args, SchedulerConfig",
                ),
                arg(
                    "--gpu-memory-utilization",
                    fraction,
                    "vLLM CacheConfig (vllm/config/cache.py)",
                ),
                arg(
                    "--max-model-len",
                    max_len,
                    "vLLM engine args, ModelConfig: ISL + OSL",
                ),
            ],
            None,
        ),
        Engine::Sglang => (
            "python -m sglang.launch_server",
            vec![
                arg("--model-path", model, "SGLang server arguments (server_args.py)"),
                arg("--tp-size", p.tensor, "SGLang server arguments"),
                arg(
                    "--max-running-requests",
                    limits.max_seqs,
                    "SGLang server arguments",
                ),
                arg(
                    "--chunked-prefill-size",
                    limits.token_budget,
                    "SGLang server arguments",
                ),
                arg("--mem-fraction-static", fraction, "SGLang server arguments"),
                arg("--context-length", max_len, "SGLang server arguments: ISL + OSL"),
            ],
            None,
        ),
        Engine::TrtLlm => (
            "trtllm-serve",
            vec![
                arg("", model, "trtllm-serve <model> (tensorrt_llm/commands/serve.py)"),
                arg("--tp_size", p.tensor, "trtllm-serve options (commands/serve.py)"),
                arg("--max_batch_size", limits.max_seqs, "trtllm-serve options"),
                arg("--max_num_tokens", limits.token_budget, "trtllm-serve options"),
                arg("--max_seq_len", max_len, "trtllm-serve options: ISL + OSL"),
                arg(
                    "--kv_cache_free_gpu_memory_fraction",
                    fraction,
                    "trtllm-serve options",
                ),
            ],
            (kv != "auto").then(|| format!("printf 'kv_cache_config:\\n  dtype: {kv}\\n' > kv.yaml")),
        ),
    };
    if p.expert > 1 {
        args.insert(
            2,
            match engine {
                Engine::Vllm => LaunchArg {
                    flag: "--enable-expert-parallel",
                    value: None,
                    source: "vLLM engine args, ParallelConfig: EP = TP × DP",
                },
                Engine::Sglang => arg("--ep-size", p.expert, "SGLang server arguments"),
                Engine::TrtLlm => arg("--ep_size", p.expert, "trtllm-serve options"),
            },
        );
    }
    args.extend(precision);
    if kv != "auto" {
        args.push(match engine {
            Engine::Vllm => arg("--kv-cache-dtype", kv, "vLLM CacheConfig.cache_dtype"),
            Engine::Sglang => arg("--kv-cache-dtype", kv, "SGLang server arguments"),
            Engine::TrtLlm => arg(
                "--extra_llm_api_options",
                "kv.yaml",
                "trtllm-serve options; KvCacheConfig.dtype (llmapi/llm_args.py)",
            ),
        });
    }
    LaunchCommand {
        prelude,
        program,
        args,
    }
}

/// The commands that serve `point` (of `config` on `fit`'s split of `model`, predicted on a device of
/// `arch`) and measure it with `vllm bench serve` at its load: 10 requests per client (or 10 s of arrivals,
/// at least 100), `--ignore-eos` so every request generates OSL tokens, and `--save-result` for the import.
///
/// # Errors
/// [`Error::InvalidInput`] when the engine does not serve the config on `arch` ([`super::serves`]: a linear
/// scheme or KV cache it has no kernels for), naming the engine, the format and the architecture.
pub fn launch_plan(
    model: &ModelConfig,
    config: &QuantConfig,
    fit: &ConfigFit,
    point: &ServingPoint,
    arch: Architecture,
) -> Result<LaunchPlan, Error> {
    let engine = fit.preset.engine;
    serves(engine, config, arch).map_err(|u| Error::InvalidInput(u.0))?;
    let kv = kv_cache_dtype(engine, config.kv_cache, arch).map_or("auto", |(value, _)| value);
    let (precision, checkpoint) = precision_args(engine, model, config);
    let served = model_arg(model, config, checkpoint.is_some());
    let w = point.workload;
    let max_len = u64::from(w.isl) + u64::from(w.osl);
    let serve = serve_command(engine, served.clone(), fit, max_len, precision, kv);
    let (backend, port) = match engine {
        Engine::Vllm => ("vllm", 8000),
        Engine::Sglang => ("openai", 30000),
        Engine::TrtLlm => ("openai", 8000),
    };
    let (load_flag, load, prompts) = match point.load {
        Load::Concurrency(n) => ("--max-concurrency", n.to_string(), (10 * n).max(100)),
        Load::Rate(r) => (
            "--request-rate",
            r.to_string(),
            ((10.0 * r).ceil() as u32).max(100),
        ),
    };
    const BENCH: &str = "vLLM docs, vllm bench serve (vllm/benchmarks/serve.py)";
    let gpus = if fit.gpus == 1 {
        "1gpu".to_owned()
    } else {
        format!("{}gpus", fit.gpus)
    };
    let result = format!(
        "{}-{}-{}-{}-{}.json",
        model.key,
        config.key,
        gpus,
        load_flag.trim_start_matches("--"),
        load
    );
    let bench = LaunchCommand {
        prelude: None,
        program: "vllm bench serve",
        args: vec![
            arg("--backend", backend, BENCH),
            arg("--base-url", format!("http://localhost:{port}"), BENCH),
            arg("--model", served, BENCH),
            arg("--dataset-name", "random", BENCH),
            arg("--random-input-len", w.isl, BENCH),
            arg("--random-output-len", w.osl, BENCH),
            arg(load_flag, load, BENCH),
            arg("--num-prompts", prompts, BENCH),
            LaunchArg {
                flag: "--ignore-eos",
                value: None,
                source: BENCH,
            },
            LaunchArg {
                flag: "--save-result",
                value: None,
                source: BENCH,
            },
            arg("--result-filename", result, BENCH),
        ],
    };
    let notes: Vec<String> = checkpoint.into_iter().collect();
    Ok(LaunchPlan {
        engine,
        serve,
        bench,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::{ServingWorkload, Sla, SweepSpec, sweep};
    use roofline_analysis::model::find_model;
    use roofline_analysis::parallel::Parallelism;
    use roofline_base::hardware::{Mode, find_hardware_in};

    /// The plan for the point of `config` at the highest concurrency on `tensor` × `expert` GPUs of `device`
    /// for `model` under `engine`'s defaults.
    fn plan(
        model: &str,
        device: &str,
        config: &str,
        split: (u32, u32),
        engine: Engine,
    ) -> Result<LaunchPlan, Error> {
        let hardware = find_hardware_in(device, Mode::Reference).unwrap();
        let model = find_model(model).unwrap();
        let config = model.config(config).unwrap();
        let parallelism = Parallelism {
            tensor: split.0,
            expert: split.1,
            pipeline: 1,
        };
        let s = sweep(&SweepSpec {
            parallelisms: &[parallelism],
            engine,
            ..SweepSpec::new(
                hardware,
                model,
                &[&config],
                ServingWorkload { isl: 1024, osl: 1024 },
            )
        })
        .unwrap();
        let point = s.points.last().unwrap();
        launch_plan(model, &config, &s.fits[0], point, hardware.arch)
    }

    #[test]
    fn vllm_serves_the_prediction_split_limits_memory_and_precisions() {
        let p = plan("llama-3.1-70b", "h100_sxm", "fp8", (2, 1), Engine::Vllm).unwrap();
        let line = p.serve.line();
        // vLLM's defaults on an H100 (engine.rs): 1024 sequences, 8192 tokens per step, 0.92 of memory;
        // online FP8 of the BF16 checkpoint and an FP8 (E4M3) KV cache, 1024 + 1024 tokens per request.
        assert_eq!(
            line,
            "vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 2 --max-num-seqs 1024 \
             --max-num-batched-tokens 8192 --gpu-memory-utilization 0.92 --max-model-len 2048 \
             --quantization fp8 --kv-cache-dtype fp8"
        );
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let bench = p.bench.line();
        assert!(bench.starts_with("vllm bench serve --backend vllm --base-url http://localhost:8000 --model meta-llama/Llama-3.1-70B --dataset-name random --random-input-len 1024 --random-output-len 1024 --max-concurrency "), "{bench}");
        let n: u32 = p.bench.value("--max-concurrency").unwrap().parse().unwrap();
        assert_eq!(
            p.bench.value("--num-prompts"),
            Some((10 * n).max(100).to_string().as_str())
        );
        assert!(
            bench.contains(
                "--ignore-eos --save-result --result-filename llama-3.1-70b-fp8-2gpus-max-concurrency-"
            ),
            "{bench}"
        );
        // Every argument names its source.
        assert!(
            p.serve
                .args
                .iter()
                .chain(&p.bench.args)
                .all(|a| !a.source.is_empty())
        );
    }

    #[test]
    fn a_published_checkpoint_needs_no_quantization_flag_and_experts_get_ep() {
        // DeepSeek-R1 is published block-scaled FP8: vLLM reads it; EP 8 is vLLM's expert-parallel switch.
        let p = plan("deepseek-r1", "b200", "fp8-block", (8, 8), Engine::Vllm).unwrap();
        let line = p.serve.line();
        assert!(
            line.starts_with(
                "vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --enable-expert-parallel "
            ),
            "{line}"
        );
        assert!(
            !line.contains("--quantization") && !line.contains("--kv-cache-dtype"),
            "{line}"
        );
        // SGLang's own memory rule and flag names.
        let s = plan("deepseek-r1", "b200", "fp8-block", (8, 8), Engine::Sglang).unwrap();
        let line = s.serve.line();
        assert!(
            line.contains("--tp-size 8 --ep-size 8 --max-running-requests 2048"),
            "{line}"
        );
        assert!(
            s.bench
                .line()
                .contains("--backend openai --base-url http://localhost:30000")
        );
    }

    #[test]
    fn a_quantized_checkpoint_is_named_and_trtllm_kv_goes_through_its_options_file() {
        let p = plan("llama-3.1-8b", "b200", "nvfp4-w4a4", (1, 1), Engine::TrtLlm).unwrap();
        let line = p.serve.line();
        assert!(
            line.starts_with(
                "printf 'kv_cache_config:\\n  dtype: nvfp4\\n' > kv.yaml && trtllm-serve \
                 '<NVFP4 W4A4 checkpoint of meta-llama/Llama-3.1-8B>' --tp_size 1 --max_batch_size 2048"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("--kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kv.yaml"),
            "{line}"
        );
        assert!(
            p.notes[0].starts_with("serve a NVFP4 W4A4 checkpoint of meta-llama/Llama-3.1-8B"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn a_config_the_engine_does_not_serve_has_no_command() {
        let err = plan("llama-3.1-8b", "b200", "mxfp6-e3m2", (1, 1), Engine::Vllm).unwrap_err();
        assert!(
            err.to_string().contains("vLLM does not serve MXFP6 E3M2"),
            "{err}"
        );
        // BF16 is a dtype, not a quantization.
        let bf16 = plan("llama-3.1-8b", "h100_sxm", "bf16", (1, 1), Engine::Vllm).unwrap();
        assert_eq!(bf16.serve.value("--dtype"), Some("bfloat16"));
    }

    #[test]
    fn the_recommended_point_of_a_layout_sweep_has_a_plan() {
        let (s, model, hardware) = crate::serving::sizing::tests::layout_sweep("llama-3.1-70b", "h100_sxm");
        let best = Sla::default().evaluate(&s).recommendation.unwrap();
        let fit = s
            .fits
            .iter()
            .find(|f| f.config == best.config && f.parallelism == best.parallelism)
            .unwrap();
        let p = launch_plan(
            model,
            &model.config(&best.config).unwrap(),
            fit,
            &best,
            hardware.arch,
        )
        .unwrap();
        assert_eq!(
            p.serve.value("--tensor-parallel-size"),
            Some(best.parallelism.tensor.to_string().as_str())
        );
    }
}
