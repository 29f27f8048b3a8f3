//! How a sender sizes its window ([`Congestion`]): a fixed window, standard TCP's
//! ([`RenoWindow`], RFC 5681), or a window algorithm a scheme brings
//! ([`WindowAlgorithm`]: DCTCP's lives in its scheme's folder), each flow's behind
//! [`WindowControl`].
//!
//! Standard TCP's window ([`RenoWindow`]):
//! - slow start below `ssthresh` (cwnd += bytes acknowledged), then one segment per window of
//!   bytes acknowledged (congestion avoidance, RFC 5681 §3.1);
//! - a loss found by fast retransmit halves it (ssthresh = max(flight / 2, 2 segments),
//!   cwnd = ssthresh: RFC 5681 §3.2, RFC 6675 §5 (4.2)), and a retransmission timeout drops
//!   it to one segment (RFC 5681 §3.1, equation 4);
//! - after a reduction the window is held (no further cut for the same data, no growth)
//!   until the data in flight at the reduction has been acknowledged.

use std::any::Any;
use std::fmt;

/// How a sender sizes its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// A constant window of `window_bytes`.
    Fixed,
    /// Standard TCP congestion control (RFC 5681: slow start from `window_bytes`,
    /// congestion avoidance, the window halved on a loss found by fast retransmit and one
    /// segment after a timeout, [`RenoWindow`]) without ECN: the segments go out Not-ECT
    /// and an ECE means nothing to the sender (RFC 3168 §6.1.1). With
    /// `recovery = "newreno"` it is NewReno (RFC 6582).
    Reno,
    /// A window algorithm a scheme brings, starting from `window_bytes`.
    Window(WindowAlgorithm),
}

impl Congestion {
    /// Whether the sender's segments are ECN-capable (ECT(0)) and ECE is heeded; the
    /// receiver then echoes CE by its state machine ([`super::TransportConfig::ack_every`]).
    pub fn ecn(&self) -> bool {
        matches!(self, Congestion::Window(w) if w.ecn)
    }

    /// The name a scenario file gives it (`fixed`, `reno`, or the algorithm's).
    pub fn name(&self) -> &'static str {
        match self {
            Congestion::Fixed => "fixed",
            Congestion::Reno => "reno",
            Congestion::Window(w) => w.name,
        }
    }

    /// A new flow's window control (none for a fixed window).
    pub fn build(&self, initial_cwnd: u64, mss: u64) -> Option<Box<dyn WindowControl>> {
        match self {
            Congestion::Fixed => None,
            Congestion::Reno => Some(Box::new(RenoWindow::new(initial_cwnd, mss))),
            Congestion::Window(w) => Some((w.build)(initial_cwnd, mss)),
        }
    }
}

/// A window algorithm a scheme brings: its name (as scenario files write it), whether it
/// runs ECN, and how to build one flow's state from the initial window and the MSS. Two are
/// equal when their names are.
#[derive(Clone, Copy)]
pub struct WindowAlgorithm {
    pub name: &'static str,
    /// Segments go out ECT(0) and the sender heeds ECE ([`Congestion::ecn`]).
    pub ecn: bool,
    pub build: fn(u64, u64) -> Box<dyn WindowControl>,
}

impl PartialEq for WindowAlgorithm {
    fn eq(&self, other: &WindowAlgorithm) -> bool {
        self.name == other.name
    }
}

impl Eq for WindowAlgorithm {}

impl fmt::Debug for WindowAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// One flow's congestion window, as the sender's loss recovery and ACK processing drive it.
pub trait WindowControl: Send + fmt::Debug {
    /// The control as [`Any`], so that tests can read its own state.
    fn as_any(&self) -> &dyn Any;

    /// The congestion window, bytes.
    fn cwnd(&self) -> u64;

    /// An ACK acknowledged `acked` new bytes (with ECE if `ece`); `snd_una` is the first
    /// unacknowledged byte after it and `snd_nxt` the next byte to send. `grow` is false
    /// during fast recovery, where the recovery algorithm sets the window.
    fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64, grow: bool);

    /// A duplicate ACK with ECE: a segment beyond the first missing byte arrived CE-marked;
    /// `beyond_una` bytes were sent beyond the first missing byte.
    fn on_duplicate_ece(&mut self, _beyond_una: u64, _snd_una: u64, _snd_nxt: u64) {}

    /// Loss detected by fast retransmit with `flight` bytes outstanding.
    fn on_loss(&mut self, flight: u64, snd_nxt: u64);

    /// A retransmission timeout.
    fn on_timeout(&mut self);
}

/// Standard TCP's window (RFC 5681), the one [`Congestion::Reno`] runs and the base of a
/// scheme's window algorithm (DCTCP's grows and shrinks on loss as this one does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenoWindow {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    max_cwnd: u64,
    /// Bytes acknowledged towards the next one-segment increase in congestion avoidance.
    ca_credit: u64,
    /// No cut and no growth until `snd_una` reaches this (the `snd_nxt` of the last
    /// reduction).
    cwr_end: Option<u64>,
}

impl RenoWindow {
    pub fn new(initial_cwnd: u64, mss: u64) -> RenoWindow {
        RenoWindow {
            cwnd: initial_cwnd,
            ssthresh: u64::MAX,
            mss,
            max_cwnd: u64::MAX,
            ca_credit: 0,
            cwr_end: None,
        }
    }

    /// Whether the window is held after a reduction at `snd_una`.
    pub fn holding(&self, snd_una: u64) -> bool {
        self.cwr_end.is_some_and(|e| snd_una < e)
    }

    /// `acked` bytes acknowledged with the first unacknowledged byte at `snd_una`: slow start
    /// below `ssthresh`, then one segment per window of bytes (none while held).
    pub fn grow(&mut self, acked: u64, snd_una: u64) {
        if self.holding(snd_una) {
            return;
        }
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

    /// Cuts the window to `cwnd` (at least one segment), `ssthresh` with it, and holds it
    /// until `snd_nxt` is acknowledged.
    pub fn cut_to(&mut self, cwnd: u64, snd_nxt: u64) {
        self.cwnd = cwnd.max(self.mss);
        self.ssthresh = self.cwnd;
        self.ca_credit = 0;
        self.cwr_end = Some(snd_nxt);
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

impl WindowControl for RenoWindow {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, _snd_nxt: u64, grow: bool) {
        if !ece && grow {
            self.grow(acked, snd_una);
        }
    }

    fn on_loss(&mut self, flight: u64, snd_nxt: u64) {
        RenoWindow::on_loss(self, flight, snd_nxt);
    }

    fn on_timeout(&mut self) {
        RenoWindow::on_timeout(self);
    }
}
