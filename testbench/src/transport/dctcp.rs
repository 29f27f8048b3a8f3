//! DCTCP's sender (RFC 8257; Alizadeh et al., SIGCOMM'10), in the integer form of Linux
//! `tcp_dctcp.c`.
//!
//! - Alpha, in 1/1024 units, is updated once per observation window (RFC 8257 §3.3): every
//!   ACK adds the bytes it acknowledges to `acked`, and to `marked` if it carries ECE; the
//!   ACK whose cumulative point reaches the window's end (`snd_una >= window_end`, as Linux
//!   `!before(snd_una, next_seq)`) sets `alpha <- alpha - alpha/16 + F/16` with F the marked
//!   fraction, and opens the next window, which ends at the `snd_nxt` of that moment.
//! - The window is cut at the first ECE of a window (RFC 8257 §3.4 with RFC 3168 §6.1.2, as
//!   Linux enters CWR): `cwnd <- cwnd (1 - alpha/2)` with the alpha of that moment (the
//!   update of the same ACK comes first, as Linux runs `dctcp_update_alpha` before its ECE
//!   handling), and no further cut, and no growth, until the data in flight at the cut
//!   (up to `snd_nxt`) has been acknowledged.
//! - Without marks the window grows as TCP's: slow start below `ssthresh` (cwnd += bytes
//!   acknowledged), then one segment per window of bytes acknowledged (RFC 5681).
//! - A loss (fast retransmit) halves the window as standard TCP does (RFC 8257 §3.5); a
//!   retransmission timeout drops it to one segment.

/// DCTCP's gain g = 1/2^G_SHIFT = 1/16 (RFC 8257 §4.2's recommended value).
pub const DCTCP_G_SHIFT: u32 = 4;
/// Alpha's fixed-point one.
pub const DCTCP_ALPHA_ONE: u32 = 1024;

/// One flow's DCTCP state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dctcp {
    /// Alpha in 1/1024 units (0..=1024).
    pub alpha: u32,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub(super) mss: u64,
    max_cwnd: u64,
    /// The sequence number that ends the current observation window.
    pub(super) window_end: u64,
    pub(super) acked: u64,
    pub(super) marked: u64,
    /// Bytes acknowledged towards the next one-segment increase in congestion avoidance.
    ca_credit: u64,
    /// Bytes already counted (as delivered and marked) from duplicate ACKs with ECE, that a
    /// later cumulative ACK will cover again: that ACK counts only the bytes beyond these,
    /// so every byte enters `acked` once.
    pub(super) counted_ahead: u64,
    /// CWR: no cut and no growth until `snd_una` reaches this (the `snd_nxt` of the last
    /// reduction, for ECE or loss).
    cwr_end: Option<u64>,
    /// Window reductions for ECE so far.
    cuts: u64,
}

impl Dctcp {
    pub fn new(initial_cwnd: u64, mss: u64) -> Dctcp {
        Dctcp {
            // Linux starts alpha at its maximum so that the first marks cut hard (RFC 8257
            // §3.3 leaves the initial value open; Linux's `dctcp_alpha_on_init` is 1024).
            alpha: DCTCP_ALPHA_ONE,
            cwnd: initial_cwnd,
            ssthresh: u64::MAX,
            mss,
            max_cwnd: u64::MAX,
            window_end: 0,
            acked: 0,
            marked: 0,
            ca_credit: 0,
            counted_ahead: 0,
            cwr_end: None,
            cuts: 0,
        }
    }

    /// Window reductions for ECE so far (at most one per window of data).
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// Whether the window is held after a reduction (CWR or loss recovery) at `snd_una`.
    fn holding(&self, snd_una: u64) -> bool {
        self.cwr_end.is_some_and(|e| snd_una < e)
    }

    /// An ACK acknowledged `acked` new bytes (with ECE if `ece`); `snd_una` is the first
    /// unacknowledged byte after it and `snd_nxt` the next byte to send. `grow` is false
    /// during loss recovery, where the recovery algorithm sets the window.
    pub fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64, grow: bool) {
        // Bytes a duplicate ACK already counted are not counted again.
        let already = self.counted_ahead.min(acked);
        self.counted_ahead -= already;
        let fresh = acked - already;
        self.acked += fresh;
        if ece {
            self.marked += fresh;
        }
        if !ece && grow && !self.holding(snd_una) {
            if self.cwnd < self.ssthresh {
                self.cwnd += acked;
            } else {
                self.ca_credit += acked;
                while self.ca_credit >= self.cwnd {
                    self.ca_credit -= self.cwnd;
                    self.cwnd += self.mss;
                }
            }
            self.cwnd = self.cwnd.min(self.max_cwnd);
        }
        if snd_una >= self.window_end {
            self.end_window(snd_nxt);
        }
        if ece {
            self.on_ece(snd_una, snd_nxt);
        }
    }

    /// A duplicate ACK with ECE: a segment beyond the first missing byte arrived CE-marked.
    /// Real senders react to ECE on any ACK (RFC 3168 §6.1.2), and Linux DCTCP counts CE on
    /// every delivered segment, SACKed ones included (`delivered_ce`). The sender counts one
    /// segment, `mss` bytes, delivered and marked, but never more than the `beyond_una`
    /// bytes sent beyond the first missing byte that are not counted yet. The cumulative ACK
    /// that later covers those bytes skips them (`counted_ahead`). The ECE may cut the
    /// window as any ECE does.
    pub fn on_duplicate_ece(&mut self, beyond_una: u64, snd_una: u64, snd_nxt: u64) {
        let room = beyond_una.saturating_sub(self.counted_ahead);
        let bytes = self.mss.min(room);
        self.counted_ahead += bytes;
        self.acked += bytes;
        self.marked += bytes;
        self.on_ece(snd_una, snd_nxt);
    }

    /// ECE: the first of a window cuts `cwnd <- cwnd (1 - alpha/2)` (RFC 8257 §3.4).
    fn on_ece(&mut self, snd_una: u64, snd_nxt: u64) {
        if self.holding(snd_una) {
            return;
        }
        let cut = self.cwnd * self.alpha as u64 / (2 * DCTCP_ALPHA_ONE as u64);
        self.cwnd = (self.cwnd - cut).max(self.mss);
        self.ssthresh = self.cwnd;
        self.ca_credit = 0;
        self.cwr_end = Some(snd_nxt);
        self.cuts += 1;
    }

    /// Closes an observation window: updates alpha (RFC 8257 §3.3 steps 5-8).
    fn end_window(&mut self, snd_nxt: u64) {
        let fraction = (self.marked << 10).checked_div(self.acked).unwrap_or(0) as u32;
        self.alpha = self.alpha - (self.alpha >> DCTCP_G_SHIFT) + (fraction >> DCTCP_G_SHIFT);
        self.alpha = self.alpha.min(DCTCP_ALPHA_ONE);
        self.acked = 0;
        self.marked = 0;
        self.window_end = snd_nxt;
    }

    /// Loss detected by fast retransmit with `flight` bytes outstanding: ssthresh =
    /// max(flight / 2, 2 segments), cwnd = ssthresh (RFC 5681 §3.2; RFC 6675 §5 (4.2)); the
    /// window is then held until `snd_nxt` is acknowledged.
    pub fn on_loss(&mut self, flight: u64, snd_nxt: u64) {
        self.ssthresh = (flight / 2).max(2 * self.mss);
        self.cwnd = self.ssthresh;
        self.ca_credit = 0;
        self.cwr_end = Some(snd_nxt);
    }

    /// A retransmission timeout: back to one segment (RFC 5681 §3.1, equation 4).
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        self.cwnd = self.mss;
        self.ca_credit = 0;
        self.cwr_end = None;
    }
}
