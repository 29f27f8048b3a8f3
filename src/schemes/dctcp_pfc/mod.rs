//! DCTCP behind PFC, the baseline BFC and HPCC compare against (BFC, NSDI 2022, §6.2.1:
//! "DCQCN and DCTCP use the same PFC threshold" as HPCC; HPCC ns-3 artifact,
//! `alibaba-edu/High-Precision-Congestion-Control`). Switches mark ECN CE on packets that
//! find at least K queued at their egress port, K per port speed as the artifact's `run.py`
//! sets it for DCTCP (`kmin = kmax = 30 KB per 10 Gb/s`, `pmax = 1`: a step); every packet
//! travels in one lossless class under the artifact's dynamic PFC threshold (a fraction of
//! the free shared buffer per ingress port and class, `switch-mmu.cc`) with a headroom of
//! three link delays of line rate (`scratch/third.cc`); hosts run DCTCP (RFC 8257) and
//! honour PFC. No `programs/` file of its own: the program is `dctcp_switch.json`'s with the
//! speed's K.

use super::{Hosts, Param, Pfc, Scheme, SchemeParams, Setup, Target};
use crate::chip::params::Tofino2Params;
use t2_pipeline::ir::Program;
use t2_tm::QueueConfig;

/// The queue every packet uses (the forwarding program's `qid` 0) and the PFC class it
/// travels in (`ingress_cos` 0).
pub const DATA_QID: usize = 0;
pub const LOSSLESS_CLASS: u8 = 0;

pub static SCHEME: Scheme = Scheme {
    name: "dctcp-pfc",
    summary: "DCTCP hosts behind PFC: ECN marking at K of egress queue (the HPCC artifact's \
              per-speed K), one lossless class under the artifact's dynamic PFC threshold",
    doc: "docs/schemes/dctcp-pfc.md",
    params: &[K_PER_GBPS, PFC_ALPHA, HEADROOM_DELAYS],
    build,
    shipped: shipped_none,
};

pub(crate) const K_PER_GBPS: Param = Param {
    name: "k_bytes_per_gbps",
    default: 3_000.0,
    min: 1.0,
    max: 1_000_000.0,
    integer: true,
    doc: "marking threshold per Gb/s of port speed, bytes of egress queue at enqueue (rounded \
          down to 176-byte cells); the HPCC artifact's run.py for DCTCP: 30 KB per 10 Gb/s \
          (300 KB at 100 Gb/s)",
};

pub(crate) const PFC_ALPHA: Param = Param {
    name: "pfc_alpha_per_mille",
    default: 125.0,
    min: 1.0,
    max: 1_000.0,
    integer: true,
    doc: "dynamic PFC threshold: XOFF once an (ingress port, class) group's shared cells reach \
          this many thousandths of the free shared buffer; the HPCC artifact's 1/8 \
          (pfc_a_shift 3, switch-mmu.cc; BFC's paper reports it as 11%)",
};

pub(crate) const HEADROOM_DELAYS: Param = Param {
    name: "pfc_headroom_link_delays",
    default: 3.0,
    min: 1.0,
    max: 100.0,
    integer: true,
    doc: "PFC headroom per group: this many one-way link delays of line-rate bytes; the HPCC \
          artifact's 3 (scratch/third.cc)",
};

fn build(p: &SchemeParams, target: &Target) -> Setup {
    let k = k_cells(p.int("k_bytes_per_gbps"), target.link_bps, target.params);
    let hosts = Hosts {
        congestion: crate::schemes::dctcp::host::CONGESTION,
        ..Hosts::PLAIN
    };
    let queues = port_queues(target.params);
    behind_pfc(super::dctcp::program(k), queues, hosts, p, target)
}

fn shipped_none() -> Vec<(&'static str, Program)> {
    Vec::new()
}

/// K in cells for ports of `link_bps`: `bytes_per_gbps` per whole Gb/s, rounded down to
/// cells (at least one).
pub fn k_cells(bytes_per_gbps: u64, link_bps: u64, params: &Tofino2Params) -> u64 {
    let bytes = bytes_per_gbps * (link_bps / 1_000_000_000);
    (bytes / params.tm.cell_bytes as u64).clamp(1, (1 << 19) - 1)
}

/// A lossless baseline's set-up: `program` (routed), the ports' `queues` (with a lossless
/// data queue, as [`port_queues`]), `hosts` honouring PFC, and PFC from the scheme's
/// `pfc_alpha_per_mille` and `pfc_headroom_link_delays` (dctcp-pfc, dcqcn and hpcc share it).
pub fn behind_pfc(
    program: Program,
    queues: Vec<QueueConfig>,
    hosts: Hosts,
    p: &SchemeParams,
    target: &Target,
) -> Setup {
    Setup {
        program: target.routed(program),
        port_queues: Some(queues),
        hosts: Hosts {
            features: vec![t2_testbench::host_feature::pfc::spec()],
            ..hosts
        },
        pfc: Some(lossless_pfc(
            p.int("pfc_alpha_per_mille") as u32,
            p.int("pfc_headroom_link_delays") as u32,
        )),
        recirculation_mirror: None,
        chip: None,
    }
}

/// Class [`LOSSLESS_CLASS`] lossless under the dynamic threshold at `alpha_per_mille`, with
/// `headroom_delays` link delays of headroom (the static thresholds stay the TM's, unused).
pub fn lossless_pfc(alpha_per_mille: u32, headroom_delays: u32) -> Pfc {
    let d = t2_tm::TmParams::default();
    Pfc {
        lossless_classes: 1 << LOSSLESS_CLASS,
        xoff_cells: d.pfc_xoff_cells,
        xon_cells: d.pfc_xon_cells,
        headroom_cells: d.pfc_headroom_cells,
        dynamic_per_mille: Some(alpha_per_mille),
        headroom_link_delays: Some(headroom_delays),
    }
}

/// The TM's default queues, with the data queue held by PFC frames of the lossless class
/// (so that a switch obeys its downstream neighbour's pauses, as the NICs do).
pub fn port_queues(params: &Tofino2Params) -> Vec<QueueConfig> {
    let mut queues = vec![QueueConfig::default(); params.tm.default_queues_per_port as usize];
    queues[DATA_QID].pfc_priority = Some(LOSSLESS_CLASS);
    queues
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_follows_the_port_speed_as_the_artifact_sets_it() {
        let p = Tofino2Params::default();
        // 300 KB at 100 Gb/s: 1704 cells of 176 B (299,904 B); 75 KB at 25 Gb/s: 426.
        assert_eq!(k_cells(3_000, 100_000_000_000, &p), 1704);
        assert_eq!(k_cells(3_000, 25_000_000_000, &p), 426);
    }

    #[test]
    fn the_headroom_is_three_link_delays_of_line_rate() {
        let pfc = lossless_pfc(125, 3);
        let mut tm = t2_tm::TmParams::default();
        pfc.apply_on_links(&mut tm, 100_000_000_000, 1_000);
        // 3 x 100 Gb/s x 1 us / 8 = 37,500 B = 213.07 cells, rounded up.
        assert_eq!(tm.pfc_headroom_cells, 214);
        assert_eq!(tm.pfc_dynamic_per_mille, Some(125));
        assert_eq!(tm.pfc_lossless_classes, 1);
    }
}
