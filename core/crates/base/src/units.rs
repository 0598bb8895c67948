//! Unit prefixes. Inside the crate every quantity is in base units (FLOP, bytes, seconds, FLOP/s, bytes/s);
//! these constants are used only when constructing values from datasheet units and when displaying them.

/// 10^3.
pub const KILO: f64 = 1e3;
/// 10^6.
pub const MEGA: f64 = 1e6;
/// 10^9 (GB, GB/s, GFLOP).
pub const GIGA: f64 = 1e9;
/// 10^12 (TFLOP/s, TB/s).
pub const TERA: f64 = 1e12;
/// 2^30 bytes (GiB), distinct from [`GIGA`].
pub const GIB: f64 = 1_073_741_824.0;
/// 2^20 bytes (MiB), distinct from [`MEGA`].
pub const MIB: f64 = 1_048_576.0;
/// One microsecond in seconds.
pub const MICRO: f64 = 1e-6;
