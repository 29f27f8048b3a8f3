//! BFC (Backpressure Flow Control, Goyal et al., NSDI 2022): every switch gives each active
//! flow its own egress queue where it can, and when a flow's queue holds more than its fair
//! share of a small threshold it pauses the queue the flow came from at the upstream hop;
//! the pause is lifted when the packets that caused it have left. Hosts keep a queue per
//! flow, honour the pauses and send at line rate with no end-to-end control. The page is
//! `docs/schemes/bfc.md`. The switch program is `bfc.p4` (the parameters reach it as `-D`s
//! and control-plane entries, [`program`]); `programs/bfc_switch.json` is generated from it.
//!
//! The algorithm is the authors' ns-3 code (`prateshg/BFC_NS3_NSDI2022`); on Tofino2 the
//! program does it with the chip's own parts (tables named here without the `_t` the P4
//! gives a table of its action's name):
//!
//! - **Flow table**: three register arrays in consecutive stages, indexed by a CRC-32 of the
//!   5-tuple (collisions share an entry, as in BFC): `flow_last` (last enqueue or dequeue,
//!   ns), `flow_size` (packets of the flow in the switch), `flow_queue` (its queue).
//! - **Queue assignment** (sticky): a flow whose entry has size 0 and has been idle for more
//!   than `sticky_ns` gets a new queue: the first data queue of the egress port that is
//!   empty and not paused (bitmaps `port_busy`, fed by the ghost thread from the TM's queue
//!   depths, and `queue_paused`, the pauses the downstream has asked for), scanning from a
//!   random queue (`Random` into `meta.start`) as the authors' code does, else a queue
//!   hashed from the flow index. Otherwise it keeps its queue.
//! - **Pause decision**: N_active = non-empty, unpaused data queues of the port (a popcount
//!   of the two bitmaps by four byte tables); Th(N_active) in cells from table `threshold`
//!   (`mark_up x link x hrtt / N_active`, the artifact's 1.5 x 2 us); the packet pauses its
//!   upstream queue when its queue (depth from the ghost thread) is above Th and its flow
//!   has at least 2 packets in the switch.
//! - **Pause counters** `pause_ctr[(ingress port << 5) + (uq mod 32)]` and bitmap words
//!   `pause_bits[ingress port]`, uq being the upstream queue the packet carries in its IPv4
//!   identification field (NICs put their per-flow queue there; every switch writes the
//!   queue the packet leaves).
//! - **Pause frames**: a pktgen application fires every `refresh_ns` and sends one BFC pause
//!   frame per front-panel port, its bitmap filled from `pause_bits` of that port, in the
//!   strict-priority control queue; a second, deparser-triggered application sends the same
//!   burst when a counter falls to 0 (resume at once). The word is repeated over the
//!   1024-bit bitmap, so a NIC reading bit `uq` reads the counter of `uq mod 32`.
//! - **Received frames**: the upstream switch compares the bitmap with `queue_paused` of the
//!   port it came in on, takes the lowest queue whose bit changed, resubmits the frame with
//!   that queue in a resubmit header, and on the second pass records the bit and sets
//!   `adv_flow_ctl` to pause or resume that queue through AFC. One change per frame; the
//!   next frame (at most `refresh_ns` later) carries any other.
//! - **Dequeue bookkeeping**: ingress tags every data packet (`bfc_tag`, EtherType 0x88B7,
//!   between Ethernet and IPv4) with its flow index, ingress port, upstream queue, queue and
//!   whether it paused; egress strips the tag, writes the queue into the identification
//!   field and mirrors the packet, truncated, with the mirror header `bfc_deq` to pipe 0's
//!   recirculation port. The record comes back into ingress (told from pktgen packets on the
//!   same local port by its first 16 bits, 0xBFC0), lowers `flow_size`, touches
//!   `flow_last`, and for a packet that paused lowers its pause counter; at 0 it clears the
//!   bit and fires the resume burst. Records the recirculation port cannot take wait in
//!   its queue; a record dropped there is counted by the chip as a mirror drop and leaves
//!   its counters high (a pause never lifted): `docs/schemes/bfc.md` gives the budget.

pub mod host;
pub mod ideal;
pub mod wire;

use super::{ChipSetup, Hosts, Param, Scheme, SchemeParams, Setup, Target};
use crate::chip::{ControlOp, PktgenApp, PktgenTrigger};
use crate::{Chip, MirrorSession};
use std::collections::BTreeMap;
use t2_pipeline::ir::Program;
use t2_tm::QueueConfig;
use wire::BfcPause;

pub static SCHEME: Scheme = Scheme {
    name: "bfc",
    summary: "per-flow queues, per-hop pause of the upstream queue above Th/N_active (AFC), \
              dequeue bookkeeping by recirculated mirrors, line-rate hosts",
    doc: "docs/schemes/bfc.md",
    params: &[
        Param {
            name: "mark_up",
            default: 1.5,
            min: 0.1,
            max: 16.0,
            integer: false,
            doc: "Th = mark_up x link rate x hrtt_ns / N_active (the authors' ns-3: 1.5)",
        },
        Param {
            name: "hrtt_ns",
            default: 2000.0,
            min: 100.0,
            max: 100_000.0,
            integer: true,
            doc: "the hop round trip Th is made of, ns (the authors' ns-3: 2 us)",
        },
        Param {
            name: "sticky_ns",
            default: 6000.0,
            min: 0.0,
            max: 1_000_000.0,
            integer: true,
            doc: "a flow keeps its queue until idle this long with none of its packets in the switch, ns (ns-3: 6 us)",
        },
        Param {
            name: "refresh_ns",
            default: 1000.0,
            min: 100.0,
            max: 1_000_000.0,
            integer: true,
            doc: "period of the pause-bitmap frames to every neighbour, ns (ns-3: 1 us)",
        },
        Param {
            name: "flow_entries_log2",
            default: 16.0,
            min: 8.0,
            max: 19.0,
            integer: true,
            doc: "log2 of the flow table's entries per array (ours: 65,536; the paper's Tofino2 table has 409,600)",
        },
    ],
    build,
    shipped,
};

// The constants that `bfc.p4` defines as well (CONTROL_QUEUE, TAG_ETHERTYPE, RECORD_MARKER,
// BITMAP_WORDS as the words of its `bfc_h`): a test holds the two alike.

/// Queues of every port (Tofino2 carves 32 queues for a 100G port from its group's 128).
pub const QUEUES_PER_PORT: usize = 32;
/// Data queues 0..=30; queue 31 is the control queue.
pub const DATA_QUEUES: u64 = 31;
/// The strict-priority queue pause frames leave in (BFC's queue `qCnt - 1`).
pub const CONTROL_QUEUE: u64 = 31;
/// EtherType of the tag a data packet carries between ingress and egress (IEEE 802
/// "OUI extended" 0x88B7 chosen by us: it never leaves the switch).
pub const TAG_ETHERTYPE: u16 = 0x88B7;
/// First 16 bits of a dequeue record (pktgen headers begin with a byte of at most 0x3F).
pub const RECORD_MARKER: u64 = 0xBFC0;
/// Mirror session of the dequeue records of packets that entered pipe p: session p.
/// Bytes of the packet a dequeue record keeps (after its 12-byte mirror header).
pub const RECORD_TRUNCATE_BYTES: u32 = 64;
/// Pktgen applications of pipe 0: the periodic refresh and the resume burst.
pub const REFRESH_APP: usize = 0;
pub const RESUME_APP: usize = 1;
/// Cycles between the packets of one burst (one per port).
pub const BURST_GAP_CYCLES: u64 = 2;
/// Register arrays the results and tests read.
pub const PAUSE_COUNTERS: &str = "pause_ctr";
pub const PAUSE_BITS: &str = "pause_bits";
pub const PAUSES_ISSUED: &str = "pauses_issued";
/// Values of the random scan start for a new queue (5 bits): 31 data queues, the last value
/// scanning as the first.
const SCAN_STARTS: u64 = 32;
/// Bitmap words the program parses and fills: the first 128 bits of the frame's 1024 (each
/// a copy of the port's 32-bit word); the other 112 bytes ride as payload, zero.
pub const BITMAP_WORDS: usize = 4;

/// The numbers the program is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Th in cells for N_active = 1..=31 (index 0 is N_active = 1).
    pub threshold_cells: Vec<u32>,
    pub sticky_ns: u64,
    pub refresh_cycles: u64,
    pub flow_entries: u32,
}

impl Config {
    pub fn new(p: &SchemeParams, target: &Target) -> Config {
        let th_bytes = p.get("mark_up") * target.link_bps as f64 * p.get("hrtt_ns") * 1e-9 / 8.0;
        let cell = target.params.tm.cell_bytes as f64;
        Config {
            threshold_cells: (1..=DATA_QUEUES)
                .map(|n| (th_bytes / n as f64 / cell).floor() as u32)
                .collect(),
            sticky_ns: p.int("sticky_ns"),
            refresh_cycles: target.params.clock().ns_to_cycles_ceil(p.int("refresh_ns")),
            flow_entries: 1 << p.int("flow_entries_log2"),
        }
    }

    pub fn default_100g() -> Config {
        let params = crate::chip::params::Tofino2Params::default();
        let p = SCHEME.resolve(&BTreeMap::new()).expect("defaults resolve");
        Config::new(
            &p,
            &Target {
                params: &params,
                link_bps: 100_000_000_000,
                multipath: false,
            },
        )
    }
}

fn build(p: &SchemeParams, target: &Target) -> Setup {
    let config = Config::new(p, target);
    Setup {
        program: target.routed(program(&config)),
        port_queues: Some(port_queues()),
        hosts: Hosts {
            features: vec![host::spec()],
            ..Hosts::PLAIN
        },
        pfc: None,
        recirculation_mirror: None,
        chip: Some(ChipSetup {
            refresh_cycles: config.refresh_cycles,
            apply: setup_chip,
        }),
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![("bfc_switch.json", program(&Config::default_100g()))]
}

/// Every port's 32 queues: data queues 0..=30 served round robin, the control queue 31 in
/// strict priority above them.
pub fn port_queues() -> Vec<QueueConfig> {
    let mut q = vec![QueueConfig::default(); QUEUES_PER_PORT];
    q[CONTROL_QUEUE as usize].priority = 1;
    q
}

/// What a switch needs beyond its program: the mirror session of the dequeue records (to
/// pipe 0's recirculation port), the pktgen applications (a periodic and a resume burst of
/// one frame per front-panel port) and the table that sends packet `k` of a burst to port
/// `k`.
pub fn setup_chip(chip: &mut Chip, refresh_cycles: u64) -> Result<(), String> {
    let pipes = chip.params().pipes as usize;
    let front = t2_testbench::Node::port_count(chip);
    let mut template = Vec::new();
    BfcPause::none().write([2, 0, 0, 0, 0xbf, 0xc0], &mut template);
    for pipe in 0..pipes {
        // Each pipe keeps the counters of the ports that enter it, so its records come back
        // through its own recirculation port and its own pktgen sends its ports' bitmaps.
        let ports: Vec<usize> = (0..front)
            .filter(|&k| chip.dev_port(k) as usize >> 7 == pipe)
            .collect();
        if ports.is_empty() {
            continue;
        }
        let recirc = chip
            .recirculation_port(pipe)
            .ok_or("BFC needs every pipe's recirculation port (a recirculation cap above 0)")?;
        chip.set_mirror_session(
            pipe as u8,
            Some(MirrorSession {
                port: recirc,
                qid: 0,
                truncate_bytes: Some(RECORD_TRUNCATE_BYTES),
            }),
        )
        .map_err(|e| e.to_string())?;
        for (k, &port) in ports.iter().enumerate() {
            chip.schedule(
                0,
                ControlOp::AddEntry {
                    pipe: Some(pipe),
                    table: "refresh_port".into(),
                    entry: t2_pipeline::ir::Entry {
                        key: vec![t2_pipeline::ir::KeyValue {
                            value: k as u64,
                            mask: None,
                        }],
                        action: t2_pipeline::ir::ActionCall::new(
                            "to_port",
                            &[chip.dev_port(port) as u64],
                        ),
                        members: Vec::new(),
                    },
                },
            )
            .map_err(|e| e.to_string())?;
        }
        let burst = |trigger| PktgenApp {
            trigger,
            batches: 1,
            packets_per_batch: ports.len() as u16,
            packet_gap: BURST_GAP_CYCLES,
            batch_gap: 0,
            payload: template.clone(),
        };
        chip.set_pktgen_app(
            0,
            pipe,
            REFRESH_APP,
            Some(burst(PktgenTrigger::Periodic {
                start: refresh_cycles,
                period: refresh_cycles,
            })),
        )
        .map_err(|e| e.to_string())?;
        chip.set_pktgen_app(0, pipe, RESUME_APP, Some(burst(PktgenTrigger::Deparser)))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `bfc.p4`, the switch program (the entries below and the defines come from [`Config`]).
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/bfc/bfc.p4",
    text: include_str!("bfc.p4"),
};

/// The `-D`s of `bfc.p4` for `cfg`.
pub fn defines(cfg: &Config) -> Vec<String> {
    vec![
        format!("FLOW_ENTRIES={}", cfg.flow_entries),
        format!("STICKY_NS={}", cfg.sticky_ns),
        format!("TH1_CELLS={}", cfg.threshold_cells[0]),
    ]
}

/// The BFC switch from `bfc.p4`, with the entries a control plane installs: the thresholds,
/// the byte popcounts, the hashed queues, the free-queue scan and the changed-bit search.
pub fn program(cfg: &Config) -> Program {
    use t2_pipeline::ir::KeyValue;
    let c = P4.compiled(&defines(cfg));
    let mut p = c.program.clone();
    for k in 0..4usize {
        let count = format!("count{k}");
        let entries = (1..256u64).map(|v| {
            let counted = if k == 3 { v & 0xFE } else { v };
            (vec![v], count.as_str(), vec![counted.count_ones() as u64])
        });
        super::install(&c, &mut p, &format!("Ingress.popcount{k}"), entries);
    }
    let thresholds = cfg
        .threshold_cells
        .iter()
        .enumerate()
        .map(|(n, &th)| (vec![n as u64 + 1], "set_threshold", vec![th as u64]));
    super::install(&c, &mut p, "Ingress.threshold", thresholds);
    super::install_keys(&c, &mut p, "Ingress.first_free", first_free_entries());
    let hashed = (0..32u64).map(|v| (vec![v], "set_hashed", vec![v % DATA_QUEUES]));
    super::install(&c, &mut p, "Ingress.hashed_queue", hashed);
    let ternary = |v: u64, m: u64| KeyValue {
        value: v,
        mask: Some(m),
    };
    let changed = (0..QUEUES_PER_PORT as u64).map(|q| {
        let above: u64 = (0..q).map(bit).sum();
        (
            vec![ternary(bit(q), above | bit(q))],
            "note_change",
            vec![q],
        )
    });
    super::install_keys(&c, &mut p, "Ingress.changed_queue", changed);
    p
}

/// The free-queue scan's entries, in priority order (first match wins): start s scans s,
/// s+1, ..., 30, 0, ..., s-1 (the 32nd start value scans as start 0), each entry the first
/// queue whose bit is clear in meta.blocked given the bits of the queues before it set.
fn first_free_entries() -> Vec<(Vec<t2_pipeline::ir::KeyValue>, &'static str, Vec<u64>)> {
    let mut out = Vec::new();
    for start in 0..SCAN_STARTS {
        let from = start % DATA_QUEUES;
        let order: Vec<u64> = (0..DATA_QUEUES).map(|k| (from + k) % DATA_QUEUES).collect();
        for (k, &q) in order.iter().enumerate() {
            let before: u64 = order[..k].iter().map(|&b| bit(b)).sum();
            let key = vec![
                t2_pipeline::ir::KeyValue {
                    value: start,
                    mask: Some(0x1F),
                },
                t2_pipeline::ir::KeyValue {
                    value: before,
                    mask: Some(before | bit(q)),
                },
            ];
            out.push((key, "pick_free", vec![q]));
        }
    }
    out
}

/// The bit of queue `q` in a bitmap word: most significant first, as in the frame.
fn bit(q: u64) -> u64 {
    0x8000_0000 >> q
}
