//! Where the page's inputs come from and go: the URL, else local storage, else defaults, at load; written
//! back to local storage once changes pause (and at once when the page is hidden or left) and to the
//! address bar (a discrete change pushes a history entry, a continuous one replaces it once changes pause).

use leptos::prelude::*;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::wire::RooflinePoint;
use roofline_core::{HardwareSpec, ModelConfig};

use crate::history;
use crate::scenario::Scenario;
use crate::serving::measured::ServingRun;
use crate::share_link::SharedLink;
use crate::storage::{self, Stored};

/// The page's inputs as loaded, and what to tell the user about them.
pub struct Loaded {
    /// The inputs.
    pub stored: Stored,
    /// Why saved data or the link could not be taken as it was.
    pub notice: Option<String>,
}

/// The inputs of the URL, else of local storage, else the defaults. The link's devices, models and pins win
/// over saved ones of the same key: it opens as it was shared.
#[must_use]
pub fn load() -> Loaded {
    let (mut stored, mut notice) = storage::load();
    let link = history::read();
    if let Some(link) = &link {
        for spec in &link.devices {
            stored.custom_hardware.retain(|h| h.key != spec.key);
            stored.custom_hardware.push(spec.clone());
        }
        for model in &link.models {
            stored.custom_models.retain(|m| m.key != model.key);
            stored.custom_models.push(model.clone());
        }
        if let Some(p) = &link.pins {
            stored.pins.clone_from(p);
        }
        if !link.bad_devices.is_empty() {
            notice = Some(format!(
                "The link's custom device or model could not be read: {}",
                link.bad_devices.join("; ")
            ));
        }
    }
    if let Some(link) = link {
        stored.settings = link.scenario;
    }
    let replaced = stored.settings.replace_unknown_keys(&stored.custom_models);
    if !replaced.is_empty() {
        let text = format!("The link names {}.", replaced.join("; "));
        notice = Some(notice.map_or(text.clone(), |n| format!("{n} {text}")));
    }
    Loaded { stored, notice }
}

/// The inputs that are saved and linked.
#[derive(Clone, Copy)]
pub struct Saved {
    /// The scenario.
    pub scenario: RwSignal<Scenario>,
    /// Custom devices and calibrations.
    pub custom: RwSignal<Vec<HardwareSpec>>,
    /// Imported models.
    pub models: RwSignal<Vec<ModelConfig>>,
    /// The pins.
    pub pins: RwSignal<Vec<Scenario>>,
    /// Points measured or imported in this browser (saved as the wire's points).
    pub measured: RwSignal<Vec<MeasuredPoint>>,
    /// Imported serving runs.
    pub serving_runs: RwSignal<Vec<ServingRun>>,
}

impl Saved {
    /// Signals holding `stored`.
    #[must_use]
    pub fn new(stored: Stored) -> Saved {
        Saved {
            scenario: RwSignal::new(stored.settings),
            custom: RwSignal::new(stored.custom_hardware),
            models: RwSignal::new(stored.custom_models),
            pins: RwSignal::new(stored.pins),
            measured: RwSignal::new(stored.measured.iter().map(MeasuredPoint::from).collect()),
            serving_runs: RwSignal::new(stored.serving_runs),
        }
    }

    /// Saves to local storage once changes pause (a slider drag writes once, not on every move), and at
    /// once when the page is hidden or left, so a reload or a closed tab loses nothing.
    pub fn keep(self) {
        let save_now = move || {
            storage::save(&Stored {
                schema: storage::SCHEMA,
                settings: self.scenario.get_untracked(),
                custom_hardware: self.custom.get_untracked(),
                custom_models: self.models.get_untracked(),
                pins: self.pins.get_untracked(),
                measured: self
                    .measured
                    .with_untracked(|m| m.iter().map(RooflinePoint::from).collect()),
                serving_runs: self.serving_runs.get_untracked(),
            });
        };
        let mut save_later = debounce(storage::SAVE_DELAY, move |()| save_now());
        Effect::new(move |_| {
            self.scenario.track();
            self.custom.track();
            self.models.track();
            self.pins.track();
            self.measured.track();
            self.serving_runs.track();
            save_later(());
        });
        let _ = window_event_listener(leptos::ev::pagehide, move |_| save_now());
        let _ = window_event_listener(leptos::ev::visibilitychange, move |_| save_now());
    }

    /// Writes the address bar (history.rs): a discrete change pushes at once, after writing the scenario it
    /// leaves into the current entry (a continuous change just before it may not be written yet); a
    /// continuous one replaces the entry once changes pause. Back and Forward restore the scenario.
    pub fn link(self) {
        let Saved {
            scenario,
            custom,
            models,
            pins,
            ..
        } = self;
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
    }

    /// Removes everything saved and restores the defaults.
    pub fn clear(self) {
        storage::clear();
        self.scenario.set(Scenario::default());
        self.custom.set(Vec::new());
        self.models.set(Vec::new());
        self.pins.set(Vec::new());
        self.measured.set(Vec::new());
        self.serving_runs.set(Vec::new());
    }
}
