//! The table under the Pareto chart: per precision config, the best point under the SLA over the GPU counts
//! allowed and the layout it is on, the most output per GPU at all, and how many requests fit; whether the
//! engine serves it and which unmeasured ceilings its ranking rests on; then the configs the device cannot
//! run, with why.

use leptos::prelude::*;
use roofline_core::{Load, Percentile, ServingPoint, UnsupportedConfig, layout_name};

use crate::components::serving_form::metric_definition;
use crate::format;
use crate::palette::css;
use crate::serving::answer::ConfigRow;
use crate::summary::config_name;

/// The load column's text and value: the concurrency, or the rate.
fn load_cell(p: &ServingPoint) -> (String, f64) {
    match p.load {
        Load::Concurrency(n) => (n.to_string(), f64::from(n)),
        Load::Rate(r) => (format!("{}/s", format::number(r)), r),
    }
}

/// One number cell: the formatted text and its value in base units (`data-value`).
fn cell(testid: &'static str, text: String, value: f64) -> impl IntoView {
    view! { <td class="num" data-testid=testid data-value=value.to_string()>{text}</td> }
}

/// A config's row (`tr[data-config=<key>]`, `data-recommended`, `data-served`, `data-gpus` = the layout's
/// GPUs): the layout (`layout`), best point under the SLA (`best-load`, `best-throughput`, and at statistic
/// `at` `best-tpu`, `best-tpot`, `best-ttft`; or `why-none`), the most output per GPU (`top-throughput` at `top-load`), the
/// sequences that fit (`max-fit`) and one GPU's weights and KV cache on that layout. A config the engine does
/// not serve says so (`not-served`, the reason as its tooltip); one whose ranking rests on unmeasured
/// ceilings is marked `caveat` (the ceilings as its tooltip).
fn row_view(row: ConfigRow, at: Percentile) -> impl IntoView {
    let best = match &row.best {
        Some(p) => {
            let (load, value) = load_cell(p);
            let (tpu, tpot, ttft) = (p.tokens_per_s_per_user_at(at), p.tpot_at(at), p.ttft_at(at));
            view! {
                {cell("best-load", load, value)}
                {cell("best-throughput", format::number(p.output_tokens_per_s_per_gpu), p.output_tokens_per_s_per_gpu)}
                {cell("best-tpu", format::number(tpu), tpu)}
                {cell("best-tpot", format::duration(tpot), tpot)}
                {cell("best-ttft", format::duration(ttft), ttft)}
            }
            .into_any()
        }
        None => view! {
            <td colspan="5" class="why-none" data-testid="why-none">{row.why_none.clone().unwrap_or_default()}</td>
        }
        .into_any(),
    };
    let top = match &row.top {
        Some(p) => {
            let (load, value) = load_cell(p);
            view! {
                {cell("top-throughput", format::number(p.output_tokens_per_s_per_gpu), p.output_tokens_per_s_per_gpu)}
                {cell("top-load", load, value)}
            }
            .into_any()
        }
        None => view! { <td class="num">"—"</td><td class="num">"—"</td> }.into_any(),
    };
    let (max_fit, engine_max) = (row.fit.memory.max_sequences, row.fit.preset.in_flight.max_seqs);
    let fit = if engine_max < max_fit {
        format!("{max_fit} (engine runs {engine_max})")
    } else {
        max_fit.to_string()
    };
    let memory = format!(
        "{} + {}",
        format::capacity(row.fit.memory.weight_bytes),
        format::capacity(row.fit.memory.kv_cache_bytes)
    );
    view! {
        <tr data-config=row.config.clone() data-recommended=row.recommended.to_string() class:selected=row.recommended
            data-served=row.not_served.is_none().to_string() data-gpus=row.fit.gpus.to_string()>
            <td>
                <span class="swatch" style=format!("background:{}", css(row.color))></span>{row.name.clone()}
                {row.unmeasured.clone().map(|c| view! { " " <span class="caveat" data-testid="caveat" title=c.clone() tabindex="0" aria-label=c>"⚠"</span> })}
                {row.not_served.clone().map(|r| {
                    let title = r.clone();
                    view! { <div class="not-served hint" data-testid="not-served" title=title>{r}</div> }
                })}
            </td>
            <td data-testid="layout">{layout_name(&row.fit.parallelism)}</td>
            {best}
            {top}
            {cell("max-fit", fit, f64::from(max_fit))}
            <td class="num">{memory}</td>
        </tr>
    }
}

/// The per-config table (`serving-table`, captioned with the mode, device and workload) and the list of
/// configs the device cannot run (`serving-unsupported`, each `li[data-config]` with core's reason naming
/// the architecture). Column headers carry core's metric definitions as tooltips and name the statistic.
#[component]
pub fn ServingTable(
    /// One row per config that ran.
    #[prop(into)]
    rows: Signal<Vec<ConfigRow>>,
    /// The statistic the SLA and the latencies are read at.
    #[prop(into)]
    percentile: Signal<Percentile>,
    /// Configs the device cannot run.
    #[prop(into)]
    unsupported: Signal<Vec<UnsupportedConfig>>,
    /// Mode, device, model, GPUs, lengths and engine.
    #[prop(into)]
    context: Signal<String>,
) -> impl IntoView {
    let head = |text: &'static str, key: &'static str| {
        view! { <th class="num" title=metric_definition(key)>{text}</th> }
    };
    let at = move |text: &'static str, key: &'static str| {
        view! { <th class="num" title=metric_definition(key)>{move || format!("{} {text}", percentile.get().name())}</th> }
    };
    view! {
        <div class="serving-table">
            <table data-testid="serving-table">
                <caption>{move || format!("Per precision config · {}", context.get())}</caption>
                <thead>
                    <tr>
                        <th rowspan="2">"Config"</th>
                        <th rowspan="2">"GPUs"</th>
                        <th colspan="5">"Best under the SLA (most output tokens/s per GPU)"</th>
                        <th colspan="2">"Most output per GPU"</th>
                        <th rowspan="2" class="num" title=metric_definition("fits")>"Requests that fit"</th>
                        <th rowspan="2" class="num" title=metric_definition("memory_used_bytes_per_gpu")>"Weights + KV per GPU"</th>
                    </tr>
                    <tr>
                        {head("concurrency", "concurrency")}
                        {head("out tok/s/GPU", "output_tokens_per_s_per_gpu")}
                        {at("tok/s/user", "tokens_per_s_per_user")}
                        {at("TPOT", "tpot_s")}
                        {at("TTFT", "ttft_s")}
                        {head("out tok/s/GPU", "output_tokens_per_s_per_gpu")}
                        {head("at concurrency", "concurrency")}
                    </tr>
                </thead>
                <tbody>{move || {
                    let at = percentile.get();
                    rows.get().into_iter().map(|r| row_view(r, at)).collect_view()
                }}</tbody>
            </table>
            {move || unsupported.with(|u| (!u.is_empty()).then(|| view! {
                <details class="serving-unsupported" open=true>
                    <summary>{format!("{} config(s) this device cannot run", u.len())}</summary>
                    <ul data-testid="serving-unsupported">
                        {u.iter().map(|c| view! {
                            <li data-config=c.config.clone()><strong>{config_name(&c.config)}</strong>": "{c.reason.clone()}</li>
                        }).collect_view()}
                    </ul>
                </details>
            }))}
        </div>
    }
}
