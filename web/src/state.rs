//! Page state: the scenario being looked at, with the domain methods that evaluate it through `roofline_core`.

use roofline_core::{Error, HardwareSpec, Operator, Precision, Prediction, catalog, predict};

/// Precisions ticked by default in the kernel view.
pub const DEFAULT_PRECISIONS: [Precision; 6] =
    [Precision::Fp16, Precision::Bf16, Precision::Fp8E4M3, Precision::Nvfp4, Precision::Int8, Precision::Int4];

/// A named GEMV/GEMM shape offered as a one-click preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuickShape {
    /// Button label.
    pub label: &'static str,
    /// Rows of the activation (batch × tokens).
    pub m: u64,
    /// Output features.
    pub n: u64,
    /// Input features.
    pub k: u64,
}

/// The kernel view's quick shapes (Llama-3-8B sizes).
pub const QUICK_SHAPES: [QuickShape; 3] = [
    QuickShape { label: "Decode 1×4096×4096", m: 1, n: 4096, k: 4096 },
    QuickShape { label: "FFN 1×14336×4096", m: 1, n: 14336, k: 4096 },
    QuickShape { label: "Prefill 2048×4096×4096", m: 2048, n: 4096, k: 4096 },
];

/// A matrix-multiply spot check: one shape in several precisions on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSpec {
    /// Rows of the activation; 1 means GEMV.
    pub m: u64,
    /// Output features.
    pub n: u64,
    /// Input features.
    pub k: u64,
    /// Precisions to evaluate, in display order.
    pub precisions: Vec<Precision>,
}

impl Default for KernelSpec {
    /// GEMV 1×4096×4096 in the default precisions (the e2e test's scenario on GB10).
    fn default() -> Self {
        KernelSpec { m: 1, n: 4096, k: 4096, precisions: DEFAULT_PRECISIONS.to_vec() }
    }
}

/// One precision's outcome in the kernel view.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    /// The precision asked for.
    pub precision: Precision,
    /// The operator (GEMV when M = 1), or why the shape is invalid.
    pub op: Result<Operator, Error>,
    /// The prediction, or why there is none (unsupported precision, invalid shape).
    pub prediction: Result<Prediction, Error>,
}

impl KernelSpec {
    /// Evaluates every precision on `hw`; unsupported ones stay in the list as errors.
    #[must_use]
    pub fn evaluate(&self, hw: &HardwareSpec) -> Vec<KernelRow> {
        self.precisions
            .iter()
            .map(|&precision| {
                let op = Operator::matmul(self.m, self.n, self.k, precision.into());
                let prediction = op.clone().and_then(|op| predict(hw, &op));
                KernelRow { precision, op, prediction }
            })
            .collect()
    }

    /// Adds `p` if absent (keeping [`Precision::ALL`] order) or removes it if present.
    pub fn toggle(&mut self, p: Precision) {
        if self.precisions.contains(&p) {
            self.precisions.retain(|q| *q != p);
        } else {
            self.precisions.push(p);
            self.precisions.sort_by_key(|q| Precision::ALL.iter().position(|a| a == q));
        }
    }
}

/// Finds a device among the catalog and the user's custom devices (custom keys shadow nothing: they are
/// validated to differ from catalog keys when added).
#[must_use]
pub fn resolve_hardware(key: &str, custom: &[HardwareSpec]) -> Option<HardwareSpec> {
    custom
        .iter()
        .find(|h| h.key == key)
        .cloned()
        .or_else(|| roofline_core::find_hardware(key).ok().cloned())
}

/// Every selectable device: the catalog, then custom ones.
pub fn all_hardware(custom: &[HardwareSpec]) -> impl Iterator<Item = &HardwareSpec> {
    catalog().iter().chain(custom.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_scenario_reproduces_core_gb10_gemv() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let rows = KernelSpec::default().evaluate(&hw);
        let fp16 = rows.iter().find(|r| r.precision == Precision::Fp16).unwrap();
        assert!((fp16.prediction.as_ref().unwrap().time_s - 122.970_021_978e-6).abs() < 1e-12);
        let int4 = rows.iter().find(|r| r.precision == Precision::Int4).unwrap();
        assert!(matches!(int4.prediction, Err(Error::Unsupported { .. })), "INT4 on GB10 is reported, not dropped");
        assert_eq!(rows.len(), DEFAULT_PRECISIONS.len());
    }

    #[test]
    fn toggle_keeps_canonical_order() {
        let mut spec = KernelSpec { precisions: vec![Precision::Int8], ..KernelSpec::default() };
        spec.toggle(Precision::Fp16);
        assert_eq!(spec.precisions, vec![Precision::Fp16, Precision::Int8]);
        spec.toggle(Precision::Int8);
        assert_eq!(spec.precisions, vec![Precision::Fp16]);
    }

    #[test]
    fn invalid_shape_is_an_error_row() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let rows = KernelSpec { n: 0, ..KernelSpec::default() }.evaluate(&hw);
        assert!(rows.iter().all(|r| matches!(r.prediction, Err(Error::InvalidInput(_)))));
    }
}
