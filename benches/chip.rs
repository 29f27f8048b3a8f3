//! Whole-chip speed under saturating incast, in simulated packets (offered) per wall second.
//!
//! Run with `cargo bench --bench chip`. Each iteration builds the scenario and runs 200 us of
//! simulated time.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;
use t2sim::scenario::IncastScenario;

fn incast(c: &mut Criterion) {
    let mut group = c.benchmark_group("chip_incast_200us");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (senders, frame) in [(4u32, 1500u32), (15, 256), (15, 64)] {
        let s = IncastScenario {
            senders,
            frame_bytes: frame,
            duration_cycles: 300_000,
            ..IncastScenario::default()
        };
        let offered = s.run().expect("scenario runs").offered;
        group.throughput(Throughput::Elements(offered));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{senders}x100G_to_1_{frame}B")),
            &s,
            |b, s| b.iter(|| s.run().expect("scenario runs")),
        );
    }
    group.finish();
}

criterion_group!(benches, incast);
criterion_main!(benches);
