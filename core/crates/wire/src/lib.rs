//! What crosses `roofline-core`'s edges: the JSON types shared by the page, the endpoint and the command
//! lines ([`wire`], with the readers of stored legacy JSON), and the serving benchmark files read and
//! compared with the serving model ([`bench`](mod@bench)). The only layer that parses text formats (JSON, CSV).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bench;
pub mod wire;

pub use bench::{
    BenchFormat, LatencyMetric, MAX_BENCH_FILE_BYTES, MAX_BENCH_RUNS, MeasuredPercentiles,
    MeasuredServingPoint, PercentileRatio, ServingComparison, check_bench_size, compare_measured,
    parse_measured,
};
