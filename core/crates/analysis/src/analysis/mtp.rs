//! Speculative decoding's drafter cost: one step of a model's multi-token-prediction layers
//! ([`analyze_mtp_step`]), what a serving simulation adds per draft token (acceptance is the simulation's).

use super::ModelAnalysis;
use super::step::{StepBatch, run_step};
use crate::corrections::Corrections;
use crate::model::ModelConfig;
use crate::parallel::Parallelism;
use crate::quant_config::QuantConfig;
use roofline_base::Error;
use roofline_base::hardware::HardwareSpec;

/// Analyses one step of `model`'s MTP drafter ([`ModelConfig::mtp_drafter`]) over `step`: each MTP layer's
/// input projection (`mtp_eh_proj`, its norms), its decoder layer (attention over the same context, the
/// model's experts) and the shared logits head, split as `parallelism` says. One call per draft token.
///
/// # Errors
/// [`Error::InvalidInput`] for a model without MTP layers, and as [`super::analyze_step`].
///
/// # Examples
/// ```
/// use roofline_base::*;
/// use roofline_analysis::*;
/// use roofline_analysis::analysis::analyze_mtp_step;
/// let b200 = find_hardware("b200").unwrap();
/// let model = find_model("deepseek-v3.2").unwrap();
/// let step = StepBatch::of(&Workload::decode(8, 4096));
/// let draft = analyze_mtp_step(b200, model, &model.checkpoint_config(), &step, &Parallelism::tensor(8),
///     &Corrections::ALL).unwrap();
/// let whole = analyze_step(b200, model, &model.checkpoint_config(), &step, &Parallelism::tensor(8),
///     &Corrections::ALL).unwrap();
/// // One layer of 61 and the head: a small fraction of a step.
/// assert!(draft.total_time_s < 0.2 * whole.total_time_s);
/// assert!(draft.ops.iter().any(|o| o.name == "mtp_eh_proj"));
/// ```
pub fn analyze_mtp_step(
    hardware: &HardwareSpec,
    model: &ModelConfig,
    config: &QuantConfig,
    step: &StepBatch,
    parallelism: &Parallelism,
    corrections: &Corrections,
) -> Result<ModelAnalysis, Error> {
    let drafter = model.mtp_drafter().ok_or_else(|| {
        Error::InvalidInput(format!(
            "{} has no multi-token-prediction layers to draft with",
            model.key
        ))
    })?;
    run_step(hardware, (&drafter, true), config, step, parallelism, corrections)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Workload;
    use crate::model::find_model;
    use crate::quant_config::find_quant_config;
    use roofline_base::hardware::find_hardware;

    #[test]
    fn the_drafter_is_one_layer_with_its_input_projection() {
        let model = find_model("deepseek-v3").unwrap();
        let bf16 = find_quant_config("bf16").unwrap();
        // DeepSeek-V3's MTP layer in BF16: MLA 187,105,280 (7168·1536 + 1536·128·192 + 7168·576 + 512·128·256
        // + 128·128·7168) + 257 experts of 3·7168·2048 (11,318,329,344) + router 7168·256 (1,835,008) + norms
        // 2·7168 + 1536 + 512 (16,384) + eh_proj 2·7168² (102,760,448) + enorm and hnorm (14,336)
        // = 11,610,060,800 parameters · 2 B.
        assert_eq!(model.mtp_weight_bytes(bf16), 23_220_121_600.0);
        let step = StepBatch::of(&Workload::decode(16, 2048));
        let h200 = find_hardware("h200_sxm").unwrap();
        let draft =
            analyze_mtp_step(h200, model, bf16, &step, &Parallelism::SINGLE, &Corrections::NONE).unwrap();
        let eh = draft.ops.iter().find(|o| o.name == "mtp_eh_proj").unwrap();
        // 16 tokens · 7168 · 14,336 · 2 FLOPs, once.
        assert_eq!((eh.count, eh.flops), (1, 2.0 * 16.0 * 7168.0 * 14_336.0));
        assert!(draft.ops.iter().all(|o| o.count <= 2), "one layer");
        // A model without MTP layers has no drafter.
        let llama = find_model("llama-3.1-8b").unwrap();
        let error = analyze_mtp_step(h200, llama, bf16, &step, &Parallelism::SINGLE, &Corrections::NONE);
        assert!(matches!(error, Err(Error::InvalidInput(m)) if m.contains("no multi-token-prediction")));
    }
}
