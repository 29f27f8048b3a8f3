//! Digests: a packet leaving the ingress deparser with `ig_intr_dprsr_md.digest_type`
//! naming one of the program's digests makes the chip record it (cycle, pipe, the fields
//! as the packet leaves), in the deparser's cycle, whatever becomes of the packet; the
//! records and their count are the same stepping every cycle or jumping; bad digests are
//! refused naming the digest.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::ir::{
    Action, AluOp, Digest, DigestField, MatchKind, Operand, Primitive, Program, ProgramBuilder,
    ProgramDrop, Stmt, Table,
};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::chip::DigestRecord;
use t2sim::Chip;

const G100: u64 = 100_000_000_000;
const SRC: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
/// Forwarded out of port 0 (device port 8) with digest `seen` (type 1).
const FORWARDED: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
/// Dropped with digest `refused` (type 2).
const DROPPED: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

fn digest(name: &str, t: u8, fields: &[(&str, &str)]) -> Digest {
    Digest {
        name: name.into(),
        digest_type: t,
        fields: fields
            .iter()
            .map(|(n, f)| DigestField {
                name: (*n).into(),
                field: (*f).into(),
            })
            .collect(),
    }
}

/// `t` decrements the TTL of what it forwards, so `seen` records the TTL as it leaves.
fn program() -> Program {
    let ask = |t: u64| Primitive::set("ig_intr_dprsr_md.digest_type", Operand::Const(t));
    let mut p = ProgramBuilder::new("digests")
        .action(
            Action::new("forward")
                .prim(Primitive::SetEgressPort {
                    port: Operand::Const(8),
                })
                .prim(Primitive::alu(
                    AluOp::Sub,
                    "ipv4.ttl",
                    Operand::field("ipv4.ttl"),
                    Operand::Const(1),
                ))
                .prim(ask(1)),
        )
        .action(
            Action::new("refuse")
                .prim(Primitive::Drop {
                    reason: ProgramDrop::NoRoute,
                })
                .prim(ask(2)),
        )
        .table(
            Table::new("t", MatchKind::Exact, &["ipv4.dst_addr"], 16)
                .action("forward")
                .action("refuse")
                .default_action("refuse", &[])
                .entry(&[u32::from(FORWARDED) as u64], "forward", &[]),
        )
        .ingress(vec![Stmt::apply("t")])
        .build()
        .unwrap();
    p.digests = vec![
        digest(
            "seen",
            1,
            &[
                ("src", "ipv4.src_addr"),
                ("ttl", "ipv4.ttl"),
                ("port", "ig_intr_md.ingress_port"),
            ],
        ),
        digest("refused", 2, &[("dst", "ipv4.dst_addr")]),
    ];
    p
}

/// Frames to `dsts` reaching port 1 (device port 16) 200 cycles apart from cycle 101: the
/// digests recorded, the chip's count of them, and the packets out of port 0.
fn run(dsts: &[Ipv4Addr], stepping: Stepping) -> (Vec<DigestRecord>, u64, usize) {
    let mut net = Network::new(stepping);
    let chip = net.add(crate::common::pipe0_chip(
        &[(0, 0), (1, 0)],
        Vec::new(),
        program(),
    ));
    let script: Vec<(Cycle, Vec<u8>)> = dsts
        .iter()
        .enumerate()
        .map(|(k, &d)| (100 + 200 * k as Cycle, udp_frame(SRC, d, 64, 100)))
        .collect();
    let tx = net.add(Probe::new(G100, script));
    net.link(tx, 0, chip, 1, 1).unwrap();
    let rx = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, rx, 0, 1).unwrap();
    while net.next_event().is_some() {
        net.advance();
    }
    let c = net.node::<Chip>(chip);
    (
        c.digests().to_vec(),
        c.counters().digests,
        net.node::<Probe>(rx).received().len(),
    )
}

#[test]
fn each_packet_leaving_the_ingress_deparser_with_a_digest_type_is_recorded() {
    let i = crate::common::pipe0_chip(&[(0, 0), (1, 0)], Vec::new(), program()).ingress_latency();
    let (got, count, out) = run(&[FORWARDED, DROPPED, FORWARDED], Stepping::EveryCycle);
    let src = u32::from(SRC) as u64;
    // Each leaves the ingress deparser I cycles after it entered (the cycle its last bit
    // arrived); the dropped one sends its digest too.
    assert_eq!(
        got,
        vec![
            DigestRecord {
                cycle: 101 + i,
                pipe: 0,
                digest: 0,
                values: vec![src, 63, 16],
            },
            DigestRecord {
                cycle: 301 + i,
                pipe: 0,
                digest: 1,
                values: vec![u32::from(DROPPED) as u64],
            },
            DigestRecord {
                cycle: 501 + i,
                pipe: 0,
                digest: 0,
                values: vec![src, 63, 16],
            },
        ]
    );
    assert_eq!((count, out), (3, 2));
    assert_eq!(
        run(&[FORWARDED, DROPPED, FORWARDED], Stepping::Jump),
        (got, count, out)
    );
}

#[test]
fn the_control_plane_takes_the_records_and_the_count_stays() {
    let mut c = crate::common::pipe0_chip(&[(0, 0), (1, 0)], Vec::new(), program());
    assert_eq!(
        c.digest_names(),
        [
            (
                "seen".to_string(),
                vec!["src".into(), "ttl".into(), "port".into()]
            ),
            ("refused".to_string(), vec!["dst".into()]),
        ]
    );
    assert!(c.take_digests().is_empty());
    assert_eq!(c.counters().digests, 0);
}

/// A change to [`program`] that makes it bad.
type Change = fn(&mut Program);

#[test]
fn bad_digests_are_refused_naming_the_digest() {
    let cases: [(Change, &str); 4] = [
        (
            |p| p.digests[0].digest_type = 0,
            "digests[0] (seen): digest type 0 is outside 1..=7 (`ig_intr_dprsr_md.digest_type` is 3 bits, 0 sends no digest)",
        ),
        (
            |p| p.digests[1].digest_type = 1,
            "digests[1] (refused): digest `seen` already has type 1 or this name; each digest has a name and a type of its own",
        ),
        (
            |p| p.digests[1].fields[0].field = "eg_intr_md.deq_qdepth".into(),
            "digests[1] (refused).fields[0]: `eg_intr_md.deq_qdepth` is egress metadata; the ingress deparser sends digests",
        ),
        (
            |p| p.digests[1].fields[0].field = "ipv4.nope".into(),
            "digests[1] (refused).fields[0]: unknown field `ipv4.nope`",
        ),
    ];
    for (change, want) in cases {
        let mut p = program();
        change(&mut p);
        let e = t2_pipeline::check::check(&p).unwrap_err();
        assert_eq!(e.to_string(), want);
    }
}
