//! The ghost thread: a placed ingress with its ghost pipeline, stepped cycle by cycle, against
//! the sequential interpreter running ghost updates and packets in the order they reach the
//! stages (stage-0 time: delivery for a ghost PHV, entry + parser for a packet; ghost first
//! in a tie). The threads are in lockstep, so that order holds in every stage.

use proptest::prelude::*;
use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::examples;
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::headers::{build_udp_frame, ipv4_header_checksum, Endpoints, MacAddr};
use t2_pipeline::ir::{Action, MatchKind, MetadataField, Operand, Primitive, Program, Stmt, Table};
use t2_pipeline::place::{place, verify, Budget, Resource};
use t2_pipeline::Cells;
use t2_pipeline::{
    layout, parser_check as parser, GhostPipeline, GhostWord, PacketPool, Phv, PipelineParams,
};

/// The BFC-style example with two host routes (device ports 8 and 10: ghost indices 128 and
/// 160 of pipe 0).
fn program() -> Program {
    let mut p = examples::ghost_occupancy(examples::GHOST_OCCUPANCY_THRESHOLD_CELLS);
    let t = p.tables.iter_mut().find(|t| t.name == "ipv4_host").unwrap();
    *t = t
        .clone()
        .entry(&[0x0a00_0001], "forward", &[8])
        .entry(&[0x0a00_0002], "forward", &[10]);
    p
}

/// An ECN-capable UDP frame to 10.0.0.`dst`.
fn frame(dst: u8) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
        src_ip: [10, 0, 0, 9].into(),
        dst_ip: [10, 0, 0, dst].into(),
        src_port: 1,
        dst_port: 2,
    };
    let mut out = Vec::new();
    build_udp_frame(&mut out, &ep, 64, 0, &[0; 18], false, 60);
    // ECN-capable (ECT(1)), with the header checksum redone.
    out[15] = 1;
    out[24..26].fill(0);
    let c = ipv4_header_checksum(&out[14..34]);
    out[24..26].copy_from_slice(&c.to_be_bytes());
    out
}

/// An event: in cycle `at`, a ghost update or a packet (to 10.0.0.`dst`) enters.
#[derive(Clone, Debug)]
enum Event {
    Ghost(GhostWord),
    Packet(u8),
}

/// Deparsed bytes of every packet (in entry order) and the register contents.
type Outcome = (Vec<Vec<u8>>, Vec<Vec<u64>>);

fn placed_run(p: &Program, events: &[(u64, Event)]) -> Outcome {
    let params = PipelineParams::default();
    let c = Arc::new(check(p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    verify(&c, &pl, &Budget::tofino2()).unwrap();
    let mut prog = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    let mut g = prog.pipeline(&pl, &params);
    let mut ghost: GhostPipeline = prog.ghost_pipeline(&pl, &params).unwrap();
    let mut pool = PacketPool::new();
    let mut outs = Vec::new();
    let mut next = 0;
    let packets = events
        .iter()
        .filter(|e| matches!(e.1, Event::Packet(_)))
        .count();
    let mut now = 0;
    while outs.len() < packets {
        while let Some((at, e)) = events.get(next).filter(|e| e.0 == now) {
            match e {
                Event::Ghost(w) => ghost.enter(*at, *w),
                Event::Packet(dst) => {
                    let h = pool.alloc_from(&frame(*dst));
                    g.enter(now, h, 0, &pool);
                }
            }
            next += 1;
        }
        // Ghost first, as the chip does.
        ghost.tick(now, &mut prog);
        if let Some(e) = g.tick(now, &mut prog, &mut pool) {
            outs.push(pool.bytes(e.pkt).to_vec());
        }
        now += 1;
        assert!(now < 100_000, "the pipeline never drained");
    }
    while ghost.next_event().is_some() {
        ghost.tick(now, &mut prog);
        now += 1;
    }
    (
        outs,
        prog.state.registers.iter().map(Cells::to_vec).collect(),
    )
}

fn interpreted(p: &Program, events: &[(u64, Event)]) -> Outcome {
    let params = PipelineParams::default();
    let c = Arc::new(check(p).unwrap());
    let mut interp = Interpreter::new(Arc::clone(&c));
    // Stage-0 time; ghost before packet in a tie, then entry order.
    let mut order: Vec<(u64, bool, usize)> = events
        .iter()
        .enumerate()
        .map(|(i, (at, e))| match e {
            Event::Ghost(_) => (*at, false, i),
            Event::Packet(_) => (at + params.parser_cycles as u64, true, i),
        })
        .collect();
    order.sort();
    let mut outs = vec![None; events.len()];
    for (_, _, i) in order {
        match &events[i].1 {
            Event::Ghost(w) => {
                interp.run_ghost(w);
            }
            Event::Packet(dst) => {
                let bytes = frame(*dst);
                let mut phv = Phv::new(&params.phv);
                phv.set(layout::PKT_LENGTH, bytes.len() as u32 + 4);
                parser::parse(&bytes, &mut phv).unwrap();
                interp.run(Thread::Ingress, &mut phv);
                let mut out = bytes.clone();
                parser::deparse(&phv, &mut out);
                outs[i] = Some(out);
            }
        }
    }
    (
        outs.into_iter().flatten().collect(),
        interp.state.registers.iter().map(Cells::to_vec).collect(),
    )
}

fn word(qid: u16, qlength: u32) -> GhostWord {
    GhostWord {
        ping_pong: false,
        qlength,
        qid,
        pipe_id: 0,
    }
}

#[test]
fn ingress_marks_from_the_depth_the_ghost_thread_wrote_as_interpreted() {
    let p = program();
    // Queue 128 (device port 8) reported at 150 cells in cycle 100, back to 0 in 200. A
    // packet to port 8 entering in cycle e reads it at stage-0 time e + 64.
    let events = vec![
        (35, Event::Packet(1)), // 99: before the update
        (36, Event::Packet(1)), // 100: ties with it, sees it (ghost first)
        (100, Event::Ghost(word(128, 150))),
        (100, Event::Ghost(word(160, 7))),
        (120, Event::Packet(2)), // port 10: 7 cells, below the threshold
        (135, Event::Packet(1)), // 199: still 150
        (136, Event::Packet(1)), // 200: 0 again
        (200, Event::Ghost(word(128, 0))),
    ];
    let placed = placed_run(&p, &events);
    let ecn = |b: &Vec<u8>| b[15] & 3;
    assert_eq!(
        placed.0.iter().map(ecn).collect::<Vec<_>>(),
        [1, 3, 1, 3, 1]
    );
    assert_eq!(placed.1[0][128], 0);
    assert_eq!(placed.1[0][160], 7);
    assert_eq!(placed, interpreted(&p, &events));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn placed_ghost_and_ingress_equal_the_interpreter(
        raw in prop::collection::vec((0u64..6, any::<bool>(), 0u8..3, 0u32..300), 1..40),
    ) {
        // Cycles advance by 0-5 per event; several ghost updates may share a cycle, packets
        // do not (one entry per cycle).
        let mut events = Vec::new();
        let mut at = 0;
        let mut last_packet = None;
        for (gap, is_ghost, which, depth) in raw {
            at += gap;
            if is_ghost {
                let qid = [128u16, 160, 192][which as usize];
                events.push((at, Event::Ghost(GhostWord {
                    ping_pong: depth % 2 == 1,
                    qlength: depth,
                    qid,
                    pipe_id: 0,
                })));
            } else if last_packet != Some(at) {
                last_packet = Some(at);
                events.push((at, Event::Packet(1 + which % 2)));
            }
        }
        prop_assume!(events.iter().any(|e| matches!(e.1, Event::Packet(_))));
        let p = program();
        prop_assert_eq!(placed_run(&p, &events), interpreted(&p, &events));
    }
}

fn refused(p: &Program, path: &str, problem: &str) {
    let e = check(p).expect_err("the program must be refused");
    assert!(e.path.contains(path), "path `{}` lacks `{path}`", e.path);
    assert!(e.problem.contains(problem), "problem `{}`", e.problem);
}

#[test]
fn one_ingress_and_one_ghost_table_may_share_an_array_and_no_more() {
    let p = program();
    let c = check(&p).unwrap();
    // A second ghost table on the array.
    let mut two = p.clone();
    let mut t = two
        .tables
        .iter()
        .find(|t| t.name == "ghost_record")
        .unwrap()
        .clone();
    t.name = "ghost_record2".into();
    two.tables.push(t);
    two.ghost.push(Stmt::apply("ghost_record2"));
    refused(
        &two,
        "(ghost_record2)",
        "already used by table `occupancy`; an array is accessed from one table only",
    );
    // Egress may not share with ingress (nor the ghost thread's with egress).
    let mut egress = p.clone();
    egress.ghost.retain(|s| *s != Stmt::apply("ghost_record"));
    egress.egress.push(Stmt::apply("ghost_record"));
    refused(
        &egress,
        "(ghost_record)",
        "shared by one ingress and one ghost table",
    );
    // Shared, the array's RAMs and stateful ALU are counted once, in its one stage.
    let pl = place(&c, &Budget::tofino2());
    let stage_of = |name: &str| {
        pl.units
            .iter()
            .find(|u| u.allocation.name == name)
            .unwrap()
            .allocation
            .stage
    };
    assert_eq!(stage_of("occupancy"), 2);
    assert_eq!(stage_of("ghost_record"), 2);
    assert_eq!(pl.stage_usage[2].get(Resource::Salu), 1);
    let ghost = pl
        .units
        .iter()
        .find(|u| u.allocation.name == "ghost_record")
        .unwrap();
    assert_eq!(ghost.allocation.register_rams, 0);
}

#[test]
fn a_ghost_table_that_cannot_reach_the_shared_stage_is_a_verdict() {
    // One more step before the ghost write: it would need stage 3, but ingress reads the
    // array in stage 2.
    let mut p = program();
    p.metadata.push(MetadataField {
        name: "meta.ghost_index2".into(),
        bits: 13,
    });
    p.actions
        .push(Action::new("ghost_index2").prim(Primitive::set(
            "meta.ghost_index2",
            Operand::field("meta.ghost_index"),
        )));
    p.tables
        .push(Table::new("ghost_index2", MatchKind::Exact, &[], 0).action("ghost_index2"));
    for a in &mut p.actions {
        if a.name == "record_depth" {
            a.primitives = vec![Primitive::Execute {
                register_action: "write_depth".into(),
                index: Operand::field("meta.ghost_index2"),
            }];
        }
    }
    p.ghost.insert(2, Stmt::apply("ghost_index2"));
    let c = check(&p).unwrap();
    let pl = place(&c, &Budget::tofino2());
    let f = pl.failure.expect("it does not fit");
    assert_eq!(f.unit, "ghost_record");
    assert_eq!(f.resource, "stages");
    assert_eq!(f.stage, Some(2));
    assert!(
        f.detail.contains(
            "shares register array `queue_depth` with ingress, which accesses it in stage 2, \
             but the ghost control's dependencies need stage 3 or later"
        ),
        "{}",
        f.detail
    );
}
