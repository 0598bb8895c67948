//! The quantization advisor's ranked candidates for the current scenario.

use leptos::prelude::*;
use roofline_core::{Advice, Error};

use crate::format;

/// Ranked precision configs from `roofline_core::advise_model` with speedup, memory, break-even batch and
/// the reason for each; configs the device cannot run are listed as skipped with why.
#[component]
pub fn AdvisorTab(
    /// The advice, or why there is none.
    #[prop(into)]
    advice: Signal<Result<Advice, Error>>,
) -> impl IntoView {
    move || match advice.get() {
        Err(e) => view! { <p class="error">{format::failure(&e)}</p> }.into_any(),
        Ok(a) => {
            let candidates = a
                .candidates
                .into_iter()
                .map(|c| {
                    let break_even = c.break_even_batch.map_or("—".to_owned(), |b| format!("B ≥ {b}"));
                    view! {
                        <li class="candidate" data-config=c.config.clone()>
                            <div class="candidate-head">
                                <strong>{c.name}</strong>
                                <span>{format!("{:.2}× vs baseline", c.speedup)}</span>
                                <span>{format::duration(c.time_s)}</span>
                                <span class=format!("bound {}", c.bound.name())>{c.bound.name()}</span>
                            </div>
                            <div class="hint">
                                {format!("memory {} (saves {}) · {} · break-even {break_even}",
                                    format::capacity(c.memory_bytes), format::capacity(c.memory_saved_bytes),
                                    if c.fits_in_memory { "fits" } else { "does not fit" })}
                            </div>
                            <p>{c.reason}</p>
                            {c.caveats.into_iter().map(|w| view! { <p class="hint">"⚠ " {w}</p> }).collect_view()}
                        </li>
                    }
                })
                .collect_view();
            let skipped = a
                .skipped
                .into_iter()
                .map(|s| view! { <li><code>{s.config}</code>": "{s.reason}</li> })
                .collect_view();
            view! {
                <div class="advisor">
                    <p class="hint">{format!("Baseline {}, current {}", a.baseline, a.current)}</p>
                    {a.warnings.into_iter().map(|w| view! { <p class="warning">{w}</p> }).collect_view()}
                    <ol class="candidates">{candidates}</ol>
                    <details>
                        <summary>"Skipped configs"</summary>
                        <ul class="hint">{skipped}</ul>
                    </details>
                </div>
            }
            .into_any()
        }
    }
}
