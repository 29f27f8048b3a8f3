//! Drop-tail: the baseline with no congestion control in the network. Every switch forwards
//! by host route through the same forwarding blocks the other schemes use (so latency
//! differences come from the scheme, not the forwarding), queues drop when full, and the
//! hosts send fixed windows.

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use t2_pipeline::blocks::{forwarding, forwarding_ingress, ipv4_host};
use t2_pipeline::ir::Program;

pub static SCHEME: Scheme = Scheme {
    name: "droptail",
    summary: "host-route forwarding, drop-tail queues, fixed-window hosts",
    doc: "docs/schemes.md",
    params: &[] as &[Param],
    build,
    shipped,
};

/// The program: IPv4 host routes with TTL handling, nothing else.
pub fn program() -> Program {
    forwarding("droptail_switch")
        .table(ipv4_host())
        .ingress(forwarding_ingress(vec![t2_pipeline::ir::Stmt::apply(
            "ipv4_host",
        )]))
        .build_unchecked()
}

fn build(_: &SchemeParams, target: &Target) -> Setup {
    Setup {
        program: target.routed(program()),
        port_queues: None,
        chip: None,
        hosts: Hosts::PLAIN,
        pfc: None,
        recirculation_mirror: None,
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![("droptail_switch.json", program())]
}

/// `droptail.p4`, the switch program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/droptail/droptail.p4",
    text: include_str!("droptail.p4"),
};

/// The switch program compiled from [`P4`].
pub fn p4_program() -> Program {
    P4.compile(&[])
}
