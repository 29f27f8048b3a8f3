//! DCTCP: switches mark ECN Congestion Experienced on packets that find at least K cells
//! queued at their egress port (the marking of the DCTCP paper, on the queue depth Tofino2
//! reports at enqueue), and hosts run DCTCP's window reaction to the fraction of marked ACKs.
//! The switch program is `dctcp.p4`; `programs/dctcp_switch.json` and
//! `programs/ecmp_switch.json` are generated from it.

pub mod host;

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use t2_pipeline::ir::Program;

pub static SCHEME: Scheme = Scheme {
    name: "dctcp",
    summary: "ECN marking at K cells of egress queue, DCTCP hosts",
    doc: "docs/schemes.md",
    params: &[Param {
        name: "k_cells",
        default: DEFAULT_K_CELLS as f64,
        min: 1.0,
        max: ((1u64 << 19) - 1) as f64,
        integer: true,
        doc: "marking threshold, 176-byte cells of the egress queue at enqueue (default ours)",
    }],
    build,
    shipped,
};

/// The default marking threshold, in 176-byte cells (400 cells = 70,400 B, a little over a
/// 100 Gb/s x 5 us bandwidth-delay product; our default).
pub const DEFAULT_K_CELLS: u64 = 400;

fn build(p: &SchemeParams, target: &Target) -> Setup {
    Setup {
        program: target.routed(program(p.int("k_cells"))),
        port_queues: None,
        chip: None,
        hosts: Hosts {
            congestion: host::CONGESTION,
            ..Hosts::PLAIN
        },
        pfc: None,
        recirculation_mirror: None,
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![
        ("dctcp_switch.json", program(DEFAULT_K_CELLS)),
        ("ecmp_switch.json", ecmp_program(DEFAULT_K_CELLS)),
    ]
}

/// [`program`] for networks with equal-cost paths (`programs/ecmp_switch.json`; see
/// [`super::with_ecmp`]).
pub fn ecmp_program(threshold_cells: u64) -> Program {
    let mut p = super::with_ecmp(program(threshold_cells));
    p.name = "ecmp_switch".into();
    p
}

/// `dctcp.p4`, the switch program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/dctcp/dctcp.p4",
    text: include_str!("dctcp.p4"),
};

/// A switch for DCTCP, compiled from [`P4`] with `-D K_CELLS=threshold_cells`: IPv4 host
/// routes (table `ipv4_host`, filled by the chip's routes) and egress ECN marking of packets
/// that found at least `threshold_cells` cells queued.
pub fn program(threshold_cells: u64) -> Program {
    P4.compile(&[format!("K_CELLS={threshold_cells}")])
}
