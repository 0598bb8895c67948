//! Measured points: the ones this page received (saved locally) merged with the endpoint's stored history,
//! each measurement exactly once. Pure functions plus [`Measured`], part of the app state.

use std::collections::HashSet;

use leptos::prelude::*;
use roofline_core::HardwareSpec;
use roofline_core::measured_device::{PointDevice, same_device};
use roofline_core::measurement::MeasuredPoint;

use crate::api;
use crate::endpoint::{Connection, Endpoint};

/// A stable identity of a point: the same measurement reached through `/api/analyze`, a job's SSE stream,
/// `/api/results` or an import has the same key.
#[must_use]
pub fn point_key(p: &MeasuredPoint) -> String {
    let m = &p.measurement;
    format!(
        "{}|{}|{}|{}|{}|{:e}",
        p.op.shape_label(),
        p.precision,
        m.device_name,
        m.kernel,
        m.timestamp_unix_s,
        m.median_s
    )
}

/// Appends the points of `new` that `list` does not hold yet; returns how many were added.
pub fn add_points(list: &mut Vec<MeasuredPoint>, new: impl IntoIterator<Item = MeasuredPoint>) -> usize {
    let before = list.len();
    let mut seen: HashSet<String> = list.iter().map(point_key).collect();
    list.extend(new.into_iter().filter(|p| seen.insert(point_key(p))));
    list.len() - before
}

/// `local` followed by the points of `remote` it lacks.
#[must_use]
pub fn merge(local: &[MeasuredPoint], remote: &[MeasuredPoint]) -> Vec<MeasuredPoint> {
    let mut all = local.to_vec();
    add_points(&mut all, remote.iter().cloned());
    all
}

/// Most pages of the endpoint's stored history the page loads (1,000 points each, `/api/results`' largest):
/// its newest 10,000 measurements, more than a chart shows legibly.
pub const MAX_HISTORY_PAGES: usize = 10;

/// The endpoint's stored points, oldest first: its pages followed by their `next_cursor`, newest first, up to
/// [`MAX_HISTORY_PAGES`]; a page that fails ends the history there (the endpoint went away).
async fn history(base: &str) -> Vec<MeasuredPoint> {
    let mut points = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_HISTORY_PAGES {
        let Ok(page) = api::results_page(base, cursor.as_deref()).await else {
            break;
        };
        if page.skipped > 0 {
            leptos::logging::warn!(
                "the endpoint left out {} stored points that do not decode",
                page.skipped
            );
        }
        let page = page.map(MeasuredPoint::from, |_| ());
        points.extend(page.results.into_iter().map(|r| r.point));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    points.reverse();
    points
}

/// The page's measured points.
#[derive(Clone, Copy)]
pub struct Measured {
    /// Points received or imported in this browser (saved with the page state).
    pub local: RwSignal<Vec<MeasuredPoint>>,
    /// Bumped by [`Measured::refresh_history`].
    refresh: RwSignal<u32>,
    /// The endpoint's stored history (empty while offline).
    pub history: LocalResource<Vec<MeasuredPoint>>,
    /// Everything shown: `local` merged with `history`.
    pub shown: Memo<Vec<MeasuredPoint>>,
}

impl Measured {
    /// Builds the merged view over `local`.
    #[must_use]
    pub fn new(local: RwSignal<Vec<MeasuredPoint>>, endpoint: Endpoint) -> Measured {
        let refresh = RwSignal::new(0u32);
        let history = LocalResource::new(move || {
            refresh.track();
            let online = endpoint.connection.get() == Connection::Online;
            let base = endpoint.base.get();
            async move {
                if !online {
                    return Vec::new();
                }
                history(&base).await
            }
        });
        let shown = Memo::new(move |_| local.with(|l| merge(l, &history.get().unwrap_or_default())));
        Measured {
            local,
            refresh,
            history,
            shown,
        }
    }

    /// Adds new points (duplicates are dropped).
    pub fn add(&self, points: Vec<MeasuredPoint>) {
        self.local.update(|l| {
            add_points(l, points);
        });
    }

    /// Refetches the endpoint's history (after a measurement finished).
    pub fn refresh_history(&self) {
        self.refresh.update(|n| *n = n.wrapping_add(1));
    }
}

/// The points measured on `spec`'s device (core's [`same_device`]): the only ones compared with its
/// predictions.
#[must_use]
pub fn on_device(points: &[MeasuredPoint], spec: &HardwareSpec) -> Vec<MeasuredPoint> {
    points.iter().filter(|p| same_device(p, spec)).cloned().collect()
}

/// Which measured points the chart shows: this device's only (the default) or every device's (the others
/// greyed and never compared), optionally one precision, and optionally only recent ones.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PointFilter {
    /// Also draw points from other devices, greyed.
    pub other_devices: bool,
    /// Only this precision, when set.
    pub precision: Option<roofline_core::Precision>,
    /// Only points measured at or after this Unix time, in seconds, when set.
    pub since_unix_s: Option<f64>,
}

impl PointFilter {
    /// Whether `p` passes the precision and date filters (a point without a measurement time fails a date
    /// filter).
    #[must_use]
    pub fn keeps(&self, p: &MeasuredPoint) -> bool {
        self.precision.is_none_or(|q| q == p.precision)
            && self
                .since_unix_s
                .is_none_or(|since| p.measurement.says_what_ran() && p.measurement.timestamp_unix_s >= since)
    }
}

/// The points measured elsewhere, counted per device (label, count), most first.
#[must_use]
pub fn other_devices(points: &[MeasuredPoint], spec: &HardwareSpec) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for p in points {
        if same_device(p, spec) {
            continue;
        }
        let label = PointDevice::of(p).label();
        match counts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => counts.push((label, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

#[cfg(test)]
pub(crate) mod tests {
    use roofline_core::measurement::{MeasuredOp, Measurement};
    use roofline_core::{Bound, GemmShape, Precision};

    use super::*;

    /// A measured point of `shape` (`MxNxK`) in `precision` taking `median_s`, measured at `at_unix_s`: 0.1
    /// TFLOP/s at 10 FLOP/byte.
    pub(crate) fn measured_point(
        shape: &str,
        precision: Precision,
        median_s: f64,
        at_unix_s: f64,
    ) -> MeasuredPoint {
        let flops = 0.1e12 * median_s;
        MeasuredPoint {
            op: MeasuredOp::Matmul(shape.parse::<GemmShape>().unwrap()),
            operands: precision.into(),
            precision,
            label: format!("GEMM {shape} [{precision}]"),
            flops,
            bytes: flops / 10.0,
            measurement: Measurement {
                backend: roofline_core::wire::BackendKind::Cpu,
                device_name: "Test CPU".to_owned(),
                median_s,
                timestamp_unix_s: at_unix_s,
                ..Measurement::default()
            },
            activation_quantization: None,
            bound: Some(Bound::Memory),
        }
    }

    #[test]
    fn points_from_other_devices_are_set_apart() {
        let cpu = measured_point("64x256x256", Precision::Fp32, 1e-4, 1.0);
        let h100 = roofline_core::find_hardware("h100_sxm").unwrap();
        assert!(on_device(std::slice::from_ref(&cpu), h100).is_empty());
        assert_eq!(
            other_devices(&[cpu.clone(), cpu], h100),
            vec![("Test CPU".to_owned(), 2)]
        );
    }

    #[test]
    fn the_filter_keeps_one_precision_and_recent_points() {
        let old = measured_point("64x256x256", Precision::Fp32, 1e-4, 1_000.0);
        let new = measured_point("64x256x256", Precision::Fp32, 1e-4, 5_000.0);
        let fp64 = measured_point("64x256x256", Precision::Fp64, 1e-4, 5_000.0);
        let all = PointFilter::default();
        assert!(all.keeps(&old) && all.keeps(&fp64));
        let recent = PointFilter {
            since_unix_s: Some(4_000.0),
            ..PointFilter::default()
        };
        assert!(!recent.keeps(&old) && recent.keeps(&new));
        let fp32_recent = PointFilter {
            precision: Some(Precision::Fp32),
            ..recent
        };
        assert!(fp32_recent.keeps(&new) && !fp32_recent.keeps(&fp64) && !fp32_recent.keeps(&old));
    }

    #[test]
    fn the_same_measurement_is_kept_once() {
        let a = measured_point("64x256x256", Precision::Fp32, 1e-4, 1.0);
        let b = measured_point("64x256x256", Precision::Fp32, 1e-4, 2.0);
        let mut list = vec![a.clone()];
        assert_eq!(add_points(&mut list, [a.clone(), b.clone(), b.clone()]), 1);
        assert_eq!(merge(&list, &[b, a.clone()]).len(), 2);
        assert_eq!(merge(&[], &[a.clone(), a]).len(), 1);
    }
}
