//! One `CatalogEntry` of the generated catalog as Rust source, after checking every figure of the entry
//! (positive, fractions in (0, 1], sources given, fields that go together present together).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use roofline_base::precision::{Architecture, ComputePath, GemmFamily};

use crate::SourceError;
use crate::record::{Device, FamilyMeasurement};

/// A [`SourceError::Field`] naming the device and the field.
pub(crate) fn fail(device: &str, field: &str, message: impl std::fmt::Display) -> SourceError {
    SourceError::Field {
        device: device.to_owned(),
        field: field.to_owned(),
        message: message.to_string(),
    }
}

/// The figures of one device: every check names `key`.
struct Checks<'a> {
    key: &'a str,
}

impl Checks<'_> {
    fn positive(&self, field: &str, v: f64) -> Result<f64, SourceError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(fail(
                self.key,
                field,
                format!("must be finite and positive, got {v}"),
            ))
        }
    }

    fn fraction(&self, field: &str, v: f64) -> Result<f64, SourceError> {
        if v.is_finite() && v > 0.0 && v <= 1.0 {
            Ok(v)
        } else {
            Err(fail(
                self.key,
                field,
                format!("must be a fraction in (0, 1], got {v}"),
            ))
        }
    }

    fn nonempty(&self, field: &str, list: &[String]) -> Result<(), SourceError> {
        match list.iter().position(|s| s.trim().is_empty()) {
            _ if list.is_empty() => Err(fail(self.key, field, "must list at least one entry")),
            Some(i) => Err(fail(self.key, &format!("{field}[{i}]"), "must not be empty")),
            None => Ok(()),
        }
    }

    fn text(&self, field: &str, text: &str) -> Result<(), SourceError> {
        if text.trim().is_empty() {
            Err(fail(self.key, field, "must not be empty"))
        } else {
            Ok(())
        }
    }

    /// `Some(v)` checked positive, as source.
    fn optional(&self, field: &str, v: Option<f64>) -> Result<String, SourceError> {
        Ok(option(v.map(|v| self.positive(field, v)).transpose()?, float))
    }

    fn globs(&self, field: &str, globs: &[String]) -> Result<String, SourceError> {
        for (i, g) in globs.iter().enumerate() {
            if g.trim().is_empty() || *g != g.to_ascii_lowercase() {
                let message = format!("{g:?} must be a non-empty lowercase glob");
                return Err(fail(self.key, &format!("{field}[{i}]"), message));
            }
        }
        Ok(strs(globs))
    }

    /// `(path, value)` pairs of `table` (in `ComputePath::ALL` order, the map's), each value checked.
    fn path_table(
        &self,
        field: &str,
        table: &BTreeMap<ComputePath, f64>,
        check: fn(&Self, &str, f64) -> Result<f64, SourceError>,
    ) -> Result<String, SourceError> {
        let mut items = Vec::new();
        for (&path, &v) in table {
            let v = check(self, &format!("{field}.{}", path_key(path)), v)?;
            items.push(format!("(ComputePath::{path:?}, {})", float(v)));
        }
        Ok(format!("&[{}]", items.join(", ")))
    }
}

/// A compute path as the research file writes it: `fp8`.
fn path_key(path: ComputePath) -> String {
    path.name().to_ascii_lowercase()
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

/// The scale-up interconnect, `None` or `Some(InterconnectEntry { … })`.
fn interconnect(c: &Checks<'_>, d: &Device) -> Result<String, SourceError> {
    let Some(link) = d.interconnect_link else {
        for (field, set) in [
            ("interconnect_topology", d.interconnect_topology.is_some()),
            ("scale_up_gpus", d.scale_up_gpus.is_some()),
            ("interconnect_sources", !d.interconnect_sources.is_empty()),
            ("interconnect_measured", !d.interconnect_measured.is_empty()),
        ] {
            if set {
                return Err(fail(c.key, field, "given without interconnect_link"));
            }
        }
        return Ok("None".to_owned());
    };
    let missing = |field: &str| fail(c.key, field, "missing (interconnect_link is given)");
    let topology = d
        .interconnect_topology
        .ok_or_else(|| missing("interconnect_topology"))?;
    let gbs = d.interconnect_gbs.ok_or_else(|| missing("interconnect_gbs"))?;
    let gpus = d.scale_up_gpus.ok_or_else(|| missing("scale_up_gpus"))?;
    if gpus == 0 {
        return Err(fail(c.key, "scale_up_gpus", "must be at least 1"));
    }
    c.nonempty("interconnect_sources", &d.interconnect_sources)?;
    if let Some(name) = d
        .interconnect_measured
        .keys()
        .find(|name| !matches!(name.as_str(), "allreduce_busbw_frac" | "allreduce_busbw_gbs"))
    {
        let message = "unknown figure (valid: allreduce_busbw_frac, allreduce_busbw_gbs)";
        return Err(fail(c.key, &format!("interconnect_measured.{name}"), message));
    }
    let busbw = d
        .interconnect_measured
        .get("allreduce_busbw_frac")
        .map(|&f| c.fraction("interconnect_measured.allreduce_busbw_frac", f))
        .transpose()?;
    if busbw.is_some() {
        c.nonempty("interconnect_measured_sources", &d.interconnect_measured_sources)?;
    }
    Ok(format!(
        "Some(InterconnectEntry {{ link: Link::{link:?}, topology: Topology::{topology:?}, bidirectional_gbs: {}, \
         max_gpus: {gpus}, sources: {}, measured_busbw_fraction: {}, measured_sources: {} }})",
        float(c.positive("interconnect_gbs", gbs)?),
        strs(&d.interconnect_sources),
        option(busbw, float),
        strs(&d.interconnect_measured_sources),
    ))
}

/// The measured GEMM fractions (`<path>_gemm_frac`) and the DRAM fraction (`dram_frac`), as source.
fn measured(c: &Checks<'_>, d: &Device) -> Result<(String, String), SourceError> {
    let mut gemm = BTreeMap::new();
    for (name, &v) in &d.measured {
        let field = format!("measured.{name}");
        let path = name
            .strip_suffix("_gemm_frac")
            .or_else(|| name.strip_suffix("_gemm_tflops"));
        match path.map(|p| (p, ComputePath::ALL.into_iter().find(|&c| path_key(c) == p))) {
            Some((p, None)) => return Err(fail(c.key, &field, format!("unknown compute path {p:?}"))),
            Some((_, Some(path))) if name.ends_with("_frac") => {
                gemm.insert(path, v);
            }
            Some(_) => {
                c.positive(&field, v)?;
            }
            None if name == "dram_frac" => {}
            None if matches!(name.as_str(), "dram_gbs" | "l2_bw_gbs") => {
                c.positive(&field, v)?;
            }
            None => {
                let message = "unknown figure (valid: <path>_gemm_frac, <path>_gemm_tflops, dram_frac, dram_gbs, \
                               l2_bw_gbs)";
                return Err(fail(c.key, &field, message));
            }
        }
    }
    if !d.measured.is_empty() {
        c.nonempty("measured_sources", &d.measured_sources)?;
    }
    let gemm = c.path_table("measured", &gemm, Checks::fraction)?;
    let dram = d
        .measured
        .get("dram_frac")
        .map(|&f| c.fraction("measured.dram_frac", f))
        .transpose()?;
    Ok((gemm, option(dram, float)))
}

/// `Some((GiB, "source"))` as source: the memory the driver reports, with its source, both or neither.
fn memory_reported(c: &Checks<'_>, d: &Device) -> Result<String, SourceError> {
    match (d.memory_reported_gib, &d.memory_reported_source) {
        (None, None) => Ok("None".to_owned()),
        (Some(gib), Some(source)) if !source.trim().is_empty() => Ok(format!(
            "Some(({}, {source:?}))",
            float(c.positive("memory_reported_gib", gib)?)
        )),
        (Some(_), _) => Err(fail(
            c.key,
            "memory_reported_source",
            "must name the source of memory_reported_gib",
        )),
        (None, Some(_)) => Err(fail(
            c.key,
            "memory_reported_gib",
            "missing beside memory_reported_source",
        )),
    }
}

/// One `measured_gemm` entry as `FamilyMeasurement` source.
fn family_measurement(c: &Checks<'_>, i: usize, m: &FamilyMeasurement) -> Result<String, SourceError> {
    let field = |name: &str| format!("measured_gemm[{i}].{name}");
    if m.family == GemmFamily::Plain {
        let message = "plain GEMMs take the path's own <path>_gemm_frac, not a measured_gemm entry";
        return Err(fail(c.key, &field("family"), message));
    }
    let gemm = m
        .fraction
        .map(|f| c.fraction(&field("fraction"), f))
        .transpose()?;
    let dram = m
        .dram_fraction
        .map(|f| c.fraction(&field("dram_fraction"), f))
        .transpose()?;
    if gemm.is_some() == dram.is_some() {
        let message = "give exactly one of fraction (large-shape GEMM) and dram_fraction (small-M bandwidth)";
        return Err(fail(c.key, &field("fraction"), message));
    }
    if let Some(t) = m.tflops {
        c.positive(&field("tflops"), t)?;
    }
    let floor = m
        .floor_us
        .map(|f| c.positive(&field("floor_us"), f))
        .transpose()?;
    if floor.is_some() && dram.is_none() {
        let message = "a floor comes from a small-M fit: give it beside a dram_fraction";
        return Err(fail(c.key, &field("floor_us"), message));
    }
    c.text(&field("shape"), &m.shape)?;
    c.text(&field("library"), &m.library)?;
    if !matches!(m.quant.as_str(), "noquant" | "+quant") {
        return Err(fail(c.key, &field("quant"), "must be noquant or +quant"));
    }
    if !m.source.contains("https://") {
        return Err(fail(c.key, &field("source"), "must give the publication's URL"));
    }
    Ok(format!(
        "FamilyMeasurement {{ family: GemmFamily::{:?}, gemm_fraction: {}, dram_fraction: {}, floor_s: {}, \
         what: {:?}, source: {:?} }}",
        m.family,
        option(gemm, float),
        option(dram, float),
        option(floor, |us| format!("{us:?}e-6")),
        format!("{}, {}, {}", m.shape, m.library, m.quant),
        m.source,
    ))
}

/// The checks of the entry's own figures: names, sources, dense and sparse peaks.
fn check_figures(c: &Checks<'_>, d: &Device) -> Result<(), SourceError> {
    if d.architecture == Architecture::Custom {
        return Err(fail(
            c.key,
            "architecture",
            "custom is not a catalog architecture",
        ));
    }
    c.text("name", &d.name)?;
    c.text("vendor", &d.vendor)?;
    c.text("arch", &d.arch)?;
    c.nonempty("sources", &d.sources)?;
    if d.peak_tflops.is_empty() {
        return Err(fail(c.key, "peak_tflops", "must give at least one dense peak"));
    }
    for (&path, &sparse) in &d.sparse_tflops {
        let field = format!("sparse_tflops.{}", path_key(path));
        match d.peak_tflops.get(&path) {
            None => {
                let message = format!("has no dense peak beside it (peak_tflops.{})", path_key(path));
                return Err(fail(c.key, &field, message));
            }
            Some(&dense) if sparse < dense => {
                return Err(fail(
                    c.key,
                    &field,
                    format!("{sparse} is below the dense peak {dense}"),
                ));
            }
            Some(_) => {}
        }
    }
    if d.sm_count == Some(0) {
        return Err(fail(c.key, "sm_count", "must be positive"));
    }
    Ok(())
}

/// One checked `CatalogEntry { … },` as source, one field per line.
pub(crate) fn entry(d: &Device) -> Result<String, SourceError> {
    let c = Checks { key: &d.key };
    check_figures(&c, d)?;
    let (measured_gemm, measured_dram) = measured(&c, d)?;
    let families = d
        .measured_gemm
        .iter()
        .enumerate()
        .map(|(i, m)| family_measurement(&c, i, m))
        .collect::<Result<Vec<_>, _>>()?;
    let fields = [
        ("key", format!("{:?}", d.key)),
        ("name", format!("{:?}", d.name)),
        ("vendor", format!("{:?}", d.vendor)),
        ("arch", format!("Architecture::{:?}", d.architecture)),
        ("arch_label", format!("{:?}", d.arch)),
        ("driver_names", c.globs("driver_names", &d.driver_names)?),
        (
            "driver_names_exclude",
            c.globs("driver_names_exclude", &d.driver_names_exclude)?,
        ),
        ("memory_gb", float(c.positive("memory_gb", d.memory_gb)?)),
        ("memory_reported", memory_reported(&c, d)?),
        ("dram_bw_gbs", float(c.positive("dram_bw_gbs", d.dram_bw_gbs)?)),
        ("l2_mb", c.optional("l2_mb", d.l2_mb)?),
        ("sm_count", option(d.sm_count, |v| v.to_string())),
        ("boost_mhz", c.optional("boost_mhz", d.boost_mhz)?),
        ("tdp_w", c.optional("tdp_w", d.tdp_w)?),
        (
            "dense_tflops",
            c.path_table("peak_tflops", &d.peak_tflops, Checks::positive)?,
        ),
        (
            "sparse_tflops",
            c.path_table("sparse_tflops", &d.sparse_tflops, Checks::positive)?,
        ),
        ("derived", strs(&d.derived)),
        ("unverified", strs(&d.unverified)),
        ("missing", strs(&d.missing)),
        ("notes", format!("{:?}", d.notes)),
        ("sources", strs(&d.sources)),
        ("measured_gemm_fraction", measured_gemm),
        ("measured_dram_fraction", measured_dram),
        ("measured_sources", strs(&d.measured_sources)),
        ("measured_families", format!("&[{}]", families.join(", "))),
        ("interconnect", interconnect(&c, d)?),
    ];
    let mut out = String::from("    CatalogEntry {\n");
    for (name, value) in fields {
        writeln!(out, "        {name}: {value},").ok();
    }
    out.push_str("    },\n");
    Ok(out)
}
