//! The ghost thread's feed: TM queue-depth updates delivered into every pipe's ghost thread,
//! packed as Tofino2 packs them.
//!
//! Every pipe's ghost thread gets the same updates in the same cycles. When the program's
//! ghost writes depend on nothing but those updates (`StageProgram::ghost_writes_are_its_own`:
//! no random numbers, and no ingress unit writes an array the ghost units touch), every
//! pipe's ghost thread would store the same words in the same cells in the same cycles. The
//! chip then runs pipe 0's alone and copies each cell it stores into the other pipes'
//! arrays in the same cycle, before any pipe's ingress runs in it: each pipe's registers
//! hold, at every cycle, what its own ghost thread would have left there, for a quarter
//! of the work (`Chip::ingress_pipes`). A control-plane operation that could make the
//! pipes' ghost threads differ (a register write into an array the ghost units touch, a
//! table entry for one pipe only) ends the sharing for good: the other pipes' ghost
//! threads take over pipe 0's updates in flight and run their own from then on.

use super::Chip;
use t2_clock::Cycle;
use t2_pipeline::gress::CellWrite;
use t2_pipeline::GhostWord;
use t2_pipeline::StageProgram;
use t2_tm::ghost::GhostUpdate;

/// The ghost feed's state on the chip side.
pub(super) struct GhostFeed {
    /// Ghost updates are chip events: the program has a ghost control or they are traced.
    /// Otherwise the TM's ghost feed stays lazy and costs the kernel nothing.
    pub(super) events: bool,
    /// Pipe 0's ghost thread runs for every pipe (see the module's doc).
    pub(super) shared: bool,
    /// Scratch for the ghost updates of a cycle (reused, so delivering allocates nothing).
    pub(super) updates: Vec<(Cycle, GhostUpdate)>,
    pub(super) words: Vec<GhostWord>,
    /// Scratch for the cells pipe 0's ghost thread stored in a cycle, when shared.
    pub(super) writes: Vec<CellWrite>,
}

impl GhostFeed {
    pub(super) fn new(events: bool, shared: bool) -> GhostFeed {
        GhostFeed {
            events,
            shared,
            updates: Vec::new(),
            words: Vec::new(),
            writes: Vec::new(),
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
        let receivers = if self.ghost.shared {
            1
        } else {
            self.pipes.len()
        };
        for pipe in &mut self.pipes[..receivers] {
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

    /// Pipe 0's ghost thread, when shared, for cycle `now`: it runs the updates that reach
    /// their stages, and the cells it stores go into every other pipe's arrays too. It may run
    /// an update's stages all at once (`may_batch`) only while no pipe steps ingress packets
    /// stage by stage, as each pipe's own would require of its own ingress.
    pub(super) fn shared_ghost(&mut self, now: Cycle, may_batch: bool) {
        let batch = may_batch && !self.pipes.iter().any(|p| p.ingress.stepping());
        let mut writes = std::mem::take(&mut self.ghost.writes);
        let leader = &mut self.pipes[0];
        let Some(ghost) = leader.ghost.as_mut() else {
            return;
        };
        let program = &mut leader.ingress_program;
        program.log_register_writes(true);
        ghost.tick_batching(now, program, batch);
        program.take_register_writes(&mut writes);
        program.log_register_writes(false);
        for pipe in &mut self.pipes[1..] {
            for &(r, index, word) in &writes {
                pipe.ingress_program.write_register(r as usize, index, word);
            }
        }
        writes.clear();
        self.ghost.writes = writes;
    }

    /// Ends the pipes' sharing of pipe 0's ghost thread (see the module's doc), if they
    /// share it: every other pipe's ghost thread takes over pipe 0's updates in flight,
    /// which are its own (the same updates, tables and cells), and runs its own from now on.
    pub fn run_ghost_in_every_pipe(&mut self) {
        if !self.ghost.shared {
            return;
        }
        self.ghost.shared = false;
        let leader = self.pipes[0].ghost.clone();
        for pipe in &mut self.pipes[1..] {
            pipe.ghost.clone_from(&leader);
        }
    }

    /// Whether pipe 0's ghost thread runs for every pipe (see the module's doc).
    pub fn ghost_shared(&self) -> bool {
        self.ghost.shared
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
