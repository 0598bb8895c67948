//! The GPU layouts one replica can take on a device ([`layouts`]): tensor parallel over 1, 2, 4 and 8 GPUs
//! of its scale-up domain and, for a mixture-of-experts model, the same with the experts divided between
//! those GPUs (vLLM's `--enable-expert-parallel`, where the expert degree is the tensor degree).

use roofline_analysis::model::ModelConfig;
use roofline_analysis::parallel::Parallelism;
use roofline_base::hardware::HardwareSpec;

/// The GPU counts a layout sweep tries, in order: one 8-GPU node's tensor-parallel groups (the group sizes
/// serving engines run within one node; InferenceX sweeps the same TP 1–8).
pub const LAYOUT_GPUS: [u32; 4] = [1, 2, 4, 8];

/// Every layout of [`LAYOUT_GPUS`] that `model` splits evenly and `hardware`'s scale-up domain holds, fewest
/// GPUs first; for a MoE model each count over one GPU comes twice, experts split like the dense FFN (EP 1)
/// and divided between the GPUs (EP = TP). A device without a published interconnect gets one GPU only.
///
/// # Examples
/// ```
/// use roofline_base::hardware::find_hardware;
/// use roofline_analysis::find_model;
/// use roofline_serving::layouts;
/// let h100 = find_hardware("h100_sxm").unwrap();
/// let dense = layouts(find_model("llama-3.1-70b").unwrap(), h100);
/// assert_eq!(dense.iter().map(|p| p.gpus()).collect::<Vec<_>>(), [1, 2, 4, 8]);
/// let moe = layouts(find_model("mixtral-8x7b").unwrap(), h100);
/// assert!(moe.iter().any(|p| p.tensor == 8 && p.expert == 8));
/// ```
#[must_use]
pub fn layouts(model: &ModelConfig, hardware: &HardwareSpec) -> Vec<Parallelism> {
    LAYOUT_GPUS
        .iter()
        .flat_map(|&gpus| {
            let experts = if model.moe.is_some() && gpus > 1 {
                vec![1, gpus]
            } else {
                vec![1]
            };
            experts.into_iter().map(move |expert| Parallelism {
                tensor: gpus,
                expert,
                pipeline: 1,
            })
        })
        .filter(|p| p.check(model, hardware).is_ok())
        .collect()
}

/// A layout in words: `1 GPU`, `4 GPUs (TP 4)` or `8 GPUs (TP 8, EP 8)`.
#[must_use]
pub fn layout_name(p: &Parallelism) -> String {
    match (p.gpus(), p.expert) {
        (1, _) => "1 GPU".to_owned(),
        (n, 1) => format!("{n} GPUs (TP {n})"),
        (n, e) => format!("{n} GPUs (TP {n}, EP {e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_analysis::model::find_model;
    use roofline_base::hardware::find_hardware;

    fn shapes(model: &str, device: &str) -> Vec<(u32, u32)> {
        layouts(find_model(model).unwrap(), find_hardware(device).unwrap())
            .iter()
            .map(|p| (p.tensor, p.expert))
            .collect()
    }

    #[test]
    fn layouts_follow_the_heads_the_experts_and_the_domain() {
        // Llama-3.1-70B: 64 heads, 8 KV heads; an H100 SXM's NVLink domain holds 8.
        assert_eq!(
            shapes("llama-3.1-70b", "h100_sxm"),
            [(1, 1), (2, 1), (4, 1), (8, 1)]
        );
        // DeepSeek-R1 (256 experts) on a B200: EP 1 and EP = TP on every count over one.
        assert_eq!(
            shapes("deepseek-r1", "b200"),
            [(1, 1), (2, 1), (2, 2), (4, 1), (4, 4), (8, 1), (8, 8)]
        );
        // Gemma 3 12B has 16 heads but 8 KV heads: all four counts divide both.
        assert_eq!(shapes("gemma-3-12b", "h100_sxm").len(), 4);
        // Mixtral's 8 experts divide 2, 4 and 8.
        assert!(shapes("mixtral-8x7b", "h100_sxm").contains(&(8, 8)));
    }

    #[test]
    fn a_device_without_a_link_gets_one_gpu() {
        let rtx = find_hardware("rtx_4090").unwrap();
        assert!(
            rtx.interconnect.is_none(),
            "an RTX 4090 has no scale-up link in the catalog"
        );
        assert_eq!(shapes("llama-3.1-8b", "rtx_4090"), [(1, 1)]);
        // GB10's NVLink-C2C domain is one GPU.
        assert_eq!(shapes("llama-3.1-8b", "gb10"), [(1, 1)]);
    }

    #[test]
    fn names_say_the_split() {
        assert_eq!(layout_name(&Parallelism::SINGLE), "1 GPU");
        assert_eq!(layout_name(&Parallelism::tensor(4)), "4 GPUs (TP 4)");
        let ep = Parallelism {
            tensor: 8,
            expert: 8,
            pipeline: 1,
        };
        assert_eq!(layout_name(&ep), "8 GPUs (TP 8, EP 8)");
    }
}
