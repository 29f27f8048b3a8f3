//! Resubmit: the ingress program sends a packet through the ingress once more, as it came in,
//! with a resubmit header its second pass parses; exactly one more ingress pass (I + 1
//! cycles later out of the port), no TM visit in between, one ingress slot taken from the
//! ports; a second pass is not resubmitted again; errors name the primitive or table.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::ir::{
    Action, Cmp, Condition, MatchKind, Operand, ParserState, Primitive, Program, ProgramBuilder,
    ProgramDrop, Stmt, Table,
};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::chip::ChipCounters;
use t2sim::Chip;

const G100: u64 = 100_000_000_000;
const DST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
/// Its second pass asks to be resubmitted again.
const AGAIN: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// First pass (`resubmit_flag` 0): `pick` chooses the egress port into `resub_md`, lowers
/// the TTL to 1 (discarded by the resubmit) and resubmits. Second pass: `second` sends the
/// packet to the port `resub_md` carries and removes the header.
fn program() -> Program {
    let resub = |name: &str| {
        Action::new(name)
            .param("port", 9)
            .prim(Primitive::Resubmit {
                header: Some("resub_md".into()),
            })
            .prim(Primitive::set("resub_md.port", Operand::param("port")))
            .prim(Primitive::set("ipv4.ttl", Operand::Const(1)))
    };
    let out = |name: &str, again: bool| {
        let a = Action::new(name)
            .prim(Primitive::SetEgressPort {
                port: Operand::field("resub_md.port"),
            })
            .prim(Primitive::SetInvalid {
                header: "resub_md".into(),
            });
        if again {
            a.prim(Primitive::Resubmit { header: None })
        } else {
            a
        }
    };
    ProgramBuilder::new("resubmit")
        .header("resub_md", &[("pad", 7), ("port", 9)])
        .parser(vec![
            ParserState::new("start")
                .select(&["ig_intr_md.resubmit_flag"], "parse_eth")
                .case(&[1], "parse_resub"),
            ParserState::new("parse_resub")
                .extract("resub_md")
                .goto("parse_eth"),
            ParserState::new("parse_eth")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[0x0800], "parse_ipv4"),
            ParserState::new("parse_ipv4").extract("ipv4"),
        ])
        .action(resub("resub"))
        .action(out("out", false))
        .action(out("out_again", true))
        .action(Action::new("discard").prim(Primitive::Drop {
            reason: ProgramDrop::NoRoute,
        }))
        .table(
            Table::new("pick", MatchKind::Exact, &["ipv4.dst_addr"], 16)
                .action("resub")
                .action("discard")
                .default_action("discard", &[])
                .entry(&[u32::from(DST) as u64], "resub", &[8])
                .entry(&[u32::from(AGAIN) as u64], "resub", &[8]),
        )
        .table(
            Table::new("second", MatchKind::Exact, &["ipv4.dst_addr"], 16)
                .action("out")
                .action("out_again")
                .action("discard")
                .default_action("discard", &[])
                .entry(&[u32::from(DST) as u64], "out", &[])
                .entry(&[u32::from(AGAIN) as u64], "out_again", &[]),
        )
        .ingress(vec![Stmt::if_(
            Condition::new("ig_intr_md.resubmit_flag", Cmp::Eq, Operand::Const(0)),
            vec![Stmt::apply("pick")],
            vec![Stmt::apply("second")],
        )])
        .build()
        .unwrap()
}

/// Pipe 0: port 0 out (device port 8), ports 1 and 2 in.
fn chip() -> Chip {
    crate::common::pipe0_chip(&[(0, 0), (1, 0), (2, 0)], Vec::new(), program())
}

fn frame(dst: Ipv4Addr) -> Vec<u8> {
    udp_frame(Ipv4Addr::new(10, 0, 1, 1), dst, 64, 100)
}

struct Run {
    rx: Vec<(Cycle, Vec<u8>)>,
    /// Cycles in which pipe 0's ingress took a packet.
    entries: Vec<Cycle>,
    counters: ChipCounters,
}

/// `frames`: (cycle the frame's last bit reaches the chip, input port 1 or 2, destination).
fn run(frames: &[(Cycle, usize, Ipv4Addr)], stepping: Stepping) -> Run {
    let mut net = Network::new(stepping);
    let chip = net.add(chip());
    let mut scripts: [Vec<(Cycle, Vec<u8>)>; 2] = Default::default();
    for &(a, port, dst) in frames {
        scripts[port - 1].push((a - 1, frame(dst)));
    }
    for (k, script) in scripts.into_iter().enumerate() {
        let s = net.add(Probe::new(G100, script));
        net.link(s, 0, chip, 1 + k, 1).unwrap();
    }
    let rx = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, rx, 0, 1).unwrap();
    let mut entries = Vec::new();
    let mut entered = 0;
    while net.next_event().is_some() {
        net.advance();
        let c = net.node::<Chip>(chip);
        let k = c.counters();
        assert_eq!(k.received, k.transmitted + k.dropped() + c.packets_inside());
        let e = c.pipe_entered(0).0;
        if e != entered {
            entries.push(net.now());
            entered = e;
        }
    }
    assert_eq!(net.live_packets(), 0);
    Run {
        rx: net.node::<Probe>(rx).received().to_vec(),
        entries,
        counters: net.node::<Chip>(chip).counters().clone(),
    }
}

#[test]
fn a_resubmitted_packet_takes_exactly_one_more_ingress_pass() {
    let c = chip();
    let i = c.ingress_latency();
    let latency = c.unloaded_latency(146, 0);
    assert_eq!(frame(DST).len() + 4, 146);
    // Arrives at 101, enters at 101, leaves the ingress deparser at 101 + I, enters again
    // at 101 + I + 1 (no TM visit), then the port-to-port path.
    let stepped = run(&[(101, 1, DST)], Stepping::EveryCycle);
    assert_eq!(stepped.entries, [101, 101 + i + 1]);
    // Out exactly as it came in (the first pass's TTL of 1 was discarded; the second pass
    // removed the resubmit header).
    assert_eq!(stepped.rx, [(101 + i + 1 + latency + 1, frame(DST))]);
    let k = &stepped.counters;
    assert_eq!((k.received, k.resubmitted, k.transmitted), (1, 1, 1));
    assert_eq!(k.resubmit_refused, 0);
    let jumped = run(&[(101, 1, DST)], Stepping::Jump);
    assert_eq!(jumped.rx, stepped.rx);
    assert_eq!(jumped.counters, stepped.counters);
}

#[test]
fn the_second_pass_takes_an_ingress_slot_ahead_of_the_ports() {
    let i = chip().ingress_latency();
    // Another frame reaches port 2 in the cycle the first one's second pass enters: it
    // waits one cycle.
    let frames = [(101, 1, DST), (101 + i + 1, 2, AGAIN)];
    let r = run(&frames, Stepping::EveryCycle);
    assert_eq!(r.entries, [101, 101 + i + 1, 101 + i + 2, 101 + 2 * i + 3]);
    // AGAIN's second pass asks to resubmit again: refused, it is forwarded.
    let k = &r.counters;
    assert_eq!(
        (k.resubmitted, k.resubmit_refused, k.transmitted),
        (2, 1, 2)
    );
    assert_eq!(r.rx.len(), 2);
    assert_eq!(r.rx[1].1, frame(AGAIN));
    let jumped = run(&frames, Stepping::Jump);
    assert_eq!(jumped.rx, r.rx);
    assert_eq!(jumped.counters, r.counters);
}

#[test]
fn bad_resubmits_are_refused_naming_where() {
    let check = |p: &Program| t2_pipeline::check::check(p).unwrap_err().to_string();
    let mut p = program();
    p.actions[0].primitives[0] = Primitive::Resubmit {
        header: Some("nope".into()),
    };
    assert_eq!(
        check(&p),
        "actions[0] (resub).primitives[0]: the parser graph never extracts header `nope`, so the second pass could not parse it"
    );
    let mut p = program();
    p.headers[0] = t2_pipeline::ir::HeaderType::new(
        "resub_md",
        &[
            ("pad", 7),
            ("port", 9),
            ("a", 32),
            ("b", 32),
            ("c", 32),
            ("d", 32),
        ],
    );
    assert_eq!(
        check(&p),
        "actions[0] (resub).primitives[0]: resubmit header `resub_md` is 18 bytes; Tofino2 resubmits at most 16"
    );
    // In egress.
    let mut p = program();
    p.egress = vec![Stmt::apply("second")];
    p.ingress = vec![Stmt::apply("pick")];
    assert_eq!(
        check(&p),
        "tables[1] (second): action `out_again` uses `resubmit`, which only the ingress deparser honours, but the table is applied in egress"
    );
    // Nine kinds of resubmit: eight headers and none.
    let mut p = program();
    for k in 0..8 {
        p.headers.push(t2_pipeline::ir::HeaderType::new(
            &format!("h{k}"),
            &[("x", 8)],
        ));
        p.actions
            .push(Action::new(&format!("r{k}")).prim(Primitive::Resubmit {
                header: Some(format!("h{k}")),
            }));
    }
    // The graph extracts every h_k after the resubmit header.
    let graph = p.parser.as_mut().unwrap();
    graph.states[1] = ParserState::new("parse_resub")
        .extract("resub_md")
        .goto("parse_h0");
    for k in 0..8 {
        let next = if k == 7 {
            "parse_eth".to_string()
        } else {
            format!("parse_h{}", k + 1)
        };
        graph.states.push(
            ParserState::new(&format!("parse_h{k}"))
                .extract(&format!("h{k}"))
                .goto(&next),
        );
    }
    p.actions
        .push(Action::new("r_none").prim(Primitive::Resubmit { header: None }));
    let n = p.actions.len() - 1;
    // resub + out_again already give 2 kinds (resub_md, none); h0..h6 make 9 at r6.
    assert_eq!(
        check(&p),
        "actions[10] (r6): makes the program's resubmit kinds (headers, or none) 9; Tofino2 has 8 resubmit types"
    );
    assert_eq!(n, 12);
}
