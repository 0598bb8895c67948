//! Memory fit as a bar: one GPU's weights, the activations its engine reserves and its KV cache against the
//! memory the device reports and the engine's usable share, with the headroom or how far over.

use leptos::prelude::*;
use roofline_core::{Error, MemoryFraction, ModelAnalysis, memory_fit};

use crate::format;

/// The engine rule in words, e.g. `vLLM gpu_memory_utilization 0.92`.
fn rule_text(fraction: MemoryFraction) -> String {
    match fraction {
        MemoryFraction::OfCapacity(f) => format!("vLLM gpu_memory_utilization {f}"),
        MemoryFraction::StaticOfCapacity(f) => format!("SGLang mem_fraction_static {f}"),
        MemoryFraction::OfFree(f) => format!("TensorRT-LLM free_gpu_memory_fraction {f}"),
    }
}

/// `data-testid="memory-bar"` (`data-fits` `true`/`false`, `data-gpus`, `data-capacity` and `data-usable` in
/// bytes, class `over` and red when it does not fit), per GPU when the step is split over several: segments
/// `memory-weights`, `memory-activations` and `memory-kv` (widths are shares of the larger of need and
/// capacity), the usable line (the engine's share) and the capacity line, the capacity in GiB as the device
/// reports it, and `memory-headroom` saying how much of the usable memory is left or how much is missing.
#[component]
pub fn MemoryBar(
    /// The analysis, or why there is none.
    #[prop(into)]
    analysis: Signal<Result<ModelAnalysis, Error>>,
) -> impl IntoView {
    let fit =
        Memo::new(move |_| analysis.with(|a| a.as_ref().ok().map(|a| (memory_fit(a), a.corrections.memory))));
    let pct = |share: f64| format!("width:{:.2}%", (share * 100.0).clamp(0.0, 100.0));
    let left = |share: f64| format!("left:{:.2}%", (share * 100.0).clamp(0.0, 100.0));
    move || {
        fit.get().map(|(f, fraction)| {
            let headroom = if f.fits {
                format!("{} free", format::capacity(f.headroom_bytes))
            } else {
                format!("does not fit: {} over", format::capacity(-f.headroom_bytes))
            };
            let per_gpu = if f.gpus > 1 { format!(" per GPU (of {})", f.gpus) } else { String::new() };
            view! {
                <div class="memory-bar" class:over=!f.fits data-testid="memory-bar" data-fits=f.fits.to_string()
                    data-gpus=f.gpus.to_string() data-capacity=f.capacity_bytes.to_string() data-usable=f.usable_bytes.to_string()>
                    <div class="memory-track" role="img"
                        aria-label=format!("weights {}, activations {}, KV cache {}, usable {} of {}; {headroom}",
                            format::capacity(f.weight_bytes), format::capacity(f.activation_bytes), format::capacity(f.kv_cache_bytes),
                            format::capacity(f.usable_bytes), format::capacity(f.capacity_bytes))>
                        <span class="seg weights" data-testid="memory-weights" style=pct(f.weight_share)></span>
                        <span class="seg activations" data-testid="memory-activations" style=pct(f.activation_share)></span>
                        <span class="seg kv" data-testid="memory-kv" style=pct(f.kv_share)></span>
                        <span class="usable-line" style=left(f.usable_share)></span>
                        <span class="capacity-line" style=left(f.capacity_share)></span>
                    </div>
                    <div class="memory-legend">
                        <span><i class="sw weights"></i>{format!("weights {}", format::capacity(f.weight_bytes))}</span>
                        <span><i class="sw activations"></i>{format!("activations {} (the engine's profiling step)", format::capacity(f.activation_bytes))}</span>
                        <span><i class="sw kv"></i>{format!("KV cache {}", format::capacity(f.kv_cache_bytes))}</span>
                        <span data-testid="memory-usable">{format!("usable {} = {} of the {} the device reports{per_gpu}",
                            format::capacity(f.usable_bytes), rule_text(fraction), format::capacity(f.capacity_bytes))}</span>
                        <strong data-testid="memory-headroom">{headroom}</strong>
                    </div>
                </div>
            }
        })
    }
}
