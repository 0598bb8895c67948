//! Serving engines' scheduling and memory defaults ([`Engine`], [`EnginePreset`]) and the two schedulers
//! the serving model knows ([`Scheduler`]).
//!
//! Every default names the engine and the source file it comes from; the memory-dependent ones are
//! computed from [`roofline_analysis::memory::device_capacity_bytes`] exactly as the engine computes them from the memory it
//! reads.

use super::ServingScenario;
use roofline_analysis::corrections::Corrections;
use roofline_analysis::memory::{MemoryFraction, MemoryRule, device_capacity_bytes, vllm_limits};
use roofline_analysis::model::ModelConfig;
use roofline_analysis::parallel::Parallelism;
use roofline_analysis::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;
use roofline_base::units::GIB;

/// A serving engine whose defaults the model can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Engine {
    /// vLLM V1 (`vllm serve`, the OpenAI server).
    #[default]
    Vllm,
    /// SGLang (`python -m sglang.launch_server`).
    Sglang,
    /// TensorRT-LLM's PyTorch backend (`trtllm-serve`, the LLM API).
    TrtLlm,
}

impl Engine {
    /// Every engine.
    pub const ALL: [Engine; 3] = [Engine::Vllm, Engine::Sglang, Engine::TrtLlm];

    /// The command-line name: `vllm`, `sglang` or `trtllm`.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::TrtLlm => "trtllm",
        }
    }

    /// The display name: `vLLM`, `SGLang` or `TensorRT-LLM`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
            Engine::TrtLlm => "TensorRT-LLM",
        }
    }

    /// The engine named `key` (case-insensitive).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] listing the valid names.
    pub fn parse(key: &str) -> Result<Engine, Error> {
        Engine::ALL
            .into_iter()
            .find(|e| e.key().eq_ignore_ascii_case(key))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown engine '{key}'; valid: {}",
                    Engine::ALL.map(Engine::key).join(", ")
                ))
            })
    }

    /// The engine's defaults on one GPU of `hardware` in a tensor-parallel group of `parallelism`.
    ///
    /// - vLLM V1, OpenAI server: `max_num_batched_tokens` and `max_num_seqs` by device memory
    ///   ([`vllm_limits`]: 8192 and 1024 on a device with at least 70 GiB that is not an A100, else 2048 and
    ///   256; max_num_seqs never above the token budget); `gpu_memory_utilization` of capacity at the current
    ///   release's default ([`roofline_analysis::memory::VLLM_GPU_MEMORY_UTILIZATION`], 0.92; 0.90 through vLLM 0.11);
    ///   prefill chunks share steps with decode rows. Source: vllm-project/vllm `vllm/engine/arg_utils.py`
    ///   `EngineArgs._set_default_args` (V1 defaults, vLLM 0.11) and `vllm/config/cache.py`.
    /// - SGLang: `chunked_prefill_size` and `cuda_graph_max_bs` by device memory (< 20 GiB: 2048, 8;
    ///   < 35 GiB: 2048, 24 (80 from TP 4); < 60 GiB: 4096, 32 (160); < 160 GiB: 8192, 256 (512); else
    ///   16384, 512); `mem_fraction_static` = (memory − reserved) / memory, rounded to 3 decimals, with
    ///   reserved = 512 MiB + max(chunk, 2048) · 1.5 MiB + cuda_graph_max_bs · 2 MiB + TP · PP / 8 · 1 GiB,
    ///   at least 10 GiB above 60 GiB of memory; `max_running_requests` 2048, the floor of its
    ///   min(max(KV tokens / context length · 512, 2048), 4096) (the floor whenever the KV pool holds fewer
    ///   than 4 context lengths, e.g. Llama-3.1-8B's 131,072 on an H100); prefill batches run as their own
    ///   steps (`enable_mixed_chunk = False`). Source: sgl-project/sglang `python/sglang/srt/server_args.py`
    ///   `_handle_gpu_memory_settings` and `python/sglang/srt/model_executor/model_runner.py`
    ///   (`max_num_reqs`).
    /// - TensorRT-LLM: `max_num_tokens` 8192 and `max_batch_size` 2048; `KvCacheConfig
    ///   .free_gpu_memory_fraction` 0.9 of the memory free after weights and activations; context requests
    ///   share steps with generation (in-flight batching) and are not chunked (`enable_chunked_prefill =
    ///   False`). Source: NVIDIA/TensorRT-LLM `tensorrt_llm/llmapi/llm_args.py` (`BaseLlmArgs`,
    ///   `KvCacheConfig`).
    #[must_use]
    pub fn preset(self, hardware: &HardwareSpec, parallelism: &Parallelism) -> EnginePreset {
        let capacity_gib = device_capacity_bytes(hardware) / GIB;
        let (token_budget, max_seqs, fraction, mixed_prefill, chunked_prefill) = match self {
            Engine::Vllm => {
                let (tokens, seqs) = vllm_limits(hardware);
                (tokens, seqs, MemoryFraction::VLLM, true, true)
            }
            Engine::Sglang => {
                let (chunk, graph_bs) = sglang_chunk_and_graph_batch(capacity_gib, parallelism.tensor);
                let fraction = sglang_mem_fraction_static(capacity_gib, chunk, graph_bs, parallelism);
                (
                    chunk,
                    2048,
                    MemoryFraction::StaticOfCapacity(fraction),
                    false,
                    true,
                )
            }
            Engine::TrtLlm => (8192, 2048, MemoryFraction::OfFree(0.9), true, false),
        };
        let max_seqs = max_seqs.min(token_budget);
        EnginePreset {
            engine: self,
            in_flight: InFlight {
                token_budget,
                max_seqs,
                mixed_prefill,
                chunked_prefill,
            },
            fraction,
        }
    }
}

/// SGLang's `chunked_prefill_size` and `cuda_graph_max_bs` for a device of `capacity_gib` GiB (the CUDA tiers of
/// `_handle_gpu_memory_settings`; its NPU tiers do not apply).
fn sglang_chunk_and_graph_batch(capacity_gib: f64, tensor_parallel: u32) -> (u32, u32) {
    let small_tp = tensor_parallel < 4;
    if capacity_gib < 20.0 {
        (2048, 8)
    } else if capacity_gib < 35.0 {
        (2048, if small_tp { 24 } else { 80 })
    } else if capacity_gib < 60.0 {
        (4096, if small_tp { 32 } else { 160 })
    } else if capacity_gib < 160.0 {
        (8192, if small_tp { 256 } else { 512 })
    } else {
        (16384, 512)
    }
}

/// SGLang's `mem_fraction_static` default (see [`Engine::preset`]), with memory in MiB as SGLang reads it.
fn sglang_mem_fraction_static(
    capacity_gib: f64,
    chunk: u32,
    graph_bs: u32,
    parallelism: &Parallelism,
) -> f64 {
    let memory_mib = capacity_gib * 1024.0;
    let mut reserved_mib = 512.0
        + f64::from(chunk.max(2048)) * 1.5
        + f64::from(graph_bs) * 2.0
        + f64::from(parallelism.tensor) * f64::from(parallelism.pipeline) / 8.0 * 1024.0;
    if memory_mib > 60.0 * 1024.0 {
        reserved_mib = reserved_mib.max(10.0 * 1024.0);
    }
    ((memory_mib - reserved_mib) / memory_mib * 1000.0).round() / 1000.0
}

/// Continuous (in-flight) batching: every running request decodes every step, and prompts are prefilled
/// in the token budget the decode rows leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InFlight {
    /// Tokens one step may process (vLLM `max_num_batched_tokens`, SGLang `chunked_prefill_size`,
    /// TensorRT-LLM `max_num_tokens`); with `mixed_prefill` the decode rows count against it.
    pub token_budget: u32,
    /// Requests running at once (vLLM `max_num_seqs`, SGLang `max_running_requests`, TensorRT-LLM
    /// `max_batch_size`); more wait in the queue.
    pub max_seqs: u32,
    /// Prefill tokens share steps with the decode rows (vLLM, TensorRT-LLM); otherwise prefill batches run
    /// as their own steps, during which decoding pauses (SGLang without `--enable-mixed-chunk`).
    pub mixed_prefill: bool,
    /// Prompts longer than the free budget are split over steps (vLLM, SGLang); otherwise each prompt is
    /// prefilled whole (TensorRT-LLM without `enable_chunked_prefill`).
    pub chunked_prefill: bool,
}

/// How the engine batches requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Scheduler {
    /// Static batching, the isolated steps of [`roofline_analysis::analysis::analyze_model`]: a batch of up to `max_seqs`
    /// requests is prefilled together in one step, then decoded together until all finish.
    Static {
        /// Largest batch.
        max_seqs: u32,
    },
    /// Continuous batching with (optionally chunked) prefill.
    InFlight(InFlight),
}

impl Scheduler {
    /// Requests the engine runs at once.
    #[must_use]
    pub const fn max_seqs(&self) -> u32 {
        match self {
            Scheduler::Static { max_seqs } => *max_seqs,
            Scheduler::InFlight(f) => f.max_seqs,
        }
    }

    /// Checks the limits.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field: a zero limit, or a token budget below `max_seqs` (vLLM
    /// refuses `max_num_batched_tokens < max_num_seqs`: a step must hold every running decode row).
    pub fn check(&self) -> Result<(), Error> {
        match self {
            Scheduler::Static { max_seqs: 0 } => {
                Err(Error::InvalidInput("max_seqs must be at least 1".into()))
            }
            Scheduler::Static { .. } => Ok(()),
            Scheduler::InFlight(f) if f.max_seqs == 0 || f.token_budget == 0 => Err(Error::InvalidInput(
                "token_budget and max_seqs must be at least 1".into(),
            )),
            Scheduler::InFlight(f) if f.mixed_prefill && f.token_budget < f.max_seqs => {
                Err(Error::InvalidInput(format!(
                    "token_budget ({}) must be at least max_seqs ({}): every running request decodes in every step",
                    f.token_budget, f.max_seqs
                )))
            }
            Scheduler::InFlight(_) => Ok(()),
        }
    }
}

/// Which scheduler of an engine preset to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SchedulerKind {
    /// [`Scheduler::InFlight`] with the preset's limits.
    #[default]
    InFlight,
    /// [`Scheduler::Static`] with the preset's `max_seqs`.
    Static,
}

/// An engine's defaults on one device: its in-flight limits and its memory fraction.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EnginePreset {
    /// The engine.
    pub engine: Engine,
    /// Its continuous-batching limits and behaviour.
    pub in_flight: InFlight,
    /// How it splits device memory.
    pub fraction: MemoryFraction,
}

impl EnginePreset {
    /// The scheduler of `kind` with this preset's limits.
    #[must_use]
    pub const fn scheduler(&self, kind: SchedulerKind) -> Scheduler {
        match kind {
            SchedulerKind::InFlight => Scheduler::InFlight(self.in_flight),
            SchedulerKind::Static => Scheduler::Static {
                max_seqs: self.in_flight.max_seqs,
            },
        }
    }

    /// The memory rule: the fraction, and a profiling step of the token budget sampling min(max_seqs,
    /// budget) rows (see [`MemoryRule`]).
    #[must_use]
    pub fn memory_rule(&self) -> MemoryRule {
        MemoryRule {
            fraction: self.fraction,
            profile_tokens: self.in_flight.token_budget,
            profile_seqs: self.in_flight.max_seqs.min(self.in_flight.token_budget),
        }
    }

    /// What is served under this preset: `config` of `model` on `hardware` split as `parallelism`, with
    /// `corrections`, the scheduler of `kind` at this preset's limits and its memory rule.
    #[must_use]
    pub fn scenario<'a>(
        &self,
        hardware: &'a HardwareSpec,
        model: &'a ModelConfig,
        config: &'a QuantConfig,
        parallelism: Parallelism,
        corrections: Corrections,
        kind: SchedulerKind,
    ) -> ServingScenario<'a> {
        ServingScenario {
            hardware,
            model,
            config,
            parallelism,
            corrections,
            scheduler: self.scheduler(kind),
            memory: self.memory_rule(),
            engine: self.engine,
            features: Default::default(),
        }
    }

    /// This preset with its memory fraction's value replaced by `fraction` where given (vLLM
    /// `gpu_memory_utilization`, SGLang `mem_fraction_static`, TensorRT-LLM `free_gpu_memory_fraction`: the
    /// engine's own rule, another value; the CLI's `--memory-fraction`, the page's memory setting).
    #[must_use]
    pub fn with_memory_fraction(self, fraction: Option<f64>) -> EnginePreset {
        EnginePreset {
            fraction: fraction.map_or(self.fraction, |f| self.fraction.with_value(f)),
            ..self
        }
    }

    /// This preset with the token budget and max sequences replaced where given (the CLI's
    /// `--token-budget`, `--max-seqs`).
    #[must_use]
    pub fn with_limits(self, token_budget: Option<u32>, max_seqs: Option<u32>) -> EnginePreset {
        EnginePreset {
            in_flight: InFlight {
                token_budget: token_budget.unwrap_or(self.in_flight.token_budget),
                max_seqs: max_seqs.unwrap_or(self.in_flight.max_seqs),
                ..self.in_flight
            },
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_base::hardware::find_hardware;

    fn preset(engine: Engine, hw: &str, tp: u32) -> EnginePreset {
        engine.preset(find_hardware(hw).unwrap(), &Parallelism::tensor(tp))
    }

    #[test]
    fn vllm_defaults_follow_device_memory_and_exclude_the_a100() {
        // H100: 79.22 GiB reported ≥ 70 GiB → 8192 tokens, 1024 sequences; A100 80GB excluded by name;
        // L40S 44.45 GiB → 2048, 256.
        let limits = |hw| {
            let p = preset(Engine::Vllm, hw, 1);
            (p.in_flight.token_budget, p.in_flight.max_seqs)
        };
        assert_eq!(limits("h100_sxm"), (8192, 1024));
        assert_eq!(limits("h200_sxm"), (8192, 1024));
        assert_eq!(limits("a100_sxm_80gb"), (2048, 256));
        assert_eq!(limits("l40s"), (2048, 256));
        let p = preset(Engine::Vllm, "h100_sxm", 1);
        assert_eq!(p.fraction, MemoryFraction::OfCapacity(0.92));
        assert!(p.in_flight.mixed_prefill && p.in_flight.chunked_prefill);
    }

    #[test]
    fn sglang_reserves_memory_by_its_own_formula() {
        // H100, TP 1: 79.22 GiB = 81,121.3 MiB; chunk 8192, cuda_graph_max_bs 256; reserved = 512 + 8192·1.5
        // + 256·2 + 1/8·1024 = 13,440 MiB (above the 10 GiB floor); (81,121.3 − 13,440) / 81,121.3 = 0.8343
        // → 0.834.
        let p = preset(Engine::Sglang, "h100_sxm", 1);
        assert_eq!(p.fraction, MemoryFraction::StaticOfCapacity(0.834));
        assert_eq!((p.in_flight.token_budget, p.in_flight.max_seqs), (8192, 2048));
        assert!(!p.in_flight.mixed_prefill && p.in_flight.chunked_prefill);
        // B200, 178.35 GiB = 182,630.4 MiB: chunk 16384, bs 512; reserved = 512 + 24,576 + 1024 + 128 =
        // 26,240 MiB → (182,630.4 − 26,240) / 182,630.4 = 0.8563 → 0.856.
        let b200 = preset(Engine::Sglang, "b200", 1);
        assert_eq!(b200.in_flight.token_budget, 16_384);
        assert_eq!(b200.fraction, MemoryFraction::StaticOfCapacity(0.856));
    }

    #[test]
    fn trtllm_takes_its_llm_api_defaults() {
        let p = preset(Engine::TrtLlm, "b200", 8);
        assert_eq!((p.in_flight.token_budget, p.in_flight.max_seqs), (8192, 2048));
        assert_eq!(p.fraction, MemoryFraction::OfFree(0.9));
        assert!(p.in_flight.mixed_prefill && !p.in_flight.chunked_prefill);
        let rule = p.memory_rule();
        assert_eq!((rule.profile_tokens, rule.profile_seqs), (8192, 2048));
    }

    #[test]
    fn engines_parse_by_name_and_limits_are_checked() {
        assert_eq!(Engine::parse("SGLang").unwrap(), Engine::Sglang);
        let err = Engine::parse("tgi").unwrap_err().to_string();
        assert!(err.contains("vllm, sglang, trtllm"), "{err}");
        let p = preset(Engine::Vllm, "h100_sxm", 1).with_limits(Some(512), None);
        let err = p
            .scheduler(SchedulerKind::InFlight)
            .check()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("token_budget (512) must be at least max_seqs (1024)"),
            "{err}"
        );
        assert!(p.scheduler(SchedulerKind::Static).check().is_ok());
    }
}
