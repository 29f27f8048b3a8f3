//! BFC's promises over random traffic on the two-switch dumbbell of
//! `scenarios/bfc_two_switch.toml` (3 hosts a side, 100 Gb/s, 1 us links, line-rate senders):
//! 1 to 3 flows with random sources, destinations (host 3 more often than the others, so
//! flows meet), sizes and start times. For every case:
//! - nothing is dropped (lossless by construction) and every flow completes;
//! - the frame census balances (0 unaccounted) at every sampled cycle and at the end;
//! - a switch's pause counters, summed, never exceed the packets inside it: each count is a
//!   packet that paused and whose dequeue record has not yet been consumed, so the packet or
//!   its record (a mirror copy) is still inside the chip. A counter taken below zero would
//!   wrap to 65,535 (16-bit cells) and break this bound at once;
//! - the recirculation port of every pipe sends no more than its cap over every sampled
//!   window (plus the one record it may have started before the window);
//! - once traffic has stopped every pause is lifted: no TM queue paused, no NIC bitmap bit
//!   set, and every `flow_size`, `pause_ctr` and `pause_bits` cell back to 0;
//! - jumping over idle cycles gives byte-identical results to stepping every cycle.
//!
//! Placed == interpreted for the shipped `programs/bfc_switch.json` is `tests/schemes/schemes.rs`.

use proptest::prelude::*;
use std::path::Path;
use t2_clock::{Cycle, LineRate, PREAMBLE_AND_IFG_BYTES};
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Node, Stepping, TransportHost};
use t2sim::scenario::{RunResults, ScenarioFile};
use t2sim::schemes::bfc;
use t2sim::Chip;

/// Cycles between the checks made during a run (2 us at 1.5 GHz).
const SAMPLE_CYCLES: Cycle = 3_000;
/// Cycles run after the last flow completes before the final checks: time for the last
/// dequeue records to come round and for a refresh (every 1 us) to reach every neighbour.
const SETTLE_CYCLES: Cycle = 6_000;
/// A run that has not finished by then fails (a pause never lifted stalls its flow).
const LIMIT_CYCLES: Cycle = 1_500_000;
/// Largest dequeue record on the wire: 12-byte mirror header, 64 bytes kept, FCS.
const RECORD_BYTES: u64 = 12 + bfc::RECORD_TRUNCATE_BYTES as u64 + 4;

fn flows() -> impl Strategy<Value = Vec<FlowSpec>> {
    prop::collection::vec(
        (
            0usize..6,
            prop_oneof![Just(3usize), 0usize..6],
            1_000u64..=60_000,
            0u64..=6_000,
        ),
        1..=3,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (src, dst, size, start))| FlowSpec {
                start,
                id: i as u32,
                src,
                // A flow to itself would not cross a switch.
                dst: if dst == src { (src + 3) % 6 } else { dst },
                size_bytes: size,
            })
            .collect()
    })
}

/// The position of each register array of the BFC program, by name.
fn register_index(name: &str) -> usize {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        bfc::program(&bfc::Config::default_100g())
            .registers
            .iter()
            .map(|r| r.name.clone())
            .collect()
    });
    names.iter().position(|n| n == name).unwrap()
}

/// Every pipe's cells of register array `name`, pipe after pipe.
fn register(chip: &Chip, name: &str) -> Vec<u64> {
    let i = register_index(name);
    (0..chip.params().pipes as usize)
        .flat_map(|pipe| chip.ingress_registers(pipe).unwrap()[i].iter())
        .collect()
}

/// The sum of register array `name` over every pipe.
fn register_sum(chip: &Chip, name: &str) -> u64 {
    let i = register_index(name);
    (0..chip.params().pipes as usize)
        .map(|pipe| chip.ingress_registers(pipe).unwrap()[i].iter().sum::<u64>())
        .sum()
}

/// What a run leaves: its results and every switch's flow-table and pause registers.
#[derive(Debug, PartialEq)]
struct Outcome {
    results: String,
    registers: Vec<Vec<u64>>,
}

/// Runs `flows` on the two-switch network, checking the run-time properties at every
/// sampled cycle, then the settled state.
fn run(flows: &[FlowSpec], stepping: Stepping) -> Result<Outcome, TestCaseError> {
    let mut s = ScenarioFile::load(Path::new("scenarios/bfc_two_switch.toml")).unwrap();
    s.topology.stepping = stepping;
    let mut topo = s.build().unwrap();
    topo.add_flows(flows).unwrap();
    let clock = s.topology.params.clock();
    let cap = LineRate::new(clock, s.topology.params.recirculation_bps_per_pipe());
    let pipes = s.topology.params.pipes as usize;
    // Per chip and pipe: (frames, bytes) the recirculation port had sent at the last sample.
    let mut recirc_seen = vec![vec![(0u64, 0u64); pipes]; topo.chips.len()];
    let mut now = 0;
    let mut done_at = None;
    loop {
        now += SAMPLE_CYCLES;
        topo.net.run_until(now);
        let r = s.measure(&topo, flows, now);
        prop_assert_eq!(r.frames.unaccounted, 0, "cycle {}: {:?}", now, r.frames);
        for (k, &c) in topo.chips.iter().enumerate() {
            let chip = topo.net.node::<Chip>(c);
            let counters = register_sum(chip, bfc::PAUSE_COUNTERS);
            prop_assert!(
                counters <= chip.packets_inside(),
                "cycle {}: switch {} counts {} pausing packets but holds {}",
                now,
                k,
                counters,
                chip.packets_inside()
            );
            for (pipe, seen) in recirc_seen[k].iter_mut().enumerate() {
                let port = chip.recirculation_port(pipe).unwrap();
                let (frames, bytes) = (chip.port_frames(port).1, chip.port_tx_bytes(port));
                // The window's frames on the wire, each with its preamble and gap, against
                // the cap over the window plus one record begun before it.
                let sent = frames - seen.0;
                let wire = (bytes - seen.1) + sent.saturating_sub(1) * PREAMBLE_AND_IFG_BYTES;
                let window_ticks = SAMPLE_CYCLES * cap.ticks_per_cycle();
                prop_assert!(
                    sent == 0
                        || cap.serialization_ticks(wire)
                            <= window_ticks + cap.serialization_ticks(RECORD_BYTES),
                    "cycle {}: switch {} pipe {} recirculated {} B in {} cycles",
                    now,
                    k,
                    pipe,
                    bytes - seen.1,
                    SAMPLE_CYCLES
                );
                *seen = (frames, bytes);
            }
        }
        let all_done = topo
            .hosts
            .iter()
            .all(|&h| topo.net.node::<TransportHost>(h).all_done());
        match done_at {
            None if all_done => done_at = Some(now),
            Some(d) if now >= d + SETTLE_CYCLES => break,
            _ => {}
        }
        prop_assert!(now < LIMIT_CYCLES, "flows not done by {}", now);
    }
    let results: RunResults = s.measure(&topo, flows, now);
    prop_assert_eq!(results.completed, flows.len());
    prop_assert_eq!(results.drops.total(), 0, "{:?}", results.drops);
    prop_assert_eq!(results.frames.unaccounted, 0);
    prop_assert_eq!((results.timeouts, results.retransmitted_segments), (0, 0));
    let mut registers = Vec::new();
    for (k, &c) in topo.chips.iter().enumerate() {
        let chip = topo.net.node::<Chip>(c);
        for port in 0..chip.port_count() {
            for q in 0..bfc::QUEUES_PER_PORT {
                prop_assert!(
                    !chip.tm().queue_stats(port, q).paused,
                    "switch {} port {} queue {} still paused",
                    k,
                    port,
                    q
                );
            }
        }
        // Every record made was consumed: none dropped at the recirculation port.
        prop_assert!(chip.counters().mirror_drops.keys().all(|k| matches!(
            k,
            t2sim::ChipDrop::Pipeline(_, t2_pipeline::DropReason::Consumed)
        )));
        for name in ["flow_size", bfc::PAUSE_COUNTERS, bfc::PAUSE_BITS] {
            let cells = register(chip, name);
            prop_assert!(
                cells.iter().all(|&v| v == 0),
                "switch {} {} not back to 0",
                k,
                name
            );
        }
        for name in [
            "flow_size",
            bfc::PAUSE_COUNTERS,
            bfc::PAUSE_BITS,
            bfc::PAUSES_ISSUED,
        ] {
            registers.push(register(chip, name));
        }
    }
    for (i, &h) in topo.hosts.iter().enumerate() {
        let paused = topo
            .net
            .node::<TransportHost>(h)
            .feature::<t2sim::schemes::bfc::host::Bfc>()
            .expect("BFC hosts run the BFC feature")
            .paused()
            .paused_count();
        prop_assert_eq!(paused, 0, "host {} NIC still paused", i);
    }
    Ok(Outcome {
        results: serde_json::to_string(&results).unwrap(),
        registers,
    })
}

/// The properties are not vacuous: three flows of 60 frames into host 3 (two through the left
/// switch, one from host 4) make both switches pause their upstreams, and every check of
/// `run` holds.
#[test]
fn an_incast_pauses_and_every_property_holds() {
    let flows = crate::common::flows_at_start(&[(0, 3), (1, 3), (4, 3)], 60_000);
    let out = run(&flows, Stepping::Jump).unwrap();
    // Each switch's `pauses_issued` (the fourth array kept per switch).
    let issued: Vec<u64> = [3, 4 + 3]
        .iter()
        .map(|&k| out.registers[k].iter().sum())
        .collect();
    // The left switch pauses hosts 0 and 1; the right switch each of the three flows' upstream
    // queues (hosts 0's and 1's flows leave the left switch by queues of their own).
    assert_eq!(issued, [2, 3]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn bfc_loses_nothing_balances_its_census_and_lifts_every_pause(flows in flows()) {
        let jumped = run(&flows, Stepping::Jump)?;
        let stepped = run(&flows, Stepping::EveryCycle)?;
        prop_assert_eq!(jumped, stepped);
    }
}
