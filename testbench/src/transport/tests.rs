use super::*;
use crate::host_feature::{bfc, mice, pabo, pfc, qcn};
use crate::metrics::Framing;
use crate::network::{Network, NodeId, Stepping};
use crate::qcn::QcnParams;
use t2_pipeline::bfc::BfcPause;
use t2_pipeline::pfc::PfcFrame;
use t2_pipeline::qcn::Cnm;

const G100: u64 = 100_000_000_000;

/// A two-port wire tap between hosts: forwards each frame in the cycle it arrives,
/// dropping (and counting) every `drop_every`-th data frame and every
/// `drop_ack_every`-th ACK, and marking CE on data frames if `mark`.
struct Tap {
    drop_every: u64,
    drop_ack_every: u64,
    mark: bool,
    /// Send every `bounce_every`-th data frame back to its sender instead (0: never).
    bounce_every: u64,
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
        if port == 0 && self.bounce_every > 0 && self.seen[0].is_multiple_of(self.bounce_every) {
            self.queue.push(Sent { port: 0, pkt });
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
        bounce_every: 0,
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
fn bounced_frames_are_sent_again_when_asked() {
    // The tap sends every 7th data frame back to its sender.
    let tap = || Tap {
        bounce_every: 7,
        ..clean_tap()
    };
    let config = TransportConfig::fixed(20_000, 100_000);
    let run = |stepping, features: &[FeatureSpec]| {
        let (mut net, a, _, b) =
            net_with(stepping, config, features, tap(), &[flow(0, 10, 100_000)]);
        net.run_until(3_000_000);
        let s = net.node::<TransportHost>(a);
        let out = s.outcomes()[0];
        (
            out.finish,
            (
                out.timeouts,
                out.fast_recoveries,
                out.retransmitted_segments,
            ),
            s.counters().resent_bounced,
            s.foreign(),
            net.node::<TransportHost>(b).data_bytes_received(),
            net.live_packets(),
        )
    };
    let (finish, losses, resent, foreign, bytes, live) = run(Stepping::Jump, &[pabo::spec()]);
    assert!(finish.is_some());
    assert_eq!((losses.0, foreign, live), (0, 0, 0));
    // A bounced frame comes back late, so the segments behind it draw three duplicate ACKs
    // first: 9 times the sender retransmits it by fast recovery (spuriously: the bounced
    // copy arrives too), as a TCP sender facing PABO's reordering would.
    assert_eq!((losses, resent), ((0, 9, 9), 18));
    // 100 segments; the tap bounces every 7th data frame it sees, re-sent ones and
    // retransmissions included, so the resent count r solves
    // r = floor((100 + retransmitted + r) / 7).
    assert_eq!(resent, (100 + losses.2 + resent) / 7);
    assert_eq!(bytes, 100_000);
    assert_eq!(
        run(Stepping::EveryCycle, &[pabo::spec()]),
        (finish, losses, resent, foreign, bytes, live)
    );
    // Without the option the bounced frames are lost to the sender: loss recovery resends
    // them.
    let (finish, losses, resent, foreign, _, _) = run(Stepping::Jump, &[]);
    assert!(finish.is_some());
    assert_eq!(resent, 0);
    // 16 frames lost, every one resent by SACK recovery (8 recoveries), no timeout.
    assert_eq!((losses, foreign), ((0, 8, 16), 16));
}

/// Host `a` with two 30-segment flows wired straight to a probe that plays `script`
/// (BFC pause frames) and records every data frame: (arrival cycle, flow id, IPv4 id).
fn bfc_run(
    stepping: Stepping,
    script: Vec<(Cycle, Vec<u8>)>,
) -> (Vec<(Cycle, u32, u16)>, u64, u64) {
    let config = TransportConfig::fixed(1_000_000, 10_000_000);
    let clock = Clock::tofino2();
    let mut a = TransportHost::new("a", peer(0), clock, G100, config, vec![peer(0), peer(1)])
        .and_then(|h| h.with_features(&[bfc::spec()]))
        .unwrap();
    a.add_flow(flow(0, 0, 30_000)).unwrap();
    a.add_flow(flow(1, 0, 30_000)).unwrap();
    let mut net = Network::new(stepping);
    let a = net.add(a);
    let p = net.add(crate::probe::Probe::new(G100, script));
    net.link(a, 0, p, 0, 150).unwrap();
    net.run_until(20_000);
    let seen = net
        .node::<crate::probe::Probe>(p)
        .received()
        .iter()
        .map(|(at, b)| {
            let flow = u32::from_be_bytes(b[54..58].try_into().unwrap());
            (*at, flow, u16::from_be_bytes([b[18], b[19]]))
        })
        .collect();
    let host = net.node::<TransportHost>(a);
    (seen, host.counters().bfc_frames, host.foreign())
}

fn bfc_frame(queues: &[usize]) -> Vec<u8> {
    let mut b = Vec::new();
    BfcPause::of(queues).write([2, 0, 0, 0, 0, 9], &mut b);
    b
}

#[test]
fn bfc_pause_holds_only_the_paused_flow_queue() {
    // Pause flow 0's queue (index 1) with a frame whose last bit leaves the probe at 1000
    // (it reaches the host at 1150); a truncated frame at 2000 changes nothing; an empty
    // bitmap at 3000 (host: 3150) resumes it.
    let script = vec![
        (1000, bfc_frame(&[1])),
        (2000, bfc_frame(&[])[..100].to_vec()),
        (3000, bfc_frame(&[])),
    ];
    let (seen, frames, foreign) = bfc_run(Stepping::Jump, script.clone());
    assert_eq!((frames, foreign), (2, 1));
    // Each flow has its own queue index in the IPv4 identification field.
    assert!(seen.iter().all(|&(_, f, q)| q as u32 == f + 1));
    let of =
        |flow: u32| -> Vec<Cycle> { seen.iter().filter(|s| s.1 == flow).map(|s| s.0).collect() };
    let (f0, f1) = (of(0), of(1));
    assert_eq!((f0.len(), f1.len()), (30, 30));
    // 1,062-byte frames take 8,656 wire bits = 129.84 cycles and the NIC sends them back
    // to back, exact to the line tick: frame k (from 0) ends at (k + 1) x 129.84 and reaches
    // the probe in the cycle after that, plus 150. The two flows alternate. Flow 0's fifth
    // frame (the NIC's ninth, 1,038.72..1,168.56) was on the wire when the pause arrived at
    // 1150: it finishes (at the probe ceil(1,168.56) + 150 = 1,319) and no other frame of
    // flow 0 starts until the resume; flow 1 has the NIC alone. The resume arrives at 3150
    // during the NIC's 25th frame (3,116.16..3,246.00); flow 0's next frame follows it
    // (3,246.00..3,375.84, at the probe 3,376 + 150 = 3,526).
    assert_eq!(f0[4], 1319);
    assert_eq!(f0[5], 3526);
    // The NIC never idles: all 60 frames go back to back, 25,968 line ticks (200 a cycle)
    // each, with no fraction of a cycle lost between them.
    for (k, s) in seen.iter().enumerate() {
        assert_eq!(
            s.0,
            ((k as u64 + 1) * 25_968).div_ceil(200) + 150,
            "frame {k}"
        );
    }
    let in_pause = seen.iter().filter(|s| s.0 > 1319 && s.0 < 3526);
    assert!(in_pause.clone().all(|s| s.1 == 1));
    assert_eq!(in_pause.count(), 16);
    assert_eq!(
        bfc_run(Stepping::EveryCycle, script),
        (seen, frames, foreign)
    );
}

/// Host `a` sends one 400-segment flow (id 0) straight to a probe that plays `script`;
/// returns the arrival cycles of its data frames at the probe and the host.
fn qcn_run(stepping: Stepping, script: Vec<(Cycle, Vec<u8>)>) -> (Vec<Cycle>, Network, NodeId) {
    let config = TransportConfig::fixed(10_000_000, 10_000_000);
    let features = [qcn::spec(QcnParams::standard(Clock::tofino2()))];
    let mut a = TransportHost::new(
        "a",
        peer(0),
        Clock::tofino2(),
        G100,
        config,
        vec![peer(0), peer(1)],
    )
    .and_then(|h| h.with_features(&features))
    .unwrap();
    a.add_flow(flow(0, 0, 400_000)).unwrap();
    let mut net = Network::new(stepping);
    let a = net.add(a);
    let p = net.add(crate::probe::Probe::new(G100, script));
    net.link(a, 0, p, 0, 150).unwrap();
    net.run_until(300_000);
    (net.node::<crate::probe::Probe>(p).arrivals(), net, a)
}

/// Flow 0 (from cycle 0) has turned elephant when a PFC XOFF for the mice class arrives
/// (sent at 3,850); flow 1 starts at 5,000 while it holds, and an XON at 20,000 lets it
/// go: returns (arrival cycle, flow id, DSCP) of every data frame the probe got.
fn mice_run(stepping: Stepping) -> Vec<(Cycle, u32, u8)> {
    let config = TransportConfig::fixed(10_000_000, 10_000_000);
    let features = [pfc::spec(), mice::spec(3000)];
    let mut a = TransportHost::new(
        "a",
        peer(0),
        Clock::tofino2(),
        G100,
        config,
        vec![peer(0), peer(1)],
    )
    .and_then(|h| h.with_features(&features))
    .unwrap();
    a.add_flow(flow(0, 0, 40_000)).unwrap();
    a.add_flow(flow(1, 5_000, 4_000)).unwrap();
    let pfc = |quanta| {
        let mut b = Vec::new();
        PfcFrame::one_class(MICE_PFC_CLASS, quanta).write([2, 0, 0, 0, 0, 0xfc], &mut b);
        b
    };
    let mut net = Network::new(stepping);
    let a = net.add(a);
    let p = net.add(crate::probe::Probe::new(
        G100,
        vec![(3_850, pfc(0xffff)), (20_000, pfc(0))],
    ));
    net.link(a, 0, p, 0, 150).unwrap();
    net.run_until(60_000);
    net.node::<crate::probe::Probe>(p)
        .received()
        .iter()
        .map(|(t, f)| {
            let id = u32::from_be_bytes(f[54..58].try_into().unwrap());
            (*t, id, f[TOS_OFFSET] >> 2)
        })
        .collect()
}

#[test]
fn a_mice_class_pause_holds_mice_frames_and_lets_elephants_go() {
    let frames = mice_run(Stepping::EveryCycle);
    assert_eq!(frames, mice_run(Stepping::Jump));
    let mice = |id| {
        frames
            .iter()
            .filter(|f| f.1 == id && f.2 == MICE_DSCP)
            .count()
    };
    // 1,044 IPv4 bytes a frame: the first three of each flow (0, 1,044 and 2,088 bytes
    // sent before them) are mice, the rest elephants.
    assert_eq!((mice(0), mice(1)), (3, 3));
    for id in [0, 1] {
        let dscp: Vec<u8> = frames.iter().filter(|f| f.1 == id).map(|f| f.2).collect();
        assert!(
            dscp[..3].iter().all(|&d| d == MICE_DSCP),
            "flow {id}: {dscp:?}"
        );
        assert!(dscp[3..].iter().all(|&d| d == 0), "flow {id}: {dscp:?}");
    }
    // The pause reaches the host at 4,000; flow 1's frames wait for the XON (at 20,150),
    // while flow 0's elephant frames kept going in between.
    let first1 = frames.iter().find(|f| f.1 == 1).unwrap().0;
    assert!(first1 > 20_150, "flow 1 started at {first1}");
    assert!(frames
        .iter()
        .any(|f| f.1 == 0 && (5_000..20_000).contains(&f.0)));
    assert_eq!(frames.iter().filter(|f| f.1 == 1).count(), 4);
}

/// A CNM with feedback `fb` about a data frame of flow `flow` from host 0.
fn cnm_about(flow: u32, fb: u8) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: peer(0).mac,
        dst_mac: peer(1).mac,
        src_ip: peer(0).ip,
        dst_ip: peer(1).ip,
        src_port: 10_000,
        dst_port: 80,
    };
    let mut sampled = Vec::new();
    headers::build_tcp_frame(
        &mut sampled,
        &ep,
        64,
        0,
        0,
        0,
        Tcp::ACK,
        0,
        &flow.to_be_bytes(),
        60,
    );
    let (cnm, to) = Cnm::about(&sampled, fb, 7, -100, 4).unwrap();
    let mut b = Vec::new();
    cnm.write(to, [2, 0, 0, 0, 0, 0xcc], &mut b).unwrap();
    b
}

#[test]
fn a_cnm_paces_the_flow_at_the_cut_rate() {
    // The CNM's last bit reaches the host at 5,150, during its 40th frame (5,070..5,200).
    let script = vec![
        (5_000, cnm_about(0, 63)),
        (6_000, cnm_about(9, 63)),
        (7_000, cnm_about(0, 63)[..40].to_vec()),
    ];
    let (arrivals, net, a) = qcn_run(Stepping::Jump, script.clone());
    let host = net.node::<TransportHost>(a);
    assert_eq!(arrivals.len(), 400);
    // A CNM about another flow is read but changes nothing; a truncated one is foreign.
    assert_eq!((host.counters().cnm_frames, host.foreign()), (2, 1));
    // Line rate before: 1,062-byte frames back to back, 129.84 cycles each, exact to the
    // line tick; frame k reaches the probe at ceil((k + 1) x 129.84) + 150.
    assert_eq!(&arrivals[38..41], &[5_214, 5_344, 5_474]);
    // After: 100 G x (1 - 63/128) = 50,781,250,000 b/s, so a frame's 8,656 wire bits
    // take 51,136.98 line ticks (255.68 cycles), rounded up to 51,137. Frame 40 starts
    // when 39 ends (5,193.60, tick 1,038,720); 41 is allowed at tick 1,089,857 (cycle
    // 5,449.285), starts there and reaches the probe at ceil(5,579.125) + 150.
    assert_eq!(arrivals[41], 5_730);
    // 100 frames later the wire has carried 100 frames at exactly the limiter's rate:
    // frame 141 starts at tick 1,089,857 + 100 x 51,137 = 6,203,557 (cycle 31,017.785)
    // and arrives at ceil(31,017.785 + 129.84) + 150 = 31,298.
    assert_eq!(arrivals[141], 31_298);
    // As a rate: bits on the wire over that span against the limiter's rate, within a frame.
    let span_ns = (arrivals[141] - arrivals[41]) as f64 / 1.5;
    let seen_bps = 100.0 * 8656.0 / span_ns * 1e9;
    assert!(
        (seen_bps - 50_781_250_000.0).abs() < 8656.0 / span_ns * 1e9,
        "{seen_bps}"
    );
    // The byte counter: 150,000 bytes is 141.2 frames of 1,062 bytes, so the 142nd frame
    // after the cut completes the first stage and the next frames go at 75,390,625,000;
    // the 360 frames after the cut (382,320 bytes) complete two: 87,695,312,500.
    let rp = host
        .feature::<qcn::Qcn>()
        .unwrap()
        .reaction_point(0)
        .unwrap();
    assert_eq!(rp.cnms(), 1);
    assert_eq!(rp.stages(), (2, 0));
    assert_eq!(rp.rate_bps(), 87_695_312_500);
    let (stepped, _, _) = qcn_run(Stepping::EveryCycle, script);
    assert_eq!(stepped, arrivals);
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

#[test]
fn dctcp_alpha_follows_the_marked_fraction_with_gain_one_sixteenth() {
    let mut d = Dctcp::new(10_000, 1000);
    assert_eq!(d.alpha, 1024);
    // A window without marks: alpha <- alpha (1 - 1/16).
    d.on_ack(1000, false, 1000, 10_000, true);
    assert_eq!(d.alpha, 960);
    // Many windows with a quarter of the bytes marked: alpha -> 1024 / 4.
    let mut una = 1000;
    for _ in 0..300 {
        let end = d.window_end;
        d.on_ack(3000, false, una + 3000, end + 4000, true);
        d.on_ack(1000, true, end + 4000, end + 8000, true);
        una = end + 4000;
    }
    assert!(d.alpha.abs_diff(256) <= 16, "{}", d.alpha);
    // All marked: alpha -> 1.
    for _ in 0..300 {
        let end = d.window_end;
        d.on_ack(1000, true, end, end + 1000, true);
    }
    assert!(d.alpha >= 1024 - 16, "{}", d.alpha);
}

#[test]
fn dctcp_follows_a_hand_worked_table_on_a_fixed_marking_pattern() {
    // 1000-byte segments, every ACK acknowledges one; the sender keeps its window full
    // (snd_nxt = max(snd_nxt, snd_una + cwnd) after each ACK). The window starts at 10,000
    // in congestion avoidance (ssthresh = cwnd), alpha at 1024, the first observation
    // window ending at 10,000. `marks[w]` lists which ACKs of window w carry ECE.
    //
    // By hand, window 0: 10 unmarked ACKs; the 10th completes 10,000 B of credit, so cwnd
    // grows to 11,000, and it reaches the window's end: F = 0, alpha = 1024 - 64 = 960; the
    // next window ends at snd_nxt = 9,000 + 10,000 = 19,000.
    // Window 1: ACK 3 (snd_una 14,000) is the first ECE: alpha is 960, so the cut is
    // 11,000 x 960 / 2048 = 5,156 (integer) and cwnd = ssthresh = 5,844, held (no growth, no
    // second cut) until snd_una reaches the snd_nxt of the cut, 24,000. The window ends at
    // 19,000 after 9 ACKs with 1,000 of 9,000 B marked: F = 1,024,000 / 9,000 = 113,
    // alpha = 960 - 60 + 7 = 907; the next window ends at 24,000 (snd_nxt has not grown).
    // Window 2: 5 unmarked ACKs, no growth until 24,000 (CWR): alpha = 907 - 56 = 851.
    // Window 3: ECE on its first ACK cuts at once with alpha 851:
    // 5,844 - 5,844 x 851 / 2048 = 5,844 - 2,428 = 3,416; F = 1/5 of 1024 = 204,
    // alpha = 851 - 53 + 12 = 810.
    // Window 4: every ACK marked; one cut (the first): 3,416 - 3,416 x 810 / 2048 = 2,065;
    // F = 1024, alpha = 810 - 50 + 64 = 824. Window 5: unmarked, alpha = 824 - 51 = 773.
    let marks: [&[usize]; 6] = [&[], &[3], &[], &[0, 5], &[0, 1, 2, 3, 4, 5, 6, 7, 8], &[]];
    // (ACKs in the window, alpha, cwnd, ssthresh, cuts so far) at each window's end.
    let table = [
        (10, 960, 11_000, 10_000, 0),
        (9, 907, 5_844, 5_844, 1),
        (5, 851, 5_844, 5_844, 1),
        (5, 810, 3_416, 3_416, 2),
        (3, 824, 2_065, 2_065, 3),
        (2, 773, 2_065, 2_065, 3),
    ];
    let mut d = Dctcp::new(10_000, 1000);
    d.ssthresh = 10_000;
    d.window_end = 10_000;
    let (mut una, mut nxt) = (0u64, 10_000u64);
    for (w, row) in table.iter().enumerate() {
        let mut k = 0;
        loop {
            una += 1000;
            let end = d.window_end;
            let before = d.cuts();
            d.on_ack(1000, marks[w].contains(&k), una, nxt, true);
            if d.cuts() > before {
                // The cut comes at the first ECE of the window, not at its end.
                assert_eq!(k, marks[w][0], "window {w}");
            }
            nxt = nxt.max(una + d.cwnd);
            k += 1;
            if d.window_end != end {
                break;
            }
        }
        assert_eq!(
            (k, d.alpha, d.cwnd, d.ssthresh, d.cuts()),
            *row,
            "window {w}"
        );
    }
}

#[test]
fn dctcp_grows_like_tcp_without_marks() {
    let mut d = Dctcp::new(10_000, 1000);
    d.window_end = u64::MAX; // keep alpha out of it
    d.on_ack(4000, false, 4000, 14_000, true);
    assert_eq!(d.cwnd, 14_000, "slow start adds what was acknowledged");
    d.ssthresh = 14_000;
    d.on_ack(13_999, false, 20_000, 30_000, true);
    assert_eq!(d.cwnd, 14_000);
    d.on_ack(1, false, 20_001, 30_000, true);
    assert_eq!(
        d.cwnd, 15_000,
        "one segment per window in congestion avoidance"
    );
    d.on_ack(1000, false, 21_001, 30_000, false);
    assert_eq!(
        d.cwnd, 15_000,
        "no growth while loss recovery sets the window"
    );
    d.on_timeout();
    assert_eq!((d.cwnd, d.ssthresh), (1000, 7500));
}

#[test]
fn a_duplicate_acks_ece_is_counted_once() {
    // Segment 1000..2000 overtakes segment 0..1000 with CE. The receiver answers it with a
    // duplicate ACK (ack 0, ECE, SACK 1000..2000), then ACKs 2000 without ECE. The ECE of
    // the duplicate is the window's first, so it cuts at once (RFC 8257 §3.4) with the
    // alpha of that moment, 1024: cwnd = ssthresh = 10,000 / 2 = 5,000, held until the
    // 10,000 bytes then sent are acknowledged. The sender counts 1000 of the 2000 bytes
    // marked (not 1000 of 3000: the cumulative ACK skips the bytes the duplicate counted),
    // so the ACK of 2000, which closes the first window, sets alpha <- 1024 - 64 + 512/16 =
    // 992. No other segment is marked, so ssthresh stays 5,000. A sender that ignored the
    // duplicate ACK would see no mark and never cut (ssthresh stays unbounded).
    let config = TransportConfig {
        congestion: Congestion::Dctcp,
        ..TransportConfig::fixed(10_000, 100_000)
    };
    let mut alone = Dctcp::new(10_000, 1000);
    alone.on_duplicate_ece(9000, 0, 10_000);
    alone.on_ack(2000, false, 2000, 10_000, true);
    assert_eq!((alone.alpha, alone.cwnd, alone.ssthresh), (992, 5000, 5000));
    for stepping in [Stepping::Jump, Stepping::EveryCycle] {
        let tap = Tap {
            overtake_first: true,
            ..clean_tap()
        };
        let (mut net, a, _, b) = net(stepping, config, tap, &[flow(0, 0, 40_000)]);
        net.run_until(2_000_000);
        let s = net.node::<TransportHost>(a);
        assert!(s.all_done());
        assert_eq!(s.dctcp(0).unwrap().ssthresh, 5000, "{stepping:?}");
        assert_eq!(s.frames_sent(), 40, "no segment sent twice");
        assert_eq!(net.node::<TransportHost>(b).marked_segments(), 1);
    }
}

#[test]
fn reno_is_dctcp_without_marks_and_sends_not_ect() {
    // A 200 KB flow from a 10 KB initial window; the first copy of segment 60,000 is lost,
    // so fast retransmit halves the window once (RFC 5681 §3.2).
    let run = |congestion, mark| {
        let config = TransportConfig {
            congestion,
            ..TransportConfig::fixed(10_000, 100_000)
        };
        let tap = Tap {
            drop_seqs: vec![60_000],
            mark,
            ..clean_tap()
        };
        let (mut net, a, t, _) = net(Stepping::Jump, config, tap, &[flow(0, 0, 200_000)]);
        net.run_until(3_000_000);
        let s = net.node::<TransportHost>(a);
        assert!(s.all_done(), "{congestion:?}");
        let d = s.dctcp(0).expect("a window that moves");
        let tap = net.node::<Tap>(t);
        assert_eq!(tap.dropped, 1);
        let o = s.outcomes()[0];
        (
            (o.finish, o.timeouts, d.cwnd, d.ssthresh, tap.log.clone()),
            tap.ecn.clone(),
        )
    };
    let (reno, reno_ecn) = run(Congestion::Reno, false);
    let (dctcp, dctcp_ecn) = run(Congestion::Dctcp, false);
    // Unmarked, the two windows are one: the same frames at the same cycles.
    assert_eq!(reno, dctcp);
    assert!(reno.3 < u64::MAX, "the loss set ssthresh");
    assert_eq!(reno.1, 0, "fast retransmit, no timeout");
    assert!(reno_ecn.iter().all(|&e| e == 0), "Reno sends Not-ECT");
    assert!(dctcp_ecn.iter().all(|&e| e == ECT0), "DCTCP sends ECT(0)");
    // CE on every frame (a tap, not a switch, would mark a Not-ECT frame): the receiver
    // echoes ECE, which Reno ignores and DCTCP does not.
    let (reno_marked, _) = run(Congestion::Reno, true);
    assert_eq!(reno_marked, reno);
    let (dctcp_marked, _) = run(Congestion::Dctcp, true);
    assert_ne!(dctcp_marked, dctcp);
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
fn dctcp_receiver_acks_each_change_of_ce_state_at_once() {
    // RFC 8257 §3.2 with two segments per ACK: segments 2,000 and 3,000 carry CE.
    // Segment 1,000 completes a pair: ACK 2,000 without ECE. Segment 2,000 changes the state
    // to CE with nothing waiting: ACK 3,000 with ECE at once. Segment 3,000 waits. Segment
    // 4,000 changes it back: first the waiting ACK of 4,000 with ECE, then 5,000 without.
    // Then pairs again: 7,000 and 9,000.
    let tap = Tap {
        mark_seqs: vec![2000, 3000],
        ..clean_tap()
    };
    let (acks, _, sent) = delayed_ack_run(2, Congestion::Dctcp, tap);
    let seen: Vec<(u32, bool)> = acks.iter().map(|a| (a.1, a.2)).collect();
    assert_eq!(
        seen,
        [
            (2000, false),
            (3000, true),
            (4000, true),
            (5000, false),
            (7000, false),
            (9000, false)
        ]
    );
    assert_eq!(sent, 6);
    // The flush and the ACK after it are decided in the same cycle and leave back to back:
    // the second starts at the tick the first ends, 84 bytes on the wire (64-byte frame,
    // preamble and gap) = 10.08 cycles at 100 Gb/s, so its last bit reaches the tap 10
    // cycles after the first's at this run's phase.
    assert_eq!(acks[3].0 - acks[2].0, 10, "{acks:?}");
}

#[test]
fn a_duplicate_ack_counts_no_more_than_was_sent_beyond_the_gap() {
    let mut d = Dctcp::new(10_000, 1000);
    d.window_end = u64::MAX; // keep the window open to read the counters
    d.on_duplicate_ece(1500, 0, 2500);
    d.on_duplicate_ece(1500, 0, 2500);
    d.on_duplicate_ece(1500, 0, 2500);
    assert_eq!((d.acked, d.marked, d.counted_ahead), (1500, 1500, 1500));
    // The cumulative ACK of 2,500 bytes counts only the 1,000 not yet counted.
    d.on_ack(2500, false, 2500, 2500, true);
    assert_eq!((d.acked, d.marked, d.counted_ahead), (2500, 1500, 0));
}

#[test]
fn ce_marks_are_echoed_and_shrink_the_dctcp_window() {
    let config = TransportConfig {
        congestion: Congestion::Dctcp,
        ..TransportConfig::fixed(64_000, 100_000)
    };
    let tap = Tap {
        mark: true,
        ..clean_tap()
    };
    let (mut net, a, _, b) = net(Stepping::Jump, config, tap, &[flow(0, 0, 400_000)]);
    net.run_until(2_000_000);
    let s = net.node::<TransportHost>(a);
    assert!(s.all_done());
    let d = s.dctcp(0).unwrap();
    assert_eq!(d.alpha, DCTCP_ALPHA_ONE, "every byte marked");
    assert_eq!(d.cwnd, 1000, "halved every window down to one segment");
    assert_eq!(net.node::<TransportHost>(b).marked_segments(), 400);
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
    // DCTCP, 20 segments, the last three dropped: no duplicate ACK comes, so the timer
    // (100,000 cycles) fires; the window drops to one segment and only the holes are resent.
    // Segment 17 goes alone; its ACK grows the window to two (slow start runs during the
    // resends after a timeout, RFC 5681 §3.1), so segments 18 and 19 leave back to back.
    let config = TransportConfig {
        congestion: Congestion::Dctcp,
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
