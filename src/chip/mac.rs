//! The MACs. Receive: frames from the link into the port's receive FIFO, PFC frames honoured.
//! Transmit: frames due from the egress (and PFC frames) start serializing, and frames whose
//! last bit left go to the link, or back into the pipe's ingress from a recirculation port.

use super::{Chip, ChipDrop};
use crate::pfc::PfcFrame;
use std::cmp::Reverse;
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::Sent;

impl Chip {
    /// The receive MAC: a frame whose last bit reached port `port` in cycle `now`. PFC frames
    /// are MAC control frames, honoured here (the TM holds the port's queues of each enabled
    /// class) and not passed on; others wait in the port's receive FIFO, or are dropped when
    /// it is full.
    pub(super) fn mac_receive(
        &mut self,
        now: Cycle,
        port: usize,
        pkt: PacketHandle,
        pool: &mut PacketPool,
    ) {
        if let Some(pfc) = PfcFrame::parse(pool.bytes(pkt)) {
            // The MAC honours it: the TM holds the port's queues of each enabled class.
            for class in 0..8u8 {
                if pfc.class_enable[class as usize] {
                    self.tm
                        .pfc_pause(now, port, class, pfc.quanta[class as usize])
                        .expect("a chip port and a class below 8");
                }
            }
            self.counters.pfc_frames_received += 1;
            pool.free(pkt);
            return;
        }
        self.counters.received += 1;
        if let Some(t) = self.trace.as_mut() {
            t.arrived(now, port, pkt.index());
        }
        let p = &mut self.ports[port];
        p.rx_frames += 1;
        if p.rx_fifo.len() >= self.params.rx_fifo_frames as usize {
            self.drop(ChipDrop::RxFifoFull, pkt, pool);
        } else {
            p.rx_fifo.push_from_link(now, pkt);
            self.rx_waiting += 1;
        }
    }

    /// Hands `pkt` in cycle `now` to port `port`'s transmit MAC, which takes it a cycle
    /// later (the registered crossing into the MAC).
    ///
    /// What the MAC does with a frame (when it starts and ends) depends only on the frames
    /// handed to it before, all of which it has already taken, so it can be worked out now
    /// for the cycle it reaches the MAC: that spares the chip a visit in that cycle. Only a
    /// trace, which samples the MAC in the cycle between, needs the frame on the wire.
    pub(super) fn hand_to_mac(
        &mut self,
        now: Cycle,
        port: usize,
        pkt: PacketHandle,
        pool: &PacketPool,
    ) {
        if self.trace.is_some() {
            self.to_mac.send(now, (port, pkt));
        } else {
            self.mac_start(now + 1, port, pkt, pool);
        }
    }

    /// Port `port`'s MAC takes `pkt` in cycle `at`.
    fn mac_start(&mut self, at: Cycle, port: usize, pkt: PacketHandle, pool: &PacketPool) {
        let frame = pool.frame_bytes(pkt);
        let done = self.ports[port].mac.start(at, pkt.index(), frame);
        self.mac_done.push(Reverse((done, port)));
        self.mac_next_done = self.mac_next_done.min(done);
    }

    /// Starts frames due in cycle `now` and hands on those whose last bit left.
    pub(super) fn macs(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        while let Some((port, pkt)) = self.to_mac.recv(now) {
            self.mac_start(now, port, pkt, pool);
        }
        if self.mac_next_done > now {
            return;
        }
        // The ports with a frame done, from the calendar of frame ends, in port order (the
        // order they reach the links in).
        let mut due = std::mem::take(&mut self.mac_due);
        due.clear();
        while let Some(&Reverse((done, port))) = self.mac_done.peek() {
            if done > now {
                break;
            }
            self.mac_done.pop();
            due.push(port);
        }
        due.sort_unstable();
        due.dedup();
        for &i in &due {
            while let Some(pkt) = self.ports[i].mac.pop_sent(now) {
                let pkt = PacketHandle::from_index(pkt);
                let port = &mut self.ports[i];
                port.tx_frames += 1;
                port.tx_bytes += pool.frame_bytes(pkt);
                if !port.recirculation {
                    self.counters.transmitted += 1;
                    if self.mirror.copies.remove(&pkt.index()) {
                        self.counters.mirror_delivered += 1;
                    }
                    if let Some(t) = self.trace.as_mut() {
                        t.forget(pkt.index());
                    }
                    out.push(Sent { port: i, pkt });
                } else if port.rx_fifo.len() < self.params.rx_fifo_frames as usize {
                    // Back into the pipe's ingress, waiting for an ingress slot like any frame.
                    port.rx_frames += 1;
                    port.rx_fifo.push_from_mac(now, pkt);
                    self.rx_waiting += 1;
                    if self.pktgen.in_mac.remove(&pkt.index()) {
                        // A generated packet, through the pktgen port's share of the group.
                        self.counters.pktgen_arrived += 1;
                    } else {
                        self.counters.recirculated += 1;
                    }
                } else {
                    self.pktgen.in_mac.remove(&pkt.index());
                    self.drop(ChipDrop::RxFifoFull, pkt, pool);
                }
            }
        }
        self.mac_due = due;
        self.mac_next_done = self
            .mac_done
            .peek()
            .map_or(Cycle::MAX, |&Reverse((done, _))| done);
        debug_assert_eq!(
            self.mac_next_done,
            self.ports
                .iter()
                .filter_map(|p| p.mac.next_event())
                .min()
                .unwrap_or(Cycle::MAX)
        );
    }
}
