//! A host's addresses, as the hosts that send to it know them.

use std::net::Ipv4Addr;
use t2_pipeline::headers::MacAddr;

/// Another host a flow can go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
}
