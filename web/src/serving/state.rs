//! The serving view's memos. The sweep is keyed on its inputs only ([`SweepKey`]): a change elsewhere in
//! the scenario (the step's batch, the kernel shape, the SLA) leaves the key equal and the sweep is not run
//! again; a key seen lately comes from the [`SweepCache`]. All of it is lazy: nothing is swept until the
//! serving view (or an export) reads it.

use std::sync::Arc;

use leptos::prelude::*;
use roofline_core::{Error, HardwareSpec, ModelConfig, Sla, SlaOutcome, Sweep};

use crate::scenario::Scenario;
use crate::serving::measured::{Compared, RanOn, ServingRun, compare};
use crate::serving::{SweepCache, SweepKey};

/// The serving view's derived state, shared by the view and the exports.
#[derive(Debug, Clone, Copy)]
pub struct ServingState {
    /// The sweep's inputs, or why the scenario has none (an unknown model).
    pub key: Memo<Result<SweepKey, Error>>,
    /// The sweep of the key (the same `Arc` while the key is unchanged).
    pub sweep: Memo<Arc<Result<Sweep, Error>>>,
    /// The SLA over the sweep (`None` when the sweep failed).
    pub outcome: Memo<Option<SlaOutcome>>,
    /// The kept measured runs against the view's scenario.
    pub compared: Memo<Compared>,
    /// Every kept measured run (saved in local storage).
    pub runs: RwSignal<Vec<ServingRun>>,
    cache: StoredValue<SweepCache>,
}

impl ServingState {
    /// The memos over `scenario` on `hardware` (its effective spec) with the imported `models` and the kept
    /// `runs`.
    #[must_use]
    pub fn new(
        scenario: RwSignal<Scenario>,
        hardware: Memo<HardwareSpec>,
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
        let sla = Memo::new(move |_| scenario.with(|s| s.serving.sla));
        let outcome = Memo::new(move |_| {
            sweep.with(|s| {
                s.as_ref()
                    .as_ref()
                    .ok()
                    .map(|s| sla.with(|l: &Sla| l.evaluate(s)))
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
            outcome,
            compared,
            runs,
            cache,
        }
    }

    /// Sweeps run so far in this page (a cached sweep is not counted); the view shows it as `data-sweeps`.
    #[must_use]
    pub fn sweeps_run(&self) -> usize {
        self.cache.with_value(SweepCache::runs)
    }
}
