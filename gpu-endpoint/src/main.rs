//! `gpu-endpoint` binary (placeholder until the first cut lands).
fn main() {}
