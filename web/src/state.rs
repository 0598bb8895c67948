//! The page's state, provided once as context (the Leptos todomvc way): what the user sets (scenario,
//! custom devices, imported models, pins, measured points, serving runs), what is derived from it (memos
//! built once here, each run only when read), the endpoint and its jobs, and the open tab. `App` creates it;
//! components read it with [`use_app`].

pub mod derived;
pub mod jobs;
pub mod persist;
pub mod plot;
pub mod tab;

use leptos::prelude::*;
use roofline_core::{HardwareSpec, ModelConfig};

use crate::endpoint::Endpoint;
use crate::export;
use crate::measured::Measured;
use crate::scenario::Scenario;
use crate::serving::state::ServingState;
use derived::{Analyses, Applied, Device, MeasuredStep};
use jobs::{JobTracker, SpotCheck};
use persist::Saved;
use plot::{Chart, Sources};
pub use tab::Tab;

/// Everything the page's components share; every field is a cheap reactive handle.
#[derive(Clone, Copy)]
pub struct AppState {
    /// The scenario: device, model, config, workload, mode, kernel shape, view.
    pub scenario: RwSignal<Scenario>,
    /// Custom devices and calibrations.
    pub custom: RwSignal<Vec<HardwareSpec>>,
    /// Imported models.
    pub models: RwSignal<Vec<ModelConfig>>,
    /// Pinned scenarios.
    pub pins: RwSignal<Vec<Scenario>>,
    /// What to tell the user about saved data (`storage-notice`).
    pub notice: RwSignal<Option<String>>,
    /// The right panel's open tab.
    pub tab: RwSignal<Tab>,
    /// The endpoint.
    pub endpoint: Endpoint,
    /// Measured points: this browser's and the endpoint's.
    pub measured: Measured,
    /// The selected device.
    pub device: Device,
    /// The scenario analysed on it.
    pub analyses: Analyses,
    /// Apply and Undo of a config.
    pub applied: Applied,
    /// The measured step.
    pub step: MeasuredStep,
    /// The roofline chart's data and controls.
    pub chart: Chart,
    /// The serving view's sweep, SLA and measured runs.
    pub serving: ServingState,
    /// The Benchmark tab's job.
    pub job: JobTracker,
    /// The Kernel tab's spot check.
    pub spot: SpotCheck,
    saved: Saved,
}

impl AppState {
    /// Loads the inputs, builds the state, keeps it saved and in the address bar, and provides it.
    pub fn provide() -> AppState {
        let loaded = persist::load();
        let saved = Saved::new(loaded.stored);
        let Saved {
            scenario,
            custom,
            models,
            pins,
            measured: local,
            serving_runs,
        } = saved;
        let endpoint = Endpoint::start();
        let measured = Measured::new(local, endpoint);
        let device = Device::new(scenario, custom);
        let analyses = Analyses::new(scenario, custom, models, pins, device);
        let tracker = jobs::step_tracker(endpoint, measured);
        let step = MeasuredStep::new(tracker, scenario, device.hardware, models, analyses.analysis);
        let chart = Chart::new(Sources {
            scenario,
            custom,
            models,
            pins,
            device,
            analyses,
            step,
            measured: measured.shown,
        });
        saved.keep();
        saved.link();
        let app = AppState {
            scenario,
            custom,
            models,
            pins,
            notice: RwSignal::new(loaded.notice),
            tab: RwSignal::new(Tab::default()),
            endpoint,
            measured,
            device,
            analyses,
            applied: Applied::new(scenario),
            step,
            chart,
            serving: ServingState::new(scenario, device.hardware, custom, models, serving_runs),
            job: jobs::job_tracker(endpoint, measured),
            spot: jobs::spot_check(scenario, device.hardware, endpoint, measured),
            saved,
        };
        provide_context(app);
        app
    }

    /// The results as JSON (`json`) or CSV: the scenario, its spec, the shown step, the kernel rows, the
    /// measured points and the serving view's runs, sweep and SLA outcome.
    #[must_use]
    pub fn results(self, json: bool) -> String {
        let s = self.scenario.get_untracked();
        let hw = self.device.hardware.get_untracked();
        let a = self.analyses.shown.get_untracked().ok();
        let (r, m) = (
            self.analyses.rows.get_untracked(),
            self.measured.shown.get_untracked(),
        );
        let serving = self.serving;
        let (runs, sweep) = (serving.runs.get_untracked(), serving.sweep.get_untracked());
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
    }

    /// Removes everything saved and restores the defaults, saying so.
    pub fn clear(self) {
        self.saved.clear();
        self.notice
            .set(Some("Saved data cleared; defaults restored.".to_owned()));
    }
}

/// The app state.
///
/// # Panics
/// When called outside the app (a programming error).
#[must_use]
pub fn use_app() -> AppState {
    expect_context::<AppState>()
}
