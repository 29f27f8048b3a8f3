//! Long runs keep bounded memory: the incast's receiver keeps a histogram of latencies, not
//! a record per packet, and the summary from it is the exact one wherever it claims to be.

use t2_testbench::Host;
use t2sim::scenario::{IncastScenario, RunSummary, Spread};

/// The summary with and without per-packet records, and the exact spread from the records.
fn both(s: &IncastScenario) -> (RunSummary, RunSummary, Spread, usize) {
    let mut kept = s.build().unwrap();
    kept.net.run_until(s.duration_cycles);
    let rx = kept.net.node::<Host>(kept.receiver);
    let links = 2 * kept.link_delay_cycles;
    let exact = Spread::of(
        rx.received()
            .iter()
            .map(|r| r.received_at - r.sent_at - links)
            .collect(),
    )
    .unwrap();
    let with_records = RunSummary::of(s, &kept);
    let mut lean = s.build().unwrap();
    lean.net
        .node_mut::<Host>(lean.receiver)
        .keep_receptions(false);
    lean.net.run_until(s.duration_cycles);
    let records = lean.net.node::<Host>(lean.receiver).received().len();
    (with_records, RunSummary::of(s, &lean), exact, records)
}

#[test]
fn the_default_summary_is_exact_without_per_packet_records() {
    let s = IncastScenario::default();
    let (with_records, lean, exact, records) = both(&s);
    assert_eq!(records, 0, "no record per packet is kept");
    assert_eq!(lean, with_records);
    // Every latency is below 131,072 cycles: the histogram's median is the exact one.
    assert_eq!(lean.latency, Some(exact));
    assert_eq!((exact.min, exact.median, exact.max), (864, 56_678, 112_310));
    assert_eq!(lean.delivered, 815);
}

#[test]
fn a_longer_run_keeps_min_and_max_exact_and_the_median_within_1_in_1024() {
    // 1 ms: the queue grows past 131,072 cycles of latency.
    let s = IncastScenario {
        duration_cycles: 1_500_000,
        ..IncastScenario::default()
    };
    let (with_records, lean, exact, records) = both(&s);
    assert_eq!(records, 0);
    assert_eq!(lean, with_records);
    let l = lean.latency.unwrap();
    assert!(exact.median >= 131_072, "{exact:?}");
    assert_eq!((l.min, l.max), (exact.min, exact.max));
    // The median's bucket holds the exact median: at most 1/1024 below it, never above.
    assert!(l.median <= exact.median, "{l:?} {exact:?}");
    assert!(
        exact.median - l.median < exact.median / 1024,
        "{l:?} {exact:?}"
    );
    assert_eq!(
        lean.offered,
        lean.delivered + lean.dropped() + lean.in_chip + lean.on_links
    );
}
