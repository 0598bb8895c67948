//! Reference mode against the published low-precision GEMM measurements of docs/research/low-precision.md
//! (`docs/validation/data/low-precision/published.csv`: device, kernel family, operand formats, M×N×K, the
//! published TFLOP/s or time, whether the time includes the activation quantization, and the URL). Most
//! large-shape rows are the measurements the family fractions come from (in-sample, so small errors are by
//! construction); the small-M rows (decode GEMVs, M ≤ 256) test the floors and small-M bandwidth fractions
//! out of sample. `cargo test -p roofline-tests --test it low_precision -- --nocapture` prints the
//! table of docs/validation/low-precision.md.

use roofline_core::measurement::{MeasuredOp, MeasuredPoint, Measurement};
use roofline_core::validation::{check, quantile};
use roofline_core::{ActivationScale, GemmShape, Mode, OperandPrecisions, Precision, find_hardware_in};
use roofline_tests::workspace_root;

#[derive(serde::Deserialize)]
struct Row {
    device: String,
    family: String,
    weight: Precision,
    activation: Precision,
    m: u64,
    n: u64,
    k: u64,
    tflops: Option<f64>,
    time_us: Option<f64>,
    quant: String,
    source: String,
}

impl Row {
    fn flops(&self) -> f64 {
        2.0 * (self.m * self.n * self.k) as f64
    }

    fn measured_s(&self) -> f64 {
        match (self.tflops, self.time_us) {
            (_, Some(us)) => us * 1e-6,
            (Some(t), None) => self.flops() / (t * 1e12),
            (None, None) => panic!("{}: neither TFLOP/s nor a time", self.source),
        }
    }

    /// The activation quantization the time includes, from `+quant:<scale>`.
    fn quantization(&self) -> Option<ActivationScale> {
        match self.quant.as_str() {
            "noquant" => None,
            "+quant:dynamic_per_tensor" => Some(ActivationScale::DynamicPerTensor),
            "+quant:static_per_tensor" => Some(ActivationScale::StaticPerTensor),
            "+quant:dynamic_per_token" => Some(ActivationScale::DynamicPerToken),
            other => panic!("{}: quant {other}", self.source),
        }
    }
}

fn rows() -> Vec<Row> {
    let path = workspace_root().join("docs/validation/data/low-precision/published.csv");
    csv::Reader::from_path(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .deserialize()
        .collect::<Result<_, _>>()
        .expect("published.csv rows")
}

/// (measured − predicted) / predicted of one row in reference mode, in percent, and the prediction in s.
fn error(row: &Row) -> (f64, f64) {
    let spec = find_hardware_in(&row.device, Mode::Reference).unwrap();
    let shape = GemmShape {
        batch: 1,
        m: row.m,
        n: row.n,
        k: row.k,
    };
    let operands = OperandPrecisions {
        weight: row.weight,
        activation: row.activation,
        output: if row.activation == Precision::Fp16 {
            Precision::Fp16
        } else {
            Precision::Bf16
        },
    };
    let point = MeasuredPoint {
        op: MeasuredOp::Matmul(shape),
        operands,
        precision: row.activation,
        label: row.source.clone(),
        flops: row.flops(),
        bytes: 0.0,
        measurement: Measurement {
            median_s: row.measured_s(),
            ..Measurement::default()
        },
        activation_quantization: row.quantization(),
        bound: None,
    };
    let c = check(&point, spec).unwrap_or_else(|e| panic!("{}: {e}", row.source));
    (c.error_pct, c.predicted_s)
}

/// The group a row's error counts in, and whether the group is gated. Two small-M NVFP4 sets are shown, not
/// gated: vLLM's CUTLASS NVFP4 GEMM (vllm#20646, helion#3046), which vLLM 0.24 no longer selects on SM100
/// (AIConfigurator's collection records its FlashInfer CuTe-DSL kernel), and TensorRT-LLM 1.3.0rc20's
/// autotuned NVFP4 linear, measured 21–84 % slower than the figure fitted to FlashInfer's kernel
/// (docs/validation/low-precision.md): one figure per family and device cannot be both engines'.
fn group(row: &Row) -> (String, bool) {
    let size = if row.m <= 256 { "small M" } else { "large M" };
    let small_nvfp4 = row.family == "nvfp4" && row.m <= 256;
    if small_nvfp4 && (row.source.contains("vllm/pull/20646") || row.source.contains("helion/pull/3046")) {
        return ("nvfp4 small M, vLLM CUTLASS (superseded)".to_owned(), false);
    }
    if small_nvfp4 && row.source.contains("/trtllm/") {
        return ("nvfp4 small M, TensorRT-LLM linear".to_owned(), false);
    }
    (format!("{} {size}", row.family), true)
}

fn median_abs(errors: &[f64]) -> f64 {
    let mut v: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    v.sort_by(f64::total_cmp);
    quantile(&v, 0.5).unwrap()
}

#[test]
fn reference_mode_against_the_published_low_precision_measurements() {
    let rows = rows();
    assert_eq!(rows.len(), 96);
    println!("| device | family | M×N×K | quant | measured µs | predicted µs | error |");
    println!("|---|---|---|---|---:|---:|---:|");
    let mut by_family: Vec<(String, bool, Vec<f64>)> = Vec::new();
    for row in &rows {
        let (e, predicted) = error(row);
        println!(
            "| {} | {} | {}×{}×{} | {} | {:.2} | {:.2} | {e:+.1} % |",
            row.device,
            row.family,
            row.m,
            row.n,
            row.k,
            row.quant,
            row.measured_s() * 1e6,
            predicted * 1e6
        );
        let (group, gated) = group(row);
        match by_family.iter_mut().find(|(g, _, _)| *g == group) {
            Some((_, _, v)) => v.push(e),
            None => by_family.push((group, gated, vec![e])),
        }
    }
    println!("\n| family | points | median abs error |");
    println!("|---|---:|---:|");
    for (group, _, errors) in &by_family {
        println!("| {group} | {} | {:.1} % |", errors.len(), median_abs(errors));
    }
    let all: Vec<f64> = rows.iter().filter(|r| group(r).1).map(|r| error(r).0).collect();
    println!("| all gated | {} | {:.1} % |", all.len(), median_abs(&all));
    // Gates (docs/validation/low-precision.md has the figures when written): every gated group of at least
    // four points within 20 % at the median, the gated set within 12 %. The three small-M RTX 5090 FP8 points
    // (94 % before and after) are the first sm120 CUTLASS kernel, whose PR says "perf for small M is still
    // bad" (no tile below M = 64): a group too small to gate alone.
    for (group, _, errors) in by_family.iter().filter(|(_, gated, e)| *gated && e.len() >= 4) {
        assert!(median_abs(errors) <= 20.0, "{group}: {:.1} %", median_abs(errors));
    }
    assert!(median_abs(&all) <= 12.0, "{:.1} %", median_abs(&all));
}

#[test]
fn the_activation_quantization_is_predicted_where_the_time_includes_it() {
    // vLLM's NVFP4 +quant columns run scaled_fp4_quant, then the GEMM (measured 13.46 µs against 11.34 µs
    // at M = 1): a point marked +quant is predicted as the block-quantization kernel (at least its 1.9 µs
    // floor) plus the GEMM.
    let rows = rows();
    let pair = |m: u64| {
        let find = |quant: &str| {
            rows.iter()
                .find(|r| {
                    r.family == "nvfp4"
                        && r.device == "b200"
                        && r.m == m
                        && r.n == 6144
                        && r.quant.starts_with(quant)
                })
                .unwrap()
        };
        (error(find("noquant")).1, error(find("+quant")).1)
    };
    for m in [1, 256, 16_384] {
        let (gemm, with_quant) = pair(m);
        assert!(with_quant > gemm + 1.9e-6, "M = {m}: {with_quant} vs {gemm}");
    }
}
