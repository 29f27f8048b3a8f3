//! The RDMA NIC under DCQCN (src/schemes/dcqcn/host.rs): the notification point's CNP
//! interval and the reaction point's decrease at each check that saw one, and stepping every
//! cycle against jumping with every event source of the NIC at once (a lost frame, CE
//! marks, DCQCN's timers, PFC pauses, paced QPs behind a busy NIC).

use std::net::Ipv4Addr;
use t2_clock::{Clock, Cycle, LineRate};
use t2_pipeline::headers::MacAddr;
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::host_feature::pfc::PFC_FRAMES;
use t2_testbench::network::{Network, NodeId, Stepping};
use t2_testbench::rdma::{wire, RdmaConfig, RdmaHost, CONTROL_DSCP};
use t2_testbench::tap::{Direction, Tap, TapFrame};
use t2_testbench::transport::Peer;
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Node, Sent};
use t2sim::schemes::dcqcn::host::{self as dcqcn, Dcqcn, RpEvent};

const G100: u64 = 100_000_000_000;

fn clock() -> Clock {
    Clock::tofino2()
}

/// Flow `id`'s DCQCN rate control at `h`.
fn dcqcn_of(h: &RdmaHost, id: u32) -> &Dcqcn {
    h.rate_control(id)
        .and_then(|c| c.as_any().downcast_ref::<Dcqcn>())
        .expect("a QP under DCQCN")
}

/// What flow `id`'s reaction point at `h` did, with the cycles.
fn events(h: &RdmaHost, id: u32) -> Vec<(Cycle, RpEvent)> {
    dcqcn_of(h, id).events().to_vec()
}

fn pair(config: RdmaConfig, delay: Cycle) -> (Network, NodeId2) {
    pair_stepping(config, delay, Stepping::Jump)
}

fn pair_stepping(config: RdmaConfig, delay: Cycle, stepping: Stepping) -> (Network, NodeId2) {
    let a = Peer {
        ip: Ipv4Addr::new(10, 0, 0, 1),
        mac: MacAddr([2, 0, 0, 0, 0, 1]),
    };
    let b = Peer {
        ip: Ipv4Addr::new(10, 0, 0, 2),
        mac: MacAddr([2, 0, 0, 0, 0, 2]),
    };
    let mut net = Network::new(stepping);
    let ha = RdmaHost::new("a", a, clock(), G100, config.clone(), vec![a, b]).unwrap();
    let hb = RdmaHost::new("b", b, clock(), G100, config, vec![a, b]).unwrap();
    let ia = net.add(ha);
    let ib = net.add(hb);
    net.link(ia, 0, ib, 0, delay).unwrap();
    (net, (ia, ib))
}

type NodeId2 = (NodeId, NodeId);

#[test]
fn the_notification_point_sends_one_cnp_per_interval_and_the_reaction_point_acts_on_each() {
    let delay = 1_500;
    let (mut net, (a, b)) = pair(dcqcn::nic(clock(), G100, 1_000_000), delay);
    let flow = FlowSpec {
        start: 0,
        id: 3,
        src: 0,
        dst: 1,
        size_bytes: 400_000,
    };
    net.node_mut::<RdmaHost>(a).add_flow(flow).unwrap();
    // Every packet of the first 300 marked, as a congested switch would.
    net.node_mut::<RdmaHost>(a).mark_ce(3, 0..300);
    net.run_until(20_000_000);
    let (ha, hb) = (net.node::<RdmaHost>(a), net.node::<RdmaHost>(b));
    assert!(ha.all_done());
    assert_eq!(hb.marked_packets(), 300);
    let sent = hb.cnps_sent_at(3).to_vec();
    let interval = 6_000; // 4 us
                          // The first marked packet gets a CNP; after that, the first marked packet at least one
                          // interval after the last CNP. Marked packets arrive at most one frame time at the
                          // lowest rate apart, so each gap is the interval plus less than one frame time.
    let slowest_frame =
        LineRate::new(clock(), 1_000_000_000).serialization_cycles_ceil(wire::DATA_OVERHEAD + 1000);
    assert!(sent.len() > 3, "{sent:?}");
    for w in sent.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            gap >= interval && gap < interval + slowest_frame,
            "{sent:?}"
        );
    }
    // Each CNP reaches the sender one CNP frame time and one link delay after it was queued
    // (b's NIC sends nothing else then but ACKs, which queue in the same order).
    let got = ha.cnps_received_at(3);
    assert_eq!(got.len(), sent.len());
    let rp = dcqcn_of(ha, 3).reaction_point();
    assert_eq!(rp.cnps(), sent.len() as u64);
    // The decreases come at the 4 us checks from the first CNP, one per check whose
    // 4 us window (t - 6000, t] saw a CNP (a CNP in a check's own cycle arrives before it
    // runs), the first check also taking the first CNP: exactly those.
    let first = got[0];
    let decreases: Vec<Cycle> = ha
        .rate_control(3)
        .and_then(|c| c.as_any().downcast_ref::<Dcqcn>())
        .unwrap()
        .events()
        .iter()
        .filter(|(_, e)| *e == RpEvent::Decrease)
        .map(|(t, _)| *t)
        .collect();
    let expected: Vec<Cycle> = (1..)
        .map(|k| first + k * interval)
        .take_while(|&t| t <= got.last().unwrap() + interval)
        .filter(|&t| {
            got.iter()
                .any(|&c| c <= t && (c + interval > t || c + interval == t && c == first))
        })
        .collect();
    assert_eq!(decreases, expected);
    assert!(rp.rate_bps() < G100);
}

#[test]
fn stepping_every_cycle_gives_what_jumping_gives() {
    // A lost frame, CE marks and DCQCN's timers: every event source of the NIC at once.
    let run = |stepping| {
        let (mut net, (a, b)) = pair_stepping(dcqcn::nic(clock(), G100, 200_000), 1_500, stepping);
        let flow = FlowSpec {
            start: 100,
            id: 5,
            src: 0,
            dst: 1,
            size_bytes: 60_000,
        };
        let h = net.node_mut::<RdmaHost>(a);
        h.add_flow(flow).unwrap();
        h.lose_once(5, 7);
        h.mark_ce(5, 0..40);
        net.run_until(600_000);
        let (ha, hb) = (net.node::<RdmaHost>(a), net.node::<RdmaHost>(b));
        (
            ha.outcomes(),
            events(ha, 5),
            ha.cnps_received_at(5).to_vec(),
            hb.arrivals(5).unwrap().to_vec(),
            hb.cnps_sent_at(5).to_vec(),
        )
    };
    let jump = run(Stepping::Jump);
    assert!(jump.0[0].finish.is_some());
    assert!(!jump.1.is_empty() && !jump.2.is_empty());
    assert_eq!(jump, run(Stepping::EveryCycle));
}

/// A two-port wire between two NICs that passes every frame on in the cycle it arrives and
/// sends PFC frames of its own at scripted cycles: (cycle, port, class, quanta).
struct PausingWire {
    pauses: Vec<(Cycle, usize, u8, u16)>,
    next: usize,
    through: Vec<(usize, PacketHandle)>,
}

impl Node for PausingWire {
    fn name(&self) -> &str {
        "wire"
    }
    fn port_count(&self) -> usize {
        2
    }
    fn port_bps(&self, _port: usize) -> u64 {
        G100
    }
    fn receive(&mut self, _now: Cycle, port: usize, pkt: PacketHandle, _pool: &mut PacketPool) {
        self.through.push((1 - port, pkt));
    }
    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        for (port, pkt) in self.through.drain(..) {
            out.push(Sent { port, pkt });
        }
        while let Some(&(at, port, class, quanta)) = self.pauses.get(self.next) {
            if at != now {
                break;
            }
            let pkt = pool.alloc();
            let frame = t2_pipeline::pfc::PfcFrame::one_class(class, quanta);
            frame.write([2, 0, 0, 0, 0, 9], pool.bytes_mut(pkt));
            out.push(Sent { port, pkt });
            self.next += 1;
        }
    }
    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let pause = self.pauses.get(self.next).map(|p| p.0);
        pause.filter(|&t| t > now)
    }
}

/// Every frame crossing a port: cycle, node, port, direction, bytes.
type Crossing = (Cycle, usize, usize, bool, Vec<u8>);

struct Recorder(std::rc::Rc<std::cell::RefCell<Vec<Crossing>>>);

impl Tap for Recorder {
    fn frame(&mut self, f: &TapFrame<'_>) {
        let tx = f.direction == Direction::Tx;
        let crossing = (f.cycle, f.node.0, f.port, tx, f.bytes.to_vec());
        self.0.borrow_mut().push(crossing);
    }
}

#[test]
fn paced_queue_pairs_behind_a_busy_nic_and_pfc_pauses_step_as_they_jump() {
    // Two QPs from a to b (their rates cut by CNPs, so one waits on its pacing while the
    // other holds the NIC) and one from b to a (so a has ACKs to send while paused), through
    // a wire that pauses each NIC's class 0 (and once class 1, which holds nothing), resumes
    // one pause early, and pauses again while paused. With control frames in their own class
    // and in the data's.
    for control_dscp in [Some(CONTROL_DSCP), None] {
        let run = |stepping| {
            let config = RdmaConfig {
                control_dscp,
                ..dcqcn::nic(clock(), G100, 300_000)
            };
            let a = Peer {
                ip: Ipv4Addr::new(10, 0, 0, 1),
                mac: MacAddr([2, 0, 0, 0, 0, 1]),
            };
            let b = Peer {
                ip: Ipv4Addr::new(10, 0, 0, 2),
                mac: MacAddr([2, 0, 0, 0, 0, 2]),
            };
            let mut net = Network::new(stepping);
            let ia =
                net.add(RdmaHost::new("a", a, clock(), G100, config.clone(), vec![a, b]).unwrap());
            let ib = net.add(RdmaHost::new("b", b, clock(), G100, config, vec![a, b]).unwrap());
            let iw = net.add(PausingWire {
                pauses: vec![
                    (2_000, 1, 0, 2_000),
                    (20_000, 0, 0, 3_000),
                    (26_000, 0, 0, 0),
                    (40_000, 0, 1, 3_000),
                    (41_000, 0, 0, 1_000),
                    (41_500, 0, 0, 4_000),
                    (60_000, 1, 0, 2_000),
                ],
                next: 0,
                through: Vec::new(),
            });
            net.link(ia, 0, iw, 0, 700).unwrap();
            net.link(iw, 1, ib, 0, 800).unwrap();
            let frames = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
            net.set_tap(Some(Box::new(Recorder(frames.clone()))));
            let flow = |id, src, dst, start, size_bytes| FlowSpec {
                start,
                id,
                src,
                dst,
                size_bytes,
            };
            let h = net.node_mut::<RdmaHost>(ia);
            h.add_flow(flow(1, 0, 1, 100, 400_000)).unwrap();
            h.add_flow(flow(2, 0, 1, 3_000, 300_000)).unwrap();
            h.mark_ce(1, 0..60);
            h.mark_ce(2, 10..50);
            let h = net.node_mut::<RdmaHost>(ib);
            h.add_flow(flow(3, 1, 0, 15_000, 200_000)).unwrap();
            net.run_until(400_000);
            let (ha, hb) = (net.node::<RdmaHost>(ia), net.node::<RdmaHost>(ib));
            (
                (ha.outcomes(), hb.outcomes()),
                (events(ha, 1), events(ha, 2)),
                (
                    hb.arrivals(1).unwrap().to_vec(),
                    hb.arrivals(2).unwrap().to_vec(),
                ),
                ha.arrivals(3).unwrap().to_vec(),
                (ha.counters(), hb.counters()),
                (
                    ha.frames_sent(),
                    hb.frames_sent(),
                    ha.acks_sent(),
                    hb.cnps_sent(),
                ),
                frames.take(),
            )
        };
        let jump = run(Stepping::Jump);
        let (a, b) = &jump.0;
        assert!(a.iter().chain(b).all(|o| o.finish.is_some()), "{jump:?}");
        assert!(
            !jump.1 .0.is_empty() && !jump.1 .1.is_empty(),
            "both QPs were cut"
        );
        assert_eq!(jump.4 .0.get(PFC_FRAMES), 5, "a took its five PFC frames");
        assert_eq!(jump.4 .1.get(PFC_FRAMES), 2);
        assert_eq!(
            jump,
            run(Stepping::EveryCycle),
            "control_dscp {control_dscp:?}"
        );
    }
}
