//! The models served in 2026 on the command line (issue 35): `roofline models` lists them, and `predict` and
//! `serve` run each on H100, H200 and B200 in the formats their checkpoints ship, refusing none; a
//! `config.json` reads with the ModelOpt `hf_quant_config.json` beside it.

use crate::common::{roofline, stdout};

/// The new presets, the narrowest format their published checkpoints ship that Hopper runs (the checkpoint's
/// own, FP8 blocks for the BF16 ones: Qwen publishes -FP8 checkpoints), and whether 8 H100s (640 GB) hold
/// it: DeepSeek-V3.2's 672B and GLM-5's 744B parameters are more than 640 GB even in FP8.
const PRESETS: [(&str, &str, bool); 8] = [
    ("qwen3-next-80b-a3b", "fp8-block", true),
    ("qwen3.5-397b-a17b", "fp8-block", true),
    ("qwen3.6-35b-a3b", "fp8-block", true),
    ("deepseek-v3.2", "checkpoint", false),
    ("glm-5", "checkpoint", false),
    ("glm-4.6", "fp8-block", true),
    ("minimax-m2.5", "checkpoint", true),
    ("kimi-k2.5", "checkpoint", true),
];

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout(args)).unwrap()
}

/// `roofline <command> --json` of `model` in `config` on 8 GPUs of `hardware` (`serve` at 1024 in, 1024 out).
fn on_8_gpus(command: &str, hardware: &str, model: &str, config: &str) -> serde_json::Value {
    let config_flag = if command == "serve" {
        "--configs"
    } else {
        "--config"
    };
    let mut args = vec![
        command,
        "--hardware",
        hardware,
        "--model",
        model,
        "--tp",
        "8",
        config_flag,
        config,
        "--json",
    ];
    if command == "serve" {
        args.extend(["--isl", "1024", "--osl", "1024"]);
    }
    json(&args)
}

/// Operating points of `serve` for `model` in `config` on 8 GPUs of `hardware`.
fn serve_points(hardware: &str, model: &str, config: &str) -> usize {
    on_8_gpus("serve", hardware, model, config)["points"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn models_lists_the_new_presets() {
    let text = stdout(&["models"]);
    for (key, ..) in PRESETS {
        assert!(text.contains(key), "{key} missing from `roofline models`");
    }
}

#[test]
fn predict_runs_every_new_preset_on_hopper_and_blackwell() {
    for (model, ..) in PRESETS {
        for hardware in ["h100_sxm", "h200_sxm", "b200"] {
            for config in ["checkpoint", "fp8-block"] {
                let tpot = on_8_gpus("predict", hardware, model, config)["tpot_s"]
                    .as_f64()
                    .unwrap();
                assert!(tpot > 0.0 && tpot < 1.0, "{model} {hardware} {config}: {tpot}");
            }
        }
        // NVFP4 (NVIDIA's checkpoints) on Blackwell; Hopper has no FP4 path, which is an error naming it.
        let nvfp4 = [
            "predict",
            "--hardware",
            "b200",
            "--model",
            model,
            "--tp",
            "8",
            "--config",
            "nvfp4-w4a4",
        ];
        assert!(stdout(&nvfp4).contains("TPOT"), "{model}");
        let hopper = roofline(&[
            "predict",
            "--hardware",
            "h200_sxm",
            "--model",
            model,
            "--config",
            "nvfp4-w4a4",
        ]);
        let stderr = String::from_utf8_lossy(&hopper.stderr);
        assert!(stderr.contains("Hopper"), "{model}: {stderr}");
    }
}

#[test]
fn serve_finds_operating_points_for_every_new_preset() {
    for (model, hopper_config, fits_h100) in PRESETS {
        for hardware in ["h200_sxm", "b200"] {
            assert!(
                serve_points(hardware, model, "checkpoint") > 0,
                "{model} {hardware}"
            );
        }
        assert!(
            serve_points("b200", model, "nvfp4-w4a4") > 0,
            "{model} b200 nvfp4"
        );
        // On 8 H100s: points where the weights fit; where they do not, the run still succeeds, with none.
        assert_eq!(
            serve_points("h100_sxm", model, hopper_config) > 0,
            fits_h100,
            "{model} h100 {hopper_config}"
        );
    }
}

/// The weight format `predict --json` output `out` lists for `module`, where it lists one apart.
fn weights(out: &serde_json::Value, module: &str) -> Option<String> {
    out["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["module"] == module)
        .map(|m| m["format"]["weights"].as_str().unwrap().to_owned())
}

#[test]
fn a_config_json_reads_with_its_modelopt_file() {
    let (config, quant) = (
        hf("qwen3.5-397b-a17b.json"),
        hf("modelopt/qwen3.5-397b-a17b-nvfp4-hf_quant_config.json"),
    );
    let args = [
        "predict",
        "--hardware",
        "b200",
        "--tp",
        "8",
        "--model-file",
        &config,
        "--model-file",
        &quant,
        "--json",
    ];
    let out = json(&args);
    assert_eq!(weights(&out, "routed_experts").as_deref(), Some("NVFP4"));
    assert_eq!(weights(&out, "attention").as_deref(), Some("FP16"));
    // A third file is a usage error naming the limit.
    let three = roofline(&[
        "predict",
        "--hardware",
        "b200",
        "--model-file",
        &config,
        "--model-file",
        &quant,
        "--model-file",
        &quant,
    ]);
    assert_eq!(three.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&three.stderr).contains("at most one hf_quant_config.json"));
}

/// `predict` and `serve --configs checkpoint` of the model `files` describe on 8 B200s (its routed experts
/// NVFP4, its attention `attention`), and `predict` refused on H100 and H200 naming the architecture: Hopper
/// has no FP4 path, and no stand-in format is taken.
fn runs_nvfp4_on_blackwell_refused_on_hopper(files: &[&str], attention: &str) {
    let predict = |hardware: &str| {
        let mut args = vec!["predict", "--hardware", hardware, "--tp", "8", "--json"];
        args.extend(files);
        roofline(&args)
    };
    let out: serde_json::Value = serde_json::from_slice(&predict("b200").stdout).unwrap();
    assert_eq!(weights(&out, "routed_experts").as_deref(), Some("NVFP4"));
    assert_eq!(weights(&out, "attention").as_deref(), Some(attention));
    let mut serve = vec![
        "serve",
        "--hardware",
        "b200",
        "--tp",
        "8",
        "--rate",
        "1",
        "--isl",
        "1024",
        "--osl",
        "256",
        "--configs",
        "checkpoint",
        "--json",
    ];
    serve.extend(files);
    assert_eq!(roofline(&serve).status.code(), Some(0));
    for hardware in ["h100_sxm", "h200_sxm"] {
        let refused = predict(hardware);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{hardware}: {stderr}");
        assert!(
            stderr.contains("NVFP4") && stderr.contains("Hopper sm_90"),
            "{stderr}"
        );
    }
}

fn hf(name: &str) -> String {
    format!("{}/../tests/data/hf/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn nvidia_minimax_m3_nvfp4_mixed_precision_runs_on_blackwell_and_is_refused_on_hopper() {
    // NVIDIA's MiniMax-M3 NVFP4 (ModelOpt MIXED_PRECISION: NVFP4 routed experts, MXFP8 elsewhere): the
    // published text config inside NVIDIA's wrapper, with the trimmed hf_quant_config.json beside it.
    let text: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(hf("minimax-m3.json")).unwrap()).unwrap();
    let wrapped = serde_json::json!({
        "architectures": ["MiniMaxM3SparseForConditionalGeneration"], "text_config": text,
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("minimax-m3-nvfp4.json");
    std::fs::write(&config, wrapped.to_string()).unwrap();
    let quant = hf("modelopt/minimax-m3-nvfp4-hf_quant_config.json");
    let files = ["--model-file", config.to_str().unwrap(), "--model-file", &quant];
    runs_nvfp4_on_blackwell_refused_on_hopper(&files, "MXFP8_E4M3");
}

#[test]
fn nvidia_deepseek_v4_nvfp4_runs_on_blackwell_and_is_refused_on_hopper() {
    // NVIDIA's DeepSeek-V4-Flash NVFP4 (DeepSeek's block FP8, ModelOpt's NVFP4 routed experts): its
    // config.json alone, and with its hf_quant_config.json beside it.
    let (config, quant) = (
        hf("deepseek-v4-flash-nvfp4.json"),
        hf("modelopt/deepseek-v4-flash-nvfp4-hf_quant_config.json"),
    );
    runs_nvfp4_on_blackwell_refused_on_hopper(&["--model-file", &config], "FP8_BLOCK128");
    runs_nvfp4_on_blackwell_refused_on_hopper(
        &["--model-file", &config, "--model-file", &quant],
        "FP8_BLOCK128",
    );
}
