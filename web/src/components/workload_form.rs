//! Model, precision config, GPU count, phase, context, batch, prediction mode and corrections.

use leptos::prelude::*;
use roofline_core::{Engine, Mode, ModelConfig, model_presets, quant_configs};

use crate::calibration::{mode_explanation, mode_title};
use crate::models::resolve_model;
use crate::presets::GPU_COUNTS;
use crate::scenario::{MEMORY_FRACTION_RANGE, Scenario};
use crate::sliders::{
    BATCH_RANGE, CONTEXT_RANGE, RangeError, log_slider_position, log_slider_value, parse_in_range,
};
use crate::state::use_app;

/// A log-scale slider with an exact number input beside it, both editing one integer of the scenario.
#[component]
fn LogSlider(
    /// Label text.
    label: &'static str,
    /// Test id of the number input (the slider gets the same id with `-slider`).
    testid: &'static str,
    /// Allowed range.
    range: (u64, u64),
    /// The scenario.
    scenario: RwSignal<Scenario>,
    /// Reads the value.
    get: fn(&Scenario) -> u64,
    /// Writes the value.
    set: fn(&mut Scenario, u64),
) -> impl IntoView {
    let value = move || scenario.with(get);
    let max = log_slider_position(range.1, range);
    let on_slide = move |ev| {
        if let Ok(pos) = event_target_value(&ev).parse::<f64>() {
            scenario.update(|s| set(s, log_slider_value(pos, range)));
        }
    };
    let invalid = RwSignal::new(None::<RangeError>);
    let on_number = move |ev| match parse_in_range(&event_target_value(&ev), range.0, range.1) {
        Ok(v) => {
            invalid.set(None);
            scenario.update(|s| set(s, v));
        }
        Err(reason) => invalid.set(Some(reason)),
    };
    view! {
        <div class="slider">
            <label for=testid>{label}</label>
            <input
                type="range"
                min="0"
                max=max.to_string()
                step="1"
                aria-label=format!("{label} (log scale)")
                data-testid=format!("{testid}-slider")
                prop:value=move || log_slider_position(value(), range).to_string()
                on:input=on_slide
            />
            <input
                id=testid
                type="number"
                min=range.0.to_string()
                max=range.1.to_string()
                data-testid=testid
                prop:value=move || value().to_string()
                aria-invalid=move || invalid.with(Option::is_some).to_string()
                on:change=on_number
            />
            {move || invalid.get().map(|r| view! {
                <span class="error invalid" role="alert" data-testid=format!("{testid}-invalid")>
                    {format!("Invalid: {r}; still showing {}", value())}
                </span>
            })}
        </div>
    }
}

/// The prediction mode: one radio per mode (`data-value` = its name) with its one-line meaning, in a group
/// `data-testid="mode-select"` whose `data-value` is the scenario's mode. A mode the device lacks (no
/// calibration; no datasheet for a measured-only device) is disabled and says why.
#[component]
fn ModeSelect() -> impl IntoView {
    let app = use_app();
    let (scenario, specs) = (app.scenario, app.device.specs);
    let option = move |mode: Mode| {
        let why_not = Memo::new(move |_| specs.with(|d| d.unavailable(mode).map(|why| why.to_string())));
        view! {
            <label class="check mode-option" class:unsupported=move || why_not.with(Option::is_some)
                title=move || why_not.get().unwrap_or_default()>
                <input
                    type="radio"
                    name="mode"
                    value=mode.name()
                    data-value=mode.name()
                    prop:checked=move || scenario.with(|s| s.corrections.mode == mode)
                    disabled=move || why_not.with(Option::is_some)
                    on:change=move |_| scenario.update(|s| s.corrections.mode = mode)
                />
                <strong>{mode_title(mode)}</strong>
                <small class="hint">{move || why_not.get().unwrap_or_else(|| mode_explanation(mode).to_owned())}</small>
            </label>
        }
    };
    view! {
        <div class="field modes" role="radiogroup" aria-label="Prediction mode" data-testid="mode-select"
            data-value=move || scenario.with(|s| s.corrections.mode.name())>
            <span>"Mode"</span>
            {Mode::ALL.into_iter().map(option).collect_view()}
        </div>
    }
}

/// A labelled `<select>` (`testid`, its id too, and `title` when not empty) offering `options`, showing
/// `get` of the scenario; a choice is written with `set`, given the option's value.
fn field_select(
    label: &'static str,
    testid: &'static str,
    title: &'static str,
    options: impl IntoView + 'static,
    get: fn(&Scenario) -> String,
    set: fn(&mut Scenario, String),
) -> impl IntoView {
    let scenario = use_app().scenario;
    view! {
        <div class="field">
            <label for=testid>{label}</label>
            <select
                id=testid
                data-testid=testid
                title=(!title.is_empty()).then_some(title)
                prop:value=move || scenario.with(get)
                on:change=move |ev| scenario.update(|s| set(s, event_target_value(&ev)))
            >
                {options}
            </select>
        </div>
    }
}

/// The model (`model-select`: the presets, then the imported models in `optgroup[data-testid=imported-models]`).
#[component]
fn ModelSelect() -> impl IntoView {
    let app = use_app();
    let (scenario, models) = (app.scenario, app.models);
    let option = move |m: &ModelConfig| {
        let key = m.key.clone();
        view! {
            <option value=m.key.clone() selected=move || scenario.with(|s| s.model == key)>{m.name.clone()}</option>
        }
    };
    let presets = model_presets().iter().map(option).collect_view();
    let imported = move || {
        models.with(|list| {
            (!list.is_empty()).then(|| {
                view! { <optgroup label="Imported" data-testid="imported-models">{list.iter().map(option).collect_view()}</optgroup> }
            })
        })
    };
    field_select(
        "Model",
        "model-select",
        "",
        view! { {presets} {imported} },
        |s| s.model.clone(),
        |s, v| s.model = v,
    )
}

/// The precision config (`config-select`: the model's own checkpoint precisions where it has them, then the
/// table; configs the device cannot run are marked).
#[component]
fn ConfigSelect() -> impl IntoView {
    let app = use_app();
    let (scenario, models, hardware) = (app.scenario, app.models, app.device.hardware);
    // The options change with the model and device only: another input rebuilds none of them.
    let model = Memo::new(move |_| scenario.with(|s| s.model.clone()));
    let configs = move || {
        hardware.with(|hw| {
            // The model's own checkpoint precisions first, where it has them (an imported config.json's
            // quantization_config, gpt-oss, DeepSeek, Kimi).
            let checkpoint = model.with(|model| {
                models.with(|m| resolve_model(model, m).ok().and_then(|m| m.checkpoint.clone()))
            });
            checkpoint
                .iter()
                .chain(quant_configs())
                .map(|c| {
                    let key = c.key.clone();
                    let text = match c.check_support(hw) {
                        Ok(()) => c.name.clone(),
                        Err(_) => format!("{} — unsupported", c.name),
                    };
                    view! {
                        <option value=c.key.clone() selected=move || scenario.with(|s| s.config == key)>{text}</option>
                    }
                })
                .collect_view()
        })
    };
    field_select(
        "Precision config",
        "config-select",
        "",
        configs,
        |s| s.config.clone(),
        |s, v| s.config = v,
    )
}

/// The serving engine (`engine-select`: any, vLLM, SGLang or TensorRT-LLM, whose quantization support the
/// advice keeps to).
#[component]
fn EngineSelect() -> impl IntoView {
    let scenario = use_app().scenario;
    let options = std::iter::once(None)
        .chain(Engine::ALL.into_iter().map(Some))
        .map(|engine| {
            let value = engine.map_or("any", Engine::key);
            let text = engine.map_or("any (vLLM, SGLang, TensorRT-LLM)", Engine::name);
            view! {
                <option value=value selected=move || scenario.with(|s| s.engine == engine)>{text}</option>
            }
        })
        .collect_view();
    field_select(
        "Serving engine",
        "engine-select",
        "The advice keeps to the configs this engine runs on the device (its documented quantization support)",
        options,
        |s| s.engine.map_or("any", Engine::key).to_owned(),
        |s, v| s.engine = Engine::parse(&v).ok(),
    )
}

/// The GPU count (`gpus-select`: tensor parallel over 1, 2, 4 or 8 GPUs) and, for MoE models, the
/// expert-parallel degree (`ep-select`: divisors of the GPU count).
#[component]
fn GpuSelects() -> impl IntoView {
    let app = use_app();
    let (scenario, models) = (app.scenario, app.models);
    // Expert parallelism only applies to mixture-of-experts models; its degrees divide the GPU count.
    let is_moe = Memo::new(move |_| {
        scenario.with(|s| models.with(|m| resolve_model(&s.model, m).is_ok_and(|m| m.moe.is_some())))
    });
    let expert_options = move || {
        let gpus = scenario.with(|s| s.gpus);
        GPU_COUNTS
            .iter()
            .copied()
            .filter(|n| gpus.is_multiple_of(*n))
            .map(|n| {
                view! {
                    <option value=n.to_string() selected=move || scenario.with(|s| s.experts == n)>
                        {if n == 1 { "off (experts split like the FFN)".to_owned() } else { format!("experts over {n} GPUs") }}
                    </option>
                }
            })
            .collect_view()
    };
    let gpu_options = GPU_COUNTS
        .into_iter()
        .map(|n| {
            view! {
                <option value=n.to_string() selected=move || scenario.with(|s| s.gpus == n)>
                    {if n == 1 { "1 GPU".to_owned() } else { format!("{n} GPUs (tensor parallel)") }}
                </option>
            }
        })
        .collect_view();
    view! {
        {field_select("GPUs", "gpus-select", "", gpu_options, |s| s.gpus.to_string(), |s, v| {
            if let Ok(n) = v.parse() {
                s.set_gpus(n);
            }
        })}
        {move || is_moe.get().then(|| {
            field_select("Expert parallel", "ep-select", "", expert_options, |s| s.experts.to_string(), |s, v| {
                if let Ok(n) = v.parse() {
                    s.experts = n;
                }
            })
        })}
    }
}

/// The engine's memory share (`memory-fraction`, vLLM's `gpu_memory_utilization`, 0.92 by default; an
/// invalid one is marked with why, `memory-fraction-invalid`).
#[component]
fn MemoryFraction() -> impl IntoView {
    let scenario = use_app().scenario;
    let invalid = RwSignal::new(None::<String>);
    let on_change = move |ev| {
        let (lo, hi) = MEMORY_FRACTION_RANGE;
        match event_target_value(&ev).trim().parse::<f64>() {
            Ok(f) if (lo..=hi).contains(&f) => {
                invalid.set(None);
                scenario.update(|s| s.memory_fraction = f);
            }
            _ => invalid.set(Some(format!(
                "Invalid: a fraction from {lo} to {hi}; still using {}",
                scenario.with_untracked(|s| s.memory_fraction)
            ))),
        }
    };
    view! {
        <div class="field">
            <label for="memory-fraction">"Engine memory (vLLM gpu_memory_utilization)"</label>
            <input id="memory-fraction" type="number" step="0.01" min=MEMORY_FRACTION_RANGE.0.to_string()
                max=MEMORY_FRACTION_RANGE.1.to_string() data-testid="memory-fraction"
                prop:value=move || scenario.with(|s| s.memory_fraction.to_string())
                aria-invalid=move || invalid.with(Option::is_some).to_string()
                on:change=on_change />
            <small class="hint">"Share of the memory the device reports that the engine may use for weights, activations and the KV cache: vLLM's gpu_memory_utilization (default 0.92), in the Serving view too when its engine is vLLM (SGLang and TensorRT-LLM keep their own rules)."</small>
            {move || invalid.get().map(|r| view! {
                <span class="error invalid" role="alert" data-testid="memory-fraction-invalid">{r}</span>
            })}
        </div>
    }
}

/// The workload: model, precision config, serving engine, GPUs and expert parallelism, prefill/decode,
/// context and batch (log sliders with exact inputs `context-input`, `batch-input`), the engine's memory
/// share, the prediction mode (`mode-select`) and the corrections added on top of it.
#[component]
pub fn WorkloadForm() -> impl IntoView {
    let scenario = use_app().scenario;
    let phase_button = move |prefill: bool, text: &'static str| {
        view! {
            <button
                type="button"
                aria-pressed=move || (scenario.with(|s| s.prefill) == prefill).to_string()
                on:click=move |_| scenario.update(|s| s.prefill = prefill)
            >
                {text}
            </button>
        }
    };
    let toggle = move |text: &'static str, get: fn(&Scenario) -> bool, set: fn(&mut Scenario, bool)| {
        view! {
            <label class="check">
                <input
                    type="checkbox"
                    prop:checked=move || scenario.with(get)
                    on:change=move |ev| scenario.update(|s| set(s, event_target_checked(&ev)))
                />
                {text}
            </label>
        }
    };
    view! {
        <fieldset class="workload">
            <legend>"Workload"</legend>
            <ModelSelect />
            <ConfigSelect />
            <EngineSelect />
            <GpuSelects />
            <div class="field" role="group" aria-label="Phase">
                <span>"Phase"</span>
                <div class="segmented" data-testid="phase">
                    {phase_button(true, "Prefill")}
                    {phase_button(false, "Decode")}
                </div>
            </div>
            <LogSlider label="Context (tokens)" testid="context-input" range=CONTEXT_RANGE scenario=scenario
                get=|s| s.context set=|s, v| s.context = v />
            <LogSlider label="Batch" testid="batch-input" range=BATCH_RANGE scenario=scenario
                get=|s| s.batch set=|s, v| s.batch = v />
            <MemoryFraction />
            <ModeSelect />
            <div class="field" role="group" aria-label="Corrections">
                <span>"Corrections added"</span>
                {toggle("Kernel launch floor", |s| s.corrections.launch_floor, |s, v| s.corrections.launch_floor = v)}
                {toggle("Wave quantization", |s| s.corrections.wave_quantization, |s, v| s.corrections.wave_quantization = v)}
            </div>
        </fieldset>
    }
}
