//! BFC's artifact's ideal FCT, the definition its tables divide by (`output.ideal =
//! "bfc_artifact"`; [`ARTIFACT`], registered in `crate::schemes::IDEALS`).

use crate::scenario::topology::{IdealRule, Topology};
use t2_clock::Cycle;
use t2_testbench::workload::FlowSpec;

/// The rule as scenario files and results name it: a flow's ideal on the network it ran on
/// (its links are the switches on its path plus one).
pub static ARTIFACT: IdealRule = IdealRule {
    name: "bfc_artifact",
    fct: |topo: &Topology, f: &FlowSpec| {
        bfc_artifact_ideal(
            f.size_bytes,
            topo.mss(),
            topo.switch_hops(f.src, f.dst) + 1,
            topo.link_delay_ns(),
            topo.link_bps(),
            topo.clock(),
        )
    },
};

/// BFC's artifact's ideal FCT (`calculate_fct_slowdown.py` in `prateshg/BFC_NS3_NSDI2022`),
/// in cycles rounded up: a base of 2 x `links` x `link_delay_ns` (its 4 us within a rack and
/// 8 us across the core with 1 us links) plus (packets + links - 1) packet times at
/// `link_bps`, a packet being `mss` payload bytes (the flow's size when it is one packet):
/// the flow's packets through the first link and one more packet time for each further
/// store-and-forward link. Packets = ceil(size / mss), the frames our flow sends (the artifact
/// sends int(size / 1000) + 1 packets of 1000 bytes, one more when the size divides evenly).
pub fn bfc_artifact_ideal(
    size_bytes: u64,
    mss: u64,
    links: u32,
    link_delay_ns: u64,
    link_bps: u64,
    clock: t2_clock::Clock,
) -> Cycle {
    let packets = size_bytes.div_ceil(mss).max(1);
    let packet_bits = if packets == 1 { size_bytes } else { mss } as u128 * 8;
    let links = links as u128;
    // Picoseconds, exactly: base plus packet times (bits x 10^12 / rate, rounded up).
    let base_ps = 2 * links * link_delay_ns as u128 * 1000;
    let units = packets as u128 + links - 1;
    let ser_ps = (units * packet_bits * 1_000_000_000_000).div_ceil(link_bps as u128);
    let cycles = ((base_ps + ser_ps) * clock.hz as u128).div_ceil(1_000_000_000_000);
    cycles as Cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfc_artifact_ideal_matches_its_formula() {
        let clock = t2_clock::Clock::tofino2();
        assert_eq!(clock.hz, 1_500_000_000);
        // 100 packets of 1000 B across the core (4 links of 1 us at 100 Gb/s):
        // 8000 ns + 80 ns x (100 + 3) = 16,240 ns = 24,360 cycles.
        assert_eq!(
            bfc_artifact_ideal(100_000, 1000, 4, 1000, 100_000_000_000, clock),
            24_360
        );
        // Within a rack (2 links): 4000 ns + 80 ns x (100 + 1) = 12,080 ns = 18,120 cycles.
        assert_eq!(
            bfc_artifact_ideal(100_000, 1000, 2, 1000, 100_000_000_000, clock),
            18_120
        );
        // One packet of 500 B across the core: 8000 + 40 x 4 = 8,160 ns = 12,240 cycles.
        assert_eq!(
            bfc_artifact_ideal(500, 1000, 4, 1000, 100_000_000_000, clock),
            12_240
        );
        // 1001 B is two packets of 1000 B: 8000 + 80 x 5 = 8,400 ns = 12,600 cycles.
        assert_eq!(
            bfc_artifact_ideal(1001, 1000, 4, 1000, 100_000_000_000, clock),
            12_600
        );
        // Rounded up to a cycle: 1 B over one link of 0 ns at 100 Gb/s is 0.08 ns x 1
        // packet = 0.12 cycles, so 1 cycle.
        assert_eq!(bfc_artifact_ideal(1, 1000, 1, 0, 100_000_000_000, clock), 1);
    }
}
