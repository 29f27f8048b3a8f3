//! TM speed: descriptors enqueued and dequeued per wall second, with the queues kept
//! backlogged so every dequeue chooses among several queues.
//!
//! Run with `cargo bench -p t2-tm`. One iteration moves 20,000 packets through four 100G
//! ports of one pipe, jumping from event to event as the chip does.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use t2_clock::{Clock, LineRate};
use t2_tm::{Descriptor, QueueConfig, TmParams, TmPort, TrafficManager};

const PACKETS: u64 = 20_000;

fn build(queues: &[QueueConfig], params: TmParams) -> TrafficManager {
    let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
    let ports: Vec<TmPort> = (0..4)
        .map(|i| TmPort {
            queues: Some(queues.to_vec()),
            ..TmPort::new(0, line, i / 4, 2, 8)
        })
        .collect();
    TrafficManager::new(params, Clock::tofino2(), 1, &ports, 200).unwrap()
}

/// Moves `PACKETS` packets through, keeping each port's `active` queues 8 packets deep.
fn run(mut tm: TrafficManager, active: u8) -> u64 {
    let mut now = 0;
    let mut pkt = 0;
    let mut sent = 0;
    while sent < PACKETS {
        for port in 0..4u16 {
            for q in 0..active {
                while tm.queue_stats(port as usize, q as usize).queued_packets < 8 {
                    let desc = Descriptor {
                        pkt,
                        frame_bytes: 64 + (pkt % 1400),
                        ingress_port: 0,
                        egress_port: port,
                        qid: q,
                        ingress_cos: 0,
                    };
                    tm.enqueue(now, desc).expect("the buffer is large");
                    pkt += 1;
                }
            }
        }
        if let Some(d) = tm.dequeue(0, now) {
            black_box(d);
            sent += 1;
        }
        now = tm.next_event(now).expect("backlogged");
    }
    now
}

fn tm(c: &mut Criterion) {
    let mut group = c.benchmark_group("tm_enqueue_dequeue");
    group.throughput(Throughput::Elements(PACKETS));
    let fifo = vec![QueueConfig::default(); 16];
    group.bench_function(BenchmarkId::from_parameter("1_queue_per_port"), |b| {
        b.iter(|| run(build(&fifo, TmParams::default()), 1))
    });
    let mixed: Vec<QueueConfig> = (0..16)
        .map(|i| QueueConfig {
            priority: (i % 4) as u8,
            weight: 1 + i as u16 * 60,
            max_rate_bps: (i % 4 == 3).then_some(5_000_000_000),
            min_rate_bps: (i % 5 == 0).then_some(1_000_000_000),
            ..QueueConfig::default()
        })
        .collect();
    group.bench_function(
        BenchmarkId::from_parameter("16_queues_sp_dwrr_shapers"),
        |b| b.iter(|| run(build(&mixed, TmParams::default()), 16)),
    );
    // The same without the ghost feed, to show what reporting depths every cycle costs.
    let no_ghost = TmParams {
        ghost_updates_per_cycle: 0,
        ..TmParams::default()
    };
    group.bench_function(
        BenchmarkId::from_parameter("16_queues_sp_dwrr_shapers_no_ghost"),
        |b| b.iter(|| run(build(&mixed, no_ghost), 16)),
    );
    group.finish();
}

criterion_group!(benches, tm);
criterion_main!(benches);
