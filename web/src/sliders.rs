//! Slider and typed-number math of the workload and shape inputs: the batch and context ranges, the log₂
//! slider positions, and reading a typed whole number within a range.

/// Range of the batch slider.
pub const BATCH_RANGE: (u64, u64) = (1, 512);
/// Range of the context slider, in tokens.
pub const CONTEXT_RANGE: (u64, u64) = (32, 131_072);

/// Why a typed number was not taken (shown beside the input; the scenario keeps its previous value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// Below the range (a negative number included).
    #[error("must be at least {0}")]
    BelowMin(u64),
    /// Above the range.
    #[error("must be at most {0}")]
    AboveMax(u64),
    /// Not a whole number at all.
    #[error("not a whole number")]
    NotWhole,
}

/// Reads a typed whole number in `lo..=hi`.
///
/// # Errors
/// [`RangeError`] says why the text is not one.
pub fn parse_in_range(text: &str, lo: u64, hi: u64) -> Result<u64, RangeError> {
    let t = text.trim();
    if t.strip_prefix('-')
        .is_some_and(|rest| rest.parse::<f64>().is_ok())
    {
        return Err(RangeError::BelowMin(lo));
    }
    match t.parse::<u64>() {
        Ok(v) if v < lo => Err(RangeError::BelowMin(lo)),
        Ok(v) if v > hi => Err(RangeError::AboveMax(hi)),
        Ok(v) => Ok(v),
        Err(_) => Err(RangeError::NotWhole),
    }
}

/// Steps per factor of two on the log sliders.
pub const SLIDER_STEPS_PER_OCTAVE: f64 = 4.0;

/// Slider position of `value` on a log₂ scale over `range` (0 at the low end).
#[must_use]
pub fn log_slider_position(value: u64, range: (u64, u64)) -> f64 {
    ((value.clamp(range.0, range.1) as f64 / range.0 as f64).log2() * SLIDER_STEPS_PER_OCTAVE).round()
}

/// The value at slider position `pos` (inverse of [`log_slider_position`], rounded to an integer).
#[must_use]
pub fn log_slider_value(pos: f64, range: (u64, u64)) -> u64 {
    ((range.0 as f64 * (pos / SLIDER_STEPS_PER_OCTAVE).exp2()).round() as u64).clamp(range.0, range.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_numbers_are_checked_with_a_reason() {
        assert_eq!(parse_in_range(" 8 ", 1, 512), Ok(8));
        assert_eq!(parse_in_range("-5", 1, 512), Err(RangeError::BelowMin(1)));
        assert_eq!(parse_in_range("0", 1, 512), Err(RangeError::BelowMin(1)));
        assert_eq!(parse_in_range("600", 1, 512), Err(RangeError::AboveMax(512)));
        assert_eq!(parse_in_range("2.5", 1, 512), Err(RangeError::NotWhole));
        // The reason shown beside the input.
        assert_eq!(RangeError::BelowMin(1).to_string(), "must be at least 1");
        assert_eq!(RangeError::AboveMax(512).to_string(), "must be at most 512");
        assert_eq!(RangeError::NotWhole.to_string(), "not a whole number");
    }

    #[test]
    fn log_sliders_hit_the_ends_and_powers_of_two() {
        let max = log_slider_position(CONTEXT_RANGE.1, CONTEXT_RANGE);
        assert_eq!(max, 48.0);
        assert_eq!(log_slider_value(max, CONTEXT_RANGE), 131_072);
        assert_eq!(log_slider_value(0.0, CONTEXT_RANGE), 32);
        assert_eq!(
            log_slider_value(log_slider_position(4096, CONTEXT_RANGE), CONTEXT_RANGE),
            4096
        );
        assert_eq!(
            log_slider_value(log_slider_position(64, BATCH_RANGE), BATCH_RANGE),
            64
        );
    }
}
