//! Headline numbers of the analysed model step.

use leptos::prelude::*;
use roofline_core::{Error, ModelAnalysis};

use crate::format;

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
) -> impl IntoView {
    let cell = Memo::new(move |_| analysis.with(|a| a.as_ref().map(field).unwrap_or_default()));
    view! {
        <div class="stat">
            <span class="stat-label">{label}</span>
            <span
                class="stat-value"
                data-testid=(!testid.is_empty()).then_some(testid)
                data-value=move || cell.with(|c| c.1.clone())
            >
                {move || cell.with(|c| c.0.clone())}
            </span>
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

/// The summary strip: aggregate AI, FLOPs, bytes, step time, TTFT, TPOT (`summary-tpot`, seconds),
/// tokens/s (`summary-tokens-per-s`), bound, weight and KV bits, and memory fit (`summary-memory-fit`,
/// `true`/`false`). An analysis that cannot run shows why (`analysis-error`) in place of the numbers.
#[component]
pub fn SummaryStrip(
    /// The analysis, or why there is none.
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
) -> impl IntoView {
    let error = Memo::new(move |_| analysis.with(|a| a.as_ref().err().map(format::failure)));
    let stat = move |label: &'static str, testid: &'static str, field: Field| {
        view! { <Stat label=label analysis=analysis field=field testid=testid /> }
    };
    view! {
        <div class="summary-box">
            {move || error.get().map(|e| view! { <div class="error-strip" data-testid="analysis-error">{e}</div> })}
            <div class="summary" class:hidden=move || error.with(Option::is_some)>
                {stat("Aggregate AI", "", |a| (format!("{} FLOP/B", format::intensity(a.aggregate_arithmetic_intensity)), a.aggregate_arithmetic_intensity.to_string()))}
                {stat("Work", "", |a| (format::flops(a.total_flops), a.total_flops.to_string()))}
                {stat("Traffic", "", |a| (format::bytes(a.total_bytes), a.total_bytes.to_string()))}
                {stat("Step time", "", |a| (format::duration(a.total_time_s), a.total_time_s.to_string()))}
                {stat("TTFT", "summary-ttft", |a| optional_duration(a.ttft_s))}
                {stat("TPOT", "summary-tpot", |a| optional_duration(a.tpot_s))}
                {stat("Throughput", "summary-tokens-per-s", |a| (format::tokens_per_s(a.tokens_per_s), a.tokens_per_s.to_string()))}
                {stat("Bound", "summary-bound", |a| (format!("{} ({} mem)", a.bound.name(), format::percent(a.memory_bound_fraction)), a.bound.name().to_owned()))}
                {stat("W bits/elem", "", |a| (format::bits(a.weight_bits_per_element), a.weight_bits_per_element.to_string()))}
                {stat("KV bits/elem", "", |a| (format::bits(a.kv_bits_per_element), a.kv_bits_per_element.to_string()))}
                {stat("Memory", "summary-memory-fit", |a| (
                    format!("{} of {} — {}", format::capacity(a.memory_required_bytes), format::capacity(a.memory_capacity_bytes),
                        if a.fits_in_memory { "fits" } else { "does not fit" }),
                    a.fits_in_memory.to_string(),
                ))}
            </div>
        </div>
    }
}
