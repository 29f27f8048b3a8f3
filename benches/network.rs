//! Network speed: the BFC paper's leaf-spine size (8 leaves x 8 spines x 16 hosts, 128 hosts,
//! 16 switches, 100G, 1 us links) under Google all-RPC flow sizes (W3) at 65% load, in
//! packet-hops per wall second (a frame crossing one link is one hop; `links.csv` counts).
//!
//! Run with `cargo bench --bench network`. Each iteration builds the network and runs 20 us
//! of arrivals (with 5 us to drain) on the built-in forwarding, on one thread and with the
//! network split over 2 (the results are the same; checked here before timing).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;
use std::time::Duration;
use t2sim::scenario::{ScenarioFile, ScenarioText};

const SCENARIO: &str = r#"
name = "bench-leaf-spine"
seed = 7
duration_us = 20
drain_us = 5
[topology]
kind = "leaf_spine"
leaves = 8
spines = 8
hosts_per_leaf = 16
link_gbps = 100
link_delay_ns = 1000
[transport]
congestion = "fixed"
mss = 1000
window_bytes = 50000
rto_us = 100
[workload]
cdf = "data/workloads/W3.txt"
sampling = "linear"
load = 0.65
arrivals = "poisson"
"#;

fn leaf_spine(c: &mut Criterion) {
    let text = ScenarioText {
        text: SCENARIO.into(),
        shown: "benches/network.rs".into(),
        base: Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
    };
    let run = |threads: usize| {
        let mut s = ScenarioFile::from_text(&text, &[]).expect("the bench scenario reads");
        s.set_threads(threads);
        s.run().expect("the bench scenario runs")
    };
    let one = run(1);
    let hops: u64 = one.links.iter().map(|l| l.frames).sum();
    assert!(run(2) == one, "2 threads give what 1 gives");
    let mut group = c.benchmark_group("network");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(hops));
    group.bench_function("leaf_spine_8x8x16_w3_65pct_20us", |b| b.iter(|| run(1)));
    group.bench_function("leaf_spine_8x8x16_w3_65pct_20us_2_threads", |b| {
        b.iter(|| run(2))
    });
    group.finish();
}

criterion_group!(benches, leaf_spine);
criterion_main!(benches);
