//! QCN congestion notification messages (IEEE 802.1Qau CNM): a congestion point sends one to
//! the source of a frame it sampled; the source's reaction point cuts that flow's rate
//! ([`super::ReactionPoint`]).
//!
//! Layout (no FCS), the CNM PDU fields in 802.1Qau order:
//!
//! | bytes | field |
//! |---|---|
//! | 0..6 | destination: the sampled frame's source address |
//! | 6..12 | source: the congestion point's address |
//! | 12..14 | EtherType 0x22E9 (802.1Qau congestion notification) |
//! | 14..16 | version (4 bits, 0), reserved (6 bits, 0), QntzFb (6 bits) |
//! | 16..24 | congestion point identifier (CPID) |
//! | 24..26 | cnmQOffset (signed) |
//! | 26..28 | cnmQDelta (signed) |
//! | 28..30 | encapsulated priority |
//! | 30..36 | encapsulated destination address |
//! | 36..38 | encapsulated MSDU length (of the whole sampled MSDU) |
//! | 38.. | encapsulated MSDU: its first bytes, at most 64 |
//!
//! padded with zeros to the 60-byte minimum. The subset we carry: every CNM PDU field, but
//! data frames have no CN-TAG and no VLAN tag, so the reaction point finds the flow in the
//! encapsulated MSDU (for our transport: IPv4, TCP, then the 4-byte flow id, 44 bytes) rather
//! than in a CN-TAG flow id.

use std::fmt;

/// EtherType of 802.1Qau congestion notification.
pub const CNM_ETHERTYPE: u16 = 0x22E9;
/// Bytes before the encapsulated MSDU.
pub const CNM_HEADER_BYTES: usize = 38;
/// The most of the sampled MSDU a CNM carries.
pub const CNM_MAX_MSDU: usize = 64;
/// QntzFb is 6 bits.
pub const QNTZ_FB_MAX: u8 = 63;

/// A CNM that cannot be written or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CnmError {
    /// Not a CNM (another EtherType, or shorter than an Ethernet header).
    NotCnm,
    /// Fewer bytes than the CNM header, or than the encapsulated MSDU it announces.
    Truncated { len: usize, need: usize },
    /// A version other than 0.
    BadVersion(u8),
    /// QntzFb above 63 (writing only: on the wire it is 6 bits).
    FeedbackTooLarge(u8),
    /// More than 64 encapsulated bytes.
    MsduTooLong(usize),
}

impl fmt::Display for CnmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CnmError::NotCnm => write!(f, "not a CNM (EtherType is not 0x22e9)"),
            CnmError::Truncated { len, need } => {
                write!(f, "CNM of {len} bytes, shorter than the {need} it needs")
            }
            CnmError::BadVersion(v) => write!(f, "CNM version {v} is not 0"),
            CnmError::FeedbackTooLarge(fb) => {
                write!(f, "QntzFb {fb} does not fit in 6 bits (0..=63)")
            }
            CnmError::MsduTooLong(n) => write!(
                f,
                "a CNM carries at most {CNM_MAX_MSDU} bytes of the sampled MSDU, not {n}"
            ),
        }
    }
}

impl std::error::Error for CnmError {}

/// What a CNM says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cnm {
    /// Quantized feedback |Fb|, 0..=63.
    pub qntz_fb: u8,
    pub cpid: u64,
    pub q_offset: i16,
    pub q_delta: i16,
    pub encap_priority: u16,
    pub encap_dst: [u8; 6],
    /// Length of the whole sampled MSDU.
    pub encap_msdu_len: u16,
    /// The first bytes (at most 64) of the sampled MSDU.
    pub encap_msdu: Vec<u8>,
}

impl Cnm {
    /// A CNM about `sampled` (a whole Ethernet frame without FCS, at least its 14-byte
    /// header): it goes back to the frame's source and carries its destination and the
    /// first 64 bytes of its MSDU. `None` if `sampled` is shorter than an Ethernet header.
    pub fn about(
        sampled: &[u8],
        qntz_fb: u8,
        cpid: u64,
        q_offset: i16,
        q_delta: i16,
    ) -> Option<(Cnm, [u8; 6])> {
        let msdu = sampled.get(14..)?;
        let mut src = [0; 6];
        src.copy_from_slice(&sampled[6..12]);
        let mut encap_dst = [0; 6];
        encap_dst.copy_from_slice(&sampled[0..6]);
        Some((
            Cnm {
                qntz_fb,
                cpid,
                q_offset,
                q_delta,
                encap_priority: 0,
                encap_dst,
                encap_msdu_len: msdu.len().min(u16::MAX as usize) as u16,
                encap_msdu: msdu[..msdu.len().min(CNM_MAX_MSDU)].to_vec(),
            },
            src,
        ))
    }

    /// Writes the frame (without FCS) to `dst` from `src`.
    pub fn write(&self, dst: [u8; 6], src: [u8; 6], out: &mut Vec<u8>) -> Result<(), CnmError> {
        if self.qntz_fb > QNTZ_FB_MAX {
            return Err(CnmError::FeedbackTooLarge(self.qntz_fb));
        }
        if self.encap_msdu.len() > CNM_MAX_MSDU {
            return Err(CnmError::MsduTooLong(self.encap_msdu.len()));
        }
        out.clear();
        out.extend_from_slice(&dst);
        out.extend_from_slice(&src);
        out.extend_from_slice(&CNM_ETHERTYPE.to_be_bytes());
        // Version 0 and the reserved bits are 0: only QntzFb in the low 6 bits.
        out.extend_from_slice(&(self.qntz_fb as u16).to_be_bytes());
        out.extend_from_slice(&self.cpid.to_be_bytes());
        out.extend_from_slice(&self.q_offset.to_be_bytes());
        out.extend_from_slice(&self.q_delta.to_be_bytes());
        out.extend_from_slice(&self.encap_priority.to_be_bytes());
        out.extend_from_slice(&self.encap_dst);
        out.extend_from_slice(&self.encap_msdu_len.to_be_bytes());
        out.extend_from_slice(&self.encap_msdu);
        if out.len() < 60 {
            out.resize(60, 0);
        }
        Ok(())
    }

    /// Whether `bytes` carry the CNM EtherType (well-formed or not).
    pub fn is_cnm(bytes: &[u8]) -> bool {
        bytes.len() >= 14 && bytes[12..14] == CNM_ETHERTYPE.to_be_bytes()
    }

    /// The CNM in `bytes`. The encapsulated MSDU is `min(length, 64)` bytes; padding after
    /// it is ignored.
    pub fn parse(bytes: &[u8]) -> Result<Cnm, CnmError> {
        if !Self::is_cnm(bytes) {
            return Err(CnmError::NotCnm);
        }
        let truncated = |need| CnmError::Truncated {
            len: bytes.len(),
            need,
        };
        if bytes.len() < CNM_HEADER_BYTES {
            return Err(truncated(CNM_HEADER_BYTES));
        }
        let u16_at = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
        let version = bytes[14] >> 4;
        if version != 0 {
            return Err(CnmError::BadVersion(version));
        }
        let encap_msdu_len = u16_at(36);
        let carried = (encap_msdu_len as usize).min(CNM_MAX_MSDU);
        let need = CNM_HEADER_BYTES + carried;
        if bytes.len() < need {
            return Err(truncated(need));
        }
        let mut encap_dst = [0; 6];
        encap_dst.copy_from_slice(&bytes[30..36]);
        Ok(Cnm {
            qntz_fb: bytes[15] & QNTZ_FB_MAX,
            cpid: u64::from_be_bytes(bytes[16..24].try_into().expect("8 bytes")),
            q_offset: u16_at(24) as i16,
            q_delta: u16_at(26) as i16,
            encap_priority: u16_at(28),
            encap_dst,
            encap_msdu_len,
            encap_msdu: bytes[CNM_HEADER_BYTES..need].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled() -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        f.extend((0..100u8).map(|b| b.wrapping_mul(7)));
        f
    }

    #[test]
    fn cnms_round_trip_and_carry_the_sampled_frame() {
        let (cnm, to) = Cnm::about(&sampled(), 37, 0x0102_0304_0506_0708, -300, 25).unwrap();
        assert_eq!(to, [2, 0, 0, 0, 0, 1], "back to the sampled frame's source");
        assert_eq!(cnm.encap_dst, [2, 0, 0, 0, 0, 2]);
        assert_eq!((cnm.encap_msdu_len, cnm.encap_msdu.len()), (100, 64));
        let mut b = Vec::new();
        cnm.write(to, [2, 0, 0, 0, 0, 0xcc], &mut b).unwrap();
        assert_eq!(b.len(), CNM_HEADER_BYTES + 64);
        assert_eq!(&b[12..16], &[0x22, 0xe9, 0x00, 37]);
        assert_eq!(&b[24..28], &[0xfe, 0xd4, 0x00, 25]);
        assert_eq!(Cnm::parse(&b), Ok(cnm.clone()));
        // A short MSDU is padded to the minimum frame; the padding is not part of it.
        let (short, _) = Cnm::about(&sampled()[..20], 63, 0, 0, 0).unwrap();
        short.write(to, to, &mut b).unwrap();
        assert_eq!(b.len(), 60);
        assert_eq!(Cnm::parse(&b).unwrap().encap_msdu.len(), 6);
        assert_eq!(Cnm::parse(&b).unwrap().qntz_fb, 63);
    }

    #[test]
    fn malformed_cnms_are_errors() {
        let (cnm, to) = Cnm::about(&sampled(), 5, 1, 0, 0).unwrap();
        let mut b = Vec::new();
        assert_eq!(
            Cnm {
                qntz_fb: 64,
                ..cnm.clone()
            }
            .write(to, to, &mut b),
            Err(CnmError::FeedbackTooLarge(64))
        );
        assert_eq!(
            Cnm {
                encap_msdu: vec![0; 65],
                ..cnm.clone()
            }
            .write(to, to, &mut b),
            Err(CnmError::MsduTooLong(65))
        );
        cnm.write(to, to, &mut b).unwrap();
        assert_eq!(
            Cnm::parse(&b[..30]),
            Err(CnmError::Truncated { len: 30, need: 38 })
        );
        assert_eq!(
            Cnm::parse(&b[..80]),
            Err(CnmError::Truncated { len: 80, need: 102 })
        );
        let mut v1 = b.clone();
        v1[14] = 0x10;
        assert_eq!(Cnm::parse(&v1), Err(CnmError::BadVersion(1)));
        assert_eq!(
            CnmError::BadVersion(1).to_string(),
            "CNM version 1 is not 0"
        );
        let mut ip = b.clone();
        ip[12] = 0x08;
        assert_eq!(Cnm::parse(&ip), Err(CnmError::NotCnm));
        assert_eq!(Cnm::about(&b[..13], 1, 0, 0, 0), None);
    }
}
