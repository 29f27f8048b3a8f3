//! Recirculation: the cap holds over every window, and recirculated packets take ingress slots
//! from the front-panel ports of their pipe.

use crate::common::{udp_frame, TEST_SRC};
use proptest::prelude::*;
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate, PREAMBLE_AND_IFG_BYTES};
use t2_pipeline::{DropReason, Gress};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, ChipConfig, ChipDrop, PortSpec, Tofino2Params};

const G400: u64 = 400_000_000_000;
/// The largest standard frame (FCS included) and its wire overhead.
const MTU_WIRE_BYTES: u64 = 1518 + PREAMBLE_AND_IFG_BYTES;

/// A UDP frame of `frame_bytes` (FCS included, 64..=1518) to `dst` with TTL `ttl`.
fn frame_to(dst: Ipv4Addr, ttl: u8, frame_bytes: usize) -> Vec<u8> {
    let b = udp_frame(TEST_SRC, dst, ttl, frame_bytes - 46);
    assert_eq!(b.len() + 4, frame_bytes);
    b
}

/// Send cycles of `sizes` on a line: each frame starts after the previous one and after an
/// idle gap that makes the offered load `load_percent` of the line; a frame is handed over in
/// the cycle its last bit leaves.
fn paced(line: LineRate, start: Cycle, sizes: &[usize], load_percent: u64) -> Vec<Cycle> {
    let mut t = line.cycle_to_ticks(start);
    sizes
        .iter()
        .map(|&l| {
            let ser = line.serialization_ticks(l as u64);
            t += ser + ser * (100 - load_percent) / load_percent;
            line.ticks_to_cycle_ceil(t)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Over any window of cycles, a recirculation port sends at most its cap times the window
    /// plus one MTU. Two 400G ports (pipes 1 and 2, up to 800 Gb/s, above every cap) send
    /// frames of random sizes at random loads to an address routed to pipe 0's recirculation
    /// port (TTL 2: each goes round once and is dropped in pipe 0's ingress). The port's byte
    /// counter gives each departure's size; every window between two departures is checked
    /// in exact line ticks.
    #[test]
    fn recirculation_never_exceeds_its_cap_over_any_window(
        cap in 1u32..=20,
        loads in (5u64..=100, 0u64..=100),
        sizes in prop::collection::vec(64usize..=1518, 20..120),
        other_sizes in prop::collection::vec(64usize..=1518, 0..120),
    ) {
        let params = Tofino2Params {
            recirculation_cap_percent: cap,
            ..Tofino2Params::default()
        };
        let cap_bps = params.macs_per_pipe as u64 * params.mac_bps * cap as u64 / 100;
        let looped = Ipv4Addr::new(10, 5, 5, 5);
        let port = |pipe| PortSpec { pipe, mac: 0, channel: 0, bps: G400 };
        let config = ChipConfig {
            params,
            ports: vec![port(1), port(2)],
            routes: vec![(looped, 2)],
            program: None,
        };
        let mut net = Network::new(Stepping::Jump);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        let recirc = net.node::<Chip>(chip).recirculation_port(0).unwrap();
        prop_assert_eq!(recirc, 2);
        let line_in = LineRate::new(params.clock(), G400);
        let mut offered = 0;
        for (i, (sizes, load)) in [(&sizes, loads.0), (&other_sizes, loads.1)].into_iter().enumerate() {
            if load == 0 {
                continue;
            }
            let at = paced(line_in, 10 + i as Cycle, sizes, load);
            let frames = at.iter().zip(sizes).map(|(&c, &l)| (c, frame_to(looped, 2, l))).collect();
            let sender = net.add(Probe::new(G400, frames));
            net.link(sender, 0, chip, i, 1).unwrap();
            offered += sizes.len() as u64;
        }
        // (cycle, frame bytes) of each departure from the recirculation port.
        let mut departures: Vec<(Cycle, u64)> = Vec::new();
        let (mut frames, mut bytes) = (0, 0);
        while net.next_event().is_some() {
            net.advance();
            let c = net.node::<Chip>(chip);
            let (_, f) = c.port_frames(recirc);
            let b = c.port_tx_bytes(recirc);
            prop_assert!(f <= frames + 1, "one departure a cycle at most");
            if f != frames {
                departures.push((net.now(), b - bytes));
                (frames, bytes) = (f, b);
            }
        }
        let c = net.node::<Chip>(chip).counters().clone();
        prop_assert_eq!(c.recirculated, offered);
        prop_assert_eq!(
            c.drops,
            [(ChipDrop::Pipeline(Gress::Ingress, DropReason::TtlExpired), offered)].into()
        );
        prop_assert_eq!(departures.len() as u64, offered);
        let line = LineRate::new(params.clock(), cap_bps);
        prop_assert_eq!(line.bits_per_second(), cap_bps);
        let mtu_ticks = line.serialization_ticks(MTU_WIRE_BYTES - PREAMBLE_AND_IFG_BYTES);
        // Departures i..=j all fall in the window [d_i, d_j + 1), the shortest that holds them.
        for i in 0..departures.len() {
            let mut sent_ticks = 0;
            for (j, &(d, b)) in departures.iter().enumerate().skip(i) {
                sent_ticks += line.serialization_ticks(b);
                let window = d + 1 - departures[i].0;
                prop_assert!(
                    sent_ticks <= window * line.ticks_per_cycle() + mtu_ticks,
                    "frames {}..={} ({} ticks) in {} cycles at {} b/s",
                    i, j, sent_ticks, window, cap_bps
                );
            }
        }
    }
}

/// Pipe 0 has three 400G front-panel ports offering 64 B frames back to back (3 x 400/537.6
/// = 2.23 frames per cycle); every eighth frame of each goes to pipe 0's recirculation port
/// (TTL 2, dropped in pipe 0's ingress when it comes round), the rest to a port of pipe 1.
/// In every cycle of the steady state the pipe's ingress takes exactly one packet, so the
/// front-panel packets it admits per cycle are exactly one minus the recirculated ones; with
/// nothing recirculated it admits exactly one front-panel packet per cycle.
#[test]
fn recirculated_small_packets_take_ingress_slots_from_the_front_panel() {
    let params = Tofino2Params::default();
    let to_recirc = Ipv4Addr::new(10, 5, 5, 5);
    let to_front = Ipv4Addr::new(10, 6, 6, 6);
    let port = |pipe, mac| PortSpec {
        pipe,
        mac,
        channel: 0,
        bps: G400,
    };
    let line = LineRate::new(params.clock(), G400);
    let run = |every: Option<usize>| {
        let config = ChipConfig {
            params,
            ports: vec![port(0, 0), port(0, 1), port(0, 2), port(1, 0)],
            routes: vec![(to_recirc, 4), (to_front, 3)],
            program: None,
        };
        let mut net = Network::new(Stepping::EveryCycle);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        let recirc = net.node::<Chip>(chip).recirculation_port(0).unwrap();
        assert_eq!(recirc, 4);
        let sizes = vec![64; 8_000];
        for p in 0..3 {
            let at = paced(line, 10 + p as Cycle, &sizes, 100);
            let frames = at
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    let dst = match every {
                        Some(n) if k % n == n - 1 => to_recirc,
                        _ => to_front,
                    };
                    (c, frame_to(dst, 2, 64))
                })
                .collect();
            let sender = net.add(Probe::new(G400, frames));
            net.link(sender, 0, chip, p, 1).unwrap();
        }
        // Entries per cycle, in cycles 2,001 to 12,000 (the front-panel FIFOs are full and
        // the recirculation port busy well before; the senders stop near 17,900).
        let (mut front, mut recirculated) = (0u64, 0u64);
        let mut prev: Option<(u64, u64)> = None;
        while net.now() < 12_000 {
            net.step();
            let c = net.node::<Chip>(chip);
            let entered = c.pipe_entered(0).0;
            // Recirculated packets that have entered = those that came round minus those
            // still waiting in the recirculation port's receive FIFO.
            let recirc_entered = c.counters().recirculated - c.rx_fifo_frames(recirc) as u64;
            if net.now() > 2_000 {
                let (e0, r0) = prev.unwrap();
                let (de, dr) = (entered - e0, recirc_entered - r0);
                assert_eq!(de, 1, "cycle {}: the pipe takes one packet", net.now());
                front += de - dr;
                recirculated += dr;
            }
            prev = Some((entered, recirc_entered));
        }
        let c = net.node::<Chip>(chip).counters().clone();
        assert!(
            c.drops[&ChipDrop::RxFifoFull] > 0,
            "the ports offer more than the pipe takes"
        );
        (front, recirculated, c)
    };
    let (front, recirculated, _) = run(None);
    assert_eq!((front, recirculated), (10_000, 0));
    let (front, recirculated, counters) = run(Some(8));
    // 1 in 8 of the admitted front-panel packets comes round again (r = (1 - r) / 8), so
    // about 1/9 of the slots go to recirculated packets: 1,111 of 10,000 on average, 1,121
    // in this window as the round-robin arbiter and the FIFOs fall.
    assert_eq!(front + recirculated, 10_000);
    assert_eq!((front, recirculated), (8_879, 1_121));
    assert!(counters.recirculated > 0);
    assert!(counters.drops[&ChipDrop::Pipeline(Gress::Ingress, DropReason::TtlExpired)] > 1_000);
}
