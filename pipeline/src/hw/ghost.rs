//! The ghost thread of an ingress pipe: queue-depth updates from the TM running the program's
//! ghost control in the ingress stages, in lockstep with ingress, without packet slots.
//!
//! Each update becomes a ghost PHV holding `ghost_md` ([`GhostWord`]) in the ingress PHV
//! layout (the ghost control reads and writes the same containers a packet would; its
//! gateway outcomes are its own). A PHV delivered in cycle `d` is at the input of MAU stage
//! `k` in cycle `d + offset(k)`, where `offset` is the ingress MAU stage offset of the
//! placement (the ghost thread has no parser, so `d` is the cycle it reaches stage 0). An
//! ingress packet entering the parser in cycle `e` reaches stage `k` in
//! `e + parser_cycles + offset(k)`: the two threads move through the stages at the same pace.
//!
//! Several PHVs delivered in one cycle go through every stage in the order they were
//! delivered. The ghost units run through the ingress [`StageProgram`]
//! ([`StageProgram::apply_ghost`]), which owns the register arrays, so ingress reads what the
//! ghost thread writes. Like [`crate::GressPipeline`], the pipeline tells the kernel the next
//! cycle a PHV reaches a stage with ghost units, so idle cycles can still be skipped.

use crate::hw::fields;
use crate::hw::gress::StageProgram;
use crate::hw::params::PipelineParams;
use crate::hw::phv::{Field, Phv};
use crate::hw::stage::Placement;
use std::collections::VecDeque;
use t2_clock::Cycle;

/// `ghost_intrinsic_metadata_t` as Tofino2 lays it out: `ping_pong:1, qlength:18, qid:11,
/// pipe_id:2` in one 32-bit container.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GhostWord {
    /// Alternates between successive updates of the same queue (double buffering).
    pub ping_pong: bool,
    /// Queue depth in cells, at most 18 bits.
    pub qlength: u32,
    /// 4-bit MAC id (bits 10:7) and 7-bit queue index within the MAC's 128 (bits 6:0).
    pub qid: u16,
    /// TM pipe of the queue.
    pub pipe_id: u8,
}

/// The `ghost_md` fields: qlength, qid, pipe_id, ping_pong.
fn ghost_fields() -> [Field; 4] {
    ["qlength", "qid", "pipe_id", "ping_pong"].map(|f| {
        fields::builtin(&format!("ghost_md.{f}"))
            .expect("the ghost_md fields are built-ins")
            .field
    })
}

impl GhostWord {
    fn write_to(&self, fields: &[Field; 4], phv: &mut Phv) {
        let [qlength, qid, pipe_id, ping_pong] = *fields;
        phv.set(qlength, self.qlength);
        phv.set(qid, self.qid as u32);
        phv.set(pipe_id, self.pipe_id as u32);
        phv.set(ping_pong, self.ping_pong as u32);
    }

    /// A fresh ghost PHV carrying the word (what the sequential interpreter runs).
    pub fn phv(&self, params: &crate::hw::params::PhvParams) -> Phv {
        let mut phv = Phv::new(params);
        self.write_to(&ghost_fields(), &mut phv);
        phv
    }
}

/// The ghost PHVs of one ingress pipe on their way through the stages.
#[derive(Clone)]
pub struct GhostPipeline {
    /// Every stage with ghost units: (MAU offset from delivery, stage), ascending.
    stage_points: Vec<(Cycle, usize)>,
    /// Delivery cycle and PHV of each ghost inside, oldest first.
    in_flight: VecDeque<(Cycle, Phv)>,
    /// Updates delivered in the current cycle, not yet started: in the tick of their cycle
    /// each runs all its stages at once or joins `in_flight` (see
    /// [`GhostPipeline::tick_batching`]).
    delivered: Vec<(Cycle, Phv)>,
    /// For each stage point, how many of `in_flight` (from the oldest) it has processed.
    passed: Vec<usize>,
    /// PHVs of ghosts that have left, reused so that running allocates nothing.
    spare: Vec<Phv>,
    phv: crate::hw::params::PhvParams,
    fields: [Field; 4],
    /// The next cycle a ghost PHV inside reaches a stage with ghost units (`None`: empty),
    /// kept up to date by entries and ticks so that a tick with nothing due costs one
    /// comparison (the chip ticks the ghost thread on every visit).
    next_at: Option<Cycle>,
}

impl GhostPipeline {
    /// The ghost thread of an ingress timed by `placement`, with ghost units in
    /// `ghost_stages` (ascending). `None` when there are none: the thread does nothing.
    pub fn new(
        params: &PipelineParams,
        placement: &Placement,
        ghost_stages: &[usize],
    ) -> Option<GhostPipeline> {
        if ghost_stages.is_empty() {
            return None;
        }
        let offsets = placement.stage_offsets(&params.stage_latency);
        Some(GhostPipeline {
            stage_points: ghost_stages
                .iter()
                .map(|&k| (offsets[k] as Cycle, k))
                .collect(),
            in_flight: VecDeque::new(),
            delivered: Vec::new(),
            passed: vec![0; ghost_stages.len()],
            spare: Vec::new(),
            phv: params.phv,
            fields: ghost_fields(),
            next_at: None,
        })
    }

    /// Cycles from delivery to each stage with ghost units.
    pub fn stage_points(&self) -> &[(Cycle, usize)] {
        &self.stage_points
    }

    /// Ghost PHVs inside.
    pub fn occupancy(&self) -> usize {
        self.in_flight.len() + self.delivered.len()
    }

    /// Whether a ghost PHV run stage by stage has stages to come: until none has, no
    /// ingress packet may run all its stages at once (see
    /// [`crate::GressPipeline::tick_batching`]).
    pub fn stepping(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// An update delivered in cycle `now` (after any delivered earlier, including in `now`).
    pub fn enter(&mut self, now: Cycle, word: GhostWord) {
        debug_assert!(self.in_flight.back().is_none_or(|&(d, _)| d <= now));
        let mut phv = self.spare.pop().unwrap_or_else(|| Phv::new(&self.phv));
        phv.clear();
        word.write_to(&self.fields, &mut phv);
        debug_assert!(self.delivered.last().is_none_or(|&(d, _)| d == now));
        self.delivered.push((now, phv));
        // It starts in the tick of this cycle; those inside keep their events.
        self.next_at = Some(self.next_at.map_or(now, |t| t.min(now)));
    }

    /// Runs the ghost units of every stage a ghost PHV has reached in cycle `now`, oldest
    /// delivery first, through `program` (the pipe's ingress program, which owns the
    /// registers). Call it before the ingress packets of the same cycle: in a stage, the
    /// ghost thread's register access comes before the packet's.
    #[inline]
    pub fn tick(&mut self, now: Cycle, program: &mut dyn StageProgram) {
        self.tick_batching(now, program, false);
    }

    /// [`GhostPipeline::tick`], letting the updates delivered in cycle `now` run all their
    /// stages there and then, when `may_batch` (the chip: nothing outside will touch the
    /// registers before they would have reached their stages, and no ingress packet run
    /// stage by stage has stages to come), the program's stages commute and no ghost PHV
    /// run stage by stage has stages to come. As for packets
    /// ([`crate::GressPipeline::tick_batching`]), every stage then meets ghost updates and
    /// packets in the order stepping gives (an update delivered in cycle `d` reaches stage
    /// `k` when a packet reaching stage 0 in cycle `d` does, and before it).
    #[inline]
    pub fn tick_batching(&mut self, now: Cycle, program: &mut dyn StageProgram, may_batch: bool) {
        if self.next_at.is_none_or(|t| t > now) {
            return;
        }
        self.tick_due(now, program, may_batch);
        self.next_at = self.compute_next_event();
    }

    /// [`GhostPipeline::tick`] in a cycle in which a ghost PHV reaches a stage with ghost
    /// units.
    #[inline(never)]
    fn tick_due(&mut self, now: Cycle, program: &mut dyn StageProgram, may_batch: bool) {
        let batch = may_batch && self.in_flight.is_empty() && program.stages_commute();
        for (d, mut phv) in self.delivered.drain(..) {
            debug_assert_eq!(d, now, "a ghost delivery was not started in its cycle");
            if batch {
                for &(_, stage) in &self.stage_points {
                    program.apply_ghost(stage, &mut phv);
                }
                self.spare.push(phv);
            } else {
                self.in_flight.push_back((d, phv));
            }
        }
        if self.in_flight.is_empty() {
            return;
        }
        for (i, &(offset, stage)) in self.stage_points.iter().enumerate() {
            while let Some((d, phv)) = self.in_flight.get_mut(self.passed[i]) {
                if *d + offset != now {
                    debug_assert!(*d + offset > now, "a ghost stage was skipped");
                    break;
                }
                program.apply_ghost(stage, phv);
                self.passed[i] += 1;
            }
        }
        // A ghost has left once the last stage with ghost units has run it.
        let last = self.stage_points.len() - 1;
        while self.passed[last] > 0 {
            let (_, phv) = self
                .in_flight
                .pop_front()
                .expect("passed counts ghosts inside");
            self.spare.push(phv);
            for p in &mut self.passed {
                *p -= 1;
            }
        }
    }

    /// The first cycle at which a ghost PHV inside reaches a stage with ghost units, if any.
    #[inline]
    pub fn next_event(&self) -> Option<Cycle> {
        debug_assert_eq!(self.next_at, self.compute_next_event());
        self.next_at
    }

    fn compute_next_event(&self) -> Option<Cycle> {
        let start = self.delivered.first().map(|e| e.0);
        self.stage_points
            .iter()
            .zip(&self.passed)
            .filter_map(|(&(offset, _), &passed)| self.in_flight.get(passed).map(|e| e.0 + offset))
            .chain(start)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records (cycle, stage, qlength) of every ghost PHV it runs.
    struct Probe {
        now: Cycle,
        seen: Vec<(Cycle, usize, u32)>,
        qlength: Field,
    }

    impl StageProgram for Probe {
        fn active_stages(&self) -> Vec<usize> {
            Vec::new()
        }
        fn apply(&mut self, _stage: usize, _phv: &mut Phv) {
            unreachable!("no packets here")
        }
        fn apply_ghost(&mut self, stage: usize, phv: &mut Phv) {
            self.seen.push((self.now, stage, phv.get(self.qlength)));
        }
    }

    #[test]
    fn ghosts_run_in_delivery_order_at_the_stage_offsets_and_leave() {
        let params = PipelineParams::default();
        // Shortest timing: stage 0 at 0, stage 3 at 23 + 2 + 2.
        let placement = Placement::shortest(20);
        assert!(GhostPipeline::new(&params, &placement, &[]).is_none());
        let mut g = GhostPipeline::new(&params, &placement, &[0, 3]).unwrap();
        assert_eq!(g.stage_points(), &[(0, 0), (27, 3)]);
        let word = |qlength| GhostWord {
            qlength,
            ..GhostWord::default()
        };
        let mut p = Probe {
            now: 0,
            seen: Vec::new(),
            qlength: ghost_fields()[0],
        };
        g.enter(10, word(1));
        g.enter(10, word(2));
        p.now = 10;
        g.tick(10, &mut p); // stage 0 acts in the delivery cycle
        assert_eq!(g.next_event(), Some(37));
        g.enter(11, word(3));
        let mut visited = Vec::new();
        while let Some(now) = g.next_event() {
            p.now = now;
            visited.push(now);
            // A tick before the next event does nothing; the kept next event is the scan's.
            g.tick(now - 1, &mut p);
            assert_eq!(g.next_event(), Some(now));
            g.tick(now, &mut p);
            assert_eq!(g.next_at, g.compute_next_event());
        }
        assert_eq!(visited, [11, 37, 38]);
        assert_eq!(g.occupancy(), 0);
        assert_eq!(
            p.seen,
            [
                (10, 0, 1),
                (10, 0, 2),
                (11, 0, 3),
                (37, 3, 1),
                (37, 3, 2),
                (38, 3, 3)
            ]
        );
    }
}
