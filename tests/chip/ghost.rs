//! The ghost control running on the chip: the TM's queue-depth updates run it in every
//! ingress pipe, in lockstep with ingress, and ingress packets read what it wrote
//! (docs/timing.md, "Ghost thread").

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::headers::parse_frame;
use t2_pipeline::ir::{
    Action, MatchKind, Operand, Primitive, Program, ProgramBuilder, RegisterAction, SaluOp,
    SaluOperand, SaluOutput, SaluOutputValue, SaluUpdate, Stmt, Table,
};
use t2_pipeline::Gress;
use t2_testbench::{Network, NodeId, Probe, Stepping};
use t2sim::chip::ControlOp;
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const SRC: Ipv4Addr = Ipv4Addr::new(10, 9, 9, 9);

/// The ghost control writes `ghost_md.qlength` into cell `ghost_md.qid` of `depth`; ingress
/// forwards by host route and, for packets leaving by device port `peek_port`, copies cell
/// 128 (queue 0 of device port 8: MAC 1, queue 0) into `l4.src_port`. The read depends on
/// the route (its key is the egress port), so it sits in stage 1, and the ghost table that
/// shares the array with it too.
fn probe_program(peek_port: u16) -> Program {
    ProgramBuilder::new("ghost_probe")
        .register("depth", 32, 2048)
        .register_action(
            RegisterAction::new("record", "depth").update(SaluUpdate::new(
                SaluOp::Set,
                SaluOperand::Field("ghost_md.qlength".into()),
                SaluOperand::Const(0),
            )),
        )
        .register_action(RegisterAction {
            name: "look".into(),
            register: "depth".into(),
            conditions: vec![],
            updates: vec![],
            outputs: vec![SaluOutput {
                dst: "l4.src_port".into(),
                value: SaluOutputValue::Old,
            }],
        })
        .action(
            Action::new("forward")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                }),
        )
        .action(Action::new("nothing"))
        .action(
            Action::new("read_depth")
                .param("index", 11)
                .prim(Primitive::Execute {
                    register_action: "look".into(),
                    index: Operand::param("index"),
                }),
        )
        .action(Action::new("record_depth").prim(Primitive::Execute {
            register_action: "record".into(),
            index: Operand::field("ghost_md.qid"),
        }))
        .table(
            Table::new("ipv4_host", MatchKind::Exact, &["ipv4.dst_addr"], 64)
                .action("forward")
                .action("nothing")
                .default_action("nothing", &[]),
        )
        .table(
            Table::new(
                "peek",
                MatchKind::Exact,
                &["ig_intr_tm_md.ucast_egress_port"],
                16,
            )
            .action("read_depth")
            .action("nothing")
            .default_action("nothing", &[])
            .entry(&[peek_port as u64], "read_depth", &[128]),
        )
        .table(Table::new("ghost_record", MatchKind::Exact, &[], 0).action("record_depth"))
        .ingress(vec![Stmt::apply("ipv4_host"), Stmt::apply("peek")])
        .ghost(vec![Stmt::apply("ghost_record")])
        .build()
        .unwrap()
}

fn port(pipe: u32, mac: u32, channel: u32) -> PortSpec {
    PortSpec {
        pipe,
        mac,
        channel,
        bps: G100,
    }
}

/// The probe program's placement: ingress stage 0 (the route) 23 cycles, stage 1 (the
/// shared array) 23 + 4 stateful, 18 action-dependent stages of 2.
const INGRESS_LATENCY: Cycle = 64 + 23 + 27 + 18 * 2 + 64;
/// The ghost thread reaches stage 1 this long after delivery, as ingress packets do after
/// leaving the parser.
const SHARED_STAGE_OFFSET: Cycle = 23;

/// Cycles (after their step) at which cell `cell` of pipe `pipe`'s array 0 changed, with
/// the new value.
type Changes = Vec<(usize, usize, Cycle, u64)>;

/// Steps `net` until it is idle or `limit`, logging every change of the watched cells of
/// every pipe's register array 0. With `stage_by_stage`, the chip runs each stage in its
/// own cycle, so a change shows in the cycle of the stage that writes it; otherwise it may
/// show from the cycle the update or packet reaches stage 0.
fn watch(
    net: &mut Network,
    chip: NodeId,
    cells: &[usize],
    limit: Cycle,
    stage_by_stage: bool,
) -> Changes {
    net.node_mut::<Chip>(chip)
        .run_stage_by_stage(stage_by_stage);
    let mut last: Vec<Vec<u64>> = vec![vec![0; cells.len()]; 4];
    let mut log = Vec::new();
    while net.next_event().is_some_and(|t| t < limit) {
        net.advance();
        let now = net.now();
        let c = net.node::<Chip>(chip);
        for (pipe, last) in last.iter_mut().enumerate() {
            let regs = &c.ingress_registers(pipe).unwrap()[0];
            for (k, &cell) in cells.iter().enumerate() {
                if regs.get(cell) != last[k] {
                    last[k] = regs.get(cell);
                    log.push((pipe, cell, now, regs.get(cell)));
                }
            }
        }
    }
    log
}

const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const READOUT: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);

/// How the pipes run the ghost thread in a reader run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ghosts {
    /// Pipe 0's runs for all (the chip's choice for the probe program).
    Shared,
    /// Each pipe runs its own from the start.
    PerPipe,
    /// Shared until the control plane writes cell 128 of pipe 2's array in this cycle.
    SplitAt(Cycle),
}

/// What the readers saw (their src_port) in arrival order, and the changes of cell 128.
fn reader_run(
    stepping: Stepping,
    readers: &[(usize, Cycle)],
    stage_by_stage: bool,
) -> (Vec<u16>, Changes, u32) {
    reader_run_with(stepping, readers, stage_by_stage, Ghosts::Shared)
}

fn reader_run_with(
    stepping: Stepping,
    readers: &[(usize, Cycle)],
    stage_by_stage: bool,
    ghosts: Ghosts,
) -> (Vec<u16>, Changes, u32) {
    // Port 0 (device port 8, ghost qid 128) receives one big frame from port 1; readers come
    // in on ports 2 and 4 of pipe 1 and leave by port 3 (device port 144).
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![
            port(0, 0, 0),
            port(0, 1, 0),
            port(1, 0, 0),
            port(1, 1, 0),
            port(1, 0, 2),
        ],
        routes: vec![(RECEIVER, 0), (READOUT, 3)],
        program: Some(probe_program(144)),
    };
    let mut net = Network::new(stepping);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    assert_eq!(net.node::<Chip>(chip).ingress_latency(), INGRESS_LATENCY);
    assert!(net.node::<Chip>(chip).ghost_shared());
    match ghosts {
        Ghosts::Shared => {}
        Ghosts::PerPipe => net.node_mut::<Chip>(chip).run_ghost_in_every_pipe(),
        Ghosts::SplitAt(at) => net
            .node_mut::<Chip>(chip)
            .schedule(
                at,
                ControlOp::WriteRegister {
                    pipe: 2,
                    gress: Gress::Ingress,
                    register: "depth".into(),
                    index: 128,
                    value: 77,
                },
            )
            .unwrap(),
    }
    assert_eq!(
        net.node::<Chip>(chip).ghost_stage_points(),
        &[(SHARED_STAGE_OFFSET, 1)]
    );
    let big = udp_frame(SRC, RECEIVER, 64, 1400);
    let sender = net.add(Probe::new(G100, vec![(100, big)]));
    let receiver = net.add(Probe::new(G100, vec![]));
    let readout = net.add(Probe::new(G100, vec![]));
    net.link(sender, 0, chip, 1, 1).unwrap();
    net.link(chip, 0, receiver, 0, 1).unwrap();
    net.link(chip, 3, readout, 0, 1).unwrap();
    for chip_port in [2, 4] {
        let script = readers
            .iter()
            .filter(|r| r.0 == chip_port)
            .map(|&(_, t)| (t, udp_frame(SRC, READOUT, 64, 20)))
            .collect();
        let reader = net.add(Probe::new(G100, script));
        net.link(reader, 0, chip, chip_port, 1).unwrap();
    }
    let log = watch(&mut net, chip, &[128], 10_000, stage_by_stage);
    assert_eq!(
        net.node::<Chip>(chip).ghost_shared(),
        ghosts == Ghosts::Shared
    );
    let seen = net
        .node::<Probe>(readout)
        .received()
        .iter()
        .map(|(_, b)| parse_frame(b).unwrap().udp.unwrap().src_port)
        .collect();
    let sent = net.node::<Chip>(chip).tm().ghost_updates_sent() as u32;
    (seen, log, sent)
}

#[test]
fn an_ingress_packet_sees_a_new_depth_from_the_ghost_delivery_cycle_minus_the_parser() {
    // The big frame's last bit reaches port 1 in cycle 101 and enters ingress then; it
    // leaves the deparser in 101 + 214 and is queued in 316 (9 cells: 1446 B with FCS).
    // That depth is sent in 316 and delivered in 316 + 100 = 416, so the ghost thread
    // writes it at stage 1 in 416 + 23 = 439. Its dequeue in 316 + 300 = 616 is delivered
    // in 716 and written in 739.
    let (enqueued, latency, cells) = (101 + INGRESS_LATENCY + 1, 100, 9);
    assert_eq!(enqueued, 316);
    let delivered = enqueued + latency;
    // A reader entering the parser in cycle e reaches stage 1 in e + 64 + 23: it sees the
    // new depth iff e + 64 >= 416 (the ghost thread goes first in a shared cycle). Readers
    // sent in cycle t enter in t + 1 (link delay 1, nothing ahead of them).
    let boundary = delivered - 64 - 1;
    let readers = [
        (2, 200),
        (2, boundary - 1),
        (4, boundary),
        (2, 600),
        (4, 716 - 64 - 1 - 1),
        (2, 716 - 64 - 1),
    ];
    let run = |s| reader_run(s, &readers, true);
    let stepped = run(Stepping::EveryCycle);
    let (seen, log, _) = &stepped;
    assert_eq!(seen, &[0, 0, cells, cells, cells, 0]);
    // Every pipe's copy of the array hears the same updates at the same time.
    let expected: Changes = (0..4)
        .flat_map(|p| {
            [
                (p, 128, delivered + SHARED_STAGE_OFFSET, cells as u64),
                (p, 128, 716 + SHARED_STAGE_OFFSET, 0),
            ]
        })
        .collect();
    let mut log = log.clone();
    log.sort_by_key(|&(p, _, t, _)| (p, t));
    assert_eq!(log, expected);
    assert_eq!(run(Stepping::Jump), stepped);
    // Whole passes at once: the readers see the same, the cells take the same values in
    // the same order, each as the update reaches stage 0 (its delivery cycle).
    for s in [Stepping::EveryCycle, Stepping::Jump] {
        let (seen, log, sent) = reader_run(s, &readers, false);
        assert_eq!((&seen, sent), (&stepped.0, stepped.2));
        let mut log = log.clone();
        log.sort_by_key(|&(p, _, t, _)| (p, t));
        let at_delivery: Changes = expected
            .iter()
            .map(|&(p, c, t, v)| (p, c, t - SHARED_STAGE_OFFSET, v))
            .collect();
        assert_eq!(log, at_delivery);
    }
}

#[test]
fn the_pipes_share_one_ghost_thread_and_each_holds_what_its_own_would_have() {
    // The probe program's ghost thread only writes `depth`, which ingress only reads, so
    // the chip runs pipe 0's ghost thread for all four pipes and copies what it stores. Every
    // pipe's cell then changes in the same cycles to the same values as when each pipe runs
    // its own, stage by stage or in whole passes, and the readers see the same.
    let readers = [(2, 200), (4, 350), (2, 352), (2, 600), (4, 650), (2, 652)];
    for stepping in [Stepping::EveryCycle, Stepping::Jump] {
        for stage_by_stage in [true, false] {
            let run = |g| reader_run_with(stepping, &readers, stage_by_stage, g);
            let shared = run(Ghosts::Shared);
            assert_eq!(shared, run(Ghosts::PerPipe));
            assert_eq!(
                shared.1.len(),
                8,
                "two changes in each pipe: {:?}",
                shared.1
            );
        }
    }
}

#[test]
fn a_register_write_into_a_ghost_array_ends_the_sharing_with_updates_in_flight() {
    // The write lands in cycle 430, while the first update (delivered in 416) is between
    // stage 0 and stage 1 (439): the other pipes take it over and run it as their own. Pipe
    // 2's cell shows 77 from 430 until that update overwrites it, as it does when every pipe
    // runs its own thread from the start; stage by stage, pipe 0 ran it alone until then.
    let readers = [(2, 200), (4, 600)];
    for stepping in [Stepping::EveryCycle, Stepping::Jump] {
        let run = |g| reader_run_with(stepping, &readers, true, g);
        let split = run(Ghosts::SplitAt(430));
        assert!(split.1.contains(&(2, 128, 430, 77)), "{:?}", split.1);
        assert!(split.1.contains(&(2, 128, 439, 9)), "{:?}", split.1);
        let mut per_pipe_then_write = run(Ghosts::PerPipe);
        per_pipe_then_write.1.push((2, 128, 430, 77));
        let order = |c: &mut Changes| c.sort_by_key(|&(p, _, t, _)| (p, t));
        let (mut a, mut b) = (split.1.clone(), per_pipe_then_write.1.clone());
        order(&mut a);
        order(&mut b);
        assert_eq!(
            (split.0, a, split.2),
            (per_pipe_then_write.0, b, per_pipe_then_write.2)
        );
    }
}

#[test]
fn a_ghost_array_that_ingress_writes_keeps_a_ghost_thread_per_pipe() {
    // Ingress adds to the array the ghost thread writes: each pipe's cells then depend on
    // its own packets, so its ghost thread must run on them.
    let mut program = probe_program(144);
    let look = program
        .register_actions
        .iter_mut()
        .find(|r| r.name == "look")
        .unwrap();
    look.updates.push(SaluUpdate::new(
        SaluOp::Add,
        SaluOperand::Cell,
        SaluOperand::Const(1),
    ));
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![port(0, 0, 0), port(1, 0, 0)],
        routes: vec![(RECEIVER, 0)],
        program: Some(program),
    };
    assert!(!Chip::new("chip", &config).unwrap().ghost_shared());
}

/// 8 frames queued for 8 queues of TM pipe 0 in two cycles (4 in each: one per ingress
/// pipe), with `per_cycle` ghost updates per TM pipe per cycle: the first cycle each
/// queue's cell is written in pipe 0, by ghost qid.
fn burst_run(stepping: Stepping, per_cycle: u32) -> Vec<(usize, Cycle)> {
    let mut params = Tofino2Params::default();
    params.tm.ghost_updates_per_cycle = per_cycle;
    // Receivers: pipe 0 MAC 0 and MAC 1, channels 0, 2, 4, 6 (device ports 8..=22 even).
    let mut ports: Vec<PortSpec> = (0..2)
        .flat_map(|mac| (0..4).map(move |c| port(0, mac, 2 * c)))
        .collect();
    // Senders: two per pipe, on MAC 2 of pipe 0 and MAC 0 of pipes 1-3.
    for pipe in 0..4 {
        let mac = if pipe == 0 { 2 } else { 0 };
        ports.push(port(pipe, mac, 0));
        ports.push(port(pipe, mac, 2));
    }
    let dst = |i: u8| Ipv4Addr::new(10, 0, 0, 100 + i);
    let config = ChipConfig {
        params,
        ports,
        routes: (0..8).map(|i| (dst(i), i as usize)).collect(),
        program: Some(probe_program(0)),
    };
    let mut net = Network::new(stepping);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    for pipe in 0..4u8 {
        // The pipe's first sender port wins its arbiter in cycle 101, the second in 102.
        for (k, receiver) in [pipe, 4 + pipe].into_iter().enumerate() {
            let frame = udp_frame(SRC, dst(receiver), 64, 20);
            let sender = net.add(Probe::new(G100, vec![(100, frame)]));
            net.link(sender, 0, chip, 8 + 2 * pipe as usize + k, 1)
                .unwrap();
        }
    }
    for i in 0..8 {
        let sink = net.add(Probe::new(G100, vec![]));
        net.link(chip, i, sink, 0, 1).unwrap();
    }
    let qids = [128, 160, 192, 224, 256, 288, 320, 352];
    let log = watch(&mut net, chip, &qids, 600, true);
    // One cell each (a 64-byte frame); all pipes write in the same cycles.
    for p in 1..4 {
        let pipe_log: Vec<_> = log
            .iter()
            .filter(|e| e.0 == p)
            .map(|e| (e.1, e.2))
            .collect();
        let pipe0: Vec<_> = log
            .iter()
            .filter(|e| e.0 == 0)
            .map(|e| (e.1, e.2))
            .collect();
        assert_eq!(pipe_log, pipe0);
    }
    assert!(log.iter().all(|e| e.3 == 1));
    log.iter()
        .filter(|e| e.0 == 0)
        .map(|e| (e.1, e.2))
        .collect()
}

#[test]
fn many_changed_queues_are_reported_round_robin_one_per_cycle() {
    // Queues 128..224 (MAC 1) change in 316, queues 256..352 (MAC 2) in 317. At one update
    // per cycle the TM pipe sends 128 in 316 and the other seven in 317..=323, in slot
    // order; each is written at stage 1 100 + 23 cycles after it is sent. The last queue is
    // 6 cycles staler than it would be with enough update bandwidth.
    let first = 316 + 100 + SHARED_STAGE_OFFSET;
    let expected: Vec<(usize, Cycle)> = [128, 160, 192, 224, 256, 288, 320, 352]
        .into_iter()
        .zip(first..)
        .collect();
    let stepped = burst_run(Stepping::EveryCycle, 1);
    assert_eq!(stepped, expected);
    assert_eq!(burst_run(Stepping::Jump, 1), stepped);
    // With 8 per cycle, each queue is sent in the cycle it changed.
    let wide = burst_run(Stepping::Jump, 8);
    let expected: Vec<(usize, Cycle)> = [128, 160, 192, 224]
        .map(|q| (q, first))
        .into_iter()
        .chain([256, 288, 320, 352].map(|q| (q, first + 1)))
        .collect();
    assert_eq!(wide, expected);
    assert_eq!(burst_run(Stepping::EveryCycle, 8), wide);
}

/// An ECN-capable 1500-byte frame (with FCS) from `src` to `dst` with IP identification
/// `ident`.
fn ect_frame(src: Ipv4Addr, dst: Ipv4Addr, ident: u16) -> Vec<u8> {
    let mut b = crate::common::udp_frame_ident(src, dst, 64, ident, 1454);
    crate::common::set_tos(&mut b, 1); // ECT(1)
    b
}

#[test]
fn the_shipped_ghost_occupancy_program_marks_from_the_depth_ingress_has_heard() {
    // Two senders in pipes 0 and 1 send 30 frames each, one per 200 cycles, to the receiver
    // on device port 8 (ghost index 128): the queue grows by about 8 cells per 200 cycles.
    // Ingress marks a packet iff the depth the ghost thread had written by its stage-0 time
    // (entry + 64) is at least 100 cells; the array is read and written in stage 2, in
    // lockstep, so that is the depth heard by that cycle.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/ghost_occupancy.json"),
    )
    .unwrap();
    let program = Program::from_json(&text).unwrap();
    let senders = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![port(0, 0, 0), port(0, 1, 0), port(1, 0, 0)],
        routes: vec![(RECEIVER, 0)],
        program: Some(program),
    };
    let send_at = |k: u16| 100 + 200 * k as Cycle;
    let run = |stepping| {
        let mut net = Network::new(stepping);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        let receiver = net.add(Probe::new(G100, vec![]));
        net.link(chip, 0, receiver, 0, 1).unwrap();
        for (i, &src) in senders.iter().enumerate() {
            let script = (0..30)
                .map(|k| (send_at(k), ect_frame(src, RECEIVER, k)))
                .collect();
            let sender = net.add(Probe::new(G100, script));
            net.link(sender, 0, chip, 1 + i, 1).unwrap();
        }
        // The depth of the receiver's queue as heard by the ingress pipes, per cycle.
        let mut heard = vec![0];
        while net.next_event().is_some_and(|t| t < 30_000) {
            net.advance();
            let now = net.now();
            let h = net.node_mut::<Chip>(chip).ghost_qlength(now, 0, 0);
            heard.resize(now as usize, *heard.last().unwrap());
            heard.push(h);
        }
        let rx: Vec<(Ipv4Addr, u16, u8)> = net
            .node::<Probe>(receiver)
            .received()
            .iter()
            .map(|(_, b)| {
                let ip = t2_pipeline::headers::parse_frame(b).unwrap().ipv4.unwrap();
                (ip.src, ip.ident, b[15] & 3)
            })
            .collect();
        (rx, heard)
    };
    let (rx, heard) = run(Stepping::EveryCycle);
    assert_eq!(rx.len(), 60);
    let mut marked = 0;
    for &(_, ident, ecn) in &rx {
        // Each frame entered ingress in the cycle its last bit arrived (send + 1).
        let stage0 = send_at(ident) + 1 + 64;
        let expect = if heard[stage0 as usize] >= 100 { 3 } else { 1 };
        assert_eq!(
            ecn, expect,
            "frame {ident}: heard {}",
            heard[stage0 as usize]
        );
        marked += (ecn == 3) as usize;
    }
    assert!(marked > 10 && marked < 50, "{marked} marked");
    assert_eq!(run(Stepping::Jump).0, rx);
}
