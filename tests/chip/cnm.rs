//! QCN CNMs built with mirroring: the egress program mirrors each outgoing data packet with a
//! mirror header (its feedback and MSDU length) to a session cut to 82 bytes; the copy's
//! egress pass (its parser selecting on `eg_intr_md.mirror_type`) turns it into an 802.1Qau
//! CNM to the sampled frame's source, carrying the sampled frame's destination and first 64
//! MSDU bytes. Exact bytes (the `Cnm` codec's, `src/schemes/mice_elephant/qcn/cnm.rs`) and cycles, stepping and jumping.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::ir::{
    Cmp, Condition, MatchKind, Operand, ParserState, Program, ProgramBuilder, Stmt, Table,
};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::schemes::mice_elephant::qcn::blocks::{
    cnm_actions, cnm_copy_headers, cnm_copy_parser, cnm_header,
};
use t2sim::schemes::mice_elephant::qcn::cnm::Cnm;
use t2sim::{Chip, MirrorSession};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const SESSION: u8 = 9;
const FB: u64 = 20;
const CP: [u8; 6] = [2, 0, 0, 0, 0xcc, 0x01];

fn program() -> Program {
    // Host routes (`ipv4_host`, `forward`) from the DCTCP program, plus the CNM machinery.
    let base = t2sim::schemes::dctcp::program(400);
    let b = cnm_header(cnm_copy_headers(ProgramBuilder::new("cnm"))).parser(
        cnm_copy_parser()
            .into_iter()
            .chain([
                ParserState::new("parse_cnm").extract("cnm"),
                ParserState::new("parse_eth")
                    .extract("ethernet")
                    .select(&["ethernet.ether_type"], "accept")
                    .case(&[0x0800], "parse_ipv4"),
                ParserState::new("parse_ipv4").extract("ipv4"),
            ])
            .collect(),
    );
    let mut b = cnm_actions(b, "sample")
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
    let mut c =
        crate::common::pipe0_chip(&[(0, 0), (0, 2), (1, 0)], vec![(RECEIVER, 0)], program());
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
        net.advance();
    }
    assert_eq!(net.live_packets(), 0);
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
