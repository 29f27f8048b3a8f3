//! DCTCP's sender on the transport host (src/schemes/dctcp/host.rs), through a wire tap
//! that marks, drops and reorders: ECE on a duplicate ACK counted once, standard TCP's
//! window without marks (and Reno's Not-ECT frames), the receiver's ACK on each change of
//! CE state (RFC 8257 §3.2), and a window cut down to one segment under marks on every
//! frame.

use crate::wire_tap::{clean_tap, flow, net, Tap, ECT0};
use t2_clock::Cycle;
use t2_testbench::network::Stepping;
use t2_testbench::transport::{
    Congestion, RenoWindow, TransportConfig, TransportHost, WindowControl,
};
use t2sim::schemes::dctcp::host::{self as dctcp, Dctcp, DCTCP_ALPHA_ONE};

/// Flow `id`'s DCTCP state at `s`.
fn dctcp_of(s: &TransportHost, id: u32) -> Dctcp {
    *s.window_control(id)
        .and_then(|c| c.as_any().downcast_ref::<Dctcp>())
        .expect("a DCTCP flow")
}

/// Flow `id`'s window at `s`: standard TCP's, alone (Reno) or under DCTCP's alpha.
fn window_of(s: &TransportHost, id: u32) -> RenoWindow {
    let c = s.window_control(id).expect("a window that moves");
    c.as_any()
        .downcast_ref::<RenoWindow>()
        .copied()
        .or_else(|| c.as_any().downcast_ref::<Dctcp>().map(|d| d.window))
        .expect("Reno's or DCTCP's window")
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
        congestion: dctcp::CONGESTION,
        ..TransportConfig::fixed(10_000, 100_000)
    };
    let mut alone = Dctcp::new(10_000, 1000);
    alone.on_duplicate_ece(9000, 0, 10_000);
    alone.on_ack(2000, false, 2000, 10_000, true);
    assert_eq!(
        (alone.alpha, alone.window.cwnd, alone.window.ssthresh),
        (992, 5000, 5000)
    );
    for stepping in [Stepping::Jump, Stepping::EveryCycle] {
        let tap = Tap {
            overtake_first: true,
            ..clean_tap()
        };
        let (mut net, a, _, b) = net(stepping, config, tap, &[flow(0, 0, 40_000)]);
        net.run_until(2_000_000);
        let s = net.node::<TransportHost>(a);
        assert!(s.all_done());
        assert_eq!(window_of(s, 0).ssthresh, 5000, "{stepping:?}");
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
        let d = window_of(s, 0);
        let tap = net.node::<Tap>(t);
        assert_eq!(tap.dropped, 1);
        let o = s.outcomes()[0];
        (
            (o.finish, o.timeouts, d.cwnd, d.ssthresh, tap.log.clone()),
            tap.ecn.clone(),
        )
    };
    let (reno, reno_ecn) = run(Congestion::Reno, false);
    let (dctcp, dctcp_ecn) = run(dctcp::CONGESTION, false);
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
    let (dctcp_marked, _) = run(dctcp::CONGESTION, true);
    assert_ne!(dctcp_marked, dctcp);
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
    let (acks, _, sent) = delayed_ack_run(2, dctcp::CONGESTION, tap);
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
fn ce_marks_are_echoed_and_shrink_the_dctcp_window() {
    let config = TransportConfig {
        congestion: dctcp::CONGESTION,
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
    let d = dctcp_of(s, 0);
    assert_eq!(d.alpha, DCTCP_ALPHA_ONE, "every byte marked");
    assert_eq!(
        d.window.cwnd, 1000,
        "halved every window down to one segment"
    );
    assert_eq!(net.node::<TransportHost>(b).marked_segments(), 400);
}
