//! BFC's host side (Goyal et al., NSDI 2022; BFC's ns-3 NIC): each flow has its own NIC
//! queue, whose index rides in the IPv4 identification field of its data frames (the
//! "upstream queue" a BFC switch reads). A BFC pause frame ([`super::wire`]) replaces
//! the NIC's paused-queue bitmap, and no new frame of a flow whose bit is set starts until
//! a frame clears it. ACKs go in queue 0, BFC's control queue, which is never paused.

use super::wire::BfcPause;
use crate::scenario::host_keys::{self, HostKey};
use crate::scenario::results::PauseKind;
use std::any::Any;
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::host_feature::{
    FeatureSpec, FlowView, FrameTag, HostCounters, HostFeature, Receipt,
};

/// Per-flow queues of a NIC (BFC's ns-3 `fCnt`). Index 0 is kept for ACKs; flows take the
/// lowest free index in 1..2048.
pub const NIC_FLOW_QUEUES: u16 = 2048;

/// `[transport] honour_bfc_pause = true`: hosts run [`Bfc`] without the scheme.
pub const HOST_KEY: HostKey = HostKey {
    key: "honour_bfc_pause",
    with_scheme: false,
    build: |value, _| host_keys::flag("honour_bfc_pause", value, spec),
};

/// The count of well-formed BFC pause frames a host received ([`HostCounters`]).
pub const PAUSE_FRAMES: &str = "bfc_frames";

/// BFC's pause frames in the results' pause counts: those the hosts took in and those the
/// switches' programs consumed (a switch's upstream neighbour's pause frames, turned into
/// AFC).
pub const PAUSE_KIND: PauseKind = PauseKind {
    name: "bfc_received",
    label: "BFC received",
    host_count: PAUSE_FRAMES,
    at_switch: |c| c.consumed_frames(),
};

/// A NIC with a queue per flow that obeys BFC pause frames.
pub struct Bfc {
    /// The last pause bitmap received (bit = NIC queue index mod 1024).
    paused: BfcPause,
    frames: u64,
    /// How many open flows hold each queue index.
    used: Vec<u32>,
    /// Per flow (by index): its id and queue index.
    queues: Vec<(u32, u16)>,
}

impl Default for Bfc {
    fn default() -> Bfc {
        Bfc {
            paused: BfcPause::none(),
            frames: 0,
            used: vec![0; NIC_FLOW_QUEUES as usize],
            queues: Vec::new(),
        }
    }
}

/// The spec of [`Bfc`], for a scheme's `Hosts`.
pub fn spec() -> FeatureSpec {
    FeatureSpec::new("bfc", String::new(), |_| {
        Ok(Box::new(Bfc::default()) as Box<dyn HostFeature>)
    })
}

impl Bfc {
    /// The pause bitmap the NIC obeys (the last one received; none paused before).
    pub fn paused(&self) -> &BfcPause {
        &self.paused
    }

    /// The NIC queue index of flow `flow_id`, once it has started.
    pub fn flow_queue(&self, flow_id: u32) -> Option<u16> {
        self.queues
            .iter()
            .find(|&&(id, _)| id == flow_id)
            .map(|&(_, q)| q)
    }

    fn queue(&self, flow: &FlowView) -> u16 {
        self.queues[flow.index].1
    }
}

impl HostFeature for Bfc {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn on_frame(&mut self, _now: Cycle, pkt: PacketHandle, pool: &mut PacketPool) -> Receipt {
        let bytes = pool.bytes(pkt);
        if !BfcPause::is_bfc(bytes) {
            return Receipt::NotMine;
        }
        // The NIC replaces its bitmap with each frame (BFC's ns-3 NIC). A malformed one
        // changes nothing.
        match BfcPause::parse(bytes) {
            Ok(b) => {
                self.paused = b;
                self.frames += 1;
                pool.free(pkt);
                Receipt::Taken
            }
            Err(_) => Receipt::Foreign,
        }
    }

    fn tag(&self, tag: &mut FrameTag, flow: Option<&FlowView>) {
        if let Some(f) = flow {
            tag.ipv4_id = self.queue(f);
        }
    }

    fn may_send(&self, _now: Cycle, _class: u8, flow: Option<&FlowView>) -> bool {
        flow.is_none_or(|f| !self.paused.is_paused(self.queue(f) as usize))
    }

    /// The lowest index no open flow holds; when all 2047 are held, flows share (by flow
    /// id), as BFC's bitmap already folds indices mod 1024.
    fn flow_started(&mut self, flow: &FlowView) {
        debug_assert_eq!(flow.index, self.queues.len(), "flows start in index order");
        let q = (1..NIC_FLOW_QUEUES)
            .find(|&q| self.used[q as usize] == 0)
            .unwrap_or(1 + (flow.id % (NIC_FLOW_QUEUES as u32 - 1)) as u16);
        self.used[q as usize] += 1;
        self.queues.push((flow.id, q));
    }

    fn flow_finished(&mut self, flow: &FlowView) {
        let q = self.queue(flow) as usize;
        self.used[q] -= 1;
    }

    fn count(&self, c: &mut HostCounters) {
        c.add(PAUSE_FRAMES, self.frames);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(index: usize, id: u32) -> FlowView {
        FlowView {
            index,
            id,
            bytes_sent: 0,
            ipv4_bytes_sent: 0,
        }
    }

    fn receive(b: &mut Bfc, pool: &mut PacketPool, frame: Vec<u8>) -> Receipt {
        let pkt = pool.alloc_from(&frame);
        let r = b.on_frame(0, pkt, pool);
        if r != Receipt::Taken {
            pool.free(pkt);
        }
        r
    }

    #[test]
    fn flows_take_the_lowest_free_queue_and_a_bitmap_holds_only_its_queues() {
        let mut b = Bfc::default();
        let (f0, f1, f2) = (flow(0, 70), flow(1, 71), flow(2, 72));
        b.flow_started(&f0);
        b.flow_started(&f1);
        b.flow_finished(&f0);
        // Queue 1 is free again: the third flow takes it.
        b.flow_started(&f2);
        assert_eq!(
            (b.flow_queue(70), b.flow_queue(71), b.flow_queue(72)),
            (Some(1), Some(2), Some(1))
        );
        let mut t = FrameTag::default();
        b.tag(&mut t, Some(&f1));
        assert_eq!(t.ipv4_id, 2);
        let mut ack = FrameTag::default();
        b.tag(&mut ack, None);
        assert_eq!(ack.ipv4_id, 0, "ACKs go in queue 0");

        let mut pool = PacketPool::new();
        let mut frame = Vec::new();
        // Bit 1025 folds onto queue 1.
        BfcPause::of(&[1025]).write([2, 0, 0, 0, 0, 9], &mut frame);
        assert_eq!(receive(&mut b, &mut pool, frame.clone()), Receipt::Taken);
        assert!(!b.may_send(0, 0, Some(&f2)) && b.may_send(0, 0, Some(&f1)));
        assert!(b.may_send(0, 0, None), "ACKs are never paused");
        // A truncated frame changes nothing and is foreign.
        assert_eq!(
            receive(&mut b, &mut pool, frame[..100].to_vec()),
            Receipt::Foreign
        );
        assert!(!b.may_send(0, 0, Some(&f2)));
        let mut none = Vec::new();
        BfcPause::none().write([2, 0, 0, 0, 0, 9], &mut none);
        assert_eq!(receive(&mut b, &mut pool, none), Receipt::Taken);
        assert!(b.may_send(0, 0, Some(&f2)));
        assert_eq!(pool.live(), 0);
        let mut c = HostCounters::default();
        b.count(&mut c);
        assert_eq!(c.get(PAUSE_FRAMES), 2);
    }
}
