//! The `roofline` binary: predictions in reference mode by default, listings that fit 120 columns.

use crate::common::{roofline, stdout};

#[test]
fn predict_says_its_mode_and_defaults_to_reference() {
    let args = [
        "predict",
        "--hardware",
        "h100_sxm",
        "--model",
        "llama-3.1-8b",
        "--config",
        "bf16",
    ];
    let text = stdout(&args);
    assert!(text.contains("reference mode"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&[&args[..], &["--json"]].concat())).unwrap();
    assert_eq!(json["mode"], "reference");
    let datasheet: serde_json::Value =
        serde_json::from_str(&stdout(&[&args[..], &["--json", "--mode", "datasheet"]].concat())).unwrap();
    assert_eq!(datasheet["mode"], "datasheet");
    // Reference ceilings are below the datasheet's, and kernels pay their floors: a slower step.
    assert!(json["tpot_s"].as_f64().unwrap() > datasheet["tpot_s"].as_f64().unwrap() * 1.1);
}

#[test]
fn listings_cover_the_catalog_and_fit_120_columns() {
    // The whole catalog, every preset and every config, however many there are.
    for (what, count) in [
        ("hardware", roofline_core::catalog().len()),
        ("models", roofline_core::model_presets().len()),
        ("configs", roofline_core::quant_configs().len()),
    ] {
        let text = stdout(&[what]);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{what}: {line}");
        }
        let json: serde_json::Value = serde_json::from_str(&stdout(&[what, "--json"])).unwrap();
        assert_eq!(json.as_array().unwrap().len(), count, "{what}");
    }
    assert!(stdout(&["hardware"]).contains("h100_sxm"));
}

#[test]
fn usage_errors_exit_2_and_name_the_problem() {
    let out = roofline(&["predict", "--model", "llama-3.1-8b", "--config", "bf16"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hardware KEY or --spec FILE"));
    let out = roofline(&[
        "predict",
        "--hardware",
        "h100",
        "--model",
        "x",
        "--config",
        "bf16",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn predict_imports_a_hugging_face_config_json() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/hf/qwen3-8b.json");
    let args = [
        "predict",
        "--hardware",
        "h100_sxm",
        "--model-file",
        file,
        "--config",
        "bf16",
    ];
    // Qwen3-8B: 8.2B parameters per the model card; the structure gives 8.19B, all active.
    let text = stdout(&args);
    assert!(text.contains("8.19 B, 8.19 B"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&[&args[..], &["--json"]].concat())).unwrap();
    assert_eq!(json["model"], "qwen3-8b");
    let weights = json["weight_bytes"].as_f64().unwrap();
    assert!((weights / (2.0 * 8.2e9) - 1.0).abs() < 0.01, "{weights}");
    // The file and the preset transcribed from it predict the same step.
    let preset_args = [&args[..3], &["--model", "qwen3-8b", "--config", "bf16", "--json"]].concat();
    let preset: serde_json::Value = serde_json::from_str(&stdout(&preset_args)).unwrap();
    assert_eq!(json["tpot_s"], preset["tpot_s"]);
    // advise takes the file too.
    assert!(stdout(&["advise", "--hardware", "h100_sxm", "--model-file", file]).contains("rank"));
}

#[test]
fn unusable_model_files_are_usage_errors_naming_the_problem() {
    let dir = std::env::temp_dir().join(format!("roofline-cli-model-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let unknown = dir.join("config.json");
    std::fs::write(
        &unknown,
        r#"{"architectures": ["MambaForCausalLM"], "hidden_size": 768}"#,
    )
    .unwrap();
    let missing = dir.join("absent.json");
    // Files past the 16 MiB cap: read no further than the cap (a device never ends).
    let large = dir.join("large.json");
    std::fs::write(&large, " ".repeat((16 << 20) + 1)).unwrap();
    let endless = std::path::PathBuf::from("/dev/zero");
    for (path, expected) in [
        (&unknown, "architectures"),
        (&missing, "absent.json"),
        (&large, "larger than the limit of 16777216 bytes"),
        (&endless, "larger than the limit of 16777216 bytes"),
    ] {
        let out = roofline(&[
            "predict",
            "--hardware",
            "h100_sxm",
            "--model-file",
            path.to_str().unwrap(),
            "--config",
            "bf16",
        ]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{stderr}");
    }
    let both = roofline(&[
        "predict",
        "--hardware",
        "h100_sxm",
        "--model",
        "qwen3-8b",
        "--model-file",
        unknown.to_str().unwrap(),
        "--config",
        "bf16",
    ]);
    assert_eq!(both.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fixture of `core/tests/data/hf` (see its README for the published files).
fn hf(name: &str) -> String {
    format!("{}/../tests/data/hf/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn predict_json(extra: &[&str]) -> serde_json::Value {
    let args = [&["predict", "--hardware", "h100_sxm", "--json"], extra].concat();
    serde_json::from_str(&stdout(&args)).unwrap()
}

/// The (weights, activations) of `module` in a predict `--json` output.
fn module_format(json: &serde_json::Value, module: &str) -> (String, String) {
    let m = json["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["module"] == module)
        .unwrap_or_else(|| panic!("no {module} in {}", json["modules"]));
    (
        m["format"]["weights"].as_str().unwrap().to_owned(),
        m["format"]["activations"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_model_file_is_predicted_as_its_checkpoint_stores_it() {
    // gpt-oss-120b without --config: MXFP4 experts, BF16 attention, router, embeddings and head. Weights:
    // 36 · 128 experts × 13,219,200 B (3 · 2880² elements at 4 bits + an E8M0 byte per 32) + 36 · 26,542,080
    // attention + 36 · 368,640 router + 2 · 201,088 · 2880 embedding and head + 73 · 2880 norm parameters, all
    // at 2 B = 65,168,599,680 B, about 65 GB.
    let file = hf("gpt-oss-120b.json");
    let checkpoint = predict_json(&["--model-file", &file]);
    assert_eq!(checkpoint["config"], "checkpoint");
    assert_eq!(checkpoint["weight_bytes"].as_f64().unwrap(), 65_168_599_680.0);
    assert_eq!(
        module_format(&checkpoint, "routed_experts"),
        ("MXFP4".into(), "BF16".into())
    );
    assert_eq!(
        module_format(&checkpoint, "attention"),
        ("BF16".into(), "BF16".into())
    );
    // --config checkpoint is the same; --config bf16 reads every weight in BF16: 116,789,048,640
    // parameters · 2 B = 233,578,097,280 B, about 234 GB.
    let explicit = predict_json(&["--model-file", &file, "--config", "checkpoint"]);
    assert_eq!(explicit["weight_bytes"], checkpoint["weight_bytes"]);
    let bf16 = predict_json(&["--model-file", &file, "--config", "bf16"]);
    assert_eq!(bf16["weight_bytes"].as_f64().unwrap(), 233_578_097_280.0);
    // The table says which precision each module runs in.
    let text = stdout(&["predict", "--hardware", "h100_sxm", "--model-file", &file]);
    assert!(
        text.contains("precisions: attention, router, embeddings, head: BF16 · routed experts: MXFP4 weights, BF16 activations"),
        "{text}"
    );
    // Qwen3-32B-FP8: block-scaled FP8 (128×128 weight blocks, 1×128 activation groups) in every decoder
    // linear layer, each input quantized by one per-row kernel.
    let qwen = predict_json(&["--model-file", &hf("qwen3-32b-fp8.json")]);
    assert_eq!(
        module_format(&qwen, "attention"),
        ("FP8_BLOCK128".into(), "FP8_GROUP128".into())
    );
    let ops = qwen["ops"].as_array().unwrap();
    let qkv = ops.iter().find(|o| o["name"] == "qkv_proj").unwrap();
    assert_eq!(qkv["precision"], "FP8_GROUP128");
    assert!(ops.iter().any(|o| o["name"] == "quantize_attn_in"));
    assert!(ops.iter().all(|o| o["name"] != "amax_attn_in"));
    // Kimi-K2.5 style: INT4 routed experts only.
    let kimi = stdout(&[
        "predict",
        "--hardware",
        "b200",
        "--model-file",
        &hf("kimi-k2.5-style.json"),
        "--tp",
        "8",
    ]);
    assert!(
        kimi.contains("precisions: attention, dense MLP, shared experts, router, embeddings, head: BF16 · routed experts: INT4_G32 weights, BF16 activations"),
        "{kimi}"
    );
}

#[test]
fn an_unknown_quantization_method_is_a_usage_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("roofline-cli-quant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(hf("qwen3-8b.json")).unwrap()).unwrap();
    config["quantization_config"] = serde_json::json!({"quant_method": "hqq", "nbits": 4});
    let path = dir.join("qwen3-8b-hqq.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = roofline(&[
        "predict",
        "--hardware",
        "h100_sxm",
        "--model-file",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("quantization_config.quant_method") && stderr.contains("'hqq'"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_engine_choice_shapes_the_advice() {
    // Llama-3.1-8B decode at batch 32 on an L40S: W4A8 is fastest but only TensorRT-LLM runs it on Ada.
    let args = |engine: &str| {
        stdout(&[
            "advise",
            "--hardware",
            "l40s",
            "--model",
            "llama-3.1-8b",
            "--batch",
            "32",
            "--engine",
            engine,
        ])
    };
    assert!(args("trtllm").contains("recommendation: switch to w4a8-int4-fp8"));
    let sglang = args("sglang");
    assert!(
        !sglang.contains("recommendation: switch to w4a8-int4-fp8"),
        "{sglang}"
    );
    assert!(sglang.contains("it needs TensorRT-LLM on Ada"), "{sglang}");
    // predict says whether the chosen engine runs the config.
    let text = stdout(&[
        "predict",
        "--hardware",
        "h100_sxm",
        "--model",
        "llama-3.1-8b",
        "--config",
        "nvfp4-w4a16",
        "--engine",
        "sglang",
    ]);
    assert!(
        text.contains("warning: SGLang does not run nvfp4-w4a16 on Hopper"),
        "{text}"
    );
    let bad = roofline(&[
        "advise",
        "--hardware",
        "h100_sxm",
        "--model",
        "llama-3.1-8b",
        "--engine",
        "tgi",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn names_from_files_reach_the_terminal_without_escape_sequences() {
    let dir = tempfile::tempdir().unwrap();
    // A spec whose name would clear the screen and retitle the window, and a model whose _name_or_path does.
    let mut spec = roofline_core::find_hardware("h100_sxm").unwrap().clone();
    spec.key = "my_h100".into();
    spec.name = "\u{1b}[2J\u{1b}]0;pwned\u{7}My H100".into();
    spec.provenance = roofline_core::Provenance::Custom;
    let spec_file = dir.path().join("spec.json");
    std::fs::write(&spec_file, serde_json::to_string(&spec).unwrap()).unwrap();
    let model_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/hf/qwen3-8b.json"
    ))
    .unwrap();
    let mut model: serde_json::Value = serde_json::from_str(&model_text).unwrap();
    model["_name_or_path"] = "\u{1b}[31mQwen\u{9b}0m".into();
    let model_file = dir.path().join("config.json");
    std::fs::write(&model_file, model.to_string()).unwrap();
    let (spec_path, model_path) = (spec_file.to_str().unwrap(), model_file.to_str().unwrap());
    let table = stdout(&[
        "predict",
        "--spec",
        spec_path,
        "--model-file",
        model_path,
        "--config",
        "bf16",
    ]);
    assert!(
        table.contains("[2J]0;pwnedMy H100") && table.contains("[31mQwen0m"),
        "{table}"
    );
    assert!(!table.chars().any(|c| c.is_control() && c != '\n'), "{table:?}");
    // An error naming a file whose name holds an escape sequence goes to stderr the same way.
    let hostile_file = dir.path().join("\u{1b}[2Jbad.json");
    std::fs::write(&hostile_file, "{}").unwrap();
    let out = roofline(&[
        "predict",
        "--spec",
        spec_path,
        "--model-file",
        hostile_file.to_str().unwrap(),
        "--config",
        "bf16",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("[2Jbad.json"), "{stderr:?}");
    assert!(!stderr.chars().any(|c| c.is_control() && c != '\n'), "{stderr:?}");
}
