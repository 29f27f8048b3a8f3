//! A host with a reliable windowed transport over real TCP/IPv4 frames, as a [`Node`].
//!
//! Every flow is a byte stream cut into segments of at most `mss` payload bytes. The first
//! 4 bytes of every segment's TCP payload carry the flow's id (unique in a run), so that the
//! receiver keys its state on it rather than on ports that could repeat; the `mss` counts
//! data bytes after them. Sequence numbers are byte offsets in the flow (flows are limited
//! to 2^32 - 1 bytes).
//!
//! - Sender: at most `cwnd` bytes in flight; cumulative ACKs advance it; when no ACK has
//!   advanced it for `rto` cycles it goes back to the first unacknowledged byte and sends
//!   again (go-back-N), doubling the timeout up to `max_rto`. The NIC sends one frame at a
//!   time at line rate, exact to the line tick (each frame starts at the tick the previous
//!   one's last bit left, as the chip's MACs do): ACKs first, then the open flows
//!   round-robin.
//! - Receiver: keeps segments that arrive ahead of the next expected byte and ACKs every data
//!   segment with the next byte it expects. With ECN on it echoes a CE mark on the segment
//!   as ECE on its ACK (DCTCP's per-packet echo).
//! - Congestion control: [`Congestion::Fixed`] keeps the window constant;
//!   [`Congestion::Dctcp`] runs DCTCP (see [`Dctcp`]).
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

use crate::node::{Node, Sent};
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
}

/// Transport settings shared by all flows of a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransportConfig {
    /// Data bytes per full segment.
    pub mss: u64,
    /// The fixed window, or DCTCP's initial window, in bytes.
    pub window_bytes: u64,
    /// Retransmission timeout, cycles.
    pub rto: Cycle,
    /// The largest the timeout grows to by doubling.
    pub max_rto: Cycle,
    pub congestion: Congestion,
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
    /// PIAS's host side: with thresholds, every data segment carries in its DSCP the
    /// priority level its flow has reached by the bytes it has sent. `None` (the default)
    /// leaves DSCP 0, so runs without it keep their frames byte for byte.
    pub mlfq: Option<MlfqTags>,
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

/// Per-flow queues of a NIC (BFC's ns-3 `fCnt`). Index 0 is kept for ACKs, which BFC sends in
/// its control queue and never pauses; flows take the lowest free index in 1..2048.
pub const NIC_FLOW_QUEUES: u16 = 2048;

impl TransportConfig {
    /// 1000-byte segments (BFC's), a window of `window_bytes`, fixed congestion window.
    pub fn fixed(window_bytes: u64, rto: Cycle) -> TransportConfig {
        TransportConfig {
            mss: 1000,
            window_bytes,
            rto,
            max_rto: rto * 64,
            congestion: Congestion::Fixed,
            honour_pfc: false,
            resend_bounced: false,
            honour_bfc_pause: false,
            qcn: None,
            mlfq: None,
            mice_bytes: None,
        }
    }

    /// Checks the settings, naming the host in the error.
    pub fn validate(&self, host: &str) -> Result<(), String> {
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
        if let Some(m) = &self.mlfq {
            m.validate().map_err(|e| format!("{host}: {e}"))?;
        }
        Ok(())
    }
}

/// DCTCP's sender law (Alizadeh et al., SIGCOMM'10; integer form as in Linux
/// `tcp_dctcp.c`): alpha in 1/1024 units, `alpha <- alpha - alpha/16 + F/16` once per
/// window of data where F is the fraction of its bytes acknowledged with ECE; in a window
/// that saw marks the window is cut once, `cwnd <- cwnd (1 - alpha/2)`. Without marks the
/// window grows as TCP's (slow start below `ssthresh`, then one segment per window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dctcp {
    /// Alpha in 1/1024 units (0..=1024).
    pub alpha: u32,
    pub cwnd: u64,
    pub ssthresh: u64,
    mss: u64,
    max_cwnd: u64,
    /// The sequence number that ends the current observation window.
    window_end: u64,
    acked: u64,
    marked: u64,
    /// Bytes acknowledged towards the next one-segment increase in congestion avoidance.
    ca_credit: u64,
    /// Bytes already counted (as delivered and marked) from duplicate ACKs with ECE, that a
    /// later cumulative ACK will cover again: that ACK counts only the bytes beyond these,
    /// so every byte enters `acked` once.
    counted_ahead: u64,
}

/// DCTCP's gain g = 1/2^G_SHIFT = 1/16.
pub const DCTCP_G_SHIFT: u32 = 4;
/// Alpha's fixed-point one.
pub const DCTCP_ALPHA_ONE: u32 = 1024;

impl Dctcp {
    pub fn new(initial_cwnd: u64, mss: u64) -> Dctcp {
        Dctcp {
            // Linux starts alpha at its maximum so that the first marks cut hard.
            alpha: DCTCP_ALPHA_ONE,
            cwnd: initial_cwnd,
            ssthresh: u64::MAX,
            mss,
            max_cwnd: u64::MAX,
            window_end: 0,
            acked: 0,
            marked: 0,
            ca_credit: 0,
            counted_ahead: 0,
        }
    }

    /// An ACK acknowledged `acked` new bytes (with ECE if `ece`); `snd_una` is the first
    /// unacknowledged byte after it and `snd_nxt` the next byte to send.
    pub fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        // Bytes a duplicate ACK already counted are not counted again.
        let already = self.counted_ahead.min(acked);
        self.counted_ahead -= already;
        let fresh = acked - already;
        self.acked += fresh;
        if ece {
            self.marked += fresh;
        }
        if !ece {
            if self.cwnd < self.ssthresh {
                self.cwnd += acked;
            } else {
                self.ca_credit += acked;
                while self.ca_credit >= self.cwnd {
                    self.ca_credit -= self.cwnd;
                    self.cwnd += self.mss;
                }
            }
            self.cwnd = self.cwnd.min(self.max_cwnd);
        }
        if snd_una >= self.window_end {
            self.end_window(snd_nxt);
        }
    }

    /// A duplicate ACK with ECE: a segment beyond the first missing byte arrived CE-marked.
    /// Real senders react to ECE on any ACK (RFC 3168 §6.1.2), and Linux DCTCP counts CE on
    /// every delivered segment, SACKed ones included (`delivered_ce`). Without SACK the
    /// sender cannot tell which segment it was, so it counts one segment, `mss` bytes,
    /// delivered and marked, but never more than the `beyond_una` bytes sent beyond the
    /// first missing byte that are not counted yet. The cumulative ACK that later covers
    /// those bytes skips them (`counted_ahead`).
    pub fn on_duplicate_ece(&mut self, beyond_una: u64) {
        let room = beyond_una.saturating_sub(self.counted_ahead);
        let bytes = self.mss.min(room);
        self.counted_ahead += bytes;
        self.acked += bytes;
        self.marked += bytes;
    }

    /// Closes an observation window: updates alpha and, if the window saw marks, cuts.
    fn end_window(&mut self, snd_nxt: u64) {
        let fraction = (self.marked << 10).checked_div(self.acked).unwrap_or(0) as u32;
        self.alpha = self.alpha - (self.alpha >> DCTCP_G_SHIFT) + (fraction >> DCTCP_G_SHIFT);
        self.alpha = self.alpha.min(DCTCP_ALPHA_ONE);
        if self.marked > 0 {
            let cut = self.cwnd * self.alpha as u64 / (2 * DCTCP_ALPHA_ONE as u64);
            self.cwnd = (self.cwnd - cut).max(self.mss);
            self.ssthresh = self.cwnd;
            self.ca_credit = 0;
        }
        self.acked = 0;
        self.marked = 0;
        self.window_end = snd_nxt;
    }

    /// A retransmission timeout: back to one segment.
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        self.cwnd = self.mss;
        self.ca_credit = 0;
    }
}

/// Another host a flow can go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
}

/// A flow's state at the sender.
#[derive(Clone, Debug)]
struct SendFlow {
    spec: FlowSpec,
    to: Peer,
    snd_una: u64,
    snd_nxt: u64,
    /// Highest byte ever sent, to count retransmitted bytes.
    high: u64,
    fixed_window: u64,
    dctcp: Option<Dctcp>,
    rto: Cycle,
    rto_at: Option<Cycle>,
    finish: Option<Cycle>,
    timeouts: u64,
    retransmitted_segments: u64,
    /// The NIC queue index of this flow (1..NIC_FLOW_QUEUES), for BFC.
    queue: u16,
    /// QCN: the reaction point, from the first CNM about this flow on.
    rp: Option<ReactionPoint>,
    /// QCN: no frame of this flow starts before this line tick while its limiter holds it.
    ready_ticks: u64,
    /// Payload bytes sent so far, retransmissions included (PIAS's tag).
    bytes_sent: u64,
    /// IPv4 bytes of every data frame sent so far (retransmissions included): the
    /// mice/elephant class of the next one (`mice_bytes`).
    ipv4_bytes_sent: u64,
}

impl SendFlow {
    /// The reaction point, while it holds the flow below line rate.
    fn limiter(&self) -> Option<&ReactionPoint> {
        self.rp.as_ref().filter(|rp| rp.limiting())
    }

    fn window(&self) -> u64 {
        self.dctcp.map_or(self.fixed_window, |d| d.cwnd)
    }

    /// Payload bytes of the next segment, if the window lets it go.
    fn next_segment(&self, mss: u64) -> Option<u64> {
        if self.finish.is_some() || self.snd_nxt >= self.spec.size_bytes {
            return None;
        }
        let len = mss.min(self.spec.size_bytes - self.snd_nxt);
        let in_flight = self.snd_nxt - self.snd_una;
        (in_flight == 0 || in_flight + len <= self.window()).then_some(len)
    }
}

/// A flow's state at the receiver.
#[derive(Clone, Debug, Default)]
struct RecvFlow {
    rcv_nxt: u64,
    /// Segments received beyond `rcv_nxt`: start to end.
    ahead: BTreeMap<u64, u64>,
    /// Segment numbers (seq / mss) in arrival order, for reordering metrics.
    arrivals: Vec<u64>,
}

/// One flow's outcome at its sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderOutcome {
    pub spec: FlowSpec,
    pub finish: Option<Cycle>,
    pub timeouts: u64,
    pub retransmitted_segments: u64,
}

/// A frame waiting for the NIC.
#[derive(Clone, Copy, Debug)]
struct AckToSend {
    flow_id: u32,
    to: Peer,
    ack: u64,
    ece: bool,
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
    /// PFC, per class: no new frame of the class starts before this cycle.
    paused_until: [Cycle; 8],
    pfc_frames: u64,
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
            on_nic: VecDeque::with_capacity(2),
            nic_free_ticks: 0,
            frames_sent: 0,
            frames_received: 0,
            data_bytes_received: 0,
            duplicate_segments: 0,
            marked_segments: 0,
            foreign: 0,
            paused_until: [0; 8],
            pfc_frames: 0,
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
            })
            .chain(self.pending.iter().rev().map(|&spec| SenderOutcome {
                spec,
                finish: None,
                timeouts: 0,
                retransmitted_segments: 0,
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
        self.pfc_frames
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

    /// Applies a PFC frame received in cycle `now`: pauses each class it enables for that
    /// class's quanta of 512 bit times at the NIC's rate, or resumes it for quanta 0.
    fn on_pfc(&mut self, now: Cycle, frame: PfcFrame) {
        self.pfc_frames += 1;
        for class in 0..8 {
            if !frame.class_enable[class] {
                continue;
            }
            let quanta = frame.quanta[class] as u64;
            self.paused_until[class] = if quanta == 0 {
                now
            } else {
                let ticks =
                    self.line.cycle_to_ticks(now) + quanta * 512 * self.line.ticks_per_bit();
                self.line.ticks_to_cycle_ceil(ticks)
            };
        }
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
        now < self.paused_until[class as usize]
    }

    /// The DSCP frames of PFC class `class` carry: [`MICE_DSCP`] for mice, else 0.
    fn dscp_of(&self, class: u8) -> u8 {
        if self.config.mice_bytes.is_some() && class == MICE_PFC_CLASS {
            MICE_DSCP
        } else {
            0
        }
    }

    /// The DCTCP state of the flow with `id`, if it runs DCTCP.
    pub fn dctcp(&self, flow_id: u32) -> Option<Dctcp> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .and_then(|f| f.dctcp)
    }

    fn on_data(&mut self, flow_id: u32, from: Peer, seq: u64, len: u64, ce: bool) {
        let r = self.receiving.entry(flow_id).or_default();
        r.arrivals.push(seq / self.config.mss);
        let end = seq + len;
        if end <= r.rcv_nxt || r.ahead.get(&seq).is_some_and(|&e| e >= end) {
            self.duplicate_segments += 1;
        } else if seq <= r.rcv_nxt {
            self.data_bytes_received += end - r.rcv_nxt;
            r.rcv_nxt = end;
            // Take in the segments that were waiting for this one.
            while let Some((&s, &e)) = r.ahead.first_key_value() {
                if s > r.rcv_nxt {
                    break;
                }
                r.ahead.pop_first();
                if e > r.rcv_nxt {
                    self.data_bytes_received += e - r.rcv_nxt;
                    r.rcv_nxt = e;
                }
            }
        } else {
            r.ahead.insert(seq, end);
        }
        if ce {
            self.marked_segments += 1;
        }
        self.acks.push_back(AckToSend {
            flow_id,
            to: from,
            ack: r.rcv_nxt,
            ece: ce,
        });
    }

    fn on_ack(&mut self, now: Cycle, flow_id: u32, ack: u64, ece: bool) {
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
        if f.finish.is_some() {
            return;
        }
        if ack <= f.snd_una {
            // A duplicate ACK: its ECE still counts (see `Dctcp::on_duplicate_ece`). The
            // segment it reports lies beyond the first missing byte, at most `high`.
            if ece {
                if let Some(d) = f.dctcp.as_mut() {
                    d.on_duplicate_ece(f.high.saturating_sub(f.snd_una + self.config.mss));
                }
            }
            return;
        }
        let acked = ack - f.snd_una;
        f.snd_una = ack;
        f.snd_nxt = f.snd_nxt.max(ack);
        if let Some(d) = f.dctcp.as_mut() {
            d.on_ack(acked, ece, f.snd_una, f.snd_nxt);
        }
        f.rto = self.config.rto;
        if f.snd_una >= f.spec.size_bytes {
            f.finish = Some(now);
            f.rto_at = None;
            self.finished_since_prune = true;
            let q = f.queue as usize;
            self.queue_used[q] -= 1;
        } else {
            f.rto_at = Some(now + f.rto);
            self.timers_from = self.timers_from.min(now + f.rto);
        }
    }

    /// Starts due flows and fires due timers.
    fn housekeeping(&mut self, now: Cycle) {
        while self.pending.last().is_some_and(|p| p.start <= now) {
            let spec = self.pending.pop().expect("checked");
            let queue = self.take_queue(spec.id);
            self.open.push(self.flows.len());
            self.flows.push(SendFlow {
                spec,
                to: self.peers[spec.dst],
                snd_una: 0,
                snd_nxt: 0,
                high: 0,
                fixed_window: self.config.window_bytes,
                dctcp: (self.config.congestion == Congestion::Dctcp)
                    .then(|| Dctcp::new(self.config.window_bytes, self.config.mss)),
                rto: self.config.rto,
                rto_at: None,
                finish: None,
                timeouts: 0,
                retransmitted_segments: 0,
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
                    f.timeouts += 1;
                    f.snd_nxt = f.snd_una;
                    f.rto = (f.rto * 2).min(self.config.max_rto);
                    f.rto_at = None;
                    if let Some(d) = f.dctcp.as_mut() {
                        d.on_timeout();
                    }
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
                let pkt = self.build(pool, a.to, a.flow_id, 0, a.ack, flags, 0, false, 0, dscp);
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
            let Some(len) = self.flows[i].next_segment(self.config.mss) else {
                continue;
            };
            self.rr = i + 1;
            let dscp = self.dscp_of(self.data_class(i));
            let f = &mut self.flows[i];
            f.ipv4_bytes_sent += ipv4_bytes(len);
            let (to, id, seq) = (f.to, f.spec.id, f.snd_nxt);
            // The flow's queue index rides in the IPv4 identification field only with BFC,
            // so that runs without it keep their frames byte for byte.
            let queue = if self.config.honour_bfc_pause {
                f.queue
            } else {
                0
            };
            if seq < f.high {
                f.retransmitted_segments += 1;
            }
            f.snd_nxt += len;
            f.high = f.high.max(f.snd_nxt);
            if f.rto_at.is_none() {
                f.rto_at = Some(now + f.rto);
                self.timers_from = self.timers_from.min(now + f.rto);
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
                return self.on_pfc(now, frame);
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
            Some((flow_id, from, tcp, data_len as u64, ip.tos & CE == CE))
        });
        pool.free(pkt);
        match parsed {
            Some((flow_id, from, tcp, len, ce)) if len > 0 => {
                if let Some(shim) = shim {
                    self.pabo.add(shim);
                }
                self.on_data(flow_id, from, tcp.seq as u64, len, ce)
            }
            Some((flow_id, _, tcp, _, _)) if tcp.flags & Tcp::ACK != 0 => {
                self.on_ack(now, flow_id, tcp.ack as u64, tcp.flags & Tcp::ECE != 0)
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
        let pause_ends = self.paused_until.iter().copied().filter(|&t| t > now).min();
        // QCN: limiter timers, and the end of the pacing gap of a flow with data to send.
        let next_ticks = self.line.cycle_to_ticks(now + 1);
        let qcn = self
            .open
            .iter()
            .map(|&i| &self.flows[i])
            .filter_map(|f| {
                let rp = f.limiter()?;
                let paced = (f.ready_ticks >= next_ticks
                    && f.next_segment(self.config.mss).is_some())
                .then(|| f.ready_ticks / self.line.ticks_per_cycle());
                rp.timer_at().into_iter().chain(paced).min()
            })
            .min();
        [nic, frees, start, timers, pause_ends, qcn]
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
mod tests {
    use super::*;
    use crate::metrics::Framing;
    use crate::network::{Network, NodeId, Stepping};

    const G100: u64 = 100_000_000_000;

    /// A two-port wire tap between hosts: forwards each frame in the cycle it arrives,
    /// dropping (and counting) every `drop_every`-th data frame and every
    /// `drop_ack_every`-th ACK, and marking CE on data frames if `mark`.
    struct Tap {
        drop_every: u64,
        drop_ack_every: u64,
        mark: bool,
        /// Send every `bounce_every`-th data frame back to its sender instead (0: never).
        bounce_every: u64,
        /// Hold the first data frame until the second has passed, and mark the second CE:
        /// the receiver then gets a CE-marked segment out of order.
        overtake_first: bool,
        held: Option<PacketHandle>,
        seen: [u64; 2],
        dropped: u64,
        queue: Vec<Sent>,
    }

    impl Node for Tap {
        fn name(&self) -> &str {
            "tap"
        }
        fn port_count(&self) -> usize {
            2
        }
        fn port_bps(&self, _port: usize) -> u64 {
            G100
        }
        fn receive(&mut self, _now: Cycle, port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
            self.seen[port] += 1;
            let every = if port == 0 {
                self.drop_every
            } else {
                self.drop_ack_every
            };
            if every > 0 && self.seen[port].is_multiple_of(every) {
                self.dropped += 1;
                pool.free(pkt);
                return;
            }
            if port == 0 && self.bounce_every > 0 && self.seen[0].is_multiple_of(self.bounce_every)
            {
                self.queue.push(Sent { port: 0, pkt });
                return;
            }
            if port == 0 && self.overtake_first && self.seen[0] <= 2 {
                if self.seen[0] == 1 {
                    self.held = Some(pkt);
                    return;
                }
                let b = pool.bytes_mut(pkt);
                b[TOS_OFFSET] |= CE;
                let c = headers::ipv4_header_checksum(&b[14..34]);
                b[24..26].copy_from_slice(&c.to_be_bytes());
                self.queue.push(Sent { port: 1, pkt });
                let first = self.held.take().expect("the first frame is held");
                self.queue.push(Sent {
                    port: 1,
                    pkt: first,
                });
                return;
            }
            if port == 0 && self.mark {
                let b = pool.bytes_mut(pkt);
                b[TOS_OFFSET] |= CE;
                let c = headers::ipv4_header_checksum(&b[14..34]);
                b[24..26].copy_from_slice(&c.to_be_bytes());
            }
            self.queue.push(Sent {
                port: 1 - port,
                pkt,
            });
        }
        fn tick(&mut self, _now: Cycle, _pool: &mut PacketPool, out: &mut Vec<Sent>) {
            out.append(&mut self.queue);
        }
        fn next_event(&self, _now: Cycle) -> Option<Cycle> {
            None
        }
    }

    fn peer(i: u8) -> Peer {
        Peer {
            ip: Ipv4Addr::new(10, 0, 0, i + 1),
            mac: MacAddr([2, 0, 0, 0, 0, i + 1]),
        }
    }

    fn flow(id: u32, start: Cycle, size: u64) -> FlowSpec {
        FlowSpec {
            start,
            id,
            src: 0,
            dst: 1,
            size_bytes: size,
        }
    }

    /// Sender - tap - receiver, each link `delay` cycles.
    fn net(
        stepping: Stepping,
        config: TransportConfig,
        tap: Tap,
        flows: &[FlowSpec],
    ) -> (Network, NodeId, NodeId, NodeId) {
        let clock = Clock::tofino2();
        let peers = vec![peer(0), peer(1)];
        let mut a = TransportHost::new("a", peer(0), clock, G100, config, peers.clone()).unwrap();
        for f in flows {
            a.add_flow(*f).unwrap();
        }
        let b = TransportHost::new("b", peer(1), clock, G100, config, peers).unwrap();
        let mut net = Network::new(stepping);
        let (a, t, b) = (net.add(a), net.add(tap), net.add(b));
        net.link(a, 0, t, 0, 150).unwrap();
        net.link(t, 1, b, 0, 150).unwrap();
        (net, a, t, b)
    }

    fn clean_tap() -> Tap {
        Tap {
            drop_every: 0,
            drop_ack_every: 0,
            mark: false,
            bounce_every: 0,
            overtake_first: false,
            held: None,
            seen: [0; 2],
            dropped: 0,
            queue: Vec::new(),
        }
    }

    #[test]
    fn bounced_frames_are_sent_again_when_asked() {
        // The tap sends every 7th data frame back to its sender.
        let tap = || Tap {
            bounce_every: 7,
            ..clean_tap()
        };
        let resend = TransportConfig {
            resend_bounced: true,
            ..TransportConfig::fixed(20_000, 100_000)
        };
        let run = |stepping, config| {
            let (mut net, a, _, b) = net(stepping, config, tap(), &[flow(0, 10, 100_000)]);
            net.run_until(3_000_000);
            let s = net.node::<TransportHost>(a);
            let out = s.outcomes()[0];
            (
                out.finish,
                out.timeouts,
                s.resent_bounced(),
                s.foreign(),
                net.node::<TransportHost>(b).data_bytes_received(),
                net.live_packets(),
            )
        };
        let (finish, timeouts, resent, foreign, bytes, live) = run(Stepping::Jump, resend);
        assert!(finish.is_some());
        assert_eq!((timeouts, foreign, live), (0, 0, 0));
        // 100 segments; the tap bounces every 7th data frame it sees, re-sent ones included,
        // so the resent count r solves r = floor((100 + r) / 7): 16.
        assert_eq!(resent, 16);
        assert_eq!(resent, (100 + resent) / 7);
        assert_eq!(bytes, 100_000);
        assert_eq!(
            run(Stepping::EveryCycle, resend),
            (finish, timeouts, resent, foreign, bytes, live)
        );
        // Without the option the bounced frames are lost to the sender: timeouts recover them.
        let plain = TransportConfig::fixed(20_000, 100_000);
        let (finish, timeouts, resent, foreign, _, _) = run(Stepping::Jump, plain);
        assert!(finish.is_some());
        assert_eq!(resent, 0);
        assert!(timeouts > 0 && foreign > 0);
    }

    /// Host `a` with two 30-segment flows wired straight to a probe that plays `script`
    /// (BFC pause frames) and records every data frame: (arrival cycle, flow id, IPv4 id).
    fn bfc_run(
        stepping: Stepping,
        script: Vec<(Cycle, Vec<u8>)>,
    ) -> (Vec<(Cycle, u32, u16)>, u64, u64) {
        let config = TransportConfig {
            honour_bfc_pause: true,
            ..TransportConfig::fixed(1_000_000, 10_000_000)
        };
        let clock = Clock::tofino2();
        let mut a =
            TransportHost::new("a", peer(0), clock, G100, config, vec![peer(0), peer(1)]).unwrap();
        a.add_flow(flow(0, 0, 30_000)).unwrap();
        a.add_flow(flow(1, 0, 30_000)).unwrap();
        let mut net = Network::new(stepping);
        let a = net.add(a);
        let p = net.add(crate::probe::Probe::new(G100, script));
        net.link(a, 0, p, 0, 150).unwrap();
        net.run_until(20_000);
        let seen = net
            .node::<crate::probe::Probe>(p)
            .received()
            .iter()
            .map(|(at, b)| {
                let flow = u32::from_be_bytes(b[54..58].try_into().unwrap());
                (*at, flow, u16::from_be_bytes([b[18], b[19]]))
            })
            .collect();
        let host = net.node::<TransportHost>(a);
        (seen, host.bfc_frames(), host.foreign())
    }

    fn bfc_frame(queues: &[usize]) -> Vec<u8> {
        let mut b = Vec::new();
        BfcPause::of(queues).write([2, 0, 0, 0, 0, 9], &mut b);
        b
    }

    #[test]
    fn bfc_pause_holds_only_the_paused_flow_queue() {
        // Pause flow 0's queue (index 1) with a frame whose last bit leaves the probe at 1000
        // (it reaches the host at 1150); a truncated frame at 2000 changes nothing; an empty
        // bitmap at 3000 (host: 3150) resumes it.
        let script = vec![
            (1000, bfc_frame(&[1])),
            (2000, bfc_frame(&[])[..100].to_vec()),
            (3000, bfc_frame(&[])),
        ];
        let (seen, frames, foreign) = bfc_run(Stepping::Jump, script.clone());
        assert_eq!((frames, foreign), (2, 1));
        // Each flow has its own queue index in the IPv4 identification field.
        assert!(seen.iter().all(|&(_, f, q)| q as u32 == f + 1));
        let of = |flow: u32| -> Vec<Cycle> {
            seen.iter().filter(|s| s.1 == flow).map(|s| s.0).collect()
        };
        let (f0, f1) = (of(0), of(1));
        assert_eq!((f0.len(), f1.len()), (30, 30));
        // 1,062-byte frames take 8,656 wire bits = 129.84 cycles and the NIC sends them back
        // to back, exact to the line tick: frame k (from 0) ends at (k + 1) x 129.84 and reaches
        // the probe in the cycle after that, plus 150. The two flows alternate. Flow 0's fifth
        // frame (the NIC's ninth, 1,038.72..1,168.56) was on the wire when the pause arrived at
        // 1150: it finishes (at the probe ceil(1,168.56) + 150 = 1,319) and no other frame of
        // flow 0 starts until the resume; flow 1 has the NIC alone. The resume arrives at 3150
        // during the NIC's 25th frame (3,116.16..3,246.00); flow 0's next frame follows it
        // (3,246.00..3,375.84, at the probe 3,376 + 150 = 3,526).
        assert_eq!(f0[4], 1319);
        assert_eq!(f0[5], 3526);
        // The NIC never idles: all 60 frames go back to back, 25,968 line ticks (200 a cycle)
        // each, with no fraction of a cycle lost between them.
        for (k, s) in seen.iter().enumerate() {
            assert_eq!(
                s.0,
                ((k as u64 + 1) * 25_968).div_ceil(200) + 150,
                "frame {k}"
            );
        }
        let in_pause = seen.iter().filter(|s| s.0 > 1319 && s.0 < 3526);
        assert!(in_pause.clone().all(|s| s.1 == 1));
        assert_eq!(in_pause.count(), 16);
        assert_eq!(
            bfc_run(Stepping::EveryCycle, script),
            (seen, frames, foreign)
        );
    }

    /// Host `a` sends one 400-segment flow (id 0) straight to a probe that plays `script`;
    /// returns the arrival cycles of its data frames at the probe and the host.
    fn qcn_run(stepping: Stepping, script: Vec<(Cycle, Vec<u8>)>) -> (Vec<Cycle>, Network, NodeId) {
        let config = TransportConfig {
            qcn: Some(QcnParams::standard(Clock::tofino2())),
            ..TransportConfig::fixed(10_000_000, 10_000_000)
        };
        let mut a = TransportHost::new(
            "a",
            peer(0),
            Clock::tofino2(),
            G100,
            config,
            vec![peer(0), peer(1)],
        )
        .unwrap();
        a.add_flow(flow(0, 0, 400_000)).unwrap();
        let mut net = Network::new(stepping);
        let a = net.add(a);
        let p = net.add(crate::probe::Probe::new(G100, script));
        net.link(a, 0, p, 0, 150).unwrap();
        net.run_until(300_000);
        (net.node::<crate::probe::Probe>(p).arrivals(), net, a)
    }

    /// Flow 0 (from cycle 0) has turned elephant when a PFC XOFF for the mice class arrives
    /// (sent at 3,850); flow 1 starts at 5,000 while it holds, and an XON at 20,000 lets it
    /// go: returns (arrival cycle, flow id, DSCP) of every data frame the probe got.
    fn mice_run(stepping: Stepping) -> Vec<(Cycle, u32, u8)> {
        let config = TransportConfig {
            honour_pfc: true,
            mice_bytes: Some(3000),
            ..TransportConfig::fixed(10_000_000, 10_000_000)
        };
        let mut a = TransportHost::new(
            "a",
            peer(0),
            Clock::tofino2(),
            G100,
            config,
            vec![peer(0), peer(1)],
        )
        .unwrap();
        a.add_flow(flow(0, 0, 40_000)).unwrap();
        a.add_flow(flow(1, 5_000, 4_000)).unwrap();
        let pfc = |quanta| {
            let mut b = Vec::new();
            PfcFrame::one_class(MICE_PFC_CLASS, quanta).write([2, 0, 0, 0, 0, 0xfc], &mut b);
            b
        };
        let mut net = Network::new(stepping);
        let a = net.add(a);
        let p = net.add(crate::probe::Probe::new(
            G100,
            vec![(3_850, pfc(0xffff)), (20_000, pfc(0))],
        ));
        net.link(a, 0, p, 0, 150).unwrap();
        net.run_until(60_000);
        net.node::<crate::probe::Probe>(p)
            .received()
            .iter()
            .map(|(t, f)| {
                let id = u32::from_be_bytes(f[54..58].try_into().unwrap());
                (*t, id, f[TOS_OFFSET] >> 2)
            })
            .collect()
    }

    #[test]
    fn a_mice_class_pause_holds_mice_frames_and_lets_elephants_go() {
        let frames = mice_run(Stepping::EveryCycle);
        assert_eq!(frames, mice_run(Stepping::Jump));
        let mice = |id| {
            frames
                .iter()
                .filter(|f| f.1 == id && f.2 == MICE_DSCP)
                .count()
        };
        // 1,044 IPv4 bytes a frame: the first three of each flow (0, 1,044 and 2,088 bytes
        // sent before them) are mice, the rest elephants.
        assert_eq!((mice(0), mice(1)), (3, 3));
        for id in [0, 1] {
            let dscp: Vec<u8> = frames.iter().filter(|f| f.1 == id).map(|f| f.2).collect();
            assert!(
                dscp[..3].iter().all(|&d| d == MICE_DSCP),
                "flow {id}: {dscp:?}"
            );
            assert!(dscp[3..].iter().all(|&d| d == 0), "flow {id}: {dscp:?}");
        }
        // The pause reaches the host at 4,000; flow 1's frames wait for the XON (at 20,150),
        // while flow 0's elephant frames kept going in between.
        let first1 = frames.iter().find(|f| f.1 == 1).unwrap().0;
        assert!(first1 > 20_150, "flow 1 started at {first1}");
        assert!(frames
            .iter()
            .any(|f| f.1 == 0 && (5_000..20_000).contains(&f.0)));
        assert_eq!(frames.iter().filter(|f| f.1 == 1).count(), 4);
    }

    /// A CNM with feedback `fb` about a data frame of flow `flow` from host 0.
    fn cnm_about(flow: u32, fb: u8) -> Vec<u8> {
        let ep = Endpoints {
            src_mac: peer(0).mac,
            dst_mac: peer(1).mac,
            src_ip: peer(0).ip,
            dst_ip: peer(1).ip,
            src_port: 10_000,
            dst_port: 80,
        };
        let mut sampled = Vec::new();
        headers::build_tcp_frame(
            &mut sampled,
            &ep,
            64,
            0,
            0,
            0,
            Tcp::ACK,
            0,
            &flow.to_be_bytes(),
            60,
        );
        let (cnm, to) = Cnm::about(&sampled, fb, 7, -100, 4).unwrap();
        let mut b = Vec::new();
        cnm.write(to, [2, 0, 0, 0, 0, 0xcc], &mut b).unwrap();
        b
    }

    #[test]
    fn a_cnm_paces_the_flow_at_the_cut_rate() {
        // The CNM's last bit reaches the host at 5,150, during its 40th frame (5,070..5,200).
        let script = vec![
            (5_000, cnm_about(0, 63)),
            (6_000, cnm_about(9, 63)),
            (7_000, cnm_about(0, 63)[..40].to_vec()),
        ];
        let (arrivals, net, a) = qcn_run(Stepping::Jump, script.clone());
        let host = net.node::<TransportHost>(a);
        assert_eq!(arrivals.len(), 400);
        // A CNM about another flow is read but changes nothing; a truncated one is foreign.
        assert_eq!((host.cnm_frames(), host.foreign()), (2, 1));
        // Line rate before: 1,062-byte frames back to back, 129.84 cycles each, exact to the
        // line tick; frame k reaches the probe at ceil((k + 1) x 129.84) + 150.
        assert_eq!(&arrivals[38..41], &[5_214, 5_344, 5_474]);
        // After: 100 G x (1 - 63/128) = 50,781,250,000 b/s, so a frame's 8,656 wire bits
        // take 51,136.98 line ticks (255.68 cycles), rounded up to 51,137. Frame 40 starts
        // when 39 ends (5,193.60, tick 1,038,720); 41 is allowed at tick 1,089,857 (cycle
        // 5,449.285), starts there and reaches the probe at ceil(5,579.125) + 150.
        assert_eq!(arrivals[41], 5_730);
        // 100 frames later the wire has carried 100 frames at exactly the limiter's rate:
        // frame 141 starts at tick 1,089,857 + 100 x 51,137 = 6,203,557 (cycle 31,017.785)
        // and arrives at ceil(31,017.785 + 129.84) + 150 = 31,298.
        assert_eq!(arrivals[141], 31_298);
        // As a rate: bits on the wire over that span against the limiter's rate, within a frame.
        let span_ns = (arrivals[141] - arrivals[41]) as f64 / 1.5;
        let seen_bps = 100.0 * 8656.0 / span_ns * 1e9;
        assert!(
            (seen_bps - 50_781_250_000.0).abs() < 8656.0 / span_ns * 1e9,
            "{seen_bps}"
        );
        // The byte counter: 150,000 bytes is 141.2 frames of 1,062 bytes, so the 142nd frame
        // after the cut completes the first stage and the next frames go at 75,390,625,000;
        // the 360 frames after the cut (382,320 bytes) complete two: 87,695,312,500.
        let rp = host.reaction_point(0).unwrap();
        assert_eq!(rp.cnms(), 1);
        assert_eq!(rp.stages(), (2, 0));
        assert_eq!(rp.rate_bps(), 87_695_312_500);
        let (stepped, _, _) = qcn_run(Stepping::EveryCycle, script);
        assert_eq!(stepped, arrivals);
    }

    #[test]
    fn a_lone_flow_takes_exactly_its_ideal_time() {
        // (MSS, flow bytes, exact FCT). Base RTT: 300 cycles of propagation each way and one
        // 64 B ACK (84 wire bytes = 10.08 cycles, 11 whole). Data frames are MSS + 62 bytes.
        for (mss, size, expect) in [
            // 10 frames of 1,062 B + one of 562 B: (10 x 1,082 + 582) x 8 bits = 91,216 bits
            // = 1,368.24 cycles, 1,369 whole.
            (1000, 10_500, 1_369 + 611),
            // 1,000 frames of 1,062 B, 8,656 wire bits each: 1,000 x 129.84 = 129,840 cycles.
            (1000, 1_000_000, 129_840 + 611),
            // 1,000 frames of 1,508 B, 12,224 wire bits each: 1,000 x 183.36 = 183,360 cycles
            // (a NIC that started each frame at a cycle edge took 184 and was 640 late).
            (1446, 1_446_000, 183_360 + 611),
        ] {
            let config = TransportConfig {
                mss,
                ..TransportConfig::fixed(4_000_000, 1_000_000)
            };
            for stepping in [Stepping::Jump, Stepping::EveryCycle] {
                let (mut net, a, _, b) = net(stepping, config, clean_tap(), &[flow(0, 10, size)]);
                net.run_until(400_000);
                let out = net.node::<TransportHost>(a).outcomes();
                let fct = out[0].finish.unwrap() - 10;
                let line = LineRate::new(Clock::tofino2(), G100);
                let framing = Framing {
                    mss,
                    overhead: SEGMENT_OVERHEAD,
                };
                assert_eq!(fct, expect, "{size} B");
                assert_eq!(fct, framing.ideal_fct(size, line, 600 + 11), "{size} B");
                assert_eq!(net.node::<TransportHost>(b).data_bytes_received(), size);
                assert_eq!(net.live_packets(), 0);
            }
        }
    }

    fn lossy_tap() -> Tap {
        Tap {
            drop_every: 7,
            drop_ack_every: 5,
            ..clean_tap()
        }
    }

    fn lossy_flows() -> Vec<FlowSpec> {
        vec![
            flow(0, 0, 50_000),
            flow(1, 100, 7_777),
            flow(2, 2_000, 120_000),
        ]
    }

    #[test]
    fn every_byte_arrives_through_a_lossy_path() {
        let config = TransportConfig::fixed(20_000, 5_000);
        let (mut net, a, t, b) = net(Stepping::Jump, config, lossy_tap(), &lossy_flows());
        net.run_until(5_000_000);
        let sender = net.node::<TransportHost>(a);
        assert!(sender.all_done());
        let out = sender.outcomes();
        assert!(out.iter().all(|o| o.finish.is_some()));
        assert!(out.iter().map(|o| o.timeouts).sum::<u64>() > 0);
        assert!(out.iter().map(|o| o.retransmitted_segments).sum::<u64>() > 0);
        let receiver = net.node::<TransportHost>(b);
        assert_eq!(receiver.data_bytes_received(), 50_000 + 7_777 + 120_000);
        assert!(net.node::<Tap>(t).dropped > 0);
        // Every frame is accounted for: all were delivered or dropped at the tap.
        assert_eq!(net.live_packets(), 0);
        assert_eq!(net.frames_on_links(), 0);
    }

    #[test]
    fn stepping_every_cycle_matches_jumping() {
        let config = TransportConfig::fixed(20_000, 5_000);
        let run = |stepping| {
            let (mut net, a, _, b) = net(stepping, config, lossy_tap(), &lossy_flows());
            net.run_until(400_000);
            let s = net.node::<TransportHost>(a);
            let r = net.node::<TransportHost>(b);
            let arrivals: Vec<Vec<u64>> = (0..3)
                .map(|i| r.arrivals(i).unwrap_or(&[]).to_vec())
                .collect();
            (
                s.outcomes(),
                s.frames_sent(),
                r.frames_sent(),
                arrivals,
                net.link_tx(a, 0),
            )
        };
        let jumped = run(Stepping::Jump);
        assert!(jumped.0.iter().all(|o| o.finish.is_some()));
        assert_eq!(jumped, run(Stepping::EveryCycle));
    }

    #[test]
    fn bad_settings_and_flows_are_refused() {
        let clock = Clock::tofino2();
        let bad = TransportConfig {
            mss: 0,
            ..TransportConfig::fixed(10_000, 100)
        };
        let e = TransportHost::new("h", peer(0), clock, G100, bad, vec![])
            .err()
            .unwrap();
        assert_eq!(e, "h: mss 0 is outside 1..=9154");
        let small = TransportConfig::fixed(999, 100);
        assert!(TransportHost::new("h", peer(0), clock, G100, small, vec![]).is_err());
        let mut h = TransportHost::new(
            "h",
            peer(0),
            clock,
            G100,
            TransportConfig::fixed(10_000, 100),
            vec![peer(0)],
        )
        .unwrap();
        assert!(h
            .add_flow(flow(0, 0, 10))
            .unwrap_err()
            .contains("peer table has 1"));
    }

    #[test]
    fn dctcp_alpha_follows_the_marked_fraction_with_gain_one_sixteenth() {
        let mut d = Dctcp::new(10_000, 1000);
        assert_eq!(d.alpha, 1024);
        // A window without marks: alpha <- alpha (1 - 1/16).
        d.on_ack(1000, false, 1000, 10_000);
        assert_eq!(d.alpha, 960);
        // Many windows with a quarter of the bytes marked: alpha -> 1024 / 4.
        let mut una = 1000;
        for _ in 0..300 {
            let end = d.window_end;
            d.on_ack(3000, false, una + 3000, end + 4000);
            d.on_ack(1000, true, end + 4000, end + 8000);
            una = end + 4000;
        }
        assert!(d.alpha.abs_diff(256) <= 16, "{}", d.alpha);
        // All marked: alpha -> 1.
        for _ in 0..300 {
            let end = d.window_end;
            d.on_ack(1000, true, end, end + 1000);
        }
        assert!(d.alpha >= 1024 - 16, "{}", d.alpha);
    }

    #[test]
    fn dctcp_cuts_by_half_alpha_once_per_marked_window() {
        let mut d = Dctcp::new(100_000, 1000);
        // alpha = 1024 (the start): a marked window halves the window.
        d.alpha = DCTCP_ALPHA_ONE;
        d.window_end = 10_000;
        d.on_ack(1000, true, 5_000, 100_000);
        assert_eq!(d.cwnd, 100_000, "no cut until the window ends");
        d.on_ack(5000, true, 10_000, 100_000);
        // alpha stays 1024 (F = 1), so the cut is cwnd / 2.
        assert_eq!((d.alpha, d.cwnd, d.ssthresh), (1024, 50_000, 50_000));
        // alpha = 512 at the window's end: cut a quarter.
        d.alpha = 512 + 32; // one update with F = 1/2 gives 544 - 34 + 32 = 542
        d.on_ack(500, true, 60_000, 200_000);
        d.on_ack(500, false, 100_000, 200_000);
        assert_eq!(d.alpha, 542);
        // Congestion avoidance has not yet earned a segment, so the cut applies to 50,000.
        assert_eq!(d.cwnd, 50_000 - 50_000 * 542 / 2048);
    }

    #[test]
    fn dctcp_grows_like_tcp_without_marks() {
        let mut d = Dctcp::new(10_000, 1000);
        d.window_end = u64::MAX; // keep alpha out of it
        d.on_ack(4000, false, 4000, 14_000);
        assert_eq!(d.cwnd, 14_000, "slow start adds what was acknowledged");
        d.ssthresh = 14_000;
        d.on_ack(13_999, false, 20_000, 30_000);
        assert_eq!(d.cwnd, 14_000);
        d.on_ack(1, false, 20_001, 30_000);
        assert_eq!(
            d.cwnd, 15_000,
            "one segment per window in congestion avoidance"
        );
        d.on_timeout();
        assert_eq!((d.cwnd, d.ssthresh), (1000, 7500));
    }

    #[test]
    fn a_duplicate_acks_ece_is_counted_once() {
        // Segment 1000..2000 overtakes segment 0..1000 with CE. The receiver answers it with a
        // duplicate ACK (ack 0, ECE), then ACKs 2000 without ECE. The sender counts 1000 of
        // those 2000 bytes marked (not 1000 of 3000: the cumulative ACK skips the bytes the
        // duplicate counted), so alpha <- 1024 - 64 + 512/16 = 992, and the first window
        // cuts once: slow start has grown cwnd to 10,000 + 2,000, and
        // 12,000 - 12,000 x 992 / 2048 = 6,188 (integer). No other segment is marked, so
        // ssthresh stays 6,188. A sender that ignored the duplicate ACK would see no mark and
        // never cut (ssthresh stays unbounded).
        let config = TransportConfig {
            congestion: Congestion::Dctcp,
            ..TransportConfig::fixed(10_000, 100_000)
        };
        let mut alone = Dctcp::new(10_000, 1000);
        alone.on_duplicate_ece(9000);
        alone.on_ack(2000, false, 2000, 10_000);
        assert_eq!((alone.alpha, alone.cwnd, alone.ssthresh), (992, 6188, 6188));
        for stepping in [Stepping::Jump, Stepping::EveryCycle] {
            let tap = Tap {
                overtake_first: true,
                ..clean_tap()
            };
            let (mut net, a, _, b) = net(stepping, config, tap, &[flow(0, 0, 40_000)]);
            net.run_until(2_000_000);
            let s = net.node::<TransportHost>(a);
            assert!(s.all_done());
            assert_eq!(s.dctcp(0).unwrap().ssthresh, 6188, "{stepping:?}");
            assert_eq!(s.frames_sent(), 40, "no segment sent twice");
            assert_eq!(net.node::<TransportHost>(b).marked_segments(), 1);
        }
    }

    #[test]
    fn a_duplicate_ack_counts_no_more_than_was_sent_beyond_the_gap() {
        let mut d = Dctcp::new(10_000, 1000);
        d.window_end = u64::MAX; // keep the window open to read the counters
        d.on_duplicate_ece(1500);
        d.on_duplicate_ece(1500);
        d.on_duplicate_ece(1500);
        assert_eq!((d.acked, d.marked, d.counted_ahead), (1500, 1500, 1500));
        // The cumulative ACK of 2,500 bytes counts only the 1,000 not yet counted.
        d.on_ack(2500, false, 2500, 2500);
        assert_eq!((d.acked, d.marked, d.counted_ahead), (2500, 1500, 0));
    }

    #[test]
    fn ce_marks_are_echoed_and_shrink_the_dctcp_window() {
        let config = TransportConfig {
            congestion: Congestion::Dctcp,
            ..TransportConfig::fixed(64_000, 100_000)
        };
        let tap = Tap {
            mark: true,
            ..clean_tap()
        };
        let (mut net, a, _, b) = net(Stepping::Jump, config, tap, &[flow(0, 0, 400_000)]);
        net.run_until(2_000_000);
        let s = net.node::<TransportHost>(a);
        assert!(s.all_done());
        let d = s.dctcp(0).unwrap();
        assert_eq!(d.alpha, DCTCP_ALPHA_ONE, "every byte marked");
        assert_eq!(d.cwnd, 1000, "halved every window down to one segment");
        assert_eq!(net.node::<TransportHost>(b).marked_segments(), 400);
    }
}
