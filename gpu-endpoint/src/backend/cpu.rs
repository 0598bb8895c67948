//! The CPU backend: a real measurement of the host with the `gemm` crate (FP32 and FP64 GEMM/GEMV) and a
//! multi-threaded copy for memory bandwidth. Timing is wall clock (`Instant`); caches are flushed between
//! samples by touching a buffer larger than the last-level cache; the output of every shape is checked
//! against an `f64` reference on sampled entries before timing. Formats the CPU does not run natively
//! (FP16 matrix paths, FP8, INT4, NVFP4, …) are `unsupported`, never measured through a stand-in. The
//! other operators of a model step run in FP32 with plain loops (`cpu_ops`).

use gemm::Parallelism;
use roofline_core::wire::{BackendKind, DeviceInfo};
use roofline_core::{GemmShape, Operator, Precision};
use sysinfo::{MemoryRefreshKind, System};

use super::cpu_host::{CpuHost, GEMM_CRATE};
use super::cpu_ops::{self, Kernel};
use super::{Backend, BackendError, MatmulSpec, Measured, MeasuredBandwidth, StepTiming, prepare_step};
use crate::protocol::{
    SamplingPolicy, StopCheck, TelemetrySummary, check_interruption, measurement, stop_due,
    try_random_normal, verify_products, verify_sampled,
};

/// FLOPs of one block of rows of a CPU GEMM, between two checks of the point's limits: 2^33 (8.6 GFLOP,
/// about 0.1–0.2 s on a 2-core host at 40–80 GFLOP/s), so a GEMM too big for one run within the cap stops
/// within a block; a GEMM of fewer FLOPs is one call of the `gemm` crate, as before. A block re-packs B once
/// (K·N elements against 2·rows·K·N FLOPs: below 1 % of the work for the ≥ 64-row blocks of such shapes).
const GEMM_BLOCK_FLOP: f64 = 8_589_934_592.0;
/// Bytes of each copy buffer of the bandwidth kernel.
const COPY_BYTES: usize = 64 << 20;

/// The host CPU as a measurement device.
pub struct CpuBackend {
    memory_cap_bytes: u64,
    pub(super) host: CpuHost,
    copy_bytes: usize,
}

impl CpuBackend {
    /// Describes the host (CPU brand and RAM from `sysinfo`, last-level cache from sysfs); `memory_cap_bytes`
    /// bounds the buffers of one measurement.
    #[must_use]
    pub fn new(memory_cap_bytes: u64) -> CpuBackend {
        CpuBackend {
            memory_cap_bytes,
            host: CpuHost::detect(),
            copy_bytes: COPY_BYTES,
        }
    }

    /// Uses copy buffers of `bytes` each for the bandwidth kernel (tests use small ones).
    #[must_use]
    pub fn with_copy_bytes(mut self, bytes: usize) -> CpuBackend {
        self.copy_bytes = bytes.max(4096);
        self
    }

    /// Uses another sampling policy.
    #[must_use]
    pub fn with_policy(mut self, policy: SamplingPolicy) -> CpuBackend {
        self.host.policy = policy;
        self
    }

    /// Prepares `spec` with the `gemm` crate in `T`: seeded inputs (drawn under the point's limits, so a
    /// departed client or a passed cap stops even gigabytes of them within milliseconds), then the output
    /// checked against an `f64` reference on sampled entries (`rel_eps` per unit of K). A batched GEMM runs
    /// its products back to back, each with its own A and B; the first, last and one inner product are
    /// checked ([`verify_products`]).
    fn gemm_kernel<T>(
        &self,
        spec: &MatmulSpec,
        cast: fn(f32) -> T,
        rel_eps: f64,
    ) -> Result<Kernel, BackendError>
    where
        T: 'static + Copy + Default + Into<f64> + Send + Sync,
    {
        let GemmShape { batch, m, n, k } = spec.shape;
        let seed = m ^ (n << 20) ^ (k << 40) ^ batch.wrapping_sub(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let (batch, m, n, k) = (to_usize(batch)?, to_usize(m)?, to_usize(n)?, to_usize(k)?);
        let a: Vec<T> = try_random_normal::<BackendError>(seed, batch * m * k)?
            .into_iter()
            .map(cast)
            .collect();
        let b: Vec<T> = try_random_normal::<BackendError>(seed.wrapping_add(1), batch * k * n)?
            .into_iter()
            .map(cast)
            .collect();
        let mut c: Vec<T> = vec![T::default(); batch * m * n];
        let parallelism = if self.host.threads > 1 {
            Parallelism::Rayon(self.host.threads)
        } else {
            Parallelism::None
        };
        // Correctness gate on this very shape: sampled entries against an f64 dot product (unless the run was
        // stopped by the point's limits, which the check reports).
        let stop = StopCheck::current();
        let block_rows = ((GEMM_BLOCK_FLOP / (2.0 * n as f64 * k as f64)).ceil() as usize).clamp(1, m.max(1));
        let gemm = move |a: &[T], b: &[T], c: &mut [T]| {
            run_gemm_blocks((m, n, k), block_rows, (a, b, c), parallelism, stop.as_ref());
        };
        check_interruption::<BackendError>()?;
        gemm(&a, &b, &mut c);
        check_interruption::<BackendError>()?;
        let tolerance = (k as f64 * rel_eps).max(rel_eps * 16.0);
        verify_products(batch, seed, |p| {
            verify_sampled(
                (m, n, k),
                &a[p * m * k..(p + 1) * m * k],
                &b[p * k * n..(p + 1) * k * n],
                &c[p * m * n..(p + 1) * m * n],
                tolerance,
                seed ^ p as u64,
            )
        })?;
        let kind = match (batch, m) {
            (2.., _) => format!("batched GEMM of {batch} products back to back,"),
            (_, 0 | 1) => "GEMV".to_owned(),
            _ => "GEMM".to_owned(),
        };
        let blocks = m.div_ceil(block_rows);
        let label = format!(
            "gemm::gemm {} {kind} row-major, {} threads{}",
            spec.precision,
            self.host.threads,
            if blocks > 1 {
                format!(", {blocks} blocks of {block_rows} rows")
            } else {
                String::new()
            }
        );
        Ok(Kernel::new(label, move || {
            gemm(&a, &b, &mut c);
            std::hint::black_box(&c);
        }))
    }

    /// Prepares `spec` in its precision: FP32 or FP64, the formats the host runs natively.
    ///
    /// # Errors
    /// [`BackendError::Unsupported`] for any other precision; [`BackendError::Verification`].
    fn matmul_kernel(&self, spec: &MatmulSpec) -> Result<Kernel, BackendError> {
        match spec.precision {
            Precision::Fp32 => self.gemm_kernel::<f32>(spec, |x| x, f64::from(f32::EPSILON)),
            Precision::Fp64 => self.gemm_kernel::<f64>(spec, f64::from, f64::EPSILON),
            other => Err(BackendError::Unsupported(format!(
                "{other} cannot be measured natively on the host CPU ({}, {}): the CPU backend runs FP32 and FP64 only",
                self.host.arch, self.host.name
            ))),
        }
    }
}

/// `C_p = A_p·B_p` for every product `p` of a batch (one for a plain GEMM), back to back: `a`, `b` and `c`
/// hold the products' row-major A[M,K], B[K,N] and C[M,N] one after another. Each product runs in blocks of
/// `block_rows` rows of A and C, checking `stop` before each block: a stopped run leaves the rest of C
/// unwritten (the protocol then reports the interruption).
fn run_gemm_blocks<T: 'static + Copy>(
    (m, n, k): (usize, usize, usize),
    block_rows: usize,
    (a, b, c): (&[T], &[T], &mut [T]),
    parallelism: Parallelism,
    stop: Option<&StopCheck>,
) {
    debug_assert!(a.len() >= m * k && c.len() >= m * n);
    let products = a.chunks(m * k).zip(b.chunks(k * n)).zip(c.chunks_mut(m * n));
    for ((a, b), c) in products {
        for (a_rows, c_rows) in a.chunks(block_rows * k).zip(c.chunks_mut(block_rows * n)) {
            if stop_due(stop) {
                return;
            }
            run_gemm((c_rows.len() / n.max(1), n, k), a_rows, b, c_rows, parallelism);
        }
    }
}

/// `C = A·B` for row-major A[M,K], B[K,N], C[M,N] with the `gemm` crate.
#[allow(unsafe_code)]
fn run_gemm<T: 'static + Copy>(
    dims: (usize, usize, usize),
    a: &[T],
    b: &[T],
    c: &mut [T],
    parallelism: Parallelism,
) {
    let (m, n, k) = dims;
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "gemm buffers shorter than the shape"
    );
    let (n_i, k_i) = (n as isize, k as isize);
    let one: T = unit();
    // SAFETY: the pointers come from slices at least M·K, K·N and M·N long (asserted above), the strides
    // (column stride 1, row stride = row length) stay inside them, `c` is a unique borrow and does not alias
    // `a` or `b`, and `read_dst = false` so `beta` (unused) and the old contents of `c` are never read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n_i,
            false,
            a.as_ptr(),
            1,
            k_i,
            b.as_ptr(),
            1,
            n_i,
            one,
            one,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// 1 in the GEMM element type (the crate computes `dst = alpha·dst + beta·A·B`; alpha is unused without read_dst).
fn unit<T: 'static + Copy>() -> T {
    let any: Box<dyn std::any::Any> = if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>() {
        Box::new(1.0f64)
    } else {
        Box::new(1.0f32)
    };
    *any.downcast::<T>()
        .unwrap_or_else(|_| panic!("the CPU backend only runs f32 and f64"))
}

fn to_usize(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidInput(format!("{v} does not fit in memory")))
}

/// RAM the host can still hand out without swapping, in bytes (`MemAvailable` on Linux); `None` where unknown.
fn available_memory_bytes() -> Option<u64> {
    let mut system = System::new().ok()?;
    system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    Some(system.available_memory()).filter(|&bytes| bytes > 0)
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn device_info(&self) -> DeviceInfo {
        DeviceInfo {
            backend: BackendKind::Cpu,
            name: self.host.name.clone(),
            arch: self.host.arch.into(),
            compute_capability: None,
            memory_total_bytes: self.host.memory_total_bytes as f64,
            memory_free_bytes: available_memory_bytes().map(|bytes| bytes as f64),
            sm_count: None,
            cpu_cores: u32::try_from(self.host.threads).ok(),
            sm_clock_max_mhz: None,
            mem_clock_max_mhz: None,
            l2_bytes: Some(self.host.llc_bytes as f64),
            versions: vec![
                ("endpoint".into(), env!("CARGO_PKG_VERSION").into()),
                ("gemm".into(), "0.19".into()),
            ],
            matched_key: None,
            measurable_precisions: self.measurable(),
        }
    }

    fn measurable(&self) -> Vec<Precision> {
        vec![Precision::Fp32, Precision::Fp64]
    }

    fn memory_budget_bytes(&self) -> u64 {
        let available = available_memory_bytes().map_or(u64::MAX, |bytes| bytes / 2);
        self.memory_cap_bytes.min(available)
    }

    fn required_bytes(&self, spec: &MatmulSpec) -> u64 {
        let element = if spec.precision == Precision::Fp64 { 8 } else { 4 };
        let GemmShape { batch, m, n, k } = spec.shape;
        let (batch, m, n, k) = (u128::from(batch), u128::from(m), u128::from(n), u128::from(k));
        u64::try_from(batch * (m * k + k * n + m * n) * element).unwrap_or(u64::MAX)
    }

    fn measure_matmul(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        let mut kernel = self.matmul_kernel(spec)?;
        let stats = self.host.sample_flushed(|| kernel.run())?;
        let op = spec
            .operator()
            .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        Ok(Measured {
            op,
            precision: spec.precision,
            label_suffix: String::new(),
            measurement: measurement(
                self.host.run_info(kernel.label, true),
                &stats,
                TelemetrySummary::default(),
            ),
        })
    }

    fn required_operator_bytes(&self, op: &Operator) -> u64 {
        cpu_ops::required_bytes(op)
    }

    fn measure_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        cpu_ops::measure(&self.host, op)
    }

    fn measure_step(&self, ops: &[Operator], schedule: &[usize]) -> Result<StepTiming, BackendError> {
        let mut kernels = prepare_step(
            ops,
            |spec| self.matmul_kernel(spec),
            |op| cpu_ops::prepare(&self.host, op),
        )?;
        // Checked between kernels: a stopped step leaves the rest of the order unlaunched.
        let stop = StopCheck::current();
        let stats = self.host.sample_flushed(|| {
            for &index in schedule {
                if stop_due(stop.as_ref()) {
                    return;
                }
                kernels[index].run();
            }
        })?;
        let label = format!(
            "{} kernels back to back in the step's launch order (GEMM/GEMV on {} threads, attention on the rayon \
             pool, other operators on one thread); caches flushed before each step only",
            schedule.len(),
            self.host.threads
        );
        let mut run = self.host.run_info(label, true);
        run.library = format!("{GEMM_CRATE} + {}", cpu_ops::LIBRARY);
        Ok(StepTiming {
            kernels: u32::try_from(schedule.len()).unwrap_or(u32::MAX),
            measurement: measurement(run, &stats, TelemetrySummary::default()),
        })
    }

    fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError> {
        let n = self.copy_bytes / 4;
        let src: Vec<f32> = try_random_normal::<BackendError>(7, n)?;
        let mut dst = vec![0.0f32; n];
        let threads = self.host.threads;
        let copy = |dst: &mut [f32]| {
            let chunk = n.div_ceil(threads);
            std::thread::scope(|s| {
                for (d, src_chunk) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                    s.spawn(move || d.copy_from_slice(src_chunk));
                }
            });
        };
        copy(&mut dst);
        if dst != src {
            return Err(BackendError::Verification(
                "copy output differs from its input".into(),
            ));
        }
        let stats = self.host.sample_flushed(|| copy(&mut dst))?;
        let mut run = self.host.run_info(
            format!(
                "copy_from_slice, {threads} threads, 2×{} KiB",
                self.copy_bytes >> 10
            ),
            true,
        );
        run.library = "std (CPU)".into();
        Ok(MeasuredBandwidth {
            bytes: 2.0 * (n * 4) as f64,
            measurement: measurement(run, &stats, TelemetrySummary::default()),
        })
    }

    fn calibration_shape(&self, precision: Precision) -> GemmShape {
        if precision == Precision::Fp64 {
            GemmShape::matmul(768, 768, 768)
        } else {
            GemmShape::matmul(1024, 1024, 1024)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_matches_a_hand_computed_product() {
        // [[1,2,3],[4,5,6]] · [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
        let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0];
        let mut c = [0.0f32; 4];
        run_gemm((2, 2, 3), &a, &b, &mut c, Parallelism::None);
        assert_eq!(c, [58.0, 64.0, 139.0, 154.0]);
        let a64 = a.map(f64::from);
        let b64 = b.map(f64::from);
        let mut c64 = [0.0f64; 4];
        run_gemm((2, 2, 3), &a64, &b64, &mut c64, Parallelism::None);
        assert_eq!(c64, [58.0, 64.0, 139.0, 154.0]);
    }

    #[test]
    fn a_batched_gemm_runs_each_product_with_its_own_matrices() {
        // Two products of 1×2 by 2×2: [1,2]·[[1,0],[0,1]] = [1,2]; [3,4]·[[0,1],[1,0]] = [4,3].
        let a = [1.0f32, 2.0, 3.0, 4.0];
        let b = [1.0f32, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        let mut c = [0.0f32; 4];
        run_gemm_blocks((1, 2, 2), 1, (&a, &b, &mut c), Parallelism::None, None);
        assert_eq!(c, [1.0, 2.0, 4.0, 3.0]);
        // Measured: 4 products of 3×5 by 5×2, each verified; 2·4·3·5·2 = 240 FLOP.
        let cpu = CpuBackend::new(1 << 30).with_policy(SamplingPolicy {
            min_samples: 1,
            max_samples: 2,
            ..SamplingPolicy::cpu()
        });
        let spec = MatmulSpec {
            shape: GemmShape {
                batch: 4,
                ..GemmShape::matmul(3, 2, 5)
            },
            precision: Precision::Fp32,
        };
        let measured = cpu.measure_matmul(&spec).unwrap();
        assert_eq!(
            (measured.op.kind, measured.op.flops),
            (roofline_core::OpKind::BatchedGemm, 240.0)
        );
        assert!(measured.measurement.verified);
        assert!(
            measured
                .measurement
                .kernel
                .contains("batched GEMM of 4 products back to back"),
            "{}",
            measured.measurement.kernel
        );
        // 4 · (3·5 + 5·2 + 3·2) FP32 values = 496 B.
        assert_eq!(cpu.required_bytes(&spec), 496);
    }

    #[test]
    fn a_step_past_its_time_cap_stops_before_preparing_an_operator() {
        let cpu = CpuBackend::new(1 << 30);
        let fp32 = Operator::matmul(1, 64, 64, Precision::Fp32.into()).unwrap();
        let bf16 = Operator::matmul(1, 64, 64, Precision::Bf16.into()).unwrap();
        // Outside any limits the BF16 GEMV fails on its preparation: the CPU runs no BF16.
        assert!(matches!(
            cpu.measure_step(&[fp32.clone(), bf16.clone()], &[0, 1]),
            Err(BackendError::Unsupported(_))
        ));
        // With a zero time cap the step stops before preparing anything.
        let limits = crate::protocol::PointLimits::new(std::time::Duration::ZERO);
        let stopped = limits.run(|| cpu.measure_step(&[fp32, bf16], &[0, 1]));
        assert!(matches!(stopped, Err(BackendError::TimeLimit(_))), "{stopped:?}");
    }

    #[test]
    fn sizes_parse() {
        use super::super::cpu_host::parse_size;
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
    }
}
