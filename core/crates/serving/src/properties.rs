//! Property tests: no input panics, time never falls when a dimension grows, narrower weights never move
//! more bytes.

use proptest::prelude::*;

use crate::advisor::advise_operator;
use roofline_analysis::analysis::{Phase, Workload, analyze_model};
use roofline_analysis::corrections::{Corrections, analyze_operator};
use roofline_analysis::model::{ModelConfig, model_presets};
use roofline_analysis::ops::{AttentionShape, GemmShape, MoeShape, Operator};
use roofline_analysis::quant_config::{QuantConfig, quant_configs};
use roofline_analysis::roofline::predict;
use roofline_base::hardware::{HardwareSpec, catalog};
use roofline_base::precision::Precision;

/// Any catalog device, preset and precision config: the whole lists, however long they grow.
fn device() -> impl Strategy<Value = HardwareSpec> {
    prop::sample::select(catalog())
}

fn model() -> impl Strategy<Value = ModelConfig> {
    prop::sample::select(model_presets())
}

fn config() -> impl Strategy<Value = QuantConfig> {
    prop::sample::select(quant_configs())
}

fn precision() -> impl Strategy<Value = Precision> {
    prop::sample::select(Precision::ALL.to_vec())
}

fn phase() -> impl Strategy<Value = Phase> {
    prop::sample::select(vec![Phase::Prefill, Phase::Decode])
}

/// Corrections that keep time monotonic (wave quantization does not: a partial wave can become full).
fn monotonic_corrections() -> impl Strategy<Value = Corrections> {
    any::<bool>().prop_map(|realistic| Corrections {
        wave_quantization: false,
        ..if realistic {
            Corrections::ALL
        } else {
            Corrections::NONE
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_input_panics(
        hw in device(), model in model(), config in config(), phase in phase(),
        batch in any::<u32>(), context in any::<u32>(), dims in prop::array::uniform4(any::<u64>()),
        p in precision(), fused in any::<bool>(), causal in any::<bool>(), wave in any::<bool>(),
    ) {
        let hardware = &if wave { hw.reference().unwrap() } else { hw };
        let corrections = Corrections { wave_quantization: wave, ..Corrections::ALL };
        let workload = Workload { phase, batch, context };
        let analysis = analyze_model(hardware, &model, &config, &workload, &corrections);
        if let Ok(a) = analysis {
            prop_assert!(a.total_time_s.is_finite() && a.total_time_s > 0.0);
        }
        let [a, b, c, d] = dims;
        for op in [Operator::gemm(a, b, c, p.into()), Operator::batched_gemm(a, b, c, d, p.into()), Operator::rope(a, b, c, d, p)]
            .into_iter()
            .flatten()
        {
            if let Ok(r) = analyze_operator(hardware, &op, &corrections) {
                prop_assert!(r.time_s.is_finite() && r.time_s > 0.0);
            }
        }
        let shape = AttentionShape { batch: a, query_len: b, kv_len: c, heads: d, kv_heads: a, head_dim: b, causal, fused, shared_kv: fused, window: None };
        if let Ok(ops) = Operator::attention(&shape, p.into()) {
            for op in ops {
                if let Ok(r) = predict(hardware, &op) {
                    prop_assert!(r.time_s.is_finite());
                }
            }
        }
        let moe = MoeShape { tokens: a, experts: b, top_k: c, hidden: d, expert_ffn: a, gated: causal };
        if let Ok(ops) = Operator::moe_experts(&moe, p.into(), p.default_output().into()) {
            prop_assert!(ops.iter().all(|o| o.bytes().is_finite()));
        }
        let _ = advise_operator(hardware, GemmShape { batch: 1, m: a, n: b, k: c }, config.key.as_str(), &corrections);
    }

    #[test]
    fn model_time_grows_with_batch_and_context(
        hardware in device(), model in model(), config in config(), phase in phase(),
        batch in 1..64u32, context in 1..8192u32, extra in 1..64u32, corrections in monotonic_corrections(),
    ) {
        let run = |batch, context| analyze_model(&hardware, &model, &config, &Workload { phase, batch, context }, &corrections);
        if let Ok(base) = run(batch, context) {
            let more_batch = run(batch + extra, context).unwrap();
            let more_context = run(batch, context + extra).unwrap();
            prop_assert!(more_batch.total_time_s >= base.total_time_s * (1.0 - 1e-12));
            prop_assert!(more_context.total_time_s >= base.total_time_s * (1.0 - 1e-12));
            prop_assert!(more_batch.kv_cache_bytes > base.kv_cache_bytes);
        }
    }

    #[test]
    fn gemm_time_grows_with_each_dimension(
        hardware in device(), p in precision(), m in 1..4096u64, n in 1..8192u64, k in 1..8192u64,
        extra in 1..512u64, corrections in monotonic_corrections(),
    ) {
        let time = |m, n, k| {
            Operator::matmul(m, n, k, p.into()).and_then(|op| analyze_operator(&hardware, &op, &corrections)).map(|a| a.time_s)
        };
        if let Ok(base) = time(m, n, k) {
            for grown in [time(m + extra, n, k), time(m, n + extra, k), time(m, n, k + extra)] {
                prop_assert!(grown.unwrap() >= base * (1.0 - 1e-12));
            }
        }
    }

    #[test]
    fn fewer_weight_bits_never_read_more_bytes(
        a in precision(), b in precision(), n in 1..64u64, k in 1..64u64, m in 1..16u64,
    ) {
        // Whole blocks and super-blocks (dims multiples of 128): every block format's overhead is exact.
        let (n, k) = (128 * n, 128 * k);
        let (narrow, wide) = if a.effective_bits() <= b.effective_bits() { (a, b) } else { (b, a) };
        let activation = Precision::Fp16;
        let op = |w| Operator::gemm(m, n, k, roofline_analysis::ops::OperandPrecisions { weight: w, activation, output: activation }).unwrap();
        let (narrow_op, wide_op) = (op(narrow), op(wide));
        if narrow.effective_bits() < wide.effective_bits() {
            prop_assert!(narrow_op.weight_bytes <= wide_op.weight_bytes, "{narrow} {wide}");
            prop_assert!(narrow_op.bytes() <= wide_op.bytes());
        }
    }
}
