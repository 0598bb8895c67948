//! Top-level state and layout.

use leptos::prelude::*;
use roofline_core::wire::RooflinePoint;
use roofline_core::{Error, HardwareSpec, ModelAnalysis, find_hardware};

use crate::calibration::{effective_hardware, mode_label, resolve};
use crate::charts::RooflineChart;
use crate::charts::series::{analysis_points, kernel_points, measured_points, plot_data, with_other};
use crate::components::{
    CustomHardware, EndpointBanner, EndpointStatus, HardwarePicker, MeasuredCount, OperatorTable, PinsPanel,
    ResultsIo, RightPanel, SummaryStrip, WorkloadForm,
};
use crate::endpoint::Endpoint;
use crate::measured::Measured;
use crate::palette::PIN_RGB;
use crate::state::Scenario;
use crate::{export, history, storage};

/// Analyses `s` on its own device (catalog or custom) in its own mode.
fn analyze_on_own_hardware(s: &Scenario, custom: &[HardwareSpec]) -> Result<ModelAnalysis, Error> {
    match effective_hardware(s, custom) {
        Some(e) => s.analyze(&e.spec),
        None => Err(find_hardware(&s.hardware)
            .err()
            .unwrap_or_else(|| Error::InvalidInput(s.hardware.clone()))),
    }
}

/// The whole page: header; left, device and workload; centre, summary, roofline, operators and pins;
/// right, the Kernel/Advisor/Formats/Benchmark/Validation tabs. State comes from the URL, else from
/// local storage, else defaults; it is written back to both on every change.
#[component]
pub fn App() -> impl IntoView {
    let (stored, notice) = storage::load();
    let scenario = RwSignal::new(history::read().unwrap_or_else(|| stored.settings.clone()));
    let custom = RwSignal::new(stored.custom_hardware);
    let pins = RwSignal::new(stored.pins);
    let measured = RwSignal::new(stored.measured);
    let notice = RwSignal::new(notice);
    let endpoint = Endpoint::provide();
    let shown_measured = Measured::provide(measured, endpoint).shown;

    // The device and mode alone decide the specs, so slider moves do not resolve them again.
    let device = Memo::new(move |_| scenario.with(|s| (s.hardware.clone(), s.corrections.mode)));
    let resolved = Memo::new(move |_| device.with(|(key, mode)| custom.with(|c| resolve(key, *mode, c))));
    let specs = Memo::new(move |_| resolved.with(|r| r.specs.clone()));
    let hardware = Memo::new(move |_| resolved.with(|r| r.effective.spec.clone()));
    // The device as catalogued or entered (not scaled into a mode): what custom-device editing starts from.
    let own = Memo::new(move |_| specs.with(|d| d.own().cloned()).unwrap_or_else(|| hardware.get()));
    let mode_notice = Memo::new(move |_| resolved.with(|r| r.effective.notice.clone()));
    let mode_caption = Memo::new(move |_| hardware.with(mode_label));
    let ceilings = Memo::new(move |_| hardware.with(|h| scenario.with(|s| s.used_reference_ceilings(h))));
    let analysis = Memo::new(move |_| hardware.with(|h| scenario.with(|s| s.analyze(h))));
    let rows = Memo::new(move |_| hardware.with(|h| scenario.with(|s| s.kernel.evaluate(h))));
    let pinned = Memo::new(move |_| {
        custom.with(|c| {
            pins.with(|p| {
                p.iter()
                    .map(|s| analyze_on_own_hardware(s, c))
                    .collect::<Vec<_>>()
            })
        })
    });
    let advice = Memo::new(move |_| hardware.with(|h| scenario.with(|s| s.advise(h))));
    let plot = Memo::new(move |_| {
        let mut points = Vec::new();
        pins.with(|p| {
            pinned.with(|all| {
                for (i, (s, a)) in p.iter().zip(all).enumerate() {
                    if let Ok(a) = a {
                        points.extend(analysis_points(a, Some((PIN_RGB[i % PIN_RGB.len()], &s.label()))));
                    }
                }
            })
        });
        analysis.with(|a| points.extend(a.as_ref().map(|a| analysis_points(a, None)).unwrap_or_default()));
        rows.with(|r| points.extend(kernel_points(r)));
        shown_measured.with(|m| points.extend(measured_points(m)));
        hardware.with(|h| {
            let data = plot_data(h, points);
            match specs.with(|d| d.beside(h).cloned()) {
                Some(other) => with_other(data, &other),
                None => data,
            }
        })
    });

    Effect::new(move |_| {
        let settings = scenario.get();
        storage::save(&storage::Stored {
            schema: storage::SCHEMA,
            settings,
            custom_hardware: custom.get(),
            pins: pins.get(),
            measured: measured.get(),
        });
    });
    Effect::new(move |previous: Option<Scenario>| {
        let next = scenario.get();
        history::write(previous.as_ref(), &next);
        next
    });
    let _ = window_event_listener(leptos::ev::popstate, move |_| {
        if let Some(s) = history::read() {
            scenario.set(s);
        }
    });

    let results = move |json: bool| {
        let s = scenario.get_untracked();
        let hw = hardware.get_untracked();
        let a = analysis.get_untracked().ok();
        let (r, m) = (rows.get_untracked(), shown_measured.get_untracked());
        if json {
            export::results_json(&s, &hw, a.as_ref(), &r, &m)
        } else {
            export::results_csv(&s, &hw, a.as_ref(), &r, &m)
        }
    };
    let clear = move || {
        storage::clear();
        scenario.set(Scenario::default());
        custom.set(Vec::new());
        pins.set(Vec::new());
        measured.set(Vec::<RooflinePoint>::new());
        notice.set(Some("Saved data cleared; defaults restored.".to_owned()));
    };

    view! {
        {move || {
            notice.get().map(|n| view! {
                <div class="notice" role="status" data-testid="storage-notice">
                    <span>{n}</span>
                    <button type="button" on:click=move |_| notice.set(None)>"Dismiss"</button>
                </div>
            })
        }}
        <header class="top">
            <h1>"roofline"</h1>
            <p class="subtitle">"Which precision should this model run in, on this GPU? Predicted in your browser."</p>
            <div class="header-right"><EndpointStatus /></div>
        </header>
        <EndpointBanner scenario=scenario />
        <main class="layout">
            <aside class="left" aria-label="Device and workload">
                <HardwarePicker scenario=scenario hardware=hardware custom=custom />
                <CustomHardware scenario=scenario custom=custom hardware=own />
                <WorkloadForm scenario=scenario hardware=hardware specs=specs />
                <ResultsIo
                    to_json=Callback::new(move |()| results(true))
                    to_csv=Callback::new(move |()| results(false))
                    measured=measured
                    on_clear=Callback::new(move |()| clear())
                />
            </aside>
            <section class="centre" aria-label="Analysis">
                <SummaryStrip analysis=analysis hardware=hardware notice=mode_notice ceilings=ceilings />
                <RooflineChart data=plot />
                <MeasuredCount />
                <PinsPanel scenario=scenario pins=pins current=analysis pinned=pinned />
                <OperatorTable analysis=analysis caption=mode_caption />
            </section>
            <RightPanel scenario=scenario hardware=hardware rows=rows advice=advice custom=custom />
        </main>
    }
}
