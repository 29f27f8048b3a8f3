//! The ingress deparser's controls set by a program: `mirror` copies the packet to a mirror
//! session (with its truncation), `recirculate` sends it to the pipe's recirculation port.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::ir::{Action, MatchKind, Primitive, Program, Stmt, Table};
use t2_pipeline::{DropReason, Gress};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, ChipConfig, ChipDrop, MirrorSession, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;

/// (arrival cycle, buffer length) of every frame a probe received.
fn lens(p: &Probe) -> Vec<(Cycle, usize)> {
    p.received().iter().map(|(c, b)| (*c, b.len())).collect()
}

const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const MIRRORED: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const LOOPED: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);

fn udp(src: Ipv4Addr, ttl: u8, payload: usize) -> Vec<u8> {
    udp_frame(src, RECEIVER, ttl, payload)
}

/// Host routes, and in ingress a table on the source address: `MIRRORED` is mirrored to
/// session 5, `LOOPED` recirculated (each pass lowers the TTL through `ipv4_host`).
fn program() -> Program {
    let mut p = t2sim::schemes::dctcp::program(400);
    p.actions.push(crate::common::mirror_to_action());
    p.actions
        .push(Action::new("recirc").prim(Primitive::Recirculate));
    p.actions.push(Action::new("nothing"));
    p.tables.push(
        Table::new("controls", MatchKind::Exact, &["ipv4.src_addr"], 16)
            .action("mirror_to")
            .action("recirc")
            .action("nothing")
            .default_action("nothing", &[])
            .entry(&[u32::from(MIRRORED) as u64], "mirror_to", &[5])
            .entry(&[u32::from(LOOPED) as u64], "recirc", &[]),
    );
    p.ingress.push(Stmt::apply("controls"));
    p
}

fn config(params: Tofino2Params) -> ChipConfig {
    let port = |mac, channel| PortSpec {
        pipe: 0,
        mac,
        channel,
        bps: G100,
    };
    ChipConfig {
        params,
        ports: vec![port(0, 0), port(0, 2), port(1, 0)],
        routes: vec![(RECEIVER, 0)],
        program: Some(program()),
    }
}

#[test]
fn a_program_mirrors_with_truncation_and_recirculates() {
    let params = Tofino2Params::default();
    let mirrored = udp(MIRRORED, 64, 1000);
    let looped = udp(LOOPED, 3, 1000);
    assert_eq!(mirrored.len() + 4, 1046);
    let run = |stepping| {
        let mut net = Network::new(stepping);
        let chip = net.add(Chip::new("chip", &config(params)).unwrap());
        net.node_mut::<Chip>(chip)
            .set_mirror_session(
                5,
                Some(MirrorSession {
                    port: 1,
                    qid: 0,
                    truncate_bytes: Some(100),
                }),
            )
            .unwrap();
        let sender = net.add(Probe::new(
            G100,
            vec![(100, mirrored.clone()), (5_000, looped.clone())],
        ));
        let rx = net.add(Probe::new(G100, Vec::new()));
        let copies = net.add(Probe::new(G100, Vec::new()));
        net.link(sender, 0, chip, 2, 1).unwrap();
        net.link(chip, 0, rx, 0, 1).unwrap();
        net.link(chip, 1, copies, 0, 1).unwrap();
        let mut recirculated_at = Vec::new();
        let mut last = 0;
        while net.next_event().is_some() {
            net.advance();
            let r = net.node::<Chip>(chip).counters().recirculated;
            if r != last {
                recirculated_at.push(net.now());
                last = r;
            }
        }
        let c = net.node::<Chip>(chip);
        let recirc = c.recirculation_port(0).unwrap();
        let expect = (
            101 + c.unloaded_latency(1046, 0) + 1,
            101 + c.unloaded_latency(104, 1) + 1,
            5_001 + c.unloaded_latency(1046, recirc),
        );
        (
            lens(net.node::<Probe>(rx)),
            lens(net.node::<Probe>(copies)),
            recirculated_at,
            c.counters().clone(),
            c.pipe_entered(0),
            expect,
        )
    };
    let stepped = run(Stepping::EveryCycle);
    let (rx, copies, recirculated_at, counters, entered, expect) = stepped.clone();
    // The original arrives whole after its unloaded latency; the copy, cut to 100 bytes,
    // one cycle more than its own, as pipe 0's scheduler sends one descriptor a cycle and
    // the original went first.
    assert_eq!(rx, vec![(expect.0, 1042)]);
    assert_eq!(copies, vec![(expect.1 + 1, 100)]);
    assert_eq!(counters.mirrored, 1);
    // The looped packet goes round twice (TTL 3, 2), then its TTL expires in ingress.
    assert_eq!(recirculated_at.len(), 2);
    assert_eq!(recirculated_at[0], expect.2);
    assert_eq!(counters.recirculated, 2);
    assert_eq!(
        counters.drops,
        [(
            ChipDrop::Pipeline(Gress::Ingress, DropReason::TtlExpired),
            1
        )]
        .into()
    );
    // Pipe 0's ingress took the two sent packets and the two recirculated passes; its egress
    // the original, the copy and the two passes out to the recirculation port.
    assert_eq!(entered, (4, 4));
    assert_eq!(run(Stepping::Jump), stepped);
}

#[test]
fn recirculating_without_a_recirculation_port_is_a_counted_drop() {
    let params = Tofino2Params {
        recirculation_cap_percent: 0,
        ..Tofino2Params::default()
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config(params)).unwrap());
    assert_eq!(net.node::<Chip>(chip).recirculation_port(0), None);
    let sender = net.add(Probe::new(G100, vec![(100, udp(LOOPED, 3, 100))]));
    net.link(sender, 0, chip, 2, 1).unwrap();
    net.run_until(10_000);
    let c = net.node::<Chip>(chip).counters();
    assert_eq!(c.drops, [(ChipDrop::NoRecirculationPort, 1)].into());
    assert_eq!(
        ChipDrop::NoRecirculationPort.to_string(),
        "no_recirculation_port"
    );
}

/// `random` in ingress: each pipe draws its own numbers, and a run is repeatable.
#[test]
fn random_source_ports_differ_by_pipe_and_repeat_run_to_run() {
    let mut program = t2sim::schemes::dctcp::program(400);
    program
        .actions
        .push(Action::new("rand_port").prim(Primitive::Random {
            dst: "l4.src_port".into(),
        }));
    program
        .tables
        .push(Table::new("rand", MatchKind::Exact, &[], 0).action("rand_port"));
    program.ingress.push(Stmt::apply("rand"));
    let port = |pipe| PortSpec {
        pipe,
        mac: 0,
        channel: 0,
        bps: G100,
    };
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![port(0), port(1), port(2)],
        routes: vec![(RECEIVER, 0)],
        program: Some(program),
    };
    let run = || {
        let mut net = Network::new(Stepping::Jump);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        let frame = udp(MIRRORED, 64, 100);
        // The same five frames into pipe 1 and pipe 2, pipe 1's 500 cycles ahead.
        let a = net.add(Probe::new(
            G100,
            (0..5).map(|k| (100 + 1_000 * k, frame.clone())).collect(),
        ));
        let b = net.add(Probe::new(
            G100,
            (0..5).map(|k| (600 + 1_000 * k, frame.clone())).collect(),
        ));
        let rx = net.add(Probe::new(G100, Vec::new()));
        net.link(a, 0, chip, 1, 1).unwrap();
        net.link(b, 0, chip, 2, 1).unwrap();
        net.link(chip, 0, rx, 0, 1).unwrap();
        net.run_until(20_000);
        let got: Vec<u16> = net
            .node::<Probe>(rx)
            .received()
            .iter()
            .map(|(_, b)| u16::from_be_bytes([b[34], b[35]]))
            .collect();
        let got = &got;
        assert_eq!(got.len(), 10);
        let pipe1: Vec<u16> = got.iter().step_by(2).copied().collect();
        let pipe2: Vec<u16> = got.iter().skip(1).step_by(2).copied().collect();
        (pipe1, pipe2)
    };
    let (pipe1, pipe2) = run();
    assert_ne!(pipe1, pipe2);
    assert!(pipe1.iter().any(|&p| p != pipe1[0]));
    assert_eq!(run(), (pipe1, pipe2));
}
