//! Mirroring: a session's copy of a packet (cut to the session's truncation, charged like
//! the original) and egress-to-egress mirroring of packets leaving the egress deparser.

use super::MIRROR_SESSIONS;
use super::{Chip, MirrorSession};
use std::collections::{BTreeMap, BTreeSet};
use t2_clock::Cycle;
use t2_pipeline::{Exit, PacketHandle, PacketPool};
use t2_tm::Descriptor;

/// The mirror block's state: its sessions and the copies it made that are still inside.
pub(super) struct Mirroring {
    /// Where each session sends its copies.
    pub(super) sessions: Vec<Option<MirrorSession>>,
    /// Handles of the copies inside the chip (copies are few; kept until delivered or
    /// dropped).
    pub(super) copies: BTreeSet<u32>,
    /// Mirror types of the copies made with a mirror header, until they enter an egress.
    pub(super) types: BTreeMap<u32, u8>,
    /// Packets in the TM that bypass the egress pipeline (`bypass_egress`), by handle.
    pub(super) bypass: BTreeSet<u32>,
}

impl Mirroring {
    pub(super) fn new() -> Mirroring {
        Mirroring {
            sessions: vec![None; MIRROR_SESSIONS],
            copies: BTreeSet::new(),
            types: BTreeMap::new(),
            bypass: BTreeSet::new(),
        }
    }
}

impl Chip {
    /// Session `session`'s copy of `pkt`: its bytes as they are now, cut to the session's
    /// truncation, counted, and handed to the TM next cycle for the session's port and queue,
    /// charged to (`ingress_port`, `ingress_cos`) like the original.
    pub(super) fn mirror_copy(
        &mut self,
        now: Cycle,
        pkt: PacketHandle,
        session: MirrorSession,
        ingress_port: u16,
        ingress_cos: u8,
        pool: &mut PacketPool,
    ) -> PacketHandle {
        let copy = pool.copy_packet(pkt, session.truncate_bytes.map(|t| t as usize));
        self.counters.mirrored += 1;
        self.mirror.copies.insert(copy.index());
        self.to_tm.send(
            now,
            Descriptor {
                pkt: copy.index(),
                frame_bytes: pool.frame_bytes(copy) as u32,
                ingress_port,
                egress_port: session.port as u16,
                qid: session.qid,
                ingress_cos,
            },
        );
        copy
    }

    /// Egress-to-egress mirroring: the egress program's `mirror` copies the packet as it
    /// leaves the egress deparser in cycle `now` (the outgoing bytes), unless the packet is
    /// itself a copy: copies are never mirrored again by egress (`docs/timing.md`).
    pub(super) fn egress_mirror(
        &mut self,
        now: Cycle,
        exit: &Exit,
        original: Descriptor,
        pool: &mut PacketPool,
    ) {
        let Some(id) = exit.mirror_session else {
            return;
        };
        // With `mirror_io_select`, the packet as it entered the egress is the source.
        let source = exit.mirror_incoming.unwrap_or(exit.pkt);
        if self.mirror.copies.contains(&exit.pkt.index()) {
            self.counters.mirror_not_repeated += 1;
        } else if let Some(session) = self.mirror.sessions[id as usize] {
            // A session not set makes no copy, as in ingress.
            self.counters.mirrored_egress += 1;
            let copy = self.mirror_copy(
                now,
                source,
                session,
                original.ingress_port,
                original.ingress_cos,
                pool,
            );
            if exit.mirror_type != 0 {
                self.mirror.types.insert(copy.index(), exit.mirror_type);
            }
        }
        if let Some(copy) = exit.mirror_incoming {
            pool.free(copy);
        }
    }
}
