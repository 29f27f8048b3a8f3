//! The TM on its own: queue carving, admission by reason, strict priority, DWRR shares,
//! min-rate guarantees, exact shapers, AFC latency and the egress queue metadata.

use t2_clock::{Clock, Cycle, LineRate};
use t2_tm::{Dequeued, Descriptor, QueueConfig, TmDrop, TmParams, TmPort, TrafficManager};

const G100: u64 = 100_000_000_000;
const G10: u64 = 10_000_000_000;

fn line(bps: u64) -> LineRate {
    LineRate::new(Clock::tofino2(), bps)
}

/// One 100G port (2 channels of 8) on pipe 0 with the given queues; the MAC is 10 cycles
/// after the dequeue.
fn one_port(params: TmParams, queues: Vec<QueueConfig>) -> TrafficManager {
    let port = TmPort {
        queues: Some(queues),
        ..TmPort::new(0, line(G100), 0, 2, 8)
    };
    TrafficManager::new(params, Clock::tofino2(), 1, &[port], 10).unwrap()
}

fn queues(n: usize, f: impl Fn(usize) -> QueueConfig) -> Vec<QueueConfig> {
    (0..n).map(f).collect()
}

fn desc(pkt: u32, qid: u8, frame_bytes: u32) -> Descriptor {
    Descriptor {
        pkt,
        frame_bytes,
        ingress_port: 0,
        egress_port: 0,
        qid,
        ingress_cos: 0,
    }
}

/// Runs pipe 0 from cycle `from` to before `until`, jumping from event to event. Before each
/// visited cycle's dequeue, every queue listed in `saturate` (queue, frame bytes) is topped
/// up to 64 packets. Returns every dequeue with its cycle.
fn run(
    tm: &mut TrafficManager,
    from: Cycle,
    until: Cycle,
    saturate: &[(u8, u32)],
) -> Vec<(Cycle, Dequeued)> {
    let mut out = Vec::new();
    let mut now = from;
    let mut pkt = 1_000_000;
    loop {
        for &(q, bytes) in saturate {
            while tm.queue_stats(0, q as usize).queued_packets < 64 {
                tm.enqueue(now, desc(pkt, q, bytes)).unwrap();
                pkt += 1;
            }
        }
        if let Some(d) = tm.dequeue(0, now) {
            out.push((now, d));
        }
        match tm.next_event(now) {
            Some(t) if t < until => now = t,
            _ => return out,
        }
    }
}

fn wire_bytes_by_queue(log: &[(Cycle, Dequeued)], n: usize) -> Vec<u64> {
    let mut bytes = vec![0; n];
    for (_, d) in log {
        bytes[d.queue as usize] += d.desc.wire_bytes();
    }
    bytes
}

#[test]
fn ports_get_their_channels_share_of_the_group_queues() {
    let params = TmParams::default();
    let tm = |ports: Vec<TmPort>| TrafficManager::new(params, Clock::tofino2(), 1, &ports, 10);
    let with = |channels, n| TmPort {
        queues: Some(vec![QueueConfig::default(); n]),
        ..TmPort::new(0, line(G100), 0, channels, 8)
    };
    // A 400G port may take all 128, a 100G port 32, a one-channel port the default 16.
    assert!(tm(vec![with(8, 128)]).is_ok());
    assert!(tm(vec![with(2, 32), with(2, 32), with(4, 64)]).is_ok());
    let e = tm(vec![with(2, 16), with(2, 33)]).unwrap_err();
    assert_eq!(e.what, "port 1");
    assert!(e.problem.contains("33 queues is outside 16..=32"), "{e}");
    let e = tm(vec![with(8, 129)]).unwrap_err();
    assert!(e.problem.contains("outside 16..=128"), "{e}");
    let e = tm(vec![with(8, 15)]).unwrap_err();
    assert!(e.problem.contains("15 queues"), "{e}");
    // The default carving: 16 per port.
    let t = tm(vec![TmPort::new(0, line(G100), 0, 1, 8)]).unwrap();
    assert_eq!(t.queue_count(0), 16);
    // Two ports claiming a whole group each in the same group do not fit.
    let e = tm(vec![with(8, 128), with(8, 16)]).unwrap_err();
    assert_eq!(e.what, "port group 0");
    // A bad queue is named.
    let mut bad = vec![QueueConfig::default(); 16];
    bad[5].priority = 8;
    let e = tm(vec![TmPort {
        queues: Some(bad),
        ..TmPort::new(0, line(G100), 0, 2, 8)
    }])
    .unwrap_err();
    assert_eq!(e.what, "port 0 queue 5");
    assert!(e.problem.contains("priority 8"), "{e}");
    // A port claiming more channels than its group has.
    let e = tm(vec![with(9, 16)]).unwrap_err();
    assert!(e.problem.contains("9 channels of a group of 8"), "{e}");
    // A port on a pipe the chip lacks.
    let e = tm(vec![TmPort::new(3, line(G100), 0, 2, 8)]).unwrap_err();
    assert_eq!(e.what, "port 0");
    assert!(e.problem.contains("pipe 3"), "{e}");
}

#[test]
fn qid_selects_queue_modulo_the_port_queues() {
    let mut t = one_port(TmParams::default(), vec![QueueConfig::default(); 16]);
    t.enqueue(0, desc(1, 17, 64)).unwrap();
    t.enqueue(0, desc(2, 3, 64)).unwrap();
    assert_eq!(t.queue_stats(0, 1).queued_packets, 1);
    assert_eq!(t.queue_stats(0, 3).queued_packets, 1);
    // Equal weights: the DWRR round starts at the lowest queue.
    assert_eq!(
        t.dequeue(0, 300).map(|d| (d.desc.pkt, d.queue)),
        Some((1, 1))
    );
}

#[test]
fn dynamic_threshold_lets_a_queue_grow_while_below_alpha_times_free() {
    for (alpha, admitted) in [(100, 500), (200, 667), (50, 334)] {
        let params = TmParams {
            buffer_cells: 1000,
            dynamic_threshold_alpha_percent: Some(alpha),
            ..TmParams::default()
        };
        let mut t = one_port(params, vec![QueueConfig::default(); 16]);
        // 64 B frames take one cell each. Depth d is admitted while d < alpha x (1000 - d).
        let mut ok = 0;
        for k in 0..1000 {
            if t.enqueue(0, desc(k, 0, 64)).is_ok() {
                ok += 1;
            }
        }
        assert_eq!(ok, admitted, "alpha {alpha}%");
        assert_eq!(t.drops(TmDrop::DynamicThreshold), 1000 - admitted as u64);
        // Another queue still gets in: it is empty.
        assert!(t.enqueue(0, desc(5000, 1, 64)).is_ok());
    }
    // With the threshold off, only the buffer limits.
    let params = TmParams {
        buffer_cells: 1000,
        dynamic_threshold_alpha_percent: None,
        ..TmParams::default()
    };
    let mut t = one_port(params, vec![QueueConfig::default(); 16]);
    let ok = (0..1200)
        .filter(|&k| t.enqueue(0, desc(k, 0, 64)).is_ok())
        .count();
    assert_eq!(ok, 1000);
    assert_eq!(t.drops(TmDrop::BufferFull), 200);
    assert_eq!(t.free_cells(), 0);
}

#[test]
fn static_limits_per_queue_override_the_default() {
    let params = TmParams {
        queue_limit_cells: Some(20),
        ..TmParams::default()
    };
    let mut qs = vec![QueueConfig::default(); 16];
    qs[1].limit_cells = Some(5);
    let mut t = one_port(params, qs);
    let admitted = |t: &mut TrafficManager, q: u8| {
        (0..30)
            .filter(|&k| t.enqueue(0, desc(k, q, 64)).is_ok())
            .count()
    };
    assert_eq!(admitted(&mut t, 0), 20);
    assert_eq!(admitted(&mut t, 1), 5);
    assert_eq!(t.drops(TmDrop::QueueLimit), 35);
}

#[test]
fn strict_priority_serves_a_higher_backlog_first() {
    let prio = [0u8, 7, 3, 7];
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            priority: *prio.get(i).unwrap_or(&0),
            ..QueueConfig::default()
        }),
    );
    for k in 0..10 {
        for q in 0..4u8 {
            t.enqueue(0, desc(100 * q as u32 + k, q, 200)).unwrap();
        }
    }
    let log = run(&mut t, 0, 1_000_000, &[]);
    let order: Vec<u8> = log.iter().map(|(_, d)| d.queue).collect();
    // The two priority-7 queues share (DWRR, equal weights) until both are empty, then 3, then 0.
    assert!(order[..20].iter().all(|&q| q == 1 || q == 3));
    assert!(order[20..30].iter().all(|&q| q == 2));
    assert!(order[30..].iter().all(|&q| q == 0));
    // A high-priority packet arriving later overtakes the low-priority backlog as soon as it
    // is ready (queue latency 300).
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            priority: if i == 1 { 5 } else { 0 },
            ..QueueConfig::default()
        }),
    );
    for k in 0..20 {
        t.enqueue(0, desc(k, 0, 1480)).unwrap();
    }
    let first = run(&mut t, 0, 1000, &[]);
    assert_eq!(first.last().unwrap().0, 840); // 300, 480, 660, 840 (one per 180 cycles)
    t.enqueue(1000, desc(99, 1, 1480)).unwrap();
    let rest = run(&mut t, 1000, 2000, &[]);
    let got: Vec<(Cycle, u32)> = rest.iter().map(|(c, d)| (*c, d.desc.pkt)).collect();
    // Packet 99 is ready at 1300 and goes next, when the MAC allows (1380).
    assert_eq!(
        got,
        vec![
            (1020, 4),
            (1200, 5),
            (1380, 99),
            (1560, 6),
            (1740, 7),
            (1920, 8)
        ]
    );
}

#[test]
fn dwrr_shares_bytes_by_weight_within_one_percent() {
    // Three queues of one priority with different weights and frame sizes, all saturated.
    let weights = [1u16, 3, 6];
    let frames = [9000u32, 64, 1500];
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            weight: *weights.get(i).unwrap_or(&1),
            ..QueueConfig::default()
        }),
    );
    let saturate: Vec<(u8, u32)> = (0..3).map(|q| (q as u8, frames[q])).collect();
    let log = run(&mut t, 0, 3_000_000, &saturate);
    let bytes = wire_bytes_by_queue(&log, 3);
    let total: u64 = bytes.iter().sum();
    let weight_sum: u64 = weights.iter().map(|&w| w as u64).sum();
    for q in 0..3 {
        let want = total * weights[q] as u64;
        let got = bytes[q] * weight_sum;
        // |share - w/W| < 1% of w/W
        assert!(
            got.abs_diff(want) * 100 < want,
            "queue {q}: {} of {total} bytes, weight {} of {weight_sum}",
            bytes[q],
            weights[q]
        );
    }
    // The port stays busy: 3 M cycles at 100G minus the first 300 is 37.46 MB.
    assert!(total * 8 * 1_500_000_000 >= (3_000_000 - 300 - 2000) * G100);
}

#[test]
fn weight_zero_queues_only_get_what_weighted_ones_leave() {
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            weight: if i == 0 { 0 } else { 1 },
            ..QueueConfig::default()
        }),
    );
    for k in 0..5 {
        t.enqueue(0, desc(k, 0, 1480)).unwrap();
        t.enqueue(0, desc(10 + k, 1, 1480)).unwrap();
    }
    let order: Vec<u8> = run(&mut t, 0, 100_000, &[])
        .iter()
        .map(|(_, d)| d.queue)
        .collect();
    assert_eq!(order, vec![1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
}

#[test]
fn max_rate_shaper_paces_exactly() {
    // 1480 B frames (12,000 wire bits) at 10 Gb/s: one every 1800 cycles, exactly.
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            max_rate_bps: (i == 0).then_some(G10),
            ..QueueConfig::default()
        }),
    );
    let log = run(&mut t, 0, 1_000_000, &[(0, 1480)]);
    assert_eq!(log.len(), 556); // 300 + 555 x 1800 = 999,300
    for (k, (at, _)) in log.iter().enumerate() {
        assert_eq!(*at, 300 + 1800 * k as Cycle);
    }
    // 64 B frames (672 bits) at 10 Gb/s take 100.8 cycles: the k-th leaves in the cycle in
    // which 300 + 100.8 k falls, so no rate is lost to whole cycles.
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            max_rate_bps: (i == 0).then_some(G10),
            ..QueueConfig::default()
        }),
    );
    let log = run(&mut t, 0, 200_000, &[(0, 64)]);
    for (k, (at, _)) in log.iter().enumerate() {
        assert_eq!(*at, 300 + (1008 * k as Cycle) / 10, "frame {k}");
    }
    assert_eq!(log.len(), 1982); // (200,000 - 300) / 100.8 = 1981.1 -> frames 0..=1981
                                 // A shaped high-priority queue leaves the rest of the line to a lower one.
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            priority: if i == 0 { 7 } else { 0 },
            max_rate_bps: (i == 0).then_some(2 * G10),
            ..QueueConfig::default()
        }),
    );
    let log = run(&mut t, 0, 1_800_300, &[(0, 1480), (1, 1480)]);
    let bytes = wire_bytes_by_queue(&log, 2);
    // 1.8 M cycles = 1.2 ms: 20G gives 3 MB = 2000 frames (one every 900 cycles), and the
    // line's 10,000 frames leave 8000 to queue 1.
    assert_eq!(bytes[0] / 1500, 2000);
    assert_eq!(bytes[1] / 1500, 8000);
}

#[test]
fn min_rate_guarantee_beats_priority_up_to_the_guarantee() {
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            priority: if i == 1 { 7 } else { 0 },
            min_rate_bps: (i == 0).then_some(2 * G10),
            ..QueueConfig::default()
        }),
    );
    let log = run(&mut t, 0, 1_800_300, &[(0, 1480), (1, 1480)]);
    let bytes = wire_bytes_by_queue(&log, 2);
    assert_eq!(bytes[0] / 1500, 2000);
    assert_eq!(bytes[1] / 1500, 8000);
}

#[test]
fn afc_pauses_and_resumes_after_its_latency() {
    let params = TmParams::default();
    assert_eq!(params.afc_latency_cycles, 100);
    let mut t = one_port(params, vec![QueueConfig::default(); 16]);
    for k in 0..20 {
        t.enqueue(0, desc(k, 0, 1480)).unwrap();
        t.enqueue(0, desc(100 + k, 1, 1480)).unwrap();
    }
    // Dequeues happen every 180 cycles from 300, alternating queues 0 and 1.
    let before = run(&mut t, 0, 600, &[]);
    let got: Vec<(Cycle, u8)> = before.iter().map(|(c, d)| (*c, d.queue)).collect();
    assert_eq!(got, vec![(300, 0), (480, 1)]);
    // A pause of queue 0 asked for in cycle 600 holds from cycle 700: queue 0's turn at 660
    // still comes, and then queue 0 never again while paused.
    t.afc(600, 0, 0, true).unwrap();
    assert!(!t.queue_stats(0, 0).paused);
    let paused = run(&mut t, 600, 5000, &[]);
    assert!(t.queue_stats(0, 0).paused);
    assert_eq!((paused[0].0, paused[0].1.queue), (660, 0));
    assert!(paused[1..].iter().all(|(_, d)| d.queue == 1));
    // Queue 1 drains alone: its 19 other packets, one per 180 cycles.
    assert_eq!(paused.len(), 20);
    assert_eq!(paused[19].0, 660 + 19 * 180);
    // Resume asked in 5000: the first queue-0 packet leaves in 5100, not before.
    t.afc(5000, 0, 16, false).unwrap(); // qid 16 is queue 0 of 16
    assert_eq!(t.next_event(5000), Some(5100));
    assert_eq!(t.dequeue(0, 5099), None);
    assert_eq!(t.dequeue(0, 5100).map(|d| d.desc.pkt), Some(2));
    // Pausing the queue whose packet is already dequeued does not recall that packet: the
    // dequeue stands, and the next one waits for the resume.
    let mut t = one_port(TmParams::default(), vec![QueueConfig::default(); 16]);
    t.enqueue(0, desc(1, 0, 1480)).unwrap();
    t.enqueue(0, desc(2, 0, 1480)).unwrap();
    t.afc(201, 0, 0, true).unwrap();
    assert_eq!(t.dequeue(0, 300).map(|d| d.desc.pkt), Some(1));
    // The pause taking effect is an event; after it nothing is due.
    assert_eq!(t.next_event(300), Some(301));
    assert_eq!(t.dequeue(0, 301), None);
    assert_eq!(t.next_event(301), None);
    assert_eq!(t.queue_stats(0, 0).queued_packets, 1);
    assert!(t.afc(0, 1, 0, true).unwrap_err().what.contains("port 1"));
}

#[test]
fn dequeues_carry_exact_queue_metadata() {
    let mut t = one_port(TmParams::default(), vec![QueueConfig::default(); 16]);
    for k in 0..3 {
        t.enqueue(k, desc(k as u32, 0, 1480)).unwrap(); // 9 cells each
    }
    t.enqueue(2, desc(9, 1, 64)).unwrap();
    let log = run(&mut t, 3, 10_000, &[]);
    let meta: Vec<(Cycle, u32, u8, u32, u32, Cycle, Cycle)> = log
        .iter()
        .map(|(c, d)| {
            (
                *c,
                d.desc.pkt,
                d.queue,
                d.enq_qdepth,
                d.deq_qdepth,
                d.enq_tstamp,
                d.deq_timedelta,
            )
        })
        .collect();
    assert_eq!(
        meta,
        vec![
            (300, 0, 0, 0, 18, 0, 300),
            (480, 9, 1, 0, 0, 2, 478),
            // The 64 B frame is on the line until 500.08, so the next may go at 490.
            (490, 1, 0, 9, 9, 1, 489),
            (670, 2, 0, 18, 0, 2, 668),
        ]
    );
}

#[test]
fn ghost_feed_reports_changed_queues_round_robin_after_its_latency() {
    let params = TmParams::default();
    assert_eq!(
        (params.ghost_updates_per_cycle, params.ghost_latency_cycles),
        (1, 100)
    );
    let mut t = one_port(params, vec![QueueConfig::default(); 16]);
    for q in [2u8, 0, 5] {
        t.enqueue(10, desc(q as u32, q, 1480)).unwrap(); // 9 cells each
    }
    // Sent in cycles 10, 11, 12 in queue order (round robin from slot 0); seen 100 later.
    assert_eq!(t.ghost_qlength(109, 0, 0), 0);
    assert_eq!(t.ghost_qlength(110, 0, 0), 9);
    assert_eq!(t.ghost_qlength(110, 0, 2), 0);
    assert_eq!(t.ghost_qlength(111, 0, 2), 9);
    assert_eq!(t.ghost_qlength(111, 0, 5), 0);
    assert_eq!(t.ghost_qlength(112, 0, 5), 9);
    assert_eq!(t.ghost_updates_sent(), 3);
    // The round robin goes on after queue 5: queue 7 before queue 1. Two changes of one
    // queue before it is reported make one update with the latest depth.
    t.enqueue(200, desc(10, 1, 1480)).unwrap();
    t.enqueue(200, desc(11, 7, 1480)).unwrap();
    t.enqueue(200, desc(12, 7, 64)).unwrap();
    assert_eq!(t.ghost_qlength(300, 0, 7), 10);
    assert_eq!(t.ghost_qlength(300, 0, 1), 0);
    assert_eq!(t.ghost_qlength(301, 0, 1), 9);
    assert_eq!(t.ghost_updates_sent(), 5);
    // Dequeues are changes too: queue 0's packet, first in the DWRR round, leaves at 310.
    assert_eq!(t.dequeue(0, 310).map(|d| d.queue), Some(0));
    assert_eq!(t.ghost_qlength(410, 0, 0), 0);
    assert_eq!(t.ghost_qlength(410, 0, 1), 9);

    // Two per cycle: queues 0 and 2 in cycle 10, queue 5 in cycle 11.
    let mut t = one_port(
        TmParams {
            ghost_updates_per_cycle: 2,
            ..TmParams::default()
        },
        vec![QueueConfig::default(); 16],
    );
    for q in [2u8, 0, 5] {
        t.enqueue(10, desc(q as u32, q, 1480)).unwrap();
    }
    assert_eq!(t.ghost_qlength(110, 0, 2), 9);
    assert_eq!(t.ghost_qlength(110, 0, 5), 0);
    assert_eq!(t.ghost_qlength(111, 0, 5), 9);

    // Off: nothing is sent.
    let mut t = one_port(
        TmParams {
            ghost_updates_per_cycle: 0,
            ..TmParams::default()
        },
        vec![QueueConfig::default(); 16],
    );
    t.enqueue(10, desc(1, 0, 1480)).unwrap();
    assert_eq!(t.ghost_qlength(1000, 0, 0), 0);
    assert_eq!(t.ghost_updates_sent(), 0);
}

#[test]
fn ghost_qlength_saturates_at_18_bits() {
    let mut t = one_port(
        TmParams {
            dynamic_threshold_alpha_percent: None,
            ..TmParams::default()
        },
        vec![QueueConfig::default(); 16],
    );
    for k in 0..5000 {
        t.enqueue(0, desc(k, 0, 9216)).unwrap(); // 53 cells each: 265,000 cells
    }
    assert_eq!(t.queue_stats(0, 0).depth_cells, 265_000);
    assert_eq!(t.ghost_qlength(100, 0, 0), (1 << 18) - 1);
}

#[test]
fn kept_ghost_deliveries_come_in_their_cycles_with_alternating_ping_pong() {
    let mut t = one_port(TmParams::default(), vec![QueueConfig::default(); 16]);
    t.keep_ghost_delivered(true);
    assert_eq!(t.ghost_next_delivery(), None);
    t.enqueue(10, desc(0, 3, 1480)).unwrap();
    t.enqueue(10, desc(1, 1, 1480)).unwrap();
    // Queues 1 and 3 changed in 10: sent in 10 and 11, delivered in 110 and 111.
    assert_eq!(t.ghost_next_delivery(), Some(110));
    let mut out = Vec::new();
    t.take_ghost_delivered(109, &mut out);
    assert!(out.is_empty());
    assert_eq!(t.ghost_next_delivery(), Some(110));
    t.take_ghost_delivered(110, &mut out);
    let brief = |out: &[(Cycle, t2_tm::ghost::GhostUpdate)]| {
        out.iter()
            .map(|(c, u)| (*c, u.queue.value(), u.qlength.value(), u.ping_pong))
            .collect::<Vec<_>>()
    };
    assert_eq!(brief(&out), [(110, 1, 9, false)]);
    assert_eq!(t.ghost_next_delivery(), Some(111));
    // Queue 1 changes again in 200: its second update carries ping_pong 1.
    t.enqueue(200, desc(2, 1, 64)).unwrap();
    out.clear();
    t.take_ghost_delivered(300, &mut out);
    assert_eq!(brief(&out), [(111, 3, 9, false), (300, 1, 10, true)]);
    assert_eq!(t.ghost_next_delivery(), None);
}

fn from(ingress_port: u16, cos: u8, d: Descriptor) -> Descriptor {
    Descriptor {
        ingress_port,
        ingress_cos: cos,
        ..d
    }
}

#[test]
fn lossless_groups_ask_for_xoff_and_xon_and_drop_only_past_headroom() {
    let params = TmParams {
        pfc_lossless_classes: 1 << 3,
        pfc_xoff_cells: 20,
        pfc_xon_cells: 10,
        pfc_headroom_cells: 9,
        queue_limit_cells: Some(9),
        ..TmParams::default()
    };
    let mut t = one_port(params, vec![QueueConfig::default(); 16]);
    // 1480 B frames are 9 cells. Class 3 from port 0 is lossless: the queue limit of 9 does
    // not apply; the group passes XOFF (20) with the third frame, and the fourth would pass
    // XOFF + headroom (29).
    for k in 0..3 {
        t.enqueue(5 + k, from(0, 3, desc(k as u32, 0, 1480)))
            .unwrap();
    }
    assert_eq!(
        t.pop_pfc_event(8),
        Some(t2_tm::PfcEvent {
            at: 7,
            ingress_port: 0,
            class: 3,
            xoff: true
        })
    );
    assert_eq!(t.pop_pfc_event(8), None);
    assert_eq!(
        t.enqueue(8, from(0, 3, desc(3, 0, 1480))),
        Err(TmDrop::PfcHeadroom)
    );
    // Another class of the same port is lossy: the queue limit applies.
    assert_eq!(t.enqueue(8, from(0, 2, desc(4, 1, 1480))), Ok(()));
    assert_eq!(
        t.enqueue(8, from(0, 2, desc(5, 1, 1480))),
        Err(TmDrop::QueueLimit)
    );
    assert_eq!(t.priority_group_cells(0, 3), 27);
    assert_eq!(t.priority_group_cells(0, 2), 9);
    // Draining: 18 cells is still above XON (10); 9 is not.
    let log = run(&mut t, 9, 10_000, &[]);
    let class3: Vec<Cycle> = log
        .iter()
        .filter(|(_, d)| d.desc.ingress_cos == 3)
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(class3.len(), 3);
    assert_eq!(
        t.pop_pfc_event(10_000),
        Some(t2_tm::PfcEvent {
            at: class3[1],
            ingress_port: 0,
            class: 3,
            xoff: false
        })
    );
    assert_eq!(t.pop_pfc_event(10_000), None);
    assert_eq!(t.priority_group_cells(0, 3), 0);
}

#[test]
fn a_received_pfc_frame_holds_its_class_queues_for_its_quanta() {
    let mut t = one_port(
        TmParams::default(),
        queues(16, |i| QueueConfig {
            pfc_priority: (i == 2).then_some(3),
            ..QueueConfig::default()
        }),
    );
    t.enqueue(0, desc(1, 2, 1480)).unwrap();
    t.enqueue(0, desc(2, 2, 1480)).unwrap();
    // 100 quanta of 512 bit times at 100G: 51,200 bits = 768 cycles exactly, from 200 + 1.
    t.pfc_pause(200, 0, 3, 100).unwrap();
    t.pfc_pause(200, 0, 4, 100).unwrap(); // no queue of class 4: nothing held
    assert_eq!(t.next_event(200), Some(201));
    assert_eq!(t.dequeue(0, 201), None);
    assert_eq!(t.next_event(201), Some(969));
    assert_eq!(t.dequeue(0, 968), None);
    assert_eq!(t.dequeue(0, 969).map(|d| d.desc.pkt), Some(1));
    // A pause with 0 quanta releases at once (from the next cycle).
    t.pfc_pause(1000, 0, 3, 0xffff).unwrap();
    t.pfc_pause(1100, 0, 3, 0).unwrap();
    assert_eq!(t.next_event(1100), Some(1101));
    assert_eq!(t.dequeue(0, 1100), None);
    assert_eq!(t.dequeue(0, 1101), None);
    // Released; the MAC has packet 1 until 1159 (969 + 10 + 180), so 1149 is the first turn.
    assert_eq!(t.next_event(1101), Some(1149));
    assert_eq!(t.dequeue(0, 1149).map(|d| d.desc.pkt), Some(2));
    let e = t.pfc_pause(0, 0, 8, 1).unwrap_err();
    assert!(e.problem.contains("class 8"), "{e}");
}

/// A one-port TM whose class-3 group from port 0 passed XOFF (20 cells) with its third
/// 1480-byte frame in cycle 7, pausing for 400 quanta, with `refresh_percent`; queue 0 is
/// paused by AFC from cycle 100 (so the group stays over its threshold and nothing but the
/// refreshes is left to happen), and the first XOFF is popped.
fn over_xoff(refresh_percent: u32) -> TrafficManager {
    let params = TmParams {
        pfc_lossless_classes: 1 << 3,
        pfc_xoff_cells: 20,
        pfc_xon_cells: 10,
        pfc_headroom_cells: 9,
        pfc_pause_quanta: 400,
        pfc_refresh_percent: refresh_percent,
        ..TmParams::default()
    };
    let mut t = one_port(params, vec![QueueConfig::default(); 16]);
    t.afc(0, 0, 0, true).unwrap();
    for k in 0..3 {
        t.enqueue(5 + k, from(0, 3, desc(k as u32, 0, 1480)))
            .unwrap();
    }
    let first = t.pop_pfc_event(7).unwrap();
    assert!(first.xoff && first.at == 7, "{first:?}");
    assert!(t.dequeue(0, 100).is_none());
    t
}

#[test]
fn an_xoff_is_refreshed_every_half_pause_until_the_group_asks_for_xon() {
    let mut t = over_xoff(50);
    let xoff = |at| {
        Some(t2_tm::PfcEvent {
            at,
            ingress_port: 0,
            class: 3,
            xoff: true,
        })
    };
    // 400 quanta of 512 bit times at 100 Gb/s are 2,048 ns, 3,072 cycles at 1.5 GHz: the
    // XOFF is sent again every 1,536 cycles, and the TM's next event says when.
    assert_eq!(t.next_event(100), Some(1_543));
    assert_eq!(t.pop_pfc_event(1_542), None);
    assert_eq!(t.pop_pfc_event(1_543), xoff(1_543));
    assert_eq!(t.pop_pfc_event(1_543), None);
    assert_eq!(t.next_event(1_543), Some(3_079));
    assert_eq!(t.pop_pfc_event(3_079), xoff(3_079));
    // Once the queue drains below XON the refreshes stop.
    t.afc(3_080, 0, 0, false).unwrap();
    let log = run(&mut t, 3_080, 20_000, &[]);
    assert_eq!(log.len(), 3);
    let xon = t.pop_pfc_event(20_000).unwrap();
    assert!(!xon.xoff);
    assert_eq!(xon.at, log[1].0);
    assert_eq!(t.pop_pfc_event(20_000), None);
    assert_eq!(t.next_event(20_000), None);
}

#[test]
fn a_refresh_of_zero_percent_sends_one_xoff_per_episode() {
    let mut t = over_xoff(0);
    assert_eq!(t.next_event(100), None);
    assert_eq!(t.pop_pfc_event(100_000), None);
}
