//! The host CPU as the CPU backend times it: its name, architecture, threads and last-level cache (from
//! `sysinfo` and sysfs), the sampling policy, the record of a run, and the flushed sampling loop of every CPU
//! measurement (the GEMMs of `cpu.rs` and the kernels of `cpu_ops.rs`).

use std::time::Instant;

use roofline_core::wire::BackendKind;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

use super::BackendError;
use crate::protocol::{RunInfo, SampleStats, SamplingPolicy, sample};

/// Version of the GEMM crate (keep in step with Cargo.toml).
pub(super) const GEMM_CRATE: &str = "gemm 0.19 (CPU)";

/// The host as detected, and how its measurements are sampled.
pub(super) struct CpuHost {
    pub(super) name: String,
    pub(super) arch: &'static str,
    pub(super) threads: usize,
    pub(super) llc_bytes: usize,
    pub(super) memory_total_bytes: u64,
    pub(super) policy: SamplingPolicy,
}

impl CpuHost {
    /// Describes the host: CPU brand and RAM from `sysinfo`, last-level cache from sysfs.
    pub(super) fn detect() -> CpuHost {
        let refresh = RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram());
        let system = System::new_with_specifics(refresh).ok();
        let name = system
            .as_ref()
            .and_then(|s| s.cpus().first())
            .map(|cpu| cpu.brand().trim())
            .filter(|brand| !brand.is_empty())
            .map_or_else(|| format!("{} CPU", std::env::consts::ARCH), str::to_owned);
        let llc_bytes = ["index3", "index2"]
            .iter()
            .find_map(|idx| {
                std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/{idx}/size")).ok()
            })
            .and_then(|s| parse_size(s.trim()))
            .unwrap_or(32 << 20);
        CpuHost {
            name,
            arch: std::env::consts::ARCH,
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            llc_bytes,
            memory_total_bytes: system.map_or(0, |s| s.total_memory()),
            policy: SamplingPolicy::cpu(),
        }
    }

    /// The architecture name, e.g. `x86_64`.
    pub(super) fn arch(&self) -> &str {
        self.arch
    }

    pub(super) fn run_info(&self, kernel: String, verified: bool) -> RunInfo {
        RunInfo {
            backend: BackendKind::Cpu,
            library: GEMM_CRATE.into(),
            kernel,
            device_name: self.name.clone(),
            versions: vec![
                ("endpoint".into(), env!("CARGO_PKG_VERSION").into()),
                ("gemm".into(), "0.19".into()),
                ("threads".into(), self.threads.to_string()),
            ],
            flushed: true,
            verified,
            padding: None,
        }
    }

    /// Samples `run` under the protocol, wall-clock timed, after rewriting a buffer of about twice the
    /// last-level cache before every sample (the CPU's L2/LLC flush).
    pub(super) fn sample_flushed(&self, mut run: impl FnMut()) -> Result<SampleStats, BackendError> {
        let mut flush = vec![1u8; (2 * self.llc_bytes).max(8 << 20)];
        sample::<BackendError>(
            &self.policy,
            || {
                touch(&mut flush);
                Ok(())
            },
            || {
                let start = Instant::now();
                run();
                Ok(start.elapsed().as_secs_f64())
            },
        )
    }
}

fn touch(buffer: &mut [u8]) {
    for chunk in buffer.chunks_mut(64) {
        chunk[0] = chunk[0].wrapping_add(1);
    }
    std::hint::black_box(buffer);
}

pub(super) fn parse_size(s: &str) -> Option<usize> {
    let (digits, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok().map(|v| v * mult)
}
