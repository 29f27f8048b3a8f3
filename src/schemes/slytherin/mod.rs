//! Slytherin (Rezaei, Malekpourshahraki, Vamanan, arXiv 1807.02184): packets that met
//! congestion at an earlier switch (IPv4 ECN = CE) and ACKs jump to a strict-priority queue
//! at every later switch; every switch marks CE at K cells of egress queue, as DCTCP's
//! switches do; the hosts run DCTCP. `docs/schemes/slytherin.md` has the design, what differs
//! from the paper and the measurements. The switch program is `slytherin.p4`;
//! `programs/slytherin_switch.json` is generated from it.

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use crate::chip::params::Tofino2Params;
use t2_pipeline::ir::Program;
use t2_tm::QueueConfig;

pub static SCHEME: Scheme = Scheme {
    name: "slytherin",
    summary: "CE-marked packets and ACKs to a strict-priority queue, ECN marking at K cells, \
              DCTCP hosts",
    doc: "docs/schemes/slytherin.md",
    params: &[Param {
        name: "k_cells",
        default: DEFAULT_K_CELLS as f64,
        min: 1.0,
        max: ((1u64 << 19) - 1) as f64,
        integer: true,
        doc: "marking threshold, 176-byte cells of the packet's egress queue at enqueue; \
              default 768 = 25% (the paper's middle value) of a 100 Gb/s port's buffer share",
    }],
    build,
    shipped,
};

/// The queue unmarked data joins (the normal queue), strict priority 0.
pub const NORMAL_QID: u64 = 0;
/// The queue CE-marked packets and ACKs join, strict priority 1: served whenever it has a
/// packet that may leave.
pub const HIGH_QID: u64 = 1;
/// IPv4 ECN codepoint Congestion Experienced.
pub const ECN_CE: u64 = 3;

/// The largest IPv4 total length of an ACK: a TCP segment that carries no data. The
/// transport (`t2_testbench::transport`) sends 20 bytes of IPv4 header, 20 of TCP, a SACK
/// option of up to 36 bytes when it has blocks to report, and the 4-byte flow id in front of
/// any data, so its pure ACKs are 44 to 80 bytes long (a real TCP's pure ACK without options
/// is 40, also caught). Data segments carry the TCP ACK flag too, so the flag alone cannot
/// tell them apart; the length is a real header field the built-in parser extracts. The
/// price: a data segment of at most 36 data bytes, which is only ever a flow's last one,
/// is taken for an ACK and promoted too.
pub const ACK_MAX_IPV4_TOTAL_LEN: u64 = t2_testbench::transport::ACK_MAX_IPV4_TOTAL_LEN;

/// The default marking threshold, in 176-byte cells: 25% of [`port_share_cells`] at
/// 100 Gb/s (3,072 cells), the middle of the paper's 12.5 / 25 / 37.5% (the paper gives no
/// default; the choice of the middle one is ours).
pub const DEFAULT_K_CELLS: u64 = 768;

/// A port's share of the shared buffer, in cells: the buffer split between the chip's
/// front-panel bandwidth in proportion to the port's speed,
/// `buffer_cells x link_bps / (pipes x macs_per_pipe x mac_bps)`. With the Tofino2 defaults
/// (393,216 cells, 4 x 8 x 400 Gb/s = 12.8 Tb/s) that is 3,072 cells (540,672 B) for a
/// 100 Gb/s port and 12,288 for a 400 Gb/s one. This is our reading of the paper's "total
/// buffer size" for a per-port queue: the shared buffer has no fixed per-port size (the
/// dynamic threshold lets one congested queue take up to half of it).
pub fn port_share_cells(params: &Tofino2Params, link_bps: u64) -> u64 {
    let chip_bps = params.pipes as u128 * params.front_panel_bps_per_pipe() as u128;
    (params.tm.buffer_cells as u128 * link_bps as u128 / chip_bps) as u64
}

/// `permille` thousandths of [`port_share_cells`], rounded down: the paper's thresholds are
/// 125, 250 and 375.
pub fn k_cells_for(params: &Tofino2Params, link_bps: u64, permille: u64) -> u64 {
    port_share_cells(params, link_bps) * permille / 1000
}

fn build(p: &SchemeParams, target: &Target) -> Setup {
    Setup {
        program: target.routed(program(p.int("k_cells"))),
        port_queues: Some(port_queues(target.params)),
        chip: None,
        hosts: Hosts {
            congestion: crate::schemes::dctcp::host::CONGESTION,
            ..Hosts::PLAIN
        },
        pfc: None,
        recirculation_mirror: None,
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![("slytherin_switch.json", program(DEFAULT_K_CELLS))]
}

/// Every switch port's queues: the TM's default count (16), all at the defaults (priority
/// 0, weight 1, the shared buffer's dynamic threshold, pool 0) except [`HIGH_QID`], which
/// is one strict priority above. Tofino2 has no push-out, so the high queue cannot evict
/// normal packets when the buffer is short: both queues draw on the shared pool under the
/// dynamic threshold, each with its own limit, and an arrival over its queue's limit is
/// dropped whatever its class.
pub fn port_queues(params: &Tofino2Params) -> Vec<QueueConfig> {
    let mut queues = vec![QueueConfig::default(); params.tm.default_queues_per_port as usize];
    queues[HIGH_QID as usize].priority = queues[NORMAL_QID as usize].priority + 1;
    queues
}

/// `slytherin.p4`, the switch program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/slytherin/slytherin.p4",
    text: include_str!("slytherin.p4"),
};

/// A Slytherin switch, compiled from [`P4`] with `-D K_CELLS=threshold_cells`: IPv4 host
/// routes (table `ipv4_host`, filled by the chip's routes); in ingress, packets with ECN =
/// CE (`promote_ce`) and TCP segments of at most [`ACK_MAX_IPV4_TOTAL_LEN`] bytes
/// (`promote_ack`) are sent to queue [`HIGH_QID`], all others stay in queue [`NORMAL_QID`];
/// in egress, ECN-capable packets that found at least `threshold_cells` cells in their
/// queue are marked CE (both queues, as the paper does not restrict marking to the normal
/// one). A packet this switch marks was queued before the mark, so it is promoted from the
/// next switch on. Networks with equal-cost paths get it with the ECMP selector
/// ([`super::with_ecmp`], through [`Target::routed`]).
pub fn program(threshold_cells: u64) -> Program {
    P4.compile(&[
        format!("K_CELLS={threshold_cells}"),
        format!("HIGH_QID={HIGH_QID}"),
        format!("ACK_MAX_TOTAL_LEN={ACK_MAX_IPV4_TOTAL_LEN}"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_threshold_is_a_quarter_of_a_100g_ports_share() {
        let params = Tofino2Params::default();
        let g = 1_000_000_000;
        assert_eq!(port_share_cells(&params, 100 * g), 3072);
        assert_eq!(port_share_cells(&params, 400 * g), 12_288);
        assert_eq!(
            [125, 250, 375].map(|pm| k_cells_for(&params, 100 * g, pm)),
            [384, 768, 1152]
        );
        assert_eq!(DEFAULT_K_CELLS, k_cells_for(&params, 100 * g, 250));
        assert_eq!(SCHEME.params[0].default, 768.0);
    }

    #[test]
    fn queue_1_is_one_strict_priority_above_the_rest() {
        let params = Tofino2Params::default();
        let q = port_queues(&params);
        assert_eq!(q.len(), 16);
        assert_eq!(q[1].priority, 1);
        for (i, c) in q.iter().enumerate() {
            if i != 1 {
                assert_eq!(*c, QueueConfig::default(), "queue {i}");
            }
        }
        for c in &q {
            c.validate().unwrap();
        }
    }
}
