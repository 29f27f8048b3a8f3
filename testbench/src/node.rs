//! The `Node` trait: anything with ports that the kernel advances cycle by cycle.

use std::any::Any;
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};

/// A node's place in a [`crate::Network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub usize);

/// A frame a node finished sending in the current cycle: its last bit left `port` now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub port: usize,
    pub pkt: PacketHandle,
}

/// A switch, a host, or anything else with ports.
///
/// The contract: within cycle `now` the kernel first calls `receive` for every frame whose
/// last bit reaches the node in `now`, then `tick(now)` if the node is due. A node never
/// needs to be ticked at a cycle before the one `next_event` reported; being ticked at
/// any other cycle (as when stepping every cycle) must change nothing.
pub trait Node: Any + Send {
    /// A short name for errors and reports.
    fn name(&self) -> &str;

    fn port_count(&self) -> usize;

    /// The line rate of `port` in bits per second.
    fn port_bps(&self, port: usize) -> u64;

    /// A frame whose last bit reached `port` in cycle `now`. The node now owns `pkt`.
    fn receive(&mut self, now: Cycle, port: usize, pkt: PacketHandle, pool: &mut PacketPool);

    /// Does everything the node does in cycle `now`, pushing the frames whose last bit
    /// leaves in this cycle onto `out`. Ownership of their packets passes to the link.
    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>);

    /// The first cycle after `now` in which the node will act without new input.
    fn next_event(&self, now: Cycle) -> Option<Cycle>;
}
