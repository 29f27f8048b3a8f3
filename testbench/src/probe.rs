//! A scripted one-port node: it sends given frames at given cycles and keeps every frame it
//! receives, with the cycle its last bit arrived. The driver and monitor of directed tests.

use crate::node::{Node, Sent};
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};

/// A one-port node that plays a script of frames and records what reaches it.
#[derive(Clone, Debug, Default)]
pub struct Probe {
    bps: u64,
    /// (cycle the last bit leaves, frame bytes without FCS), in cycle order.
    script: Vec<(Cycle, Vec<u8>)>,
    next: usize,
    received: Vec<(Cycle, Vec<u8>)>,
}

impl Probe {
    /// A probe on a port of `bps` b/s that sends `script`: each frame's last bit leaves in
    /// its cycle (the script sets the pacing; frames must be in cycle order).
    pub fn new(bps: u64, script: Vec<(Cycle, Vec<u8>)>) -> Probe {
        debug_assert!(
            script.windows(2).all(|w| w[0].0 <= w[1].0),
            "script out of order"
        );
        Probe {
            bps,
            script,
            next: 0,
            received: Vec::new(),
        }
    }

    /// Frames received: (cycle the last bit arrived, bytes without FCS).
    pub fn received(&self) -> &[(Cycle, Vec<u8>)] {
        &self.received
    }

    /// Cycles at which frames arrived.
    pub fn arrivals(&self) -> Vec<Cycle> {
        self.received.iter().map(|(c, _)| *c).collect()
    }

    /// Frames of the script sent so far.
    pub fn sent(&self) -> usize {
        self.next
    }
}

impl Node for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn port_count(&self) -> usize {
        1
    }

    fn port_bps(&self, _port: usize) -> u64 {
        self.bps
    }

    fn receive(&mut self, now: Cycle, _port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        self.received.push((now, pool.bytes(pkt).to_vec()));
        pool.free(pkt);
    }

    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        while let Some((at, bytes)) = self.script.get(self.next) {
            if *at != now {
                break;
            }
            out.push(Sent {
                port: 0,
                pkt: pool.alloc_from(bytes),
            });
            self.next += 1;
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        self.script.get(self.next).map(|f| f.0).filter(|&t| t > now)
    }
}
