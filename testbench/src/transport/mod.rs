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
//! - [`window`]: how the sender sizes its window ([`Congestion`]): constant
//!   ([`Congestion::Fixed`]), standard TCP's ([`Congestion::Reno`], ECN off), or a window
//!   algorithm a scheme brings ([`Congestion::Window`]; DCTCP's, with ECN, lives in its
//!   scheme's folder).
//!
//! The receiver ACKs every data segment with the next byte it expects, or with delayed ACKs
//! every `ack_every` segments ([`TransportConfig::ack_every`]; `docs/testbench.md`). With ECN
//! on ([`Congestion::ecn`]) it echoes CE as ECE: per segment, or per RFC 8257's state machine
//! when ACKs are delayed.
//!
//! A scheme's host side (PFC, mice/elephant classes, BFC's per-flow queues, PABO's resend,
//! QCN's reaction points, PIAS's tags) is not here: each is a [`HostFeature`]
//! ([`crate::host_feature`]; the schemes' own live in their folders of the `t2sim` crate),
//! which the host calls on every frame it receives, builds and starts
//! ([`TransportHost::with_features`]). Without features the host sends every frame
//! in PFC class 0 with DSCP 0 and IPv4 identification 0.
//!
//! A flow's completion time ends in the cycle the sender receives the ACK of its last byte.
//! Frames this host cannot read (not TCP, or too short) are counted in `foreign` and freed:
//! no packet is lost silently.

pub mod recovery;
pub mod rto;
pub mod tcp;
pub mod window;

pub use recovery::{Recovery, SackScoreboard, DUP_THRESH, MAX_SACK_BLOCKS};
pub use rto::RtoEstimator;
use tcp::{RecvFlow, SendFlow};
pub use window::{Congestion, RenoWindow, WindowAlgorithm, WindowControl};

use crate::host_feature::{
    self, FeatureSpec, FlowView, FrameTag, HostCounters, HostFeature, HostInfo, Receipt,
};
use crate::node::{Node, Sent};
pub use crate::peer::Peer;
use crate::workload::FlowSpec;
use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;
use t2_clock::{Clock, Cycle, LineRate, FCS_BYTES};
use t2_pipeline::headers::{self, Endpoints, Tcp, TCP_HEADERS_LEN};
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

/// Transport settings shared by all flows of a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransportConfig {
    /// Data bytes per full segment.
    pub mss: u64,
    /// The fixed window, or the initial one of a window that moves, in bytes.
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
    /// Delayed ACKs: the receiver ACKs every `ack_every`-th in-order data segment at once
    /// and a lone one after `delayed_ack` cycles (RFC 1122 §4.2.3.2, RFC 5681 §4.2: at least
    /// every second full segment, within 500 ms); an out-of-order, duplicate or
    /// hole-filling segment is ACKed at once (RFC 5681 §4.2), and so is a change of CE state
    /// with ECN on (RFC 8257 §3.2). 1 (the default) ACKs every segment at once.
    pub ack_every: u32,
    /// How long a delayed ACK waits for a second segment, cycles.
    pub delayed_ack: Cycle,
    /// Pacing: from its first RTT sample on, a flow's data frame starts no earlier than the
    /// previous one's wire bits at cwnd / SRTT after that one's start (its window spread
    /// over one smoothed RTT; exact to the line tick, rounded up). `false` (the default)
    /// sends as the window allows, back to back.
    pub pacing: bool,
}

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
            ack_every: 1,
            pacing: false,
            // At the chip's default 1.5 GHz clock (scenarios convert with their own).
            delayed_ack: DEFAULT_DELAYED_ACK_US * 1500,
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
        Ok(())
    }
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
    /// No open flow's retransmission timer falls due before this cycle: a lower
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
    /// The scheme's host side, called in this order at every point.
    features: Vec<Box<dyn HostFeature>>,
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
        Ok(TransportHost {
            name: name.to_string(),
            me,
            line: LineRate::new(clock, nic_bps),
            config,
            peers,
            ecn: config.congestion.ecn(),
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
            features: Vec::new(),
        })
    }

    /// Sets the window (fixed, or the initial one of a window that moves) of the flows added
    /// from now on.
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

    /// Builds one instance of each feature of `specs` for this host, after those it has.
    pub fn with_features(mut self, specs: &[FeatureSpec]) -> Result<TransportHost, String> {
        for spec in specs {
            let feature = spec.build(&self.info())?;
            self.features.push(feature);
        }
        Ok(self)
    }

    /// Adds a feature, called after those the host has.
    pub fn add_feature(&mut self, feature: Box<dyn HostFeature>) {
        self.features.push(feature);
    }

    /// What a feature is built from: the host's name, address and line.
    pub fn info(&self) -> HostInfo<'_> {
        HostInfo {
            name: &self.name,
            me: self.me,
            line: self.line,
        }
    }

    /// The host's features, in the order it calls them.
    pub fn features(&self) -> &[Box<dyn HostFeature>] {
        &self.features
    }

    /// The host's feature of type `T`, if it has one.
    pub fn feature<T: 'static>(&self) -> Option<&T> {
        host_feature::find(&self.features)
    }

    /// The sum of the features' counters.
    pub fn counters(&self) -> HostCounters {
        host_feature::counters(&self.features)
    }

    /// Pacing: flow `i`'s data frame of `bytes` (FCS included) starts at line tick `start`;
    /// the next may start once its wire bits have passed at cwnd / SRTT (no bound before the
    /// flow's first RTT sample).
    fn pace(&mut self, i: usize, start: u64, bytes: u64) {
        let f = &mut self.flows[i];
        let Some(srtt) = f.rto.srtt() else {
            return;
        };
        // bits x SRTT / (8 cwnd) cycles, in ticks, rounded up.
        let ticks =
            LineRate::wire_bits(bytes) as u128 * srtt as u128 * self.line.ticks_per_cycle() as u128;
        let gap = ticks.div_ceil(8 * f.window().max(1) as u128);
        f.pace_ticks = start + gap.min(u64::MAX as u128) as u64;
    }

    /// Flow `i` as the features see it.
    fn view(&self, i: usize) -> FlowView {
        let f = &self.flows[i];
        FlowView {
            index: i,
            id: f.spec.id,
            bytes_sent: f.bytes_sent,
            ipv4_bytes_sent: f.ipv4_bytes_sent,
        }
    }

    /// The marks every feature gives a frame of `flow` (an ACK for `None`).
    fn tag(&self, flow: Option<&FlowView>) -> FrameTag {
        let mut tag = FrameTag::default();
        for f in &self.features {
            f.tag(&mut tag, flow);
        }
        tag
    }

    /// Whether every feature lets a frame of `class` (of `flow`) start in cycle `now`.
    fn may_start(&self, now: Cycle, class: u8, flow: Option<&FlowView>) -> bool {
        self.features.iter().all(|f| f.may_send(now, class, flow))
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

    /// The window control of the flow with `id`, if its window moves ([`Congestion`]).
    pub fn window_control(&self, flow_id: u32) -> Option<&dyn WindowControl> {
        self.flows
            .iter()
            .find(|f| f.spec.id == flow_id)
            .and_then(|f| f.cc.as_deref())
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
        let flows = &self.flows;
        let Some(i) = self
            .open
            .iter()
            .copied()
            .find(|&i| flows[i].spec.id == flow_id)
        else {
            return; // an ACK of a finished flow
        };
        let f = &mut self.flows[i];
        let effect = f.on_ack(now, ack, ece, sacks);
        if effect.finished {
            self.finished_since_prune = true;
            let view = self.view(i);
            for feature in &mut self.features {
                feature.flow_finished(&view);
            }
        } else if let Some(t) = f.rto_at {
            self.timers_from = self.timers_from.min(t);
        }
    }

    /// Starts due flows and fires due timers.
    fn housekeeping(&mut self, now: Cycle) {
        self.send_due_acks(now);
        while self.pending.last().is_some_and(|p| p.start <= now) {
            let spec = self.pending.pop().expect("checked");
            let i = self.flows.len();
            self.open.push(i);
            let c = &self.config;
            self.flows.push(SendFlow {
                spec,
                to: self.peers[spec.dst],
                mss: c.mss,
                snd_una: 0,
                snd_nxt: 0,
                high: 0,
                fixed_window: c.window_bytes,
                cc: c.congestion.build(c.window_bytes, c.mss),
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
                scoreboard: SackScoreboard::default(),
                timing: None,
                pace_ticks: 0,
                bytes_sent: 0,
                ipv4_bytes_sent: 0,
            });
            let view = self.view(i);
            for feature in &mut self.features {
                feature.flow_started(&view);
            }
        }
        for feature in &mut self.features {
            feature.on_time(now);
        }
        if now >= self.timers_from {
            let mut next = Cycle::MAX;
            for &i in &self.open {
                let f = &mut self.flows[i];
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

    /// Builds the next frame to send, if any, with the index of the flow whose data it is.
    fn next_frame(
        &mut self,
        now: Cycle,
        pool: &mut PacketPool,
    ) -> Option<(PacketHandle, Option<usize>)> {
        // Frames a feature holds to send as they are (PABO's), in class 0, before the rest.
        if self.may_start(now, 0, None) {
            if let Some(pkt) = self.features.iter_mut().find_map(|f| f.take_held()) {
                return Some((pkt, None));
            }
        }
        let ack = self.tag(None);
        if self.may_start(now, ack.class, None) {
            if let Some(a) = self.acks.pop_front() {
                let flags = Tcp::ACK | if a.ece { Tcp::ECE } else { 0 };
                let sacks = &a.sack[..a.sacks as usize];
                let pkt = self.build(pool, a.to, a.flow_id, 0, a.ack, flags, 0, false, ack);
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
            let view = self.view(i);
            let tag = self.tag(Some(&view));
            if !self.may_start(now, tag.class, Some(&view)) {
                continue;
            }
            if self.config.pacing && self.flows[i].pace_ticks >= self.line.cycle_to_ticks(now + 1) {
                continue;
            }
            let Some((seq, len)) = self.flows[i].next_segment() else {
                continue;
            };
            self.rr = i + 1;
            let f = &mut self.flows[i];
            f.ipv4_bytes_sent += ipv4_bytes(len);
            let (to, id) = (f.to, f.spec.id);
            f.on_sent(seq, len, now);
            if let Some(t) = f.rto_at {
                self.timers_from = self.timers_from.min(t);
            }
            f.bytes_sent += len;
            let ecn = self.ecn;
            let pkt = self.build(pool, to, id, seq, 0, Tcp::ACK, len as usize, ecn, tag);
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
        tag: FrameTag,
    ) -> PacketHandle {
        let dscp = tag.dscp;
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
        // The payload is the flow id and zeros: only the id is written and summed.
        headers::build_tcp_frame_zero_filled(
            buf,
            &ep,
            SENT_TTL,
            tag.ipv4_id,
            seq as u32,
            ack as u32,
            flags,
            u16::MAX,
            &flow_id.to_be_bytes(),
            FLOW_ID_LEN + data_len,
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

/// Whether `frame` (read past any shim: [`HostFeature::inner`]) is an IPv4 packet from `me`
/// to another host: one of this host's frames that a switch sent back.
pub fn came_back(frame: &[u8], me: Ipv4Addr) -> bool {
    headers::parse_frame(frame)
        .ok()
        .and_then(|p| p.ipv4)
        .is_some_and(|ip| ip.src == me && ip.dst != me)
}

/// The IPv4 TTL every frame of this transport leaves its host with (Linux's default), so a
/// receiver can tell the switch passes a frame made from its TTL on arrival.
pub const SENT_TTL: u8 = 64;

/// A segment of this transport as read from a frame.
pub struct Segment {
    pub flow_id: u32,
    pub from: Peer,
    pub tcp: Tcp,
    /// Data bytes after the flow id.
    pub data_len: u64,
    pub ce: bool,
    /// The IPv4 TTL as it arrived.
    pub ttl: u8,
    pub sacks: Vec<(u64, u64)>,
}

/// The transport's segment in `frame` (read past any shim: [`HostFeature::inner`]), if it is
/// one.
pub fn parse_segment(bytes: &[u8]) -> Option<Segment> {
    let p = headers::parse_frame(bytes).ok()?;
    let ip = p.ipv4?;
    let tcp = p.tcp?;
    let id = bytes.get(p.payload_offset..p.payload_offset + FLOW_ID_LEN)?;
    let flow_id = u32::from_be_bytes(id.try_into().ok()?);
    // The IP total length says where the data ends (frames may be padded).
    let ip_end = headers::Ethernet::LEN + ip.total_len as usize;
    let data_len = ip_end.checked_sub(p.payload_offset + FLOW_ID_LEN)?;
    let opts_at = headers::Ethernet::LEN + ip.header_len() + headers::Tcp::MIN_LEN;
    let sacks = bytes
        .get(opts_at..p.payload_offset)
        .map(tcp::parse_sack)
        .unwrap_or_default();
    Some(Segment {
        flow_id,
        from: Peer {
            ip: ip.src,
            mac: p.ethernet.src,
        },
        tcp,
        data_len: data_len as u64,
        ce: ip.tos & CE == CE,
        ttl: ip.ttl,
        sacks,
    })
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
        for feature in &mut self.features {
            match feature.on_frame(now, pkt, pool) {
                Receipt::NotMine => {}
                Receipt::Taken => return,
                Receipt::Foreign => {
                    self.foreign += 1;
                    pool.free(pkt);
                    return;
                }
            }
        }
        // A frame may carry a switch's header between Ethernet and IPv4 (a bounced frame's
        // shim); a feature that knows it reads past it.
        let bytes = pool.bytes(pkt);
        let inner = self.features.iter().find_map(|f| f.inner(bytes));
        let bytes = inner.as_deref().unwrap_or(bytes);
        // A frame of this host's that came back, and no feature took it.
        let parsed = (!came_back(bytes, self.me.ip))
            .then(|| parse_segment(bytes))
            .flatten();
        pool.free(pkt);
        match parsed {
            Some(s) if s.data_len > 0 => {
                self.on_data(now, s.flow_id, s.from, s.tcp.seq as u64, s.data_len, s.ce)
            }
            Some(s) if s.tcp.flags & Tcp::ACK != 0 => {
                // A sender that did not ask for ECN (RFC 3168 §6.1.1): an ECE means nothing
                // to it.
                let ece = s.tcp.flags & Tcp::ECE != 0 && self.config.congestion.ecn();
                self.on_ack(now, s.flow_id, s.tcp.ack as u64, ece, &s.sacks)
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
                // A feature may hold the flow's frame to a later tick of this cycle (QCN's
                // pacing), and learns when it started.
                let view = self.view(i);
                for f in &self.features {
                    start = start.max(f.not_before(&view));
                }
                if self.config.pacing {
                    start = start.max(self.flows[i].pace_ticks);
                    self.pace(i, start, bytes);
                }
                for f in &mut self.features {
                    f.on_data_start(&view, start, bytes);
                }
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
        let delayed_ack = self.delayed_acks.first_key_value().map(|(&(t, _), _)| t);
        // Pause ends, feature timers, paced flows free again.
        let has_data = |i: usize| self.flows[i].next_segment().is_some();
        let features = self
            .features
            .iter()
            .filter_map(|f| f.next_event(now, &has_data))
            .min();
        // Pacing: the first cycle a paced flow with data may start its next frame.
        let next_ticks = self.line.cycle_to_ticks(now + 1);
        let paced = self
            .open
            .iter()
            .filter(|_| self.config.pacing)
            .filter(|&&i| self.flows[i].pace_ticks >= next_ticks && has_data(i))
            .map(|&i| self.flows[i].pace_ticks / self.line.ticks_per_cycle())
            .min();
        [nic, frees, start, timers, features, paced, delayed_ack]
            .into_iter()
            .flatten()
            .map(|t| t.max(now + 1))
            .min()
    }
}

#[cfg(test)]
mod tests;
