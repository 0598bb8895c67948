//! The serving view's answer: what every number is about, the recommended operating point, the fewest GPUs
//! that meet the SLA, the best of each GPU count, what would meet an SLA nothing meets, why the step view's
//! Advisor may pick another config, and the commands that run the answer.

use leptos::prelude::*;
use roofline_core::{Load, Recommendation, ServingPoint, layout_name};

use crate::components::serving_launch::ServingLaunch;
use crate::format;
use crate::serving::answer::answer;
use crate::serving::load_words;
use crate::state::use_app;
use crate::summary::config_name;

/// A button that sets the scenario to `p`'s config and layout (`serving-use`), so the step view and the
/// launch line follow.
fn use_button(p: &ServingPoint, testid: &'static str) -> impl IntoView + use<> {
    let scenario = use_app().scenario;
    let (config, layout) = (p.config.clone(), p.parallelism);
    let text = format!(
        "Use {} on {}",
        config_name(&p.config),
        layout_name(&p.parallelism)
    );
    view! {
        <button type="button" data-testid=testid on:click=move |_| scenario.update(|s| {
            s.config.clone_from(&config);
            s.set_gpus(layout.tensor);
            s.experts = layout.expert;
        })>{text}</button>
    }
}

/// The concurrency of a closed-loop point as text (empty for a rate).
fn concurrency(p: &ServingPoint) -> String {
    match p.load {
        Load::Concurrency(n) => n.to_string(),
        Load::Rate(_) => String::new(),
    }
}

/// The table of the best point per GPU count (`serving-sizing`, `tr[data-gpus]` with `data-config` and
/// `data-value` = output tokens/s per GPU, empty when nothing on that many GPUs meets the SLA).
fn by_gpus_table() -> impl IntoView {
    let sizing = use_app().serving.sizing;
    move || {
        sizing.with(|z| {
            z.as_ref().filter(|z| z.by_gpus.len() > 1).map(|z| {
                let at = z.outcome.percentile;
                let rows = z
                    .by_gpus
                    .iter()
                    .map(|g| {
                        let cells = match &g.best {
                            Some(p) => view! {
                                <td>{config_name(&p.config)}" · "{layout_name(&p.parallelism)}</td>
                                <td class="num">{format::number(p.output_tokens_per_s_per_gpu)}</td>
                                <td class="num">{load_words(p.load)}</td>
                                <td class="num">{format::number(p.tokens_per_s_per_user_at(at))}</td>
                            }
                            .into_any(),
                            None => view! { <td colspan="4" class="hint">"nothing meets the SLA"</td> }.into_any(),
                        };
                        view! {
                            <tr data-gpus=g.gpus.to_string()
                                data-config=g.best.as_ref().map(|p| p.config.clone()).unwrap_or_default()
                                data-value=g.best.as_ref().map(|p| p.output_tokens_per_s_per_gpu.to_string()).unwrap_or_default()>
                                <td class="num">{g.gpus}</td>
                                {cells}
                            </tr>
                        }
                    })
                    .collect_view();
                view! {
                    <div class="table-wrap"><table class="serving-sizing" data-testid="serving-sizing">
                        <caption>"Best under the SLA per GPU count"</caption>
                        <thead><tr><th class="num">"GPUs"</th><th>"config"</th><th class="num">"out tok/s/GPU"</th>
                            <th class="num">"load"</th><th class="num">{format!("{} tok/s/user", at.name())}</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table></div>
                }
            })
        })
    }
}

/// Why the step view's Advisor may name another config (`serving-advisor-note`): it ranks one step on the
/// left panel's GPUs, this view the most output per GPU under the SLA over every layout. The Advisor's own
/// pick (`serving-advisor-pick`, `data-advisor`) is worked out only when the note is opened: ranking every
/// config's step costs a large model a second.
fn advisor_note(best: &str) -> impl IntoView + use<> {
    let app = use_app();
    let open = RwSignal::new(false);
    let best_name = config_name(best);
    let pick = move || {
        open.get().then(|| {
            let advisor = app.analyses.recommendation.with(|r| match r {
                Ok(Recommendation::Switch(p) | Recommendation::Keep(p)) => Some((p.config.clone(), p.name.clone())),
                _ => None,
            });
            let s = app.scenario.get_untracked();
            let phase = if s.prefill { "prefill" } else { "decode" };
            let text = advisor.as_ref().map_or_else(
                || "The Advisor has no pick for this step.".to_owned(),
                |(_, name)| {
                    format!(
                        "The Advisor picks {name}: the fastest single {phase} step at batch {} on {}.",
                        s.batch,
                        layout_name(&s.parallelism())
                    )
                },
            );
            view! {
                <p data-testid="serving-advisor-pick" data-advisor=advisor.map(|a| a.0).unwrap_or_default()>{text}</p>
            }
        })
    };
    view! {
        <div class="hint" data-testid="serving-advisor-note">
            {format!(
                "The step view's Advisor may pick another config than {best_name}: it ranks the time of one step at \
                 the left panel's batch and GPUs; this view ranks output tokens/s per GPU under the SLA over every \
                 layout and load. "
            )}
            <button type="button" class="link" data-testid="serving-advisor-open" aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>"What does the Advisor pick?"</button>
            {pick}
        </div>
    }
}

/// The recommendation (`serving-recommendation`): `data-kind` `recommended` (with `data-config`,
/// `data-concurrency`, `data-gpus`, `data-tp`, `data-ep`, `data-value` = its output tokens/s per GPU,
/// `data-percentile` and the `data-tpot`, `data-ttft` at it), `none` (what would meet it, `serving-alternatives`) or `error` (why there is no
/// sweep); then the fewest GPUs (`serving-fewest`, `data-gpus`, `data-config`, `data-value`) when fewer
/// than the recommendation's, the table per GPU count, the caveat when the pick rests on unmeasured
/// ceilings (`serving-caveat`), the configs not served, and the launch commands.
#[component]
pub fn ServingAnswer(
    /// Per config, the unmeasured ceilings its ranking rests on.
    #[prop(into)]
    caveats: Signal<std::collections::BTreeMap<String, String>>,
) -> impl IntoView {
    let app = use_app();
    let state = app.serving;
    let context = Memo::new(move |_| {
        state
            .key
            .with(|k| k.as_ref().map(|k| k.context()).unwrap_or_default())
    });
    let answer = Memo::new(move |_| {
        state.sizing.with(|z| {
            z.as_ref().map(|z| {
                let gpus = state
                    .key
                    .with(|k| k.as_ref().map(|k| k.gpus()).unwrap_or_default());
                answer(z, &gpus)
            })
        })
    });
    // The recommendation is rebuilt (its launch commands and Advisor note with it) only when its point or
    // statistic moves; an SLA change that leaves the point redraws its sentence and the fewest GPUs only.
    let error = Memo::new(move |_| {
        state
            .sweep
            .with(|s| s.as_ref().as_ref().err().map(format::failure))
    });
    let nothing = Memo::new(move |_| answer.with(|a| a.as_ref().and_then(|a| a.nothing.clone())));
    let text = Memo::new(move |_| {
        answer.with(|a| {
            a.as_ref()
                .and_then(|a| a.recommended.as_ref().map(|r| r.1.clone()))
        })
    });
    let fewest = Memo::new(move |_| answer.with(|a| a.as_ref().and_then(|a| a.fewest.clone())));
    let point = Memo::new(move |_| {
        let at = state
            .sizing
            .with(|z| z.as_ref().map(|z| z.outcome.percentile).unwrap_or_default());
        answer.with(|a| {
            a.as_ref()
                .and_then(|a| a.recommended.as_ref().map(|r| (r.0.clone(), at)))
        })
    });
    let verdict = move || {
        if let Some(e) = error.get() {
            return view! {
                <div class="recommendation over" data-testid="serving-recommendation" data-kind="error">
                    <h3>"No serving prediction"</h3>
                    <p class="error" role="alert">{e}</p>
                </div>
            }
            .into_any();
        }
        if let Some((headline, reason, what)) = nothing.get() {
            return view! {
                <div class="recommendation over" data-testid="serving-recommendation" data-kind="none">
                    <h3>{headline}</h3>
                    <p class="pick">{reason}</p>
                    <ul data-testid="serving-alternatives">{what.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
                </div>
            }
            .into_any();
        }
        let Some((best, at)) = point.get() else {
            return ().into_any();
        };
        let caveat = caveats.with(|c| c.get(&best.config).cloned());
        let fewest = move || {
            fewest.get().map(|(p, words)| {
                view! {
                    <p class="fewest" data-testid="serving-fewest" data-gpus=p.gpus.to_string() data-config=p.config.clone()
                        data-value=p.output_tokens_per_s_per_gpu.to_string() data-concurrency=concurrency(&p)>
                        <strong>"Fewest GPUs: "</strong>{words}" "{use_button(&p, "serving-use-fewest")}
                    </p>
                }
            })
        };
        view! {
            <div class="recommendation" data-testid="serving-recommendation" data-kind="recommended"
                data-config=best.config.clone() data-concurrency=concurrency(&best)
                data-gpus=best.gpus.to_string() data-tp=best.parallelism.tensor.to_string()
                data-ep=best.parallelism.expert.to_string()
                data-value=best.output_tokens_per_s_per_gpu.to_string()
                data-percentile=at.key() data-tpot=best.tpot_at(at).to_string() data-ttft=best.ttft_at(at).to_string()>
                <h3>"Most output per GPU"</h3>
                <p class="pick">{move || text.get()}" "{use_button(&best, "serving-use")}</p>
                {fewest}
                {caveat.map(|c| view! { <p class="warning" data-testid="serving-caveat">{c}</p> })}
                {advisor_note(&best.config)}
                <ServingLaunch point=best.clone() />
            </div>
        }
        .into_any()
    };
    let names = Memo::new(move |_| {
        state.sizing.with(|z| {
            z.as_ref()
                .map(|z| {
                    z.not_served
                        .iter()
                        .map(|n| config_name(&n.config))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let not_served = move || {
        names.with(|names| {
            (!names.is_empty()).then(|| {
                view! {
                    <p class="hint" data-testid="serving-not-served" data-count=names.len().to_string()>
                        {format!("Never recommended here, the engine does not serve them (the table says why): {}.", names.join(", "))}
                    </p>
                }
            })
        })
    };
    view! {
        <div class="serving-answer">
            <p class="serving-context" data-testid="serving-context">{move || context.get()}</p>
            {verdict}
            {by_gpus_table()}
            {not_served}
        </div>
    }
}
