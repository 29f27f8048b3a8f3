//! The runtime control plane: table entries added, modified and deleted (per pipe or in
//! every pipe) and register cells written at a chosen cycle are seen by exactly the packets
//! that reach the table's stage from that cycle on; registers read back after a run; bad
//! operations are refused naming what and why; jumping gives what stepping gives.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::ir::{
    Action, ActionCall, Entry, KeyValue, MatchKind, Operand, Primitive, Program, ProgramBuilder,
    ProgramDrop, RegisterAction, SaluOp, SaluOperand, SaluOutputValue, SaluUpdate, Stmt, Table,
};
use t2_pipeline::{DropReason, Gress};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::chip::{ChipCounters, ControlOp};
use t2sim::{Chip, ChipConfig, ChipDrop, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const DST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const OTHER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// `fwd` (exact on the destination, empty at first; default: drop with no_route) and
/// `stamp` (every packet adds 1 to cell 0 of `counter` and carries the new value in its IPv4
/// identification), both in ingress stage 0.
fn program() -> Program {
    ProgramBuilder::new("runtime")
        .register("counter", 32, 4)
        .register_action(
            RegisterAction::new("count", "counter")
                .update(SaluUpdate::new(
                    SaluOp::Add,
                    SaluOperand::Cell,
                    SaluOperand::Const(1),
                ))
                .output("ipv4.identification", SaluOutputValue::New),
        )
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
        .action(Action::new("stamp").prim(Primitive::Execute {
            register_action: "count".into(),
            index: Operand::Const(0),
        }))
        .table(
            Table::new("fwd", MatchKind::Exact, &["ipv4.dst_addr"], 64)
                .action("to_port")
                .action("discard")
                .default_action("discard", &[]),
        )
        .table(
            Table::new("stamp", MatchKind::Exact, &[], 0)
                .action("stamp")
                .default_action("stamp", &[]),
        )
        .ingress(vec![Stmt::apply("fwd"), Stmt::apply("stamp")])
        .build()
        .unwrap()
}

/// Pipe 0: ports 0 and 1 out (device ports 8, 10), ports 2 and 3 in.
fn chip() -> Chip {
    crate::common::pipe0_chip(&[(0, 0), (0, 2), (1, 0), (1, 2)], Vec::new(), program())
}

fn entry(dst: Ipv4Addr, port: u64) -> Entry {
    Entry {
        key: vec![KeyValue {
            value: u32::from(dst) as u64,
            mask: None,
        }],
        action: ActionCall::new("to_port", &[port]),
        members: Vec::new(),
    }
}

struct Run {
    out: [Vec<(Cycle, Vec<u8>)>; 2],
    counters: ChipCounters,
    counter: u64,
    errors: Vec<(Cycle, String)>,
}

/// Sends `frames` (cycle the frame enters the ingress, input port 2 or 3, destination).
fn run(ops: &[(Cycle, ControlOp)], frames: &[(Cycle, usize, Ipv4Addr)], stepping: Stepping) -> Run {
    let mut c = chip();
    for (at, op) in ops {
        c.schedule(*at, op.clone()).unwrap();
    }
    let mut net = Network::new(stepping);
    let chip = net.add(c);
    let mut scripts: [Vec<(Cycle, Vec<u8>)>; 2] = Default::default();
    for &(e, port, dst) in frames {
        // A frame sent at s reaches the chip over a 1-cycle link at s + 1 and, with nothing
        // ahead of it, enters the ingress in that cycle.
        scripts[port - 2].push((e - 1, udp_frame(Ipv4Addr::new(10, 9, 9, 9), dst, 64, 18)));
    }
    for (k, script) in scripts.into_iter().enumerate() {
        let s = net.add(Probe::new(G100, script));
        net.link(s, 0, chip, 2 + k, 1).unwrap();
    }
    let rx: Vec<_> = (0..2)
        .map(|k| {
            let r = net.add(Probe::new(G100, Vec::new()));
            net.link(chip, k, r, 0, 1).unwrap();
            r
        })
        .collect();
    while net.next_event().is_some() {
        net.advance();
    }
    let c = net.node_mut::<Chip>(chip);
    let counter = c.read_register(0, Gress::Ingress, "counter", 0).unwrap();
    let counters = c.counters().clone();
    let errors = c
        .control_errors()
        .iter()
        .map(|(at, e)| (*at, e.to_string()))
        .collect();
    Run {
        out: [0, 1].map(|k| net.node::<Probe>(rx[k]).received().to_vec()),
        counters,
        counter,
        errors,
    }
}

fn ident(frame: &[u8]) -> u16 {
    u16::from_be_bytes([frame[18], frame[19]])
}

#[test]
fn both_tables_are_in_ingress_stage_0() {
    let checked = t2_pipeline::check::check(&program()).unwrap();
    let placed = t2_pipeline::place::place(&checked, &t2_pipeline::place::Budget::tofino2());
    assert_eq!(placed.stage_of[0], [Some(0), Some(0)]);
}

#[test]
fn entries_changed_at_cycle_c_are_seen_from_packets_entering_at_c_minus_the_parser() {
    let c = chip();
    let parser = c.params().pipeline.parser_cycles as Cycle;
    assert_eq!(parser, 64);
    let latency = c.unloaded_latency(68, 0);
    // Stage 0 is at offset 0, so a lookup in cycle c is a packet entering at c - 64.
    let ops = vec![
        (
            1000,
            ControlOp::AddEntry {
                pipe: None,
                table: "fwd".into(),
                entry: entry(DST, 8),
            },
        ),
        // Pipe 1 only: pipe 0 never forwards OTHER.
        (
            1000,
            ControlOp::AddEntry {
                pipe: Some(1),
                table: "fwd".into(),
                entry: entry(OTHER, 8),
            },
        ),
        (
            2000,
            ControlOp::ModifyEntry {
                pipe: Some(0),
                table: "fwd".into(),
                entry: entry(DST, 10),
            },
        ),
        (
            3000,
            ControlOp::DeleteEntry {
                pipe: None,
                table: "fwd".into(),
                key: entry(DST, 0).key,
            },
        ),
        (
            4000,
            ControlOp::WriteRegister {
                pipe: 0,
                gress: Gress::Ingress,
                register: "counter".into(),
                index: 0,
                value: 500,
            },
        ),
    ];
    let frames = [
        (935, 2, DST),
        (936, 3, DST),
        (1500, 2, OTHER),
        (1935, 2, DST),
        (1936, 3, DST),
        (2935, 2, DST),
        (2936, 3, DST),
        (3935, 2, DST),
        (3936, 3, DST),
    ];
    let stepped = run(&ops, &frames, Stepping::EveryCycle);
    // Port 0 gets the packets entering 936 and 1935, port 1 those entering 1936 and 2935.
    let at = |e: Cycle| e + latency + 1;
    let got = |k: usize| -> Vec<(Cycle, u16)> {
        stepped.out[k].iter().map(|(t, f)| (*t, ident(f))).collect()
    };
    // Every packet, dropped or not, passed `stamp` (stage 0, after `fwd` in the same
    // stage), so the identifications count packets: 2, 4, 5, 6; the write of 500 at 4000
    // is seen by the packet entering at 3936 (501), not by the one at 3935 (8).
    assert_eq!(got(0), [(at(936), 2), (at(1935), 4)]);
    assert_eq!(got(1), [(at(1936), 5), (at(2935), 6)]);
    let c = &stepped.counters;
    assert_eq!(
        c.drops,
        [(ChipDrop::Pipeline(Gress::Ingress, DropReason::NoRoute), 5)].into()
    );
    assert_eq!(stepped.counter, 501);
    assert!(stepped.errors.is_empty());
    let jumped = run(&ops, &frames, Stepping::Jump);
    assert_eq!(jumped.out, stepped.out);
    assert_eq!(jumped.counters, stepped.counters);
    assert_eq!(jumped.counter, 501);
}

#[test]
fn operations_that_cannot_land_are_refused_then_or_when_scheduled() {
    let mut c = chip();
    let bad = |c: &mut Chip, at, op| c.schedule(at, op).unwrap_err().to_string();
    assert_eq!(
        bad(
            &mut c,
            10,
            ControlOp::AddEntry {
                pipe: None,
                table: "acl".into(),
                entry: entry(DST, 8)
            }
        ),
        "chip chip: add_entry at cycle 10: the program has no table `acl`"
    );
    assert_eq!(
        bad(
            &mut c,
            10,
            ControlOp::AddEntry {
                pipe: Some(4),
                table: "fwd".into(),
                entry: entry(DST, 8)
            }
        ),
        "chip chip: add_entry at cycle 10: pipe 4 does not exist (the chip has 0..4)"
    );
    let write = |register: &str, index, value| ControlOp::WriteRegister {
        pipe: 0,
        gress: Gress::Ingress,
        register: register.into(),
        index,
        value,
    };
    assert_eq!(
        bad(&mut c, 10, write("count", 0, 1)),
        "chip chip: write_register at cycle 10: pipe 0's program has no register array `count`"
    );
    assert_eq!(
        bad(&mut c, 10, write("counter", 4, 1)),
        "chip chip: write_register at cycle 10: register `counter` has cells 0..4, not 4"
    );
    assert_eq!(
        bad(&mut c, 10, write("counter", 0, 1 << 32)),
        "chip chip: write_register at cycle 10: value 4294967296 does not fit register `counter`'s 32-bit cells"
    );
    assert_eq!(
        bad(&mut c, 10, ControlOp::PortDown { port: 9 }),
        "chip chip: port_down at cycle 10: port 9 is not a front-panel port (the chip has 0..4)"
    );
    // Refused when they land: a second add of a key, an argument too wide for the action,
    // a delete of a key that is not there. Nothing changes; the errors keep their cycle.
    let ops = vec![
        (
            100,
            ControlOp::AddEntry {
                pipe: Some(0),
                table: "fwd".into(),
                entry: entry(DST, 8),
            },
        ),
        (
            200,
            ControlOp::AddEntry {
                pipe: Some(0),
                table: "fwd".into(),
                entry: entry(DST, 10),
            },
        ),
        (
            300,
            ControlOp::AddEntry {
                pipe: Some(0),
                table: "fwd".into(),
                entry: entry(OTHER, 1 << 9),
            },
        ),
        (
            400,
            ControlOp::DeleteEntry {
                pipe: Some(0),
                table: "fwd".into(),
                key: entry(OTHER, 0).key,
            },
        ),
    ];
    let r = run(&ops, &[(500, 2, DST)], Stepping::Jump);
    assert_eq!(r.out[0].len(), 1);
    assert_eq!(
        r.errors,
        [
            (200, "chip chip: pipe 0 add_entry in `fwd`: an entry with key [KeyValue { value: 167772161, mask: None }] is already there (modify it instead)".to_string()),
            (300, "chip chip: pipe 0 add_entry in `fwd`: tables[0] (fwd).entries[1]: argument 0 (512) does not fit in 9 bits".to_string()),
            (400, "chip chip: pipe 0 delete_entry in `fwd`: no entry has key [KeyValue { value: 167772162, mask: None }]".to_string()),
        ]
    );
    // The same adds landing in one cycle go in together, with the same outcome and errors
    // as one by one: the duplicate and the too-wide argument are refused (the latter named
    // as entries[1], the place it would have had), the rest apply.
    let same_cycle: Vec<(u64, ControlOp)> = [entry(DST, 8), entry(DST, 10), entry(OTHER, 1 << 9)]
        .into_iter()
        .map(|entry| {
            (
                100,
                ControlOp::AddEntry {
                    pipe: Some(0),
                    table: "fwd".into(),
                    entry,
                },
            )
        })
        .collect();
    let r = run(&same_cycle, &[(500, 2, DST)], Stepping::Jump);
    assert_eq!(r.out[0].len(), 1);
    assert_eq!(
        r.errors,
        [
            (100, "chip chip: pipe 0 add_entry in `fwd`: an entry with key [KeyValue { value: 167772161, mask: None }] is already there (modify it instead)".to_string()),
            (100, "chip chip: pipe 0 add_entry in `fwd`: tables[0] (fwd).entries[1]: argument 0 (512) does not fit in 9 bits".to_string()),
        ]
    );
    // The built-in forwarding has no program tables.
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![PortSpec {
            pipe: 0,
            mac: 0,
            channel: 0,
            bps: G100,
        }],
        routes: Vec::new(),
        program: None,
    };
    let mut c = Chip::new("b", &config).unwrap();
    assert_eq!(
        bad(&mut c, 0, ControlOp::DeleteEntry { pipe: None, table: "ipv4_host".into(), key: Vec::new() }),
        "chip b: delete_entry at cycle 0: the built-in forwarding has no program tables (give the chip a program)"
    );
}

#[test]
fn sessions_and_queues_change_at_their_cycle() {
    let c = chip();
    let i = c.ingress_latency();
    let q = c.params().tm.queue_latency_cycles as Cycle;
    // Port 2 is mirrored to session 3; the session (to port 1) is set at 1000 and cleared at
    // 2000: a copy is made of every packet leaving the ingress deparser in 1000..2000, so
    // of those entering in 1000 - I .. 2000 - I.
    let session = t2sim::MirrorSession {
        port: 1,
        qid: 0,
        truncate_bytes: None,
    };
    let ops = vec![
        (
            0,
            ControlOp::AddEntry {
                pipe: None,
                table: "fwd".into(),
                entry: entry(DST, 8),
            },
        ),
        (
            1000,
            ControlOp::MirrorSession {
                id: 3,
                session: Some(session),
            },
        ),
        (
            2000,
            ControlOp::MirrorSession {
                id: 3,
                session: None,
            },
        ),
        // Port 1 is empty at 10: it gets 32 queues. Port 0 holds the packet that entered at
        // 3000 from 3000 + I + 1 to its dequeue Q later: refused at 3000 + I + 11.
        (
            10,
            ControlOp::PortQueues {
                port: 1,
                queues: vec![t2_tm::QueueConfig::default(); 32],
            },
        ),
        (
            3000 + i + 11,
            ControlOp::PortQueues {
                port: 0,
                queues: vec![t2_tm::QueueConfig::default(); 16],
            },
        ),
    ];
    let frames = [
        (999 - i, 2, DST),
        (1000 - i, 2, DST),
        (1999 - i, 2, DST),
        (2000 - i, 2, DST),
        (3000, 2, DST),
    ];
    let build = |stepping| {
        let mut c = chip();
        c.mirror_ingress_port(2, Some(3)).unwrap();
        let mut net = Network::new(stepping);
        for (at, op) in &ops {
            c.schedule(*at, op.clone()).unwrap();
        }
        let chip = net.add(c);
        let s = net.add(Probe::new(
            G100,
            frames
                .iter()
                .map(|&(e, _, dst)| (e - 1, udp_frame(Ipv4Addr::new(10, 9, 9, 9), dst, 64, 18)))
                .collect(),
        ));
        net.link(s, 0, chip, 2, 1).unwrap();
        let rx: Vec<_> = (0..2)
            .map(|k| {
                let r = net.add(Probe::new(G100, Vec::new()));
                net.link(chip, k, r, 0, 1).unwrap();
                r
            })
            .collect();
        while net.next_event().is_some() {
            net.advance();
        }
        let c = net.node::<Chip>(chip);
        let errors: Vec<(Cycle, String)> = c
            .control_errors()
            .iter()
            .map(|(at, e)| (*at, e.to_string()))
            .collect();
        (
            [0, 1].map(|k| net.node::<Probe>(rx[k]).received().len()),
            net.node::<Probe>(rx[1]).arrivals(),
            c.tm().queue_count(1),
            c.counters().mirrored,
            errors,
        )
    };
    let stepped = build(Stepping::EveryCycle);
    let copy_latency = chip().unloaded_latency(68, 1);
    assert_eq!(stepped.0, [5, 2]);
    // The copies follow their originals onto the TM wire and out of port 1.
    assert_eq!(
        stepped.1,
        [1000 - i + copy_latency + 1, 1999 - i + copy_latency + 1]
    );
    assert_eq!((stepped.2, stepped.3), (32, 2));
    assert_eq!(stepped.4.len(), 1);
    assert_eq!(stepped.4[0].0, 3000 + i + 11);
    assert!(3000 + i + 11 < 3000 + i + 1 + q);
    assert_eq!(
        stepped.4[0].1,
        "chip chip: port 0: cannot change its queues while packets or AFC requests are pending"
    );
    assert_eq!(build(Stepping::Jump), stepped);
}

/// [`program`] with an egress table `tag` (exact on the destination) setting the TOS byte.
fn program_with_tag() -> Program {
    let mut p = program();
    p.actions.push(
        Action::new("retos")
            .param("tos", 8)
            .prim(Primitive::set("ipv4.diffserv", Operand::param("tos"))),
    );
    p.actions.push(Action::new("keep"));
    p.tables.push(
        Table::new("tag", MatchKind::Exact, &["ipv4.dst_addr"], 16)
            .action("retos")
            .action("keep")
            .default_action("keep", &[]),
    );
    p.egress = vec![Stmt::apply("tag")];
    p
}

#[test]
fn an_egress_entry_is_seen_from_packets_entering_the_egress_at_c_minus_the_parser() {
    let checked = t2_pipeline::check::check(&program_with_tag()).unwrap();
    let placed = t2_pipeline::place::place(&checked, &t2_pipeline::place::Budget::tofino2());
    assert_eq!(placed.stage_of[1], [Some(0)], "tag is in egress stage 0");
    let port = |mac, channel| PortSpec {
        pipe: 0,
        mac,
        channel,
        bps: G100,
    };
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![port(0, 0), port(0, 2), port(1, 0), port(1, 2)],
        routes: Vec::new(),
        program: Some(program_with_tag()),
    };
    let c = Chip::new("chip", &config).unwrap();
    let (i, q) = (
        c.ingress_latency(),
        c.params().tm.queue_latency_cycles as Cycle,
    );
    // A packet entering the ingress at e enters the egress at g = e + I + 1 + Q + 1 and
    // looks `tag` up at g + 64. The entries land at 3000: the packet to DST (port 0) enters
    // the egress at 3000 - 65, the one to OTHER (port 1) at 3000 - 64.
    let e = 3000 - 64 - (i + 1 + q + 1);
    let retos = |dst: Ipv4Addr| ControlOp::AddEntry {
        pipe: None,
        table: "tag".into(),
        entry: Entry {
            key: entry(dst, 0).key,
            action: ActionCall::new("retos", &[0x20]),
            members: Vec::new(),
        },
    };
    let ops = [
        (
            0,
            ControlOp::AddEntry {
                pipe: None,
                table: "fwd".into(),
                entry: entry(DST, 8),
            },
        ),
        (
            0,
            ControlOp::AddEntry {
                pipe: None,
                table: "fwd".into(),
                entry: entry(OTHER, 10),
            },
        ),
        (3000, retos(DST)),
        (3000, retos(OTHER)),
    ];
    let go = |stepping| {
        let mut c = Chip::new("chip", &config).unwrap();
        for (at, op) in &ops {
            c.schedule(*at, op.clone()).unwrap();
        }
        let mut net = Network::new(stepping);
        let chip = net.add(c);
        for (k, (at, dst)) in [(e - 1, DST), (e, OTHER)].into_iter().enumerate() {
            let s = net.add(Probe::new(
                G100,
                vec![(at - 1, udp_frame(Ipv4Addr::new(10, 9, 9, 9), dst, 64, 18))],
            ));
            net.link(s, 0, chip, 2 + k, 1).unwrap();
        }
        let rx: Vec<_> = (0..2)
            .map(|k| {
                let r = net.add(Probe::new(G100, Vec::new()));
                net.link(chip, k, r, 0, 1).unwrap();
                r
            })
            .collect();
        while net.next_event().is_some() {
            net.advance();
        }
        [0, 1].map(|k| {
            net.node::<Probe>(rx[k])
                .received()
                .iter()
                .map(|(t, f)| (*t, f[15]))
                .collect::<Vec<_>>()
        })
    };
    let latency = c.unloaded_latency(68, 0);
    let stepped = go(Stepping::EveryCycle);
    assert_eq!(
        stepped,
        [
            vec![(e - 1 + latency + 1, 0)],
            vec![(e + latency + 1, 0x20)]
        ]
    );
    assert_eq!(go(Stepping::Jump), stepped);
}
