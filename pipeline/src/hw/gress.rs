//! One gress (ingress or egress) of a pipe: parser, MAU stages, deparser, as a fixed-latency
//! shift register of PHV slots.
//!
//! The parser runs the [`Graph`] it is built with (the program's, or the built-in one of
//! `crate::program::builtin`) on the frame's bytes at entry; its latency is `parser_cycles` whatever
//! the graph. A packet the parser drops keeps its slot and leaves at the exit with its reason.
//!
//! The register is a ring indexed by entry cycle, so moving every packet one step is free:
//! a packet that entered at cycle `e` is at offset `now - e`. Stage `k` acts on the slot at its
//! offset (parser latency + the stage's offset from placement); the deparser hands the packet
//! on at the exit offset. At most one packet enters per cycle. PHVs stay in their slot from
//! entry to exit. The pipeline tells the kernel the next cycle at which a packet reaches a
//! stage with tables or the exit, so idle cycles can be skipped.

use crate::hw::fields;
use crate::hw::layout;
use crate::hw::params::PipelineParams;
use crate::hw::parser::{Extent, Graph};
use crate::hw::phv::{Field, Phv};
use crate::hw::stage::Placement;
use crate::wire::packet::{PacketHandle, PacketPool};
use crate::DropReason;
use std::collections::VecDeque;
use std::sync::Arc;
use t2_clock::Cycle;

/// Which thread of the pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gress {
    Ingress,
    Egress,
}

/// A register cell a program stored: (array, cell index, stored word, both halves of a
/// pair).
pub type CellWrite = (u32, u32, u64);

/// What the MAU stages of a gress do to a packet. Placement has already decided which
/// stage holds which table; `apply` runs the tables of one stage.
pub trait StageProgram: Send {
    /// Stages (from 0) that hold tables, ascending.
    fn active_stages(&self) -> Vec<usize>;
    /// Runs stage `stage`'s tables on a packet's PHV.
    fn apply(&mut self, stage: usize, phv: &mut Phv);
    /// An ingress program's ghost thread: stages (from 0) that hold ghost units, ascending.
    /// Programs without a ghost control have none.
    fn ghost_stages(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Runs stage `stage`'s ghost units on a ghost PHV ([`crate::GhostPipeline`]), with the
    /// same register arrays as the packets.
    fn apply_ghost(&mut self, _stage: usize, _phv: &mut Phv) {}
    /// The register arrays' cells, for programs that have them (one array each).
    fn registers(&self) -> Option<&[crate::Cells]> {
        None
    }
    /// The register arrays' names, in the order of [`StageProgram::registers`].
    fn register_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// Array `r`'s cell width in bits (both halves of a pair) and its number of cells.
    fn register_shape(&self, _r: usize) -> (u32, u32) {
        (0, 0)
    }
    /// Whether a packet may run all its stages at once, in the cycle it reaches stage 0,
    /// without changing any result: every piece of state a stage reads or writes (a
    /// register array, a table's random generator) belongs to one stage, so the order in
    /// which packets (and ghost updates) meet it is their order of reaching stage 0 whatever
    /// the stage. Programs that cannot say so are run stage by stage.
    fn stages_commute(&self) -> bool {
        false
    }
    /// The control plane writes `value` into cell `index` of array `r` (both checked).
    fn write_register(&mut self, _r: usize, _index: u32, _value: u64) {}
    /// An ingress program's ghost thread: whether its effect on the registers depends on
    /// nothing but the updates it is given (its units draw no random numbers, and every
    /// array they execute on is written by no ingress unit). Then every pipe's ghost thread,
    /// fed the same updates by the TM, stores the same words in the same cells in the same
    /// cycles, so a chip may run one pipe's and copy the cells it stores into the others.
    fn ghost_writes_are_its_own(&self) -> bool {
        false
    }
    /// Whether the ghost thread applies a table named `name` or executes on a register array
    /// of that name.
    fn ghost_uses(&self, _name: &str) -> bool {
        false
    }
    /// Starts (`true`) or stops keeping a log of every register cell the program stores,
    /// emptying the log either way.
    fn log_register_writes(&mut self, _on: bool) {}
    /// Moves the cells stored since the log was started or last taken, in order, to `out`.
    fn take_register_writes(&mut self, _out: &mut Vec<CellWrite>) {}
    /// The program as `Any`, for the control plane to reach its own type (table entries).
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// A gress with no tables: packets pass through unchanged.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTables;

impl StageProgram for NoTables {
    fn active_stages(&self) -> Vec<usize> {
        Vec::new()
    }
    fn stages_commute(&self) -> bool {
        true
    }
    fn apply(&mut self, _stage: usize, _phv: &mut Phv) {}
}

/// A packet leaving the deparser, with the intrinsic metadata the rest of the chip needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exit {
    pub pkt: PacketHandle,
    /// The device port given at entry: where the packet came in (ingress) or goes out
    /// (egress).
    pub port: u16,
    /// Set if the parser or the program dropped the packet; its bytes were not deparsed.
    pub drop: Option<DropReason>,
    /// Ingress only: the device port chosen by the program, if any.
    pub ucast_egress_port: Option<u16>,
    /// Ingress only: the queue within that port.
    pub qid: u8,
    /// Ingress only: the class for admission and PFC (`ingress_cos`, 3 bits).
    pub ingress_cos: u8,
    /// The deparser's AFC message (`adv_flow_ctl`, either gress); 0 sends none.
    pub adv_flow_ctl: u32,
    /// The mirror session the program chose (`mirror` primitive), if any: in ingress a copy
    /// of the packet leaving the ingress deparser, in egress one of the packet leaving the
    /// egress deparser (egress-to-egress mirroring).
    pub mirror_session: Option<u8>,
    /// With `mirror_io_select` set: a copy of the packet as it entered the gress, for the
    /// mirror session to use instead of the packet leaving (the receiver frees it).
    pub mirror_incoming: Option<PacketHandle>,
    /// Ingress only: the program sent the packet to the recirculation port.
    pub recirculate: bool,
    /// The mirror type of the copy (`mirror_with_header`), 0 for none. With a type, the
    /// copy's source is `mirror_incoming`: the mirror header followed by the packet.
    pub mirror_type: u8,
    /// Ingress only: the program resubmitted the packet; `pkt` is now the packet as it
    /// entered the ingress with the resubmit header in front, for a second pass.
    pub resubmit: bool,
    /// Ingress only: a second pass asked to be resubmitted again, which is not done.
    pub resubmit_refused: bool,
    /// Ingress only: `ig_intr_tm_md.bypass_egress` was set: the packet goes from the TM to
    /// its port's MAC without passing the egress pipeline.
    pub bypass_egress: bool,
    /// Ingress only: `ig_intr_dprsr_md.pktgen` was set (the pipe's deparser-triggered pktgen
    /// applications fire, whatever becomes of the packet).
    pub pktgen: bool,
    /// Ingress only: the digest the deparser sends for the packet (its
    /// `ig_intr_dprsr_md.digest_type` names one of the program's digests), whatever becomes
    /// of the packet.
    pub digest: Option<Digested>,
}

/// A digest the ingress deparser sends: which of the program's digests (its place in
/// [`DeparserDigest`]s given to [`GressPipeline::with_digests`]) and its values as the
/// packet left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digested {
    pub digest: u16,
    pub values: Vec<u64>,
}

/// What the ingress deparser packs for one digest type: each value's PHV pieces, most
/// significant first.
#[derive(Clone, Debug)]
pub struct DeparserDigest {
    pub digest_type: u8,
    pub fields: Vec<Vec<Field>>,
}

impl DeparserDigest {
    /// The digest `phv` asks for among `digests`, with its values: `None` when its digest
    /// type is 0 or names none of them.
    fn packed(digests: &[DeparserDigest], phv: &Phv) -> Option<Digested> {
        if digests.is_empty() {
            return None;
        }
        let t = phv.get(fields::DIGEST_TYPE) as u8;
        if t == 0 {
            return None;
        }
        let k = digests.iter().position(|d| d.digest_type == t)?;
        let values = digests[k]
            .fields
            .iter()
            .map(|pieces| {
                pieces
                    .iter()
                    .fold(0u64, |v, f| (v << f.bits) | phv.get(*f) as u64)
            })
            .collect();
        Some(Digested {
            digest: k as u16,
            values,
        })
    }
}

struct Slot {
    entered: Cycle,
    live: bool,
    pkt: PacketHandle,
    /// The packet's PHV: an index into [`GressPipeline::phvs`].
    phv: u32,
    /// What the parser found, for the deparser.
    extent: Extent,
}

/// A gress pipeline.
pub struct GressPipeline {
    gress: Gress,
    /// The PHV's shape, for the slots' PHVs made when first used.
    phv_params: crate::hw::phv::PhvParams,
    slots: Vec<Slot>,
    /// The PHVs of the packets inside, and spare ones. A PHV is made when more packets are
    /// inside than ever before, so a pipe that never carries a packet (most of a big fat
    /// tree's, in a light run) holds none and memory follows what the network carries. The
    /// PHV freed last is taken first, so the few a busy pipe cycles through stay in cache
    /// (one per ring slot spread the packets over hundreds of cold PHVs).
    phvs: Vec<Phv>,
    /// Indices into `phvs` not in use, the last freed at the end.
    free_phvs: Vec<u32>,
    mask: u64,
    /// Entry cycles of the packets inside, oldest first.
    in_flight: VecDeque<Cycle>,
    /// Entry cycles of the packets that have not reached stage 0 yet, oldest first. There
    /// each either runs all its stages at once (see [`GressPipeline::tick_batching`]) or
    /// joins `stepped`.
    waiting: VecDeque<Cycle>,
    /// Entry cycles of the packets run stage by stage that have stages to come, oldest
    /// first.
    stepped: VecDeque<Cycle>,
    /// Every stage that holds tables: (offset from entry, stage).
    stage_points: Vec<(Cycle, usize)>,
    /// For each stage point, how many of `stepped` (from the oldest) it has processed.
    passed: Vec<usize>,
    /// For each stage point, the cycle the next packet it has not processed reaches it
    /// (`Cycle::MAX`: none inside), so that a busy cycle finds its stages with one
    /// comparison each.
    due: Vec<Cycle>,
    exit_offset: Cycle,
    /// Offset from entry at which a packet reaches each stage, tables or not.
    all_stage_offsets: Vec<Cycle>,
    last_entry: Option<Cycle>,
    /// The parse graph the parser runs and the deparser follows.
    parser: Arc<Graph>,
    /// The next cycle a packet inside reaches a stage with tables or the exit (`None`:
    /// empty), kept up to date by entries and ticks so that a tick between events costs one
    /// comparison.
    next_at: Option<Cycle>,
    /// The offset of stage 0 from entry (the parser's latency): where a packet leaves
    /// `waiting`.
    start_offset: Cycle,
    /// Ingress: the program's digests, which the deparser packs.
    digests: Vec<DeparserDigest>,
    /// The deparser's checksum units, which write their fields before it emits.
    checksums: Vec<crate::hw::checksum::Update>,
}

impl GressPipeline {
    /// A pipeline timed by `placement` (one entry per stage) whose tables sit in
    /// `active_stages`. Panics if an active stage is beyond the placement; callers validate
    /// programs against the chip first.
    pub fn new(
        gress: Gress,
        params: &PipelineParams,
        placement: &Placement,
        active_stages: &[usize],
        parser: Arc<Graph>,
    ) -> GressPipeline {
        let offsets = placement.stage_offsets(&params.stage_latency);
        let graph = parser;
        let parser = params.parser_cycles as Cycle;
        let stage_points: Vec<(Cycle, usize)> = active_stages
            .iter()
            .map(|&k| {
                assert!(k < offsets.len(), "stage {k} is not in the placement");
                (parser + offsets[k] as Cycle, k)
            })
            .collect();
        let exit_offset = parser
            + placement.mau_cycles(&params.stage_latency) as Cycle
            + params.deparser_cycles as Cycle;
        let all_stage_offsets = offsets.iter().map(|&o| parser + o as Cycle).collect();
        let size = (exit_offset + 1).next_power_of_two();
        let slots = (0..size)
            .map(|_| Slot {
                entered: 0,
                live: false,
                extent: Extent::default(),
                pkt: PacketHandle::from_index(0),
                phv: 0,
            })
            .collect();
        GressPipeline {
            gress,
            phv_params: params.phv,
            slots,
            phvs: Vec::new(),
            free_phvs: Vec::new(),
            mask: size - 1,
            in_flight: VecDeque::new(),
            waiting: VecDeque::new(),
            stepped: VecDeque::new(),
            passed: vec![0; active_stages.len()],
            due: vec![Cycle::MAX; active_stages.len()],
            stage_points,
            exit_offset,
            all_stage_offsets,
            last_entry: None,
            parser: graph,
            next_at: None,
            start_offset: parser,
            digests: Vec::new(),
            checksums: Vec::new(),
        }
    }

    /// The pipeline with the checksum units its deparser runs.
    pub fn with_checksums(mut self, checksums: Vec<crate::hw::checksum::Update>) -> GressPipeline {
        self.checksums = checksums;
        self
    }

    /// The pipeline with the digests its deparser packs (ingress; the egress deparser
    /// sends none).
    pub fn with_digests(mut self, digests: Vec<DeparserDigest>) -> GressPipeline {
        if self.gress == Gress::Ingress {
            self.digests = digests;
        }
        self
    }

    pub fn gress(&self) -> Gress {
        self.gress
    }

    /// Cycles from entering the parser to leaving the deparser.
    pub fn latency(&self) -> Cycle {
        self.exit_offset
    }

    /// Cycles from entering the parser to reaching each MAU stage.
    pub fn stage_offsets(&self) -> &[Cycle] {
        &self.all_stage_offsets
    }

    /// Whether a packet may enter at `now` (one per cycle).
    pub fn can_enter(&self, now: Cycle) -> bool {
        self.last_entry != Some(now)
    }

    /// Packets inside the pipeline.
    pub fn occupancy(&self) -> usize {
        self.in_flight.len()
    }

    /// Puts a packet into the parser at `now`: its bytes are parsed into the slot's PHV and
    /// `port` is recorded as the ingress port (ingress) or egress port (egress). Panics if a
    /// packet already entered in this cycle; the chip's arbiter guarantees one per cycle.
    pub fn enter(&mut self, now: Cycle, pkt: PacketHandle, port: u16, pool: &PacketPool) {
        self.enter_with(now, pkt, port, pool, &[]);
    }

    /// Like [`GressPipeline::enter`], and also sets intrinsic metadata fields the chip
    /// supplies (for egress, the TM's queue depths and delay) after parsing.
    pub fn enter_with(
        &mut self,
        now: Cycle,
        pkt: PacketHandle,
        port: u16,
        pool: &PacketPool,
        metadata: &[(Field, u32)],
    ) {
        self.enter_parsed_with(now, pkt, port, pool, &[], metadata);
    }

    /// Like [`GressPipeline::enter_with`], and also sets `before_parse` (intrinsic fields a
    /// parser `select` may key on, such as a mirror copy's `mirror_type`) before parsing.
    pub fn enter_parsed_with(
        &mut self,
        now: Cycle,
        pkt: PacketHandle,
        port: u16,
        pool: &PacketPool,
        before_parse: &[(Field, u32)],
        metadata: &[(Field, u32)],
    ) {
        assert!(
            self.can_enter(now),
            "two packets entered one gress in cycle {now}"
        );
        debug_assert!(self.in_flight.back().is_none_or(|&e| e < now));
        self.last_entry = Some(now);
        let slot = &mut self.slots[(now & self.mask) as usize];
        debug_assert!(!slot.live, "slot overwritten");
        slot.entered = now;
        slot.live = true;
        slot.pkt = pkt;
        slot.phv = match self.free_phvs.pop() {
            Some(i) => {
                self.phvs[i as usize].clear();
                i
            }
            None => {
                self.phvs.push(Phv::new(&self.phv_params));
                (self.phvs.len() - 1) as u32
            }
        };
        let phv = &mut self.phvs[slot.phv as usize];
        let bytes = pool.bytes(pkt);
        let port_field = match self.gress {
            Gress::Ingress => layout::INGRESS_PORT,
            Gress::Egress => layout::EGRESS_PORT,
        };
        phv.set(port_field, port as u32);
        phv.set(layout::PKT_LENGTH, pool.frame_bytes(pkt).min(0xffff) as u32);
        for &(field, value) in before_parse {
            phv.set(field, value);
        }
        match self.parser.parse_extent(bytes, phv) {
            Ok(extent) => slot.extent = extent,
            Err(reason) => phv.set(layout::DROP_REASON, reason as u32),
        }
        for &(field, value) in metadata {
            phv.set(field, value);
        }
        self.in_flight.push_back(now);
        self.waiting.push_back(now);
        let start = now + self.start_offset;
        self.next_at = Some(self.next_at.map_or(start, |t| t.min(start)));
    }

    /// Whether a packet run stage by stage has stages to come: until none has, no packet
    /// (of this gress, or of the ghost thread sharing its registers) may run all its stages
    /// at once, for it would pass the stepped one in the stages ahead of it.
    pub fn stepping(&self) -> bool {
        !self.stepped.is_empty()
    }

    /// Does everything the gress does in cycle `now`: runs the tables of every stage that a
    /// packet has reached, and returns the packet leaving the deparser, if any.
    ///
    /// The chip calls this on every visit, and most visits find nothing due: that test is
    /// inlined into the caller, and the work of a due cycle is a call of its own, so a quiet
    /// tick does not pay for the registers the busy path saves.
    #[inline]
    pub fn tick(
        &mut self,
        now: Cycle,
        program: &mut dyn StageProgram,
        pool: &mut PacketPool,
    ) -> Option<Exit> {
        self.tick_batching(now, program, pool, false)
    }

    /// [`GressPipeline::tick`], letting a packet that reaches stage 0 in cycle `now` run
    /// all its stages there and then, when `may_batch` (the chip: nothing outside the
    /// packets will touch the program's state before they would have reached their
    /// stages), the program's stages commute ([`StageProgram::stages_commute`]) and no
    /// packet run stage by stage has stages to come. The packet then costs the kernel one
    /// visit for its stages instead of one per stage, and every stage meets the packets in
    /// the same order as stepping them would (their order of reaching stage 0), so the
    /// results are the same. It still leaves at its exit cycle.
    #[inline]
    pub fn tick_batching(
        &mut self,
        now: Cycle,
        program: &mut dyn StageProgram,
        pool: &mut PacketPool,
        may_batch: bool,
    ) -> Option<Exit> {
        if self.next_at.is_none_or(|t| t > now) {
            return None;
        }
        self.tick_due(now, program, pool, may_batch)
    }

    /// [`GressPipeline::tick`] in a cycle in which some packet reaches a stage with tables
    /// or the exit.
    #[inline(never)]
    fn tick_due(
        &mut self,
        now: Cycle,
        program: &mut dyn StageProgram,
        pool: &mut PacketPool,
        may_batch: bool,
    ) -> Option<Exit> {
        self.run_starts(now, program, may_batch);
        let next_stage = self.run_stages(now, program);
        let exit = self.run_exit(now, pool);
        // The next event: the earliest stage point's, a packet reaching stage 0, or the
        // oldest packet's exit.
        let next_exit = self
            .in_flight
            .front()
            .map_or(Cycle::MAX, |&e| e + self.exit_offset);
        let next_start = self
            .waiting
            .front()
            .map_or(Cycle::MAX, |&e| e + self.start_offset);
        let next = next_stage.min(next_exit).min(next_start);
        self.next_at = (next != Cycle::MAX).then_some(next);
        debug_assert_eq!(self.next_at, self.compute_next_event());
        exit
    }

    /// The packet reaching stage 0 in cycle `now`, if one does: it runs all its stages now
    /// (see [`GressPipeline::tick_batching`]) or joins the packets run stage by stage.
    fn run_starts(&mut self, now: Cycle, program: &mut dyn StageProgram, may_batch: bool) {
        let Some(&entered) = self.waiting.front() else {
            return;
        };
        if entered + self.start_offset != now {
            debug_assert!(entered + self.start_offset > now, "a start was skipped");
            return;
        }
        self.waiting.pop_front();
        if self.stage_points.is_empty() {
            return;
        }
        if may_batch && self.stepped.is_empty() && program.stages_commute() {
            let slot = &self.slots[(entered & self.mask) as usize];
            debug_assert!(slot.live && slot.entered == entered);
            let phv = &mut self.phvs[slot.phv as usize];
            for &(_, stage) in &self.stage_points {
                program.apply(stage, phv);
            }
            return;
        }
        self.stepped.push_back(entered);
        // The stage points that had processed every stepped packet wait for this one.
        let newest = self.stepped.len() - 1;
        for ((due, &passed), &(offset, _)) in self
            .due
            .iter_mut()
            .zip(&self.passed)
            .zip(&self.stage_points)
        {
            if passed == newest {
                *due = entered + offset;
            }
        }
    }

    /// Runs the tables of every stage a stepped packet reaches in cycle `now`; returns the
    /// earliest cycle a stage point is due next (`Cycle::MAX`: none).
    fn run_stages(&mut self, now: Cycle, program: &mut dyn StageProgram) -> Cycle {
        // Whether a packet is at a stage is read from `due` (and `in_flight`, a short queue
        // of entry cycles), not from the slots, whose PHVs span many cache lines.
        if self.stepped.is_empty() {
            // Every stage point waits for a stepped packet: with none (packets running
            // all their stages at once leave none), nothing is due, and the walk over the
            // stage points (20 in BFC's ingress) on each busy cycle is saved.
            debug_assert!(self.due.iter().all(|&d| d == Cycle::MAX));
            debug_assert!(self.passed.iter().all(|&p| p == 0));
            return Cycle::MAX;
        }
        let mut next = Cycle::MAX;
        for i in 0..self.stage_points.len() {
            if self.due[i] == now {
                let (offset, stage) = self.stage_points[i];
                let entered = now - offset;
                debug_assert_eq!(self.stepped.get(self.passed[i]), Some(&entered));
                let slot = &mut self.slots[(entered & self.mask) as usize];
                debug_assert!(slot.live && slot.entered == entered);
                program.apply(stage, &mut self.phvs[slot.phv as usize]);
                self.passed[i] += 1;
                self.due[i] = self
                    .stepped
                    .get(self.passed[i])
                    .map_or(Cycle::MAX, |&e| e + offset);
            }
            next = next.min(self.due[i]);
        }
        // Packets past the last stage point have no stages to come.
        if let Some(&last) = self.passed.last() {
            for _ in 0..last {
                self.stepped.pop_front();
            }
            for p in &mut self.passed {
                *p -= last;
            }
        }
        next
    }

    /// The packet leaving the deparser in cycle `now`, if one does.
    fn run_exit(&mut self, now: Cycle, pool: &mut PacketPool) -> Option<Exit> {
        let exit_offset = self.exit_offset;
        let port_field = match self.gress {
            Gress::Ingress => layout::INGRESS_PORT,
            Gress::Egress => layout::EGRESS_PORT,
        };
        let ingress = self.gress == Gress::Ingress;
        // The slot is borrowed field by field so the parser can be borrowed alongside.
        let entered = *self.in_flight.front()?;
        if entered + exit_offset != now {
            return None;
        }
        let slot = &mut self.slots[(entered & self.mask) as usize];
        debug_assert!(slot.live && slot.entered == entered);
        slot.live = false;
        let phv = &mut self.phvs[slot.phv as usize];
        self.free_phvs.push(slot.phv);
        let drop = DropReason::from_code(phv.get(layout::DROP_REASON) as u8);
        let mirror_session =
            (phv.get(fields::MIRROR_VALID) == 1).then(|| phv.get(fields::MIRROR_SESSION) as u8);
        // A mirror of the packet as it came in is copied before the deparser changes it.
        let asked = ingress && drop.is_none() && phv.get(fields::RESUBMIT) == 1;
        let second_pass = phv.get(fields::RESUBMIT_FLAG) == 1;
        let resubmit = asked && !second_pass;
        let mut mirror_incoming = (!resubmit
            && drop.is_none()
            && mirror_session.is_some()
            && phv.get(fields::MIRROR_IO_SELECT) == 1)
            .then(|| pool.copy_packet(slot.pkt, None));
        if resubmit {
            // The packet as it entered (not deparsed), behind its resubmit header.
            let h = phv.get(fields::RESUBMIT_HEADER) as usize;
            if h != 0 {
                let header = self.parser.header_bytes(h - 1, phv);
                pool.bytes_mut(slot.pkt).splice(0..0, header);
            }
        } else if drop.is_none() {
            for c in &self.checksums {
                c.apply(phv);
            }
            self.parser
                .deparse_to(phv, pool.bytes_mut(slot.pkt), &slot.extent);
        }
        // A mirror header goes in front of the copy's source (the incoming or the outgoing
        // packet), as TNA's `mirror.emit<H>` does.
        let mirror_type = match (drop, mirror_session, resubmit) {
            (None, Some(_), false) => phv.get(fields::MIRROR_TYPE) as u8,
            _ => 0,
        };
        if mirror_type != 0 {
            let mut bytes = self.parser.header_bytes(mirror_type as usize - 1, phv);
            let source = mirror_incoming.unwrap_or(slot.pkt);
            bytes.extend_from_slice(pool.bytes(source));
            if let Some(incoming) = mirror_incoming {
                pool.free(incoming);
            }
            mirror_incoming = Some(pool.alloc_from(&bytes));
        }
        let exit = Exit {
            pkt: slot.pkt,
            port: phv.get(port_field) as u16,
            drop,
            ucast_egress_port: (phv.get(layout::EGRESS_PORT_VALID) == 1)
                .then(|| phv.get(layout::UCAST_EGRESS_PORT) as u16),
            qid: phv.get(layout::QID) as u8,
            ingress_cos: phv.get(fields::INGRESS_COS) as u8,
            adv_flow_ctl: phv.get(fields::DPRSR_ADV_FLOW_CTL),
            mirror_session,
            mirror_incoming,
            recirculate: ingress && phv.get(fields::RECIRCULATE) == 1,
            mirror_type,
            resubmit,
            resubmit_refused: asked && second_pass,
            pktgen: ingress && phv.get(fields::PKTGEN_TRIGGER) == 1,
            bypass_egress: ingress && phv.get(fields::BYPASS_EGRESS) == 1,
            digest: DeparserDigest::packed(&self.digests, phv),
        };
        let oldest = self.in_flight.pop_front();
        debug_assert_eq!(oldest, Some(now - exit_offset));
        // The leaving packet had passed every stage.
        debug_assert!(self.stepped.front().is_none_or(|&e| e > now - exit_offset));
        Some(exit)
    }

    /// The first cycle after `now` at which a packet inside reaches a stage with tables or
    /// the exit; `None` when the pipeline is empty.
    ///
    /// Kept as packets enter and move; working it out anew costs one look-up per stage with
    /// tables (each stage point keeps count of the packets it has processed), however many
    /// packets are inside.
    #[inline]
    pub fn next_event(&self, now: Cycle) -> Option<Cycle> {
        debug_assert_eq!(self.next_at, self.compute_next_event());
        debug_assert!(
            self.next_at.is_none_or(|t| t > now),
            "a stage event was skipped"
        );
        self.next_at
    }

    fn compute_next_event(&self) -> Option<Cycle> {
        debug_assert!(self.due.iter().enumerate().all(|(i, &due)| {
            let offset = self.stage_points[i].0;
            due == self
                .stepped
                .get(self.passed[i])
                .map_or(Cycle::MAX, |&e| e + offset)
        }));
        let exit = self
            .in_flight
            .front()
            .map_or(Cycle::MAX, |&e| e + self.exit_offset);
        let start = self
            .waiting
            .front()
            .map_or(Cycle::MAX, |&e| e + self.start_offset);
        let next = self.due.iter().fold(exit.min(start), |n, &due| n.min(due));
        (next != Cycle::MAX).then_some(next)
    }

    /// [`GressPipeline::compute_next_event`] from `in_flight` alone (what `due` keeps).
    #[cfg(test)]
    fn next_event_from_scratch(&self) -> Option<Cycle> {
        let mut next = self.in_flight.front().map(|&e| e + self.exit_offset);
        if let Some(&e) = self.waiting.front() {
            let t = e + self.start_offset;
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        for (&(offset, _), &passed) in self.stage_points.iter().zip(&self.passed) {
            if let Some(&e) = self.stepped.get(passed) {
                let t = e + offset;
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::layout;
    use crate::wire::headers::{build_udp_frame, parse_frame, Endpoints, MacAddr};
    use std::net::Ipv4Addr;

    /// Records when each stage saw which TTL, and lowers the TTL in stage 3.
    struct Probe {
        seen: Vec<(usize, u32)>,
    }

    impl StageProgram for Probe {
        fn active_stages(&self) -> Vec<usize> {
            vec![0, 3]
        }
        fn apply(&mut self, stage: usize, phv: &mut Phv) {
            self.seen.push((stage, phv.get(layout::IPV4_TTL)));
            if stage == 3 {
                phv.set(layout::IPV4_TTL, phv.get(layout::IPV4_TTL) - 1);
            }
        }
    }

    fn udp(pool: &mut PacketPool, ttl: u8) -> PacketHandle {
        let ep = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            src_port: 1,
            dst_port: 2,
        };
        let h = pool.alloc();
        build_udp_frame(pool.bytes_mut(h), &ep, ttl, 0, &[0; 20], false, 60);
        h
    }

    #[test]
    fn stages_act_at_their_offsets_and_exit_at_latency() {
        let params = PipelineParams::default();
        let mut program = Probe { seen: vec![] };
        let placement = Placement::shortest(20);
        let mut g = GressPipeline::new(
            Gress::Ingress,
            &params,
            &placement,
            &program.active_stages(),
            crate::program::parser_check::builtin_graph(),
        );
        assert_eq!(g.latency(), 64 + 61 + 64);
        let mut pool = PacketPool::new();
        let a = udp(&mut pool, 10);
        let b = udp(&mut pool, 20);
        g.enter(100, a, 8, &pool);
        assert!(!g.can_enter(100));
        g.enter(101, b, 9, &pool);
        let mut exits = vec![];
        let mut visited = vec![];
        let mut now = 100;
        while let Some(t) = g.next_event(now) {
            now = t;
            visited.push(t);
            if let Some(e) = g.tick(now, &mut program, &mut pool) {
                exits.push((now, e.pkt));
            }
        }
        // Stage 0 at parser latency, stage 3 at 64 + 23 + 2 + 2, exit at 189.
        assert_eq!(visited, vec![164, 165, 191, 192, 289, 290]);
        assert_eq!(program.seen, vec![(0, 10), (0, 20), (3, 10), (3, 20)]);
        assert_eq!(exits, vec![(289, a), (290, b)]);
        assert_eq!(parse_frame(pool.bytes(a)).unwrap().ipv4.unwrap().ttl, 9);
        assert_eq!(g.occupancy(), 0);
    }

    #[test]
    fn stepping_every_cycle_matches_jumping() {
        let params = PipelineParams::default();
        let placement = Placement::shortest(20);
        let run = |step: bool| {
            let mut program = Probe { seen: vec![] };
            let mut g = GressPipeline::new(
                Gress::Egress,
                &params,
                &placement,
                &[0, 3],
                crate::program::parser_check::builtin_graph(),
            );
            let mut pool = PacketPool::new();
            let entries = [5u64, 6, 9, 300, 301];
            let mut out = vec![];
            let mut now = 0;
            let mut next_entry = 0;
            loop {
                if next_entry < entries.len() && entries[next_entry] == now {
                    let h = udp(&mut pool, 50);
                    g.enter(now, h, 1, &pool);
                    next_entry += 1;
                }
                if let Some(e) = g.tick(now, &mut program, &mut pool) {
                    out.push((now, e.pkt));
                }
                // What each stage point keeps agrees with the packets inside.
                assert_eq!(g.compute_next_event(), g.next_event_from_scratch());
                let next = if step {
                    Some(now + 1)
                } else {
                    let entry = entries.get(next_entry).copied();
                    match (g.next_event(now), entry) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    }
                };
                match next {
                    Some(t) if t < 1000 => now = t,
                    _ => break,
                }
            }
            (out, program.seen)
        };
        assert_eq!(run(true), run(false));
        assert_eq!(run(false).0.len(), 5);
    }
}
