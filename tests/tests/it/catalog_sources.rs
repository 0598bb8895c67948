//! The catalog against its research file `core/data/hardware-sources.toml` (which roofline-catalog-gen turns
//! into the catalog): every device present with sane figures and sources, every reference ceiling — per
//! compute path and per GEMM kernel family, and every kernel floor — the research file's measurement (with its
//! URL) or a stated derivation, the published matmul ceilings reproduced, and the interconnects converted to
//! one direction with their reference fractions.

use roofline_catalog_gen::record::{Device, devices};
use roofline_core::hardware::{MATRIX_KERNEL_FLOOR_S, VECTOR_KERNEL_FLOOR_S, fallback_paths};
use roofline_core::{catalog, find_hardware};
use roofline_tests::workspace_root;

/// The research file's devices, read through the generator's one declaration of a `[[device]]` entry.
struct SourceFile {
    device: Vec<Device>,
}

fn sources() -> SourceFile {
    let file = workspace_root().join(roofline_catalog_gen::SOURCE);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    SourceFile {
        device: devices(&text).unwrap_or_else(|e| panic!("{e}")),
    }
}

/// Every device of the research file is in the catalog (core's build script generates it from that file, so a
/// figure-for-figure transcription check would be a tautology), with sources and sane figures: every number
/// finite and positive, every sparse peak at least its dense one, the DRAM bandwidth in base units.
#[test]
fn every_research_device_is_catalogued_with_sane_figures() {
    let file = sources();
    assert_eq!(file.device.len(), catalog().len(), "device count");
    for d in &file.device {
        let key = &d.key;
        let h = find_hardware(key).unwrap_or_else(|e| panic!("{key}: {e}"));
        h.check().unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(
            !h.sources.is_empty() && h.sources.iter().all(|s| !s.trim().is_empty()),
            "{key} sources"
        );
        // GB/s as published, bytes/s inside.
        assert_eq!(
            h.dram_bandwidth_bytes_per_s,
            d.dram_bw_gbs * 1e9,
            "{key} bandwidth"
        );
        let figures = [
            Some(h.memory_bytes),
            Some(h.dram_bandwidth_bytes_per_s),
            h.l2_bytes,
            h.boost_clock_hz,
            h.tdp_w,
        ];
        for v in figures.into_iter().flatten() {
            assert!(v.is_finite() && v > 0.0, "{key}: {v}");
        }
        assert!(!h.peaks.is_empty(), "{key} has no peak");
        for peak in &h.peaks {
            assert!(
                peak.dense_flop_per_s.is_finite() && peak.dense_flop_per_s > 0.0,
                "{key} {}",
                peak.path
            );
            if let Some(sparse) = peak.sparse_flop_per_s {
                assert!(
                    sparse.is_finite() && sparse >= peak.dense_flop_per_s,
                    "{key} {}",
                    peak.path
                );
            }
        }
        // Sparse figures are only ever published beside a dense one (the build refuses any other).
        for name in d.sparse_tflops.keys() {
            assert!(d.peak_tflops.contains_key(name), "{key} sparse {name}");
        }
    }
}

#[test]
fn every_reference_ceiling_is_the_measured_figure_or_a_stated_derivation() {
    let file = sources();
    for d in &file.device {
        let key = &d.key;
        let h = find_hardware(key).unwrap();
        let r = h
            .reference
            .as_ref()
            .unwrap_or_else(|| panic!("{key} has no reference ceilings"));
        // A measured figure cites the device's measurement sources (listed per device, not per figure).
        let measured_with_sources = |basis: &str| {
            basis.starts_with("measured: ") && d.measured_sources.iter().all(|s| basis.contains(s.as_str()))
        };
        // DRAM: the published fraction, with its sources, or a derivation that says so.
        match d.measured.get("dram_frac") {
            Some(&f) => {
                assert_eq!(r.dram_fraction.value, f, "{key} DRAM");
                assert!(measured_with_sources(&r.dram_fraction.basis), "{key}");
            }
            None => assert!(r.dram_fraction.basis.starts_with("derived: "), "{key}"),
        }
        // One GEMM fraction per dense peak; a published `<path>_gemm_frac` is taken as is.
        assert_eq!(r.gemm_fractions.len(), d.peak_tflops.len(), "{key}");
        for g in &r.gemm_fractions {
            let published = d
                .measured
                .get(&format!("{}_gemm_frac", g.path.name().to_ascii_lowercase()));
            match published {
                Some(&f) => {
                    assert_eq!(g.fraction.value, f, "{key} {}", g.path);
                    assert!(measured_with_sources(&g.fraction.basis), "{key} {}", g.path);
                }
                None => {
                    assert!(g.fraction.basis.starts_with("derived: "), "{key} {}", g.path);
                    // A derived figure is one that some device publishes for a fallback path, or the median.
                    let anywhere = file.device.iter().any(|o| {
                        fallback_paths(g.path).iter().any(|p| {
                            o.measured
                                .get(&format!("{}_gemm_frac", p.name().to_ascii_lowercase()))
                                == Some(&g.fraction.value)
                        })
                    });
                    assert!(
                        anywhere || g.fraction.basis.contains("median"),
                        "{key} {}: {}",
                        g.path,
                        g.fraction.basis
                    );
                }
            }
            assert!(
                g.fraction.value > 0.0 && g.fraction.value <= 1.0,
                "{key} {}",
                g.path
            );
        }
        assert_eq!(r.matrix_kernel_floor.value, MATRIX_KERNEL_FLOOR_S);
        assert_eq!(r.vector_kernel_floor.value, VECTOR_KERNEL_FLOOR_S);
    }
}

/// Every kernel-family ceiling and every floor is a published measurement with its URL or a stated rule: a
/// device's `measured_gemm` figure is taken as is and cites its source; any other figure says `derived:` and
/// its rule; each floor says `source:` or `derived:`; every `measured_gemm` entry of the research file is used.
#[test]
fn every_family_ceiling_and_floor_is_measured_or_a_stated_rule() {
    let file = sources();
    let mut families = 0;
    for d in &file.device {
        let key = &d.key;
        let r = find_hardware(key).unwrap().reference.clone().unwrap();
        assert!(!r.families.is_empty(), "{key} has no family ceilings");
        for f in &r.families {
            let family = f.family;
            for (what, figure, published) in [
                (
                    "GEMM",
                    &f.gemm_fraction,
                    d.measured_gemm
                        .iter()
                        .find(|m| m.family == family && m.fraction.is_some()),
                ),
                (
                    "DRAM",
                    &f.dram_fraction,
                    d.measured_gemm
                        .iter()
                        .find(|m| m.family == family && m.dram_fraction.is_some()),
                ),
            ] {
                assert!(
                    figure.value > 0.0 && figure.value <= 1.0,
                    "{key} {family} {what}: {}",
                    figure.value
                );
                match published {
                    Some(m) if figure.basis.starts_with("measured: ") => {
                        assert_eq!(
                            Some(figure.value),
                            m.fraction.or(m.dram_fraction),
                            "{key} {family} {what}"
                        );
                        assert!(
                            figure.basis.contains(m.source.as_str()) && m.source.contains("https://"),
                            "{key} {family} {what}: {}",
                            figure.basis
                        );
                    }
                    _ => assert!(
                        figure.basis.starts_with("derived: ") && figure.basis.len() > 40,
                        "{key} {family} {what}: {}",
                        figure.basis
                    ),
                }
            }
            let floor = &f.kernel_floor;
            match d
                .measured_gemm
                .iter()
                .filter(|m| m.family == family)
                .find_map(|m| m.floor_us.map(|published| (m, published)))
            {
                // A floor fitted with the device's own small-M measurement: that figure and its source.
                Some((m, published)) if floor.basis.starts_with("measured: ") => {
                    assert!(
                        (floor.value * 1e6 - published).abs() < 1e-9,
                        "{key} {family} floor"
                    );
                    assert!(
                        floor.basis.contains(m.source.as_str()),
                        "{key} {family}: {}",
                        floor.basis
                    );
                }
                _ => assert!(
                    floor.value > 0.0
                        && (floor.basis.starts_with("source: ") || floor.basis.starts_with("derived: ")),
                    "{key} {family} floor: {}",
                    floor.basis
                ),
            }
            families += 1;
        }
        assert!(!r.quantize_floors.is_empty(), "{key}");
        for q in &r.quantize_floors {
            assert!(
                q.floor.value > 0.0
                    && (q.floor.basis.starts_with("source: ") || q.floor.basis.starts_with("derived: "))
                    && q.floor.basis.contains('#'),
                "{key} {}: {}",
                q.kernel.name(),
                q.floor.basis
            );
        }
        // Every published family figure of the device is what its reference ceiling uses, measured.
        for m in &d.measured_gemm {
            let used = r.families.iter().any(|f| {
                f.family == m.family
                    && [&f.gemm_fraction, &f.dram_fraction]
                        .iter()
                        .any(|s| s.basis.starts_with("measured: ") && s.basis.contains(m.source.as_str()))
            });
            assert!(
                used,
                "{key}: measured_gemm {} from {} is unused",
                m.family, m.source
            );
        }
    }
    assert!(families > 100, "{families} family ceilings");
}

/// Golden reference scenarios: the published measurements the reference ceilings come from must come back out
/// of the model, so a change to the rules or the data cannot drift silently. Each is an 8192³ GEMM predicted
/// in reference mode: FLOPs / (the measured TFLOP/s) plus the family's floor. BF16 comes from ml-engineering's
/// MAMF (best-shape) table; the low-precision families from the engine-representative LLM-shape
/// measurements of `measured_gemm` (the MAMF FP8 figures, 1402.6 TFLOP/s on the H100 SXM, 3432.5 on the
/// B200, are best-shape searches that LLM projection shapes do not reach: docs/validation/low-precision.md).
#[test]
fn reference_mode_reproduces_the_published_matmul_ceilings() {
    use roofline_core::hardware::{FP8_BLOCK_GEMM_FLOOR_S, MXFP8_GEMM_FLOOR_S};
    use roofline_core::{Mode, OperandPrecisions, Operator, Precision, find_hardware_in, predict};
    let block = OperandPrecisions {
        weight: Precision::Fp8Block128,
        activation: Precision::Fp8Group128,
        output: Precision::Fp16,
    };
    // (device, operands, measured TFLOP/s, floor).
    let golden = [
        (
            "a100_sxm_80gb",
            Precision::Bf16.into(),
            271.2,
            MATRIX_KERNEL_FLOOR_S,
        ),
        ("h100_sxm", Precision::Bf16.into(), 794.5, MATRIX_KERNEL_FLOOR_S),
        ("b200", Precision::Bf16.into(), 1745.0, MATRIX_KERNEL_FLOOR_S),
        ("gb200", Precision::Bf16.into(), 1822.0, MATRIX_KERNEL_FLOOR_S),
        ("mi300x", Precision::Bf16.into(), 668.4, MATRIX_KERNEL_FLOOR_S),
        ("gaudi3", Precision::Bf16.into(), 1243.0, MATRIX_KERNEL_FLOOR_S),
        // torch._scaled_mm median of four LLM shapes (pytorch#143465, cutlass#1662): 0.666 of 1978.9.
        (
            "h100_sxm",
            Precision::Fp8E4M3.into(),
            1318.4,
            MATRIX_KERNEL_FLOOR_S,
        ),
        // DeepGEMM dense DeepSeek-V3 shapes (0.57 of 1978.9).
        ("h100_sxm", block, 1128.0, FP8_BLOCK_GEMM_FLOOR_S),
        // vLLM CUTLASS cutlass_scaled_mm at 16384×6144×4096 (vllm#19566).
        ("b200", Precision::Fp8E4M3.into(), 2544.7, MATRIX_KERNEL_FLOOR_S),
        // FlashInfer mm_mxfp8 (vllm#46393) and NVFP4 (vllm#20646, flashinfer#1979).
        ("b200", Precision::Mxfp8E4M3.into(), 2579.5, MXFP8_GEMM_FLOOR_S),
        // Its floor is the B200's small-M fit (SGLang's FlashInfer CuTe-DSL linear, 7.89 − 1.9 µs).
        ("b200", Precision::Nvfp4.into(), 3778.8, 6.0e-6),
    ];
    let flops = 2.0 * 8192f64.powi(3);
    for (key, precisions, tflops, floor) in golden {
        let precision = precisions.activation;
        let spec = find_hardware_in(key, Mode::Reference).unwrap();
        let op = Operator::gemm(8192, 8192, 8192, precisions).unwrap();
        let p = predict(spec, &op).unwrap();
        let expected = flops / (tflops * 1e12) + floor;
        // The research file rounds fractions to 3 digits: within 0.5 % of the published throughput.
        assert!(
            (p.time_s / expected - 1.0).abs() < 5e-3,
            "{key} {precision}: {} vs {expected}",
            p.time_s
        );
    }
}

/// The scale-up interconnect of every device equals the research file: link, wiring, half the published
/// bidirectional bandwidth each way, the domain size and the sources; a device without a link there has none.
/// Reference specs scale the bandwidth by the measured ring bus-bandwidth fraction (or a stated derivation)
/// and take NCCL's latencies.
#[test]
fn every_interconnect_matches_its_sources() {
    use roofline_core::hardware::{
        COLLECTIVE_BASE_LATENCY_S, NVLINK_STEP_LATENCY_S, PCIE_STEP_LATENCY_S, Topology,
    };
    use roofline_core::{Mode, find_hardware_in};
    let file = sources();
    let mut linked = 0;
    for d in &file.device {
        let key = &d.key;
        let h = find_hardware(key).unwrap();
        let Some(link_name) = &d.interconnect_link else {
            assert!(
                h.interconnect.is_none(),
                "{key} has an interconnect the research file lacks"
            );
            continue;
        };
        linked += 1;
        let link = h
            .interconnect
            .as_ref()
            .unwrap_or_else(|| panic!("{key} lacks its interconnect"));
        let gbs = d
            .interconnect_gbs
            .unwrap_or_else(|| panic!("{key}: interconnect_link without interconnect_gbs"));
        assert_eq!(link.link, *link_name, "{key} link");
        // Published figures are bidirectional; the catalog stores one direction.
        assert_eq!(link.bandwidth_bytes_per_s, gbs / 2.0 * 1e9, "{key} bandwidth");
        assert!(!link.sources.is_empty(), "{key} interconnect without a source");
        assert_eq!(
            (link.collective_latency_s, link.step_latency_s),
            (0.0, 0.0),
            "{key} datasheet latency"
        );
        if link.topology == Topology::FullMesh {
            assert!(link.max_gpus > 1, "{key}");
        }

        let r = h.reference.as_ref().unwrap();
        let fraction = r
            .collective_fraction
            .as_ref()
            .unwrap_or_else(|| panic!("{key} collective fraction"));
        match d.interconnect_measured.get("allreduce_busbw_frac") {
            Some(&f) => {
                assert_eq!(fraction.value, f, "{key}");
                assert!(fraction.basis.starts_with("measured: "), "{key}");
                for source in &d.interconnect_measured_sources {
                    assert!(
                        fraction.basis.contains(source.as_str()),
                        "{key}: {}",
                        fraction.basis
                    );
                }
                // The fraction is the measured bus bandwidth over the per-direction line rate (3 digits).
                let busbw = d.interconnect_measured["allreduce_busbw_gbs"];
                assert!((busbw / (gbs / 2.0) - f).abs() < 5e-4, "{key}: {busbw} / {gbs}");
            }
            None => assert!(
                fraction.basis.starts_with("derived: "),
                "{key}: {}",
                fraction.basis
            ),
        }
        let reference = find_hardware_in(key, Mode::Reference).unwrap();
        let rl = reference.interconnect.as_ref().unwrap();
        assert!(
            (rl.bandwidth_bytes_per_s - link.bandwidth_bytes_per_s * fraction.value).abs() < 1.0,
            "{key}"
        );
        let step = if link_name.name().starts_with("PCIe") {
            PCIE_STEP_LATENCY_S
        } else {
            NVLINK_STEP_LATENCY_S
        };
        assert_eq!(
            (rl.collective_latency_s, rl.step_latency_s),
            (COLLECTIVE_BASE_LATENCY_S, step),
            "{key}"
        );
    }
    assert!(linked >= 14, "{linked} devices with an interconnect");
    // Datasheet figures quoted by NVIDIA and AMD, one direction: H100 SXM 900 GB/s -> 450, B200 1.8 TB/s -> 900,
    // A100 SXM 600 -> 300, H100 PCIe bridge 600 -> 300, L40S PCIe Gen4 x16 64 -> 32, MI300X 896 -> 448.
    for (key, per_direction, gpus) in [
        ("h100_sxm", 450e9, 8),
        ("h200_sxm", 450e9, 8),
        ("b200", 900e9, 8),
        ("gb200", 900e9, 72),
        ("a100_sxm_80gb", 300e9, 8),
        ("h100_pcie", 300e9, 2),
        ("l40s", 32e9, 8),
        ("mi300x", 448e9, 8),
        ("gb10", 300e9, 1),
    ] {
        let link = find_hardware(key).unwrap().interconnect.clone().unwrap();
        assert_eq!(
            (link.bandwidth_bytes_per_s, link.max_gpus),
            (per_direction, gpus),
            "{key}"
        );
    }
}

/// The device-reported memory: in GiB in the research file, bytes in the catalog, cited among the sources; a
/// figure derived from NVML's total says so and is listed as derived; the capacity engines size their pools
/// from is that figure (79.22 GiB on an H100 SXM, vllm-project/vllm PR #10511), else the datasheet's.
#[test]
fn device_reported_memory_is_sourced_and_is_the_capacity_engines_use() {
    for d in sources().device {
        let h = find_hardware(&d.key).unwrap();
        let capacity = roofline_core::device_capacity_bytes(h);
        match (d.memory_reported_gib, &d.memory_reported_source) {
            (Some(gib), Some(source)) => {
                assert_eq!(h.memory_reported_bytes, Some(gib * 1_073_741_824.0), "{}", d.key);
                assert_eq!(capacity, gib * 1_073_741_824.0, "{}", d.key);
                assert!(
                    h.sources.iter().any(|s| s.contains(source.as_str())),
                    "{}: the reported memory's source is cited",
                    d.key
                );
                let derived = d.derived.iter().any(|f| f == "memory_reported_gib");
                assert_eq!(source.starts_with("derived:"), derived, "{}", d.key);
                // Between 70 % (Apple's 75 % working-set rule) and 110 % (GiB against marketed GB) of the
                // datasheet figure: a typo guard.
                assert!(
                    (0.7..1.1).contains(&(capacity / h.memory_bytes)),
                    "{}: {capacity}",
                    d.key
                );
            }
            (None, None) => assert_eq!(capacity, h.memory_bytes, "{}", d.key),
            _ => panic!("{}: memory_reported_gib and its source go together", d.key),
        }
    }
    let h100 = find_hardware("h100_sxm").unwrap();
    assert_eq!(
        roofline_core::device_capacity_bytes(h100),
        79.22 * 1_073_741_824.0
    );
}
