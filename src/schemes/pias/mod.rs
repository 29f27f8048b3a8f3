//! PIAS (Bai, Chen, Chen, Han, Wang, Wang, NSDI 2015): hosts tag each packet with a priority
//! by the bytes its flow has sent so far (a multi-level feedback queue: every flow starts at
//! the top and is demoted past fixed byte thresholds), switches serve the tags in strict
//! priority and mark ECN per queue, and the hosts run DCTCP. It is the baseline of
//! Slytherin's headline numbers; `docs/schemes/pias.md` has the mapping and the sources of
//! the thresholds. The switch program is `pias.p4`; `programs/pias_switch.json` is
//! generated from it.

pub mod host;

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use crate::chip::params::Tofino2Params;
use host::{MlfqTags, MLFQ_LEVELS};
use t2_pipeline::ir::Program;
use t2_tm::QueueConfig;

pub static SCHEME: Scheme = Scheme {
    name: "pias",
    summary: "hosts tag packets by bytes sent (8-level MLFQ in DSCP), strict-priority queues \
              with ECN marking at K cells per queue, DCTCP hosts",
    doc: "docs/schemes/pias.md",
    params: &[
        Param {
            name: "k_cells",
            default: DEFAULT_K_CELLS as f64,
            min: 1.0,
            max: ((1u64 << 19) - 1) as f64,
            integer: true,
            doc: "marking threshold, 176-byte cells of the packet's own queue at enqueue; \
                  default 768, Slytherin's, so the two differ only in how they prioritise",
        },
        threshold_param(0),
        threshold_param(1),
        threshold_param(2),
        threshold_param(3),
        threshold_param(4),
        threshold_param(5),
        threshold_param(6),
    ],
    build,
    shipped,
};

/// The names of the seven demotion thresholds, in order: a segment sent after `b` payload
/// bytes of its flow takes the level that counts the thresholds `<= b`.
pub const THRESHOLD_PARAMS: [&str; MLFQ_LEVELS - 1] = [
    "thresh_0_bytes",
    "thresh_1_bytes",
    "thresh_2_bytes",
    "thresh_3_bytes",
    "thresh_4_bytes",
    "thresh_5_bytes",
    "thresh_6_bytes",
];

/// Demotion threshold `i` as the parameter [`THRESHOLD_PARAMS`]`[i]`, the web-search set's
/// by default. PIAS derives a
/// set per workload and load; a scenario of another workload gives its own (the data-mining
/// sets of the artifact are in docs/schemes/pias.md). `resolve` checks that they increase.
const fn threshold_param(i: usize) -> Param {
    Param {
        name: THRESHOLD_PARAMS[i],
        default: WEB_SEARCH_TAGS.thresholds[i] as f64,
        min: 1.0,
        max: (1u64 << 40) as f64,
        integer: true,
        doc: "MLFQ demotion threshold, payload bytes a flow has sent before its segments \
              drop one more level; default PIAS's web-search set (1460-byte packets of its \
              ns-2 artifact's run_pias_dctcp.py, in bytes)",
    }
}

/// The marking threshold by default: Slytherin's ([`super::slytherin::DEFAULT_K_CELLS`]),
/// so that a comparison at the defaults differs only in the priority queues (our choice).
pub const DEFAULT_K_CELLS: u64 = super::slytherin::DEFAULT_K_CELLS;

/// The segment size of PIAS's ns-2 simulations (bytes of payload per packet), in which its
/// thresholds are given.
pub const PIAS_NS2_SEGMENT_BYTES: u64 = 1460;

/// PIAS's demotion thresholds for the web-search workload, in packets of
/// [`PIAS_NS2_SEGMENT_BYTES`]: `pias_thresh_0..6` of `scripts/run_pias_dctcp.py` in the
/// authors' ns-2 artifact (HKUST-SING/PIAS-NS2), the file that runs PIAS on web search at
/// every load from 0.1 to 0.9 with these same values. PIAS derives thresholds per workload
/// and load; we take this one set as given and do not re-derive it for our network.
pub const WEB_SEARCH_THRESHOLDS_PACKETS: [u64; MLFQ_LEVELS - 1] =
    [46, 1084, 1717, 1943, 1989, 1999, 2001];

/// [`WEB_SEARCH_THRESHOLDS_PACKETS`] in bytes (the artifact passes them as
/// `packets * 1460`): the first demotion is after 67,160 bytes.
pub const WEB_SEARCH_TAGS: MlfqTags = MlfqTags {
    thresholds: [
        WEB_SEARCH_THRESHOLDS_PACKETS[0] * PIAS_NS2_SEGMENT_BYTES,
        WEB_SEARCH_THRESHOLDS_PACKETS[1] * PIAS_NS2_SEGMENT_BYTES,
        WEB_SEARCH_THRESHOLDS_PACKETS[2] * PIAS_NS2_SEGMENT_BYTES,
        WEB_SEARCH_THRESHOLDS_PACKETS[3] * PIAS_NS2_SEGMENT_BYTES,
        WEB_SEARCH_THRESHOLDS_PACKETS[4] * PIAS_NS2_SEGMENT_BYTES,
        WEB_SEARCH_THRESHOLDS_PACKETS[5] * PIAS_NS2_SEGMENT_BYTES,
        WEB_SEARCH_THRESHOLDS_PACKETS[6] * PIAS_NS2_SEGMENT_BYTES,
    ],
};

/// The mask of the DSCP bits in the IPv4 TOS byte (`ipv4.diffserv`; the low two are ECN).
pub const DSCP_MASK: u64 = 0xfc;

fn build(p: &SchemeParams, target: &Target) -> Setup {
    Setup {
        program: target.routed(program(p.int("k_cells"))),
        port_queues: Some(port_queues(target.params)),
        hosts: Hosts {
            congestion: crate::schemes::dctcp::host::CONGESTION,
            features: vec![host::spec(tags(p))],
            ..Hosts::PLAIN
        },
        pfc: None,
        recirculation_mirror: None,
        chip: None,
    }
}

/// The demotion thresholds of `p` (checked to increase when `p` was resolved).
pub fn tags(p: &SchemeParams) -> MlfqTags {
    MlfqTags {
        thresholds: THRESHOLD_PARAMS.map(|name| p.int(name)),
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![("pias_switch.json", program(DEFAULT_K_CELLS))]
}

/// The queue of MLFQ level `level` (DSCP `level`): queue `level`.
pub fn qid_of_level(level: u8) -> u64 {
    level as u64
}

/// Every switch port's queues: the TM's default count (16) at the defaults, except that
/// queue `l` of the eight MLFQ levels has strict priority `7 - l`, so level 0 (the first
/// bytes of every flow, and every ACK) is served first. All queues share the buffer under
/// the dynamic threshold; Tofino2 has no push-out, so a full buffer drops the arrival
/// whatever its level.
pub fn port_queues(params: &Tofino2Params) -> Vec<QueueConfig> {
    let mut queues = vec![QueueConfig::default(); params.tm.default_queues_per_port as usize];
    for level in 0..MLFQ_LEVELS as u8 {
        queues[qid_of_level(level) as usize].priority = (MLFQ_LEVELS as u8 - 1) - level;
    }
    queues
}

/// `pias.p4`, the switch program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/pias/pias.p4",
    text: include_str!("pias.p4"),
};

/// A PIAS switch, compiled from [`P4`] with `-D K_CELLS=threshold_cells`: IPv4 host routes
/// (table `ipv4_host`, filled by the chip's routes); in ingress a ternary table on the DSCP
/// bits of `ipv4.diffserv` (`mlfq_queue`, one constant entry per level under
/// [`DSCP_MASK`]) sends DSCP `l` to queue [`qid_of_level`]`(l)`; any other DSCP takes the
/// lowest level's queue. In egress, ECN-capable packets that found at least
/// `threshold_cells` cells in their own queue are marked CE (`enq_qdepth` is per queue on
/// Tofino2).
pub fn program(threshold_cells: u64) -> Program {
    P4.compile(&[format!("K_CELLS={threshold_cells}")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thresholds_are_the_artifacts_in_bytes_and_tag_by_bytes_sent() {
        assert_eq!(
            WEB_SEARCH_TAGS.thresholds,
            [67_160, 1_582_640, 2_506_820, 2_836_780, 2_903_940, 2_918_540, 2_921_460]
        );
        WEB_SEARCH_TAGS.validate().unwrap();
        let t = WEB_SEARCH_TAGS;
        assert_eq!(t.level(0), 0);
        assert_eq!(t.level(67_159), 0);
        assert_eq!(t.level(67_160), 1);
        assert_eq!(t.level(1_582_640), 2);
        assert_eq!(t.level(2_921_459), 6);
        assert_eq!(t.level(2_921_460), 7);
        assert_eq!(t.level(u64::MAX), 7);
    }

    #[test]
    fn queue_l_has_priority_7_minus_l_and_the_rest_are_default() {
        let params = Tofino2Params::default();
        let q = port_queues(&params);
        assert_eq!(q.len(), 16);
        for (i, c) in q.iter().enumerate() {
            let mut expected = QueueConfig::default();
            if i < 8 {
                expected.priority = 7 - i as u8;
            }
            assert_eq!(*c, expected, "queue {i}");
            c.validate().unwrap();
        }
    }

    #[test]
    fn thresholds_that_do_not_increase_are_named() {
        let mut bad = WEB_SEARCH_TAGS;
        bad.thresholds[3] = bad.thresholds[2];
        assert_eq!(
            bad.validate().unwrap_err(),
            "mlfq threshold 3 (2506820 B) must be above the one before (2506820 B)"
        );
        bad.thresholds[0] = 0;
        assert_eq!(
            bad.validate().unwrap_err(),
            "mlfq threshold 0 (0 B) must be above 0"
        );
    }
}
