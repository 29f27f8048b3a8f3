//! Loss recovery: which algorithm a sender runs, and the SACK scoreboard of RFC 6675.
//!
//! - [`Recovery::Sack`] (the default): the receiver reports the blocks it holds beyond its
//!   cumulative point in the TCP SACK option (RFC 2018); the sender keeps them in a
//!   [`SackScoreboard`] and recovers per RFC 6675: loss recovery starts at the third duplicate
//!   ACK or as soon as the first unacknowledged segment counts as lost (`IsLost`), sets
//!   RecoveryPoint = HighData, retransmits the first unacknowledged segment, and then sends
//!   whatever `NextSeg` picks while `pipe` (the bytes it estimates in flight) leaves room in
//!   `cwnd`; it ends at the first ACK that covers RecoveryPoint. After a timeout the same
//!   machinery resends only the holes (every unSACKed byte below RecoveryPoint counts as
//!   lost, RFC 6675 §5.1).
//! - [`Recovery::NewReno`]: fast retransmit at the third duplicate ACK and fast recovery per
//!   RFC 6582 (recover = HighData; each further duplicate ACK inflates the window by one
//!   segment; a partial ACK retransmits the next hole and deflates the window by what it
//!   acknowledged, plus one segment back if that was at least one; the ACK covering recover
//!   ends it). A timeout goes back to the first unacknowledged byte.
//! - [`Recovery::GoBackN`]: no fast retransmit; a timeout resends everything from the first
//!   unacknowledged byte (the raw senders some tests and schemes are written against).
//!
//! Segments are cut at multiples of the MSS from the flow's first byte and always resent
//! whole, so every ACK and every SACK edge falls on a segment boundary.

use std::collections::BTreeMap;

/// How a sender recovers lost segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Sack,
    NewReno,
    GoBackN,
}

impl Recovery {
    /// The scenario file's name of this choice.
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Sack => "sack",
            Recovery::NewReno => "newreno",
            Recovery::GoBackN => "go-back-n",
        }
    }

    /// Parses a scenario file's name.
    pub fn from_name(name: &str) -> Option<Recovery> {
        [Recovery::Sack, Recovery::NewReno, Recovery::GoBackN]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// DupThresh: duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2, RFC 6675 §2).
pub const DUP_THRESH: u64 = 3;

/// SACK blocks an ACK carries at most: 4, what fits in the 40 option bytes without
/// timestamps (2 NOPs + 2 + 4 x 8 = 36; RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The bytes above the cumulative ACK that the receiver has reported holding (RFC 6675 §3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SackScoreboard {
    /// Disjoint, non-adjacent SACKed ranges: start to end (exclusive).
    sacked: BTreeMap<u64, u64>,
}

impl SackScoreboard {
    /// Records a SACKed range; returns how many bytes were not SACKed before.
    pub fn add(&mut self, mut start: u64, mut end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        // Merge with every range that overlaps or touches [start, end); what they held
        // before is not new.
        let mut held = 0;
        let touching: Vec<(u64, u64)> = self
            .sacked
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            held += e - s;
            self.sacked.remove(&s);
            start = start.min(s);
            end = end.max(e);
        }
        self.sacked.insert(start, end);
        (end - start) - held
    }

    /// Forgets everything below the cumulative point `snd_una`.
    pub fn ack(&mut self, snd_una: u64) {
        while let Some((&s, &e)) = self.sacked.first_key_value() {
            if s >= snd_una {
                break;
            }
            self.sacked.remove(&s);
            if e > snd_una {
                self.sacked.insert(snd_una, e);
                break;
            }
        }
    }

    /// Whether [start, end) has been SACKed whole.
    pub fn is_sacked(&self, start: u64, end: u64) -> bool {
        self.sacked
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &e)| e >= end)
    }

    /// The end of the highest SACKed range.
    pub fn highest(&self) -> Option<u64> {
        self.sacked.last_key_value().map(|(_, &e)| e)
    }

    /// SACKed bytes and ranges at or above `at`.
    pub fn above(&self, at: u64) -> (u64, usize) {
        let mut bytes = 0;
        let mut ranges = 0;
        for (&s, &e) in self.sacked.range(..).rev() {
            if e <= at {
                break;
            }
            bytes += e - s.max(at);
            ranges += 1;
        }
        (bytes, ranges)
    }

    /// RFC 6675 `IsLost` for the segment ending at `end`: DupThresh discontiguous SACKed
    /// ranges above it, or more than (DupThresh - 1) x `mss` SACKed bytes above it.
    pub fn is_lost(&self, end: u64, mss: u64) -> bool {
        let (bytes, ranges) = self.above(end);
        ranges as u64 >= DUP_THRESH || bytes > (DUP_THRESH - 1) * mss
    }

    /// The SACKed ranges in order.
    pub fn ranges(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.sacked.iter().map(|(&s, &e)| (s, e))
    }

    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    pub fn clear(&mut self) {
        self.sacked.clear();
    }
}
