//! List inputs of the command lines and of the endpoint's requests: bounded by a documented maximum, checked
//! before any work that grows with the list, and deduplicated (the first of equal values kept, in order), so
//! a value given twice is computed or measured once.

use crate::CliError;

/// A list longer than its maximum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} takes at most {max} values, got {given}")]
pub struct TooLong {
    /// The flag or field, e.g. `--tp`.
    pub name: String,
    /// Its maximum.
    pub max: usize,
    /// How many were given.
    pub given: usize,
}

impl From<TooLong> for CliError {
    fn from(e: TooLong) -> CliError {
        CliError::Usage(e.to_string())
    }
}

/// `values` without repeats, in the order each first appears. Quadratic in the length: for lists already
/// bounded (see [`bounded_distinct`]).
///
/// # Examples
/// ```
/// assert_eq!(roofline_cli::lists::distinct([4, 1, 4, 2, 1]), [4, 1, 2]);
/// ```
#[must_use]
pub fn distinct<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut kept = Vec::new();
    for value in values {
        if !kept.contains(&value) {
            kept.push(value);
        }
    }
    kept
}

/// `values` without repeats ([`distinct`]) when there are at most `max` of them, counted as given (repeats
/// included: a list that long is refused before any work).
///
/// # Errors
/// [`TooLong`] naming `name`, the maximum and the count.
///
/// # Examples
/// ```
/// use roofline_cli::lists::bounded_distinct;
/// assert_eq!(bounded_distinct("--tp", &[1, 2, 1], 4).unwrap(), [1, 2]);
/// let error = bounded_distinct("--tp", &[1; 5], 4).unwrap_err();
/// assert_eq!(error.to_string(), "--tp takes at most 4 values, got 5");
/// ```
pub fn bounded_distinct<T: PartialEq + Clone>(
    name: &str,
    values: &[T],
    max: usize,
) -> Result<Vec<T>, TooLong> {
    if values.len() > max {
        return Err(TooLong {
            name: name.to_owned(),
            max,
            given: values.len(),
        });
    }
    Ok(distinct(values.iter().cloned()))
}
