//! Top-level state and layout.

use std::collections::HashSet;

use leptos::prelude::*;
use roofline_core::measured_device::same_device;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::RooflinePoint;
use roofline_core::{Error, HardwareSpec, Mode, ModelAnalysis, ModelConfig, find_hardware};

use crate::calibration::{effective_hardware, mode_label, resolve};
use crate::charts::RooflineChart;
use crate::charts::series::{
    PointKinds, analysis_points, kernel_points, measured_points, other_device_points, plot_data, step_points,
    with_other,
};
use crate::components::step_measure::step_tracker;
use crate::components::{
    CustomHardware, EndpointBanner, EndpointStatus, HardwarePicker, MeasuredCount, ModelImport,
    OperatorTable, PinsPanel, ResultsIo, RightPanel, ServingView, StepMeasure, SummaryStrip, ViewSwitch,
    WorkloadForm,
};
use crate::endpoint::Endpoint;
use crate::measured::{Measured, PointFilter, point_key};
use crate::palette::PIN_RGB;
use crate::scenario::Scenario;
use crate::serving::state::ServingState;
use crate::serving_inputs::View;
use crate::share_link::SharedLink;
use crate::step::{self, StepComparison};
use crate::{export, history, storage, summary};

/// Analyses `s` on its own device (catalog or custom) in its own mode.
fn analyze_on_own_hardware(
    s: &Scenario,
    custom: &[HardwareSpec],
    models: &[ModelConfig],
) -> Result<ModelAnalysis, Error> {
    match effective_hardware(s, custom) {
        Some(e) => s.analyze(&e.spec, models),
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
    let (stored, mut notice) = storage::load();
    let link = history::read();
    let mut custom_hardware = stored.custom_hardware;
    let mut custom_models = stored.custom_models;
    let mut saved_pins = stored.pins;
    if let Some(link) = &link {
        // The link's devices win over saved ones of the same key: it opens as it was shared.
        for spec in &link.devices {
            custom_hardware.retain(|h| h.key != spec.key);
            custom_hardware.push(spec.clone());
        }
        for model in &link.models {
            custom_models.retain(|m| m.key != model.key);
            custom_models.push(model.clone());
        }
        if let Some(p) = &link.pins {
            saved_pins.clone_from(p);
        }
        if !link.bad_devices.is_empty() {
            notice = Some(format!(
                "The link's custom device or model could not be read: {}",
                link.bad_devices.join("; ")
            ));
        }
    }
    let mut initial = link.map_or_else(|| stored.settings.clone(), |l| l.scenario);
    let replaced = initial.replace_unknown_keys(&custom_models);
    if !replaced.is_empty() {
        let text = format!("The link names {}.", replaced.join("; "));
        notice = Some(notice.map_or(text.clone(), |n| format!("{n} {text}")));
    }
    let scenario = RwSignal::new(initial);
    let custom = RwSignal::new(custom_hardware);
    let models = RwSignal::new(custom_models);
    let pins = RwSignal::new(saved_pins);
    let measured = RwSignal::new(stored.measured);
    let serving_runs = RwSignal::new(stored.serving_runs);
    let notice = RwSignal::new(notice);
    let endpoint = Endpoint::provide();
    let shown_measured = Measured::provide(measured, endpoint).shown;
    let point_filter = RwSignal::new(PointFilter::default());
    let point_kinds = RwSignal::new(PointKinds::default());

    // The device and mode alone decide the specs, so slider moves do not resolve them again.
    let device = Memo::new(move |_| scenario.with(|s| (s.hardware.clone(), s.corrections.mode)));
    let resolved = Memo::new(move |_| device.with(|(key, mode)| custom.with(|c| resolve(key, *mode, c))));
    let specs = Memo::new(move |_| resolved.with(|r| r.specs.clone()));
    let hardware = Memo::new(move |_| resolved.with(|r| r.effective.spec.clone()));
    // The device as catalogued or entered (not scaled into a mode): what custom-device editing starts from.
    let own = Memo::new(move |_| specs.with(|d| d.own().cloned()).unwrap_or_else(|| hardware.get()));
    let mode_notice = Memo::new(move |_| resolved.with(|r| r.effective.notice.clone()));
    let mode_caption = Memo::new(move |_| hardware.with(mode_label));
    let ceilings = Memo::new(move |_| {
        hardware.with(|h| models.with(|m| scenario.with(|s| s.used_reference_ceilings(h, m))))
    });
    let analysis = Memo::new(move |_| hardware.with(|h| models.with(|m| scenario.with(|s| s.analyze(h, m)))));
    let rows = Memo::new(move |_| {
        hardware.with(|h| scenario.with(|s| s.kernel.evaluate(h, &s.core_corrections(h))))
    });
    let pinned = Memo::new(move |_| {
        custom.with(|c| {
            models.with(|m| {
                pins.with(|p| {
                    p.iter()
                        .map(|s| analyze_on_own_hardware(s, c, m))
                        .collect::<Vec<_>>()
                })
            })
        })
    });
    let advice = Memo::new(move |_| hardware.with(|h| models.with(|m| scenario.with(|s| s.advise(h, m)))));
    let recommendation = Memo::new(move |_| {
        advice.with(|a| {
            let a = a.as_ref().map_err(Clone::clone)?;
            hardware.with(|h| models.with(|m| scenario.with(|s| s.recommend(h, m, a))))
        })
    });
    // When the device cannot run the config, the summary, chart and operators show the recommended one
    // (with why and its Apply): the first view always answers.
    let fallback = Memo::new(move |_| {
        analysis.with(|a| {
            if a.is_ok() {
                return None;
            }
            advice.with(|ad| {
                recommendation.with(|r| {
                    hardware.with(|h| scenario.with(|s| summary::fallback(a, ad, r, &s.config, &h.name)))
                })
            })
        })
    });
    let shown = Memo::new(move |_| match fallback.get() {
        Some(f) => hardware.with(|h| {
            models.with(|m| {
                scenario.with(|s| {
                    Scenario {
                        config: f.config,
                        ..s.clone()
                    }
                    .analyze(h, m)
                })
            })
        }),
        None => analysis.get(),
    });
    // The same step on the datasheet spec: the ideal bound shown beside reference and calibrated figures.
    let ideal = Memo::new(move |_| {
        if hardware.with(Mode::of) == Mode::Datasheet {
            return None;
        }
        let datasheet = specs.with(|d| d.datasheet.clone())?;
        let config = shown.with(|a| a.as_ref().ok().map(|a| a.config.clone()))?;
        models.with(|m| scenario.with(|s| Scenario { config, ..s.clone() }.analyze(&datasheet, m).ok()))
    });
    // Apply (summary or Advisor tab) remembers the config it replaced, offered back while it is in place.
    let applied = RwSignal::new(None::<(String, String)>);
    let apply = Callback::new(move |config: String| {
        let before = scenario.with_untracked(|s| s.config.clone());
        if before != config {
            applied.set(Some((before, config.clone())));
            scenario.update(|s| s.config = config);
        }
    });
    let undo = Signal::derive(move || {
        applied.with(|a| {
            a.as_ref()
                .filter(|(_, to)| scenario.with(|s| &s.config == to))
                .map(|(from, _)| from.clone())
        })
    });
    let on_undo = Callback::new(move |()| {
        if let Some(from) = undo.get_untracked() {
            applied.set(None);
            scenario.update(|s| s.config = from);
        }
    });
    let baseline =
        Signal::derive(move || advice.with(|a| a.as_ref().map(|a| a.baseline.clone()).unwrap_or_default()));
    // The measured step, when it is the step analysed (same scenario and device).
    let step_tracker = step_tracker();
    // The serving view's sweep, SLA and measured runs: computed only when the serving view (or an export)
    // reads them.
    let serving = ServingState::new(scenario, hardware, models, serving_runs);
    let is_step = Memo::new(move |_| scenario.with(|s| s.view == View::Step));
    let step_comparison = Memo::new(move |_| -> Option<StepComparison> {
        step_tracker.progress.with(|p| {
            let p = p.as_ref()?;
            hardware.with(|h| {
                let current = models.with(|m| scenario.with(|s| step::request(s, h, m))).ok()?;
                analysis.with(|a| step::compare(p, &current, a.as_ref().ok()?, h))
            })
        })
    });
    let plot = Memo::new(move |_| {
        let kinds = point_kinds.get();
        let mut points = Vec::new();
        let labels = custom
            .with(|c| models.with(|m| pins.with(|p| p.iter().map(|s| s.label(c, m)).collect::<Vec<_>>())));
        pins.with(|p| {
            pinned.with(|all| {
                // A pin on another device is compared in the pins table, not drawn against this device's roofs.
                let here = scenario.with(|s| s.hardware.clone());
                for (i, (s, a)) in p.iter().zip(all).enumerate() {
                    if let Ok(a) = a
                        && s.hardware == here
                        && kinds.pinned
                    {
                        points.extend(analysis_points(a, Some((PIN_RGB[i % PIN_RGB.len()], &labels[i]))));
                    }
                }
            })
        });
        if kinds.model {
            shown.with(|a| points.extend(a.as_ref().map(|a| analysis_points(a, None)).unwrap_or_default()));
        }
        // The measured step's operators are drawn as twins of their predicted points, not as plain points.
        let twins: HashSet<String> = step_comparison.with(|c| {
            let Some(c) = c else { return HashSet::new() };
            analysis.with(|a| {
                if let Ok(a) = a
                    && kinds.measured
                {
                    points.extend(step_points(a, c));
                }
            });
            step_tracker.progress.with(|p| {
                p.iter()
                    .flat_map(|p| &p.rows)
                    .filter_map(|r| r.measured.as_ref())
                    .map(point_key)
                    .collect()
            })
        });
        if kinds.kernel {
            rows.with(|r| points.extend(kernel_points(r)));
        }
        // A measurement is only ever compared with the roofs of the device that ran it; others, when asked
        // for, are drawn grey and say so.
        let filter = point_filter.get();
        shown_measured.with(|m| {
            hardware.with(|h| {
                let (mine, others): (Vec<_>, Vec<_>) = m
                    .iter()
                    .filter(|p| filter.keeps(p) && !twins.contains(&point_key(p)))
                    .cloned()
                    .partition(|p| same_device(&MeasuredPoint::from(p), h));
                if kinds.measured {
                    if filter.other_devices {
                        points.extend(other_device_points(&others));
                    }
                    points.extend(measured_points(&mine));
                }
            })
        });
        hardware.with(|h| {
            let data = plot_data(h, points);
            match specs.with(|d| d.beside(h).cloned()) {
                Some(other) => with_other(data, &other),
                None => data,
            }
        })
    });

    // Mode, device, model, config, phase, batch and context: printed under an exported PNG and SVG (the
    // scenario's label names the device, so the mode goes before it alone).
    let chart_caption = Signal::derive(move || {
        let label = custom.with(|c| models.with(|m| scenario.with(|s| s.label(c, m))));
        hardware.with(|h| format!("{} · {label}", Mode::of(h)))
    });
    // Saved once changes pause (a slider drag writes local storage once, not on every move), and at once when
    // the page is hidden or left, so a reload or a closed tab loses nothing.
    let save_now = move || {
        storage::save(&storage::Stored {
            schema: storage::SCHEMA,
            settings: scenario.get_untracked(),
            custom_hardware: custom.get_untracked(),
            custom_models: models.get_untracked(),
            pins: pins.get_untracked(),
            measured: measured.get_untracked(),
            serving_runs: serving_runs.get_untracked(),
        });
    };
    let mut save_later = debounce(storage::SAVE_DELAY, move |()| save_now());
    Effect::new(move |_| {
        scenario.track();
        custom.track();
        models.track();
        pins.track();
        measured.track();
        serving_runs.track();
        save_later(());
    });
    let _ = window_event_listener(leptos::ev::pagehide, move |_| save_now());
    let _ = window_event_listener(leptos::ev::visibilitychange, move |_| save_now());
    // The address bar (history.rs): a discrete change pushes at once, after writing the scenario it leaves into
    // the current entry (a continuous change just before it may not be written yet); a continuous one replaces
    // the entry once changes pause.
    let link_query = move |s: &Scenario| {
        custom.with_untracked(|c| {
            models.with_untracked(|m| pins.with_untracked(|p| SharedLink::query(s, c, m, p)))
        })
    };
    let replace_now = move || history::write(&scenario.with_untracked(|s| link_query(s)), false);
    let mut replace_later = debounce(history::REPLACE_DELAY, move |()| replace_now());
    // Pins, custom devices and models are in the link at once: a reload opens on the URL, whose pins and
    // devices win over saved ones.
    Effect::new(move |_| {
        custom.track();
        models.track();
        pins.track();
        replace_now();
    });
    Effect::new(move |previous: Option<Scenario>| {
        let next = scenario.get();
        match previous.filter(|p| p.is_discrete_change(&next)) {
            // (Not after Back or Forward: the URL already holds the scenario restored.)
            Some(left) => {
                let query = link_query(&next);
                if !history::holds(&query) {
                    history::write(&link_query(&left), false);
                    history::write(&query, true);
                }
            }
            None => replace_later(()),
        }
        next
    });
    let _ = window_event_listener(leptos::ev::popstate, move |_| {
        if let Some(link) = history::read() {
            let mut s = link.scenario;
            models.with_untracked(|m| s.replace_unknown_keys(m));
            scenario.set(s);
        }
    });

    let results = move |json: bool| {
        let s = scenario.get_untracked();
        let hw = hardware.get_untracked();
        let a = shown.get_untracked().ok();
        let (r, m) = (rows.get_untracked(), shown_measured.get_untracked());
        let (runs, sweep) = (serving_runs.get_untracked(), serving.sweep.get_untracked());
        let (outcome, compared) = (serving.outcome.get_untracked(), serving.compared.get_untracked());
        let serving = export::ServingExport {
            runs: &runs,
            sweep: sweep.as_ref().as_ref().ok(),
            outcome: outcome.as_ref(),
            compared: Some(&compared),
        };
        if json {
            export::results_json(&s, &hw, a.as_ref(), &r, &m, &serving)
        } else {
            export::results_csv(&s, &hw, a.as_ref(), &r, &m, &serving)
        }
    };
    let clear = move || {
        storage::clear();
        scenario.set(Scenario::default());
        custom.set(Vec::new());
        models.set(Vec::new());
        pins.set(Vec::new());
        measured.set(Vec::<RooflinePoint>::new());
        serving_runs.set(Vec::new());
        notice.set(Some("Saved data cleared; defaults restored.".to_owned()));
    };

    let operators_caption = Signal::derive(move || {
        let mode = mode_caption.get();
        match fallback.get() {
            Some(f) => format!("{mode} — {}, the recommended config", f.name),
            None => mode,
        }
    });

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
            <ViewSwitch scenario=scenario />
            <div class="header-right"><EndpointStatus /></div>
        </header>
        <EndpointBanner scenario=scenario />
        <main class="layout">
            <aside class="left" aria-label="Device and workload">
                <HardwarePicker scenario=scenario hardware=hardware custom=custom />
                <CustomHardware scenario=scenario custom=custom hardware=own />
                <WorkloadForm scenario=scenario hardware=hardware specs=specs models=models />
                <ModelImport scenario=scenario models=models />
                <ResultsIo
                    to_json=Callback::new(move |()| results(true))
                    to_csv=Callback::new(move |()| results(false))
                    measured=measured
                    on_clear=Callback::new(move |()| clear())
                />
            </aside>
            <Show when=move || is_step.get() fallback=move || view! {
                <ServingView scenario=scenario hardware=hardware state=serving custom=custom models=models />
            }>
                <section class="centre" aria-label="Analysis">
                    <SummaryStrip
                        analysis=shown
                        ideal=ideal
                        hardware=hardware
                        notice=mode_notice
                        ceilings=ceilings
                        recommendation=recommendation
                        baseline=baseline
                        fallback=fallback
                        apply=apply
                        undo=undo
                        on_undo=on_undo
                    />
                    <RooflineChart data=plot caption=chart_caption kinds=point_kinds />
                    <MeasuredCount hardware=hardware filter=point_filter />
                    <PinsPanel scenario=scenario pins=pins current=analysis pinned=pinned custom=custom models=models />
                    <StepMeasure
                        scenario=scenario
                        hardware=hardware
                        models=models
                        tracker=step_tracker
                        comparison=step_comparison
                    />
                    <OperatorTable analysis=shown caption=operators_caption hardware=hardware step=step_comparison />
                </section>
            </Show>
            <RightPanel scenario=scenario hardware=hardware rows=rows advice=advice recommendation=recommendation custom=custom apply=apply />
        </main>
    }
}
