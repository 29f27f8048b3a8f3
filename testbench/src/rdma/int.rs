//! The in-band network telemetry (INT) header of the RDMA NIC's frames, in the layout of the
//! HPCC ns-3 artifact (`alibaba-edu/High-Precision-Congestion-Control`,
//! `simulation/src/network/utils/int-header.h`): what the switches write into data frames
//! and the receivers echo in their ACKs and NACKs, for a rate control that reads it
//! ([`super::RateControl::on_ack`]; HPCC's lives in its scheme's folder).
//!
//! **INT header** ([`IntHeader`], [`INT_LEN`] = 42 bytes): [`MAX_HOPS`] = 5 hop records of 8
//! bytes, then the hop count (16 bits), as the artifact's `IntHeader` in its `NORMAL` mode
//! (`maxHop 5`, `hop[5]`, `nhop`). Every data frame carries it right after the BTH, zeroed
//! by the sender; each switch's egress writes record `nhop` and adds one to `nhop` (a switch
//! past the fifth hop only counts). A receiver copies the data frame's header into its ACK
//! or NACK, right after the AETH. A record is one big-endian 64-bit word with the artifact's
//! field widths at the artifact's bit positions (`IntHop`: its bitfield, lowest member
//! first): qlen (17 bits, bits 63-47), tx bytes (20, bits 46-27), time (24, bits 26-3), line
//! rate code (3, bits 2-0; 0..4 = 25/50/100/200/400 Gb/s).
//! - time: the egress timestamp in ns, modulo 2^24;
//! - tx bytes: the bytes the port sent before this packet, in units of `2^bytes_shift` bytes,
//!   modulo 2^20 (the artifact: 128 B times `INT_MULTI`, which `run.py` sets to line/25G, so
//!   512 B at 100 Gb/s: shift 9);
//! - qlen: the egress queue's depth as the packet leaves, in the chip's 176-byte cells
//!   (saturating at 2^17 - 1). The artifact counts bytes in units of 80 B times `INT_MULTI`;
//!   the chip knows its queues in cells (`eg_intr_md.deq_qdepth`).

/// The most hop records one header holds (the artifact's `IntHeader::maxHop`).
pub const MAX_HOPS: usize = 5;
/// Bytes of one record and of the header (records then the 16-bit hop count).
pub const HOP_LEN: usize = 8;
pub const INT_LEN: usize = MAX_HOPS * HOP_LEN + 2;
/// Field widths of a record (the artifact's `IntHop`).
pub const QLEN_BITS: u32 = 17;
pub const BYTES_BITS: u32 = 20;
pub const TIME_BITS: u32 = 24;
pub const RATE_BITS: u32 = 3;
/// Line rates by code (the artifact's `IntHop::lineRateValues`).
pub const LINE_RATES: [u64; 5] = [
    25_000_000_000,
    50_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
];

/// The rate code of `bps`, if the header can say it.
pub fn rate_code(bps: u64) -> Option<u8> {
    LINE_RATES.iter().position(|&r| r == bps).map(|c| c as u8)
}

/// One switch's record, as its fields are on the wire (in their units).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    pub qlen: u32,
    pub bytes: u32,
    pub time: u32,
    pub rate: u8,
}

impl IntHop {
    /// The 64-bit word of the record.
    pub fn word(&self) -> u64 {
        let m = |v: u64, bits: u32| v & ((1u64 << bits) - 1);
        (m(self.qlen as u64, QLEN_BITS) << (BYTES_BITS + TIME_BITS + RATE_BITS))
            | (m(self.bytes as u64, BYTES_BITS) << (TIME_BITS + RATE_BITS))
            | (m(self.time as u64, TIME_BITS) << RATE_BITS)
            | m(self.rate as u64, RATE_BITS)
    }

    pub fn from_word(w: u64) -> IntHop {
        let m = |shift: u32, bits: u32| ((w >> shift) & ((1u64 << bits) - 1)) as u32;
        IntHop {
            qlen: m(BYTES_BITS + TIME_BITS + RATE_BITS, QLEN_BITS),
            bytes: m(TIME_BITS + RATE_BITS, BYTES_BITS),
            time: m(RATE_BITS, TIME_BITS),
            rate: m(0, RATE_BITS) as u8,
        }
    }

    /// The line rate the record names, b/s (0 for a code the table leaves empty).
    pub fn line_bps(&self) -> u64 {
        LINE_RATES.get(self.rate as usize).copied().unwrap_or(0)
    }

    /// Nanoseconds from `earlier` to this record, across one wrap of the 24-bit clock.
    pub fn time_delta(&self, earlier: &IntHop) -> u64 {
        let wrap = 1u64 << TIME_BITS;
        (self.time as u64 + wrap - earlier.time as u64) % wrap
    }

    /// Byte units from `earlier` to this record, across one wrap of the 20-bit counter.
    pub fn bytes_delta(&self, earlier: &IntHop) -> u64 {
        let wrap = 1u64 << BYTES_BITS;
        (self.bytes as u64 + wrap - earlier.bytes as u64) % wrap
    }
}

/// The INT header: the records the switches wrote and how many wrote one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHeader {
    pub hops: [IntHop; MAX_HOPS],
    /// Switches that passed the packet (more than [`MAX_HOPS`] when the path was longer).
    pub nhop: u16,
}

impl IntHeader {
    /// The header's [`INT_LEN`] bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        for h in &self.hops {
            out.extend_from_slice(&h.word().to_be_bytes());
        }
        out.extend_from_slice(&self.nhop.to_be_bytes());
    }

    /// Reads a header from the first [`INT_LEN`] bytes of `b`.
    pub fn read(b: &[u8]) -> Option<IntHeader> {
        let b = b.get(..INT_LEN)?;
        let mut h = IntHeader::default();
        for (i, hop) in h.hops.iter_mut().enumerate() {
            let w: [u8; 8] = b[i * HOP_LEN..(i + 1) * HOP_LEN].try_into().ok()?;
            *hop = IntHop::from_word(u64::from_be_bytes(w));
        }
        h.nhop = u16::from_be_bytes([b[INT_LEN - 2], b[INT_LEN - 1]]);
        Some(h)
    }

    /// Appends a record as a switch does: record `nhop` (if below [`MAX_HOPS`]), then
    /// `nhop + 1`.
    pub fn push(&mut self, hop: IntHop) {
        if (self.nhop as usize) < MAX_HOPS {
            self.hops[self.nhop as usize] = hop;
        }
        self.nhop = self.nhop.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_the_artifacts_bitfield_in_network_order() {
        let h = IntHop {
            qlen: 0x1_2345,
            bytes: 0xa_bcde,
            time: 0x12_3456,
            rate: 2,
        };
        // qlen in bits 63-47, bytes 46-27, time 26-3, rate 2-0.
        let w = (0x1_2345u64 << 47) | (0xa_bcdeu64 << 27) | (0x12_3456u64 << 3) | 2;
        assert_eq!(h.word(), w);
        assert_eq!(IntHop::from_word(w), h);
        let mut int = IntHeader::default();
        int.push(h);
        let mut b = Vec::new();
        int.write(&mut b);
        assert_eq!(b.len(), INT_LEN);
        assert_eq!(&b[..8], &w.to_be_bytes());
        assert_eq!(&b[40..], &[0, 1]);
        assert_eq!(IntHeader::read(&b), Some(int));
        // Past the fifth hop a switch only counts.
        for _ in 0..5 {
            int.push(IntHop::default());
        }
        assert_eq!(int.nhop, 6);
        assert_eq!(int.hops[0], h);
        // Deltas across a wrap.
        let a = IntHop {
            time: (1 << 24) - 10,
            bytes: (1 << 20) - 1,
            ..h
        };
        let b = IntHop {
            time: 5,
            bytes: 2,
            ..h
        };
        assert_eq!((b.time_delta(&a), b.bytes_delta(&a)), (15, 3));
    }
}
