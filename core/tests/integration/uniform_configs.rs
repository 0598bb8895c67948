//! Uniform precision configs give the results they gave before per-module precisions existed: every preset ×
//! every config × four devices (Hopper, Blackwell, Ampere, CDNA4) × three steps (a prefill, a decode, a mixed
//! step), in datasheet mode with no correction (where no reference ceiling, floor or activation-quantization
//! kernel enters), and in reference mode with the realistic corrections for the configs whose linear layers
//! run on a 16-bit or FP32 path without quantization (bf16, fp16, fp32). `data/uniform_configs.csv` was
//! written by this very computation on the commit before the change (main at 6f4fbea); a row that errs
//! then (an unsupported format) must err now.

use roofline_core::{
    Corrections, Mode, ModelAnalysis, Parallelism, StepBatch, analyze_step, find_hardware_in, model_presets,
    quant_configs,
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

/// One line per case: `mode,device,model,config,step,` then the figures or `unsupported`.
fn lines() -> Vec<String> {
    let mut out = Vec::new();
    for (mode, corrections) in [
        (Mode::Datasheet, Corrections::NONE),
        (Mode::Reference, Corrections::REALISTIC),
    ] {
        for device in DEVICES {
            let hardware = find_hardware_in(device, mode).unwrap();
            for model in model_presets() {
                for config in quant_configs().iter().filter(|c| {
                    mode == Mode::Datasheet || REFERENCE_UNCHANGED.contains(&c.key.as_str())
                }) {
                    for (name, step) in steps() {
                        let result = analyze_step(
                            hardware,
                            model,
                            config,
                            &step,
                            &Parallelism::SINGLE,
                            &corrections,
                        );
                        let values = match result {
                            Ok(a) => figures(&a).map(|v| format!("{v:?}")).join(","),
                            Err(_) => "unsupported".to_owned(),
                        };
                        out.push(format!(
                            "{mode},{device},{},{},{name},{values}",
                            model.key, config.key
                        ));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn uniform_configs_give_the_results_of_before() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/uniform_configs.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let before: Vec<&str> = text.lines().collect();
    let now = lines();
    assert_eq!(before.len(), now.len(), "cases");
    for (was, is) in before.iter().zip(&now) {
        let was: Vec<&str> = was.split(',').collect();
        let is: Vec<&str> = is.split(',').collect();
        assert_eq!(was[..5], is[..5], "case order");
        assert_eq!(was.len(), is.len(), "{}", was[..5].join(","));
        for (a, b) in was[5..].iter().zip(&is[5..]) {
            match (a.parse::<f64>(), b.parse::<f64>()) {
                // Identical up to the order of floating-point sums (relative 1e-12).
                (Ok(a), Ok(b)) => assert!(
                    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
                    "{}: {a} then, {b} now",
                    was[..5].join(",")
                ),
                _ => assert_eq!(a, b, "{}", was[..5].join(",")),
            }
        }
    }
}
