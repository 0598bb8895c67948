//! Axes the chart lays out itself: a linear or log [`Scale`] from data to pixels, and [`ticks`] at 1-2-5
//! steps on any range (a sub-decade log range gets linear 1-2-5 steps inside it), as dense as the labels
//! allow without touching. Pure: label widths come from the caller's measure of the backend's font.

/// A value range drawn over a pixel span, linearly or logarithmically.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Smallest value shown (> 0 on a log scale).
    pub lo: f64,
    /// Largest value shown.
    pub hi: f64,
    /// Logarithmic.
    pub log: bool,
}

impl Scale {
    /// Where `v` lies between `lo` (0) and `hi` (1).
    #[must_use]
    pub fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// The scale around `values` (finite ones; positive ones on a log scale): linear from 0 to a 1-2-5 step
    /// above the largest, or log with a quarter decade of room each side.
    #[must_use]
    pub fn around(values: impl Iterator<Item = f64>, log: bool) -> Scale {
        let (lo, hi) = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if hi <= 0.0 || !hi.is_finite() {
            return Scale {
                lo: if log { 1.0 } else { 0.0 },
                hi: 10.0,
                log,
            };
        }
        if log {
            let pad = 10f64.powf(0.25);
            Scale {
                lo: lo / pad,
                hi: hi * pad,
                log,
            }
        } else {
            let top = hi * 1.05;
            let step = nice_step(top / 5.0);
            Scale {
                lo: 0.0,
                hi: (top / step).ceil() * step,
                log,
            }
        }
    }
}

/// The 1-2-5 step (1, 2 or 5 × 10^k) at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    let base = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * base)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * base)
}

/// Multiples of `step` in [lo, hi].
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// Candidate tick sets for `scale`, densest first: linear multiples of each 1-2-5 step (every scale: the
/// only kind a sub-decade log range has), then on a log scale 1-2-5 per decade, 1 per decade, and every
/// second, fifth or tenth decade.
fn candidates(scale: &Scale) -> Vec<Vec<f64>> {
    let (lo, hi) = (scale.lo, scale.hi);
    let mut sets: Vec<Vec<f64>> = Vec::new();
    let span = hi - lo;
    if span > 0.0 {
        let mut step = nice_step(span / 40.0);
        while step <= span {
            let set = multiples(lo, hi, step);
            if set.len() >= 2 && (!scale.log || set.iter().all(|v| *v > 0.0)) {
                sets.push(set);
            }
            step = nice_step(step * 1.5);
        }
    }
    if scale.log && hi / lo >= 10.0 {
        let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let decade = |mantissas: &[f64], every: i32| -> Vec<f64> {
            (d0..=d1)
                .filter(|d| d.rem_euclid(every) == 0)
                .flat_map(|d| mantissas.iter().map(move |m| m * 10f64.powi(d)))
                .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
                .collect()
        };
        let mut log_sets = vec![decade(&[1.0, 2.0, 5.0], 1)];
        log_sets.extend([1, 2, 5, 10].map(|every| decade(&[1.0], every)));
        // On a log scale the decade ticks read better than wide linear steps: try them before the sparse
        // linear sets.
        sets.retain(|s| s.len() > log_sets[0].len());
        sets.extend(log_sets.into_iter().filter(|s| !s.is_empty()));
    }
    sets
}

/// The densest tick set of `scale` whose labels (`label` of each value, `measure` of its width in pixels)
/// keep at least `gap` pixels apart along `length` pixels, with at least two ticks when any set has two;
/// each tick with its label. `horizontal`: the labels sit side by side (an x axis), else one above the
/// other with `measure` giving their height (a y axis).
pub fn ticks(
    scale: &Scale,
    length: f64,
    gap: f64,
    label: impl Fn(f64) -> String,
    measure: impl Fn(&str) -> f64,
) -> Vec<(f64, String)> {
    let sets = candidates(scale);
    // Each label is measured once (the backend's text measure is the cost of a layout).
    let widths = std::cell::RefCell::new(Vec::<(String, f64)>::new());
    let width = |text: &str| {
        let known = widths.borrow().iter().find(|(t, _)| t == text).map(|(_, w)| *w);
        known.unwrap_or_else(|| {
            let w = measure(text);
            widths.borrow_mut().push((text.to_owned(), w));
            w
        })
    };
    let narrowest = width("0");
    let fits = |set: &[f64]| -> Option<Vec<(f64, String)>> {
        // Too many for the length even at the narrowest label: not worth measuring.
        if set.len() as f64 * (narrowest + gap) > length + gap {
            return None;
        }
        let mut laid: Vec<(f64, String)> = Vec::with_capacity(set.len());
        let mut right = f64::NEG_INFINITY;
        for &v in set {
            let text = label(v);
            if laid.last().is_some_and(|(_, t)| *t == text) {
                return None;
            }
            let (at, w) = (scale.fraction(v) * length, width(&text));
            if at - w / 2.0 < right + gap {
                return None;
            }
            right = at + w / 2.0;
            laid.push((v, text));
        }
        Some(laid)
    };
    sets.iter()
        .filter(|s| s.len() >= 2)
        .find_map(|s| fits(s))
        .or_else(|| sets.last().and_then(|s| s.first()).map(|&v| vec![(v, label(v))]))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 7 pixels per character, as a 12 px sans-serif font roughly measures.
    fn width(text: &str) -> f64 {
        7.0 * text.chars().count() as f64
    }

    fn labels(scale: Scale, length: f64) -> Vec<String> {
        ticks(&scale, length, 8.0, crate::format::number, width)
            .into_iter()
            .map(|t| t.1)
            .collect()
    }

    #[test]
    fn a_sub_decade_log_range_gets_linear_steps_inside_it() {
        // 22 to 39 tokens/s per user (Llama-3.1-70B on one H100): no power of ten inside, so 1-2-5 steps.
        let scale = Scale {
            lo: 22.0,
            hi: 39.0,
            log: true,
        };
        let l = labels(scale, 600.0);
        assert!(l.len() >= 3, "{l:?}");
        assert!(
            l.contains(&"30.0".to_owned()) || l.contains(&"30".to_owned()),
            "{l:?}"
        );
    }

    #[test]
    fn a_decade_gets_1_2_5_and_wide_ranges_thin_out() {
        let one = labels(
            Scale {
                lo: 10.0,
                hi: 100.0,
                log: true,
            },
            600.0,
        );
        assert!(one.len() >= 3, "{one:?}");
        // Narrow: the labels never touch, and there are still two.
        let narrow = ticks(
            &Scale {
                lo: 60.0,
                hi: 100.0,
                log: true,
            },
            120.0,
            8.0,
            crate::format::number,
            width,
        );
        assert!(narrow.len() >= 2, "{narrow:?}");
        let wide = labels(
            Scale {
                lo: 1.0,
                hi: 1e6,
                log: true,
            },
            300.0,
        );
        assert!(wide.len() >= 2 && wide.len() <= 7, "{wide:?}");
    }

    #[test]
    fn linear_axes_start_at_zero_with_1_2_5_steps() {
        let s = Scale::around([3.0, 1445.0].into_iter(), false);
        assert_eq!(s.lo, 0.0);
        assert!(s.hi >= 1445.0 * 1.05 && s.hi <= 2000.0, "{}", s.hi);
        let t = ticks(&s, 800.0, 8.0, crate::format::number, width);
        let step = t[1].0 - t[0].0;
        let mantissa = step / 10f64.powf(step.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|m| (m - mantissa).abs() < 1e-9),
            "{step}"
        );
        assert_eq!(t[0].0, 0.0);
    }

    #[test]
    fn labels_keep_their_gap() {
        for (lo, hi, log) in [
            (22.0, 39.0, true),
            (10.0, 100.0, true),
            (0.0, 2500.0, false),
            (1.0, 1e5, true),
        ] {
            let scale = Scale { lo, hi, log };
            for length in [150.0, 300.0, 900.0] {
                let t = ticks(&scale, length, 8.0, crate::format::number, width);
                assert!(!t.is_empty());
                for w in t.windows(2) {
                    let right = scale.fraction(w[0].0) * length + width(&w[0].1) / 2.0;
                    let left = scale.fraction(w[1].0) * length - width(&w[1].1) / 2.0;
                    assert!(right + 8.0 <= left, "{lo}..{hi} at {length}: {t:?}");
                }
            }
        }
    }
}
