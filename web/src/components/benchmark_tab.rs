//! Live benchmarking: a shapes × precisions job on the endpoint, followed through its event stream, with
//! progress, a live result table, Stop, and telemetry beside it.

use leptos::prelude::*;
use roofline_core::measured_device::{PointDevice, same_device};
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::{
    BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob, BenchmarkPointEvent, BenchmarkRequest,
    RUN_ALL_PRECISIONS,
};
use roofline_core::{HardwareSpec, Mode, Precision, find_hardware};

use crate::api::{self, ApiError, join};
use crate::bench::{JobProgress, shapes_text};
use crate::components::TelemetryPanel;
use crate::endpoint::use_endpoint;
use crate::format;
use crate::measured::use_measured;
use crate::palette::{css, precision_rgb};
use crate::presets::QUICK_SHAPES;
use crate::scenario::Scenario;
use crate::sse::{JobStream, on_json};
use crate::validation::parse_shapes;
use crate::validation::{self, Band};

/// What the Benchmark tab submits and cancels.
type SubmitAction = Action<BenchmarkRequest, Result<BenchmarkJob, ApiError>>;

/// The latest benchmark job and its event stream, owned by a parent that outlives tab switches, so a job keeps
/// streaming (and its points keep joining the measured points) while another tab is open.
#[derive(Clone, Copy)]
pub struct JobTracker {
    progress: RwSignal<Option<JobProgress>>,
    submit: SubmitAction,
    cancel: Action<String, Result<(), ApiError>>,
    error: RwSignal<Option<String>>,
}

/// Creates the tracker; the stream closes when the owner is cleaned up.
pub fn job_tracker() -> JobTracker {
    let endpoint = use_endpoint();
    let measured = use_measured();
    let progress = RwSignal::new(None::<JobProgress>);
    let stream = JobStream::scoped();
    let error = RwSignal::new(None::<String>);
    let follow = move |job: BenchmarkJob| {
        let url = join(&endpoint.base_now(), &job.events_url);
        progress.set(Some(JobProgress::new(job)));
        let handlers = vec![
            (
                "point",
                on_json(move |e: BenchmarkPointEvent| {
                    let point = e.point.clone();
                    let mut fresh = false;
                    progress.update(|p| fresh = p.as_mut().is_some_and(|p| p.on_point(e)));
                    if fresh {
                        measured.add(vec![point]);
                    }
                }),
            ),
            (
                "failed",
                on_json(move |e: BenchmarkFailedEvent| {
                    progress.update(|p| {
                        if let Some(p) = p {
                            p.on_failed(e);
                        }
                    })
                }),
            ),
            (
                "done",
                on_json(move |e: BenchmarkDoneEvent| {
                    // The server ends the stream after `done`; closing keeps the browser from reconnecting.
                    stream.close();
                    progress.update(|p| {
                        if let Some(p) = p {
                            p.done = Some(e)
                        }
                    });
                    measured.refresh_history();
                }),
            ),
        ];
        let on_closed = Box::new(move || {
            progress.update(|p| {
                if let Some(p) = p.as_mut().filter(|p| !p.is_over()) {
                    p.lost = Some("the endpoint closed the stream".to_owned());
                }
            });
        });
        if let Err(e) = stream.open(&url, handlers, on_closed) {
            error.set(Some(e.to_string()));
        }
    };
    let submit = Action::new_local(move |request: &BenchmarkRequest| {
        let (request, base) = (request.clone(), endpoint.base_now());
        async move {
            let job = api::submit_benchmark(&base, &request).await;
            if let Ok(job) = &job {
                follow(job.clone());
            }
            job
        }
    });
    let cancel = Action::new_local(move |id: &String| {
        let (id, base) = (id.clone(), endpoint.base_now());
        async move { api::cancel_benchmark(&base, &id).await }
    });
    JobTracker {
        progress,
        submit,
        cancel,
        error,
    }
}

/// The Benchmark tab: shapes (`bench-shapes`), precisions (`bench-precisions`, one checkbox per precision),
/// Run (`bench-run`) and Stop (`bench-stop`); progress in `bench-progress` and `bench-status` (`data-value` =
/// `running`/`done`/`cancelled`/`lost`), one `bench-row` per point in `bench-results`. Each measured point joins
/// the page's measured points exactly once.
#[component]
pub fn BenchmarkTab(
    /// The scenario: its kernel shape is the default job.
    scenario: RwSignal<Scenario>,
    /// The spec measured points are predicted on (in the scenario's mode).
    #[prop(into)]
    hardware: Signal<HardwareSpec>,
    /// The job being followed, from [`job_tracker`].
    job: JobTracker,
) -> impl IntoView {
    let endpoint = use_endpoint();
    let shapes =
        RwSignal::new(scenario.with_untracked(|s| shapes_text(&[[s.kernel.m, s.kernel.n, s.kernel.k]])));
    let chosen = RwSignal::new(None::<Vec<Precision>>);
    let JobTracker {
        progress,
        submit,
        cancel,
        error: form_error,
    } = job;

    let measurable = move || {
        endpoint
            .device
            .get()
            .flatten()
            .map(|d| d.measurable_precisions)
            .unwrap_or_default()
    };
    // Until the user ticks some: every precision the endpoint measures natively.
    let precisions = move || {
        chosen.get().unwrap_or_else(|| {
            let m = measurable();
            if m.is_empty() {
                RUN_ALL_PRECISIONS.to_vec()
            } else {
                m
            }
        })
    };
    let offered = move || {
        let mut all = measurable();
        all.extend(RUN_ALL_PRECISIONS);
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
        submit.dispatch(request);
    };
    let running = move || progress.with(|p| p.as_ref().is_some_and(|p| !p.is_over()));
    let on_stop = move |_| {
        if let Some(id) = progress.with_untracked(|p| p.as_ref().map(|p| p.job.id.clone())) {
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
    let status_value = move || {
        progress.with(|p| match p {
            None => "idle",
            Some(p) if p.done.as_ref().is_some_and(|d| d.cancelled) => "cancelled",
            Some(p) if p.done.is_some() => "done",
            Some(p) if p.lost.is_some() => "lost",
            Some(_) => "running",
        })
    };
    let rows = move || {
        progress.with(|p| {
            let Some(p) = p else { return Vec::new() };
            let mut rows: Vec<(u32, AnyView)> = p
                .points
                .iter()
                .map(|e| {
                    // A point from another device than the selected one gets no prediction and no error.
                    let point = MeasuredPoint::from(&e.point);
                    let (predicted, error, class) = hardware.with(|hw| {
                        if !same_device(&point, hw) {
                            return (
                                format!("measured on {}; not compared", PointDevice::of(&point).label()),
                                String::new(),
                                "other-device",
                            );
                        }
                        match validation::check(&point, hw) {
                            Ok(c) => (
                                format::duration(c.predicted_s),
                                format::signed_percent(c.error_pct),
                                validation::band_class(Band::of(c.error_pct)),
                            ),
                            Err(e) => (format::failure(&e), String::new(), ""),
                        }
                    });
                    let view = view! {
                        <tr data-testid="bench-row" data-precision=e.point.precision.name()>
                            <td>{e.point.shape.clone()}</td>
                            <td>{e.point.precision.name()}</td>
                            <td class="num">{format::duration(e.point.time_us * 1e-6)}</td>
                            <td class="num">{predicted}</td>
                            <td class=format!("num {class}")>{error}</td>
                        </tr>
                    };
                    (e.index, view.into_any())
                })
                .collect();
            rows.extend(p.failures.iter().map(|f| {
                let view = view! {
                    <tr data-testid="bench-row" class="unsupported">
                        <td>{f.shape.clone()}</td>
                        <td>{f.failure.precision.name()}</td>
                        <td colspan="3" class="error">{format!("{}: {}", f.failure.code, f.failure.message)}</td>
                    </tr>
                };
                (f.index, view.into_any())
            }));
            rows.sort_by_key(|(i, _)| *i);
            rows.into_iter().map(|(_, v)| v).collect::<Vec<_>>()
        })
    };

    view! {
        <div class="benchmark-tab">
            <fieldset>
                <legend>"Benchmark job: every shape × every precision"</legend>
                <label for="bench-shapes">"Shapes (M×N×K, comma-separated)"</label>
                <input id="bench-shapes" type="text" data-testid="bench-shapes" prop:value=move || shapes.get() on:input=move |ev| shapes.set(event_target_value(&ev)) />
                <button type="button" on:click=quick>"+ quick shapes"</button>
                <div class="precisions" data-testid="bench-precisions">{boxes}</div>
                <div class="row">
                    <button type="button" data-testid="bench-run" on:click=on_run disabled=move || running() || submit.pending().get() || !endpoint.is_online()>
                        "Run benchmarks"
                    </button>
                    <button type="button" data-testid="bench-stop" on:click=on_stop disabled=move || !running()>"Stop"</button>
                </div>
                {move || form_error.get().map(|e| view! { <p class="error">{e}</p> })}
                {move || match submit.value().get() {
                    Some(Err::<BenchmarkJob, ApiError>(e)) => Some(view! { <p class="error">{e.to_string()}</p> }),
                    _ => None,
                }}
            </fieldset>
            {move || progress.with(|p| p.as_ref().map(|p| (p.finished_points(), p.job.total, p.status()))).map(|(n, total, status)| view! {
                <div class="progress">
                    <progress data-testid="bench-progress" max=total.to_string() value=n.to_string()></progress>
                    <span data-testid="bench-status" data-value=status_value>{status}</span>
                </div>
            })}
            <table class="bench-results" data-testid="bench-results">
                <thead>
                    <tr>
                        <th scope="col">"Shape"</th>
                        <th scope="col">"Precision"</th>
                        <th scope="col" class="num">"Measured"</th>
                        <th scope="col" class="num">"Predicted"</th>
                        <th scope="col" class="num">"Error"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <TelemetryPanel />
        </div>
    }
}
