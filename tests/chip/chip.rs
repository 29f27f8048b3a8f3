//! End-to-end behaviour of one chip with hosts: exact latency, line-rate pacing, overload,
//! conservation on every cycle, drops by reason, and jumping versus stepping.

use crate::common::{udp_frame, TEST_SRC};
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::headers::{self, MacAddr};
use t2_pipeline::{DropReason, Gress};
use t2_testbench::{Host, Network, Node, Probe, Stepping};
use t2sim::scenario::{Built, IncastScenario, RECEIVER_IP};
use t2sim::{Chip, ChipConfig, ChipDrop, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;

fn scenario(senders: u32, frame_bytes: u32, load_percent: u32, duration: Cycle) -> IncastScenario {
    IncastScenario {
        senders,
        frame_bytes,
        load_percent,
        duration_cycles: duration,
        ..IncastScenario::default()
    }
}

/// offered = delivered + dropped + inside the chip + on links, counted where each packet is;
/// and the pool holds exactly the packets inside the chip and on links.
fn assert_conserved(b: &Built) {
    let c = b.census();
    assert_eq!(c.offered, c.accounted(), "cycle {}: {c:?}", b.net.now());
    assert_eq!(b.net.live_packets() as u64, c.in_chip + c.on_links);
}

#[test]
fn one_packet_latency_is_the_documented_formula() {
    // 1480 B frames take exactly 180 cycles at 100 Gb/s and 1.5 GHz.
    for senders in [1, 2] {
        let s = scenario(senders, 1480, 1, 5_000);
        let mut b = s.build().unwrap();
        b.net.run_until(20_000);
        let rx = b.net.node::<Host>(b.receiver).received();
        assert_eq!(rx.len(), senders as usize);
        let p = Tofino2Params::default();
        let gress = (p.pipeline.parser_cycles + 61 + p.pipeline.deparser_cycles) as Cycle;
        assert_eq!(gress, 189);
        let formula = gress + 1 + p.tm.queue_latency_cycles as Cycle + 1 + gress + 1 + 180;
        assert_eq!(formula, 861);
        let chip = b.net.node::<Chip>(b.chip);
        assert_eq!(chip.unloaded_latency(1480, 0), formula);
        for r in rx {
            // Sender 1 is on pipe 1, so its packet crosses the TM from pipe 1 to pipe 0. Both
            // packets reach the queue in the same cycle (pipe 0's first), so sender 1's waits
            // exactly one serialization behind sender 0's.
            let waited = 180 * r.flow_id as Cycle;
            assert_eq!(
                r.received_at - r.sent_at,
                150 + formula + waited + 150,
                "flow {}",
                r.flow_id
            );
        }
    }
}

#[test]
fn latency_formula_follows_the_parameters() {
    let mut s = scenario(1, 1500, 1, 5_000);
    s.params.pipeline.parser_cycles = 7;
    s.params.pipeline.deparser_cycles = 3;
    s.params.tm.queue_latency_cycles = 40;
    s.params.pipeline.stages = 12;
    let mut b = s.build().unwrap();
    b.net.run_until(20_000);
    let rx = b.net.node::<Host>(b.receiver).received();
    // 12 stages: 23 + 11 x 2 = 45. 1500 B: 1520 x 8 x 3 / 200 = 182.4 -> 183 cycles.
    let gress = 7 + 45 + 3;
    assert_eq!(
        rx[0].received_at - rx[0].sent_at,
        150 + gress + 1 + 40 + 1 + gress + 1 + 183 + 150
    );
}

#[test]
fn back_to_back_frames_leave_exactly_one_serialization_apart() {
    for frame in [1480u32, 1500, 64] {
        let s = scenario(3, frame, 100, 30_000);
        let mut b = s.build().unwrap();
        b.net.run_until(30_000);
        let rx = b.net.node::<Host>(b.receiver).received();
        let line = LineRate::new(s.params.clock(), G100);
        let ser = line.serialization_ticks(frame as u64);
        let tpc = line.ticks_per_cycle();
        // The first frame starts at a cycle boundary; then the line never idles.
        let first_start = rx[0].received_at - 150 - line.serialization_cycles_ceil(frame as u64);
        assert!(rx.len() > 100);
        for (k, r) in rx.iter().enumerate() {
            let end_ticks = first_start * tpc + (k as u64 + 1) * ser;
            assert_eq!(
                r.received_at - 150,
                end_ticks.div_ceil(tpc),
                "frame {frame} B, k {k}"
            );
        }
        if frame == 1480 {
            assert!(rx
                .windows(2)
                .all(|w| w[1].received_at - w[0].received_at == 180));
        }
    }
}

#[test]
fn overload_delivers_line_capacity_and_conserves_every_cycle() {
    let mut s = scenario(4, 1480, 100, 12_000);
    s.params.tm.queue_limit_cells = Some(200);
    let mut b = s.build().unwrap();
    for _ in 0..=12_000 {
        b.net.step();
        assert_conserved(&b);
    }
    let end = b.net.now();
    assert_eq!(end, 12_000);
    let rx = b.net.node::<Host>(b.receiver).received();
    let chip = b.net.node::<Chip>(b.chip);
    // The first frame reached the receiver's MAC at `first_start`; from then on the line
    // carries one 180-cycle frame after another.
    let first_start = rx[0].received_at - 150 - 180;
    let (_, transmitted) = chip.port_frames(0);
    assert_eq!(transmitted, (end - first_start) / 180);
    let drops = chip
        .counters()
        .drops
        .get(&ChipDrop::Tm(t2_tm::TmDrop::QueueLimit));
    assert!(
        drops.copied().unwrap_or(0) > 100,
        "{:?}",
        chip.counters().drops
    );
    assert!(chip.tm().port_stats(0).peak_cells <= 200);
}

#[test]
fn default_scenario_is_deterministic() {
    let a = IncastScenario::default().run().unwrap();
    let b = IncastScenario::default().run().unwrap();
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(a.offered, 3288);
    assert_eq!(
        a.offered,
        a.delivered + a.dropped() + a.in_chip + a.on_links
    );
}

#[test]
fn jumping_and_stepping_give_identical_timestamps() {
    for (senders, frame, load) in [(4, 1500, 100), (6, 64, 100), (2, 9000, 37)] {
        let mut s = scenario(senders, frame, load, 9_000);
        s.params.tm.queue_limit_cells = Some(300);
        let run = |stepping| {
            let mut b = IncastScenario {
                stepping,
                ..s.clone()
            }
            .build()
            .unwrap();
            b.net.run_until(12_000);
            let rx = b.net.node::<Host>(b.receiver).received().to_vec();
            let chip = b.net.node::<Chip>(b.chip);
            (
                rx,
                chip.counters().clone(),
                chip.packets_inside(),
                b.net.visited_cycles(),
            )
        };
        let jump = run(Stepping::Jump);
        let step = run(Stepping::EveryCycle);
        assert_eq!(jump.0, step.0);
        assert_eq!(jump.1, step.1);
        assert_eq!(jump.2, step.2);
        assert!(!jump.0.is_empty());
        assert_eq!(step.3, 12_001);
        assert!(jump.3 < step.3);
    }
}

fn udp_to(dst: Ipv4Addr, ttl: u8) -> Vec<u8> {
    udp_frame(TEST_SRC, dst, ttl, 16)
}

#[test]
fn every_drop_has_its_reason() {
    let params = Tofino2Params::default();
    let ports = vec![
        PortSpec {
            pipe: 0,
            mac: 0,
            channel: 0,
            bps: G100,
        },
        PortSpec {
            pipe: 2,
            mac: 3,
            channel: 6,
            bps: G100,
        },
    ];
    let config = ChipConfig {
        params,
        ports,
        routes: vec![(RECEIVER_IP, 0), (Ipv4Addr::new(10, 7, 7, 7), 1)],
        program: None,
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    let good = udp_to(RECEIVER_IP, 64);
    let mut bad_sum = good.clone();
    bad_sum[24] ^= 0xff; // corrupt the IPv4 checksum
    let mut not_ip = good.clone();
    not_ip[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    let frames = vec![
        (10, good.clone()),
        (100, udp_to(Ipv4Addr::new(10, 99, 0, 1), 64)),
        (200, udp_to(RECEIVER_IP, 1)),
        (300, bad_sum),
        (400, not_ip),
        (500, good[..20].to_vec()),
        (600, good),
    ];
    let inj = net.add(Probe::new(G100, frames));
    let rx = net.add(Host::new(
        "rx",
        MacAddr([2, 0, 0, 0, 0, 1]),
        RECEIVER_IP,
        params.clock(),
        G100,
    ));
    net.link(inj, 0, chip, 1, 10).unwrap();
    net.link(rx, 0, chip, 0, 10).unwrap();
    net.run_until(5_000);
    let c = net.node::<Chip>(chip).counters();
    let by_name: Vec<(String, u64)> = c.drops.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    assert_eq!(
        by_name,
        vec![
            ("ingress.parser_error".to_string(), 1),
            ("ingress.ipv4_checksum_error".to_string(), 1),
            ("ingress.not_ipv4".to_string(), 1),
            ("ingress.no_route".to_string(), 1),
            ("ingress.ttl_expired".to_string(), 1),
        ]
    );
    let got = net.node::<Host>(rx);
    assert_eq!(got.received().len(), 2);
    assert_eq!(got.foreign(), 0);
    assert_eq!(c.received, 7);
    assert_eq!(c.transmitted, 2);
    assert_eq!(net.live_packets(), 0);
    assert_eq!(
        net.node::<Chip>(chip).dev_port(1),
        (2 << 7) | (8 + 3 * 8 + 6)
    );
}

#[test]
fn forwarded_frames_have_ttl_lowered_and_a_valid_checksum() {
    // Checked on the bytes the receiver gets: build a chip, send one frame, capture it.
    let params = Tofino2Params::default();
    let config = ChipConfig {
        params,
        ports: vec![
            PortSpec {
                pipe: 0,
                mac: 0,
                channel: 0,
                bps: G100,
            },
            PortSpec {
                pipe: 3,
                mac: 7,
                channel: 2,
                bps: G100,
            },
        ],
        routes: vec![(RECEIVER_IP, 0)],
        program: None,
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    let sent = udp_to(RECEIVER_IP, 9);
    let inj = net.add(Probe::new(G100, vec![(5, sent.clone())]));
    let cap = net.add(Probe::new(G100, vec![]));
    net.link(inj, 0, chip, 1, 1).unwrap();
    net.link(cap, 0, chip, 0, 1).unwrap();
    net.run_until(3_000);
    let got: Vec<Vec<u8>> = net
        .node::<Probe>(cap)
        .received()
        .iter()
        .map(|(_, b)| b.clone())
        .collect();
    assert_eq!(got.len(), 1);
    let p = headers::parse_frame(&got[0]).unwrap();
    assert_eq!(p.ipv4.unwrap().ttl, 8);
    assert!(headers::ipv4_checksum_ok(&got[0][14..34]));
    let mut expect = sent;
    expect[22] = 8;
    expect[24..26].copy_from_slice(&got[0][24..26]);
    assert_eq!(got[0], expect, "only TTL and checksum change");
}

#[test]
fn bad_chip_configs_are_errors() {
    let params = Tofino2Params::default();
    let port = |pipe, mac, channel, bps| PortSpec {
        pipe,
        mac,
        channel,
        bps,
    };
    let err = |ports: Vec<PortSpec>, routes: Vec<(Ipv4Addr, usize)>| {
        Chip::new(
            "c",
            &ChipConfig {
                params,
                ports,
                routes,
                program: None,
            },
        )
        .err()
        .unwrap()
        .to_string()
    };
    assert!(err(vec![], vec![]).contains("has no ports"));
    assert!(err(vec![port(4, 0, 0, G100)], vec![]).contains("pipes 0..4"));
    assert!(err(vec![port(0, 8, 0, G100)], vec![]).contains("MACs 0..8"));
    assert!(err(vec![port(0, 0, 0, 30_000_000_000)], vec![]).contains("not a Tofino2 port speed"));
    assert!(err(vec![port(0, 0, 1, G100)], vec![]).contains("multiple of 2"));
    assert!(err(
        vec![port(0, 0, 0, 400 * G100 / 100), port(0, 0, 4, G100)],
        vec![]
    )
    .contains("already used"));
    // One front-panel port (0) and the four pipes' recirculation ports (1..5).
    let e = err(vec![port(0, 0, 0, G100)], vec![(RECEIVER_IP, 5)]);
    assert!(e.contains("port 5 does not exist"), "{e}");
    assert!(e.contains("recirculation ports 1..5"), "{e}");
    assert!(err(
        vec![port(0, 0, 0, G100)],
        vec![(RECEIVER_IP, 0), (RECEIVER_IP, 0)]
    )
    .contains("already exists"));
}

#[test]
fn afc_pause_holds_the_queue_after_its_latency_and_in_flight_packets_still_leave() {
    let mut b = scenario(4, 1500, 100, 20_000).build().unwrap();
    let latency = Tofino2Params::default().tm.afc_latency_cycles as Cycle;
    assert_eq!(latency, 100);
    let dequeued = |b: &Built| b.net.node::<Chip>(b.chip).tm().port_stats(0).dequeued;
    // Step to cycle 5000 (the receiver's queue is backlogged by then) and pause queue 0.
    while b.net.now() < 5_000 {
        b.net.step();
    }
    let chip = b.net.node_mut::<Chip>(b.chip);
    chip.afc(5_000, 0, 0, true).unwrap();
    assert!(chip.afc(5_000, 9, 0, true).is_err());
    let mut dequeue_cycles = Vec::new();
    let mut last = dequeued(&b);
    while b.net.now() < 8_000 {
        b.net.step();
        let d = dequeued(&b);
        if d != last {
            dequeue_cycles.push(b.net.now());
            last = d;
        }
    }
    // Dequeues continue up to the cycle before the pause takes effect, none after, although
    // the queue is far from empty.
    assert!(dequeue_cycles.iter().all(|&c| c < 5_000 + latency));
    let chip = b.net.node::<Chip>(b.chip);
    assert!(chip.tm().queue_stats(0, 0).paused);
    assert!(chip.tm().queue_stats(0, 0).queued_packets > 20);
    // Every packet dequeued before the pause has reached the receiver.
    let rx = b.net.node::<Host>(b.receiver).received().len() as u64;
    assert_eq!(rx, last);
    // Resume asked in 8000: the next dequeue is in 8100 exactly (the MAC is long idle).
    b.net
        .node_mut::<Chip>(b.chip)
        .afc(8_000, 0, 0, false)
        .unwrap();
    while dequeued(&b) == last {
        b.net.step();
    }
    assert_eq!(b.net.now(), 8_000 + latency);
    assert_conserved(&b);
}

#[test]
fn ingress_hears_queue_depths_through_the_ghost_feed_after_its_latency() {
    // Only the receiver's queue changes in pipe 0, so at one update per cycle it is reported
    // in every cycle it changes: ingress sees exactly the depth of 100 cycles before.
    let mut b = scenario(4, 1500, 100, 6_000).build().unwrap();
    let latency = Tofino2Params::default().tm.ghost_latency_cycles as Cycle;
    let mut depth = Vec::new();
    while b.net.now() < 6_000 {
        b.net.step();
        let now = b.net.now();
        let chip = b.net.node_mut::<Chip>(b.chip);
        depth.push(chip.tm().queue_stats(0, 0).depth_cells);
        assert_eq!(depth.len() as Cycle, now + 1);
        let heard = chip.ghost_qlength(now, 0, 0);
        let expected = now.checked_sub(latency).map_or(0, |c| depth[c as usize]);
        assert_eq!(heard, expected, "cycle {now}");
    }
    assert!(depth.iter().max().copied().unwrap_or(0) > 100);
}

#[test]
fn lossless_traffic_sends_pfc_frames_and_is_dropped_only_past_headroom() {
    // Class 0 (what the built-in program gives every packet) is lossless. The chip sends XOFF
    // and XON frames to the senders, which do not honour them (hosts do not do PFC yet), so
    // the incast overflows the headroom: those drops, and only those, are counted, as
    // PfcHeadroom; the egress queue limit does not apply to lossless traffic.
    let mut s = scenario(4, 1500, 100, 12_000);
    s.params.tm.pfc_lossless_classes = 1;
    s.params.tm.pfc_xoff_cells = 200;
    s.params.tm.pfc_xon_cells = 100;
    s.params.tm.pfc_headroom_cells = 50;
    s.params.tm.queue_limit_cells = Some(100);
    let run = |stepping| {
        let mut b = IncastScenario {
            stepping,
            ..s.clone()
        }
        .build()
        .unwrap();
        // Long enough for the queue (4 groups of up to 250 cells) to drain.
        b.net.run_until(50_000);
        let chip = b.net.node::<Chip>(b.chip);
        let c = chip.counters().clone();
        assert_eq!(chip.packets_inside(), 0);
        assert_eq!(b.net.frames_on_links(), 0);
        let offered: u64 = b
            .senders
            .iter()
            .map(|&h| b.net.node::<Host>(h).sent())
            .sum();
        let pfc_heard: u64 = b
            .senders
            .iter()
            .map(|&h| b.net.node::<Host>(h).foreign())
            .sum();
        let rx = b.net.node::<Host>(b.receiver);
        // Every PFC frame reached a sender; every data frame was delivered or dropped.
        assert_eq!(pfc_heard, c.pfc_xoff_sent + c.pfc_xon_sent);
        assert_eq!(offered, rx.received().len() as u64 + c.dropped());
        assert_eq!(c.transmitted, rx.received().len() as u64 + pfc_heard);
        assert_eq!(b.net.live_packets(), 0);
        c
    };
    let jump = run(Stepping::Jump);
    assert_eq!(jump, run(Stepping::EveryCycle));
    assert!(jump.pfc_xoff_sent >= 1);
    assert_eq!(jump.pfc_xon_sent, jump.pfc_xoff_sent);
    assert_eq!(jump.drops.len(), 1, "{:?}", jump.drops);
    assert!(jump.drops[&ChipDrop::Tm(t2_tm::TmDrop::PfcHeadroom)] > 0);
}

#[test]
fn a_pfc_frame_from_the_link_holds_the_class_queues_for_its_quanta() {
    use t2sim::pfc::PfcFrame;
    let params = Tofino2Params::default();
    let port = |pipe, mac| PortSpec {
        pipe,
        mac,
        channel: 0,
        bps: G100,
    };
    let config = ChipConfig {
        params,
        ports: vec![port(0, 0), port(1, 0)],
        routes: vec![(RECEIVER_IP, 0)],
        program: None,
    };
    let run = |stepping, pause: bool| {
        let mut net = Network::new(stepping);
        let mut chip = Chip::new("chip", &config).unwrap();
        let queues: Vec<t2_tm::QueueConfig> = (0..16)
            .map(|q| t2_tm::QueueConfig {
                pfc_priority: (q == 0).then_some(5),
                ..t2_tm::QueueConfig::default()
            })
            .collect();
        chip.set_port_queues(0, &queues).unwrap();
        let chip = net.add(chip);
        // The receiver side sends PFC for class 5, 1000 quanta (7680 cycles at 100G), in
        // cycle 100; it reaches the chip 10 cycles later.
        let mut pfc = Vec::new();
        PfcFrame::one_class(5, 1000).write([2, 0, 0, 0, 0, 1], &mut pfc);
        let rx = net.add(Probe::new(
            G100,
            if pause { vec![(100, pfc)] } else { vec![] },
        ));
        let tx = net.add(Probe::new(G100, vec![(200, udp_to(RECEIVER_IP, 64))]));
        net.link(rx, 0, chip, 0, 10).unwrap();
        net.link(tx, 0, chip, 1, 10).unwrap();
        net.run_until(20_000);
        let c = net.node::<Chip>(chip).counters().clone();
        (net.node::<Probe>(rx).arrivals(), c)
    };
    let (free_run, _) = run(Stepping::Jump, false);
    let (held, c) = run(Stepping::Jump, true);
    assert_eq!(held, run(Stepping::EveryCycle, true).0);
    assert_eq!(c.pfc_frames_received, 1);
    assert_eq!((c.received, c.transmitted), (1, 1));
    // Held from 111 to 111 + 7680: the packet leaves the queue at 7791 instead of when it
    // was ready, and everything after the queue takes the same time as without the pause.
    let chip = Chip::new("c", &config).unwrap();
    let frame = udp_to(RECEIVER_IP, 64).len() as u64 + 4;
    let after_dequeue = 1
        + chip.egress_latency()
        + 1
        + LineRate::new(params.clock(), G100).serialization_cycles_ceil(frame)
        + 10;
    assert_eq!(held, vec![110 + 1 + 7680 + after_dequeue]);
    assert!(free_run[0] < held[0]);
}

#[test]
fn recirculation_is_capped_and_takes_ingress_slots() {
    // Four 100G senders on pipe 1 send 1046 B frames (1050 with FCS) to an address routed to
    // pipe 0's recirculation port, with TTL 2: each frame goes round once, comes back into
    // pipe 0's ingress and is dropped there for its TTL. The senders offer 398 Gb/s; the
    // recirculation port carries 12% of the pipe's 3.2 Tb/s, 384 Gb/s: one frame every
    // (1050 + 20) x 8 / 256 = 33.4375 cycles.
    let params = Tofino2Params::default();
    let port = |pipe, mac| PortSpec {
        pipe,
        mac,
        channel: 0,
        bps: G100,
    };
    let looped = Ipv4Addr::new(10, 5, 5, 5);
    let config = ChipConfig {
        params,
        ports: vec![port(0, 0), port(1, 0), port(1, 1), port(1, 2), port(1, 3)],
        routes: vec![(looped, 5)],
        program: None,
    };
    let frame = udp_frame(TEST_SRC, looped, 2, 1004);
    assert_eq!(frame.len() + 4, 1050);
    let run = |stepping| {
        let mut net = Network::new(stepping);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        assert_eq!(net.node::<Chip>(chip).port_count(), 5);
        assert_eq!(net.node::<Chip>(chip).recirculation_port(0), Some(5));
        assert_eq!(net.node::<Chip>(chip).dev_port(5), 6);
        for p in 1..5 {
            // 1050 B take 128.4 cycles at 100G: one every 129 cycles is 99.5 Gb/s.
            let frames = (0..300).map(|k| (10 + 129 * k, frame.clone())).collect();
            let peer = net.add(Probe::new(G100, frames));
            net.link(peer, 0, chip, p, 10).unwrap();
        }
        let mut departures = Vec::new();
        let mut last = 0;
        while net.advance_until(60_000) {
            let r = net.node::<Chip>(chip).counters().recirculated;
            if r != last {
                assert_eq!(r, last + 1, "one a cycle at most");
                departures.push(net.now());
                last = r;
            }
        }
        let c = net.node::<Chip>(chip);
        (departures, c.counters().clone(), c.pipe_entered(0))
    };
    let (departures, counters, (entered, _)) = run(Stepping::EveryCycle);
    // All 1200 went round once, took a pipe-0 ingress slot, and were dropped there.
    assert_eq!(counters.recirculated, 1200);
    assert_eq!(entered, 1200);
    assert_eq!(
        counters.drops,
        [(
            ChipDrop::Pipeline(Gress::Ingress, DropReason::TtlExpired),
            1200
        )]
        .into()
    );
    assert_eq!(counters.transmitted, 0);
    // Once backlogged (from about the 100th frame) the port runs at exactly its cap.
    let busy = &departures[100..1150];
    assert!(busy
        .windows(2)
        .all(|w| w[1] - w[0] == 33 || w[1] - w[0] == 34));
    let span_ticks = (busy[busy.len() - 1] - busy[0]) * 256;
    let expected_ticks = (busy.len() as u64 - 1) * 1070 * 8;
    assert!(
        span_ticks.abs_diff(expected_ticks) < 256,
        "{span_ticks} vs {expected_ticks}"
    );
    let (jumped, jumped_counters, _) = run(Stepping::Jump);
    assert_eq!(jumped_counters, counters);
    assert_eq!(jumped, departures);
}

#[test]
fn port_mirroring_copies_and_truncates() {
    // Port 1's traffic to the receiver (port 0, pipe 0) is mirrored by session 7 to a monitor
    // on port 2 (pipe 2), cut to 64 bytes. Copy and original are queued in the same cycle and
    // meet no other traffic, so each copy arrives one serialization difference earlier.
    let params = Tofino2Params::default();
    let port = |pipe| PortSpec {
        pipe,
        mac: 0,
        channel: 0,
        bps: G100,
    };
    let config = ChipConfig {
        params,
        ports: vec![port(0), port(1), port(2)],
        routes: vec![(RECEIVER_IP, 0)],
        program: None,
    };
    let frame = udp_frame(TEST_SRC, RECEIVER_IP, 64, 1004);
    let mut chip = Chip::new("chip", &config).unwrap();
    let session = |port, truncate_bytes| {
        Some(t2sim::MirrorSession {
            port,
            qid: 0,
            truncate_bytes,
        })
    };
    let e = chip.set_mirror_session(7, session(9, None)).unwrap_err();
    assert!(
        e.to_string().contains("mirror session 7") && e.problem.contains("port 9"),
        "{e}"
    );
    let e = chip
        .set_mirror_session(7, session(2, Some(59)))
        .unwrap_err();
    assert!(e.problem.contains("59"), "{e}");
    assert!(chip.mirror_ingress_port(9, Some(7)).is_err());
    chip.set_mirror_session(7, session(2, Some(64))).unwrap();
    chip.mirror_ingress_port(1, Some(7)).unwrap();
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(chip);
    let rx = net.add(Probe::new(G100, vec![]));
    let tx = net.add(Probe::new(
        G100,
        (0..20).map(|k| (100 + 1000 * k, frame.clone())).collect(),
    ));
    let monitor = net.add(Probe::new(G100, vec![]));
    net.link(rx, 0, chip, 0, 10).unwrap();
    net.link(tx, 0, chip, 1, 10).unwrap();
    net.link(monitor, 0, chip, 2, 10).unwrap();
    net.run_until(40_000);
    let originals = net.node::<Probe>(rx).arrivals();
    let copies = net.node::<Probe>(monitor);
    assert_eq!(originals.len(), 20);
    assert_eq!(copies.received().len(), 20);
    assert!(copies.received().iter().all(|(_, b)| b.len() == 64));
    assert!(net
        .node::<Probe>(rx)
        .received()
        .iter()
        .all(|(_, b)| b.len() == frame.len()));
    let line = LineRate::new(params.clock(), G100);
    let ser = |bytes: usize| line.serialization_cycles_ceil(bytes as u64 + 4);
    for (o, c) in originals.iter().zip(&copies.arrivals()) {
        assert_eq!(*c + ser(frame.len()), *o + ser(64));
    }
    let c = net.node::<Chip>(chip).counters();
    assert_eq!((c.mirrored, c.received, c.transmitted), (20, 20, 40));
    assert_eq!(net.live_packets(), 0);
}
