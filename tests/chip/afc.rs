//! AFC from the deparsers: an egress program sets `adv_flow_ctl` on the packets of chosen
//! flows, and the chip pauses and resumes the queue the message names, `afc_latency_cycles`
//! after the packet leaves the egress deparser.

use crate::common::udp_frame;
use arbitrary_int::{u15, u2, u4, u7};
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::ir::{Action, MatchKind, Operand, Primitive, Program, Stmt, Table};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{AfcMessage, Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;

fn udp(src: Ipv4Addr, dst: Ipv4Addr, payload: usize) -> Vec<u8> {
    udp_frame(src, dst, 64, payload)
}

/// Host routes (`ipv4_host`), and in egress a table keyed on the source address whose action
/// sets `eg_intr_dprsr_md.adv_flow_ctl` from action data; a miss sets 0 (no message).
fn afc_program(entries: &[(Ipv4Addr, u32)]) -> Program {
    let mut p = t2sim::schemes::dctcp::program(400);
    p.actions.push(
        Action::new("set_afc")
            .param("word", 32)
            .prim(Primitive::set(
                "eg_intr_dprsr_md.adv_flow_ctl",
                Operand::param("word"),
            )),
    );
    let mut t = Table::new("afc_flow", MatchKind::Exact, &["ipv4.src_addr"], 64)
        .action("set_afc")
        .default_action("set_afc", &[0]);
    for &(src, word) in entries {
        t = t.entry(&[u32::from(src) as u64], "set_afc", &[word as u64]);
    }
    p.tables.push(t);
    p.egress.push(Stmt::apply("afc_flow"));
    p
}

#[test]
fn afc_messages_decode_as_tofino2_lays_them_out() {
    // qfc | pipe 1 | mac 1 | pad | qid 16 | credit 1: the ConWeave helper's pause of dev port
    // 137 queue 0.
    let word = 1 << 31 | 1 << 29 | 1 << 25 | 16 << 15 | 1;
    let m = AfcMessage::decode(word).unwrap();
    assert_eq!(
        m,
        AfcMessage {
            pipe: u2::new(1),
            mac: u4::new(1),
            mac_qid: u7::new(16),
            credit: u15::new(1)
        }
    );
    assert_eq!(m.encode(), word);
    assert_eq!(AfcMessage::decode(word & !(1 << 31)), None, "qfc clear");
}

#[test]
fn an_egress_program_pauses_and_resumes_a_queue_with_adv_flow_ctl() {
    let params = Tofino2Params::default();
    let latency = params.tm.afc_latency_cycles as Cycle;
    let port = |pipe, channel| PortSpec {
        pipe,
        mac: 0,
        channel,
        bps: G100,
    };
    let receiver = Ipv4Addr::new(10, 0, 0, 100);
    let trigger_sink = Ipv4Addr::new(10, 0, 0, 103);
    let data_src = Ipv4Addr::new(10, 9, 9, 9);
    let pause_src = Ipv4Addr::new(10, 0, 1, 1);
    let resume_src = Ipv4Addr::new(10, 0, 1, 2);
    let bogus_src = Ipv4Addr::new(10, 0, 1, 3);
    // The receiver's port is pipe 0, MAC 0, channels 2-3 (device port 10): AFC MAC 1, its
    // queue 0 is queue 32 of the MAC's 128 (ConWeave: (dev_port % 8) x 16 + qid).
    let target = AfcMessage {
        pipe: u2::new(0),
        mac: u4::new(1),
        mac_qid: u7::new(32),
        credit: u15::new(1),
    };
    let resume = AfcMessage {
        credit: u15::new(0),
        ..target
    };
    // Queue 100 of that MAC belongs to no port: counted, ignored.
    let bogus = AfcMessage {
        mac_qid: u7::new(100),
        ..target
    };
    let program = afc_program(&[
        (pause_src, target.encode()),
        (resume_src, resume.encode()),
        (bogus_src, bogus.encode()),
    ]);
    let config = ChipConfig {
        params,
        // Receiver on pipe 0; data sender on pipe 1; trigger sender on pipe 2 and its sink on
        // pipe 3, so nothing delays the triggers.
        ports: vec![port(0, 2), port(1, 0), port(2, 0), port(3, 0)],
        routes: vec![(receiver, 0), (trigger_sink, 3)],
        program: Some(program),
    };
    let run = |stepping| {
        let mut net = Network::new(stepping);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        assert_eq!(net.node::<Chip>(chip).dev_port(0), 10);
        assert_eq!(net.node::<Chip>(chip).afc_address(0, 0), Some((0, 1, 32)));
        assert_eq!(net.node::<Chip>(chip).afc_target(target), Some((0, 0)));
        // 1500 B frames (182.4 cycles at 100G) back to back into the receiver's queue 0.
        let line = LineRate::new(params.clock(), G100);
        let data = udp(data_src, receiver, 1454);
        assert_eq!(data.len() + 4, 1500);
        let ser = line.serialization_ticks(1500);
        let data_frames = (1..=150)
            .map(|k| (line.ticks_to_cycle_ceil(k * ser), data.clone()))
            .collect();
        let (pause_at, bogus_at, resume_at) = (5_000, 6_000, 9_000);
        let triggers = vec![
            (pause_at, udp(pause_src, trigger_sink, 18)),
            (bogus_at, udp(bogus_src, trigger_sink, 18)),
            (resume_at, udp(resume_src, trigger_sink, 18)),
        ];
        let data_peer = net.add(Probe::new(G100, data_frames));
        let trigger_peer = net.add(Probe::new(G100, triggers));
        let rx = net.add(Probe::new(G100, Vec::new()));
        let sink = net.add(Probe::new(G100, Vec::new()));
        net.link(data_peer, 0, chip, 1, 1).unwrap();
        net.link(trigger_peer, 0, chip, 2, 1).unwrap();
        net.link(chip, 0, rx, 0, 1).unwrap();
        net.link(chip, 3, sink, 0, 1).unwrap();
        let c = net.node::<Chip>(chip);
        // A trigger reaches the chip 1 cycle after it is sent and leaves the egress deparser
        // after the ingress, the TM and the egress: A + I + 1 + queue latency + 1 + E.
        let exit = |sent: Cycle| {
            sent + 1
                + c.ingress_latency()
                + 1
                + params.tm.queue_latency_cycles as Cycle
                + 1
                + c.egress_latency()
        };
        let (pause_exit, resume_exit) = (exit(pause_at), exit(resume_at));
        assert_eq!((c.ingress_latency(), c.egress_latency()), (189, 189));
        assert_eq!(pause_exit, 5_000 + 1 + 189 + 1 + 300 + 1 + 189);
        let mut requests = Vec::new();
        let mut paused_from = None;
        let mut resumed_from = None;
        let mut dequeues = Vec::new();
        let mut last = (0, 0, false);
        while net.now() < 40_000 {
            net.step();
            let now = net.now();
            let c = net.node::<Chip>(chip);
            let n = c.counters();
            if n.afc_requests != last.0 {
                requests.push(now);
            }
            let d = c.tm().port_stats(0).dequeued;
            if d != last.1 {
                dequeues.push(now);
            }
            let paused = c.tm().queue_stats(0, 0).paused;
            if paused && !last.2 {
                paused_from = Some(now);
            }
            if !paused && last.2 {
                resumed_from = Some(now);
            }
            last = (n.afc_requests, d, paused);
        }
        let c = net.node::<Chip>(chip);
        (
            (requests, paused_from, resumed_from, dequeues),
            (pause_exit, resume_exit),
            c.counters().clone(),
            (
                net.node::<Probe>(rx).received().len() as u64,
                net.node::<Probe>(sink).received().len() as u64,
            ),
        )
    };
    let (seen, (pause_exit, resume_exit), counters, got) = run(Stepping::EveryCycle);
    let (requests, paused_from, resumed_from, dequeues) = seen.clone();
    assert_eq!(requests, vec![pause_exit, resume_exit]);
    assert_eq!(counters.afc_requests, 2);
    assert_eq!(counters.afc_unaddressed, 1);
    // The queue is paused from the exit + afc_latency_cycles exactly, and resumed likewise.
    assert_eq!(paused_from, Some(pause_exit + latency));
    assert_eq!(resumed_from, Some(resume_exit + latency));
    // No dequeue while paused although the queue is backlogged; the first one after the
    // resume is in the very cycle it takes effect (the MAC is long idle).
    assert!(dequeues
        .iter()
        .all(|&d| d < pause_exit + latency || d >= resume_exit + latency));
    let after = dequeues
        .iter()
        .find(|&&d| d >= pause_exit + latency)
        .copied();
    assert_eq!(after, Some(resume_exit + latency));
    // Every packet arrives in the end: the pause delays, never loses.
    assert_eq!(got, (150, 3));
    assert_eq!(counters.dropped(), 0);
    // Jumping over quiet cycles gives the same requests, pauses and dequeues.
    let (jumped, _, jumped_counters, jumped_got) = run(Stepping::Jump);
    assert_eq!(jumped, seen);
    assert_eq!(jumped_counters, counters);
    assert_eq!(jumped_got, got);
}

/// The ingress deparser sends AFC too, and MAC 0 of a pipe addresses its recirculation port:
/// one packet whose ingress sets `ig_intr_dprsr_md.adv_flow_ctl` pauses pipe 0's
/// recirculation port's queue 0, `afc_latency_cycles` after it leaves the ingress deparser.
#[test]
fn an_ingress_program_pauses_the_recirculation_port_queue() {
    let params = Tofino2Params::default();
    let latency = params.tm.afc_latency_cycles as Cycle;
    let src = Ipv4Addr::new(10, 0, 1, 1);
    let dst = Ipv4Addr::new(10, 0, 0, 100);
    let word = AfcMessage {
        pipe: u2::new(0),
        mac: u4::new(0),
        mac_qid: u7::new(0),
        credit: u15::new(1),
    }
    .encode();
    let mut program = afc_program(&[]);
    program.actions.push(
        Action::new("set_afc_in")
            .param("word", 32)
            .prim(Primitive::set(
                "ig_intr_dprsr_md.adv_flow_ctl",
                Operand::param("word"),
            )),
    );
    program.tables.push(
        Table::new("afc_in", MatchKind::Exact, &["ipv4.src_addr"], 64)
            .action("set_afc_in")
            .default_action("set_afc_in", &[0])
            .entry(&[u32::from(src) as u64], "set_afc_in", &[word as u64]),
    );
    program.ingress.push(Stmt::apply("afc_in"));
    let config = ChipConfig {
        params,
        ports: vec![PortSpec {
            pipe: 0,
            mac: 0,
            channel: 0,
            bps: G100,
        }],
        routes: vec![(dst, 0)],
        program: Some(program),
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    let recirc = net.node::<Chip>(chip).recirculation_port(0).unwrap();
    assert_eq!(
        net.node::<Chip>(chip).afc_address(recirc, 0),
        Some((0, 0, 0))
    );
    let peer = net.add(Probe::new(G100, vec![(100, udp(src, dst, 18))]));
    net.link(peer, 0, chip, 0, 1).unwrap();
    let exit = 101 + net.node::<Chip>(chip).ingress_latency();
    let mut paused_from = None;
    while net.next_event().is_some() {
        net.advance();
        let c = net.node::<Chip>(chip);
        if paused_from.is_none() && c.tm().queue_stats(recirc, 0).paused {
            paused_from = Some(net.now());
        }
    }
    let c = net.node::<Chip>(chip);
    assert_eq!(c.counters().afc_requests, 1);
    assert_eq!(paused_from, Some(exit + latency));
    assert_eq!(net.node::<Probe>(peer).received().len(), 1);
}
