//! The built-in ingress program: IPv4 host-route forwarding from one exact-match table.
//!
//! Stage 0 holds table `ipv4_host`, keyed on the IPv4 destination address (32 bits, exact),
//! with one action, `forward(port)`, that sets `ucast_egress_port` and lowers the TTL by one,
//! and a default action that drops with reason `no_route`. A gateway in the same stage drops
//! packets that are not IPv4 (`not_ipv4`) or whose TTL would reach 0 (`ttl_expired`).
//!
//! ECMP: a destination may map to a group of ports instead of one. The port is chosen by a
//! CRC-32 (polynomial 0x04C11DB7, MSB first, initial value 0, no reflection, no final XOR:
//! the hash units' CRC, `crate::run::exec::crc`) of the 5-tuple as 13 bytes: source address,
//! destination address, protocol, source port, destination port (ports 0 when the packet is
//! neither TCP nor UDP), big-endian; member `crc mod n` of the group, in the order the group
//! was given. Every packet of a flow has the same 5-tuple, so a flow keeps one path. On the
//! chip this is an action selector in the same stage as the table.

use crate::hw::gress::StageProgram;
use crate::hw::layout;
use crate::hw::phv::Phv;
use crate::program::ir::HashAlgorithm;
use crate::run::exec::crc;
use crate::DropReason;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::net::Ipv4Addr;

/// A route that cannot be added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// The destination already has a route.
    Duplicate(Ipv4Addr),
    /// Device ports are 9 bits.
    PortOutOfRange(u16),
    /// An ECMP group with no ports.
    EmptyGroup(Ipv4Addr),
    /// An ECMP group that lists a port twice.
    RepeatedPort(Ipv4Addr, u16),
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::Duplicate(a) => write!(f, "a route to {a} already exists"),
            RouteError::PortOutOfRange(p) => {
                write!(f, "device port {p} does not fit in 9 bits")
            }
            RouteError::EmptyGroup(a) => write!(f, "the ECMP group for {a} has no ports"),
            RouteError::RepeatedPort(a, p) => {
                write!(f, "a route to {a} via device port {p} already exists")
            }
        }
    }
}

impl std::error::Error for RouteError {}

/// IPv4 forwarding by exact destination address.
#[derive(Clone, Debug, Default)]
pub struct Ipv4Forward {
    /// Destination to its port, or its ECMP group of ports (more than one).
    routes: HashMap<u32, Vec<u16>, BuildHasherDefault<AddressHasher>>,
}

/// Hashes an IPv4 address by one multiplication (Fibonacci hashing): routes are looked up
/// for every packet, and the standard hasher's SipHash costs more than the lookup itself.
/// Nothing iterates the routes, so the order this gives is never seen.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The ECMP member (index into a group of `n`) for a 5-tuple: CRC-32 of its 13 bytes mod n.
pub fn ecmp_member(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    protocol: u8,
    src_port: u16,
    dst_port: u16,
    n: usize,
) -> usize {
    let mut b = [0u8; 13];
    b[0..4].copy_from_slice(&src.octets());
    b[4..8].copy_from_slice(&dst.octets());
    b[8] = protocol;
    b[9..11].copy_from_slice(&src_port.to_be_bytes());
    b[11..13].copy_from_slice(&dst_port.to_be_bytes());
    let h = crc(
        HashAlgorithm::Crc32,
        HashAlgorithm::Crc32.default_polynomial(),
        &b,
    );
    h as usize % n.max(1)
}

impl Ipv4Forward {
    /// The stage the table is placed in.
    pub const STAGE: usize = 0;

    pub fn new() -> Ipv4Forward {
        Ipv4Forward::default()
    }

    /// Adds the entry `dst -> forward(dev_port)`.
    pub fn add_route(&mut self, dst: Ipv4Addr, dev_port: u16) -> Result<(), RouteError> {
        self.add_ecmp_route(dst, &[dev_port])
    }

    /// Adds `dst -> ` one of `dev_ports`, chosen per flow by [`ecmp_member`] (one port: a
    /// plain route).
    pub fn add_ecmp_route(&mut self, dst: Ipv4Addr, dev_ports: &[u16]) -> Result<(), RouteError> {
        if dev_ports.is_empty() {
            return Err(RouteError::EmptyGroup(dst));
        }
        for (i, &p) in dev_ports.iter().enumerate() {
            if p >= 512 {
                return Err(RouteError::PortOutOfRange(p));
            }
            if dev_ports[..i].contains(&p) {
                return Err(RouteError::RepeatedPort(dst, p));
            }
        }
        match self.routes.entry(u32::from(dst)) {
            std::collections::hash_map::Entry::Occupied(_) => Err(RouteError::Duplicate(dst)),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(dev_ports.to_vec());
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

    /// One stage, and no state a packet changes.
    fn stages_commute(&self) -> bool {
        true
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
            Some(ports) => {
                let port = match ports.as_slice() {
                    [one] => *one,
                    group => {
                        let l4 = phv.get(layout::VALID_TCP) != 0 || phv.get(layout::VALID_UDP) != 0;
                        let port = |f| if l4 { phv.get(f) as u16 } else { 0 };
                        group[ecmp_member(
                            Ipv4Addr::from(phv.get(layout::IPV4_SRC)),
                            Ipv4Addr::from(phv.get(layout::IPV4_DST)),
                            phv.get(layout::IPV4_PROTOCOL) as u8,
                            port(layout::L4_SRC_PORT),
                            port(layout::L4_DST_PORT),
                            group.len(),
                        )]
                    }
                };
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
    use crate::hw::params::PhvParams;

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

    #[test]
    fn ecmp_groups_hash_the_five_tuple() {
        // The hash: CRC-32/CKSUM (POSIX cksum, check value 0x765E7680) without its final
        // XOR, so the check value inverted.
        assert_eq!(
            crc(HashAlgorithm::Crc32, 0x04C1_1DB7, b"123456789"),
            0x89A1_897F
        );
        let dst = Ipv4Addr::new(10, 0, 0, 9);
        // 10.0.0.1 -> 10.0.0.9, TCP, 10000 -> 80: bytes 0a000001 0a000009 06 2710 0050 hash to
        // 0x830E4A75 (computed apart from this code): member 0 of 3, 1 of 4.
        let src = Ipv4Addr::new(10, 0, 0, 1);
        assert_eq!(ecmp_member(src, dst, 6, 10_000, 80, 3), 0x830E_4A75 % 3);
        assert_eq!(ecmp_member(src, dst, 6, 10_000, 80, 4), 1);
        let mut t = Ipv4Forward::new();
        t.add_ecmp_route(dst, &[4, 8, 12]).unwrap();
        assert_eq!(t.add_route(dst, 20), Err(RouteError::Duplicate(dst)));
        let other = Ipv4Addr::new(10, 0, 0, 10);
        assert_eq!(
            t.add_ecmp_route(other, &[]),
            Err(RouteError::EmptyGroup(other))
        );
        assert_eq!(
            t.add_ecmp_route(other, &[1, 2, 1]).unwrap_err().to_string(),
            "a route to 10.0.0.10 via device port 1 already exists"
        );
        assert_eq!(
            t.add_ecmp_route(other, &[1, 600]),
            Err(RouteError::PortOutOfRange(600))
        );
        // 1000 TCP flows from one host, source ports 10000..11000, to port 80: each packet of
        // a flow takes the same member, and the flows spread as the hash says.
        let mut counts = [0; 3];
        for sport in 10_000..11_000u16 {
            let mut taken = Vec::new();
            for ttl in [64, 9] {
                let mut phv = phv_for(dst, ttl);
                phv.set(layout::VALID_TCP, 1);
                phv.set(layout::IPV4_SRC, u32::from(Ipv4Addr::new(10, 0, 0, 1)));
                phv.set(layout::IPV4_PROTOCOL, 6);
                phv.set(layout::L4_SRC_PORT, sport as u32);
                phv.set(layout::L4_DST_PORT, 80);
                t.apply(0, &mut phv);
                taken.push(phv.get(layout::UCAST_EGRESS_PORT));
            }
            assert_eq!(taken[0], taken[1], "a flow keeps its path");
            let m = ecmp_member(Ipv4Addr::new(10, 0, 0, 1), dst, 6, sport, 80, 3);
            assert_eq!(taken[0], [4, 8, 12][m]);
            counts[m] += 1;
        }
        assert_eq!(counts, [338, 309, 353]);
        // Over four members (a power of two) the CRC's low bits split these ports evenly.
        let four = (10_000..11_000u16).fold([0; 4], |mut c, sport| {
            c[ecmp_member(Ipv4Addr::new(10, 0, 0, 1), dst, 6, sport, 80, 4)] += 1;
            c
        });
        assert_eq!(four, [250; 4]);
    }
}
