//! Run-time quantization in a model step on CUDA (`quantize.cu`): the absolute maximum of a dynamic per-tensor
//! scale, per-tensor and per-row (per token, or FP8 1×128 groups) quantization, and the KV-cache write into an
//! FP8 cache. Sources BF16, FP16 or FP32; targets FP8 E4M3/E5M2 (sm_89 and later) or INT8. Each output is
//! checked against the stored input: scales exactly (FP32), quantized values within half a step of the format.

use std::rc::Rc;

use roofline_core::{Operator, Precision, QuantizeKernel};

use super::buffers::{DeviceBuf, Elem, HostBuf};
use super::launch::{Format, Launch, Scalar, Verified, len_of};
use super::{CudaBackend, cuda_err};
use crate::backend::BackendError;
use crate::backend::step_reference::checked_rows;
use crate::protocol::try_random_normal;

/// CUDA C source of the quantization kernels.
const QUANTIZE_SRC: &str = include_str!("quantize.cu");
/// Elements per group of the FP8 block-scaled activations (DeepSeek-V3's 1×128).
const FP8_GROUP: usize = 128;

/// A quantization target: its kernel-name suffix, element format and largest finite value.
#[derive(Debug, Clone, Copy)]
struct Target {
    suffix: &'static str,
    elem: Elem,
    max: f32,
}

impl Target {
    fn of(p: Precision) -> Option<Target> {
        let (suffix, elem, max) = match p {
            Precision::Fp8E4M3 | Precision::Fp8Group128 => ("e4m3", Elem::E4M3, 448.0),
            Precision::Fp8E5M2 => ("e5m2", Elem::E5M2, 57_344.0),
            Precision::Int8 => ("i8", Elem::I8, 127.0),
            _ => return None,
        };
        Some(Target { suffix, elem, max })
    }

    /// Whether `got` is `reference` rounded to this format: within half a step (3 mantissa bits for E4M3, 2 for
    /// E5M2, unit steps for INT8, the subnormal step near 0), after saturation at the largest value.
    fn rounds_to(self, got: f64, reference: f64) -> bool {
        let max = f64::from(self.max);
        let r = reference.clamp(-max, max);
        let half_step = match self.elem {
            Elem::E4M3 => (r.abs() * 2f64.powi(-4)).max(2f64.powi(-10)),
            Elem::E5M2 => (r.abs() * 2f64.powi(-3)).max(2f64.powi(-17)),
            _ => 0.5,
        };
        (got - r).abs() <= half_step * (1.0 + 1e-6)
    }
}

impl CudaBackend {
    /// The source and target of a quantizing operator, or why no kernel runs it here.
    fn quantize_formats(&self, op: &Operator, to: Precision) -> Result<(Format, Target), BackendError> {
        let unsupported = |why: String| {
            BackendError::Unsupported(format!(
                "{}: {} → {to}: {why} on {} ({})",
                op.name,
                op.precisions.activation,
                self.arch(),
                self.name
            ))
        };
        let source = Format::of(op.precisions.activation)
            .ok_or_else(|| unsupported("the quantization kernels read FP32, BF16 or FP16".into()))?;
        let target = Target::of(to)
            .ok_or_else(|| unsupported("no CUDA quantization kernel for this format".into()))?;
        if matches!(target.elem, Elem::E4M3 | Elem::E5M2) && self.cc < (8, 9) {
            return Err(unsupported("FP8 conversions need sm_89".into()));
        }
        Ok((source, target))
    }

    /// An absolute-maximum reduction or a quantization of `rows` × `width` inputs (`op.quantize` says which
    /// engine kernel: per tensor with a known scale, per row, or per 1×128 group for `Fp8Group128`).
    ///
    /// # Errors
    /// [`BackendError::Unsupported`] for block (FP4/MX) quantization, other formats and FP8 before sm_89;
    /// verification and CUDA errors.
    pub(super) fn quantize(
        &self,
        op: &Operator,
        kind: roofline_core::ops::RowKind,
        rows: usize,
        width: usize,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let to = op.precisions.weight;
        let (source, target) = self.quantize_formats(op, to)?;
        let n = len_of(rows, width)?;
        let step = match (kind, op.quantize) {
            (roofline_core::ops::RowKind::AbsMax, _) => "abs_max",
            (_, Some(QuantizeKernel::PerTensor) | None) => "quantize_tensor",
            (_, Some(QuantizeKernel::PerRow)) => "quantize_rows",
            (_, Some(other)) => {
                return Err(BackendError::Unsupported(format!(
                    "{}: no CUDA step kernel for the {} on {} ({})",
                    op.name,
                    other.name(),
                    self.arch(),
                    self.name
                )));
            }
        };
        let group = if to == Precision::Fp8Group128 {
            FP8_GROUP
        } else {
            width
        };
        if !width.is_multiple_of(2) || !width.is_multiple_of(group) {
            return Err(BackendError::InvalidInput(format!(
                "{}: rows of {width} elements do not split into pairs and groups of {group}",
                op.name
            )));
        }
        let name = format!("{step}_{}_{}", source.suffix(), target.suffix);
        let x_host = source.elem.encode(&try_random_normal::<BackendError>(seed, n)?);
        let x = Rc::new(x_host.upload(&self.stream)?);
        // The per-tensor kernel reads the scale the absolute maximum gives (computed here from the stored input).
        let amax = (0..n).map(|i| x_host.get(i).abs()).fold(0.0f64, f64::max) as f32;
        let tensor_scale = amax * (1.0 / target.max);
        let (inputs, outputs, scalars, threads) = match step {
            "abs_max" => (
                vec![x],
                vec![Elem::F32.zeros(&self.stream, 1)?],
                vec![Scalar::Size(n as u64)],
                n,
            ),
            "quantize_tensor" => (
                vec![x, Rc::new(HostBuf::F32(vec![tensor_scale]).upload(&self.stream)?)],
                vec![target.elem.zeros(&self.stream, n)?],
                vec![Scalar::Size(n as u64)],
                n / 2,
            ),
            _ => (
                vec![x],
                vec![
                    target.elem.zeros(&self.stream, n)?,
                    Elem::F32.zeros(&self.stream, n / group)?,
                ],
                vec![
                    Scalar::Size((n / group) as u64),
                    Scalar::Int(i32::try_from(group).unwrap_or(i32::MAX)),
                ],
                (n / group) * 32,
            ),
        };
        let launch = self.quantize_launch(&name, threads, inputs, outputs, scalars)?;
        let access = match step {
            "abs_max" => "grid-stride, block max, atomicMax of the FP32 scale".to_owned(),
            "quantize_tensor" => "grid-stride pairs, per-tensor FP32 scale, saturating conversion".to_owned(),
            _ => format!("warp per group of {group}, FP32 scale per group, saturating conversion"),
        };
        // SAFETY (enqueued by `verified`): the kernels read n source elements (and one scale), write n target
        // elements (pairs: n even, checked above), one scale or n / group scales, as allocated above.
        self.verified(launch, access, |outputs| {
            let check_values = |y: &HostBuf, scale_of: &dyn Fn(usize) -> f32| {
                for row in checked_rows(rows, seed) {
                    for col in 0..width {
                        let i = row * width + col;
                        let inv = 1.0 / scale_of(i / group);
                        let reference = f64::from(x_host.get(i) as f32 * inv);
                        if !target.rounds_to(y.get(i), reference) {
                            return Err(BackendError::Verification(format!(
                                "{name}: element {i} = {}, reference {reference}",
                                y.get(i)
                            )));
                        }
                    }
                }
                Ok(())
            };
            match step {
                "abs_max" => check_scale(&name, outputs[0].get(0), tensor_scale),
                "quantize_tensor" => check_values(&outputs[0], &|_| tensor_scale),
                _ => {
                    for g in checked_rows(n / group, seed) {
                        let m = (0..group)
                            .map(|j| x_host.get(g * group + j).abs())
                            .fold(0.0, f64::max);
                        check_scale(&name, outputs[1].get(g), m as f32 * (1.0 / target.max))?;
                    }
                    check_values(&outputs[0], &|g| outputs[1].get(g) as f32)
                }
            }
        })
    }

    /// The launch of `name` from quantize.cu over `threads` grid-stride threads.
    fn quantize_launch(
        &self,
        name: &str,
        threads: usize,
        inputs: Vec<Rc<DeviceBuf>>,
        outputs: Vec<DeviceBuf>,
        scalars: Vec<Scalar>,
    ) -> Result<Launch, BackendError> {
        let module = self.variant_module("quantize", QUANTIZE_SRC, Vec::new())?;
        let function = module
            .load_function(name)
            .map_err(|e| cuda_err(&format!("load {name}"), e))?;
        Ok(Launch {
            name: name.to_owned(),
            function,
            cfg: self.grid_config(threads),
            inputs,
            outputs,
            scalars,
        })
    }

    /// A KV-cache write into an 8-bit cache: `n` new K and V elements scaled by the cache's static scale (1, as
    /// engines default without calibrated scales) and converted.
    ///
    /// # Errors
    /// As [`CudaBackend::quantize`].
    pub(super) fn kv_write_quantized(
        &self,
        op: &Operator,
        n: usize,
        seed: u64,
    ) -> Result<Verified, BackendError> {
        let (source, target) = self.quantize_formats(op, op.precisions.weight)?;
        if !n.is_multiple_of(2) {
            return Err(BackendError::InvalidInput(format!(
                "{}: an odd element count {n}",
                op.name
            )));
        }
        let name = format!("kv_write_{}_{}", source.suffix(), target.suffix);
        let x_host = source
            .elem
            .encode(&try_random_normal::<BackendError>(seed.wrapping_add(1), n)?);
        let x = Rc::new(x_host.upload(&self.stream)?);
        let launch = self.quantize_launch(
            &name,
            n / 2,
            vec![x],
            vec![target.elem.zeros(&self.stream, n)?],
            vec![Scalar::Size(n as u64), Scalar::Float(1.0)],
        )?;
        // SAFETY (enqueued by `verified`): kv_write reads n source elements and writes n cache elements.
        self.verified(
            launch,
            "grid-stride pairs, static scale 1, saturating conversion".into(),
            |outputs| {
                for i in checked_rows(n, seed) {
                    if !target.rounds_to(outputs[0].get(i), x_host.get(i)) {
                        return Err(BackendError::Verification(format!(
                            "{name}: element {i} = {}, reference {}",
                            outputs[0].get(i),
                            x_host.get(i)
                        )));
                    }
                }
                Ok(())
            },
        )
    }
}

/// A scale the kernel computed, against the same FP32 arithmetic on the stored input.
fn check_scale(name: &str, got: f64, expected: f32) -> Result<(), BackendError> {
    if (got - f64::from(expected)).abs() <= 1e-6 * f64::from(expected).abs() {
        Ok(())
    } else {
        Err(BackendError::Verification(format!(
            "{name}: scale {got}, reference {expected}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_checked_to_half_a_step_of_the_format() {
        let e4m3 = Target::of(Precision::Fp8E4M3).unwrap();
        // E4M3 steps of 1/8 between 1 and 2: 1.06 rounds to 1.0 or 1.125 (0.06 and 0.065 away, half a step at
        // 1.06 is 1.06/16 = 0.066), never to 1.25.
        assert!(e4m3.rounds_to(1.0, 1.06) && e4m3.rounds_to(1.125, 1.06) && !e4m3.rounds_to(1.25, 1.06));
        // Saturation: 500 becomes 448.
        assert!(e4m3.rounds_to(448.0, 500.0) && !e4m3.rounds_to(416.0, 500.0));
        let int8 = Target::of(Precision::Int8).unwrap();
        assert!(int8.rounds_to(3.0, 2.6) && !int8.rounds_to(2.0, 2.6) && int8.rounds_to(-127.0, -300.0));
        assert!(Target::of(Precision::Fp8Group128).is_some() && Target::of(Precision::Nvfp4).is_none());
    }

    /// Every kernel this module launches is in the NVRTC output for sm_90, where NVRTC is installed.
    #[test]
    fn every_quantization_kernel_compiles_with_nvrtc() {
        if !super::super::nvrtc::nvrtc_for_tests() {
            return;
        }
        let options = vec![
            "-std=c++14".to_owned(),
            "--gpu-architecture=compute_90".to_owned(),
        ];
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(
            QUANTIZE_SRC,
            cudarc::nvrtc::CompileOptions {
                options,
                ..Default::default()
            },
        )
        .unwrap()
        .to_src();
        for step in ["abs_max", "quantize_tensor", "quantize_rows", "kv_write"] {
            for source in ["bf16", "f16", "f32"] {
                for target in ["e4m3", "e5m2", "i8"] {
                    let name = format!("{step}_{source}_{target}");
                    assert!(ptx.contains(&format!(".entry {name}(")), "{name} missing");
                }
            }
        }
    }
}
