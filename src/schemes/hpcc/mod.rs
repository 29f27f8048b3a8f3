//! HPCC (Li et al., SIGCOMM 2019) on RDMA-style NICs behind PFC, as the HPCC ns-3 artifact
//! runs it (`alibaba-edu/High-Precision-Congestion-Control`, `simulation/run.py --cc hp`).
//!
//! - **Switch (INT):** every data frame carries the 42-byte INT header the sender leaves
//!   zeroed after its BTH ([`t2_testbench::rdma::int`]). The parser reads Ethernet, IPv4,
//!   UDP to 4791, the BTH and, for the four SEND opcodes, the INT header. At egress a
//!   register counting the port's bytes (one 32-bit cell per egress port, `+= pkt_length`,
//!   the old value out: the bytes sent before this packet, as the artifact's `m_txBytes`
//!   read before it adds the packet, `switch-node.cc` `SwitchNotifyDequeue`) and an exact
//!   table on `nhop` write record `nhop`: the queue's depth as the packet leaves
//!   (`eg_intr_md.deq_qdepth`, cells, saturated to 17 bits; the artifact: the port's bytes
//!   queued), the byte count in `2^bytes_shift`-byte units (20 bits), the egress parser's
//!   timestamp (`eg_prsr_md.global_tstamp`, ns, 24 bits; the artifact: the dequeue time)
//!   and the port speed's rate code; then `nhop + 1`. Past the fifth hop (the artifact's
//!   `maxHop`) the table has no entry and its default only counts the hop, so the sender
//!   ignores the header. Neither the IPv4 nor the UDP length changes (the room is the
//!   sender's), nor the IPv4 checksum.
//! - **PFC:** as `dctcp-pfc` (one lossless class, the artifact's dynamic threshold, a
//!   headroom of three link delays); ACKs travel with the data (`ACK_HIGH_PRIO 0`).
//! - **Hosts:** RDMA-style NICs with HPCC's window and rate (`HAS_WIN 1`, `VAR_WIN 1`,
//!   `FAST_REACT 1`).
//!
//! The program is `hpcc.p4` (rate code and byte unit as `-D`s); `programs/hpcc_switch.json`
//! is generated from it at 100 Gb/s.

pub mod host;

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use host::HpccParams;
use t2_pipeline::ir::Program;
use t2_testbench::rdma::int;
use t2_testbench::rdma::RdmaConfig;
use t2_testbench::transport::Congestion;

pub static SCHEME: Scheme = Scheme {
    name: "hpcc",
    summary: "HPCC: INT hop records (queue depth, port bytes from a register, egress \
              timestamp, rate) written at every egress into data frames, echoed in ACKs; \
              RDMA-style NICs with HPCC's window and rate, behind PFC with the HPCC \
              artifact's dynamic threshold",
    doc: "docs/schemes/hpcc.md",
    params: &[
        ETA,
        MAX_STAGE,
        RATE_AI,
        BASE_RTT,
        super::dctcp_pfc::PFC_ALPHA,
        super::dctcp_pfc::HEADROOM_DELAYS,
        ACK_INTERVAL,
    ],
    build,
    shipped,
};

const ETA: Param = Param {
    name: "eta_percent",
    default: 95.0,
    min: 1.0,
    max: 100.0,
    integer: false,
    doc: "target utilisation eta, percent; the paper's 95% and the artifact's U_TARGET 0.95 \
          (run.py --utgt 95)",
};
const MAX_STAGE: Param = Param {
    name: "max_stage",
    default: 5.0,
    min: 0.0,
    max: 1_000.0,
    integer: true,
    doc: "additive-increase stages before a multiplicative step (maxStage); the paper's 5 \
          (the artifact's MI_THRESH, run.py --mi, defaults to 0)",
};
const RATE_AI: Param = Param {
    name: "rate_ai_mbps_per_25g",
    default: 10.0,
    min: 0.0,
    max: 10_000.0,
    integer: false,
    doc: "additive increase R_AI per 25 Gb/s of line rate, Mb/s (W_AI = R_AI T); the \
          artifact's run.py for HPCC: ai = 10 * bw / 25 (40 Mb/s at 100 Gb/s)",
};
const BASE_RTT: Param = Param {
    name: "base_rtt_ns",
    default: 8_320.0,
    min: 1.0,
    max: 10_000_000.0,
    integer: true,
    doc: "base RTT T, ns; the window at line rate is T of line (the artifact's GLOBAL_T 1: \
          the network's largest, 2 x delay + one packet's transmission per hop, third.cc); \
          default ours: the shipped leaf-spine's host-spine-host path, 4 links of 1 us and \
          4 x 80 ns of 1 KB at 100 Gb/s",
};
const ACK_INTERVAL: Param = Param {
    name: "ack_interval",
    default: 1.0,
    min: 1.0,
    max: 1_000.0,
    integer: true,
    doc: "receivers ACK every this many in-order packets and at a message's last; the \
          artifact's L2_ACK_INTERVAL 1 (HPCC reacts per ACK)",
};

/// The NICs' HPCC from the parameters for links of `link_bps`.
pub fn hpcc_params(p: &SchemeParams, link_bps: u64) -> HpccParams {
    let mut h = HpccParams::artifact(link_bps, p.int("base_rtt_ns"), p.int("max_stage") as u32);
    h.eta_ppm = (p.get("eta_percent") * 10_000.0).round() as u32;
    h.rate_ai_bps = (p.get("rate_ai_mbps_per_25g") * 1e6 * link_bps as f64 / 25e9).round() as u64;
    h
}

/// The NICs' settings (the run's segment size and timer replace `mtu` and `rto` in
/// `Hosts::apply`).
pub fn nic(p: &SchemeParams, clock: t2_clock::Clock, link_bps: u64) -> RdmaConfig {
    RdmaConfig {
        ack_interval: p.int("ack_interval") as u32,
        ..host::nic(clock, hpcc_params(p, link_bps), 1)
    }
}

/// What the switch writes for ports of `link_bps`: the rate code and the byte unit's shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntConfig {
    pub rate_code: u8,
    pub bytes_shift: u32,
}

impl IntConfig {
    /// For ports of `link_bps`; `None` when INT has no code for the speed.
    pub fn for_speed(link_bps: u64) -> Option<IntConfig> {
        Some(IntConfig {
            rate_code: int::rate_code(link_bps)?,
            bytes_shift: HpccParams::artifact(link_bps, 1, 0).bytes_shift,
        })
    }
}

fn build(p: &SchemeParams, target: &Target) -> Setup {
    let clock = target.params.clock();
    // A speed INT cannot name writes code 7 (the sender then reads rate 0 and skips the
    // hop); the NICs' own check names the speed.
    let int = IntConfig::for_speed(target.link_bps).unwrap_or(IntConfig {
        rate_code: 7,
        bytes_shift: 7,
    });
    let hosts = Hosts {
        congestion: Congestion::Fixed,
        rdma: Some(nic(p, clock, target.link_bps)),
        ..Hosts::PLAIN
    };
    let queues = super::dctcp_pfc::port_queues(target.params);
    super::dctcp_pfc::behind_pfc(program(&int), queues, hosts, p, target)
}

fn shipped() -> Vec<(&'static str, Program)> {
    let int = IntConfig::for_speed(100_000_000_000).expect("100 Gb/s has a rate code");
    vec![("hpcc_switch.json", program(&int))]
}

/// Ports the byte-count register has a cell for (the 9-bit port number).
pub const PORT_CELLS: u32 = 512;

/// Bits of the pieces a record's 64-bit word is parsed into. The PHV needs a byte boundary
/// at least every 32 bits of a header, and the record's fields (17, 20, 24, 3) have none
/// until bit 64; so the parser cuts the word at bytes 3 and 5: `qlen`(17) `bytes_hi`(7) |
/// `bytes_lo`(13) `time_hi`(3) | `time_lo`(21) `rate`(3), and the actions write the tx
/// bytes and the time in two pieces each.
pub const BYTES_LO_BITS: u32 = 13;
pub const TIME_LO_BITS: u32 = 21;

/// `hpcc.p4`, the HPCC switch's program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/hpcc/hpcc.p4",
    text: include_str!("hpcc.p4"),
};

/// The HPCC switch, `hpcc.p4` with the port speed's rate code and byte unit as `-D`s: IPv4
/// host routes, and at egress one INT record into data frames.
pub fn program(int: &IntConfig) -> Program {
    P4.compile(&[
        format!("RATE_CODE={}", int.rate_code),
        format!("BYTES_SHIFT={}", int.bytes_shift),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chip::params::Tofino2Params;

    #[test]
    fn the_nic_defaults_are_the_artifacts() {
        let p = SCHEME.resolve(&Default::default()).unwrap();
        let h = hpcc_params(&p, 100_000_000_000);
        assert_eq!(h, HpccParams::artifact(100_000_000_000, 8_320, 5));
        assert_eq!(
            (h.eta_ppm, h.rate_ai_bps, h.window_bytes),
            (950_000, 40_000_000, 104_000)
        );
        let fit = super::super::Fit::of(&shipped()[0].1, &Tofino2Params::default()).unwrap();
        assert!(fit.fits, "{}", fit.verdict());
    }
}
