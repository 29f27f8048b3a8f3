//! The chip running programs: placement sets its latency, the control plane's routes go into
//! the program's table, egress sees the TM's queue depth, and DCTCP over an ECN-marking egress
//! holds the queue near the marking threshold.

use t2_clock::Cycle;
use t2_pipeline::examples;
use t2_pipeline::ir::Program;
use t2_testbench::transport::TransportHost;
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Host, Stepping, TransportConfig};
use t2sim::scenario::topology::{Shape, TopologySpec};
use t2sim::scenario::IncastScenario;
use t2sim::{Chip, Tofino2Params};

fn one_packet(program: Program) -> IncastScenario {
    IncastScenario {
        senders: 1,
        frame_bytes: 1480,
        load_percent: 1,
        duration_cycles: 5_000,
        program: Some(program),
        ..IncastScenario::default()
    }
}

#[test]
fn placement_sets_the_latency_of_a_program() {
    // l3_forward has a ternary table in stage 0: 25 + 19 x 2 = 63 MAU cycles in ingress, so
    // the gress takes 64 + 63 + 64 = 191 cycles, 2 more than the built-in program.
    let mut program = examples::l3_forward();
    for t in &mut program.tables {
        t.entries.clear(); // the scenario's routes go in instead
    }
    let mut b = one_packet(program).build().unwrap();
    b.net.run_until(20_000);
    let chip = b.net.node::<Chip>(b.chip);
    assert_eq!(chip.ingress_latency(), 191);
    assert_eq!(chip.egress_latency(), 189);
    assert_eq!(chip.unloaded_latency(1480, 0), 863);
    let rx = b.net.node::<Host>(b.receiver).received();
    assert_eq!(rx.len(), 1);
    assert_eq!(rx[0].received_at - rx[0].sent_at, 150 + 863 + 150);
}

#[test]
fn a_route_table_too_big_for_a_stage_is_split_and_forwards_from_its_last_parts() {
    // 1,000,000 host routes of 46-bit entries (2 per word, 163,840 per stage of 80 RAMs)
    // take seven stages. 200,000 routes to 1.0.0.0 and up fill the first part and a piece of
    // the second, so the receiver's route (10.1.0.1, after them in key order) sits in part
    // 2: the packet crosses a part that misses and stands aside for the parts after it.
    let mut program = t2sim::schemes::dctcp::program(400);
    let host = program
        .tables
        .iter_mut()
        .find(|t| t.name == "ipv4_host")
        .unwrap();
    host.size = 1_000_000;
    for k in 0..200_000u64 {
        host.entries.push(t2_pipeline::ir::Entry {
            key: vec![t2_pipeline::ir::KeyValue {
                value: 0x0100_0000 + k,
                mask: None,
            }],
            action: t2_pipeline::ir::ActionCall::new("forward", &[4]),
            members: Vec::new(),
        });
    }
    let mut b = one_packet(program).build().unwrap();
    b.net.run_until(20_000);
    let chip = b.net.node::<Chip>(b.chip);
    // Parts are control-dependent on each other: stage 0 is the only full-length stage, so
    // the gress takes 64 + (23 + 19 x 2) + 64 = 189 cycles, as with a table in one stage.
    assert_eq!(chip.ingress_latency(), 189);
    let rx = b.net.node::<Host>(b.receiver).received();
    assert_eq!(rx.len(), 1);
    assert_eq!(rx[0].received_at - rx[0].sent_at, 150 + 861 + 150);
}

#[test]
fn routes_go_in_the_route_table_when_there_is_one_and_programs_must_fit() {
    let err = |p: Program| one_packet(p).build().err().unwrap().to_string();
    // A program without the route table gets no host routes: it builds, and forwards as its
    // own tables say.
    assert!(one_packet(examples::ecn_marking()).build().is_ok());
    let mut huge = t2sim::schemes::dctcp::program(400);
    huge.tables[2].size = 50_000_000;
    let e = err(huge);
    assert!(e.contains("does not fit on the chip"), "{e}");
    let mut bad = t2sim::schemes::dctcp::program(400);
    bad.tables[2].keys = vec!["ipv4.src_addr".into()];
    let e = err(bad);
    assert!(e.contains("must be keyed on `ipv4.dst_addr` alone"), "{e}");
}

/// Two DCTCP senders into one receiver through one chip; the receiver port's queue depth is
/// sampled every microsecond. Returns (depth samples after the first 100 us, CE-marked
/// segments at the receiver).
fn dctcp_incast(program: Option<Program>) -> (Vec<u32>, u64) {
    let spec = TopologySpec {
        shape: Shape::SingleChip { hosts: 3 },
        params: Tofino2Params::default(),
        link_bps: 100_000_000_000,
        link_delay_ns: 1000,
        transport: TransportConfig {
            congestion: t2sim::schemes::dctcp::host::CONGESTION,
            ..TransportConfig::fixed(30_000, 300_000)
        },
        host_features: Vec::new(),
        rdma: None,
        stepping: Stepping::Jump,
        program,
    };
    let mut topo = spec.build().unwrap();
    let flows: Vec<FlowSpec> = (1..=2)
        .map(|src| FlowSpec {
            start: 0,
            id: src as u32,
            src,
            dst: 0,
            size_bytes: 10_000_000,
        })
        .collect();
    topo.add_flows(&flows).unwrap();
    let chip = topo.chips[0];
    let mut depths = Vec::new();
    let us: Cycle = 1500;
    for k in 1..=600 {
        topo.net.run_until(k * us);
        if k > 100 {
            depths.push(topo.net.node::<Chip>(chip).tm().port_stats(0).depth_cells);
        }
    }
    let marked = topo
        .net
        .node::<TransportHost>(topo.hosts[0])
        .marked_segments();
    (depths, marked)
}

#[test]
fn dctcp_over_an_ecn_marking_egress_holds_the_queue_near_the_threshold() {
    let k = t2sim::schemes::dctcp::DEFAULT_K_CELLS as u32;
    let (marked_depths, marks) = dctcp_incast(Some(t2sim::schemes::dctcp::program(k as u64)));
    let (plain_depths, no_marks) = dctcp_incast(None);
    let mean = |d: &[u32]| d.iter().map(|&x| x as u64).sum::<u64>() / d.len() as u64;
    let max = |d: &[u32]| *d.iter().max().unwrap();
    let min = |d: &[u32]| *d.iter().min().unwrap();
    eprintln!(
        "with marking: min {} mean {} max {} marks {marks}; without: mean {} max {}",
        min(&marked_depths),
        mean(&marked_depths),
        max(&marked_depths),
        mean(&plain_depths),
        max(&plain_depths)
    );
    assert_eq!(no_marks, 0, "the built-in program marks nothing");
    assert!(marks > 100, "{marks}");
    // Near the threshold: never far above it, on average between half of it and it, and
    // never empty (the line stays busy).
    let m = mean(&marked_depths);
    assert!(m >= k as u64 / 2 && m <= k as u64, "mean {m}");
    assert!(max(&marked_depths) <= k + k / 4);
    assert!(min(&marked_depths) > 0);
    // Without marking the same senders build a queue tens of times deeper.
    assert!(mean(&plain_depths) > 20 * k as u64);
}

/// `dctcp_switch` without marking, plus a table that puts each sender's packets in a queue of
/// their own (`classify`, exact on the source address).
fn per_flow_queues(senders: &[(std::net::Ipv4Addr, u64)]) -> Program {
    use t2_pipeline::ir::{Action, MatchKind, Operand, Primitive, Stmt, Table};
    // A threshold of 2^19 - 1 cells, more than the buffer holds: nothing is marked.
    let mut p = t2sim::schemes::dctcp::program((1 << 19) - 1);
    p.name = "per_flow_queues".into();
    p.actions.push(
        Action::new("set_queue")
            .param("qid", 7)
            .prim(Primitive::SetQid {
                qid: Operand::param("qid"),
            }),
    );
    let mut classify = Table::new("classify", MatchKind::Exact, &["ipv4.src_addr"], 64)
        .action("set_queue")
        .default_action("set_queue", &[0]);
    for &(ip, qid) in senders {
        classify = classify.entry(&[u32::from(ip) as u64], "set_queue", &[qid]);
    }
    p.tables.push(classify);
    p.ingress.push(Stmt::apply("classify"));
    p
}

/// Two long fixed-window flows into one port, one with four times the other's window;
/// returns each flow's share of the segments received between 200 us and 1 ms.
fn two_flow_shares(fair: bool) -> [f64; 2] {
    let spec = TopologySpec {
        shape: Shape::SingleChip { hosts: 3 },
        params: Tofino2Params::default(),
        link_bps: 100_000_000_000,
        link_delay_ns: 1000,
        transport: TransportConfig::fixed(30_000, 300_000),
        host_features: Vec::new(),
        rdma: None,
        stepping: Stepping::Jump,
        program: None,
    };
    let peers = spec.build().unwrap().peers;
    let spec = TopologySpec {
        program: fair.then(|| per_flow_queues(&[(peers[1].ip, 1), (peers[2].ip, 2)])),
        ..spec
    };
    let mut topo = spec.build().unwrap();
    let flow = |id: u32, src: usize| FlowSpec {
        start: 0,
        id,
        src,
        dst: 0,
        size_bytes: 50_000_000,
    };
    // Flow 2's sender gets four times the window.
    topo.net
        .node_mut::<TransportHost>(topo.hosts[2])
        .set_window_bytes(120_000)
        .unwrap();
    topo.add_flows(&[flow(1, 1), flow(2, 2)]).unwrap();
    let count = |topo: &t2sim::scenario::topology::Topology, f: u32| {
        let rx = topo.net.node::<TransportHost>(topo.hosts[0]);
        rx.arrivals(f).map_or(0, |a| a.len()) as f64
    };
    topo.net.run_until(300_000);
    let before = [count(&topo, 1), count(&topo, 2)];
    topo.net.run_until(1_500_000);
    let got = [count(&topo, 1) - before[0], count(&topo, 2) - before[1]];
    let total = got[0] + got[1];
    [got[0] / total, got[1] / total]
}

#[test]
fn per_flow_queues_share_the_bottleneck_fairly() {
    let fifo = two_flow_shares(false);
    let fair = two_flow_shares(true);
    eprintln!("FIFO shares {fifo:?}, per-flow DWRR shares {fair:?}");
    // One FIFO: the flow with four times the window takes about four fifths.
    assert!(fifo[1] > 0.75, "{fifo:?}");
    // A queue per flow with equal DWRR weights: halves within 2%.
    assert!(
        (fair[0] - 0.5).abs() < 0.01 && (fair[1] - 0.5).abs() < 0.01,
        "{fair:?}"
    );
}
