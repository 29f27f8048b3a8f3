//! The transmit side of a MAC: frames leave at the port's line rate.
//!
//! Times on the line are exact (line ticks, see `t2_clock::LineRate`), so back-to-back frames
//! follow each other with no rounding loss even when a frame is not a whole number of cycles.
//! A frame is handed to the link in the cycle its last bit leaves.

use std::collections::VecDeque;
use t2_clock::{Cycle, LineRate};

/// One port's serializer.
#[derive(Clone, Debug)]
pub struct MacTx {
    line: LineRate,
    /// Line time at which the last started frame's last bit leaves.
    free_at_ticks: u64,
    /// Frames on the wire: (cycle the last bit leaves, packet).
    sending: VecDeque<(Cycle, u32)>,
    frames: u64,
    bytes: u64,
}

impl MacTx {
    pub fn new(line: LineRate) -> MacTx {
        MacTx {
            line,
            free_at_ticks: 0,
            sending: VecDeque::new(),
            frames: 0,
            bytes: 0,
        }
    }

    pub fn line(&self) -> LineRate {
        self.line
    }

    /// Starts sending a frame that reached the MAC in cycle `now`, as soon as the previous
    /// one is out. Returns the cycle its last bit leaves.
    pub fn start(&mut self, now: Cycle, pkt: u32, frame_bytes: u64) -> Cycle {
        let start = self.free_at_ticks.max(self.line.cycle_to_ticks(now));
        self.free_at_ticks = start + self.line.serialization_ticks(frame_bytes);
        let done = self.line.ticks_to_cycle_ceil(self.free_at_ticks);
        self.sending.push_back((done, pkt));
        self.frames += 1;
        self.bytes += frame_bytes;
        done
    }

    /// The frame whose last bit has left by `now`, if any (call until `None`).
    pub fn pop_sent(&mut self, now: Cycle) -> Option<u32> {
        match self.sending.front() {
            Some(&(done, pkt)) if done <= now => {
                self.sending.pop_front();
                Some(pkt)
            }
            _ => None,
        }
    }

    /// The cycle the next frame finishes, if one is on the wire.
    pub fn next_event(&self) -> Option<Cycle> {
        self.sending.front().map(|&(done, _)| done)
    }

    /// Frames still being serialized.
    pub fn in_flight(&self) -> usize {
        self.sending.len()
    }

    /// Whether the line is sending during cycle `now`.
    pub fn busy(&self, now: Cycle) -> bool {
        self.free_at_ticks > self.line.cycle_to_ticks(now)
    }

    /// The packet being serialized during cycle `now`, once the frames finished by `now`
    /// have been popped ([`MacTx::pop_sent`]).
    pub fn on_wire(&self, now: Cycle) -> Option<u32> {
        if self.busy(now) {
            self.sending.front().map(|&(_, pkt)| pkt)
        } else {
            None
        }
    }

    /// Frames and bytes (FCS included, preamble excluded) started so far.
    pub fn totals(&self) -> (u64, u64) {
        (self.frames, self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_clock::Clock;

    #[test]
    fn back_to_back_frames_are_exactly_one_serialization_apart() {
        let mut mac = MacTx::new(LineRate::new(Clock::tofino2(), 100_000_000_000));
        // 64 B frames take 10.08 cycles: ends at 10.08, 20.16, 30.24 ... cycles.
        let ends: Vec<Cycle> = (0..5).map(|k| mac.start(0, k, 64)).collect();
        assert_eq!(ends, vec![11, 21, 31, 41, 51]);
        let mut mac = MacTx::new(LineRate::new(Clock::tofino2(), 100_000_000_000));
        let ends: Vec<Cycle> = (0..3).map(|k| mac.start(7, k, 1480)).collect();
        assert_eq!(ends, vec![187, 367, 547]);
        assert_eq!(mac.pop_sent(186), None);
        assert_eq!(mac.pop_sent(187), Some(0));
        assert_eq!(mac.pop_sent(187), None);
        assert!(mac.busy(546));
        assert!(!mac.busy(547));
    }

    #[test]
    fn an_idle_line_starts_at_once() {
        let mut mac = MacTx::new(LineRate::new(Clock::tofino2(), 400_000_000_000));
        assert_eq!(mac.start(100, 0, 1480), 145);
        assert_eq!(mac.start(1000, 1, 1480), 1045);
        assert_eq!(mac.totals(), (2, 2960));
    }
}
