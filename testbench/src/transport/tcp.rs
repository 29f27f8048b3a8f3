//! One flow's TCP state: the sender's window, timer and loss recovery, and the receiver's
//! reassembly with the SACK blocks it reports.
//!
//! The sender follows RFC 5681 / 6582 / 6675 (see [`super::recovery`]) with the timer of
//! RFC 6298 (see [`super::rto`]): the timer runs while data is outstanding, starts when a
//! segment is sent and none runs (§5.1), restarts on every ACK of new data (§5.3), stops when
//! everything is acknowledged (§5.2), and on expiry backs off and resends (§5.4-5.6). One
//! segment at a time is timed, and a retransmission cancels the measurement in progress, so
//! no sample ever comes from a retransmitted segment (Karn's rule, RFC 6298 §3).

use super::recovery::{Recovery, SackScoreboard, DUP_THRESH, MAX_SACK_BLOCKS};
use super::rto::RtoEstimator;
use super::window::WindowControl;
use super::Peer;
use crate::workload::FlowSpec;
use std::collections::BTreeMap;
use t2_clock::Cycle;

/// Loss recovery in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct InRecovery {
    /// RecoveryPoint (RFC 6675) / recover (RFC 6582): HighData when it started; the
    /// recovery ends at the ACK that covers it.
    pub point: u64,
    /// Started by a timeout (SACK: every unSACKed byte below `point` counts as lost).
    pub after_rto: bool,
}

/// What one ACK did to its flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct AckEffect {
    /// The ACK advanced the cumulative point.
    pub advanced: bool,
    /// The flow is complete.
    pub finished: bool,
}

/// A flow's state at the sender.
#[derive(Debug)]
pub(super) struct SendFlow {
    pub spec: FlowSpec,
    pub to: Peer,
    pub mss: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// HighData: the end of the highest byte ever sent.
    pub high: u64,
    pub fixed_window: u64,
    /// The window's control (none for a fixed window: [`super::Congestion`]).
    pub cc: Option<Box<dyn WindowControl>>,
    pub rto: RtoEstimator,
    pub rto_at: Option<Cycle>,
    pub finish: Option<Cycle>,
    pub timeouts: u64,
    pub retransmitted_segments: u64,
    pub recovery: Recovery,
    pub dupacks: u64,
    pub in_recovery: Option<InRecovery>,
    /// Loss recoveries started by duplicate ACKs (fast retransmits).
    pub fast_recoveries: u64,
    /// The cycles the last fast recovery started and ended.
    pub last_recovery: Option<(Cycle, Option<Cycle>)>,
    /// RFC 6582 `recover` after a recovery or timeout: no new fast retransmit until the
    /// cumulative ACK passes it.
    pub recover: Option<u64>,
    /// A segment to retransmit next, ahead of the window (fast retransmit, partial ACK).
    pub retx_next: Option<u64>,
    /// NewReno's window inflation during fast recovery, bytes.
    pub inflation: u64,
    /// SACK: HighRxt, the end of the highest byte retransmitted in this recovery.
    pub high_rxt: u64,
    pub scoreboard: SackScoreboard,
    /// The segment being timed: its end and the cycle it was sent.
    pub timing: Option<(u64, Cycle)>,
    /// Pacing: no data frame of this flow starts before this line tick.
    pub pace_ticks: u64,
    /// Payload bytes sent so far, retransmissions included (PIAS tags by it).
    pub bytes_sent: u64,
    /// IPv4 bytes of every data frame sent so far (retransmissions included): the
    /// mice/elephant class of the next one (`host_feature::mice`).
    pub ipv4_bytes_sent: u64,
}

impl SendFlow {
    /// The congestion window, bytes.
    pub fn window(&self) -> u64 {
        self.cc.as_ref().map_or(self.fixed_window, |c| c.cwnd())
    }

    /// Bytes of the segment that starts at `seq`.
    fn seg_len(&self, seq: u64) -> u64 {
        self.mss.min(self.spec.size_bytes - seq)
    }

    /// Whether the segment [seq, seq + len) counts as lost (RFC 6675 `IsLost`).
    fn is_lost(&self, seq: u64, len: u64) -> bool {
        match self.in_recovery {
            Some(r) if r.after_rto && seq < r.point => true,
            _ => self.scoreboard.is_lost(seq + len, self.mss),
        }
    }

    /// RFC 6675 `SetPipe`: outstanding bytes neither SACKed nor lost, plus those
    /// retransmitted (up to HighRxt). Bytes of one hole share their SACKed bytes above, so
    /// each hole is lost or not as a whole.
    pub fn pipe(&self) -> u64 {
        let mut pipe = 0;
        let mut top = self.high;
        let count = |a: u64, b: u64, pipe: &mut u64| {
            if a >= b {
                return;
            }
            if !self.is_lost(a, b - a) {
                *pipe += b - a;
            }
            *pipe += b.min(self.high_rxt).saturating_sub(a.max(self.snd_una));
        };
        for (s, e) in self.scoreboard.ranges().rev() {
            count(e.max(self.snd_una), top, &mut pipe);
            top = s;
        }
        count(self.snd_una, top, &mut pipe);
        pipe
    }

    /// RFC 6675 `NextSeg` during SACK recovery: the first lost hole above HighRxt (rule 1),
    /// else new data (rule 2), else the first unSACKed hole above HighRxt below the highest
    /// SACKed byte (rule 3).
    fn next_seg(&self) -> Option<(u64, u64)> {
        let from = self.snd_una.max(self.high_rxt);
        let limit = match self.in_recovery {
            Some(r) if r.after_rto => r.point,
            _ => self.scoreboard.highest().unwrap_or(0),
        };
        // The first unSACKed segment at or above `from` below `limit`.
        let mut at = from;
        for (s, e) in self.scoreboard.ranges() {
            if e <= at {
                continue;
            }
            if s > at {
                break;
            }
            at = e;
        }
        let hole = (at < limit && at < self.spec.size_bytes).then(|| (at, self.seg_len(at)));
        if let Some((s, len)) = hole {
            if self.is_lost(s, len) {
                return Some((s, len));
            }
        }
        if self.snd_nxt < self.spec.size_bytes {
            return Some((self.snd_nxt, self.seg_len(self.snd_nxt)));
        }
        hole
    }

    /// The next segment to send, if the window lets one go: (sequence number, bytes).
    pub fn next_segment(&self) -> Option<(u64, u64)> {
        if self.finish.is_some() {
            return None;
        }
        if let Some(s) = self.retx_next {
            return Some((s, self.seg_len(s)));
        }
        if self.recovery == Recovery::Sack && self.in_recovery.is_some() {
            let (seq, len) = self.next_seg()?;
            let pipe = self.pipe();
            return (pipe == 0 || pipe + len <= self.window()).then_some((seq, len));
        }
        if self.snd_nxt >= self.spec.size_bytes {
            return None;
        }
        let len = self.seg_len(self.snd_nxt);
        let in_flight = self.snd_nxt - self.snd_una;
        let window = self.window() + self.inflation;
        (in_flight == 0 || in_flight + len <= window).then_some((self.snd_nxt, len))
    }

    /// Segment [seq, seq + len) leaves in cycle `now`; returns whether it is a retransmission.
    pub fn on_sent(&mut self, seq: u64, len: u64, now: Cycle) -> bool {
        let end = seq + len;
        let retransmit = seq < self.high;
        if self.retx_next == Some(seq) {
            self.retx_next = None;
        }
        if retransmit {
            self.retransmitted_segments += 1;
            // Karn: the segment being timed may now be acknowledged by a retransmission.
            self.timing = None;
            if self.in_recovery.is_some() {
                self.high_rxt = self.high_rxt.max(end);
            }
        } else if self.timing.is_none() {
            self.timing = Some((end, now));
        }
        if seq == self.snd_nxt {
            self.snd_nxt = end;
        }
        self.high = self.high.max(end);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rto.rto());
        }
        retransmit
    }

    /// Bytes outstanding (FlightSize, RFC 5681).
    fn flight(&self) -> u64 {
        self.high - self.snd_una
    }

    /// Starts loss recovery on duplicate ACKs: RecoveryPoint = HighData, the window halved
    /// (by its control) and the first unacknowledged segment resent ahead of the window.
    fn enter_recovery(&mut self, now: Cycle) {
        self.fast_recoveries += 1;
        self.last_recovery = Some((now, None));
        self.in_recovery = Some(InRecovery {
            point: self.high,
            after_rto: false,
        });
        self.recover = Some(self.high);
        let flight = self.flight();
        if let Some(d) = self.cc.as_mut() {
            d.on_loss(flight, self.high);
        }
        self.high_rxt = self.snd_una;
        self.retx_next = Some(self.snd_una);
        if self.recovery == Recovery::NewReno {
            self.inflation = DUP_THRESH * self.mss;
        }
    }

    /// Whether a new recovery may start (RFC 6582 §3.2 step 2: the cumulative ACK must have
    /// passed the previous `recover`).
    fn may_enter(&self) -> bool {
        self.in_recovery.is_none() && self.recover.is_none_or(|r| self.snd_una > r)
    }

    /// An ACK of `ack` (with ECE if `ece`, and SACK blocks `sacks`) arrives in cycle `now`.
    pub fn on_ack(&mut self, now: Cycle, ack: u64, ece: bool, sacks: &[(u64, u64)]) -> AckEffect {
        let mut effect = AckEffect::default();
        if self.finish.is_some() || ack > self.high {
            return effect; // a finished flow, or an ACK of bytes never sent
        }
        if self.recovery == Recovery::Sack {
            for &(s, e) in sacks {
                let (s, e) = (s.max(ack), e.min(self.high));
                self.scoreboard.add(s, e);
            }
        }
        if ack <= self.snd_una {
            if self.high > self.snd_una && ack == self.snd_una {
                self.on_duplicate(now, ece);
            }
            return effect;
        }
        effect.advanced = true;
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.dupacks = 0;
        self.scoreboard.ack(ack);
        self.high_rxt = self.high_rxt.max(ack);
        if let Some((end, sent)) = self.timing {
            if ack >= end {
                self.rto.sample(now - sent);
                self.timing = None;
            }
        }
        // Fast recovery sets the window itself; after a timeout the window grows in slow
        // start while the holes are resent (RFC 5681 §3.1, RFC 6675 §5.1).
        let fast_recovery = self.in_recovery.is_some_and(|r| !r.after_rto);
        if let Some(d) = self.cc.as_mut() {
            d.on_ack(acked, ece, self.snd_una, self.snd_nxt, !fast_recovery);
        }
        if let Some(r) = self.in_recovery {
            if ack >= r.point {
                // The ACK covering the recovery point ends it (RFC 6582 §3.2 step 3: cwnd =
                // ssthresh, already set when it started).
                self.in_recovery = None;
                self.inflation = 0;
                self.retx_next = None;
                if !r.after_rto {
                    if let Some((_, end)) = self.last_recovery.as_mut() {
                        *end = Some(now);
                    }
                }
            } else if !r.after_rto && self.recovery == Recovery::NewReno {
                // A partial ACK: resend the next hole, deflate by what was acknowledged.
                self.retx_next = Some(ack);
                self.inflation = self.inflation.saturating_sub(acked)
                    + if acked >= self.mss { self.mss } else { 0 };
            }
        }
        if self.retx_next.is_some_and(|s| s < ack) {
            self.retx_next = None;
        }
        if self.recovery == Recovery::Sack
            && self.snd_una < self.spec.size_bytes
            && self.may_enter()
            && self
                .scoreboard
                .is_lost(self.snd_una + self.seg_len(self.snd_una), self.mss)
        {
            self.enter_recovery(now);
        }
        if self.snd_una >= self.spec.size_bytes {
            self.finish = Some(now);
            self.rto_at = None;
            effect.finished = true;
        } else if self.snd_una >= self.high {
            self.rto_at = None; // nothing outstanding (RFC 6298 §5.2)
        } else {
            self.rto_at = Some(now + self.rto.rto());
        }
        effect
    }

    /// A duplicate ACK (RFC 5681: no new data acknowledged, data outstanding).
    fn on_duplicate(&mut self, now: Cycle, ece: bool) {
        if ece {
            // Its ECE still counts (see `WindowControl::on_duplicate_ece`). The segment it reports
            // lies beyond the first missing byte, at most `high`.
            let beyond = self.high.saturating_sub(self.snd_una + self.mss);
            let (una, nxt) = (self.snd_una, self.snd_nxt);
            if let Some(d) = self.cc.as_mut() {
                d.on_duplicate_ece(beyond, una, nxt);
            }
        }
        match self.recovery {
            Recovery::GoBackN => {}
            Recovery::NewReno => {
                if self.in_recovery.is_some_and(|r| !r.after_rto) {
                    self.inflation += self.mss;
                } else {
                    self.dupacks += 1;
                    if self.dupacks == DUP_THRESH && self.may_enter() {
                        self.enter_recovery(now);
                    }
                }
            }
            Recovery::Sack => {
                self.dupacks += 1;
                let end = self.snd_una + self.seg_len(self.snd_una);
                if self.may_enter()
                    && (self.dupacks >= DUP_THRESH || self.scoreboard.is_lost(end, self.mss))
                {
                    self.enter_recovery(now);
                }
            }
        }
    }

    /// The retransmission timer expired (RFC 6298 §5.4-5.6): back off, and resend from the
    /// first unacknowledged byte (go-back-N, NewReno) or the holes (SACK).
    pub fn on_timeout(&mut self) {
        self.timeouts += 1;
        self.rto.back_off();
        self.rto_at = None;
        self.timing = None;
        self.dupacks = 0;
        self.inflation = 0;
        self.retx_next = None;
        if let Some(d) = self.cc.as_mut() {
            d.on_timeout();
        }
        self.recover = Some(self.high);
        match self.recovery {
            Recovery::GoBackN | Recovery::NewReno => {
                self.in_recovery = None;
                self.snd_nxt = self.snd_una;
            }
            Recovery::Sack => {
                self.in_recovery = Some(InRecovery {
                    point: self.high,
                    after_rto: true,
                });
                self.high_rxt = self.snd_una;
            }
        }
    }
}

/// A flow's state at the receiver.
#[derive(Clone, Debug, Default)]
pub(super) struct RecvFlow {
    pub rcv_nxt: u64,
    /// Data held beyond `rcv_nxt`: disjoint, non-adjacent ranges, start to end.
    pub ahead: BTreeMap<u64, u64>,
    /// The SACK blocks of the last ACK, most recent first (RFC 2018 §4).
    pub sack_recent: Vec<(u64, u64)>,
    /// Segment numbers (seq / mss) in arrival order, for reordering metrics.
    pub arrivals: Vec<u64>,
    /// In-order segments taken in since the last ACK (delayed ACKs).
    pub unacked_segments: u32,
    /// When the delayed ACK of those segments is due, if one is waiting.
    pub delayed_ack_due: Option<Cycle>,
    /// DCTCP's receiver state (RFC 8257 §3.2, `DCTCP.CE`): whether the last data segment
    /// carried CE; an ACK's ECE says it for the data the ACK covers.
    pub ce_state: bool,
}

/// What the receiver sends for a data segment when ACKs may be delayed ([`RecvFlow::plan_ack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct AckPlan {
    /// An ACK of the data before this segment, with this ECE, sent first: the delayed ACK
    /// a change of CE state flushes (RFC 8257 §3.2).
    pub prior: Option<bool>,
    /// An ACK of this segment now, with this ECE; `None`: wait for the delayed-ACK timer.
    pub now: Option<bool>,
}

/// What one data segment did at the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Delivery {
    /// In-order bytes it made deliverable (0 for a duplicate or an out-of-order segment).
    pub delivered: u64,
    pub duplicate: bool,
    /// It arrived beyond `rcv_nxt` (out of order) or filled a hole with data held beyond it.
    pub out_of_order: bool,
}

impl RecvFlow {
    /// The ACKs a data segment calls for, with `ack_every` segments per ACK, after
    /// [`RecvFlow::on_segment`] gave `d` and the segment carried CE if `ce`:
    /// - with `ecn` (DCTCP), a change of CE state sends the waiting delayed ACK, if any, for
    ///   the data before the segment with the old state, and ACKs the segment at once with
    ///   the new one (RFC 8257 §3.2's state machine, as Linux's `dctcp_ece_ack_update`);
    /// - a segment out of order, a duplicate, or one that fills a hole is ACKed at once
    ///   (RFC 5681 §4.2), as is the `ack_every`-th in-order segment since the last ACK;
    /// - else the ACK waits for the delayed-ACK timer.
    pub fn plan_ack(&mut self, d: Delivery, ce: bool, ecn: bool, ack_every: u32) -> AckPlan {
        let mut prior = None;
        let mut at_once = d.out_of_order || d.duplicate;
        if ecn && ce != self.ce_state {
            if self.unacked_segments > 0 {
                prior = Some(self.ce_state);
            }
            self.ce_state = ce;
            at_once = true;
        } else if !ecn {
            self.ce_state = ce;
        }
        self.unacked_segments += 1;
        if at_once || self.unacked_segments >= ack_every {
            self.unacked_segments = 0;
            AckPlan {
                prior,
                now: Some(self.ce_state),
            }
        } else {
            AckPlan { prior, now: None }
        }
    }

    /// The held range containing `seq`, if any.
    fn range_at(&self, seq: u64) -> Option<(u64, u64)> {
        self.ahead
            .range(..=seq)
            .next_back()
            .filter(|&(_, &e)| e > seq)
            .map(|(&s, &e)| (s, e))
    }

    /// Takes in segment [seq, end).
    pub fn on_segment(&mut self, seq: u64, end: u64) -> Delivery {
        let held_before = !self.ahead.is_empty();
        if end <= self.rcv_nxt || self.range_at(seq).is_some_and(|(_, e)| e >= end) {
            return Delivery {
                delivered: 0,
                duplicate: true,
                out_of_order: held_before,
            };
        }
        if seq <= self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            // Take in the data that was waiting for this segment.
            while let Some((&s, &e)) = self.ahead.first_key_value() {
                if s > self.rcv_nxt {
                    break;
                }
                self.ahead.pop_first();
                self.rcv_nxt = self.rcv_nxt.max(e);
            }
            self.sack_recent.retain(|&(_, e)| e > end);
            return Delivery {
                delivered: self.rcv_nxt - before,
                duplicate: false,
                out_of_order: held_before,
            };
        }
        // Beyond rcv_nxt: merge with the ranges it touches.
        let (mut s, mut e) = (seq, end);
        let touching: Vec<(u64, u64)> = self
            .ahead
            .range(..=e)
            .rev()
            .take_while(|&(_, &x)| x >= s)
            .map(|(&a, &b)| (a, b))
            .collect();
        for (a, b) in touching {
            self.ahead.remove(&a);
            s = s.min(a);
            e = e.max(b);
        }
        self.ahead.insert(s, e);
        Delivery {
            delivered: 0,
            duplicate: false,
            out_of_order: true,
        }
    }

    /// The SACK blocks for the ACK of a segment that started at `seq` (RFC 2018 §4): first
    /// the block holding that segment, if it is held beyond `rcv_nxt`, then the blocks of
    /// the last ACK as they stand now, up to [`MAX_SACK_BLOCKS`].
    pub fn sack_blocks(&mut self, seq: u64) -> Vec<(u64, u64)> {
        if self.ahead.is_empty() {
            // In order: nothing to report, and no allocation on the common path.
            self.sack_recent.clear();
            return Vec::new();
        }
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(MAX_SACK_BLOCKS);
        if let Some(r) = self.range_at(seq) {
            blocks.push(r);
        }
        for &(s, _) in &self.sack_recent {
            if let Some(r) = self.range_at(s) {
                if !blocks.contains(&r) {
                    blocks.push(r);
                }
            }
        }
        blocks.truncate(MAX_SACK_BLOCKS);
        self.sack_recent.clone_from(&blocks);
        blocks
    }
}

/// TCP option kinds (RFC 793, RFC 2018).
const TCPOPT_NOP: u8 = 1;
const TCPOPT_SACK: u8 = 5;

/// The TCP option bytes of a SACK option with `blocks`: two NOPs for alignment, kind 5,
/// length 2 + 8n, then each block's left and right edge as 32-bit sequence numbers (RFC 2018
/// §3). Empty for no blocks.
pub(super) fn sack_option(blocks: &[(u64, u64)], out: &mut Vec<u8>) {
    if blocks.is_empty() {
        return;
    }
    out.extend_from_slice(&[
        TCPOPT_NOP,
        TCPOPT_NOP,
        TCPOPT_SACK,
        2 + 8 * blocks.len() as u8,
    ]);
    for &(s, e) in blocks {
        out.extend_from_slice(&(s as u32).to_be_bytes());
        out.extend_from_slice(&(e as u32).to_be_bytes());
    }
}

/// Reads the SACK blocks from a TCP header's option bytes; other options are skipped, and a
/// malformed option list yields what was read before it.
pub(super) fn parse_sack(options: &[u8]) -> Vec<(u64, u64)> {
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < options.len() {
        match options[at] {
            0 => break, // end of option list
            TCPOPT_NOP => at += 1,
            kind => {
                let Some(&len) = options.get(at + 1) else {
                    break;
                };
                let len = len as usize;
                if len < 2 || at + len > options.len() {
                    break;
                }
                if kind == TCPOPT_SACK {
                    for b in options[at + 2..at + len].chunks_exact(8) {
                        let s = u32::from_be_bytes(b[..4].try_into().expect("4 bytes"));
                        let e = u32::from_be_bytes(b[4..].try_into().expect("4 bytes"));
                        blocks.push((s as u64, e as u64));
                    }
                }
                at += len;
            }
        }
    }
    blocks
}
