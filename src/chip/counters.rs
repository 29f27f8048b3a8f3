//! What a chip counts: packet totals, and where and why it dropped each packet it dropped.

use std::collections::BTreeMap;
use std::fmt;
use t2_pipeline::{DropReason, Gress};
use t2_tm::TmDrop;

/// Where and why the chip dropped a packet: a port, a gress (with the gress's
/// [`DropReason`]) or the TM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChipDrop {
    /// The port's receive FIFO was full.
    RxFifoFull,
    /// The ingress or egress pipeline dropped it.
    Pipeline(Gress, DropReason),
    /// Ingress chose a device port that is not a configured port.
    UnknownEgressPort,
    /// The program recirculated the packet but the chip has no recirculation port (cap 0).
    NoRecirculationPort,
    /// The TM refused it.
    Tm(TmDrop),
}

impl ChipDrop {
    /// The snake-case name used in reports and waveforms.
    pub fn name(&self) -> &'static str {
        match self {
            ChipDrop::RxFifoFull => "rx_fifo_full",
            ChipDrop::Pipeline(_, r) => r.name(),
            ChipDrop::UnknownEgressPort => "unknown_egress_port",
            ChipDrop::NoRecirculationPort => "no_recirculation_port",
            ChipDrop::Tm(t) => t.name(),
        }
    }
}

impl fmt::Display for ChipDrop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChipDrop::RxFifoFull => write!(f, "rx_fifo_full"),
            ChipDrop::Pipeline(Gress::Ingress, r) => write!(f, "ingress.{}", r.name()),
            ChipDrop::Pipeline(Gress::Egress, r) => write!(f, "egress.{}", r.name()),
            ChipDrop::UnknownEgressPort => write!(f, "unknown_egress_port"),
            ChipDrop::NoRecirculationPort => write!(f, "no_recirculation_port"),
            ChipDrop::Tm(t) => write!(f, "{}", t.name()),
        }
    }
}

/// Packet totals of a chip.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChipCounters {
    /// Frames whose last bit reached a port.
    pub received: u64,
    /// Frames whose last bit left a front-panel port.
    pub transmitted: u64,
    /// Frames that went round a recirculation port into an ingress again.
    pub recirculated: u64,
    /// Mirror copies made (each is then delivered or dropped like any packet):
    /// `mirrored = mirror_delivered + mirror_drops + Chip::mirror_copies_inside()`.
    pub mirrored: u64,
    /// Of `mirrored`, copies made at an egress deparser (egress-to-egress mirroring).
    pub mirrored_egress: u64,
    /// Copies whose last bit left a front-panel port (also counted in `transmitted`).
    pub mirror_delivered: u64,
    /// Copies dropped, by cause (also counted in `drops`).
    pub mirror_drops: BTreeMap<ChipDrop, u64>,
    /// Egress `mirror` requests on packets that are themselves copies, ignored: a copy is
    /// never mirrored again by egress.
    pub mirror_not_repeated: u64,
    pub drops: BTreeMap<ChipDrop, u64>,
    /// PFC frames sent (XOFF and XON, out of the ingress ports of lossless traffic) and
    /// received (consumed by the MAC, not counted in `received`). Sent ones are also counted
    /// in `transmitted` when their last bit leaves.
    pub pfc_xoff_sent: u64,
    pub pfc_xon_sent: u64,
    pub pfc_frames_received: u64,
    /// AFC messages from the deparsers (`adv_flow_ctl` with its `qfc` bit set) handed to the
    /// TM, and those whose address names no queue (counted, otherwise ignored).
    pub afc_requests: u64,
    pub afc_unaddressed: u64,
    /// Packets the packet generators made (`received + mirrored + pktgen_generated =
    /// transmitted + dropped + Chip::packets_inside()`), and of those, the ones that have
    /// reached their pipe's pktgen port FIFO (the rest are on the way through its MAC).
    pub pktgen_generated: u64,
    pub pktgen_arrived: u64,
    /// Packets the ingress program resubmitted (each makes one more ingress pass), and
    /// resubmits asked on a second pass, not done.
    pub resubmitted: u64,
    pub resubmit_refused: u64,
    /// Digests the ingress deparsers sent the control plane (`Chip::digests`).
    pub digests: u64,
}

impl ChipCounters {
    pub fn dropped(&self) -> u64 {
        self.drops.values().sum()
    }

    /// Frames the programs consumed after acting on them (`DropReason::Consumed`) that came
    /// in on a port: control frames, not lost data. Mirror copies consumed (BFC's dequeue
    /// records) are in `mirror_drops` as well as `drops` and are left out.
    pub fn consumed_frames(&self) -> u64 {
        consumed(&self.drops) - consumed(&self.mirror_drops)
    }

    /// Mirror copies the programs consumed after acting on them (BFC's dequeue records).
    pub fn consumed_copies(&self) -> u64 {
        consumed(&self.mirror_drops)
    }
}

/// Of the drops in `m`, those that were `DropReason::Consumed`.
fn consumed(m: &BTreeMap<ChipDrop, u64>) -> u64 {
    m.iter()
        .filter(|(c, _)| matches!(c, ChipDrop::Pipeline(_, DropReason::Consumed)))
        .map(|(_, n)| n)
        .sum()
}
