//! Properties of the TM over generated queue set-ups and traffic: on every cycle packets are
//! conserved (enqueued = dequeued + dropped + held) and cells add up within the buffer, split
//! exactly between the application pools and the priority groups' minimums; a paused queue
//! never dequeues; and jumping from event to event gives exactly the dequeues
//! of stepping through every cycle.

use proptest::prelude::*;
use std::collections::VecDeque;
use t2_clock::{Clock, Cycle, LineRate};
use t2_tm::{Descriptor, QueueConfig, TmDrop, TmParams, TmPort, TrafficManager};

#[derive(Clone, Copy, Debug)]
enum Op {
    Enqueue {
        port: u16,
        qid: u8,
        cos: u8,
        bytes: u32,
    },
    Afc {
        port: usize,
        qid: u8,
        pause: bool,
    },
    Pfc {
        port: usize,
        class: u8,
        quanta: u16,
    },
}

#[derive(Clone, Debug)]
struct Setup {
    params: TmParams,
    /// Port 1's pipe (port 0 is on pipe 0); the chip has 2 pipes.
    second_pipe: usize,
    queues: [Vec<QueueConfig>; 2],
    /// (cycle, operation), in cycle order.
    ops: Vec<(Cycle, Op)>,
}

const END: Cycle = 4_000;

fn queue_config() -> impl Strategy<Value = QueueConfig> {
    (
        0u8..8,
        prop_oneof![Just(0u16), 1u16..=1023],
        prop::option::weighted(
            0.3,
            prop::sample::select(vec![5_000_000_000u64, 20_000_000_000]),
        ),
        prop::option::weighted(
            0.3,
            prop::sample::select(vec![10_000_000_000u64, 50_000_000_000]),
        ),
        0u32..3000,
        prop::option::weighted(0.3, 1u32..60),
        prop::option::weighted(0.5, 0u8..4),
        0u8..4,
    )
        .prop_map(
            |(priority, weight, min, max, burst_bytes, limit_cells, pfc_priority, app_pool)| {
                QueueConfig {
                    app_pool,
                    pfc_priority,
                    priority,
                    weight,
                    min_rate_bps: min.filter(|&m| max.is_none_or(|x| m <= x)),
                    max_rate_bps: max,
                    burst_bytes,
                    limit_cells,
                }
            },
        )
}

fn setup() -> impl Strategy<Value = Setup> {
    let op = prop_oneof![
        8 => (0u16..2, any::<u8>(), 0u8..4, prop_oneof![Just(64u32), 65u32..2000, Just(9216)])
            .prop_map(|(port, qid, cos, bytes)| Op::Enqueue { port, qid, cos, bytes }),
        1 => (0usize..2, 0u8..4, any::<bool>())
            .prop_map(|(port, qid, pause)| Op::Afc { port, qid, pause }),
        1 => (0usize..2, 0u8..4, prop_oneof![Just(0u16), 1u16..400])
            .prop_map(|(port, class, quanta)| Op::Pfc { port, class, quanta }),
    ];
    (
        50u32..600,
        prop::option::of(prop::sample::select(vec![50u32, 100, 300])),
        1u32..200,
        1u32..400,
        0usize..2,
        prop::collection::vec(queue_config(), 16..=32),
        prop::collection::vec(queue_config(), 16..=16),
        prop::collection::vec((0..END, op), 0..400),
        (
            any::<u8>(),
            1u32..40,
            0u32..40,
            prop::option::of(1u32..=1000),
        ),
        (
            prop::option::of([1u32..=10, 1u32..=10, 1u32..=10, 1u32..=10]),
            [0u32..30, 0u32..30, 0u32..30, 0u32..30],
        ),
    )
        .prop_map(
            |(
                buffer,
                alpha,
                afc_latency,
                queue_latency,
                second_pipe,
                mut q0,
                mut q1,
                mut ops,
                pfc,
                pools,
            )| {
                let (lossless, xoff, headroom, dynamic) = pfc;
                ops.sort_by_key(|(c, _)| *c);
                // Pools take at most 4/5 of the buffer; the minimums of the classes in use
                // (0..4) are halved until both ports' fit in what is left.
                let (weights, mut mins) = pools;
                let app_pool_cells = weights.map(|w| w.map(|w| buffer * w / 50));
                let room = buffer - app_pool_cells.map_or(1, |p| p.iter().sum());
                while 2 * mins.iter().sum::<u32>() > room {
                    mins = mins.map(|m| m / 2);
                }
                let mut ppg_min_cells = [0; 8];
                ppg_min_cells[..4].copy_from_slice(&mins);
                if app_pool_cells.is_none() {
                    // Only pool 0 has cells.
                    for q in q0.iter_mut().chain(q1.iter_mut()) {
                        q.app_pool = 0;
                    }
                }
                Setup {
                    params: TmParams {
                        buffer_cells: buffer,
                        dynamic_threshold_alpha_percent: alpha,
                        pfc_lossless_classes: lossless,
                        pfc_xoff_cells: xoff,
                        pfc_xon_cells: xoff / 2,
                        pfc_headroom_cells: headroom,
                        pfc_dynamic_per_mille: dynamic,
                        afc_latency_cycles: afc_latency,
                        queue_latency_cycles: queue_latency,
                        app_pool_cells,
                        ppg_min_cells,
                        ..TmParams::default()
                    },
                    second_pipe,
                    queues: [q0, q1],
                    ops,
                }
            },
        )
}

fn build(s: &Setup) -> TrafficManager {
    let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
    let ports: Vec<TmPort> = (0..2)
        .map(|i| TmPort {
            queues: Some(s.queues[i].clone()),
            ..TmPort::new([0, s.second_pipe][i], line, i, 2, 8)
        })
        .collect();
    TrafficManager::new(s.params, Clock::tofino2(), 2, &ports, 200).unwrap()
}

/// A dequeue: (cycle, pipe, packet, port, queue).
type Log = Vec<(Cycle, usize, u32, u16, u8)>;

/// Applies the operations of cycle `now` from `ops[*next..]`, counting enqueues.
fn apply_ops(tm: &mut TrafficManager, s: &Setup, next: &mut usize, now: Cycle, offered: &mut u64) {
    while let Some(&(at, op)) = s.ops.get(*next) {
        if at != now {
            break;
        }
        *next += 1;
        match op {
            Op::Enqueue {
                port,
                qid,
                cos,
                bytes,
            } => {
                *offered += 1;
                let _ = tm.enqueue(
                    now,
                    Descriptor {
                        pkt: *offered as u32,
                        frame_bytes: bytes,
                        ingress_port: (*offered % 2) as u16,
                        egress_port: port,
                        qid,
                        ingress_cos: cos,
                    },
                );
            }
            Op::Afc { port, qid, pause } => tm.afc(now, port, qid, pause).unwrap(),
            Op::Pfc {
                port,
                class,
                quanta,
            } => tm.pfc_pause(now, port, class, quanta).unwrap(),
        }
    }
}

fn dequeue_all(tm: &mut TrafficManager, now: Cycle, log: &mut Log) {
    for pipe in 0..2 {
        if let Some(d) = tm.dequeue(pipe, now) {
            log.push((now, pipe, d.desc.pkt, d.desc.egress_port, d.queue));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn conserved_within_the_buffer_and_paused_queues_stay_put(s in setup()) {
        let mut tm = build(&s);
        let mut log = Log::new();
        let mut next = 0;
        let mut offered = 0;
        // Our own record of the pause bits: (takes effect, port, queue, pause).
        let mut requests: VecDeque<(Cycle, usize, usize, bool)> = VecDeque::new();
        let mut paused = [[false; 128]; 2];
        // PFC holds: the cycle each (port, class) is held until, and requests to apply.
        let mut pfc_requests: VecDeque<(Cycle, usize, u8, Cycle)> = VecDeque::new();
        let mut held = [[0 as Cycle; 8]; 2];
        for now in 0..END {
            for &(_, op) in s.ops[next..].iter().take_while(|(at, _)| *at == now) {
                if let Op::Afc { port, qid, pause } = op {
                    let q = qid as usize % tm.queue_count(port);
                    requests.push_back((now + s.params.afc_latency_cycles as Cycle, port, q, pause));
                }
                if let Op::Pfc { port, class, quanta } = op {
                    // 512 bit times at 100G are 7.68 cycles.
                    let hold = (quanta as Cycle * 768).div_ceil(100);
                    pfc_requests.push_back((now + 1, port, class, now + 1 + hold));
                }
            }
            apply_ops(&mut tm, &s, &mut next, now, &mut offered);
            while requests.front().is_some_and(|r| r.0 <= now) {
                let (_, port, q, pause) = requests.pop_front().unwrap();
                paused[port][q] = pause;
            }
            while pfc_requests.front().is_some_and(|r| r.0 <= now) {
                let (_, port, class, until) = pfc_requests.pop_front().unwrap();
                held[port][class as usize] = until;
            }
            // Which queues may send this cycle, before any dequeue changes them.
            tm.apply_due_afc(now);
            let may: Vec<Vec<(bool, bool)>> = (0..2)
                .map(|p| (0..tm.queue_count(p)).map(|q| tm.queue_may_send(p, q, now)).collect())
                .collect();
            let before = log.len();
            dequeue_all(&mut tm, now, &mut log);
            for &(_, _, _, port, q) in &log[before..] {
                // Guarantees first, then strict priority: nothing the scheduler passed over
                // had a better claim.
                let (port, q) = (port as usize, q as usize);
                let prio = |i: usize| s.queues[port][i].priority;
                prop_assert!(may[port][q].0, "cycle {now}: port {port} queue {q} could not send");
                let guaranteed = may[port].iter().any(|m| m.1);
                prop_assert_eq!(may[port][q].1, guaranteed, "cycle {}: guarantee order", now);
                let best = (0..may[port].len())
                    .filter(|&i| may[port][i].0 && may[port][i].1 == guaranteed)
                    .map(prio)
                    .max();
                prop_assert_eq!(Some(prio(q)), best, "cycle {}: port {} queue {}", now, port, q);
            }
            for &(_, _, _, port, q) in &log[before..] {
                let (port, q) = (port as usize, q as usize);
                prop_assert!(!paused[port][q], "cycle {now}: paused port {port} queue {q} dequeued");
                if let Some(class) = s.queues[port][q].pfc_priority {
                    prop_assert!(held[port][class as usize] <= now, "cycle {now}: PFC-held port {port} queue {q} dequeued");
                }
            }
            let dropped: u64 = TmDrop::ALL.iter().map(|&r| tm.drops(r)).sum();
            prop_assert_eq!(offered, log.len() as u64 + dropped + tm.queued_packets() as u64, "cycle {}", now);
            let mut held_cells = 0;
            for (port, port_paused) in paused.iter().enumerate() {
                let queue_cells: u32 = (0..tm.queue_count(port)).map(|q| {
                    let st = tm.queue_stats(port, q);
                    prop_assert_eq!(st.paused, port_paused[q]);
                    let limit = s.queues[port][q].limit_cells;
                    // Lossless traffic is not bound by the egress limits.
                    let lossy = s.params.pfc_lossless_classes & 0x0f == 0;
                    prop_assert!(!lossy || limit.is_none_or(|l| st.depth_cells <= l));
                    Ok(st.depth_cells)
                }).sum::<Result<u32, TestCaseError>>()?;
                prop_assert_eq!(queue_cells, tm.port_stats(port).depth_cells);
                held_cells += queue_cells;
            }
            let group_cells: u32 = (0..2)
                .flat_map(|p| (0..8).map(move |c| (p, c)))
                .map(|(p, c)| tm.priority_group_cells(p, c))
                .sum();
            prop_assert_eq!(group_cells, held_cells);
            // Every held cell is charged once: to a pool or to a group's minimum, which it
            // never passes; lossy traffic never takes a pool past its size.
            let min_cells: u32 = (0..2)
                .flat_map(|p| (0..8).map(move |c| (p, c)))
                .map(|(p, c)| {
                    let m = tm.priority_group_min_cells(p, c);
                    prop_assert!(m <= s.params.ppg_min_cells[c]);
                    Ok(m)
                })
                .sum::<Result<u32, TestCaseError>>()?;
            // The dynamic threshold's headroom count stays within the headroom and within
            // the group's cells beyond its minimum.
            for (p, c) in (0..2).flat_map(|p| (0..8).map(move |c| (p, c))) {
                let h = tm.priority_group_headroom_cells(p, c);
                prop_assert!(h <= s.params.pfc_headroom_cells);
                prop_assert!(
                    h <= tm.priority_group_cells(p, c) - tm.priority_group_min_cells(p, c)
                );
            }
            let pool_cells: u32 = (0..4).map(|p| tm.pool_stats(p).used_cells).sum();
            prop_assert_eq!(pool_cells + min_cells, held_cells, "cycle {}", now);
            if s.params.pfc_lossless_classes & 0x0f == 0 {
                for p in 0..4 {
                    let st = tm.pool_stats(p);
                    prop_assert!(st.used_cells <= st.size_cells, "cycle {}: pool {}", now, p);
                }
            }
            prop_assert!(tm.free_cells() <= s.params.buffer_cells);
            prop_assert_eq!(held_cells + tm.free_cells(), s.params.buffer_cells);
        }
    }

    #[test]
    fn jumping_gives_the_dequeues_of_stepping(s in setup()) {
        let mut stepped = Log::new();
        let mut tm = build(&s);
        let (mut next, mut offered) = (0, 0);
        for now in 0..END {
            apply_ops(&mut tm, &s, &mut next, now, &mut offered);
            dequeue_all(&mut tm, now, &mut stepped);
        }
        let mut jumped = Log::new();
        let mut tm = build(&s);
        let (mut next, mut offered) = (0, 0);
        let mut now = 0;
        while now < END {
            apply_ops(&mut tm, &s, &mut next, now, &mut offered);
            dequeue_all(&mut tm, now, &mut jumped);
            let op = s.ops.get(next).map(|(at, _)| *at);
            match tm.next_event(now).into_iter().chain(op).min() {
                Some(t) => {
                    prop_assert!(t > now);
                    now = t;
                }
                None => break,
            }
        }
        prop_assert_eq!(stepped, jumped);
        // The ghost feed, worked out lazily, says the same as when visited every cycle.
        let mut stepped = build(&s);
        let (mut next, mut offered) = (0, 0);
        for now in 0..END {
            apply_ops(&mut stepped, &s, &mut next, now, &mut offered);
            dequeue_all(&mut stepped, now, &mut Log::new());
        }
        let views = |t: &mut TrafficManager| {
            t.ghost_catch_up(END);
            let mut v = vec![t.ghost_updates_sent() as u32];
            for port in 0..2 {
                for q in 0..t.queue_count(port) {
                    v.push(t.ghost_qlength(END, port, q));
                }
            }
            v
        };
        prop_assert_eq!(views(&mut stepped), views(&mut tm));
    }
}
