//! Live benchmarking: a shapes × precisions job on the endpoint, followed through its event stream, with
//! progress, a live result table, Stop, and telemetry beside it.

use leptos::prelude::*;
use roofline_core::wire::{BenchmarkJob, BenchmarkRequest, RUN_ALL_PRECISIONS};
use roofline_core::{HardwareSpec, Mode, Precision, find_hardware};

use crate::api::ApiError;
use crate::bench::{JobProgress, shapes_text};
use crate::calibration::mode_label;
use crate::components::not_compared::NotComparedRow;
use crate::components::telemetry_panel::TelemetryPanel;
use crate::endpoint::Connection;
use crate::format;
use crate::palette::{css, precision_rgb};
use crate::presets::QUICK_SHAPES;
use crate::state::jobs::JobTracker;
use crate::state::{AppState, use_app};
use crate::validation::{self, parse_shapes};

/// Whether the job runs as far as anyone can tell: not over, and its endpoint still answering (tracked).
fn running(app: AppState) -> bool {
    let offline = app.endpoint.connection.get() == Connection::Offline;
    app.job
        .progress
        .with(|p| p.as_ref().is_some_and(|p| !p.is_over()))
        && !offline
}

/// Shapes (`bench-shapes`), precisions (`bench-precisions`, one checkbox per precision; the endpoint's set
/// as last seen online, so going offline changes nothing), Run (`bench-run`) and Stop (`bench-stop`,
/// "Stopping…" until the job ends; `stopping` is set by it).
#[component]
fn JobForm(stopping: RwSignal<bool>) -> impl IntoView {
    let app = use_app();
    let (endpoint, scenario, hardware) = (app.endpoint, app.scenario, app.device.hardware);
    let JobTracker {
        progress,
        submit,
        cancel,
        error: form_error,
        measurable,
    } = app.job;
    let shapes =
        RwSignal::new(scenario.with_untracked(|s| shapes_text(&[[s.kernel.m, s.kernel.n, s.kernel.k]])));
    let chosen = RwSignal::new(None::<Vec<Precision>>);
    // Until the user ticks some: every precision the endpoint measures natively.
    let precisions = move || {
        chosen.get().unwrap_or_else(|| {
            let m = measurable.get();
            if m.is_empty() {
                RUN_ALL_PRECISIONS.to_vec()
            } else {
                m
            }
        })
    };
    // What the endpoint measures once it said so (a precision it has no kernel for is never offered), the
    // default set before.
    let offered = move || {
        let m = measurable.get();
        let all = if m.is_empty() {
            RUN_ALL_PRECISIONS.to_vec()
        } else {
            m
        };
        Precision::ALL
            .into_iter()
            .filter(|p| all.contains(p))
            .collect::<Vec<_>>()
    };
    let toggle = move |p: Precision| {
        let mut list = precisions();
        if list.contains(&p) {
            list.retain(|q| *q != p)
        } else {
            list.push(p)
        }
        chosen.set(Some(list));
    };
    let on_run = move |_| {
        form_error.set(None);
        let shapes = match parse_shapes(&shapes.get_untracked()) {
            Ok(s) => s,
            Err(e) => return form_error.set(Some(e.to_string())),
        };
        // The endpoint predicts from its catalog: in the page's mode where it can (it has no calibrated spec).
        let mode = match hardware.with_untracked(Mode::of) {
            Mode::Datasheet => Mode::Datasheet,
            Mode::Reference | Mode::Calibrated => Mode::Reference,
        };
        let hardware = scenario.with_untracked(|s| s.hardware.clone());
        let request = BenchmarkRequest {
            shapes,
            precisions: precisions(),
            hardware_key: find_hardware(&hardware).is_ok().then_some(hardware),
            mode,
        };
        stopping.set(false);
        submit.dispatch(request);
    };
    let on_stop = move |_| {
        if let Some(id) = progress.with_untracked(|p| p.as_ref().map(|p| p.job.id.clone())) {
            stopping.set(true);
            cancel.dispatch(id);
        }
    };
    let quick = move |_| {
        let mut list = parse_shapes(&shapes.get_untracked()).unwrap_or_default();
        list.extend(
            QUICK_SHAPES
                .iter()
                .map(|q| [q.m, q.n, q.k])
                .filter(|s| !list.contains(s))
                .collect::<Vec<_>>(),
        );
        shapes.set(shapes_text(&list));
    };
    let boxes = move || {
        offered()
            .into_iter()
            .map(|p| {
                view! {
                    <label class="check">
                        <input type="checkbox" data-precision=p.name() prop:checked=move || precisions().contains(&p) on:change=move |_| toggle(p) />
                        <span class="swatch" style=format!("background:{}", css(precision_rgb(p)))></span>
                        {p.name()}
                    </label>
                }
            })
            .collect_view()
    };
    view! {
        <fieldset>
            <legend>"Benchmark job: every shape × every precision"</legend>
            <label for="bench-shapes">"Shapes (M×N×K, comma-separated)"</label>
            <input id="bench-shapes" type="text" data-testid="bench-shapes" prop:value=move || shapes.get() on:input=move |ev| shapes.set(event_target_value(&ev)) />
            <button type="button" on:click=quick>"+ quick shapes"</button>
            <div class="precisions" data-testid="bench-precisions">{boxes}</div>
            <div class="row">
                <button type="button" data-testid="bench-run" on:click=on_run disabled=move || running(app) || submit.pending().get() || !endpoint.is_online()>
                    "Run benchmarks"
                </button>
                <button type="button" data-testid="bench-stop" on:click=on_stop disabled=move || !running(app) || stopping.get()>
                    {move || if stopping.get() && running(app) { "Stopping…" } else { "Stop" }}
                </button>
            </div>
            {move || form_error.get().map(|e| view! { <p class="error">{e}</p> })}
            {move || match submit.value().get() {
                Some(Err::<BenchmarkJob, ApiError>(e)) => Some(view! { <p class="error">{e.to_string()}</p> }),
                _ => None,
            }}
        </fieldset>
    }
}

/// The job's progress (`bench-progress`) and status (`bench-status`, `data-value` =
/// `running`/`stopping`/`done`/`cancelled`/`lost`; `lost` as soon as the endpoint stops answering mid-job).
#[component]
fn JobStatus(stopping: RwSignal<bool>) -> impl IntoView {
    let app = use_app();
    let progress = app.job.progress;
    let offline = move || app.endpoint.connection.get() == Connection::Offline;
    let status_value = move || {
        progress.with(|p| match p {
            None => "idle",
            Some(p) if p.done.as_ref().is_some_and(|d| d.cancelled) => "cancelled",
            Some(p) if p.done.is_some() => "done",
            Some(p) if p.lost.is_some() => "lost",
            Some(_) if offline() => "lost",
            Some(_) if stopping.get() => "stopping",
            Some(_) => "running",
        })
    };
    let status_text = move |p: &JobProgress| match status_value() {
        "lost" if p.lost.is_none() => format!(
            "the endpoint stopped answering after {}/{}: the job's state is unknown",
            p.finished_points(),
            p.job.total
        ),
        "stopping" => format!("stopping after {}/{}…", p.finished_points(), p.job.total),
        _ => p.status(),
    };
    move || {
        progress.with(|p| p.as_ref().map(|p| (p.finished_points(), p.job.total, status_text(p)))).map(|(n, total, status)| view! {
            <div class="progress">
                <progress data-testid="bench-progress" max=total.to_string() value=n.to_string()></progress>
                <span data-testid="bench-status" data-value=status_value>{status}</span>
            </div>
        })
    }
}

/// The rows of `p` in job order: one `bench-row` per measured point with its prediction on `hardware`, and
/// an oversize shape or other failure as a failed row of its own.
fn job_rows(p: &JobProgress, hardware: Memo<HardwareSpec>) -> Vec<AnyView> {
    let mut rows: Vec<(u32, AnyView)> = p
        .points
        .iter()
        .map(|e| {
            let point = &e.point;
            let (predicted, error, class) = hardware.with(|hw| validation::cells(point, hw));
            let view = view! {
                <tr data-testid="bench-row" data-precision=point.precision.name()>
                    <td class="nowrap">{point.op.shape_label()}</td>
                    <td class="nowrap">{point.precision.name()}</td>
                    <td class="num">{format::duration(point.time_s())}</td>
                    <td class="num">{predicted}</td>
                    <td class=format!("num {class}")>{error}</td>
                </tr>
            };
            (e.index, view.into_any())
        })
        .collect();
    rows.extend(p.failures.iter().map(|f| {
        let view = view! {
            <tr data-testid="bench-row" class="unsupported" data-failed="true">
                <td class="nowrap">{f.shape.clone()}</td>
                <td class="nowrap">{f.failure.precision.name()}</td>
                <td colspan="3" class="error">{format!("{}: {}", f.failure.code, f.failure.message)}</td>
            </tr>
        };
        (f.index, view.into_any())
    }));
    rows.sort_by_key(|(i, _)| *i);
    rows.into_iter().map(|(_, v)| v).collect()
}

/// The Benchmark tab: the job's form, status and results (`bench-results`: its `data-mode`/`data-device`
/// are the predictions'; points from another device in one `not-compared` row), and telemetry. Each
/// measured point joins the page's measured points exactly once.
#[component]
pub fn BenchmarkTab() -> impl IntoView {
    let app = use_app();
    let (progress, hardware) = (app.job.progress, app.device.hardware);
    let stopping = RwSignal::new(false);
    let job_points = Signal::derive(move || {
        progress.with(|p| {
            p.iter()
                .flat_map(|p| &p.points)
                .map(|e| e.point.clone())
                .collect::<Vec<_>>()
        })
    });
    let rows = move || progress.with(|p| p.as_ref().map(|p| job_rows(p, hardware)).unwrap_or_default());
    view! {
        <div class="benchmark-tab">
            <JobForm stopping=stopping />
            <JobStatus stopping=stopping />
            <div class="table-box" data-mode=move || hardware.with(|h| Mode::of(h).name()) data-device=move || hardware.with(|h| h.name.clone())>
            <table class="bench-results" data-testid="bench-results">
                <caption>{move || format!("Measured on the endpoint, predicted in {}", hardware.with(mode_label))}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Shape"</th>
                        <th scope="col">"Precision"</th>
                        <th scope="col" class="num">"Measured"</th>
                        <th scope="col" class="num">{move || format!("Predicted ({})", hardware.with(|h| Mode::of(h).name()))}</th>
                        <th scope="col" class="num">"Error"</th>
                    </tr>
                </thead>
                <tbody>
                    <NotComparedRow points=job_points hardware=hardware colspan=5 />
                    {rows}
                </tbody>
            </table>
            </div>
            <TelemetryPanel />
        </div>
    }
}
