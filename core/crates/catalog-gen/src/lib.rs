//! Generates the hardware catalog from the research file `data/hardware-sources.toml`.
//!
//! Every `[[device]]` entry becomes one `CatalogEntry` of `$OUT_DIR/catalog_entries.rs` (`include!`d by
//! `src/hardware/catalog.rs`), in the file's units and order: figures, sources, `derived` / `unverified` /
//! `missing` lists, measured fractions and their sources, the per-kernel-family measurements
//! (`measured_gemm`: family, figure, shape, library, quantization and source URL each), the scale-up
//! interconnect and the driver-name globs of device detection. A malformed entry fails the build with a message naming the device and the
//! field; adding a device is one TOML entry plus its sources.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

const SOURCE: &str = "data/hardware-sources.toml";

/// Compute paths: the TOML key and the `ComputePath` variant, in `ComputePath::ALL` order.
const PATHS: [(&str, &str); 10] = [
    ("fp64", "Fp64"),
    ("fp32", "Fp32"),
    ("tf32", "Tf32"),
    ("fp16", "Fp16"),
    ("bf16", "Bf16"),
    ("fp8", "Fp8"),
    ("fp6", "Fp6"),
    ("fp4", "Fp4"),
    ("int8", "Int8"),
    ("int4", "Int4"),
];

/// Architecture families: the TOML value and the `Architecture` variant.
const ARCHITECTURES: [(&str, &str); 12] = [
    ("ampere", "Ampere"),
    ("ada", "Ada"),
    ("hopper", "Hopper"),
    ("blackwell", "Blackwell"),
    ("blackwell_ultra", "BlackwellUltra"),
    ("blackwell_rtx", "BlackwellRtx"),
    ("cdna3", "Cdna3"),
    ("cdna4", "Cdna4"),
    ("tpu", "Tpu"),
    ("trainium", "Trainium"),
    ("gaudi", "Gaudi"),
    ("apple_gpu", "AppleGpu"),
];

/// GEMM kernel families: the TOML key (`GemmFamily::key`) and the `GemmFamily` variant (`plain` takes the
/// path's own `<path>_gemm_frac`, so it has no `measured_gemm` entry).
const FAMILIES: [(&str, &str); 7] = [
    ("fp8_tensor", "Fp8Tensor"),
    ("fp8_block", "Fp8Block"),
    ("mxfp8", "Mxfp8"),
    ("nvfp4", "Nvfp4"),
    ("mxfp4", "Mxfp4"),
    ("int8", "Int8"),
    ("weight_only", "WeightOnly"),
];

/// Scale-up links: the TOML spelling (`Link::name`) and the `Link` variant.
const LINKS: [(&str, &str); 7] = [
    ("NVLink 3", "NvLink3"),
    ("NVLink 4", "NvLink4"),
    ("NVLink 5", "NvLink5"),
    ("NVLink-C2C", "NvLinkC2c"),
    ("Infinity Fabric", "InfinityFabric"),
    ("PCIe Gen4", "PcieGen4"),
    ("PCIe Gen5", "PcieGen5"),
];

/// Topologies: the TOML spelling (`Topology::name`) and the `Topology` variant.
const TOPOLOGIES: [(&str, &str); 2] = [("switch", "Switched"), ("mesh", "FullMesh")];

#[derive(Deserialize)]
struct SourceFile {
    device: Vec<toml::Table>,
}

/// One `[[device]]` entry; every field the file may hold is named, so a misspelt one is an error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Device {
    key: String,
    name: String,
    vendor: String,
    arch: String,
    architecture: String,
    #[serde(default)]
    driver_names: Vec<String>,
    #[serde(default)]
    driver_names_exclude: Vec<String>,
    memory_gb: f64,
    memory_reported_gib: Option<f64>,
    memory_reported_source: Option<String>,
    dram_bw_gbs: f64,
    l2_mb: Option<f64>,
    sm_count: Option<u32>,
    boost_mhz: Option<f64>,
    tdp_w: Option<f64>,
    peak_tflops: BTreeMap<String, f64>,
    #[serde(default)]
    sparse_tflops: BTreeMap<String, f64>,
    #[serde(default)]
    derived: Vec<String>,
    #[serde(default)]
    unverified: Vec<String>,
    #[serde(default)]
    missing: Vec<String>,
    notes: String,
    sources: Vec<String>,
    #[serde(default)]
    measured: BTreeMap<String, f64>,
    #[serde(default)]
    measured_sources: Vec<String>,
    #[serde(default)]
    measured_gemm: Vec<FamilyMeasurement>,
    interconnect_gbs: Option<f64>,
    interconnect_link: Option<String>,
    interconnect_topology: Option<String>,
    scale_up_gpus: Option<u32>,
    #[serde(default)]
    interconnect_sources: Vec<String>,
    #[serde(default)]
    interconnect_measured: BTreeMap<String, f64>,
    #[serde(default)]
    interconnect_measured_sources: Vec<String>,
    // Research-file context the catalog does not carry (see the file's header and docs/research/hardware.md).
    #[serde(default, rename = "interconnect")]
    _interconnect_text: Option<String>,
    #[serde(default, rename = "measured_notes")]
    _measured_notes: Option<String>,
    #[serde(default, rename = "llc_mb")]
    _llc_mb: Option<f64>,
    #[serde(default, rename = "onchip_sram_mb")]
    _onchip_sram_mb: Option<f64>,
    #[serde(default, rename = "fp16_accum_tflops")]
    _fp16_accum_tflops: Option<toml::Table>,
}

/// One published measurement of a GEMM kernel family on the device: the GEMM fraction of the path's dense
/// peak at large shapes, or the effective DRAM fraction of the datasheet bandwidth at small M, with what was
/// measured and where it was published.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyMeasurement {
    family: String,
    /// Measured TFLOP/s over the dense peak (large shapes).
    fraction: Option<f64>,
    /// Bytes / (time − the family's floor) over the datasheet DRAM bandwidth (small M).
    dram_fraction: Option<f64>,
    /// The measured throughput the fraction comes from, TFLOP/s or TB/s, as published.
    #[serde(default)]
    tflops: Option<f64>,
    /// M×N×K (M = tokens), or what the source states.
    shape: String,
    /// The library or kernel that ran.
    library: String,
    /// `noquant` (GEMM alone, activations already quantized) or `+quant` (activation quantization included).
    quant: String,
    /// URL(s) of the publication.
    source: String,
}

/// A build error naming the device and the field.
fn fail(device: &str, field: &str, why: impl std::fmt::Display) -> String {
    format!("{SOURCE}: device `{device}`: {field}: {why}")
}

fn variant<'a>(table: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn names(table: &[(&str, &str)]) -> String {
    table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

fn positive(key: &str, field: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(fail(key, field, format!("must be finite and positive, got {v}")))
    }
}

fn fraction(key: &str, field: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(fail(key, field, format!("must be a fraction in (0, 1], got {v}")))
    }
}

fn nonempty(key: &str, field: &str, list: &[String]) -> Result<(), String> {
    match list.iter().position(|s| s.trim().is_empty()) {
        _ if list.is_empty() => Err(fail(key, field, "must list at least one entry")),
        Some(i) => Err(fail(key, &format!("{field}[{i}]"), "must not be empty")),
        None => Ok(()),
    }
}

/// `&["a", "b"]` as Rust source.
fn strs(list: &[String]) -> String {
    let items: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    format!("&[{}]", items.join(", "))
}

fn float(v: f64) -> String {
    format!("{v:?}")
}

fn option<T>(v: Option<T>, show: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "None".to_owned(), |v| format!("Some({})", show(v)))
}

/// `(path, value)` pairs of `table` in `ComputePath::ALL` order.
fn path_table(
    key: &str,
    field: &str,
    table: &BTreeMap<String, f64>,
    check: fn(&str, &str, f64) -> Result<f64, String>,
) -> Result<String, String> {
    for name in table.keys() {
        if variant(&PATHS, name).is_none() {
            return Err(fail(
                key,
                &format!("{field}.{name}"),
                format!("unknown compute path (valid: {})", names(&PATHS)),
            ));
        }
    }
    let mut items = Vec::new();
    for (name, path) in PATHS {
        if let Some(&v) = table.get(name) {
            items.push(format!(
                "(ComputePath::{path}, {})",
                float(check(key, &format!("{field}.{name}"), v)?)
            ));
        }
    }
    Ok(format!("&[{}]", items.join(", ")))
}

fn glob_list(key: &str, field: &str, globs: &[String]) -> Result<String, String> {
    for (i, g) in globs.iter().enumerate() {
        if g.trim().is_empty() || *g != g.to_ascii_lowercase() {
            return Err(fail(
                key,
                &format!("{field}[{i}]"),
                format!("{g:?} must be a non-empty lowercase glob"),
            ));
        }
    }
    Ok(strs(globs))
}

fn interconnect(d: &Device) -> Result<String, String> {
    let key = d.key.as_str();
    let Some(link_name) = &d.interconnect_link else {
        for (field, set) in [
            ("interconnect_topology", d.interconnect_topology.is_some()),
            ("scale_up_gpus", d.scale_up_gpus.is_some()),
            ("interconnect_sources", !d.interconnect_sources.is_empty()),
            ("interconnect_measured", !d.interconnect_measured.is_empty()),
        ] {
            if set {
                return Err(fail(key, field, "given without interconnect_link"));
            }
        }
        return Ok("None".to_owned());
    };
    let link = variant(&LINKS, link_name).ok_or_else(|| {
        fail(
            key,
            "interconnect_link",
            format!("unknown link {link_name:?} (valid: {})", names(&LINKS)),
        )
    })?;
    let topology_name = d.interconnect_topology.as_deref().ok_or_else(|| {
        fail(
            key,
            "interconnect_topology",
            "missing (interconnect_link is given)",
        )
    })?;
    let topology = variant(&TOPOLOGIES, topology_name).ok_or_else(|| {
        fail(
            key,
            "interconnect_topology",
            format!(
                "unknown topology {topology_name:?} (valid: {})",
                names(&TOPOLOGIES)
            ),
        )
    })?;
    let gbs = d
        .interconnect_gbs
        .ok_or_else(|| fail(key, "interconnect_gbs", "missing (interconnect_link is given)"))?;
    let gpus = d
        .scale_up_gpus
        .ok_or_else(|| fail(key, "scale_up_gpus", "missing (interconnect_link is given)"))?;
    if gpus == 0 {
        return Err(fail(key, "scale_up_gpus", "must be at least 1"));
    }
    nonempty(key, "interconnect_sources", &d.interconnect_sources)?;
    for name in d.interconnect_measured.keys() {
        if !matches!(name.as_str(), "allreduce_busbw_frac" | "allreduce_busbw_gbs") {
            return Err(fail(
                key,
                &format!("interconnect_measured.{name}"),
                "unknown figure (valid: allreduce_busbw_frac, allreduce_busbw_gbs)",
            ));
        }
    }
    let busbw = d
        .interconnect_measured
        .get("allreduce_busbw_frac")
        .map(|&f| fraction(key, "interconnect_measured.allreduce_busbw_frac", f))
        .transpose()?;
    if busbw.is_some() {
        nonempty(
            key,
            "interconnect_measured_sources",
            &d.interconnect_measured_sources,
        )?;
    }
    Ok(format!(
        "Some(InterconnectEntry {{ link: Link::{link}, topology: Topology::{topology}, bidirectional_gbs: {}, \
         max_gpus: {gpus}, sources: {}, measured_busbw_fraction: {}, measured_sources: {} }})",
        float(positive(key, "interconnect_gbs", gbs)?),
        strs(&d.interconnect_sources),
        option(busbw, float),
        strs(&d.interconnect_measured_sources),
    ))
}

/// The measured GEMM fractions (`<path>_gemm_frac`) and the DRAM fraction (`dram_frac`).
fn measured(d: &Device) -> Result<(String, String), String> {
    let key = d.key.as_str();
    let mut gemm = BTreeMap::new();
    for (name, &v) in &d.measured {
        let field = format!("measured.{name}");
        let path = name
            .strip_suffix("_gemm_frac")
            .or_else(|| name.strip_suffix("_gemm_tflops"));
        match path {
            Some(p) if variant(&PATHS, p).is_none() => {
                return Err(fail(key, &field, format!("unknown compute path {p:?}")));
            }
            Some(p) if name.ends_with("_frac") => {
                gemm.insert(p.to_owned(), v);
            }
            Some(_) => {
                positive(key, &field, v)?;
            }
            None if matches!(name.as_str(), "dram_frac") => {}
            None if matches!(name.as_str(), "dram_gbs" | "l2_bw_gbs") => {
                positive(key, &field, v)?;
            }
            None => {
                return Err(fail(
                    key,
                    &field,
                    "unknown figure (valid: <path>_gemm_frac, <path>_gemm_tflops, dram_frac, dram_gbs, l2_bw_gbs)",
                ));
            }
        }
    }
    if !d.measured.is_empty() {
        nonempty(key, "measured_sources", &d.measured_sources)?;
    }
    let gemm = path_table(key, "measured", &gemm, fraction)?;
    let dram = d
        .measured
        .get("dram_frac")
        .map(|&f| fraction(key, "measured.dram_frac", f))
        .transpose()?;
    Ok((gemm, option(dram, float)))
}

/// `Some((GiB, "source"))` as Rust source: the memory the driver reports, with its source, both or neither.
fn memory_reported(d: &Device) -> Result<String, String> {
    let key = d.key.as_str();
    match (d.memory_reported_gib, &d.memory_reported_source) {
        (None, None) => Ok("None".to_owned()),
        (Some(gib), Some(source)) if !source.trim().is_empty() => Ok(format!(
            "Some(({}, {source:?}))",
            float(positive(key, "memory_reported_gib", gib)?)
        )),
        (Some(_), _) => Err(fail(
            key,
            "memory_reported_source",
            "must name the source of memory_reported_gib",
        )),
        (None, Some(_)) => Err(fail(
            key,
            "memory_reported_gib",
            "missing beside memory_reported_source",
        )),
    }
}

/// The `measured_gemm` entries as `FamilyMeasurement` source.
fn family_measurements(d: &Device) -> Result<String, String> {
    let key = d.key.as_str();
    let mut items = Vec::new();
    for (i, m) in d.measured_gemm.iter().enumerate() {
        let field = |name: &str| format!("measured_gemm[{i}].{name}");
        let family = variant(&FAMILIES, &m.family).ok_or_else(|| {
            fail(
                key,
                &field("family"),
                format!("unknown family {:?} (valid: {})", m.family, names(&FAMILIES)),
            )
        })?;
        let gemm = m
            .fraction
            .map(|f| fraction(key, &field("fraction"), f))
            .transpose()?;
        let dram = m
            .dram_fraction
            .map(|f| fraction(key, &field("dram_fraction"), f))
            .transpose()?;
        if gemm.is_some() == dram.is_some() {
            return Err(fail(
                key,
                &field("fraction"),
                "give exactly one of fraction (large-shape GEMM) and dram_fraction (small-M bandwidth)",
            ));
        }
        if let Some(t) = m.tflops {
            positive(key, &field("tflops"), t)?;
        }
        for (name, text) in [("shape", &m.shape), ("library", &m.library)] {
            if text.trim().is_empty() {
                return Err(fail(key, &field(name), "must not be empty"));
            }
        }
        if !matches!(m.quant.as_str(), "noquant" | "+quant") {
            return Err(fail(key, &field("quant"), "must be noquant or +quant"));
        }
        if !m.source.contains("https://") {
            return Err(fail(key, &field("source"), "must give the publication's URL"));
        }
        items.push(format!(
            "FamilyMeasurement {{ family: GemmFamily::{family}, gemm_fraction: {}, dram_fraction: {}, what: {:?}, \
             source: {:?} }}",
            option(gemm, float),
            option(dram, float),
            format!("{}, {}, {}", m.shape, m.library, m.quant),
            m.source,
        ));
    }
    Ok(format!("&[{}]", items.join(", ")))
}

fn entry(d: &Device) -> Result<String, String> {
    let key = d.key.as_str();
    let architecture = variant(&ARCHITECTURES, &d.architecture).ok_or_else(|| {
        fail(
            key,
            "architecture",
            format!(
                "unknown family {:?} (valid: {})",
                d.architecture,
                names(&ARCHITECTURES)
            ),
        )
    })?;
    for (field, text) in [("name", &d.name), ("vendor", &d.vendor), ("arch", &d.arch)] {
        if text.trim().is_empty() {
            return Err(fail(key, field, "must not be empty"));
        }
    }
    nonempty(key, "sources", &d.sources)?;
    if d.peak_tflops.is_empty() {
        return Err(fail(key, "peak_tflops", "must give at least one dense peak"));
    }
    for (name, &sparse) in &d.sparse_tflops {
        let field = format!("sparse_tflops.{name}");
        match d.peak_tflops.get(name) {
            None => {
                return Err(fail(
                    key,
                    &field,
                    format!("has no dense peak beside it (peak_tflops.{name})"),
                ));
            }
            Some(&dense) if sparse < dense => {
                return Err(fail(
                    key,
                    &field,
                    format!("{sparse} is below the dense peak {dense}"),
                ));
            }
            Some(_) => {}
        }
    }
    let (measured_gemm, measured_dram) = measured(d)?;
    let memory_reported = memory_reported(d)?;
    let optional = |field: &str, v: Option<f64>| v.map(|v| positive(key, field, v)).transpose();
    if d.sm_count == Some(0) {
        return Err(fail(key, "sm_count", "must be positive"));
    }
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "    CatalogEntry {{").ok();
    writeln!(w, "        key: {:?},", d.key).ok();
    writeln!(w, "        name: {:?},", d.name).ok();
    writeln!(w, "        vendor: {:?},", d.vendor).ok();
    writeln!(w, "        arch: Architecture::{architecture},").ok();
    writeln!(w, "        arch_label: {:?},", d.arch).ok();
    writeln!(
        w,
        "        driver_names: {},",
        glob_list(key, "driver_names", &d.driver_names)?
    )
    .ok();
    writeln!(
        w,
        "        driver_names_exclude: {},",
        glob_list(key, "driver_names_exclude", &d.driver_names_exclude)?
    )
    .ok();
    writeln!(
        w,
        "        memory_gb: {},",
        float(positive(key, "memory_gb", d.memory_gb)?)
    )
    .ok();
    writeln!(w, "        memory_reported: {memory_reported},").ok();
    writeln!(
        w,
        "        dram_bw_gbs: {},",
        float(positive(key, "dram_bw_gbs", d.dram_bw_gbs)?)
    )
    .ok();
    writeln!(
        w,
        "        l2_mb: {},",
        option(optional("l2_mb", d.l2_mb)?, float)
    )
    .ok();
    writeln!(w, "        sm_count: {},", option(d.sm_count, |v| v.to_string())).ok();
    writeln!(
        w,
        "        boost_mhz: {},",
        option(optional("boost_mhz", d.boost_mhz)?, float)
    )
    .ok();
    writeln!(
        w,
        "        tdp_w: {},",
        option(optional("tdp_w", d.tdp_w)?, float)
    )
    .ok();
    writeln!(
        w,
        "        dense_tflops: {},",
        path_table(key, "peak_tflops", &d.peak_tflops, positive)?
    )
    .ok();
    writeln!(
        w,
        "        sparse_tflops: {},",
        path_table(key, "sparse_tflops", &d.sparse_tflops, positive)?
    )
    .ok();
    writeln!(w, "        derived: {},", strs(&d.derived)).ok();
    writeln!(w, "        unverified: {},", strs(&d.unverified)).ok();
    writeln!(w, "        missing: {},", strs(&d.missing)).ok();
    writeln!(w, "        notes: {:?},", d.notes).ok();
    writeln!(w, "        sources: {},", strs(&d.sources)).ok();
    writeln!(w, "        measured_gemm_fraction: {measured_gemm},").ok();
    writeln!(w, "        measured_dram_fraction: {measured_dram},").ok();
    writeln!(w, "        measured_sources: {},", strs(&d.measured_sources)).ok();
    writeln!(w, "        measured_families: {},", family_measurements(d)?).ok();
    writeln!(w, "        interconnect: {},", interconnect(d)?).ok();
    writeln!(w, "    }},").ok();
    Ok(out)
}

fn generate(text: &str) -> Result<String, String> {
    let file: SourceFile = toml::from_str(text).map_err(|e| format!("{SOURCE}: {e}"))?;
    if file.device.is_empty() {
        return Err(format!("{SOURCE}: no [[device]] entry"));
    }
    let mut keys = BTreeSet::new();
    let mut out = String::from(
        "// Generated by core/build.rs from core/data/hardware-sources.toml; edit the TOML, not this file.\n\
         /// Every catalogued accelerator, in the order of the research file.\n\
         pub(super) const ENTRIES: &[CatalogEntry] = &[\n",
    );
    for (i, table) in file.device.into_iter().enumerate() {
        let key = match table.get("key") {
            Some(toml::Value::String(k)) if !k.trim().is_empty() => k.clone(),
            _ => {
                return Err(format!(
                    "{SOURCE}: device #{}: key: missing or not a non-empty string",
                    i + 1
                ));
            }
        };
        let device: Device = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| {
                format!(
                    "{SOURCE}: device `{key}`: {}",
                    e.to_string().trim().replace('\n', " ")
                )
            })?;
        if !keys.insert(key.clone()) {
            return Err(fail(&key, "key", "appears twice"));
        }
        out.push_str(&entry(&device)?);
    }
    out.push_str("];\n");
    Ok(out)
}

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(SOURCE).unwrap_or_else(|e| panic!("{SOURCE}: {e}"));
    let code = generate(&text).unwrap_or_else(|e| panic!("{e}"));
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let path = Path::new(&out_dir).join("catalog_entries.rs");
    std::fs::write(&path, code).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
