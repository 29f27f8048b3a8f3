//! The RDMA NIC: DCQCN's reaction point against a hand-worked sequence, go-back-N after one
//! lost frame to the exact cycle, and the notification point's CNP interval.

use super::*;
use crate::network::{Network, Stepping};
use std::net::Ipv4Addr;
use t2_pipeline::headers::MacAddr;

const G100: u64 = 100_000_000_000;

fn clock() -> Clock {
    Clock::tofino2()
}

#[test]
fn the_reaction_point_follows_the_artifacts_formulas_step_by_step() {
    // The artifact's DCQCN at 100 Gb/s: alpha every 1 us (1,500 cycles), decrease checks
    // every 4 us (6,000), increases every 300 us (450,000), g = 1/256, F = 1, AI 20 Mb/s.
    let p = DcqcnParams::artifact(clock(), G100);
    assert_eq!(
        (p.alpha_interval, p.decrease_interval, p.increase_interval),
        (1_500, 6_000, 450_000)
    );
    assert_eq!(
        (p.ai_bps, p.hai_bps, p.min_rate_bps),
        (20_000_000, 200_000_000, 1_000_000_000)
    );
    let mut rp = ReactionPoint::new(G100, p);
    let mut events = Vec::new();
    // First CNP at 0: alpha = 1, Rt = Rc = 100 Gb/s, timers from 0. The first timer that
    // can change the rate is the decrease check the CNP waits for (the alpha updates before
    // it run when it does).
    rp.on_cnp(0);
    assert_eq!(rp.timer_at(), Some(6_000));
    rp.on_time(5_999, &mut events);
    assert!(events.is_empty(), "no decrease before the first check");
    // Alpha decays four times without a CNP by 6,000 (the update runs before the check in
    // the same cycle): alpha = (255/256)^4 = 0.98447; Rc = floor(100e9 (1 - alpha / 2)).
    rp.on_time(6_000, &mut events);
    assert_eq!(events, [(6_000, RpEvent::Decrease)]);
    assert_eq!(rp.alpha(), (255.0f64 / 256.0).powi(4));
    assert_eq!(rp.rate_bps(), 50_776_684_272);
    assert_eq!(rp.target_bps(), G100, "stage 0: the target is not clamped");
    // A CNP at 7,000: the 7,500 update adds g, then 9,000, 10,500, 12,000 decay:
    // alpha = ((1 - g) a4 + g)(1 - g)^3 = 0.97303; the check at 12,000 cuts again.
    rp.on_cnp(7_000);
    rp.on_time(12_000, &mut events);
    let a = ((1.0 - 1.0 / 256.0) * (255.0f64 / 256.0).powi(4) + 1.0 / 256.0)
        * (255.0f64 / 256.0).powi(3);
    assert_eq!(rp.alpha(), a);
    assert_eq!(events[1], (12_000, RpEvent::Decrease));
    assert_eq!(rp.rate_bps(), 26_072_949_528);
    // No more CNPs: the increase timer runs from the last decrease. 462,000: fast recovery
    // Rc = (Rc + Rt) / 2; 912,000: stage 1 = F, additive increase (Rt stays at the line);
    // 1,362,000: hyper increase.
    rp.on_time(1_362_000, &mut events);
    assert_eq!(
        &events[2..],
        [
            (462_000, RpEvent::FastRecovery),
            (912_000, RpEvent::AdditiveIncrease),
            (1_362_000, RpEvent::HyperIncrease),
        ]
    );
    assert_eq!(rp.rate_bps(), 90_759_118_691);
    assert_eq!(rp.cnps(), 2);
}

#[test]
fn the_byte_counter_follows_the_papers_stage_rule() {
    let p = DcqcnParams {
        byte_counter_bytes: Some(10_000),
        increase_interval: 1_000_000,
        ..DcqcnParams::artifact(clock(), G100)
    };
    let mut rp = ReactionPoint::new(G100, p);
    let mut ev = Vec::new();
    rp.on_cnp(0);
    rp.on_time(6_000, &mut ev);
    assert_eq!(ev, [(6_000, RpEvent::Decrease)]);
    // Byte stage 0 and timer stage 0 are below F = 1: fast recovery; then byte stage 1
    // with timer stage 0: additive increase (max(T, B) >= F, min(T, B) <= F).
    assert_eq!(rp.on_sent(9_999), None);
    assert_eq!(rp.on_sent(1), Some(RpEvent::FastRecovery));
    assert_eq!(rp.on_sent(10_000), Some(RpEvent::AdditiveIncrease));
    assert_eq!(rp.target_bps(), G100);
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
    let ha = RdmaHost::new("a", a, clock(), G100, config, vec![a, b]).unwrap();
    let hb = RdmaHost::new("b", b, clock(), G100, config, vec![a, b]).unwrap();
    let ia = net.add(ha);
    let ib = net.add(hb);
    net.link(ia, 0, ib, 0, delay).unwrap();
    (net, (ia, ib))
}

type NodeId2 = (crate::NodeId, crate::NodeId);

fn plain(rto: Cycle) -> RdmaConfig {
    RdmaConfig {
        dcqcn: None,
        honour_pfc: false,
        ..RdmaConfig::dcqcn(clock(), G100, rto)
    }
}

#[test]
fn one_lost_frame_is_nacked_and_recovered_by_going_back_at_an_exact_cycle() {
    let delay = 1_500;
    let (mut net, (a, b)) = pair(plain(1_000_000), delay);
    let flow = FlowSpec {
        start: 0,
        id: 1,
        src: 0,
        dst: 1,
        size_bytes: 10_000,
    };
    net.node_mut::<RdmaHost>(a).add_flow(flow).unwrap();
    net.node_mut::<RdmaHost>(a).lose_once(1, 3);
    net.run_until(100_000);
    let line = LineRate::new(clock(), G100);
    let tpc = line.ticks_per_cycle();
    let data = line.serialization_ticks(wire::DATA_OVERHEAD + 1000);
    let ack = line.serialization_ticks(14 + 20 + 8 + 12 + 4 + 4 + 4);
    let end = |ticks: u64| line.ticks_to_cycle_ceil(ticks);
    // Frames 0..9 leave back to back from tick 0; frame 3 is lost. Frame 4's last bit
    // reaches b at end(5 data) + delay; b's NACK of PSN 3 starts then and reaches a one ACK
    // time and one delay later.
    let nack_at = end(line.cycle_to_ticks(end(5 * data) + delay) + ack) + delay;
    // a goes back to PSN 3 in that cycle: frames 3..9 (7 of them) back to back; b ACKs the
    // last as it arrives; that ACK ends the flow.
    let last_in = end(line.cycle_to_ticks(nack_at) + 7 * data) + delay;
    let finish = end(line.cycle_to_ticks(last_in) + ack) + delay;
    assert_eq!(tpc, line.cycle_to_ticks(1));
    let ha = net.node::<RdmaHost>(a);
    let o = ha.outcomes()[0];
    assert_eq!(o.finish, Some(finish));
    // By hand: a data frame is (1062 + 20) x 8 = 8,656 bits = 129.84 cycles at 100 Gb/s and
    // 1.5 GHz, an ACK (66 + 20) x 8 = 688 bits = 10.32 cycles. Frame 4 ends at 649.2 -> 650,
    // reaches b at 2,150; the NACK ends at 2,160.32 -> 2,161 and reaches a at 3,661; seven
    // frames end at 4,569.88 -> 4,570, reach b at 6,070; the ACK ends at 6,081 and reaches a
    // at 7,581.
    assert_eq!(finish, 7_581);
    assert_eq!(
        (o.retransmitted_segments, o.fast_recoveries, o.timeouts),
        (7, 1, 0)
    );
    assert_eq!(ha.lost(), 1);
    let hb = net.node::<RdmaHost>(b);
    assert_eq!(
        hb.nacks_sent(),
        1,
        "later out-of-order frames within 500 us: no NACK"
    );
    assert_eq!(hb.out_of_order_packets(), 6);
    assert_eq!(hb.acks_sent(), 3 + 7);
    assert_eq!(hb.data_bytes_received(), 10_000);
    assert_eq!(
        hb.arrivals(1).unwrap(),
        [0, 1, 2, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6, 7, 8, 9]
    );
    assert_eq!(net.live_packets(), 0);
}

#[test]
fn a_lost_last_frame_is_recovered_by_the_timer() {
    let (mut net, (a, b)) = pair(plain(30_000), 1_500);
    let flow = FlowSpec {
        start: 0,
        id: 4,
        src: 0,
        dst: 1,
        size_bytes: 3_000,
    };
    net.node_mut::<RdmaHost>(a).add_flow(flow).unwrap();
    net.node_mut::<RdmaHost>(a).lose_once(4, 2);
    net.run_until(200_000);
    let o = net.node::<RdmaHost>(a).outcomes()[0];
    // No later frame reveals the loss: the timer, 30,000 cycles after the last progress
    // (the ACK of PSN 1), sends PSN 2 again.
    assert_eq!((o.timeouts, o.retransmitted_segments), (1, 1));
    assert!(o.finish.unwrap() > 30_000);
    assert_eq!(net.node::<RdmaHost>(b).data_bytes_received(), 3_000);
}

#[test]
fn ack_every_n_packets_and_at_the_last() {
    let config = RdmaConfig {
        ack_interval: 4,
        ..plain(1_000_000)
    };
    let (mut net, (a, b)) = pair(config, 1_500);
    let flow = FlowSpec {
        start: 0,
        id: 2,
        src: 0,
        dst: 1,
        size_bytes: 10_000,
    };
    net.node_mut::<RdmaHost>(a).add_flow(flow).unwrap();
    net.run_until(100_000);
    // 10 packets: ACKs after the 4th, the 8th and the last.
    assert_eq!(net.node::<RdmaHost>(b).acks_sent(), 3);
    assert!(net.node::<RdmaHost>(a).all_done());
}

#[test]
fn the_notification_point_sends_one_cnp_per_interval_and_the_reaction_point_acts_on_each() {
    let delay = 1_500;
    let (mut net, (a, b)) = pair(RdmaConfig::dcqcn(clock(), G100, 1_000_000), delay);
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
    let rp = ha.reaction_point(3).unwrap();
    assert_eq!(rp.cnps(), sent.len() as u64);
    // The decreases come at the 4 us checks from the first CNP, one per check whose
    // 4 us window (t - 6000, t] saw a CNP (a CNP in a check's own cycle arrives before it
    // runs), the first check also taking the first CNP: exactly those.
    let first = got[0];
    let decreases: Vec<Cycle> = ha
        .rate_events(3)
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
        let (mut net, (a, b)) =
            pair_stepping(RdmaConfig::dcqcn(clock(), G100, 200_000), 1_500, stepping);
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
            ha.rate_events(5).to_vec(),
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

impl crate::tap::Tap for Recorder {
    fn frame(&mut self, f: &crate::tap::TapFrame<'_>) {
        let tx = f.direction == crate::tap::Direction::Tx;
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
                ..RdmaConfig::dcqcn(clock(), G100, 300_000)
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
            let ia = net.add(RdmaHost::new("a", a, clock(), G100, config, vec![a, b]).unwrap());
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
                (ha.rate_events(1).to_vec(), ha.rate_events(2).to_vec()),
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
        assert_eq!(
            jump.4 .0.get(crate::host_feature::pfc::PFC_FRAMES),
            5,
            "a took its five PFC frames"
        );
        assert_eq!(jump.4 .1.get(crate::host_feature::pfc::PFC_FRAMES), 2);
        assert_eq!(
            jump,
            run(Stepping::EveryCycle),
            "control_dscp {control_dscp:?}"
        );
    }
}

/// DCQCN's reaction point as the artifact runs it, every timer firing in its own cycle: the
/// reference the late alpha updates and skipped checks of `ReactionPoint` must equal.
struct EveryTimer {
    p: DcqcnParams,
    line: u64,
    rate: u64,
    target: u64,
    alpha: f64,
    alpha_cnp: bool,
    decrease_cnp: bool,
    timer_stage: u32,
    byte_stage: u32,
    bytes: u64,
    timers: Option<[Cycle; 2]>,
    increase_at: Option<Cycle>,
}

impl EveryTimer {
    fn new(line: u64, p: DcqcnParams) -> EveryTimer {
        EveryTimer {
            p,
            line,
            rate: line,
            target: line,
            alpha: 1.0,
            alpha_cnp: false,
            decrease_cnp: false,
            timer_stage: 0,
            byte_stage: 0,
            bytes: 0,
            timers: None,
            increase_at: None,
        }
    }

    fn on_cnp(&mut self, now: Cycle) {
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        if self.timers.is_none() {
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.timers = Some([now + self.p.alpha_interval, now + self.p.decrease_interval]);
            self.target = self.rate;
        }
    }

    fn increase(&mut self) -> RpEvent {
        let f = self.p.fast_recovery_stages;
        let (t, b) = (self.timer_stage, self.byte_stage);
        let e = match self.p.byte_counter_bytes {
            None if t < f => RpEvent::FastRecovery,
            None if t == f => RpEvent::AdditiveIncrease,
            None => RpEvent::HyperIncrease,
            Some(_) if t.max(b) < f => RpEvent::FastRecovery,
            Some(_) if t.min(b) > f => RpEvent::HyperIncrease,
            Some(_) => RpEvent::AdditiveIncrease,
        };
        let step = match e {
            RpEvent::AdditiveIncrease => self.p.ai_bps,
            RpEvent::HyperIncrease => self.p.hai_bps,
            _ => 0,
        };
        self.target = (self.target + step).min(self.line);
        self.rate = self.rate / 2 + self.target / 2;
        e
    }

    fn on_sent(&mut self, bytes: u64) -> Option<RpEvent> {
        let bc = self.p.byte_counter_bytes?;
        self.increase_at?;
        self.bytes += bytes;
        if self.bytes < bc {
            return None;
        }
        self.bytes -= bc;
        let e = self.increase();
        self.byte_stage += 1;
        Some(e)
    }

    /// Every cycle from `from` to `to`, each timer due in it firing (alpha, then the check,
    /// then the increase).
    fn run(&mut self, from: Cycle, to: Cycle, events: &mut Vec<(Cycle, RpEvent)>) {
        let g = 1.0 / self.p.g_denominator as f64;
        for t in from..=to {
            let Some([alpha_at, decrease_at]) = self.timers.as_mut() else {
                return;
            };
            if *alpha_at == t {
                self.alpha = (1.0 - g) * self.alpha + if self.alpha_cnp { g } else { 0.0 };
                self.alpha_cnp = false;
                *alpha_at += self.p.alpha_interval;
            }
            if *decrease_at == t {
                *decrease_at += self.p.decrease_interval;
                if self.decrease_cnp {
                    if self.p.clamp_target || self.timer_stage != 0 {
                        self.target = self.rate;
                    }
                    let cut = self.rate as f64 * (1.0 - self.alpha / 2.0);
                    self.rate = (cut as u64).max(self.p.min_rate_bps);
                    (self.timer_stage, self.byte_stage, self.bytes) = (0, 0, 0);
                    self.decrease_cnp = false;
                    self.increase_at = Some(t + self.p.increase_interval);
                    events.push((t, RpEvent::Decrease));
                    continue;
                }
            }
            if self.increase_at == Some(t) {
                self.increase_at = Some(t + self.p.increase_interval);
                let e = self.increase();
                self.timer_stage += 1;
                events.push((t, e));
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// CNPs, sent frames and looks at the state at random cycles, handled as the host does:
    /// it wakes only for `timer_at`, and a CNP arrives before the cycle's timers fire, a
    /// frame leaves after them. Rates, target, alpha and every rate event equal a reaction
    /// point whose every timer fires in its own cycle.
    #[test]
    fn late_alpha_updates_equal_every_timer_firing(
        ops in proptest::collection::vec((1u64..4_000, 0u8..3, 1u64..3_000), 1..120),
        byte_counter in proptest::option::of(2_000u64..40_000),
        clamp in proptest::bool::ANY,
    ) {
        // Short intervals (alpha 7 cycles, checks 30, increases 400) so that random ops
        // land on every kind of tie.
        let p = DcqcnParams {
            alpha_interval: 7,
            decrease_interval: 30,
            increase_interval: 400,
            clamp_target: clamp,
            byte_counter_bytes: byte_counter,
            ..DcqcnParams::artifact(clock(), G100)
        };
        let (mut late, mut every) = (ReactionPoint::new(G100, p), EveryTimer::new(G100, p));
        let (mut late_events, mut every_events) = (Vec::new(), Vec::new());
        let (mut now, mut ran_to) = (0, 0);
        for (gap, kind, bytes) in ops {
            now += gap;
            // The host's visits before `now`: one at each cycle a timer is due.
            while let Some(t) = late.timer_at().filter(|&t| t < now) {
                late.on_time(t, &mut late_events);
            }
            every.run(ran_to, now - 1, &mut every_events);
            ran_to = now;
            match kind {
                0 => {
                    late.on_cnp(now);
                    every.on_cnp(now);
                }
                1 => {
                    late.on_time(now, &mut late_events);
                    every.run(now, now, &mut every_events);
                    ran_to = now + 1;
                    proptest::prop_assert_eq!(late.on_sent(bytes), every.on_sent(bytes));
                }
                _ => {
                    late.on_time(now, &mut late_events);
                    every.run(now, now, &mut every_events);
                    ran_to = now + 1;
                    proptest::prop_assert_eq!(late.alpha(), every.alpha);
                }
            }
            proptest::prop_assert_eq!(
                (late.rate_bps(), late.target_bps()),
                (every.rate, every.target)
            );
            proptest::prop_assert_eq!(&late_events, &every_events);
        }
    }
}
