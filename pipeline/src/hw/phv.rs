//! The packet header vector: the containers a packet's fields travel in through the MAU.

use serde::{Deserialize, Serialize};

/// PHV containers of each width (Tofino2: 80 x 8 b, 120 x 16 b, 80 x 32 b). Each width's
/// containers are split into normal (full ALU), mocha (move only, parser-visible) and dark
/// (move only, MAU-only) kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhvParams {
    pub containers_8: u16,
    pub containers_16: u16,
    pub containers_32: u16,
    /// Normal containers per width, in the order 8, 16, 32 bits.
    pub normal: [u16; 3],
    /// Mocha containers per width.
    pub mocha: [u16; 3],
    /// Dark containers per width.
    pub dark: [u16; 3],
}

impl Default for PhvParams {
    fn default() -> PhvParams {
        PhvParams {
            containers_8: 80,
            containers_16: 120,
            containers_32: 80,
            normal: [48, 72, 48],
            mocha: [16, 24, 16],
            dark: [16, 24, 16],
        }
    }
}

/// Width of a PHV container. The discriminants index per-width tables (8, 16, 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Width {
    B8 = 0,
    B16 = 1,
    B32 = 2,
}

/// One PHV container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Container {
    pub width: Width,
    pub index: u16,
}

impl Container {
    pub const fn b8(index: u16) -> Container {
        Container {
            width: Width::B8,
            index,
        }
    }
    pub const fn b16(index: u16) -> Container {
        Container {
            width: Width::B16,
            index,
        }
    }
    pub const fn b32(index: u16) -> Container {
        Container {
            width: Width::B32,
            index,
        }
    }

    /// Bytes the container holds.
    #[inline]
    pub const fn bytes(self) -> usize {
        match self.width {
            Width::B8 => 1,
            Width::B16 => 2,
            Width::B32 => 4,
        }
    }
}

/// A field: `bits` bits of a container starting at bit `shift` (0 = least significant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub container: Container,
    pub shift: u8,
    pub bits: u8,
}

impl Field {
    /// A field that fills its container.
    pub const fn whole(container: Container) -> Field {
        Field {
            container,
            shift: 0,
            bits: (container.bytes() * 8) as u8,
        }
    }

    /// A field of `bits` low bits of `container`.
    pub const fn low(container: Container, bits: u8) -> Field {
        Field {
            container,
            shift: 0,
            bits,
        }
    }

    /// A field of `bits` bits at `shift` in `container`.
    pub const fn at(container: Container, shift: u8, bits: u8) -> Field {
        Field {
            container,
            shift,
            bits,
        }
    }

    /// Whether the two fields share a bit of a container.
    pub fn overlaps(self, other: Field) -> bool {
        let bits = |f: Field| (f.mask() as u64) << f.shift;
        self.container == other.container && bits(self) & bits(other) != 0
    }

    /// The field's bits, low-aligned: one load from a table indexed by `bits` (any `u8`).
    #[inline(always)]
    fn mask(self) -> u32 {
        FIELD_MASK[self.bits as usize]
    }
}

/// The mask of a field of `bits` bits, for every `bits` a `u8` holds (32 and more: all).
const FIELD_MASK: [u32; 256] = {
    let mut m = [u32::MAX; 256];
    let mut bits = 0;
    while bits < 32 {
        m[bits] = (1u32 << bits) - 1;
        bits += 1;
    }
    m
};

/// Per width (8, 16, 32 bits): log2 of the container's bytes (the width's discriminant),
/// and the mask of its bits.
const BYTES_LOG2: [u32; 3] = [0, 1, 2];
const WIDTH_MASK: [u32; 3] = [0xff, 0xffff, 0xffff_ffff];

/// Bytes after the last container, so that every container can be read and written as a
/// 4-byte word (see [`Phv`]).
const PAD: usize = 3;

/// The containers of one packet. Sized once from [`PhvParams`]; reused for every packet that
/// passes through the slot that owns it.
///
/// Every container lives in one byte array, the 8-bit ones first, then the 16-bit, then the
/// 32-bit ones, each little-endian, with [`PAD`] zero bytes at the end. A container of any
/// width is accessed as the 4-byte word at its offset, masked to its width: reading or
/// writing a field is then the same few instructions whatever the width, with no branch on
/// it, and clearing or copying a PHV is one `fill` or `copy` of the array. A write leaves the
/// bytes past its container's width as they were (the mask stops at the width), so
/// neighbouring containers and the padding are never changed.
#[derive(Clone, PartialEq, Eq)]
pub struct Phv {
    bytes: Box<[u8]>,
    /// Byte offset of the first container of each width.
    base: [usize; 3],
    /// `base` in one word (8-bit containers always start at 0), to tell PHVs of the same
    /// layout apart from others in one comparison.
    layout: u64,
}

impl std::fmt::Debug for Phv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = |w: usize, end: usize| -> Vec<u32> {
            let n = end.saturating_sub(self.base[w]) >> BYTES_LOG2[w];
            (0..n)
                .map(|i| self.word(self.base[w] + (i << BYTES_LOG2[w])) & WIDTH_MASK[w])
                .collect()
        };
        f.debug_struct("Phv")
            .field("c8", &width(0, self.base[1]))
            .field("c16", &width(1, self.base[2]))
            .field("c32", &width(2, self.bytes.len().saturating_sub(PAD)))
            .finish()
    }
}

impl Phv {
    /// A PHV with no containers, holding no memory: a placeholder for one made when it is
    /// first needed ([`Phv::is_allocated`] says which). No field may be read or written.
    pub fn unallocated() -> Phv {
        Phv {
            bytes: Box::default(),
            base: [0; 3],
            layout: 0,
        }
    }

    /// Whether this PHV has its containers (not [`Phv::unallocated`]).
    pub fn is_allocated(&self) -> bool {
        !self.bytes.is_empty()
    }

    pub fn new(p: &PhvParams) -> Phv {
        let b16 = p.containers_8 as u32;
        let b32 = b16 + 2 * p.containers_16 as u32;
        let len = b32 as usize + 4 * p.containers_32 as usize + PAD;
        Phv {
            bytes: vec![0; len].into_boxed_slice(),
            base: [0, b16 as usize, b32 as usize],
            layout: (b16 as u64) << 32 | b32 as u64,
        }
    }

    /// Copies every container of `other` (same sizes) without allocating.
    #[inline]
    pub fn copy_from(&mut self, other: &Phv) {
        debug_assert_eq!(self.layout, other.layout);
        self.bytes.copy_from_slice(&other.bytes);
    }

    /// Zeroes every container.
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.fill(0);
    }

    /// Byte offset of container `c`. Past the last container of its width it lands in the
    /// next width (or past the end), as an out-of-range index into that width's own array
    /// would be an error; `debug_assert`s catch it, and callers place containers within
    /// [`PhvParams`].
    #[inline(always)]
    fn offset(&self, c: Container) -> usize {
        let w = c.width as usize;
        // The discriminant of a width is log2 of its bytes (`BYTES_LOG2`).
        let at = self.base[w] + ((c.index as usize) << w);
        debug_assert!(
            at + c.bytes() <= self.base.get(w + 1).map_or(self.bytes.len() - PAD, |&b| b),
            "{c:?} is beyond the PHV"
        );
        at
    }

    /// The 4-byte word at byte `at` (little-endian).
    #[inline(always)]
    fn word(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"))
    }

    #[inline(always)]
    fn set_word(&mut self, at: usize, v: u32) {
        self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    #[inline(always)]
    pub fn container(&self, c: Container) -> u32 {
        self.word(self.offset(c)) & WIDTH_MASK[c.width as usize]
    }

    /// Writes a whole container; bits beyond its width are dropped.
    #[inline(always)]
    pub fn set_container(&mut self, c: Container, v: u32) {
        let at = self.offset(c);
        let m = WIDTH_MASK[c.width as usize];
        let old = self.word(at);
        self.set_word(at, (old & !m) | (v & m));
    }

    #[inline(always)]
    pub fn get(&self, f: Field) -> u32 {
        (self.container(f.container) >> f.shift) & f.mask()
    }

    /// Writes a field, leaving the container's other bits alone; `v` is truncated to the
    /// field's width (and to the container's).
    #[inline(always)]
    pub fn set(&mut self, f: Field, v: u32) {
        let at = self.offset(f.container);
        let m = (f.mask() << f.shift) & WIDTH_MASK[f.container.width as usize];
        let old = self.word(at);
        self.set_word(at, (old & !m) | ((v << f.shift) & m));
    }

    /// Loads a container from big-endian bytes. The whole container is written, so its
    /// bytes are stored without reading them first.
    #[inline(always)]
    pub fn extract(&mut self, c: Container, bytes: &[u8]) {
        let at = self.offset(c);
        match c.width {
            Width::B8 => self.bytes[at] = bytes[0],
            Width::B16 => self.bytes[at..at + 2].copy_from_slice(&[bytes[1], bytes[0]]),
            Width::B32 => {
                self.bytes[at..at + 4].copy_from_slice(&[bytes[3], bytes[2], bytes[1], bytes[0]])
            }
        }
    }

    /// Stores a container as big-endian bytes.
    #[inline(always)]
    pub fn emit(&self, c: Container, out: &mut [u8]) {
        let v = self.container(c);
        match c.width {
            Width::B8 => out[0] = v as u8,
            Width::B16 => out[..2].copy_from_slice(&(v as u16).to_be_bytes()),
            Width::B32 => out[..4].copy_from_slice(&v.to_be_bytes()),
        }
    }
}

/// Some containers of a PHV, to copy between PHVs of one size: their 4-byte words and the
/// bytes of each that belong to the set, worked out once (containers sharing a word are
/// copied together).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerSet {
    containers: Vec<Container>,
    /// (byte offset, mask of the set's bits in the word there), by offset.
    words: Vec<(u32, u32)>,
    /// The layout `words` is for (that of PHVs sized by the same parameters).
    layout: u64,
}

impl ContainerSet {
    /// `containers` (repeats ignored) in PHVs sized by `p`.
    pub fn new(p: &PhvParams, containers: &[Container]) -> ContainerSet {
        let layout = Phv::new(p);
        let mut bytes: Vec<(usize, u32)> = Vec::new();
        let mut unique: Vec<Container> = Vec::new();
        for &c in containers {
            if unique.contains(&c) {
                continue;
            }
            unique.push(c);
            bytes.push((layout.offset(c), WIDTH_MASK[c.width as usize]));
        }
        bytes.sort_unstable();
        let mut words: Vec<(u32, u32)> = Vec::new();
        for (at, mask) in bytes {
            let len = (32 - mask.leading_zeros()) as usize / 8;
            match words.last_mut() {
                // Wholly within the word the one before starts: share it.
                Some((start, m)) if at + len <= *start as usize + 4 => {
                    *m |= mask << (8 * (at - *start as usize));
                }
                _ => words.push((at as u32, mask)),
            }
        }
        ContainerSet {
            containers: unique,
            words,
            layout: layout.layout,
        }
    }

    /// The containers, in the order first given.
    pub fn containers(&self) -> &[Container] {
        &self.containers
    }
}

impl Phv {
    /// Copies the containers of `set` from `other` (a PHV of the same size), leaving every
    /// other container alone.
    #[inline(always)]
    pub fn copy_set(&mut self, other: &Phv, set: &ContainerSet) {
        assert_eq!(self.layout, other.layout, "PHVs of different sizes");
        if set.layout != self.layout {
            // PHVs of another size than the set was laid out for: container by container.
            for &c in &set.containers {
                self.set_container(c, other.container(c));
            }
            return;
        }
        for &(at, m) in &set.words {
            let at = at as usize;
            let new = other.word(at) & m;
            let old = self.word(at) & !m;
            self.set_word(at, old | new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_share_containers_without_clobbering() {
        let mut phv = Phv::new(&PhvParams::default());
        let c = Container::b16(3);
        let port = Field::low(c, 9);
        let flag = Field::at(c, 15, 1);
        phv.set(port, 0x1ff);
        phv.set(flag, 1);
        assert_eq!(phv.get(port), 0x1ff);
        assert_eq!(phv.get(flag), 1);
        assert_eq!(phv.container(c), 0x81ff);
        phv.set(port, 0x3ff); // truncated to 9 bits
        assert_eq!(phv.container(c), 0x81ff);
    }

    #[test]
    fn extract_and_emit_are_big_endian() {
        let mut phv = Phv::new(&PhvParams::default());
        phv.extract(Container::b32(0), &[1, 2, 3, 4]);
        assert_eq!(phv.container(Container::b32(0)), 0x0102_0304);
        let mut out = [0u8; 4];
        phv.emit(Container::b32(0), &mut out);
        assert_eq!(out, [1, 2, 3, 4]);
        phv.clear();
        assert_eq!(phv.container(Container::b32(0)), 0);
    }

    /// Every container of a PHV with the given sizes, widths in order.
    fn all(p: &PhvParams) -> Vec<Container> {
        (0..p.containers_8)
            .map(Container::b8)
            .chain((0..p.containers_16).map(Container::b16))
            .chain((0..p.containers_32).map(Container::b32))
            .collect()
    }

    /// Containers share one byte array and are written as 4-byte words: a write, whole or
    /// of a field, and whatever value it is given, changes its own container and no other,
    /// the last container of each width and of the PHV included.
    #[test]
    fn a_write_changes_its_container_and_no_other() {
        let p = PhvParams::default();
        let mut phv = Phv::new(&p);
        let containers = all(&p);
        // Distinct values everywhere, so that a stray byte would show.
        for (i, &c) in containers.iter().enumerate() {
            phv.set_container(c, 0x9e37_79b9u32.wrapping_mul(i as u32 + 1));
        }
        let before: Vec<u32> = containers.iter().map(|&c| phv.container(c)).collect();
        for (i, &c) in containers.iter().enumerate() {
            let bits = (c.bytes() * 8) as u32;
            assert!(
                bits == 32 || before[i] >> bits == 0,
                "{c:?} holds bits past its width"
            );
            let mut w = phv.clone();
            w.set_container(c, u32::MAX);
            w.set(Field::at(c, 3, 32), 0);
            w.extract(c, &[0xa5, 0x5a, 0xc3, 0x3c]);
            let expect = 0xa55a_c33c >> (32 - bits);
            for (j, &d) in containers.iter().enumerate() {
                let want = if j == i { expect } else { before[j] };
                assert_eq!(w.container(d), want, "writing {c:?} changed {d:?}");
            }
        }
    }

    /// Copying a set moves exactly its containers, whether they share a 4-byte word (small
    /// neighbours) or not, and whatever the order they are named in.
    #[test]
    fn copying_a_set_moves_its_containers_and_no_other() {
        let p = PhvParams::default();
        let containers = all(&p);
        let (mut from, mut to) = (Phv::new(&p), Phv::new(&p));
        for (i, &c) in containers.iter().enumerate() {
            from.set_container(c, 0x0101_0101u32.wrapping_mul(i as u32 + 1));
            to.set_container(c, !0x0101_0101u32.wrapping_mul(i as u32 + 1));
        }
        let picked = [
            Container::b8(3),
            Container::b8(4),
            Container::b8(6),
            Container::b8(79),
            Container::b16(0),
            Container::b16(1),
            Container::b16(119),
            Container::b32(0),
            Container::b32(79),
            Container::b8(4),
        ];
        let set = ContainerSet::new(&p, &picked);
        assert_eq!(set.containers().len(), 9);
        // 8-bit 3, 4 and 6 share a word; so do 16-bit 0 and 1.
        assert_eq!(set.words.len(), 6);
        let before = to.clone();
        to.copy_set(&from, &set);
        for &c in &containers {
            let want = if picked.contains(&c) { &from } else { &before };
            assert_eq!(to.container(c), want.container(c), "{c:?}");
        }
        // PHVs of another size than the set's take the container-by-container path.
        let small = PhvParams {
            containers_8: 80,
            containers_16: 110,
            containers_32: 80,
            ..p
        };
        let (mut a, mut b) = (Phv::new(&small), Phv::new(&small));
        b.set_container(Container::b32(0), 7);
        b.set_container(Container::b32(1), 8);
        a.copy_set(&b, &ContainerSet::new(&p, &[Container::b32(0)]));
        assert_eq!(a.container(Container::b32(0)), 7);
        assert_eq!(a.container(Container::b32(1)), 0);
    }

    /// A gress reuses a slot's PHV for every packet and clears it at entry: whatever the
    /// packet before wrote, the next one reads zero from every container it does not write
    /// itself, and its own values from those it does.
    #[test]
    fn a_reused_phv_reads_as_cleared_except_what_the_next_packet_wrote() {
        let p = PhvParams::default();
        let containers = all(&p);
        let mut phv = Phv::new(&p);
        let mut state = 1u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 32) as u32
        };
        for _packet in 0..20 {
            phv.clear();
            let mut written = vec![None; containers.len()];
            for _ in 0..40 {
                let i = next() as usize % containers.len();
                let c = containers[i];
                let v = next();
                let bits = c.bytes() as u32 * 8;
                let width = ((1u64 << bits) - 1) as u32;
                written[i] = Some(match next() % 3 {
                    0 => {
                        phv.set_container(c, v);
                        v & width
                    }
                    1 => {
                        // The container's bytes from the front of the source.
                        phv.extract(c, &v.to_be_bytes());
                        (v as u64 >> (32 - bits)) as u32
                    }
                    _ => {
                        let shift = (next() % bits) as u8;
                        let f = Field::at(c, shift, 1 + (next() % 8) as u8);
                        phv.set(f, v);
                        let m = (f.mask() << shift) & width;
                        (written[i].unwrap_or(0) & !m) | ((v << shift) & m)
                    }
                });
            }
            for (i, &c) in containers.iter().enumerate() {
                assert_eq!(phv.container(c), written[i].unwrap_or(0), "{c:?}");
            }
        }
        let fresh = Phv::new(&p);
        phv.clear();
        assert_eq!(phv, fresh);
    }
}
