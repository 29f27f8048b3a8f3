//! Packet bytes in a pool, addressed by handles.
//!
//! A frame's bytes live in one pooled buffer from the moment a host builds it until the
//! frame is delivered or dropped. Nodes, the TM and the pipeline pass the 4-byte handle, never
//! the bytes. Freed buffers keep their capacity, so once the pool is warm no packet allocates.
//! Buffers hold the frame without its FCS (see `t2_clock::FCS_BYTES`).

/// A packet's place in a [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketHandle(u32);

impl PacketHandle {
    pub fn index(self) -> u32 {
        self.0
    }

    /// Rebuilds a handle from [`PacketHandle::index`]; for modules (the TM) that carry the
    /// handle as an opaque number.
    pub fn from_index(index: u32) -> PacketHandle {
        PacketHandle(index)
    }
}

/// Buffers for every packet in a simulation.
#[derive(Debug, Default)]
pub struct PacketPool {
    buffers: Vec<Vec<u8>>,
    in_use: Vec<bool>,
    free: Vec<u32>,
    live: usize,
}

impl PacketPool {
    pub fn new() -> PacketPool {
        PacketPool::default()
    }

    /// An empty buffer for a new packet.
    pub fn alloc(&mut self) -> PacketHandle {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.buffers[i as usize].clear();
            self.in_use[i as usize] = true;
            PacketHandle(i)
        } else {
            let i = u32::try_from(self.buffers.len()).expect("more than 2^32 live packets");
            self.buffers.push(Vec::new());
            self.in_use.push(true);
            PacketHandle(i)
        }
    }

    /// A new packet holding a copy of `bytes`.
    pub fn alloc_from(&mut self, bytes: &[u8]) -> PacketHandle {
        let h = self.alloc();
        self.buffers[h.0 as usize].extend_from_slice(bytes);
        h
    }

    /// A new packet holding the first `keep` bytes of `h` (all of them for `None`), copied
    /// without an intermediate buffer.
    pub fn copy_packet(&mut self, h: PacketHandle, keep: Option<usize>) -> PacketHandle {
        let copy = self.alloc();
        let (src, dst) = if h.0 < copy.0 {
            let (a, b) = self.buffers.split_at_mut(copy.0 as usize);
            (&a[h.0 as usize], &mut b[0])
        } else {
            let (a, b) = self.buffers.split_at_mut(h.0 as usize);
            (&b[0], &mut a[copy.0 as usize])
        };
        let n = keep.map_or(src.len(), |k| src.len().min(k));
        dst.extend_from_slice(&src[..n]);
        copy
    }

    /// Returns a packet's buffer to the pool. Freeing a handle twice is a model bug and
    /// panics: it would mean a packet was counted twice.
    pub fn free(&mut self, h: PacketHandle) {
        let i = h.0 as usize;
        assert!(self.in_use[i], "packet {} freed twice", h.0);
        self.in_use[i] = false;
        self.free.push(h.0);
        self.live -= 1;
    }

    pub fn bytes(&self, h: PacketHandle) -> &[u8] {
        debug_assert!(self.in_use[h.0 as usize], "packet {} used after free", h.0);
        &self.buffers[h.0 as usize]
    }

    pub fn bytes_mut(&mut self, h: PacketHandle) -> &mut Vec<u8> {
        debug_assert!(self.in_use[h.0 as usize], "packet {} used after free", h.0);
        &mut self.buffers[h.0 as usize]
    }

    /// Frame length on the wire without preamble: the buffer plus the FCS.
    pub fn frame_bytes(&self, h: PacketHandle) -> u64 {
        self.bytes(h).len() as u64 + t2_clock::FCS_BYTES
    }

    /// Packets allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_buffers_without_growing() {
        let mut pool = PacketPool::new();
        let a = pool.alloc_from(&[1, 2, 3]);
        let b = pool.alloc_from(&[4; 100]);
        assert_eq!(pool.live(), 2);
        assert_eq!(pool.frame_bytes(b), 104);
        pool.free(a);
        let c = pool.alloc_from(&[9]);
        assert_eq!(c, a, "a freed slot is reused");
        assert_eq!(pool.bytes(c), &[9]);
        assert_eq!(pool.buffers.len(), 2);
        assert_eq!(pool.live(), 2);
    }

    #[test]
    fn copies_packets_whole_or_truncated() {
        let mut pool = PacketPool::new();
        let a = pool.alloc_from(&[1, 2, 3, 4, 5]);
        let b = pool.copy_packet(a, Some(3));
        assert_eq!(pool.bytes(b), &[1, 2, 3]);
        pool.free(a);
        let c = pool.alloc_from(&[9; 4]); // reuses a's slot, below b
        let d = pool.copy_packet(b, None);
        assert_eq!(pool.bytes(d), &[1, 2, 3]);
        let e = pool.copy_packet(c, Some(10));
        assert_eq!(pool.bytes(e), &[9; 4]);
    }

    #[test]
    #[should_panic(expected = "freed twice")]
    fn double_free_is_caught() {
        let mut pool = PacketPool::new();
        let a = pool.alloc();
        pool.free(a);
        pool.free(a);
    }
}
