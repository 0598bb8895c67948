//! What the roofline chart draws: the shown step's operators, the pins on the selected device, the kernel
//! rows, the measured step's operators beside their predictions and the measured points (this device's, and
//! other devices' greyed when asked for), under the toggles and the measured-point filter.

use std::collections::HashSet;

use leptos::prelude::*;
use roofline_core::measured_device::same_device;
use roofline_core::measurement::MeasuredPoint;
use roofline_core::{HardwareSpec, ModelConfig};

use crate::charts::series::{
    PlotData, PlotPoint, PointKinds, analysis_points, kernel_points, measured_points, other_device_points,
    plot_data, step_points, with_other,
};
use crate::measured::{PointFilter, point_key};
use crate::palette::PIN_RGB;
use crate::scenario::Scenario;
use crate::state::derived::{Analyses, Device, MeasuredStep};

/// The chart's data and its controls.
#[derive(Clone, Copy)]
pub struct Chart {
    /// Which measured points are drawn.
    pub filter: RwSignal<PointFilter>,
    /// Which kinds of points are drawn.
    pub kinds: RwSignal<PointKinds>,
    /// What is drawn.
    pub plot: Memo<PlotData>,
}

/// What the chart is drawn from.
#[derive(Clone, Copy)]
pub struct Sources {
    /// The scenario.
    pub scenario: RwSignal<Scenario>,
    /// Custom devices (pin labels).
    pub custom: RwSignal<Vec<HardwareSpec>>,
    /// Imported models (pin labels).
    pub models: RwSignal<Vec<ModelConfig>>,
    /// The pins.
    pub pins: RwSignal<Vec<Scenario>>,
    /// The selected device.
    pub device: Device,
    /// The analyses.
    pub analyses: Analyses,
    /// The measured step.
    pub step: MeasuredStep,
    /// Every measured point shown.
    pub measured: Memo<Vec<MeasuredPoint>>,
}

impl Chart {
    /// Every point drawn, from default toggles and filter.
    #[must_use]
    pub fn new(from: Sources) -> Chart {
        let filter = RwSignal::new(PointFilter::default());
        let kinds = RwSignal::new(PointKinds::default());
        let Sources { device, analyses, .. } = from;
        let plot = Memo::new(move |_| {
            let kinds = kinds.get();
            let mut points = Vec::new();
            if kinds.pinned {
                points.extend(pin_points(from));
            }
            if kinds.model {
                analyses.shown.with(|a| {
                    points.extend(a.as_ref().map(|a| analysis_points(a, None)).unwrap_or_default())
                });
            }
            let twins = step_twins(from, kinds.measured, &mut points);
            if kinds.kernel {
                analyses.rows.with(|r| points.extend(kernel_points(r)));
            }
            // A measurement is only ever compared with the roofs of the device that ran it; others, when
            // asked for, are drawn grey and say so.
            let filter = filter.get();
            from.measured.with(|m| {
                device.hardware.with(|h| {
                    let (mine, others): (Vec<_>, Vec<_>) = m
                        .iter()
                        .filter(|p| filter.keeps(p) && !twins.contains(&point_key(p)))
                        .cloned()
                        .partition(|p| same_device(p, h));
                    if kinds.measured {
                        if filter.other_devices {
                            points.extend(other_device_points(&others));
                        }
                        points.extend(measured_points(&mine));
                    }
                })
            });
            device.hardware.with(|h| {
                let data = plot_data(h, points);
                match device.specs.with(|d| d.beside(h).cloned()) {
                    Some(other) => with_other(data, &other),
                    None => data,
                }
            })
        });
        Chart { filter, kinds, plot }
    }
}

/// The pins on the selected device, each in its colour (a pin on another device is compared in the pins
/// table, not drawn against this device's roofs).
fn pin_points(from: Sources) -> Vec<PlotPoint> {
    let Sources {
        scenario,
        custom,
        models,
        pins,
        analyses,
        ..
    } = from;
    let labels =
        custom.with(|c| models.with(|m| pins.with(|p| p.iter().map(|s| s.label(c, m)).collect::<Vec<_>>())));
    let mut points = Vec::new();
    pins.with(|p| {
        analyses.pinned.with(|all| {
            let here = scenario.with(|s| s.hardware.clone());
            for (i, (s, a)) in p.iter().zip(all).enumerate() {
                if let Ok(a) = a
                    && s.hardware == here
                {
                    points.extend(analysis_points(a, Some((PIN_RGB[i % PIN_RGB.len()], &labels[i]))));
                }
            }
        })
    });
    points
}

/// Adds the measured step's operators, drawn as twins of their predicted points (when measured points are
/// drawn), and returns the keys of their measured points, which are not drawn again as plain points.
fn step_twins(from: Sources, draw: bool, points: &mut Vec<PlotPoint>) -> HashSet<String> {
    let MeasuredStep {
        tracker, comparison, ..
    } = from.step;
    comparison.with(|c| {
        let Some(c) = c else { return HashSet::new() };
        from.analyses.analysis.with(|a| {
            if let Ok(a) = a
                && draw
            {
                points.extend(step_points(a, c));
            }
        });
        tracker.progress.with(|p| {
            p.iter()
                .flat_map(|p| &p.rows)
                .filter_map(|r| r.measured.as_ref())
                .map(point_key)
                .collect()
        })
    })
}
