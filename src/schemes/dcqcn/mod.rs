//! DCQCN (Zhu et al., SIGCOMM 2015) on RDMA-style NICs behind PFC, as the HPCC ns-3 artifact
//! runs it (`alibaba-edu/High-Precision-Congestion-Control`, `simulation/run.py --cc dcqcn`)
//! and BFC (NSDI 2022) compares against.
//!
//! - **Switch (congestion point):** RED-style ECN marking on the egress queue's depth as the
//!   packet leaves (`eg_intr_md.deq_qdepth`; the artifact marks at dequeue,
//!   `SwitchMmu::ShouldSendCN`): none at or below Kmin, with probability
//!   `Pmax (q - Kmin) / (Kmax - Kmin)` between, every packet above Kmax. The chip's `Random`
//!   extern draws 16 bits per packet; a table on the depth (in buckets of `2^shift` cells)
//!   gives the ramp's 16-bit threshold at the bucket's lowest depth, computed here from the
//!   parameters and installed by P4 name; a gateway compares the two. The program is
//!   `dcqcn.p4`, compiled with the thresholds as `-D`s. Kmin and Kmax scale with the port speed as the
//!   artifact's `run.py` sets them (100 KB and 400 KB per 25 Gb/s), Pmax 0.2.
//! - **PFC:** as `dctcp-pfc` (one lossless class, the artifact's dynamic threshold, a
//!   headroom of three link delays).
//! - **Control frames:** ACKs, NACKs and CNPs (DSCP 48 from the NICs) go to a queue one
//!   strict priority above data, in a lossy class, as the artifact's DCQCN runs have them.
//! - **Hosts:** RDMA-style NICs ([`t2_testbench::rdma`]) with the artifact's DCQCN reaction
//!   points and CNPs from the receivers' notification points.
//!
//! `programs/dcqcn_switch.json` is generated from `dcqcn.p4` at the defaults (100 Gb/s).

pub mod host;

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use crate::chip::params::Tofino2Params;
use host::DcqcnParams;
use t2_pipeline::ir::Program;
use t2_testbench::rdma::{RdmaConfig, CONTROL_DSCP};
use t2_testbench::transport::Congestion;

pub static SCHEME: Scheme = Scheme {
    name: "dcqcn",
    summary: "DCQCN: RED-style ECN marking between Kmin and Kmax (Random extern, ramp table), \
              RDMA-style NICs with DCQCN reaction points and CNPs, behind PFC with the HPCC \
              artifact's dynamic threshold",
    doc: "docs/schemes/dcqcn.md",
    params: &[
        KMIN,
        KMAX,
        PMAX,
        super::dctcp_pfc::PFC_ALPHA,
        super::dctcp_pfc::HEADROOM_DELAYS,
        ALPHA_US,
        DECREASE_US,
        INCREASE_US,
        G_DENOMINATOR,
        CNP_US,
        ACK_INTERVAL,
    ],
    build,
    shipped,
};

const KMIN: Param = Param {
    name: "kmin_bytes_per_gbps",
    default: 4_000.0,
    min: 1.0,
    max: 1_000_000.0,
    integer: true,
    doc: "Kmin per Gb/s of port speed, bytes of egress queue (rounded down to cells); the \
          HPCC artifact's run.py for DCQCN: 100 KB per 25 Gb/s (400 KB at 100 Gb/s; BFC's \
          paper used 100 KB at 100 Gb/s: 1000)",
};
const KMAX: Param = Param {
    name: "kmax_bytes_per_gbps",
    default: 16_000.0,
    min: 2.0,
    max: 4_000_000.0,
    integer: true,
    doc: "Kmax per Gb/s of port speed, bytes (rounded down to cells), above Kmin; the HPCC \
          artifact's run.py: 400 KB per 25 Gb/s (1.6 MB at 100 Gb/s; BFC's paper: 4000)",
};
const PMAX: Param = Param {
    name: "pmax_percent",
    default: 20.0,
    min: 0.0,
    max: 100.0,
    integer: false,
    doc: "marking probability at Kmax, percent; the HPCC artifact's run.py: 0.2",
};

const ALPHA_US: Param = Param {
    name: "alpha_us",
    default: 1.0,
    min: 1.0,
    max: 10_000.0,
    integer: true,
    doc: "reaction point: period of the alpha update, us; the HPCC artifact's run.py 1 (the \
          DCQCN paper's timers, run.py's dcqcn_paper: 50)",
};
const DECREASE_US: Param = Param {
    name: "decrease_us",
    default: 4.0,
    min: 1.0,
    max: 10_000.0,
    integer: true,
    doc: "reaction point: period of the rate-decrease check, us; the artifact's 4 \
          (dcqcn_paper: 50)",
};
const INCREASE_US: Param = Param {
    name: "increase_us",
    default: 300.0,
    min: 1.0,
    max: 100_000.0,
    integer: true,
    doc: "reaction point: period of the rate-increase timer, us; the artifact's 300 \
          (dcqcn_paper: 55)",
};
const G_DENOMINATOR: Param = Param {
    name: "g_denominator",
    default: 256.0,
    min: 2.0,
    max: 65_536.0,
    integer: true,
    doc: "reaction point: the EWMA gain g is 1 / this; the artifact's 1/256",
};
const CNP_US: Param = Param {
    name: "cnp_interval_us",
    default: 4.0,
    min: 1.0,
    max: 10_000.0,
    integer: true,
    doc: "notification point: at most one CNP per QP this often, us (ours: the artifact's \
          4 us decrease check; the DCQCN paper's NP uses 50)",
};
const ACK_INTERVAL: Param = Param {
    name: "ack_interval",
    default: 1.0,
    min: 1.0,
    max: 1_000.0,
    integer: true,
    doc: "receivers ACK every this many in-order packets and at a message's last; the \
          artifact's L2_ACK_INTERVAL 1",
};

/// The NICs' settings from the parameters, for links of `link_bps` (the run's segment size
/// and timer replace `mtu` and `rto` in `Hosts::apply`).
pub fn nic(p: &SchemeParams, clock: t2_clock::Clock, link_bps: u64) -> RdmaConfig {
    let us = |name: &str| clock.ns_to_cycles_ceil(p.int(name) * 1000);
    let base = host::nic(clock, link_bps, 1);
    let rp = DcqcnParams::artifact(clock, link_bps);
    RdmaConfig {
        ack_interval: p.int("ack_interval") as u32,
        cnp_interval: us("cnp_interval_us"),
        control: Some(host::spec(DcqcnParams {
            alpha_interval: us("alpha_us"),
            decrease_interval: us("decrease_us"),
            increase_interval: us("increase_us"),
            g_denominator: p.int("g_denominator"),
            ..rp
        })),
        ..base
    }
}

/// Bits of the random draw and of the ramp's thresholds (a probability of 1 is 2^16).
pub const RANDOM_BITS: u32 = 16;
/// Most entries the ramp table may need; the bucket width grows until the ramp fits.
pub const MAX_RAMP_ENTRIES: u64 = 1024;

/// The marking thresholds on one port speed, in cells, and the ramp's bucket shift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marking {
    pub kmin_cells: u64,
    pub kmax_cells: u64,
    pub pmax: f64,
    pub shift: u32,
}

impl Marking {
    /// The thresholds for ports of `link_bps`.
    pub fn for_speed(p: &SchemeParams, link_bps: u64, params: &Tofino2Params) -> Marking {
        let gbps = link_bps / 1_000_000_000;
        let cell = params.tm.cell_bytes as u64;
        let kmin_cells = (p.int("kmin_bytes_per_gbps") * gbps / cell).max(1);
        // Kmax is above Kmin (checked when the parameters resolve); in whole cells at a slow
        // port the two may round alike, and the ramp keeps one cell.
        let kmax_cells = (p.int("kmax_bytes_per_gbps") * gbps / cell).max(kmin_cells + 1);
        Marking::new(kmin_cells, kmax_cells, p.get("pmax_percent") / 100.0)
    }

    /// Kmin and Kmax in cells, Pmax as a fraction; the shift is the smallest that keeps the
    /// ramp within [`MAX_RAMP_ENTRIES`].
    pub fn new(kmin_cells: u64, kmax_cells: u64, pmax: f64) -> Marking {
        let mut shift = 0;
        while (kmax_cells >> shift) - (kmin_cells >> shift) + 1 > MAX_RAMP_ENTRIES {
            shift += 1;
        }
        Marking {
            kmin_cells,
            kmax_cells,
            pmax,
            shift,
        }
    }

    /// The 16-bit threshold of the bucket holding depth `q` (its lowest depth, clamped into
    /// the ramp): a packet is marked when its draw is below it.
    pub fn threshold(&self, bucket: u64) -> u64 {
        let q = (bucket << self.shift).clamp(self.kmin_cells, self.kmax_cells);
        let p =
            self.pmax * (q - self.kmin_cells) as f64 / (self.kmax_cells - self.kmin_cells) as f64;
        (p * (1u64 << RANDOM_BITS) as f64).floor() as u64
    }

    /// The ramp's buckets: every one that holds a depth in (Kmin, Kmax].
    pub fn buckets(&self) -> std::ops::RangeInclusive<u64> {
        ((self.kmin_cells + 1) >> self.shift)..=(self.kmax_cells >> self.shift)
    }
}

fn build(p: &SchemeParams, target: &Target) -> Setup {
    let m = Marking::for_speed(p, target.link_bps, target.params);
    let clock = target.params.clock();
    let hosts = Hosts {
        congestion: Congestion::Fixed,
        // The run's retransmission timer and segment size replace these (`Hosts::apply`).
        rdma: Some(nic(p, clock, target.link_bps)),
        ..Hosts::PLAIN
    };
    super::dctcp_pfc::behind_pfc(program(&m), port_queues(target.params), hosts, p, target)
}

fn shipped() -> Vec<(&'static str, Program)> {
    let params = Tofino2Params::default();
    let p = SCHEME
        .resolve(&Default::default())
        .expect("defaults are in range");
    let m = Marking::for_speed(&p, 100_000_000_000, &params);
    vec![("dcqcn_switch.json", program(&m))]
}

/// The queue of ACKs, NACKs and CNPs (DSCP [`CONTROL_DSCP`]): one strict priority above the
/// data queue, in PFC class [`CONTROL_CLASS`], which is lossy (the artifact's DCQCN runs:
/// `ACK_HIGH_PRIO 1`, and its switches send no PFC for that queue).
pub const CONTROL_QID: usize = 1;
pub const CONTROL_CLASS: u64 = 1;

/// `dctcp-pfc`'s queues with [`CONTROL_QID`] above the data queue.
pub fn port_queues(params: &Tofino2Params) -> Vec<t2_tm::QueueConfig> {
    let mut queues = super::dctcp_pfc::port_queues(params);
    queues[CONTROL_QID].priority = queues[super::dctcp_pfc::DATA_QID].priority + 1;
    queues
}

/// `dcqcn.p4`, the DCQCN switch's program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/dcqcn/dcqcn.p4",
    text: include_str!("dcqcn.p4"),
};

/// The `-D`s of the program for `m`: the ramp's ends and bucket shift, the ramp table's
/// size, and the control frames' queue, class and TOS byte.
pub fn defines(m: &Marking) -> Vec<String> {
    vec![
        format!("KMIN_CELLS={}", m.kmin_cells),
        format!("KMAX_CELLS={}", m.kmax_cells),
        format!("BUCKET_SHIFT={}", m.shift),
        format!("RAMP_SIZE={MAX_RAMP_ENTRIES}"),
        format!("CONTROL_QID={CONTROL_QID}"),
        format!("CONTROL_CLASS={CONTROL_CLASS}"),
        format!("CONTROL_TOS={}", (CONTROL_DSCP as u64) << 2),
    ]
}

/// The DCQCN switch, `dcqcn.p4` compiled with [`defines`]: IPv4 host routes and the
/// RED-style marking of `m` at egress, the ramp table's entries (each bucket's threshold,
/// [`Marking::threshold`]) installed by P4 name as a control plane does.
pub fn program(m: &Marking) -> Program {
    let compiled = P4.compiled(&defines(m));
    let mut program = compiled.program.clone();
    super::install(
        &compiled,
        &mut program,
        "ecn_ramp",
        m.buckets()
            .map(|b| (vec![b], "ecn_threshold", vec![m.threshold(b)])),
    );
    program
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nic_defaults_are_the_artifacts_and_the_timers_can_be_the_papers() {
        let clock = t2_clock::Clock::tofino2();
        let p = SCHEME.resolve(&Default::default()).unwrap();
        assert_eq!(
            nic(&p, clock, 100_000_000_000),
            host::nic(clock, 100_000_000_000, 1)
        );
        let set = |k: &str, v: f64| (k.to_string(), v);
        let paper = SCHEME
            .resolve(
                &[
                    set("alpha_us", 50.0),
                    set("decrease_us", 50.0),
                    set("increase_us", 55.0),
                ]
                .into(),
            )
            .unwrap();
        let nic = nic(&paper, clock, 100_000_000_000);
        let rp = *nic
            .control
            .as_ref()
            .unwrap()
            .params::<DcqcnParams>()
            .unwrap();
        assert_eq!(
            (
                rp.alpha_interval,
                rp.decrease_interval,
                rp.increase_interval
            ),
            (75_000, 75_000, 82_500)
        );
    }

    #[test]
    fn a_ramp_upside_down_is_named() {
        let set = |k: &str, v: f64| (k.to_string(), v);
        let e = SCHEME
            .resolve(
                &[
                    set("kmin_bytes_per_gbps", 5000.0),
                    set("kmax_bytes_per_gbps", 5000.0),
                ]
                .into(),
            )
            .unwrap_err();
        assert!(
            e.starts_with("kmax_bytes_per_gbps: 5000 is not above"),
            "{e}"
        );
    }

    #[test]
    fn the_ramp_is_the_artifacts_at_100g() {
        let p = SCHEME.resolve(&Default::default()).unwrap();
        let m = Marking::for_speed(&p, 100_000_000_000, &Tofino2Params::default());
        // 400 KB and 1.6 MB in 176-byte cells; 6,818 cells of ramp in 8-cell buckets (853 entries).
        assert_eq!((m.kmin_cells, m.kmax_cells, m.shift), (2_272, 9_090, 3));
        assert_eq!(m.buckets(), 284..=1136);
        // Bucket 284 starts at 2,272 = Kmin: probability 0; the last at 9,088: just under
        // Pmax; halfway (bucket 710 at 5,680 cells) about Pmax / 2.
        assert_eq!(m.threshold(284), 0);
        assert_eq!(
            m.threshold(1136),
            (0.2 * 6816.0 / 6818.0 * 65536.0f64).floor() as u64
        );
        assert_eq!(
            m.threshold(710),
            (0.2 * 3408.0 / 6818.0 * 65536.0f64).floor() as u64
        );
    }
}
