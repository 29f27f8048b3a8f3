use super::*;
use crate::metrics::Framing;
use crate::network::{Network, NodeId, Stepping};
use t2_pipeline::headers::MacAddr;

const G100: u64 = 100_000_000_000;

/// A two-port wire tap between hosts: forwards each frame in the cycle it arrives,
/// dropping (and counting) every `drop_every`-th data frame and every
/// `drop_ack_every`-th ACK, and marking CE on data frames if `mark`.
struct Tap {
    drop_every: u64,
    drop_ack_every: u64,
    mark: bool,
    /// Hold the first data frame until the second has passed, and mark the second CE:
    /// the receiver then gets a CE-marked segment out of order.
    overtake_first: bool,
    held: Option<PacketHandle>,
    /// Drop the first copy of the data segments with these sequence numbers.
    drop_seqs: Vec<u32>,
    /// Every data frame seen: (cycle, sequence number).
    log: Vec<(Cycle, u32)>,
    /// The ECN bits of every data frame seen, as it arrived.
    ecn: Vec<u8>,
    /// Mark CE on the first copy of the data segments with these sequence numbers.
    mark_seqs: Vec<u32>,
    /// Every ACK seen going back: (cycle, acknowledgement number, ECE).
    acks: Vec<(Cycle, u32, bool)>,
    seen: [u64; 2],
    dropped: u64,
    queue: Vec<Sent>,
}

impl Node for Tap {
    fn name(&self) -> &str {
        "tap"
    }
    fn port_count(&self) -> usize {
        2
    }
    fn port_bps(&self, _port: usize) -> u64 {
        G100
    }
    fn receive(&mut self, now: Cycle, port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        self.seen[port] += 1;
        if port == 1 {
            let b = pool.bytes(pkt);
            let ack = u32::from_be_bytes(b[42..46].try_into().unwrap());
            self.acks.push((now, ack, u16::from(b[47]) & Tcp::ECE != 0));
        }
        if port == 0 {
            let b = pool.bytes(pkt);
            let seq = u32::from_be_bytes(b[38..42].try_into().unwrap());
            self.log.push((now, seq));
            self.ecn.push(b[TOS_OFFSET] & 0b11);
            if let Some(k) = self.mark_seqs.iter().position(|&s| s == seq) {
                self.mark_seqs.remove(k);
                let b = pool.bytes_mut(pkt);
                b[TOS_OFFSET] |= CE;
                let c = headers::ipv4_header_checksum(&b[14..34]);
                b[24..26].copy_from_slice(&c.to_be_bytes());
            }
            if let Some(k) = self.drop_seqs.iter().position(|&s| s == seq) {
                self.drop_seqs.remove(k);
                self.dropped += 1;
                pool.free(pkt);
                return;
            }
        }
        let every = if port == 0 {
            self.drop_every
        } else {
            self.drop_ack_every
        };
        if every > 0 && self.seen[port].is_multiple_of(every) {
            self.dropped += 1;
            pool.free(pkt);
            return;
        }
        if port == 0 && self.overtake_first && self.seen[0] <= 2 {
            if self.seen[0] == 1 {
                self.held = Some(pkt);
                return;
            }
            let b = pool.bytes_mut(pkt);
            b[TOS_OFFSET] |= CE;
            let c = headers::ipv4_header_checksum(&b[14..34]);
            b[24..26].copy_from_slice(&c.to_be_bytes());
            self.queue.push(Sent { port: 1, pkt });
            let first = self.held.take().expect("the first frame is held");
            self.queue.push(Sent {
                port: 1,
                pkt: first,
            });
            return;
        }
        if port == 0 && self.mark {
            let b = pool.bytes_mut(pkt);
            b[TOS_OFFSET] |= CE;
            let c = headers::ipv4_header_checksum(&b[14..34]);
            b[24..26].copy_from_slice(&c.to_be_bytes());
        }
        self.queue.push(Sent {
            port: 1 - port,
            pkt,
        });
    }
    fn tick(&mut self, _now: Cycle, _pool: &mut PacketPool, out: &mut Vec<Sent>) {
        out.append(&mut self.queue);
    }
    fn next_event(&self, _now: Cycle) -> Option<Cycle> {
        None
    }
}

fn peer(i: u8) -> Peer {
    Peer {
        ip: Ipv4Addr::new(10, 0, 0, i + 1),
        mac: MacAddr([2, 0, 0, 0, 0, i + 1]),
    }
}

fn flow(id: u32, start: Cycle, size: u64) -> FlowSpec {
    FlowSpec {
        start,
        id,
        src: 0,
        dst: 1,
        size_bytes: size,
    }
}

/// Sender - tap - receiver, each link `delay` cycles.
fn net(
    stepping: Stepping,
    config: TransportConfig,
    tap: Tap,
    flows: &[FlowSpec],
) -> (Network, NodeId, NodeId, NodeId) {
    net_with(stepping, config, &[], tap, flows)
}

/// [`net`] with both hosts running `features`.
fn net_with(
    stepping: Stepping,
    config: TransportConfig,
    features: &[FeatureSpec],
    tap: Tap,
    flows: &[FlowSpec],
) -> (Network, NodeId, NodeId, NodeId) {
    let clock = Clock::tofino2();
    let peers = vec![peer(0), peer(1)];
    let host = |name, me, peers| {
        TransportHost::new(name, me, clock, G100, config, peers)
            .and_then(|h| h.with_features(features))
            .unwrap()
    };
    let mut a = host("a", peer(0), peers.clone());
    for f in flows {
        a.add_flow(*f).unwrap();
    }
    let b = host("b", peer(1), peers);
    let mut net = Network::new(stepping);
    let (a, t, b) = (net.add(a), net.add(tap), net.add(b));
    net.link(a, 0, t, 0, 150).unwrap();
    net.link(t, 1, b, 0, 150).unwrap();
    (net, a, t, b)
}

fn clean_tap() -> Tap {
    Tap {
        drop_every: 0,
        drop_ack_every: 0,
        mark: false,
        overtake_first: false,
        held: None,
        drop_seqs: Vec::new(),
        log: Vec::new(),
        ecn: Vec::new(),
        mark_seqs: Vec::new(),
        acks: Vec::new(),
        seen: [0; 2],
        dropped: 0,
        queue: Vec::new(),
    }
}

#[test]
fn a_lone_flow_takes_exactly_its_ideal_time() {
    // (MSS, flow bytes, exact FCT). Base RTT: 300 cycles of propagation each way and one
    // 64 B ACK (84 wire bytes = 10.08 cycles, 11 whole). Data frames are MSS + 62 bytes.
    for (mss, size, expect) in [
        // 10 frames of 1,062 B + one of 562 B: (10 x 1,082 + 582) x 8 bits = 91,216 bits
        // = 1,368.24 cycles, 1,369 whole.
        (1000, 10_500, 1_369 + 611),
        // 1,000 frames of 1,062 B, 8,656 wire bits each: 1,000 x 129.84 = 129,840 cycles.
        (1000, 1_000_000, 129_840 + 611),
        // 1,000 frames of 1,508 B, 12,224 wire bits each: 1,000 x 183.36 = 183,360 cycles
        // (a NIC that started each frame at a cycle edge took 184 and was 640 late).
        (1446, 1_446_000, 183_360 + 611),
    ] {
        let config = TransportConfig {
            mss,
            ..TransportConfig::fixed(4_000_000, 1_000_000)
        };
        for stepping in [Stepping::Jump, Stepping::EveryCycle] {
            let (mut net, a, _, b) = net(stepping, config, clean_tap(), &[flow(0, 10, size)]);
            net.run_until(400_000);
            let out = net.node::<TransportHost>(a).outcomes();
            let fct = out[0].finish.unwrap() - 10;
            let line = LineRate::new(Clock::tofino2(), G100);
            let framing = Framing {
                mss,
                overhead: SEGMENT_OVERHEAD,
            };
            assert_eq!(fct, expect, "{size} B");
            assert_eq!(fct, framing.ideal_fct(size, line, 600 + 11), "{size} B");
            assert_eq!(net.node::<TransportHost>(b).data_bytes_received(), size);
            assert_eq!(net.live_packets(), 0);
        }
    }
}

fn lossy_tap() -> Tap {
    Tap {
        drop_every: 7,
        drop_ack_every: 5,
        ..clean_tap()
    }
}

fn lossy_flows() -> Vec<FlowSpec> {
    vec![
        flow(0, 0, 50_000),
        flow(1, 100, 7_777),
        flow(2, 2_000, 120_000),
    ]
}

#[test]
fn every_byte_arrives_through_a_lossy_path() {
    let config = TransportConfig::fixed(20_000, 5_000);
    let (mut net, a, t, b) = net(Stepping::Jump, config, lossy_tap(), &lossy_flows());
    net.run_until(5_000_000);
    let sender = net.node::<TransportHost>(a);
    assert!(sender.all_done());
    let out = sender.outcomes();
    assert!(out.iter().all(|o| o.finish.is_some()));
    assert!(out.iter().map(|o| o.timeouts).sum::<u64>() > 0);
    assert!(out.iter().map(|o| o.retransmitted_segments).sum::<u64>() > 0);
    let receiver = net.node::<TransportHost>(b);
    assert_eq!(receiver.data_bytes_received(), 50_000 + 7_777 + 120_000);
    assert!(net.node::<Tap>(t).dropped > 0);
    // Every frame is accounted for: all were delivered or dropped at the tap.
    assert_eq!(net.live_packets(), 0);
    assert_eq!(net.frames_on_links(), 0);
}

#[test]
fn stepping_every_cycle_matches_jumping() {
    let config = TransportConfig::fixed(20_000, 5_000);
    let run = |stepping| {
        let (mut net, a, _, b) = net(stepping, config, lossy_tap(), &lossy_flows());
        net.run_until(400_000);
        let s = net.node::<TransportHost>(a);
        let r = net.node::<TransportHost>(b);
        let arrivals: Vec<Vec<u64>> = (0..3)
            .map(|i| r.arrivals(i).unwrap_or(&[]).to_vec())
            .collect();
        (
            s.outcomes(),
            s.frames_sent(),
            r.frames_sent(),
            arrivals,
            net.link_tx(a, 0),
        )
    };
    let jumped = run(Stepping::Jump);
    assert!(jumped.0.iter().all(|o| o.finish.is_some()));
    assert_eq!(jumped, run(Stepping::EveryCycle));
}

#[test]
fn bad_settings_and_flows_are_refused() {
    let clock = Clock::tofino2();
    let bad = TransportConfig {
        mss: 0,
        ..TransportConfig::fixed(10_000, 100)
    };
    let e = TransportHost::new("h", peer(0), clock, G100, bad, vec![])
        .err()
        .unwrap();
    assert_eq!(e, "h: mss 0 is outside 1..=9154");
    let small = TransportConfig::fixed(999, 100);
    assert!(TransportHost::new("h", peer(0), clock, G100, small, vec![]).is_err());
    let mut h = TransportHost::new(
        "h",
        peer(0),
        clock,
        G100,
        TransportConfig::fixed(10_000, 100),
        vec![peer(0)],
    )
    .unwrap();
    assert!(h
        .add_flow(flow(0, 0, 10))
        .unwrap_err()
        .contains("peer table has 1"));
}

/// A 9,000-byte flow (nine 1,000-byte segments, all in the first window) through `tap`,
/// its receiver ACKing every `ack_every` segments with a 10,000-cycle delayed-ACK timer:
/// the tap's log of ACKs, the flow's finish and the ACK frames the receiver sent.
fn delayed_ack_run(
    ack_every: u32,
    congestion: Congestion,
    tap: Tap,
) -> (Vec<(Cycle, u32, bool)>, Cycle, u64) {
    let config = TransportConfig {
        congestion,
        ack_every,
        delayed_ack: 10_000,
        ..TransportConfig::fixed(100_000, 100_000)
    };
    let (mut net, a, t, b) = net(Stepping::Jump, config, tap, &[flow(0, 0, 9_000)]);
    net.run_until(2_000_000);
    let s = net.node::<TransportHost>(a);
    assert!(s.all_done());
    assert_eq!(s.outcomes()[0].timeouts, 0);
    let acks = net.node::<Tap>(t).acks.clone();
    let finish = s.outcomes()[0].finish.unwrap();
    (acks, finish, net.node::<TransportHost>(b).frames_sent())
}

#[test]
fn delayed_acks_cover_two_segments_and_a_lone_one_waits_for_the_timer() {
    let (every, finish_every, sent_every) = delayed_ack_run(1, Congestion::Fixed, clean_tap());
    let (two, finish_two, sent_two) = delayed_ack_run(2, Congestion::Fixed, clean_tap());
    assert_eq!(sent_every, 9);
    assert_eq!(sent_two, 5, "segments 2, 4, 6 and 8, then the ninth alone");
    let acked = |v: &[(Cycle, u32, bool)]| v.iter().map(|a| a.1).collect::<Vec<_>>();
    assert_eq!(acked(&two), [2000, 4000, 6000, 8000, 9000]);
    // The second of each pair is ACKed as it arrives, as with an ACK per segment.
    for k in 0..4 {
        assert_eq!(two[k].0, every[2 * k + 1].0, "ACK of {}", two[k].1);
    }
    // The ninth segment's ACK waits for the timer: 10,000 cycles later than at once.
    assert_eq!(two[4].0, every[8].0 + 10_000);
    assert_eq!(finish_two, finish_every + 10_000);
}

#[test]
fn a_gap_and_its_repair_are_acked_at_once() {
    // The first copy of segment 2,000 is lost: segments 3-8 arrive out of order and are each
    // ACKed at once with SACK (RFC 5681 §4.2), the third duplicate starts fast retransmit,
    // and the repair that fills the hole is ACKed at once too.
    let tap = Tap {
        drop_seqs: vec![2000],
        ..clean_tap()
    };
    let (acks, _, sent) = delayed_ack_run(2, Congestion::Fixed, tap);
    let acked: Vec<u32> = acks.iter().map(|a| a.1).collect();
    assert_eq!(acked, [2000, 2000, 2000, 2000, 2000, 2000, 2000, 9000]);
    assert_eq!(sent, 8);
}

#[test]
fn rto_follows_rfc_6298_arithmetic() {
    // Samples 800, 1200, 400, 800 cycles; minimum 1,000, maximum 100,000, initial 5,000.
    let mut r = RtoEstimator::new(5_000, 1_000, 100_000);
    assert_eq!(
        (r.rto(), r.srtt()),
        (5_000, None),
        "the initial RTO before a sample"
    );
    // First: SRTT = 800, RTTVAR = 400, RTO = 800 + 4 x 400 = 2,400.
    r.sample(800);
    assert_eq!(r.srtt_rttvar_eighths(), Some((800 * 8, 400 * 8)));
    assert_eq!(r.rto(), 2_400);
    // RTTVAR = 3/4 x 400 + 1/4 x |800 - 1200| = 400; SRTT = 7/8 x 800 + 1/8 x 1200 = 850;
    // RTO = 850 + 1,600 = 2,450.
    r.sample(1200);
    assert_eq!(r.srtt_rttvar_eighths(), Some((850 * 8, 400 * 8)));
    assert_eq!(r.rto(), 2_450);
    // RTTVAR = 300 + 1/4 x |850 - 400| = 412.5; SRTT = 743.75 + 50 = 793.75;
    // RTO = 793.75 + 1,650 = 2,443.75, up to 2,444.
    r.sample(400);
    assert_eq!(r.srtt_rttvar_eighths(), Some((6_350, 3_300)));
    assert_eq!(r.rto(), 2_444);
    // RTTVAR = 309.375 + 1/4 x 6.25 = 310.9375 (2,487.5 eighths, truncated to 2,487);
    // SRTT = 694.53125 + 100 = 794.53125 (6,356.25 eighths, truncated to 6,356);
    // RTO = (6,356 + 4 x 2,487) / 8 = 2,037.0, up to 2,038 with the truncation kept.
    r.sample(800);
    assert_eq!(r.srtt_rttvar_eighths(), Some((6_356, 2_487)));
    assert_eq!(r.rto(), (6_356u64 + 4 * 2_487).div_ceil(8));
    // Backoff doubles, up to the maximum; the next sample recomputes it.
    r.back_off();
    assert_eq!(r.rto(), 2 * 2_038);
    for _ in 0..10 {
        r.back_off();
    }
    assert_eq!(r.rto(), 100_000);
    // A steady 100-cycle RTT drives RTTVAR down and the RTO to the minimum.
    for _ in 0..60 {
        r.sample(100);
    }
    assert_eq!(r.rto(), 1_000);
}

#[test]
fn timeouts_back_off_by_doubling() {
    // Every ACK is lost: the one segment is sent at 0 and again at each timeout. Its timer
    // starts when a frame leaves (10,000 cycles, doubling): 10,000, 30,000, 70,000, 150,000.
    // Each copy ends 129.84 cycles after it starts and reaches the tap 150 cycles later.
    let config = TransportConfig::fixed(10_000, 10_000);
    let tap = || Tap {
        drop_ack_every: 1,
        ..clean_tap()
    };
    let run = |stepping| {
        let (mut net, a, t, _) = net(stepping, config, tap(), &[flow(0, 0, 1000)]);
        net.run_until(200_000);
        let s = net.node::<TransportHost>(a);
        (net.node::<Tap>(t).log.clone(), s.outcomes()[0].timeouts)
    };
    let (log, timeouts) = run(Stepping::Jump);
    let at: Vec<Cycle> = log.iter().map(|l| l.0).collect();
    assert_eq!(at, [280, 10_280, 30_280, 70_280, 150_280]);
    assert_eq!(timeouts, 4);
    assert_eq!(run(Stepping::EveryCycle), (log, timeouts));
}

/// What `drop_run` saw: every data frame at the tap (cycle, seq), the flow's outcome, and
/// its last fast recovery (start, end).
type DropRun = (
    Vec<(Cycle, u32)>,
    SenderOutcome,
    Option<(Cycle, Option<Cycle>)>,
);

/// One 20-segment flow through a tap that drops the first copy of the segments at `drop`,
/// with a fixed 10-segment window and a timer far longer than the run's recovery.
fn drop_run(stepping: Stepping, recovery: Recovery, drop: &[u32]) -> DropRun {
    let config = TransportConfig {
        recovery,
        ..TransportConfig::fixed(10_000, 1_000_000)
    };
    let tap = Tap {
        drop_seqs: drop.to_vec(),
        ..clean_tap()
    };
    let (mut net, a, t, b) = net(stepping, config, tap, &[flow(0, 0, 20_000)]);
    net.run_until(100_000);
    assert_eq!(net.node::<TransportHost>(b).data_bytes_received(), 20_000);
    assert_eq!(net.live_packets(), 0);
    let s = net.node::<TransportHost>(a);
    (
        net.node::<Tap>(t).log.clone(),
        s.outcomes()[0],
        s.last_recovery(0),
    )
}

#[test]
fn one_drop_is_repaired_by_fast_retransmit_at_an_exact_cycle() {
    // Segment 2 (seq 2,000) is dropped. Data frame k (from 0) leaves the NIC at
    // (k + 1) x 129.84 cycles and reaches the tap 150 cycles after that cycle ends; its ACK
    // (64 B, 11 cycles on the wire) reaches the sender at ceil((k + 1) x 129.84) + 611. The
    // ACKs of segments 3, 4 and 5 repeat ack 2,000; the third arrives at
    // ceil(6 x 129.84) + 611 = 1,391, and fast retransmit starts: recover = HighData =
    // 11,000 (segment 10 is on the wire since 1,298.4, as ACK 2,000 at 871 opened the
    // window to 12,000). The NIC frees at 11 x 129.84 = 1,428.24 and the retransmission goes
    // first: it ends at 1,558.08 and reaches the tap at 1,559 + 150 = 1,709. At the receiver
    // (1,859) segments 0..=10 are then all there (segment 11 arrives at 1,988), so its ACK
    // is 11,000, which covers recover: it reaches the sender at 1,559 + 611 = 2,170 and
    // recovery ends there.
    for recovery in [Recovery::NewReno, Recovery::Sack] {
        let (log, out, rec) = drop_run(Stepping::Jump, recovery, &[2000]);
        let copies: Vec<Cycle> = log.iter().filter(|l| l.1 == 2000).map(|l| l.0).collect();
        if recovery == Recovery::NewReno {
            assert_eq!(copies, [540, 1_709], "{recovery:?}");
            assert_eq!(rec, Some((1_391, Some(2_170))), "{recovery:?}");
        } else {
            // SACK's duplicate ACKs carry a 12-byte option (70 B + FCS, 11.28 cycles on the
            // wire with preamble and gap), so they arrive a cycle later (1,392), which changes
            // nothing else: the NIC frees at 1,428.24 either way.
            assert_eq!(copies, [540, 1_709], "{recovery:?}");
            assert_eq!(rec, Some((1_392, Some(2_170))), "{recovery:?}");
        }
        assert_eq!(
            (
                out.timeouts,
                out.fast_recoveries,
                out.retransmitted_segments
            ),
            (0, 1, 1),
            "{recovery:?}"
        );
        assert_eq!(drop_run(Stepping::EveryCycle, recovery, &[2000]).0, log);
    }
}

#[test]
fn sack_repairs_two_holes_in_one_round_trip_where_newreno_takes_two() {
    // Segments 2 and 5 are dropped. With SACK the sender learns of both holes from the
    // duplicate ACKs' blocks and resends both before the ACK of its first retransmission
    // returns; NewReno learns of the second hole only from the partial ACK that answers the
    // first retransmission, one round trip later.
    let rtt = 611 + 130; // a data frame's serialization plus the base round trip
    let (sack_log, sack, sack_rec) = drop_run(Stepping::Jump, Recovery::Sack, &[2000, 5000]);
    let resent = |log: &[(Cycle, u32)], seq| {
        log.iter()
            .filter(|l| l.1 == seq)
            .map(|l| l.0)
            .nth(1)
            .expect("resent")
    };
    let (s2, s5) = (resent(&sack_log, 2000), resent(&sack_log, 5000));
    assert!(s5 < s2 + rtt, "SACK: {s2} {s5}");
    assert_eq!(
        (
            sack.timeouts,
            sack.fast_recoveries,
            sack.retransmitted_segments
        ),
        (0, 1, 2)
    );
    let (nr_log, nr, nr_rec) = drop_run(Stepping::Jump, Recovery::NewReno, &[2000, 5000]);
    let (n2, n5) = (resent(&nr_log, 2000), resent(&nr_log, 5000));
    assert!(n5 >= n2 + rtt, "NewReno: {n2} {n5}");
    assert_eq!(
        (nr.timeouts, nr.fast_recoveries, nr.retransmitted_segments),
        (0, 1, 2)
    );
    // SACK, exactly: the ACKs of segments 3, 4 and 6 are the three duplicates; the third
    // (two blocks: 82 B with the FCS, 12.24 cycles on the wire) arrives at
    // ceil(7 x 129.84) + 600 + 13 =
    // 1,522 and recovery starts, RecoveryPoint = 12,000 (segment 11 is on the wire,
    // 1,428.24..1,558.08). Segment 2 is resent next (1,558.08..1,687.92, at the tap 1,838).
    // Then segment 5 does not count as lost yet (2,000 B SACKed above it, not more than
    // 2 x MSS), so NextSeg sends new data (segment 12, pipe 6,000 < cwnd 10,000); the SACK
    // of segment 8 (at 1,781) makes it lost, and it goes next (1,817.76..1,947.60, at the tap
    // 2,098). The ACK of that retransmission covers 13,000, beyond the recovery point, and
    // reaches the sender at 1,948 + 611 = 2,559.
    assert_eq!(
        (s2, s5, sack_rec),
        (1_838, 2_098, Some((1_522, Some(2_559))))
    );
    // NewReno: recovery starts at the third duplicate, 909 + 611 = 1,520; segment 2 goes as
    // with SACK (1,838 at the tap); its partial ACK (5,000) reaches the sender at
    // 1,688 + 611 = 2,299 and only then is segment 5 resent, after the frame on the wire,
    // reaching the tap at 2,617; its ACK ends the recovery at 2,467 + 611 = 3,078.
    assert_eq!((n2, n5, nr_rec), (1_838, 2_617, Some((1_520, Some(3_078)))));
    assert_eq!(
        drop_run(Stepping::EveryCycle, Recovery::Sack, &[2000, 5000]).0,
        sack_log
    );
    assert_eq!(
        drop_run(Stepping::EveryCycle, Recovery::NewReno, &[2000, 5000]).0,
        nr_log
    );
}

#[test]
fn sack_blocks_travel_as_tcp_option_bytes() {
    let mut opts = Vec::new();
    tcp::sack_option(&[(3000, 5000), (6000, 7000)], &mut opts);
    assert_eq!(
        opts,
        [1, 1, 5, 18, 0, 0, 0x0b, 0xb8, 0, 0, 0x13, 0x88, 0, 0, 0x17, 0x70, 0, 0, 0x1b, 0x58]
    );
    assert_eq!(tcp::parse_sack(&opts), [(3000, 5000), (6000, 7000)]);
    // A truncated option yields nothing rather than garbage.
    assert_eq!(tcp::parse_sack(&opts[..7]), []);
    // The receiver reports the block of the segment that triggered the ACK first, then the
    // most recent others (RFC 2018 §4).
    let mut r = tcp::RecvFlow::default();
    r.on_segment(0, 1000);
    r.on_segment(3000, 4000);
    assert_eq!(r.sack_blocks(3000), [(3000, 4000)]);
    r.on_segment(6000, 7000);
    assert_eq!(r.sack_blocks(6000), [(6000, 7000), (3000, 4000)]);
    r.on_segment(4000, 5000);
    assert_eq!(r.sack_blocks(4000), [(3000, 5000), (6000, 7000)]);
    r.on_segment(1000, 3000);
    assert_eq!(r.rcv_nxt, 5000);
    assert_eq!(r.sack_blocks(1000), [(6000, 7000)]);
}

/// A 10 Gb/s bottleneck: data frames from port 0 wait in an unbounded FIFO and leave on
/// port 1 one at a time at 10 Gb/s (exact to the line tick); ACKs from port 1 pass at once.
/// Records the largest queueing delay a frame saw.
struct Bottleneck {
    line: LineRate,
    fifo: VecDeque<(Cycle, PacketHandle)>,
    free_ticks: u64,
    acks: Vec<Sent>,
    max_wait: Cycle,
}

impl Node for Bottleneck {
    fn name(&self) -> &str {
        "bottleneck"
    }
    fn port_count(&self) -> usize {
        2
    }
    fn port_bps(&self, _port: usize) -> u64 {
        // The links are 100 Gb/s; the 10 Gb/s stage is inside (a slow hop folded in).
        G100
    }
    fn receive(&mut self, now: Cycle, port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        if port == 1 {
            self.acks.push(Sent { port: 0, pkt });
            return;
        }
        let start = self.free_ticks.max(self.line.cycle_to_ticks(now));
        self.free_ticks = start + self.line.serialization_ticks(pool.frame_bytes(pkt));
        let leaves = self.line.ticks_to_cycle_ceil(self.free_ticks);
        self.max_wait = self
            .max_wait
            .max(self.line.ticks_to_cycle_ceil(start) - now);
        self.fifo.push_back((leaves, pkt));
    }
    fn tick(&mut self, now: Cycle, _pool: &mut PacketPool, out: &mut Vec<Sent>) {
        out.append(&mut self.acks);
        while self.fifo.front().is_some_and(|&(t, _)| t <= now) {
            let (_, pkt) = self.fifo.pop_front().expect("checked");
            out.push(Sent { port: 1, pkt });
        }
    }
    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let ack = (!self.acks.is_empty()).then_some(now + 1);
        ack.into_iter()
            .chain(self.fifo.front().map(|&(t, _)| t.max(now + 1)))
            .min()
    }
}

#[test]
fn a_1_ms_minimum_rto_fires_no_spurious_timeout_behind_a_160_us_queue() {
    // Flow 0 keeps 176 segments in flight through a 10 Gb/s bottleneck; flow 1 (10
    // segments) starts at 600 us, when that queue is full, and adds its own: the last of
    // them waits behind about 185 frames of 865.6 ns, 160 us, and flow 1's first ACK comes
    // back only after its first segment waited about 150 us.
    // Nothing is dropped: any timeout is spurious.
    let run = |stepping, config: TransportConfig| {
        let clock = Clock::tofino2();
        let peers = vec![peer(0), peer(1)];
        let mut a = TransportHost::new("a", peer(0), clock, G100, config, peers.clone()).unwrap();
        a.add_flow(flow(0, 0, 2_000_000)).unwrap();
        a.add_flow(flow(1, 900_000, 10_000)).unwrap();
        let b = TransportHost::new("b", peer(1), clock, G100, config, peers).unwrap();
        let neck = Bottleneck {
            line: LineRate::new(clock, 10_000_000_000),
            fifo: VecDeque::new(),
            free_ticks: 0,
            acks: Vec::new(),
            max_wait: 0,
        };
        let mut net = Network::new(stepping);
        let (a, n, b) = (net.add(a), net.add(neck), net.add(b));
        net.link(a, 0, n, 0, 150).unwrap();
        net.link(n, 1, b, 0, 150).unwrap();
        net.run_until(6_000_000);
        let s = net.node::<TransportHost>(a);
        assert!(s.all_done());
        let out: Vec<(u64, u64)> = s
            .outcomes()
            .iter()
            .map(|o| (o.timeouts, o.retransmitted_segments))
            .collect();
        let wait = net.node::<Bottleneck>(n).max_wait;
        (out, wait, s.outcomes()[1].finish)
    };
    let ms = Clock::tofino2().ns_to_cycles_ceil(1_000_000);
    let rfc = TransportConfig {
        min_rto: ms,
        ..TransportConfig::fixed(176_000, ms)
    };
    let (out, wait, finish) = run(Stepping::Jump, rfc);
    // The queue: 160 us = 240,000 cycles, within a frame time (1,298.4 cycles).
    assert!(wait.abs_diff(240_000) < 1_300, "{wait}");
    assert_eq!(out, [(0, 0), (0, 0)]);
    assert_eq!(run(Stepping::EveryCycle, rfc), (out, wait, finish));
    // The old model, a fixed 100 us timeout and go-back-N, times flow 1 out spuriously and
    // resends segments that were only queued.
    let us100 = Clock::tofino2().ns_to_cycles_ceil(100_000);
    let old = TransportConfig {
        recovery: Recovery::GoBackN,
        ..TransportConfig::fixed(176_000, us100)
    };
    let (out, _, _) = run(Stepping::Jump, old);
    assert!(out[1].0 > 0 && out[1].1 > 0, "{out:?}");
}

#[test]
fn after_a_timeout_the_holes_are_resent_in_slow_start() {
    // Standard TCP's window (DCTCP's without marks), 20 segments, the last three dropped: no
    // duplicate ACK comes, so the timer (100,000 cycles) fires; the window drops to one
    // segment and only the holes are resent.
    // Segment 17 goes alone; its ACK grows the window to two (slow start runs during the
    // resends after a timeout, RFC 5681 §3.1), so segments 18 and 19 leave back to back.
    let config = TransportConfig {
        congestion: Congestion::Reno,
        ..TransportConfig::fixed(10_000, 100_000)
    };
    let run = |stepping| {
        let tap = Tap {
            drop_seqs: vec![17_000, 18_000, 19_000],
            ..clean_tap()
        };
        let (mut net, a, t, _) = net(stepping, config, tap, &[flow(0, 0, 20_000)]);
        net.run_until(1_000_000);
        let s = net.node::<TransportHost>(a);
        assert!(s.all_done());
        (net.node::<Tap>(t).log.clone(), s.outcomes()[0])
    };
    let (log, out) = run(Stepping::Jump);
    assert_eq!((out.timeouts, out.retransmitted_segments), (1, 3));
    let second = |seq| log.iter().filter(|l| l.1 == seq).nth(1).expect("resent").0;
    let (r17, r18, r19) = (second(17_000), second(18_000), second(19_000));
    // 17 then, one round trip later, 18 and 19 one frame time (129.84 cycles) apart.
    assert!(r18 - r17 > 600, "{r17} {r18}");
    assert!(r19 - r18 <= 130, "{r18} {r19}");
    assert_eq!(run(Stepping::EveryCycle), (log, out));
}

/// One 40-segment flow under a 4-segment fixed window through a clean tap, paced or not:
/// the tap's (cycle, seq) of every data frame and the sender's SRTT at the end.
fn paced_run(stepping: Stepping, pacing: bool) -> (Vec<(Cycle, u32)>, Option<Cycle>, Cycle) {
    let config = TransportConfig {
        pacing,
        ..TransportConfig::fixed(4_000, 10_000_000)
    };
    let (mut net, a, t, _) = net(stepping, config, clean_tap(), &[flow(0, 0, 40_000)]);
    net.run_until(100_000);
    let s = net.node::<TransportHost>(a);
    let finish = s.outcomes()[0].finish.expect("the flow completes");
    let srtt = s.rto_estimator(0).and_then(|r| r.srtt());
    (net.node::<Tap>(t).log.clone(), srtt, finish)
}

#[test]
fn pacing_spreads_the_window_over_one_srtt_exactly_from_the_first_sample() {
    let (off, srtt_off, finish_off) = paced_run(Stepping::Jump, false);
    let (on, srtt, finish) = paced_run(Stepping::Jump, true);
    // No queue anywhere: every RTT sample is the same 741 cycles (segment 0 leaves at 0, its
    // ACK arrives at 741), so SRTT stays 741.
    assert_eq!((srtt_off, srtt), (Some(741), Some(741)));
    // The first window goes before any sample, back to back either way: frame k's last bit
    // at (k + 1) x 25,968 line ticks (200 a cycle), at the tap 150 cycles later.
    let arrival = |start: u64| (start + 25_968).div_ceil(200) + 150;
    for k in 0..4 {
        assert_eq!(on[k], (arrival(k as u64 * 25_968), 1000 * k as u32));
        assert_eq!(off[k], on[k]);
    }
    // Unpaced, the window then goes in bursts of four, one per RTT.
    assert_eq!(
        &off[4..8],
        &[(1021, 4000), (1151, 5000), (1281, 6000), (1411, 7000)]
    );
    assert_eq!(off[8].0, 1762);
    // Paced: segment 4,000 starts when the first ACK arrives (cycle 741, tick 148,200), and
    // each later frame 8,656 wire bits x 741 cycles x 200 / (8 x 4,000 B) = 40,088.1 ticks,
    // rounded up to 40,089, after the previous one.
    for (k, &(at, seq)) in on.iter().enumerate().skip(4) {
        let start = 148_200 + (k as u64 - 4) * 40_089;
        assert_eq!((at, seq), (arrival(start), 1000 * k as u32), "frame {k}");
    }
    assert_eq!(on[39].0, 8037);
    assert_eq!((finish_off, finish), (7800, 8498));
    assert_eq!(paced_run(Stepping::EveryCycle, true), (on, srtt, finish));
}
