//! The ghost thread's feed: queue-depth updates from the TM to every ingress pipe.
//!
//! Each TM pipe keeps the set of its queues whose depth changed since they were last
//! reported. In every cycle it sends up to `ghost_updates_per_cycle` updates, taking changed
//! queues round-robin by queue slot (port within the pipe, then queue), each with the depth at
//! the end of that cycle. An update reaches the ingress pipes `ghost_latency_cycles` later,
//! without taking a packet slot. Every ingress pipe receives the same updates at the same
//! time, so one view of "the depths ingress has seen" serves them all.
//!
//! The feed is lazy: in a cycle the chip skips, no depth changes, so the updates of skipped
//! cycles are worked out when the TM is next touched (`catch_up`), with the same result as
//! visiting every cycle. Only when the chip runs a ghost control (or traces the updates) does
//! it need each update in its delivery cycle: it then asks the feed to keep delivered
//! updates (`keep_delivered`) and visits every cycle `next_delivery` names.

use arbitrary_int::{u18, u2, u7};
use std::collections::VecDeque;
use t2_clock::Cycle;

/// Queue slots per port in a pipe's changed set (the most queues a port can have).
const SLOTS_PER_PORT: usize = 128;

/// Largest queue length the ghost metadata carries (Tofino2 `qlength` is 18 bits).
pub const GHOST_QLENGTH_MAX: u32 = (1 << 18) - 1;

/// One queue-depth update: which queue, and its depth in cells (saturating at 18 bits). The
/// fields have their architectural widths: 2-bit pipe, 7-bit queue index within the port (a
/// port has at most 128 queues), 18-bit `qlength`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GhostUpdate {
    /// TM pipe of the queue.
    pub pipe: u2,
    /// Chip port index and queue within it.
    pub port: u16,
    pub queue: u7,
    pub qlength: u18,
    /// Alternates between successive updates of one queue: its `k`-th update (from 0)
    /// carries `k mod 2`.
    pub ping_pong: bool,
}

#[derive(Clone, Debug)]
struct GhostPipe {
    /// Changed-queue set: bit `local port x 128 + queue`, 64 slots a word. Plain words, not
    /// a bit-vector type: every enqueue and dequeue marks a slot and every sent update takes
    /// one, so the search for the next set bit is on the TM's hot path.
    changed: Vec<u64>,
    changed_count: usize,
    /// Slot the round robin looks at first.
    next_slot: usize,
}

impl GhostPipe {
    fn new(ports: usize) -> GhostPipe {
        GhostPipe {
            changed: vec![0; (ports * SLOTS_PER_PORT).div_ceil(64)],
            changed_count: 0,
            next_slot: 0,
        }
    }

    fn slots(&self) -> usize {
        self.changed.len() * 64
    }

    fn mark(&mut self, slot: usize) {
        let (w, b) = (slot / 64, 1u64 << (slot % 64));
        if self.changed[w] & b == 0 {
            self.changed[w] |= b;
            self.changed_count += 1;
        }
    }

    /// The first set slot at or after `from` (not wrapping).
    fn first_from(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut word = self.changed.get(w)? & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            word = *self.changed.get(w)?;
        }
    }

    /// Takes the first changed slot at or after `next_slot`, wrapping round.
    fn take_next(&mut self) -> Option<usize> {
        if self.changed_count == 0 {
            return None;
        }
        let slot = self
            .first_from(self.next_slot)
            .or_else(|| self.first_from(0))
            .expect("changed_count says a bit is set");
        self.changed[slot / 64] &= !(1u64 << (slot % 64));
        self.changed_count -= 1;
        self.next_slot = (slot + 1) % self.slots();
        Some(slot)
    }
}

/// The broadcast state of a whole TM.
#[derive(Clone, Debug)]
pub(crate) struct Ghost {
    per_cycle: u32,
    latency: Cycle,
    pipes: Vec<GhostPipe>,
    /// First cycle whose updates have not been sent yet.
    next_cycle: Cycle,
    in_flight: VecDeque<(Cycle, GhostUpdate)>,
    /// Depth of every queue as the ingress pipes last heard it: `[port][queue]`.
    seen: Vec<Vec<u32>>,
    /// `ping_pong` of each queue's next update: `[port][queue]`.
    ping_pong: Vec<Vec<bool>>,
    sent: u64,
    /// Whether delivered updates are kept for the chip (`take_delivered`), which then runs
    /// them as ghost PHVs and must visit every delivery cycle.
    keep: bool,
    delivered: Vec<(Cycle, GhostUpdate)>,
}

impl Ghost {
    /// `ports_per_pipe[p]` is the number of ports on pipe `p`; `queues[port]` its queues.
    pub fn new(per_cycle: u32, latency: u32, ports_per_pipe: &[usize], queues: &[usize]) -> Ghost {
        Ghost {
            per_cycle,
            latency: latency as Cycle,
            pipes: ports_per_pipe.iter().map(|&n| GhostPipe::new(n)).collect(),
            next_cycle: 0,
            in_flight: VecDeque::new(),
            seen: queues.iter().map(|&n| vec![0; n]).collect(),
            ping_pong: queues.iter().map(|&n| vec![false; n]).collect(),
            sent: 0,
            keep: false,
            delivered: Vec::new(),
        }
    }

    /// Notes that queue `queue` of the port at `local_port` of pipe `pipe` changed depth.
    pub fn mark(&mut self, pipe: usize, local_port: usize, queue: usize) {
        if self.per_cycle > 0 {
            self.pipes[pipe].mark(local_port * SLOTS_PER_PORT + queue);
        }
    }

    /// Resizes a port's view after its queues were re-carved (the port was empty).
    pub fn resize_port(&mut self, port: usize, queues: usize) {
        self.seen[port] = vec![0; queues];
        self.ping_pong[port] = vec![false; queues];
    }

    /// Sends the updates of every cycle before `now` and delivers those due by `now`.
    /// `locate(pipe, local_port)` names the chip port; `depth(port, queue)` reads a depth,
    /// which has not changed since the last cycle that was not skipped.
    pub fn catch_up(
        &mut self,
        now: Cycle,
        locate: impl Fn(usize, usize) -> usize,
        depth: impl Fn(usize, usize) -> Option<u32>,
    ) {
        while self.next_cycle < now {
            if self.pipes.iter().all(|p| p.changed_count == 0) {
                self.next_cycle = now;
                break;
            }
            let cycle = self.next_cycle;
            for (pipe, state) in self.pipes.iter_mut().enumerate() {
                for _ in 0..self.per_cycle {
                    let Some(slot) = state.take_next() else { break };
                    let port = locate(pipe, slot / SLOTS_PER_PORT);
                    let queue = slot % SLOTS_PER_PORT;
                    // A queue gone since (re-carved port) has nothing to report.
                    let Some(cells) = depth(port, queue) else {
                        continue;
                    };
                    let ping_pong = &mut self.ping_pong[port][queue];
                    self.in_flight.push_back((
                        cycle + self.latency,
                        GhostUpdate {
                            pipe: u2::new(pipe as u8),
                            port: port as u16,
                            queue: u7::new(queue as u8),
                            qlength: u18::new(cells.min(GHOST_QLENGTH_MAX)),
                            ping_pong: *ping_pong,
                        },
                    ));
                    *ping_pong = !*ping_pong;
                    self.sent += 1;
                }
            }
            self.next_cycle += 1;
        }
        while let Some(&(at, u)) = self.in_flight.front() {
            if at > now {
                break;
            }
            self.in_flight.pop_front();
            if let Some(q) = self.seen[u.port as usize].get_mut(u.queue.value() as usize) {
                *q = u.qlength.value();
            }
            if self.keep {
                self.delivered.push((at, u));
            }
        }
    }

    /// Keeps delivered updates for [`Ghost::take_delivered`] from now on (or stops).
    pub fn keep_delivered(&mut self, keep: bool) {
        self.keep = keep;
        if !keep {
            self.delivered.clear();
        }
    }

    /// Moves the kept updates (delivery cycle, update), in delivery order, into `out`.
    pub fn take_delivered(&mut self, out: &mut Vec<(Cycle, GhostUpdate)>) {
        out.append(&mut self.delivered);
    }

    /// The first cycle at which an update not yet delivered reaches the ingress pipes: the
    /// oldest in flight, or, if a queue is waiting to be reported, the first cycle not yet
    /// sent plus the latency (a waiting queue is reported in that very cycle).
    pub fn next_delivery(&self) -> Option<Cycle> {
        let waiting = self.pipes.iter().any(|p| p.changed_count > 0);
        let flying = self.in_flight.front().map(|&(at, _)| at);
        let next_sent = waiting.then_some(self.next_cycle + self.latency);
        flying.into_iter().chain(next_sent).min()
    }

    /// The depth of a queue as the ingress pipes have heard it, as of the last catch-up.
    pub fn seen(&self, port: usize, queue: usize) -> u32 {
        self.seen[port][queue]
    }

    /// Updates sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changed_set_is_served_round_robin_from_the_last_slot() {
        let mut p = GhostPipe::new(2);
        for slot in [200, 3, 130, 3] {
            p.mark(slot);
        }
        assert_eq!(p.changed_count, 3, "a slot marked twice counts once");
        assert_eq!(p.take_next(), Some(3));
        p.mark(1);
        // After slot 3: 130, 200, then round to 1.
        assert_eq!(p.take_next(), Some(130));
        assert_eq!(p.take_next(), Some(200));
        assert_eq!(p.take_next(), Some(1));
        assert_eq!(p.take_next(), None);
        // From slot 2: the last slot, then round to 0.
        p.mark(255);
        p.mark(0);
        assert_eq!(p.take_next(), Some(255));
        assert_eq!(p.take_next(), Some(0));
        p.mark(7);
        assert_eq!(p.take_next(), Some(7));
    }
}
