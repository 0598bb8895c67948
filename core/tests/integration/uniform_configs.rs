//! Uniform precision configs give the results they gave before per-module precisions existed: every preset ×
//! every config × four devices (Hopper, Blackwell, Ampere, CDNA4) × three steps (a prefill, a decode, a mixed
//! step), in datasheet mode with no correction (where no reference ceiling, floor or activation-quantization
//! kernel enters), and in reference mode with the realistic corrections for the configs whose linear layers
//! run on a 16-bit or FP32 path without quantization (bf16, fp16, fp32). `data/uniform_configs.csv` was
//! written by this same computation, over the 19 configs of the time, on the commit before the change (main
//! at 6f4fbea); a row that erred then (an unsupported format) must err now. Configs added since (fp8-block)
//! have no row.

use roofline_core::{
    Corrections, Mode, ModelAnalysis, Parallelism, StepBatch, analyze_step, find_hardware_in, find_model,
    find_quant_config,
};

const DEVICES: [&str; 4] = ["h100_sxm", "b200", "a100_sxm_80gb", "mi355x"];

/// Configs whose reference-mode results the low-precision work leaves alone: no kernel family but the
/// 16-/32-bit one, no activation quantization.
const REFERENCE_UNCHANGED: [&str; 3] = ["bf16", "fp16", "fp32"];

fn steps() -> [(&'static str, StepBatch); 3] {
    let prefill = StepBatch {
        prefill_seqs: 2,
        prefill_chunk: 512,
        prefill_completing: 2,
        ..StepBatch::default()
    };
    let decode = StepBatch {
        decode_seqs: 8,
        decode_context: 2048,
        ..StepBatch::default()
    };
    let mixed = StepBatch {
        prefill_seqs: 1,
        prefill_chunk: 256,
        prefill_prior: 256,
        prefill_completing: 1,
        ..decode
    };
    [("prefill", prefill), ("decode", decode), ("mixed", mixed)]
}

/// The figures compared, in a fixed order.
fn figures(a: &ModelAnalysis) -> [f64; 6] {
    [
        a.total_time_s,
        a.total_flops,
        a.total_bytes,
        a.weight_bytes,
        a.kv_cache_bytes,
        f64::from(a.kernel_launches),
    ]
}

/// The figures of one case (`mode,device,model,config,step`), as the data file writes them: six numbers, or
/// `unsupported`.
fn case(key: &[&str]) -> String {
    let [mode, device, model, config, step] = key else {
        panic!("malformed case {key:?}");
    };
    let (mode, corrections) = match *mode {
        "datasheet" => (Mode::Datasheet, Corrections::NONE),
        "reference" => (Mode::Reference, Corrections::REALISTIC),
        other => panic!("mode {other}"),
    };
    let step = steps()
        .into_iter()
        .find(|(name, _)| name == step)
        .map(|(_, s)| s)
        .unwrap();
    let result = analyze_step(
        find_hardware_in(device, mode).unwrap(),
        find_model(model).unwrap(),
        find_quant_config(config).unwrap(),
        &step,
        &Parallelism::SINGLE,
        &corrections,
    );
    match result {
        Ok(a) => figures(&a).map(|v| format!("{v:?}")).join(","),
        Err(_) => "unsupported".to_owned(),
    }
}

#[test]
fn uniform_configs_give_the_results_of_before() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/uniform_configs.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cases = 0;
    for line in text.lines() {
        let was: Vec<&str> = line.split(',').collect();
        let key = &was[..5];
        // Every device, preset and step, both modes; the reference rows only for the unchanged configs.
        assert!(
            DEVICES.contains(&key[1]) && (key[0] == "datasheet" || REFERENCE_UNCHANGED.contains(&key[3]))
        );
        let now = case(key);
        let is: Vec<&str> = now.split(',').collect();
        assert_eq!(was.len() - 5, is.len(), "{}", key.join(","));
        for (a, b) in was[5..].iter().zip(&is) {
            match (a.parse::<f64>(), b.parse::<f64>()) {
                // Identical up to the order of floating-point sums (relative 1e-12).
                (Ok(a), Ok(b)) => assert!(
                    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
                    "{}: {a} then, {b} now",
                    key.join(",")
                ),
                _ => assert_eq!(a, b, "{}", key.join(",")),
            }
        }
        cases += 1;
    }
    // 4 devices × 26 presets × 3 steps × (19 configs in datasheet mode + 3 in reference mode).
    assert_eq!(cases, 4 * 26 * 3 * (19 + 3));
}
