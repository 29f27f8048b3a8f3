//! A program's own header and parser graph on the chip: `programs/vlan_switch.json`
//! (Ethernet, an optional 802.1Q tag, IPv4, UDP) bridges tagged frames by VLAN id, rewriting
//! the tag in place, routes untagged ones, and its parser rejects double tags. Both gresses
//! of the pipe run the program's graph.

use crate::common::{udp_frame, TEST_SRC};
use std::net::Ipv4Addr;
use t2_pipeline::headers::with_vlan_tag;
use t2_pipeline::ir::Program;
use t2_pipeline::{DropReason, Gress};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, ChipConfig, ChipDrop, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);

/// `frame` with an 802.1Q tag (priority `pcp`, VLAN `vid`); `qinq` adds a second tag (VLAN
/// 7) inside it.
fn tagged(frame: &[u8], pcp: u8, vid: u16, qinq: bool) -> Vec<u8> {
    let inner = if qinq {
        with_vlan_tag(frame, 0, 7)
    } else {
        frame.to_vec()
    };
    with_vlan_tag(&inner, pcp, vid)
}

#[test]
fn vlan_switch_bridges_by_vlan_id_routes_untagged_and_rejects_double_tags() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/vlan_switch.json");
    let program = Program::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
    let port = |mac| PortSpec {
        pipe: 0,
        mac,
        channel: 0,
        bps: G100,
    };
    let params = Tofino2Params::default();
    // Device ports 8, 16, 24: the file's VLAN 10 goes to 16, VLAN 30 to 24.
    let config = ChipConfig {
        params,
        ports: vec![port(0), port(1), port(2)],
        routes: vec![(RECEIVER, 1)],
        program: Some(program),
    };
    let udp = udp_frame(TEST_SRC, RECEIVER, 64, 100);
    let frames = vec![
        (100, tagged(&udp, 1, 10, false)),
        (2_000, tagged(&udp, 3, 30, false)),
        (4_000, udp.clone()),
        (6_000, tagged(&udp, 0, 10, true)),
        (8_000, tagged(&udp, 0, 99, false)),
    ];
    let run = |stepping| {
        let mut net = Network::new(stepping);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        assert_eq!(
            (0..3)
                .map(|i| net.node::<Chip>(chip).dev_port(i))
                .collect::<Vec<_>>(),
            [8, 16, 24]
        );
        let sender = net.add(Probe::new(G100, frames.clone()));
        let rx16 = net.add(Probe::new(G100, Vec::new()));
        let rx24 = net.add(Probe::new(G100, Vec::new()));
        net.link(sender, 0, chip, 0, 1).unwrap();
        net.link(chip, 1, rx16, 0, 1).unwrap();
        net.link(chip, 2, rx24, 0, 1).unwrap();
        net.run_until(20_000);
        let bytes = |p| {
            net.node::<Probe>(p)
                .received()
                .iter()
                .map(|(_, b)| b.clone())
                .collect::<Vec<_>>()
        };
        (
            bytes(rx16),
            bytes(rx24),
            net.node::<Chip>(chip).counters().drops.clone(),
        )
    };
    let (rx16, rx24, drops) = run(Stepping::Jump);
    // VLAN 10 leaves port 16 as VLAN 20 with priority 5 (tag control 0xa014); the routed
    // frame follows with its TTL lowered (and so its IPv4 checksum), exactly as a frame
    // built with TTL 63.
    let mut expected = tagged(&udp, 1, 10, false);
    expected[14..16].copy_from_slice(&[0xa0, 0x14]);
    assert_eq!(rx16, [expected, udp_frame(TEST_SRC, RECEIVER, 63, 100)]);
    // VLAN 30 keeps its id; its priority 3 is reset to 0.
    assert_eq!(rx24, [tagged(&udp, 0, 30, false)]);
    assert_eq!(
        drops,
        [
            (ChipDrop::Pipeline(Gress::Ingress, DropReason::NoRoute), 1),
            (
                ChipDrop::Pipeline(Gress::Ingress, DropReason::ParserReject),
                1
            ),
        ]
        .into()
    );
    assert_eq!(
        ChipDrop::Pipeline(Gress::Ingress, DropReason::ParserReject).to_string(),
        "ingress.parser_reject"
    );
    assert_eq!(run(Stepping::EveryCycle), (rx16, rx24, drops));
}

/// When a program changes which headers a packet has, the frame the MAC sends is longer or
/// shorter, and its last bit leaves exactly as much later or earlier as the serialization of
/// those bytes takes (`docs/timing.md`).
#[test]
fn vlan_tagging_pushes_and_pops_tags_and_the_mac_sends_the_new_length() {
    let port = |mac| PortSpec {
        pipe: 0,
        mac,
        channel: 0,
        bps: G100,
    };
    let udp = udp_frame(TEST_SRC, RECEIVER, 64, 1400);
    let frames = vec![(100, udp.clone()), (4_000, tagged(&udp, 1, 10, false))];
    let run = |program: Program, stepping| {
        let config = ChipConfig {
            params: Tofino2Params::default(),
            ports: vec![port(0), port(1), port(2)],
            routes: vec![(RECEIVER, 1)],
            program: Some(program),
        };
        let mut net = Network::new(stepping);
        let chip = net.add(Chip::new("chip", &config).unwrap());
        let sender = net.add(Probe::new(G100, frames.clone()));
        let rx = net.add(Probe::new(G100, Vec::new()));
        net.link(sender, 0, chip, 0, 1).unwrap();
        net.link(chip, 1, rx, 0, 1).unwrap();
        net.run_until(20_000);
        let latency = |bytes: usize| net.node::<Chip>(chip).unloaded_latency(bytes as u64 + 4, 1);
        let got = net.node::<Probe>(rx).received().to_vec();
        (got, latency(udp.len()), latency(udp.len() + 4))
    };
    let (plain, untagged_latency, tagged_latency) =
        run(t2_pipeline::examples::vlan_switch(), Stepping::Jump);
    let (pushed_popped, ..) = run(t2_pipeline::examples::vlan_tagging(), Stepping::Jump);
    // vlan_switch routes the untagged frame (TTL 63) and bridges VLAN 10 as VLAN 20 with
    // priority 5 (tag control 0xa014), both out of device port 16.
    let routed = udp_frame(TEST_SRC, RECEIVER, 63, 1400);
    let mut bridged = tagged(&udp, 1, 10, false);
    bridged[14..16].copy_from_slice(&[0xa0, 0x14]);
    let bytes = |r: &[(u64, Vec<u8>)]| r.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>();
    assert_eq!(bytes(&plain), [routed.clone(), bridged]);
    // vlan_tagging's egress pushes VLAN 100 (priority 3) onto the routed frame and pops the
    // bridged frame's tag: 4 bytes more and 4 bytes less on the wire, whose serialization is
    // all the difference in when their last bits leave.
    assert_eq!(
        bytes(&pushed_popped),
        [with_vlan_tag(&routed, 3, 100), udp.clone()]
    );
    let extra = tagged_latency - untagged_latency;
    assert!(extra > 0);
    assert_eq!(pushed_popped[0].0, plain[0].0 + extra);
    assert_eq!(pushed_popped[1].0, plain[1].0 - extra);
    assert_eq!(
        run(t2_pipeline::examples::vlan_tagging(), Stepping::EveryCycle).0,
        pushed_popped
    );
}
