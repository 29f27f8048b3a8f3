//! The checksum hardware of the parser and the deparser: ones' complement sums (RFC 1071)
//! over lists of PHV fields and constants.
//!
//! A list's items are concatenated most significant bit first and summed as 16-bit words,
//! a last partial word padded with zeros at its low end, as P4 defines the data of TNA's
//! `Checksum` extern. The parser's engines ([`ParserEngines`]) keep a running sum per
//! engine that a state's operations add to, subtract from, verify or read out; an engine
//! that has deposited its residual also subtracts every header extracted after, and writes
//! its sum when parsing ends. A deparser checksum unit ([`Update`]) writes the ones'
//! complement of a list's sum into a 16-bit field as the packet leaves.
//!
//! Tofino2 has 5 checksum engines per parser and 8 checksum units per deparser
//! (docs/tofino2.md); the checker holds programs to them. The sums take no cycles of their
//! own here: the parser and deparser latencies are fixed per gress.

use crate::hw::phv::{Field, Phv};

/// Checksum engines in a Tofino2 parser (docs/tofino2.md).
pub const PARSER_ENGINES: usize = 5;
/// Checksum units in a Tofino2 deparser (docs/tofino2.md).
pub const DEPARSER_UNITS: usize = 8;

/// One piece of a checksum list: a PHV field (a piece of a wide one) or constant bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    Field(Field),
    /// `bits` (1 to 32) of `value`.
    Const {
        value: u32,
        bits: u8,
    },
}

/// The 16-bit ones' complement sum (end-around carry) of `pieces` as `phv` holds them.
pub fn sum(pieces: &[Piece], phv: &Phv) -> u16 {
    let mut words = Words::default();
    for p in pieces {
        match *p {
            Piece::Field(f) => words.push(phv.get(f), f.bits as u32),
            Piece::Const { value, bits } => words.push(value, bits as u32),
        }
    }
    words.finish()
}

/// The ones' complement sum of `bytes` as 16-bit big-endian words (a last odd byte padded).
pub fn sum_bytes(bytes: &[u8]) -> u16 {
    let mut words = Words::default();
    for &b in bytes {
        words.push(b as u32, 8);
    }
    words.finish()
}

/// Ones' complement addition of two 16-bit sums.
pub fn add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xffff) + (s >> 16)) as u16
}

/// Ones' complement subtraction: adding the complement.
pub fn subtract(a: u16, b: u16) -> u16 {
    add(a, !b)
}

/// Bits gathered into 16-bit words and summed.
#[derive(Default)]
struct Words {
    /// Bits not yet a whole word, right-aligned (fewer than 16).
    pending: u64,
    pending_bits: u32,
    sum: u64,
}

impl Words {
    fn push(&mut self, value: u32, bits: u32) {
        let value = if bits >= 32 {
            value as u64
        } else {
            value as u64 & ((1u64 << bits) - 1)
        };
        self.pending = self.pending << bits | value;
        self.pending_bits += bits;
        while self.pending_bits >= 16 {
            self.pending_bits -= 16;
            self.sum += (self.pending >> self.pending_bits) & 0xffff;
        }
        self.pending &= (1u64 << self.pending_bits) - 1;
    }

    fn finish(mut self) -> u16 {
        if self.pending_bits > 0 {
            self.sum += (self.pending << (16 - self.pending_bits)) & 0xffff;
        }
        while self.sum >> 16 != 0 {
            self.sum = (self.sum & 0xffff) + (self.sum >> 16);
        }
        self.sum as u16
    }
}

/// Writes `value` into a field given as pieces (most significant first), its low bits in
/// the last piece.
pub fn write(phv: &mut Phv, dst: &[Field], value: u32) {
    let mut v = value as u64;
    for f in dst.iter().rev() {
        phv.set(*f, (v & ((1u64 << f.bits) - 1)) as u32);
        v >>= f.bits;
    }
}

/// A parser checksum operation, resolved (`ir::ParserChecksum`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The engine, 0 to [`PARSER_ENGINES`] - 1.
    pub engine: u8,
    /// How many of the state's extracts run before it.
    pub after_extracts: u32,
    pub op: StepOp,
}

/// What a [`Step`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepOp {
    Add(Vec<Piece>),
    Subtract(Vec<Piece>),
    /// The engine's error bit into the field: 1 when the sum is not 0xffff (the data does
    /// not carry its correct checksum), else 0.
    Verify(Field),
    /// The error bit ORed into the field.
    VerifyOr(Field),
    /// The sum's ones' complement into the field's pieces.
    Get(Vec<Field>),
    /// Subtract every header extracted from here on; write the sum into the field's pieces
    /// when parsing ends.
    Deposit(Vec<Field>),
}

/// The running sums of a parser's engines for one packet.
#[derive(Clone, Debug, Default)]
pub struct ParserEngines {
    sums: [u16; PARSER_ENGINES],
    /// Engines that have deposited: where their sums go when parsing ends.
    residual: [Option<Vec<Field>>; PARSER_ENGINES],
    /// Whether any has.
    depositing: bool,
}

impl ParserEngines {
    /// Runs `step` on `phv`.
    pub fn run(&mut self, step: &Step, phv: &mut Phv) {
        let e = step.engine as usize;
        match &step.op {
            StepOp::Add(pieces) => self.sums[e] = add(self.sums[e], sum(pieces, phv)),
            StepOp::Subtract(pieces) => self.sums[e] = subtract(self.sums[e], sum(pieces, phv)),
            StepOp::Verify(dst) => phv.set(*dst, (self.sums[e] != 0xffff) as u32),
            StepOp::VerifyOr(dst) => {
                let was = phv.get(*dst);
                phv.set(*dst, was | (self.sums[e] != 0xffff) as u32)
            }
            StepOp::Get(dst) => write(phv, dst, !self.sums[e] as u32),
            StepOp::Deposit(dst) => {
                self.residual[e] = Some(dst.clone());
                self.depositing = true;
            }
        }
    }

    /// A header's bytes were extracted: the engines that have deposited subtract them.
    /// Every extract of every packet of a program's graph asks, so the common case (no
    /// deposit) is one inlined test.
    #[inline]
    pub fn extracted(&mut self, header: &[u8]) {
        if self.depositing {
            self.subtract_extracted(header);
        }
    }

    fn subtract_extracted(&mut self, header: &[u8]) {
        let s = sum_bytes(header);
        for (e, r) in self.residual.iter().enumerate() {
            if r.is_some() {
                self.sums[e] = subtract(self.sums[e], s);
            }
        }
    }

    /// Parsing ended with `accept`: the residuals are written.
    pub fn finish(&self, phv: &mut Phv) {
        if !self.depositing {
            return;
        }
        for (e, r) in self.residual.iter().enumerate() {
            if let Some(dst) = r {
                write(phv, dst, self.sums[e] as u32);
            }
        }
    }
}

/// A deparser checksum unit, resolved (`ir::ChecksumUpdate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    /// The 16-bit destination's pieces.
    pub dst: Vec<Field>,
    pub pieces: Vec<Piece>,
    /// Computed only where this 1-bit field is 1.
    pub when: Option<Field>,
    pub zeros_as_ones: bool,
}

impl Update {
    /// Writes the checksum into `phv` if the unit's condition holds.
    pub fn apply(&self, phv: &mut Phv) {
        if self.when.is_some_and(|w| phv.get(w) != 1) {
            return;
        }
        let mut v = !sum(&self.pieces, phv);
        if v == 0 && self.zeros_as_ones {
            v = 0xffff;
        }
        write(phv, &self.dst, v as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_words_with_end_around_carry() {
        assert_eq!(sum_bytes(&[0xff, 0xff, 0x00, 0x02]), 0x0002);
        assert_eq!(sum_bytes(&[0x80, 0x00, 0x80, 0x01]), 0x0002);
        // An odd last byte is the high byte of a padded word.
        assert_eq!(sum_bytes(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }

    #[test]
    fn an_ipv4_header_with_its_checksum_sums_to_all_ones() {
        // RFC 1071's example header bytes with a correct checksum.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(sum_bytes(&h), 0xffff);
    }

    #[test]
    fn pieces_concatenate_across_word_boundaries() {
        let phv = Phv::new(&crate::hw::params::PhvParams::default());
        // 8 + 16 + 8 bits: 0xab, 0xcdef, 0x12 -> words 0xabcd, 0xef12.
        let p = [
            Piece::Const {
                value: 0xab,
                bits: 8,
            },
            Piece::Const {
                value: 0xcdef,
                bits: 16,
            },
            Piece::Const {
                value: 0x12,
                bits: 8,
            },
        ];
        assert_eq!(sum(&p, &phv), add(0xabcd, 0xef12));
        // 24 bits: the last word padded, 0x0033 0x33.. as a cast to bit<24> of 0x3333 gives.
        let c = [Piece::Const {
            value: 0x003333,
            bits: 24,
        }];
        assert_eq!(sum(&c, &phv), add(0x0033, 0x3300));
    }
}
