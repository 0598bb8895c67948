//! How many measured points the page holds, how many belong to the selected device, and which devices the
//! others came from.

use leptos::prelude::*;
use roofline_core::Precision;

use crate::measured::{on_device, other_devices};
use crate::state::use_app;

/// `N measured points` with the bare number in `data-testid="measured-count"` (every point the page holds),
/// the number drawn on this device's roofline in `measured-on-device`, and, when some were measured on
/// other devices, `measured-other-note` saying which: they are hidden and never compared with this device.
/// Under it, which points the chart draws: other devices' too (greyed, `measured-show-other`), one precision
/// (`measured-precision`), only recent ones (`measured-since`: the last hour, day or week).
#[component]
pub fn MeasuredCount() -> impl IntoView {
    let app = use_app();
    let (measured, hardware, filter) = (app.measured, app.device.hardware, app.chart.filter);
    let n_points = move || measured.shown.with(Vec::len);
    let mine = Memo::new(move |_| measured.shown.with(|m| hardware.with(|h| on_device(m, h).len())));
    let others = Memo::new(move |_| measured.shown.with(|m| hardware.with(|h| other_devices(m, h))));
    let note = move || {
        others.with(|o| {
            (!o.is_empty()).then(|| {
                let list = o
                    .iter()
                    .map(|(d, n)| format!("{n} on {d}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let total: usize = o.iter().map(|(_, n)| n).sum();
                let name = hardware.with(|h| h.name.clone());
                view! {
                    <p class="measured-note" data-testid="measured-other-note" data-value=total.to_string()>
                        {format!("{total} measured on other devices ({list}): never compared with {name}{}.",
                            if filter.with(|f| f.other_devices) { "; drawn grey" } else { "; hidden from the chart" })}
                    </p>
                }
            })
        })
    };
    view! {
        <div class="measured-count">
            <p class="hint">
                <span data-testid="measured-count">{n_points}</span>
                {move || if n_points() == 1 { " measured point" } else { " measured points" }}
                {move || format!(", {} on this device (hollow circles, M)", mine.get())}
                <span hidden data-testid="measured-on-device">{move || mine.get()}</span>
            </p>
            {note}
            <div class="row measured-filters">
                <label class="check">
                    <input type="checkbox" data-testid="measured-show-other"
                        prop:checked=move || filter.with(|f| f.other_devices)
                        on:change=move |ev| filter.update(|f| f.other_devices = event_target_checked(&ev)) />
                    "show other devices' points (grey, not compared)"
                </label>
                <label class="check">
                    "precision "
                    <select data-testid="measured-precision"
                        on:change=move |ev| filter.update(|f| f.precision = event_target_value(&ev).parse().ok())>
                        <option value="">"all"</option>
                        {Precision::ALL.into_iter().map(|p| view! { <option value=p.name()>{p.name()}</option> }).collect_view()}
                    </select>
                </label>
                <label class="check">
                    "measured "
                    <select data-testid="measured-since"
                        on:change=move |ev| {
                            // A window in seconds, turned into a start time now.
                            let window: Option<f64> = event_target_value(&ev).parse().ok();
                            let now_unix_s = js_sys::Date::now() / 1e3;
                            filter.update(|f| f.since_unix_s = window.map(|w| now_unix_s - w));
                        }>
                        <option value="">"any time"</option>
                        <option value="3600">"in the last hour"</option>
                        <option value="86400">"in the last day"</option>
                        <option value="604800">"in the last week"</option>
                    </select>
                </label>
            </div>
        </div>
    }
}
