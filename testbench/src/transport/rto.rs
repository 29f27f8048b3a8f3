//! The retransmission timer of RFC 6298, in cycles.
//!
//! Before the first RTT sample the timeout is the configured initial RTO (§2.1). The first
//! sample R sets SRTT = R and RTTVAR = R/2 (§2.2); each later one R' sets
//! RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'| and then SRTT = 7/8 SRTT + 1/8 R' (§2.3, RTTVAR
//! first, with the old SRTT). After every sample RTO = SRTT + max(G, 4 RTTVAR), G being the
//! clock granularity (one cycle here), raised to the configured minimum (§2.4) and capped at
//! the maximum (§2.5). A timeout doubles the RTO up to the maximum (§5.5, "back off the
//! timer"); the backed-off value holds until the next sample recomputes it (§5.7).
//!
//! Karn's rule (§3) is the sender's job: it only offers samples of segments that were never
//! retransmitted (see `tcp::SendFlow`). SRTT and RTTVAR are kept in eighths of a cycle, as
//! BSD keeps them scaled, so each update is exact to 1/8 cycle and truncates below that.

use t2_clock::Cycle;

/// Fixed-point scale of SRTT and RTTVAR: 1/8 cycle.
const SCALE: u64 = 8;

/// SRTT, RTTVAR and the current RTO of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoEstimator {
    /// SRTT in 1/8 cycles, once a sample has been taken.
    srtt8: Option<u64>,
    /// RTTVAR in 1/8 cycles.
    rttvar8: u64,
    rto: Cycle,
    min: Cycle,
    max: Cycle,
}

impl RtoEstimator {
    /// A timer that starts at `initial` (raised to `min`, capped at `max`).
    pub fn new(initial: Cycle, min: Cycle, max: Cycle) -> RtoEstimator {
        RtoEstimator {
            srtt8: None,
            rttvar8: 0,
            rto: initial.max(min).min(max),
            min,
            max,
        }
    }

    /// The current timeout, cycles.
    pub fn rto(&self) -> Cycle {
        self.rto
    }

    /// SRTT in cycles (truncated), once a sample has been taken.
    pub fn srtt(&self) -> Option<Cycle> {
        self.srtt8.map(|s| s / SCALE)
    }

    /// SRTT and RTTVAR in eighths of a cycle (exact state), once a sample has been taken.
    pub fn srtt_rttvar_eighths(&self) -> Option<(u64, u64)> {
        self.srtt8.map(|s| (s, self.rttvar8))
    }

    /// Takes one RTT measurement `r` (cycles) and recomputes the RTO.
    pub fn sample(&mut self, r: Cycle) {
        let r8 = r * SCALE;
        match self.srtt8 {
            None => {
                self.srtt8 = Some(r8);
                self.rttvar8 = r8 / 2;
            }
            Some(s) => {
                self.rttvar8 = (3 * self.rttvar8 + s.abs_diff(r8)) / 4;
                self.srtt8 = Some((7 * s + r8) / 8);
            }
        }
        let s = self.srtt8.expect("set above");
        // SRTT + max(G, 4 RTTVAR) with G = 1 cycle, rounded up to whole cycles.
        let rto = (s + (4 * self.rttvar8).max(SCALE)).div_ceil(SCALE);
        self.rto = rto.max(self.min).min(self.max);
    }

    /// A timeout: doubles the RTO, up to the maximum.
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(self.max);
    }
}
