//! Measured serving runs: import any file core's `parse_measured` reads (chosen or dropped; one over its size
//! cap refused before it is read), say which scenario it ran with, and see each run's error against the
//! simulation of that scenario, percentile by percentile.

use leptos::prelude::*;
use roofline_core::validation::Band;
use roofline_core::{
    Engine, LatencyMetric, ServingComparison, ServingOutcome, check_bench_size, model_presets, quant_configs,
};

use crate::browser;
use crate::format;
use crate::presets::{GPU_COUNTS, all_hardware};
use crate::serving::load_words;
use crate::serving::measured::{Elsewhere, MeasuredRow, Pending, RanOn, add, read};
use crate::serving_inputs::engine_name;
use crate::state::use_app;
use crate::summary::config_name;
use crate::validation::band_class;

/// A ratio cell (`data-value` = measured ÷ predicted), coloured by the error's band.
fn ratio_cell(testid: &'static str, ratio: Option<f64>) -> impl IntoView {
    let (text, class) = match ratio {
        Some(r) => (
            format!("{r:.2}× ({})", format::signed_percent((r - 1.0) * 100.0)),
            band_class(Band::of((r - 1.0) * 100.0)),
        ),
        None => ("unstable".to_owned(), ""),
    };
    view! {
        <td class=format!("num {class}") data-testid=testid data-value=ratio.map(|r| r.to_string()).unwrap_or_default()>{text}</td>
    }
}

/// Every statistic the file has, measured ÷ simulated, metric by metric (`pct-ratios`: one
/// `span[data-metric][data-percentile]` each, `data-value` = the ratio), e.g. `TTFT mean 1.10× P90 1.32×`.
fn percentile_cell(c: &ServingComparison) -> impl IntoView + use<> {
    let metrics = LatencyMetric::ALL.into_iter().filter_map(|metric| {
        let mine: Vec<_> = c.percentiles.iter().filter(|r| r.metric == metric).collect();
        (!mine.is_empty()).then(|| {
            let spans = mine
                .into_iter()
                .map(|r| {
                    view! {
                        <span data-metric=metric.name().to_ascii_lowercase() data-percentile=r.percentile.key()
                            data-value=r.ratio.to_string() class=band_class(Band::of((r.ratio - 1.0) * 100.0))
                            title=format!("measured {} ÷ simulated {}", format::duration(r.measured_s), format::duration(r.predicted_s))>
                            {format!(" {} {:.2}×", r.percentile.name(), r.ratio)}
                        </span>
                    }
                })
                .collect_view();
            view! { <div>{metric.name()}{spans}</div> }
        })
    });
    view! { <td class="pct-ratios" data-testid="pct-ratios">{metrics.collect_view()}</td> }
}

/// A measured run's row (`tr[data-file][data-line]`): its figures and measured ÷ predicted TTFT, TPOT and
/// output tokens/s per GPU (`ttft-ratio`, `tpot-ratio`, `throughput-ratio`), every statistic the file has
/// (`pct-ratios`), or why it has no prediction.
fn measured_row(row: MeasuredRow) -> impl IntoView {
    let (run, m) = (&row.run, &row.run.measured);
    let head = view! {
        <td>{format!("{}:{}", run.file, m.line)}</td>
        <td>{config_name(&run.ran_on.config)}</td>
    };
    let rest = match &row.comparison {
        Ok(c) => {
            let load = match &c.predicted {
                ServingOutcome::Steady(p) => load_words(p.load),
                ServingOutcome::Unstable(u) => format!("{} requests/s (unstable)", format::number(u.rate)),
            };
            view! {
                <td>{load}</td>
                <td class="num">{format!("{}/{}", c.workload.isl, c.workload.osl)}</td>
                <td class="num">{format::duration(m.ttft_s)}</td>
                {ratio_cell("ttft-ratio", c.ttft_ratio)}
                <td class="num">{format::duration(m.tpot_s)}</td>
                {ratio_cell("tpot-ratio", c.tpot_ratio)}
                <td class="num">{format::number(run.output_tokens_per_s_per_gpu())}</td>
                {ratio_cell("throughput-ratio", c.output_throughput_ratio)}
                {percentile_cell(c)}
                <td>{if row.on_chart { "yes".to_owned() } else { "no: other ISL/OSL".to_owned() }}</td>
            }
            .into_any()
        }
        Err(e) => view! { <td colspan="10" class="error">{format::failure(e)}</td> }.into_any(),
    };
    view! {
        <tr data-file=run.file.clone() data-line=m.line.to_string() data-config=run.ran_on.config.clone()>
            {head}
            {rest}
        </tr>
    }
}

/// The select of one field of the pending scenario.
fn pick(
    testid: &'static str,
    label: &'static str,
    options: Vec<(String, String)>,
    current: String,
    on_pick: impl Fn(String) + 'static,
) -> impl IntoView {
    view! {
        <div class="field">
            <label for=testid>{label}</label>
            <select id=testid data-testid=testid on:change=move |ev| on_pick(event_target_value(&ev))>
                {options.into_iter().map(|(value, text)| {
                    let selected = value == current;
                    view! { <option value=value selected=selected>{text}</option> }
                }).collect_view()}
            </select>
        </div>
    }
}

/// The confirmation of the scenario a file ran with (`serving-confirm`: `ran-hardware`, `ran-model`,
/// `ran-config`, `ran-gpus`, `ran-engine`, defaulting to the current ones); `serving-confirm-button` adds the
/// `pending` runs and says so in `message`.
#[component]
fn ConfirmRuns(
    pending: RwSignal<Option<Pending>>,
    message: RwSignal<Option<(bool, String)>>,
) -> impl IntoView {
    let app = use_app();
    let (runs, custom, models) = (app.serving.runs, app.custom, app.models);
    let confirm = move |_| {
        let Some(p) = pending.get_untracked() else { return };
        let mut added = None;
        runs.update(|runs| added = Some(add(runs, &p)));
        let Some(added) = added else { return };
        let text = if added.new == 0 {
            format!(
                "{} is already imported: nothing added (its runs now count as run on {}).",
                p.file,
                p.ran_on.label()
            )
        } else {
            format!(
                "Added {} run(s) from {}, run on {}.",
                added.new,
                p.file,
                p.ran_on.label()
            )
        };
        message.set(Some((true, text)));
        pending.set(None);
    };
    let edit = move |f: fn(&mut RanOn, String)| {
        move |v: String| {
            pending.update(|p| {
                if let Some(p) = p {
                    f(&mut p.ran_on, v)
                }
            })
        }
    };
    move || {
        let p = pending.get()?;
        let devices = custom.with(|c| all_hardware(c).map(|h| (h.key.clone(), h.name.clone())).collect());
        let model_list = models.with(|m| {
            model_presets()
                .iter()
                .chain(m.iter())
                .map(|x| (x.key.clone(), x.name.clone()))
                .collect()
        });
        let configs = quant_configs()
            .iter()
            .map(|c| (c.key.clone(), c.name.clone()))
            .collect();
        let mut counts: Vec<u32> = GPU_COUNTS.to_vec();
        if !counts.contains(&p.ran_on.gpus) {
            counts.push(p.ran_on.gpus);
        }
        let gpus = counts
            .into_iter()
            .map(|n| (n.to_string(), n.to_string()))
            .collect();
        let engines = Engine::ALL
            .map(|e| (e.key().to_owned(), engine_name(e).to_owned()))
            .to_vec();
        let r = &p.ran_on;
        Some(view! {
            <div class="serving-confirm" data-testid="serving-confirm">
                <p>{format!("{} run(s) from {} ({}). Which scenario did they run with?", p.runs.len(), p.file, p.tool.name())}</p>
                <div class="serving-grid">
                    {pick("ran-hardware", "Device", devices, r.hardware.clone(), edit(|r, v| r.hardware = v))}
                    {pick("ran-model", "Model", model_list, r.model.clone(), edit(|r, v| r.model = v))}
                    {pick("ran-config", "Precision config", configs, r.config.clone(), edit(|r, v| r.config = v))}
                    {pick("ran-gpus", "GPUs", gpus, r.gpus.to_string(), edit(|r, v| {
                        r.gpus = v.parse().unwrap_or(r.gpus);
                        if !r.gpus.is_multiple_of(r.experts.max(1)) { r.experts = 1; }
                    }))}
                    {pick("ran-engine", "Engine", engines, r.engine.key().to_owned(), edit(|r, v| r.engine = Engine::parse(&v).unwrap_or(r.engine)))}
                </div>
                <div class="row">
                    <button type="button" data-testid="serving-confirm-button" on:click=confirm>"Add runs"</button>
                    <button type="button" data-testid="serving-cancel" on:click=move |_| pending.set(None)>"Cancel"</button>
                </div>
            </div>
        })
    }
}

/// The runs of the view's scenario with their error (`serving-measured`) and the notes of their
/// comparisons, then the count of runs of other scenarios (`serving-elsewhere`), each with a button opening
/// its scenario.
#[component]
fn KeptRuns() -> impl IntoView {
    let app = use_app();
    let (scenario, state) = (app.scenario, app.serving);
    let table = move || {
        let rows: Vec<MeasuredRow> = state.compared.with(|c| c.rows.clone());
        let notes: Vec<String> = rows
            .iter()
            .filter_map(|r| r.comparison.as_ref().ok())
            .flat_map(|c| c.notes.iter().cloned())
            .collect();
        (!rows.is_empty()).then(|| view! {
            <table data-testid="serving-measured">
                <caption>{move || format!("Measured ÷ simulated with each run's client, load and mean ISL/OSL · {}",
                    state.key.with(|k| k.as_ref().map(|k| k.context()).unwrap_or_default()))}</caption>
                <thead><tr>
                    <th>"Run"</th><th>"Config"</th><th>"Load"</th><th class="num">"ISL/OSL"</th>
                    <th class="num">"TTFT"</th><th class="num">"÷ pred."</th>
                    <th class="num">"TPOT"</th><th class="num">"÷ pred."</th>
                    <th class="num">"out tok/s/GPU"</th><th class="num">"÷ pred."</th>
                    <th>"Measured ÷ simulated by statistic"</th><th>"On chart"</th>
                </tr></thead>
                <tbody>{rows.into_iter().map(measured_row).collect_view()}</tbody>
            </table>
            {notes.into_iter().map(|n| view! { <p class="hint">{n}</p> }).collect_view()}
        })
    };
    let open = move |to: RanOn| scenario.update(|s| to.apply(s));
    let elsewhere = move || {
        let groups: Vec<Elsewhere> = state.compared.with(|c| c.elsewhere.clone());
        let count: usize = groups.iter().map(|e| e.runs).sum();
        (count > 0).then(|| view! {
            <div class="measured-note" data-testid="serving-elsewhere" data-count=count.to_string()>
                {format!("{count} measured run(s) ran with another scenario: not drawn or compared here.")}
                <ul>
                    {groups.into_iter().map(|e| {
                        let to = e.ran_on.clone();
                        view! {
                            <li>
                                {format!("{} run(s) on {}: {} ", e.runs, e.ran_on.label(), e.why)}
                                <button type="button" class="link" on:click=move |_| open(to.clone())>"Open this scenario"</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </div>
        })
    };
    view! { {table} {elsewhere} }
}

/// Import (`serving-file`, or drop a file on the box; `data-runs` = runs kept), the confirmation of the
/// scenario a file ran with ([`ConfirmRuns`]), the result or core's parse error naming the field
/// (`serving-import-message`, `data-ok`; nothing kept is lost, and another scenario clears an error), and the
/// kept runs ([`KeptRuns`]).
#[component]
pub fn ServingImport() -> impl IntoView {
    let app = use_app();
    let (scenario, runs) = (app.scenario, app.serving.runs);
    let pending = RwSignal::new(None::<Pending>);
    let message = RwSignal::new(None::<(bool, String)>);
    // An import error is about the file and the scenario it was read for: another scenario clears it.
    let ran_on = Memo::new(move |_| scenario.with(RanOn::of));
    Effect::watch(
        move || ran_on.get(),
        move |_, _, _| {
            message.update(|m| {
                if m.as_ref().is_some_and(|(ok, _)| !ok) {
                    *m = None;
                }
            });
        },
        false,
    );
    let take = move |name: String, text: String| match scenario.with_untracked(|s| read(&name, &text, s)) {
        Ok(p) => {
            message.set(None);
            pending.set(Some(p));
        }
        Err(e) => {
            pending.set(None);
            message.set(Some((false, format!("Not imported: {name}: {e}"))));
        }
    };
    let read_file = move |file: web_sys::File| {
        // Refused from its size alone, before a byte is read: nothing kept changes.
        if let Err(e) = check_bench_size(file.size() as u64) {
            pending.set(None);
            message.set(Some((false, format!("Not imported: {}: {e}", file.name()))));
            return;
        }
        leptos::task::spawn_local(async move {
            match browser::read_file_text(file).await {
                Ok((name, text)) => take(name, text),
                Err(e) => message.set(Some((false, e.to_string()))),
            }
        });
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            read_file(file);
        }
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(file) = ev.data_transfer().and_then(|d| d.files()).and_then(|f| f.get(0)) {
            read_file(file);
        }
    };
    let clear = move |_| {
        if window()
            .confirm_with_message("Remove every imported serving run from this browser?")
            .unwrap_or(false)
        {
            runs.set(Vec::new());
            message.set(Some((true, "Measured serving runs removed.".to_owned())));
        }
    };
    view! {
        <div class="serving-import" data-testid="serving-import" data-runs=move || runs.with(Vec::len).to_string()
            on:dragover=move |ev: leptos::ev::DragEvent| ev.prevent_default()
            on:drop=on_drop>
            <h3>"Measured serving runs"</h3>
            <p class="hint">"Choose or drop a "<code>"vllm bench serve --save-result"</code>" JSON, SGLang "
                <code>"bench_serving"</code>" JSONL, AIPerf "<code>"profile_export_aiperf.json"</code>", "
                <code>"vllm bench sweep"</code>" summary.csv, InferenceX "<code>"agg_bmk.json"</code>" rows or a CSV "
                "(concurrency, ttft_ms, tpot_ms, output_tokens_per_s, gpus), up to "
                {(roofline_core::MAX_BENCH_FILE_BYTES >> 20).to_string()}" MiB. "
                "Each run is compared only with the scenario it ran with, simulated with the run's own client."</p>
            <div class="row">
                <label class="file-button">
                    "Choose file… "
                    <input type="file" accept=".json,.jsonl,.csv,.txt,application/json,text/csv" data-testid="serving-file" on:change=on_file />
                </label>
                <button type="button" data-testid="serving-clear" on:click=clear disabled=move || runs.with(Vec::is_empty)>
                    {move || format!("Remove {} run(s)", runs.with(Vec::len))}
                </button>
            </div>
            <ConfirmRuns pending=pending message=message />
            {move || message.get().map(|(ok, m)| view! {
                <p class=if ok { "hint" } else { "error" } role="status" data-testid="serving-import-message"
                    data-ok=ok.to_string()>{m}</p>
            })}
            <KeptRuns />
        </div>
    }
}
