//! What a run asks of every host, whatever its NIC: [`Endpoint`], implemented by the TCP
//! transport's [`TransportHost`] and the RDMA NIC's [`RdmaHost`], and found on a network by
//! [`endpoint`] / [`endpoint_mut`]. Results, frame censuses and pause counts read hosts
//! through it, so a scheme can bring either kind of NIC.

use crate::host_feature::HostCounters;
use crate::network::{Network, NodeId};
use crate::rdma::RdmaHost;
use crate::transport::{SenderOutcome, TransportHost};
use crate::workload::FlowSpec;

/// A host as a run sees it.
pub trait Endpoint {
    /// Schedules a flow this host sends.
    fn add_flow(&mut self, spec: FlowSpec) -> Result<(), String>;
    /// Every flow's outcome at its sender.
    fn outcomes(&self) -> Vec<SenderOutcome>;
    fn all_done(&self) -> bool;
    /// Segment (packet) numbers of flow `id` in the order they arrived here.
    fn arrivals(&self, flow_id: u32) -> Option<&[u64]>;
    /// Data segments (packets) that carried only what had already arrived.
    fn duplicate_segments(&self) -> u64;
    /// Frames this host could not read.
    fn foreign(&self) -> u64;
    /// Frames put on the wire (or being serialized), and of those the ones still on the NIC.
    fn frames_sent(&self) -> u64;
    fn frames_on_nic(&self) -> u64;
    /// Frames that reached this host, every one freed here.
    fn frames_received(&self) -> u64;
    /// Frames the host sent that vanished on its own wire (fault injection).
    fn frames_lost(&self) -> u64;
    /// What the host's scheme features counted (PFC, BFC and PABO frames, CNMs).
    fn counters(&self) -> HostCounters;
}

impl Endpoint for TransportHost {
    fn add_flow(&mut self, spec: FlowSpec) -> Result<(), String> {
        TransportHost::add_flow(self, spec)
    }
    fn outcomes(&self) -> Vec<SenderOutcome> {
        TransportHost::outcomes(self)
    }
    fn all_done(&self) -> bool {
        TransportHost::all_done(self)
    }
    fn arrivals(&self, flow_id: u32) -> Option<&[u64]> {
        TransportHost::arrivals(self, flow_id)
    }
    fn duplicate_segments(&self) -> u64 {
        TransportHost::duplicate_segments(self)
    }
    fn foreign(&self) -> u64 {
        TransportHost::foreign(self)
    }
    fn frames_sent(&self) -> u64 {
        TransportHost::frames_sent(self)
    }
    fn frames_on_nic(&self) -> u64 {
        TransportHost::frames_on_nic(self)
    }
    fn frames_received(&self) -> u64 {
        TransportHost::frames_received(self)
    }
    fn frames_lost(&self) -> u64 {
        0
    }
    fn counters(&self) -> HostCounters {
        TransportHost::counters(self)
    }
}

impl Endpoint for RdmaHost {
    fn add_flow(&mut self, spec: FlowSpec) -> Result<(), String> {
        RdmaHost::add_flow(self, spec)
    }
    fn outcomes(&self) -> Vec<SenderOutcome> {
        RdmaHost::outcomes(self)
    }
    fn all_done(&self) -> bool {
        RdmaHost::all_done(self)
    }
    fn arrivals(&self, flow_id: u32) -> Option<&[u64]> {
        RdmaHost::arrivals(self, flow_id)
    }
    fn duplicate_segments(&self) -> u64 {
        self.duplicate_packets()
    }
    fn foreign(&self) -> u64 {
        RdmaHost::foreign(self)
    }
    fn frames_sent(&self) -> u64 {
        RdmaHost::frames_sent(self)
    }
    fn frames_on_nic(&self) -> u64 {
        RdmaHost::frames_on_nic(self)
    }
    fn frames_received(&self) -> u64 {
        RdmaHost::frames_received(self)
    }
    fn frames_lost(&self) -> u64 {
        self.lost()
    }
    fn counters(&self) -> HostCounters {
        RdmaHost::counters(self)
    }
}

/// Host `id` of `net` as an [`Endpoint`]. Panics if it is no host: a bug in the caller.
pub fn endpoint(net: &Network, id: NodeId) -> &dyn Endpoint {
    if let Some(h) = net.try_node::<TransportHost>(id) {
        return h;
    }
    match net.try_node::<RdmaHost>(id) {
        Some(h) => h,
        None => panic!("node {} is not a host", net.node_dyn(id).name()),
    }
}

/// Host `id` of `net` as an [`Endpoint`], mutably.
pub fn endpoint_mut(net: &mut Network, id: NodeId) -> &mut dyn Endpoint {
    if net.try_node::<TransportHost>(id).is_some() {
        return net.try_node_mut::<TransportHost>(id).expect("checked");
    }
    let name = net.node_dyn(id).name().to_string();
    match net.try_node_mut::<RdmaHost>(id) {
        Some(h) => h,
        None => panic!("node {name} is not a host"),
    }
}
