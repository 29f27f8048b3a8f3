//! PFC (IEEE 802.1Qbb) at the NIC: a PFC frame from the switch pauses the classes it names
//! for their quanta ([`PfcPauses`]), and no new frame of a paused class starts until its
//! pause ends; frames already on the wire finish. Without this feature a host reads PFC
//! frames as foreign and never pauses. The RDMA NIC keeps the same [`PfcPauses`].

use super::{FeatureSpec, FlowView, HostCounters, HostFeature, HostInfo, Receipt};
use crate::pfc_pause::PfcPauses;
use std::any::Any;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::pfc::PfcFrame;
use t2_pipeline::{PacketHandle, PacketPool};

/// The count of PFC frames a host received and honoured ([`HostCounters`]).
pub const PFC_FRAMES: &str = "pfc_frames";

/// A NIC that honours PFC.
pub struct Pfc {
    line: LineRate,
    pauses: PfcPauses,
}

impl Pfc {
    pub fn new(line: LineRate) -> Pfc {
        Pfc {
            line,
            pauses: PfcPauses::default(),
        }
    }

    /// The classes' pauses (and the PFC frames taken in).
    pub fn pauses(&self) -> &PfcPauses {
        &self.pauses
    }
}

/// The spec of [`Pfc`], for a scheme's `Hosts`.
pub fn spec() -> FeatureSpec {
    FeatureSpec::new("pfc", String::new(), |h: &HostInfo| {
        Ok(Box::new(Pfc::new(h.line)) as Box<dyn HostFeature>)
    })
}

impl HostFeature for Pfc {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn on_frame(&mut self, now: Cycle, pkt: PacketHandle, pool: &mut PacketPool) -> Receipt {
        let Some(frame) = PfcFrame::parse(pool.bytes(pkt)) else {
            return Receipt::NotMine;
        };
        pool.free(pkt);
        self.pauses.apply(now, &frame, &self.line);
        Receipt::Taken
    }

    fn may_send(&self, now: Cycle, class: u8, _flow: Option<&FlowView>) -> bool {
        !self.pauses.is_paused(class, now)
    }

    fn next_event(&self, now: Cycle, _has_data: &dyn Fn(usize) -> bool) -> Option<Cycle> {
        self.pauses.next_end(now)
    }

    fn count(&self, c: &mut HostCounters) {
        c.add(PFC_FRAMES, self.pauses.frames());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_clock::Clock;

    #[test]
    fn a_pause_holds_only_its_class_until_its_quanta_end() {
        // 100 Gb/s at 1.5 GHz: 100 quanta = 512 ns = 768 cycles.
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        let mut pfc = Pfc::new(line);
        let mut pool = PacketPool::new();
        let pkt = pool.alloc();
        PfcFrame::one_class(1, 100).write([2, 0, 0, 0, 0, 1], pool.bytes_mut(pkt));
        assert_eq!(pfc.on_frame(1000, pkt, &mut pool), Receipt::Taken);
        assert_eq!(pool.live(), 0, "the PFC frame is freed");
        assert!(!pfc.may_send(1767, 1, None) && pfc.may_send(1768, 1, None));
        assert!(pfc.may_send(1000, 0, None), "class 0 is not paused");
        assert_eq!(pfc.next_event(1000, &|_| true), Some(1768));
        let other = pool.alloc();
        pool.bytes_mut(other).extend_from_slice(&[0; 60]);
        assert_eq!(pfc.on_frame(1001, other, &mut pool), Receipt::NotMine);
        let mut c = HostCounters::default();
        pfc.count(&mut c);
        assert_eq!(c.get(PFC_FRAMES), 1);
    }
}
