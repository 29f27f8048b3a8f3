//! t2-clock: the one time base every t2sim module shares.
//!
//! Time is a `u64` count of cycles of the chip's packet-processing clock (1.5 GHz on
//! Tofino2). Everything that is not a whole number of cycles (a frame's serialization at
//! 100 Gb/s, a nanosecond value) is computed with exact integer arithmetic: rational
//! quantities carry their own denominator and every rounding is named (`_floor`, `_ceil`).
//! No floating point is used on the timing path, so long runs never drift.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A point in time or a duration, in clock cycles.
pub type Cycle = u64;

/// Bytes that go on an Ethernet wire around every frame and are not part of it:
/// 7 B preamble + 1 B start-of-frame delimiter + 12 B minimum inter-frame gap (IEEE 802.3).
pub const PREAMBLE_AND_IFG_BYTES: u64 = 20;

/// Bytes of the frame check sequence. Packet buffers in t2sim hold frames without it; the
/// MAC adds it on the wire, so a buffer of `n` bytes is a frame of `n + 4` bytes.
pub const FCS_BYTES: u64 = 4;

/// Greatest common divisor.
pub const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// `ceil(a / b)` for `b > 0`.
pub const fn div_ceil_u128(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

/// The packet-processing clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    /// Frequency in Hz (Tofino2: 1,500,000,000).
    pub hz: u64,
}

impl Clock {
    /// A clock of `hz` Hz. Panics on 0, which no caller can mean.
    pub const fn new(hz: u64) -> Clock {
        assert!(hz > 0, "a clock needs a non-zero frequency");
        Clock { hz }
    }

    /// Tofino2's pps clock: 1.5 GHz.
    pub const fn tofino2() -> Clock {
        Clock::new(1_500_000_000)
    }

    /// Cycles in `ns` nanoseconds, rounded down.
    pub fn ns_to_cycles_floor(self, ns: u64) -> Cycle {
        (ns as u128 * self.hz as u128 / 1_000_000_000) as Cycle
    }

    /// Cycles in `ns` nanoseconds, rounded up (the first cycle at or after `ns`).
    pub fn ns_to_cycles_ceil(self, ns: u64) -> Cycle {
        div_ceil_u128(ns as u128 * self.hz as u128, 1_000_000_000) as Cycle
    }

    /// Cycles in `ns` nanoseconds, rounded up, or `None` when they do not fit a [`Cycle`]
    /// (a conversion of user input must refuse such a value, not wrap it).
    pub fn checked_ns_to_cycles_ceil(self, ns: u64) -> Option<Cycle> {
        Cycle::try_from(div_ceil_u128(ns as u128 * self.hz as u128, 1_000_000_000)).ok()
    }

    /// Nanoseconds in `cycles`, rounded down.
    pub fn cycles_to_ns_floor(self, cycles: Cycle) -> u64 {
        (cycles as u128 * 1_000_000_000 / self.hz as u128) as u64
    }

    /// Nanoseconds in `cycles`, rounded up.
    pub fn cycles_to_ns_ceil(self, cycles: Cycle) -> u64 {
        div_ceil_u128(cycles as u128 * 1_000_000_000, self.hz as u128) as u64
    }

    /// Picoseconds in `cycles`, rounded to nearest (ties up). Used for display and for the
    /// time scale of waveforms; the model itself never converts back from it.
    pub fn cycles_to_ps_round(self, cycles: Cycle) -> u64 {
        let num = cycles as u128 * 1_000_000_000_000;
        ((num + self.hz as u128 / 2) / self.hz as u128) as u64
    }

    /// `cycles` as nanoseconds with three decimals, e.g. `"576.000"`, exactly rounded.
    pub fn format_ns(self, cycles: Cycle) -> String {
        let ps = self.cycles_to_ps_round(cycles);
        format!("{}.{:03}", ps / 1000, ps % 1000)
    }

    /// Cycles of a link's propagation delay of `ns` nanoseconds. A delay that is not a whole
    /// number of cycles is rounded up: the bit cannot be seen before it has arrived.
    pub fn propagation_cycles(self, ns: u64) -> Cycle {
        self.ns_to_cycles_ceil(ns)
    }
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::tofino2()
    }
}

/// A line rate seen from the clock: how many cycles one bit takes, as an exact fraction.
///
/// Times on a line are kept in *line ticks*, `1 / ticks_per_cycle` of a cycle, so that the
/// start and end of every bit is a whole number of ticks. At 100 Gb/s and 1.5 GHz a bit is
/// 3/200 of a cycle: `ticks_per_cycle = 200`, `ticks_per_bit = 3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRate {
    bits_per_second: u64,
    ticks_per_cycle: u64,
    ticks_per_bit: u64,
}

impl LineRate {
    /// The line rate `bits_per_second` under `clock`. Panics on 0 b/s, which no caller can
    /// mean; user input is validated before it gets here.
    pub fn new(clock: Clock, bits_per_second: u64) -> LineRate {
        assert!(bits_per_second > 0, "a line needs a non-zero rate");
        let g = gcd(clock.hz, bits_per_second);
        LineRate {
            bits_per_second,
            ticks_per_cycle: bits_per_second / g,
            ticks_per_bit: clock.hz / g,
        }
    }

    pub fn bits_per_second(self) -> u64 {
        self.bits_per_second
    }

    /// Line ticks in one cycle.
    pub fn ticks_per_cycle(self) -> u64 {
        self.ticks_per_cycle
    }

    /// Line ticks one bit takes.
    pub fn ticks_per_bit(self) -> u64 {
        self.ticks_per_bit
    }

    /// Line ticks at the start of `cycle`.
    pub fn cycle_to_ticks(self, cycle: Cycle) -> u64 {
        cycle * self.ticks_per_cycle
    }

    /// The cycle in which line time `ticks` falls, counting a time exactly on a cycle
    /// boundary as that cycle: `ceil(ticks / ticks_per_cycle)`.
    pub fn ticks_to_cycle_ceil(self, ticks: u64) -> Cycle {
        ticks.div_ceil(self.ticks_per_cycle)
    }

    /// Bits on the wire for a frame of `frame_bytes` (FCS included): the frame plus 20 B of
    /// preamble, start delimiter and inter-frame gap.
    pub fn wire_bits(frame_bytes: u64) -> u64 {
        (frame_bytes + PREAMBLE_AND_IFG_BYTES) * 8
    }

    /// Exact serialization time of a frame of `frame_bytes`, in line ticks.
    pub fn serialization_ticks(self, frame_bytes: u64) -> u64 {
        Self::wire_bits(frame_bytes) * self.ticks_per_bit
    }

    /// Serialization time of a frame of `frame_bytes` in cycles, rounded up.
    pub fn serialization_cycles_ceil(self, frame_bytes: u64) -> Cycle {
        self.serialization_ticks(frame_bytes)
            .div_ceil(self.ticks_per_cycle)
    }

    /// Whether a frame of `frame_bytes` takes a whole number of cycles on this line.
    pub fn serialization_is_whole(self, frame_bytes: u64) -> bool {
        self.serialization_ticks(frame_bytes)
            .is_multiple_of(self.ticks_per_cycle)
    }
}

impl fmt::Display for LineRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rate(f, self.bits_per_second)
    }
}

/// Writes a rate in b/s the way people say it: `100G`, `25G`, `1.5G`, `800M`.
pub fn write_rate(f: &mut impl fmt::Write, bps: u64) -> fmt::Result {
    if bps >= 1_000_000_000 && bps.is_multiple_of(1_000_000_000) {
        write!(f, "{}G", bps / 1_000_000_000)
    } else if bps >= 1_000_000_000 {
        write!(
            f,
            "{}.{:03}G",
            bps / 1_000_000_000,
            bps % 1_000_000_000 / 1_000_000
        )
    } else if bps.is_multiple_of(1_000_000) {
        write!(f, "{}M", bps / 1_000_000)
    } else {
        write!(f, "{bps}b/s")
    }
}

/// A paced sender's schedule: frames of a fixed size sent at an average `rate` (at most the
/// line rate) over a line, computed exactly. Frame `k` (from 0) starts its first bit at
/// `k * wire_bits / rate` seconds after the start and its last bit leaves `wire_bits / line`
/// seconds later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacedSchedule {
    clock: Clock,
    wire_bits: u64,
    rate_bps: u64,
    line_bps: u64,
}

impl PacedSchedule {
    /// Panics if `rate_bps` is 0 or exceeds `line_bps`; user input is validated before.
    pub fn new(clock: Clock, frame_bytes: u64, rate_bps: u64, line_bps: u64) -> PacedSchedule {
        assert!(
            rate_bps > 0 && rate_bps <= line_bps,
            "rate must be in (0, line rate]"
        );
        PacedSchedule {
            clock,
            wire_bits: LineRate::wire_bits(frame_bytes),
            rate_bps,
            line_bps,
        }
    }

    /// Cycles after the schedule's start at which frame `k`'s last bit has left: the
    /// exact time `(k / rate + 1 / line) * wire_bits` seconds, rounded up to a cycle.
    pub fn last_bit_offset(&self, k: u64) -> Cycle {
        let num = self.wire_bits as u128
            * self.clock.hz as u128
            * (k as u128 * self.line_bps as u128 + self.rate_bps as u128);
        let den = self.rate_bps as u128 * self.line_bps as u128;
        div_ceil_u128(num, den) as Cycle
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tofino2_clock_converts_exactly() {
        let c = Clock::tofino2();
        assert_eq!(c.ns_to_cycles_floor(1000), 1500);
        assert_eq!(c.ns_to_cycles_ceil(1000), 1500);
        assert_eq!(c.checked_ns_to_cycles_ceil(1000), Some(1500));
        // 2^64 - 1 ns is 1.5 x (2^64 - 1) cycles: does not fit.
        assert_eq!(c.checked_ns_to_cycles_ceil(u64::MAX), None);
        assert_eq!(
            c.checked_ns_to_cycles_ceil(12_297_829_382_473_034_410),
            Some(u64::MAX)
        );
        assert_eq!(
            c.checked_ns_to_cycles_ceil(12_297_829_382_473_034_411),
            None
        );
        assert_eq!(c.cycles_to_ns_floor(3), 2);
        assert_eq!(c.cycles_to_ns_ceil(3), 2);
        assert_eq!(c.cycles_to_ns_floor(1), 0);
        assert_eq!(c.cycles_to_ns_ceil(1), 1);
        assert_eq!(c.format_ns(1), "0.667");
        assert_eq!(c.format_ns(864), "576.000");
        assert_eq!(c.propagation_cycles(100), 150);
        assert_eq!(c.propagation_cycles(1), 2);
    }

    #[test]
    fn serialization_at_100g() {
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        assert_eq!(line.ticks_per_cycle(), 200);
        assert_eq!(line.ticks_per_bit(), 3);
        // 1480 B + 20 B = 12,000 bits = 120 ns = 180 cycles exactly.
        assert!(line.serialization_is_whole(1480));
        assert_eq!(line.serialization_cycles_ceil(1480), 180);
        // A 64 B frame: 84 B on the wire = 672 bits = 6.72 ns = 10.08 cycles.
        assert_eq!(line.serialization_ticks(64), 2016);
        assert_eq!(line.serialization_cycles_ceil(64), 11);
        assert!(!line.serialization_is_whole(64));
    }

    #[test]
    fn serialization_at_400g_and_25g() {
        let c = Clock::tofino2();
        let l400 = LineRate::new(c, 400_000_000_000);
        assert_eq!(l400.serialization_cycles_ceil(1480), 45);
        let l25 = LineRate::new(c, 25_000_000_000);
        assert_eq!(l25.serialization_cycles_ceil(1480), 720);
    }

    #[test]
    fn paced_schedule_at_line_rate_is_back_to_back() {
        let c = Clock::tofino2();
        let s = PacedSchedule::new(c, 1480, 100_000_000_000, 100_000_000_000);
        assert_eq!(s.last_bit_offset(0), 180);
        assert_eq!(s.last_bit_offset(1), 360);
        // Half rate: starts 360 cycles apart, each lasting 180.
        let h = PacedSchedule::new(c, 1480, 50_000_000_000, 100_000_000_000);
        assert_eq!(h.last_bit_offset(0), 180);
        assert_eq!(h.last_bit_offset(1), 540);
    }

    #[test]
    fn rates_print_as_people_say_them() {
        let mut s = String::new();
        write_rate(&mut s, 100_000_000_000).unwrap();
        s.push(' ');
        write_rate(&mut s, 2_500_000_000).unwrap();
        s.push(' ');
        write_rate(&mut s, 800_000_000).unwrap();
        assert_eq!(s, "100G 2.500G 800M");
    }

    proptest! {
        #[test]
        fn ns_round_trips_bracket(ns in 0u64..1_000_000_000_000) {
            let c = Clock::tofino2();
            let lo = c.ns_to_cycles_floor(ns);
            let hi = c.ns_to_cycles_ceil(ns);
            prop_assert!(hi - lo <= 1);
            prop_assert!(c.cycles_to_ns_floor(lo) <= ns);
            prop_assert!(c.cycles_to_ns_ceil(hi) >= ns);
            // Whole microseconds are whole cycles at 1.5 GHz.
            prop_assert_eq!(c.ns_to_cycles_floor(ns * 1000), ns * 1500);
        }

        #[test]
        fn serialization_ticks_add_up(a in 60u64..9216, b in 60u64..9216, gbps in prop::sample::select(vec![1u64, 10, 25, 40, 50, 100, 200, 400])) {
            let line = LineRate::new(Clock::tofino2(), gbps * 1_000_000_000);
            // Ticks are exact: the wire time of two frames is the wire time of their bytes.
            let two = line.serialization_ticks(a) + line.serialization_ticks(b);
            prop_assert_eq!(two, (a + b + 40) * 8 * line.ticks_per_bit());
            let cycles = line.serialization_cycles_ceil(a);
            prop_assert!(cycles * line.ticks_per_cycle() >= line.serialization_ticks(a));
            prop_assert!((cycles - 1) * line.ticks_per_cycle() < line.serialization_ticks(a));
        }
    }
}
