//! Metrics of a run: flow completion times and slowdown, percentiles by flow-size bucket,
//! throughput, drops by reason, and reordering (RFC 5236 reorder density and its entropy).
//!
//! Everything here is computed from integer cycles and bytes; floats appear only in the
//! ratios reported (slowdown, Gb/s, entropy). Outputs iterate `BTreeMap`s or sorted vectors,
//! so they are in a fixed order.
//!
//! The ideal FCT of a flow (docs/testbench.md; the topology chooses among its definitions:
//! the plain forwarding's path by default, each scheme's own pipeline, or BFC's artifact's
//! formula) is, for the first two, what it would take alone on an idle network: the serialization of all its frames at the bottleneck rate on its path plus the
//! base round-trip time (propagation both ways, unloaded switch latency both ways, and the
//! serialization of one data frame and its ACK at every hop but the bottleneck one, which
//! the caller folds into `base_rtt`). FCT runs from the flow's start to the cycle the sender
//! receives the ACK of its last byte, so slowdown = FCT / ideal is at least 1 on an idle
//! network up to rounding to whole cycles.

use std::collections::BTreeMap;
use t2_clock::{Clock, Cycle, LineRate};

/// One flow's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FlowRecord {
    pub id: u32,
    pub src: usize,
    pub dst: usize,
    pub size_bytes: u64,
    pub start: Cycle,
    /// Cycle the sender learned that every byte arrived; `None` if it had not by the end.
    pub finish: Option<Cycle>,
    /// The ideal FCT in cycles (see the module doc).
    pub ideal: Cycle,
}

impl FlowRecord {
    pub fn fct(&self) -> Option<Cycle> {
        self.finish.map(|f| f - self.start)
    }

    /// FCT over ideal FCT.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f as f64 / self.ideal.max(1) as f64)
    }

    /// Goodput of the flow over its FCT, b/s.
    pub fn throughput_bps(&self, clock: Clock) -> Option<f64> {
        self.fct()
            .map(|f| self.size_bytes as f64 * 8.0 * clock.hz as f64 / f.max(1) as f64)
    }
}

/// How a flow of `size_bytes` is cut into frames: `mss` payload bytes per frame and
/// `overhead` bytes of headers and FCS on each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framing {
    pub mss: u64,
    pub overhead: u64,
}

impl Framing {
    pub fn frames(&self, size_bytes: u64) -> u64 {
        size_bytes.div_ceil(self.mss).max(1)
    }

    /// Bytes on the wire for the whole flow, preamble and inter-frame gap included.
    pub fn wire_bytes(&self, size_bytes: u64) -> u64 {
        let n = self.frames(size_bytes);
        size_bytes + n * (self.overhead + t2_clock::PREAMBLE_AND_IFG_BYTES)
    }

    /// The ideal FCT: the flow's serialization at `bottleneck` plus `base_rtt` cycles.
    pub fn ideal_fct(&self, size_bytes: u64, bottleneck: LineRate, base_rtt: Cycle) -> Cycle {
        let bits = self.wire_bytes(size_bytes) * 8;
        bottleneck.ticks_to_cycle_ceil(bits * bottleneck.ticks_per_bit()) + base_rtt
    }
}

/// Values below this are counted exactly, one bucket per cycle value (131,072 cycles:
/// 87 us at 1.5 GHz).
pub const HISTOGRAM_EXACT_BELOW: u64 = 1 << 17;

/// Bits kept below the leading one of a value at or above `HISTOGRAM_EXACT_BELOW`: such a
/// value is counted in the bucket of its 11 leading bits, so it is known to within 1/1024 of
/// itself (rounded down).
pub const HISTOGRAM_SUB_BITS: u32 = 10;

/// Counts of cycle values (latencies) in bounded memory: exact below
/// `HISTOGRAM_EXACT_BELOW`, above it in buckets of the value's 11 leading bits (a relative
/// resolution of 2^-10, the bucket's lower bound standing for it). The minimum, maximum,
/// count and sum are exact. At most 131,072 + 47 x 1,024 buckets ever exist, however long
/// the run; only those used take memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleHistogram {
    counts: BTreeMap<u64, u64>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl CycleHistogram {
    /// The bucket (its lower bound) that holds `v`.
    pub fn bucket(v: u64) -> u64 {
        if v < HISTOGRAM_EXACT_BELOW {
            return v;
        }
        let shift = 63 - v.leading_zeros() - HISTOGRAM_SUB_BITS;
        v >> shift << shift
    }

    pub fn add(&mut self, v: u64) {
        *self.counts.entry(Self::bucket(v)).or_insert(0) += 1;
        self.min = if self.n == 0 { v } else { self.min.min(v) };
        self.max = self.max.max(v);
        self.n += 1;
        self.sum += v as u128;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Buckets in use.
    pub fn buckets(&self) -> usize {
        self.counts.len()
    }

    /// The value of rank `r` (0-based, in increasing order): exact below
    /// `HISTOGRAM_EXACT_BELOW` and for the first and last rank, otherwise its bucket's lower
    /// bound (never below the minimum).
    pub fn nth(&self, r: u64) -> Option<u64> {
        if r >= self.n {
            return None;
        }
        if r == self.n - 1 {
            return Some(self.max);
        }
        let mut seen = 0;
        for (&b, &c) in &self.counts {
            seen += c;
            if seen > r {
                return Some(b.max(self.min));
            }
        }
        unreachable!("the counts add up to n")
    }
}

/// The `p`-th percentile (0 < p <= 100) of sorted values by the nearest-rank method.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// FCT statistics of the flows whose size falls in one bucket.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BucketStats {
    /// Sizes in `lower..upper` bytes (`upper` None: no bound).
    pub lower: u64,
    pub upper: Option<u64>,
    pub flows: usize,
    pub completed: usize,
    pub mean_slowdown: Option<f64>,
    pub p50_slowdown: Option<f64>,
    pub p95_slowdown: Option<f64>,
    pub p99_slowdown: Option<f64>,
    pub p50_fct_cycles: Option<f64>,
    pub p99_fct_cycles: Option<f64>,
}

/// Default bucket bounds: mice below 10 KB, 10-100 KB, 100 KB-1 MB, elephants above.
pub const DEFAULT_BUCKETS: [u64; 3] = [10_000, 100_000, 1_000_000];

/// Statistics per size bucket; `bounds` are the increasing upper bounds of all buckets but
/// the last, and a last bucket "all flows" is appended.
pub fn by_bucket(records: &[FlowRecord], bounds: &[u64]) -> Vec<BucketStats> {
    let mut edges: Vec<(u64, Option<u64>)> = Vec::new();
    let mut lower = 0;
    for &b in bounds {
        edges.push((lower, Some(b)));
        lower = b;
    }
    edges.push((lower, None));
    let mut out: Vec<BucketStats> = edges
        .into_iter()
        .map(|(lo, hi)| {
            stats(
                lo,
                hi,
                records
                    .iter()
                    .filter(|r| r.size_bytes >= lo && hi.is_none_or(|h| r.size_bytes < h)),
            )
        })
        .collect();
    if !bounds.is_empty() {
        out.push(stats(0, None, records.iter()));
    }
    out
}

/// The flow-size percentiles [`by_size_percentile`] splits at by default: deciles, as BFC's
/// paper draws its slowdown against the flow-size percentile of the workload.
pub const DECILES: [f64; 9] = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0];

/// Statistics per flow-size percentile bucket: the bounds are the sizes of the flows run at
/// `percents` (increasing, in (0, 100); nearest rank over the sorted sizes, one byte past it
/// so a bucket holds sizes up to and including its percentile's), so each bucket holds about
/// the same share of flows (more where many flows share one size; bounds that coincide are
/// merged). No "all" bucket is appended.
pub fn by_size_percentile(records: &[FlowRecord], percents: &[f64]) -> Vec<BucketStats> {
    let mut sizes: Vec<f64> = records.iter().map(|r| r.size_bytes as f64).collect();
    sizes.sort_by(f64::total_cmp);
    let mut bounds: Vec<u64> = percents
        .iter()
        .filter_map(|&p| percentile(&sizes, p))
        .map(|s| s as u64 + 1)
        .collect();
    bounds.dedup();
    if sizes
        .last()
        .is_some_and(|&m| bounds.last() == Some(&(m as u64 + 1)))
    {
        bounds.pop();
    }
    let mut out = by_bucket(records, &bounds);
    if !bounds.is_empty() {
        out.pop();
    }
    out
}

fn stats<'a>(
    lower: u64,
    upper: Option<u64>,
    it: impl Iterator<Item = &'a FlowRecord>,
) -> BucketStats {
    let mut flows = 0;
    let mut slow = Vec::new();
    let mut fct = Vec::new();
    for r in it {
        flows += 1;
        if let (Some(s), Some(f)) = (r.slowdown(), r.fct()) {
            slow.push(s);
            fct.push(f as f64);
        }
    }
    slow.sort_by(f64::total_cmp);
    fct.sort_by(f64::total_cmp);
    BucketStats {
        lower,
        upper,
        flows,
        completed: slow.len(),
        mean_slowdown: (!slow.is_empty()).then(|| slow.iter().sum::<f64>() / slow.len() as f64),
        p50_slowdown: percentile(&slow, 50.0),
        p95_slowdown: percentile(&slow, 95.0),
        p99_slowdown: percentile(&slow, 99.0),
        p50_fct_cycles: percentile(&fct, 50.0),
        p99_fct_cycles: percentile(&fct, 99.0),
    }
}

/// Bits per second for `bytes` over `cycles`.
pub fn rate_bps(bytes: u64, cycles: Cycle, clock: Clock) -> f64 {
    bytes as f64 * 8.0 * clock.hz as f64 / cycles.max(1) as f64
}

/// Drops counted by reason (`chip.tm_queue_full`, `transport.duplicate`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Drops(pub BTreeMap<String, u64>);

impl Drops {
    pub fn add(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.0.entry(reason.to_string()).or_insert(0) += n;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }
}

/// Reordering of one stream of packets, after RFC 5236.
///
/// Packets carry sequence numbers in sending order. Each packet received (duplicates are
/// ignored) gets a receive index: its position among the packets received. Its expected
/// index is the rank of its sequence number among the received ones, so that lost packets
/// do not count as reordering (RFC 5236 moves the receive index past losses to the same
/// end). The displacement is receive index - expected index: positive when late, negative
/// when early. Reorder density is the distribution of displacements (no threshold: every
/// displacement is kept). Reorder entropy is `-sum p ln p` over that distribution (natural
/// log): 0 when every packet is in order, larger the more spread the displacements.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Reordering {
    /// Displacement to number of packets.
    pub density: BTreeMap<i64, u64>,
    pub packets: u64,
    pub duplicates: u64,
    pub entropy: f64,
}

impl Reordering {
    /// From sequence numbers in the order they were received.
    pub fn of(received: &[u64]) -> Reordering {
        let mut seen = std::collections::BTreeSet::new();
        let mut unique = Vec::with_capacity(received.len());
        let mut duplicates = 0;
        for &s in received {
            if seen.insert(s) {
                unique.push(s);
            } else {
                duplicates += 1;
            }
        }
        let sorted: Vec<u64> = seen.into_iter().collect();
        let mut density = BTreeMap::new();
        for (i, s) in unique.iter().enumerate() {
            let expected = sorted.binary_search(s).expect("received") as i64;
            *density.entry(i as i64 - expected).or_insert(0u64) += 1;
        }
        let n = unique.len() as f64;
        let entropy = density
            .values()
            .map(|&c| {
                let p = c as f64 / n;
                -p * p.ln()
            })
            .sum::<f64>()
            + 0.0; // turns the -0.0 of an in-order stream into 0.0
        Reordering {
            density,
            packets: unique.len() as u64,
            duplicates,
            entropy,
        }
    }

    /// Packets that arrived out of place.
    pub fn displaced(&self) -> u64 {
        self.density
            .iter()
            .filter(|(&d, _)| d != 0)
            .map(|(_, &c)| c)
            .sum()
    }
}

#[cfg(test)]
mod percentile_bucket_tests {
    use super::*;

    fn rec(id: u32, size: u64, fct: u64) -> FlowRecord {
        FlowRecord {
            id,
            src: 0,
            dst: 1,
            size_bytes: size,
            start: 0,
            finish: Some(fct),
            ideal: 10,
        }
    }

    #[test]
    fn percentile_buckets_split_the_flows_by_size_rank() {
        // Sizes 1..=10 (slowdown = size): quartile-ish cuts at 30% and 70% give buckets of
        // sizes 1-3, 4-7, 8-10 (bounds one past the sizes at ranks 3 and 7).
        let r: Vec<FlowRecord> = (1..=10).map(|i| rec(i as u32, i, 10 * i)).collect();
        let b = by_size_percentile(&r, &[30.0, 70.0]);
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].lower, b[0].upper, b[0].flows), (0, Some(4), 3));
        assert_eq!((b[1].lower, b[1].upper, b[1].flows), (4, Some(8), 4));
        assert_eq!((b[2].lower, b[2].upper, b[2].flows), (8, None, 3));
        assert_eq!(b[0].mean_slowdown, Some(2.0));
        assert_eq!(b[2].p99_slowdown, Some(10.0));
        // Many flows of one size merge the bounds that fall on it.
        let same: Vec<FlowRecord> = (0..10).map(|i| rec(i, 500, 100)).collect();
        let b = by_size_percentile(&same, &DECILES);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].lower, b[0].upper, b[0].flows), (0, None, 10));
        assert!(by_size_percentile(&[], &DECILES).len() <= 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(size: u64, fct: Option<Cycle>, ideal: Cycle) -> FlowRecord {
        FlowRecord {
            id: 0,
            src: 0,
            dst: 1,
            size_bytes: size,
            start: 100,
            finish: fct.map(|f| 100 + f),
            ideal,
        }
    }

    #[test]
    fn ideal_fct_is_serialization_plus_base_rtt() {
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        let f = Framing {
            mss: 1000,
            overhead: 62,
        };
        // 2500 B: 3 frames of (payload + 62 + 20) bytes = 2746 B = 21968 bits = 219.68 ns
        // at 100G = 329.52 cycles, rounded up, plus an RTT of 1000 cycles.
        assert_eq!(f.frames(2500), 3);
        assert_eq!(f.wire_bytes(2500), 2746);
        assert_eq!(f.ideal_fct(2500, line, 1000), 1330);
    }

    #[test]
    fn the_histogram_is_exact_below_its_bound_and_within_1_in_1024_above() {
        let mut h = CycleHistogram::default();
        assert_eq!((h.min(), h.max(), h.nth(0)), (None, None, None));
        // Exact: every value below 131,072 is its own bucket.
        let vs: Vec<u64> = (0..2_000u64).map(|i| i * 65 % 131_071).collect();
        for &v in &vs {
            h.add(v);
        }
        let mut sorted = vs.clone();
        sorted.sort_unstable();
        for (r, &v) in sorted.iter().enumerate() {
            assert_eq!(h.nth(r as u64), Some(v));
        }
        assert_eq!(h.sum(), vs.iter().map(|&v| v as u128).sum::<u128>());
        // Above: 11 leading bits. 1,000,000 = 0b11110100001001000000 (20 bits): the bucket
        // keeps the top 11 and clears the 9 below, 999,936; resolution 512 < 1,000,000/1024.
        assert_eq!(CycleHistogram::bucket(1_000_000), 999_936);
        assert_eq!(CycleHistogram::bucket(131_072), 131_072);
        assert_eq!(CycleHistogram::bucket(131_199), 131_072);
        assert_eq!(CycleHistogram::bucket(131_200), 131_200);
        for v in [131_072u64, 999_999, 1 << 40, u64::MAX] {
            let b = CycleHistogram::bucket(v);
            assert!(
                b <= v && v - b < (v >> HISTOGRAM_SUB_BITS).max(1),
                "{v} {b}"
            );
        }
        // Bounded memory: a million values over a wide range use few buckets.
        let mut wide = CycleHistogram::default();
        for i in 0..1_000_000u64 {
            wide.add(200_000 + i * 7919 % 5_000_000);
        }
        assert!(wide.buckets() <= 6 * 1024, "{}", wide.buckets());
        assert_eq!(wide.count(), 1_000_000);
        assert_eq!(wide.nth(999_999), wide.max());
    }

    #[test]
    fn percentiles_and_buckets() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&[], 50.0), None);
        let records = [
            rec(500, Some(200), 100),
            rec(5_000, Some(300), 100),
            rec(50_000, Some(1000), 500),
            rec(2_000_000, None, 1000),
        ];
        let b = by_bucket(&records, &DEFAULT_BUCKETS);
        assert_eq!(b.len(), 5);
        assert_eq!((b[0].flows, b[0].completed), (2, 2));
        assert_eq!(b[0].mean_slowdown, Some(2.5));
        assert_eq!(b[0].p50_slowdown, Some(2.0));
        assert_eq!(b[0].p99_slowdown, Some(3.0));
        assert_eq!((b[1].flows, b[1].p50_slowdown), (1, Some(2.0)));
        assert_eq!((b[2].flows, b[2].completed), (0, 0));
        assert_eq!(
            (b[3].flows, b[3].completed, b[3].p50_slowdown),
            (1, 0, None)
        );
        assert_eq!((b[4].flows, b[4].completed), (4, 3));
        let r = rec(1_500_000, Some(1_500_000_000 / 1000), 1);
        // 1.5 MB in 1 ms is 12 Gb/s.
        let t = r.throughput_bps(Clock::tofino2()).unwrap();
        assert!((t - 12e9).abs() < 1.0, "{t}");
        assert_eq!(rate_bps(1_500_000, 1_500_000, Clock::tofino2()), 12e9);
    }

    #[test]
    fn drops_by_reason() {
        let mut d = Drops::default();
        d.add("b", 2);
        d.add("a", 1);
        d.add("c", 0);
        d.add("b", 1);
        assert_eq!(d.total(), 4);
        assert_eq!(
            d.0.into_iter().collect::<Vec<_>>(),
            vec![("a".into(), 1), ("b".into(), 3)]
        );
    }

    #[test]
    fn in_order_has_zero_entropy() {
        let r = Reordering::of(&[0, 1, 2, 3, 4]);
        assert_eq!(r.entropy.to_bits(), 0.0f64.to_bits(), "exactly +0");
        assert_eq!(r.density, BTreeMap::from([(0, 5)]));
        assert_eq!(r.displaced(), 0);
        // A loss is not reordering.
        let r = Reordering::of(&[0, 1, 3, 4]);
        assert_eq!((r.entropy, r.displaced()), (0.0, 0));
    }

    #[test]
    fn reorder_density_and_entropy_by_hand() {
        // 0 2 1 3: packet 2 is one early, packet 1 one late.
        let r = Reordering::of(&[0, 2, 1, 3]);
        assert_eq!(r.density, BTreeMap::from([(-1, 1), (0, 2), (1, 1)]));
        // -(1/4 ln 1/4 + 1/2 ln 1/2 + 1/4 ln 1/4) = 1.5 ln 2.
        assert!((r.entropy - 1.5 * 2f64.ln()).abs() < 1e-12);
        // 3 0 1 2: packet 3 three early, the others one late each.
        let r = Reordering::of(&[3, 0, 1, 2]);
        assert_eq!(r.density, BTreeMap::from([(-3, 1), (1, 3)]));
        let h = -(0.25f64 * 0.25f64.ln() + 0.75 * 0.75f64.ln());
        assert!((r.entropy - h).abs() < 1e-12);
        // Duplicates are counted, not placed.
        let r = Reordering::of(&[0, 1, 1, 2]);
        assert_eq!((r.packets, r.duplicates, r.entropy), (3, 1, 0.0));
    }
}
