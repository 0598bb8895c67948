//! gpu-endpoint's integration tests, as one test binary (ripgrep's layout): a module per area, `common` the
//! shared helpers. The real-GPU modules compile only with `--features cuda` and skip unless
//! `ROOFLINE_GPU_TESTS=1`; the load tests skip unless `ROOFLINE_LOAD_TEST=1`.

mod api;
mod bench_model;
mod binary;
mod common;
mod cpu;
mod errors;
mod golden;
#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
mod gpu_calibrate;
#[cfg(feature = "cuda")]
mod gpu_step;
mod hardening;
mod hopper;
mod load;
mod predictions;
mod steps;
