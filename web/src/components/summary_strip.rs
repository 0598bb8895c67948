//! Headline numbers of the analysed model step, with the mode and device they come from.

use leptos::prelude::*;
use roofline_core::{Error, HardwareSpec, Mode, ModelAnalysis};

use crate::calibration::mode_label;
use crate::components::MemoryBar;
use crate::format;
use crate::scenario::{CeilingValue, UsedCeiling};

/// Reads one field of the analysis: formatted text and raw base-unit value.
type Field = fn(&ModelAnalysis) -> (String, String);

/// One summary cell, built once and updated in place; `data-value` holds the raw base-unit value.
#[component]
fn Stat(
    /// Caption.
    label: &'static str,
    /// The analysis.
    analysis: Signal<Result<ModelAnalysis, Error>>,
    /// Text and raw value of this cell.
    field: Field,
    /// Test id.
    #[prop(optional)]
    testid: &'static str,
    /// Marks the value `does not fit` (`<testid>-fit`) when the step does not fit in device memory: a rate
    /// that cannot be reached on this device is not shown as achievable.
    #[prop(optional)]
    needs_fit: bool,
) -> impl IntoView {
    let cell = Memo::new(move |_| analysis.with(|a| a.as_ref().map(field).unwrap_or_default()));
    // Only a figure that is shown can be marked (TTFT in decode is `—`).
    let over = Memo::new(move |_| {
        needs_fit
            && analysis.with(|a| a.as_ref().is_ok_and(|a| !a.fits_in_memory))
            && cell.with(|c| !c.1.is_empty())
    });
    view! {
        <div class="stat" class:over=move || over.get()>
            <span class="stat-label">{label}</span>
            <span
                class="stat-value"
                data-testid=(!testid.is_empty()).then_some(testid)
                data-value=move || cell.with(|c| c.1.clone())
                data-fits=move || needs_fit.then(|| (!over.get()).to_string())
            >
                {move || cell.with(|c| c.0.clone())}
            </span>
            {move || over.get().then(|| view! {
                <span class="does-not-fit" data-testid=format!("{testid}-fit")>"does not fit"</span>
            })}
        </div>
    }
}

/// Text and raw value of an optional duration (TTFT in decode, TPOT in prefill are `—` and empty).
fn optional_duration(v: Option<f64>) -> (String, String) {
    (
        v.map_or("—".to_owned(), format::duration),
        v.map_or(String::new(), |v| v.to_string()),
    )
}

/// A reference ceiling's figure: `89.9 % of datasheet` or `5.00 µs per kernel`.
fn ceiling_value(v: CeilingValue) -> String {
    match v {
        CeilingValue::Fraction(f) => format!("{} of datasheet", format::percent(f)),
        CeilingValue::Seconds(s) => format!("{} per kernel", format::duration(s)),
    }
}

/// The reference ceilings behind the numbers (`reference-ceilings`), one row per figure: its value, whether
/// it is measured or derived (`ceiling-provenance`), and its basis (the source, or the rule).
fn ceilings_view(rows: Vec<UsedCeiling>) -> impl IntoView {
    let rows = rows
        .into_iter()
        .map(|r| {
            view! {
                <tr>
                    <th scope="row">{r.what.clone()}</th>
                    <td class="num">{ceiling_value(r.value)}</td>
                    <td class="provenance" data-testid="ceiling-provenance">{r.provenance()}</td>
                    <td class="hint">{r.basis.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <details class="ceilings" data-testid="reference-ceilings">
            <summary>"Reference ceilings used"</summary>
            <table><tbody>{rows}</tbody></table>
        </details>
    }
}

/// The summary strip under the mode badge (`mode-badge`, e.g. `reference · NVIDIA GB10`, `data-value` = the
/// mode) and, when the mode asked for cannot be had, why (`mode-notice`): aggregate AI, FLOPs, bytes, step
/// time, the step's launch overhead when there is one (`summary-launch`), TTFT, TPOT (`summary-tpot`,
/// seconds), tokens/s (`summary-tokens-per-s`), bound, weight and KV bits, GPUs (`summary-gpus`), weights
/// (`summary-weights`, the whole model's bytes), weights and KV cache per GPU (`summary-weights-per-gpu`,
/// `summary-kv-per-gpu`, bytes), the communication share of the step (`summary-communication`, a fraction;
/// 0 on one GPU) and memory fit per GPU (`summary-memory-fit`, `true`/`false`), the format of each module
/// (`summary-precisions`: attention, MLP, experts, router, embeddings, head); in reference mode the ceilings
/// used, each measured or derived, with its basis. An analysis that cannot run (an unsupported config, a GPU count the
/// model or device cannot take) shows core's reason (`analysis-error`) in place of the numbers.
#[component]
pub fn SummaryStrip(
    /// The analysis, or why there is none.
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
    /// The spec the analysis runs on.
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// Why the mode asked for is not the one shown, if it is not.
    #[prop(into)]
    notice: Signal<Option<String>>,
    /// The reference ceilings used (reference mode only).
    #[prop(into)]
    ceilings: Signal<Option<Vec<UsedCeiling>>>,
) -> impl IntoView {
    let error = Memo::new(move |_| analysis.with(|a| a.as_ref().err().map(format::failure)));
    let badge = Memo::new(move |_| hardware.with(|h| (Mode::of(h).name(), mode_label(h))));
    let has_launch =
        Memo::new(move |_| analysis.with(|a| a.as_ref().is_ok_and(|a| a.launch_overhead_s > 0.0)));
    let stat = move |label: &'static str, testid: &'static str, field: Field| {
        view! { <Stat label=label analysis=analysis field=field testid=testid /> }
    };
    let rate = move |label: &'static str, testid: &'static str, field: Field| {
        view! { <Stat label=label analysis=analysis field=field testid=testid needs_fit=true /> }
    };
    view! {
        <div class="summary-box">
            <div class="mode-line">
                <span class="badge mode" data-testid="mode-badge" data-value=move || badge.with(|b| b.0)>
                    {move || badge.with(|b| b.1.clone())}
                </span>
                {move || notice.get().map(|n| view! { <span class="warning" role="status" data-testid="mode-notice">{n}</span> })}
            </div>
            <div class="summary-area">
            {move || error.get().map(|e| view! { <div class="error-strip" data-testid="analysis-error">{e}</div> })}
            <div class="summary" class:hidden=move || error.with(Option::is_some)>
                {stat("Aggregate AI", "", |a| (format!("{} FLOP/B", format::intensity(a.aggregate_arithmetic_intensity)), a.aggregate_arithmetic_intensity.to_string()))}
                {stat("Work", "", |a| (format::flops(a.total_flops), a.total_flops.to_string()))}
                {stat("Traffic", "", |a| (format::bytes(a.total_bytes), a.total_bytes.to_string()))}
                {stat("Step time", "", |a| (format::duration(a.total_time_s), a.total_time_s.to_string()))}
                {move || has_launch.get().then(|| stat("Step launch", "summary-launch", |a| (format::duration(a.launch_overhead_s), a.launch_overhead_s.to_string())))}
                {rate("TTFT", "summary-ttft", |a| optional_duration(a.ttft_s))}
                {rate("TPOT", "summary-tpot", |a| optional_duration(a.tpot_s))}
                {rate("Throughput", "summary-tokens-per-s", |a| (format::tokens_per_s(a.tokens_per_s), a.tokens_per_s.to_string()))}
                {stat("Bound", "summary-bound", |a| (format!("{} ({} mem)", a.bound.name(), format::percent(a.memory_bound_fraction)), a.bound.name().to_owned()))}
                {stat("W bits/elem", "", |a| (format::bits(a.weight_bits_per_element), a.weight_bits_per_element.to_string()))}
                {stat("KV bits/elem", "", |a| (format::bits(a.kv_bits_per_element), a.kv_bits_per_element.to_string()))}
                {stat("GPUs", "summary-gpus", |a| (
                    if a.gpus == 1 { "1".to_owned() } else { format!("{} (tensor parallel)", a.gpus) },
                    a.gpus.to_string(),
                ))}
                {stat("Weights", "summary-weights", |a| (format::capacity(a.weight_bytes), a.weight_bytes.to_string()))}
                {stat("Weights per GPU", "summary-weights-per-gpu", |a| (format::capacity(a.weight_bytes_per_gpu), a.weight_bytes_per_gpu.to_string()))}
                {stat("KV cache per GPU", "summary-kv-per-gpu", |a| (format::capacity(a.kv_cache_bytes_per_gpu), a.kv_cache_bytes_per_gpu.to_string()))}
                {stat("Communication", "summary-communication", |a| (
                    format!("{} ({} of step)", format::duration(a.communication_time_s), format::percent(a.communication_fraction)),
                    a.communication_fraction.to_string(),
                ))}
                {stat("Memory per GPU", "summary-memory-fit", |a| (
                    format!("{} of {} — {}", format::capacity(a.memory_required_bytes), format::capacity(a.memory_capacity_bytes),
                        if a.fits_in_memory { "fits" } else { "does not fit" }),
                    a.fits_in_memory.to_string(),
                ))}
            </div>
            </div>
            {move || analysis.with(|a| a.as_ref().ok().map(|a| {
                let line = roofline_core::summarize_modules(&a.modules);
                view! { <p class="precisions" data-testid="summary-precisions">"Precisions: " {line}</p> }
            }))}
            <MemoryBar analysis=analysis />
            {move || ceilings.get().map(ceilings_view)}
        </div>
    }
}
