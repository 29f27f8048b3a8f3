//! The schemes' host features on the transport host, frame by frame: PABO's resend of
//! bounced frames, BFC's per-flow queues and their pause, the mice/elephant classes under a
//! PFC pause, and QCN's reaction point pacing a flow after a CNM. Hosts are wired to a tap or
//! a probe (`t2_testbench::probe`) that plays the switch's part.

use crate::wire_tap::{clean_tap, flow, net_with, peer, Tap, G100, TOS_OFFSET};
use t2_clock::{Clock, Cycle};
use t2_pipeline::headers::{self, Endpoints, Tcp};
use t2_pipeline::pfc::PfcFrame;
use t2_testbench::host_feature::pfc;
use t2_testbench::network::{Network, NodeId, Stepping};
use t2_testbench::probe::Probe;
use t2_testbench::transport::{TransportConfig, TransportHost};
use t2_testbench::FeatureSpec;
use t2sim::schemes::bfc::{host as bfc, wire::BfcPause};
use t2sim::schemes::mice_elephant::host::{self as mice, MICE_DSCP, MICE_PFC_CLASS};
use t2sim::schemes::mice_elephant::qcn::{cnm::Cnm, host as qcn, QcnParams};
use t2sim::schemes::pabo::host as pabo;

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
            s.counters().get(pabo::RESENT),
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
    let p = net.add(Probe::new(G100, script));
    net.link(a, 0, p, 0, 150).unwrap();
    net.run_until(20_000);
    let seen = net
        .node::<Probe>(p)
        .received()
        .iter()
        .map(|(at, b)| {
            let flow = u32::from_be_bytes(b[54..58].try_into().unwrap());
            (*at, flow, u16::from_be_bytes([b[18], b[19]]))
        })
        .collect();
    let host = net.node::<TransportHost>(a);
    (seen, host.counters().get(bfc::PAUSE_FRAMES), host.foreign())
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
    let p = net.add(Probe::new(G100, script));
    net.link(a, 0, p, 0, 150).unwrap();
    net.run_until(300_000);
    (net.node::<Probe>(p).arrivals(), net, a)
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
    let p = net.add(Probe::new(
        G100,
        vec![(3_850, pfc(0xffff)), (20_000, pfc(0))],
    ));
    net.link(a, 0, p, 0, 150).unwrap();
    net.run_until(60_000);
    net.node::<Probe>(p)
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
    assert_eq!(
        (host.counters().get(qcn::CNM_FRAMES), host.foreign()),
        (2, 1)
    );
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
