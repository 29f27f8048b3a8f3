//! DCTCP's sender (RFC 8257; Alizadeh et al., SIGCOMM'10), in the integer form of Linux
//! `tcp_dctcp.c`: the window algorithm ([`WINDOW`]) the transport host runs for the schemes
//! whose hosts are DCTCP's (`dctcp`, `slytherin`, `pias`, `dctcp-pfc`, and `mice-elephant`'s
//! end-to-end choice). It grows and shrinks on loss as standard TCP's window does
//! ([`RenoWindow`]); what DCTCP adds is alpha and the cut by it.
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

use std::any::Any;
use t2_testbench::transport::{Congestion, RenoWindow, WindowAlgorithm, WindowControl};

/// DCTCP's gain g = 1/2^G_SHIFT = 1/16 (RFC 8257 §4.2's recommended value).
pub const DCTCP_G_SHIFT: u32 = 4;
/// Alpha's fixed-point one.
pub const DCTCP_ALPHA_ONE: u32 = 1024;

/// DCTCP as a window algorithm of the transport host: ECN on, one [`Dctcp`] per flow.
pub const WINDOW: WindowAlgorithm = WindowAlgorithm {
    name: "dctcp",
    ecn: true,
    build: |initial_cwnd, mss| Box::new(Dctcp::new(initial_cwnd, mss)),
};

/// The hosts' congestion control under DCTCP (`Hosts::congestion`).
pub const CONGESTION: Congestion = Congestion::Window(WINDOW);

/// One flow's DCTCP state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dctcp {
    /// Alpha in 1/1024 units (0..=1024).
    pub alpha: u32,
    /// The window: standard TCP's growth, loss and timeout, cut by alpha on ECE.
    pub window: RenoWindow,
    /// The sequence number that ends the current observation window.
    window_end: u64,
    acked: u64,
    marked: u64,
    /// Bytes already counted (as delivered and marked) from duplicate ACKs with ECE, that a
    /// later cumulative ACK will cover again: that ACK counts only the bytes beyond these,
    /// so every byte enters `acked` once.
    counted_ahead: u64,
    /// Window reductions for ECE so far.
    cuts: u64,
}

impl Dctcp {
    pub fn new(initial_cwnd: u64, mss: u64) -> Dctcp {
        Dctcp {
            // Linux starts alpha at its maximum so that the first marks cut hard (RFC 8257
            // §3.3 leaves the initial value open; Linux's `dctcp_alpha_on_init` is 1024).
            alpha: DCTCP_ALPHA_ONE,
            window: RenoWindow::new(initial_cwnd, mss),
            window_end: 0,
            acked: 0,
            marked: 0,
            counted_ahead: 0,
            cuts: 0,
        }
    }

    /// Window reductions for ECE so far (at most one per window of data).
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// ECE: the first of a window cuts `cwnd <- cwnd (1 - alpha/2)` (RFC 8257 §3.4).
    fn on_ece(&mut self, snd_una: u64, snd_nxt: u64) {
        if self.window.holding(snd_una) {
            return;
        }
        let cwnd = self.window.cwnd;
        let cut = cwnd * self.alpha as u64 / (2 * DCTCP_ALPHA_ONE as u64);
        self.window.cut_to(cwnd - cut, snd_nxt);
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
}

impl WindowControl for Dctcp {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn cwnd(&self) -> u64 {
        self.window.cwnd
    }

    /// Counts the bytes (and the marked ones), grows the window as TCP's when unmarked,
    /// closes the observation window at its end, and cuts on ECE.
    fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64, grow: bool) {
        // Bytes a duplicate ACK already counted are not counted again.
        let already = self.counted_ahead.min(acked);
        self.counted_ahead -= already;
        let fresh = acked - already;
        self.acked += fresh;
        if ece {
            self.marked += fresh;
        }
        if !ece && grow {
            self.window.grow(acked, snd_una);
        }
        if snd_una >= self.window_end {
            self.end_window(snd_nxt);
        }
        if ece {
            self.on_ece(snd_una, snd_nxt);
        }
    }

    /// Real senders react to ECE on any ACK (RFC 3168 §6.1.2), and Linux DCTCP counts CE on
    /// every delivered segment, SACKed ones included (`delivered_ce`). The sender counts one
    /// segment, `mss` bytes, delivered and marked, but never more than the `beyond_una`
    /// bytes sent beyond the first missing byte that are not counted yet. The cumulative ACK
    /// that later covers those bytes skips them (`counted_ahead`). The ECE may cut the
    /// window as any ECE does.
    fn on_duplicate_ece(&mut self, beyond_una: u64, snd_una: u64, snd_nxt: u64) {
        let room = beyond_una.saturating_sub(self.counted_ahead);
        let bytes = self.window.mss.min(room);
        self.counted_ahead += bytes;
        self.acked += bytes;
        self.marked += bytes;
        self.on_ece(snd_una, snd_nxt);
    }

    /// As standard TCP (RFC 8257 §3.5).
    fn on_loss(&mut self, flight: u64, snd_nxt: u64) {
        self.window.on_loss(flight, snd_nxt);
    }

    fn on_timeout(&mut self) {
        self.window.on_timeout();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dctcp_alpha_follows_the_marked_fraction_with_gain_one_sixteenth() {
        let mut d = Dctcp::new(10_000, 1000);
        assert_eq!(d.alpha, 1024);
        // A window without marks: alpha <- alpha (1 - 1/16).
        d.on_ack(1000, false, 1000, 10_000, true);
        assert_eq!(d.alpha, 960);
        // Many windows with a quarter of the bytes marked: alpha -> 1024 / 4.
        let mut una = 1000;
        for _ in 0..300 {
            let end = d.window_end;
            d.on_ack(3000, false, una + 3000, end + 4000, true);
            d.on_ack(1000, true, end + 4000, end + 8000, true);
            una = end + 4000;
        }
        assert!(d.alpha.abs_diff(256) <= 16, "{}", d.alpha);
        // All marked: alpha -> 1.
        for _ in 0..300 {
            let end = d.window_end;
            d.on_ack(1000, true, end, end + 1000, true);
        }
        assert!(d.alpha >= 1024 - 16, "{}", d.alpha);
    }

    #[test]
    fn dctcp_follows_a_hand_worked_table_on_a_fixed_marking_pattern() {
        // 1000-byte segments, every ACK acknowledges one; the sender keeps its window full
        // (snd_nxt = max(snd_nxt, snd_una + cwnd) after each ACK). The window starts at 10,000
        // in congestion avoidance (ssthresh = cwnd), alpha at 1024, the first observation
        // window ending at 10,000. `marks[w]` lists which ACKs of window w carry ECE.
        //
        // By hand, window 0: 10 unmarked ACKs; the 10th completes 10,000 B of credit, so cwnd
        // grows to 11,000, and it reaches the window's end: F = 0, alpha = 1024 - 64 = 960; the
        // next window ends at snd_nxt = 9,000 + 10,000 = 19,000.
        // Window 1: ACK 3 (snd_una 14,000) is the first ECE: alpha is 960, so the cut is
        // 11,000 x 960 / 2048 = 5,156 (integer) and cwnd = ssthresh = 5,844, held (no growth, no
        // second cut) until snd_una reaches the snd_nxt of the cut, 24,000. The window ends at
        // 19,000 after 9 ACKs with 1,000 of 9,000 B marked: F = 1,024,000 / 9,000 = 113,
        // alpha = 960 - 60 + 7 = 907; the next window ends at 24,000 (snd_nxt has not grown).
        // Window 2: 5 unmarked ACKs, no growth until 24,000 (CWR): alpha = 907 - 56 = 851.
        // Window 3: ECE on its first ACK cuts at once with alpha 851:
        // 5,844 - 5,844 x 851 / 2048 = 5,844 - 2,428 = 3,416; F = 1/5 of 1024 = 204,
        // alpha = 851 - 53 + 12 = 810.
        // Window 4: every ACK marked; one cut (the first): 3,416 - 3,416 x 810 / 2048 = 2,065;
        // F = 1024, alpha = 810 - 50 + 64 = 824. Window 5: unmarked, alpha = 824 - 51 = 773.
        let marks: [&[usize]; 6] = [&[], &[3], &[], &[0, 5], &[0, 1, 2, 3, 4, 5, 6, 7, 8], &[]];
        // (ACKs in the window, alpha, cwnd, ssthresh, cuts so far) at each window's end.
        let table = [
            (10, 960, 11_000, 10_000, 0),
            (9, 907, 5_844, 5_844, 1),
            (5, 851, 5_844, 5_844, 1),
            (5, 810, 3_416, 3_416, 2),
            (3, 824, 2_065, 2_065, 3),
            (2, 773, 2_065, 2_065, 3),
        ];
        let mut d = Dctcp::new(10_000, 1000);
        d.window.ssthresh = 10_000;
        d.window_end = 10_000;
        let (mut una, mut nxt) = (0u64, 10_000u64);
        for (w, row) in table.iter().enumerate() {
            let mut k = 0;
            loop {
                una += 1000;
                let end = d.window_end;
                let before = d.cuts();
                d.on_ack(1000, marks[w].contains(&k), una, nxt, true);
                if d.cuts() > before {
                    // The cut comes at the first ECE of the window, not at its end.
                    assert_eq!(k, marks[w][0], "window {w}");
                }
                nxt = nxt.max(una + d.window.cwnd);
                k += 1;
                if d.window_end != end {
                    break;
                }
            }
            assert_eq!(
                (k, d.alpha, d.window.cwnd, d.window.ssthresh, d.cuts()),
                *row,
                "window {w}"
            );
        }
    }

    #[test]
    fn dctcp_grows_like_tcp_without_marks() {
        let mut d = Dctcp::new(10_000, 1000);
        d.window_end = u64::MAX; // keep alpha out of it
        d.on_ack(4000, false, 4000, 14_000, true);
        assert_eq!(
            d.window.cwnd, 14_000,
            "slow start adds what was acknowledged"
        );
        d.window.ssthresh = 14_000;
        d.on_ack(13_999, false, 20_000, 30_000, true);
        assert_eq!(d.window.cwnd, 14_000);
        d.on_ack(1, false, 20_001, 30_000, true);
        assert_eq!(
            d.window.cwnd, 15_000,
            "one segment per window in congestion avoidance"
        );
        d.on_ack(1000, false, 21_001, 30_000, false);
        assert_eq!(
            d.window.cwnd, 15_000,
            "no growth while loss recovery sets the window"
        );
        d.on_timeout();
        assert_eq!((d.window.cwnd, d.window.ssthresh), (1000, 7500));
    }

    #[test]
    fn a_duplicate_ack_counts_no_more_than_was_sent_beyond_the_gap() {
        let mut d = Dctcp::new(10_000, 1000);
        d.window_end = u64::MAX; // keep the window open to read the counters
        d.on_duplicate_ece(1500, 0, 2500);
        d.on_duplicate_ece(1500, 0, 2500);
        d.on_duplicate_ece(1500, 0, 2500);
        assert_eq!((d.acked, d.marked, d.counted_ahead), (1500, 1500, 1500));
        // The cumulative ACK of 2,500 bytes counts only the 1,000 not yet counted.
        d.on_ack(2500, false, 2500, 2500, true);
        assert_eq!((d.acked, d.marked, d.counted_ahead), (2500, 1500, 0));
    }
}
