//! NVIDIA ModelOpt checkpoints (`quant_method` `modelopt`, or `hf_quant_config.json`): one `quant_algo` for
//! every linear layer, or `MIXED_PRECISION` with a format per layer name in `quantized_layers`, indexed by
//! name so a module is evaluated per layer class, never per layer × entry (docs/design/core.md).

use std::collections::HashMap;

use super::patterns::{Name, Patterns, Syntax, digit_runs};
use super::{DECODER_AND_HEAD, Fields, Plan, named_layers, patterns, tensor_args, uniform_plan};
use crate::quant_config::LinearFormat;
use roofline_base::Error;
use roofline_base::precision::{ActivationScale, Precision};

/// Most entries a `quantized_layers` map may hold (NVIDIA's MiniMax-M3 NVFP4 lists 22,422; a model of 512
/// experts on 60 layers would list about 92,000).
pub(super) const MAX_QUANTIZED_LAYERS: usize = 1 << 18;

const SUPPORTED: &str = "FP8, NVFP4, MXFP8, W4A16_NVFP4";

/// The format of ModelOpt's `algo` (read from `q`'s `field`), `activations` the checkpoint's unquantized dtype.
fn algo_format(
    q: &Fields<'_>,
    (field, algo): (&str, &str),
    activations: Precision,
) -> Result<LinearFormat, Error> {
    let nvfp4_groups = || match q.optional_uint("group_size")? {
        None | Some(16) => Ok(()),
        Some(g) => Err(q.error(
            "group_size",
            format!("NVFP4 in groups of {g} is not modelled (NVFP4 scales groups of 16)"),
        )),
    };
    Ok(match algo {
        "FP8" => LinearFormat {
            weights: Precision::Fp8E4M3,
            activations: Precision::Fp8E4M3,
            activation_scale: ActivationScale::StaticPerTensor,
        },
        "NVFP4" => {
            nvfp4_groups()?;
            LinearFormat::plain(Precision::Nvfp4)
        }
        // ModelOpt's MXFP8: E4M3 weights and activations with an E8M0 scale per 32.
        "MXFP8" => LinearFormat::plain(Precision::Mxfp8E4M3),
        "W4A16_NVFP4" => {
            nvfp4_groups()?;
            LinearFormat {
                weights: Precision::Nvfp4,
                activations,
                activation_scale: ActivationScale::DynamicPerTensor,
            }
        }
        other => {
            return Err(q.error(
                field,
                format!("'{other}' is not modelled (supported: {SUPPORTED}, MIXED_PRECISION)"),
            ));
        }
    })
}

/// The KV-cache format of `q`: `kv_cache_quant_algo` in hf_quant_config.json; NVIDIA's config.json copies
/// write a compressed-tensors style `kv_cache_scheme` instead.
fn kv_cache(q: &Fields<'_>) -> Result<Option<Precision>, Error> {
    Ok(
        match (
            q.optional_str("kv_cache_quant_algo")?,
            q.nested("kv_cache_scheme")?,
        ) {
            (None, None) => None,
            (Some("FP8"), _) => Some(Precision::Fp8E4M3),
            (None, Some(scheme)) => Some(tensor_args(&scheme, false)?.0),
            (Some(other), _) => {
                return Err(q.error(
                    "kv_cache_quant_algo",
                    format!("'{other}' is not modelled (supported: FP8)"),
                ));
            }
        },
    )
}

/// The plan of a ModelOpt config `q`.
pub(super) fn plan(q: &Fields<'_>, activations: Precision) -> Result<Plan, Error> {
    let algo = q
        .optional_str("quant_algo")?
        .ok_or_else(|| q.error("quant_algo", "missing"))?;
    let kv_cache = kv_cache(q)?;
    // `exclude_modules` in hf_quant_config.json, `ignore` in NVIDIA's config.json copies: the same globs.
    let field = if q.get("exclude_modules").is_some() {
        "exclude_modules"
    } else {
        "ignore"
    };
    let excluded = patterns(q, field, Syntax::ModelOpt)?;
    let method = format!("modelopt ({algo})");
    if algo == "MIXED_PRECISION" {
        return mixed(q, activations, excluded, kv_cache, method);
    }
    let format = algo_format(q, ("quant_algo", algo), activations)?;
    Ok(uniform_plan(DECODER_AND_HEAD, format, excluded, kv_cache, method))
}

/// `MIXED_PRECISION`: each linear layer takes the format of the `quantized_layers` entry naming it or a
/// parent of it (the nearest), unless `exclude_modules` matches it; a layer no entry names stays
/// unquantized. The entries are looked up by name, and the layer numbers they name are evaluated.
fn mixed(
    q: &Fields<'_>,
    activations: Precision,
    excluded: Patterns,
    kv_cache: Option<Precision>,
    method: String,
) -> Result<Plan, Error> {
    let layers = q.nested("quantized_layers")?.ok_or_else(|| {
        q.error(
            "quantized_layers",
            "missing (MIXED_PRECISION lists its layers there)",
        )
    })?;
    if layers.map.len() > MAX_QUANTIZED_LAYERS {
        return Err(q.error(
            "quantized_layers",
            format!(
                "lists {} layers, more than the {MAX_QUANTIZED_LAYERS} this reader evaluates",
                layers.map.len()
            ),
        ));
    }
    let (mut named, sampled) = named_layers(&[&excluded]);
    let mut formats = HashMap::with_capacity(layers.map.len());
    for name in layers.map.keys() {
        let entry = layers
            .nested(name)?
            .ok_or_else(|| layers.error(name, "must be an object"))?;
        let algo = entry
            .optional_str("quant_algo")?
            .ok_or_else(|| entry.error("quant_algo", "missing"))?;
        if algo == "MIXED_PRECISION" {
            return Err(entry.error("quant_algo", format!("must be one format ({SUPPORTED})")));
        }
        formats.insert(
            name.clone(),
            algo_format(&entry, ("quant_algo", algo), activations)?,
        );
        named.extend(
            digit_runs(name)
                .iter()
                .filter_map(|(run, ..)| run.parse::<u32>().ok()),
        );
    }
    named.sort_unstable();
    named.dedup();
    let listed = layers.map.keys().next().cloned();
    Ok(Plan {
        candidates: DECODER_AND_HEAD,
        named: (named, sampled),
        assign: Box::new(move |name: &Name<'_>| {
            if excluded.matches(name) {
                return None;
            }
            let text = name.text_at(None);
            let parents = text.rmatch_indices('.').map(|(i, _)| &text[..i]);
            std::iter::once(text.as_str())
                .chain(parents)
                .find_map(|n| formats.get(n).copied())
        }),
        kv_cache,
        method,
        listed,
    })
}

/// NVIDIA's NVFP4 files of DeepSeek-V4 (`quant_method` `fp8` with ModelOpt's `moe_quant_algo`): DeepSeek's
/// block FP8 (`base`) on every decoder layer, except that a layer `ignore` leaves out takes the
/// `quantized_layers` entry naming it or a parent (the nearest, as in `MIXED_PRECISION`), else, for the
/// routed experts under `experts`, `moe_quant_algo`; the head stays unquantized unless an entry names it.
pub(super) fn fp8_with_moe(
    q: &Fields<'_>,
    activations: Precision,
    base: Plan,
    experts: &str,
) -> Result<Plan, Error> {
    let algo = q
        .optional_str("moe_quant_algo")?
        .ok_or_else(|| q.error("moe_quant_algo", "must be a string"))?;
    let moe = algo_format(q, ("moe_quant_algo", algo), activations)?;
    let excluded = patterns(q, "ignore", Syntax::ModelOpt)?;
    let listed = match q.get("quantized_layers") {
        Some(_) => Some(mixed(
            q,
            activations,
            Patterns::new(&[], Syntax::ModelOpt, |m| q.error("ignore", m))?,
            None,
            String::new(),
        )?),
        None => None,
    };
    let mut named: (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    let lists = [base.named, named_layers(&[&excluded])]
        .into_iter()
        .chain(listed.as_ref().map(|p| p.named.clone()));
    for (all, sampled) in lists {
        named.0.extend(all);
        named.1.extend(sampled);
    }
    for list in [&mut named.0, &mut named.1] {
        list.sort_unstable();
        list.dedup();
    }
    let experts = format!("{experts}.");
    let method = format!("{} + modelopt {algo} routed experts", base.method);
    let fp8 = base.assign;
    Ok(Plan {
        candidates: DECODER_AND_HEAD,
        named,
        assign: Box::new(move |name: &Name<'_>| {
            let modelopt = (!excluded.matches(name))
                .then(|| {
                    listed
                        .as_ref()
                        .and_then(|plan| (plan.assign)(name))
                        .or_else(|| name.suffix.starts_with(&experts).then_some(moe))
                })
                .flatten();
            modelopt.or_else(|| name.layer.and_then(|_| fp8(name)))
        }),
        kv_cache: kv_cache(q)?,
        method,
        listed: None,
    })
}
