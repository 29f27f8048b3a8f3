//! Mice/Elephant isolation (Wang, Sun, Salamatian, Li, "Isolating Mice and Elephant in Data
//! Centers", 2016), and the three schemes the paper argues against:
//!
//! - `mice-elephant`: mice and elephants in different queues of every port. Mice (the first
//!   `mice_bytes` IPv4 bytes of every flow, and ACKs) go to a strict-priority queue whose class
//!   is lossless under PFC, with the paper's per-ingress-port thresholds; elephants go to a
//!   lossy queue with an ETS bandwidth guarantee and an IEEE 802.1Qau (QCN) congestion point
//!   whose CNMs slow the source's flow. Hosts honour PFC per class and run QCN reaction points.
//! - `pfc-qcn`: the hybrid the paper criticises: every packet in one lossless queue, under PFC
//!   and the same congestion point.
//! - `pfc-only`: one lossless queue under PFC, no end-to-end control.
//! - `qcn-only`: one lossy queue with the congestion point, no PFC.
//!
//! `docs/schemes/mice-elephant.md` has the design, the mapping to the chip, what differs from
//! the paper and the measurements. The switch programs are P4: `mice_elephant.p4` (the
//! isolation, and under `ONE_QUEUE` the QCN baselines' `pfc_qcn.p4` and `qcn_only.p4`) and
//! `pfc_only.p4`; [`program`] compiles them with the parameters as `-D`s ([`defines`]) and
//! installs the congestion point's feedback table. `programs/mice_elephant_switch.json` and
//! the baselines' programs are generated from them.
//!
//! How a CNM travels: the congestion point (egress of the congested port) mirrors a sampled
//! elephant packet with a 4-byte header (its mirror type, which the egress parser looks ahead
//! at, and its quantised feedback) into session
//! [`CNM_SESSION`], cut to 82 bytes, which every switch points at pipe 0's recirculation port
//! ([`Setup::recirculation_mirror`]). The copy's egress pass rewrites it into an 802.1Qau CNM
//! addressed to the sampled frame's source MAC; it recirculates, and from then on every switch
//! routes a CNM by the source IPv4 address of the frame it encapsulates: ingress swaps that
//! address into the destination, `ipv4_host` picks the port (lowering the TTL), and the swap
//! and the TTL are undone, so the encapsulated bytes arrive as they were sampled.

pub mod host;
pub mod qcn;

use super::{Hosts, Param, Pfc, Scheme, SchemeParams, Setup, Target};
use crate::chip::params::Tofino2Params;
use host::{MICE_DSCP, MICE_PFC_CLASS};
use qcn::QcnParams;
use t2_pipeline::ir::Program;
use t2_testbench::transport::Congestion;
use t2_tm::QueueConfig;

/// Which of the four schemes a build is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Separate queues: PFC on mice, QCN on elephants (the paper's proposal).
    Isolation,
    /// One lossless queue under PFC and QCN together.
    Hybrid,
    /// One lossless queue under PFC alone.
    PfcOnly,
    /// One lossy queue under QCN alone.
    QcnOnly,
}

impl Variant {
    fn pfc(self) -> bool {
        matches!(
            self,
            Variant::Isolation | Variant::Hybrid | Variant::PfcOnly
        )
    }
}

/// The elephant queue (every packet's queue in the baselines), strict priority 0.
pub const ELEPHANT_QID: u64 = 0;
/// The mice queue (isolation), strict priority 1; CNMs travel in it under every variant.
pub const MICE_QID: u64 = 1;
/// The mirror session CNM copies use; every switch points it at pipe 0's recirculation port.
pub const CNM_SESSION: u8 = 7;
/// What a CNM copy is cut to: 4 bytes of mirror header, 14 of Ethernet and the 64 MSDU bytes
/// a CNM encapsulates (802.1Qau).
pub const CNM_COPY_BYTES: u32 = 4 + 14 + 64;
/// The largest IPv4 total length of a TCP segment without data (an ACK of our transport,
/// SACK option included); see the Slytherin scheme for why length, not flags.
pub const ACK_MAX_IPV4_TOTAL_LEN: u64 = t2_testbench::transport::ACK_MAX_IPV4_TOTAL_LEN;
/// QCN's w, the weight of the queue's change (802.1Qau's standard setting).
pub const QCN_W: u64 = 2;
/// The largest quantised feedback (6 bits).
pub const QNTZ_FB_MAX: u64 = 63;
/// Entries of the per-flow byte counter (a hash of the 5-tuple indexes it).
pub const FLOW_COUNTER_ENTRIES: u32 = 65_536;
/// Cell size the byte thresholds are converted with (Tofino2: 176 B).
const CELL_BYTES: u64 = 176;

const MICE_BYTES: Param = Param {
    name: "mice_bytes",
    default: 100_000.0,
    min: 1_000.0,
    max: 10_000_000.0,
    integer: true,
    doc: "IPv4 bytes of a flow that travel as mice (the rest as elephants); the paper puts \
          the boundary anywhere in 10-100 KB, default its upper end (ours)",
};
const CLASSIFY: Param = Param {
    name: "classify",
    default: 0.0,
    min: 0.0,
    max: 1.0,
    integer: true,
    doc: "0: each switch counts a flow's IPv4 bytes in stateful memory (5-tuple hash, 65,536 \
          counters) and sends the first mice_bytes to the mice queue; 1: the switch trusts \
          the DSCP the source set (46 for mice), the paper's source-side classification",
};
const ELEPHANT_SHARE: Param = Param {
    name: "elephant_share_percent",
    default: 10.0,
    min: 0.0,
    max: 100.0,
    integer: true,
    doc: "ETS: percent of the port's rate guaranteed to the elephant queue ahead of the \
          strict-priority mice queue; the paper's example 10%, 0 for plain strict priority",
};
const PFC_XOFF: Param = Param {
    name: "pfc_xoff_bytes",
    default: 24_470.0,
    min: 176.0,
    max: 10_000_000.0,
    integer: true,
    doc: "PFC XOFF threshold K per ingress port and lossless class, bytes (rounded down to \
          176-byte cells); the paper's 24.47 KB",
};
const PFC_BUFFER: Param = Param {
    name: "pfc_buffer_bytes",
    default: 48_000.0,
    min: 352.0,
    max: 20_000_000.0,
    integer: true,
    doc: "K + K0: the lossless class's buffer per ingress port, XOFF threshold plus headroom, \
          bytes (rounded down to cells); the paper's 48 KB",
};
const PFC_XON: Param = Param {
    name: "pfc_xon_bytes",
    default: 12_235.0,
    min: 0.0,
    max: 10_000_000.0,
    integer: true,
    doc: "PFC XON threshold, bytes (rounded down to cells); the paper gives none, ours: half \
          of the XOFF threshold",
};
const QEQ: Param = Param {
    name: "qeq_cells",
    default: 192.0,
    min: 1.0,
    max: 2_000.0,
    integer: true,
    doc: "QCN Qeq, the queue the congestion point steers to, 176-byte cells; default 192 \
          (33 KB, the value QCN's designers used; not from this paper, which gives none)",
};
const SAMPLE: Param = Param {
    name: "sample_bytes",
    default: 150_000.0,
    min: 1_000.0,
    max: 10_000_000.0,
    integer: true,
    doc: "QCN sampling: the congestion point samples the first elephant frame after this \
          many bytes left its port; 802.1Qau's base interval 150 KB (fixed here: the \
          standard's shortening under heavy feedback is not modelled)",
};

const SAMPLE_RANDOM: Param = Param {
    name: "sample_random",
    default: 0.0,
    min: 0.0,
    max: 1.0,
    integer: true,
    doc: "1: after each sample the congestion point draws the next interval uniformly from \
          the chip's Random extern, over the widest power-of-two range centred on \
          sample_bytes within its 85-115% (802.1Qau randomises the interval); 0: every \
          interval is sample_bytes (default)",
};

const ELEPHANT_CONTROL: Param = Param {
    name: "elephant_control",
    default: 0.0,
    min: 0.0,
    max: 2.0,
    integer: true,
    doc: "the elephants' end-to-end control (§6 compares three): 0 QCN (the congestion point \
          and reaction points, default), 1 TCP (Reno with SACK recovery, no congestion \
          point), 2 DCTCP (ECN marking of the elephant queue at k_bytes_per_gbps, DCTCP \
          hosts, no congestion point)",
};
const END_TO_END: Param = Param {
    name: "end_to_end",
    default: 0.0,
    min: 0.0,
    max: 2.0,
    integer: true,
    doc: "the end-to-end control beside PFC in the one lossless queue (§6's mixed strategy): \
          0 none (fixed windows, default), 1 TCP (Reno with SACK recovery), 2 DCTCP (ECN \
          marking at k_bytes_per_gbps, DCTCP hosts); with QCN it is pfc-qcn",
};

pub static SCHEME: Scheme = Scheme {
    name: "mice-elephant",
    summary: "mice (first X bytes of a flow) in a strict-priority lossless PFC queue, elephants \
              in an ETS-reserved queue with a QCN congestion point; hosts honour PFC per \
              class and run QCN",
    doc: "docs/schemes/mice-elephant.md",
    params: &[
        MICE_BYTES,
        CLASSIFY,
        ELEPHANT_SHARE,
        PFC_XOFF,
        PFC_BUFFER,
        PFC_XON,
        QEQ,
        SAMPLE,
        SAMPLE_RANDOM,
        ELEPHANT_CONTROL,
        super::dctcp_pfc::K_PER_GBPS,
    ],
    build: build_isolation,
    shipped,
};

pub static HYBRID: Scheme = Scheme {
    name: "pfc-qcn",
    summary: "the hybrid Mice/Elephant argues against: one lossless queue under PFC and a QCN \
              congestion point; hosts honour PFC and run QCN",
    doc: "docs/schemes/mice-elephant.md",
    params: &[PFC_XOFF, PFC_BUFFER, PFC_XON, QEQ, SAMPLE, SAMPLE_RANDOM],
    build: build_hybrid,
    shipped: shipped_none,
};

pub static PFC_ONLY: Scheme = Scheme {
    name: "pfc-only",
    summary: "one lossless queue under PFC, hosts honour it (Mice/Elephant's baseline)",
    doc: "docs/schemes/mice-elephant.md",
    params: &[
        PFC_XOFF,
        PFC_BUFFER,
        PFC_XON,
        END_TO_END,
        super::dctcp_pfc::K_PER_GBPS,
    ],
    build: build_pfc_only,
    shipped: shipped_none,
};

pub static QCN_ONLY: Scheme = Scheme {
    name: "qcn-only",
    summary: "one lossy queue with a QCN congestion point, QCN hosts (Mice/Elephant's baseline)",
    doc: "docs/schemes/mice-elephant.md",
    params: &[QEQ, SAMPLE, SAMPLE_RANDOM],
    build: build_qcn_only,
    shipped: shipped_none,
};

/// The settings of one build, resolved from a scheme's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub variant: Variant,
    pub mice_bytes: u64,
    /// Classify by DSCP instead of the switch's byte counter.
    pub by_dscp: bool,
    pub elephant_share_percent: u64,
    pub pfc: Pfc,
    pub qeq_cells: u64,
    pub sample_bytes: u64,
    /// Draw each sampling interval at random around `sample_bytes` ([`sample_interval_range`]).
    pub sample_random: bool,
    /// The end-to-end control of the elephants (of every flow in the baselines).
    pub end_to_end: EndToEnd,
}

/// The end-to-end control a build runs beside its queues (§6 compares QCN, TCP and DCTCP
/// under isolation and under the mixed strategy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndToEnd {
    /// Fixed-window senders and no congestion point (pfc-only's default).
    None,
    /// QCN: the congestion point in the switches, reaction points at the hosts.
    Qcn,
    /// TCP: Reno (no ECN) with the transport's SACK recovery; no congestion point.
    Tcp,
    /// DCTCP hosts, and ECN marking of the elephant queue (the one queue in the baselines)
    /// at this many cells of queue at enqueue; no congestion point.
    Dctcp { k_cells: u64 },
}

impl Config {
    /// The defaults of `variant`.
    pub fn defaults(variant: Variant) -> Config {
        let d = |p: Param| p.default as u64;
        Config {
            variant,
            mice_bytes: d(MICE_BYTES),
            by_dscp: false,
            elephant_share_percent: d(ELEPHANT_SHARE),
            pfc: pfc_cells(d(PFC_XOFF), d(PFC_BUFFER), d(PFC_XON), variant),
            qeq_cells: d(QEQ),
            sample_bytes: d(SAMPLE),
            sample_random: false,
            end_to_end: match variant {
                Variant::PfcOnly => EndToEnd::None,
                _ => EndToEnd::Qcn,
            },
        }
    }

    /// Whether the switches run the QCN congestion point and the hosts QCN reaction points.
    pub fn qcn(&self) -> bool {
        self.end_to_end == EndToEnd::Qcn
    }

    fn from(p: &SchemeParams, variant: Variant, target: &Target) -> Config {
        let mut c = Config::defaults(variant);
        let has = |name: &str| p.iter().any(|(k, _)| k == name);
        if has("mice_bytes") {
            c.mice_bytes = p.int("mice_bytes");
            c.by_dscp = p.int("classify") == 1;
            c.elephant_share_percent = p.int("elephant_share_percent");
        }
        if has("pfc_xoff_bytes") {
            c.pfc = pfc_cells(
                p.int("pfc_xoff_bytes"),
                p.int("pfc_buffer_bytes"),
                p.int("pfc_xon_bytes"),
                variant,
            );
        }
        if has("qeq_cells") {
            c.qeq_cells = p.int("qeq_cells");
            c.sample_bytes = p.int("sample_bytes");
            c.sample_random = p.int("sample_random") == 1;
        }
        let control = ["elephant_control", "end_to_end"]
            .into_iter()
            .find(|&name| has(name))
            .map(|name| p.int(name));
        let k_cells =
            || super::dctcp_pfc::k_cells(p.int("k_bytes_per_gbps"), target.link_bps, target.params);
        match control {
            None | Some(0) => {}
            Some(1) => c.end_to_end = EndToEnd::Tcp,
            Some(_) => c.end_to_end = EndToEnd::Dctcp { k_cells: k_cells() },
        }
        c
    }
}

/// The PFC settings from the byte thresholds (each rounded down to whole cells; the
/// headroom is what the buffer leaves above XOFF, the XON at most the XOFF): the mice class
/// lossless under isolation, class 0 (all traffic) under the baselines with PFC, none under
/// QCN alone.
pub fn pfc_cells(xoff_bytes: u64, buffer_bytes: u64, xon_bytes: u64, variant: Variant) -> Pfc {
    let xoff = (xoff_bytes / CELL_BYTES) as u32;
    let buffer = (buffer_bytes / CELL_BYTES) as u32;
    Pfc {
        lossless_classes: match variant {
            Variant::Isolation => 1 << MICE_PFC_CLASS,
            Variant::Hybrid | Variant::PfcOnly => 1,
            Variant::QcnOnly => 0,
        },
        xoff_cells: xoff,
        xon_cells: ((xon_bytes / CELL_BYTES) as u32).min(xoff),
        headroom_cells: buffer.saturating_sub(xoff),
        dynamic_per_mille: None,
        headroom_link_delays: None,
    }
}

fn build_isolation(p: &SchemeParams, t: &Target) -> Setup {
    build(Config::from(p, Variant::Isolation, t), t)
}
fn build_hybrid(p: &SchemeParams, t: &Target) -> Setup {
    build(Config::from(p, Variant::Hybrid, t), t)
}
fn build_pfc_only(p: &SchemeParams, t: &Target) -> Setup {
    build(Config::from(p, Variant::PfcOnly, t), t)
}
fn build_qcn_only(p: &SchemeParams, t: &Target) -> Setup {
    build(Config::from(p, Variant::QcnOnly, t), t)
}

/// The setup of `c` on `target`.
pub fn build(c: Config, target: &Target) -> Setup {
    let v = c.variant;
    Setup {
        program: target.routed(program(&c)),
        port_queues: Some(port_queues(target.params, &c, target.link_bps)),
        hosts: Hosts {
            congestion: match c.end_to_end {
                EndToEnd::None | EndToEnd::Qcn => Congestion::Fixed,
                EndToEnd::Tcp => Congestion::Reno,
                EndToEnd::Dctcp { .. } => crate::schemes::dctcp::host::CONGESTION,
            },
            features: [
                v.pfc().then(t2_testbench::host_feature::pfc::spec),
                (v == Variant::Isolation).then(|| host::spec(c.mice_bytes)),
                c.qcn()
                    .then(|| qcn::host::spec(QcnParams::standard(target.params.clock()))),
            ]
            .into_iter()
            .flatten()
            .collect(),
            ..Hosts::PLAIN
        },
        // Every variant sets PFC, so that QCN alone runs with it off whatever the scenario says.
        pfc: Some(c.pfc),
        recirculation_mirror: c.qcn().then_some((CNM_SESSION, CNM_COPY_BYTES)),
        chip: None,
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![
        (
            "mice_elephant_switch.json",
            program(&Config::defaults(Variant::Isolation)),
        ),
        (
            "pfc_qcn_switch.json",
            program(&Config::defaults(Variant::Hybrid)),
        ),
        (
            "pfc_switch.json",
            program(&Config::defaults(Variant::PfcOnly)),
        ),
        (
            "qcn_switch.json",
            program(&Config::defaults(Variant::QcnOnly)),
        ),
    ]
}

/// The baselines' programs ship with `mice-elephant`'s (one place builds all four).
fn shipped_none() -> Vec<(&'static str, Program)> {
    Vec::new()
}

/// Every switch port's queues: the TM's default count (16) at the defaults, except that
/// [`MICE_QID`] is one strict priority above [`ELEPHANT_QID`] (it carries mice under
/// isolation and CNMs under every variant). Under isolation the mice queue is held by PFC
/// frames of class [`MICE_PFC_CLASS`] and the elephant queue gets `elephant_share_percent`
/// of the port's rate as an ETS guarantee; under the PFC baselines the one data queue is
/// held by class 0.
pub fn port_queues(params: &Tofino2Params, c: &Config, link_bps: u64) -> Vec<QueueConfig> {
    let mut queues = vec![QueueConfig::default(); params.tm.default_queues_per_port as usize];
    let (e, m) = (ELEPHANT_QID as usize, MICE_QID as usize);
    queues[m].priority = queues[e].priority + 1;
    match c.variant {
        Variant::Isolation => {
            queues[m].pfc_priority = Some(MICE_PFC_CLASS);
            if c.elephant_share_percent > 0 {
                queues[e].min_rate_bps = Some(link_bps / 100 * c.elephant_share_percent);
            }
        }
        Variant::Hybrid | Variant::PfcOnly => queues[e].pfc_priority = Some(0),
        Variant::QcnOnly => {}
    }
    queues
}

/// The quantised feedback of a congestion point that finds `q` cells in its queue, `q_old`
/// at the previous sample: `None` when Fb = -(Qoff + w Qdelta) is not negative (no CNM),
/// else `min(63, floor(-Fb * 63 / (Qeq (2w + 1))))` (802.1Qau). What the program's table
/// computes.
pub fn quantised_fb(q: u64, q_old: u64, qeq: u64) -> Option<u64> {
    let up = q + QCN_W * q;
    let down = qeq + QCN_W * q_old;
    (up > down).then(|| excess_fb(up - down, qeq))
}

/// 63 x `excess` / (Qeq (2w + 1)), rounded down, at most 63.
fn excess_fb(excess: u64, qeq: u64) -> u64 {
    (excess * QNTZ_FB_MAX / (qeq * (2 * QCN_W + 1))).min(QNTZ_FB_MAX)
}

/// The switch program of `c`, compiled from its P4 file ([`P4`], [`PFC_QCN_P4`],
/// [`QCN_ONLY_P4`], [`PFC_ONLY_P4`]) with [`defines`], and the congestion point's feedback
/// table filled by the control plane: entry `excess` (1 to 5 Qeq - 1) mirrors with the
/// quantised feedback `63 excess / (Qeq (2w + 1))` ([`quantised_fb`]).
///
/// Ingress: CNMs are routed towards the source of the frame they carry (see the module
/// documentation) in [`MICE_QID`]. Under isolation, ACKs and the first `mice_bytes` IPv4
/// bytes of every flow (by the switch's per-flow byte counter, or by DSCP [`MICE_DSCP`])
/// go to [`MICE_QID`] in class [`MICE_PFC_CLASS`]; the rest stay in [`ELEPHANT_QID`],
/// class 0. Egress, with QCN: the congestion point on the elephant class.
pub fn program(c: &Config) -> Program {
    let source = match c.variant {
        Variant::PfcOnly => return PFC_ONLY_P4.compile(&ecn_defines(c)),
        Variant::Isolation => P4,
        Variant::Hybrid => PFC_QCN_P4,
        Variant::QcnOnly => QCN_ONLY_P4,
    };
    let compiled = source.compiled_with(&[P4], &defines(c));
    let mut program = compiled.program.clone();
    if !c.qcn() {
        return program;
    }
    let qeq = c.qeq_cells;
    super::install(
        &compiled,
        &mut program,
        "cp_feedback",
        (1..qeq * (2 * QCN_W + 1)).map(|excess| {
            (
                vec![excess],
                "sample_cnm",
                vec![CNM_SESSION as u64, excess_fb(excess, qeq)],
            )
        }),
    );
    program
}

/// The `-D`s of `c`'s P4 program: the classification (isolation only), the ACK length, and
/// with QCN Qeq, the feedback table's size (5 Qeq) and the sampling interval (fixed, or its
/// random range, [`sample_interval_range`]); without it `NO_CP` and DCTCP's threshold.
pub fn defines(c: &Config) -> Vec<String> {
    let mut d = Vec::new();
    if c.variant == Variant::Isolation {
        if c.by_dscp {
            d.push("BY_DSCP".to_string());
        }
        d.push(format!("MICE_BYTES={}", c.mice_bytes));
        // DSCP 46 in the 8-bit TOS byte the program compares, whatever the ECN bits.
        let tos = (MICE_DSCP as u64) << 2;
        d.push(format!("MICE_TOS={tos}"));
        d.push(format!("MICE_TOS_LAST={}", tos | 3));
    }
    d.push(format!("ACK_MAX_TOTAL_LEN={ACK_MAX_IPV4_TOTAL_LEN}"));
    if !c.qcn() {
        d.push("NO_CP".to_string());
        d.extend(ecn_defines(c));
        return d;
    }
    d.push(format!("QEQ_CELLS={}", c.qeq_cells));
    d.push(format!(
        "CP_FEEDBACK_SIZE={}",
        c.qeq_cells * (2 * QCN_W + 1)
    ));
    if c.sample_random {
        let (low, k) = sample_interval_range(c.sample_bytes);
        d.push("SAMPLE_RANDOM".to_string());
        d.push(format!("SAMPLE_LOW={low}"));
        d.push(format!("SAMPLE_BITS={k}"));
    } else {
        d.push(format!("SAMPLE_BYTES={}", c.sample_bytes));
    }
    d
}

/// The `-D` of DCTCP's marking threshold, when the build runs DCTCP.
fn ecn_defines(c: &Config) -> Vec<String> {
    match c.end_to_end {
        EndToEnd::Dctcp { k_cells } => vec![format!("ECN_K_CELLS={k_cells}")],
        _ => Vec::new(),
    }
}

/// `mice_elephant.p4`, the isolation's switch program (and, under `ONE_QUEUE`, the QCN
/// baselines'), built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/mice_elephant/mice_elephant.p4",
    text: include_str!("mice_elephant.p4"),
};

/// `pfc_qcn.p4`: `mice_elephant.p4` with every packet in one queue.
pub const PFC_QCN_P4: super::P4Source = super::P4Source {
    path: "src/schemes/mice_elephant/pfc_qcn.p4",
    text: include_str!("pfc_qcn.p4"),
};

/// `qcn_only.p4`: the same program as `pfc_qcn.p4` (the two differ in PFC, the TM's).
pub const QCN_ONLY_P4: super::P4Source = super::P4Source {
    path: "src/schemes/mice_elephant/qcn_only.p4",
    text: include_str!("qcn_only.p4"),
};

/// `pfc_only.p4`, the pfc-only baseline's switch program, built into the binary.
pub const PFC_ONLY_P4: super::P4Source = super::P4Source {
    path: "src/schemes/mice_elephant/pfc_only.p4",
    text: include_str!("pfc_only.p4"),
};

/// The range the next sampling interval is drawn from with `sample_random`: the widest
/// power-of-two span (`2^k` bytes, `2^k` at most 30% of `sample_bytes`) centred on
/// `sample_bytes`, so that a draw of k random bits added to the low end is uniform over it.
/// Returns (low end, k).
pub fn sample_interval_range(sample_bytes: u64) -> (u64, u32) {
    let span = (sample_bytes * 3 / 10).max(1);
    let k = 63 - span.leading_zeros();
    (sample_bytes - (1 << k) / 2, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_thresholds_in_cells() {
        let c = Config::defaults(Variant::Isolation);
        // 24,470 B = 139 cells (24,464 B); 48,000 B = 272 cells, 133 of them headroom.
        assert_eq!(c.pfc.xoff_cells, 139);
        assert_eq!(c.pfc.headroom_cells, 133);
        assert_eq!(c.pfc.xon_cells, 69);
        assert_eq!(c.pfc.lossless_classes, 0b10);
        assert_eq!(Config::defaults(Variant::Hybrid).pfc.lossless_classes, 1);
        assert_eq!(Config::defaults(Variant::QcnOnly).pfc.lossless_classes, 0);
    }

    #[test]
    fn feedback_follows_the_standard() {
        // Qeq 192: 5 Qeq = 960. Q = 300, Qold = 250: -Fb = 108 + 2 x 50 = 208 -> 13.
        assert_eq!(quantised_fb(300, 250, 192), Some(208 * 63 / 960));
        assert_eq!(quantised_fb(300, 250, 192), Some(13));
        // At Qeq with no change: Fb = 0, no CNM; below Qeq and falling: none; below Qeq
        // but growing fast: 300 - 192 = 108 -> 7.
        assert_eq!(quantised_fb(192, 192, 192), None);
        assert_eq!(quantised_fb(100, 150, 192), None);
        assert_eq!(quantised_fb(100, 0, 192), Some(7));
        // Growing fast below Qeq still notifies: 150 + 2 x 150 - 192 = 258.
        assert_eq!(quantised_fb(150, 0, 192), Some(258 * 63 / 960));
        // Saturates at 63.
        assert_eq!(quantised_fb(2000, 0, 192), Some(63));
        assert_eq!(quantised_fb(512, 192, 192), Some(63));
    }
}
