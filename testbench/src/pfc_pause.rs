//! A NIC's side of PFC (IEEE 802.1Qbb): which traffic classes the switch at the other end of
//! its link has paused, and until when. Kept by the PFC host feature (`host_feature::pfc`),
//! which the TCP host and the RDMA NIC both hold.

use t2_clock::{Cycle, LineRate};
use t2_pipeline::pfc::PfcFrame;

/// Per class, the cycle until which PFC holds it, and the PFC frames taken in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PfcPauses {
    until: [Cycle; 8],
    frames: u64,
}

impl PfcPauses {
    /// Takes in a PFC frame received in cycle `now` by a NIC sending at `line`: each class
    /// it enables is paused for that class's quanta of 512 bit times at the NIC's rate,
    /// counted from the exact tick the cycle starts, or resumed at once for quanta 0.
    pub fn apply(&mut self, now: Cycle, frame: &PfcFrame, line: &LineRate) {
        self.frames += 1;
        for class in 0..8 {
            if !frame.class_enable[class] {
                continue;
            }
            let quanta = frame.quanta[class] as u64;
            self.until[class] = if quanta == 0 {
                now
            } else {
                let ticks = line.cycle_to_ticks(now) + quanta * 512 * line.ticks_per_bit();
                line.ticks_to_cycle_ceil(ticks)
            };
        }
    }

    /// Whether PFC holds `class` in cycle `now`.
    pub fn is_paused(&self, class: u8, now: Cycle) -> bool {
        now < self.until[class as usize % 8]
    }

    /// The cycle the pause of `class` ends (at or before `now` when it is not paused).
    pub fn until(&self, class: u8) -> Cycle {
        self.until[class as usize % 8]
    }

    /// The first cycle after `now` at which a paused class resumes, if any is paused.
    pub fn next_end(&self, now: Cycle) -> Option<Cycle> {
        self.until.iter().copied().filter(|&t| t > now).min()
    }

    /// PFC frames taken in.
    pub fn frames(&self) -> u64 {
        self.frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_clock::Clock;

    #[test]
    fn quanta_are_512_bit_times_at_the_nics_rate_and_zero_resumes() {
        // 100 Gb/s at 1.5 GHz: 100 quanta = 51,200 bits = 512 ns = 768 cycles exactly.
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        let mut p = PfcPauses::default();
        p.apply(1000, &PfcFrame::one_class(3, 100), &line);
        assert!(p.is_paused(3, 1767) && !p.is_paused(3, 1768));
        assert!(!p.is_paused(0, 1000));
        assert_eq!(
            (p.until(3), p.next_end(1000), p.next_end(1768)),
            (1768, Some(1768), None)
        );
        p.apply(1100, &PfcFrame::one_class(3, 0), &line);
        assert!(!p.is_paused(3, 1100));
        assert_eq!(p.frames(), 2);
    }
}
