//! What a scheme's program costs per hop against plain forwarding: the small leaf-spine of
//! `scenarios/leaf_spine_w3.toml` (4 leaves x 2 spines x 4 hosts, 100G, 1 us links, W3 at
//! 40%) for 100 us of arrivals (and 20 us to drain), under drop-tail and under each scheme
//! whose program does more (DCTCP, PABO, mice/elephant isolation, DCQCN, HPCC, BFC), on one
//! thread, in packet-hops per wall second (a frame crossing one link is one hop). Only the
//! run is timed: building the network (placing and compiling each switch's program,
//! installing its entries) is done before each iteration, so short runs do not weigh it.
//!
//! Run with `cargo bench --bench schemes`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::path::Path;
use std::time::Duration;
use t2sim::scenario::{ScenarioFile, ScenarioText};

fn scenario(scheme: &str) -> String {
    format!(
        r#"
name = "bench-leaf-spine-{scheme}"
seed = 7
duration_us = 100
drain_us = 20
scheme = "{scheme}"
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 4
link_gbps = 100
link_delay_ns = 1000
[transport]
mss = 1000
window_bytes = 50000
rto_us = 100
[workload]
cdf = "data/workloads/W3.txt"
sampling = "linear"
load = 0.4
arrivals = "poisson"
"#
    )
}

fn per_hop(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheme_per_hop");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    for scheme in [
        "droptail",
        "dctcp",
        "pabo",
        "mice-elephant",
        "dcqcn",
        "hpcc",
        "bfc",
    ] {
        let text = ScenarioText {
            text: scenario(scheme),
            shown: "benches/schemes.rs".into(),
            base: Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
        };
        let mut file = ScenarioFile::from_text(&text, &[]).expect("the bench scenario reads");
        file.set_threads(1);
        let results = file.run().expect("the bench scenario runs");
        let hops: u64 = results.links.iter().map(|l| l.frames).sum();
        group.throughput(Throughput::Elements(hops));
        group.bench_function(format!("leaf_spine_4x2x4_w3_40pct_100us_{scheme}"), |b| {
            b.iter_batched(
                || file.prepare().expect("the bench network builds"),
                |built| built.run().expect("the bench scenario runs"),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, per_hop);
criterion_main!(benches);
