//! The page's two views ([`View`]: the model step, the serving sweep) and the serving inputs of the scenario
//! ([`ServingInputs`]: ISL, OSL, scheduler, the engine limits, the SLA, the GPU counts the answer may use, the
//! chart's axes and the devices compared; the engine is the scenario's), with their share-link fields.
//! Pure; the scenario holds both, so links and local storage keep them.

use roofline_core::{Engine, SchedulerKind, Sla};
use serde::{Deserialize, Serialize};

use crate::sliders::{RangeError, parse_in_range};

/// Which view the centre of the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// One model step: the roofline chart, the summary and the operators.
    #[default]
    Step,
    /// A serving engine's operating points: the Pareto chart per precision config, the SLA and measured runs.
    Serving,
}

impl View {
    /// The link's name: `step` or `serving`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            View::Step => "step",
            View::Serving => "serving",
        }
    }
}

/// Range of ISL (prompt tokens per request): `roofline serve --isl`'s (core/cli/src/serve.rs).
pub const ISL_RANGE: (u64, u64) = (1, 16_777_216);
/// Range of OSL (output tokens per request): at least 2, since TPOT is the time between output tokens
/// (`ServingWorkload::check`); the top is `roofline serve --osl`'s.
pub const OSL_RANGE: (u64, u64) = (2, 16_777_216);
/// Range of the token budget and max-sequences overrides: at least 1 (`Scheduler::check`); `u32` limits.
pub const LIMIT_RANGE: (u64, u64) = (1, u32::MAX as u64);

/// The default ISL and OSL, 1024 each: the 1k/1k scenario of InferenceX (SemiAnalysis,
/// <https://inferencemax.semianalysis.com/>, which also runs 1k/8k and 8k/1k) and the worked example of
/// docs/validation/serving.md §2.
pub const DEFAULT_LENGTHS: (u32, u32) = (1024, 1024);

/// Devices the serving view compares beside the scenario's, at most.
pub const MAX_COMPARED: usize = 2;

/// What the serving sweep takes beyond the scenario's device, model, engine and mode: request lengths, which
/// scheduler, the limits replacing the engine's defaults, and the SLA (in seconds and tokens/s; the page
/// converts typed milliseconds at the input); and what the view shows of it: the GPU counts its answer may
/// use, linear or log axes, and the devices compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServingInputs {
    /// Input (prompt) tokens per request.
    pub isl: u32,
    /// Output tokens per request.
    pub osl: u32,
    /// In-flight (continuous) or static batching.
    pub scheduler: SchedulerKind,
    /// Tokens per step instead of the engine's default.
    pub token_budget: Option<u32>,
    /// Requests running at once instead of the engine's default.
    pub max_seqs: Option<u32>,
    /// Latency limits; any subset.
    pub sla: Sla,
    /// GPU counts the answer may use; empty: every layout the device's domain holds.
    pub gpus: Vec<u32>,
    /// Log axes instead of linear ones.
    pub log_axes: bool,
    /// Device keys compared beside the scenario's (at most [`MAX_COMPARED`]).
    pub compare: Vec<String>,
}

impl Default for ServingInputs {
    fn default() -> Self {
        ServingInputs {
            isl: DEFAULT_LENGTHS.0,
            osl: DEFAULT_LENGTHS.1,
            scheduler: SchedulerKind::InFlight,
            token_budget: None,
            max_seqs: None,
            sla: Sla::default(),
            gpus: Vec::new(),
            log_axes: false,
            compare: Vec::new(),
        }
    }
}

/// An engine's display name.
#[must_use]
pub const fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "vLLM",
        Engine::Sglang => "SGLang",
        Engine::TrtLlm => "TensorRT-LLM",
    }
}

/// A scheduler's display name.
#[must_use]
pub const fn scheduler_name(kind: SchedulerKind) -> &'static str {
    match kind {
        SchedulerKind::InFlight => "in-flight batching",
        SchedulerKind::Static => "static batching",
    }
}

/// Why a typed SLA limit was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be a positive number, or empty for no limit")]
pub struct LimitError;

/// Reads a typed SLA limit: empty is no limit, else a positive finite number times `scale` (1e-3 for
/// milliseconds typed into a limit kept in seconds).
///
/// # Errors
/// [`LimitError`] for anything else.
pub fn parse_limit(text: &str, scale: f64) -> Result<Option<f64>, LimitError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v * scale)),
        _ => Err(LimitError),
    }
}

/// Reads a typed engine limit: empty is the engine's default, else a whole number of at least 1.
///
/// # Errors
/// [`RangeError`] for anything else.
pub fn parse_engine_limit(text: &str) -> Result<Option<u32>, RangeError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    parse_in_range(text, LIMIT_RANGE.0, LIMIT_RANGE.1).map(|v| u32::try_from(v).ok())
}

impl ServingInputs {
    /// These inputs without the typed numbers (ISL, OSL, limits, SLA): what stays when only typing changed
    /// them (typing replaces the history entry; picking the scheduler pushes one).
    #[must_use]
    pub fn typed_numbers_cleared(&self) -> ServingInputs {
        ServingInputs {
            scheduler: self.scheduler,
            gpus: self.gpus.clone(),
            log_axes: self.log_axes,
            compare: self.compare.clone(),
            ..ServingInputs::default()
        }
    }

    /// The link's fields of what differs from the defaults, plus `view` for the serving view; SLA limits in
    /// their base units (seconds, tokens/s). The engine is the scenario's (`eng`).
    #[must_use]
    pub fn query_pairs(&self, view: View) -> Vec<(&'static str, String)> {
        let default = ServingInputs::default();
        let number = |v: Option<f64>| v.map(|v| v.to_string());
        let whole = |v: Option<u32>| v.map(|v| v.to_string());
        let list =
            |v: &[u32]| (!v.is_empty()).then(|| v.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
        [
            ("view", (view != View::Step).then(|| view.name().to_owned())),
            ("isl", (self.isl != default.isl).then(|| self.isl.to_string())),
            ("osl", (self.osl != default.osl).then(|| self.osl.to_string())),
            (
                "sched",
                (self.scheduler == SchedulerKind::Static).then(|| "static".to_owned()),
            ),
            ("budget", whole(self.token_budget)),
            ("maxseqs", whole(self.max_seqs)),
            ("ttft", number(self.sla.ttft_max_s)),
            ("tpot", number(self.sla.tpot_max_s)),
            ("tpu", number(self.sla.tokens_per_user_min)),
            ("lay", list(&self.gpus)),
            ("plog", self.log_axes.then(|| "1".to_owned())),
            ("cmp", (!self.compare.is_empty()).then(|| self.compare.join(","))),
        ]
        .into_iter()
        .filter_map(|(key, value)| Some((key, value?)))
        .collect()
    }

    /// Reads one link field into these inputs (or `view`): `Some(read)` for a serving field, whether its
    /// value was taken (out-of-range numbers are clamped, unreadable ones ignored), `None` for any other key.
    pub fn read_pair(&mut self, view: &mut View, key: &str, value: &str) -> Option<bool> {
        let whole = |range: (u64, u64)| {
            value
                .parse::<u64>()
                .ok()
                .and_then(|v| u32::try_from(v.clamp(range.0, range.1)).ok())
        };
        let limit = || parse_limit(value, 1.0).ok().flatten();
        Some(match key {
            "view" => {
                *view = if value == View::Serving.name() {
                    View::Serving
                } else {
                    View::Step
                };
                true
            }
            "isl" => whole(ISL_RANGE).map(|v| self.isl = v).is_some(),
            "osl" => whole(OSL_RANGE).map(|v| self.osl = v).is_some(),
            "sched" => {
                self.scheduler = if value == "static" {
                    SchedulerKind::Static
                } else {
                    SchedulerKind::InFlight
                };
                true
            }
            "budget" => whole(LIMIT_RANGE).map(|v| self.token_budget = Some(v)).is_some(),
            "maxseqs" => whole(LIMIT_RANGE).map(|v| self.max_seqs = Some(v)).is_some(),
            "ttft" => limit().map(|v| self.sla.ttft_max_s = Some(v)).is_some(),
            "tpot" => limit().map(|v| self.sla.tpot_max_s = Some(v)).is_some(),
            "tpu" => limit().map(|v| self.sla.tokens_per_user_min = Some(v)).is_some(),
            "lay" => {
                self.gpus = value
                    .split(',')
                    .filter_map(|g| g.parse::<u32>().ok())
                    .filter(|g| roofline_core::LAYOUT_GPUS.contains(g))
                    .collect();
                !self.gpus.is_empty()
            }
            "plog" => {
                self.log_axes = value == "1";
                true
            }
            "cmp" => {
                self.compare = value
                    .split(',')
                    .filter(|k| !k.is_empty())
                    .take(MAX_COMPARED)
                    .map(str::to_owned)
                    .collect();
                true
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_write_nothing_and_every_field_round_trips() {
        assert!(ServingInputs::default().query_pairs(View::Step).is_empty());
        let inputs = ServingInputs {
            isl: 8192,
            osl: 256,
            scheduler: SchedulerKind::Static,
            token_budget: Some(4096),
            max_seqs: Some(64),
            sla: Sla {
                ttft_max_s: Some(1.0),
                tpot_max_s: Some(0.02),
                tokens_per_user_min: Some(30.0),
            },
            gpus: vec![2, 8],
            log_axes: true,
            compare: vec!["b200".into(), "h200_sxm".into()],
        };
        let pairs = inputs.query_pairs(View::Serving);
        assert_eq!(pairs[0], ("view", "serving".to_owned()));
        assert!(pairs.contains(&("sched", "static".to_owned())));
        assert!(pairs.contains(&("tpot", "0.02".to_owned())));
        assert!(
            pairs.contains(&("lay", "2,8".to_owned()))
                && pairs.contains(&("cmp", "b200,h200_sxm".to_owned()))
        );
        let (mut read, mut view) = (ServingInputs::default(), View::Step);
        for (key, value) in &pairs {
            assert_eq!(read.read_pair(&mut view, key, value), Some(true), "{key}={value}");
        }
        assert_eq!((&read, view), (&inputs, View::Serving));
        assert_eq!(read.read_pair(&mut view, "hw", "h100_sxm"), None);
    }

    #[test]
    fn link_values_are_clamped_or_ignored() {
        let (mut s, mut view) = (ServingInputs::default(), View::Step);
        assert_eq!(s.read_pair(&mut view, "osl", "1"), Some(true));
        assert_eq!(s.osl, 2, "OSL below 2 has no TPOT");
        assert_eq!(s.read_pair(&mut view, "isl", "abc"), Some(false));
        assert_eq!(s.read_pair(&mut view, "ttft", "-1"), Some(false));
        assert_eq!((s.isl, s.sla.ttft_max_s), (1024, None));
        // GPU counts outside the layouts are dropped; at most two devices are compared.
        assert_eq!(s.read_pair(&mut view, "lay", "3,4,x"), Some(true));
        assert_eq!(s.gpus, [4]);
        assert_eq!(s.read_pair(&mut view, "cmp", "a,b,c"), Some(true));
        assert_eq!(s.compare, ["a", "b"]);
    }

    #[test]
    fn typed_limits_are_read_in_base_units() {
        assert_eq!(parse_limit("", 1e-3), Ok(None));
        assert_eq!(parse_limit(" 250 ", 1e-3), Ok(Some(0.25)));
        assert_eq!(parse_limit("0", 1e-3), Err(LimitError));
        assert_eq!(parse_limit("fast", 1.0), Err(LimitError));
        assert_eq!(parse_engine_limit(""), Ok(None));
        assert_eq!(parse_engine_limit("512"), Ok(Some(512)));
        assert_eq!(parse_engine_limit("0"), Err(RangeError::BelowMin(1)));
    }

    #[test]
    fn saved_scenarios_without_serving_inputs_read_the_defaults() {
        let partial: ServingInputs =
            serde_json::from_str(r#"{"isl": 4096, "sla": {"tpot_max_s": 0.05}}"#).unwrap();
        assert_eq!(partial.isl, 4096);
        assert_eq!(partial.osl, 1024);
        assert_eq!(partial.sla.tpot_max_s, Some(0.05));
        assert_eq!(partial.sla.ttft_max_s, None);
    }
}
