//! `hardware`, `models` and `configs`: the catalog, the model presets and the precision configs, as tables
//! that fit 120 columns or as JSON (the core types, base units).

use clap::Args;
use roofline_core::{ComputePath, catalog, model_presets, quant_configs};

use crate::CliError;
use crate::output::{emit, json, table};

/// Options of the listings.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Print JSON (every field, base units) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Lists the catalog: memory, DRAM bandwidth, dense BF16/FP8/FP4 peaks, the reference fractions and the
/// scale-up link (per-direction bandwidth and GPUs per domain).
///
/// # Errors
/// [`CliError::Runtime`] when writing fails.
pub fn hardware(args: &ListArgs) -> Result<(), CliError> {
    if args.json {
        return json(&catalog());
    }
    let tflops = |h: &roofline_core::HardwareSpec, path| {
        h.peak(path)
            .map_or_else(|| "—".to_owned(), |p| format!("{:.0}", p.dense_flop_per_s / 1e12))
    };
    let mut t = table(&[
        "key",
        "architecture",
        "memory GB",
        "DRAM TB/s",
        "BF16 TF",
        "FP8 TF",
        "FP4 TF",
        "ref DRAM",
        "ref BF16",
        "link GB/s ×GPUs",
    ]);
    for h in catalog() {
        let r = h.reference_ceilings();
        let bf16 = r
            .gemm_fraction(ComputePath::Bf16)
            .map_or_else(|| "—".to_owned(), |f| format!("{:.0} %", 100.0 * f.value));
        t.add_row(vec![
            h.key.clone(),
            h.arch_label.clone(),
            format!("{:.0}", h.memory_bytes / 1e9),
            format!("{:.3}", h.dram_bandwidth_bytes_per_s / 1e12),
            tflops(h, ComputePath::Bf16),
            tflops(h, ComputePath::Fp8),
            tflops(h, ComputePath::Fp4),
            format!("{:.0} %", 100.0 * r.dram_fraction.value),
            bf16,
            h.interconnect.as_ref().map_or_else(
                || "—".to_owned(),
                |i| format!("{} {:.0} ×{}", i.link, i.bandwidth_bytes_per_s / 1e9, i.max_gpus),
            ),
        ]);
    }
    emit(&format!(
        "{t}\nDense peaks (no sparsity); `ref` = the reference-mode fractions (`--json` has every figure's source);\n\
         link = the scale-up interconnect, GB/s in one direction per GPU (half the published bidirectional figure).\n"
    ))
}

/// Lists the model presets with their published parameter counts.
///
/// # Errors
/// [`CliError::Runtime`] when writing fails.
pub fn models(args: &ListArgs) -> Result<(), CliError> {
    if args.json {
        return json(&model_presets());
    }
    let mut t = table(&[
        "key",
        "name",
        "layers",
        "hidden",
        "heads / KV",
        "params B",
        "active B",
    ]);
    for m in model_presets() {
        t.add_row(vec![
            m.key.clone(),
            m.name.clone(),
            m.layers.to_string(),
            m.hidden.to_string(),
            format!("{} / {}", m.heads, m.kv_heads),
            format!("{:.1}", m.published_params / 1e9),
            m.published_active_params
                .map_or_else(|| "—".to_owned(), |a| format!("{:.1}", a / 1e9)),
        ]);
    }
    emit(&format!("{t}\n"))
}

/// Lists the precision configs.
///
/// # Errors
/// [`CliError::Runtime`] when writing fails.
pub fn configs(args: &ListArgs) -> Result<(), CliError> {
    if args.json {
        return json(&quant_configs());
    }
    let mut t = table(&["key", "name", "weights", "activations", "KV cache", "method"]);
    for c in quant_configs() {
        t.add_row(vec![
            c.key.clone(),
            c.name.clone(),
            c.weights.name().to_owned(),
            c.activations.name().to_owned(),
            c.kv_cache.name().to_owned(),
            c.method.clone(),
        ]);
    }
    emit(&format!("{t}\n"))
}
