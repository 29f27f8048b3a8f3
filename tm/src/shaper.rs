//! Exact rate limits for queues: the min-rate guarantee and the max-rate shaper.
//!
//! A [`RateBucket`] is a token bucket written as a virtual clock (GCRA): it keeps the
//! theoretical time `tat` at which the queue will have paid for everything it has sent at
//! the configured rate. A queue conforms while `tat` is no more than `burst` ahead of now.
//! Times are counted in units of `1 / rate_bps` of a cycle, so a cycle is `rate_bps` units and
//! a frame of `b` wire bits costs `b x clock_hz` units: every quantity is an integer and a
//! saturated queue gets exactly its rate over any long window, with no floating point.
//!
//! A queue conforms in the cycle in which its theoretical time falls (not only from the next
//! cycle boundary on), so waiting for a whole cycle never costs rate: a saturated queue's
//! frames follow each other exactly as on a line. The check is made before a frame is
//! charged, so a conforming queue may send one whole frame however large (the bucket then
//! runs into debt and the next frame waits).

use t2_clock::{Clock, Cycle, LineRate};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateBucket {
    rate_bps: u64,
    clock_hz: u64,
    /// How far `tat` may run ahead of now and still conform, in units.
    burst_units: u128,
    /// Theoretical arrival time of the next frame, in units.
    tat: u128,
    /// The first cycle at which the queue conforms, worked out when `tat` changes so that
    /// the scheduler's checks are a comparison.
    conforms_from: Cycle,
}

impl RateBucket {
    /// A bucket of `rate_bps` that lets a queue send `burst_bytes` of wire bytes early beyond
    /// one frame. `rate_bps` must be above 0 (queue configs are validated first).
    pub fn new(clock: Clock, rate_bps: u64, burst_bytes: u32) -> RateBucket {
        assert!(rate_bps > 0, "a rate bucket needs a non-zero rate");
        RateBucket {
            rate_bps,
            clock_hz: clock.hz,
            burst_units: burst_bytes as u128 * 8 * clock.hz as u128,
            tat: 0,
            conforms_from: 0,
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    fn units(&self, cycle: Cycle) -> u128 {
        cycle as u128 * self.rate_bps as u128
    }

    /// Whether the queue may send in cycle `now`: its theoretical time, less the burst, falls
    /// before the end of the cycle.
    pub fn conforms(&self, now: Cycle) -> bool {
        now >= self.conforms_from
    }

    /// The first cycle at which the queue conforms (it conforms at every later cycle too,
    /// until it sends again).
    pub fn conforms_from(&self) -> Cycle {
        self.conforms_from
    }

    /// Charges a frame of `frame_bytes` (FCS included) sent in cycle `now`: its wire bits,
    /// preamble and inter-frame gap included, at the bucket's rate.
    pub fn charge(&mut self, now: Cycle, frame_bytes: u64) {
        let cost = LineRate::wire_bits(frame_bytes) as u128 * self.clock_hz as u128;
        self.tat = self.tat.max(self.units(now)) + cost;
        // tat - burst < (t + 1) x rate  <=>  t >= floor((tat - burst) / rate)
        let due = self.tat.saturating_sub(self.burst_units);
        self.conforms_from = (due / self.rate_bps as u128) as Cycle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saturated_bucket_paces_exactly_at_its_rate() {
        // 10 Gb/s at 1.5 GHz: a 1480 B frame (12,000 wire bits) costs 1800 cycles.
        let mut b = RateBucket::new(Clock::tofino2(), 10_000_000_000, 0);
        assert!(b.conforms(0));
        b.charge(0, 1480);
        assert_eq!(b.conforms_from(), 1800);
        assert!(!b.conforms(1799));
        assert!(b.conforms(1800));
        b.charge(1800, 1480);
        assert_eq!(b.conforms_from(), 3600);
        // 64 B frames take 672 bits = 100.8 cycles: the fractions add up exactly.
        let mut b = RateBucket::new(Clock::tofino2(), 10_000_000_000, 0);
        let mut t = 0;
        for _ in 0..5 {
            t = t.max(b.conforms_from());
            b.charge(t, 64);
        }
        // Sent in the cycles where 0, 100.8, 201.6, 302.4, 403.2 fall; paid for until 504.
        assert_eq!(t, 403);
        assert_eq!(b.conforms_from(), 504);
    }

    #[test]
    fn conforms_is_the_bucket_inequality() {
        let mut b = RateBucket::new(Clock::tofino2(), 7_000_000_001, 333);
        let mut now = 5;
        for k in 0..200u64 {
            b.charge(now, 64 + (k * 97) % 9000);
            let slack = |t: Cycle| b.tat < b.units(t + 1) + b.burst_units;
            let from = b.conforms_from();
            assert!(slack(from) && (from == 0 || !slack(from - 1)));
            now = from.max(now) + k % 3;
        }
    }

    #[test]
    fn burst_lets_a_rested_queue_send_early_but_not_save_up() {
        let mut b = RateBucket::new(Clock::tofino2(), 10_000_000_000, 1500);
        b.charge(10_000, 1480);
        // 1500 B of tolerance = 1800 cycles' worth at 10G: the next frame may go at once.
        assert!(b.conforms(10_000));
        b.charge(10_000, 1480);
        assert_eq!(b.conforms_from(), 10_000 + 3600 - 1800);
    }
}
