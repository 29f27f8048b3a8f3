//! Egress-to-egress mirroring: the egress program's `mirror` copies the packet as it leaves
//! the egress deparser, truncated per the session, through the TM to the session's port; a
//! copy is never mirrored again by egress; copies are counted from creation to delivery or
//! drop, on every cycle (a proptest), and jumping gives what stepping gives.

use crate::common::udp_frame;
use proptest::prelude::*;
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::ir::{
    Action, Cmp, Condition, MatchKind, Operand, Primitive, Program, Stmt, Table,
};
use t2_testbench::{Network, NodeId, Probe, Stepping};
use t2sim::chip::ChipCounters;
use t2sim::{Chip, ChipDrop, MirrorSession};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const SESSION: u8 = 9;

/// Host routes, and in egress a table that mirrors every packet to session 9.
fn program() -> Program {
    let mut p = t2sim::schemes::dctcp::program(400);
    p.actions.push(crate::common::mirror_to_action());
    p.tables.push(
        Table::new("egress_mirror", MatchKind::Exact, &[], 0)
            .action("mirror_to")
            .default_action("mirror_to", &[SESSION as u64]),
    );
    p.egress.push(Stmt::apply("egress_mirror"));
    p
}

/// Pipe 0: port 0 to the receiver, port 1 to the monitor, port 2 from the sender.
fn chip() -> Chip {
    chip_with(program())
}

/// [`chip`] running `program`.
fn chip_with(program: Program) -> Chip {
    crate::common::pipe0_chip(&[(0, 0), (0, 2), (1, 0)], vec![(RECEIVER, 0)], program)
}

fn session(truncate_bytes: u32) -> Option<MirrorSession> {
    Some(MirrorSession {
        port: 1,
        qid: 0,
        truncate_bytes: Some(truncate_bytes),
    })
}

struct Run {
    rx: Vec<(Cycle, Vec<u8>)>,
    copies: Vec<(Cycle, Vec<u8>)>,
    counters: ChipCounters,
    inside: u64,
    copies_inside: u64,
    /// Packets still allocated in the network's pool at the end.
    live: usize,
}

/// Sends one 1046-byte frame at cycle 100 (its last bit reaches the chip at 101) through
/// `chip`, with 1-cycle links, until nothing is left to do.
fn run(chip: Chip, stepping: Stepping) -> Run {
    let mut net = Network::new(stepping);
    let chip = net.add(chip);
    let frame = udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 64, 1000);
    assert_eq!(frame.len() + 4, 1046);
    let sender = net.add(Probe::new(G100, vec![(100, frame)]));
    let rx = net.add(Probe::new(G100, Vec::new()));
    let monitor = net.add(Probe::new(G100, Vec::new()));
    net.link(sender, 0, chip, 2, 1).unwrap();
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(chip, 1, monitor, 0, 1).unwrap();
    while net.next_event().is_some() {
        net.advance();
    }
    let c = net.node::<Chip>(chip);
    Run {
        rx: net.node::<Probe>(rx).received().to_vec(),
        copies: net.node::<Probe>(monitor).received().to_vec(),
        counters: c.counters().clone(),
        inside: c.packets_inside(),
        copies_inside: c.mirror_copies_inside(),
        live: net.live_packets(),
    }
}

/// Every copy made is delivered, dropped (with its cause) or still inside.
fn copies_conserved(r: &Run) {
    let c = &r.counters;
    let dropped: u64 = c.mirror_drops.values().sum();
    assert_eq!(c.mirrored, c.mirror_delivered + dropped + r.copies_inside);
    assert_eq!(
        c.received + c.mirrored,
        c.transmitted + c.dropped() + r.inside
    );
}

#[test]
fn the_copy_of_the_outgoing_packet_arrives_at_the_documented_cycle_truncated() {
    let mut c = chip();
    c.set_mirror_session(SESSION, session(100)).unwrap();
    let (i, e) = (c.ingress_latency(), c.egress_latency());
    let q = c.params().tm.queue_latency_cycles as Cycle;
    let line = LineRate::new(c.params().clock(), G100);
    // The original leaves the egress deparser in cycle X = A + I + 1 + Q + 1 + E (A = 101,
    // its arrival); the TM admits the copy at X + 1, sends it to the egress at X + 1 + Q; it
    // enters the egress one cycle later, leaves it E later, reaches the MAC one cycle later
    // and its last bit leaves after its serialization: X + 1 + Q + 1 + E + 1 + ser(104).
    // Each probe hears a frame one cycle (the link) after its last bit leaves.
    let x = 101 + i + 1 + q + 1 + e;
    let original_at = 101 + c.unloaded_latency(1046, 0) + 1;
    let copy_at = x + 1 + q + 1 + e + 1 + line.serialization_cycles_ceil(104) + 1;
    let stepped = run(c, Stepping::EveryCycle);
    assert_eq!(stepped.rx.len(), 1);
    assert_eq!(
        (stepped.rx[0].0, stepped.rx[0].1.len()),
        (original_at, 1042)
    );
    assert_eq!(
        original_at,
        x + 1 + line.serialization_cycles_ceil(1046) + 1
    );
    // The copy: the first 100 bytes of the packet as it went out (TTL already lowered).
    assert_eq!(stepped.copies.len(), 1);
    assert_eq!(stepped.copies[0].0, copy_at);
    assert_eq!(stepped.copies[0].1, stepped.rx[0].1[..100]);
    assert_eq!(stepped.rx[0].1[22], 63);
    let c = &stepped.counters;
    assert_eq!(
        (c.received, c.transmitted, c.mirrored, c.mirrored_egress),
        (1, 2, 1, 1)
    );
    // The copy crossed the egress too, where the program asked to mirror it again.
    assert_eq!((c.mirror_delivered, c.mirror_not_repeated), (1, 1));
    assert!(c.drops.is_empty() && c.mirror_drops.is_empty());
    assert_eq!((stepped.inside, stepped.copies_inside), (0, 0));
    copies_conserved(&stepped);
    let mut c = chip();
    c.set_mirror_session(SESSION, session(100)).unwrap();
    let jumped = run(c, Stepping::Jump);
    assert_eq!(jumped.rx, stepped.rx);
    assert_eq!(jumped.copies, stepped.copies);
    assert_eq!(jumped.counters, stepped.counters);
}

#[test]
fn a_copy_the_tm_refuses_is_a_counted_mirror_drop() {
    // The monitor's queue 0 takes one cell; a copy cut to 200 bytes (204 with FCS) needs 2.
    let mut c = chip();
    c.set_mirror_session(SESSION, session(200)).unwrap();
    let mut queues = vec![t2_tm::QueueConfig::default(); 16];
    queues[0].limit_cells = Some(1);
    c.set_port_queues(1, &queues).unwrap();
    let r = run(c, Stepping::Jump);
    assert_eq!(r.rx.len(), 1);
    assert!(r.copies.is_empty());
    let limit = ChipDrop::Tm(t2_tm::TmDrop::QueueLimit);
    let c = &r.counters;
    assert_eq!(
        (c.mirrored, c.mirrored_egress, c.mirror_delivered),
        (1, 1, 0)
    );
    assert_eq!(c.mirror_drops, [(limit, 1)].into());
    assert_eq!(c.drops, [(limit, 1)].into());
    assert_eq!(c.mirror_not_repeated, 0);
    copies_conserved(&r);
}

#[test]
fn neither_ingress_nor_egress_copies_are_mirrored_again_by_egress() {
    // Port 2 (the sender's) is also mirrored at ingress to the same session: the original
    // makes two copies (ingress, egress); each copy's own egress pass asks again, ignored.
    let mut c = chip();
    c.set_mirror_session(SESSION, session(100)).unwrap();
    c.mirror_ingress_port(2, Some(SESSION)).unwrap();
    let r = run(c, Stepping::Jump);
    assert_eq!(r.rx.len(), 1);
    assert_eq!(r.copies.len(), 2);
    assert!(r.copies.iter().all(|(_, b)| b.len() == 100));
    let c = &r.counters;
    assert_eq!(
        (
            c.mirrored,
            c.mirrored_egress,
            c.mirror_delivered,
            c.mirror_not_repeated
        ),
        (2, 1, 2, 2)
    );
    assert_eq!(c.transmitted, 3);
    copies_conserved(&r);
}

/// Two senders (ports 2 and 3) to the receiver; egress mirrors everything to the monitor
/// (port 1), whose queue 0 may be small enough to drop copies.
fn mirror_net(
    senders: [Vec<(Cycle, Vec<u8>)>; 2],
    truncate: Option<u32>,
    limit: Option<u32>,
    ingress_mirror: bool,
    stepping: Stepping,
) -> (Network, [NodeId; 3]) {
    let mut c = crate::common::pipe0_chip(
        &[(0, 0), (0, 2), (1, 0), (1, 2)],
        vec![(RECEIVER, 0)],
        program(),
    );
    c.set_mirror_session(
        SESSION,
        Some(MirrorSession {
            port: 1,
            qid: 0,
            truncate_bytes: truncate,
        }),
    )
    .unwrap();
    if ingress_mirror {
        c.mirror_ingress_port(2, Some(SESSION)).unwrap();
    }
    let mut queues = vec![t2_tm::QueueConfig::default(); 16];
    queues[0].limit_cells = limit;
    c.set_port_queues(1, &queues).unwrap();
    let mut net = Network::new(stepping);
    let chip = net.add(c);
    let rx = net.add(Probe::new(G100, Vec::new()));
    let monitor = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(chip, 1, monitor, 0, 1).unwrap();
    for (k, script) in senders.into_iter().enumerate() {
        let s = net.add(Probe::new(G100, script));
        net.link(s, 0, chip, 2 + k, 1).unwrap();
    }
    (net, [chip, rx, monitor])
}

fn script() -> impl Strategy<Value = Vec<(Cycle, Vec<u8>)>> {
    // Gaps of at least 190 cycles: a 1446-byte frame takes 185 at 100G.
    prop::collection::vec((190u64..600, 0usize..1400), 1..15).prop_map(|v| {
        let mut at = 100;
        v.into_iter()
            .map(|(gap, payload)| {
                at += gap;
                (
                    at,
                    udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 64, payload),
                )
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn copies_are_conserved_on_every_cycle_and_jumping_equals_stepping(
        a in script(),
        b in script(),
        truncate in prop::option::of(60u32..1500),
        limit in prop::option::of(1u32..40),
        ingress_mirror in any::<bool>(),
    ) {
        let senders = [a, b];
        let (mut net, [chip, rx, monitor]) =
            mirror_net(senders.clone(), truncate, limit, ingress_mirror, Stepping::EveryCycle);
        while net.next_event().is_some() {
            net.advance();
            let c = net.node::<Chip>(chip);
            let k = c.counters();
            let inside = c.mirror_copies_inside();
            let dropped: u64 = k.mirror_drops.values().sum();
            prop_assert_eq!(k.mirrored, k.mirror_delivered + dropped + inside, "cycle {}", net.now());
            prop_assert_eq!(
                k.received + k.mirrored,
                k.transmitted + k.dropped() + c.packets_inside(),
                "cycle {}", net.now()
            );
            prop_assert!(k.mirror_drops.iter().all(|(cause, n)| k.drops.get(cause) >= Some(n)));
        }
        let result = |net: &Network| {
            (
                net.node::<Probe>(rx).received().to_vec(),
                net.node::<Probe>(monitor).received().to_vec(),
                net.node::<Chip>(chip).counters().clone(),
            )
        };
        let stepped = result(&net);
        let c = &stepped.2;
        // Every original is mirrored once by egress (and once more at ingress when asked);
        // every copy's own egress pass asks again, in vain.
        let sent = (senders[0].len() + senders[1].len()) as u64;
        let from_port_2 = senders[0].len() as u64;
        prop_assert_eq!(c.mirrored_egress, sent);
        prop_assert_eq!(c.mirrored, sent + if ingress_mirror { from_port_2 } else { 0 });
        prop_assert_eq!(c.mirror_not_repeated, c.mirror_delivered);
        prop_assert_eq!(stepped.1.len() as u64, c.mirror_delivered);
        prop_assert!(stepped.1.iter().all(|(_, f)| truncate.is_none_or(|t| f.len() <= t as usize)));
        let (mut net, _) = mirror_net(senders, truncate, limit, ingress_mirror, Stepping::Jump);
        while net.next_event().is_some() {
            net.advance();
        }
        prop_assert_eq!(result(&net), stepped);
    }
}

/// Host routes (the forward action lowers the TTL in ingress), an egress that sets the DSCP
/// of packets to the receiver to 10, and in `gress` a table mirroring every packet to session
/// 9 with `mirror_io_select` = `incoming`.
fn io_select_program(gress: &str, incoming: bool) -> Program {
    let mut p = t2sim::schemes::dctcp::program(400);
    let field = match gress {
        "ingress" => "ig_intr_dprsr_md.mirror_io_select",
        _ => "eg_intr_dprsr_md.mirror_io_select",
    };
    p.actions.push(
        Action::new("mirror_io")
            .prim(Primitive::Mirror {
                session: Operand::Const(SESSION as u64),
            })
            .prim(Primitive::set(field, Operand::Const(incoming as u64))),
    );
    p.actions
        .push(Action::new("remark").prim(Primitive::set("ipv4.diffserv", Operand::Const(10 << 2))));
    p.tables
        .push(Table::new("mirror_io", MatchKind::Exact, &[], 0).action("mirror_io"));
    p.tables
        .push(Table::new("remark", MatchKind::Exact, &[], 0).action("remark"));
    // Only what goes to the receiver (device port 8) is remarked: copies on their way to the
    // monitor keep what they were copied with.
    p.egress.push(Stmt::if_(
        Condition::new("eg_intr_md.egress_port", Cmp::Eq, Operand::Const(8)),
        vec![Stmt::apply("remark")],
        vec![],
    ));
    match gress {
        "ingress" => p.ingress.push(Stmt::apply("mirror_io")),
        _ => p.egress.push(Stmt::apply("mirror_io")),
    }
    p
}

#[test]
fn mirror_io_select_copies_the_packet_as_it_came_in() {
    let sent = udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 64, 1000);
    let copy = |gress: &str, incoming: bool| {
        let mut c = chip_with(io_select_program(gress, incoming));
        c.set_mirror_session(SESSION, session(100)).unwrap();
        let r = run(c, Stepping::Jump);
        assert_eq!(r.rx.len(), 1);
        assert_eq!(r.copies.len(), 1);
        copies_conserved(&r);
        // The incoming copy is a packet of its own until the session's copy is made.
        assert_eq!((r.inside, r.copies_inside, r.live), (0, 0, 0));
        (r.rx[0].1.clone(), r.copies[0].1.clone())
    };
    // What leaves: TTL 63 (ingress) and DSCP 10 (egress).
    let (out, ingress_out) = copy("ingress", false);
    assert_eq!((out[22], out[15]), (63, 10 << 2));
    // Ingress, outgoing: after the ingress deparser (TTL 63, DSCP still 0).
    let mut after_ingress = udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 63, 1000);
    after_ingress.truncate(100);
    assert_eq!(ingress_out, after_ingress);
    // Ingress, incoming: the packet as it arrived.
    assert_eq!(copy("ingress", true).1, sent[..100]);
    // Egress, outgoing: what leaves; incoming: what left the ingress (TTL 63, DSCP 0).
    assert_eq!(copy("egress", false).1, out[..100]);
    assert_eq!(copy("egress", true).1, after_ingress);
}
