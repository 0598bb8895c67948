//! The physical ranges of a spec's ceilings and memory ([`crate::HardwareSpec::check`]): figures outside them
//! are unit slips, and predictions on them would not be finite numbers.

use crate::error::Error;

/// The physical range of a memory or link bandwidth, in bytes/s: 1 MB/s (slower than any DRAM or link that
/// ever carried a model) to 1 PB/s (125× the fastest catalogued memory, MI355X's 8 TB/s). A figure outside
/// it is a unit slip (e.g. GB/s typed as bytes/s), and at 1e-300 a prediction overflows to infinity.
pub const BANDWIDTH_RANGE_BYTES_PER_S: std::ops::RangeInclusive<f64> = 1e6..=1e15;
/// The physical range of a compute peak (dense or sparse), in FLOP/s: 1 MFLOP/s to 1e19 (500× the largest
/// catalogued peak, GB300's 20 PFLOP/s sparse FP4). Outside it a figure is a unit slip.
pub const PEAK_RANGE_FLOP_PER_S: std::ops::RangeInclusive<f64> = 1e6..=1e19;
/// The physical range of a device's memory capacity, in bytes: 1 MB to 1 PB (3,500× the largest catalogued
/// memory, MI355X's 288 GB).
pub const MEMORY_RANGE_BYTES: std::ops::RangeInclusive<f64> = 1e6..=1e15;

/// Checks that `value` (the field `name` of `device`) is finite and inside `range`, named with `unit` in the
/// error.
pub(super) fn check_range(
    device: &str,
    name: &str,
    value: f64,
    range: &std::ops::RangeInclusive<f64>,
    unit: &str,
) -> Result<(), Error> {
    if value.is_finite() && range.contains(&value) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "{device}: {name} must be between {:e} and {:e} {unit} (the physical range), got {value:e}",
            range.start(),
            range.end()
        )))
    }
}
