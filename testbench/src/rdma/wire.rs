//! RoCEv2 frames as the RDMA NIC sends them: Ethernet / IPv4 / UDP to port 4791 / the
//! InfiniBand Base Transport Header (BTH, 12 bytes) / for ACKs and NACKs the ACK Extended
//! Transport Header (AETH, 4 bytes) / payload / ICRC (4 bytes, left 0: nothing checks it).
//! Layouts from the InfiniBand Architecture Specification vol. 1 (BTH §9.2, AETH §9.3.5) and
//! its RoCEv2 annex A17 (UDP port 4791, the CNP as BTH opcode 0x81 with 16 reserved bytes).
//!
//! [`RoceView`] reads the fields of a received frame in place; [`build`] writes a frame.

use super::int::{IntHeader, INT_LEN};
use std::net::Ipv4Addr;
use t2_pipeline::headers::{self, Endpoints, MacAddr, Udp};

/// The UDP destination port of RoCEv2.
pub const ROCE_UDP_PORT: u16 = 4791;
/// Bytes of the BTH, the AETH, the CNP's reserved body and the ICRC.
pub const BTH_LEN: usize = 12;
pub const AETH_LEN: usize = 4;
pub const CNP_BODY_LEN: usize = 16;
pub const ICRC_LEN: usize = 4;
/// Bytes of a data frame besides its payload (FCS included): Ethernet 14, IPv4 20, UDP 8,
/// BTH 12, ICRC 4, FCS 4.
pub const DATA_OVERHEAD: u64 = 14 + 20 + 8 + BTH_LEN as u64 + ICRC_LEN as u64 + 4;

/// BTH opcodes (IBA Table 38, Reliable Connection), and the RoCEv2 CNP.
pub const OP_SEND_FIRST: u8 = 0x00;
pub const OP_SEND_MIDDLE: u8 = 0x01;
pub const OP_SEND_LAST: u8 = 0x02;
pub const OP_SEND_ONLY: u8 = 0x04;
pub const OP_ACKNOWLEDGE: u8 = 0x11;
pub const OP_CNP: u8 = 0x81;

/// AETH syndromes: an ACK (top bits 00, credit field left 0x1f: no credit limit) and a NAK
/// for a PSN sequence error (top bits 011, code 0).
pub const SYNDROME_ACK: u8 = 0x1f;
pub const SYNDROME_NAK_SEQ: u8 = 0x60;

/// ECN codepoints in the low bits of the IPv4 TOS byte, and the byte's offset in a frame.
pub const ECT0: u8 = 0b10;
pub const CE: u8 = 0b11;
const TOS_OFFSET: usize = 15;

/// What one RoCEv2 frame says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceFrame {
    pub src_ip: Ipv4Addr,
    pub src_mac: MacAddr,
    pub opcode: u8,
    /// Destination QP (24 bits): the flow id here.
    pub qp: u32,
    /// Packet sequence number (24 bits).
    pub psn: u32,
    /// The AETH syndrome of an ACK or NACK.
    pub syndrome: Option<u8>,
    /// Payload bytes (data frames).
    pub payload: usize,
    /// The IPv4 ECN bits said CE.
    pub ce: bool,
    /// The INT header ([`super::int`]): after the BTH of data, after the AETH of
    /// ACKs and NACKs, when the frame was read with [`parse_with`]`(.., true)`.
    pub int: Option<IntHeader>,
}

impl RoceFrame {
    pub fn is_data(&self) -> bool {
        matches!(
            self.opcode,
            OP_SEND_FIRST | OP_SEND_MIDDLE | OP_SEND_LAST | OP_SEND_ONLY
        )
    }

    /// The last packet of its message (the receiver always acknowledges it).
    pub fn is_last(&self) -> bool {
        matches!(self.opcode, OP_SEND_LAST | OP_SEND_ONLY)
    }
}

/// Reads a RoCEv2 frame; `None` for anything else (not IPv4/UDP to 4791, or too short).
pub fn parse(bytes: &[u8]) -> Option<RoceFrame> {
    parse_with(bytes, false)
}

/// [`parse`]; with `int`, data frames, ACKs and NACKs carry an INT header of
/// [`INT_LEN`] bytes after their BTH (data) or AETH (ACK, NACK).
pub fn parse_with(bytes: &[u8], int: bool) -> Option<RoceFrame> {
    let p = headers::parse_frame(bytes).ok()?;
    let ip = p.ipv4?;
    let udp = p.udp?;
    if udp.dst_port != ROCE_UDP_PORT {
        return None;
    }
    let at = p.payload_offset;
    let end = headers::Ethernet::LEN + ip.total_len as usize;
    let bth = bytes.get(at..at + BTH_LEN)?;
    let opcode = bth[0];
    let qp = u32::from_be_bytes([0, bth[5], bth[6], bth[7]]);
    let psn = u32::from_be_bytes([0, bth[9], bth[10], bth[11]]);
    let mut body = at + BTH_LEN;
    let syndrome = if opcode == OP_ACKNOWLEDGE {
        let s = *bytes.get(body)?;
        body += AETH_LEN;
        Some(s)
    } else {
        None
    };
    let carries_int = int && (opcode == OP_ACKNOWLEDGE || is_data_opcode(opcode));
    let int = if carries_int {
        let h = IntHeader::read(bytes.get(body..)?)?;
        body += INT_LEN;
        Some(h)
    } else {
        None
    };
    let payload = end.checked_sub(body + ICRC_LEN)?;
    Some(RoceFrame {
        src_ip: ip.src,
        src_mac: p.ethernet.src,
        opcode,
        qp,
        psn,
        syndrome,
        payload: if opcode == OP_CNP { 0 } else { payload },
        ce: ip.tos & CE == CE,
        int,
    })
}

fn is_data_opcode(opcode: u8) -> bool {
    matches!(
        opcode,
        OP_SEND_FIRST | OP_SEND_MIDDLE | OP_SEND_LAST | OP_SEND_ONLY
    )
}

/// The offset of the INT header in a data frame (Ethernet 14, IPv4 20, UDP 8, BTH 12).
pub const DATA_INT_OFFSET: usize = 14 + 20 + 8 + BTH_LEN;

/// Writes into `out` a RoCEv2 frame from `src` to `dst`: BTH with `opcode`, `qp` and `psn`
/// (the acknowledge-request bit set on data), an AETH with `syndrome` and MSN 0 when given,
/// then `payload` zero bytes (16 reserved bytes for a CNP) and the ICRC; ECT(0) on data.
#[allow(clippy::too_many_arguments)]
pub fn build(
    out: &mut Vec<u8>,
    src: (Ipv4Addr, MacAddr),
    dst: (Ipv4Addr, MacAddr),
    src_port: u16,
    opcode: u8,
    qp: u32,
    psn: u32,
    syndrome: Option<u8>,
    payload: usize,
    scratch: &mut Vec<u8>,
) {
    build_with_int(
        out, src, dst, src_port, opcode, qp, psn, syndrome, None, payload, scratch,
    )
}

/// [`build`], with `int` (when given) written after the BTH (data) or the AETH.
#[allow(clippy::too_many_arguments)]
pub fn build_with_int(
    out: &mut Vec<u8>,
    src: (Ipv4Addr, MacAddr),
    dst: (Ipv4Addr, MacAddr),
    src_port: u16,
    opcode: u8,
    qp: u32,
    psn: u32,
    syndrome: Option<u8>,
    int: Option<&IntHeader>,
    payload: usize,
    scratch: &mut Vec<u8>,
) {
    scratch.clear();
    scratch.push(opcode);
    scratch.push(0); // SE, M, pad count, header version 0
    scratch.extend_from_slice(&0xffffu16.to_be_bytes()); // default partition key
    scratch.push(0);
    scratch.extend_from_slice(&qp.to_be_bytes()[1..]);
    let data = matches!(
        opcode,
        OP_SEND_FIRST | OP_SEND_MIDDLE | OP_SEND_LAST | OP_SEND_ONLY
    );
    scratch.push(if data { 0x80 } else { 0 }); // acknowledge request
    scratch.extend_from_slice(&psn.to_be_bytes()[1..]);
    if let Some(s) = syndrome {
        scratch.push(s);
        scratch.extend_from_slice(&[0, 0, 0]);
    }
    if let Some(h) = int {
        h.write(scratch);
    }
    let body = if opcode == OP_CNP {
        CNP_BODY_LEN
    } else {
        payload
    };
    scratch.resize(scratch.len() + body + ICRC_LEN, 0);
    let ep = Endpoints {
        src_mac: src.1,
        dst_mac: dst.1,
        src_ip: src.0,
        dst_ip: dst.0,
        src_port,
        dst_port: ROCE_UDP_PORT,
    };
    headers::build_udp_frame(out, &ep, 64, 0, scratch, false, 60);
    if data {
        out[TOS_OFFSET] |= ECT0;
        let ip = &mut out[14..34];
        ip[10..12].copy_from_slice(&[0, 0]);
        let c = headers::ipv4_header_checksum(ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
    }
    debug_assert_eq!(Udp::LEN, 8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_byte_exact() {
        let a = (Ipv4Addr::new(10, 0, 0, 1), MacAddr([2, 0, 0, 0, 0, 1]));
        let b = (Ipv4Addr::new(10, 0, 0, 2), MacAddr([2, 0, 0, 0, 0, 2]));
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        build(
            &mut out,
            a,
            b,
            1000,
            OP_SEND_MIDDLE,
            0x12345,
            7,
            None,
            1000,
            &mut scratch,
        );
        // 14 + 20 + 8 + 12 + 1000 + 4 bytes before the FCS.
        assert_eq!(out.len() as u64 + 4, DATA_OVERHEAD + 1000);
        assert_eq!(
            &out[42..54],
            &[0x01, 0, 0xff, 0xff, 0, 0x01, 0x23, 0x45, 0x80, 0, 0, 7]
        );
        assert_eq!(out[15] & 3, ECT0);
        let f = parse(&out).unwrap();
        assert_eq!(
            (f.opcode, f.qp, f.psn, f.payload, f.ce),
            (1, 0x12345, 7, 1000, false)
        );
        assert!(f.is_data() && !f.is_last());
        assert_eq!(f.src_ip, a.0);
        build(
            &mut out,
            b,
            a,
            1000,
            OP_ACKNOWLEDGE,
            9,
            3,
            Some(SYNDROME_NAK_SEQ),
            0,
            &mut scratch,
        );
        assert_eq!(&out[54..58], &[0x60, 0, 0, 0]);
        let f = parse(&out).unwrap();
        assert_eq!(
            (f.syndrome, f.psn, f.payload),
            (Some(SYNDROME_NAK_SEQ), 3, 0)
        );
        build(&mut out, b, a, 1000, OP_CNP, 9, 0, None, 0, &mut scratch);
        // 14 + 20 + 8 + 12 + 16 + 4 = 74 bytes.
        assert_eq!(out.len(), 74);
        assert_eq!(parse(&out).unwrap().opcode, OP_CNP);
        assert_eq!(out[15] & 3, 0, "only data is ECN-capable");
    }
}
