//! A `[[device]]` entry of `core/data/hardware-sources.toml`, declared once: the generator and the catalog's
//! tests read the file through [`devices`]. Enums are core's own (serde spellings, or `Link::name` and
//! `Topology::name`), so an unknown name is an error listing the valid ones.

use std::collections::BTreeMap;

use roofline_base::hardware::{Link, Topology};
use roofline_base::precision::{Architecture, ComputePath, GemmFamily};
use serde::{Deserialize, Deserializer, de::Error as _};

use crate::SourceError;

/// One `[[device]]` entry, in the file's units; every field the file may hold is named, so a misspelt one
/// is an error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // The file's header documents each field.
pub struct Device {
    pub key: String,
    pub name: String,
    pub vendor: String,
    pub arch: String,
    pub architecture: Architecture,
    #[serde(default)]
    pub driver_names: Vec<String>,
    #[serde(default)]
    pub driver_names_exclude: Vec<String>,
    pub memory_gb: f64,
    pub memory_reported_gib: Option<f64>,
    pub memory_reported_source: Option<String>,
    pub dram_bw_gbs: f64,
    pub l2_mb: Option<f64>,
    pub sm_count: Option<u32>,
    pub boost_mhz: Option<f64>,
    pub tdp_w: Option<f64>,
    pub peak_tflops: BTreeMap<ComputePath, f64>,
    #[serde(default)]
    pub sparse_tflops: BTreeMap<ComputePath, f64>,
    #[serde(default)]
    pub derived: Vec<String>,
    #[serde(default)]
    pub unverified: Vec<String>,
    #[serde(default)]
    pub missing: Vec<String>,
    pub notes: String,
    pub sources: Vec<String>,
    /// `<path>_gemm_frac`, `<path>_gemm_tflops`, `dram_frac`, `dram_gbs`, `l2_bw_gbs`.
    #[serde(default)]
    pub measured: BTreeMap<String, f64>,
    #[serde(default)]
    pub measured_sources: Vec<String>,
    #[serde(default)]
    pub measured_gemm: Vec<FamilyMeasurement>,
    pub interconnect_gbs: Option<f64>,
    #[serde(default, deserialize_with = "link")]
    pub interconnect_link: Option<Link>,
    #[serde(default, deserialize_with = "topology")]
    pub interconnect_topology: Option<Topology>,
    pub scale_up_gpus: Option<u32>,
    #[serde(default)]
    pub interconnect_sources: Vec<String>,
    /// `allreduce_busbw_frac`, `allreduce_busbw_gbs`.
    #[serde(default)]
    pub interconnect_measured: BTreeMap<String, f64>,
    #[serde(default)]
    pub interconnect_measured_sources: Vec<String>,
    // Research-file context the catalog does not carry (the file's header, docs/research/hardware.md).
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
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyMeasurement {
    /// The kernel family (`GemmFamily::key`).
    pub family: GemmFamily,
    /// Measured TFLOP/s over the dense peak (large shapes).
    pub fraction: Option<f64>,
    /// Bytes / (time − the family's floor) over the datasheet DRAM bandwidth (small M).
    pub dram_fraction: Option<f64>,
    /// The kernel's fixed time in µs from the same small-M fit (its intercept, less the activation
    /// quantization kernel's floor where the times include it); only beside a `dram_fraction`.
    #[serde(default)]
    pub floor_us: Option<f64>,
    /// The measured throughput the fraction comes from, TFLOP/s or TB/s, as published.
    #[serde(default)]
    pub tflops: Option<f64>,
    /// M×N×K (M = tokens), or what the source states.
    pub shape: String,
    /// The library or kernel that ran.
    pub library: String,
    /// `noquant` (GEMM alone, activations already quantized) or `+quant` (activation quantization included).
    pub quant: String,
    /// URL(s) of the publication.
    pub source: String,
}

#[derive(Deserialize)]
struct SourceFile {
    #[serde(default)]
    device: Vec<toml::Table>,
}

/// Every `[[device]]` entry of the research file's text, in file order.
///
/// # Errors
/// [`SourceError`] for text that is not TOML, a file without devices, or an entry without a key or with a
/// missing, misspelt or mistyped field (naming the device).
pub fn devices(text: &str) -> Result<Vec<Device>, SourceError> {
    let file: SourceFile = toml::from_str(text).map_err(|e| SourceError::Toml(e.to_string()))?;
    if file.device.is_empty() {
        return Err(SourceError::NoDevice);
    }
    file.device
        .into_iter()
        .enumerate()
        .map(|(i, table)| {
            let key = match table.get("key") {
                Some(toml::Value::String(k)) if !k.trim().is_empty() => k.clone(),
                _ => return Err(SourceError::NoKey { number: i + 1 }),
            };
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| SourceError::Entry {
                    device: key,
                    message: e.to_string().trim().replace('\n', " "),
                })
        })
        .collect()
}

/// `Some(variant)` of the enum whose `name` is the text, or an error listing the names.
fn by_name<'de, D: Deserializer<'de>, T: Copy>(
    d: D,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<Option<T>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    all.iter()
        .copied()
        .find(|&v| name(v) == text)
        .map(Some)
        .ok_or_else(|| {
            let valid: Vec<&str> = all.iter().map(|&v| name(v)).collect();
            D::Error::custom(format!("unknown name {text:?} (valid: {})", valid.join(", ")))
        })
}

fn link<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Link>, D::Error> {
    by_name(d, &Link::ALL, Link::name)
}

fn topology<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Topology>, D::Error> {
    by_name(d, &Topology::ALL, Topology::name)
}
