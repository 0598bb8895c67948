//! What the page derives from the scenario: the device's specs and the spec predictions use, the analysed
//! step and its ideal bound, the kernel rows, the pins' analyses, the advice and its one answer. Memos,
//! built once by the app state; each runs only when something on screen (or an export) reads it.

use leptos::prelude::*;
use roofline_core::{
    Advice, Error, HardwareSpec, Mode, ModelAnalysis, ModelConfig, Recommendation, find_hardware,
};

use roofline_core::wire::StepRequest;

use crate::calibration::{DeviceSpecs, effective_hardware, mode_label, resolve};
use crate::scenario::{KernelRow, Scenario, UsedCeiling};
use crate::serving_inputs::{ServingInputs, View};
use crate::state::jobs::StepTracker;
use crate::step::{self, StepComparison, StepRequestError};
use crate::summary::{self, Fallback};

/// The selected device.
#[derive(Clone, Copy)]
pub struct Device {
    /// Its specs in every mode it has (the default device's when the key names none).
    pub specs: Memo<DeviceSpecs>,
    /// The spec predictions use: the scenario's mode, or the one the notice names.
    pub hardware: Memo<HardwareSpec>,
    /// The device as catalogued or entered (not scaled into a mode): what custom-device editing starts from.
    pub own: Memo<HardwareSpec>,
    /// Why the mode asked for is not the one shown, if it is not.
    pub notice: Memo<Option<String>>,
    /// The mode and device of every number, e.g. `reference · NVIDIA GB10`.
    pub caption: Memo<String>,
    /// The specs of the key as selected, with no fallback (empty for an unknown key): what the Validation
    /// tab compares and the Calibration panel reads.
    pub listed: Memo<DeviceSpecs>,
}

impl Device {
    /// The memos over the scenario's device and mode and the custom devices.
    #[must_use]
    pub fn new(scenario: RwSignal<Scenario>, custom: RwSignal<Vec<HardwareSpec>>) -> Device {
        // The device and mode alone decide the specs, so slider moves do not resolve them again.
        let key = Memo::new(move |_| scenario.with(|s| s.hardware.clone()));
        let mode = Memo::new(move |_| scenario.with(|s| s.corrections.mode));
        let resolved = Memo::new(move |_| key.with(|k| custom.with(|c| resolve(k, mode.get(), c))));
        let specs = Memo::new(move |_| resolved.with(|r| r.specs.clone()));
        let hardware = Memo::new(move |_| resolved.with(|r| r.effective.spec.clone()));
        Device {
            specs,
            hardware,
            own: Memo::new(move |_| specs.with(|d| d.own().cloned()).unwrap_or_else(|| hardware.get())),
            notice: Memo::new(move |_| resolved.with(|r| r.effective.notice.clone())),
            caption: Memo::new(move |_| hardware.with(mode_label)),
            listed: Memo::new(move |_| key.with(|k| custom.with(|c| DeviceSpecs::of(k, c)))),
        }
    }
}

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

/// The scenario without the serving view's inputs, the spec predictions use and the imported models: what a
/// step's analysis reads (typing an SLA in the serving view analyses no step again).
#[derive(Clone, Copy)]
struct On {
    scenario: Memo<Scenario>,
    hardware: Memo<HardwareSpec>,
    models: RwSignal<Vec<ModelConfig>>,
}

impl On {
    /// The step's inputs of `scenario` on `hardware` with `models`.
    fn new(
        scenario: RwSignal<Scenario>,
        hardware: Memo<HardwareSpec>,
        models: RwSignal<Vec<ModelConfig>>,
    ) -> On {
        let step = Memo::new(move |_| {
            scenario.with(|s| Scenario {
                view: View::default(),
                serving: ServingInputs::default(),
                ..s.clone()
            })
        });
        On {
            scenario: step,
            hardware,
            models,
        }
    }

    /// `f(scenario, spec, models)`, tracked.
    fn with<T>(self, f: impl FnOnce(&Scenario, &HardwareSpec, &[ModelConfig]) -> T) -> T {
        self.hardware
            .with(|h| self.models.with(|m| self.scenario.with(|s| f(s, h, m))))
    }
}

/// The scenario analysed on the selected device.
#[derive(Clone, Copy)]
pub struct Analyses {
    /// The scenario's step, or why the device cannot run it.
    pub analysis: Memo<Result<ModelAnalysis, Error>>,
    /// The step shown: the scenario's, or the recommended config's when the device cannot run it.
    pub shown: Memo<Result<ModelAnalysis, Error>>,
    /// The recommended config shown in place of one the device cannot run (with why and its Apply): the
    /// first view always answers.
    pub fallback: Memo<Option<Fallback>>,
    /// The shown step on the datasheet spec: the ideal bound beside reference and calibrated figures.
    pub ideal: Memo<Option<ModelAnalysis>>,
    /// The reference ceilings used (reference mode only).
    pub ceilings: Memo<Option<Vec<UsedCeiling>>>,
    /// The kernel shape in each ticked precision.
    pub rows: Memo<Vec<KernelRow>>,
    /// Each pin analysed on its own device in its own mode, in pin order.
    pub pinned: Memo<Vec<Result<ModelAnalysis, Error>>>,
    /// The ranked configs.
    pub advice: Memo<Result<Advice, Error>>,
    /// The advisor's one answer.
    pub recommendation: Memo<Result<Recommendation, Error>>,
}

impl Analyses {
    /// The memos over the scenario, pins, custom devices and imported models on `device`.
    #[must_use]
    pub fn new(
        scenario: RwSignal<Scenario>,
        custom: RwSignal<Vec<HardwareSpec>>,
        models: RwSignal<Vec<ModelConfig>>,
        pins: RwSignal<Vec<Scenario>>,
        device: Device,
    ) -> Analyses {
        let Device { hardware, specs, .. } = device;
        let on = On::new(scenario, hardware, models);
        let analysis = Memo::new(move |_| on.with(|s, h, m| s.analyze(h, m)));
        let advice = Memo::new(move |_| on.with(|s, h, m| s.advise(h, m)));
        let recommendation = Memo::new(move |_| {
            advice.with(|a| {
                let a = a.as_ref().map_err(Clone::clone)?;
                on.with(|s, h, m| s.recommend(h, m, a))
            })
        });
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
        let with_config = move |config: String, h: &HardwareSpec| {
            models.with(|m| scenario.with(|s| Scenario { config, ..s.clone() }.analyze(h, m)))
        };
        let shown = Memo::new(move |_| match fallback.get() {
            Some(f) => hardware.with(|h| with_config(f.config, h)),
            None => analysis.get(),
        });
        let ideal = Memo::new(move |_| {
            if hardware.with(Mode::of) == Mode::Datasheet {
                return None;
            }
            let datasheet = specs.with(|d| d.datasheet.clone())?;
            let config = shown.with(|a| a.as_ref().ok().map(|a| a.config.clone()))?;
            with_config(config, &datasheet).ok()
        });
        Analyses {
            analysis,
            shown,
            fallback,
            ideal,
            ceilings: Memo::new(move |_| on.with(|s, h, m| s.used_reference_ceilings(h, m))),
            rows: Memo::new(move |_| {
                hardware.with(|h| scenario.with(|s| s.kernel.evaluate(h, &s.core_corrections(h))))
            }),
            pinned: Memo::new(move |_| {
                custom.with(|c| {
                    models
                        .with(|m| pins.with(|p| p.iter().map(|s| analyze_on_own_hardware(s, c, m)).collect()))
                })
            }),
            advice,
            recommendation,
        }
    }
}

/// Apply (summary or Advisor tab) remembers the config it replaced, offered back while it is in place.
#[derive(Clone, Copy)]
pub struct Applied {
    scenario: RwSignal<Scenario>,
    /// The config replaced and the one applied.
    last: RwSignal<Option<(String, String)>>,
}

impl Applied {
    /// Nothing applied yet.
    #[must_use]
    pub fn new(scenario: RwSignal<Scenario>) -> Applied {
        Applied {
            scenario,
            last: RwSignal::new(None),
        }
    }

    /// Switches the scenario to `config`, remembering the one it replaces.
    pub fn apply(self, config: String) {
        let before = self.scenario.with_untracked(|s| s.config.clone());
        if before != config {
            self.last.set(Some((before, config.clone())));
            self.scenario.update(|s| s.config = config);
        }
    }

    /// The config an Apply replaced, while the applied one is in place (tracked).
    #[must_use]
    pub fn undoable(self) -> Option<String> {
        self.last.with(|a| {
            a.as_ref()
                .filter(|(_, to)| self.scenario.with(|s| &s.config == to))
                .map(|(from, _)| from.clone())
        })
    }

    /// Restores the config the last Apply replaced.
    pub fn undo(self) {
        if let Some(from) = untrack(|| self.undoable()) {
            self.last.set(None);
            self.scenario.update(|s| s.config = from);
        }
    }
}

/// The step measured on the endpoint, against the step analysed.
#[derive(Clone, Copy)]
pub struct MeasuredStep {
    /// The job.
    pub tracker: StepTracker,
    /// The request that measures the scenario's step, or why it cannot be measured.
    pub request: Memo<Result<StepRequest, StepRequestError>>,
    /// The job compared with the analysis, when it measured the step analysed (same scenario and device).
    pub comparison: Memo<Option<StepComparison>>,
}

impl MeasuredStep {
    /// The memos over `tracker`'s job and the scenario's `analysis`.
    #[must_use]
    pub fn new(
        tracker: StepTracker,
        scenario: RwSignal<Scenario>,
        hardware: Memo<HardwareSpec>,
        models: RwSignal<Vec<ModelConfig>>,
        analysis: Memo<Result<ModelAnalysis, Error>>,
    ) -> MeasuredStep {
        let on = On::new(scenario, hardware, models);
        let request = Memo::new(move |_| on.with(step::request));
        let comparison = Memo::new(move |_| {
            tracker.progress.with(|p| {
                let p = p.as_ref()?;
                request.with(|r| {
                    let current = r.as_ref().ok()?;
                    hardware.with(|h| analysis.with(|a| step::compare(p, current, a.as_ref().ok()?, h)))
                })
            })
        });
        MeasuredStep {
            tracker,
            request,
            comparison,
        }
    }
}
