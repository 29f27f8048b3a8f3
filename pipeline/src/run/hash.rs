//! The hashes a program's units compute: CRCs over the bytes of fields (byte-table CRCs,
//! cached per width and polynomial) and the action selector's hash, which the interpreter
//! ([`super::exec`]) and the compiled stages ([`super::compiled`]) share.

use crate::hw::phv::{Field, Phv};
use crate::program::ir::HashAlgorithm;
use std::sync::Arc;

/// A CRC over `bytes`, MSB first, initial value 0, no reflection, no final XOR.
pub fn crc(algorithm: HashAlgorithm, polynomial: u32, bytes: &[u8]) -> u32 {
    let width = algorithm.bits();
    CRC_TABLES.with(|tables| {
        let mut tables = tables.borrow_mut();
        let table = match tables
            .iter()
            .position(|(w, p, _)| *w == width && *p == polynomial)
        {
            Some(i) => &tables[i].2,
            None => {
                tables.push((width, polynomial, crc_table(algorithm, polynomial)));
                &tables[tables.len() - 1].2
            }
        };
        table.crc(bytes)
    })
}

/// The byte table of one CRC (width and polynomial), which compiled programs keep beside
/// the hash units that use it.
#[derive(Clone)]
pub(crate) struct CrcTable {
    width: u32,
    mask: u64,
    remainders: [u64; 256],
}

impl std::fmt::Debug for CrcTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CrcTable({} bits)", self.width)
    }
}

/// The byte table of `algorithm`'s CRC with `polynomial`.
pub(crate) fn crc_table(algorithm: HashAlgorithm, polynomial: u32) -> Arc<CrcTable> {
    let width = algorithm.bits();
    Arc::new(CrcTable {
        width,
        mask: (1u64 << width) - 1,
        remainders: std::array::from_fn(|b| crc_bitwise(width, polynomial, &[b as u8])),
    })
}

impl CrcTable {
    /// [`crc`] of `bytes`.
    #[inline]
    pub(crate) fn crc(&self, bytes: &[u8]) -> u32 {
        // A byte at a time: the register's top byte and the input byte pick the remainder
        // that eight bit steps would leave (the table holds it for every such byte).
        let mut reg = 0u64;
        for &b in bytes {
            let top = ((reg >> (self.width - 8)) as u8 ^ b) as usize;
            reg = ((reg << 8) ^ self.remainders[top]) & self.mask;
        }
        reg as u32
    }
}

thread_local! {
    /// Byte tables of the CRCs used so far, by (width, polynomial): a handful per program.
    #[allow(clippy::type_complexity)]
    static CRC_TABLES: std::cell::RefCell<Vec<(u32, u32, Arc<CrcTable>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The same CRC a bit at a time (the definition; `crc` uses it to fill its byte tables).
fn crc_bitwise(width: u32, polynomial: u32, bytes: &[u8]) -> u64 {
    let top = 1u64 << (width - 1);
    let mask = (1u64 << width) - 1;
    let mut reg = 0u64;
    for &b in bytes {
        reg ^= (b as u64) << (width - 8);
        for _ in 0..8 {
            reg = if reg & top != 0 {
                ((reg << 1) ^ polynomial as u64) & mask
            } else {
                (reg << 1) & mask
            };
        }
    }
    reg
}

pub(crate) fn field_be_bytes(phv: &Phv, f: Field, out: &mut Vec<u8>) {
    let n = (f.bits as usize).div_ceil(8);
    let v = phv.get(f).to_be_bytes();
    out.extend_from_slice(&v[4 - n..]);
}

/// The selector's hash: CRC-16 (polynomial 0x8005, as P4's `HashAlgorithm.crc16`), of
/// which fair mode uses 14 bits (p4c `bf-p4c/specs/mau_spec.h`).
pub const SELECTOR_POLYNOMIAL: u32 = 0x8005;
pub const SELECTOR_HASH_MASK: u32 = (1 << 14) - 1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::state::splitmix64;

    #[test]
    fn the_byte_table_crc_equals_the_bitwise_definition() {
        let mut state = 7u64;
        for algorithm in [HashAlgorithm::Crc16, HashAlgorithm::Crc32] {
            for poly in [
                algorithm.default_polynomial(),
                0x1021,
                0x1EDC_6F41 & 0xFFFF,
                0x1EDC_6F41,
            ] {
                for len in 0..40 {
                    let bytes: Vec<u8> = (0..len).map(|_| splitmix64(&mut state) as u8).collect();
                    assert_eq!(
                        crc(algorithm, poly, &bytes) as u64,
                        crc_bitwise(algorithm.bits(), poly, &bytes),
                        "{algorithm:?} {poly:#x} {bytes:?}"
                    );
                }
            }
        }
        // CRC-32/POSIX without its final XOR: the check value of "123456789", inverted.
        assert_eq!(
            crc(HashAlgorithm::Crc32, 0x04C1_1DB7, b"123456789"),
            0x89A1_897F
        );
    }

    #[test]
    fn crc_matches_known_check_values() {
        // Check values over "123456789" from the CRC catalogue: CRC-16/UMTS (0x8005, init 0,
        // no reflection) is 0xFEE8; CRC-32/CKSUM (0x04C11DB7, init 0) is 0x765E7680 after
        // its final XOR with 0xFFFFFFFF, so 0x89A1897F without it.
        assert_eq!(crc(HashAlgorithm::Crc16, 0x8005, b"123456789"), 0xFEE8);
        assert_eq!(
            crc(HashAlgorithm::Crc32, 0x04C1_1DB7, b"123456789"),
            0x89A1_897F
        );
    }
}
