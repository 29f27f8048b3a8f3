//! Slytherin on the chip: CE-marked packets and ACKs join the strict-priority queue and
//! overtake data queued before them; marking is exactly at K; the scheme's parameters reach
//! its program; and, over generated traffic, packets are conserved, a high-priority packet
//! never leaves after unmarked data that reached the chip after it, and jumping equals
//! stepping.

use proptest::prelude::*;
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::headers::{self, Endpoints, MacAddr, Tcp};
use t2_pipeline::ir::Program;
use t2_testbench::transport::TransportHost;
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Network, Probe, Stepping, TransportConfig};
use t2sim::scenario::RECEIVER_IP;
use t2sim::schemes::{self, slytherin, Target};

use crate::common::waves::{first, numbers, run_story};
use t2sim::scenario::topology::{Shape, TopologySpec};
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
/// Propagation delay of every link, cycles.
const LINK: Cycle = 10;
/// What a probe sends: (cycle the last bit leaves, frame without FCS), in cycle order.
type Script = Vec<(Cycle, Vec<u8>)>;
const ECT0: u8 = 0b10;
const CE: u8 = 0b11;

/// A TCP segment to the receiver as the transport builds them: 4 bytes of flow id, then
/// `data` bytes; `data == 0` is a pure ACK (ECN not-ECT, as the transport sends ACKs),
/// otherwise a data segment with ECN `ecn`. The IPv4 identification `ident` names the frame.
fn segment(ident: u16, data: usize, ecn: u8) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 9]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        src_ip: Ipv4Addr::new(10, 9, 9, 9),
        dst_ip: RECEIVER_IP,
        src_port: 10_000,
        dst_port: 80,
    };
    let mut b = Vec::new();
    let payload = vec![0u8; 4 + data];
    headers::build_tcp_frame(&mut b, &ep, 64, ident, 0, 0, Tcp::ACK, 65535, &payload, 60);
    b[15] = (b[15] & !0b11) | ecn;
    let c = headers::ipv4_header_checksum(&b[14..34]);
    b[24..26].copy_from_slice(&c.to_be_bytes());
    b
}

fn ident(frame: &[u8]) -> u16 {
    u16::from_be_bytes([frame[18], frame[19]])
}

fn ecn(frame: &[u8]) -> u8 {
    frame[15] & 0b11
}

/// What one run shows: frames at the receiver (cycle of the last bit, bytes), packets each
/// of queues 0 and 1 of the receiver's port took, frames dropped, packets left inside.
#[derive(Debug, PartialEq)]
struct Run {
    received: Vec<(Cycle, Vec<u8>)>,
    enqueued: [u64; 2],
    dropped: u64,
    inside: u64,
}

/// A chip whose port 0 leads to a capturing probe and whose ports 1-3 (pipes 1-3) are fed by
/// `scripts`; every link takes `LINK` cycles. The receiver's port gets `queues`.
fn run(
    program: Program,
    queues: Option<Vec<t2_tm::QueueConfig>>,
    scripts: [Script; 3],
    stepping: Stepping,
    until: Cycle,
) -> Run {
    let params = Tofino2Params::default();
    let port = |pipe| PortSpec {
        pipe,
        mac: 0,
        channel: 0,
        bps: G100,
    };
    let config = ChipConfig {
        params,
        ports: vec![port(0), port(1), port(2), port(3)],
        routes: vec![(RECEIVER_IP, 0)],
        program: Some(program),
    };
    let mut chip = Chip::new("chip", &config).unwrap();
    if let Some(q) = &queues {
        chip.set_port_queues(0, q).unwrap();
    }
    let mut net = Network::new(stepping);
    let chip = net.add(chip);
    let rx = net.add(Probe::new(G100, vec![]));
    net.link(rx, 0, chip, 0, LINK).unwrap();
    for (k, script) in scripts.into_iter().enumerate() {
        let tx = net.add(Probe::new(G100, script));
        net.link(tx, 0, chip, k + 1, LINK).unwrap();
    }
    net.run_until(until);
    let c = net.node::<Chip>(chip);
    Run {
        received: net.node::<Probe>(rx).received().to_vec(),
        enqueued: [0, 1].map(|q| c.tm().queue_stats(0, q).enqueued),
        dropped: c.counters().dropped(),
        inside: c.packets_inside(),
    }
}

fn slytherin_queues() -> Option<Vec<t2_tm::QueueConfig>> {
    Some(slytherin::port_queues(&Tofino2Params::default()))
}

/// Data frames of 1000 bytes (1062 B frames with the FCS, 129.84 cycles on the wire) from ports 1 and 3,
/// eight each, both every 140 cycles from cycle 100: two frames arrive per 140 cycles for a
/// line that sends one per 129.84, so a backlog builds. Port 2 sends a CE-marked data frame
/// at 870 and an ACK at 900, between the sixth (800) and seventh (940) data frames.
fn overtaking_scripts() -> [Script; 3] {
    let data = |base: u16| -> Script {
        (0..8u16)
            .map(|k| (100 + 140 * k as Cycle, segment(base + k, 1000, ECT0)))
            .collect()
    };
    [
        data(100),
        vec![(870, segment(200, 1000, CE)), (900, segment(201, 0, 0))],
        data(300),
    ]
}

#[test]
fn ce_marked_packets_and_acks_overtake_queued_data() {
    // K beyond anything this traffic queues: the switch marks nothing itself here.
    let k = 10_000;
    let sly = run(
        slytherin::program(k),
        slytherin_queues(),
        overtaking_scripts(),
        Stepping::Jump,
        20_000,
    );
    // The same forwarding and marking, one FIFO: DCTCP's switch.
    let fifo = run(
        schemes::dctcp::program(k),
        None,
        overtaking_scripts(),
        Stepping::Jump,
        20_000,
    );
    assert_eq!(
        sly,
        run(
            slytherin::program(k),
            slytherin_queues(),
            overtaking_scripts(),
            Stepping::EveryCycle,
            20_000
        )
    );
    let order = |r: &Run| r.received.iter().map(|(_, f)| ident(f)).collect::<Vec<_>>();
    // The CE frame and the ACK took queue 1, the sixteen data frames queue 0.
    assert_eq!(sly.enqueued, [16, 2]);
    assert_eq!(fifo.enqueued, [18, 0]);
    assert_eq!(
        (sly.dropped, sly.inside, fifo.dropped, fifo.inside),
        (0, 0, 0, 0)
    );
    // Data frame k of either port reaches the chip at 110 + 140 k (ports 1 and 3 in the same
    // cycle, pipe 1's first), the CE frame at 880 (after 105 and 305), the ACK at 910. One
    // FIFO serves them in arrival order. In Slytherin every packet is ready to leave 300
    // cycles after its enqueue, all with the same latency before it, so, counted from the
    // cycle data frame 100 is ready (R), data frame k is ready at R + 140 k, the CE frame at
    // R + 770 and the ACK at R + 800; the line, never idle from R on, picks frame n at
    // R + 129.84 n. Pick 6 (R + 779) finds the CE frame ready in queue 1 and takes it ahead
    // of the six data frames ready before it (103, 303, 104, 304, 105, 305), which reached
    // the chip before it; pick 7 (R + 909) takes the ACK ahead of the same six.
    assert_eq!(
        order(&fifo),
        vec![
            100, 300, 101, 301, 102, 302, 103, 303, 104, 304, 105, 305, 200, 201, 106, 306, 107,
            307
        ]
    );
    assert_eq!(
        order(&sly),
        vec![
            100, 300, 101, 301, 102, 302, 200, 201, 103, 303, 104, 304, 105, 305, 106, 306, 107,
            307
        ]
    );
    // The line never idles: from the first frame on, each frame's last bit arrives exactly
    // its serialization (with preamble and gap) after the one before, in both runs. The
    // first is frame 100, sent at 100, after the unloaded latency.
    let params = Tofino2Params::default();
    let line = LineRate::new(params.clock(), G100);
    let tpc = line.ticks_per_cycle();
    for r in [&sly, &fifo] {
        let chip = Chip::new(
            "c",
            &ChipConfig {
                params,
                ports: vec![PortSpec {
                    pipe: 0,
                    mac: 0,
                    channel: 0,
                    bps: G100,
                }],
                routes: vec![(RECEIVER_IP, 0)],
                program: Some(slytherin::program(k)),
            },
        )
        .unwrap();
        assert_eq!(chip.ingress_latency(), 189);
        let first = 100 + LINK + chip.unloaded_latency(1062, 0) + LINK;
        assert_eq!(r.received[0].0, first);
        let first_start_ticks = (first - LINK - line.serialization_cycles_ceil(1062)) * tpc;
        let mut end = first_start_ticks;
        for (at, f) in &r.received {
            end += line.serialization_ticks(f.len() as u64 + 4);
            assert_eq!(*at - LINK, end.div_ceil(tpc), "frame {}", ident(f));
        }
    }
    // Nothing is marked: data keeps ECT(0), the CE frame CE, the ACK not-ECT.
    for (_, f) in &sly.received {
        let want = match ident(f) {
            200 => CE,
            201 => 0,
            _ => ECT0,
        };
        assert_eq!(ecn(f), want, "frame {}", ident(f));
    }
}

/// Ten data frames of 176 bytes with the FCS (one 176-byte cell each; 24 cycles on the wire
/// with preamble and gap) from port 1, back to back from cycle 100, through a switch that
/// marks at `k` cells.
fn marks_with_threshold(k: u64) -> Vec<u8> {
    let script: Script = (0..10u16)
        .map(|i| (100 + 24 * i as Cycle, segment(i, 172 - 54 - 4, ECT0)))
        .collect();
    assert!(script.iter().all(|(_, f)| f.len() + 4 == 176));
    let r = run(
        slytherin::program(k),
        slytherin_queues(),
        [script, vec![], vec![]],
        Stepping::Jump,
        10_000,
    );
    assert_eq!(r.enqueued, [10, 0]);
    let idents: Vec<u16> = r.received.iter().map(|(_, f)| ident(f)).collect();
    assert_eq!(idents, (0..10).collect::<Vec<u16>>());
    r.received.iter().map(|(_, f)| ecn(f)).collect()
}

#[test]
fn marking_is_exactly_at_k_cells() {
    // Frame i joins the queue 24 i cycles after the first, and nothing leaves before the
    // first is 300 cycles old: frame i finds exactly i cells. The frame that finds K - 1
    // cells keeps ECT(0); the one that finds K, and all after it, carry CE.
    for k in [1u64, 5, 6, 9] {
        let want: Vec<u8> = (0..10u64).map(|i| if i < k { ECT0 } else { CE }).collect();
        assert_eq!(marks_with_threshold(k), want, "k = {k}");
    }
    // Not-ECT packets are never marked, whatever they find.
    let script: Script = (0..10u16)
        .map(|i| (100 + 24 * i as Cycle, segment(i, 114, 0)))
        .collect();
    let r = run(
        slytherin::program(1),
        slytherin_queues(),
        [script, vec![], vec![]],
        Stepping::Jump,
        10_000,
    );
    assert_eq!(r.received.len(), 10);
    assert!(r.received.iter().all(|(_, f)| ecn(f) == 0));
}

#[test]
fn the_scheme_builds_its_program_queues_and_hosts_from_its_parameters() {
    let s = schemes::find("slytherin").unwrap();
    let params = Tofino2Params::default();
    let target = Target {
        params: &params,
        link_bps: G100,
        multipath: false,
    };
    let overrides = schemes::parse_settings(&["k_cells=384".to_string()]).unwrap();
    let setup = (s.build)(&s.resolve(&overrides).unwrap(), &target);
    assert_eq!(setup.program, slytherin::program(384));
    assert_ne!(setup.program, slytherin::program(385));
    assert_eq!(setup.port_queues, slytherin_queues());
    assert_eq!(
        setup.hosts.congestion,
        t2sim::schemes::dctcp::host::CONGESTION
    );
    let default = s.default_setup(&target);
    assert_eq!(default.program, slytherin::program(768));
    // Networks with equal-cost paths get the selector on ipv4_host.
    let multipath = Target {
        multipath: true,
        ..target
    };
    assert_eq!(
        s.default_setup(&multipath).program,
        schemes::with_ecmp(slytherin::program(768))
    );
}

#[test]
fn the_transports_acks_take_the_high_queue_and_its_data_the_normal_one() {
    // One 20,000-byte DCTCP flow from host 1 to host 0 through one Slytherin chip (host i on
    // port i): its 20 data segments (ECT(0), 1,048 B IPv4 packets, far below K) join queue 0
    // of port 0, and host 0's 20 ACKs (44 B IPv4 packets, one per segment) queue 1 of port 1.
    let params = Tofino2Params::default();
    let spec = TopologySpec {
        shape: Shape::SingleChip { hosts: 2 },
        params,
        link_bps: G100,
        link_delay_ns: 1000,
        transport: TransportConfig {
            congestion: t2sim::schemes::dctcp::host::CONGESTION,
            ..TransportConfig::fixed(30_000, 300_000)
        },
        host_features: Vec::new(),
        rdma: None,
        stepping: Stepping::Jump,
        program: Some(slytherin::program(slytherin::DEFAULT_K_CELLS)),
    };
    let mut topo = spec.build().unwrap();
    let chip = topo.chips[0];
    for port in 0..2 {
        topo.net
            .node_mut::<Chip>(chip)
            .set_port_queues(port, &slytherin::port_queues(&params))
            .unwrap();
    }
    topo.add_flows(&[FlowSpec {
        start: 0,
        id: 1,
        src: 1,
        dst: 0,
        size_bytes: 20_000,
    }])
    .unwrap();
    topo.net.run_until(150_000);
    let tm = topo.net.node::<Chip>(chip).tm();
    let enqueued = |port| [0, 1].map(|q| tm.queue_stats(port, q).enqueued);
    assert_eq!(enqueued(0), [20, 0]);
    assert_eq!(enqueued(1), [0, 20]);
    let rx = topo.net.node::<TransportHost>(topo.hosts[0]);
    assert_eq!(rx.arrivals(1).map(<[_]>::len), Some(20));
}

#[test]
fn the_shipped_scenario_runs_slytherin_on_every_switch() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join("slytherin_websearch.toml");
    let f = t2sim::scenario::ScenarioFile::load(&path).unwrap();
    let (name, values) = f.scheme.unwrap();
    assert_eq!(name, "slytherin");
    assert_eq!(values.int("k_cells"), 768);
    assert_eq!(f.port_queues, slytherin_queues());
    // Leaf-spine with two spines has equal-cost paths: the program has the ECMP selector.
    assert_eq!(
        f.topology.program,
        Some(schemes::with_ecmp(slytherin::program(768)))
    );
    assert_eq!(
        f.topology.transport.congestion,
        t2sim::schemes::dctcp::host::CONGESTION
    );
}

/// A generated frame: which input port (1-3), kind (0 data ECT(0), 1 data CE, 2 ACK, 3 data
/// not-ECT), data bytes, cycles of idle line before it.
type Gen = (usize, u8, usize, u64);

/// What was sent: (ident, cycle the last bit reaches the chip, high priority).
type Sent = Vec<(u16, Cycle, bool)>;

fn scripts(gen: &[Gen]) -> ([Script; 3], Sent) {
    let mut scripts: [Script; 3] = Default::default();
    let mut free = [50u64; 3];
    // (ident, cycle the last bit reaches the chip, high priority)
    let mut sent = Vec::new();
    for (i, &(port, kind, data, gap)) in gen.iter().enumerate() {
        let (data, ecn_bits) = match kind {
            0 => (data, ECT0),
            1 => (data, CE),
            2 => (0, 0),
            _ => (data, 0),
        };
        let f = segment(i as u16, data, ecn_bits);
        // At least the frame's time on the wire (with preamble, gap and FCS) after the last.
        let wire = ((f.len() as u64 + 24) * 8 * 3).div_ceil(200);
        let at = free[port - 1] + gap + wire;
        free[port - 1] = at;
        // High: CE, or no longer than an ACK (a SACK option's worth of data, 36 B, or less).
        let short = 20 + 20 + 4 + data as u64 <= slytherin::ACK_MAX_IPV4_TOTAL_LEN;
        sent.push((i as u16, at + LINK, kind == 1 || short));
        scripts[port - 1].push((at, f));
    }
    (scripts, sent)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn high_priority_is_never_behind_later_unmarked_data_and_jump_equals_step(
        gen in prop::collection::vec((1usize..=3, 0u8..4, 1usize..1400, 0u64..300), 1..48),
        k in 1u64..200,
    ) {
        let (s, sent) = scripts(&gen);
        let end = 50_000;
        let jump = run(slytherin::program(k), slytherin_queues(), s.clone(), Stepping::Jump, end);
        let step = run(slytherin::program(k), slytherin_queues(), s, Stepping::EveryCycle, end);
        prop_assert_eq!(&jump, &step);
        // Conserved: everything sent came out (the buffer is far from full) and nothing is
        // left inside.
        prop_assert_eq!(jump.dropped, 0);
        prop_assert_eq!(jump.inside, 0);
        prop_assert_eq!(jump.received.len(), gen.len());
        let high = sent.iter().filter(|s| s.2).count() as u64;
        prop_assert_eq!(jump.enqueued, [gen.len() as u64 - high, high]);
        // Departure order: a CE frame or an ACK that reached the chip at least 16 cycles
        // before an unmarked data frame leaves before it.
        let mut left = vec![0; gen.len()];
        for (pos, (_, f)) in jump.received.iter().enumerate() {
            left[ident(f) as usize] = pos;
        }
        for &(c, c_at, c_high) in &sent {
            for &(u, u_at, u_high) in &sent {
                if c_high && !u_high && c_at + 16 <= u_at {
                    prop_assert!(left[c as usize] < left[u as usize],
                        "frame {} (high, at {}) left after frame {} (at {})", c, c_at, u, u_at);
                }
            }
        }
    }
}

/// The story scenario's waves (docs/schemes/slytherin.md, "Waves"): at the spine (hop 2), a
/// frame that leaf 0's congested uplink marked CE (hop 1) is put in the strict-priority queue
/// and leaves ahead of the unmarked frames queued before it. Every cycle below is what the
/// model does with this seed (the run is deterministic); the relations are what the scheme
/// promises.
#[test]
fn story_waves_show_a_marked_frame_promoted_at_the_next_hop() {
    let story = run_story("slytherin_story");
    let r = &story.results;
    assert_eq!((r.flows, r.completed, r.drops.total()), (4, 4, 0));
    let titles: Vec<&str> = story.groups.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles.len(), 6, "{titles:?}");
    assert!(titles[0].starts_with("1 arrivals at hop 2") && titles[3].starts_with("4 toward"));
    let d = &story.dump;

    // Queue 0 toward leaf 1 passes K (768 cells) as leaf 0's and leaf 2's frames meet.
    let q0 = "chip.tm.pipe1.port136.q0.depth_cells";
    let q1 = "chip.tm.pipe1.port136.q1.depth_cells";
    assert_eq!(first(d, q0, |v| v > 768), Some((24077, 774)));
    // The first promoted frame: number 313, in from leaf 0 at 27,553, at ingress stage 0 a
    // parser's 64 cycles later, in queue 1 (9 cells) after the 190 cycles of ingress and the
    // hand-over to the TM, while 936 cells wait in queue 0.
    let seen = |path: &str, n: u64| first(d, path, |v| v == n).unwrap().0;
    assert_eq!(seen("chip.port8.rx_pkt", 313), 27553);
    assert_eq!(seen("chip.pipe0.ingress.stage00.pkt_id", 313), 27553 + 64);
    assert_eq!(first(d, q1, |v| v > 0), Some((27553 + 190, 9)));
    let q0_then = numbers(d, q0)
        .into_iter()
        .take_while(|&(c, _)| c <= 27743)
        .last()
        .unwrap();
    assert_eq!(q0_then.1, 936);
    // Queue 1 holds only frames that arrived CE-marked (no ACK goes toward leaf 1 here) and
    // stays short: never more than two of them (18 cells).
    assert!(numbers(d, q1).iter().all(|&(_, v)| v <= 18));
    // It leaves toward leaf 1 at 28,235, back to back with the next promoted frame, ahead of
    // the 103 frames (146 to 311) that reached the spine before it and wait in queue 0.
    let tx = numbers(d, "chip.port136.tx_pkt");
    let i = tx.iter().position(|&(_, v)| v == 313).unwrap();
    assert_eq!((tx[i], tx[i + 1]), ((28235, 313), (28420, 316)));
    let sent_at = |n: u64| tx.iter().find(|&&(_, v)| v == n).map(|&(c, _)| c);
    let arrived_at = |n: u64| {
        ["chip.port8.rx_pkt", "chip.port264.rx_pkt"]
            .iter()
            .find_map(|p| first(d, p, |v| v == n).map(|(c, _)| c))
    };
    let overtaken: Vec<u64> = (1..313)
        .filter(|&n| arrived_at(n).is_some_and(|c| c < 27553))
        .filter(|&n| sent_at(n).is_some_and(|c| c > 28235))
        .collect();
    assert_eq!(
        (overtaken.len(), overtaken.first(), overtaken.last()),
        (103, Some(&146), Some(&311))
    );
    crate::common::waves::assert_gtkwave_shows_save_file(&story.dir, &story.vcd, &story.gtkw);
    std::fs::remove_dir_all(&story.dir).unwrap();
}
