//! TM admission: what the ingress deparsers and mirror sessions hand the TM a cycle earlier
//! is enqueued, or dropped and counted with the TM's reason.

use super::{Chip, ChipDrop};
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};

impl Chip {
    /// The TM admits (or drops, counted) every descriptor due in cycle `now`.
    pub(super) fn tm_admission(&mut self, now: Cycle, pool: &mut PacketPool) {
        while let Some(desc) = self.to_tm.recv(now) {
            if let Err(reason) = self.tm.enqueue(now, desc) {
                // The TM counted it; the chip frees the bytes and counts it too.
                self.drop(
                    ChipDrop::Tm(reason),
                    PacketHandle::from_index(desc.pkt),
                    pool,
                );
            }
        }
    }
}
