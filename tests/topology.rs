//! Topologies of chips and transport hosts: they build, route every host pair, and carry
//! reliable flows through overload.

use t2_testbench::transport::TransportHost;
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Network, NodeId, Stepping, TransportConfig};
use t2sim::topology::{Shape, Topology, TopologySpec};
use t2sim::{Chip, Tofino2Params};

const G100: u64 = 100_000_000_000;

fn spec(shape: Shape, stepping: Stepping) -> TopologySpec {
    TopologySpec {
        shape,
        params: Tofino2Params::default(),
        link_bps: G100,
        link_delay_ns: 1000,
        transport: TransportConfig::fixed(100_000, 150_000),
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

#[test]
fn a_lone_flow_meets_its_ideal_fct_on_every_shape() {
    for (shape, (a, b), hops) in [
        (Shape::SingleChip { hosts: 2 }, (0, 1), 1),
        (Shape::Dumbbell { hosts_per_side: 2 }, (0, 3), 2),
        (Shape::PaboTree { hosts_per_edge: 2 }, (1, 0), 3),
        (Shape::PaboTree { hosts_per_edge: 1 }, (1, 3), 5),
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
        println!("{shape:?}: fct {fct} ideal {ideal}");
        assert!(
            fct >= ideal && fct <= ideal + 5,
            "{shape:?}: fct {fct} ideal {ideal}"
        );
        assert_eq!(t.net.pool().live(), 0);
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
    // A flow from every leaf to the next, spread over spines by destination.
    let flows: Vec<FlowSpec> = (0..8)
        .map(|l| flow(l as u32, l * 16 + l, ((l + 1) % 8) * 16 + 2 * l, 5_000, 0))
        .collect();
    t.add_flows(&flows).unwrap();
    assert!(run(&mut t, 1_000_000).iter().all(|f| f.is_some()));
    assert_eq!(t.switch_hops(0, 127), 3);
    assert_eq!(t.peers[127].ip.to_string(), "10.0.0.128");
    assert_eq!(
        t2sim::topology::host_peer(255).ip.to_string(),
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

    let t = spec(Shape::PaboTree { hosts_per_edge: 1 }, Stepping::Jump)
        .build()
        .unwrap();
    assert_eq!((t.chips.len(), t.hosts.len()), (7, 4));
    assert_eq!(
        t.switch_hops(3, 0),
        3,
        "sender, edge, middle, root, receiver"
    );
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
        .map(|&h| net.node::<TransportHost>(h).frames_on_nic())
        .sum();
    assert_eq!(net.pool().live() as u64, inside + on_links + on_nics);
}

#[test]
fn every_byte_arrives_through_an_overloaded_chip() {
    let mut t = overload(Stepping::Jump);
    // Conservation holds at every visited cycle of the first part of the run.
    let (hosts, chips) = (t.hosts.clone(), t.chips.clone());
    let mut checks = 0;
    t.net.run_until_true(300_000, |n| {
        assert_conserved(n, &hosts, &chips);
        checks += 1;
        false
    });
    assert!(checks > 1000, "{checks}");
    let fcts = run(&mut t, 20_000_000);
    assert_conserved(&t.net, &hosts, &chips);
    assert!(fcts.iter().all(|f| f.is_some()), "{fcts:?}");
    let chip = t.net.node::<Chip>(t.chips[0]);
    assert!(chip.counters().dropped() > 0, "the queue limit must bite");
    let receiver = t.net.node::<TransportHost>(t.hosts[0]);
    let total: u64 = (1..5).map(|h| 150_000 + h * 1_111).sum();
    assert_eq!(receiver.data_bytes_received(), total);
    let timeouts: u64 = t.hosts[1..]
        .iter()
        .flat_map(|&h| t.net.node::<TransportHost>(h).outcomes())
        .map(|o| o.timeouts)
        .sum();
    assert!(timeouts > 0);
    assert_eq!(t.net.pool().live() as u64, 0);
}

#[test]
fn overload_stepping_matches_jumping() {
    let mut j = overload(Stepping::Jump);
    let mut s = overload(Stepping::EveryCycle);
    j.net.run_until(200_000);
    s.net.run_until(200_000);
    for (&a, &b) in j.hosts.iter().zip(&s.hosts) {
        let (x, y) = (
            j.net.node::<TransportHost>(a),
            s.net.node::<TransportHost>(b),
        );
        assert_eq!(x.outcomes(), y.outcomes());
        assert_eq!(x.frames_sent(), y.frames_sent());
        assert_eq!(x.data_bytes_received(), y.data_bytes_received());
    }
    assert_eq!(
        j.net.node::<Chip>(j.chips[0]).counters(),
        s.net.node::<Chip>(s.chips[0]).counters()
    );
}
