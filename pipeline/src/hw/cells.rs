//! The cells of one register array, each stored in the narrowest of 8, 16, 32 or 64 bits
//! that holds it (both halves of a pair together).
//!
//! A program's per-flow arrays are large (BFC's are 64 K cells of 8 to 32 bits in each pipe of
//! each chip), and a packet touches a cell at a random place in them: stored at their width
//! instead of a 64-bit word each, they take an eighth to a half of the memory and so of the
//! cache lines a simulation misses on. Values are the same either way; every read and write
//! goes through [`Cells::get`] and [`Cells::set`] as `u64`.

/// One register array's cells, all starting at 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cells {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Cells {
    /// `size` zero cells of `bits` bits each (both halves of a pair: twice the cell width).
    pub fn zeroed(bits: u32, size: usize) -> Cells {
        match bits {
            0..=8 => Cells::U8(vec![0; size]),
            9..=16 => Cells::U16(vec![0; size]),
            17..=32 => Cells::U32(vec![0; size]),
            _ => Cells::U64(vec![0; size]),
        }
    }

    /// Cell `i`. Panics if `i` is out of range, as indexing a slice does.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Cells::U8(v) => v[i] as u64,
            Cells::U16(v) => v[i] as u64,
            Cells::U32(v) => v[i] as u64,
            Cells::U64(v) => v[i],
        }
    }

    /// Sets cell `i` to `value`, which must fit the array's width (callers mask it to the
    /// cell width; a wider value is a bug, caught in debug builds).
    #[inline]
    pub fn set(&mut self, i: usize, value: u64) {
        match self {
            Cells::U8(v) => {
                debug_assert!(value <= u8::MAX as u64);
                v[i] = value as u8
            }
            Cells::U16(v) => {
                debug_assert!(value <= u16::MAX as u64);
                v[i] = value as u16
            }
            Cells::U32(v) => {
                debug_assert!(value <= u32::MAX as u64);
                v[i] = value as u32
            }
            Cells::U64(v) => v[i] = value,
        }
    }

    /// Sets every cell to `value` (which must fit, as for [`Cells::set`]).
    pub fn fill(&mut self, value: u64) {
        for i in 0..self.len() {
            self.set(i, value);
        }
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        match self {
            Cells::U8(v) => v.len(),
            Cells::U16(v) => v.len(),
            Cells::U32(v) => v.len(),
            Cells::U64(v) => v.len(),
        }
    }

    /// Whether the array has no cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cells in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The cells as 64-bit values.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Cells;

    #[test]
    fn each_width_gets_the_narrowest_store_and_keeps_its_values() {
        for (bits, max) in [
            (1, 1u64),
            (8, 0xff),
            (16, 0xffff),
            (24, 0xff_ffff),
            (32, 0xffff_ffff),
            (64, u64::MAX),
        ] {
            let mut c = Cells::zeroed(bits, 3);
            let bytes = match &c {
                Cells::U8(_) => 8,
                Cells::U16(_) => 16,
                Cells::U32(_) => 32,
                Cells::U64(_) => 64,
            };
            assert_eq!(bytes, bits.next_power_of_two().max(8), "{bits} bits");
            c.set(1, max);
            c.set(2, max / 2);
            assert_eq!(c.to_vec(), vec![0, max, max / 2], "{bits} bits");
            assert_eq!(c.len(), 3);
            assert_eq!(c.get(1), max);
        }
    }
}
