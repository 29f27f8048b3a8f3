//! The ghost thread's feed: TM queue-depth updates delivered into every pipe's ghost thread,
//! packed as Tofino2 packs them.

use super::Chip;
use t2_clock::Cycle;
use t2_pipeline::GhostWord;
use t2_tm::ghost::GhostUpdate;

/// The ghost feed's state on the chip side.
pub(super) struct GhostFeed {
    /// Ghost updates are chip events: the program has a ghost control or they are traced.
    /// Otherwise the TM's ghost feed stays lazy and costs the kernel nothing.
    pub(super) events: bool,
    /// Scratch for the ghost updates of a cycle (reused, so delivering allocates nothing).
    pub(super) updates: Vec<(Cycle, GhostUpdate)>,
    pub(super) words: Vec<GhostWord>,
}

impl GhostFeed {
    pub(super) fn new(events: bool) -> GhostFeed {
        GhostFeed {
            events,
            updates: Vec::new(),
            words: Vec::new(),
        }
    }
}

impl Chip {
    /// The ghost updates that reach the ingress pipes in cycle `now`, in delivery order: each
    /// enters every pipe's ghost thread (if the program has one) and is traced.
    pub(super) fn ghost_deliver(&mut self, now: Cycle) {
        let mut updates = std::mem::take(&mut self.ghost.updates);
        let mut words = std::mem::take(&mut self.ghost.words);
        self.tm.take_ghost_delivered(now, &mut updates);
        for &(at, u) in &updates {
            // Updates delivered before tracing started made the kernel stop nowhere.
            if at == now {
                words.push(self.ghost_word(&u));
            }
        }
        for pipe in &mut self.pipes {
            if let Some(ghost) = pipe.ghost.as_mut() {
                debug_assert_eq!(words.len(), updates.len(), "a ghost delivery was skipped");
                for &w in &words {
                    ghost.enter(now, w);
                }
            }
        }
        if let Some(t) = self.trace.as_mut() {
            if !words.is_empty() {
                t.ghost(now, &words);
            }
        }
        updates.clear();
        words.clear();
        self.ghost.updates = updates;
        self.ghost.words = words;
    }

    /// The ghost metadata of a TM update, as Tofino2 packs it: `qid` is the queue's 4-bit
    /// MAC id (the AFC numbering: 0 the pipe's recirculation group, `m + 1` front-panel MAC
    /// `m`) and its 7-bit index among that MAC's 128 queues; `pipe_id` the TM pipe.
    pub fn ghost_word(&self, u: &GhostUpdate) -> GhostWord {
        let (_, mac, mac_qid) = self
            .afc_address(u.port as usize, u.queue.value() as usize)
            .expect("a queue the TM reports has a MAC and queue index");
        GhostWord {
            ping_pong: u.ping_pong,
            qlength: u.qlength.value(),
            qid: (mac as u16) << 7 | mac_qid as u16,
            pipe_id: u.pipe.value(),
        }
    }
}
