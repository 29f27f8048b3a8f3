//! Flow control the chip takes part in: AFC words from the deparsers pausing and resuming TM
//! queues (and their addressing), and the PFC frames the TM's lossless classes ask for.

use super::*;

impl Chip {
    /// PFC requests of this cycle's admissions and dequeues: they leave from the ingress
    /// port of the traffic, next cycle, ahead of any data still in the egress pipeline; the
    /// TM counts them against that port's MAC.
    pub(super) fn pfc_requests(&mut self, now: Cycle, pool: &mut PacketPool) {
        while let Some(event) = self.tm.pop_pfc_event() {
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
            self.to_mac.push_back((now + 1, port, pkt));
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
                    .afc(now, port, queue, afc.credit != 0)
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
        let (pipe, mac) = (afc.pipe as u32, afc.mac as u32);
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
        self.tm.afc_queue(group as usize, afc.mac_qid as u32)
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
