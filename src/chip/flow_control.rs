//! Flow control the chip takes part in: AFC words from the deparsers pausing and resuming TM
//! queues (their codec and addressing), and the PFC frames the TM's lossless classes ask for.

use super::Chip;
use crate::pfc::PfcFrame;
use arbitrary_int::{u15, u2, u4, u7};
use t2_clock::Cycle;
use t2_pipeline::PacketPool;

/// An AFC message as the deparser's `adv_flow_ctl` carries it (MSB first): `qfc` [31],
/// `port_id` [30:22] = pipe:2 | mac:4 | pad:3, `qid` [21:15] (the queue's index among its
/// MAC's 128), `credit` [14:0]. In XOFF mode a nonzero credit pauses, 0 resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfcMessage {
    pub pipe: u2,
    pub mac: u4,
    pub mac_qid: u7,
    pub credit: u15,
}

impl AfcMessage {
    /// The message in `word`, or `None` if its `qfc` bit is clear (no AFC).
    pub fn decode(word: u32) -> Option<AfcMessage> {
        (word >> 31 == 1).then(|| AfcMessage {
            pipe: u2::new(((word >> 29) & 0x3) as u8),
            mac: u4::new(((word >> 25) & 0xf) as u8),
            mac_qid: u7::new(((word >> 15) & 0x7f) as u8),
            credit: u15::new((word & 0x7fff) as u16),
        })
    }

    /// The 32-bit word (pad bits 0).
    pub fn encode(&self) -> u32 {
        1 << 31
            | (self.pipe.value() as u32) << 29
            | (self.mac.value() as u32) << 25
            | (self.mac_qid.value() as u32) << 15
            | self.credit.value() as u32
    }
}

impl Chip {
    /// PFC requests of this cycle's admissions and dequeues: they leave from the ingress
    /// port of the traffic, next cycle, ahead of any data still in the egress pipeline; the
    /// TM counts them against that port's MAC.
    pub(super) fn pfc_requests(&mut self, now: Cycle, pool: &mut PacketPool) {
        while let Some(event) = self.tm.pop_pfc_event(now) {
            let port = event.ingress_port as usize;
            if self.ports[port].recirculation {
                // Recirculated traffic has no upstream to pause.
                continue;
            }
            let quanta = if event.xoff {
                self.counters.pfc_xoff_sent += 1;
                self.params.tm.pfc_pause_quanta
            } else {
                self.counters.pfc_xon_sent += 1;
                0
            };
            let mut bytes = Vec::with_capacity(crate::pfc::PFC_FRAME_BYTES);
            let dev = self.ports[port].dev_port.to_be_bytes();
            PfcFrame::one_class(event.class, quanta)
                .write([2, 0, 0, 0xfc, dev[0], dev[1]], &mut bytes);
            let pkt = pool.alloc_from(&bytes);
            self.tm.note_mac_frame(port, now + 1, pool.frame_bytes(pkt));
            self.hand_to_mac(now, port, pkt, pool);
        }
    }

    /// An `adv_flow_ctl` word leaving a deparser in cycle `now` (`docs/timing.md`, AFC).
    pub(super) fn deparser_afc(&mut self, now: Cycle, word: u32) {
        let Some(afc) = AfcMessage::decode(word) else {
            return;
        };
        match self.afc_target(afc) {
            Some((port, queue)) => {
                self.tm
                    .afc(now, port, queue, afc.credit.value() != 0)
                    .expect("afc_target names a TM port");
                self.counters.afc_requests += 1;
            }
            None => self.counters.afc_unaddressed += 1,
        }
    }

    /// The port and queue an AFC message names: MAC 0 of a pipe (device ports 0-7) is its
    /// recirculation port's group, MAC `m + 1` the pipe's front-panel MAC `m` (device ports
    /// `8 (m + 1)..`); the queue is found in that group's carving.
    pub fn afc_target(&self, afc: AfcMessage) -> Option<(usize, u8)> {
        let (pipe, mac) = (afc.pipe.value() as u32, afc.mac.value() as u32);
        if pipe >= self.params.pipes {
            return None;
        }
        let group = if mac == 0 {
            self.recirculation_port(pipe as usize)?;
            self.params.pipes * self.params.macs_per_pipe + pipe
        } else if mac - 1 < self.params.macs_per_pipe {
            pipe * self.params.macs_per_pipe + mac - 1
        } else {
            return None;
        };
        self.tm
            .afc_queue(group as usize, afc.mac_qid.value() as u32)
    }

    /// The AFC address of queue `queue` of port `port`, for building `adv_flow_ctl` words.
    pub fn afc_address(&self, port: usize, queue: usize) -> Option<(u8, u8, u8)> {
        let (group, mac_qid) = self.tm.group_queue(port, queue)?;
        let (pipes, macs) = (
            self.params.pipes as usize,
            self.params.macs_per_pipe as usize,
        );
        let (pipe, mac) = if group >= pipes * macs {
            (group - pipes * macs, 0)
        } else {
            (group / macs, group % macs + 1)
        };
        (mac < 16).then_some((pipe as u8, mac as u8, mac_qid as u8))
    }
}
