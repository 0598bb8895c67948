//! Memory fit as a bar: one GPU's weights and KV cache against its memory, with the headroom or how far over.

use leptos::prelude::*;
use roofline_core::{Error, ModelAnalysis, memory_fit};

use crate::format;

/// `data-testid="memory-bar"` (`data-fits` `true`/`false`, `data-gpus`, class `over` and red when it does not
/// fit), per GPU when the step is split over several:
/// segments `memory-weights` and `memory-kv` (widths are shares of the larger of need and capacity), the
/// capacity line, and `memory-headroom` saying how much is left or how much is missing. Activations and
/// workspace are not modelled, and the caption says so.
#[component]
pub fn MemoryBar(
    /// The analysis, or why there is none.
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
) -> impl IntoView {
    let fit = Memo::new(move |_| analysis.with(|a| a.as_ref().ok().map(memory_fit)));
    let pct = |share: f64| format!("width:{:.2}%", (share * 100.0).clamp(0.0, 100.0));
    move || {
        fit.get().map(|f| {
            let headroom = if f.fits {
                format!("{} free", format::capacity(f.headroom_bytes))
            } else {
                format!("does not fit: {} over", format::capacity(-f.headroom_bytes))
            };
            let per_gpu = if f.gpus > 1 { format!(" per GPU (of {})", f.gpus) } else { String::new() };
            let capacity_left = format!("left:{:.2}%", (f.capacity_share * 100.0).clamp(0.0, 100.0));
            view! {
                <div class="memory-bar" class:over=!f.fits data-testid="memory-bar" data-fits=f.fits.to_string() data-gpus=f.gpus.to_string()>
                    <div class="memory-track" role="img"
                        aria-label=format!("weights {}, KV cache {}, device {}; {headroom}",
                            format::capacity(f.weight_bytes), format::capacity(f.kv_cache_bytes), format::capacity(f.capacity_bytes))>
                        <span class="seg weights" data-testid="memory-weights" style=pct(f.weight_share)></span>
                        <span class="seg kv" data-testid="memory-kv" style=pct(f.kv_share)></span>
                        <span class="capacity-line" style=capacity_left></span>
                    </div>
                    <div class="memory-legend">
                        <span><i class="sw weights"></i>{format!("weights {}", format::capacity(f.weight_bytes))}</span>
                        <span><i class="sw kv"></i>{format!("KV cache {}", format::capacity(f.kv_cache_bytes))}</span>
                        <span>{format!("device {}{per_gpu}", format::capacity(f.capacity_bytes))}</span>
                        <strong data-testid="memory-headroom">{headroom}</strong>
                        <span class="hint">"activations and workspace not modelled"</span>
                    </div>
                </div>
            }
        })
    }
}
