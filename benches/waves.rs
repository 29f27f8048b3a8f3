//! What tracing costs: the default incast (4 x 100G into one port, 1500 B, 1 ms) with
//! tracing off, with the default signal set, and with every signal (all 20 stages of every
//! gress), the dump going to a sink so that only the model's side is measured.
//!
//! Run with `cargo bench --bench waves`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use t2_waves::TraceFilter;
use t2sim::chip::trace::DEFAULT_TRACE;
use t2sim::scenario::IncastScenario;
use t2sim::Chip;

fn run(s: &IncastScenario, filter: Option<&TraceFilter>) -> u64 {
    let mut b = s.build().expect("scenario builds");
    if let Some(f) = filter {
        let chip = b.net.node_mut::<Chip>(b.chip);
        chip.enable_trace(
            f.clone(),
            Box::new(std::io::BufWriter::new(std::io::sink())),
        )
        .expect("trace starts");
    }
    b.net.run_until(s.duration_cycles);
    let chip = b.net.node_mut::<Chip>(b.chip);
    chip.finish_trace(s.duration_cycles).expect("trace ends");
    chip.counters().received
}

fn tracing(c: &mut Criterion) {
    let s = IncastScenario {
        duration_cycles: 1_500_000,
        ..IncastScenario::default()
    };
    let default = TraceFilter::parse(DEFAULT_TRACE).expect("valid");
    let all = TraceFilter::all();
    let mut group = c.benchmark_group("tracing_incast_1ms");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("off", |b| b.iter(|| run(&s, None)));
    group.bench_function("default_signals", |b| b.iter(|| run(&s, Some(&default))));
    group.bench_function("all_signals", |b| b.iter(|| run(&s, Some(&all))));
    group.finish();
}

criterion_group!(benches, tracing);
criterion_main!(benches);
