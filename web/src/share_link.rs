//! Share links: the URL query that restores a scenario exactly ([`Scenario::to_query`],
//! [`Scenario::from_query`]) and [`SharedLink`], which also carries the custom devices and imported models
//! the scenario and its pins use (compact JSON, validated on the way in) and the pins.

use roofline_core::hardware::Sourced;
use roofline_core::{HardwareSpec, Mode, ModelConfig, ReferenceCeilings};

use crate::scenario::{MEMORY_FRACTION_RANGE, Scenario, legacy_mode};
use crate::sliders::{BATCH_RANGE, CONTEXT_RANGE};

/// The largest GPU count a link may ask for (core refuses what the device's domain cannot hold).
pub const MAX_GPUS: u64 = 1024;

impl Scenario {
    /// The URL query (without `?`) that restores this scenario exactly, form-urlencoded.
    #[must_use]
    pub fn to_query(&self) -> String {
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(self.query_pairs())
            .finish()
    }

    /// The query's fields in order; `tp` and `ep` only when they are not 1, `mem` (the engine memory
    /// fraction) only when it is not vLLM's default, `eng` only when an engine is chosen, then the view and
    /// the serving inputs that differ from their defaults
    /// ([`crate::serving_inputs::ServingInputs::query_pairs`]).
    fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let c = self.corrections;
        let flags: String = [(c.launch_floor, 'l'), (c.wave_quantization, 'w')]
            .iter()
            .filter_map(|&(on, f)| on.then_some(f))
            .collect();
        let precisions: Vec<&str> = self.kernel.precisions.iter().map(|p| p.name()).collect();
        let pairs = [
            ("hw", self.hardware.clone()),
            ("model", self.model.clone()),
            ("cfg", self.config.clone()),
            (
                "phase",
                if self.prefill { "prefill" } else { "decode" }.to_owned(),
            ),
            ("b", self.batch.to_string()),
            ("s", self.context.to_string()),
            ("tp", self.gpus.to_string()),
            ("ep", self.experts.to_string()),
            ("mode", c.mode.name().to_owned()),
            ("corr", flags),
            ("m", self.kernel.m.to_string()),
            ("n", self.kernel.n.to_string()),
            ("k", self.kernel.k.to_string()),
            ("p", precisions.join(",")),
            ("mem", self.memory_fraction.to_string()),
            (
                "eng",
                self.engine.map_or_else(String::new, |e| e.key().to_owned()),
            ),
        ];
        let default_memory = Scenario::default().memory_fraction;
        pairs
            .into_iter()
            .filter(|(k, _)| {
                (*k != "tp" || self.gpus != 1)
                    && (*k != "ep" || self.experts != 1)
                    && (*k != "mem" || self.memory_fraction != default_memory)
                    && (*k != "eng" || self.engine.is_some())
            })
            .chain(self.serving.query_pairs(self.view))
            .collect()
    }

    /// Reads a form-urlencoded URL query (with or without `?`; `%20` and `+` both read as a space); absent or
    /// unreadable fields keep their defaults, numbers are clamped to the slider ranges. A missing `mode` is
    /// reference, or calibrated for an older link whose `corr` flags hold `c` (calibrated roofs on). Returns
    /// `None` when the query names no scenario field.
    #[must_use]
    pub fn from_query(query: &str) -> Option<Scenario> {
        let mut s = Scenario::default();
        let (mut any, mut mode, mut legacy_calibrated) = (false, None, false);
        for (key, value) in form_urlencoded::parse(query.trim_start_matches('?').as_bytes()) {
            let num = |lo: u64, hi: u64| value.parse::<u64>().ok().map(|v| v.clamp(lo, hi));
            any |= match key.as_ref() {
                "hw" => {
                    s.hardware = value.into_owned();
                    true
                }
                "model" => {
                    s.model = value.into_owned();
                    true
                }
                "cfg" => {
                    s.config = value.into_owned();
                    true
                }
                "phase" => {
                    s.prefill = value == "prefill";
                    true
                }
                "b" => num(BATCH_RANGE.0, BATCH_RANGE.1).map(|v| s.batch = v).is_some(),
                "s" => num(CONTEXT_RANGE.0, CONTEXT_RANGE.1)
                    .map(|v| s.context = v)
                    .is_some(),
                "tp" => num(1, MAX_GPUS)
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| s.gpus = v)
                    .is_some(),
                "ep" => num(1, MAX_GPUS)
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| s.experts = v)
                    .is_some(),
                "mode" => {
                    mode = Mode::parse(&value).ok();
                    mode.is_some()
                }
                "corr" => {
                    s.corrections.launch_floor = value.contains('l');
                    s.corrections.wave_quantization = value.contains('w');
                    legacy_calibrated = value.contains('c');
                    true
                }
                "m" => num(1, roofline_core::ops::MAX_DIM)
                    .map(|v| s.kernel.m = v)
                    .is_some(),
                "n" => num(1, roofline_core::ops::MAX_DIM)
                    .map(|v| s.kernel.n = v)
                    .is_some(),
                "k" => num(1, roofline_core::ops::MAX_DIM)
                    .map(|v| s.kernel.k = v)
                    .is_some(),
                "p" => {
                    s.kernel.precisions = value.split(',').filter_map(|n| n.parse().ok()).collect();
                    true
                }
                "mem" => value
                    .parse::<f64>()
                    .ok()
                    .filter(|f| (MEMORY_FRACTION_RANGE.0..=MEMORY_FRACTION_RANGE.1).contains(f))
                    .map(|f| s.memory_fraction = f)
                    .is_some(),
                "eng" => {
                    s.engine = roofline_core::Engine::parse(&value).ok();
                    s.engine.is_some()
                }
                other => s.serving.read_pair(&mut s.view, other, &value).unwrap_or(false),
            };
        }
        s.corrections.mode = mode.unwrap_or(legacy_mode(legacy_calibrated));
        any.then_some(s)
    }
}

/// Every sourced figure of `r`.
fn figures(r: &mut ReferenceCeilings) -> impl Iterator<Item = &mut Sourced> {
    [
        &mut r.dram_fraction,
        &mut r.matrix_kernel_floor,
        &mut r.vector_kernel_floor,
    ]
    .into_iter()
    .chain(r.gemm_fractions.iter_mut().map(|g| &mut g.fraction))
    .chain(
        [
            &mut r.collective_fraction,
            &mut r.collective_base_latency,
            &mut r.collective_step_latency,
        ]
        .into_iter()
        .flatten(),
    )
    .chain(
        r.families
            .iter_mut()
            .flat_map(|f| [&mut f.gemm_fraction, &mut f.dram_fraction, &mut f.kernel_floor]),
    )
    .chain(r.quantize_floors.iter_mut().map(|q| &mut q.floor))
}

/// What a link leaves out of a custom device: its documentation (sources, notes, derived and unverified
/// lists, the interconnect's sources, the reference ceilings' basis texts, a calibration's warnings), never
/// a number, so the link stays short (4.3 k characters for a device started from an H100 spec and a pin,
/// 11.1 k with them) and predicts identically.
fn compact(spec: &HardwareSpec) -> HardwareSpec {
    let mut spec = spec.clone();
    spec.sources.clear();
    spec.derived.clear();
    spec.unverified.clear();
    spec.notes.clear();
    if let Some(link) = &mut spec.interconnect {
        link.sources.clear();
    }
    if let Some(r) = &mut spec.reference {
        for sourced in figures(r) {
            sourced.basis.clear();
        }
    }
    if let Some(q) = &mut spec.calibration {
        q.warnings.clear();
    }
    spec
}

/// A device as a link carries it: [`compact`], as JSON without null, empty-string and empty-list fields where
/// each reads back as its default. A spec whose pruned JSON would not read back (an empty field with no
/// default, such as a measured host's empty `vendor`) is carried unpruned.
fn link_json(spec: &HardwareSpec) -> String {
    fn prune(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.retain(|_, v| {
                    !(v.is_null() || v.as_str() == Some("") || v.as_array().is_some_and(Vec::is_empty))
                });
                map.values_mut().for_each(prune);
            }
            serde_json::Value::Array(list) => list.iter_mut().for_each(prune),
            _ => {}
        }
    }
    // Through text, not `to_value`: the spec's `Serialize` exists once in the wasm (for serde_json's writer).
    let full = serde_json::to_string(&compact(spec)).unwrap_or_default();
    let mut value = serde_json::from_str::<serde_json::Value>(&full).unwrap_or_default();
    prune(&mut value);
    let pruned = value.to_string();
    if HardwareSpec::from_json(&pruned).is_ok() {
        pruned
    } else {
        full
    }
}

/// What a device read from a link says about what [`compact`] left out: the basis of its reference
/// ceilings and its sources are "not carried by the share link"; a calibration's warnings are assessed
/// again from its spreads.
fn restore(spec: &mut HardwareSpec) {
    const NOT_CARRIED: &str = "not carried by the share link";
    if spec.sources.is_empty() {
        spec.sources.push(NOT_CARRIED.to_owned());
    }
    if let Some(r) = &mut spec.reference {
        for sourced in figures(r).filter(|s| s.basis.is_empty()) {
            sourced.basis = NOT_CARRIED.to_owned();
        }
    }
    if let Some(q) = &mut spec.calibration
        && q.warnings.is_empty()
    {
        *q = roofline_core::hardware::CalibrationQuality::assess(
            q.measured_at_unix_s,
            q.bandwidth,
            q.kernel_overhead,
            q.vector_kernel_overhead,
            std::mem::take(&mut q.peaks).into_iter().map(Into::into).collect(),
            std::mem::take(&mut q.weight_only)
                .into_iter()
                .map(Into::into)
                .collect(),
            q.host_load_per_cpu,
        );
    }
}

/// What a share link carries: the scenario, the custom devices it and its pins need (compact JSON, validated
/// on the way in), and the pins (`None` when the link has none: older links keep the saved pins).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLink {
    /// The scenario.
    pub scenario: Scenario,
    /// Custom devices named by the scenario or its pins.
    pub devices: Vec<HardwareSpec>,
    /// Imported models named by the scenario or its pins.
    pub models: Vec<ModelConfig>,
    /// Devices and models in the link that could not be read (shown as a notice, never silently dropped).
    pub bad_devices: Vec<String>,
    /// The pins, when the link lists them.
    pub pins: Option<Vec<Scenario>>,
}

impl SharedLink {
    /// The form-urlencoded URL query (without `?`) for `scenario` with the custom devices and imported models
    /// that it and `pins` use (their devices, the serving view's compared devices, and the calibration of a
    /// device seen in calibrated mode), and the pins: `…&dev=<compact JSON>&mdl=<compact JSON>&pins=<n>&pin=<query>…`
    /// (`pins=0` when there are none).
    #[must_use]
    pub fn query(
        scenario: &Scenario,
        custom: &[HardwareSpec],
        models: &[ModelConfig],
        pins: &[Scenario],
    ) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.extend_pairs(scenario.query_pairs());
        let mut keys: Vec<&str> = Vec::new();
        for s in std::iter::once(scenario).chain(pins) {
            let calibrated = s.corrections.mode == Mode::Calibrated;
            for key in std::iter::once(&s.hardware).chain(&s.serving.compare) {
                // A device seen in calibrated mode needs its calibration, kept beside it.
                let calibration = custom
                    .iter()
                    .filter(|h| calibrated && h.calibrated_base() == Some(key.as_str()))
                    .map(|h| h.key.as_str());
                for k in std::iter::once(key.as_str()).chain(calibration) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
        }
        for spec in keys.iter().filter_map(|k| custom.iter().find(|h| h.key == *k)) {
            q.append_pair("dev", &link_json(spec));
        }
        let mut model_keys: Vec<&str> = Vec::new();
        for key in std::iter::once(&scenario.model).chain(pins.iter().map(|p| &p.model)) {
            if !model_keys.contains(&key.as_str()) {
                model_keys.push(key);
            }
        }
        for model in model_keys
            .iter()
            .filter_map(|k| models.iter().find(|m| m.key == *k))
        {
            let json = serde_json::to_string(model).unwrap_or_default();
            q.append_pair("mdl", &json);
        }
        q.append_pair("pins", &pins.len().to_string());
        for pin in pins {
            q.append_pair("pin", &pin.to_query());
        }
        q.finish()
    }

    /// Reads a link's query; `None` when it names no scenario field.
    #[must_use]
    pub fn from_query(query: &str) -> Option<SharedLink> {
        let scenario = Scenario::from_query(query)?;
        let (mut devices, mut models, mut bad_devices, mut pins, mut any_pins) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), false);
        for (key, value) in form_urlencoded::parse(query.trim_start_matches('?').as_bytes()) {
            match key.as_ref() {
                "dev" => match HardwareSpec::from_json(&value) {
                    Ok(mut spec) if roofline_core::find_hardware(&spec.key).is_err() => {
                        restore(&mut spec);
                        if spec.provenance != roofline_core::Provenance::Measured {
                            spec.provenance = roofline_core::Provenance::Custom;
                        }
                        devices.push(spec);
                    }
                    Ok(spec) => bad_devices.push(format!("'{}' is a catalog key", spec.key)),
                    Err(e) => bad_devices.push(e.to_string()),
                },
                "mdl" => match serde_json::from_str::<ModelConfig>(&value) {
                    Ok(model) if roofline_core::find_model(&model.key).is_ok() => {
                        bad_devices.push(format!("model '{}' is a preset key", model.key));
                    }
                    Ok(model) => match model.check() {
                        Ok(()) => models.push(model),
                        Err(e) => bad_devices.push(format!("model '{}': {e}", model.key)),
                    },
                    Err(e) => bad_devices.push(format!("model: {e}")),
                },
                "pins" => any_pins = true,
                "pin" => {
                    any_pins = true;
                    pins.extend(Scenario::from_query(&value));
                }
                _ => {}
            }
        }
        Some(SharedLink {
            scenario,
            devices,
            models,
            bad_devices,
            pins: any_pins.then_some(pins),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::Precision;

    use crate::presets::resolve_hardware;
    use crate::scenario::{CorrectionToggles, KernelSpec};
    use crate::serving_inputs::{ServingInputs, View};

    #[test]
    fn query_round_trips_every_field() {
        let s = Scenario {
            hardware: "my gpu/β".to_owned(),
            model: "llama-3.1-70b".to_owned(),
            config: "fp8".to_owned(),
            prefill: true,
            batch: 64,
            context: 131_072,
            gpus: 4,
            experts: 2,
            corrections: CorrectionToggles {
                launch_floor: true,
                wave_quantization: false,
                mode: Mode::Datasheet,
            },
            kernel: KernelSpec {
                m: 2048,
                n: 14336,
                k: 4096,
                precisions: vec![Precision::Bf16, Precision::Nvfp4],
            },
            memory_fraction: 0.85,
            engine: Some(roofline_core::Engine::Sglang),
            view: View::Serving,
            serving: ServingInputs {
                isl: 2048,
                osl: 128,
                scheduler: roofline_core::SchedulerKind::InFlight,
                token_budget: None,
                max_seqs: Some(256),
                sla: roofline_core::Sla {
                    ttft_max_s: Some(0.5),
                    tpot_max_s: None,
                    tokens_per_user_min: Some(40.0),
                },
                ..ServingInputs::default()
            },
        };
        assert!(s.to_query().contains("&mem=0.85"));
        assert_eq!(Scenario::from_query(&format!("?{}", s.to_query())), Some(s));
        assert!(!Scenario::default().to_query().contains("mem="));
        assert_eq!(
            Scenario::from_query("hw=gb10&mem=7").unwrap().memory_fraction,
            0.92
        );
        assert_eq!(Scenario::from_query("?utm_source=x"), None);
    }

    #[test]
    fn reserved_and_non_ascii_characters_round_trip_and_old_links_still_read() {
        let awkward = "a&b=c%d+e fβ";
        let s = Scenario {
            hardware: awkward.to_owned(),
            kernel: KernelSpec {
                precisions: vec![Precision::Fp16, Precision::Int8],
                ..KernelSpec::default()
            },
            ..Scenario::default()
        };
        let pin = Scenario {
            model: awkward.to_owned(),
            ..Scenario::default()
        };
        let query = SharedLink::query(&s, &[], &[], std::slice::from_ref(&pin));
        let link = SharedLink::from_query(&query).unwrap();
        assert_eq!(
            (&link.scenario, &link.pins),
            (&s, &Some(vec![pin.clone()])),
            "{query}"
        );
        // The hand-written encoder these links had before escaped a space as `%20` and kept `,` as it is.
        let old = "hw=a%26b%3Dc%25d%2Be%20f%CE%B2&p=FP16,INT8&pins=1\
                   &pin=model%3Da%2526b%253Dc%2525d%252Be%2520f%25CE%25B2";
        let link = SharedLink::from_query(old).unwrap();
        assert_eq!((link.scenario, link.pins), (s, Some(vec![pin])));
    }

    #[test]
    fn every_mode_round_trips_through_the_url() {
        for mode in Mode::ALL {
            let mut s = Scenario::default();
            s.corrections.mode = mode;
            let query = s.to_query();
            assert!(query.contains(&format!("mode={mode}")), "{query}");
            assert_eq!(Scenario::from_query(&query), Some(s));
        }
    }

    #[test]
    fn old_links_keep_their_mode() {
        // Before modes, `c` among the corrections meant calibrated roofs; without it, datasheet roofs, which
        // now read as the default mode.
        let old = Scenario::from_query("hw=gb10&corr=lc").unwrap();
        assert_eq!(old.corrections.mode, Mode::Calibrated);
        assert!(old.corrections.launch_floor && !old.corrections.wave_quantization);
        assert_eq!(
            Scenario::from_query("hw=gb10&corr=w").unwrap().corrections.mode,
            Mode::Reference
        );
        assert_eq!(
            Scenario::from_query("hw=gb10").unwrap().corrections.mode,
            Mode::Reference
        );
        assert_eq!(
            Scenario::from_query("corr=c&mode=datasheet")
                .unwrap()
                .corrections
                .mode,
            Mode::Datasheet,
            "an explicit mode wins"
        );
        assert_eq!(
            Scenario::from_query("hw=gb10&mode=ideal")
                .unwrap()
                .corrections
                .mode,
            Mode::Reference
        );
    }

    #[test]
    fn share_links_carry_custom_devices_and_pins() {
        let mut mine = resolve_hardware("h100_sxm", &[]).unwrap();
        mine.key = "my_gpu".into();
        mine.name = "My GPU".into();
        mine.provenance = roofline_core::Provenance::Custom;
        let s = Scenario {
            hardware: "my_gpu".into(),
            batch: 8,
            ..Scenario::default()
        };
        let pin = Scenario {
            hardware: "h100_sxm".into(),
            ..Scenario::default()
        };
        let query = SharedLink::query(&s, std::slice::from_ref(&mine), &[], std::slice::from_ref(&pin));
        // The device's documentation stays out of the link (11.1 k characters with it: the bases of the
        // H100's reference and family ceilings), its numbers do not (4.3 k characters).
        assert!(query.len() < 5_000, "{} characters", query.len());
        let link = SharedLink::from_query(&query).unwrap();
        assert_eq!(link.scenario, s);
        let mut expected = compact(&mine);
        restore(&mut expected);
        assert_eq!(link.devices, vec![expected.clone()]);
        let read = &link.devices[0];
        assert_eq!(
            (
                &read.peaks,
                read.dram_bandwidth_bytes_per_s,
                read.memory_reported_bytes
            ),
            (
                &mine.peaks,
                mine.dram_bandwidth_bytes_per_s,
                mine.memory_reported_bytes
            )
        );
        assert_eq!(
            read.reference_ceilings().dram_fraction.value,
            mine.reference_ceilings().dram_fraction.value
        );
        assert_eq!(
            read.reference_ceilings().dram_fraction.basis,
            "not carried by the share link"
        );
        assert_eq!(link.pins, Some(vec![pin]));
        assert!(link.bad_devices.is_empty());
        // No pins listed: the saved ones stay; an unreadable device is reported.
        let link = SharedLink::from_query("hw=my_gpu&dev=%7Bnope").unwrap();
        assert_eq!(
            (link.pins, link.devices.len(), link.bad_devices.len()),
            (None, 0, 1)
        );
        // Removing the last pin is carried too.
        let none = SharedLink::query(&s, &[mine], &[], &[]);
        assert_eq!(SharedLink::from_query(&none).unwrap().pins, Some(Vec::new()));
    }

    /// A host CPU calibrated by the endpoint's CPU backend: no vendor, no datasheet, measured figures only.
    fn calibrated_host() -> HardwareSpec {
        let mut spec = HardwareSpec::uncatalogued("cpu_host", "Host CPU", "x86_64", 64e9);
        spec.key = roofline_core::calibrated_key("cpu_host");
        spec.provenance = roofline_core::Provenance::Measured;
        spec.calibrates = Some("cpu_host".into());
        spec.dram_bandwidth_bytes_per_s = 40e9;
        spec.peaks.push(roofline_core::Peak {
            path: Precision::Fp32.compute_path(),
            dense_flop_per_s: 1e12,
            sparse_flop_per_s: None,
            kernel_overhead_s: None,
        });
        spec
    }

    #[test]
    fn a_calibrated_devices_link_opens_in_a_fresh_profile() {
        // The audit's failure: the host's empty vendor was pruned and the link read "missing field `vendor`".
        let host = calibrated_host();
        assert!(host.vendor.is_empty());
        let s = Scenario {
            hardware: host.key.clone(),
            corrections: CorrectionToggles {
                mode: Mode::Calibrated,
                ..CorrectionToggles::default()
            },
            ..Scenario::default()
        };
        let link =
            SharedLink::from_query(&SharedLink::query(&s, std::slice::from_ref(&host), &[], &[])).unwrap();
        assert!(link.bad_devices.is_empty(), "{:?}", link.bad_devices);
        assert_eq!(link.devices.len(), 1);
        let read = &link.devices[0];
        assert_eq!(
            (&read.key, read.dram_bandwidth_bytes_per_s, &read.peaks),
            (&host.key, 40e9, &host.peaks)
        );
        assert_eq!(read.calibrated_base(), Some("cpu_host"));
        // A catalog device seen in calibrated mode carries its calibration, which the link did not before.
        let mut h100 = resolve_hardware("h100_sxm", &[]).unwrap();
        (h100.key, h100.provenance, h100.calibrates) = (
            roofline_core::calibrated_key("h100_sxm"),
            roofline_core::Provenance::Measured,
            Some("h100_sxm".into()),
        );
        let on_h100 = Scenario {
            hardware: "h100_sxm".into(),
            ..s
        };
        let link = SharedLink::from_query(&SharedLink::query(&on_h100, &[h100.clone()], &[], &[])).unwrap();
        assert_eq!(
            link.devices.iter().map(|d| d.key.as_str()).collect::<Vec<_>>(),
            [h100.key.as_str()]
        );
        // In reference mode the calibration stays home.
        let mut reference = on_h100.clone();
        reference.corrections.mode = Mode::Reference;
        assert!(!SharedLink::query(&reference, &[h100], &[], &[]).contains("dev="));
    }

    #[test]
    fn share_links_carry_imported_models_and_the_gpu_count_only_when_not_one() {
        let json = include_str!("../../core/tests/data/hf/qwen3-8b.json");
        let model = crate::models::import_model(None, json, &[]).unwrap();
        let s = Scenario {
            model: model.key.clone(),
            gpus: 2,
            ..Scenario::default()
        };
        let query = SharedLink::query(&s, &[], std::slice::from_ref(&model), &[]);
        assert!(query.contains("&tp=2&"), "{query}");
        let link = SharedLink::from_query(&query).unwrap();
        assert_eq!((link.scenario, link.models), (s, vec![model.clone()]));
        // Presets are not carried, one GPU is not written, and older links read as one GPU.
        let plain = SharedLink::query(&Scenario::default(), &[], &[model], &[]);
        assert!(!plain.contains("mdl=") && !plain.contains("tp="), "{plain}");
        assert_eq!(SharedLink::from_query(&plain).unwrap().scenario.gpus, 1);
        let saved: Scenario = serde_json::from_str(r#"{"batch": 4}"#).unwrap();
        assert_eq!(saved.gpus, 1);
        // A model link that is not a model, or claims a preset's key, is reported.
        let preset = serde_json::to_string(roofline_core::find_model("llama-3.1-8b").unwrap()).unwrap();
        let bad = format!(
            "hw=gb10&mdl=%7Bnope&{}",
            form_urlencoded::Serializer::new(String::new())
                .append_pair("mdl", &preset)
                .finish()
        );
        let link = SharedLink::from_query(&bad).unwrap();
        assert_eq!((link.models.len(), link.bad_devices.len()), (0, 2));
    }

    #[test]
    fn query_clamps_and_ignores_garbage() {
        let s = Scenario::from_query("b=100000&s=1&p=FP16,nope,INT8&m=abc").unwrap();
        assert_eq!((s.batch, s.context, s.kernel.m), (512, 32, 1));
        assert_eq!(s.kernel.precisions, vec![Precision::Fp16, Precision::Int8]);
    }
}
