//! PFC frames (IEEE 802.1Qbb): the chip sends one out of an ingress port when the TM asks
//! for XOFF or XON for a lossless class, and honours one that comes in by holding the port's
//! queues of that class (see `t2_tm::TrafficManager::pfc_pause`); a NIC that honours PFC
//! stops sending the paused classes (`t2_testbench::transport`).
//!
//! A PFC frame is a MAC control frame: destination 01:80:C2:00:00:01, EtherType 0x8808,
//! opcode 0x0101, a class-enable vector (one bit per class) and eight 16-bit pause times in
//! quanta of 512 bit times, padded to the 64-byte minimum frame. The MAC consumes it: it never
//! enters the ingress pipeline.

use bitvec::prelude::{BitArray, Lsb0};

/// Destination address of MAC control frames.
pub const PFC_DESTINATION: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// EtherType of MAC control frames.
pub const MAC_CONTROL_ETHERTYPE: u16 = 0x8808;
/// Opcode of a priority-based flow control frame.
pub const PFC_OPCODE: u16 = 0x0101;
/// Bytes of a PFC frame in a packet buffer (FCS excluded): the 64-byte minimum frame.
pub const PFC_FRAME_BYTES: usize = 60;

/// What a PFC frame says: for each class whose bit is set, pause for that many quanta.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcFrame {
    /// Bit `c` (least significant first) enables class `c`: the low byte of the frame's
    /// 16-bit class-enable vector.
    pub class_enable: BitArray<u8, Lsb0>,
    pub quanta: [u16; 8],
}

impl PfcFrame {
    /// A frame for one class: `quanta` to pause, 0 to resume.
    pub fn one_class(class: u8, quanta: u16) -> PfcFrame {
        let mut q = [0; 8];
        q[class as usize % 8] = quanta;
        PfcFrame {
            class_enable: BitArray::new(1 << (class % 8)),
            quanta: q,
        }
    }

    /// Writes the frame (without FCS) from source address `source`.
    pub fn write(&self, source: [u8; 6], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&PFC_DESTINATION);
        out.extend_from_slice(&source);
        out.extend_from_slice(&MAC_CONTROL_ETHERTYPE.to_be_bytes());
        out.extend_from_slice(&PFC_OPCODE.to_be_bytes());
        out.extend_from_slice(&[0, self.class_enable.into_inner()]);
        for q in self.quanta {
            out.extend_from_slice(&q.to_be_bytes());
        }
        out.resize(PFC_FRAME_BYTES, 0);
    }

    /// The PFC frame in `bytes`, or `None` if they are not one.
    pub fn parse(bytes: &[u8]) -> Option<PfcFrame> {
        if bytes.len() < 34
            || bytes[0..6] != PFC_DESTINATION
            || bytes[12..14] != MAC_CONTROL_ETHERTYPE.to_be_bytes()
            || bytes[14..16] != PFC_OPCODE.to_be_bytes()
        {
            return None;
        }
        let mut quanta = [0; 8];
        for (c, q) in quanta.iter_mut().enumerate() {
            *q = u16::from_be_bytes([bytes[18 + 2 * c], bytes[19 + 2 * c]]);
        }
        Some(PfcFrame {
            class_enable: BitArray::new(bytes[17]),
            quanta,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_other_frames_are_not_pfc() {
        let mut b = Vec::new();
        let f = PfcFrame::one_class(3, 0xffff);
        f.write([2, 0, 0, 0, 0, 7], &mut b);
        assert_eq!(b.len(), PFC_FRAME_BYTES);
        assert_eq!(&b[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        assert_eq!(PfcFrame::parse(&b), Some(f));
        assert_eq!(f.quanta[3], 0xffff);
        b[14] = 0x00; // opcode 0x0101 -> 0x0001 (plain PAUSE)
        assert_eq!(PfcFrame::parse(&b), None);
        assert_eq!(PfcFrame::parse(&b[..20]), None);
    }
}
