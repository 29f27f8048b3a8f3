//! BFC (Backpressure Flow Control, Goyal et al., NSDI 2022): every switch gives each active
//! flow its own egress queue where it can, and when a flow's queue holds more than its fair
//! share of a small threshold it pauses the queue the flow came from at the upstream hop;
//! the pause is lifted when the packets that caused it have left. Hosts keep a queue per
//! flow, honour the pauses and send at line rate with no end-to-end control. The page is
//! `docs/schemes/bfc.md`; `programs/bfc_switch.json` is built here.
//!
//! The algorithm is the authors' ns-3 code (`shared/schemes.md` §4.1); on Tofino2 this
//! program does it with the chip's own parts:
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

use super::{ChipSetup, Hosts, Param, Scheme, SchemeParams, Setup, Target};
use crate::chip::{ControlOp, PktgenApp, PktgenTrigger};
use crate::{Chip, MirrorSession};
use std::collections::BTreeMap;
use t2_pipeline::bfc::BfcPause;
use t2_pipeline::blocks::{forwarding, forwarding_ingress, ipv4_host, FIVE_TUPLE};
use t2_pipeline::headers::{ETHERTYPE_IPV4, IPPROTO_TCP, IPPROTO_UDP};
use t2_pipeline::ir::{
    Action, AluOp, Cmp, Condition, Guard, HashAlgorithm, MatchKind, Operand, ParserState,
    Primitive, Program, ProgramDrop, RegisterAction, SaluOp, SaluOperand, SaluOutputValue,
    SaluUpdate, Stmt, Table,
};
use t2_tm::QueueConfig;

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
/// The stage of `port_busy`: after the ghost thread's three stages computing its operand.
const BUSY_STAGE: u32 = 3;
/// Values of the random scan start for a new queue (5 bits): 31 data queues, the last value
/// scanning as the first.
const SCAN_STARTS: u64 = 32;
/// Bitmap words the program parses and fills: the first 128 bits of the frame's 1024 (each
/// a copy of the port's 32-bit word); the other 112 bytes ride as payload, zero.
pub const BITMAP_WORDS: usize = 4;
/// Ports (device-port keys) the per-port arrays cover: every device port of 4 pipes.
const PORT_SLOTS: u32 = 512;

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
        program: target.routed(program_from_p4(&config)),
        port_queues: Some(port_queues()),
        hosts: Hosts {
            features: vec![t2_testbench::host_feature::bfc::spec()],
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
    vec![("bfc_switch.json", program_from_p4(&Config::default_100g()))]
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
pub fn program_from_p4(cfg: &Config) -> Program {
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

fn table0(name: &str, action: &str) -> Table {
    Table::new(name, MatchKind::Exact, &[], 0)
        .action(action)
        .default_action(action, &[])
}

fn alu(op: AluOp, dst: &str, a: Operand, b: Operand) -> Primitive {
    Primitive::alu(op, dst, a, b)
}

fn f(name: &str) -> Operand {
    Operand::field(name)
}

fn c(v: u64) -> Operand {
    Operand::Const(v)
}

fn set(dst: &str, src: Operand) -> Primitive {
    Primitive::set(dst, src)
}

fn when(field: &str, cmp: Cmp, v: Operand) -> Condition {
    Condition::new(field, cmp, v)
}

fn on(cond: Condition, then: Vec<Stmt>) -> Stmt {
    Stmt::if_(cond, then, vec![])
}

fn guard(condition: usize, holds: bool) -> Guard {
    Guard { condition, holds }
}

/// The bit of queue `q` in a bitmap word: most significant first, as in the frame.
fn bit(q: u64) -> u64 {
    0x8000_0000 >> q
}

/// The BFC switch.
pub fn program(cfg: &Config) -> Program {
    let bfc_words: Vec<(String, u16)> = (0..BITMAP_WORDS).map(|k| (format!("w{k}"), 32)).collect();
    let mut bfc_fields: Vec<(&str, u16)> = vec![("subtype", 16)];
    bfc_fields.extend(bfc_words.iter().map(|(n, b)| (n.as_str(), *b)));

    // The first data queue whose bit is clear in meta.blocked (busy or paused), scanning
    // from the random start meta.start and wrapping, as the authors' code scans from a random
    // start: flows that arrive together (before the ghost thread has shown their queue busy)
    // then rarely pick the same queue. Start s scans s, s+1, ..., 30, 0, ..., s-1; the 32nd
    // start value scans as start 0. Entries are in priority order (first match wins).
    let mut first_free = Table::new(
        "first_free",
        MatchKind::Ternary,
        &["meta.start", "meta.blocked"],
        (SCAN_STARTS * DATA_QUEUES) as u32,
    )
    .action("pick_free")
    .action("pick_hashed")
    .default_action("pick_hashed", &[]);
    for start in 0..SCAN_STARTS {
        let from = start % DATA_QUEUES;
        let order: Vec<u64> = (0..DATA_QUEUES).map(|k| (from + k) % DATA_QUEUES).collect();
        for (k, &q) in order.iter().enumerate() {
            let before: u64 = order[..k].iter().map(|&b| bit(b)).sum();
            first_free = first_free.ternary_entry(
                &[(start, 0x1F), (before, before | bit(q))],
                "pick_free",
                &[q],
            );
        }
    }
    // Lowest queue whose bit differs in meta.diff.
    let mut changed = Table::new("changed_queue", MatchKind::Ternary, &["meta.diff"], 32)
        .action("note_change")
        .action("no_change")
        .default_action("no_change", &[]);
    for q in 0..QUEUES_PER_PORT as u64 {
        let above: u64 = (0..q).map(bit).sum();
        changed = changed.ternary_entry(&[(bit(q), above | bit(q))], "note_change", &[q]);
    }
    // Popcount of N_active's four bytes (the control queue's bit, bit 0, never counts).
    let popcount = |k: usize| {
        let mut t = Table::new(
            &format!("popcount{k}"),
            MatchKind::Exact,
            &[&format!("meta.byte{k}")],
            256,
        )
        .action(&format!("count{k}"))
        .default_action(&format!("count{k}"), &[0]);
        for v in 1..256u64 {
            let v_counted = if k == 3 { v & 0xFE } else { v };
            t = t.entry(&[v], &format!("count{k}"), &[v_counted.count_ones() as u64]);
        }
        t
    };
    let mut threshold = Table::new("threshold", MatchKind::Exact, &["meta.n_active"], 32)
        .action("set_threshold")
        .default_action("set_threshold", &[cfg.threshold_cells[0] as u64]);
    for (n, &th) in cfg.threshold_cells.iter().enumerate() {
        threshold = threshold.entry(&[n as u64 + 1], "set_threshold", &[th as u64]);
    }
    // Queue hashed from the flow index: 32 values onto the 31 data queues.
    let mut hashed = Table::new("hashed_queue", MatchKind::Exact, &["meta.hq"], 32)
        .action("set_hashed")
        .default_action("set_hashed", &[0]);
    for v in 0..32u64 {
        hashed = hashed.entry(&[v], "set_hashed", &[v % DATA_QUEUES]);
    }
    let words: Vec<Primitive> = (0..BITMAP_WORDS)
        .map(|k| set(&format!("bfc.w{k}"), f("meta.bits")))
        .collect();
    let mut fill = Action::new("fill_bitmap");
    for p in words {
        fill = fill.prim(p);
    }

    let mut b = forwarding("bfc_switch")
        // First header of the graph: a copy made with it carries mirror type 1.
        .header(
            "bfc_deq",
            &[
                ("kind", 16),
                ("in_port", 16),
                ("uq", 16),
                ("caused", 8),
                ("pad", 8),
                ("fidx", 32),
            ],
        )
        .header("gen_first", &[("kind", 16)])
        .header("pktgen_rest", &[("batch_id", 16), ("packet_id", 16)])
        .header(
            "deq_rest",
            &[
                ("in_port", 16),
                ("uq", 16),
                ("caused", 8),
                ("pad", 8),
                ("fidx", 32),
            ],
        )
        .header("bfc_apply", &[("queue", 8), ("pad", 8)])
        .header(
            "bfc_tag",
            &[
                ("caused", 8),
                ("queue", 8),
                ("in_port", 16),
                ("uq", 16),
                ("fidx", 32),
                ("ether_type", 16),
            ],
        )
        .header("bfc", &bfc_fields)
        .parser(vec![
            ParserState::new("start")
                .select(&["eg_intr_md.mirror_type"], "by_port")
                .case(&[1], "parse_record_copy"),
            // The copy's egress pass: its mirror header only.
            ParserState::new("parse_record_copy").extract("bfc_deq"),
            ParserState::new("by_port")
                .select(&["ig_intr_md.ingress_port"], "by_resubmit")
                .case(&[6], "parse_gen_first")
                .case(&[128 + 6], "parse_gen_first")
                .case(&[256 + 6], "parse_gen_first")
                .case(&[384 + 6], "parse_gen_first"),
            ParserState::new("parse_gen_first")
                .extract("gen_first")
                .select(&["gen_first.kind"], "parse_pktgen")
                .case(&[RECORD_MARKER], "parse_record"),
            ParserState::new("parse_record").extract("deq_rest"),
            ParserState::new("parse_pktgen")
                .extract("pktgen_rest")
                .goto("parse_eth"),
            ParserState::new("by_resubmit")
                .select(&["ig_intr_md.resubmit_flag"], "parse_eth")
                .case(&[1], "parse_apply"),
            ParserState::new("parse_apply")
                .extract("bfc_apply")
                .goto("parse_eth"),
            ParserState::new("parse_eth")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[ETHERTYPE_IPV4 as u64], "parse_ipv4")
                .case(&[TAG_ETHERTYPE as u64], "parse_tag")
                .case(&[t2_pipeline::bfc::BFC_ETHERTYPE as u64], "parse_bfc"),
            ParserState::new("parse_tag")
                .extract("bfc_tag")
                .select(&["bfc_tag.ether_type"], "accept")
                .case(&[ETHERTYPE_IPV4 as u64], "parse_ipv4"),
            ParserState::new("parse_bfc").extract("bfc"),
            ParserState::new("parse_ipv4")
                .extract("ipv4")
                .select(&["ipv4.protocol"], "accept")
                .case(&[IPPROTO_UDP as u64], "parse_udp")
                .case(&[IPPROTO_TCP as u64], "parse_tcp"),
            ParserState::new("parse_udp").extract("udp"),
            ParserState::new("parse_tcp").extract("tcp"),
        ])
        .hash("flow_hash", HashAlgorithm::Crc32, &FIVE_TUPLE)
        .metadata("meta.is_data", 1)
        .metadata("meta.is_deq", 1)
        .metadata("meta.fidx", 32)
        .metadata("meta.now", 32)
        .metadata("meta.last", 32)
        .metadata("meta.idle", 32)
        .metadata("meta.size_before", 16)
        .metadata("meta.reassign", 1)
        .metadata("meta.port_key", 16)
        .metadata("meta.busy", 32)
        .metadata("meta.paused", 32)
        .metadata("meta.unpaused", 32)
        .metadata("meta.blocked", 32)
        .metadata("meta.active", 32)
        .metadata("meta.half_hi", 16)
        .metadata("meta.half_lo", 16)
        .metadata("meta.byte0", 8)
        .metadata("meta.byte1", 8)
        .metadata("meta.byte2", 8)
        .metadata("meta.byte3", 8)
        .metadata("meta.count0", 8)
        .metadata("meta.count1", 8)
        .metadata("meta.count2", 8)
        .metadata("meta.count3", 8)
        .metadata("meta.count01", 8)
        .metadata("meta.count23", 8)
        .metadata("meta.n_active", 8)
        .metadata("meta.th", 32)
        .metadata("meta.hq", 5)
        .metadata("meta.start", 5)
        .metadata("meta.cand", 8)
        .metadata("meta.queue", 5)
        .metadata("meta.qbase", 16)
        .metadata("meta.qidx", 16)
        .metadata("meta.depth", 32)
        .metadata("meta.flow", 1)
        .metadata("meta.session", 8)
        .metadata("meta.seen", 32)
        .metadata("meta.frame", 1)
        .metadata("meta.qp_op", 2)
        .metadata("meta.pb_op", 2)
        .metadata("meta.edge", 16)
        .metadata("meta.counted", 1)
        .metadata("meta.in_port", 16)
        .metadata("meta.uq5", 8)
        .metadata("meta.pbase", 16)
        .metadata("meta.pidx", 16)
        .metadata("meta.mask", 32)
        .metadata("meta.nmask", 32)
        .metadata("meta.ctr_old", 16)
        .metadata("meta.bits", 32)
        .metadata("meta.diff", 32)
        .metadata("meta.changed", 1)
        .metadata("meta.cq", 8)
        .metadata("meta.shift", 8)
        .metadata("meta.shifted", 32)
        .metadata("meta.bit", 32)
        .metadata("meta.afc_hi", 32)
        .metadata("meta.afc_ch", 32)
        .metadata("meta.afc_q", 32)
        .metadata("meta.afc_a", 32)
        .metadata("meta.afc_b", 32)
        .metadata("meta.ghost_index", 16)
        .metadata("meta.ghost_key", 16)
        .metadata("meta.ghost_pk", 16)
        .metadata("meta.ghost_qh", 16)
        .metadata("meta.ghost_low", 8)
        .metadata("meta.ghost_mask", 32)
        .metadata("meta.ghost_nmask", 32)
        .metadata("meta.ghost_arg", 32)
        .metadata("meta.arg", 32)
        .metadata("meta.bit1", 1)
        .metadata("meta.neg", 32)
        .register("flow_last", 32, cfg.flow_entries)
        .register("flow_size", 16, cfg.flow_entries)
        .register("flow_queue", 8, cfg.flow_entries)
        .register("queue_depth", 32, 8192)
        .register("port_busy", 32, PORT_SLOTS)
        .register("queue_paused", 32, PORT_SLOTS)
        .register(PAUSE_COUNTERS, 16, PORT_SLOTS * 32)
        .register(PAUSE_BITS, 32, PORT_SLOTS)
        .register(PAUSES_ISSUED, 32, 1);

    // Register actions.
    b = b
        .register_action(
            RegisterAction::new("touch_last", "flow_last")
                .update(SaluUpdate::new(
                    SaluOp::Set,
                    SaluOperand::Field("meta.now".into()),
                    SaluOperand::Const(0),
                ))
                .output("meta.last", SaluOutputValue::Old),
        )
        .register_action(
            // Data: +1. Dequeue record: -1, never below 0.
            RegisterAction::new("count_flow", "flow_size")
                .condition(
                    SaluOperand::Field("meta.is_deq".into()),
                    Cmp::Eq,
                    SaluOperand::Const(1),
                )
                .condition(SaluOperand::Cell, Cmp::Gt, SaluOperand::Const(0))
                .update(
                    SaluUpdate::new(SaluOp::Sub, SaluOperand::Cell, SaluOperand::Const(1))
                        .when(&[guard(0, true), guard(1, true)]),
                )
                .update(
                    SaluUpdate::new(SaluOp::Add, SaluOperand::Cell, SaluOperand::Const(1))
                        .when(&[guard(0, false)]),
                )
                .output("meta.size_before", SaluOutputValue::Old),
        )
        .register_action(
            RegisterAction::new("assign_queue", "flow_queue")
                .condition(
                    SaluOperand::Field("meta.reassign".into()),
                    Cmp::Eq,
                    SaluOperand::Const(1),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::Set,
                        SaluOperand::Field("meta.cand".into()),
                        SaluOperand::Const(0),
                    )
                    .when(&[guard(0, true)]),
                )
                .output("meta.queue", SaluOutputValue::New),
        )
        .register_action(
            RegisterAction::new("write_depth", "queue_depth").update(SaluUpdate::new(
                SaluOp::Set,
                SaluOperand::Field("ghost_md.qlength".into()),
                SaluOperand::Const(0),
            )),
        )
        .register_action(
            RegisterAction::new("read_depth", "queue_depth")
                .output("meta.depth", SaluOutputValue::Old),
        )
        .register_action(
            RegisterAction::new("write_busy", "port_busy")
                .condition(
                    SaluOperand::Field("ghost_md.qlength".into()),
                    Cmp::Gt,
                    SaluOperand::Const(0),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::Or,
                        SaluOperand::Cell,
                        SaluOperand::Field("meta.ghost_arg".into()),
                    )
                    .when(&[guard(0, true)]),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::And,
                        SaluOperand::Cell,
                        SaluOperand::Field("meta.ghost_arg".into()),
                    )
                    .when(&[guard(0, false)]),
                ),
        )
        .register_action(
            RegisterAction::new("read_busy", "port_busy").output("meta.busy", SaluOutputValue::Old),
        )
        .register_action(
            // Data packets read it; a received frame's first pass reads it too.
            RegisterAction::new("read_paused", "queue_paused")
                .output("meta.paused", SaluOutputValue::Old),
        )
        .register_action(
            // A received frame's second pass records the bit it applies.
            RegisterAction::new("apply_paused", "queue_paused")
                .condition(
                    SaluOperand::Field("meta.bit1".into()),
                    Cmp::Eq,
                    SaluOperand::Const(1),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::Or,
                        SaluOperand::Cell,
                        SaluOperand::Field("meta.arg".into()),
                    )
                    .when(&[guard(0, true)]),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::And,
                        SaluOperand::Cell,
                        SaluOperand::Field("meta.arg".into()),
                    )
                    .when(&[guard(0, false)]),
                ),
        )
        .register_action(
            // Data: +1 (old returned: 0 means a new pause). Record: -1 (old 1: resume).
            RegisterAction::new("count_pause", PAUSE_COUNTERS)
                .condition(
                    SaluOperand::Field("meta.is_deq".into()),
                    Cmp::Eq,
                    SaluOperand::Const(1),
                )
                .condition(SaluOperand::Cell, Cmp::Gt, SaluOperand::Const(0))
                .update(
                    SaluUpdate::new(SaluOp::Sub, SaluOperand::Cell, SaluOperand::Const(1))
                        .when(&[guard(0, true), guard(1, true)]),
                )
                .update(
                    SaluUpdate::new(SaluOp::Add, SaluOperand::Cell, SaluOperand::Const(1))
                        .when(&[guard(0, false)]),
                )
                .output("meta.ctr_old", SaluOutputValue::Old),
        )
        .register_action(
            RegisterAction::new("mark_bits", PAUSE_BITS)
                .condition(
                    SaluOperand::Field("meta.is_deq".into()),
                    Cmp::Eq,
                    SaluOperand::Const(1),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::And,
                        SaluOperand::Cell,
                        SaluOperand::Field("meta.arg".into()),
                    )
                    .when(&[guard(0, true)]),
                )
                .update(
                    SaluUpdate::new(
                        SaluOp::Or,
                        SaluOperand::Cell,
                        SaluOperand::Field("meta.arg".into()),
                    )
                    .when(&[guard(0, false)]),
                ),
        )
        .register_action(
            RegisterAction::new("read_bits", PAUSE_BITS).output("meta.bits", SaluOutputValue::Old),
        )
        .register_action(RegisterAction::new("count_issued", PAUSES_ISSUED).update(
            SaluUpdate::new(SaluOp::Add, SaluOperand::Cell, SaluOperand::Const(1)),
        ));

    // Ghost thread: queue depths, and each port's busy bitmap: ghost queue
    // `pipe << 11 | qid` is port key `(pipe << 11 | qid) >> 5`, bit `qid mod 32`.
    b = b
        .action(
            Action::new("ghost_split")
                .prim(alu(
                    AluOp::Shl,
                    "meta.ghost_index",
                    f("ghost_md.pipe_id"),
                    c(11),
                ))
                .prim(alu(AluOp::And, "meta.ghost_low", f("ghost_md.qid"), c(31)))
                .prim(alu(
                    AluOp::Min,
                    "meta.ghost_nmask",
                    f("ghost_md.qlength"),
                    c(1),
                ))
                .prim(alu(
                    AluOp::Shl,
                    "meta.ghost_pk",
                    f("ghost_md.pipe_id"),
                    c(6),
                ))
                .prim(alu(AluOp::Shr, "meta.ghost_qh", f("ghost_md.qid"), c(5))),
        )
        .action(
            // Busy: arg = mask (OR it in); empty: arg = !mask (AND it in).
            Action::new("ghost_join")
                .prim(alu(
                    AluOp::Or,
                    "meta.ghost_key",
                    f("meta.ghost_index"),
                    f("ghost_md.qid"),
                ))
                .prim(alu(
                    AluOp::Shr,
                    "meta.ghost_mask",
                    c(0x8000_0000),
                    f("meta.ghost_low"),
                ))
                .prim(alu(
                    AluOp::Sub,
                    "meta.ghost_nmask",
                    f("meta.ghost_nmask"),
                    c(1),
                ))
                .prim(alu(
                    AluOp::Or,
                    "meta.ghost_pk",
                    f("meta.ghost_pk"),
                    f("meta.ghost_qh"),
                )),
        )
        .action(Action::new("ghost_arg").prim(alu(
            AluOp::Xor,
            "meta.ghost_arg",
            f("meta.ghost_mask"),
            f("meta.ghost_nmask"),
        )))
        .action(Action::new("ghost_depth").prim(Primitive::Execute {
            register_action: "write_depth".into(),
            index: f("meta.ghost_key"),
        }))
        .action(Action::new("ghost_busy").prim(Primitive::Execute {
            register_action: "write_busy".into(),
            index: f("meta.ghost_pk"),
        }))
        .table(table0("ghost_split", "ghost_split"))
        .table(table0("ghost_join", "ghost_join"))
        .table(table0("ghost_arg", "ghost_arg"))
        .table(table0("ghost_depth", "ghost_depth"))
        .table(table0("ghost_busy", "ghost_busy"));

    // Ingress: data packets.
    b = b
        .action(
            Action::new("data_start")
                .prim(set("meta.is_data", c(1)))
                .prim(set("meta.flow", c(1)))
                .prim(Primitive::Hash {
                    dst: "meta.fidx".into(),
                    hash: "flow_hash".into(),
                })
                .prim(set("meta.now", f("ig_prsr_md.global_tstamp[31:0]")))
                .prim(set("meta.in_port", f("ig_intr_md.ingress_port")))
                .prim(set("meta.qp_op", c(1)))
                .prim(alu(AluOp::And, "meta.uq5", f("ipv4.identification"), c(31))),
        )
        .action(
            Action::new("record_start")
                .prim(set("meta.is_deq", c(1)))
                .prim(set("meta.flow", c(1)))
                .prim(set("meta.counted", f("deq_rest.caused")))
                .prim(set("meta.fidx", f("deq_rest.fidx")))
                .prim(set("meta.now", f("ig_prsr_md.global_tstamp[31:0]")))
                .prim(set("meta.in_port", f("deq_rest.in_port")))
                .prim(alu(AluOp::And, "meta.uq5", f("deq_rest.uq"), c(31)))
                .prim(Primitive::Drop {
                    reason: ProgramDrop::Consumed,
                }),
        )
        .action(Action::new("touch_last").prim(Primitive::Execute {
            register_action: "touch_last".into(),
            index: f("meta.fidx"),
        }))
        .action(
            Action::new("idle")
                .prim(alu(AluOp::Sub, "meta.idle", f("meta.now"), f("meta.last")))
                .prim(alu(AluOp::Min, "meta.seen", f("meta.last"), c(1)))
                .prim(Primitive::Execute {
                    register_action: "count_flow".into(),
                    index: f("meta.fidx"),
                }),
        )
        .action(
            Action::new("port_key")
                .prim(alu(
                    AluOp::Shr,
                    "meta.port_key",
                    f("ig_intr_tm_md.ucast_egress_port"),
                    c(1),
                ))
                .prim(alu(
                    AluOp::Shl,
                    "meta.qbase",
                    f("ig_intr_tm_md.ucast_egress_port"),
                    c(4),
                ))
                .prim(alu(AluOp::And, "meta.hq", f("meta.fidx"), c(31)))
                .prim(Primitive::Random {
                    dst: "meta.start".into(),
                }),
        )
        .action(
            Action::new("pause_index")
                .prim(alu(AluOp::Shl, "meta.pbase", f("meta.in_port"), c(5)))
                .prim(alu(AluOp::Shr, "meta.mask", c(0x8000_0000), f("meta.uq5"))),
        )
        .action(
            Action::new("pause_slot")
                .prim(alu(AluOp::Add, "meta.pidx", f("meta.pbase"), f("meta.uq5")))
                .prim(alu(AluOp::Sub, "meta.neg", c(0), f("meta.is_deq"))),
        )
        .action(
            // Data: arg = mask (OR: a new pause); record: arg = !mask (AND: a resume).
            Action::new("pause_edge")
                .prim(alu(
                    AluOp::Sub,
                    "meta.edge",
                    f("meta.ctr_old"),
                    f("meta.is_deq"),
                ))
                .prim(alu(AluOp::Xor, "meta.arg", f("meta.mask"), f("meta.neg"))),
        )
        .action(Action::new("read_busy").prim(Primitive::Execute {
            register_action: "read_busy".into(),
            index: f("meta.port_key"),
        }))
        .action(Action::new("read_paused").prim(Primitive::Execute {
            register_action: "read_paused".into(),
            index: f("meta.port_key"),
        }))
        .action(
            Action::new("combine")
                .prim(alu(
                    AluOp::Or,
                    "meta.blocked",
                    f("meta.busy"),
                    f("meta.paused"),
                ))
                .prim(alu(
                    AluOp::Xor,
                    "meta.unpaused",
                    f("meta.paused"),
                    c(0xFFFF_FFFF),
                )),
        )
        .action(Action::new("active").prim(alu(
            AluOp::And,
            "meta.active",
            f("meta.busy"),
            f("meta.unpaused"),
        )))
        .action(
            Action::new("halves")
                .prim(alu(AluOp::Shr, "meta.half_hi", f("meta.active"), c(16)))
                .prim(set("meta.half_lo", f("meta.active"))),
        )
        .action(
            Action::new("bytes")
                .prim(alu(AluOp::Shr, "meta.byte0", f("meta.half_hi"), c(8)))
                .prim(set("meta.byte1", f("meta.half_hi")))
                .prim(alu(AluOp::Shr, "meta.byte2", f("meta.half_lo"), c(8)))
                .prim(set("meta.byte3", f("meta.half_lo"))),
        );
    for k in 0..4 {
        b = b.action(
            Action::new(&format!("count{k}"))
                .param("n", 8)
                .prim(set(&format!("meta.count{k}"), Operand::param("n"))),
        );
        b = b.table(popcount(k));
    }
    b = b
        .action(
            Action::new("sum_pairs")
                .prim(alu(
                    AluOp::Add,
                    "meta.count01",
                    f("meta.count0"),
                    f("meta.count1"),
                ))
                .prim(alu(
                    AluOp::Add,
                    "meta.count23",
                    f("meta.count2"),
                    f("meta.count3"),
                )),
        )
        .action(Action::new("sum_all").prim(alu(
            AluOp::Add,
            "meta.n_active",
            f("meta.count01"),
            f("meta.count23"),
        )))
        .action(
            Action::new("set_threshold")
                .param("cells", 32)
                .prim(set("meta.th", Operand::param("cells"))),
        )
        .action(
            Action::new("pick_free")
                .param("q", 8)
                .prim(set("meta.cand", Operand::param("q"))),
        )
        .action(Action::new("pick_hashed"))
        .action(
            Action::new("set_hashed")
                .param("q", 8)
                .prim(set("meta.cand", Operand::param("q"))),
        )
        .action(Action::new("reassign").prim(set("meta.reassign", c(1))))
        .action(Action::new("assign").prim(Primitive::Execute {
            register_action: "assign_queue".into(),
            index: f("meta.fidx"),
        }))
        .action(
            Action::new("queue")
                .prim(Primitive::SetQid {
                    qid: f("meta.queue"),
                })
                .prim(alu(
                    AluOp::Add,
                    "meta.qidx",
                    f("meta.qbase"),
                    f("meta.queue"),
                ))
                .prim(set("bfc_tag.queue", f("meta.queue"))),
        )
        .action(Action::new("read_depth").prim(Primitive::Execute {
            register_action: "read_depth".into(),
            index: f("meta.qidx"),
        }))
        .action(
            Action::new("decide_pause")
                .prim(set("meta.counted", c(1)))
                .prim(set("bfc_tag.caused", c(1))),
        )
        .action(Action::new("count_pause").prim(Primitive::Execute {
            register_action: "count_pause".into(),
            index: f("meta.pidx"),
        }))
        .action(Action::new("mark_bits").prim(Primitive::Execute {
            register_action: "mark_bits".into(),
            index: f("meta.in_port"),
        }))
        .action(Action::new("issued").prim(Primitive::Execute {
            register_action: "count_issued".into(),
            index: c(0),
        }))
        .action(Action::new("resume").prim(set("ig_intr_dprsr_md.pktgen", c(1))))
        .action(
            Action::new("tag")
                .prim(Primitive::SetValid {
                    header: "bfc_tag".into(),
                })
                .prim(set("bfc_tag.ether_type", f("ethernet.ether_type")))
                .prim(set("ethernet.ether_type", c(TAG_ETHERTYPE as u64)))
                .prim(set("bfc_tag.fidx", f("meta.fidx")))
                .prim(set("bfc_tag.in_port", f("meta.in_port")))
                .prim(set("bfc_tag.uq", f("ipv4.identification"))),
        )
        .table(ipv4_host())
        .table(table0("data_start", "data_start"))
        .table(table0("record_start", "record_start"))
        .table(table0("touch_last", "touch_last"))
        .table(table0("flow_size", "idle"))
        .table(table0("port_key", "port_key"))
        .table(table0("pause_index", "pause_index"))
        .table(table0("pause_slot", "pause_slot"))
        .table(table0("pause_edge", "pause_edge"))
        // In the stage the ghost thread writes the bitmap (its chain needs 3 stages).
        .table(table0("read_busy", "read_busy").stage(BUSY_STAGE))
        .table(table0("combine", "combine"))
        .table(table0("active", "active"))
        .table(table0("halves", "halves"))
        .table(table0("bytes", "bytes"))
        .table(table0("sum_pairs", "sum_pairs"))
        .table(table0("sum_all", "sum_all"))
        .table(threshold)
        .table(first_free)
        .table(hashed)
        .table(table0("reassign", "reassign"))
        .table(table0("assign_new", "reassign"))
        .table(table0("flow_queue", "assign"))
        .table(table0("queue", "queue"))
        .table(table0("read_depth", "read_depth"))
        .table(table0("decide_pause", "decide_pause"))
        .table(table0("count_pause", "count_pause"))
        .table(table0("issued", "issued"))
        .table(table0("resume", "resume"))
        .table(table0("tag", "tag"));

    // Ingress: pktgen bursts (pause-bitmap frames) and received frames.
    b = b
        .action(
            Action::new("to_port")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                })
                .prim(Primitive::SetQid {
                    qid: c(CONTROL_QUEUE),
                })
                .prim(Primitive::SetInvalid {
                    header: "gen_first".into(),
                })
                .prim(Primitive::SetInvalid {
                    header: "pktgen_rest".into(),
                })
                .prim(set("meta.port_key", Operand::param("port")))
                .prim(set("meta.pb_op", c(1))),
        )
        .action(Action::new("no_port").prim(Primitive::Drop {
            reason: ProgramDrop::NoRoute,
        }))
        .action(Action::new("read_bits").prim(Primitive::Execute {
            register_action: "read_bits".into(),
            index: f("meta.port_key"),
        }))
        .action(fill)
        .table(
            Table::new(
                "refresh_port",
                MatchKind::Exact,
                &["pktgen_rest.packet_id"],
                256,
            )
            .action("to_port")
            .action("no_port")
            .default_action("no_port", &[]),
        )
        .table(table0("fill_bitmap", "fill_bitmap"))
        .action(
            Action::new("frame_start")
                .prim(alu(
                    AluOp::Shr,
                    "meta.port_key",
                    f("ig_intr_md.ingress_port"),
                    c(1),
                ))
                .prim(set("meta.qp_op", c(1)))
                .prim(set("meta.frame", c(1))),
        )
        .action(Action::new("frame_diff").prim(alu(
            AluOp::Xor,
            "meta.diff",
            f("meta.paused"),
            f("bfc.w0"),
        )))
        .action(
            Action::new("note_change")
                .param("q", 8)
                .prim(set("bfc_apply.queue", Operand::param("q")))
                .prim(set("meta.changed", c(1))),
        )
        // A frame that changes nothing is consumed here; one that does is resubmitted (a
        // dropped packet is not) and consumed on its second pass.
        .action(Action::new("no_change").prim(Primitive::Drop {
            reason: ProgramDrop::Consumed,
        }))
        .action(Action::new("resubmit_change").prim(Primitive::Resubmit {
            header: Some("bfc_apply".into()),
        }))
        .action(
            Action::new("apply_start")
                .prim(alu(AluOp::Sub, "meta.shift", c(31), f("bfc_apply.queue")))
                .prim(alu(
                    AluOp::Shr,
                    "meta.port_key",
                    f("ig_intr_md.ingress_port"),
                    c(1),
                ))
                .prim(alu(
                    AluOp::Shr,
                    "meta.mask",
                    c(0x8000_0000),
                    f("bfc_apply.queue"),
                ))
                .prim(alu(
                    AluOp::Shr,
                    "meta.afc_hi",
                    f("ig_intr_md.ingress_port"),
                    c(3),
                ))
                .prim(alu(
                    AluOp::And,
                    "meta.afc_ch",
                    f("ig_intr_md.ingress_port"),
                    c(7),
                ))
                .prim(alu(AluOp::Shl, "meta.afc_q", f("bfc_apply.queue"), c(15)))
                .prim(set("meta.qp_op", c(2)))
                .prim(Primitive::Drop {
                    reason: ProgramDrop::Consumed,
                }),
        )
        .action(
            Action::new("apply_shift")
                .prim(alu(
                    AluOp::Shr,
                    "meta.shifted",
                    f("bfc.w0"),
                    f("meta.shift"),
                ))
                .prim(alu(AluOp::Shl, "meta.afc_hi", f("meta.afc_hi"), c(25)))
                .prim(alu(AluOp::Shl, "meta.afc_ch", f("meta.afc_ch"), c(19))),
        )
        .action(
            Action::new("apply_bit")
                .prim(alu(AluOp::And, "meta.bit", f("meta.shifted"), c(1)))
                .prim(alu(AluOp::And, "meta.bit1", f("meta.shifted"), c(1)))
                .prim(alu(
                    AluOp::Or,
                    "meta.afc_a",
                    f("meta.afc_hi"),
                    f("meta.afc_ch"),
                ))
                .prim(alu(
                    AluOp::Or,
                    "meta.afc_b",
                    f("meta.afc_q"),
                    c(0x8000_0000),
                )),
        )
        .action(
            // Set: arg = mask (OR); clear: arg = !mask (AND).
            Action::new("apply_arg")
                .prim(alu(AluOp::Sub, "meta.neg", f("meta.bit"), c(1)))
                .prim(alu(AluOp::Or, "meta.afc_a", f("meta.afc_a"), f("meta.bit"))),
        )
        .action(Action::new("apply_mask").prim(alu(
            AluOp::Xor,
            "meta.arg",
            f("meta.mask"),
            f("meta.neg"),
        )))
        .action(
            Action::new("apply_record")
                .prim(Primitive::Execute {
                    register_action: "apply_paused".into(),
                    index: f("meta.port_key"),
                })
                .prim(alu(
                    AluOp::Or,
                    "ig_intr_dprsr_md.adv_flow_ctl",
                    f("meta.afc_a"),
                    f("meta.afc_b"),
                )),
        )
        .table(table0("frame_start", "frame_start"))
        .table(table0("frame_diff", "frame_diff"))
        .table(changed)
        .table(table0("resubmit_change", "resubmit_change"))
        .table(table0("apply_start", "apply_start"))
        .table(table0("apply_shift", "apply_shift"))
        .table(table0("apply_bit", "apply_bit"))
        .table(
            Table::new("queue_paused", MatchKind::Exact, &["meta.qp_op"], 4)
                .action("read_paused")
                .action("apply_record")
                .action("none")
                .default_action("none", &[])
                .entry(&[1], "read_paused", &[])
                .entry(&[2], "apply_record", &[]),
        )
        .action(Action::new("none"))
        .action(Action::new("edge_op").prim(set("meta.pb_op", c(2))))
        .table(table0("edge_op", "edge_op"))
        .table(
            Table::new("pause_bits", MatchKind::Exact, &["meta.pb_op"], 4)
                .action("read_bits")
                .action("mark_bits")
                .action("none")
                .default_action("none", &[])
                .entry(&[1], "read_bits", &[])
                .entry(&[2], "mark_bits", &[]),
        )
        .table(table0("apply_arg", "apply_arg"))
        .table(table0("apply_mask", "apply_mask"));

    // Egress: data packets leave untagged, with their queue as the next hop's upstream
    // queue, and a record of their departure is mirrored to the recirculation port.
    b = b
        .action(
            Action::new("depart")
                .prim(Primitive::SetInvalid {
                    header: "bfc_tag".into(),
                })
                .prim(set("ethernet.ether_type", f("bfc_tag.ether_type")))
                .prim(set("ipv4.identification", f("bfc_tag.queue")))
                .prim(set("bfc_deq.kind", c(RECORD_MARKER)))
                .prim(set("bfc_deq.in_port", f("bfc_tag.in_port")))
                .prim(set("bfc_deq.uq", f("bfc_tag.uq")))
                .prim(set("bfc_deq.caused", f("bfc_tag.caused")))
                .prim(set("bfc_deq.fidx", f("bfc_tag.fidx")))
                .prim(Primitive::MirrorWithHeader {
                    session: f("meta.session"),
                    header: "bfc_deq".into(),
                }),
        )
        .action(Action::new("record_session").prim(alu(
            AluOp::Shr,
            "meta.session",
            f("bfc_tag.in_port"),
            c(7),
        )))
        .table(table0("record_session", "record_session"))
        .table(table0("depart", "depart"));

    b = b
        .ingress(ingress(cfg))
        .egress(vec![on(
            is("bfc_tag.$valid"),
            vec![Stmt::apply("record_session"), Stmt::apply("depart")],
        )])
        .ghost(vec![
            Stmt::apply("ghost_split"),
            Stmt::apply("ghost_join"),
            Stmt::apply("ghost_arg"),
            Stmt::apply("ghost_busy"),
            Stmt::apply("ghost_depth"),
        ]);
    // Every data packet's departure makes one record: the 12-byte `bfc_deq` header, the
    // first RECORD_TRUNCATE_BYTES of the packet and the FCS, mirrored and recirculated once.
    let record = 12 + RECORD_TRUNCATE_BYTES + 4;
    b.overhead(record, record).build_unchecked()
}

fn is(field: &str) -> Condition {
    when(field, Cmp::Eq, c(1))
}

/// The ingress control flow. Each path (data packet, dequeue record, pktgen frame, received
/// frame and its resubmitted pass) first sets its flags; the tables that touch a register
/// array shared by several paths (`queue_paused`, `pause_bits`, the flow table) are applied
/// once, at the top level, each path choosing its operation by a key.
fn ingress(cfg: &Config) -> Vec<Stmt> {
    let data = vec![
        Stmt::apply("ipv4_host"),
        Stmt::apply("data_start"),
        Stmt::apply("tag"),
    ];
    let front = Stmt::if_(
        is("gen_first.$valid"),
        vec![Stmt::if_(
            is("deq_rest.$valid"),
            vec![Stmt::apply("record_start")],
            vec![Stmt::apply("refresh_port")],
        )],
        vec![Stmt::if_(
            is("bfc.$valid"),
            vec![Stmt::if_(
                is("bfc_apply.$valid"),
                vec![
                    Stmt::apply("apply_start"),
                    Stmt::apply("apply_shift"),
                    Stmt::apply("apply_bit"),
                    Stmt::apply("apply_arg"),
                    Stmt::apply("apply_mask"),
                ],
                vec![Stmt::apply("frame_start")],
            )],
            forwarding_ingress(data),
        )],
    );
    let flow_head = on(
        is("meta.flow"),
        vec![
            Stmt::apply("touch_last"),
            Stmt::apply("flow_size"),
            Stmt::apply("pause_index"),
            Stmt::apply("pause_slot"),
            on(is("meta.is_data"), vec![Stmt::apply("port_key")]),
        ],
    );
    let frame_tail = on(
        is("meta.frame"),
        vec![
            Stmt::apply("frame_diff"),
            Stmt::apply("changed_queue"),
            on(is("meta.changed"), vec![Stmt::apply("resubmit_change")]),
        ],
    );
    let assignment = on(
        is("meta.is_data"),
        vec![
            Stmt::apply("read_busy"),
            Stmt::apply("combine"),
            Stmt::apply("active"),
            Stmt::apply("halves"),
            Stmt::apply("bytes"),
            Stmt::apply("popcount0"),
            Stmt::apply("popcount1"),
            Stmt::apply("popcount2"),
            Stmt::apply("popcount3"),
            Stmt::apply("sum_pairs"),
            Stmt::apply("sum_all"),
            Stmt::apply("threshold"),
            Stmt::apply("hashed_queue"),
            Stmt::apply("first_free"),
            // An entry never touched (last-seen 0) is assigned at once.
            on(
                when("meta.size_before", Cmp::Eq, c(0)),
                vec![Stmt::if_(
                    when("meta.seen", Cmp::Eq, c(0)),
                    vec![Stmt::apply("assign_new")],
                    vec![on(
                        when("meta.idle", Cmp::Gt, c(cfg.sticky_ns)),
                        vec![Stmt::apply("reassign")],
                    )],
                )],
            ),
            Stmt::apply("flow_queue"),
            Stmt::apply("queue"),
            Stmt::apply("read_depth"),
            on(
                when("meta.size_before", Cmp::Ge, c(1)),
                vec![on(
                    when("meta.depth", Cmp::Gt, f("meta.th")),
                    vec![Stmt::apply("decide_pause")],
                )],
            ),
        ],
    );
    let counters = on(
        is("meta.counted"),
        vec![
            Stmt::apply("count_pause"),
            Stmt::apply("pause_edge"),
            on(
                when("meta.edge", Cmp::Eq, c(0)),
                vec![
                    Stmt::apply("edge_op"),
                    Stmt::if_(
                        is("meta.is_data"),
                        vec![Stmt::apply("issued")],
                        vec![Stmt::apply("resume")],
                    ),
                ],
            ),
        ],
    );
    vec![
        front,
        flow_head,
        Stmt::apply("queue_paused"),
        frame_tail,
        assignment,
        counters,
        Stmt::apply("pause_bits"),
        on(
            when("meta.pb_op", Cmp::Eq, c(1)),
            vec![Stmt::apply("fill_bitmap")],
        ),
    ]
}
