//! The registered wires between the chip's blocks, and the ports' receive FIFOs.
//!
//! A block never sees in a cycle what another block produced in that same cycle: everything
//! it hands on goes onto a [`Wire`] whose consumer sees it a fixed latency later (a cycle or
//! more). So the order in which the chip runs its blocks within a cycle changes no result,
//! and the one-cycle rule lives in one type instead of in each block's arithmetic.

use std::collections::VecDeque;
use t2_clock::Cycle;
use t2_pipeline::PacketHandle;

/// A registered wire: what is sent in cycle `now` arrives in cycle `now + latency`, and the
/// consumer takes it from then on, in the order it was sent.
#[derive(Clone, Debug)]
pub(super) struct Wire<T> {
    latency: Cycle,
    /// (arrival cycle, item), in arrival order (one latency and a clock that only advances).
    items: VecDeque<(Cycle, T)>,
}

impl<T> Wire<T> {
    /// A wire of `latency` cycles (at least 1).
    pub(super) fn new(latency: Cycle) -> Wire<T> {
        assert!(latency >= 1, "a registered wire takes at least one cycle");
        Wire {
            latency,
            items: VecDeque::new(),
        }
    }

    /// Puts `item` on the wire in cycle `now`.
    pub(super) fn send(&mut self, now: Cycle, item: T) {
        let arrives = now + self.latency;
        debug_assert!(self.items.back().is_none_or(|&(at, _)| at <= arrives));
        self.items.push_back((arrives, item));
    }

    /// The oldest item that has arrived by cycle `now`, taken off the wire.
    pub(super) fn recv(&mut self, now: Cycle) -> Option<T> {
        match self.items.front() {
            Some(&(at, _)) if at <= now => self.items.pop_front().map(|(_, item)| item),
            _ => None,
        }
    }

    /// The cycle the oldest item arrives (`None`: the wire is empty).
    pub(super) fn next_arrival(&self) -> Option<Cycle> {
        self.items.front().map(|&(at, _)| at)
    }

    /// Items on the wire, arrived or not.
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }
}

/// A port's receive FIFO: frames whose last bit has reached the port, waiting for the pipe's
/// ingress arbiter, each with the cycle it arrived (the ingress MAC time stamp).
///
/// A frame from the link may enter the ingress in the cycle it arrived: the kernel delivers a
/// cycle's frames before the chip runs that cycle, and the link itself is the registered
/// crossing. A frame from the port's own MAC (a recirculation port) crosses a block boundary
/// inside the chip, so the arbiter may take it from the next cycle on, whatever the order of
/// the blocks.
#[derive(Clone, Debug, Default)]
pub(super) struct RxFifo {
    /// (cycle the arbiter may take it, packet, cycle its last bit arrived), oldest first.
    frames: VecDeque<(Cycle, PacketHandle, Cycle)>,
}

impl RxFifo {
    /// A frame from the link whose last bit reached the port in cycle `now`.
    pub(super) fn push_from_link(&mut self, now: Cycle, pkt: PacketHandle) {
        self.frames.push_back((now, pkt, now));
    }

    /// A frame whose last bit left the port's own MAC in cycle `now` (recirculation).
    pub(super) fn push_from_mac(&mut self, now: Cycle, pkt: PacketHandle) {
        self.frames.push_back((now + 1, pkt, now));
    }

    /// Whether the oldest frame may enter the ingress in cycle `now`.
    pub(super) fn ready(&self, now: Cycle) -> bool {
        self.frames.front().is_some_and(|&(at, _, _)| at <= now)
    }

    /// The oldest frame, if it may enter the ingress in cycle `now`, with its arrival cycle.
    pub(super) fn take(&mut self, now: Cycle) -> Option<(PacketHandle, Cycle)> {
        if !self.ready(now) {
            return None;
        }
        self.frames
            .pop_front()
            .map(|(_, pkt, arrived)| (pkt, arrived))
    }

    /// Frames waiting, ready or not.
    pub(super) fn len(&self) -> usize {
        self.frames.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wire_delivers_after_its_latency_in_order() {
        let mut w = Wire::new(2);
        w.send(10, 'a');
        w.send(11, 'b');
        assert_eq!(w.next_arrival(), Some(12));
        assert_eq!(w.recv(11), None);
        assert_eq!(w.recv(12), Some('a'));
        assert_eq!(w.recv(12), None);
        assert_eq!(w.len(), 1);
        assert_eq!(w.recv(20), Some('b'));
        assert_eq!(w.next_arrival(), None);
    }

    #[test]
    #[should_panic(expected = "at least one cycle")]
    fn a_wire_of_no_latency_is_refused() {
        let _ = Wire::<u8>::new(0);
    }

    #[test]
    fn link_frames_are_ready_at_once_and_recirculated_ones_a_cycle_later() {
        let mut link = RxFifo::default();
        link.push_from_link(5, PacketHandle::from_index(1));
        assert_eq!(link.take(5), Some((PacketHandle::from_index(1), 5)));
        let mut recirc = RxFifo::default();
        recirc.push_from_mac(5, PacketHandle::from_index(2));
        assert!(!recirc.ready(5));
        assert_eq!(recirc.take(5), None);
        assert_eq!(recirc.take(6), Some((PacketHandle::from_index(2), 5)));
        assert_eq!(recirc.len(), 0);
    }
}
