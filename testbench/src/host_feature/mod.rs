//! A host's part of a congestion scheme, one module per feature behind one small interface.
//!
//! The transport host ([`crate::TransportHost`]) knows TCP and its NIC; everything a scheme
//! adds at the host (obeying a switch's pause frames, tagging frames for the switches,
//! resending bounced frames, a rate limiter per flow) is a [`HostFeature`] the host holds a
//! list of and calls at a few points:
//! - a frame arrives: each feature in turn may take it ([`Receipt`]), before the transport
//!   reads it as TCP, past any header a switch put in front of it that a feature knows
//!   ([`HostFeature::inner`]: a shim between Ethernet and IPv4);
//! - a frame is built: each feature may set its PFC class, DSCP and IPv4 identification
//!   ([`FrameTag`]), in list order (a later feature's DSCP wins);
//! - a frame may start: every feature must agree ([`HostFeature::may_send`]), and a flow's
//!   data frame starts no earlier than the latest tick any feature names;
//! - a flow starts and finishes, time passes, the host asks when it must next look;
//! - the results read each feature's counters, by name ([`HostCounters`]).
//!
//! A scheme names its features in its `Hosts` as [`FeatureSpec`]s, each of which builds one
//! instance per host. The features live with their schemes (`src/schemes/NAME/host.rs` of
//! the `t2sim` crate); the one here is [`pfc`], a NIC's side of the link-level flow control
//! (IEEE 802.1Qbb) that the chip's MACs send, which several schemes turn on.

pub mod pfc;

use crate::peer::Peer;
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::{PacketHandle, PacketPool};

/// What a feature did with a frame the host received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// Not this feature's: the next feature, then the transport, reads it.
    NotMine,
    /// The feature took the frame: it freed it, or holds it to send again.
    Taken,
    /// The feature's kind of frame, but malformed: the host counts it as foreign and frees it.
    Foreign,
}

/// The marks of a frame being built. Every frame starts in PFC class 0 with DSCP 0 and IPv4
/// identification 0, so a host without features sends the plain transport's frames byte
/// for byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameTag {
    /// The PFC class the frame travels in (and the class whose pause holds it).
    pub class: u8,
    /// The 6-bit DSCP of the IPv4 TOS byte.
    pub dscp: u8,
    /// The IPv4 identification field.
    pub ipv4_id: u16,
}

/// One sending flow as the features see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowView {
    /// The flow's place among the host's flows in start order (0, 1, ...), stable for the
    /// run: a feature may index its per-flow state by it.
    pub index: usize,
    /// The flow's id (unique in a run).
    pub id: u32,
    /// Payload bytes sent so far, retransmissions included.
    pub bytes_sent: u64,
    /// IPv4 bytes of every data frame sent so far, retransmissions included.
    pub ipv4_bytes_sent: u64,
}

/// The host a feature instance is built for.
#[derive(Clone, Copy, Debug)]
pub struct HostInfo<'a> {
    pub name: &'a str,
    pub me: Peer,
    pub line: LineRate,
}

/// What the features of a host counted, for the results, by name: each feature adds its own
/// counts under names it documents (`pfc_frames` for [`pfc`]), and the results read them by
/// those names. A count is a total over hosts ([`HostCounters::add`]) or the largest value
/// seen ([`HostCounters::raise`]); [`HostCounters::merge`] keeps each one's kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostCounters {
    counts: std::collections::BTreeMap<String, Count>,
}

/// One named count: a total, or a largest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Count {
    Sum(u64),
    Max(u64),
}

impl HostCounters {
    /// Adds `n` to the total `name`.
    pub fn add(&mut self, name: &str, n: u64) {
        match self.counts.get_mut(name) {
            Some(Count::Sum(v)) => *v += n,
            Some(Count::Max(_)) => panic!("count `{name}` is a largest value, not a total"),
            None => {
                self.counts.insert(name.to_string(), Count::Sum(n));
            }
        }
    }

    /// Raises the largest value `name` to `n` if `n` is larger.
    pub fn raise(&mut self, name: &str, n: u64) {
        match self.counts.get_mut(name) {
            Some(Count::Max(v)) => *v = (*v).max(n),
            Some(Count::Sum(_)) => panic!("count `{name}` is a total, not a largest value"),
            None => {
                self.counts.insert(name.to_string(), Count::Max(n));
            }
        }
    }

    /// The count `name` (0 if no feature counted it).
    pub fn get(&self, name: &str) -> u64 {
        match self.counts.get(name) {
            Some(Count::Sum(v) | Count::Max(v)) => *v,
            None => 0,
        }
    }

    /// The counts whose names start with `prefix`, by name, with the prefix taken off.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, u64)> {
        self.counts
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .map_while(move |(k, c)| {
                let rest = k.strip_prefix(prefix)?;
                Some((
                    rest,
                    match c {
                        Count::Sum(v) | Count::Max(v) => *v,
                    },
                ))
            })
    }

    /// Adds another host's counts: totals add up, largest values take the larger.
    pub fn merge(&mut self, other: &HostCounters) {
        for (name, c) in &other.counts {
            match *c {
                Count::Sum(n) => self.add(name, n),
                Count::Max(n) => self.raise(name, n),
            }
        }
    }
}

/// A host's part of a scheme. Every method but [`HostFeature::as_any`] has a default that
/// does nothing, so a feature writes only the points it acts at.
pub trait HostFeature: Send {
    /// The feature as [`Any`], so that tests and results can read its own state
    /// ([`find`]).
    fn as_any(&self) -> &dyn Any;

    /// A frame arrived in cycle `now`. With [`Receipt::Taken`] the feature now owns `pkt`
    /// (it frees it or holds it); otherwise the host does.
    fn on_frame(&mut self, _now: Cycle, _pkt: PacketHandle, _pool: &mut PacketPool) -> Receipt {
        Receipt::NotMine
    }

    /// The frame as the transport is to read it, for a frame the feature did not take that
    /// carries a header of the feature's in front of the transport's (a shim a switch put
    /// between Ethernet and IPv4): the frame without it. `None` (the default): as it is. The
    /// first feature, in list order, that gives a frame wins.
    fn inner(&self, _frame: &[u8]) -> Option<Vec<u8>> {
        None
    }

    /// Marks a frame being built: flow `Some` for a data frame, `None` for an ACK.
    fn tag(&self, _tag: &mut FrameTag, _flow: Option<&FlowView>) {}

    /// Whether a frame of PFC class `class` (of `flow`'s data, or an ACK or resent frame
    /// for `None`) may start in cycle `now`.
    fn may_send(&self, _now: Cycle, _class: u8, _flow: Option<&FlowView>) -> bool {
        true
    }

    /// The earliest line tick `flow`'s next data frame may start at (0: no bound).
    fn not_before(&self, _flow: &FlowView) -> u64 {
        0
    }

    /// `flow`'s data frame of `frame_bytes` (FCS included) starts at line tick `start`.
    fn on_data_start(&mut self, _flow: &FlowView, _start: u64, _frame_bytes: u64) {}

    /// `flow` started (its first frame may go now) or finished (the ACK of its last byte
    /// arrived).
    fn flow_started(&mut self, _flow: &FlowView) {}
    fn flow_finished(&mut self, _flow: &FlowView) {}

    /// A frame the feature holds to send as it is (PABO's bounced frames), taken only when
    /// PFC class 0 may send; they go before the transport's own frames.
    fn take_held(&mut self) -> Option<PacketHandle> {
        None
    }

    /// Time has reached `now` (called at every visit of the host, before it sends).
    fn on_time(&mut self, _now: Cycle) {}

    /// The next cycle after `now` the feature needs the host to look (a pause ending, a
    /// timer, a paced flow free again); `has_data(flow index)` says whether a flow has a
    /// segment to send.
    fn next_event(&self, _now: Cycle, _has_data: &dyn Fn(usize) -> bool) -> Option<Cycle> {
        None
    }

    /// Adds the feature's counters.
    fn count(&self, _counters: &mut HostCounters) {}
}

/// The feature of type `T` among `features`, if the host has one.
pub fn find<T: 'static>(features: &[Box<dyn HostFeature>]) -> Option<&T> {
    features.iter().find_map(|f| f.as_any().downcast_ref::<T>())
}

/// The sum of the counters of `features`.
pub fn counters(features: &[Box<dyn HostFeature>]) -> HostCounters {
    let mut c = HostCounters::default();
    for f in features {
        f.count(&mut c);
    }
    c
}

type Build = dyn Fn(&HostInfo) -> Result<Box<dyn HostFeature>, String> + Send + Sync;

/// How to build a feature for each host: what a scheme's `Hosts` lists. Two specs are equal
/// when their kind and their settings (as the spec describes them) are.
#[derive(Clone)]
pub struct FeatureSpec {
    kind: &'static str,
    settings: String,
    build: Arc<Build>,
}

impl FeatureSpec {
    /// A feature of `kind` (a short name, e.g. "pfc") with `settings` (a description of its
    /// parameters, for equality and display), built by `build` for each host; `build`
    /// refuses settings the host cannot run, naming the host.
    pub fn new(
        kind: &'static str,
        settings: String,
        build: impl Fn(&HostInfo) -> Result<Box<dyn HostFeature>, String> + Send + Sync + 'static,
    ) -> FeatureSpec {
        FeatureSpec {
            kind,
            settings,
            build: Arc::new(build),
        }
    }

    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The feature's instance for `host`.
    pub fn build(&self, host: &HostInfo) -> Result<Box<dyn HostFeature>, String> {
        (self.build)(host)
    }
}

impl PartialEq for FeatureSpec {
    fn eq(&self, other: &FeatureSpec) -> bool {
        self.kind == other.kind && self.settings == other.settings
    }
}

impl Eq for FeatureSpec {}

impl fmt::Debug for FeatureSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.kind, self.settings)
    }
}
