//! Headline numbers of the analysed model step.

use leptos::prelude::*;
use roofline_core::{Error, ModelAnalysis};

use crate::format;

/// One summary cell; `value` is the raw base-unit value for tests (`data-value`).
#[component]
fn Stat(
    /// Caption.
    label: &'static str,
    /// Formatted text.
    text: String,
    /// Machine-readable value.
    value: String,
    /// Test id.
    #[prop(optional)]
    testid: &'static str,
) -> impl IntoView {
    view! {
        <div class="stat">
            <span class="stat-label">{label}</span>
            <span class="stat-value" data-testid=(!testid.is_empty()).then_some(testid) data-value=value>{text}</span>
        </div>
    }
}

/// The summary strip: aggregate AI, FLOPs, bytes, step time, TTFT, TPOT (`summary-tpot`, seconds),
/// tokens/s (`summary-tokens-per-s`), bound, weight and KV bits, and memory fit (`summary-memory-fit`,
/// `true`/`false`). An analysis that cannot run shows why (`analysis-error`).
#[component]
pub fn SummaryStrip(
    /// The analysis, or why there is none.
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
) -> impl IntoView {
    let opt = |v: Option<f64>| (v.map_or("—".to_owned(), format::duration), v.map_or(String::new(), |v| v.to_string()));
    move || match analysis.get() {
        Err(e) => view! {
            <div class="summary error-strip" data-testid="analysis-error">{format::failure(&e)}</div>
        }
        .into_any(),
        Ok(a) => {
            let (ttft, ttft_v) = opt(a.ttft_s);
            let (tpot, tpot_v) = opt(a.tpot_s);
            let fit = if a.fits_in_memory { "fits" } else { "does not fit" };
            view! {
                <div class="summary">
                    <Stat label="Aggregate AI" text=format!("{} FLOP/B", format::intensity(a.aggregate_arithmetic_intensity))
                        value=a.aggregate_arithmetic_intensity.to_string() />
                    <Stat label="Work" text=format::flops(a.total_flops) value=a.total_flops.to_string() />
                    <Stat label="Traffic" text=format::bytes(a.total_bytes) value=a.total_bytes.to_string() />
                    <Stat label="Step time" text=format::duration(a.total_time_s) value=a.total_time_s.to_string() />
                    <Stat label="TTFT" text=ttft value=ttft_v testid="summary-ttft" />
                    <Stat label="TPOT" text=tpot value=tpot_v testid="summary-tpot" />
                    <Stat label="Throughput" text=format::tokens_per_s(a.tokens_per_s) value=a.tokens_per_s.to_string()
                        testid="summary-tokens-per-s" />
                    <Stat label="Bound" text=format!("{} ({} mem)", a.bound.name(), format::percent(a.memory_bound_fraction))
                        value=a.bound.name().to_owned() testid="summary-bound" />
                    <Stat label="W bits/elem" text=format::bits(a.weight_bits_per_element) value=a.weight_bits_per_element.to_string() />
                    <Stat label="KV bits/elem" text=format::bits(a.kv_bits_per_element) value=a.kv_bits_per_element.to_string() />
                    <Stat label="Memory" text=format!("{} of {} — {fit}", format::capacity(a.memory_required_bytes), format::capacity(a.memory_capacity_bytes))
                        value=a.fits_in_memory.to_string() testid="summary-memory-fit" />
                </div>
            }
            .into_any()
        }
    }
}
