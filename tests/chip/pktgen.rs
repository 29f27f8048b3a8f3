//! The packet generator: a periodic application fires exactly every period, its packets carry
//! the pktgen header (pipe, app, batch, packet ids), cross the pktgen port's MAC (the
//! recirculation port group's bandwidth) and take one ingress slot each; port-down
//! applications fire on a scheduled port-down; every configuration error names what is wrong;
//! packets are conserved on every cycle; jumping gives what stepping gives.

use proptest::prelude::*;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::ir::{
    Action, Cmp, Condition, MatchKind, Operand, ParserState, Primitive, Program, ProgramBuilder,
    ProgramDrop, Stmt, Table,
};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::chip::{pktgen_header, ChipCounters, ControlOp, PktgenApp, PktgenTrigger};
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const APP: usize = 3;
const PERIOD: Cycle = 1500; // 1 us at 1.5 GHz: BFC's pause-bitmap refresh
const START: Cycle = 1000;

/// Parses the pktgen header of packets from the pktgen port (local port 6) and forwards
/// packets of application 3 to port 0 (device port 8), those of application 5 to port 1
/// (device port 10); drops the rest. A front-panel frame sets the deparser's pktgen trigger
/// and is dropped.
fn program() -> Program {
    ProgramBuilder::new("pktgen_sink")
        .header(
            "pktgen",
            &[
                ("pad1", 2),
                ("pipe_id", 2),
                ("app_id", 4),
                ("pad2", 8),
                ("batch_id", 16),
                ("packet_id", 16),
            ],
        )
        .parser(vec![
            ParserState::new("start")
                .select(&["ig_intr_md.ingress_port"], "parse_eth")
                .case(&[6], "parse_pktgen"),
            ParserState::new("parse_pktgen").extract("pktgen"),
            ParserState::new("parse_eth").extract("ethernet"),
        ])
        .action(
            Action::new("trigger")
                .prim(Primitive::set("ig_intr_dprsr_md.pktgen", Operand::Const(1)))
                .prim(Primitive::Drop {
                    reason: ProgramDrop::NotIpv4,
                }),
        )
        .table(
            Table::new("trigger_t", MatchKind::Exact, &[], 0)
                .action("trigger")
                .default_action("trigger", &[]),
        )
        .action(
            Action::new("to_port")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                }),
        )
        .action(Action::new("discard").prim(Primitive::Drop {
            reason: ProgramDrop::NoRoute,
        }))
        .table(
            Table::new("by_app", MatchKind::Exact, &["pktgen.app_id"], 16)
                .action("to_port")
                .action("discard")
                .default_action("discard", &[])
                .entry(&[APP as u64], "to_port", &[8])
                .entry(&[5], "to_port", &[10]),
        )
        .ingress(vec![Stmt::if_(
            Condition::new("pktgen.$valid", Cmp::Eq, Operand::Const(1)),
            vec![Stmt::apply("by_app")],
            vec![Stmt::apply("trigger_t")],
        )])
        .build()
        .unwrap()
}

fn chip() -> Chip {
    crate::common::pipe0_chip(&[(0, 0), (0, 2)], Vec::new(), program())
}

/// 58 payload bytes: 64-byte packets (68 with the FCS).
fn payload() -> Vec<u8> {
    (0..58u8).collect()
}

fn periodic() -> PktgenApp {
    PktgenApp {
        batches: 2,
        packets_per_batch: 2,
        packet_gap: 11,
        batch_gap: 30,
        ..PktgenApp::new(
            PktgenTrigger::Periodic {
                start: START,
                period: PERIOD,
            },
            payload(),
        )
    }
}

struct Run {
    rx: Vec<(Cycle, Vec<u8>)>,
    rx1: Vec<(Cycle, Vec<u8>)>,
    /// Cycles in which pipe 0's ingress took a packet (stepping only).
    entries: Vec<Cycle>,
    counters: ChipCounters,
}

fn run(mut chip: Chip, stepping: Stepping, end: Cycle, ops: Vec<(Cycle, ControlOp)>) -> Run {
    for (at, op) in ops {
        chip.schedule(at, op).unwrap();
    }
    let mut net = Network::new(stepping);
    let chip = net.add(chip);
    let rx = net.add(Probe::new(G100, Vec::new()));
    let rx1 = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(chip, 1, rx1, 0, 1).unwrap();
    let mut entries = Vec::new();
    let mut entered = 0;
    let conserved = |c: &Chip| {
        let k = c.counters();
        assert_eq!(
            k.received + k.mirrored + k.pktgen_generated,
            k.transmitted + k.dropped() + c.packets_inside()
        );
    };
    match stepping {
        Stepping::EveryCycle => {
            while net.now() < end {
                net.step();
                let c = net.node::<Chip>(chip);
                conserved(c);
                let e = c.pipe_entered(0).0;
                if e != entered {
                    assert_eq!(e, entered + 1, "one ingress slot per cycle");
                    entries.push(net.now());
                    entered = e;
                }
            }
        }
        Stepping::Jump => net.run_until(end),
    }
    let c = net.node::<Chip>(chip);
    conserved(c);
    Run {
        rx: net.node::<Probe>(rx).received().to_vec(),
        rx1: net.node::<Probe>(rx1).received().to_vec(),
        entries,
        counters: c.counters().clone(),
    }
}

#[test]
fn a_periodic_application_fires_every_period_with_its_header_and_one_ingress_slot_a_packet() {
    let mut c = chip();
    c.set_pktgen_app(0, 0, APP, Some(periodic())).unwrap();
    let recirc = LineRate::new(c.params().clock(), c.params().recirculation_bps_per_pipe());
    // 64 B + FCS at 384 Gb/s: 88 x 8 / 384e9 s = 2.75 cycles, so 3.
    let ser = recirc.serialization_cycles_ceil(68);
    assert_eq!(ser, 3);
    let latency = c.unloaded_latency(68, 0);
    let end = START + 3 * PERIOD - 1;
    let stepped = run(c, Stepping::EveryCycle, end, Vec::new());
    // Firings at 1000, 2500, 4000; in each, packet k of batch b is made at
    // t + 30 b + 11 k, reaches the pktgen port's MAC one cycle later, is through it `ser`
    // later and enters the ingress in the next cycle.
    let mut made = Vec::new();
    for f in 0..3 {
        for (b, k) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            made.push((START + f * PERIOD + 30 * b + 11 * k, b as u16, k as u16));
        }
    }
    let entries: Vec<Cycle> = made.iter().map(|&(m, _, _)| m + 1 + ser + 1).collect();
    assert_eq!(entries[..4], [1005, 1016, 1035, 1046], "made + 1 + 3 + 1");
    assert_eq!(
        stepped.entries, entries,
        "exactly one ingress slot per packet"
    );
    // Out of port 0 one unloaded port-to-port latency later, one link cycle to the probe.
    let expect: Vec<(Cycle, Vec<u8>)> = made
        .iter()
        .zip(&entries)
        .map(|(&(_, b, k), &e)| {
            let mut bytes = pktgen_header(0, APP as u8, b, k).to_vec();
            bytes.extend(payload());
            (e + latency + 1, bytes)
        })
        .collect();
    assert_eq!(expect[0].1[..6], [0x03, 0, 0, 0, 0, 0]);
    assert_eq!(expect[3].1[..6], [0x03, 0, 0, 1, 0, 1]);
    assert_eq!(stepped.rx, expect);
    let c = &stepped.counters;
    assert_eq!((c.pktgen_generated, c.pktgen_arrived), (12, 12));
    assert_eq!((c.recirculated, c.received, c.transmitted), (0, 0, 12));
    let jumped = run(chip_with_app(), Stepping::Jump, end, Vec::new());
    assert_eq!(jumped.rx, stepped.rx);
    assert_eq!(jumped.counters, stepped.counters);
}

fn chip_with_app() -> Chip {
    let mut c = chip();
    c.set_pktgen_app(0, 0, APP, Some(periodic())).unwrap();
    c
}

#[test]
fn a_burst_shares_the_pktgen_port_groups_bandwidth() {
    // Eight packets made in one cycle leave the 384 Gb/s MAC back to back: packet j's last
    // bit is through in ceil(1001 + 2.75 (j + 1)); each enters the ingress the next cycle.
    let app = PktgenApp {
        packets_per_batch: 8,
        ..PktgenApp::new(PktgenTrigger::OneShot { at: START }, payload())
    };
    let mut c = chip();
    c.set_pktgen_app(0, 0, APP, Some(app.clone())).unwrap();
    let r = run(c, Stepping::EveryCycle, 6000, Vec::new());
    let through: Vec<Cycle> = (1..=8u64).map(|j| 1001 + (11 * j).div_ceil(4)).collect();
    assert_eq!(through, [1004, 1007, 1010, 1012, 1015, 1018, 1021, 1023]);
    let entries: Vec<Cycle> = through.iter().map(|t| t + 1).collect();
    assert_eq!(r.entries, entries);
    assert_eq!(r.rx.len(), 8);
    assert_eq!(r.counters.pktgen_generated, 8);
    let mut c = chip();
    c.set_pktgen_app(0, 0, APP, Some(app)).unwrap();
    let jumped = run(c, Stepping::Jump, 6000, Vec::new());
    assert_eq!(jumped.rx, r.rx);
}

#[test]
fn a_port_down_application_fires_in_the_cycle_the_port_goes_down() {
    let app = PktgenApp::new(PktgenTrigger::PortDown { port: 1 }, payload());
    let mut c = chip();
    c.set_pktgen_app(0, 0, 5, Some(app.clone())).unwrap();
    let latency = c.unloaded_latency(68, 1);
    let ops = vec![(2000, ControlOp::PortDown { port: 1 })];
    let r = run(c, Stepping::EveryCycle, 5000, ops.clone());
    // Port-down header: pipe 0, app 5, the device port (10) in place of the batch id.
    let mut bytes = pktgen_header(0, 5, 10, 0).to_vec();
    assert_eq!(bytes, [0x05, 0, 0, 10, 0, 0]);
    bytes.extend(payload());
    assert_eq!(r.entries, [2005]);
    assert_eq!(r.rx1, [(2005 + latency + 1, bytes)]);
    assert!(r.rx.is_empty());
    let mut c = chip();
    c.set_pktgen_app(0, 0, 5, Some(app)).unwrap();
    let jumped = run(c, Stepping::Jump, 5000, ops);
    assert_eq!(jumped.rx1, r.rx1);
}

#[test]
fn bad_applications_are_refused_naming_the_application_and_the_problem() {
    let mut c = chip();
    let one = |t| PktgenApp::new(t, payload());
    let at = PktgenTrigger::OneShot { at: 10 };
    let cases = [
        (4, 0, one(at), "pipe 4 pktgen application 0: the chip has pipes 0..4"),
        (0, 16, one(at), "pipe 0 pktgen application 16: a pipe has applications 0..16"),
        (
            0,
            1,
            PktgenApp {
                batches: 0,
                ..one(at)
            },
            "pipe 0 pktgen application 1: 0 batches of 1 packets: both must be at least 1",
        ),
        (
            0,
            1,
            one(PktgenTrigger::Periodic {
                start: 10,
                period: 0,
            }),
            "pipe 0 pktgen application 1: a periodic timer's period must be at least 1",
        ),
        (
            0,
            1,
            one(PktgenTrigger::PortDown { port: 2 }),
            "pipe 0 pktgen application 1: port 2 is not a front-panel port (the chip has 0..2)",
        ),
        (
            0,
            1,
            PktgenApp::new(at, vec![0; 16 * 1024]),
            "pipe 0 pktgen application 1: a payload of 16384 bytes and the 6-byte header do not fit the 16384-byte packet buffer",
        ),
    ];
    for (pipe, app, config, want) in cases {
        let e = c.set_pktgen_app(0, pipe, app, Some(config)).unwrap_err();
        assert_eq!(e.to_string(), format!("chip chip: {want}"));
    }
    let e = c
        .set_pktgen_app(20, 0, 1, Some(one(PktgenTrigger::OneShot { at: 10 })))
        .unwrap_err();
    assert_eq!(
        e.problem,
        "the timer's first firing, cycle 10, is before cycle 20"
    );
    let params = Tofino2Params {
        recirculation_cap_percent: 0,
        ..Tofino2Params::default()
    };
    let config = ChipConfig {
        params,
        ports: vec![PortSpec {
            pipe: 0,
            mac: 0,
            channel: 0,
            bps: G100,
        }],
        routes: Vec::new(),
        program: None,
    };
    let mut c = Chip::new("c0", &config).unwrap();
    let e = c.set_pktgen_app(0, 0, 0, Some(one(at))).unwrap_err();
    assert_eq!(
        e.problem,
        "the pipe has no port group 0 MAC for generated packets (recirculation_cap_percent is 0)"
    );
}

#[test]
fn a_deparser_trigger_fires_its_application_the_next_cycle() {
    let app = PktgenApp::new(PktgenTrigger::Deparser, payload());
    let run = |stepping| {
        let mut c = chip();
        c.set_pktgen_app(0, 0, APP, Some(app.clone())).unwrap();
        let i = c.ingress_latency();
        let latency = c.unloaded_latency(68, 0);
        let mut net = Network::new(stepping);
        let chip = net.add(c);
        let rx = net.add(Probe::new(G100, Vec::new()));
        // Port 1's neighbour sends one frame; its last bit arrives at 101.
        let tx = net.add(Probe::new(G100, vec![(100, vec![0x02; 64])]));
        net.link(chip, 0, rx, 0, 1).unwrap();
        net.link(chip, 1, tx, 0, 1).unwrap();
        let mut entries = Vec::new();
        let mut entered = 0;
        while net.advance_until(3000) {
            let e = net.node::<Chip>(chip).pipe_entered(0).0;
            if e != entered {
                entries.push(net.now());
                entered = e;
            }
        }
        let k = net.node::<Chip>(chip).counters().clone();
        (
            i,
            latency,
            entries,
            net.node::<Probe>(rx).received().to_vec(),
            k,
        )
    };
    let (i, latency, entries, rx, k) = run(Stepping::EveryCycle);
    // The frame leaves the deparser at 101 + I; the application fires and makes its packet
    // at 101 + I + 1, which is through the pktgen port's MAC 1 + 3 cycles later and enters
    // the ingress the cycle after.
    let made = 101 + i + 1;
    assert_eq!(entries, [101, made + 5]);
    let mut bytes = pktgen_header(0, APP as u8, 0, 0).to_vec();
    bytes.extend(payload());
    assert_eq!(rx, [(made + 5 + latency + 1, bytes)]);
    assert_eq!(
        (k.received, k.pktgen_generated, k.transmitted, k.dropped()),
        (1, 1, 1, 1)
    );
    assert_eq!(run(Stepping::Jump).3, rx);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random applications (timers, batches, gaps, sizes), some for applications the
    /// program drops: on every cycle, every generated packet is inside, delivered or
    /// dropped; jumping delivers the same packets at the same cycles.
    #[test]
    fn pktgen_conserves_packets_on_every_cycle(
        apps in prop::collection::vec(
            (0usize..8, 1u64..400, 1u16..4, 1u16..5, 0u64..20, 0u64..60, 0usize..300, any::<bool>()),
            1..4,
        ),
    ) {
        let build = || {
            let mut c = chip();
            for &(app, period, batches, packets, pg, bg, extra, periodic) in &apps {
                let trigger = if periodic {
                    PktgenTrigger::Periodic { start: 50 + app as Cycle, period }
                } else {
                    PktgenTrigger::OneShot { at: 50 + period }
                };
                let config = PktgenApp {
                    batches,
                    packets_per_batch: packets,
                    packet_gap: pg,
                    batch_gap: bg,
                    ..PktgenApp::new(trigger, vec![0xab; extra])
                };
                c.set_pktgen_app(0, 0, app, Some(config)).unwrap();
            }
            c
        };
        let stepped = run(build(), Stepping::EveryCycle, 3000, Vec::new());
        let jumped = run(build(), Stepping::Jump, 3000, Vec::new());
        prop_assert_eq!(&jumped.rx, &stepped.rx);
        prop_assert_eq!(&jumped.counters, &stepped.counters);
        prop_assert!(stepped.counters.pktgen_generated > 0);
    }
}
