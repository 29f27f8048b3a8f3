//! t2-tm: the Tofino2 traffic manager, from enqueue to the MAC.
//!
//! The TM moves descriptors, never PHVs: a descriptor names the packet (an opaque handle
//! from the chip), its length and its ports. Admission charges the frame's cells to the
//! shared buffer and drops (counted, with a reason) when the buffer or the port's queue
//! limit is full. Each port has a FIFO queue; each pipe's scheduler sends at most one
//! descriptor per cycle into that pipe's egress, round-robin over its ports, and only when
//! the port's MAC will be free by the time the packet reaches it, so the egress never
//! piles up behind a slow port. [`mac::MacTx`] serializes frames at the port's rate.

pub mod mac;
pub mod params;

pub use mac::MacTx;
pub use params::TmParams;

use std::collections::VecDeque;
use t2_clock::{Cycle, LineRate};

/// A packet as the TM sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// The chip's packet handle; opaque here.
    pub pkt: u32,
    /// Frame length, FCS included.
    pub frame_bytes: u32,
    /// Chip port index the packet came in on.
    pub ingress_port: u16,
    /// Chip port index it goes out of.
    pub egress_port: u16,
    /// Queue within the egress port, as ingress chose it.
    pub qid: u8,
}

/// Why the TM dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TmDrop {
    /// The shared buffer had too few free cells.
    BufferFull,
    /// The egress port's queue was at its cell limit.
    QueueLimit,
}

impl TmDrop {
    pub const ALL: [TmDrop; 2] = [TmDrop::BufferFull, TmDrop::QueueLimit];

    pub fn name(self) -> &'static str {
        match self {
            TmDrop::BufferFull => "tm_buffer_full",
            TmDrop::QueueLimit => "tm_queue_limit",
        }
    }
}

/// How the TM is wired to one egress port.
#[derive(Clone, Copy, Debug)]
pub struct TmPort {
    /// The pipe whose egress serves the port.
    pub pipe: usize,
    /// The port's line rate.
    pub line: LineRate,
}

#[derive(Clone, Copy, Debug)]
struct Queued {
    desc: Descriptor,
    cells: u32,
    /// First cycle it may be dequeued.
    ready_at: Cycle,
}

#[derive(Clone, Debug)]
struct PortState {
    pipe: usize,
    line: LineRate,
    queue: VecDeque<Queued>,
    depth_cells: u32,
    peak_cells: u32,
    /// Line time at which the MAC will have sent everything dequeued so far.
    tx_free_ticks: u64,
    enqueued: u64,
    dequeued: u64,
}

#[derive(Clone, Debug, Default)]
struct PipeScheduler {
    ports: Vec<usize>,
    next: usize,
}

/// Per-port counters and depths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortStats {
    pub depth_cells: u32,
    pub peak_cells: u32,
    pub queued_packets: usize,
    pub enqueued: u64,
    pub dequeued: u64,
}

/// The traffic manager of one chip.
#[derive(Clone, Debug)]
pub struct TrafficManager {
    params: TmParams,
    /// Cycles from a dequeue to the packet reaching its MAC (the egress pipeline between).
    mac_lead: Cycle,
    ports: Vec<PortState>,
    pipes: Vec<PipeScheduler>,
    free_cells: u32,
    drops: [u64; 2],
}

impl TrafficManager {
    /// A TM for `ports` (indexed as the chip indexes them) in a chip of `pipes` pipes.
    /// `mac_lead` is the number of cycles between a dequeue and the packet reaching the MAC.
    /// Panics if a port names a pipe beyond `pipes`; the chip validates its ports first.
    pub fn new(params: TmParams, pipes: usize, ports: &[TmPort], mac_lead: Cycle) -> Self {
        let mut scheds = vec![PipeScheduler::default(); pipes];
        for (i, p) in ports.iter().enumerate() {
            assert!(p.pipe < pipes, "port {i} is on pipe {}", p.pipe);
            scheds[p.pipe].ports.push(i);
        }
        TrafficManager {
            params,
            mac_lead,
            ports: ports
                .iter()
                .map(|p| PortState {
                    pipe: p.pipe,
                    line: p.line,
                    queue: VecDeque::new(),
                    depth_cells: 0,
                    peak_cells: 0,
                    tx_free_ticks: 0,
                    enqueued: 0,
                    dequeued: 0,
                })
                .collect(),
            pipes: scheds,
            free_cells: params.buffer_cells,
            drops: [0; 2],
        }
    }

    pub fn params(&self) -> &TmParams {
        &self.params
    }

    /// Admits a descriptor at `now`, or drops it with the reason (and counts the drop).
    pub fn enqueue(&mut self, now: Cycle, desc: Descriptor) -> Result<(), TmDrop> {
        let cells = self.params.cells_for(desc.frame_bytes as u64);
        let port = &mut self.ports[desc.egress_port as usize];
        let verdict = if cells > self.free_cells {
            Err(TmDrop::BufferFull)
        } else if self
            .params
            .port_queue_limit_cells
            .is_some_and(|limit| port.depth_cells + cells > limit)
        {
            Err(TmDrop::QueueLimit)
        } else {
            Ok(())
        };
        if let Err(reason) = verdict {
            self.drops[reason as usize] += 1;
            return verdict;
        }
        self.free_cells -= cells;
        port.depth_cells += cells;
        port.peak_cells = port.peak_cells.max(port.depth_cells);
        port.enqueued += 1;
        port.queue.push_back(Queued {
            desc,
            cells,
            ready_at: now + self.params.queue_latency_cycles as Cycle,
        });
        Ok(())
    }

    /// The first cycle at which port `p`'s head may leave, or `None` if its queue is empty.
    fn port_ready_at(&self, p: usize) -> Option<Cycle> {
        let port = &self.ports[p];
        let head = port.queue.front()?;
        // The MAC must finish what it has by the end of the cycle the packet reaches it:
        // dequeue at d is allowed when tx_free < (d + mac_lead + 1) * ticks_per_cycle.
        let credit =
            (port.tx_free_ticks / port.line.ticks_per_cycle()).saturating_sub(self.mac_lead);
        Some(head.ready_at.max(credit))
    }

    /// Picks the descriptor that pipe `pipe`'s egress takes at `now`, if any.
    pub fn dequeue(&mut self, pipe: usize, now: Cycle) -> Option<Descriptor> {
        let n = self.pipes[pipe].ports.len();
        let start = self.pipes[pipe].next;
        let chosen = (0..n).map(|i| (start + i) % n).find(|&i| {
            self.port_ready_at(self.pipes[pipe].ports[i])
                .is_some_and(|t| t <= now)
        })?;
        self.pipes[pipe].next = (chosen + 1) % n;
        let p = self.pipes[pipe].ports[chosen];
        let port = &mut self.ports[p];
        let q = port.queue.pop_front().expect("a ready port has a head");
        port.depth_cells -= q.cells;
        port.dequeued += 1;
        self.free_cells += q.cells;
        let arrive = port.line.cycle_to_ticks(now + self.mac_lead);
        port.tx_free_ticks = port.tx_free_ticks.max(arrive)
            + port.line.serialization_ticks(q.desc.frame_bytes as u64);
        debug_assert_eq!(port.pipe, pipe);
        Some(q.desc)
    }

    /// The first cycle after `now` at which some pipe can dequeue.
    pub fn next_event(&self, now: Cycle) -> Option<Cycle> {
        (0..self.ports.len())
            .filter_map(|p| self.port_ready_at(p))
            .map(|t| t.max(now + 1))
            .min()
    }

    /// Pipes that have at least one port with a packet queued.
    pub fn pipe_has_work(&self, pipe: usize) -> bool {
        self.pipes[pipe]
            .ports
            .iter()
            .any(|&p| !self.ports[p].queue.is_empty())
    }

    pub fn free_cells(&self) -> u32 {
        self.free_cells
    }

    /// Descriptors held in all queues.
    pub fn queued_packets(&self) -> usize {
        self.ports.iter().map(|p| p.queue.len()).sum()
    }

    pub fn port_stats(&self, p: usize) -> PortStats {
        let s = &self.ports[p];
        PortStats {
            depth_cells: s.depth_cells,
            peak_cells: s.peak_cells,
            queued_packets: s.queue.len(),
            enqueued: s.enqueued,
            dequeued: s.dequeued,
        }
    }

    /// Packets dropped for `reason` so far.
    pub fn drops(&self, reason: TmDrop) -> u64 {
        self.drops[reason as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_clock::Clock;

    fn tm(params: TmParams) -> TrafficManager {
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        let ports = [
            TmPort { pipe: 0, line },
            TmPort { pipe: 0, line },
            TmPort { pipe: 1, line },
        ];
        TrafficManager::new(params, 2, &ports, 10)
    }

    fn desc(pkt: u32, egress: u16, bytes: u32) -> Descriptor {
        Descriptor {
            pkt,
            frame_bytes: bytes,
            ingress_port: 2,
            egress_port: egress,
            qid: 0,
        }
    }

    #[test]
    fn holds_packets_for_the_queue_latency_then_paces_to_the_line() {
        let mut t = tm(TmParams::default());
        t.enqueue(0, desc(1, 0, 1480)).unwrap();
        t.enqueue(0, desc(2, 0, 1480)).unwrap();
        assert_eq!(t.port_stats(0).depth_cells, 18);
        assert_eq!(t.next_event(0), Some(300));
        assert_eq!(t.dequeue(0, 299), None);
        assert_eq!(t.dequeue(0, 300).map(|d| d.pkt), Some(1));
        // The MAC gets packet 1 at 310 and is busy until 490; packet 2 may reach it at 490.
        assert_eq!(t.next_event(300), Some(480));
        assert_eq!(t.dequeue(0, 479), None);
        assert_eq!(t.dequeue(0, 480).map(|d| d.pkt), Some(2));
        assert_eq!(t.free_cells(), 393_216);
        assert_eq!(t.next_event(480), None);
    }

    #[test]
    fn one_dequeue_per_pipe_per_cycle_round_robin() {
        let mut t = tm(TmParams::default());
        for k in 0..2 {
            t.enqueue(0, desc(10 + k, 0, 64)).unwrap();
            t.enqueue(0, desc(20 + k, 1, 64)).unwrap();
            t.enqueue(0, desc(30 + k, 2, 64)).unwrap();
        }
        assert!(t.pipe_has_work(0) && t.pipe_has_work(1));
        let got: Vec<_> = (300..304)
            .map(|c| {
                (
                    t.dequeue(0, c).map(|d| d.pkt),
                    t.dequeue(1, c).map(|d| d.pkt),
                )
            })
            .collect();
        // Pipe 0 alternates its two ports; port 2 (pipe 1) must wait for its MAC.
        assert_eq!(got[0], (Some(10), Some(30)));
        assert_eq!(got[1], (Some(20), None));
        assert_eq!(got[2], (None, None));
    }

    #[test]
    fn drops_are_counted_by_reason() {
        let mut t = tm(TmParams {
            buffer_cells: 20,
            port_queue_limit_cells: Some(10),
            ..TmParams::default()
        });
        assert!(t.enqueue(0, desc(1, 0, 1480)).is_ok()); // 9 cells
        assert_eq!(t.enqueue(0, desc(2, 0, 1480)), Err(TmDrop::QueueLimit));
        assert!(t.enqueue(0, desc(3, 1, 1480)).is_ok());
        assert_eq!(t.enqueue(0, desc(4, 2, 1480)), Err(TmDrop::BufferFull));
        assert_eq!(t.drops(TmDrop::QueueLimit), 1);
        assert_eq!(t.drops(TmDrop::BufferFull), 1);
        assert_eq!(t.queued_packets(), 2);
        assert_eq!(t.free_cells(), 2);
    }
}
