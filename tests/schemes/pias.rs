//! PIAS on the chip: the hosts' tags follow the bytes each flow has sent, the switch sends
//! every tag to its own queue, the scheme's parameters reach its setup, and a tagged frame
//! leaves in strict priority.

use t2_testbench::transport::TransportHost;
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Stepping, TransportConfig};
use t2sim::scenario::topology::{Shape, TopologySpec};
use t2sim::schemes::pias::host::MlfqTags;
use t2sim::schemes::{self, pias, Target};
use t2sim::{Chip, Tofino2Params};

const G100: u64 = 100_000_000_000;

/// One DCTCP flow of `size` bytes from host 1 to host 0 through one PIAS chip, with `tags`;
/// returns, per port (0: the data's, 1: the ACKs'), the packets each of queues 0-7 took,
/// and the frames the sender sent.
fn one_flow(tags: MlfqTags, size: u64, stepping: Stepping) -> ([[u64; 8]; 2], u64) {
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
        host_features: vec![pias::host::spec(tags)],
        rdma: None,
        stepping,
        program: Some(pias::program(pias::DEFAULT_K_CELLS)),
    };
    let mut topo = spec.build().unwrap();
    let chip = topo.chips[0];
    for port in 0..2 {
        topo.net
            .node_mut::<Chip>(chip)
            .set_port_queues(port, &pias::port_queues(&params))
            .unwrap();
    }
    topo.add_flows(&[FlowSpec {
        start: 0,
        id: 1,
        src: 1,
        dst: 0,
        size_bytes: size,
    }])
    .unwrap();
    topo.net.run_until(300_000);
    let tm = topo.net.node::<Chip>(chip).tm();
    let enqueued = |port| std::array::from_fn(|q| tm.queue_stats(port, q).enqueued);
    let tx = topo.net.node::<TransportHost>(topo.hosts[1]);
    assert!(tx.all_done());
    ([enqueued(0), enqueued(1)], tx.frames_sent())
}

#[test]
fn each_segment_takes_the_queue_of_the_level_its_flow_has_reached() {
    // Thresholds every 3,000 bytes (then 19,000), 1,000-byte segments: a segment sent after
    // b bytes is at level (thresholds <= b). So the 20 segments fall 3, 3, 3, 3, 3, 3, 1, 1
    // into levels 0-7, and their queues 0-7 of port 0 count exactly that. The 20 ACKs carry
    // DSCP 0 and take queue 0 of port 1. No segment is sent twice.
    let tags = MlfqTags {
        thresholds: [3000, 6000, 9000, 12_000, 15_000, 18_000, 19_000],
    };
    for stepping in [Stepping::Jump, Stepping::EveryCycle] {
        let (queues, sent) = one_flow(tags, 20_000, stepping);
        assert_eq!(queues[0], [3, 3, 3, 3, 3, 3, 1, 1], "{stepping:?}");
        assert_eq!(queues[1], [20, 0, 0, 0, 0, 0, 0, 0], "{stepping:?}");
        assert_eq!(sent, 20);
    }
    // With the web-search thresholds a 20,000-byte flow never leaves level 0.
    let (queues, _) = one_flow(pias::WEB_SEARCH_TAGS, 20_000, Stepping::Jump);
    assert_eq!(queues[0], [20, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn the_scheme_builds_its_program_queues_and_hosts() {
    let params = Tofino2Params::default();
    let target = Target {
        params: &params,
        link_bps: G100,
        multipath: false,
    };
    let s = schemes::find("pias").unwrap();
    let setup = s.default_setup(&target);
    assert_eq!(setup.program, pias::program(768));
    assert_eq!(setup.port_queues, Some(pias::port_queues(&params)));
    assert_eq!(
        setup.hosts.congestion,
        t2sim::schemes::dctcp::host::CONGESTION
    );
    let tagging = [pias::host::spec(pias::WEB_SEARCH_TAGS)];
    assert_eq!(setup.hosts.features, tagging);
    let k = std::collections::BTreeMap::from([("k_cells".to_string(), 100.0)]);
    let setup = (s.build)(&s.resolve(&k).unwrap(), &target);
    assert_eq!(setup.program, pias::program(100));
    let mut transport = TransportConfig::fixed(30_000, 300_000);
    let mut features = Vec::new();
    setup.hosts.apply(&mut transport, &mut features);
    assert_eq!(features, tagging);
    // The thresholds are parameters: the artifact's data-mining set reaches the hosts, and a
    // set that does not increase is refused naming the parameter.
    let data_mining = [805u64, 1106, 1401, 10693, 11970, 21162, 22272].map(|p| p * 1460);
    let overrides: std::collections::BTreeMap<String, f64> = pias::THRESHOLD_PARAMS
        .iter()
        .zip(data_mining)
        .map(|(name, t)| (name.to_string(), t as f64))
        .collect();
    let resolved = s.resolve(&overrides).unwrap();
    assert_eq!(pias::tags(&resolved).thresholds, data_mining);
    let setup = (s.build)(&resolved, &target);
    assert_eq!(
        setup.hosts.features,
        [pias::host::spec(MlfqTags {
            thresholds: data_mining
        })]
    );
    assert_eq!(setup.program, pias::program(768));
    let mut flat = overrides.clone();
    flat.insert("thresh_4_bytes".into(), 15_611_780.0);
    assert_eq!(
        s.resolve(&flat).err().unwrap(),
        "thresh_4_bytes: 15611780 is not above thresh_3_bytes (15611780): a flow is demoted \
         past the thresholds in turn, so each is above the one before"
    );
    let one = std::collections::BTreeMap::from([("thresh_0_bytes".to_string(), 2e6)]);
    assert_eq!(
        s.resolve(&one).err().unwrap(),
        "thresh_1_bytes: 1582640 is not above thresh_0_bytes (2000000): a flow is demoted \
         past the thresholds in turn, so each is above the one before"
    );
    // Every other scheme leaves DSCP alone.
    for other in schemes::SCHEMES.iter().filter(|s| s.name != "pias") {
        let features = other.default_setup(&target).hosts.features;
        assert!(
            features.iter().all(|f| f.kind() != "pias"),
            "{}",
            other.name
        );
    }
    // Bad thresholds are refused with the host named.
    let bad = pias::host::spec(MlfqTags {
        thresholds: [5, 4, 6, 7, 8, 9, 10],
    });
    let host = t2_testbench::transport::Peer {
        ip: std::net::Ipv4Addr::new(10, 0, 0, 4),
        mac: t2_pipeline::headers::MacAddr([2, 0, 0, 0, 0, 4]),
    };
    let info = t2_testbench::host_feature::HostInfo {
        name: "host 3",
        me: host,
        line: t2_clock::LineRate::new(t2_clock::Clock::tofino2(), G100),
    };
    assert_eq!(
        bad.build(&info).err().unwrap(),
        "host 3: mlfq threshold 1 (4 B) must be above the one before (5 B)"
    );
}
