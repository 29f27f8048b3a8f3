//! A program parses received control frames and acts on them: a BFC pause bitmap arriving on
//! a port becomes an AFC pause (bit set) or resume (bit clear) of that port's queue, from the
//! documented cycle (deparser exit + `afc_latency_cycles`), stepping and jumping alike.

use arbitrary_int::{u15, u2, u4, u7};
use t2_clock::Cycle;
use t2_pipeline::ir::{
    Action, AluOp, Cmp, Condition, MatchKind, Operand, ParserState, Primitive, Program,
    ProgramBuilder, ProgramDrop, Stmt, Table,
};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::schemes::bfc::wire::BfcPause;
use t2sim::{AfcMessage, Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
/// The upstream queue the bitmap's bit names, and the local queue it maps to.
const QUEUE: usize = 5;

/// Parses BFC pause frames (the first 64 bits of the bitmap); for a frame arriving on a port
/// with an entry in `bfc_bit`, takes its bit `QUEUE` (`w0 >> (31 - QUEUE) & 1`) into the
/// credit of the AFC word the entry's `base` addresses, and consumes the frame.
fn program(in_port: u16, base: u32) -> Program {
    ProgramBuilder::new("bfc_to_afc")
        .header("bfc", &[("subtype", 16), ("w0", 32), ("w1", 32)])
        .metadata("shifted", 32)
        .metadata("bit", 32)
        .parser(vec![
            ParserState::new("start")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[0x88b5], "parse_bfc"),
            ParserState::new("parse_bfc").extract("bfc"),
        ])
        .action(Action::new("pick").param("shift", 5).prim(Primitive::alu(
            AluOp::Shr,
            "shifted",
            Operand::field("bfc.w0"),
            Operand::param("shift"),
        )))
        .action(Action::new("mask").prim(Primitive::alu(
            AluOp::And,
            "bit",
            Operand::field("shifted"),
            Operand::Const(1),
        )))
        .action(
            Action::new("afc")
                .param("base", 32)
                .prim(Primitive::alu(
                    AluOp::Or,
                    "ig_intr_dprsr_md.adv_flow_ctl",
                    Operand::field("bit"),
                    Operand::param("base"),
                ))
                .prim(Primitive::Drop {
                    reason: ProgramDrop::NotIpv4,
                }),
        )
        .action(Action::new("none"))
        .table(
            Table::new(
                "bfc_bit",
                MatchKind::Exact,
                &["ig_intr_md.ingress_port"],
                16,
            )
            .action("pick")
            .action("none")
            .default_action("none", &[])
            .entry(&[in_port as u64], "pick", &[31 - QUEUE as u64]),
        )
        .table(
            Table::new("bfc_mask", MatchKind::Exact, &[], 0)
                .action("mask")
                .default_action("mask", &[]),
        )
        .table(
            Table::new(
                "bfc_afc",
                MatchKind::Exact,
                &["ig_intr_md.ingress_port"],
                16,
            )
            .action("afc")
            .action("none")
            .default_action("none", &[])
            .entry(&[in_port as u64], "afc", &[base as u64]),
        )
        .ingress(vec![Stmt::if_(
            Condition::new("bfc.$valid", Cmp::Eq, Operand::Const(1)),
            vec![
                Stmt::apply("bfc_bit"),
                Stmt::apply("bfc_mask"),
                Stmt::apply("bfc_afc"),
            ],
            Vec::new(),
        )])
        .build()
        .unwrap()
}

fn config(program: Option<Program>) -> ChipConfig {
    ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![PortSpec {
            pipe: 0,
            mac: 0,
            channel: 0,
            bps: G100,
        }],
        routes: Vec::new(),
        program,
    }
}

/// Port 0's queue 5: its AFC word with credit 0, and the chip running the program.
fn chip() -> Chip {
    let plain = Chip::new("chip", &config(None)).unwrap();
    let (pipe, mac, mac_qid) = plain.afc_address(0, QUEUE).unwrap();
    assert_eq!((pipe, mac, mac_qid), (0, 1, 5));
    let base = AfcMessage {
        pipe: u2::new(pipe),
        mac: u4::new(mac),
        mac_qid: u7::new(mac_qid),
        credit: u15::new(0),
    }
    .encode();
    Chip::new("chip", &config(Some(program(plain.dev_port(0), base)))).unwrap()
}

fn bitmap(paused: &[usize]) -> Vec<u8> {
    let mut b = Vec::new();
    BfcPause::of(paused).write([2, 0, 0, 0, 0, 1], &mut b);
    b
}

/// BFC frames reach port 0 at 101 (queue 5 and 40 paused) and at 2001 (only 40): the
/// cycles in which port 0's queue 5 is paused, by sampling every cycle up to 4000.
fn run(stepping: Stepping) -> (Vec<Cycle>, t2sim::chip::ChipCounters) {
    let mut net = Network::new(stepping);
    let chip = net.add(chip());
    let upstream = net.add(Probe::new(
        G100,
        vec![(100, bitmap(&[QUEUE, 40])), (2000, bitmap(&[40]))],
    ));
    net.link(upstream, 0, chip, 0, 1).unwrap();
    let mut paused = Vec::new();
    let mut t = 0;
    while t < 4000 {
        t += 1;
        net.run_until(t);
        if net.node::<Chip>(chip).tm().queue_stats(0, QUEUE).paused {
            paused.push(t);
        }
    }
    (paused, net.node::<Chip>(chip).counters().clone())
}

#[test]
fn a_received_bfc_bitmap_pauses_and_resumes_the_queue_it_names() {
    let c = chip();
    let i = c.ingress_latency();
    let afc = c.params().tm.afc_latency_cycles as Cycle;
    // Each frame leaves the ingress deparser I cycles after it arrives; its AFC word takes
    // effect afc_latency_cycles later: paused from 101 + I + 100 until 2001 + I + 100.
    let (from, to) = (101 + i + afc, 2001 + i + afc);
    let (stepped, counters) = run(Stepping::EveryCycle);
    assert_eq!(stepped, (from..to).collect::<Vec<_>>());
    assert_eq!((counters.afc_requests, counters.afc_unaddressed), (2, 0));
    assert_eq!((counters.received, counters.dropped()), (2, 2));
    let (jumped, jumped_counters) = run(Stepping::Jump);
    assert_eq!(jumped, stepped);
    assert_eq!(jumped_counters, counters);
}
