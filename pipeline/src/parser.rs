//! The parser (bytes to PHV) and deparser (PHV back to bytes) for the built-in headers.
//!
//! The parser is a state machine over the frame's bytes: `ethernet`, then `ipv4` if the
//! ethertype is 0x0800, then `udp` or `tcp` by protocol, then accept. It fills the containers
//! of [`crate::layout`] and sets the header-valid bits. Like Tofino2's parser checksum engines
//! it verifies the IPv4 header checksum; a mismatch or a truncated header marks the packet for
//! drop with its reason, and the program decides nothing more about it. The deparser writes
//! the valid headers back into the packet's bytes and recomputes the IPv4 checksum, as the
//! deparser's checksum units do.

use crate::headers::{self, ETHERTYPE_IPV4, IPPROTO_TCP, IPPROTO_UDP};
use crate::layout::{self, Extract};
use crate::phv::Phv;
use crate::DropReason;

fn extract_all(phv: &mut Phv, bytes: &[u8], at: usize, ops: &[Extract]) {
    for op in ops {
        phv.extract(op.container, &bytes[at + op.offset..]);
    }
}

fn emit_all(phv: &Phv, bytes: &mut [u8], at: usize, ops: &[Extract]) {
    for op in ops {
        phv.emit(op.container, &mut bytes[at + op.offset..]);
    }
}

/// Parses `bytes` into `phv` (which the caller has cleared). Returns the drop reason if the
/// frame cannot be parsed or its IPv4 checksum is wrong; the headers parsed before the
/// problem stay valid.
pub fn parse(bytes: &[u8], phv: &mut Phv) -> Result<(), DropReason> {
    if bytes.len() < headers::Ethernet::LEN {
        return Err(DropReason::ParserError);
    }
    extract_all(phv, bytes, 0, layout::ETHERNET);
    phv.set(layout::VALID_ETHERNET, 1);
    if phv.get(layout::ETH_TYPE) != ETHERTYPE_IPV4 as u32 {
        return Ok(());
    }
    let ip_at = headers::Ethernet::LEN;
    if bytes.len() < ip_at + headers::Ipv4::MIN_LEN {
        return Err(DropReason::ParserError);
    }
    let ver_ihl = bytes[ip_at];
    let ihl = (ver_ihl & 0xf) as usize;
    if ver_ihl >> 4 != 4 || ihl < 5 || bytes.len() < ip_at + ihl * 4 {
        return Err(DropReason::ParserError);
    }
    extract_all(phv, bytes, ip_at, layout::IPV4);
    phv.set(layout::VALID_IPV4, 1);
    if !headers::ipv4_checksum_ok(&bytes[ip_at..ip_at + ihl * 4]) {
        return Err(DropReason::Ipv4ChecksumError);
    }
    let l4_at = ip_at + ihl * 4;
    match phv.get(layout::IPV4_PROTOCOL) as u8 {
        IPPROTO_UDP => {
            if bytes.len() < l4_at + headers::Udp::LEN {
                return Err(DropReason::ParserError);
            }
            extract_all(phv, bytes, l4_at, layout::UDP);
            phv.set(layout::VALID_UDP, 1);
        }
        IPPROTO_TCP => {
            if bytes.len() < l4_at + headers::Tcp::MIN_LEN {
                return Err(DropReason::ParserError);
            }
            extract_all(phv, bytes, l4_at, layout::TCP);
            phv.set(layout::VALID_TCP, 1);
        }
        _ => {}
    }
    Ok(())
}

/// Writes the valid headers in `phv` back into `bytes` (the packet they were parsed from)
/// and recomputes the IPv4 header checksum.
pub fn deparse(phv: &Phv, bytes: &mut [u8]) {
    if phv.get(layout::VALID_ETHERNET) == 0 {
        return;
    }
    emit_all(phv, bytes, 0, layout::ETHERNET);
    if phv.get(layout::VALID_IPV4) == 0 {
        return;
    }
    let ip_at = headers::Ethernet::LEN;
    emit_all(phv, bytes, ip_at, layout::IPV4);
    let ihl = phv.get(layout::IPV4_IHL) as usize;
    let header = &mut bytes[ip_at..ip_at + ihl * 4];
    header[10] = 0;
    header[11] = 0;
    let sum = headers::internet_checksum(header);
    header[10..12].copy_from_slice(&sum.to_be_bytes());
    let l4_at = ip_at + ihl * 4;
    if phv.get(layout::VALID_UDP) == 1 {
        emit_all(phv, bytes, l4_at, layout::UDP);
    } else if phv.get(layout::VALID_TCP) == 1 {
        emit_all(phv, bytes, l4_at, layout::TCP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::{build_udp_frame, parse_frame, Endpoints, MacAddr};
    use crate::params::PhvParams;
    use std::net::Ipv4Addr;

    fn frame() -> Vec<u8> {
        let ep = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 1, 2, 3),
            src_port: 4791,
            dst_port: 9,
        };
        let mut b = Vec::new();
        build_udp_frame(&mut b, &ep, 64, 5, &[7; 40], false, 60);
        b
    }

    #[test]
    fn parses_udp_into_containers() {
        let b = frame();
        let mut phv = Phv::new(&PhvParams::default());
        parse(&b, &mut phv).unwrap();
        assert_eq!(phv.get(layout::VALID_UDP), 1);
        assert_eq!(phv.get(layout::VALID_TCP), 0);
        assert_eq!(
            phv.get(layout::IPV4_DST),
            u32::from(Ipv4Addr::new(10, 1, 2, 3))
        );
        assert_eq!(phv.get(layout::IPV4_TTL), 64);
        assert_eq!(phv.get(layout::L4_SRC_PORT), 4791);
    }

    #[test]
    fn deparse_writes_changes_and_fixes_checksum() {
        let mut b = frame();
        let mut phv = Phv::new(&PhvParams::default());
        parse(&b, &mut phv).unwrap();
        phv.set(layout::IPV4_TTL, 63);
        phv.set(layout::IPV4_ECN, 3);
        deparse(&phv, &mut b);
        let p = parse_frame(&b).unwrap();
        assert_eq!(p.ipv4.unwrap().ttl, 63);
        assert_eq!(p.ipv4.unwrap().tos & 3, 3);
        assert!(headers::ipv4_checksum_ok(&b[14..34]));
        // Untouched fields and the payload are as built.
        let mut fresh = frame();
        fresh[22] = 63;
        fresh[15] |= 3;
        fresh[24..26].copy_from_slice(&b[24..26]);
        assert_eq!(b, fresh);
    }

    #[test]
    fn bad_frames_get_reasons() {
        let mut phv = Phv::new(&PhvParams::default());
        assert_eq!(parse(&[0; 10], &mut phv), Err(DropReason::ParserError));
        let mut b = frame();
        b[22] ^= 1; // TTL changed without fixing the checksum
        phv.clear();
        assert_eq!(parse(&b, &mut phv), Err(DropReason::Ipv4ChecksumError));
        let b = frame();
        phv.clear();
        assert_eq!(parse(&b[..30], &mut phv), Err(DropReason::ParserError));
        let mut arp = frame();
        arp[12] = 0x08;
        arp[13] = 0x06;
        phv.clear();
        assert_eq!(parse(&arp, &mut phv), Ok(()));
        assert_eq!(phv.get(layout::VALID_IPV4), 0);
    }
}
