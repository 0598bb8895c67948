//! Live device telemetry: the endpoint's NVML stream, polling when the stream is unavailable.

use std::time::Duration;

use leptos::prelude::*;
use roofline_core::wire::{BackendKind, ErrorCode, NvmlStatus};

use crate::api::{self, ApiError, join};
use crate::endpoint::Connection;
use crate::format;
use crate::sse::{EventStream, Handler};
use crate::state::use_app;
use crate::telemetry::{WINDOW, push_sample, sparkline, throttling};

/// Polling period when the stream is not available.
const POLL: Duration = Duration::from_secs(2);
/// Stream period asked of the endpoint, in ms.
const STREAM_INTERVAL_MS: u32 = 1000;

/// Where the telemetry comes from.
#[derive(Debug, Clone, PartialEq)]
enum Feed {
    /// No answer yet.
    Waiting,
    /// Samples arrive.
    Live,
    /// The endpoint has no NVML: why, in the page's words.
    NoNvml(String),
    /// The endpoint does not answer (or is not a roofline endpoint).
    Offline,
}

/// One labelled sparkline with the latest value.
#[component]
fn Spark(
    /// Label.
    label: &'static str,
    /// Values, oldest first.
    #[prop(into)]
    values: Signal<Vec<f64>>,
    /// Formats the latest value.
    show: fn(f64) -> String,
) -> impl IntoView {
    view! {
        <div class="spark">
            <span class="spark-label">{label}</span>
            <svg viewBox="0 0 120 24" width="120" height="24" aria-hidden="true">
                <polyline fill="none" stroke="currentColor" stroke-width="1.5" points=move || values.with(|v| sparkline(v, 120.0, 24.0)) />
            </svg>
            <span class="num">{move || values.with(|v| v.last().map(|x| show(*x)).unwrap_or_default())}</span>
        </div>
    }
}

/// Power, temperature and SM clock sparklines over the last samples (`data-testid="telemetry"`, `data-state` =
/// `waiting`/`live`/`no-nvml`/`offline`, `data-mode="measured"`), throttling flagged
/// (`data-testid="throttle"`). NVML is asked for only when the endpoint measures on a GPU: a CPU endpoint
/// (its normal state) is said calmly without a request, and a GPU endpoint without NVML is asked once, so
/// the browser's console never fills with failed requests.
#[component]
pub fn TelemetryPanel() -> impl IntoView {
    let endpoint = use_app().endpoint;
    let backend = Memo::new(move |_| endpoint.health.get().and_then(Result::ok).map(|h| h.backend));
    let device = move || {
        endpoint
            .device
            .get()
            .flatten()
            .map(|d| d.name)
            .unwrap_or_default()
    };
    let body = move || {
        match (endpoint.connection.get(), backend.get()) {
        (Connection::Offline, _) => view! {
            <section class="telemetry" data-testid="telemetry" data-state="offline" aria-label="Live telemetry">
                <h3>"Live telemetry"</h3>
                <p class="hint">"No telemetry: the endpoint does not answer."</p>
            </section>
        }
        .into_any(),
        (_, Some(BackendKind::Cuda)) => view! { <NvmlFeed /> }.into_any(),
        (_, Some(kind)) => view! {
            <section class="telemetry" data-testid="telemetry" data-state="no-nvml" aria-label="Live telemetry">
                <h3>"Live telemetry"</h3>
                <p class="hint calm">{format!("This endpoint measures on {} ({kind} backend): no GPU clocks, power or temperature to show.", device())}</p>
            </section>
        }
        .into_any(),
        (_, None) => view! {
            <section class="telemetry" data-testid="telemetry" data-state="waiting" aria-label="Live telemetry">
                <h3>"Live telemetry"</h3>
                <p class="hint">"Waiting for the endpoint…"</p>
            </section>
        }
        .into_any(),
    }
    };
    view! { {body} }
}

/// The NVML feed of a GPU endpoint: its stream, else `/api/nvml/status` every 2 s; a 503 `no_nvml` stops
/// asking.
#[component]
fn NvmlFeed() -> impl IntoView {
    let endpoint = use_app().endpoint;
    let samples = RwSignal::new(Vec::<NvmlStatus>::with_capacity(WINDOW));
    let feed = RwSignal::new(Feed::Waiting);
    let streaming = RwSignal::new(false);

    // Only a change of feed re-renders the panel; new samples update the sparklines in place.
    let set_feed = move |f: Feed| {
        if feed.with_untracked(|old| *old != f) {
            feed.set(f);
        }
    };
    let on_sample = move |s: NvmlStatus| {
        samples.update(|w| push_sample(w, s));
        set_feed(Feed::Live);
    };
    // Without NVML (503 `no_nvml`) the poll stops: the driver's library will not appear on its own.
    let stopped = StoredValue::new(false);
    let poll = move || {
        let base = endpoint.base_now();
        leptos::task::spawn_local(async move {
            match api::nvml_status(&base).await {
                Ok(s) => on_sample(s),
                Err(ApiError::Status { body, .. }) if body.code == ErrorCode::NoNvml => {
                    stopped.set_value(true);
                    set_feed(Feed::NoNvml(
                        "this GPU endpoint cannot read NVML (no NVIDIA management library): no clocks, power or temperature".to_owned(),
                    ));
                }
                Err(_) => set_feed(Feed::Offline),
            }
        });
    };
    let due = move || !stopped.get_value();
    let url = join(
        &endpoint.base_now(),
        &format!("/api/nvml/stream?interval_ms={STREAM_INTERVAL_MS}"),
    );
    let on_status: Handler = Box::new(move |data| {
        if let Ok(s) = serde_json::from_str::<NvmlStatus>(&data) {
            streaming.set(true);
            on_sample(s);
        }
    });
    let stream = EventStream::open(
        &url,
        vec![("status", on_status)],
        Box::new(move || streaming.set(false)),
    );
    let stream = StoredValue::new_local(stream.ok());
    poll();
    if let Ok(handle) = set_interval_with_handle(
        move || {
            if !streaming.get_untracked() && due() {
                poll()
            }
        },
        POLL,
    ) {
        on_cleanup(move || handle.clear());
    }
    on_cleanup(move || {
        stream.with_value(|s| {
            if let Some(s) = s {
                s.close()
            }
        })
    });

    let series = move |f: fn(&NvmlStatus) -> f64| {
        Signal::derive(move || samples.with(|w| w.iter().map(f).collect::<Vec<_>>()))
    };
    let latest = move || samples.with(|w| w.last().cloned());
    let state = move || match feed.get() {
        Feed::Waiting => "waiting",
        Feed::Live => "live",
        Feed::NoNvml(_) => "no-nvml",
        Feed::Offline => "offline",
    };
    let body = move || match feed.get() {
        Feed::Waiting => view! { <p class="hint">"Waiting for telemetry…"</p> }.into_any(),
        Feed::Offline => {
            view! { <p class="hint">"No telemetry: the endpoint does not answer."</p> }.into_any()
        }
        Feed::NoNvml(message) => view! {
            <p class="hint calm">{message}</p>
        }
        .into_any(),
        Feed::Live => {
            let throttled = move || latest().map(|s| throttling(&s)).unwrap_or_default();
            view! {
                <p class="hint">{move || latest().map(|s| s.device_name).unwrap_or_default()}</p>
                <Spark label="Power" values=series(|s| s.power_draw_w) show=format::watts />
                <Spark label="Temperature" values=series(|s| s.temperature_c) show=format::celsius />
                <Spark label="SM clock" values=series(|s| s.gpu_clock_mhz) show=format::mhz />
                {move || {
                    let reasons = throttled();
                    (!reasons.is_empty()).then(|| view! {
                        <p class="error" data-testid="throttle">{format!("Throttling: {}", reasons.join(", "))}</p>
                    })
                }}
            }
            .into_any()
        }
    };
    view! {
        <section class="telemetry" data-testid="telemetry" data-state=state aria-label="Live telemetry"
            data-mode="measured" data-device=move || latest().map(|s| s.device_name).unwrap_or_default()>
            <h3>"Live telemetry"</h3>
            {body}
        </section>
    }
}
