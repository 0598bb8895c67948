//! The page's two views ([`View`]: the model step, the serving sweep) and the serving inputs of the scenario
//! ([`ServingInputs`]: ISL, OSL, scheduler, the engine limits, speculative decoding and the prefix cache, the
//! SLA and the percentile it reads, the GPU counts the answer may use, the chart's axes and the devices
//! compared; the engine is the scenario's), with their share-link fields. Pure; the scenario holds both, so
//! links and local storage keep them.

use roofline_core::{
    Engine, Error, MAX_DRAFT_TOKENS, Percentile, SchedulerKind, Sla, SpecDecoding, SpecMethod,
};
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

/// The Pareto chart's x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    /// Tokens/s per user: 1 / TPOT at the percentile chosen (where the SLA's TPOT and tokens/s limits sit).
    #[default]
    TokensPerUser,
    /// E2E-normalized interactivity: 1 / P90 over requests of E2E / OSL (InferenceX's default x axis).
    Interactivity,
}

impl XAxis {
    /// The link's name: `tpu` or `e2e`.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            XAxis::TokensPerUser => "tpu",
            XAxis::Interactivity => "e2e",
        }
    }
}

/// The percentiles the view offers, the default (P90, as InferenceX and `roofline serve`) first.
pub const PERCENTILES: [Percentile; 3] = [Percentile::P90, Percentile::P50, Percentile::P99];

/// Reads a percentile as a link or `roofline serve --percentile` writes it: `50`, `p90`, `99`, `mean`.
#[must_use]
pub fn parse_percentile(text: &str) -> Option<Percentile> {
    match text.to_ascii_lowercase().trim_start_matches('p') {
        "50" => Some(Percentile::P50),
        "90" => Some(Percentile::P90),
        "99" => Some(Percentile::P99),
        "mean" => Some(Percentile::Mean),
        _ => None,
    }
}

/// Draft tokens per step when none is typed: `roofline serve --spec-draft-tokens`' default.
pub const DEFAULT_DRAFT_TOKENS: u32 = 3;

/// Speculative decoding as the form holds it: the method, k draft tokens, the mean acceptance length typed
/// (`None`: the method's published one), and the draft model's key for [`SpecMethod::DraftModel`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecInputs {
    /// How drafts are proposed.
    pub method: SpecMethod,
    /// Draft tokens per step, k.
    pub draft_tokens: u32,
    /// Mean acceptance length, bonus token included; `None`: the published default.
    pub acceptance: Option<f64>,
    /// The draft model's key (only read for [`SpecMethod::DraftModel`]).
    pub draft_model: Option<String>,
}

impl SpecInputs {
    /// `method` with the default draft tokens and the published acceptance.
    #[must_use]
    pub const fn of(method: SpecMethod) -> SpecInputs {
        SpecInputs {
            method,
            draft_tokens: DEFAULT_DRAFT_TOKENS,
            acceptance: None,
            draft_model: None,
        }
    }

    /// Core's speculative decoding of these inputs.
    ///
    /// # Errors
    /// Core's: no published acceptance for the method at k and none typed, or one outside [1, k + 1].
    pub fn decoding(&self) -> Result<SpecDecoding, Error> {
        SpecDecoding::new(self.method, self.draft_tokens, self.acceptance)
    }

    /// The published acceptance length at these draft tokens and its source, e.g. `2.49 (InferenceX golden
    /// AL, …)`, or why there is none.
    #[must_use]
    pub fn published(&self) -> String {
        match self.method.published_acceptance(self.draft_tokens) {
            Some((al, source)) => format!("{al} ({source})"),
            None => format!(
                "none published for {} at {} draft tokens: type one",
                method_name(self.method),
                self.draft_tokens
            ),
        }
    }
}

/// A speculative method's display name.
#[must_use]
pub const fn method_name(method: SpecMethod) -> &'static str {
    match method {
        SpecMethod::Mtp => "MTP",
        SpecMethod::Eagle3 => "EAGLE-3",
        SpecMethod::Ngram => "n-gram",
        SpecMethod::DraftModel => "draft model",
    }
}

/// What the serving sweep takes beyond the scenario's device, model, engine and mode: request lengths, which
/// scheduler, the limits replacing the engine's defaults, speculative decoding and the prefix cache; what
/// its answer reads: the SLA (in seconds and tokens/s; the page converts typed milliseconds at the input)
/// and the percentile it is checked at; and what the view shows: the GPU counts its answer may use, the x
/// axis, linear or log axes, and the devices compared.
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
    /// Speculative decoding, if on.
    pub speculative: Option<SpecInputs>,
    /// Share of every prompt served from the prefix cache, in [0, 1).
    pub prefix_hit_rate: f64,
    /// Latency limits; any subset.
    pub sla: Sla,
    /// The statistic the SLA, the table and the answer read.
    pub percentile: Percentile,
    /// What the chart's x axis shows.
    pub x_axis: XAxis,
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
            speculative: None,
            prefix_hit_rate: 0.0,
            sla: Sla::default(),
            percentile: Percentile::P90,
            x_axis: XAxis::TokensPerUser,
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
    /// These inputs without the typed numbers (ISL, OSL, limits, SLA, draft tokens, acceptance, hit rate):
    /// what stays when only typing changed them (typing replaces the history entry; picking the scheduler,
    /// the percentile or the speculative method pushes one).
    #[must_use]
    pub fn typed_numbers_cleared(&self) -> ServingInputs {
        ServingInputs {
            scheduler: self.scheduler,
            speculative: self.speculative.as_ref().map(|s| SpecInputs {
                draft_model: s.draft_model.clone(),
                ..SpecInputs::of(s.method)
            }),
            percentile: self.percentile,
            x_axis: self.x_axis,
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
        let spec = self.speculative.as_ref();
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
            ("spec", spec.map(|s| s.method.key().to_owned())),
            (
                "speck",
                spec.filter(|s| s.draft_tokens != DEFAULT_DRAFT_TOKENS)
                    .map(|s| s.draft_tokens.to_string()),
            ),
            ("specal", number(spec.and_then(|s| s.acceptance))),
            (
                "specdm",
                spec.filter(|s| s.method == SpecMethod::DraftModel)
                    .and_then(|s| s.draft_model.clone()),
            ),
            (
                "phr",
                (self.prefix_hit_rate > 0.0).then(|| self.prefix_hit_rate.to_string()),
            ),
            ("ttft", number(self.sla.ttft_max_s)),
            ("tpot", number(self.sla.tpot_max_s)),
            ("tpu", number(self.sla.tokens_per_user_min)),
            (
                "pct",
                (self.percentile != Percentile::P90)
                    .then(|| self.percentile.key().trim_start_matches('p').to_owned()),
            ),
            (
                "x",
                (self.x_axis != XAxis::TokensPerUser).then(|| self.x_axis.key().to_owned()),
            ),
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
            "spec" => match SpecMethod::parse(value) {
                Ok(method) => {
                    let spec = self.speculative.get_or_insert(SpecInputs::of(method));
                    spec.method = method;
                    true
                }
                Err(_) => false,
            },
            "speck" | "specal" | "specdm" => self.read_spec_pair(key, value),
            "phr" => value
                .parse::<f64>()
                .ok()
                .filter(|h| (0.0..1.0).contains(h))
                .map(|h| self.prefix_hit_rate = h)
                .is_some(),
            "pct" => parse_percentile(value).map(|p| self.percentile = p).is_some(),
            "x" => {
                self.x_axis = if value == XAxis::Interactivity.key() {
                    XAxis::Interactivity
                } else {
                    XAxis::TokensPerUser
                };
                true
            }
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

    /// Reads a speculative field (`speck`, `specal`, `specdm`) into these inputs; one that comes before
    /// `spec` holds its value until `spec` names the method (MTP until then). Returns whether it was taken.
    fn read_spec_pair(&mut self, key: &str, value: &str) -> bool {
        let spec = self.speculative.get_or_insert(SpecInputs::of(SpecMethod::Mtp));
        match key {
            "speck" => value
                .parse::<u32>()
                .ok()
                .filter(|k| (1..=MAX_DRAFT_TOKENS).contains(k))
                .map(|k| spec.draft_tokens = k)
                .is_some(),
            "specal" => parse_limit(value, 1.0)
                .ok()
                .flatten()
                .map(|a| spec.acceptance = Some(a))
                .is_some(),
            _ => {
                spec.draft_model = Some(value.to_owned());
                true
            }
        }
    }
}

/// Why a typed speculative or prefix-cache value was not taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FeatureError {
    /// Draft tokens outside 1 … [`MAX_DRAFT_TOKENS`].
    #[error("draft tokens must be a whole number from 1 to {MAX_DRAFT_TOKENS}")]
    DraftTokens,
    /// Core's reason an acceptance length is refused.
    #[error("{0}")]
    Acceptance(String),
    /// A hit rate outside [0, 100) %.
    #[error("must be a percentage from 0 to below 100")]
    HitRate,
}

/// Reads typed draft tokens: 1 … [`MAX_DRAFT_TOKENS`].
///
/// # Errors
/// [`FeatureError::DraftTokens`] for anything else.
pub fn parse_draft_tokens(text: &str) -> Result<u32, FeatureError> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|k| (1..=MAX_DRAFT_TOKENS).contains(k))
        .ok_or(FeatureError::DraftTokens)
}

/// Reads a typed acceptance length for `spec`'s method and draft tokens: empty is the published default,
/// else a number core accepts (in [1, k + 1]).
///
/// # Errors
/// [`FeatureError::Acceptance`] with core's reason.
pub fn parse_acceptance(text: &str, spec: &SpecInputs) -> Result<Option<f64>, FeatureError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let refused = |e: Error| FeatureError::Acceptance(e.to_string());
    let value = t
        .parse::<f64>()
        .map_err(|_| FeatureError::Acceptance(format!("'{t}' is not a number")))?;
    SpecDecoding {
        method: spec.method,
        draft_tokens: spec.draft_tokens,
        acceptance_length: value,
    }
    .check()
    .map_err(refused)?;
    Ok(Some(value))
}

/// Reads a typed prefix-cache hit rate in percent: 0 (or empty) up to below 100, as a fraction.
///
/// # Errors
/// [`FeatureError::HitRate`] for anything else.
pub fn parse_hit_rate(text: &str) -> Result<f64, FeatureError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(0.0);
    }
    match t.parse::<f64>() {
        Ok(v) if (0.0..100.0).contains(&v) => Ok(v / 100.0),
        _ => Err(FeatureError::HitRate),
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
            speculative: Some(SpecInputs {
                method: SpecMethod::DraftModel,
                draft_tokens: 5,
                acceptance: Some(2.2),
                draft_model: Some("llama-3.2-1b".into()),
            }),
            prefix_hit_rate: 0.25,
            percentile: Percentile::P99,
            x_axis: XAxis::Interactivity,
            gpus: vec![2, 8],
            log_axes: true,
            compare: vec!["b200".into(), "h200_sxm".into()],
        };
        let pairs = inputs.query_pairs(View::Serving);
        for pair in [
            ("spec", "draft_model"),
            ("speck", "5"),
            ("specal", "2.2"),
            ("specdm", "llama-3.2-1b"),
            ("phr", "0.25"),
            ("pct", "99"),
            ("x", "e2e"),
        ] {
            assert!(
                pairs.contains(&(pair.0, pair.1.to_owned())),
                "{pair:?} in {pairs:?}"
            );
        }
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
        // A percentile as roofline serve writes it; an unknown one, a method or hit rate out of range, ignored.
        assert_eq!(s.read_pair(&mut view, "pct", "P50"), Some(true));
        assert_eq!(s.percentile, Percentile::P50);
        assert_eq!(s.read_pair(&mut view, "pct", "95"), Some(false));
        assert_eq!(s.read_pair(&mut view, "spec", "medusa"), Some(false));
        assert_eq!(s.read_pair(&mut view, "phr", "1"), Some(false));
        assert_eq!(s.read_pair(&mut view, "speck", "17"), Some(false));
        assert_eq!(
            (s.speculative.as_ref().map(|s| s.draft_tokens), s.prefix_hit_rate),
            (Some(3), 0.0)
        );
        // Draft tokens before the method: kept, and the method named after.
        assert_eq!(s.read_pair(&mut view, "speck", "2"), Some(true));
        assert_eq!(s.read_pair(&mut view, "spec", "eagle3"), Some(true));
        assert_eq!(
            s.speculative.unwrap(),
            SpecInputs {
                draft_tokens: 2,
                ..SpecInputs::of(SpecMethod::Eagle3)
            }
        );
    }

    #[test]
    fn an_older_link_opens_with_p90_no_speculation_and_tokens_per_user() {
        let (mut s, mut view) = (ServingInputs::default(), View::Step);
        for (key, value) in [("view", "serving"), ("isl", "8192"), ("tpu", "20")] {
            s.read_pair(&mut view, key, value);
        }
        assert_eq!(
            (s.percentile, s.speculative, s.prefix_hit_rate, s.x_axis),
            (Percentile::P90, None, 0.0, XAxis::TokensPerUser)
        );
    }

    #[test]
    fn typed_speculative_values_are_checked_as_core_does() {
        let mtp = SpecInputs::of(SpecMethod::Mtp);
        assert_eq!(parse_acceptance("", &mtp), Ok(None));
        assert_eq!(parse_acceptance("2.5", &mtp), Ok(Some(2.5)));
        // k = 3 drafts: at most 4 tokens a step.
        let err = parse_acceptance("4.5", &mtp).unwrap_err().to_string();
        assert!(err.contains("in [1, 4]"), "{err}");
        assert!(parse_acceptance("x", &mtp).is_err());
        assert_eq!(parse_draft_tokens(" 4 "), Ok(4));
        assert_eq!(parse_draft_tokens("0"), Err(FeatureError::DraftTokens));
        assert_eq!(parse_hit_rate("50"), Ok(0.5));
        assert_eq!(parse_hit_rate(""), Ok(0.0));
        assert_eq!(parse_hit_rate("100"), Err(FeatureError::HitRate));
        // MTP at k = 3: InferenceX's golden 2.49, with its source; n-gram has none.
        assert!(
            mtp.published().starts_with("2.49 (InferenceX golden AL"),
            "{}",
            mtp.published()
        );
        assert_eq!(mtp.decoding().unwrap().acceptance_length, 2.49);
        let ngram = SpecInputs::of(SpecMethod::Ngram);
        assert!(ngram.published().starts_with("none published for n-gram"));
        assert!(ngram.decoding().is_err());
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
