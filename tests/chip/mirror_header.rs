//! Mirror headers: an ingress copy made with `mirror_with_header` starts with the program's
//! mirror header; the egress parser tells it from its original by `eg_intr_md.mirror_type`
//! and the egress program rewrites it into a PFC pause frame built from what ingress put in
//! the header. Exact bytes and cycles, stepping and jumping; bad mirror headers are refused
//! naming the primitive.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::headers::internet_checksum;
use t2_pipeline::ir::{
    Action, Cmp, Condition, MatchKind, Operand, ParserState, Primitive, Program, ProgramBuilder,
    ProgramDrop, Stmt, Table,
};
use t2_pipeline::pfc::PfcFrame;
use t2_testbench::{Network, Probe, Stepping};
use t2sim::chip::{ChipCounters, ControlOp};
use t2sim::{Chip, MirrorSession};

const G100: u64 = 100_000_000_000;
const DST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SESSION: u64 = 7;

/// The 56 bytes after the mirror header of a copy cut to 60: a PFC frame's 34 bytes (`ctl`)
/// and 22 of padding (`pad`), in fields of at most 32 bits and in two headers, as a parser
/// state has 20 16-bit extractors.
const CTL: &[(&str, u16)] = &[
    ("dst_hi", 16),
    ("dst_lo", 32),
    ("src_hi", 16),
    ("src_lo", 32),
    ("ether_type", 16),
    ("opcode", 16),
    ("class_enable", 16),
    ("q0", 16),
    ("q1", 16),
    ("q2", 16),
    ("q3", 16),
    ("q4", 16),
    ("q5", 16),
    ("q6", 16),
    ("q7", 16),
];
/// The 22 bytes of padding after them.
const PAD: &[(&str, u16)] = &[
    ("pad0", 32),
    ("pad1", 32),
    ("pad2", 32),
    ("pad3", 32),
    ("pad4", 32),
    ("pad5", 16),
];

fn set(dst: &str, v: u64) -> Primitive {
    Primitive::set(dst, Operand::Const(v))
}

/// Ingress: host route to port 0, and every packet mirrored to session 7 with `mirror_md`
/// (kind 1, its ingress port, its class = TOS >> 5). Egress: a copy (`mirror_md` parsed)
/// becomes a PFC frame pausing its class, from a source MAC naming the port.
fn program() -> Program {
    let mut quanta = Action::new("pfc_quanta");
    for q in 0..8 {
        quanta = quanta.prim(set(&format!("ctl.q{q}"), 0xffff));
    }
    let mut pads = Action::new("pfc_pad").prim(Primitive::SetInvalid {
        header: "mirror_md".into(),
    });
    for p in 0..6 {
        pads = pads.prim(set(&format!("pad.pad{p}"), 0));
    }
    let mut b = ProgramBuilder::new("pfc_from_mirror")
        .header(
            "mirror_md",
            &[("kind", 8), ("pad", 7), ("port", 9), ("class", 8)],
        )
        .header("ctl", CTL)
        .header("pad", PAD)
        .parser(vec![
            ParserState::new("start")
                .select(&["eg_intr_md.mirror_type"], "parse_eth")
                .case(&[1], "parse_mirror"),
            ParserState::new("parse_mirror")
                .extract("mirror_md")
                .goto("parse_ctl"),
            ParserState::new("parse_ctl")
                .extract("ctl")
                .goto("parse_pad"),
            ParserState::new("parse_pad").extract("pad"),
            ParserState::new("parse_eth")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[0x0800], "parse_ipv4"),
            ParserState::new("parse_ipv4").extract("ipv4"),
        ])
        .action(
            Action::new("to_port")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                }),
        )
        .action(Action::new("discard").prim(Primitive::Drop {
            reason: ProgramDrop::NoRoute,
        }))
        .action(
            Action::new("mirror_pfc")
                .param("session", 8)
                .prim(Primitive::MirrorWithHeader {
                    session: Operand::param("session"),
                    header: "mirror_md".into(),
                })
                .prim(set("mirror_md.kind", 1))
                .prim(Primitive::set(
                    "mirror_md.port",
                    Operand::field("ig_intr_md.ingress_port"),
                ))
                .prim(Primitive::alu(
                    t2_pipeline::ir::AluOp::Shr,
                    "mirror_md.class",
                    Operand::field("ipv4.diffserv"),
                    Operand::Const(5),
                )),
        )
        .action(
            Action::new("pfc_addr")
                .prim(set("ctl.dst_hi", 0x0180))
                .prim(set("ctl.dst_lo", 0xc200_0001))
                .prim(set("ctl.src_hi", 0x0200))
                .prim(Primitive::set(
                    "ctl.src_lo",
                    Operand::field("mirror_md.port"),
                ))
                .prim(set("ctl.ether_type", 0x8808))
                .prim(set("ctl.opcode", 0x0101))
                .prim(Primitive::alu(
                    t2_pipeline::ir::AluOp::Shl,
                    "ctl.class_enable",
                    Operand::Const(1),
                    Operand::field("mirror_md.class"),
                )),
        )
        .action(quanta)
        .action(pads)
        .table(
            Table::new("fwd", MatchKind::Exact, &["ipv4.dst_addr"], 16)
                .action("to_port")
                .action("discard")
                .default_action("discard", &[])
                .entry(&[u32::from(DST) as u64], "to_port", &[8]),
        )
        .table(
            Table::new("mirror_all", MatchKind::Exact, &[], 0)
                .action("mirror_pfc")
                .default_action("mirror_pfc", &[SESSION]),
        );
    for (t, a) in [
        ("pfc_addr_t", "pfc_addr"),
        ("pfc_quanta_t", "pfc_quanta"),
        ("pfc_pad_t", "pfc_pad"),
    ] {
        b = b.table(
            Table::new(t, MatchKind::Exact, &[], 0)
                .action(a)
                .default_action(a, &[]),
        );
    }
    b.ingress(vec![Stmt::apply("fwd"), Stmt::apply("mirror_all")])
        .egress(vec![Stmt::if_(
            Condition::new("mirror_md.$valid", Cmp::Eq, Operand::Const(1)),
            vec![
                Stmt::apply("pfc_addr_t"),
                Stmt::apply("pfc_quanta_t"),
                Stmt::apply("pfc_pad_t"),
            ],
            Vec::new(),
        )])
        .build()
        .unwrap()
}

/// Pipe 0: port 0 to the receiver, port 1 to the monitor, port 2 from the sender.
fn chip() -> Chip {
    crate::common::pipe0_chip(&[(0, 0), (0, 2), (1, 0)], Vec::new(), program())
}

/// A UDP frame to `DST` with TOS `tos` (class `tos >> 5`), checksum fixed.
fn frame(tos: u8) -> Vec<u8> {
    let mut f = udp_frame(Ipv4Addr::new(10, 0, 1, 1), DST, 64, 100);
    crate::common::set_tos(&mut f, tos);
    f
}

struct Run {
    rx: Vec<(Cycle, Vec<u8>)>,
    copies: Vec<(Cycle, Vec<u8>)>,
    counters: ChipCounters,
}

fn run(stepping: Stepping) -> Run {
    let mut c = chip();
    // The session is set by the control plane at cycle 50, before the packet.
    let session = MirrorSession {
        port: 1,
        qid: 0,
        truncate_bytes: Some(60),
    };
    c.schedule(
        50,
        ControlOp::MirrorSession {
            id: SESSION as u8,
            session: Some(session),
        },
    )
    .unwrap();
    let mut net = Network::new(stepping);
    let chip = net.add(c);
    let sender = net.add(Probe::new(G100, vec![(100, frame(0x60))]));
    let rx = net.add(Probe::new(G100, Vec::new()));
    let monitor = net.add(Probe::new(G100, Vec::new()));
    net.link(sender, 0, chip, 2, 1).unwrap();
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(chip, 1, monitor, 0, 1).unwrap();
    while net.next_event().is_some() {
        net.advance();
    }
    let c = net.node::<Chip>(chip);
    assert_eq!(c.packets_inside(), 0);
    assert_eq!(c.mirror_copies_inside(), 0);
    assert_eq!(net.live_packets(), 0, "every packet and copy was freed");
    Run {
        rx: net.node::<Probe>(rx).received().to_vec(),
        copies: net.node::<Probe>(monitor).received().to_vec(),
        counters: c.counters().clone(),
    }
}

#[test]
fn the_mirror_header_is_the_first_header_of_the_graph() {
    let checked = t2_pipeline::check::check(&program()).unwrap();
    assert_eq!(checked.parser.headers[0].name, "mirror_md");
}

#[test]
fn egress_rewrites_an_ingress_copy_into_a_pfc_frame_from_its_mirror_header() {
    let c = chip();
    // The frame's last bit arrives at 101 (1-cycle link); both leave the ingress deparser
    // at 101 + I; the copy takes the ordinary path to port 1, 64 bytes with its FCS, one
    // cycle behind its original (the pipe's TM scheduler sends one descriptor a cycle).
    assert_eq!(frame(0x60).len() + 4, 146);
    let original_at = 101 + c.unloaded_latency(146, 0) + 1;
    let copy_at = 101 + c.unloaded_latency(64, 1) + 1 + 1;
    let stepped = run(Stepping::EveryCycle);
    // The original leaves unchanged: its egress parse took the Ethernet path.
    assert_eq!(stepped.rx, [(original_at, frame(0x60))]);
    // The copy: a PFC frame pausing class 3 (TOS 0x60 >> 5), from 02:00:00:00:00:10 (the
    // sender's device port, 16, in the source address), padded to 60 bytes.
    let mut pfc = Vec::new();
    PfcFrame {
        class_enable: bitvec::array::BitArray::new(1 << 3),
        quanta: [0xffff; 8],
    }
    .write([0x02, 0, 0, 0, 0, 16], &mut pfc);
    assert_eq!(pfc.len(), 60);
    assert_eq!(stepped.copies, [(copy_at, pfc)]);
    let k = &stepped.counters;
    assert_eq!(
        (k.received, k.mirrored, k.mirror_delivered, k.transmitted),
        (1, 1, 1, 2)
    );
    let jumped = run(Stepping::Jump);
    assert_eq!(jumped.rx, stepped.rx);
    assert_eq!(jumped.copies, stepped.copies);
    assert_eq!(jumped.counters, stepped.counters);
}

#[test]
fn a_mirror_header_the_parser_never_extracts_is_refused() {
    let mut p = program();
    p.actions[2].primitives[0] = Primitive::MirrorWithHeader {
        session: Operand::Const(1),
        header: "nope".into(),
    };
    let e = t2_pipeline::check::check(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        "actions[2] (mirror_pfc).primitives[0]: the parser graph never extracts header `nope`, so the egress could not parse it in front of the copy"
    );
    p.actions[2].primitives[0] = Primitive::MirrorWithHeader {
        session: Operand::Const(256),
        header: "mirror_md".into(),
    };
    let e = t2_pipeline::check::check(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        "actions[2] (mirror_pfc).primitives[0]: mirror session 256 is outside 0..=255"
    );
}

mod conservation {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

        /// Frames of random classes at random times (some to no route: dropped in ingress,
        /// they make no copy): on every cycle every packet and copy is inside,
        /// delivered or dropped; at the end the pool is empty and every copy left port 1 as
        /// a 60-byte PFC frame of its class.
        #[test]
        fn mirror_header_copies_are_conserved_on_every_cycle(
            frames in prop::collection::vec((0u64..400, 0u8..8, any::<bool>()), 1..30),
        ) {
            let mut c = chip();
            c.set_mirror_session(
                SESSION as u8,
                Some(MirrorSession { port: 1, qid: 0, truncate_bytes: Some(60) }),
            )
            .unwrap();
            let mut net = Network::new(Stepping::EveryCycle);
            let chip = net.add(c);
            let mut script: Vec<(Cycle, Vec<u8>)> = frames
                .iter()
                .map(|&(t, class, routed)| {
                    let mut f = frame(class << 5);
                    if !routed {
                        // 10.0.0.2: no route; fix the checksum again.
                        f[33] = 2;
                        f[24] = 0;
                        f[25] = 0;
                        let sum = internet_checksum(&f[14..34]);
                        f[24..26].copy_from_slice(&sum.to_be_bytes());
                    }
                    (100 + t, f)
                })
                .collect();
            script.sort_by_key(|e| e.0);
            script.dedup_by_key(|e| e.0);
            let sent = script.len() as u64;
            let routed: Vec<&(Cycle, Vec<u8>)> = script.iter().filter(|(_, f)| f[33] == 1).collect();
            let copies = routed.len() as u64;
            let mut classes: Vec<u8> = routed.iter().map(|(_, f)| f[15] >> 5).collect();
            let sender = net.add(Probe::new(G100, script));
            let rx = net.add(Probe::new(G100, Vec::new()));
            let monitor = net.add(Probe::new(G100, Vec::new()));
            net.link(sender, 0, chip, 2, 1).unwrap();
            net.link(chip, 0, rx, 0, 1).unwrap();
            net.link(chip, 1, monitor, 0, 1).unwrap();
            while net.next_event().is_some() {
                net.advance();
                let c = net.node::<Chip>(chip);
                let k = c.counters();
                prop_assert_eq!(
                    k.received + k.mirrored,
                    k.transmitted + k.dropped() + c.packets_inside()
                );
                let copy_drops: u64 = k.mirror_drops.values().sum();
                prop_assert_eq!(
                    k.mirrored,
                    k.mirror_delivered + copy_drops + c.mirror_copies_inside()
                );
            }
            prop_assert_eq!(net.live_packets(), 0);
            let k = net.node::<Chip>(chip).counters().clone();
            prop_assert_eq!((k.received, k.mirrored, k.mirror_delivered), (sent, copies, copies));
            prop_assert_eq!(k.dropped(), sent - copies);
            let mut got: Vec<u8> = net
                .node::<Probe>(monitor)
                .received()
                .iter()
                .map(|(_, b)| {
                    let pfc = PfcFrame::parse(b).expect("a PFC frame");
                    assert_eq!(b.len(), 60);
                    pfc.class_enable.first_one().expect("a class is enabled") as u8
                })
                .collect();
            got.sort();
            classes.sort();
            prop_assert_eq!(got, classes);
        }
    }
}
