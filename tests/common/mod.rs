#![allow(dead_code)] // each test crate uses only part of this module
//! Frames the integration tests send.

pub mod waves;

use std::net::Ipv4Addr;
use t2_pipeline::headers::{self, Endpoints, MacAddr};
use t2_pipeline::ir::{Action, Operand, Primitive};

/// A UDP frame from `src` to `dst` with TTL `ttl` and `payload` zero bytes (padded to the
/// 60-byte minimum buffer), between fixed test MAC addresses and ports 1 -> 2.
pub fn udp_frame(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, payload: usize) -> Vec<u8> {
    udp_frame_ident(src, dst, ttl, 0, payload)
}

/// [`udp_frame`] with IPv4 identification `ident`.
pub fn udp_frame_ident(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ttl: u8,
    ident: u16,
    payload: usize,
) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 9]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        src_ip: src,
        dst_ip: dst,
        src_port: 1,
        dst_port: 2,
    };
    let mut b = Vec::new();
    headers::build_udp_frame(&mut b, &ep, ttl, ident, &vec![0; payload], false, 60);
    b
}

/// Sets the IPv4 TOS byte of Ethernet frame `frame` (DSCP and ECN) and its header checksum.
pub fn set_tos(frame: &mut [u8], tos: u8) {
    frame[15] = tos;
    frame[24..26].fill(0);
    let sum = headers::ipv4_header_checksum(&frame[14..34]);
    frame[24..26].copy_from_slice(&sum.to_be_bytes());
}

/// The source address tests use when it does not matter.
pub const TEST_SRC: Ipv4Addr = Ipv4Addr::new(10, 9, 9, 9);

/// `mirror_to(session)`: the program's `mirror` to the session its table entry names.
pub fn mirror_to_action() -> Action {
    Action::new("mirror_to")
        .param("session", 8)
        .prim(Primitive::Mirror {
            session: Operand::param("session"),
        })
}

/// A chip with 100G ports in pipe 0 at (MAC, first channel) `ports`, the given host routes
/// and program: the one-pipe chip most program tests drive.
pub fn pipe0_chip(
    ports: &[(u32, u32)],
    routes: Vec<(Ipv4Addr, usize)>,
    program: t2_pipeline::ir::Program,
) -> t2sim::Chip {
    let config = t2sim::ChipConfig {
        params: t2sim::Tofino2Params::default(),
        ports: ports
            .iter()
            .map(|&(mac, channel)| t2sim::PortSpec {
                pipe: 0,
                mac,
                channel,
                bps: 100_000_000_000,
            })
            .collect(),
        routes,
        program: Some(program),
    };
    t2sim::Chip::new("chip", &config).unwrap()
}

/// Writes `text` to `name` in this test process's scratch folder `t2sim-{tag}-{pid}` (made
/// if missing) and returns its path: a scenario file a test loads.
pub fn scratch_file(tag: &str, name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("t2sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Flows that all start at cycle 0, one per (source host, destination host) pair, numbered
/// from 0 in order, each of `size_bytes`.
pub fn flows_at_start(
    pairs: &[(usize, usize)],
    size_bytes: u64,
) -> Vec<t2_testbench::workload::FlowSpec> {
    pairs
        .iter()
        .enumerate()
        .map(|(i, &(src, dst))| t2_testbench::workload::FlowSpec {
            start: 0,
            id: i as u32,
            src,
            dst,
            size_bytes,
        })
        .collect()
}
