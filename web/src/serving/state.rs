//! The serving view's memos. The sweep is keyed on its inputs only ([`SweepKey`]): a change elsewhere in
//! the scenario (the step's batch, the kernel shape, the SLA) leaves the key equal and the sweep is not run
//! again; a key seen lately comes from the [`SweepCache`]. The compared devices are swept the same way. All
//! of it is lazy: nothing is swept until the serving view (or an export) reads it.

use std::collections::BTreeMap;
use std::sync::Arc;

use leptos::prelude::*;
use roofline_core::{Error, HardwareSpec, ModelConfig, Sizing, SizingSpec, SlaOutcome, Sweep};

use crate::calibration::{effective_hardware, mode_label};
use crate::scenario::Scenario;
use crate::serving::measured::{Compared, RanOn, ServingRun, compare};
use crate::serving::{SweepCache, SweepKey};
use crate::serving_inputs::ServingInputs;

/// A device compared beside the scenario's: its sweep under the same inputs and its sizing.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceSweep {
    /// Device key.
    pub key: String,
    /// Mode and device, e.g. `reference · NVIDIA B200`.
    pub label: String,
    /// Why the scenario's mode could not be had on it, if it could not.
    pub notice: Option<String>,
    /// Its sweep, or why there is none (an unknown device, an invalid input).
    pub sweep: Arc<Result<Sweep, Error>>,
    /// The SLA over it.
    pub sizing: Option<Sizing>,
}

/// The serving view's derived state, shared by the view and the exports.
#[derive(Debug, Clone, Copy)]
pub struct ServingState {
    /// The sweep's inputs, or why the scenario has none (an unknown model).
    pub key: Memo<Result<SweepKey, Error>>,
    /// The sweep of the key (the same `Arc` while the key is unchanged).
    pub sweep: Memo<Arc<Result<Sweep, Error>>>,
    /// The sizing answer over the sweep (`None` when the sweep failed).
    pub sizing: Memo<Option<Sizing>>,
    /// The SLA over the configs the engine serves (the sizing's), for the exports.
    pub outcome: Memo<Option<SlaOutcome>>,
    /// The compared devices, each swept.
    pub devices: Memo<Vec<DeviceSweep>>,
    /// The kept measured runs against the view's scenario.
    pub compared: Memo<Compared>,
    /// Every kept measured run (saved in local storage).
    pub runs: RwSignal<Vec<ServingRun>>,
    /// Chart series shown or hidden by a legend click, by series id (the rest take their default).
    pub shown: RwSignal<BTreeMap<String, bool>>,
    cache: StoredValue<SweepCache>,
}

/// The sizing of `sweep` under the scenario's SLA and GPU counts.
fn size(sweep: &Result<Sweep, Error>, key: &SweepKey, s: &Scenario) -> Option<Sizing> {
    let sweep = sweep.as_ref().ok()?;
    let spec = SizingSpec {
        sla: s.serving.sla,
        percentile: s.serving.percentile,
        gpus: &s.serving.gpus,
    };
    Some(Sizing::new(sweep, &key.model, &key.hardware, &spec))
}

impl ServingState {
    /// The memos over `scenario` on `hardware` (its effective spec) with the custom devices, the imported
    /// `models` and the kept `runs`.
    #[must_use]
    pub fn new(
        scenario: RwSignal<Scenario>,
        hardware: Memo<HardwareSpec>,
        custom: RwSignal<Vec<HardwareSpec>>,
        models: RwSignal<Vec<ModelConfig>>,
        runs: RwSignal<Vec<ServingRun>>,
    ) -> ServingState {
        let cache = StoredValue::new(SweepCache::default());
        let key =
            Memo::new(move |_| hardware.with(|h| models.with(|m| scenario.with(|s| SweepKey::of(s, h, m)))));
        let sweep = Memo::new_with_compare(
            move |_| {
                key.with(|k| match k {
                    Ok(k) => cache.write_value().get(k),
                    Err(e) => Arc::new(Err(e.clone())),
                })
            },
            |old, new| !matches!((old, new), (Some(a), Some(b)) if Arc::ptr_eq(a, b)),
        );
        let sla = Memo::new(move |_| {
            scenario.with(|s| (s.serving.sla, s.serving.percentile, s.serving.gpus.clone()))
        });
        let sizing = Memo::new(move |_| {
            sla.track();
            sweep.with(|w| {
                key.with(|k| {
                    k.as_ref()
                        .ok()
                        .and_then(|k| scenario.with_untracked(|s| size(w, k, s)))
                })
            })
        });
        let outcome = Memo::new(move |_| sizing.with(|z| z.as_ref().map(|z| z.outcome.clone())));
        // Only what a sweep and its sizing read: a slider move in the step view sweeps nothing again.
        let compare_keys = Memo::new(move |_| {
            scenario.with(|s| {
                let inputs = Scenario {
                    model: s.model.clone(),
                    engine: s.engine,
                    memory_fraction: s.memory_fraction,
                    corrections: s.corrections,
                    serving: ServingInputs {
                        compare: Vec::new(),
                        ..s.serving.clone()
                    },
                    ..Scenario::default()
                };
                (s.serving.compare.clone(), inputs)
            })
        });
        let devices = Memo::new(move |_| {
            compare_keys.with(|(keys, s)| {
                custom.with(|c| {
                    models.with(|m| {
                        keys.iter()
                            .map(|device| compared_device(device, s, c, m, cache))
                            .collect()
                    })
                })
            })
        });
        let view = Memo::new(move |_| scenario.with(RanOn::of));
        let compared = Memo::new(move |_| {
            sweep.with(|s| {
                key.with(|k| match (s.as_ref(), k) {
                    (Ok(sweep), Ok(key)) => runs.with(|r| view.with(|v| compare(r, v, key, sweep))),
                    _ => Compared::default(),
                })
            })
        });
        ServingState {
            key,
            sweep,
            sizing,
            outcome,
            devices,
            compared,
            runs,
            shown: RwSignal::new(BTreeMap::new()),
            cache,
        }
    }

    /// Sweeps run so far in this page (a cached sweep is not counted); the view shows it as `data-sweeps`.
    #[must_use]
    pub fn sweeps_run(&self) -> usize {
        self.cache.with_value(SweepCache::runs)
    }
}

/// Device `device` swept as scenario `s` (its own device cleared) asks, in its mode.
fn compared_device(
    device: &str,
    s: &Scenario,
    custom: &[HardwareSpec],
    models: &[ModelConfig],
    cache: StoredValue<SweepCache>,
) -> DeviceSweep {
    let scenario = Scenario {
        hardware: device.to_owned(),
        ..s.clone()
    };
    let Some(effective) = effective_hardware(&scenario, custom) else {
        return DeviceSweep {
            key: device.to_owned(),
            label: device.to_owned(),
            notice: None,
            sweep: Arc::new(Err(Error::InvalidInput(format!("unknown device {device}")))),
            sizing: None,
        };
    };
    let key = SweepKey::of(&scenario, &effective.spec, models);
    let sweep = match &key {
        Ok(k) => cache.write_value().get(k),
        Err(e) => Arc::new(Err(e.clone())),
    };
    let sizing = key.as_ref().ok().and_then(|k| size(&sweep, k, &scenario));
    DeviceSweep {
        key: device.to_owned(),
        label: mode_label(&effective.spec),
        notice: effective.notice,
        sweep,
        sizing,
    }
}
