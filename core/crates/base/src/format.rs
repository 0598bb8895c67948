//! The single place that turns base-unit numbers (seconds, FLOP, bytes, FLOP/s) into display strings, for
//! the page, the command line and core's own advice text. Values beyond the SI prefixes (or below 1e-3 for
//! bare numbers) print in scientific notation, never as hundreds of digits; non-finite values print `—`.

/// The prefix scale of `v`.
fn prefix(v: f64) -> (f64, &'static str) {
    const PREFIXES: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    PREFIXES
        .iter()
        .find(|(s, _)| v.abs() >= *s)
        .copied()
        .unwrap_or((1.0, ""))
}

/// A tick label: prefix and at most two decimals, trailing zeros dropped (`1T`, `2.5k`, `0.1`).
fn compact(v: f64) -> String {
    let (scale, p) = prefix(v);
    let digits = format!("{:.2}", v / scale);
    format!("{}{p}", digits.trim_end_matches('0').trim_end_matches('.'))
}

/// Formats `v` with a unit prefix chosen from its magnitude (`k`, `M`, `G`, `T`, `P`), three significant digits.
fn si(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "—".to_owned();
    }
    if v.abs() >= 1e18 {
        return format!("{} {unit}", number(v));
    }
    let (scale, p) = prefix(v);
    format!("{} {p}{unit}", sig3(v / scale))
}

/// A plain number: three significant digits, or scientific notation (`1.80e308`, `6.10e-5`) beyond 1e6 or
/// below 1e-3, so an extreme value never prints hundreds of digits.
#[must_use]
pub fn number(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        if v.is_nan() {
            "—".to_owned()
        } else if v > 0.0 {
            "∞".to_owned()
        } else {
            "−∞".to_owned()
        }
    } else if a == 0.0 || (1e-3..1e6).contains(&a) {
        let s = sig3(v);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    } else {
        format!("{v:.2e}")
    }
}

/// Three significant digits without trailing noise: 1.23, 12.3, 123, 1234.
fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Time in microseconds with three decimals and no unit, e.g. `122.970` (the table's machine-comparable cell).
#[must_use]
pub fn micros_fixed(seconds: f64) -> String {
    format!("{:.3}", seconds * 1e6)
}

/// Time with an adaptive unit: `850 ns`, `123 µs`, `1.23 ms`, `2.50 s`.
#[must_use]
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        "—".to_owned()
    } else if seconds < 1e-6 {
        format!("{} ns", sig3(seconds * 1e9))
    } else if seconds < 1e-3 {
        format!("{} µs", sig3(seconds * 1e6))
    } else if seconds < 1.0 {
        format!("{} ms", sig3(seconds * 1e3))
    } else {
        format!("{} s", sig3(seconds))
    }
}

/// Throughput, e.g. `250 TFLOP/s`.
#[must_use]
pub fn flop_rate(flop_per_s: f64) -> String {
    si(flop_per_s, "FLOP/s")
}

/// Axis tick for FLOP/s: `1T`, `100G`.
#[must_use]
pub fn flop_rate_tick(flop_per_s: f64) -> String {
    compact(flop_per_s)
}

/// Throughput in TFLOP/s as a bare number with two decimals, e.g. `0.27`.
#[must_use]
pub fn tflops(flop_per_s: f64) -> String {
    format!("{:.2}", flop_per_s / 1e12)
}

/// Work, e.g. `33.6 MFLOP`.
#[must_use]
pub fn flops(flop: f64) -> String {
    si(flop, "FLOP")
}

/// Work in GFLOP as a bare number, e.g. `0.034`.
#[must_use]
pub fn gflop(flop: f64) -> String {
    sig3(flop / 1e9)
}

/// Bytes with a decimal prefix, e.g. `33.6 MB`.
#[must_use]
pub fn bytes(b: f64) -> String {
    si(b, "B")
}

/// Bytes in MB as a bare number, e.g. `33.6`.
#[must_use]
pub fn megabytes(b: f64) -> String {
    sig3(b / 1e6)
}

/// Bandwidth, e.g. `273 GB/s`.
#[must_use]
pub fn bandwidth(bytes_per_s: f64) -> String {
    si(bytes_per_s, "B/s")
}

/// Arithmetic intensity as a bare number, e.g. `1.00`, `1365`.
#[must_use]
pub fn intensity(flop_per_byte: f64) -> String {
    sig3(flop_per_byte)
}

/// Axis tick for arithmetic intensity: `0.1`, `10`, `1k`.
#[must_use]
pub fn intensity_tick(flop_per_byte: f64) -> String {
    compact(flop_per_byte)
}

/// Tokens per second, e.g. `2.34 k tok/s`.
#[must_use]
pub fn tokens_per_s(t: f64) -> String {
    si(t, "tok/s")
}

/// A parameter count in billions, as model cards write it, e.g. `8.03 B`.
#[must_use]
pub fn parameters(n: f64) -> String {
    format!("{} B", sig3(n / 1e9))
}

/// Bits per element, e.g. `4.5 b`.
#[must_use]
pub fn bits(b: f64) -> String {
    format!("{} b", (b * 100.0).round() / 100.0)
}

/// A percentage with one decimal, e.g. `12.5 %`.
#[must_use]
pub fn percent(fraction: f64) -> String {
    format!("{:.1} %", fraction * 100.0)
}

/// Memory with binary prefixes, as drivers and engines report it, e.g. `79.2 GiB`, `512 MiB` (three
/// significant digits; `bytes` keeps decimal prefixes for traffic).
#[must_use]
pub fn capacity(b: f64) -> String {
    const PREFIXES: [(f64, &str); 4] = [
        (1_099_511_627_776.0, "TiB"),
        (1_073_741_824.0, "GiB"),
        (1_048_576.0, "MiB"),
        (1024.0, "KiB"),
    ];
    if !b.is_finite() {
        return "—".to_owned();
    }
    match PREFIXES.iter().find(|(s, _)| b.abs() >= *s) {
        Some((scale, unit)) => format!("{} {unit}", sig3(b / scale)),
        None => format!("{} B", sig3(b)),
    }
}

/// A count of representable values: exact below a million, else a power of two, e.g. `≈2^64`.
#[must_use]
pub fn levels(n: u64) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("≈2^{:.0}", (n as f64).log2())
    }
}

/// Why a precision has no prediction, e.g. `unsupported on Blackwell sm_121 (no INT4 path)`.
#[must_use]
pub fn failure(e: &crate::error::Error) -> String {
    match e {
        crate::error::Error::Unsupported {
            arch,
            path,
            device,
            precision,
        } => {
            if missing_figure(device, *precision) {
                format!("no published {path} figure in the catalog ({arch} has the path)")
            } else {
                format!("unsupported on {arch} (no {path} path)")
            }
        }
        other => other.to_string(),
    }
}

/// Whether catalog device `device` has the tensor-core path of `precision` on its architecture but no
/// published figure for it: unknown, not unsupported.
#[must_use]
pub fn missing_figure(device: &str, precision: crate::precision::Precision) -> bool {
    crate::hardware::find_hardware(device)
        .is_ok_and(|h| h.arch.runs_format(precision) && h.peak(precision.compute_path()).is_none())
}

/// A signed prediction error in percent, e.g. `+12.5 %`, `-3.0 %`, `+20431 %`.
#[must_use]
pub fn signed_percent(pct: f64) -> String {
    match pct.abs() {
        a if !a.is_finite() => "—".to_owned(),
        a if a >= 1000.0 => format!("{pct:+.0} %"),
        _ => format!("{pct:+.1} %"),
    }
}

/// A clock in MHz, e.g. `1980 MHz`.
#[must_use]
pub fn mhz(v: f64) -> String {
    format!("{v:.0} MHz")
}

/// Power in W, e.g. `312 W`.
#[must_use]
pub fn watts(v: f64) -> String {
    format!("{v:.0} W")
}

/// A temperature in °C, e.g. `61 °C`.
#[must_use]
pub fn celsius(v: f64) -> String {
    format!("{v:.0} °C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_are_in_scientific_notation() {
        assert_eq!(number(f64::MAX), "1.80e308");
        assert_eq!(number(448.0), "448");
        assert_eq!(number(6.0), "6");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(6.1e-5), "6.10e-5");
        assert_eq!(bytes(2e20), "2.00e20 B");
    }

    #[test]
    fn micros_keep_three_decimals() {
        assert_eq!(micros_fixed(122.970_021_978e-6), "122.970");
    }

    #[test]
    fn prefixes_follow_magnitude() {
        assert_eq!(flop_rate(250e12), "250 TFLOP/s");
        assert_eq!(bytes(33_570_816.0), "33.6 MB");
        assert_eq!(bandwidth(273e9), "273 GB/s");
        assert_eq!(flop_rate_tick(1e12), "1T");
        assert_eq!(intensity_tick(2500.0), "2.5k");
        assert_eq!(intensity_tick(0.01), "0.01");
        assert_eq!(duration(1.5e-3), "1.50 ms");
        assert_eq!(duration(122.97e-6), "123 µs");
        assert_eq!(duration(f64::INFINITY), "—");
        assert_eq!(intensity_tick(0.1), "0.1");
        assert_eq!(bits(4.5), "4.5 b");
        assert_eq!(signed_percent(12.49), "+12.5 %");
        assert_eq!(signed_percent(-3.0), "-3.0 %");
        assert_eq!(signed_percent(20_430.6), "+20431 %");
        assert_eq!(levels(15), "15");
        assert_eq!(levels(u64::MAX), "≈2^64");
        assert_eq!(parameters(8.03e9), "8.03 B");
        assert_eq!(parameters(671e9), "671 B");
        // 79.22 GiB (an H100 as vLLM reads it) and 80 GB decimal = 74.5 GiB.
        assert_eq!(capacity(79.22 * 1_073_741_824.0), "79.2 GiB");
        assert_eq!(capacity(80e9), "74.5 GiB");
        assert_eq!(capacity(512.0 * 1_048_576.0), "512 MiB");
        assert_eq!(capacity(-2.0 * 1_073_741_824.0), "-2.00 GiB");
    }
}
