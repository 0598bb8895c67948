//! Benchmark jobs on the page: the shape list's text (read back by `roofline_core::validation::parse_shapes`)
//! and the progress of one job as its SSE events arrive (each point counted once, however often the stream
//! replays it). Pure.

use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::wire::{BenchmarkDoneEvent, BenchmarkFailedEvent, BenchmarkJob, BenchmarkPointEvent};

/// A benchmark job's point as the page keeps it: the measured point and its prediction in base units.
pub type BenchPoint = BenchmarkPointEvent<MeasuredPoint, PredictedPoint>;

/// `M×N×K` list text of shapes.
#[must_use]
pub fn shapes_text(shapes: &[[u64; 3]]) -> String {
    shapes
        .iter()
        .map(|[m, n, k]| format!("{m}x{n}x{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One job as the page follows it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobProgress {
    /// The job as queued.
    pub job: BenchmarkJob,
    /// Measured points, in index order of arrival.
    pub points: Vec<BenchPoint>,
    /// Points that produced no measurement.
    pub failures: Vec<BenchmarkFailedEvent>,
    /// The final event, once it came.
    pub done: Option<BenchmarkDoneEvent>,
    /// Set when the event stream broke before `done`.
    pub lost: Option<String>,
}

impl JobProgress {
    /// A job with nothing reported yet.
    #[must_use]
    pub fn new(job: BenchmarkJob) -> JobProgress {
        JobProgress {
            job,
            points: Vec::new(),
            failures: Vec::new(),
            done: None,
            lost: None,
        }
    }

    fn seen(&self, index: u32) -> bool {
        self.points.iter().any(|p| p.index == index) || self.failures.iter().any(|f| f.index == index)
    }

    /// Records a point; returns `false` (and changes nothing) for a replayed one or another job's.
    pub fn on_point(&mut self, event: BenchPoint) -> bool {
        let fresh = event.job_id == self.job.id && !self.seen(event.index);
        if fresh {
            self.points.push(event);
        }
        fresh
    }

    /// Records a failed point; returns `false` for a replayed one or another job's.
    pub fn on_failed(&mut self, event: BenchmarkFailedEvent) -> bool {
        let fresh = event.job_id == self.job.id && !self.seen(event.index);
        if fresh {
            self.failures.push(event);
        }
        fresh
    }

    /// Points reported so far (measured or failed).
    #[must_use]
    pub fn finished_points(&self) -> usize {
        self.points.len() + self.failures.len()
    }

    /// Whether the job is over (done, or its stream lost).
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.done.is_some() || self.lost.is_some()
    }

    /// A one-line status, e.g. `running 3/8`, `cancelled after 2/8`, `done: 8 measured, 0 failed`.
    #[must_use]
    pub fn status(&self) -> String {
        let (n, total) = (self.finished_points(), self.job.total);
        match (&self.done, &self.lost) {
            (Some(d), _) if d.cancelled => format!("cancelled after {n}/{total}"),
            (Some(d), _) => format!("done: {} measured, {} failed", d.measured, d.failed),
            (None, Some(e)) => format!("stream lost after {n}/{total}: {e}"),
            (None, None) if n == 0 && self.job.position > 0 => {
                format!("queued ({} ahead)", self.job.position)
            }
            (None, None) => format!("running {n}/{total}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use roofline_core::Precision;
    use roofline_core::wire::{ErrorCode, Failure};

    use super::*;
    use crate::measured::tests::measured_point;

    fn job() -> JobProgress {
        JobProgress::new(BenchmarkJob {
            id: "j1".into(),
            position: 0,
            total: 3,
            events_url: String::new(),
        })
    }

    fn point(index: u32) -> BenchPoint {
        BenchmarkPointEvent {
            job_id: "j1".into(),
            index,
            total: 3,
            point: measured_point("64x256x256", Precision::Fp32, 1e-4, f64::from(index)),
            predicted: None,
            error_pct: None,
        }
    }

    #[test]
    fn shape_text_is_the_parsed_grammar() {
        // `shapes_text` writes what `roofline_core::validation::parse_shapes` reads back.
        let shapes = [[1, 2, 3], [4, 5, 6]];
        assert_eq!(
            roofline_core::validation::parse_shapes(&shapes_text(&shapes)).unwrap(),
            shapes
        );
        assert_eq!(shapes_text(&[[1, 2, 3], [4, 5, 6]]), "1x2x3, 4x5x6");
    }

    #[test]
    fn replayed_events_count_once() {
        let mut p = job();
        assert!(p.on_point(point(0)));
        assert!(
            !p.on_point(point(0)),
            "a reconnecting stream replays from the first event"
        );
        let failed = BenchmarkFailedEvent {
            job_id: "j1".into(),
            index: 1,
            total: 3,
            shape: "64x256x256".into(),
            failure: Failure {
                precision: roofline_core::Precision::Fp16,
                code: ErrorCode::Unsupported,
                message: "no FP16 on x86_64".into(),
            },
        };
        assert!(p.on_failed(failed.clone()));
        assert!(!p.on_failed(failed));
        assert!(!p.on_point(BenchmarkPointEvent {
            job_id: "other".into(),
            ..point(2)
        }));
        assert_eq!(p.status(), "running 2/3");
        p.done = Some(BenchmarkDoneEvent {
            job_id: "j1".into(),
            measured: 1,
            failed: 1,
            cancelled: true,
        });
        assert!(p.is_over());
        assert_eq!(p.status(), "cancelled after 2/3");
    }
}
