//! Properties over generated scenarios: jumping equals stepping, packets are conserved on
//! every cycle, and a pipe's ingress takes at most one packet per cycle.

use proptest::prelude::*;
use t2_clock::Cycle;
use t2_pipeline::{examples, Cells};
use t2_testbench::{Host, Stepping};
use t2sim::scenario::IncastScenario;
use t2sim::{Chip, ChipDrop};

fn scenario() -> impl Strategy<Value = IncastScenario> {
    (
        1u32..=8,
        prop_oneof![Just(64u32), 65u32..=2000, Just(9216)],
        10u32..=100,
        prop::option::of(10u32..600),
        1u32..=16,
        prop::sample::select(vec![
            25_000_000_000u64,
            50_000_000_000,
            100_000_000_000,
            400_000_000_000,
        ]),
        1u32..=4,
        prop::option::of(1u32..=4),
        (prop::option::of(50u32..5_000), 0u32..40),
    )
        .prop_map(
            |(senders, frame, load, limit, fifo, bps, pipes, ghost, (pool, min))| {
                let mut s = IncastScenario {
                    senders,
                    frame_bytes: frame,
                    load_percent: load,
                    port_bps: bps,
                    duration_cycles: 4_000,
                    ..IncastScenario::default()
                };
                s.params.tm.queue_limit_cells = limit;
                s.params.rx_fifo_frames = fifo;
                s.params.pipes = pipes;
                // Half the scenarios run a ghost control, at 1 to 4 updates per TM pipe per
                // cycle.
                if let Some(per_cycle) = ghost {
                    s.params.tm.ghost_updates_per_cycle = per_cycle;
                    s.program = Some(examples::ghost_occupancy(
                        examples::GHOST_OCCUPANCY_THRESHOLD_CELLS,
                    ));
                }
                // A small application pool 0 (every queue's) and a guaranteed minimum for
                // class 0, the class of all the traffic: pool and minimum drops and charges are
                // exercised.
                s.params.tm.app_pool_cells = pool.map(|p| [p, 0, 0, 0]);
                s.params.tm.ppg_min_cells[0] = min;
                if bps == 400_000_000_000 {
                    s.senders = s.senders.min(4 * pipes - 1);
                }
                s
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn jumping_equals_stepping(s in scenario()) {
        let run = |stepping| {
            let mut b = IncastScenario { stepping, ..s.clone() }.build().unwrap();
            b.net.run_until(6_000);
            let rx = b.net.node::<Host>(b.receiver).received().to_vec();
            let chip = b.net.node::<Chip>(b.chip);
            let census = b.census();
            let registers: Vec<Option<Vec<Cells>>> = (0..s.params.pipes as usize)
                .map(|p| chip.ingress_registers(p).map(<[_]>::to_vec))
                .collect();
            (rx, chip.counters().clone(), chip.packets_inside(), census.offered, census.accounted(), registers)
        };
        let jump = run(Stepping::Jump);
        let step = run(Stepping::EveryCycle);
        prop_assert_eq!(&jump.0, &step.0);
        prop_assert_eq!(&jump.1, &step.1);
        prop_assert_eq!(jump.2, step.2);
        prop_assert_eq!(jump.3, jump.4);
        prop_assert_eq!(&jump.5, &step.5);
    }

    #[test]
    fn packets_are_conserved_on_every_cycle(s in scenario()) {
        let mut b = s.build().unwrap();
        for _ in 0..3_000 {
            b.net.step();
            let census = b.census();
            prop_assert_eq!(census.offered, census.accounted(), "cycle {}: {:?}", b.net.now(), census);
            prop_assert_eq!(b.net.live_packets() as u64, census.in_chip + census.on_links);
        }
    }
}

#[test]
fn a_pipe_ingress_takes_one_packet_per_cycle() {
    // One pipe, 12 ports at 100 Gb/s sending 64 B frames: 12 / 10.08 = 1.19 frames per
    // cycle offered to an ingress that takes exactly one.
    let mut s = IncastScenario {
        senders: 12,
        frame_bytes: 64,
        duration_cycles: 6_000,
        ..IncastScenario::default()
    };
    s.params.pipes = 1;
    s.params.rx_fifo_frames = 16;
    let mut b = s.build().unwrap();
    let mut last = 0;
    let mut per_cycle: Vec<u64> = Vec::new();
    for _ in 0..=6_000 {
        b.net.step();
        let (entered, _) = b.net.node::<Chip>(b.chip).pipe_entered(0);
        per_cycle.push(entered - last);
        last = entered;
    }
    assert!(per_cycle.iter().all(|&d| d <= 1));
    // Once the FIFOs are backlogged, every cycle admits exactly one.
    let backlogged: Vec<Cycle> = (1_000..6_000).map(|c| per_cycle[c]).collect();
    assert!(backlogged.iter().all(|&d| d == 1));
    let chip = b.net.node::<Chip>(b.chip);
    assert!(
        chip.counters()
            .drops
            .get(&ChipDrop::RxFifoFull)
            .copied()
            .unwrap_or(0)
            > 500
    );
}
