//! Time and queue metadata a program reads (issue #11): `ig_intr_md.ingress_mac_tstamp`,
//! `ig_prsr_md.global_tstamp`, `eg_prsr_md.global_tstamp`, `eg_intr_md.enq_tstamp`,
//! `deq_timedelta`, `egress_qid`, `egress_cos` and `pkt_length`, each checked against the
//! cycle the packet arrived, entered a gress, joined or left its queue. Nanoseconds are
//! `cycles x 1e9 / clock_hz` rounded down (the chip's `cycles_to_ns_floor`).

use crate::common::udp_frame;
use proptest::prelude::*;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::ir::{Action, MatchKind, Operand, Primitive, Program, Stmt, Table};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const DELAY: Cycle = 1;

/// ns of cycle `c` at 1.5 GHz, rounded down: `c x 1e9 / 1.5e9`.
fn ns(c: Cycle) -> u64 {
    c * 1_000_000_000 / 1_500_000_000
}

/// The DCTCP switch plus a keyless table per gress that writes what it reads into the
/// headers. Ingress: ethernet.dst_addr <- ingress_mac_tstamp, ethernet.src_addr <-
/// ig global_tstamp (48-bit copies), qid <- 3, ingress_cos <- 5. Egress: ipv4.src_addr <-
/// enq_tstamp, ipv4.dst_addr <- eg global_tstamp[31:0], l4.src_port <- its [47:32],
/// l4.dst_port <- deq_timedelta[15:0], diffserv <- egress_qid, ttl <- egress_cos,
/// total_len <- pkt_length.
fn stamping_program() -> Program {
    let mut p = t2sim::schemes::dctcp::program(400);
    let set = |dst: &str, src: &str| Primitive::set(dst, Operand::field(src));
    p.actions.push(
        Action::new("stamp_in")
            .prim(set("ethernet.dst_addr", "ig_intr_md.ingress_mac_tstamp"))
            .prim(set("ethernet.src_addr", "ig_prsr_md.global_tstamp"))
            .prim(Primitive::SetQid {
                qid: Operand::Const(3),
            })
            .prim(Primitive::set(
                "ig_intr_tm_md.ingress_cos",
                Operand::Const(5),
            )),
    );
    p.actions.push(
        Action::new("stamp_out")
            .prim(set("ipv4.src_addr", "eg_intr_md.enq_tstamp"))
            .prim(set("ipv4.dst_addr", "eg_prsr_md.global_tstamp[31:0]"))
            .prim(set("l4.src_port", "eg_prsr_md.global_tstamp[47:32]"))
            .prim(set("l4.dst_port", "eg_intr_md.deq_timedelta[15:0]"))
            .prim(set("ipv4.diffserv", "eg_intr_md.egress_qid"))
            .prim(set("ipv4.ttl", "eg_intr_md.egress_cos"))
            .prim(set("ipv4.total_len", "eg_intr_md.pkt_length")),
    );
    for (t, a) in [("stamp_in", "stamp_in"), ("stamp_out", "stamp_out")] {
        p.tables.push(
            Table::new(t, MatchKind::Exact, &[], 0)
                .action(a)
                .default_action(a, &[]),
        );
    }
    p.ingress.push(Stmt::apply("stamp_in"));
    p.egress.push(Stmt::apply("stamp_out"));
    p
}

/// What one received frame carries.
#[derive(Debug, PartialEq, Eq)]
struct Stamps {
    mac: u64,
    ig_global: u64,
    enq: u32,
    eg_global: u64,
    deq_delta_low16: u16,
    egress_qid: u8,
    egress_cos: u8,
    pkt_length: u16,
}

fn stamps(b: &[u8]) -> Stamps {
    let be = |r: std::ops::Range<usize>| b[r].iter().fold(0u64, |a, &x| a << 8 | x as u64);
    Stamps {
        mac: be(0..6),
        ig_global: be(6..12),
        enq: be(26..30) as u32,
        eg_global: be(34..36) << 32 | be(30..34),
        deq_delta_low16: be(36..38) as u16,
        egress_qid: b[15],
        egress_cos: b[22],
        pkt_length: be(16..18) as u16,
    }
}

/// Two 1480-byte UDP frames whose last bits reach ports 1 and 2 of pipe 0 in the same
/// cycle `arrive`, both for port 0; returns the chip's ingress and egress latencies and
/// what the receiver got, in order, with the cycle each arrived.
fn run(stepping: Stepping, arrive: Cycle) -> (Cycle, Cycle, Vec<(Cycle, Vec<u8>)>) {
    run_script(stepping, &[(arrive, 0, 1434), (arrive, 1, 1434)])
}

/// Frames `(last-bit arrival cycle, sender 0 or 1, UDP payload bytes)` into ports 1 and 2,
/// all for port 0 (each sender's in cycle order, far enough apart to serialize).
fn run_script(
    stepping: Stepping,
    frames: &[(Cycle, usize, usize)],
) -> (Cycle, Cycle, Vec<(Cycle, Vec<u8>)>) {
    let port = |mac| PortSpec {
        pipe: 0,
        mac,
        channel: 0,
        bps: G100,
    };
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![port(0), port(1), port(2)],
        routes: vec![(RECEIVER, 0)],
        program: Some(stamping_program()),
    };
    let mut net = Network::new(stepping);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    let rx = net.add(Probe::new(G100, Vec::new()));
    for (k, src) in [Ipv4Addr::new(10, 0, 1, 1), Ipv4Addr::new(10, 0, 2, 1)]
        .into_iter()
        .enumerate()
    {
        let script = frames
            .iter()
            .filter(|f| f.1 == k)
            .map(|&(at, _, payload)| (at - DELAY, udp_frame(src, RECEIVER, 64, payload)))
            .collect();
        let tx = net.add(Probe::new(G100, script));
        net.link(tx, 0, chip, 1 + k, DELAY).unwrap();
    }
    net.link(chip, 0, rx, 0, DELAY).unwrap();
    let last = frames.iter().map(|f| f.0).max().unwrap_or(0);
    net.run_until(last + 20_000);
    let c = net.node::<Chip>(chip);
    let (i, e) = (c.ingress_latency(), c.egress_latency());
    (i, e, net.node::<Probe>(rx).received().to_vec())
}

fn check_stamps(arrive: Cycle) {
    let (i, e, got) = run(Stepping::Jump, arrive);
    assert_eq!(got.len(), 2);
    let first = stamps(&got[0].1);
    // Frame: 14 + 20 + 8 + 1434 bytes + 4 FCS = 1480 bytes; serialization at 100G:
    // 1500 x 8 x 1.5e9 / 1e11 = 180 cycles exactly, so back-to-back frames end 180 apart.
    let ser = 180;
    // The first frame enters the ingress parser in its arrival cycle, joins the queue
    // I + 1 later, leaves it queue_latency_cycles (300) later and enters egress a cycle on.
    let enq = arrive + i + 1;
    let deq = enq + 300;
    assert_eq!(
        first,
        Stamps {
            mac: ns(arrive),
            ig_global: ns(arrive),
            enq: ns(enq) as u32,
            eg_global: ns(deq + 1),
            deq_delta_low16: ns(300) as u16,
            egress_qid: 3,
            egress_cos: 5,
            pkt_length: 1480,
        }
    );
    assert_eq!(got[0].0, deq + 1 + e + 1 + ser + DELAY);
    // The second waited one cycle for the ingress slot (one packet per cycle per pipe), so
    // its global stamp is a cycle later than its MAC stamp; it left the queue when the
    // MAC would be free: the egress entry is read back from its arrival at the receiver.
    let second = stamps(&got[1].1);
    let eg_entry = got[1].0 - DELAY - ser - 1 - e;
    let deq2 = eg_entry - 1;
    assert_eq!(
        second,
        Stamps {
            mac: ns(arrive),
            ig_global: ns(arrive + 1),
            enq: ns(enq + 1) as u32,
            eg_global: ns(eg_entry),
            deq_delta_low16: ns(deq2 - (enq + 1)) as u16,
            egress_qid: 3,
            egress_cos: 5,
            pkt_length: 1480,
        }
    );
    assert!(deq2 > deq, "the second left the queue after the first");
}

#[test]
fn timestamps_and_queue_metadata_match_the_packets_cycles() {
    check_stamps(1_000);
    // Past 2^32 ns (4.29 s): the 48-bit stamps carry into their high 16 bits.
    let arrive = 6_500_000_000;
    assert!(ns(arrive) >> 32 == 1);
    check_stamps(arrive);
}

#[test]
fn stamps_are_the_same_jumping_and_stepping() {
    let jump = run(Stepping::Jump, 1_000);
    let step = run(Stepping::EveryCycle, 1_000);
    assert_eq!(jump, step);
    // The exact figures at 1000 cycles: the MAC stamp is ns(1000) = 666 ns.
    assert_eq!(stamps(&jump.2[0].1).mac, 666);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random frames on two ports: jumping and stepping give the same stamps, and every
    /// frame's stamps are ordered as its path is (MAC <= ingress parser < enqueue < egress
    /// parser), with deq_timedelta at least the TM's 300 cycles (200 ns).
    #[test]
    fn stamps_jump_equals_step_and_follow_the_path(
        gaps in prop::collection::vec((0u64..400, 0usize..2, 46usize..1400), 1..8),
    ) {
        // Each sender's frames at least one serialization apart (1500 B: 180 cycles).
        let mut at = [1_000u64; 2];
        let frames: Vec<(Cycle, usize, usize)> = gaps
            .iter()
            .map(|&(gap, k, payload)| {
                at[k] += 180 + gap;
                (at[k], k, payload)
            })
            .collect();
        let jump = run_script(Stepping::Jump, &frames);
        let step = run_script(Stepping::EveryCycle, &frames);
        prop_assert_eq!(&jump, &step);
        prop_assert_eq!(jump.2.len(), frames.len());
        for (_, b) in &jump.2 {
            let s = stamps(b);
            prop_assert!(s.mac <= s.ig_global);
            prop_assert!(s.ig_global < s.enq as u64);
            prop_assert!((s.enq as u64) < s.eg_global);
            prop_assert!(s.deq_delta_low16 as u64 >= ns(300));
            prop_assert_eq!((s.egress_qid, s.egress_cos), (3, 5));
            prop_assert_eq!(s.pkt_length as usize, b.len() + 4);
        }
    }
}

#[test]
fn egress_qid_is_the_queue_among_its_macs_128() {
    // Two 100G ports on MAC 0 (channels 0 and 4) and a sender on MAC 1; the receiver is on
    // the second port, whose queues are 64..=95 of the MAC's 128 (channel 4 of 8). qid 3
    // leaves as egress_qid 67, the number AFC and the ghost thread use for that queue.
    let port = |mac, channel| PortSpec {
        pipe: 0,
        mac,
        channel,
        bps: G100,
    };
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![port(0, 0), port(0, 4), port(1, 0)],
        routes: vec![(RECEIVER, 1)],
        program: Some(stamping_program()),
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    let frame = udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 64, 100);
    let tx = net.add(Probe::new(G100, vec![(1_000, frame)]));
    let rx = net.add(Probe::new(G100, Vec::new()));
    net.link(tx, 0, chip, 2, DELAY).unwrap();
    net.link(chip, 1, rx, 0, DELAY).unwrap();
    net.run_until(20_000);
    let got = net.node::<Probe>(rx).received();
    assert_eq!(got.len(), 1);
    assert_eq!(stamps(&got[0].1).egress_qid, 67);
    let c = net.node::<Chip>(chip);
    assert_eq!(c.afc_address(1, 3), Some((0, 1, 67)));
}
