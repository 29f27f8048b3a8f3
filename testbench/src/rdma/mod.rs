//! An RDMA-style NIC as the HPCC ns-3 artifact models one (`RdmaHw`, `RdmaQueuePair` and
//! `QbbNetDevice` in `simulation/src/point-to-point/model/`), over real RoCEv2 frames
//! ([`wire`]), as a [`Node`].
//!
//! - **Senders.** Each flow is a queue pair (QP, numbered by its flow id) that sends its
//!   message as packets of at most `mtu` payload bytes, paced at the QP's rate: a packet may
//!   start once the previous one's wire bits have passed at that rate (the artifact's
//!   `m_nextAvail`; the line rate without congestion control). An optional window bounds the
//!   bytes in flight. The NIC serializes one frame at a time at line rate, exact to the line
//!   tick: control frames (ACK, NACK, CNP) first, as the artifact's high-priority queue,
//!   then the QPs ready to send, round-robin.
//! - **Receivers.** A receiver expects PSNs in order. An in-order packet advances it; every
//!   `ack_interval` packets, and at the last packet of a message, it sends an ACK of the
//!   last PSN received in order. The first out-of-order packet is answered with a NACK of the
//!   expected PSN, and later ones are dropped silently until `nack_interval` has passed or the
//!   expected PSN has moved (`RdmaHw::ReceiverCheckSeq`). Duplicates are dropped.
//! - **Go-back-N.** A NACK acknowledges what precedes its PSN and sends the QP back to it
//!   (`RdmaHw::RecoverQueue`). A QP that sees no ACK progress for `rto` cycles goes back to
//!   its oldest unacknowledged packet (ours: the artifact relies on PFC and has no timer).
//! - **Notification point.** A data packet that arrives with CE makes its receiver send a
//!   CNP to the sender, at most one per QP every `cnp_interval`.
//! - **Rate control.** With a [`RateControl`] (a scheme's: DCQCN's reaction point, HPCC's
//!   sender, each in its scheme's folder), each QP's rate and window follow it: it hears the
//!   CNPs about the QP, the bytes the QP sends, and the ACKs with the telemetry they echo
//!   ([`int`]), and has timers of its own. Without one every QP sends at line rate.
//! - **PFC.** With `honour_pfc` the NIC holds the PFC host feature (`host_feature::pfc`) and
//!   starts no frame while it holds class 0, the class every frame travels in.
//!
//! A flow's completion time ends in the cycle its sender receives the ACK of its last packet.
//! Frames this host cannot read are counted in `foreign` and freed.

pub mod int;
pub mod wire;

pub use int::{IntHeader, IntHop};

use crate::host_feature::pfc::Pfc;
use crate::host_feature::{HostCounters, HostFeature, Receipt};
use crate::node::{Node, Sent};
use crate::transport::{Peer, SenderOutcome};
use crate::workload::FlowSpec;
use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::fmt;
use std::sync::Arc;
use t2_clock::{Clock, Cycle, LineRate};
use t2_pipeline::{PacketHandle, PacketPool};
use wire::RoceFrame;

/// One QP's congestion control, which a scheme brings ([`RateControlSpec`]): the rate the
/// QP sends at and, if it has one, its window; what it hears of the QP's CNPs, sent bytes
/// and ACKs; its timers. Every method but the first two has a default that does nothing.
pub trait RateControl: Send + fmt::Debug {
    /// The control as [`Any`], so that tests can read its own state.
    fn as_any(&self) -> &dyn Any;

    /// The rate the QP sends at, b/s (its packets are paced at it).
    fn rate_bps(&self) -> u64;

    /// The bytes the QP may have in flight; `None`: the NIC's window, if any
    /// ([`RdmaConfig::window_bytes`]).
    fn window_bytes(&self) -> Option<u64> {
        None
    }

    /// A CNP about the QP arrived in cycle `now`, before the timers due in `now` fire; true
    /// when the control acted on it (its timers may then be due sooner).
    fn on_cnp(&mut self, _now: Cycle) -> bool {
        false
    }

    /// A data frame of `bytes` (FCS included) starts in cycle `at`.
    fn on_sent(&mut self, _bytes: u64, _at: Cycle) {}

    /// An ACK or NACK that acknowledges the message up to byte `ack_seq`, when the QP's
    /// next byte to send is `next_seq`, echoing telemetry `int` (for a control whose data
    /// frames carry it: [`RateControlSpec::int`]).
    fn on_ack(&mut self, _ack_seq: u64, _next_seq: u64, _int: &IntHeader) {}

    /// The first cycle a timer of the control that can change the rate is due.
    fn timer_at(&self) -> Option<Cycle> {
        None
    }

    /// Fires every timer due by `now`.
    fn on_time(&mut self, _now: Cycle) {}
}

type CheckControl = dyn Fn(&str, u64) -> Result<(), String> + Send + Sync;
type BuildControl = dyn Fn(u64) -> Box<dyn RateControl> + Send + Sync;

/// How to build a QP's [`RateControl`]: what a scheme's NIC settings name. Two specs are
/// equal when their kind and parameters (as their `Debug` describes them) are.
#[derive(Clone)]
pub struct RateControlSpec {
    kind: &'static str,
    settings: String,
    int: bool,
    params: Arc<dyn Any + Send + Sync>,
    check: Arc<CheckControl>,
    build: Arc<BuildControl>,
}

impl RateControlSpec {
    /// A control of `kind` (a short name) with `params`: `check` refuses parameters a NIC
    /// of the given line rate cannot run (naming the host), `build` makes one QP's control
    /// for a NIC of that line rate. With `int`, data frames carry an INT header the
    /// switches fill and receivers echo ([`int`]).
    pub fn new<P: Any + Send + Sync + fmt::Debug + Clone>(
        kind: &'static str,
        params: P,
        int: bool,
        check: fn(&P, &str, u64) -> Result<(), String>,
        build: fn(&P, u64) -> Box<dyn RateControl>,
    ) -> RateControlSpec {
        let (c, b) = (params.clone(), params.clone());
        RateControlSpec {
            kind,
            settings: format!("{params:?}"),
            int,
            params: Arc::new(params),
            check: Arc::new(move |host, line| check(&c, host, line)),
            build: Arc::new(move |line| build(&b, line)),
        }
    }

    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether data frames carry an INT header.
    pub fn int(&self) -> bool {
        self.int
    }

    /// The parameters, if they are a `P`.
    pub fn params<P: 'static>(&self) -> Option<&P> {
        self.params.downcast_ref::<P>()
    }

    /// Checks the parameters against a NIC of `line_bps`; the error names `host`.
    pub fn check(&self, host: &str, line_bps: u64) -> Result<(), String> {
        (self.check)(host, line_bps)
    }

    /// One QP's control on a NIC of `line_bps`.
    pub fn build(&self, line_bps: u64) -> Box<dyn RateControl> {
        (self.build)(line_bps)
    }
}

impl PartialEq for RateControlSpec {
    fn eq(&self, other: &RateControlSpec) -> bool {
        self.kind == other.kind && self.settings == other.settings
    }
}

impl Eq for RateControlSpec {}

impl fmt::Debug for RateControlSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.kind, self.settings)
    }
}

/// The NIC's settings, shared by its QPs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RdmaConfig {
    /// Payload bytes per packet (the artifact's `PACKET_PAYLOAD_SIZE`, 1000).
    pub mtu: u64,
    /// Packets per ACK (the artifact's `L2_ACK_INTERVAL`, 1); the last packet of a message
    /// is always acknowledged.
    pub ack_interval: u32,
    /// The shortest gap between two NACKs of one expected PSN (the artifact's
    /// `m_nack_interval`, 500 us), cycles.
    pub nack_interval: Cycle,
    /// The notification point's shortest gap between CNPs of one QP, cycles.
    pub cnp_interval: Cycle,
    /// Go back to the oldest unacknowledged packet after this long without progress.
    pub rto: Cycle,
    /// Bytes in flight a QP may have; `None`: no window (the artifact's DCQCN, `HAS_WIN 0`).
    pub window_bytes: Option<u64>,
    /// Each QP's rate control; `None`: every QP sends at line rate.
    pub control: Option<RateControlSpec>,
    pub honour_pfc: bool,
    /// With `Some(d)`, ACKs, NACKs and CNPs carry DSCP `d` and leave whatever PFC holds:
    /// switches that give them a queue above data in a class they keep lossy (as the
    /// artifact's DCQCN runs do, `ACK_HIGH_PRIO 1`) never pause them. `None`: they travel
    /// with the data, DSCP 0.
    pub control_dscp: Option<u8>,
}

/// The DSCP of control frames that travel apart from the data ([`RdmaConfig::control_dscp`]):
/// 48, class selector 6, "network control" (RFC 4594; our choice).
pub const CONTROL_DSCP: u8 = 48;

impl RdmaConfig {
    /// The HPCC artifact's NIC (`simulation/run.py`) without a rate control: 1000-byte
    /// packets, an ACK per packet, NACKs at most every 500 us, no window, PFC honoured, and
    /// control frames in the data's class (`ACK_HIGH_PRIO 0`); a CNP at most every 4 us per
    /// QP (ours: the artifact marks every ACK of a CE packet and DCQCN's reaction point acts
    /// at most once per 4 us rate-decrease check, which a 4 us notification interval
    /// matches); `rto` ours. A scheme's NIC sets its [`RateControlSpec`] on it.
    pub fn artifact(clock: Clock, rto: Cycle) -> RdmaConfig {
        let us = |n: u64| clock.ns_to_cycles_ceil(n * 1000);
        RdmaConfig {
            mtu: 1000,
            ack_interval: 1,
            nack_interval: us(500),
            cnp_interval: us(4),
            rto,
            window_bytes: None,
            control: None,
            honour_pfc: true,
            control_dscp: None,
        }
    }

    /// Whether data frames carry an INT header ([`RateControlSpec::int`]).
    pub fn int(&self) -> bool {
        self.control.as_ref().is_some_and(|c| c.int())
    }

    /// Bytes of a data frame besides its payload.
    pub fn data_overhead(&self) -> u64 {
        wire::DATA_OVERHEAD + if self.int() { int::INT_LEN as u64 } else { 0 }
    }

    /// Checks the settings; the error names the host and the setting.
    pub fn validate(&self, host: &str, line_bps: u64) -> Result<(), String> {
        let max = 9216 - self.data_overhead();
        if self.mtu == 0 || self.mtu > max {
            return Err(format!(
                "{host}: rdma mtu {} is outside 1..={max}",
                self.mtu
            ));
        }
        if self.ack_interval == 0 {
            return Err(format!("{host}: rdma ack_interval must be at least 1"));
        }
        if self.rto == 0 {
            return Err(format!("{host}: rdma rto must be above 0"));
        }
        if self.window_bytes.is_some_and(|w| w < self.mtu) {
            return Err(format!(
                "{host}: rdma window {} B is smaller than one packet ({} B)",
                self.window_bytes.unwrap_or(0),
                self.mtu
            ));
        }
        if let Some(c) = &self.control {
            c.check(host, line_bps)?;
        }
        Ok(())
    }
}

/// One QP's sending side.
struct SendQp {
    spec: FlowSpec,
    to: Peer,
    packets: u32,
    snd_una: u32,
    snd_nxt: u32,
    /// Line tick from which the next packet may start (pacing).
    ready_ticks: u64,
    /// The QP's rate control, if the NIC has one.
    cc: Option<Box<dyn RateControl>>,
    finish: Option<Cycle>,
    /// When the timer fires if no ACK moves `snd_una` before.
    rto_at: Cycle,
    timeouts: u64,
    retransmitted: u64,
    go_backs: u64,
    /// The highest PSN sent so far plus one (what counts as a retransmission).
    high: u32,
    /// Cycles the CNPs about this QP arrived.
    cnp_at: Vec<Cycle>,
    /// Bytes of the QP's last data frame (a rate change moves its next send time by that
    /// frame's time at the new rate less its time at the old, as `RdmaHw::ChangeRate`).
    last_bytes: u64,
    /// The cycle of the QP's live entry in the host's timer calendar, at or before its next
    /// timer (`timers_at`).
    wake_at: Option<Cycle>,
}

impl SendQp {
    /// The first cycle a timer of this QP is due: its rate control's or its
    /// retransmission timer.
    fn timers_at(&self) -> Option<Cycle> {
        if self.finish.is_some() {
            return None;
        }
        let cc = self.cc.as_ref().and_then(|c| c.timer_at());
        Some(cc.map_or(self.rto_at, |t| t.min(self.rto_at)))
    }

    fn payload_of(&self, psn: u32, mtu: u64) -> u64 {
        let sent = psn as u64 * mtu;
        mtu.min(self.spec.size_bytes - sent)
    }

    /// Payload bytes before packet `psn`.
    fn bytes_at(&self, psn: u32, mtu: u64) -> u64 {
        (psn as u64 * mtu).min(self.spec.size_bytes)
    }

    fn has_data(&self, window: Option<u64>, mtu: u64) -> bool {
        if self.finish.is_some() || self.snd_nxt >= self.packets {
            return false;
        }
        match self.cc.as_ref().and_then(|c| c.window_bytes()) {
            // The control's window: send while fewer bytes than it are in flight (the
            // artifact's `RdmaQueuePair::IsWinBound`).
            Some(w) => self.bytes_at(self.snd_nxt, mtu) - self.bytes_at(self.snd_una, mtu) < w,
            None => window.is_none_or(|w| ((self.snd_nxt - self.snd_una) as u64 + 1) * mtu <= w),
        }
    }
}

/// One QP's receiving side.
#[derive(Default)]
struct RecvQp {
    expected: u32,
    since_ack: u32,
    last_nack: Option<(u32, Cycle)>,
    last_cnp: Option<Cycle>,
    /// Cycles this notification point queued its CNPs.
    cnp_at: Vec<Cycle>,
    /// PSNs in the order they arrived.
    arrivals: Vec<u64>,
}

/// A control frame waiting for the NIC.
#[derive(Clone, Copy, Debug)]
struct Control {
    to: Peer,
    qp: u32,
    psn: u32,
    kind: ControlKind,
    /// The INT header an ACK or NACK echoes.
    int: Option<IntHeader>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ControlKind {
    Ack,
    Nack,
    Cnp,
}

/// A host with an RDMA-style NIC.
pub struct RdmaHost {
    name: String,
    me: Peer,
    line: LineRate,
    config: RdmaConfig,
    peers: Vec<Peer>,
    pending: Vec<FlowSpec>,
    flows: Vec<SendQp>,
    open: Vec<usize>,
    /// Whether a QP of `open` has finished since `open` was last pruned.
    finished: bool,
    /// The QPs' timers: `(cycle, flow index)`, a QP's live entry being the one at its
    /// `wake_at`. An entry may come before the QP's timer (an ACK moved the retransmission
    /// timer on): it is then put back at the timer, so an ACK costs no heap push.
    calendar: BinaryHeap<Reverse<(Cycle, usize)>>,
    rr: usize,
    control: VecDeque<Control>,
    receiving: BTreeMap<u32, RecvQp>,
    on_nic: VecDeque<(Cycle, PacketHandle)>,
    nic_free_ticks: u64,
    /// PFC (with `honour_pfc`), the TCP host's feature: data starts no frame while class 0
    /// (the lossless class) is paused.
    pfc: Option<Pfc>,
    frames_sent: u64,
    frames_received: u64,
    data_bytes_received: u64,
    duplicate_packets: u64,
    marked_packets: u64,
    out_of_order: u64,
    acks_sent: u64,
    nacks_sent: u64,
    cnps_sent: u64,
    cnps_received: u64,
    foreign: u64,
    /// Fault injection: `(flow, psn)` data frames that vanish on the wire the first time they
    /// are sent (their line time is spent), with how many did.
    lose: Vec<(u32, u32)>,
    lost: u64,
    /// Fault injection: data frames of `(flow, PSNs)` leave with CE, as if a switch on the
    /// way had marked them.
    mark: Vec<(u32, std::ops::Range<u32>)>,
    scratch: Vec<u8>,
    body: Vec<u8>,
}

impl RdmaHost {
    /// A host named `name` with address `me`, whose flows address `peers[dst]`.
    pub fn new(
        name: &str,
        me: Peer,
        clock: Clock,
        nic_bps: u64,
        config: RdmaConfig,
        peers: Vec<Peer>,
    ) -> Result<RdmaHost, String> {
        config.validate(name, nic_bps)?;
        let line = LineRate::new(clock, nic_bps);
        let pfc = config.honour_pfc.then(|| Pfc::new(line));
        Ok(RdmaHost {
            name: name.to_string(),
            me,
            line,
            config,
            peers,
            pending: Vec::new(),
            flows: Vec::new(),
            open: Vec::new(),
            finished: false,
            calendar: BinaryHeap::new(),
            rr: 0,
            control: VecDeque::new(),
            receiving: BTreeMap::new(),
            on_nic: VecDeque::with_capacity(2),
            nic_free_ticks: 0,
            pfc,
            frames_sent: 0,
            frames_received: 0,
            data_bytes_received: 0,
            duplicate_packets: 0,
            marked_packets: 0,
            out_of_order: 0,
            acks_sent: 0,
            nacks_sent: 0,
            cnps_sent: 0,
            cnps_received: 0,
            foreign: 0,
            lose: Vec::new(),
            lost: 0,
            mark: Vec::new(),
            scratch: Vec::new(),
            body: Vec::new(),
        })
    }

    /// Schedules a flow this host sends; its `dst` indexes the peer table.
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
        if spec.id >= 1 << 24 {
            return Err(format!(
                "{}: flow {} does not fit a 24-bit QP number",
                self.name, spec.id
            ));
        }
        let at = self
            .pending
            .partition_point(|p| (p.start, p.id) > (spec.start, spec.id));
        self.pending.insert(at, spec);
        Ok(())
    }

    /// Makes the data frame of `flow` with `psn` vanish on the wire the first time it is
    /// sent (a fault for tests; it is counted in [`RdmaHost::lost`]).
    pub fn lose_once(&mut self, flow: u32, psn: u32) {
        self.lose.push((flow, psn));
    }

    /// Makes the data frames of `flow` whose PSN is in `psns` leave with CE (a fixed marking
    /// pattern for tests).
    pub fn mark_ce(&mut self, flow: u32, psns: std::ops::Range<u32>) {
        self.mark.push((flow, psns));
    }

    /// Cycles the CNPs about flow `flow_id` reached this (sending) host.
    pub fn cnps_received_at(&self, flow_id: u32) -> &[Cycle] {
        self.qp(flow_id).map_or(&[], |f| f.cnp_at.as_slice())
    }

    /// Cycles this (receiving) host's notification point queued CNPs about `flow_id`.
    pub fn cnps_sent_at(&self, flow_id: u32) -> &[Cycle] {
        self.receiving
            .get(&flow_id)
            .map_or(&[], |r| r.cnp_at.as_slice())
    }

    pub fn config(&self) -> &RdmaConfig {
        &self.config
    }

    /// The outcome of every flow this host was given, started ones in start order.
    pub fn outcomes(&self) -> Vec<SenderOutcome> {
        self.flows
            .iter()
            .map(|f| SenderOutcome {
                spec: f.spec,
                finish: f.finish,
                timeouts: f.timeouts,
                retransmitted_segments: f.retransmitted,
                fast_recoveries: f.go_backs,
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

    pub fn all_done(&self) -> bool {
        self.pending.is_empty() && self.open.iter().all(|&i| self.flows[i].finish.is_some())
    }

    /// The rate control of flow `flow_id`'s QP, once it has started (with a control).
    pub fn rate_control(&self, flow_id: u32) -> Option<&dyn RateControl> {
        self.qp(flow_id).and_then(|f| f.cc.as_deref())
    }

    fn qp(&self, flow_id: u32) -> Option<&SendQp> {
        self.flows.iter().find(|f| f.spec.id == flow_id)
    }

    /// PSNs of flow `flow_id` in the order they arrived here.
    pub fn arrivals(&self, flow_id: u32) -> Option<&[u64]> {
        self.receiving.get(&flow_id).map(|r| r.arrivals.as_slice())
    }

    pub fn data_bytes_received(&self) -> u64 {
        self.data_bytes_received
    }
    pub fn frames_sent(&self) -> u64 {
        self.frames_sent
    }
    pub fn frames_on_nic(&self) -> u64 {
        self.on_nic.len() as u64
    }
    pub fn frames_received(&self) -> u64 {
        self.frames_received
    }
    /// Data packets that carried a PSN already received.
    pub fn duplicate_packets(&self) -> u64 {
        self.duplicate_packets
    }
    /// Data packets that arrived ahead of the expected PSN (dropped; the first NACKed).
    pub fn out_of_order_packets(&self) -> u64 {
        self.out_of_order
    }
    pub fn marked_packets(&self) -> u64 {
        self.marked_packets
    }
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
    pub fn nacks_sent(&self) -> u64 {
        self.nacks_sent
    }
    pub fn cnps_sent(&self) -> u64 {
        self.cnps_sent
    }
    pub fn cnps_received(&self) -> u64 {
        self.cnps_received
    }
    /// PFC frames received and honoured (with `honour_pfc`).
    pub fn pfc_frames(&self) -> u64 {
        self.counters().get(crate::host_feature::pfc::PFC_FRAMES)
    }
    /// What the NIC's PFC counted.
    pub fn counters(&self) -> HostCounters {
        let mut c = HostCounters::default();
        if let Some(p) = &self.pfc {
            p.count(&mut c);
        }
        c
    }
    /// Whether PFC holds class 0 in cycle `now`.
    fn paused(&self, now: Cycle) -> bool {
        self.pfc.as_ref().is_some_and(|p| !p.may_send(now, 0, None))
    }
    pub fn foreign(&self) -> u64 {
        self.foreign
    }
    /// Frames lost on the wire by [`RdmaHost::lose_once`].
    pub fn lost(&self) -> u64 {
        self.lost
    }

    fn on_data(&mut self, now: Cycle, f: &RoceFrame) {
        let from = Peer {
            ip: f.src_ip,
            mac: f.src_mac,
        };
        let (cnp_interval, ack_interval, nack_interval) = (
            self.config.cnp_interval,
            self.config.ack_interval,
            self.config.nack_interval,
        );
        let r = self.receiving.entry(f.qp).or_default();
        r.arrivals.push(f.psn as u64);
        if f.ce {
            self.marked_packets += 1;
            if r.last_cnp.is_none_or(|t| now >= t + cnp_interval) {
                r.last_cnp = Some(now);
                r.cnp_at.push(now);
                self.control.push_back(Control {
                    to: from,
                    qp: f.qp,
                    psn: 0,
                    kind: ControlKind::Cnp,
                    int: None,
                });
            }
        }
        if f.psn == r.expected {
            r.expected += 1;
            r.since_ack += 1;
            self.data_bytes_received += f.payload as u64;
            if f.is_last() || r.since_ack >= ack_interval {
                r.since_ack = 0;
                self.control.push_back(Control {
                    to: from,
                    qp: f.qp,
                    psn: r.expected - 1,
                    kind: ControlKind::Ack,
                    int: f.int,
                });
            }
        } else if f.psn > r.expected {
            self.out_of_order += 1;
            let due = match r.last_nack {
                Some((psn, at)) => psn != r.expected || now >= at + nack_interval,
                None => true,
            };
            if due {
                r.last_nack = Some((r.expected, now));
                self.control.push_back(Control {
                    to: from,
                    qp: f.qp,
                    psn: r.expected,
                    kind: ControlKind::Nack,
                    int: f.int,
                });
            }
        } else {
            self.duplicate_packets += 1;
        }
    }

    fn open_qp(&mut self, qp: u32) -> Option<usize> {
        let flows = &self.flows;
        self.open
            .iter()
            .copied()
            .find(|&i| flows[i].spec.id == qp && flows[i].finish.is_none())
    }

    fn on_ack(&mut self, now: Cycle, f: &RoceFrame) {
        let Some(i) = self.open_qp(f.qp) else {
            return; // about a finished flow
        };
        let rto = self.config.rto;
        let q = &mut self.flows[i];
        let nack = f
            .syndrome
            .is_some_and(|s| s & 0xe0 == wire::SYNDROME_NAK_SEQ);
        let acked = if nack { f.psn } else { f.psn + 1 };
        if acked > q.snd_una {
            q.snd_una = acked.min(q.packets);
            q.rto_at = now + rto;
        }
        if nack {
            q.go_backs += 1;
            q.snd_nxt = q.snd_una;
        }
        q.snd_nxt = q.snd_nxt.max(q.snd_una);
        if q.snd_una == q.packets {
            q.finish = Some(now);
            self.finished = true;
        }
        let mtu = self.config.mtu;
        if let (Some(c), Some(int)) = (q.cc.as_mut(), f.int.as_ref()) {
            let ack_seq = q.spec.size_bytes.min(acked as u64 * mtu);
            let next_seq = q.spec.size_bytes.min(q.snd_nxt as u64 * mtu);
            let old = c.rate_bps();
            c.on_ack(ack_seq, next_seq, int);
            let new = c.rate_bps();
            if new != old && q.last_bytes > 0 {
                let per_second =
                    self.line.ticks_per_bit() as u128 * self.line.bits_per_second() as u128;
                let bits = LineRate::wire_bits(q.last_bytes) as u128;
                let at = |rate: u64| (bits * per_second).div_ceil(rate as u128) as i128;
                let moved = q.ready_ticks as i128 + at(new) - at(old);
                q.ready_ticks = moved.max(0) as u64;
            }
        }
    }

    fn on_cnp(&mut self, now: Cycle, f: &RoceFrame) {
        self.cnps_received += 1;
        let Some(i) = self.open_qp(f.qp) else {
            return;
        };
        let q = &mut self.flows[i];
        q.cnp_at.push(now);
        if q.cc.as_mut().is_some_and(|c| c.on_cnp(now)) {
            self.wake(i);
        }
    }

    /// Makes sure QP `i` has a calendar entry at or before its next timer.
    fn wake(&mut self, i: usize) {
        let q = &mut self.flows[i];
        if let Some(t) = q.timers_at() {
            if q.wake_at.is_none_or(|w| t < w) {
                q.wake_at = Some(t);
                self.calendar.push(Reverse((t, i)));
            }
        }
    }

    /// Drops the calendar's dead entries from its top (a QP's entry that a sooner one
    /// replaced), so that its top is a live entry.
    fn settle_calendar(&mut self) {
        while let Some(&Reverse((t, i))) = self.calendar.peek() {
            if self.flows[i].wake_at == Some(t) {
                break;
            }
            self.calendar.pop();
        }
    }

    /// Starts due flows, fires due rate-control timers and retransmission timers.
    fn housekeeping(&mut self, now: Cycle) {
        while self.pending.last().is_some_and(|p| p.start <= now) {
            let spec = self.pending.pop().expect("checked");
            let line = self.line.bits_per_second();
            self.open.push(self.flows.len());
            self.flows.push(SendQp {
                spec,
                to: self.peers[spec.dst],
                packets: spec.size_bytes.div_ceil(self.config.mtu) as u32,
                snd_una: 0,
                snd_nxt: 0,
                ready_ticks: 0,
                cc: self.config.control.as_ref().map(|c| c.build(line)),
                finish: None,
                rto_at: now + self.config.rto,
                timeouts: 0,
                retransmitted: 0,
                go_backs: 0,
                high: 0,
                cnp_at: Vec::new(),
                last_bytes: 0,
                wake_at: None,
            });
            self.wake(self.flows.len() - 1);
        }
        // The QPs whose timers are due, each once (their timers touch only their own QP, so
        // the order among QPs does not matter).
        let rto = self.config.rto;
        while let Some(&Reverse((t, i))) = self.calendar.peek() {
            if t > now {
                break;
            }
            self.calendar.pop();
            let q = &mut self.flows[i];
            if q.wake_at != Some(t) {
                continue;
            }
            q.wake_at = None;
            if q.finish.is_some() {
                continue;
            }
            if let Some(c) =
                q.cc.as_mut()
                    .filter(|c| c.timer_at().is_some_and(|t| t <= now))
            {
                c.on_time(now);
            }
            if now >= q.rto_at {
                q.timeouts += 1;
                q.snd_nxt = q.snd_una;
                q.rto_at = now + rto;
            }
            self.wake(i);
        }
        if std::mem::take(&mut self.finished) {
            let flows = &self.flows;
            self.open.retain(|&i| flows[i].finish.is_none());
        }
        self.settle_calendar();
    }

    /// The next frame to send, with the QP whose data it is.
    fn next_frame(
        &mut self,
        now: Cycle,
        pool: &mut PacketPool,
    ) -> Option<(PacketHandle, Option<usize>)> {
        let paused = self.paused(now);
        if paused && (self.config.control_dscp.is_none() || self.control.is_empty()) {
            return None;
        }
        if let Some(c) = self.control.pop_front() {
            let (opcode, syndrome) = match c.kind {
                ControlKind::Ack => (wire::OP_ACKNOWLEDGE, Some(wire::SYNDROME_ACK)),
                ControlKind::Nack => (wire::OP_ACKNOWLEDGE, Some(wire::SYNDROME_NAK_SEQ)),
                ControlKind::Cnp => (wire::OP_CNP, None),
            };
            match c.kind {
                ControlKind::Ack => self.acks_sent += 1,
                ControlKind::Nack => self.nacks_sent += 1,
                ControlKind::Cnp => self.cnps_sent += 1,
            }
            let pkt = self.build(pool, c.to, c.qp, opcode, c.psn, syndrome, c.int, 0);
            if let Some(dscp) = self.config.control_dscp {
                let buf = pool.bytes_mut(pkt);
                buf[15] |= dscp << 2;
                let ip = &mut buf[14..34];
                ip[10..12].copy_from_slice(&[0, 0]);
                let c = t2_pipeline::headers::ipv4_header_checksum(ip);
                ip[10..12].copy_from_slice(&c.to_be_bytes());
            }
            return Some((pkt, None));
        }
        let n = self.open.len();
        let first = self.open.partition_point(|&i| i < self.rr);
        let next_ticks = self.line.cycle_to_ticks(now + 1);
        let (window, mtu) = (self.config.window_bytes, self.config.mtu);
        for k in 0..n {
            let i = self.open[(first + k) % n];
            let q = &self.flows[i];
            if !q.has_data(window, mtu) || q.ready_ticks >= next_ticks {
                continue;
            }
            self.rr = i + 1;
            let psn = q.snd_nxt;
            let payload = q.payload_of(psn, mtu);
            let opcode = match (psn, q.packets) {
                (_, 1) => wire::OP_SEND_ONLY,
                (0, _) => wire::OP_SEND_FIRST,
                (p, n) if p + 1 == n => wire::OP_SEND_LAST,
                _ => wire::OP_SEND_MIDDLE,
            };
            let (to, id) = (q.to, q.spec.id);
            let q = &mut self.flows[i];
            if psn < q.high {
                q.retransmitted += 1;
            }
            q.high = q.high.max(psn + 1);
            q.snd_nxt += 1;
            let int = self.config.int().then(IntHeader::default);
            let pkt = self.build(pool, to, id, opcode, psn, None, int, payload as usize);
            if self.mark.iter().any(|(f, r)| *f == id && r.contains(&psn)) {
                let buf = pool.bytes_mut(pkt);
                buf[15] |= wire::CE;
                let ip = &mut buf[14..34];
                ip[10..12].copy_from_slice(&[0, 0]);
                let c = t2_pipeline::headers::ipv4_header_checksum(ip);
                ip[10..12].copy_from_slice(&c.to_be_bytes());
            }
            return Some((pkt, Some(i)));
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &mut self,
        pool: &mut PacketPool,
        to: Peer,
        qp: u32,
        opcode: u8,
        psn: u32,
        syndrome: Option<u8>,
        int: Option<IntHeader>,
        payload: usize,
    ) -> PacketHandle {
        let pkt = pool.alloc();
        wire::build_with_int(
            &mut self.body,
            (self.me.ip, self.me.mac),
            (to.ip, to.mac),
            10_000 + (qp % 50_000) as u16,
            opcode,
            qp,
            psn,
            syndrome,
            int.as_ref(),
            payload,
            &mut self.scratch,
        );
        let buf = pool.bytes_mut(pkt);
        buf.clear();
        buf.extend_from_slice(&self.body);
        pkt
    }

    /// Paces QP `i` after a frame of `bytes` that starts at line tick `start`.
    fn pace(&mut self, i: usize, start: u64, bytes: u64) {
        let per_second = self.line.ticks_per_bit() as u128 * self.line.bits_per_second() as u128;
        let q = &mut self.flows[i];
        q.last_bytes = bytes;
        let rate =
            q.cc.as_ref()
                .map_or(self.line.bits_per_second(), |c| c.rate_bps());
        let bits = LineRate::wire_bits(bytes) as u128;
        q.ready_ticks = start + (bits * per_second).div_ceil(rate as u128) as u64;
        if let Some(c) = q.cc.as_mut() {
            // What the control does with the bytes happens as the frame starts.
            c.on_sent(bytes, self.line.ticks_to_cycle_ceil(start));
        }
    }
}

impl Node for RdmaHost {
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
        if let Some(pfc) = &mut self.pfc {
            if pfc.on_frame(now, pkt, pool) == Receipt::Taken {
                return;
            }
        }
        let bytes = pool.bytes(pkt);
        let frame = wire::parse_with(bytes, self.config.int());
        pool.free(pkt);
        match frame {
            Some(f) if f.is_data() => self.on_data(now, &f),
            Some(f) if f.opcode == wire::OP_ACKNOWLEDGE && f.syndrome.is_some() => {
                self.on_ack(now, &f)
            }
            Some(f) if f.opcode == wire::OP_CNP => self.on_cnp(now, &f),
            _ => self.foreign += 1,
        }
    }

    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        while let Some(&(at, pkt)) = self.on_nic.front() {
            if at > now {
                break;
            }
            self.on_nic.pop_front();
            out.push(Sent { port: 0, pkt });
        }
        self.housekeeping(now);
        if self.nic_free_ticks >= self.line.cycle_to_ticks(now + 1) {
            return;
        }
        if let Some((pkt, qp)) = self.next_frame(now, pool) {
            let mut start = self.line.cycle_to_ticks(now).max(self.nic_free_ticks);
            let bytes = pool.frame_bytes(pkt);
            if let Some(i) = qp {
                start = start.max(self.flows[i].ready_ticks);
                self.pace(i, start, bytes);
            }
            let end = start + self.line.serialization_ticks(bytes);
            self.nic_free_ticks = end;
            self.frames_sent += 1;
            let lost = qp.and_then(|i| {
                let q = &self.flows[i];
                let key = (q.spec.id, q.snd_nxt - 1);
                self.lose.iter().position(|&l| l == key)
            });
            match lost {
                Some(k) => {
                    // The line time is spent; the frame never reaches the link.
                    self.lose.swap_remove(k);
                    self.lost += 1;
                    pool.free(pkt);
                }
                None => self
                    .on_nic
                    .push_back((self.line.ticks_to_cycle_ceil(end), pkt)),
            }
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + 1;
        let per_cycle = self.line.ticks_per_cycle();
        let nic = self.on_nic.front().map(|&(t, _)| t);
        let start = self.pending.last().map(|p| p.start);
        let timers = self.calendar.peek().map(|&Reverse((t, _))| t);
        // A frame starts only in a cycle the NIC is free in, and data (control too, unless
        // it has its own class) only once PFC's pause of class 0 has ended: waking sooner
        // would find nothing to do (a PFC frame that changes the pause wakes the host).
        let free = (self.nic_free_ticks / per_cycle).max(soon);
        let unpaused = self
            .pfc
            .as_ref()
            .map_or(0, |p| p.pauses().until(0))
            .max(soon);
        let control = (!self.control.is_empty()).then(|| {
            if self.config.control_dscp.is_some() {
                soon
            } else {
                unpaused
            }
        });
        let (window, mtu) = (self.config.window_bytes, self.config.mtu);
        // The first cycle a QP's pacing lets it send.
        let paced = self
            .open
            .iter()
            .map(|&i| &self.flows[i])
            .filter(|q| q.finish.is_none() && q.has_data(window, mtu))
            .map(|q| q.ready_ticks / per_cycle)
            .min()
            .map(|t| t.max(unpaused));
        let send = control.into_iter().chain(paced).min().map(|t| t.max(free));
        [nic, start, timers, send]
            .into_iter()
            .flatten()
            .map(|t| t.max(soon))
            .min()
    }
}

#[cfg(test)]
mod tests;
