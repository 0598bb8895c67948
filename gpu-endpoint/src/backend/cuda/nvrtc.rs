//! NVRTC kernels (`kernels.cu`, compiled once per process) and the measurements that use them: the W4A16
//! dequantizing GEMV and the DRAM copy. [`CudaBackend::load_module`] is the one NVRTC compile-and-load path
//! (the step kernels of `step_ops` use it too) and [`cached`] the one compile-once slot.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use roofline_core::{GemmShape, OperandPrecisions, Operator, Precision};

use super::buffers::{Elem, HostBuf};
use super::inputs::int4_at;
use super::{CudaBackend, cuda_err, to_usize};
use crate::backend::{BackendError, MatmulSpec, Measured, MeasuredBandwidth};
use crate::protocol::{measurement, normal_values, verify_with};

/// Weights per FP16 scale in the W4A16 kernel.
const W4A16_GROUP: usize = 128;

/// CUDA C source of these kernels and of the seeded-input generator (`inputs`).
pub(super) const KERNELS_SRC: &str = concat!(include_str!("kernels.cu"), include_str!("inputs.cu"));

/// NVRTC-compiled kernels, loaded once.
pub(super) struct Kernels {
    w4a16: CudaFunction,
    copy: CudaFunction,
    pub(super) flush_read: CudaFunction,
    pub(super) seeded_fill: CudaFunction,
}

/// The value in `slot`, made by `make` on first use (a failure is not kept, so the next call tries again).
pub(super) fn cached<T: Clone>(
    slot: &Mutex<Option<T>>,
    make: impl FnOnce() -> Result<T, BackendError>,
) -> Result<T, BackendError> {
    let mut slot = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(value) = slot.as_ref() {
        return Ok(value.clone());
    }
    let value = make()?;
    *slot = Some(value.clone());
    Ok(value)
}

/// Compiles CUDA C to PTX with NVRTC (C++14, NVRTC's default architecture; the driver JIT-compiles the PTX for
/// the device at load).
pub(super) fn compile(src: &str) -> Result<Ptx, BackendError> {
    cudarc::nvrtc::compile_ptx_with_opts(
        src,
        cudarc::nvrtc::CompileOptions {
            options: vec!["-std=c++14".into()],
            ..Default::default()
        },
    )
    .map_err(|e| cuda_err("NVRTC compile", e))
}

/// Whether NVRTC loads, for a kernel compile test; otherwise the test prints `SKIPPED <test>: …` on the real
/// stderr (scripts/test.sh counts it, never as passed) or, in CI (`CI` set), fails.
#[cfg(test)]
pub(super) fn nvrtc_for_tests() -> bool {
    use std::io::Write;
    // SAFETY: `is_culib_present` only attempts to dlopen the library.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return true;
    }
    let reason = "libnvrtc not found (scripts/install-tools.sh installs it, scripts/env.sh puts it on LD_LIBRARY_PATH)";
    assert!(std::env::var_os("CI").is_none(), "{reason}");
    let name = std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_owned();
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {name}: {reason}");
    false
}

impl CudaBackend {
    /// `src` compiled for this device's architecture with `defines` (`-DNAME=value`), loaded once per `key`
    /// (the kernels that need sm_80+ instructions: mma.sync, cp.async, FP8 conversions).
    pub(super) fn variant_module(
        &self,
        key: &str,
        src: &str,
        defines: Vec<String>,
    ) -> Result<Arc<CudaModule>, BackendError> {
        let mut modules = self
            .variant_modules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(module) = modules.get(key) {
            return Ok(Arc::clone(module));
        }
        let mut options = vec![
            "-std=c++14".to_owned(),
            format!("--gpu-architecture=compute_{}{}", self.cc.0, self.cc.1),
        ];
        options.extend(defines);
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(
            src,
            cudarc::nvrtc::CompileOptions {
                options,
                ..Default::default()
            },
        )
        .map_err(|e| cuda_err(&format!("NVRTC compile of {key}"), e))?;
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| cuda_err(&format!("load module {key}"), e))?;
        modules.insert(key.to_owned(), Arc::clone(&module));
        Ok(module)
    }

    /// Compiles `src` and loads it as a module of this context.
    pub(super) fn load_module(&self, src: &str) -> Result<Arc<CudaModule>, BackendError> {
        self.ctx
            .load_module(compile(src)?)
            .map_err(|e| cuda_err("load module", e))
    }

    pub(super) fn kernels(&self) -> Result<Arc<Kernels>, BackendError> {
        cached(&self.kernels, || {
            let module = self.load_module(KERNELS_SRC)?;
            Ok(Arc::new(Kernels {
                w4a16: module
                    .load_function("w4a16_gemv")
                    .map_err(|e| cuda_err("load w4a16_gemv", e))?,
                copy: module
                    .load_function("copy_f4")
                    .map_err(|e| cuda_err("load copy_f4", e))?,
                flush_read: module
                    .load_function("flush_read")
                    .map_err(|e| cuda_err("load flush_read", e))?,
                seeded_fill: module
                    .load_function("seeded_fill")
                    .map_err(|e| cuda_err("load seeded_fill", e))?,
            }))
        })
    }

    pub(super) fn measure_w4a16(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        let GemmShape {
            m,
            n: n_req,
            k: k_req,
            ..
        } = spec.shape;
        if m > 1 {
            return Err(BackendError::Unsupported(format!(
                "INT4 GEMM (M = {m}) has no native tensor path on {} ({}); only the W4A16 GEMV (M = 1) is implemented",
                self.arch(),
                self.name
            )));
        }
        let seed = n_req ^ (k_req << 32) ^ 0x4a16;
        let (n, k_req) = (to_usize(n_req)?, to_usize(k_req)?);
        let k = k_req.next_multiple_of(W4A16_GROUP);
        let padding = (k != k_req).then(|| format!("K {k_req} padded to {k} (group size {W4A16_GROUP})"));
        // The weights (N·K, the large operand) are written on the device; the scales and x are small.
        let w_dev = self.device_int4(seed, n * k)?;
        let scales: Vec<half::f16> = normal_values(seed + 1, n * k / W4A16_GROUP)
            .iter()
            .map(|v| half::f16::from_f32(0.01 + v.abs() * 0.01))
            .collect();
        let x: Vec<half::f16> = normal_values(seed + 2, k)
            .iter()
            .map(|&v| half::f16::from_f32(v))
            .collect();
        let kernels = self.kernels()?;
        let s_dev = self
            .stream
            .clone_htod(&scales)
            .map_err(|e| cuda_err("upload", e))?;
        let x_dev = self.stream.clone_htod(&x).map_err(|e| cuda_err("upload", e))?;
        let mut y_dev = self
            .stream
            .alloc_zeros::<half::f16>(n)
            .map_err(|e| cuda_err("alloc", e))?;
        let (n_i, k_i) = (
            i32::try_from(n).map_err(|_| BackendError::InvalidInput("N too large".into()))?,
            i32::try_from(k).map_err(|_| BackendError::InvalidInput("K too large".into()))?,
        );
        let threads = 256u32;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from((n * 32).div_ceil(threads as usize)).unwrap_or(u32::MAX),
                1,
                1,
            ),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = |y_dev: &mut CudaSlice<half::f16>| -> Result<(), BackendError> {
            let mut builder = self.stream.launch_builder(&kernels.w4a16);
            builder
                .arg(&w_dev)
                .arg(&s_dev)
                .arg(&x_dev)
                .arg(y_dev)
                .arg(&n_i)
                .arg(&k_i);
            // SAFETY: the kernel reads N·K/8 u32 words, N·K/128 scales and K activations and writes N
            // outputs — exactly the sizes allocated above; K is a multiple of 128 (padded).
            unsafe { builder.launch(cfg) }
                .map(|_| ())
                .map_err(|e| cuda_err("w4a16_gemv launch", e))
        };
        launch(&mut y_dev)?;
        let y = self
            .stream
            .clone_dtoh(&y_dev)
            .map_err(|e| cuda_err("download", e))?;
        verify_with(
            (1, n, k),
            |_, kk| f64::from(x[kk].to_f32()),
            |kk, j| {
                f64::from(scales[(j * k + kk) / W4A16_GROUP].to_f32()) * f64::from(int4_at(seed, j * k + kk))
            },
            |_, j| f64::from(y[j].to_f32()),
            1e-2,
            seed,
        )?;
        let (stats, telemetry) = self.protocol(&mut || launch(&mut y_dev))?;
        // INT4 with an FP16 scale per 128 weights: 4.125 bits per weight, the scales counted as traffic.
        let operands = OperandPrecisions {
            weight: Precision::Int4G128,
            activation: Precision::Fp16,
            output: Precision::Fp16,
        };
        let op = Operator::gemv(n as u64, k as u64, operands)
            .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        let kernel = format!(
            "W4A16-dequant (NVRTC w4a16_gemv: INT4 weights, FP16 scale per {W4A16_GROUP}, FP16 x/y, FP32 accumulate, warp per row, 16-byte loads)"
        );
        Ok(Measured {
            op,
            precision: Precision::Int4,
            label_suffix: " W4A16-dequant".into(),
            measurement: measurement(
                self.run_info("NVRTC".into(), kernel, true, padding),
                &stats,
                telemetry,
            ),
        })
    }

    /// DRAM bandwidth of the `copy_f4` kernel over max(8 × L2, 1 GiB) (at most a quarter of free memory).
    pub(super) fn measure_copy(&self) -> Result<MeasuredBandwidth, BackendError> {
        let kernels = self.kernels()?;
        let free = self.ctx.mem_get_info().map_or(0, |(free, _)| free);
        let bytes = (8 * self.l2_bytes).max(1 << 30).min(free / 4) / 16 * 16;
        let n4 = bytes / 16;
        let src = self.device_normal(Elem::F32, 11, bytes / 4)?;
        let mut dst = self
            .stream
            .alloc_zeros::<f32>(bytes / 4)
            .map_err(|e| cuda_err("alloc", e))?;
        let n4_u64 = n4 as u64;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(n4.div_ceil(4 * 256))
                    .map_err(|_| BackendError::InvalidInput("copy buffer too large".into()))?,
                1,
                1,
            ),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (src_ptr, _src_guard) = src.ptr(&self.stream);
        let launch = |dst: &mut CudaSlice<f32>| -> Result<(), BackendError> {
            let mut builder = self.stream.launch_builder(&kernels.copy);
            builder.arg(&src_ptr).arg(dst).arg(&n4_u64);
            // SAFETY: src and dst hold `bytes` bytes = n4 float4 values each (16-byte aligned allocations).
            unsafe { builder.launch(cfg) }
                .map(|_| ())
                .map_err(|e| cuda_err("copy_f4 launch", e))
        };
        launch(&mut dst)?;
        // The whole output against the source, both read back (nothing regenerated on the host).
        let back = self
            .stream
            .clone_dtoh(&dst)
            .map_err(|e| cuda_err("download", e))?;
        if !matches!(src.download(&self.stream)?, HostBuf::F32(v) if v == back) {
            return Err(BackendError::Verification(
                "copy kernel output differs from its input".into(),
            ));
        }
        let (stats, telemetry) = self.protocol(&mut || launch(&mut dst))?;
        let kernel = format!(
            "NVRTC copy_f4 float4 copy (16 KiB per block), {} MiB → {} MiB",
            bytes >> 20,
            bytes >> 20
        );
        Ok(MeasuredBandwidth {
            bytes: 2.0 * bytes as f64,
            measurement: measurement(
                self.run_info("NVRTC".into(), kernel, true, None),
                &stats,
                telemetry,
            ),
        })
    }
}
