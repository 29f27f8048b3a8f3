//! The built-in ingress program: IPv4 host-route forwarding from one exact-match table.
//!
//! Stage 0 holds table `ipv4_host`, keyed on the IPv4 destination address (32 bits, exact),
//! with one action, `forward(port)`, that sets `ucast_egress_port` and lowers the TTL by one,
//! and a default action that drops with reason `no_route`. A gateway in the same stage drops
//! packets that are not IPv4 (`not_ipv4`) or whose TTL would reach 0 (`ttl_expired`).

use crate::gress::StageProgram;
use crate::layout;
use crate::phv::Phv;
use crate::DropReason;
use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;

/// A route that cannot be added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// The destination already has a route.
    Duplicate(Ipv4Addr),
    /// Device ports are 9 bits.
    PortOutOfRange(u16),
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::Duplicate(a) => write!(f, "a route to {a} already exists"),
            RouteError::PortOutOfRange(p) => {
                write!(f, "device port {p} does not fit in 9 bits")
            }
        }
    }
}

impl std::error::Error for RouteError {}

/// IPv4 forwarding by exact destination address.
#[derive(Clone, Debug, Default)]
pub struct Ipv4Forward {
    routes: HashMap<u32, u16>,
}

impl Ipv4Forward {
    /// The stage the table is placed in.
    pub const STAGE: usize = 0;

    pub fn new() -> Ipv4Forward {
        Ipv4Forward::default()
    }

    /// Adds the entry `dst -> forward(dev_port)`.
    pub fn add_route(&mut self, dst: Ipv4Addr, dev_port: u16) -> Result<(), RouteError> {
        if dev_port >= 512 {
            return Err(RouteError::PortOutOfRange(dev_port));
        }
        match self.routes.entry(u32::from(dst)) {
            std::collections::hash_map::Entry::Occupied(_) => Err(RouteError::Duplicate(dst)),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(dev_port);
                Ok(())
            }
        }
    }

    pub fn len(&self) -> usize {
        self.routes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }
}

impl StageProgram for Ipv4Forward {
    fn active_stages(&self) -> Vec<usize> {
        vec![Self::STAGE]
    }

    fn apply(&mut self, stage: usize, phv: &mut Phv) {
        debug_assert_eq!(stage, Self::STAGE);
        if phv.get(layout::DROP_REASON) != 0 {
            return;
        }
        let drop = |phv: &mut Phv, r: DropReason| phv.set(layout::DROP_REASON, r as u32);
        if phv.get(layout::VALID_IPV4) == 0 {
            return drop(phv, DropReason::NotIpv4);
        }
        match self.routes.get(&phv.get(layout::IPV4_DST)) {
            None => drop(phv, DropReason::NoRoute),
            Some(_) if phv.get(layout::IPV4_TTL) <= 1 => drop(phv, DropReason::TtlExpired),
            Some(&port) => {
                phv.set(layout::UCAST_EGRESS_PORT, port as u32);
                phv.set(layout::EGRESS_PORT_VALID, 1);
                phv.set(layout::IPV4_TTL, phv.get(layout::IPV4_TTL) - 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::PhvParams;

    fn phv_for(dst: Ipv4Addr, ttl: u32) -> Phv {
        let mut phv = Phv::new(&PhvParams::default());
        phv.set(layout::VALID_IPV4, 1);
        phv.set(layout::IPV4_DST, u32::from(dst));
        phv.set(layout::IPV4_TTL, ttl);
        phv
    }

    #[test]
    fn hits_misses_and_ttl() {
        let mut t = Ipv4Forward::new();
        let a = Ipv4Addr::new(10, 0, 0, 9);
        t.add_route(a, 137).unwrap();
        assert_eq!(t.add_route(a, 1), Err(RouteError::Duplicate(a)));
        assert_eq!(
            t.add_route(Ipv4Addr::new(1, 1, 1, 1), 600),
            Err(RouteError::PortOutOfRange(600))
        );

        let mut hit = phv_for(a, 64);
        t.apply(0, &mut hit);
        assert_eq!(hit.get(layout::UCAST_EGRESS_PORT), 137);
        assert_eq!(hit.get(layout::EGRESS_PORT_VALID), 1);
        assert_eq!(hit.get(layout::IPV4_TTL), 63);
        assert_eq!(hit.get(layout::DROP_REASON), 0);

        let mut miss = phv_for(Ipv4Addr::new(10, 0, 0, 8), 64);
        t.apply(0, &mut miss);
        assert_eq!(miss.get(layout::DROP_REASON), DropReason::NoRoute as u32);

        let mut old = phv_for(a, 1);
        t.apply(0, &mut old);
        assert_eq!(old.get(layout::DROP_REASON), DropReason::TtlExpired as u32);

        let mut arp = Phv::new(&PhvParams::default());
        t.apply(0, &mut arp);
        assert_eq!(arp.get(layout::DROP_REASON), DropReason::NotIpv4 as u32);
    }
}
