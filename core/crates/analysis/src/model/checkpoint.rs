//! A checkpoint's own precisions: the `quantization_config` of a Hugging Face `config.json` read module by
//! module ([`checkpoint_config`]), so a model is predicted as the checkpoint stores it.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

mod modelopt;
mod naming;
mod patterns;

use naming::{Group, groups};
pub(super) use naming::{LayerLayout, LayerSet, Naming};
use patterns::{Name, Patterns, Syntax};
use serde_json::{Map, Value};

use super::ModelConfig;
use super::fields::Fields;
use crate::quant_config::{LinearFormat, Module, ModuleFormat, QuantConfig};
use roofline_base::Error;
use roofline_base::precision::{ActivationScale, Precision};

/// The patterns of list `field`, read in `syntax`.
fn patterns(q: &Fields<'_>, field: &str, syntax: Syntax) -> Result<Patterns, Error> {
    Patterns::new(&q.strings(field)?, syntax, |message| q.error(field, message))
}

/// The activations a weight-only layer computes in: the checkpoint's `torch_dtype` (FP16 for `float16`,
/// BF16 otherwise).
fn activation_dtype(root: &Map<String, Value>, text: &Map<String, Value>) -> Precision {
    let dtype = ["torch_dtype", "dtype"]
        .iter()
        .find_map(|f| text.get(*f).or_else(|| root.get(*f)).and_then(Value::as_str));
    match dtype {
        Some("float16") => Precision::Fp16,
        _ => Precision::Bf16,
    }
}

/// The 4-bit group format of `group_size` with or without a zero point.
fn int4_group(q: &Fields<'_>, group_field: &str, group: u64, zero_point: bool) -> Result<Precision, Error> {
    match (group, zero_point) {
        (128, false) => Ok(Precision::Int4G128),
        (128, true) => Ok(Precision::Int4G128Zp),
        (32, false) => Ok(Precision::Int4G32),
        _ => Err(q.error(
            group_field,
            format!(
                "4-bit groups of {group}{} are not modelled (supported: 128 with or without a zero point, 32 \
                 symmetric)",
                if zero_point { " with a zero point" } else { "" }
            ),
        )),
    }
}

/// For a linear layer's name, the format a method gives it, or `None` when it stays unquantized.
type Assign = Box<dyn Fn(&Name<'_>) -> Option<LinearFormat>>;

/// What a method quantizes: the format of each linear layer it converts, and which ones.
struct Plan {
    /// Modules the method may convert.
    candidates: &'static [Module],
    /// For each layer name, the format it gets, or `None` when it stays unquantized.
    assign: Assign,
    /// KV-cache format the checkpoint asks for, when it quantizes the cache.
    kv_cache: Option<Precision>,
    /// The method, for the config's name.
    method: String,
    /// Layer numbers the plan's patterns name, and those its sampled patterns name.
    named: (Vec<u32>, Vec<u32>),
    /// A layer name of a plan that lists its layers by name (ModelOpt `MIXED_PRECISION`): a plan that then
    /// quantizes none of the model's layers names layers the model lacks.
    listed: Option<String>,
}

/// The layer numbers `lists` name, and those their sampled patterns name, each sorted once.
fn named_layers(lists: &[&Patterns]) -> (Vec<u32>, Vec<u32>) {
    let sorted = |mut v: Vec<u32>| {
        v.sort_unstable();
        v.dedup();
        v
    };
    (
        sorted(lists.iter().flat_map(|l| l.named_layers()).collect()),
        sorted(lists.iter().flat_map(|l| l.sampled_layers()).collect()),
    )
}

const DECODER: &[Module] = &[
    Module::Attention,
    Module::AttentionOutput,
    Module::DenseMlp,
    Module::SharedExperts,
    Module::RoutedExperts,
];
const DECODER_AND_HEAD: &[Module] = &[
    Module::Attention,
    Module::AttentionOutput,
    Module::DenseMlp,
    Module::SharedExperts,
    Module::RoutedExperts,
    Module::Head,
];

/// A plan that gives `format` to every candidate name none of `excluded` matches.
fn uniform_plan(
    candidates: &'static [Module],
    format: LinearFormat,
    excluded: Patterns,
    kv_cache: Option<Precision>,
    method: String,
) -> Plan {
    Plan {
        candidates,
        named: named_layers(&[&excluded]),
        assign: Box::new(move |name| (!excluded.matches(name)).then_some(format)),
        kv_cache,
        method,
        listed: None,
    }
}

fn mxfp4(q: &Fields<'_>, activations: Precision) -> Result<Plan, Error> {
    Ok(uniform_plan(
        &[Module::RoutedExperts],
        LinearFormat {
            weights: Precision::Mxfp4,
            activations,
            activation_scale: ActivationScale::DynamicPerTensor,
        },
        patterns(q, "modules_to_not_convert", Syntax::Anywhere)?,
        None,
        "mxfp4 (MoE experts, W4A16)".to_owned(),
    ))
}

fn fp8(q: &Fields<'_>) -> Result<Plan, Error> {
    // MiniMax-M2 writes the torch dtype's name.
    if let Some(fmt) = q.optional_str("fmt")?
        && !matches!(fmt, "e4m3" | "float8_e4m3fn")
    {
        return Err(q.error(
            "fmt",
            format!("'{fmt}' is not modelled (supported: e4m3, float8_e4m3fn)"),
        ));
    }
    let scale = match q.optional_str("activation_scheme")?.unwrap_or("dynamic") {
        "dynamic" => ActivationScale::DynamicPerTensor,
        "static" => ActivationScale::StaticPerTensor,
        other => {
            return Err(q.error(
                "activation_scheme",
                format!("'{other}' is not modelled (supported: dynamic, static)"),
            ));
        }
    };
    let (format, method) = match q.get("weight_block_size") {
        None => (
            LinearFormat {
                weights: Precision::Fp8E4M3,
                activations: Precision::Fp8E4M3,
                activation_scale: scale,
            },
            "fp8 (per-tensor)",
        ),
        Some(v)
            if v.as_array()
                .is_some_and(|a| a.len() == 2 && a.iter().all(|x| x.as_u64() == Some(128))) =>
        {
            (
                LinearFormat {
                    weights: Precision::Fp8Block128,
                    activations: Precision::Fp8Group128,
                    activation_scale: ActivationScale::DynamicPerToken,
                },
                "fp8 (128×128 blocks)",
            )
        }
        Some(v) => {
            return Err(q.error(
                "weight_block_size",
                format!("{v} is not modelled (supported: [128, 128])"),
            ));
        }
    };
    Ok(uniform_plan(
        DECODER,
        format,
        patterns(q, "modules_to_not_convert", Syntax::Anywhere)?,
        None,
        method.to_owned(),
    ))
}

fn awq_gptq(q: &Fields<'_>, method: &str) -> Result<Plan, Error> {
    let bits = q
        .optional_uint("bits")?
        .ok_or_else(|| q.error("bits", "missing"))?;
    let zero_point = if method == "awq" {
        q.optional_bool("zero_point")?.unwrap_or(true)
    } else {
        !q.optional_bool("sym")?.unwrap_or(true)
    };
    let weights = match bits {
        4 => {
            let group = q
                .optional_uint("group_size")?
                .ok_or_else(|| q.error("group_size", "missing"))?;
            int4_group(q, "group_size", group, zero_point)?
        }
        8 if method == "gptq" => Precision::Int8,
        _ => {
            return Err(q.error(
                "bits",
                format!("{bits}-bit {method} is not modelled (supported: 4)"),
            ));
        }
    };
    Ok(uniform_plan(
        DECODER,
        LinearFormat {
            weights,
            activations: Precision::Fp16,
            activation_scale: ActivationScale::DynamicPerTensor,
        },
        patterns(q, "modules_to_not_convert", Syntax::Anywhere)?,
        None,
        format!("{method} ({bits}-bit, W{bits}A16)"),
    ))
}

fn bitsandbytes(q: &Fields<'_>, activations: Precision) -> Result<Plan, Error> {
    if !q.optional_bool("load_in_4bit")?.unwrap_or(false) {
        return Err(q.error(
            "load_in_4bit",
            "only 4-bit NF4 bitsandbytes checkpoints are modelled (LLM.int8 is not)",
        ));
    }
    let weights = match (
        q.optional_str("bnb_4bit_quant_type")?.unwrap_or("fp4"),
        q.optional_bool("bnb_4bit_use_double_quant")?.unwrap_or(false),
    ) {
        ("nf4", false) => Precision::Nf4,
        ("nf4", true) => Precision::Nf4Dq,
        (other, _) => {
            return Err(q.error(
                "bnb_4bit_quant_type",
                format!("'{other}' is not modelled (supported: nf4)"),
            ));
        }
    };
    Ok(uniform_plan(
        DECODER,
        LinearFormat {
            weights,
            activations,
            activation_scale: ActivationScale::DynamicPerTensor,
        },
        patterns(q, "llm_int8_skip_modules", Syntax::Anywhere)?,
        None,
        "bitsandbytes (NF4, W4A16)".to_owned(),
    ))
}

/// One compressed-tensors quantization args object (`weights`, `input_activations`) as a format and scale.
fn tensor_args(q: &Fields<'_>, weights: bool) -> Result<(Precision, ActivationScale), Error> {
    let bits = q
        .optional_uint("num_bits")?
        .ok_or_else(|| q.error("num_bits", "missing"))?;
    let kind = q.optional_str("type")?.unwrap_or("int");
    let strategy = q.optional_str("strategy")?.unwrap_or("tensor");
    let group = q.optional_uint("group_size")?;
    let dynamic = q.get("dynamic").is_some_and(|v| v.as_bool() == Some(true));
    let symmetric = q.optional_bool("symmetric")?.unwrap_or(true);
    let scale = match (strategy, dynamic) {
        ("token" | "group", _) => ActivationScale::DynamicPerToken,
        (_, true) => ActivationScale::DynamicPerTensor,
        _ => ActivationScale::StaticPerTensor,
    };
    let unsupported = || {
        q.error(
            "num_bits",
            format!(
                "{bits}-bit {kind} with strategy '{strategy}'{} is not modelled for {} (supported: FP8 \
                 tensor/channel/token/block, FP8 groups of 128, NVFP4 tensor_group 16, MXFP4 group 32, INT8 \
                 channel/tensor/token, INT4 groups of 32 or 128)",
                group.map_or(String::new(), |g| format!(", group_size {g}")),
                if weights { "weights" } else { "input activations" }
            ),
        )
    };
    let precision = match (kind, bits, strategy, group) {
        ("float", 8, "tensor" | "channel" | "token", _) => Precision::Fp8E4M3,
        ("float", 8, "block", _) if weights => {
            let block = q.get("block_structure");
            if block
                .and_then(Value::as_array)
                .is_some_and(|a| a.len() == 2 && a.iter().all(|x| x.as_u64() == Some(128)))
            {
                Precision::Fp8Block128
            } else {
                return Err(q.error("block_structure", "only [128, 128] blocks are modelled"));
            }
        }
        ("float", 8, "group", Some(128)) if !weights => Precision::Fp8Group128,
        ("float", 4, "tensor_group", Some(16)) => Precision::Nvfp4,
        // MXFP4 (`mxfp4-pack-quantized`): E2M1 with a UE8M0 scale per 32.
        ("float", 4, "group", Some(32)) if weights => Precision::Mxfp4,
        ("int", 8, "tensor" | "channel" | "token", _) => Precision::Int8,
        ("int", 4, "group", Some(g)) if weights => int4_group(q, "group_size", g, !symmetric)?,
        _ => return Err(unsupported()),
    };
    Ok((precision, scale))
}

fn compressed_tensors(q: &Fields<'_>, hidden: Precision) -> Result<Plan, Error> {
    let groups = q
        .nested("config_groups")?
        .ok_or_else(|| q.error("config_groups", "missing"))?;
    let mut schemes = Vec::new();
    for name in groups.map.keys() {
        let group = groups
            .nested(name)?
            .ok_or_else(|| groups.error(name, "must be an object"))?;
        let weights = group
            .nested("weights")?
            .ok_or_else(|| group.error("weights", "missing (weightless schemes are not modelled)"))?;
        let (weight_format, _) = tensor_args(&weights, true)?;
        let format = match group.nested("input_activations")? {
            Some(acts) => {
                let (activations, activation_scale) = tensor_args(&acts, false)?;
                LinearFormat {
                    weights: weight_format,
                    activations,
                    activation_scale,
                }
            }
            None => LinearFormat {
                weights: weight_format,
                activations: hidden,
                activation_scale: ActivationScale::DynamicPerTensor,
            },
        };
        let targets = group.strings("targets")?;
        let every_linear = targets.iter().any(|t| t == "Linear");
        let named: Vec<String> = targets.into_iter().filter(|t| t != "Linear").collect();
        let targets = Patterns::new(&named, Syntax::CompressedTensors, |message| {
            group.error("targets", message)
        })?;
        schemes.push((every_linear, targets, format));
    }
    let ignore = patterns(q, "ignore", Syntax::CompressedTensors)?;
    let kv_cache = match q.nested("kv_cache_scheme")? {
        None => None,
        Some(kv) => Some(tensor_args(&kv, false)?.0),
    };
    let method = format!(
        "compressed-tensors ({})",
        q.optional_str("format")?.unwrap_or("unstated format")
    );
    let mut lists = vec![&ignore];
    lists.extend(schemes.iter().map(|(_, targets, _)| targets));
    let named = named_layers(&lists);
    Ok(Plan {
        candidates: DECODER_AND_HEAD,
        named,
        assign: Box::new(move |name| {
            if ignore.matches(name) {
                return None;
            }
            schemes
                .iter()
                .find(|(every, targets, _)| *every || (!targets.is_empty() && targets.matches(name)))
                .map(|(.., format)| *format)
        }),
        kv_cache,
        method,
        listed: None,
    })
}

/// The module `module`'s format under `plan`: one format for all its layers, or unquantized. Each group of
/// its layers is evaluated on the layers its patterns single out and one standing for the rest
/// (`LayerSet::evaluation_layers`), never layer by layer.
fn module_format(
    (plan, naming): (&Plan, &Naming),
    groups: &[Group],
    hidden: Precision,
    q: &Fields<'_>,
    module: Module,
) -> Result<Option<LinearFormat>, Error> {
    let mut first: Option<(String, Option<LinearFormat>)> = None;
    for group in groups {
        let layers = group.layers.as_ref().map_or_else(
            || vec![None],
            |set| {
                set.evaluation_layers(&plan.named.0, &plan.named.1)
                    .into_iter()
                    .map(Some)
                    .collect()
            },
        );
        for layer in layers {
            for suffix in &group.suffixes {
                let name = Name {
                    prefix: naming.layers,
                    layer,
                    suffix,
                };
                let format = (plan.assign)(&name);
                match &first {
                    None => first = Some((name.text_at(None), format)),
                    Some((_, f)) if *f == format => {}
                    Some((first_name, f)) => {
                        let describe = |f: Option<LinearFormat>| {
                            f.map_or_else(|| hidden.name().to_owned(), |f| f.label())
                        };
                        return Err(q.error(
                            "quant_method",
                            format!(
                                "quantizes the {module} in more than one format ({first_name}: {}, {}: {}); the \
                                 analysis takes one format per module",
                                describe(*f),
                                name.text_at(None),
                                describe(format)
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(first.and_then(|(_, f)| f))
}

/// The precisions the checkpoint of `model` stores, from its `quantization_config` (at the top level of
/// `root`, its names those of the whole model, else under `text_config`, its names the text model's):
/// `Ok(None)` when there is none (the checkpoint is in `torch_dtype`).
///
/// # Errors
/// [`Error::InvalidModelConfig`] naming the field for a method, scheme or value this module does not model,
/// and for a config that quantizes part of a module.
pub(super) fn checkpoint_config(
    root: &Fields<'_>,
    text: &Fields<'_>,
    model: &ModelConfig,
    (root_naming, text_naming): (&Naming, &Naming),
    layout: impl FnOnce() -> Result<LayerLayout, Error>,
) -> Result<Option<QuantConfig>, Error> {
    // Names are relative to the object holding the config: the whole model's, or the text model's.
    let (q, naming) = match (
        root.nested("quantization_config")?,
        text.nested("quantization_config")?,
    ) {
        (Some(q), _) => (q, root_naming),
        (None, Some(q)) => (q, text_naming),
        (None, None) => return Ok(None),
    };
    let activations = activation_dtype(root.map, text.map);
    let method = q
        .optional_str("quant_method")?
        .ok_or_else(|| q.error("quant_method", "missing"))?;
    let plan = match method {
        "mxfp4" => mxfp4(&q, activations)?,
        // NVIDIA's NVFP4 DeepSeek-V4: ModelOpt's routed experts beside DeepSeek's block FP8.
        "fp8" if q.get("moe_quant_algo").is_some() => {
            modelopt::fp8_with_moe(&q, activations, fp8(&q)?, naming.experts.0)?
        }
        "fp8" => fp8(&q)?,
        "awq" | "gptq" => awq_gptq(&q, method)?,
        "bitsandbytes" => bitsandbytes(&q, activations)?,
        "modelopt" => modelopt::plan(&q, activations)?,
        "compressed-tensors" => compressed_tensors(&q, activations)?,
        other => {
            return Err(q.error(
                "quant_method",
                format!(
                    "unsupported quantization method '{other}'; supported: mxfp4, fp8, compressed-tensors, \
                     modelopt, awq, gptq, bitsandbytes"
                ),
            ));
        }
    };
    let layout = layout()?;
    let mut formats = Vec::new();
    for &module in plan.candidates {
        let groups = groups(model, naming, &layout, module);
        if let Some(format) = module_format((&plan, naming), &groups, activations, &q, module)? {
            formats.push((module, format));
        }
    }
    if let (Some(name), true) = (&plan.listed, formats.is_empty()) {
        return Err(q.error(
            "quantized_layers",
            format!(
                "names no linear layer of this model ('{name}'; its layers are {}.<i>.…)",
                naming.layers
            ),
        ));
    }
    // The default linear format: the routed experts' where they are quantized, else the first quantized
    // module's; the others differ from it by module entries.
    let base = [
        Module::RoutedExperts,
        Module::DenseMlp,
        Module::Attention,
        Module::SharedExperts,
    ]
    .iter()
    .find_map(|m| formats.iter().find(|(fm, _)| fm == m).map(|(_, f)| *f))
    .or_else(|| formats.first().map(|(_, f)| *f))
    .unwrap_or(LinearFormat::plain(activations));
    let hidden = base.activations.default_output();
    // Every decoder linear module and the head the model has: its format, or unquantized at the hidden
    // precision; listed where that differs from the default.
    let effective = |module: Module| {
        formats
            .iter()
            .find(|(m, _)| *m == module)
            .map_or(LinearFormat::plain(hidden), |(_, f)| *f)
    };
    let mut modules: Vec<ModuleFormat> = model
        .modules()
        .into_iter()
        .filter(|m| m.is_decoder_linear() || *m == Module::Head)
        .filter_map(|module| {
            let format = effective(module);
            let default = if module.is_decoder_linear() {
                base
            } else {
                LinearFormat::plain(hidden)
            };
            (format != default).then_some(ModuleFormat { module, format })
        })
        .collect();
    // The output projection is listed only where it parts from the attention's format.
    let output = effective(Module::AttentionOutput);
    if output != effective(Module::Attention) {
        modules.push(ModuleFormat {
            module: Module::AttentionOutput,
            format: output,
        });
    }
    Ok(Some(QuantConfig::checkpoint(
        &plan.method,
        base,
        plan.kv_cache,
        modules,
    )))
}
