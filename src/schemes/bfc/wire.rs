//! BFC pause frames (Goyal et al., NSDI 2022): a switch port tells its upstream neighbour
//! which of the neighbour's queues to hold, as a 1024-bit bitmap indexed by upstream queue
//! mod 1024. The receiver replaces its whole bitmap with each frame it gets (BFC's ns-3
//! `received_bloom_filter`), so one frame both pauses and resumes.
//!
//! BFC's ns-3 code uses its own simulator header, not a wire format, so the encoding here is
//! ours:
//!
//! | bytes | field |
//! |---|---|
//! | 0..6 | destination 01:80:C2:00:00:01 (link-local: bridges never forward it, like PFC) |
//! | 6..12 | source: the sending port's address |
//! | 12..14 | EtherType 0x88B5 (IEEE 802 "local experimental" EtherType 1) |
//! | 14..16 | subtype 0x0001 (a BFC pause bitmap; other values are refused) |
//! | 16..144 | the bitmap: bit `q` is byte `16 + q / 8`, mask `0x80 >> (q % 8)` |
//!
//! 144 bytes without FCS, so no padding. Which queue a packet left upstream travels in the
//! packet itself: NICs put their per-flow queue index in the IPv4 identification field
//! (frame bytes 18..20, PHV container b16(8)); see `t2_testbench::transport`.

use bitvec::prelude::{BitArray, Msb0};
use std::fmt;
use t2_pipeline::pfc::PFC_DESTINATION;

/// EtherType of BFC pause frames: IEEE 802 local experimental EtherType 1.
pub const BFC_ETHERTYPE: u16 = 0x88B5;
/// Subtype of a pause bitmap, after the EtherType.
pub const BFC_PAUSE_SUBTYPE: u16 = 0x0001;
/// Queues one bitmap covers (BFC: pause counters indexed by upstream queue mod 1024).
pub const BFC_QUEUES: usize = 1024;
/// Bytes of a BFC pause frame without FCS.
pub const BFC_FRAME_BYTES: usize = 16 + BFC_QUEUES / 8;

/// A frame that claims to be a BFC pause frame (its EtherType is [`BFC_ETHERTYPE`]) but is not
/// a well-formed one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BfcFrameError {
    /// Not a BFC frame at all (another EtherType, or shorter than an Ethernet header).
    NotBfc,
    /// Fewer bytes than a whole bitmap frame.
    Truncated { len: usize },
    /// A subtype other than [`BFC_PAUSE_SUBTYPE`].
    BadSubtype(u16),
    /// A destination other than the link-local 01:80:C2:00:00:01.
    BadDestination([u8; 6]),
}

impl fmt::Display for BfcFrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BfcFrameError::NotBfc => write!(f, "not a BFC frame (EtherType is not 0x88b5)"),
            BfcFrameError::Truncated { len } => write!(
                f,
                "BFC pause frame of {len} bytes, shorter than the {BFC_FRAME_BYTES} a bitmap needs"
            ),
            BfcFrameError::BadSubtype(s) => {
                write!(f, "BFC frame subtype {s:#06x} is not a pause bitmap (0x0001)")
            }
            BfcFrameError::BadDestination(d) => write!(
                f,
                "BFC pause frame to {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}, not 01:80:c2:00:00:01",
                d[0], d[1], d[2], d[3], d[4], d[5]
            ),
        }
    }
}

impl std::error::Error for BfcFrameError {}

/// The paused-queue bitmap a BFC pause frame carries, held in the frame's own bit order: bit
/// `q` is byte `q / 8`, most significant bit first (`Msb0`), so the bitmap is written and
/// read as the frame's 128 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BfcPause {
    bits: BitArray<[u8; BFC_QUEUES / 8], Msb0>,
}

impl BfcPause {
    /// Nothing paused.
    pub fn none() -> BfcPause {
        BfcPause::default()
    }

    /// A bitmap with the queues in `queues` (each taken mod 1024) paused.
    pub fn of(queues: &[usize]) -> BfcPause {
        let mut b = BfcPause::none();
        for &q in queues {
            b.set(q, true);
        }
        b
    }

    /// Pauses (or resumes) queue `q mod 1024`.
    pub fn set(&mut self, q: usize, paused: bool) {
        self.bits.set(q % BFC_QUEUES, paused);
    }

    /// Whether queue `q mod 1024` is paused.
    pub fn is_paused(&self, q: usize) -> bool {
        self.bits[q % BFC_QUEUES]
    }

    /// How many queues are paused.
    pub fn paused_count(&self) -> u32 {
        self.bits.count_ones() as u32
    }

    /// Writes the frame (without FCS) from source address `source`.
    pub fn write(&self, source: [u8; 6], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&PFC_DESTINATION);
        out.extend_from_slice(&source);
        out.extend_from_slice(&BFC_ETHERTYPE.to_be_bytes());
        out.extend_from_slice(&BFC_PAUSE_SUBTYPE.to_be_bytes());
        out.extend_from_slice(self.bits.as_raw_slice());
    }

    /// Whether `bytes` carry the BFC EtherType (well-formed or not).
    pub fn is_bfc(bytes: &[u8]) -> bool {
        bytes.len() >= 14 && bytes[12..14] == BFC_ETHERTYPE.to_be_bytes()
    }

    /// The bitmap of the BFC pause frame in `bytes` (padding after it is ignored).
    pub fn parse(bytes: &[u8]) -> Result<BfcPause, BfcFrameError> {
        if !Self::is_bfc(bytes) {
            return Err(BfcFrameError::NotBfc);
        }
        if bytes.len() < BFC_FRAME_BYTES {
            return Err(BfcFrameError::Truncated { len: bytes.len() });
        }
        if bytes[0..6] != PFC_DESTINATION {
            let mut d = [0; 6];
            d.copy_from_slice(&bytes[0..6]);
            return Err(BfcFrameError::BadDestination(d));
        }
        let subtype = u16::from_be_bytes([bytes[14], bytes[15]]);
        if subtype != BFC_PAUSE_SUBTYPE {
            return Err(BfcFrameError::BadSubtype(subtype));
        }
        let mut bits = BitArray::ZERO;
        bits.as_raw_mut_slice()
            .copy_from_slice(&bytes[16..BFC_FRAME_BYTES]);
        Ok(BfcPause { bits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmaps_round_trip_with_the_documented_bit_order() {
        let b = BfcPause::of(&[0, 9, 1023, 1024 + 5]);
        assert!(
            b.is_paused(5) && b.is_paused(1029),
            "queues are taken mod 1024"
        );
        assert_eq!(b.paused_count(), 4);
        let mut out = Vec::new();
        b.write([2, 0, 0, 0, 0, 7], &mut out);
        assert_eq!(out.len(), BFC_FRAME_BYTES);
        assert_eq!(BFC_FRAME_BYTES, 144);
        assert_eq!(&out[12..16], &[0x88, 0xb5, 0x00, 0x01]);
        // Queue 0 -> byte 16 mask 0x80, 5 -> mask 0x04; 9 -> byte 17 mask 0x40; 1023 -> last bit.
        assert_eq!(out[16], 0x84);
        assert_eq!(out[17], 0x40);
        assert_eq!(out[143], 0x01);
        assert_eq!(out[18..143].iter().filter(|&&v| v != 0).count(), 0);
        assert_eq!(BfcPause::parse(&out), Ok(b));
        // Padding after the bitmap is ignored.
        out.extend_from_slice(&[0xff; 8]);
        assert_eq!(BfcPause::parse(&out), Ok(b));
        let mut cleared = b;
        cleared.set(9, false);
        assert!(!cleared.is_paused(9) && cleared.paused_count() == 3);
    }

    #[test]
    fn malformed_frames_are_errors_and_others_are_not_bfc() {
        let mut out = Vec::new();
        BfcPause::of(&[3]).write([2, 0, 0, 0, 0, 1], &mut out);
        assert_eq!(
            BfcPause::parse(&out[..100]),
            Err(BfcFrameError::Truncated { len: 100 })
        );
        let mut bad = out.clone();
        bad[15] = 2;
        assert_eq!(BfcPause::parse(&bad), Err(BfcFrameError::BadSubtype(2)));
        assert_eq!(
            BfcFrameError::BadSubtype(2).to_string(),
            "BFC frame subtype 0x0002 is not a pause bitmap (0x0001)"
        );
        let mut bad = out.clone();
        bad[0] = 0xff;
        assert!(matches!(
            BfcPause::parse(&bad),
            Err(BfcFrameError::BadDestination([0xff, ..]))
        ));
        let mut ipv4 = out.clone();
        ipv4[12..14].copy_from_slice(&[0x08, 0x00]);
        assert!(!BfcPause::is_bfc(&ipv4));
        assert_eq!(BfcPause::parse(&ipv4), Err(BfcFrameError::NotBfc));
        assert_eq!(BfcPause::parse(&out[..10]), Err(BfcFrameError::NotBfc));
    }
}
