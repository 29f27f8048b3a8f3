//! Drop-tail: the baseline with no congestion control in the network. Every switch forwards
//! by host route through the same forwarding blocks the other schemes use (so latency
//! differences come from the scheme, not the forwarding), queues drop when full, and the
//! hosts send fixed windows. The switch program is `droptail.p4`.

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use t2_pipeline::ir::Program;

pub static SCHEME: Scheme = Scheme {
    name: "droptail",
    summary: "host-route forwarding, drop-tail queues, fixed-window hosts",
    doc: "docs/schemes.md",
    params: &[] as &[Param],
    build,
    shipped,
};

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

/// The program, compiled from [`P4`]: IPv4 host routes with TTL handling, nothing else.
pub fn program() -> Program {
    P4.compile(&[])
}
