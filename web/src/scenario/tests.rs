//! Tests of the page's scenario: defaults, kernel rows, corrections, the reference ceilings used, saved and
//! linked scenarios, history pushes.

use super::*;
use crate::presets::resolve_hardware;
use roofline_core::StepLaunch;

#[test]
fn default_scenario_reproduces_core_gb10_gemv() {
    let hw = resolve_hardware("gb10", &[]).unwrap();
    let rows = KernelSpec::default().evaluate(&hw, &Corrections::NONE);
    let fp16 = rows.iter().find(|r| r.precision == Precision::Fp16).unwrap();
    assert!((fp16.prediction.as_ref().unwrap().time_s - 122.970_021_978e-6).abs() < 1e-12);
    // The launch floor lifts a kernel that would finish sooner; this GEMV (123 µs) stays, a 1×64×64
    // one (8 KiB at 273 GB/s: 30 ns) takes the 4 µs floor.
    let floored = Corrections {
        launch_floor: true,
        ..Corrections::NONE
    };
    let tiny = KernelSpec {
        n: 64,
        k: 64,
        ..KernelSpec::default()
    };
    let rows = tiny.evaluate(&hw, &floored);
    let fp16 = rows.iter().find(|r| r.precision == Precision::Fp16).unwrap();
    assert_eq!(
        fp16.prediction.as_ref().unwrap().time_s,
        roofline_core::KERNEL_LAUNCH_FLOOR_S
    );
    let int4 = rows.iter().find(|r| r.precision == Precision::Int4).unwrap();
    assert!(
        matches!(int4.prediction, Err(Error::Unsupported { .. })),
        "INT4 on GB10 is reported, not dropped"
    );
    assert_eq!(rows.len(), DEFAULT_PRECISIONS.len());
}

#[test]
fn toggle_keeps_canonical_order() {
    let mut spec = KernelSpec {
        precisions: vec![Precision::Int8],
        ..KernelSpec::default()
    };
    spec.toggle(Precision::Fp16);
    assert_eq!(spec.precisions, vec![Precision::Fp16, Precision::Int8]);
    spec.toggle(Precision::Int8);
    assert_eq!(spec.precisions, vec![Precision::Fp16]);
}

#[test]
fn the_default_scenario_is_in_reference_mode_with_realistic_corrections() {
    let s = Scenario::default();
    let gb10 = resolve_hardware("gb10", &[]).unwrap();
    let reference = gb10.reference().unwrap();
    assert_eq!(s.corrections.mode, Mode::Reference);
    assert_eq!(s.core_corrections(&reference), Corrections::REALISTIC);
    assert_eq!(s.core_corrections(&gb10), Corrections::NONE);
    let mut toggled = s.clone();
    toggled.corrections.wave_quantization = true;
    toggled.memory_fraction = 0.8;
    assert_eq!(
        toggled.core_corrections(&reference),
        Corrections {
            wave_quantization: true,
            memory: roofline_core::MemoryFraction::OfCapacity(0.8),
            ..Corrections::REALISTIC
        },
        "the toggles add to the mode's corrections"
    );
    // A host CPU calibrated by the endpoint launches no CUDA graph.
    let cpu = HardwareSpec::uncatalogued("cpu_host", "Host CPU", "x86-64", 64e9)
        .calibrated(&roofline_core::hardware::Calibration {
            device_name: "Host CPU".into(),
            dram_bandwidth_bytes_per_s: 20e9,
            kernel_overhead_s: 1e-6,
            vector_kernel_overhead_s: None,
            peaks: vec![(roofline_core::ComputePath::Fp32, 1e12)],
            weight_only: Vec::new(),
            source: "test".into(),
            quality: None,
        })
        .unwrap();
    assert_eq!(s.core_corrections(&cpu).step_launch, StepLaunch::Ignored);
    assert_eq!(s.core_corrections(&reference).step_launch, StepLaunch::CudaGraphs);
}

#[test]
fn unknown_models_and_configs_are_replaced_and_named() {
    let mut s = Scenario {
        model: "gpt-5".into(),
        config: "zzz".into(),
        ..Scenario::default()
    };
    let replaced = s.replace_unknown_keys(&[]);
    assert_eq!(
        replaced,
        [
            "unknown model 'gpt-5': showing Llama 3.1 8B".to_owned(),
            "unknown precision config 'zzz': showing BF16 baseline".to_owned()
        ]
    );
    assert_eq!((s.model.as_str(), s.config.as_str()), ("llama-3.1-8b", "bf16"));
    assert!(Scenario::default().replace_unknown_keys(&[]).is_empty());
    // Names, not keys, and the split on several GPUs.
    let label = Scenario {
        gpus: 8,
        experts: 8,
        ..Scenario::default()
    }
    .label(&[], &[]);
    assert!(
        label.starts_with("NVIDIA GB10") && label.ends_with("· 8 GPUs (TP 8, EP 8)"),
        "{label}"
    );
}

#[test]
fn saved_states_keep_their_mode() {
    // Before modes, `calibrated: true` meant calibrated roofs; without it, datasheet roofs, which now read
    // as the default mode.
    let saved = |json: &str| serde_json::from_str::<CorrectionToggles>(json).unwrap().mode;
    assert_eq!(
        saved(r#"{"launch_floor":false,"wave_quantization":true,"calibrated":true}"#),
        Mode::Calibrated
    );
    assert_eq!(
        saved(r#"{"launch_floor":false,"wave_quantization":false,"calibrated":false}"#),
        Mode::Reference
    );
    assert_eq!(saved(r#"{"mode":"datasheet"}"#), Mode::Datasheet);
    let toggles = CorrectionToggles {
        mode: Mode::Calibrated,
        ..CorrectionToggles::default()
    };
    let json = serde_json::to_string(&toggles).unwrap();
    assert_eq!(serde_json::from_str::<CorrectionToggles>(&json).unwrap(), toggles);
}

#[test]
fn reference_ceilings_are_listed_with_their_basis_in_reference_mode_only() {
    let s = Scenario {
        config: "nvfp4-w4a4".into(),
        ..Scenario::default()
    };
    let gb10 = resolve_hardware("gb10", &[]).unwrap();
    assert_eq!(s.used_reference_ceilings(&gb10, &[]), None);
    let used = s
        .used_reference_ceilings(&gb10.reference().unwrap(), &[])
        .unwrap();
    let what: Vec<_> = used.iter().map(|c| c.what.as_str()).collect();
    // NVFP4 W4A4 computes on the FP4 path, in the NVFP4 family, and quantizes its activations in one
    // block kernel.
    assert_eq!(
        what,
        [
            "DRAM bandwidth",
            "FP4 GEMM peak",
            "NVFP4 GEMM on FP4",
            "NVFP4 small-M bandwidth",
            "NVFP4 kernel floor",
            "matrix kernel floor",
            "vector kernel floor",
            "block quantize floor",
        ]
    );
    let ceilings = gb10.reference_ceilings();
    assert_eq!(
        used[0].value,
        CeilingValue::Fraction(ceilings.dram_fraction.value)
    );
    assert_eq!(used[0].basis, ceilings.dram_fraction.basis);
    // GB10's NVFP4 GEMM fraction is its own published measurement (356 of 500 TFLOP/s); its 4.1 µs floor
    // a stated derivation.
    assert_eq!(used[2].value, CeilingValue::Fraction(0.712));
    assert_eq!(used[2].provenance(), "measured");
    assert_eq!(used[4].value, CeilingValue::Seconds(4.1e-6));
    assert_eq!(used[4].provenance(), "derived");
    assert_eq!(used[5].value, CeilingValue::Seconds(5e-6));
    assert!(
        used.iter().all(|c| c.basis.starts_with("measured")
            || c.basis.starts_with("derived")
            || c.basis.starts_with("source")),
        "{used:?}"
    );
    // The default config (BF16) computes on the BF16 path, without quantization kernels.
    let bf16 = Scenario::default()
        .used_reference_ceilings(&gb10.reference().unwrap(), &[])
        .unwrap();
    let what: Vec<_> = bf16.iter().map(|c| c.what.as_str()).collect();
    assert_eq!(
        what,
        [
            "DRAM bandwidth",
            "BF16 GEMM peak",
            "matrix kernel floor",
            "vector kernel floor"
        ]
    );
}

#[test]
fn a_checkpoint_config_is_analysed_as_the_model_stores_it() {
    // gpt-oss-120b's own precisions: MXFP4 experts, BF16 rest, about 65 GB of weights (65,168,599,680 B:
    // core/tests/integration/hf_config.rs writes the sum out).
    let s = Scenario {
        hardware: "h100_sxm".into(),
        model: "gpt-oss-120b".into(),
        config: "checkpoint".into(),
        ..Scenario::default()
    };
    let h100 = resolve_hardware("h100_sxm", &[]).unwrap().reference().unwrap();
    let a = s.analyze(&h100, &[]).unwrap();
    assert_eq!(a.weight_bytes, 65_168_599_680.0);
    assert_eq!(
        roofline_core::summarize_modules(&a.modules),
        "attention, router, embeddings, head: BF16 · routed experts: MXFP4 weights, BF16 activations"
    );
    // The weight-only family's ceilings are listed.
    let used = s.used_reference_ceilings(&h100, &[]).unwrap();
    assert!(
        used.iter().any(|c| c.what == "weight-only GEMM on BF16"),
        "{used:?}"
    );
}

#[test]
fn the_gpu_count_splits_the_step_and_bad_counts_are_core_errors() {
    let h100 = resolve_hardware("h100_sxm", &[]).unwrap();
    let s = Scenario {
        hardware: "h100_sxm".into(),
        model: "llama-3.1-70b".into(),
        config: "bf16".into(),
        ..Scenario::default()
    };
    let one = s.analyze(&h100, &[]).unwrap();
    let four = Scenario { gpus: 4, ..s.clone() }.analyze(&h100, &[]).unwrap();
    assert!(!one.fits_in_memory && four.fits_in_memory && four.gpus == 4);
    // Expert parallel on a MoE model adds the all-to-alls; a GPU count it does not divide resets it.
    let moe = Scenario {
        model: "qwen3-30b-a3b".into(),
        gpus: 4,
        experts: 4,
        ..s.clone()
    };
    let a = moe.analyze(&h100, &[]).unwrap();
    assert!(a.ops.iter().any(|o| o.name == "moe_dispatch_all_to_all"));
    let mut fewer = moe.clone();
    fewer.set_gpus(2);
    assert_eq!((fewer.gpus, fewer.experts), (2, 1));
    fewer.set_gpus(8);
    assert_eq!(fewer.experts, 1);
    assert!(matches!(
        Scenario {
            experts: 2,
            ..s.clone()
        }
        .analyze(&h100, &[]),
        Err(Error::InvalidInput(_))
    ));
    assert!(four.communication_fraction > 0.0);
    let split = Scenario { gpus: 4, ..s.clone() };
    let advice = split.advise(&h100, &[]).unwrap();
    assert!(advice.candidates.iter().any(|c| c.min_gpus.is_some()));
    let answer = split.recommend(&h100, &[], &advice).unwrap();
    assert!(
        !matches!(answer, Recommendation::NothingFits { .. }),
        "{answer:?}"
    );
    assert!(matches!(
        Scenario { gpus: 3, ..s.clone() }.analyze(&h100, &[]),
        Err(Error::InvalidInput(_))
    ));
    let rtx = resolve_hardware("rtx_5090", &[]).unwrap();
    assert!(matches!(
        Scenario {
            gpus: 2,
            hardware: "rtx_5090".into(),
            ..s
        }
        .analyze(&rtx, &[]),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn sliders_replace_and_pickers_push() {
    let a = Scenario::default();
    assert!(!a.is_discrete_change(&Scenario {
        batch: 8,
        context: 512,
        ..a.clone()
    }));
    assert!(a.is_discrete_change(&Scenario {
        prefill: true,
        ..a.clone()
    }));
    assert!(a.is_discrete_change(&Scenario {
        hardware: "h100_sxm".into(),
        ..a.clone()
    }));
    // Typing the serving view's numbers replaces; picking its scheduler or view pushes.
    let mut typed = a.clone();
    (typed.serving.isl, typed.serving.sla.tpot_max_s) = (4096, Some(0.02));
    assert!(!a.is_discrete_change(&typed));
    let mut picked = a.clone();
    picked.serving.scheduler = roofline_core::SchedulerKind::Static;
    assert!(a.is_discrete_change(&picked));
    assert!(a.is_discrete_change(&Scenario {
        view: View::Serving,
        ..a.clone()
    }));
}

#[test]
fn default_scenario_analyses_on_gb10_in_the_mode_of_its_spec() {
    let s = Scenario::default();
    let gb10 = resolve_hardware("gb10", &[]).unwrap();
    let datasheet = s.analyze(&gb10, &[]).unwrap();
    assert!(datasheet.tpot_s.unwrap() > 0.0 && datasheet.fits_in_memory);
    assert_eq!(
        (datasheet.mode, datasheet.launch_overhead_s),
        (Mode::Datasheet, 0.0)
    );
    let reference = s.analyze(&gb10.reference().unwrap(), &[]).unwrap();
    assert_eq!(reference.mode, Mode::Reference);
    assert_eq!(reference.corrections, Corrections::REALISTIC);
    assert!(reference.launch_overhead_s > 0.0);
    assert!(reference.tpot_s.unwrap() > datasheet.tpot_s.unwrap());
}

#[test]
fn invalid_shape_is_an_error_row() {
    let hw = resolve_hardware("gb10", &[]).unwrap();
    let rows = KernelSpec {
        n: 0,
        ..KernelSpec::default()
    }
    .evaluate(&hw, &Corrections::NONE);
    assert!(
        rows.iter()
            .all(|r| matches!(r.prediction, Err(Error::InvalidInput(_))))
    );
}
