//! The per-port queue scheduler: min-rate guarantees, then 8 strict priorities with DWRR
//! inside each priority, over the queues that may send now.
//!
//! A queue *may send* in a cycle when it is not paused, its head has waited out the TM's
//! queue latency and its max-rate shaper conforms. Among those:
//! 1. queues still below their min-rate guarantee go first: highest priority, then
//!    round-robin by queue index;
//! 2. otherwise the highest priority that has a queue that may send is served, and inside
//!    it deficit-weighted round robin (DWRR) shares the port by wire bytes in proportion to
//!    the weights. Each time the round reaches a queue it gets `weight x quantum` bytes of
//!    credit; it sends while its head fits in its credit; an emptied queue loses its credit.
//!    Queues of weight 0 are served, round-robin, only when no weighted queue may send.
//!
//! The sets of queues are `u128` bit masks (a port has at most 128 queues), so the cost of a
//! choice follows the number of backlogged queues, not the number configured. Choosing
//! changes state (credit, round pointers), so it happens only when a packet really leaves.

use crate::queue::{Queue, PRIORITIES};
use t2_clock::Cycle;

/// A set of queue indices of one port.
pub(crate) type QueueSet = u128;

pub(crate) fn bit(q: usize) -> QueueSet {
    1u128 << q
}

/// The lowest member of `set` above `after` (or the lowest member, with no `after`), wrapping
/// round to the lowest member when there is none above.
pub(crate) fn next_after(set: QueueSet, after: Option<usize>) -> Option<usize> {
    if set == 0 {
        return None;
    }
    let above = match after {
        Some(a) if a >= 127 => 0,
        Some(a) => set & !((bit(a + 1)) - 1),
        None => set,
    };
    let pick = if above != 0 { above } else { set };
    Some(pick.trailing_zeros() as usize)
}

/// Scheduling state of one port.
#[derive(Clone, Debug)]
pub(crate) struct PortScheduler {
    /// Queues of each priority.
    by_priority: [QueueSet; PRIORITIES],
    /// Queues with a DWRR weight above 0.
    weighted: QueueSet,
    /// Queues that hold at least one descriptor.
    pub backlogged: QueueSet,
    /// The queue each priority's DWRR round is at (it has had its credit for this visit).
    dwrr_at: [Option<usize>; PRIORITIES],
    /// Round-robin position among queues served for their guarantee.
    guarantee_at: Option<usize>,
    /// Bytes of DWRR credit per unit of weight.
    quantum_bytes: u64,
}

impl PortScheduler {
    pub fn new(queues: &[Queue], quantum_bytes: u32) -> PortScheduler {
        let mut by_priority = [0; PRIORITIES];
        let mut weighted = 0;
        for (i, q) in queues.iter().enumerate() {
            by_priority[q.config.priority as usize] |= bit(i);
            if q.config.weight > 0 {
                weighted |= bit(i);
            }
        }
        PortScheduler {
            by_priority,
            weighted,
            backlogged: 0,
            dwrr_at: [None; PRIORITIES],
            guarantee_at: None,
            quantum_bytes: quantum_bytes as u64,
        }
    }

    fn members(set: QueueSet) -> impl Iterator<Item = usize> {
        let mut rest = set;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let q = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(q)
        })
    }

    /// The first cycle at which some queue may send, ignoring the MAC; `None` if none can
    /// until something changes (all empty or paused).
    pub fn eligible_from(&self, queues: &[Queue]) -> Option<Cycle> {
        Self::members(self.backlogged)
            .filter_map(|q| queues[q].eligible_from())
            .min()
    }

    fn highest_priority(&self, set: QueueSet) -> QueueSet {
        self.by_priority
            .iter()
            .rev()
            .map(|&members| set & members)
            .find(|&s| s != 0)
            .unwrap_or(0)
    }

    /// Chooses the queue that sends in cycle `now` and charges it its DWRR credit, or `None`
    /// if no queue may send.
    pub fn choose(&mut self, queues: &mut [Queue], now: Cycle) -> Option<usize> {
        let mut may_send: QueueSet = 0;
        let mut below_guarantee: QueueSet = 0;
        for q in Self::members(self.backlogged) {
            if queues[q].eligible(now) {
                may_send |= bit(q);
                if queues[q].below_guarantee(now) {
                    below_guarantee |= bit(q);
                }
            }
        }
        if may_send == 0 {
            return None;
        }
        if below_guarantee != 0 {
            let band = self.highest_priority(below_guarantee);
            let q = next_after(band, self.guarantee_at)?;
            self.guarantee_at = Some(q);
            return Some(q);
        }
        let band = self.highest_priority(may_send);
        let prio = self
            .by_priority
            .iter()
            .position(|&m| m & band != 0)
            .expect("the band has a priority");
        let weighted = band & self.weighted;
        if weighted == 0 {
            // Only weight-0 queues may send: plain round robin.
            let q = next_after(band, self.dwrr_at[prio])?;
            self.dwrr_at[prio] = Some(q);
            return Some(q);
        }
        let mut at = self.dwrr_at[prio];
        loop {
            if let Some(q) = at.filter(|&q| weighted & bit(q) != 0) {
                let cost = queues[q].fifo.front().expect("may send").desc.wire_bytes();
                if queues[q].deficit >= cost {
                    queues[q].deficit -= cost;
                    self.dwrr_at[prio] = Some(q);
                    return Some(q);
                }
            }
            // The round moves on and the next queue gets its credit for this visit.
            let q = next_after(weighted, at).expect("weighted is not empty");
            queues[q].deficit += queues[q].config.weight as u64 * self.quantum_bytes;
            at = Some(q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_after_wraps_round() {
        let set = bit(3) | bit(9) | bit(127);
        assert_eq!(next_after(set, None), Some(3));
        assert_eq!(next_after(set, Some(3)), Some(9));
        assert_eq!(next_after(set, Some(5)), Some(9));
        assert_eq!(next_after(set, Some(9)), Some(127));
        assert_eq!(next_after(set, Some(127)), Some(3));
        assert_eq!(next_after(bit(4), Some(4)), Some(4));
        assert_eq!(next_after(0, Some(4)), None);
    }
}
