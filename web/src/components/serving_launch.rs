//! The commands that run the recommended operating point: the engine's server with the prediction's split,
//! limits, memory fraction and precisions, and `vllm bench serve` at its load, whose `--save-result` file
//! the import below compares with the prediction. Each argument's source is its tooltip.

use leptos::prelude::*;
use roofline_core::{LaunchCommand, ServingPoint, launch_plan};

use crate::state::use_app;

/// One command as a code block whose arguments carry their source as a tooltip.
fn command_view(c: &LaunchCommand, testid: &'static str) -> impl IntoView + use<> {
    let parts = c.parts();
    let offset = parts.len() - c.args.len();
    let spans = parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let source = i.checked_sub(offset).map(|a| c.args[a].source).unwrap_or("");
            view! { <span title=source>{part}</span>" " }
        })
        .collect_view();
    view! { <pre class="launch-line" data-testid=testid data-line=c.line()><code>{spans}</code></pre> }
}

/// The launch commands of `point` (`serving-launch`, `data-engine`; the server line `serving-launch-serve`
/// and the benchmark line `serving-launch-bench`, each with `data-line` = the command), or why there are
/// none (`serving-launch-error`).
#[component]
pub fn ServingLaunch(
    /// The operating point.
    point: ServingPoint,
) -> impl IntoView {
    let app = use_app();
    let state = app.serving;
    let plan = move || {
        state.key.with(|k| {
            let key = k.as_ref().map_err(ToString::to_string)?;
            state.sweep.with(|s| {
                let sweep = s.as_ref().as_ref().map_err(ToString::to_string)?;
                let fit = sweep
                    .fits
                    .iter()
                    .find(|f| f.config == point.config && f.parallelism == point.parallelism)
                    .ok_or("the point is not in the sweep")?;
                let config = key.model.config(&point.config).map_err(|e| e.to_string())?;
                launch_plan(&key.model, &config, fit, &point, key.hardware.arch).map_err(|e| e.to_string())
            })
        })
    };
    move || {
        match plan() {
        Ok(p) => view! {
            <details class="serving-launch" data-testid="serving-launch" data-engine=p.engine.key() open=true>
                <summary>{format!("Run it: {} and vllm bench serve", p.engine.name())}</summary>
                {command_view(&p.serve, "serving-launch-serve")}
                {command_view(&p.bench, "serving-launch-bench")}
                {p.notes.iter().map(|n| view! { <p class="hint">{n.clone()}</p> }).collect_view()}
                <p class="hint">"Hover an argument for its source. Import the benchmark's --save-result file below to see measured ÷ predicted."</p>
            </details>
        }
        .into_any(),
        Err(why) => view! { <p class="hint" data-testid="serving-launch-error">{format!("No launch line: {why}")}</p> }.into_any(),
    }
    }
}
