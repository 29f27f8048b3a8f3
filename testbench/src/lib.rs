//! t2-testbench: what surrounds a chip under test.
//!
//! [`Node`] is anything with ports; [`Network`] joins nodes with links and advances them
//! cycle by cycle, jumping over quiet cycles or stepping through every one with identical
//! results. [`Host`] sends paced UDP and records every frame it receives.

mod agenda;
pub mod endpoint;
pub mod harness;
pub mod host;
pub mod host_feature;
pub mod metrics;
pub mod network;
pub mod node;
pub mod peer;
pub mod pfc_pause;
pub mod probe;
pub mod rdma;
pub mod rng;
pub mod tap;
pub mod transport;
pub mod workload;

pub use endpoint::{endpoint, endpoint_mut, Endpoint};
pub use harness::{Driver, FnMonitor, FrameDriver, Harness, Mismatch, Monitor, Scoreboard};
pub use host::{FlowError, Host, Reception, UdpFlow};
pub use host_feature::{FeatureSpec, HostFeature};
pub use network::{LinkCount, LinkError, Network, Stepping};
pub use node::{Node, NodeId, Sent};
pub use probe::Probe;
pub use rng::Rng;
pub use tap::{Direction, Tap, TapFrame};
pub use transport::{Congestion, Peer, Recovery, TransportConfig, TransportHost};

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use t2_clock::Clock;
    use t2_pipeline::headers::MacAddr;

    const G100: u64 = 100_000_000_000;

    fn pair(stepping: Stepping) -> (Network, NodeId, NodeId) {
        let clock = Clock::tofino2();
        let mut net = Network::new(stepping);
        let mut a = Host::new(
            "a",
            MacAddr([2, 0, 0, 0, 0, 1]),
            Ipv4Addr::new(10, 0, 0, 1),
            clock,
            G100,
        );
        let b = Host::new(
            "b",
            MacAddr([2, 0, 0, 0, 0, 2]),
            Ipv4Addr::new(10, 0, 0, 2),
            clock,
            G100,
        );
        a.send(
            clock,
            UdpFlow {
                flow_id: 7,
                dst_ip: Ipv4Addr::new(10, 0, 0, 2),
                dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
                src_port: 1,
                dst_port: 2,
                frame_bytes: 1480,
                rate_bps: G100 / 2,
                start: 10,
                end: None,
                packets: Some(4),
            },
        )
        .unwrap();
        let a = net.add(a);
        let b = net.add(b);
        net.link(a, 0, b, 0, 150).unwrap();
        (net, a, b)
    }

    #[test]
    fn host_to_host_timing_is_exact() {
        let (mut net, a, b) = pair(Stepping::Jump);
        net.run_until(10_000);
        assert_eq!(net.node::<Host>(a).sent(), 4);
        let rx = net.node::<Host>(b).received();
        let sent: Vec<_> = rx.iter().map(|r| r.sent_at).collect();
        // Half rate: frames start 360 cycles apart and take 180 each.
        assert_eq!(sent, vec![190, 550, 910, 1270]);
        assert!(rx.iter().all(|r| r.received_at == r.sent_at + 150));
        assert_eq!(
            rx.iter().map(|r| r.seq).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        assert!(rx.iter().all(|r| r.flow_id == 7 && r.frame_bytes == 1480));
        assert_eq!(net.live_packets(), 0);
        let tx = net.link_tx(a, 0);
        assert_eq!((tx.frames, tx.bytes), (4, 4 * 1480));
        assert_eq!(net.peer(a, 0), Some((b, 0)));
        // Jumping visited only the cycles with something to do.
        assert!(net.visited_cycles() < 20, "{}", net.visited_cycles());
    }

    #[test]
    fn stepping_matches_jumping() {
        let (mut j, _, bj) = pair(Stepping::Jump);
        let (mut s, _, bs) = pair(Stepping::EveryCycle);
        j.run_until(3000);
        s.run_until(3000);
        assert_eq!(j.node::<Host>(bj).received(), s.node::<Host>(bs).received());
        assert_eq!(s.visited_cycles(), 3001);
    }

    #[test]
    fn run_until_true_stops_at_the_first_cycle_the_condition_holds() {
        for stepping in [Stepping::Jump, Stepping::EveryCycle] {
            let (mut net, _, b) = pair(stepping);
            let two = |n: &Network| n.node::<Host>(b).received().len() >= 2;
            assert!(net.run_until_true(10_000, two));
            // The second frame's last bit arrives at 550 + 150.
            assert_eq!(net.now(), 700);
            assert!(!net.run_until_true(5_000, |n| n.node::<Host>(b).received().len() > 4));
            assert_eq!(net.now(), 5_000);
        }
    }

    #[test]
    fn wiring_errors_are_reported() {
        let (mut net, a, b) = pair(Stepping::Jump);
        assert_eq!(
            net.link(a, 0, b, 0, 1),
            Err(LinkError::AlreadyConnected {
                node: "a".into(),
                port: 0
            })
        );
        assert!(matches!(
            net.link(a, 1, b, 0, 1),
            Err(LinkError::NoSuchPort { port: 1, .. })
        ));
        let c = net.add(Host::new(
            "c",
            MacAddr::default(),
            Ipv4Addr::UNSPECIFIED,
            Clock::tofino2(),
            25_000_000_000,
        ));
        let d = net.add(Host::new(
            "d",
            MacAddr::default(),
            Ipv4Addr::UNSPECIFIED,
            Clock::tofino2(),
            G100,
        ));
        assert!(matches!(
            net.link(c, 0, d, 0, 1),
            Err(LinkError::RateMismatch { .. })
        ));
        assert_eq!(net.link(c, 0, d, 0, 0), Err(LinkError::ZeroDelay));
    }

    #[test]
    fn bad_flows_are_rejected() {
        let clock = Clock::tofino2();
        let mut h = Host::new("h", MacAddr::default(), Ipv4Addr::UNSPECIFIED, clock, G100);
        let flow = UdpFlow {
            flow_id: 0,
            dst_ip: Ipv4Addr::UNSPECIFIED,
            dst_mac: MacAddr::default(),
            src_port: 0,
            dst_port: 0,
            frame_bytes: 63,
            rate_bps: G100,
            start: 0,
            end: Some(100),
            packets: None,
        };
        assert!(matches!(
            h.send(clock, flow.clone()),
            Err(FlowError::FrameSize { bytes: 63, .. })
        ));
        let fast = UdpFlow {
            frame_bytes: 64,
            rate_bps: 2 * G100,
            ..flow.clone()
        };
        assert!(matches!(h.send(clock, fast), Err(FlowError::Rate { .. })));
        let forever = UdpFlow {
            frame_bytes: 64,
            end: None,
            ..flow
        };
        assert!(matches!(
            h.send(clock, forever),
            Err(FlowError::Unbounded { .. })
        ));
    }
}
