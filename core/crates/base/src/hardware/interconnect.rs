//! Scale-up interconnect: the GPU-to-GPU link of a device and the time of the collectives that run over it.
//!
//! Its rules and derivations: docs/design/core.md, in the section on this file.

use std::fmt;

use crate::error::Error;

/// The kind of scale-up link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Link {
    /// NVLink 3 (Ampere).
    NvLink3,
    /// NVLink 4 (Hopper).
    NvLink4,
    /// NVLink 5 (Blackwell).
    NvLink5,
    /// NVLink-C2C: the chip-to-chip link between a Grace CPU and the GPU (GB10), not between GPUs.
    NvLinkC2c,
    /// AMD Infinity Fabric links between Instinct accelerators.
    InfinityFabric,
    /// PCI Express 4.0 x16 (no NVLink).
    PcieGen4,
    /// PCI Express 5.0 x16.
    PcieGen5,
}

impl Link {
    /// Every link kind, in display order.
    pub const ALL: [Link; 7] = [
        Link::NvLink3,
        Link::NvLink4,
        Link::NvLink5,
        Link::NvLinkC2c,
        Link::InfinityFabric,
        Link::PcieGen4,
        Link::PcieGen5,
    ];

    /// The name as the research file writes it, e.g. `NVLink 4`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Link::NvLink3 => "NVLink 3",
            Link::NvLink4 => "NVLink 4",
            Link::NvLink5 => "NVLink 5",
            Link::NvLinkC2c => "NVLink-C2C",
            Link::InfinityFabric => "Infinity Fabric",
            Link::PcieGen4 => "PCIe Gen4",
            Link::PcieGen5 => "PCIe Gen5",
        }
    }

    /// Whether the link is PCI Express (NCCL's cost model has distinct PCIe latencies).
    #[must_use]
    pub const fn is_pcie(self) -> bool {
        matches!(self, Link::PcieGen4 | Link::PcieGen5)
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the GPUs of a scale-up domain are wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Topology {
    /// Through a switch (NVSwitch, a PCIe switch) or a direct pair: every GPU reaches any group at its full
    /// per-GPU bandwidth.
    Switched,
    /// Fully connected point to point, one link to each of the `max_gpus − 1` peers (AMD MI300X platform):
    /// a group of n GPUs uses n−1 of them.
    FullMesh,
}

impl Topology {
    /// Every topology.
    pub const ALL: [Topology; 2] = [Topology::Switched, Topology::FullMesh];

    /// `switch` or `mesh`, as the research file writes it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Topology::Switched => "switch",
            Topology::FullMesh => "mesh",
        }
    }
}

/// Which collective an operator runs (the time of each: docs/design/core.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Collective {
    /// Sum over the group, result on every GPU (tensor-parallel partial sums).
    AllReduce,
    /// Concatenate each GPU's slice on every GPU (vocabulary-parallel logits).
    AllGather,
    /// Every GPU sends a share of its rows to every other (MoE dispatch and combine).
    AllToAll,
    /// One GPU sends to the next (a pipeline stage boundary).
    SendRecv,
}

impl Collective {
    /// `all_reduce`, `all_gather`, `all_to_all` or `send_recv`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::AllToAll => "all_to_all",
            Collective::SendRecv => "send_recv",
        }
    }

    /// Bytes each GPU sends over its link for a payload of `payload_bytes` over `gpus` GPUs (the ring
    /// factor times the payload): 2(n−1)/n · S, (n−1)/n · S, (n−1)/n · S, or S.
    #[must_use]
    pub fn link_bytes(self, payload_bytes: f64, gpus: u32) -> f64 {
        let n = f64::from(gpus.max(1));
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n * payload_bytes,
            Collective::AllGather | Collective::AllToAll => (n - 1.0) / n * payload_bytes,
            Collective::SendRecv => payload_bytes,
        }
    }

    /// Sequential steps of the algorithm, each paying the step latency: 2(n−1), n−1, n−1 or 1.
    #[must_use]
    pub fn steps(self, gpus: u32) -> u32 {
        let hops = gpus.saturating_sub(1);
        match self {
            Collective::AllReduce => 2 * hops,
            Collective::AllGather | Collective::AllToAll => hops,
            Collective::SendRecv => 1,
        }
    }
}

/// The scale-up interconnect of one device, in base units.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Interconnect {
    /// Link kind.
    pub link: Link,
    /// Wiring of the scale-up domain.
    pub topology: Topology,
    /// Per-GPU link bandwidth in one direction (half the published bidirectional figure), in bytes/s. On a
    /// reference spec, times the achievable collective fraction.
    pub bandwidth_bytes_per_s: f64,
    /// GPUs in one scale-up domain (HGX H100: 8, GB200 NVL72: 72, GB10: 1).
    pub max_gpus: u32,
    /// Fixed time of one collective, in s (0 on datasheet specs).
    #[cfg_attr(feature = "serde", serde(default))]
    pub collective_latency_s: f64,
    /// Time of one algorithm step (a ring hop), in s (0 on datasheet specs).
    #[cfg_attr(feature = "serde", serde(default))]
    pub step_latency_s: f64,
    /// Citations of the link figures.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sources: Vec<String>,
}

impl Interconnect {
    /// The per-direction bandwidth a group of `gpus` GPUs gets, in bytes/s: the full per-GPU figure on a
    /// switched fabric, (gpus − 1)/(max_gpus − 1) of it on a full mesh.
    #[must_use]
    pub fn group_bandwidth_bytes_per_s(&self, gpus: u32) -> f64 {
        match self.topology {
            Topology::Switched => self.bandwidth_bytes_per_s,
            Topology::FullMesh if self.max_gpus > 1 => {
                self.bandwidth_bytes_per_s * f64::from(gpus.saturating_sub(1).max(1))
                    / f64::from(self.max_gpus - 1)
            }
            Topology::FullMesh => self.bandwidth_bytes_per_s,
        }
    }

    /// Fixed time of `collective` over `gpus` GPUs: the collective latency plus one step latency per step,
    /// in s.
    #[must_use]
    pub fn latency_s(&self, collective: Collective, gpus: u32) -> f64 {
        self.collective_latency_s + f64::from(collective.steps(gpus)) * self.step_latency_s
    }

    /// Time of `collective` of `payload_bytes` over `gpus` GPUs: link bytes / group bandwidth + latency, in
    /// s (docs/design/core.md).
    ///
    /// # Examples
    /// ```
    /// use roofline_base::find_hardware;
    /// use roofline_base::hardware::Collective;
    /// // H100 SXM, 4 GPUs, 16,384 B: 2·3/4 · 16384 / 450e9 = 54.6 ns on the datasheet (no latency).
    /// let nvlink = find_hardware("h100_sxm").unwrap().interconnect.as_ref().unwrap();
    /// let t = nvlink.time_s(Collective::AllReduce, 16_384.0, 4);
    /// assert!((t - 1.5 * 16_384.0 / 450e9).abs() < 1e-15);
    /// ```
    #[must_use]
    pub fn time_s(&self, collective: Collective, payload_bytes: f64, gpus: u32) -> f64 {
        if gpus <= 1 {
            return 0.0;
        }
        collective.link_bytes(payload_bytes, gpus) / self.group_bandwidth_bytes_per_s(gpus)
            + self.latency_s(collective, gpus)
    }

    /// Checks that the figures are finite and positive and the latencies in [0, 1) s.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field, prefixed with `device`.
    pub fn check(&self, device: &str) -> Result<(), Error> {
        super::ranges::check_range(
            device,
            "interconnect bandwidth_bytes_per_s",
            self.bandwidth_bytes_per_s,
            &super::ranges::BANDWIDTH_RANGE_BYTES_PER_S,
            "bytes/s",
        )?;
        if self.max_gpus == 0 {
            return Err(Error::InvalidInput(format!(
                "{device}: interconnect max_gpus must be at least 1"
            )));
        }
        for (name, v) in [
            ("collective_latency_s", self.collective_latency_s),
            ("step_latency_s", self.step_latency_s),
        ] {
            if !(v.is_finite() && (0.0..1.0).contains(&v)) {
                return Err(Error::InvalidInput(format!(
                    "{device}: interconnect {name} must be in [0, 1) s, got {v}"
                )));
            }
        }
        Ok(())
    }
}

/// A scale-up interconnect as the research file publishes it (data only; see `catalog.rs`).
pub(super) struct InterconnectEntry {
    pub link: Link,
    pub topology: Topology,
    /// Per-GPU bidirectional bandwidth, in GB/s (10^9), as published.
    pub bidirectional_gbs: f64,
    pub max_gpus: u32,
    pub sources: &'static [&'static str],
    /// Achievable fraction of the per-direction bandwidth a ring collective reaches (nccl-tests busbw).
    pub measured_busbw_fraction: Option<f64>,
    /// Sources of the measured fraction.
    pub measured_sources: &'static [&'static str],
}

impl InterconnectEntry {
    /// The datasheet interconnect: half the bidirectional figure each way, no latency.
    pub fn to_interconnect(&self) -> Interconnect {
        Interconnect {
            link: self.link,
            topology: self.topology,
            bandwidth_bytes_per_s: self.bidirectional_gbs / 2.0 * crate::units::GIGA,
            max_gpus: self.max_gpus,
            collective_latency_s: 0.0,
            step_latency_s: 0.0,
            sources: self.sources.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvlink(topology: Topology) -> Interconnect {
        Interconnect {
            link: Link::NvLink4,
            topology,
            bandwidth_bytes_per_s: 450e9,
            max_gpus: 8,
            collective_latency_s: 6.6e-6,
            step_latency_s: 0.6e-6,
            sources: Vec::new(),
        }
    }

    #[test]
    fn ring_all_reduce_by_hand() {
        // 4 GPUs, 16,384 B: 2·3/4 · 16384 / 450e9 = 54.61 ns, plus 6.6 µs + 2·3 · 0.6 µs = 10.2 µs.
        let t = nvlink(Topology::Switched).time_s(Collective::AllReduce, 16_384.0, 4);
        assert!((t - (24_576.0 / 450e9 + 10.2e-6)).abs() < 1e-15, "{t}");
        // One GPU: no collective at all.
        assert_eq!(
            nvlink(Topology::Switched).time_s(Collective::AllReduce, 1e9, 1),
            0.0
        );
    }

    #[test]
    fn a_mesh_group_uses_only_its_links() {
        // MI300X-like: 7 links; a pair uses one of them (1/7 of the aggregate), all 8 GPUs all of them.
        let mesh = nvlink(Topology::FullMesh);
        assert!((mesh.group_bandwidth_bytes_per_s(2) - 450e9 / 7.0).abs() < 1e-3);
        assert_eq!(mesh.group_bandwidth_bytes_per_s(8), 450e9);
        assert_eq!(nvlink(Topology::Switched).group_bandwidth_bytes_per_s(2), 450e9);
    }

    #[test]
    fn collective_bytes_and_steps() {
        assert_eq!(Collective::AllReduce.link_bytes(800.0, 8), 1400.0);
        assert_eq!(Collective::AllGather.link_bytes(800.0, 8), 700.0);
        assert_eq!(Collective::AllToAll.steps(8), 7);
        assert_eq!(Collective::SendRecv.link_bytes(800.0, 2), 800.0);
        let mut bad = nvlink(Topology::Switched);
        bad.bandwidth_bytes_per_s = 0.0;
        assert!(bad.check("x").is_err());
        bad = nvlink(Topology::Switched);
        bad.step_latency_s = f64::NAN;
        assert!(bad.check("x").is_err());
    }
}
