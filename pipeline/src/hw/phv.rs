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

/// Width of a PHV container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    B8,
    B16,
    B32,
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

    #[inline]
    fn mask(self) -> u32 {
        if self.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits) - 1
        }
    }
}

/// The containers of one packet. Sized once from [`PhvParams`]; reused for every packet that
/// passes through the slot that owns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phv {
    c8: Box<[u8]>,
    c16: Box<[u16]>,
    c32: Box<[u32]>,
}

impl Phv {
    pub fn new(p: &PhvParams) -> Phv {
        Phv {
            c8: vec![0; p.containers_8 as usize].into_boxed_slice(),
            c16: vec![0; p.containers_16 as usize].into_boxed_slice(),
            c32: vec![0; p.containers_32 as usize].into_boxed_slice(),
        }
    }

    /// Copies every container of `other` (same sizes) without allocating.
    pub fn copy_from(&mut self, other: &Phv) {
        self.c8.copy_from_slice(&other.c8);
        self.c16.copy_from_slice(&other.c16);
        self.c32.copy_from_slice(&other.c32);
    }

    /// Zeroes every container.
    pub fn clear(&mut self) {
        self.c8.fill(0);
        self.c16.fill(0);
        self.c32.fill(0);
    }

    #[inline]
    pub fn container(&self, c: Container) -> u32 {
        let i = c.index as usize;
        match c.width {
            Width::B8 => self.c8[i] as u32,
            Width::B16 => self.c16[i] as u32,
            Width::B32 => self.c32[i],
        }
    }

    /// Writes a whole container; bits beyond its width are dropped.
    #[inline]
    pub fn set_container(&mut self, c: Container, v: u32) {
        let i = c.index as usize;
        match c.width {
            Width::B8 => self.c8[i] = v as u8,
            Width::B16 => self.c16[i] = v as u16,
            Width::B32 => self.c32[i] = v,
        }
    }

    #[inline]
    pub fn get(&self, f: Field) -> u32 {
        (self.container(f.container) >> f.shift) & f.mask()
    }

    /// Writes a field, leaving the container's other bits alone; `v` is truncated to the
    /// field's width.
    #[inline]
    pub fn set(&mut self, f: Field, v: u32) {
        let m = f.mask() << f.shift;
        let old = self.container(f.container);
        self.set_container(f.container, (old & !m) | ((v << f.shift) & m));
    }

    /// Loads a container from big-endian bytes.
    #[inline]
    pub fn extract(&mut self, c: Container, bytes: &[u8]) {
        let v = match c.width {
            Width::B8 => bytes[0] as u32,
            Width::B16 => u16::from_be_bytes([bytes[0], bytes[1]]) as u32,
            Width::B32 => u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        };
        self.set_container(c, v);
    }

    /// Stores a container as big-endian bytes.
    #[inline]
    pub fn emit(&self, c: Container, out: &mut [u8]) {
        let v = self.container(c);
        match c.width {
            Width::B8 => out[0] = v as u8,
            Width::B16 => out[..2].copy_from_slice(&(v as u16).to_be_bytes()),
            Width::B32 => out[..4].copy_from_slice(&v.to_be_bytes()),
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
}
