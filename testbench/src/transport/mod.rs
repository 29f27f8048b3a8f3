//! A host with a reliable windowed transport over real TCP/IPv4 frames, as a [`Node`].
//!
//! Every flow is a byte stream cut into segments of at most `mss` payload bytes. The first
//! 4 bytes of every segment's TCP payload carry the flow's id (unique in a run), so that the
//! receiver keys its state on it rather than on ports that could repeat; the `mss` counts
//! data bytes after them. Sequence numbers are byte offsets in the flow (flows are limited
//! to 2^32 - 1 bytes).
//!
//! The module is split by concern:
//! - this file: the settings, the host and its NIC (one frame at a time at line rate, exact
//!   to the line tick: each frame starts at the tick the previous one's last bit left, as
//!   the chip's MACs do; ACKs first, then the open flows round-robin);
//! - [`tcp`]: one flow's sender (window, timer, loss recovery) and receiver (reassembly, the
//!   SACK blocks it reports, in the TCP SACK option of its ACKs: RFC 2018);
//! - [`recovery`]: SACK-based recovery (RFC 6675, the default), NewReno (RFC 6582) or
//!   go-back-N, and the SACK scoreboard;
//! - [`rto`]: the retransmission timer of RFC 6298 (SRTT, RTTVAR, minimum, backoff);
//! - [`dctcp`]: DCTCP per RFC 8257 ([`Congestion::Dctcp`]), whose window without marks is
//!   standard TCP's ([`Congestion::Reno`], ECN off); [`Congestion::Fixed`] keeps the window
//!   constant.
//!
//! The receiver ACKs every data segment with the next byte it expects, or with delayed ACKs
//! every `ack_every` segments ([`TransportConfig::ack_every`]; `docs/testbench.md`). With ECN
//! on it echoes CE as ECE: per segment, or per RFC 8257's state machine when ACKs are delayed.
//!
//! - BFC (`honour_bfc_pause`): each flow gets its own NIC queue index, written into the IPv4
//!   identification field of its data frames (the "upstream queue" a BFC switch reads); a BFC
//!   pause frame (`t2_pipeline::bfc`) replaces the NIC's paused-queue bitmap, and no new frame
//!   of a flow whose bit is set starts until a frame clears it.
//! - QCN (`qcn`): a CNM (`t2_pipeline::qcn`) about one of this host's flows gives that flow a
//!   reaction point ([`crate::qcn::ReactionPoint`]) whose rate paces its data frames.
//!
//! A flow's completion time ends in the cycle the sender receives the ACK of its last byte.
//! Frames this host cannot read (not TCP, or too short) are counted in `foreign` and freed:
//! no packet is lost silently.

pub mod dctcp;
pub mod recovery;
pub mod rto;
pub mod tcp;

pub use dctcp::{Dctcp, DCTCP_ALPHA_ONE, DCTCP_G_SHIFT};
pub use recovery::{Recovery, Scoreboard, DUP_THRESH, MAX_SACK_BLOCKS};
pub use rto::RtoEstimator;
use tcp::{RecvFlow, SendFlow};

use crate::node::{Node, Sent};
use crate::pfc_pause::PfcPauses;
use crate::qcn::{flow_id_in_msdu, QcnParams, ReactionPoint};
use crate::workload::FlowSpec;
use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;
use t2_clock::{Clock, Cycle, LineRate, FCS_BYTES};
use t2_pipeline::bfc::BfcPause;
use t2_pipeline::headers::{self, Endpoints, MacAddr, Tcp, TCP_HEADERS_LEN};
use t2_pipeline::pabo::Shim;
use t2_pipeline::pfc::PfcFrame;
use t2_pipeline::qcn::Cnm;
use t2_pipeline::{PacketHandle, PacketPool};

/// Bytes of the flow id at the start of every segment's payload.
pub const FLOW_ID_LEN: usize = 4;
/// Bytes of one segment beyond its data: headers, flow id and FCS.
pub const SEGMENT_OVERHEAD: u64 = TCP_HEADERS_LEN as u64 + FLOW_ID_LEN as u64 + FCS_BYTES;

/// Bytes of the largest SACK option an ACK carries: two NOPs, kind, length and
/// [`MAX_SACK_BLOCKS`] blocks of 8 bytes.
pub const MAX_SACK_OPTION_LEN: usize = 4 + 8 * MAX_SACK_BLOCKS;
/// The largest IPv4 total length of this transport's ACKs (no data): 20 bytes of IPv4
/// header, 20 of TCP, the largest SACK option and the flow id. A data segment with at most
/// [`MAX_SACK_OPTION_LEN`] bytes of data (only ever a flow's last segment) is no longer.
pub const ACK_MAX_IPV4_TOTAL_LEN: u64 = 20 + 20 + MAX_SACK_OPTION_LEN as u64 + FLOW_ID_LEN as u64;

/// ECN codepoints in the low two bits of the IPv4 TOS byte.
const ECT0: u8 = 0b10;
const CE: u8 = 0b11;
/// Offset of the TOS byte in a frame (after the 14-byte Ethernet header).
const TOS_OFFSET: usize = 15;

/// How a sender sizes its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// A constant window of `window_bytes`.
    Fixed,
    /// DCTCP, starting from `window_bytes` in slow start.
    Dctcp,
    /// Standard TCP congestion control (RFC 5681: slow start from `window_bytes`,
    /// congestion avoidance, the window halved on a loss found by fast retransmit and one
    /// segment after a timeout) without ECN: DCTCP's window with no mark ever seen, since
    /// the segments go out Not-ECT. With `recovery = "newreno"` it is NewReno (RFC 6582),
    /// the Reno family the PABO paper's baseline runs.
    Reno,
}

/// Transport settings shared by all flows of a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransportConfig {
    /// Data bytes per full segment.
    pub mss: u64,
    /// The fixed window, or DCTCP's initial window, in bytes.
    pub window_bytes: u64,
    /// The initial retransmission timeout, cycles: the timeout before a flow's first RTT
    /// sample (RFC 6298 §2.1; raised to `min_rto`).
    pub rto: Cycle,
    /// The lower bound of the computed timeout (RFC 6298 §2.4), cycles.
    pub min_rto: Cycle,
    /// The largest the timeout grows to, by doubling or by estimate (RFC 6298 §2.5).
    pub max_rto: Cycle,
    pub congestion: Congestion,
    /// How senders recover lost segments (and whether receivers send SACK blocks).
    pub recovery: Recovery,
    /// Whether the NIC honours PFC frames: it starts no frame of a paused class (each
    /// class for its own quanta of 512 bit times). Every frame travels in class 0, unless
    /// `mice_bytes` sends some in [`MICE_PFC_CLASS`].
    pub honour_pfc: bool,
    /// Mice/elephant classes at the source: with `Some(x)`, a data frame travels in
    /// [`MICE_PFC_CLASS`] with DSCP [`MICE_DSCP`] while the IPv4 bytes its flow has sent
    /// before it (retransmissions included) are fewer than `x`, and in class 0 with DSCP 0
    /// after; ACKs always travel as mice. The count is the one a switch's per-flow byte
    /// counter keeps on the same frames, so both sides agree on every frame's class.
    pub mice_bytes: Option<u64>,
    /// PABO's host side: a data frame of this host's that comes back (a switch bounced it:
    /// source is this host, destination is not) is sent again as it is, PABO shim
    /// (`t2_pipeline::pabo`) included. Without this such a frame is counted as foreign and
    /// freed. Frames carrying the shim are read past it either way.
    pub resend_bounced: bool,
    /// Whether the NIC honours BFC pause frames: each flow has its own queue index (carried
    /// in the IPv4 identification field), and a flow whose index is paused starts no frame.
    pub honour_bfc_pause: bool,
    /// QCN reaction points: with parameters, a CNM about a flow rate-limits it.
    pub qcn: Option<QcnParams>,
    /// Delayed ACKs: the receiver ACKs every `ack_every`-th in-order data segment at once
    /// and a lone one after `delayed_ack` cycles (RFC 1122 §4.2.3.2, RFC 5681 §4.2: at least
    /// every second full segment, within 500 ms); an out-of-order, duplicate or
    /// hole-filling segment is ACKed at once (RFC 5681 §4.2), and so is a change of CE state
    /// under DCTCP (RFC 8257 §3.2). 1 (the default) ACKs every segment at once.
    pub ack_every: u32,
    /// How long a delayed ACK waits for a second segment, cycles.
    pub delayed_ack: Cycle,
    /// PIAS's host side: with thresholds, every data segment carries in its DSCP the
    /// priority level its flow has reached by the bytes it has sent. `None` (the default)
    /// leaves DSCP 0, so runs without it keep their frames byte for byte.
    pub mlfq: Option<MlfqTags>,
    /// With settings, the hosts are RDMA-style NICs ([`crate::rdma::RdmaHost`]) instead of
    /// this transport's; `None` (the default) keeps TCP.
    pub rdma: Option<crate::rdma::RdmaConfig>,
}

/// PIAS's packet tagging (Bai et al., NSDI 2015): multi-level feedback queue by bytes sent.
/// A flow starts at level 0 (DSCP 0, the switches' highest priority) and moves one level
/// down each time the payload bytes it has sent (retransmissions included, as the PIAS
/// kernel module counts what it sends) pass the next threshold: a segment sent after
/// `b` bytes carries DSCP = the number of thresholds that are `<= b`, from 0 to
/// `MLFQ_LEVELS - 1`. ACKs carry DSCP 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlfqTags {
    /// Demotion thresholds in payload bytes, strictly increasing.
    pub thresholds: [u64; MLFQ_LEVELS - 1],
}

/// Priority levels of [`MlfqTags`]: 8, the queues PIAS uses (and its ns-2 artifact's
/// `prio_num_`).
pub const MLFQ_LEVELS: usize = 8;

impl MlfqTags {
    /// The level (DSCP) of a segment sent after `bytes_sent` payload bytes of its flow.
    pub fn level(&self, bytes_sent: u64) -> u8 {
        self.thresholds.iter().filter(|&&t| t <= bytes_sent).count() as u8
    }

    /// Checks that the thresholds increase strictly from above 0.
    pub fn validate(&self) -> Result<(), String> {
        let mut last = 0;
        for (i, &t) in self.thresholds.iter().enumerate() {
            if t <= last {
                return Err(if i == 0 {
                    format!("mlfq threshold 0 ({t} B) must be above 0")
                } else {
                    format!("mlfq threshold {i} ({t} B) must be above the one before ({last} B)")
                });
            }
            last = t;
        }
        Ok(())
    }
}

/// The PFC class mice frames travel in (with `mice_bytes`); elephants travel in class 0.
pub const MICE_PFC_CLASS: u8 = 1;
/// The DSCP mice frames carry (with `mice_bytes`): 46, Expedited Forwarding (RFC 3246), the
/// code point for latency-sensitive traffic (our choice).
pub const MICE_DSCP: u8 = 46;
/// IPv4 bytes of a data segment carrying `data` bytes: headers, flow id, data.
fn ipv4_bytes(data: u64) -> u64 {
    TCP_HEADERS_LEN as u64 - headers::Ethernet::LEN as u64 + FLOW_ID_LEN as u64 + data
}

/// The longest a delayed ACK waits by default, microseconds: Linux's minimum delayed-ACK
/// timeout (`TCP_DELACK_MIN`, HZ / 25 = 40 ms in `include/net/tcp.h`); RFC 1122 §4.2.3.2
/// allows up to 500 ms.
pub const DEFAULT_DELAYED_ACK_US: u64 = 40_000;
/// The most segments one delayed ACK may cover.
pub const MAX_ACK_EVERY: u32 = 64;

/// Per-flow queues of a NIC (BFC's ns-3 `fCnt`). Index 0 is kept for ACKs, which BFC sends in
/// its control queue and never pauses; flows take the lowest free index in 1..2048.
pub const NIC_FLOW_QUEUES: u16 = 2048;

impl TransportConfig {
    /// 1000-byte segments (BFC's), a window of `window_bytes`, fixed congestion window,
    /// SACK recovery, and `rto` as both the initial and the minimum retransmission timeout.
    pub fn fixed(window_bytes: u64, rto: Cycle) -> TransportConfig {
        TransportConfig {
            mss: 1000,
            window_bytes,
            rto,
            min_rto: rto,
            max_rto: rto * 64,
            congestion: Congestion::Fixed,
            recovery: Recovery::Sack,
            honour_pfc: false,
            resend_bounced: false,
            honour_bfc_pause: false,
            qcn: None,
            mlfq: None,
            mice_bytes: None,
            ack_every: 1,
            // At the chip's default 1.5 GHz clock (scenarios convert with their own).
            delayed_ack: DEFAULT_DELAYED_ACK_US * 1500,
            rdma: None,
        }
    }

    /// Checks the settings, naming the host in the error.
    pub fn validate(&self, host: &str) -> Result<(), String> {
        if !(1..=MAX_ACK_EVERY).contains(&self.ack_every) {
            return Err(format!(
                "{host}: ack_every {} is outside 1..={MAX_ACK_EVERY}",
                self.ack_every
            ));
        }
        if self.ack_every > 1 && self.delayed_ack == 0 {
            return Err(format!(
                "{host}: delayed_ack must be above 0 when ACKs are delayed (ack_every {})",
                self.ack_every
            ));
        }
        let max_mss = 9216 - SEGMENT_OVERHEAD;
        if self.mss == 0 || self.mss > max_mss {
            return Err(format!("{host}: mss {} is outside 1..={max_mss}", self.mss));
        }
        if self.window_bytes < self.mss {
            return Err(format!(
                "{host}: window {} B is smaller than one segment ({} B)",
                self.window_bytes, self.mss
            ));
        }
        if self.rto == 0 || self.max_rto < self.rto {
            return Err(format!(
                "{host}: rto {} must be above 0 and at most max_rto {}",
                self.rto, self.max_rto
            ));
        }
        if self.min_rto == 0 || self.max_rto < self.min_rto {
            return Err(format!(
                "{host}: min_rto {} must be above 0 and at most max_rto {}",
                self.min_rto, self.max_rto
            ));
        }
        if let Some(m) = &self.mlfq {
            m.validate().map_err(|e| format!("{host}: {e}"))?;
        }
        Ok(())
    }
}

/// Another host a flow can go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
}

/// One flow's outcome at its sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderOutcome {
    pub spec: FlowSpec,
    pub finish: Option<Cycle>,
    pub timeouts: u64,
    pub retransmitted_segments: u64,
    /// Loss recoveries started by duplicate ACKs (fast retransmits).
    pub fast_recoveries: u64,
}

/// A frame waiting for the NIC.
#[derive(Clone, Copy, Debug)]
struct AckToSend {
    flow_id: u32,
    to: Peer,
    ack: u64,
    ece: bool,
    /// SACK blocks (the first `sacks` of them).
    sack: [(u64, u64); MAX_SACK_BLOCKS],
    sacks: u8,
}

/// A host whose flows use the reliable transport.
pub struct TransportHost {
    name: String,
    me: Peer,
    line: LineRate,
    config: TransportConfig,
    peers: Vec<Peer>,
    ecn: bool,
    /// Flows not started yet, latest first (so the next is popped from the end).
    pending: Vec<FlowSpec>,
    /// Started flows in start order; finished ones stay for their outcome.
    flows: Vec<SendFlow>,
    /// Indices into `flows` of the started flows not finished yet, in start order: every
    /// per-event scan looks at these only, so its cost follows the flows in progress, not
    /// all the flows a long run has started.
    open: Vec<usize>,
    /// Round-robin: the flow index from which the next data frame's flow is looked for.
    rr: usize,
    /// No open flow's retransmission timer or QCN timer falls due before this cycle: a lower
    /// bound that every place arming a timer lowers and that housekeeping recomputes when it
    /// is reached, so that a tick with nothing due does not look at every open flow.
    timers_from: Cycle,
    /// A flow has finished since housekeeping last pruned `open`.
    finished_since_prune: bool,
    acks: VecDeque<AckToSend>,
    receiving: BTreeMap<u32, RecvFlow>,
    /// Delayed ACKs waiting for their timer: (due cycle, flow id) and the flow's sender.
    delayed_acks: BTreeMap<(Cycle, u32), Peer>,
    /// Frames being serialized with the cycle each one's last bit leaves (at most two: the
    /// NIC takes the next frame in the cycle its line frees, before the previous frame's
    /// last cycle is over).
    on_nic: VecDeque<(Cycle, PacketHandle)>,
    /// When the NIC is free, in line-rate ticks: the exact end of the last frame's last bit.
    nic_free_ticks: u64,
    frames_sent: u64,
    frames_received: u64,
    data_bytes_received: u64,
    duplicate_segments: u64,
    marked_segments: u64,
    foreign: u64,
    /// PFC, per class: no new frame of the class starts before its pause ends.
    pfc: PfcPauses,
    /// Bounced frames waiting to be sent again, and how many were.
    bounced: VecDeque<PacketHandle>,
    resent_bounced: u64,
    /// PABO: what the shims of the data frames received said.
    pabo: PaboArrivals,
    /// BFC: the last pause bitmap received (bit = NIC queue index mod 1024).
    bfc_paused: BfcPause,
    bfc_frames: u64,
    /// BFC: how many open flows hold each NIC queue index.
    queue_used: Vec<u32>,
    /// QCN: well-formed CNMs received.
    cnm_frames: u64,
    scratch: Vec<u8>,
}

impl TransportHost {
    /// A host named `name` with address `me`, whose flows address `peers[dst]`.
    pub fn new(
        name: &str,
        me: Peer,
        clock: Clock,
        nic_bps: u64,
        config: TransportConfig,
        peers: Vec<Peer>,
    ) -> Result<TransportHost, String> {
        config.validate(name)?;
        if let Some(q) = config.qcn {
            q.validate(name, nic_bps)?;
        }
        Ok(TransportHost {
            name: name.to_string(),
            me,
            line: LineRate::new(clock, nic_bps),
            config,
            peers,
            ecn: config.congestion == Congestion::Dctcp,
            pending: Vec::new(),
            flows: Vec::new(),
            open: Vec::new(),
            rr: 0,
            timers_from: 0,
            finished_since_prune: false,
            acks: VecDeque::new(),
            receiving: BTreeMap::new(),
            delayed_acks: BTreeMap::new(),
            on_nic: VecDeque::with_capacity(2),
            nic_free_ticks: 0,
            frames_sent: 0,
            frames_received: 0,
            data_bytes_received: 0,
            duplicate_segments: 0,
            marked_segments: 0,
            foreign: 0,
            pfc: PfcPauses::default(),
            bounced: VecDeque::new(),
            resent_bounced: 0,
            pabo: PaboArrivals::default(),
            bfc_paused: BfcPause::none(),
            bfc_frames: 0,
            queue_used: vec![0; NIC_FLOW_QUEUES as usize],
            cnm_frames: 0,
            scratch: Vec::new(),
        })
    }

    /// Sets the window (fixed, or DCTCP's initial one) of the flows added from now on.
    pub fn set_window_bytes(&mut self, bytes: u64) -> Result<(), String> {
        let config = TransportConfig {
            window_bytes: bytes,
            ..self.config
        };
        config.validate(&self.name)?;
        self.config = config;
        Ok(())
    }

    /// Schedules a flow this host sends. Its `dst` indexes the peer table.
    pub fn add_flow(&mut self, spec: FlowSpec) -> Result<(), String> {
        if spec.dst >= self.peers.len() {
            return Err(format!(
                "{}: flow {} goes to host {}, but the peer table has {}",
                self.name,
                spec.id,
                spec.dst,
                self.peers.len()
            ));
        }
        if spec.size_bytes == 0 || spec.size_bytes > u32::MAX as u64 {
            return Err(format!(
                "{}: flow {} has size {} B, outside 1..2^32",
                self.name, spec.id, spec.size_bytes
            ));
        }
        let at = self
            .pending
            .partition_point(|p| (p.start, p.id) > (spec.start, spec.id));
        self.pending.insert(at, spec);
        Ok(())
    }

    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// The outcome of every flow this host has started, in start order.
    pub fn outcomes(&self) -> Vec<SenderOutcome> {
        self.flows
            .iter()
            .map(|f| SenderOutcome {
                spec: f.spec,
                finish: f.finish,
                timeouts: f.timeouts,
                retransmitted_segments: f.retransmitted_segments,
                fast_recoveries: f.fast_recoveries,
            })
            .chain(self.pending.iter().rev().map(|&spec| SenderOutcome {
                spec,
                finish: None,
                timeouts: 0,
                retransmitted_segments: 0,
                fast_recoveries: 0,
            }))
            .collect()
    }

    /// Whether every flow given to this host has completed.
    pub fn all_done(&self) -> bool {
        // Flows not in `open` have finished.
        self.pending.is_empty() && self.open.iter().all(|&i| self.flows[i].finish.is_some())
    }

    /// Data bytes delivered in order to this host (each byte once).
    pub fn data_bytes_received(&self) -> u64 {
        self.data_bytes_received
    }

    /// Segment numbers of flow `id` in the order they arrived here.
    pub fn arrivals(&self, flow_id: u32) -> Option<&[u64]> {
        self.receiving.get(&flow_id).map(|r| r.arrivals.as_slice())
    }

    /// Flow ids this host received data of, in order.
    pub fn received_flows(&self) -> impl Iterator<Item = u32> + '_ {
        self.receiving.keys().copied()
    }

    /// Frames this host has put on the wire (or is serializing now).
    pub fn frames_sent(&self) -> u64 {
        self.frames_sent
    }

    /// Frames being serialized (counted in `frames_sent`, not yet on the link).
    pub fn frames_on_nic(&self) -> u64 {
        self.on_nic.len() as u64
    }

    /// Frames that reached this host (every one is freed here).
    pub fn frames_received(&self) -> u64 {
        self.frames_received
    }

    /// Data segments that carried only bytes already received.
    pub fn duplicate_segments(&self) -> u64 {
        self.duplicate_segments
    }

    /// Data segments that arrived with CE.
    pub fn marked_segments(&self) -> u64 {
        self.marked_segments
    }

    /// Frames received that were not this transport's.
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// Bounced frames sent again (with `resend_bounced`).
    pub fn resent_bounced(&self) -> u64 {
        self.resent_bounced
    }

    /// PABO: the data frames received that carried a shim (had been bounced), and what it said.
    pub fn pabo_arrivals(&self) -> PaboArrivals {
        self.pabo
    }

    /// Frames held to be sent again (with `resend_bounced`); they are in the packet pool.
    pub fn frames_held(&self) -> u64 {
        self.bounced.len() as u64
    }

    /// PFC frames received and honoured (with `honour_pfc`).
    pub fn pfc_frames(&self) -> u64 {
        self.pfc.frames()
    }

    /// BFC pause frames received (with `honour_bfc_pause`); malformed ones count as foreign.
    pub fn bfc_frames(&self) -> u64 {
        self.bfc_frames
    }

    /// BFC: the pause bitmap the NIC obeys (the last one received; none paused before).
    pub fn bfc_paused(&self) -> &BfcPause {
        &self.bfc_paused
    }

    /// Well-formed CNMs received (with `qcn`); malformed ones count as foreign.
    pub fn cnm_frames(&self) -> u64 {
        self.cnm_frames
    }

    /// The reaction point of flow `flow_id`, once a CNM has been applied to it.
    pub fn reaction_point(&self, flow_id: u32) -> Option<&ReactionPoint> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .and_then(|f| f.rp.as_ref())
    }

    /// Applies a CNM received in cycle `now` to the open flow it names, if any (a CNM about a
    /// finished flow has nothing left to slow).
    fn on_cnm(&mut self, now: Cycle, cnm: &Cnm, params: QcnParams) {
        self.cnm_frames += 1;
        let Some(id) = flow_id_in_msdu(&cnm.encap_msdu) else {
            return;
        };
        let line = self.line.bits_per_second();
        let flows = &mut self.flows;
        if let Some(f) = self
            .open
            .iter()
            .copied()
            .find(|&i| flows[i].spec.id == id && flows[i].finish.is_none())
            .map(|i| &mut flows[i])
        {
            let rp = f.rp.get_or_insert_with(|| ReactionPoint::new(line, params));
            rp.on_cnm(now, cnm.qntz_fb);
            if let Some(t) = rp.timer_at() {
                self.timers_from = self.timers_from.min(t);
            }
        }
    }

    /// The NIC queue index of flow `flow_id`, once it has started.
    pub fn flow_queue(&self, flow_id: u32) -> Option<u16> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .map(|f| f.queue)
    }

    /// The lowest NIC queue index no open flow holds; when all 2047 are held, flows share
    /// (by flow id), as BFC's bitmap already folds indices mod 1024.
    fn take_queue(&mut self, flow_id: u32) -> u16 {
        let q = (1..NIC_FLOW_QUEUES)
            .find(|&q| self.queue_used[q as usize] == 0)
            .unwrap_or(1 + (flow_id % (NIC_FLOW_QUEUES as u32 - 1)) as u16);
        self.queue_used[q as usize] += 1;
        q
    }

    /// QCN: flow `i` starts a frame of `bytes` (FCS included) at line tick `start` (never
    /// before the tick its limiter allowed). Its next frame may start once this one's wire
    /// bits have passed at the limiter's rate, at that exact tick, so the rate holds exactly
    /// over any run of frames.
    fn pace(&mut self, i: usize, start: u64, bytes: u64) {
        let per_second = self.line.ticks_per_bit() as u128 * self.line.bits_per_second() as u128;
        let f = &mut self.flows[i];
        let Some(rp) = f.rp.as_mut().filter(|rp| rp.limiting()) else {
            return;
        };
        let bits = LineRate::wire_bits(bytes) as u128;
        let gap = (bits * per_second).div_ceil(rp.rate_bps() as u128) as u64;
        f.ready_ticks = start + gap;
        rp.on_sent(bytes);
    }

    /// The PFC class of ACKs: mice with `mice_bytes`, else 0.
    fn ack_class(&self) -> u8 {
        if self.config.mice_bytes.is_some() {
            MICE_PFC_CLASS
        } else {
            0
        }
    }

    /// The PFC class of flow `i`'s next data frame.
    fn data_class(&self, i: usize) -> u8 {
        match self.config.mice_bytes {
            Some(x) if self.flows[i].ipv4_bytes_sent < x => MICE_PFC_CLASS,
            _ => 0,
        }
    }

    /// Whether PFC holds class `class` in cycle `now`.
    fn class_paused(&self, class: u8, now: Cycle) -> bool {
        self.pfc.is_paused(class, now)
    }

    /// The DSCP frames of PFC class `class` carry: [`MICE_DSCP`] for mice, else 0.
    fn dscp_of(&self, class: u8) -> u8 {
        if self.config.mice_bytes.is_some() && class == MICE_PFC_CLASS {
            MICE_DSCP
        } else {
            0
        }
    }

    /// The retransmission timer of flow `flow_id` (SRTT, RTTVAR, RTO), once it has started.
    pub fn rto_estimator(&self, flow_id: u32) -> Option<RtoEstimator> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .map(|f| f.rto)
    }

    /// The cycles flow `flow_id`'s last fast recovery started and ended (if it has).
    pub fn last_recovery(&self, flow_id: u32) -> Option<(Cycle, Option<Cycle>)> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .and_then(|f| f.last_recovery)
    }

    /// The DCTCP state of the flow with `id`, if it runs DCTCP.
    pub fn dctcp(&self, flow_id: u32) -> Option<Dctcp> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .and_then(|f| f.dctcp)
    }

    fn on_data(&mut self, now: Cycle, flow_id: u32, from: Peer, seq: u64, len: u64, ce: bool) {
        let r = self.receiving.entry(flow_id).or_default();
        r.arrivals.push(seq / self.config.mss);
        let prior_rcv_nxt = r.rcv_nxt;
        let d = r.on_segment(seq, seq + len);
        if d.duplicate {
            self.duplicate_segments += 1;
        }
        self.data_bytes_received += d.delivered;
        if ce {
            self.marked_segments += 1;
        }
        let mut ece = ce;
        if self.config.ack_every > 1 {
            let plan = r.plan_ack(d, ce, self.ecn, self.config.ack_every);
            if plan.now.is_some() {
                if let Some(due) = r.delayed_ack_due.take() {
                    self.delayed_acks.remove(&(due, flow_id));
                }
            }
            if let Some(prior_ece) = plan.prior {
                // The data before this segment, with the CE state it arrived in.
                self.acks.push_back(AckToSend {
                    flow_id,
                    to: from,
                    ack: prior_rcv_nxt,
                    ece: prior_ece,
                    sack: [(0, 0); MAX_SACK_BLOCKS],
                    sacks: 0,
                });
            }
            match plan.now {
                Some(e) => ece = e,
                None => {
                    // The timer runs from the first segment the ACK will cover.
                    if r.delayed_ack_due.is_none() {
                        let due = now + self.config.delayed_ack;
                        r.delayed_ack_due = Some(due);
                        self.delayed_acks.insert((due, flow_id), from);
                    }
                    return;
                }
            }
        }
        let mut sack = [(0, 0); MAX_SACK_BLOCKS];
        let mut sacks = 0;
        if self.config.recovery == Recovery::Sack {
            for (k, b) in r.sack_blocks(seq).into_iter().enumerate() {
                sack[k] = b;
                sacks += 1;
            }
        }
        self.acks.push_back(AckToSend {
            flow_id,
            to: from,
            ack: r.rcv_nxt,
            ece,
            sack,
            sacks,
        });
    }

    /// Sends the delayed ACKs whose timer has run out: each ACKs its flow's `rcv_nxt`, with
    /// the CE state of the data it covers.
    fn send_due_acks(&mut self, now: Cycle) {
        while let Some((&(due, flow_id), &to)) = self.delayed_acks.first_key_value() {
            if due > now {
                break;
            }
            self.delayed_acks.pop_first();
            let r = self
                .receiving
                .get_mut(&flow_id)
                .expect("a delayed ACK's flow is received");
            r.delayed_ack_due = None;
            r.unacked_segments = 0;
            self.acks.push_back(AckToSend {
                flow_id,
                to,
                ack: r.rcv_nxt,
                ece: r.ce_state,
                sack: [(0, 0); MAX_SACK_BLOCKS],
                sacks: 0,
            });
        }
    }

    fn on_ack(&mut self, now: Cycle, flow_id: u32, ack: u64, ece: bool, sacks: &[(u64, u64)]) {
        let flows = &mut self.flows;
        let Some(f) = self
            .open
            .iter()
            .copied()
            .find(|&i| flows[i].spec.id == flow_id)
            .map(|i| &mut flows[i])
        else {
            return; // an ACK of a finished flow
        };
        let effect = f.on_ack(now, ack, ece, sacks);
        if effect.finished {
            self.finished_since_prune = true;
            let q = f.queue as usize;
            self.queue_used[q] -= 1;
        } else if let Some(t) = f.rto_at {
            self.timers_from = self.timers_from.min(t);
        }
    }

    /// Starts due flows and fires due timers.
    fn housekeeping(&mut self, now: Cycle) {
        self.send_due_acks(now);
        while self.pending.last().is_some_and(|p| p.start <= now) {
            let spec = self.pending.pop().expect("checked");
            let queue = self.take_queue(spec.id);
            self.open.push(self.flows.len());
            let c = &self.config;
            self.flows.push(SendFlow {
                spec,
                to: self.peers[spec.dst],
                mss: c.mss,
                snd_una: 0,
                snd_nxt: 0,
                high: 0,
                fixed_window: c.window_bytes,
                // Reno runs the same window, and never sees a mark (its segments are Not-ECT).
                dctcp: matches!(c.congestion, Congestion::Dctcp | Congestion::Reno)
                    .then(|| Dctcp::new(c.window_bytes, c.mss)),
                rto: RtoEstimator::new(c.rto, c.min_rto, c.max_rto),
                rto_at: None,
                finish: None,
                timeouts: 0,
                retransmitted_segments: 0,
                recovery: c.recovery,
                dupacks: 0,
                in_recovery: None,
                fast_recoveries: 0,
                last_recovery: None,
                recover: None,
                retx_next: None,
                inflation: 0,
                high_rxt: 0,
                scoreboard: Scoreboard::default(),
                timing: None,
                queue,
                rp: None,
                ready_ticks: 0,
                bytes_sent: 0,
                ipv4_bytes_sent: 0,
            });
        }
        if now >= self.timers_from {
            let mut next = Cycle::MAX;
            for &i in &self.open {
                let f = &mut self.flows[i];
                if let Some(rp) = f.rp.as_mut() {
                    rp.on_time(now);
                    next = next.min(rp.timer_at().unwrap_or(Cycle::MAX));
                }
                if f.rto_at.is_some_and(|t| t <= now) {
                    f.on_timeout();
                }
                next = next.min(f.rto_at.unwrap_or(Cycle::MAX));
            }
            self.timers_from = next;
        }
        if std::mem::take(&mut self.finished_since_prune) {
            let flows = &self.flows;
            self.open.retain(|&i| flows[i].finish.is_none());
        }
    }

    /// Whether flow `i` may start a frame in cycle `now` (PFC, BFC pause and QCN pacing).
    fn may_send(&self, i: usize, now: Cycle) -> bool {
        if self.class_paused(self.data_class(i), now) {
            return false;
        }
        let f = &self.flows[i];
        if self.config.honour_bfc_pause && self.bfc_paused.is_paused(f.queue as usize) {
            return false;
        }
        f.limiter().is_none() || f.ready_ticks < self.line.cycle_to_ticks(now + 1)
    }

    /// Builds the next frame to send, if any, with the index of the flow whose data it is.
    fn next_frame(
        &mut self,
        now: Cycle,
        pool: &mut PacketPool,
    ) -> Option<(PacketHandle, Option<usize>)> {
        if !self.class_paused(0, now) {
            if let Some(pkt) = self.bounced.pop_front() {
                self.resent_bounced += 1;
                return Some((pkt, None));
            }
        }
        let ack_class = self.ack_class();
        if !self.class_paused(ack_class, now) {
            if let Some(a) = self.acks.pop_front() {
                let flags = Tcp::ACK | if a.ece { Tcp::ECE } else { 0 };
                let dscp = self.dscp_of(ack_class);
                let sacks = &a.sack[..a.sacks as usize];
                let pkt = self.build(pool, a.to, a.flow_id, 0, a.ack, flags, 0, false, 0, dscp);
                if !sacks.is_empty() {
                    self.add_sack_option(pool, pkt, sacks);
                }
                return Some((pkt, None));
            }
        }
        // Round-robin over the open flows, from the one after the flow served last.
        let n = self.open.len();
        let first = self.open.partition_point(|&i| i < self.rr);
        for k in 0..n {
            let i = self.open[(first + k) % n];
            if !self.may_send(i, now) {
                continue;
            }
            let Some((seq, len)) = self.flows[i].next_segment() else {
                continue;
            };
            self.rr = i + 1;
            let dscp = self.dscp_of(self.data_class(i));
            let f = &mut self.flows[i];
            f.ipv4_bytes_sent += ipv4_bytes(len);
            let (to, id) = (f.to, f.spec.id);
            // The flow's queue index rides in the IPv4 identification field only with BFC,
            // so that runs without it keep their frames byte for byte.
            let queue = if self.config.honour_bfc_pause {
                f.queue
            } else {
                0
            };
            f.on_sent(seq, len, now);
            if let Some(t) = f.rto_at {
                self.timers_from = self.timers_from.min(t);
            }
            // PIAS's tag, when its hosts tag; else the mice/elephant class's DSCP (or 0).
            let dscp = self.config.mlfq.map_or(dscp, |m| m.level(f.bytes_sent));
            f.bytes_sent += len;
            let ecn = self.ecn;
            let pkt = self.build(
                pool,
                to,
                id,
                seq,
                0,
                Tcp::ACK,
                len as usize,
                ecn,
                queue,
                dscp,
            );
            return Some((pkt, Some(i)));
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &mut self,
        pool: &mut PacketPool,
        to: Peer,
        flow_id: u32,
        seq: u64,
        ack: u64,
        flags: u16,
        data_len: usize,
        ect: bool,
        ident: u16,
        dscp: u8,
    ) -> PacketHandle {
        self.scratch.clear();
        self.scratch.extend_from_slice(&flow_id.to_be_bytes());
        self.scratch.resize(FLOW_ID_LEN + data_len, 0);
        let ep = Endpoints {
            src_mac: self.me.mac,
            dst_mac: to.mac,
            src_ip: self.me.ip,
            dst_ip: to.ip,
            src_port: 10_000 + (flow_id % 50_000) as u16,
            dst_port: 80,
        };
        let pkt = pool.alloc();
        let buf = pool.bytes_mut(pkt);
        headers::build_tcp_frame(
            buf,
            &ep,
            64,
            ident,
            seq as u32,
            ack as u32,
            flags,
            u16::MAX,
            &self.scratch,
            60,
        );
        if ect || dscp != 0 {
            buf[TOS_OFFSET] |= dscp << 2;
            if ect {
                buf[TOS_OFFSET] |= ECT0;
            }
            let ip = &mut buf[14..34];
            let c = headers::ipv4_header_checksum(ip);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
        }
        pkt
    }
}

impl TransportHost {
    /// Puts a SACK option (RFC 2018) with `blocks` into the TCP header of the ACK `pkt`:
    /// the option bytes go between the 20-byte TCP header and the flow id, the data offset
    /// and the IPv4 total length grow by their length, and both checksums are redone.
    fn add_sack_option(&mut self, pool: &mut PacketPool, pkt: PacketHandle, blocks: &[(u64, u64)]) {
        let mut opts = Vec::with_capacity(4 + 8 * blocks.len());
        tcp::sack_option(blocks, &mut opts);
        let buf = pool.bytes_mut(pkt);
        let ip_at = headers::Ethernet::LEN;
        let tcp_at = ip_at + headers::Ipv4::MIN_LEN;
        let total = u16::from_be_bytes([buf[ip_at + 2], buf[ip_at + 3]]) as usize;
        let end = ip_at + total;
        let mut frame: Vec<u8> = buf[..end].to_vec();
        frame.splice(
            tcp_at + headers::Tcp::MIN_LEN..tcp_at + headers::Tcp::MIN_LEN,
            opts.iter().copied(),
        );
        let new_total = (total + opts.len()) as u16;
        frame[ip_at + 2..ip_at + 4].copy_from_slice(&new_total.to_be_bytes());
        frame[ip_at + 10..ip_at + 12].copy_from_slice(&[0, 0]);
        let c = headers::ipv4_header_checksum(&frame[ip_at..tcp_at]);
        frame[ip_at + 10..ip_at + 12].copy_from_slice(&c.to_be_bytes());
        let offset = (headers::Tcp::MIN_LEN + opts.len()) / 4;
        frame[tcp_at + 12] = (frame[tcp_at + 12] & 0x0f) | ((offset as u8) << 4);
        frame[tcp_at + 16..tcp_at + 18].copy_from_slice(&[0, 0]);
        let c = headers::l4_checksum(
            self.me.ip,
            dst_ip(&frame),
            headers::IPPROTO_TCP,
            &frame[tcp_at..],
        );
        frame[tcp_at + 16..tcp_at + 18].copy_from_slice(&c.to_be_bytes());
        if frame.len() < 60 {
            frame.resize(60, 0);
        }
        buf.clear();
        buf.extend_from_slice(&frame);
    }
}

/// The IPv4 destination of an Ethernet/IPv4 frame.
fn dst_ip(frame: &[u8]) -> Ipv4Addr {
    let at = headers::Ethernet::LEN + 16;
    Ipv4Addr::new(frame[at], frame[at + 1], frame[at + 2], frame[at + 3])
}

impl Node for TransportHost {
    fn name(&self) -> &str {
        &self.name
    }

    fn port_count(&self) -> usize {
        1
    }

    fn port_bps(&self, _port: usize) -> u64 {
        self.line.bits_per_second()
    }

    fn receive(&mut self, now: Cycle, _port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        self.frames_received += 1;
        let bytes = pool.bytes(pkt);
        if self.config.honour_pfc {
            if let Some(frame) = PfcFrame::parse(bytes) {
                pool.free(pkt);
                return self.pfc.apply(now, &frame, &self.line);
            }
        }
        if let Some(params) = self.config.qcn.filter(|_| Cnm::is_cnm(bytes)) {
            match Cnm::parse(bytes) {
                Ok(cnm) => self.on_cnm(now, &cnm, params),
                Err(_) => self.foreign += 1,
            }
            pool.free(pkt);
            return;
        }
        if self.config.honour_bfc_pause && BfcPause::is_bfc(bytes) {
            // The receiver replaces its bitmap with each frame (BFC's ns-3 NIC). A malformed
            // one changes nothing and is counted as foreign.
            match BfcPause::parse(bytes) {
                Ok(b) => {
                    self.bfc_paused = b;
                    self.bfc_frames += 1;
                }
                Err(_) => self.foreign += 1,
            }
            pool.free(pkt);
            return;
        }
        // PABO: a bounced frame carries a shim between Ethernet and IPv4; read past it.
        let unshimmed = Shim::strip(bytes);
        let (shim, bytes) = match &unshimmed {
            Some((shim, b)) => (Some(*shim), b.as_slice()),
            None => (None, bytes),
        };
        let bounced = headers::parse_frame(bytes)
            .ok()
            .and_then(|p| p.ipv4)
            .is_some_and(|ip| ip.src == self.me.ip && ip.dst != self.me.ip);
        if bounced {
            if self.config.resend_bounced {
                self.bounced.push_back(pkt);
            } else {
                self.foreign += 1;
                pool.free(pkt);
            }
            return;
        }
        let parsed = headers::parse_frame(bytes).ok().and_then(|p| {
            let ip = p.ipv4?;
            let tcp = p.tcp?;
            let id = bytes.get(p.payload_offset..p.payload_offset + FLOW_ID_LEN)?;
            let flow_id = u32::from_be_bytes(id.try_into().ok()?);
            // The IP total length says where the data ends (frames may be padded).
            let ip_end = headers::Ethernet::LEN + ip.total_len as usize;
            let data_len = ip_end.checked_sub(p.payload_offset + FLOW_ID_LEN)?;
            let from = Peer {
                ip: ip.src,
                mac: p.ethernet.src,
            };
            let opts_at = headers::Ethernet::LEN + ip.header_len() + headers::Tcp::MIN_LEN;
            let sacks = bytes
                .get(opts_at..p.payload_offset)
                .map(tcp::parse_sack)
                .unwrap_or_default();
            Some((
                flow_id,
                from,
                tcp,
                data_len as u64,
                ip.tos & CE == CE,
                sacks,
            ))
        });
        pool.free(pkt);
        match parsed {
            Some((flow_id, from, tcp, len, ce, _)) if len > 0 => {
                if let Some(shim) = shim {
                    self.pabo.add(shim);
                }
                self.on_data(now, flow_id, from, tcp.seq as u64, len, ce)
            }
            Some((flow_id, _, tcp, _, _, sacks)) if tcp.flags & Tcp::ACK != 0 => {
                // A Reno sender did not ask for ECN (RFC 3168 §6.1.1), so an ECE means
                // nothing to it.
                let ece = tcp.flags & Tcp::ECE != 0 && self.config.congestion != Congestion::Reno;
                self.on_ack(now, flow_id, tcp.ack as u64, ece, &sacks)
            }
            _ => self.foreign += 1,
        }
    }

    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        while let Some(&(at, pkt)) = self.on_nic.front() {
            if at > now {
                break;
            }
            out.push(Sent { port: 0, pkt });
            self.on_nic.pop_front();
        }
        self.housekeeping(now);
        // PFC holds the classes it paused (`next_frame` skips their frames); frames already
        // on the wire finish.
        // The NIC is exact to the line tick, as the chip's MACs are: it takes the next frame
        // in the cycle its line frees and starts it at the tick the previous frame's last bit
        // left (or at the start of this cycle if the line was idle before), so back-to-back
        // frames lose no fraction of a cycle between them.
        if self.nic_free_ticks >= self.line.cycle_to_ticks(now + 1) {
            return;
        }
        if let Some((pkt, flow)) = self.next_frame(now, pool) {
            let mut start = self.line.cycle_to_ticks(now).max(self.nic_free_ticks);
            let bytes = pool.frame_bytes(pkt);
            if let Some(i) = flow {
                if self.flows[i].limiter().is_some() {
                    start = start.max(self.flows[i].ready_ticks);
                }
                self.pace(i, start, bytes);
            }
            let end = start + self.line.serialization_ticks(bytes);
            self.nic_free_ticks = end;
            self.on_nic
                .push_back((self.line.ticks_to_cycle_ceil(end), pkt));
            self.frames_sent += 1;
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        // The frame finishing first, and the cycle the line frees (when the NIC may start the
        // next frame).
        let frees = self.nic_free_ticks / self.line.ticks_per_cycle();
        let nic = self.on_nic.front().map(|&(t, _)| t);
        let frees = (!self.on_nic.is_empty() && frees > now).then_some(frees);
        let start = self.pending.last().map(|p| p.start);
        // A lower bound: a visit there with nothing due only recomputes it.
        let timers = (self.timers_from != Cycle::MAX).then_some(self.timers_from);
        let pause_ends = self.pfc.next_end(now);
        let delayed_ack = self.delayed_acks.first_key_value().map(|(&(t, _), _)| t);
        // QCN: limiter timers, and the end of the pacing gap of a flow with data to send.
        let next_ticks = self.line.cycle_to_ticks(now + 1);
        let qcn = self
            .open
            .iter()
            .map(|&i| &self.flows[i])
            .filter_map(|f| {
                let rp = f.limiter()?;
                let paced = (f.ready_ticks >= next_ticks && f.next_segment().is_some())
                    .then(|| f.ready_ticks / self.line.ticks_per_cycle());
                rp.timer_at().into_iter().chain(paced).min()
            })
            .min();
        [nic, frees, start, timers, pause_ends, qcn, delayed_ack]
            .into_iter()
            .flatten()
            .map(|t| t.max(now + 1))
            .min()
    }
}

/// PABO: what the shims of the data frames a host received said (frames without a shim,
/// never bounced, are not counted here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PaboArrivals {
    /// Data frames that arrived with a shim.
    pub frames: u64,
    /// The sum of their bounce counts `n_p`.
    pub bounces: u64,
    /// The largest `n_p` and `max_hop` among them.
    pub max_n_p: u8,
    pub max_hop: u8,
}

impl PaboArrivals {
    fn add(&mut self, shim: Shim) {
        self.frames += 1;
        self.bounces += shim.n_p as u64;
        self.max_n_p = self.max_n_p.max(shim.n_p);
        self.max_hop = self.max_hop.max(shim.max_hop);
    }

    /// Adds another host's counts.
    pub fn merge(&mut self, o: PaboArrivals) {
        self.frames += o.frames;
        self.bounces += o.bounces;
        self.max_n_p = self.max_n_p.max(o.max_n_p);
        self.max_hop = self.max_hop.max(o.max_hop);
    }
}

#[cfg(test)]
mod tests;
