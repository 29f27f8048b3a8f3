//! The RDMA NIC without a rate control: go-back-N after one lost frame to the exact cycle, the
//! timer after a lost last frame, and ACKs every n packets. (With DCQCN's reaction point and
//! HPCC's sender, the NIC is tested with those schemes: `tests/schemes/`.)

use super::*;
use crate::network::{Network, Stepping};
use std::net::Ipv4Addr;
use t2_pipeline::headers::MacAddr;

const G100: u64 = 100_000_000_000;

fn clock() -> Clock {
    Clock::tofino2()
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

type NodeId2 = (crate::NodeId, crate::NodeId);

/// The artifact's NIC with no rate control and no PFC, its control frames in a class of
/// their own.
fn plain(rto: Cycle) -> RdmaConfig {
    RdmaConfig {
        honour_pfc: false,
        control_dscp: Some(CONTROL_DSCP),
        ..RdmaConfig::artifact(clock(), rto)
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
