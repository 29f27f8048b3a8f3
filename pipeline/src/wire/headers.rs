//! Ethernet, IPv4, UDP and TCP headers: parsing from bytes and building frames.
//!
//! All multi-byte fields are big-endian on the wire. IPv4 header checksums are always
//! computed; UDP checksums are optional (0 means "none", as IPv4 allows) because they cost a
//! pass over the payload; TCP checksums are always computed.

use std::fmt;
use std::net::Ipv4Addr;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;

/// A header did not fit in the bytes, or its fields are not valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer bytes than the header needs.
    Truncated {
        header: &'static str,
        need: usize,
        have: usize,
    },
    /// IPv4 version is not 4.
    BadIpv4Version(u8),
    /// IPv4 header length (IHL) below 5 words.
    BadIpv4Ihl(u8),
    /// TCP data offset below 5 words.
    BadTcpDataOffset(u8),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Truncated { header, need, have } => {
                write!(f, "{header} header needs {need} bytes, {have} left")
            }
            HeaderError::BadIpv4Version(v) => write!(f, "IPv4 version field is {v}, not 4"),
            HeaderError::BadIpv4Ihl(v) => write!(f, "IPv4 IHL is {v}, below the minimum 5"),
            HeaderError::BadTcpDataOffset(v) => {
                write!(f, "TCP data offset is {v}, below the minimum 5")
            }
        }
    }
}

impl std::error::Error for HeaderError {}

fn need(header: &'static str, bytes: &[u8], n: usize) -> Result<(), HeaderError> {
    if bytes.len() < n {
        Err(HeaderError::Truncated {
            header,
            need: n,
            have: bytes.len(),
        })
    } else {
        Ok(())
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A 48-bit MAC address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// Ethernet II header (no VLAN tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ethernet {
    pub dst: MacAddr,
    pub src: MacAddr,
    pub ethertype: u16,
}

impl Ethernet {
    pub const LEN: usize = 14;

    pub fn parse(b: &[u8]) -> Result<Ethernet, HeaderError> {
        need("Ethernet", b, Self::LEN)?;
        let mut dst = [0; 6];
        let mut src = [0; 6];
        dst.copy_from_slice(&b[0..6]);
        src.copy_from_slice(&b[6..12]);
        Ok(Ethernet {
            dst: MacAddr(dst),
            src: MacAddr(src),
            ethertype: be16(b, 12),
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.dst.0);
        out.extend_from_slice(&self.src.0);
        out.extend_from_slice(&self.ethertype.to_be_bytes());
    }
}

/// IPv4 header. Options, if any, are left in the packet bytes and covered by the checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Header length in 32-bit words (5 without options).
    pub ihl: u8,
    /// DSCP (6 bits) and ECN (2 bits).
    pub tos: u8,
    pub total_len: u16,
    pub ident: u16,
    /// Flags (3 bits) and fragment offset (13 bits).
    pub flags_frag: u16,
    pub ttl: u8,
    pub protocol: u8,
    pub checksum: u16,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
}

impl Ipv4 {
    pub const MIN_LEN: usize = 20;

    pub fn parse(b: &[u8]) -> Result<Ipv4, HeaderError> {
        need("IPv4", b, Self::MIN_LEN)?;
        let version = b[0] >> 4;
        if version != 4 {
            return Err(HeaderError::BadIpv4Version(version));
        }
        let ihl = b[0] & 0xf;
        if ihl < 5 {
            return Err(HeaderError::BadIpv4Ihl(ihl));
        }
        need("IPv4 (with options)", b, ihl as usize * 4)?;
        Ok(Ipv4 {
            ihl,
            tos: b[1],
            total_len: be16(b, 2),
            ident: be16(b, 4),
            flags_frag: be16(b, 6),
            ttl: b[8],
            protocol: b[9],
            checksum: be16(b, 10),
            src: Ipv4Addr::from(be32(b, 12)),
            dst: Ipv4Addr::from(be32(b, 16)),
        })
    }

    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        self.ihl as usize * 4
    }

    /// Writes the 20-byte fixed header with the checksum field as stored in `self`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(0x40 | (self.ihl & 0xf));
        out.push(self.tos);
        out.extend_from_slice(&self.total_len.to_be_bytes());
        out.extend_from_slice(&self.ident.to_be_bytes());
        out.extend_from_slice(&self.flags_frag.to_be_bytes());
        out.push(self.ttl);
        out.push(self.protocol);
        out.extend_from_slice(&self.checksum.to_be_bytes());
        out.extend_from_slice(&self.src.octets());
        out.extend_from_slice(&self.dst.octets());
    }
}

/// One's-complement sum of 16-bit big-endian words (odd trailing byte padded with 0), not
/// yet folded or complemented.
fn ones_complement_sum(sum: u32, bytes: &[u8]) -> u32 {
    // Eight bytes at a time into a wide accumulator: the one's-complement sum does not
    // depend on how the 16-bit words are grouped, and a 64-bit total of 32-bit words cannot
    // overflow for any frame. Folded back to 17 bits, so the caller may add more.
    let mut wide = sum as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        wide += (v >> 32) + (v & 0xffff_ffff);
    }
    let mut pairs = chunks.remainder().chunks_exact(2);
    for c in &mut pairs {
        wide += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = pairs.remainder() {
        wide += (*last as u64) << 8;
    }
    while wide > 0x1_ffff {
        wide = (wide & 0xffff) + (wide >> 16);
    }
    wide as u32
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The Internet checksum (RFC 1071) of `bytes`.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    !fold(ones_complement_sum(0, bytes))
}

/// Computes the IPv4 header checksum over `header` (its checksum field treated as 0).
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    let sum = ones_complement_sum(0, &header[..10]);
    !fold(ones_complement_sum(sum, &header[12..]))
}

/// Whether an IPv4 header (with options) carries a correct checksum.
pub fn ipv4_checksum_ok(header: &[u8]) -> bool {
    fold(ones_complement_sum(0, header)) == 0xffff
}

/// The UDP or TCP checksum of `segment` (header + payload, checksum field as 0) under the
/// IPv4 pseudo-header.
pub fn l4_checksum(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, segment: &[u8]) -> u16 {
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src.octets());
    pseudo[4..8].copy_from_slice(&dst.octets());
    pseudo[9] = protocol;
    pseudo[10..12].copy_from_slice(&(segment.len() as u16).to_be_bytes());
    let sum = ones_complement_sum(ones_complement_sum(0, &pseudo), segment);
    !fold(sum)
}

/// UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Udp {
    pub src_port: u16,
    pub dst_port: u16,
    pub length: u16,
    pub checksum: u16,
}

impl Udp {
    pub const LEN: usize = 8;

    pub fn parse(b: &[u8]) -> Result<Udp, HeaderError> {
        need("UDP", b, Self::LEN)?;
        Ok(Udp {
            src_port: be16(b, 0),
            dst_port: be16(b, 2),
            length: be16(b, 4),
            checksum: be16(b, 6),
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.length.to_be_bytes());
        out.extend_from_slice(&self.checksum.to_be_bytes());
    }
}

/// TCP header (options are not modelled: data offset 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcp {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// Header length in 32-bit words.
    pub data_offset: u8,
    /// The 9 flag bits (NS .. FIN), low bits of the 16-bit word.
    pub flags: u16,
    pub window: u16,
    pub checksum: u16,
    pub urgent: u16,
}

impl Tcp {
    pub const MIN_LEN: usize = 20;
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;

    pub fn parse(b: &[u8]) -> Result<Tcp, HeaderError> {
        need("TCP", b, Self::MIN_LEN)?;
        let word = be16(b, 12);
        let data_offset = (word >> 12) as u8;
        if data_offset < 5 {
            return Err(HeaderError::BadTcpDataOffset(data_offset));
        }
        Ok(Tcp {
            src_port: be16(b, 0),
            dst_port: be16(b, 2),
            seq: be32(b, 4),
            ack: be32(b, 8),
            data_offset,
            flags: word & 0x1ff,
            window: be16(b, 14),
            checksum: be16(b, 16),
            urgent: be16(b, 18),
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
        let word = ((self.data_offset as u16) << 12) | (self.flags & 0x1ff);
        out.extend_from_slice(&word.to_be_bytes());
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&self.checksum.to_be_bytes());
        out.extend_from_slice(&self.urgent.to_be_bytes());
    }
}

/// The addresses of an IPv4 flow between two hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
}

/// Bytes of Ethernet + IPv4 + UDP headers.
pub const UDP_HEADERS_LEN: usize = Ethernet::LEN + Ipv4::MIN_LEN + Udp::LEN;
/// Bytes of Ethernet + IPv4 + TCP headers.
pub const TCP_HEADERS_LEN: usize = Ethernet::LEN + Ipv4::MIN_LEN + Tcp::MIN_LEN;

fn ipv4_for(ep: &Endpoints, protocol: u8, ip_len: usize, ttl: u8, ident: u16) -> Ipv4 {
    Ipv4 {
        ihl: 5,
        tos: 0,
        total_len: ip_len as u16,
        ident,
        flags_frag: 0x4000, // don't fragment
        ttl,
        protocol,
        checksum: 0,
        src: ep.src_ip,
        dst: ep.dst_ip,
    }
}

fn finish_ipv4_checksum(out: &mut [u8], ip_at: usize) {
    let c = ipv4_header_checksum(&out[ip_at..ip_at + Ipv4::MIN_LEN]);
    out[ip_at + 10..ip_at + 12].copy_from_slice(&c.to_be_bytes());
}

/// The 802.1Q tag protocol identifier (the ethertype of a VLAN-tagged frame).
pub const ETHERTYPE_VLAN: u16 = 0x8100;

/// `frame` with an 802.1Q tag (priority `pcp`, 3 bits; VLAN `vid`, 12 bits; DEI 0) inserted
/// after the MAC addresses, in front of any tag already there.
pub fn with_vlan_tag(frame: &[u8], pcp: u8, vid: u16) -> Vec<u8> {
    let tci = u16::from(pcp & 7) << 13 | (vid & 0x0fff);
    let mut out = Vec::with_capacity(frame.len() + 4);
    out.extend_from_slice(&frame[..12]);
    out.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
    out.extend_from_slice(&tci.to_be_bytes());
    out.extend_from_slice(&frame[12..]);
    out
}

/// Replaces `out` with an Ethernet/IPv4/UDP frame carrying `payload`, padded with zeros to
/// `min_buffer_len` bytes (60 for the Ethernet minimum without FCS). The IPv4 checksum is
/// set; the UDP checksum is computed when `udp_checksum` is true and 0 otherwise.
pub fn build_udp_frame(
    out: &mut Vec<u8>,
    ep: &Endpoints,
    ttl: u8,
    ident: u16,
    payload: &[u8],
    udp_checksum: bool,
    min_buffer_len: usize,
) {
    out.clear();
    let udp_len = Udp::LEN + payload.len();
    Ethernet {
        dst: ep.dst_mac,
        src: ep.src_mac,
        ethertype: ETHERTYPE_IPV4,
    }
    .write(out);
    ipv4_for(ep, IPPROTO_UDP, Ipv4::MIN_LEN + udp_len, ttl, ident).write(out);
    Udp {
        src_port: ep.src_port,
        dst_port: ep.dst_port,
        length: udp_len as u16,
        checksum: 0,
    }
    .write(out);
    out.extend_from_slice(payload);
    finish_ipv4_checksum(out, Ethernet::LEN);
    if udp_checksum {
        let l4 = Ethernet::LEN + Ipv4::MIN_LEN;
        let mut c = l4_checksum(ep.src_ip, ep.dst_ip, IPPROTO_UDP, &out[l4..]);
        if c == 0 {
            c = 0xffff; // 0 means "no checksum" in UDP over IPv4
        }
        out[l4 + 6..l4 + 8].copy_from_slice(&c.to_be_bytes());
    }
    if out.len() < min_buffer_len {
        out.resize(min_buffer_len, 0);
    }
}

/// Replaces `out` with an Ethernet/IPv4/TCP frame (data offset 5) carrying `payload`,
/// checksums set, padded with zeros to `min_buffer_len` bytes.
#[allow(clippy::too_many_arguments)]
pub fn build_tcp_frame(
    out: &mut Vec<u8>,
    ep: &Endpoints,
    ttl: u8,
    ident: u16,
    seq: u32,
    ack: u32,
    flags: u16,
    window: u16,
    payload: &[u8],
    min_buffer_len: usize,
) {
    build_tcp_frame_zero_filled(
        out,
        ep,
        ttl,
        ident,
        seq,
        ack,
        flags,
        window,
        payload,
        payload.len(),
        min_buffer_len,
    );
}

/// [`build_tcp_frame`] with a payload of `payload_len` bytes that starts with `head` and is
/// zeros after it (a host's segment: its flow id, then filler). The zeros add nothing to the
/// TCP checksum, so it is summed over the headers and `head` only, and the filler is
/// written as one fill instead of copied.
#[allow(clippy::too_many_arguments)]
pub fn build_tcp_frame_zero_filled(
    out: &mut Vec<u8>,
    ep: &Endpoints,
    ttl: u8,
    ident: u16,
    seq: u32,
    ack: u32,
    flags: u16,
    window: u16,
    head: &[u8],
    payload_len: usize,
    min_buffer_len: usize,
) {
    assert!(head.len() <= payload_len, "the payload holds its head");
    out.clear();
    let seg_len = Tcp::MIN_LEN + payload_len;
    Ethernet {
        dst: ep.dst_mac,
        src: ep.src_mac,
        ethertype: ETHERTYPE_IPV4,
    }
    .write(out);
    ipv4_for(ep, IPPROTO_TCP, Ipv4::MIN_LEN + seg_len, ttl, ident).write(out);
    Tcp {
        src_port: ep.src_port,
        dst_port: ep.dst_port,
        seq,
        ack,
        data_offset: 5,
        flags,
        window,
        checksum: 0,
        urgent: 0,
    }
    .write(out);
    out.extend_from_slice(head);
    finish_ipv4_checksum(out, Ethernet::LEN);
    let l4 = Ethernet::LEN + Ipv4::MIN_LEN;
    // The pseudo-header carries the whole segment's length; the sum covers what is not zero.
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&ep.src_ip.octets());
    pseudo[4..8].copy_from_slice(&ep.dst_ip.octets());
    pseudo[9] = IPPROTO_TCP;
    pseudo[10..12].copy_from_slice(&(seg_len as u16).to_be_bytes());
    let c = !fold(ones_complement_sum(
        ones_complement_sum(0, &pseudo),
        &out[l4..],
    ));
    out[l4 + 16..l4 + 18].copy_from_slice(&c.to_be_bytes());
    out.resize(l4 + seg_len, 0);
    if out.len() < min_buffer_len {
        out.resize(min_buffer_len, 0);
    }
}

/// The headers of a parsed Ethernet/IPv4/{UDP,TCP} frame and where its payload starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedFrame {
    pub ethernet: Ethernet,
    pub ipv4: Option<Ipv4>,
    pub udp: Option<Udp>,
    pub tcp: Option<Tcp>,
    /// Offset of the first byte after the last parsed header.
    pub payload_offset: usize,
}

/// Parses a frame as far as these headers go (used by hosts; the chip has its own parser
/// that fills the PHV).
pub fn parse_frame(b: &[u8]) -> Result<ParsedFrame, HeaderError> {
    let ethernet = Ethernet::parse(b)?;
    let mut at = Ethernet::LEN;
    let mut out = ParsedFrame {
        ethernet,
        ipv4: None,
        udp: None,
        tcp: None,
        payload_offset: at,
    };
    if ethernet.ethertype != ETHERTYPE_IPV4 {
        return Ok(out);
    }
    let ip = Ipv4::parse(&b[at..])?;
    at += ip.header_len();
    out.ipv4 = Some(ip);
    match ip.protocol {
        IPPROTO_UDP => {
            out.udp = Some(Udp::parse(&b[at..])?);
            at += Udp::LEN;
        }
        IPPROTO_TCP => {
            let t = Tcp::parse(&b[at..])?;
            at += t.data_offset as usize * 4;
            out.tcp = Some(t);
        }
        _ => {}
    }
    out.payload_offset = at.min(b.len());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep() -> Endpoints {
        Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            src_port: 1000,
            dst_port: 2000,
        }
    }

    #[test]
    fn rfc1071_example_checksum() {
        // The worked example of RFC 1071 section 3: words 0001 f203 f4f5 f6f7 sum to
        // 0xddf2 (folded), so the checksum is its complement 0x220d.
        assert_eq!(
            internet_checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
    }

    #[test]
    fn known_ipv4_header_checksum() {
        // A classic captured header: 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_header_checksum(&h), 0xb861);
        let mut ok = h;
        ok[10] = 0xb8;
        ok[11] = 0x61;
        assert!(ipv4_checksum_ok(&ok));
        ok[8] = 0x3f;
        assert!(!ipv4_checksum_ok(&ok));
    }

    #[test]
    fn udp_frame_round_trips() {
        let mut buf = Vec::new();
        build_udp_frame(&mut buf, &ep(), 64, 7, &[0xab; 100], true, 60);
        assert_eq!(buf.len(), UDP_HEADERS_LEN + 100);
        let p = parse_frame(&buf).unwrap();
        let ip = p.ipv4.unwrap();
        assert_eq!(ip.total_len as usize, 20 + 8 + 100);
        assert_eq!(ip.ttl, 64);
        assert_eq!(ip.dst, Ipv4Addr::new(10, 0, 0, 2));
        assert!(ipv4_checksum_ok(&buf[14..34]));
        let udp = p.udp.unwrap();
        assert_eq!((udp.src_port, udp.dst_port, udp.length), (1000, 2000, 108));
        assert_eq!(p.payload_offset, UDP_HEADERS_LEN);
        // A receiver verifies the UDP checksum by summing with the field in place.
        let seg = &buf[34..];
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 17];
        pseudo.extend_from_slice(&(seg.len() as u16).to_be_bytes());
        pseudo.extend_from_slice(seg);
        assert_eq!(internet_checksum(&pseudo), 0);
    }

    #[test]
    fn small_frames_are_padded() {
        let mut buf = Vec::new();
        build_udp_frame(&mut buf, &ep(), 64, 0, &[1, 2], false, 60);
        assert_eq!(buf.len(), 60);
        assert_eq!(parse_frame(&buf).unwrap().udp.unwrap().length, 10);
    }

    #[test]
    fn tcp_frame_round_trips() {
        let mut buf = Vec::new();
        build_tcp_frame(
            &mut buf,
            &ep(),
            64,
            1,
            1000,
            0,
            Tcp::SYN | Tcp::ECE,
            65535,
            &[],
            60,
        );
        let p = parse_frame(&buf).unwrap();
        let t = p.tcp.unwrap();
        assert_eq!(
            (t.seq, t.flags, t.window, t.data_offset),
            (1000, 0x42, 65535, 5)
        );
        let seg = &buf[34..54];
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 20];
        pseudo.extend_from_slice(seg);
        assert_eq!(internet_checksum(&pseudo), 0);
    }

    #[test]
    fn truncated_and_bad_headers_are_errors() {
        assert_eq!(
            Ethernet::parse(&[0; 10]),
            Err(HeaderError::Truncated {
                header: "Ethernet",
                need: 14,
                have: 10
            })
        );
        let mut ip = [0u8; 20];
        ip[0] = 0x65;
        assert_eq!(Ipv4::parse(&ip), Err(HeaderError::BadIpv4Version(6)));
        ip[0] = 0x44;
        assert_eq!(Ipv4::parse(&ip), Err(HeaderError::BadIpv4Ihl(4)));
        ip[0] = 0x46;
        assert!(matches!(
            Ipv4::parse(&ip),
            Err(HeaderError::Truncated { need: 24, .. })
        ));
    }
}
