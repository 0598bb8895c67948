//! The serving view's inputs: request lengths, engine, scheduler, the engine limits, speculative decoding,
//! the prefix cache, the SLA with the percentile it is read at, and the chart's x axis.

use leptos::prelude::*;
use roofline_core::{Engine, EnginePreset, METRICS, SchedulerKind, SpecMethod, model_presets};

use crate::scenario::Scenario;
use crate::serving_inputs::{
    ISL_RANGE, OSL_RANGE, PERCENTILES, ServingInputs, SpecInputs, XAxis, engine_name, method_name,
    parse_acceptance, parse_draft_tokens, parse_engine_limit, parse_hit_rate, parse_limit, parse_percentile,
    scheduler_name,
};
use crate::sliders::parse_in_range;
use crate::state::use_app;

/// The definition of metric `key` in core's `METRICS` (a tooltip), or nothing.
#[must_use]
pub fn metric_definition(key: &str) -> &'static str {
    METRICS.iter().find(|m| m.key == key).map_or("", |m| m.definition)
}

/// A typed input: shows the scenario's value, takes a new one on `change`, and says why a typed value was
/// not taken (`<testid>-invalid`), keeping the previous value visibly.
#[component]
fn Typed(
    /// Label text.
    label: &'static str,
    /// Test id and element id.
    testid: &'static str,
    /// The label's tooltip.
    #[prop(optional)]
    title: &'static str,
    /// The scenario's value as text (empty: none, the placeholder applies).
    #[prop(into)]
    value: Signal<String>,
    /// What an empty input means.
    #[prop(into)]
    placeholder: Signal<String>,
    /// Takes the typed text; returns why it was not taken.
    take: Callback<String, Option<String>>,
) -> impl IntoView {
    let invalid = RwSignal::new(None::<String>);
    let on_change = move |ev| invalid.set(take.run(event_target_value(&ev)));
    view! {
        <div class="field">
            <label for=testid title=title>{label}</label>
            <input
                id=testid
                type="number"
                min="0"
                step="any"
                data-testid=testid
                prop:value=move || value.get()
                placeholder=move || placeholder.get()
                aria-invalid=move || invalid.with(Option::is_some).to_string()
                on:change=on_change
            />
            {move || invalid.get().map(|r| view! {
                <span class="error invalid" role="alert" data-testid=format!("{testid}-invalid")>
                    {format!("Invalid: {r}; still {}", value.with(|v| if v.is_empty() { "none".to_owned() } else { v.clone() }))}
                </span>
            })}
        </div>
    }
}

/// A setter from a parser: `parse` reads the text (with the inputs as they are), `set` stores it.
fn setter<T: 'static, E: std::fmt::Display>(
    scenario: RwSignal<Scenario>,
    parse: impl Fn(&str, &ServingInputs) -> Result<T, E> + Send + Sync + 'static,
    set: fn(&mut ServingInputs, T),
) -> Callback<String, Option<String>> {
    Callback::new(
        move |text: String| match scenario.with_untracked(|s| parse(&text, &s.serving)) {
            Ok(v) => {
                scenario.update(|s| set(&mut s.serving, v));
                None
            }
            Err(reason) => Some(reason.to_string()),
        },
    )
}

/// A `<select>` (`testid`) of `options` (value, text), the one `current` names selected; `pick` takes the
/// chosen value. Not generic: every select of the form shares its code.
fn choice(
    label: &'static str,
    testid: &'static str,
    options: Vec<(String, String)>,
    current: Signal<String>,
    pick: Callback<String>,
) -> AnyView {
    let options = options
        .into_iter()
        .map(|(value, text)| {
            let selected = Signal::derive({
                let value = value.clone();
                move || current.with(|c| *c == value)
            });
            view! { <option value=value selected=selected>{text}</option> }
        })
        .collect_view();
    view! {
        <div class="field">
            <label for=testid>{label}</label>
            <select id=testid data-testid=testid on:change=move |ev| pick.run(event_target_value(&ev))>{options}</select>
        </div>
    }
    .into_any()
}

/// The statistic the SLA reads (`serving-percentile`: `p90` default, `p50`, `p99`) and the chart's x axis
/// (`serving-x-axis`: `tpu` tokens/s per user, `e2e` E2E-normalized interactivity).
fn percentile_and_axis(scenario: RwSignal<Scenario>) -> impl IntoView {
    let percentiles = PERCENTILES
        .iter()
        .map(|p| (p.key().to_owned(), format!("{} of requests", p.name())))
        .collect();
    let axes = vec![
        (
            XAxis::TokensPerUser.key().to_owned(),
            "tokens/s per user".to_owned(),
        ),
        (
            XAxis::Interactivity.key().to_owned(),
            "E2E-normalized interactivity".to_owned(),
        ),
    ];
    let read = move |f: fn(&ServingInputs) -> &'static str| {
        Signal::derive(move || scenario.with(|s| f(&s.serving).to_owned()))
    };
    view! {
        {choice("SLA and table read", "serving-percentile", percentiles, read(|i| i.percentile.key()),
            Callback::new(move |v: String| if let Some(p) = parse_percentile(&v) { scenario.update(|s| s.serving.percentile = p) }))}
        {choice("Chart x axis", "serving-x-axis", axes, read(|i| i.x_axis.key()),
            Callback::new(move |v: String| {
                let axis = if v == XAxis::Interactivity.key() { XAxis::Interactivity } else { XAxis::TokensPerUser };
                scenario.update(|s| s.serving.x_axis = axis);
            }))}
    }
}

/// Speculative decoding (`spec-method`: `off` or core's method key; then `spec-draft-tokens`,
/// `spec-acceptance` with the published default and its source in `spec-published`, and `spec-draft-model`
/// for a draft model) and the prefix cache's hit rate (`prefix-hit-rate`, in %).
fn speculative_and_prefix(
    scenario: RwSignal<Scenario>,
    models: RwSignal<Vec<roofline_core::ModelConfig>>,
) -> impl IntoView {
    let spec = move || scenario.with(|s| s.serving.speculative.clone());
    let methods = std::iter::once(("off".to_owned(), "off".to_owned()))
        .chain(SpecMethod::ALL.map(|m| (m.key().to_owned(), method_name(m).to_owned())))
        .collect();
    let pick_method = Callback::new(move |v: String| {
        scenario.update(|s| {
            s.serving.speculative = SpecMethod::parse(&v).ok().map(|method| SpecInputs {
                method,
                acceptance: None,
                ..s.serving.speculative.clone().unwrap_or(SpecInputs::of(method))
            });
        });
    });
    let on = move || {
        let p = spec()?;
        let draft_model = (p.method == SpecMethod::DraftModel).then(|| {
            let options = models.with(|m| {
                std::iter::once((String::new(), "choose…".to_owned()))
                    .chain(
                        model_presets()
                            .iter()
                            .chain(m.iter())
                            .map(|x| (x.key.clone(), x.name.clone())),
                    )
                    .collect()
            });
            let current = Signal::derive(move || spec().and_then(|p| p.draft_model).unwrap_or_default());
            let pick = Callback::new(move |key: String| {
                scenario.update(|s| {
                    if let Some(p) = s.serving.speculative.as_mut() {
                        p.draft_model = (!key.is_empty()).then_some(key);
                    }
                });
            });
            choice("Draft model", "spec-draft-model", options, current, pick)
        });
        let published = p.published();
        Some(view! {
            <Typed label="Draft tokens per step" testid="spec-draft-tokens"
                title="k: vLLM num_speculative_tokens, SGLang speculative_num_steps"
                value=Signal::derive(move || spec().map(|p| p.draft_tokens.to_string()).unwrap_or_default())
                placeholder=Signal::derive(String::new)
                take=setter(scenario, |t, _| parse_draft_tokens(t), |i, k| if let Some(p) = i.speculative.as_mut() { p.draft_tokens = k }) />
            <Typed label="Mean acceptance length" testid="spec-acceptance"
                title="Tokens each verify step adds per request, the bonus token included; empty: the published default"
                value=Signal::derive(move || spec().and_then(|p| p.acceptance).map(|a| a.to_string()).unwrap_or_default())
                placeholder=Signal::derive(move || spec().and_then(|p| p.method.published_acceptance(p.draft_tokens)).map_or_else(|| "type one".to_owned(), |(a, _)| format!("published: {a}")))
                take=setter(scenario, |t, i| parse_acceptance(t, &i.speculative.clone().unwrap_or(SpecInputs::of(SpecMethod::Mtp))),
                    |i, a| if let Some(p) = i.speculative.as_mut() { p.acceptance = a }) />
            {draft_model}
            <p class="hint spec-published" data-testid="spec-published">{format!("Published acceptance: {published}")}</p>
        })
    };
    view! {
        {choice("Speculative decoding", "spec-method", methods,
            Signal::derive(move || scenario.with(|s| s.serving.speculative.as_ref().map_or("off", |p| p.method.key()).to_owned())),
            pick_method)}
        {on}
        <Typed label="Prefix cache hit rate (%)" testid="prefix-hit-rate"
            title="Share of every prompt's tokens served from the prefix cache: their prefill is skipped"
            value=Signal::derive(move || scenario.with(|s| if s.serving.prefix_hit_rate > 0.0 { format!("{}", (s.serving.prefix_hit_rate * 1e8).round() / 1e6) } else { String::new() }))
            placeholder=Signal::derive(|| "0".to_owned())
            take=setter(scenario, |t, _| parse_hit_rate(t), |i, h| i.prefix_hit_rate = h) />
    }
}

/// A limit in seconds as milliseconds typed by the user (up to a millionth of a millisecond, so a typed
/// value reads back as typed).
fn millis(v: Option<f64>) -> String {
    v.map_or_else(String::new, |s| format!("{}", (s * 1e9).round() / 1e6))
}

/// The inputs of the serving sweep: ISL and OSL (`serving-isl`, `serving-osl`), engine (`serving-engine`:
/// vLLM, SGLang, TensorRT-LLM; the scenario's engine, which the advice also keeps to; vLLM when it is any),
/// scheduler (`serving-scheduler`), token budget and max sequences
/// (`serving-budget`, `serving-maxseqs`; empty is the engine's default, named in the placeholder), and the
/// SLA (`sla-ttft` and `sla-tpot` in ms, `sla-tpu` in tokens/s per user; empty is no limit), the statistic
/// it is read at and the chart's x axis ([`percentile_and_axis`]), speculative decoding and the prefix cache
/// ([`speculative_and_prefix`]). The placeholders name the engine's own limits on this device and split.
#[component]
pub fn ServingForm() -> impl IntoView {
    let app = use_app();
    let (scenario, key) = (app.scenario, app.serving.key);
    let defaults = Signal::derive(move || key.with(|k| k.as_ref().ok().map(|k| k.engine_defaults())));
    let get = move |f: fn(&ServingInputs) -> String| Signal::derive(move || scenario.with(|s| f(&s.serving)));
    let fixed = |text: &'static str| Signal::derive(move || text.to_owned());
    let default_of = move |what: fn(&EnginePreset) -> u32| {
        Signal::derive(move || {
            defaults.with(|d| {
                d.as_ref().map_or_else(String::new, |p| {
                    format!("{} default: {}", engine_name(p.engine), what(p))
                })
            })
        })
    };
    let whole = |range: (u64, u64)| {
        move |t: &str, _: &ServingInputs| {
            parse_in_range(t, range.0, range.1).map(|v| u32::try_from(v).unwrap_or(u32::MAX))
        }
    };
    let limit = |scale: f64| move |t: &str, _: &ServingInputs| parse_limit(t, scale);
    let engine_limit = |t: &str, _: &ServingInputs| parse_engine_limit(t);
    let engines = Engine::ALL
        .into_iter()
        .map(|e| {
            view! {
                <option value=e.key() selected=move || scenario.with(|s| s.serving_engine() == e)>{engine_name(e)}</option>
            }
        })
        .collect_view();
    let schedulers = [SchedulerKind::InFlight, SchedulerKind::Static]
        .into_iter()
        .map(|k| {
            let value = if k == SchedulerKind::Static { "static" } else { "inflight" };
            view! {
                <option value=value selected=move || scenario.with(|s| s.serving.scheduler == k)>{scheduler_name(k)}</option>
            }
        })
        .collect_view();
    view! {
        <fieldset class="serving-form" data-testid="serving-form">
            <legend>"Serving workload and SLA"</legend>
            <div class="serving-grid">
                <Typed label="ISL (prompt tokens)" testid="serving-isl" value=get(|i| i.isl.to_string())
                    placeholder=fixed("") take=setter(scenario, whole(ISL_RANGE), |i, v| i.isl = v) />
                <Typed label="OSL (output tokens)" testid="serving-osl" value=get(|i| i.osl.to_string())
                    placeholder=fixed("") take=setter(scenario, whole(OSL_RANGE), |i, v| i.osl = v) />
                <div class="field">
                    <label for="serving-engine">"Engine"</label>
                    <select id="serving-engine" data-testid="serving-engine"
                        on:change=move |ev| {
                            if let Ok(e) = Engine::parse(&event_target_value(&ev)) {
                                scenario.update(|s| s.engine = Some(e));
                            }
                        }>
                        {engines}
                    </select>
                </div>
                <div class="field">
                    <label for="serving-scheduler">"Scheduler"</label>
                    <select id="serving-scheduler" data-testid="serving-scheduler"
                        on:change=move |ev| {
                            let kind = if event_target_value(&ev) == "static" { SchedulerKind::Static } else { SchedulerKind::InFlight };
                            scenario.update(|s| s.serving.scheduler = kind);
                        }>
                        {schedulers}
                    </select>
                </div>
                <Typed label="Token budget per step" testid="serving-budget"
                    title="Tokens one step may process: vLLM max_num_batched_tokens, SGLang chunked_prefill_size, TensorRT-LLM max_num_tokens"
                    value=get(|i| i.token_budget.map(|v| v.to_string()).unwrap_or_default())
                    placeholder=default_of(|p| p.in_flight.token_budget)
                    take=setter(scenario, engine_limit, |i, v| i.token_budget = v) />
                <Typed label="Max sequences" testid="serving-maxseqs"
                    title="Requests running at once: vLLM max_num_seqs, SGLang max_running_requests, TensorRT-LLM max_batch_size"
                    value=get(|i| i.max_seqs.map(|v| v.to_string()).unwrap_or_default())
                    placeholder=default_of(|p| p.in_flight.max_seqs)
                    take=setter(scenario, engine_limit, |i, v| i.max_seqs = v) />
                <Typed label="SLA: TTFT ≤ (ms)" testid="sla-ttft" title=metric_definition("ttft_s")
                    value=get(|i| millis(i.sla.ttft_max_s)) placeholder=fixed("no limit")
                    take=setter(scenario, limit(1e-3), |i, v| i.sla.ttft_max_s = v) />
                <Typed label="SLA: TPOT ≤ (ms)" testid="sla-tpot" title=metric_definition("tpot_s")
                    value=get(|i| millis(i.sla.tpot_max_s)) placeholder=fixed("no limit")
                    take=setter(scenario, limit(1e-3), |i, v| i.sla.tpot_max_s = v) />
                <Typed label="SLA: tokens/s per user ≥" testid="sla-tpu" title=metric_definition("tokens_per_s_per_user")
                    value=get(|i| i.sla.tokens_per_user_min.map(|v| v.to_string()).unwrap_or_default())
                    placeholder=fixed("no limit")
                    take=setter(scenario, limit(1.0), |i, v| i.sla.tokens_per_user_min = v) />
                {percentile_and_axis(scenario)}
                {speculative_and_prefix(scenario, app.models)}
            </div>
            <p class="hint">"Device, model and mode come from the left panel; every precision config is swept on every GPU layout the device's domain holds (1, 2, 4, 8 GPUs; experts split too for MoE) over concurrency 1 … what fits or the engine runs at once."</p>
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_back_as_typed_and_metrics_have_definitions() {
        assert_eq!(millis(Some(0.0123)), "12.3");
        assert_eq!(millis(Some(1.0)), "1000");
        assert_eq!(millis(None), "");
        assert!(metric_definition("tpot_s").contains("(E2E − TTFT) / (OSL − 1)"));
        assert_eq!(metric_definition("nope"), "");
    }
}
