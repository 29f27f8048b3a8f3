//! Taps: watchers of the frames crossing the network's links (for packet captures).
//!
//! A tap set on a [`crate::Network`] sees every frame twice: when its last bit leaves a
//! node's port ([`Direction::Tx`], in the cycle the node hands it to the link) and when its
//! last bit reaches the far node's port ([`Direction::Rx`], in the cycle it is delivered,
//! before the node's tick). Frames injected with [`crate::Network::inject`] are seen only
//! when they arrive. A tap only watches; it cannot change or delay a frame.

use crate::node::NodeId;
use t2_clock::Cycle;

/// Which way a frame crosses the port a tap reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Into the node (the frame's last bit reached the port).
    Rx,
    /// Out of the node (the frame's last bit left the port).
    Tx,
}

/// One frame crossing a port.
#[derive(Clone, Copy, Debug)]
pub struct TapFrame<'a> {
    pub cycle: Cycle,
    pub node: NodeId,
    pub port: usize,
    pub direction: Direction,
    /// The frame's bytes, FCS excluded.
    pub bytes: &'a [u8],
}

/// Watches frames crossing ports.
pub trait Tap {
    fn frame(&mut self, frame: &TapFrame<'_>);
}
