//! QCN CNMs built with mirroring: the egress program mirrors each outgoing data packet with a
//! mirror header (its feedback and MSDU length) to a session cut to 82 bytes; the copy's
//! egress pass (its parser selecting on `eg_intr_md.mirror_type`) turns it into an 802.1Qau
//! CNM to the sampled frame's source, carrying the sampled frame's destination and first 64
//! MSDU bytes. Exact bytes (the `t2_pipeline::qcn` codec's) and cycles, stepping and jumping.

mod common;

use common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::ir::{
    Action, AluOp, Cmp, Condition, MatchKind, Operand, ParserState, Primitive, Program,
    ProgramBuilder, Stmt, Table,
};
use t2_pipeline::qcn::Cnm;
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, MirrorSession};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const SESSION: u8 = 9;
const FB: u64 = 20;
const CP: [u8; 6] = [2, 0, 0, 0, 0xcc, 0x01];

fn set(dst: &str, v: u64) -> Primitive {
    Primitive::set(dst, Operand::Const(v))
}

fn copy(dst: &str, src: &str) -> Primitive {
    Primitive::set(dst, Operand::field(src))
}

fn program() -> Program {
    // Host routes (`ipv4_host`, `forward`) from the DCTCP program, plus the CNM machinery.
    let base = t2sim::schemes::dctcp::program(400);
    let mut b = ProgramBuilder::new("cnm")
        .header("mirror_md", &[("fb", 8), ("msdu_len", 16), ("pad", 8)])
        .header(
            "orig_eth",
            &[
                ("dst_hi", 16),
                ("dst_lo", 32),
                ("src_hi", 16),
                ("src_lo", 32),
                ("ether_type", 16),
            ],
        )
        .header(
            "cnm",
            &[
                ("fb", 16),
                ("cpid_hi", 32),
                ("cpid_lo", 32),
                ("q_offset", 16),
                ("q_delta", 16),
                ("prio", 16),
                ("edst_hi", 16),
                ("edst_lo", 32),
                ("msdu_len", 16),
            ],
        )
        .parser(vec![
            ParserState::new("start")
                .select(&["eg_intr_md.mirror_type"], "parse_eth")
                .case(&[1], "parse_mirror"),
            ParserState::new("parse_mirror")
                .extract("mirror_md")
                .extract("orig_eth")
                .select(&["orig_eth.ether_type"], "accept")
                .case(&[0x22e9], "parse_cnm"),
            ParserState::new("parse_cnm").extract("cnm"),
            ParserState::new("parse_eth")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[0x0800], "parse_ipv4"),
            ParserState::new("parse_ipv4").extract("ipv4"),
        ])
        .action(
            Action::new("sample")
                .param("session", 8)
                .param("fb", 6)
                .prim(Primitive::MirrorWithHeader {
                    session: Operand::param("session"),
                    header: "mirror_md".into(),
                })
                .prim(Primitive::set("mirror_md.fb", Operand::param("fb")))
                .prim(Primitive::alu(
                    AluOp::Sub,
                    "mirror_md.msdu_len",
                    Operand::field("eg_intr_md.pkt_length"),
                    Operand::Const(18),
                )),
        )
        .action(
            Action::new("cnm_body")
                .prim(Primitive::SetValid {
                    header: "cnm".into(),
                })
                .prim(copy("cnm.fb", "mirror_md.fb"))
                .prim(set("cnm.cpid_hi", 0))
                .prim(copy("cnm.cpid_lo", "eg_intr_md.egress_port"))
                .prim(set("cnm.q_offset", 0))
                .prim(set("cnm.q_delta", 0))
                .prim(set("cnm.prio", 0))
                .prim(copy("cnm.edst_hi", "orig_eth.dst_hi"))
                .prim(copy("cnm.edst_lo", "orig_eth.dst_lo"))
                .prim(copy("cnm.msdu_len", "mirror_md.msdu_len")),
        )
        .action(
            Action::new("cnm_eth")
                .prim(Primitive::SetInvalid {
                    header: "mirror_md".into(),
                })
                .prim(copy("orig_eth.dst_hi", "orig_eth.src_hi"))
                .prim(copy("orig_eth.dst_lo", "orig_eth.src_lo"))
                .prim(set("orig_eth.src_hi", 0x0200))
                .prim(set("orig_eth.src_lo", 0x0000_cc01))
                .prim(set("orig_eth.ether_type", 0x22e9)),
        )
        .table(
            Table::new("sample_t", MatchKind::Exact, &[], 0)
                .action("sample")
                .default_action("sample", &[SESSION as u64, FB]),
        )
        .table(
            Table::new("cnm_body_t", MatchKind::Exact, &[], 0)
                .action("cnm_body")
                .default_action("cnm_body", &[]),
        )
        .table(
            Table::new("cnm_eth_t", MatchKind::Exact, &[], 0)
                .action("cnm_eth")
                .default_action("cnm_eth", &[]),
        )
        .build_unchecked();
    b.metadata.extend(base.metadata);
    b.hashes.extend(base.hashes);
    b.registers.extend(base.registers);
    b.register_actions.extend(base.register_actions);
    b.actions.extend(base.actions);
    b.tables.extend(base.tables);
    b.ingress = base.ingress;
    // Originals: the DCTCP egress (ECN marking), then sampling.
    let mut originals = base.egress;
    originals.push(Stmt::apply("sample_t"));
    b.egress = vec![Stmt::if_(
        Condition::new("mirror_md.$valid", Cmp::Eq, Operand::Const(1)),
        vec![Stmt::apply("cnm_body_t"), Stmt::apply("cnm_eth_t")],
        originals,
    )];
    b
}

fn chip() -> Chip {
    let mut c = common::pipe0_chip(&[(0, 0), (0, 2), (1, 0)], vec![(RECEIVER, 0)], program());
    // 4 bytes of mirror header, 14 of Ethernet, 64 of MSDU.
    c.set_mirror_session(
        SESSION,
        Some(MirrorSession {
            port: 1,
            qid: 0,
            truncate_bytes: Some(82),
        }),
    )
    .unwrap();
    c
}

fn frame() -> Vec<u8> {
    udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 64, 1000)
}

/// Frames a probe received: (cycle, bytes).
type Frames = Vec<(Cycle, Vec<u8>)>;

/// What the receiver and the monitor got.
fn run(stepping: Stepping) -> (Frames, Frames) {
    let mut net = Network::new(stepping);
    let chip = net.add(chip());
    let sender = net.add(Probe::new(G100, vec![(100, frame())]));
    let rx = net.add(Probe::new(G100, Vec::new()));
    let monitor = net.add(Probe::new(G100, Vec::new()));
    net.link(sender, 0, chip, 2, 1).unwrap();
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(chip, 1, monitor, 0, 1).unwrap();
    while net.next_event().is_some() {
        net.step();
    }
    assert_eq!(net.pool().live(), 0);
    (
        net.node::<Probe>(rx).received().to_vec(),
        net.node::<Probe>(monitor).received().to_vec(),
    )
}

#[test]
fn an_egress_copy_becomes_a_cnm_to_the_sampled_frames_source() {
    let c = chip();
    let (i, e) = (c.ingress_latency(), c.egress_latency());
    let q = c.params().tm.queue_latency_cycles as Cycle;
    let line = LineRate::new(c.params().clock(), G100);
    let (rx, cnms) = run(Stepping::EveryCycle);
    // The original went out with its TTL lowered by the routes' `forward`.
    assert_eq!(rx.len(), 1);
    let sent = &rx[0].1;
    assert_eq!(sent.len(), frame().len());
    // The CNM: about the frame as it left (the copy is of the outgoing packet), fb 20, CPID
    // the monitor's device port (10), to the sampled frame's source from the CP's address.
    let (cnm, to) = Cnm::about(sent, FB as u8, 10, 0, 0).unwrap();
    assert_eq!(cnm.encap_msdu_len as usize, sent.len() - 14);
    assert_eq!(cnm.encap_msdu.len(), 64);
    let mut want = Vec::new();
    cnm.write(to, CP, &mut want).unwrap();
    assert_eq!(want.len(), 38 + 64);
    // The original leaves the egress deparser at X = 101 + I + 1 + Q + 1 + E; the copy is
    // admitted at X + 1 and leaves port 1 after the ordinary path, 106 bytes with its FCS.
    let x = 101 + i + 1 + q + 1 + e;
    let at = x + 1 + q + 1 + e + 1 + line.serialization_cycles_ceil(106) + 1;
    assert_eq!(cnms, [(at, want)]);
    let (jrx, jcnms) = run(Stepping::Jump);
    assert_eq!(jcnms, cnms);
    assert_eq!(jrx, rx);
}
