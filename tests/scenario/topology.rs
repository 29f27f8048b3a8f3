//! Topologies of chips and transport hosts: they build, route every host pair, and carry
//! reliable flows through overload.

use t2_pipeline::l3::ecmp_member;
use t2_testbench::transport::TransportHost;
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Harness, Monitor, Network, NodeId, Scoreboard, Stepping, TransportConfig};
use t2sim::scenario::topology::{Shape, Topology, TopologySpec};
use t2sim::{Chip, Tofino2Params};

const G100: u64 = 100_000_000_000;

fn spec(shape: Shape, stepping: Stepping) -> TopologySpec {
    TopologySpec {
        shape,
        params: Tofino2Params::default(),
        link_bps: G100,
        link_delay_ns: 1000,
        transport: TransportConfig::fixed(100_000, 150_000),
        host_features: Vec::new(),
        rdma: None,
        stepping,
        program: None,
    }
}

fn flow(id: u32, src: usize, dst: usize, size: u64, start: u64) -> FlowSpec {
    FlowSpec {
        start,
        id,
        src,
        dst,
        size_bytes: size,
    }
}

/// Runs until every host is done (or `limit`), and returns each flow's FCT.
fn run(t: &mut Topology, limit: u64) -> Vec<Option<u64>> {
    let mut end = 0;
    while end < limit {
        end += 20_000;
        t.net.run_until(end);
        if t.hosts
            .iter()
            .all(|&h| t.net.node::<TransportHost>(h).all_done())
        {
            break;
        }
    }
    let mut out: Vec<(u32, Option<u64>)> = t
        .hosts
        .iter()
        .flat_map(|&h| t.net.node::<TransportHost>(h).outcomes())
        .map(|o| (o.spec.id, o.finish.map(|f| f - o.spec.start)))
        .collect();
    out.sort();
    out.into_iter().map(|(_, f)| f).collect()
}

/// The FCT of a lone flow through `hops` unloaded switches, derived frame by frame in line
/// ticks: the sending NIC sends the flow's frames back to back from its start; a switch sees a
/// frame in the cycle its last bit arrives, and its MAC starts it `chip_latency_base` cycles
/// later or when its previous frame's last bit has left, whichever is later; the receiver
/// ACKs the last frame in the cycle it arrives and the ACK crosses the same switches back.
fn unloaded_fct(t: &Topology, f: &FlowSpec, hops: u64) -> u64 {
    let (line, mss, delay, base) = (t.line(), t.mss(), t.link_delay(), t.chip_latency_base());
    let tpc = line.ticks_per_cycle();
    let frames = f.size_bytes.div_ceil(mss);
    let bytes = |k: u64| (f.size_bytes - k * mss).min(mss) + 62;
    // Line tick at which each frame's last bit leaves the current sender.
    let mut ends: Vec<u64> = Vec::new();
    let mut at = f.start * tpc;
    for k in 0..frames {
        at += line.serialization_ticks(bytes(k));
        ends.push(at);
    }
    for _ in 0..hops {
        let mut free = 0;
        for (k, end) in ends.iter_mut().enumerate() {
            let seen = end.div_ceil(tpc) + delay;
            let start = free.max((seen + base) * tpc);
            free = start + line.serialization_ticks(bytes(k as u64));
            *end = free;
        }
    }
    let received = ends.last().unwrap().div_ceil(tpc) + delay;
    let mut ack = received * tpc + line.serialization_ticks(64);
    for _ in 0..hops {
        ack = (ack.div_ceil(tpc) + delay + base) * tpc + line.serialization_ticks(64);
    }
    ack.div_ceil(tpc) + delay - f.start
}

#[test]
fn a_lone_flow_meets_its_ideal_fct_on_every_shape() {
    for (shape, (a, b), hops) in [
        (Shape::SingleChip { hosts: 2 }, (0, 1), 1),
        (Shape::Dumbbell { hosts_per_side: 2 }, (0, 3), 2),
        (t2sim::schemes::pabo::topology::tree(2), (1, 0), 3),
        (t2sim::schemes::pabo::topology::tree(1), (1, 3), 5),
        (Shape::FatTree { k: 4 }, (0, 15), 5),
        (
            Shape::LeafSpine {
                leaves: 2,
                spines: 2,
                hosts_per_leaf: 2,
            },
            (1, 2),
            3,
        ),
    ] {
        let mut t = spec(shape, Stepping::Jump).build().unwrap();
        assert_eq!(t.switch_hops(a, b), hops, "{shape:?}");
        let f = flow(0, a, b, 30_000, 100);
        t.add_flows(&[f]).unwrap();
        let fct = run(&mut t, 2_000_000)[0].expect("completes");
        let ideal = t.ideal_fct(&f);
        // Hosts and chips are exact to the line tick, so an unloaded flow takes exactly the
        // time `unloaded_fct` derives frame by frame; that is the ideal time plus less than a
        // cycle per switch after the first (where a frame's arrival is seen at a cycle edge).
        let exact = unloaded_fct(&t, &f, hops as u64);
        assert_eq!(fct, exact, "{shape:?}");
        assert!(
            fct >= ideal && fct < ideal + hops as u64,
            "{shape:?}: {fct} vs {ideal}"
        );
        assert_eq!(t.net.live_packets(), 0);
    }
}

#[test]
fn bfc_leaf_spine_and_fat_tree_build_and_route_all_pairs() {
    let shape = Shape::LeafSpine {
        leaves: 8,
        spines: 8,
        hosts_per_leaf: 16,
    };
    let mut t = spec(shape, Stepping::Jump).build().unwrap();
    assert_eq!((t.chips.len(), t.hosts.len()), (16, 128));
    // A flow from every leaf to the next, each hashed onto one spine (ECMP).
    let flows: Vec<FlowSpec> = (0..8)
        .map(|l| flow(l as u32, l * 16 + l, ((l + 1) % 8) * 16 + 2 * l, 5_000, 0))
        .collect();
    t.add_flows(&flows).unwrap();
    assert!(run(&mut t, 1_000_000).iter().all(|f| f.is_some()));
    assert_eq!(t.switch_hops(0, 127), 3);
    assert_eq!(t.peers[127].ip.to_string(), "10.0.0.128");
    assert_eq!(
        t2sim::scenario::topology::host_peer(255).ip.to_string(),
        "10.0.1.0",
        "addresses carry past 255"
    );
    assert_eq!(t.switch_hops(0, 15), 1);

    let mut t = spec(Shape::FatTree { k: 4 }, Stepping::Jump)
        .build()
        .unwrap();
    assert_eq!((t.chips.len(), t.hosts.len()), (20, 16));
    let flows: Vec<FlowSpec> = (0..16)
        .flat_map(|a| (0..16).filter(move |&b| b != a).map(move |b| (a, b)))
        .enumerate()
        .map(|(i, (a, b))| flow(i as u32, a, b, 2_000, i as u64 * 50))
        .collect();
    t.add_flows(&flows).unwrap();
    assert!(run(&mut t, 4_000_000).iter().all(|f| f.is_some()));

    let t = spec(t2sim::schemes::pabo::topology::tree(1), Stepping::Jump)
        .build()
        .unwrap();
    assert_eq!((t.chips.len(), t.hosts.len()), (7, 4));
    assert_eq!(
        t.switch_hops(3, 0),
        3,
        "sender, edge, middle, root, receiver"
    );
}

/// 2 leaves x 4 spines, 8 hosts per leaf, every switch running `program` (or the built-in
/// forwarding): 40 flows of 10 segments from leaf 0 to leaf 1 (5 per host pair), run until
/// all complete, none resent. Leaf 0's ports 0..8 are its hosts, 8..12 its uplinks to spines
/// 0..3.
fn leaf_spine_flows(program: Option<t2_pipeline::ir::Program>) -> (Topology, Vec<FlowSpec>) {
    let mut s = spec(
        Shape::LeafSpine {
            leaves: 2,
            spines: 4,
            hosts_per_leaf: 8,
        },
        Stepping::Jump,
    );
    s.program = program;
    let mut t = s.build().unwrap();
    let flows: Vec<FlowSpec> = (0..40u32)
        .map(|i| {
            let src = (i % 8) as usize;
            flow(i, src, 8 + src, 10_000, i as u64 * 400)
        })
        .collect();
    t.add_flows(&flows).unwrap();
    assert!(run(&mut t, 4_000_000).iter().all(|f| f.is_some()));
    let resent: u64 = t
        .hosts
        .iter()
        .flat_map(|&h| t.net.node::<TransportHost>(h).outcomes())
        .map(|o| o.retransmitted_segments)
        .sum();
    assert_eq!(resent, 0);
    (t, flows)
}

#[test]
fn ecmp_hashes_each_flow_onto_one_spine() {
    // Each flow is 10 frames and none is lost or resent, so leaf 0's uplink s carries
    // exactly 10 frames for each flow the 5-tuple hash puts on spine s, and spine s passes
    // the same frames down to leaf 1.
    let (t, flows) = leaf_spine_flows(None);
    // The member each flow hashes to: data frames go from port 10000 + id to port 80.
    let mut per_spine = [0u64; 4];
    for f in &flows {
        let (a, b) = (t.peers[f.src].ip, t.peers[f.dst].ip);
        per_spine[ecmp_member(a, b, 6, 10_000 + f.id as u16, 80, 4)] += 1;
    }
    assert_eq!(per_spine, [15, 10, 10, 5]);
    let (leaf0, leaf1) = (t.chips[0], t.chips[1]);
    let up: Vec<u64> = (0..4).map(|s| t.net.link_tx(leaf0, 8 + s).frames).collect();
    assert_eq!(up, vec![150, 100, 100, 50]);
    // Spine s (chip 2 + s) has leaf 0 on port 0 and leaf 1 on port 1.
    let down: Vec<u64> = (0..4)
        .map(|s| t.net.link_tx(t.chips[2 + s], 1).frames)
        .collect();
    assert_eq!(down, up);
    // The ACKs come back over leaf 1's uplinks, hashed on their own 5-tuple.
    let acks: u64 = (0..4).map(|s| t.net.link_tx(leaf1, 8 + s).frames).sum();
    assert_eq!(acks, 400);
}

#[test]
fn a_program_with_a_selector_spreads_flows_over_the_spines() {
    // The ECMP test above, with every switch running `ecmp_switch`: the chip installs each
    // destination's four uplink routes as one selector group, and the selector's hash (the
    // low 14 bits of a CRC-16 of the 5-tuple, modulo 4) puts each flow on one spine.
    let (t, flows) = leaf_spine_flows(Some(t2sim::schemes::dctcp::ecmp_program(400)));
    let mut per_spine = [0u64; 4];
    for f in &flows {
        let mut tuple = t.peers[f.src].ip.octets().to_vec();
        tuple.extend_from_slice(&t.peers[f.dst].ip.octets());
        tuple.push(6);
        tuple.extend_from_slice(&(10_000 + f.id as u16).to_be_bytes());
        tuple.extend_from_slice(&80u16.to_be_bytes());
        let hash = t2_pipeline::exec::crc(
            t2_pipeline::ir::HashAlgorithm::Crc16,
            t2_pipeline::exec::SELECTOR_POLYNOMIAL,
            &tuple,
        ) & t2_pipeline::exec::SELECTOR_HASH_MASK;
        per_spine[hash as usize % 4] += 1;
    }
    // CRC bits are linear in the input, so these sequential flows spread unevenly.
    assert_eq!(per_spine, [18, 3, 2, 17]);
    let up: Vec<u64> = (0..4)
        .map(|s| t.net.link_tx(t.chips[0], 8 + s).frames)
        .collect();
    assert_eq!(up, per_spine.map(|n| 10 * n).to_vec());
}

#[test]
fn a_program_cannot_take_ecmp_routes() {
    let mut s = spec(
        Shape::LeafSpine {
            leaves: 2,
            spines: 2,
            hosts_per_leaf: 1,
        },
        Stepping::Jump,
    );
    s.program = Some(t2sim::schemes::dctcp::program(400));
    let e = s.build().err().unwrap();
    assert!(
        e.contains("10.0.0.2 has 2 equal-cost routes (ECMP, device ports"),
        "{e}"
    );
    assert!(e.contains("holds one port per destination"), "{e}");
    // One path per destination is fine.
    s.shape = Shape::Dumbbell { hosts_per_side: 1 };
    assert!(s.build().is_ok());
}

#[test]
fn bad_shapes_are_refused() {
    let e = |shape| spec(shape, Stepping::Jump).build().err().unwrap();
    assert_eq!(
        e(Shape::FatTree { k: 3 }),
        "fat_tree needs an even k of at least 2"
    );
    assert_eq!(
        e(Shape::SingleChip { hosts: 1 }),
        "single_chip needs at least 2 hosts"
    );
    assert!(e(Shape::SingleChip { hosts: 200 }).contains("room for 128"));
}

fn overload(stepping: Stepping) -> Topology {
    let mut s = spec(Shape::SingleChip { hosts: 5 }, stepping);
    // 40 cells of 176 B: about 4.7 full frames fit in the receiver's queue.
    s.params.tm.queue_limit_cells = Some(40);
    s.link_delay_ns = 500;
    s.transport = TransportConfig::fixed(64_000, 30_000);
    let mut t = s.build().unwrap();
    let flows: Vec<FlowSpec> = (1..5)
        .map(|h| flow(h as u32, h, 0, 150_000 + h as u64 * 1_111, 0))
        .collect();
    t.add_flows(&flows).unwrap();
    t
}

/// Frames hosts sent = frames hosts received + dropped + inside chips + on links.
fn assert_conserved(net: &Network, hosts: &[NodeId], chips: &[NodeId]) {
    let (mut sent, mut received) = (0, 0);
    for &h in hosts {
        let host = net.node::<TransportHost>(h);
        sent += host.frames_sent() - host.frames_on_nic();
        received += host.frames_received();
    }
    let (mut dropped, mut inside) = (0, 0);
    for &c in chips {
        let chip = net.node::<Chip>(c);
        dropped += chip.counters().dropped();
        inside += chip.packets_inside();
    }
    let on_links = net.frames_on_links() as u64;
    assert_eq!(
        sent,
        received + dropped + inside + on_links,
        "cycle {}",
        net.now()
    );
    let on_nics: u64 = hosts
        .iter()
        .map(|&h| {
            let host = net.node::<TransportHost>(h);
            host.frames_on_nic() + host.counters().get(t2sim::schemes::pabo::host::HELD)
        })
        .sum();
    assert_eq!(net.live_packets() as u64, inside + on_links + on_nics);
}

/// A monitor that checks frame conservation after every visited cycle.
struct Conservation {
    hosts: Vec<NodeId>,
    chips: Vec<NodeId>,
    checks: u64,
}

impl Monitor for Conservation {
    fn observe(&mut self, _now: u64, net: &Network) {
        assert_conserved(net, &self.hosts, &self.chips);
        self.checks += 1;
    }
}

#[test]
fn every_byte_arrives_through_an_overloaded_chip() {
    let t = overload(Stepping::Jump);
    let (hosts, chips) = (t.hosts.clone(), t.chips.clone());
    let mut h = Harness::new(t.net);
    // Conservation holds at every visited cycle of the whole run.
    let m = h.add_monitor(Conservation {
        hosts: hosts.clone(),
        chips: chips.clone(),
        checks: 0,
    });
    let all_done = |n: &Network| hosts.iter().all(|&x| n.node::<TransportHost>(x).all_done());
    assert!(h.run_until(all_done, 20_000_000).unwrap());
    let checks = h.monitor::<Conservation>(m).checks;
    assert!(checks > 1000, "{checks}");
    let net = &h.net;
    assert_conserved(net, &hosts, &chips);
    let fcts: Vec<Option<u64>> = hosts
        .iter()
        .flat_map(|&x| net.node::<TransportHost>(x).outcomes())
        .map(|o| o.finish)
        .collect();
    assert!(fcts.iter().all(|f| f.is_some()), "{fcts:?}");
    let chip = net.node::<Chip>(chips[0]);
    assert!(chip.counters().dropped() > 0, "the queue limit must bite");
    let receiver = net.node::<TransportHost>(hosts[0]);
    let total: u64 = (1..5).map(|h| 150_000 + h * 1_111).sum();
    assert_eq!(receiver.data_bytes_received(), total);
    let timeouts: u64 = hosts[1..]
        .iter()
        .flat_map(|&x| net.node::<TransportHost>(x).outcomes())
        .map(|o| o.timeouts)
        .sum();
    assert!(timeouts > 0);
    // When the last ACK reaches its sender, frames the go-back-N senders sent again may still
    // be on their way (duplicates the receiver will discard); once they land, nothing is left.
    let now = h.net.now();
    h.net.run_until(now + 1_000_000);
    assert_conserved(&h.net, &hosts, &chips);
    assert_eq!(h.net.live_packets() as u64, 0);
}

#[test]
fn overload_stepping_matches_jumping() {
    let mut j = overload(Stepping::Jump);
    let mut s = overload(Stepping::EveryCycle);
    j.net.run_until(200_000);
    s.net.run_until(200_000);
    // Jumping gives what is expected; stepping every cycle must give the same, host by host.
    let mut board = Scoreboard::new("stepped against jumped hosts");
    let host = |net: &Network, x: NodeId| {
        let h = net.node::<TransportHost>(x);
        (h.outcomes(), h.frames_sent(), h.data_bytes_received())
    };
    for (&a, &b) in j.hosts.iter().zip(&s.hosts) {
        board.expect(host(&j.net, a));
        board.saw(host(&s.net, b));
    }
    if let Err(m) = board.check() {
        panic!("{m}");
    }
    assert_eq!(board.seen().len(), 5);
    assert_eq!(
        j.net.node::<Chip>(j.chips[0]).counters(),
        s.net.node::<Chip>(s.chips[0]).counters()
    );
}

/// What a PFC incast did.
struct PfcRun {
    drops: u64,
    pfc_sent: u64,
    pfc_heard: u64,
    flows_done: usize,
    timeouts: u64,
    /// Data bytes the receiver got.
    received: u64,
}

/// Four fixed-window senders into one port, class 0 lossless, NICs honouring PFC or not;
/// run to cycle `end`.
fn pfc_incast(honour: bool, stepping: Stepping, end: u64) -> PfcRun {
    let mut params = Tofino2Params::default();
    params.tm.pfc_lossless_classes = 1;
    params.tm.pfc_xoff_cells = 300;
    params.tm.pfc_xon_cells = 200;
    params.tm.pfc_headroom_cells = 400;
    let spec = TopologySpec {
        params,
        transport: TransportConfig::fixed(400_000, 150_000),
        host_features: if honour {
            vec![t2_testbench::host_feature::pfc::spec()]
        } else {
            Vec::new()
        },
        ..spec(Shape::SingleChip { hosts: 5 }, stepping)
    };
    let mut topo = spec.build().unwrap();
    let flows: Vec<FlowSpec> = (1..=4)
        .map(|s| flow(s as u32, s, 0, 2_000_000, 0))
        .collect();
    topo.add_flows(&flows).unwrap();
    topo.net.run_until(end);
    let c = topo.net.node::<Chip>(topo.chips[0]).counters().clone();
    let senders = &topo.hosts[1..];
    let outcomes: Vec<_> = senders
        .iter()
        .flat_map(|&h| topo.net.node::<TransportHost>(h).outcomes())
        .collect();
    PfcRun {
        drops: c.dropped(),
        pfc_sent: c.pfc_xoff_sent + c.pfc_xon_sent,
        pfc_heard: senders
            .iter()
            .map(|&h| {
                topo.net
                    .node::<TransportHost>(h)
                    .counters()
                    .get(t2_testbench::host_feature::pfc::PFC_FRAMES)
            })
            .sum(),
        flows_done: outcomes.iter().filter(|o| o.finish.is_some()).count(),
        timeouts: outcomes.iter().map(|o| o.timeouts).sum(),
        received: topo
            .net
            .node::<TransportHost>(topo.hosts[0])
            .data_bytes_received(),
    }
}

#[test]
fn nics_that_honour_pfc_make_the_lossless_class_lossless() {
    let on = pfc_incast(true, Stepping::Jump, 6_000_000);
    let off = pfc_incast(false, Stepping::Jump, 6_000_000);
    eprintln!(
        "honouring: {} PFC frames, {} drops; not honouring: {} drops, {} timeouts",
        on.pfc_sent, on.drops, off.drops, off.timeouts
    );
    assert!(on.pfc_sent > 0);
    assert_eq!(
        on.pfc_heard, on.pfc_sent,
        "every PFC frame reached a sender"
    );
    assert_eq!((on.drops, on.timeouts, on.flows_done), (0, 0, 4));
    assert_eq!(off.pfc_heard, 0);
    assert!(
        off.drops > 0 && off.timeouts > 0,
        "without honouring, the headroom overflows: {} drops",
        off.drops
    );
    assert_eq!(off.flows_done, 4, "the transport still delivers everything");
    // A pausing NIC keeps the node contract: stepping every cycle changes nothing.
    let jump = pfc_incast(true, Stepping::Jump, 150_000);
    let step = pfc_incast(true, Stepping::EveryCycle, 150_000);
    assert!(jump.pfc_heard > 0);
    assert_eq!(
        (jump.drops, jump.pfc_sent, jump.pfc_heard, jump.received),
        (step.drops, step.pfc_sent, step.pfc_heard, step.received)
    );
}

/// A host feature defined here, outside the testbench: it marks every data frame with IPv4
/// identification 0x5a5a and counts what the host tells it.
#[derive(Default)]
struct Marker {
    started: Vec<u32>,
    finished: Vec<u32>,
    data_frames: u64,
    /// Frames received that carry the mark (read, then left to the transport).
    marked_in: u64,
}

impl t2_testbench::HostFeature for Marker {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn on_frame(
        &mut self,
        _now: u64,
        pkt: t2_pipeline::PacketHandle,
        pool: &mut t2_pipeline::PacketPool,
    ) -> t2_testbench::host_feature::Receipt {
        if pool.bytes(pkt).get(18..20) == Some(&[0x5a, 0x5a]) {
            self.marked_in += 1;
        }
        t2_testbench::host_feature::Receipt::NotMine
    }
    fn tag(
        &self,
        tag: &mut t2_testbench::host_feature::FrameTag,
        flow: Option<&t2_testbench::host_feature::FlowView>,
    ) {
        if flow.is_some() {
            tag.ipv4_id = 0x5a5a;
        }
    }
    fn on_data_start(&mut self, _: &t2_testbench::host_feature::FlowView, _: u64, _: u64) {
        self.data_frames += 1;
    }
    fn flow_started(&mut self, flow: &t2_testbench::host_feature::FlowView) {
        self.started.push(flow.id);
    }
    fn flow_finished(&mut self, flow: &t2_testbench::host_feature::FlowView) {
        self.finished.push(flow.id);
    }
}

#[test]
fn a_feature_defined_outside_the_testbench_is_registered_and_called() {
    let marker = t2_testbench::FeatureSpec::new("marker", String::new(), |_| {
        Ok(Box::new(Marker::default()) as Box<dyn t2_testbench::HostFeature>)
    });
    let spec = TopologySpec {
        host_features: vec![marker],
        ..spec(Shape::SingleChip { hosts: 2 }, Stepping::Jump)
    };
    let mut topo = spec.build().unwrap();
    topo.add_flows(&[flow(7, 1, 0, 10_000, 0), flow(8, 1, 0, 5_000, 100)])
        .unwrap();
    topo.net.run_until(1_000_000);
    let (rx, tx) = (topo.hosts[0], topo.hosts[1]);
    let sender = topo.net.node::<TransportHost>(tx);
    assert!(sender.outcomes().iter().all(|o| o.finish.is_some()));
    let m = sender
        .feature::<Marker>()
        .expect("every host has the feature");
    // The two flows share the NIC round-robin from cycle 100, so the shorter finishes first.
    assert_eq!(m.started, [7, 8]);
    assert_eq!(m.finished, [8, 7]);
    // 10 + 5 segments of 1,000 bytes, none lost; every one arrived marked, no ACK did.
    assert_eq!(m.data_frames, 15);
    assert_eq!(m.marked_in, 0);
    let r = topo
        .net
        .node::<TransportHost>(rx)
        .feature::<Marker>()
        .unwrap();
    assert_eq!((r.marked_in, r.data_frames), (15, 0));
}
