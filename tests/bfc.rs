//! BFC on the modelled Tofino2 (`src/schemes/bfc`): a received pause bitmap becomes an AFC
//! pause and resume of the queue it names at the exact cycle (two ingress passes and the AFC
//! latency), stepping and jumping alike; the two-switch run (ignored: known defect).

use std::path::Path;
use t2_testbench::workload::FlowSpec;
use t2sim::scenario_file::ScenarioFile;
use t2sim::Chip;

fn reg(chip: &Chip, name: &str) -> Vec<(usize, u64)> {
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let i = p.registers.iter().position(|r| r.name == name).unwrap();
    (0..4)
        .flat_map(|pipe| {
            chip.ingress_registers(pipe).unwrap()[i]
                .iter()
                .copied()
                .enumerate()
                .filter(|&(_, v)| v != 0)
                .map(move |(k, v)| (pipe * 100000 + k, v))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The flows of `scenarios/bfc_two_switch.toml`.
fn two_switch_flows() -> Vec<FlowSpec> {
    [(0, 3), (1, 3), (4, 3)]
        .iter()
        .enumerate()
        .map(|(i, &(src, dst))| FlowSpec {
            start: 0,
            id: i as u32,
            src,
            dst,
            size_bytes: 2_000_000,
        })
        .collect()
}

/// The two-switch run: every flow completes with nothing dropped or resent; hosts and the
/// left switch received pause frames, the left switch turned them into AFC (one resubmit per
/// AFC word); once the flows are done every flow-table size, pause counter and pause bit is
/// back to zero and every record was consumed.
#[test]
fn two_switches_pause_and_resume_and_lose_nothing() {
    let s = ScenarioFile::load(Path::new("scenarios/bfc_two_switch.toml")).unwrap();
    // The same network stepped by hand: AFC happened, and once the flows are done every
    // pause counter, pause bit and flow-table size is back to zero.
    let mut topo = s.build().unwrap();
    topo.add_flows(&two_switch_flows()).unwrap();
    topo.net.run_until(s.duration + s.drain);
    let left = topo.net.node::<Chip>(topo.chips[0]);
    assert!(left.counters().afc_requests > 0);
    assert_eq!(left.counters().resubmitted, left.counters().afc_requests);
    for &c in &topo.chips {
        let chip = topo.net.node::<Chip>(c);
        assert!(chip.counters().mirror_drops.keys().all(|k| matches!(
            k,
            t2sim::DropCause::Pipeline(_, t2_pipeline::DropReason::Consumed)
        )));
        for r in ["flow_size", "pause_ctr", "pause_bits"] {
            assert_eq!(reg(chip, r), [], "{r} not back to zero");
        }
    }
    assert!(!reg(topo.net.node::<Chip>(topo.chips[1]), "pauses_issued").is_empty());
    let r = s.run().unwrap();
    assert_eq!((r.flows, r.completed), (3, 3));
    assert_eq!(r.drops.total(), 0, "{:?}", r.drops);
    assert_eq!((r.timeouts, r.retransmitted_segments), (0, 0));
    // Every frame is somewhere: pause frames and dequeue records the switches make are sent,
    // those their programs consume are received.
    assert_eq!(r.frames.unaccounted, 0, "{:?}", r.frames);
    // Pause frames reached the senders and the left switch (which turned them into AFC).
    for node in ["host0", "host1", "host4", "switch0"] {
        assert!(
            r.pause_frames[node].bfc_received > 0,
            "{node}: {:?}",
            r.pause_frames
        );
    }
}

mod common;

use t2_clock::Cycle;
use t2_pipeline::bfc::BfcPause;
use t2_testbench::{Network, Probe, Stepping};

const G100: u64 = 100_000_000_000;

/// A chip running the BFC program (ports: pipe 0 MAC 0 channels 0 and 2), set up as a
/// scheme run sets it up.
fn bfc_chip() -> Chip {
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let mut c = common::pipe0_chip(&[(0, 0), (0, 2)], vec![], p);
    let q = t2sim::schemes::bfc::port_queues();
    for port in 0..2 {
        c.set_port_queues(port, &q).unwrap();
    }
    c
}

fn bitmap(paused: &[usize]) -> Vec<u8> {
    let mut b = Vec::new();
    BfcPause::of(paused).write([2, 0, 0, 0, 0, 1], &mut b);
    b
}

/// A BFC frame naming queue 5 paused reaches port 0 at 101; one with nothing paused at 3001.
fn received_frames(stepping: Stepping) -> (Vec<Cycle>, t2sim::chip::ChipCounters) {
    let mut net = Network::new(stepping);
    let chip = net.add(bfc_chip());
    let upstream = net.add(Probe::new(
        G100,
        vec![(100, bitmap(&[5])), (3000, bitmap(&[]))],
    ));
    net.link(upstream, 0, chip, 0, 1).unwrap();
    let mut paused = Vec::new();
    let mut t = 0;
    while t < 6000 {
        t += 1;
        net.run_until(t);
        if net.node::<Chip>(chip).tm().queue_stats(0, 5).paused {
            paused.push(t);
        }
    }
    (paused, net.node::<Chip>(chip).counters().clone())
}

#[test]
fn a_received_bitmap_pauses_and_resumes_the_named_queue_through_afc() {
    let c = bfc_chip();
    let i = c.ingress_latency();
    let afc = c.params().tm.afc_latency_cycles as Cycle;
    // Each frame: a first ingress pass finds queue 5's bit changed and resubmits the frame
    // (it re-enters the next cycle); the second pass records the bit and leaves the deparser
    // with the AFC word, which takes effect afc_latency_cycles later.
    let (from, to) = (101 + i + 1 + i + afc, 3001 + i + 1 + i + afc);
    let (stepped, counters) = received_frames(Stepping::EveryCycle);
    assert_eq!(stepped, (from..to).collect::<Vec<_>>());
    assert_eq!((counters.resubmitted, counters.afc_requests), (2, 2));
    assert_eq!(counters.consumed_frames(), 2);
    assert_eq!(counters.dropped(), 2, "both frames consumed, nothing else");
    let (jumped, jumped_counters) = received_frames(Stepping::Jump);
    assert_eq!(jumped, stepped);
    assert_eq!(jumped_counters, counters);
}
