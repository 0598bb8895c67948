//! Top-level state and layout.

use leptos::prelude::*;
use roofline_core::wire::RooflinePoint;
use roofline_core::{Error, HardwareSpec, ModelAnalysis, find_hardware};

use crate::calibration::{datasheet_and_calibrated, effective_hardware};
use crate::charts::RooflineChart;
use crate::charts::series::{analysis_points, kernel_points, measured_points, plot_data, with_reference};
use crate::components::{
    CustomHardware, EndpointBanner, EndpointStatus, HardwarePicker, MeasuredCount, OperatorTable, PinsPanel,
    ResultsIo, RightPanel, SummaryStrip, WorkloadForm,
};
use crate::endpoint::Endpoint;
use crate::measured::Measured;
use crate::palette::PIN_RGB;
use crate::state::{DEFAULT_HARDWARE, Scenario, resolve_hardware};
use crate::{export, history, storage};

/// Analyses `s` on its own device (catalog or custom).
fn analyze_on_own_hardware(s: &Scenario, custom: &[HardwareSpec]) -> Result<ModelAnalysis, Error> {
    match resolve_hardware(&s.hardware, custom) {
        Some(hw) => s.analyze(&hw),
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

    let hardware = Memo::new(move |_| {
        let found = scenario.with(|s| custom.with(|c| effective_hardware(s, c)));
        found.unwrap_or_else(|| {
            resolve_hardware(DEFAULT_HARDWARE, &[]).expect("the catalog has the default device")
        })
    });
    let calibration_available = Memo::new(move |_| {
        scenario.with(|s| custom.with(|c| datasheet_and_calibrated(&s.hardware, c).1.is_some()))
    });
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
        let data = hardware.with(|h| plot_data(h, points));
        // The other one of the datasheet and calibrated roofs, drawn beside the ones predictions use.
        let other = scenario.with(|s| {
            custom.with(|c| {
                let (datasheet, calibrated) = datasheet_and_calibrated(&s.hardware, c);
                if s.corrections.calibrated && calibrated.is_some() {
                    datasheet
                } else {
                    calibrated
                }
            })
        });
        match other {
            Some(o) => with_reference(data, &o),
            None => data,
        }
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
                <CustomHardware scenario=scenario custom=custom hardware=hardware />
                <WorkloadForm scenario=scenario hardware=hardware calibration_available=calibration_available />
                <ResultsIo
                    to_json=Callback::new(move |()| results(true))
                    to_csv=Callback::new(move |()| results(false))
                    measured=measured
                    on_clear=Callback::new(move |()| clear())
                />
            </aside>
            <section class="centre" aria-label="Analysis">
                <SummaryStrip analysis=analysis />
                <RooflineChart data=plot />
                <MeasuredCount />
                <PinsPanel scenario=scenario pins=pins current=analysis pinned=pinned />
                <OperatorTable analysis=analysis />
            </section>
            <RightPanel scenario=scenario hardware=hardware rows=rows advice=advice custom=custom />
        </main>
    }
}
