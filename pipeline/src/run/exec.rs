//! Running a checked program on PHVs: a plain sequential interpreter and a placed,
//! stage-by-stage [`StageProgram`] for the cycle-stepped [`crate::GressPipeline`].
//!
//! Both share the semantics of one table or gateway ([`State::run_unit`]): exact match,
//! ternary match in entry order, the action's VLIW primitives, and the stateful ALU's
//! read-modify-write of one register cell. The interpreter walks the control tree in
//! program order, each table seeing the effects of all before it. The placed program runs,
//! at each stage, the units placement put there, each only if the gateway outcomes it
//! depends on (kept in dark PHV bits) allow; as in hardware, all units of a stage read the
//! PHV as it entered the stage. A table split over stages runs as its parts, each looking
//! up its own share of the entries and standing aside once an earlier part hit.
//! Placement's dependency rules make the two give the same result, which the tests check.

use super::compiled::{Compiled, CompiledUnit, InPlace, TwoPhvs};
use super::hash::field_be_bytes;
pub use super::hash::{crc, SELECTOR_HASH_MASK, SELECTOR_POLYNOMIAL};
pub use super::state::{random_draws, State};
use crate::compile::place::{Placed, Split};
use crate::hw::cells::Cells;
use crate::hw::fields;
use crate::hw::ghost::{GhostPipeline, GhostWord};
use crate::hw::gress::{CellWrite, Gress, GressPipeline, StageProgram};
use crate::hw::layout;
use crate::hw::params::PipelineParams;
use crate::hw::phv::{Container, ContainerSet, Field, Phv};
use crate::program::check::{
    CGateway, CStmt, CTable, Call, Checked, Op, SOperand, Target, Thread, Unit, Value,
};
use crate::program::ir::{sign_extend, Half, HashAlgorithm, MatchKind, SaluOp, SaluOutputValue};
use std::sync::Arc;

fn cell_mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl State {
    fn value(phv: &Phv, v: Value, args: &[u32]) -> u32 {
        match v {
            Value::Field(f) => phv.get(f),
            Value::Const(c) => c,
            Value::Param(i) => args[i],
        }
    }

    /// An operand of a signed ALU operation: a field sign-extended from its width, a
    /// parameter from its width, a constant as 32 bits.
    fn signed_value(phv: &Phv, v: Value, args: &[u32]) -> u32 {
        match v {
            Value::Field(f) => sign_extend(phv.get(f), f.bits),
            other => Self::value(phv, other, args),
        }
    }

    /// Evaluates a gateway on `read` and records its outcome in `write`.
    fn gateway(read: &Phv, write: &mut Phv, g: &CGateway) -> bool {
        let a = read.get(g.field);
        let b = Self::value(read, g.value, &[]);
        let holds = g.cmp.holds(a, b);
        write.set(g.bit, holds as u32);
        holds
    }

    fn lookup<'a>(t: &'a CTable, phv: &Phv) -> &'a Call {
        Self::find(t, phv).unwrap_or(&t.default)
    }

    /// The action the entry `phv` hits in `t` runs, if it hits one: the entry's own, or the
    /// member of its group the selector picks.
    fn find<'a>(t: &'a CTable, phv: &Phv) -> Option<&'a Call> {
        let target = match t.kind {
            MatchKind::Exact => {
                // The key on the stack: a lookup allocates nothing.
                let mut key = [0u32; 8];
                if t.keys.len() <= key.len() {
                    for (k, &f) in key.iter_mut().zip(&t.keys) {
                        *k = phv.get(f);
                    }
                    t.exact.get(&key[..t.keys.len()])
                } else {
                    t.exact
                        .get(&t.keys.iter().map(|&f| phv.get(f)).collect::<Vec<_>>())
                }
            }
            MatchKind::Ternary | MatchKind::Lpm => {
                let hits = |pairs: &[(u32, u32)]| {
                    t.keys
                        .iter()
                        .zip(pairs)
                        .all(|(&f, &(v, m))| phv.get(f) & m == v & m)
                };
                match t.ternary_index.candidates(t, |c| phv.get(t.keys[c])) {
                    Some(ids) => ids
                        .iter()
                        .map(|&i| &t.ternary[i as usize])
                        .find(|(pairs, _)| hits(pairs)),
                    None => t.ternary.iter().find(|(pairs, _)| hits(pairs)),
                }
                .map(|(_, c)| c)
            }
        }?;
        Some(match target {
            Target::Call(c) => c,
            Target::Group(members) => &members[Self::member(t, phv, members.len())],
        })
    }

    /// The member of a group of `n` a packet gets: the selector's fair-mode hash (the low 14
    /// bits of a CRC-16 of its inputs) modulo the group size, so a flow keeps its member.
    fn member(t: &CTable, phv: &Phv, n: usize) -> usize {
        let sel = t
            .selector
            .as_ref()
            .expect("only selector tables have groups (checked)");
        let mut bytes = Vec::new();
        for &f in &sel.inputs {
            field_be_bytes(phv, f, &mut bytes);
        }
        (crc(HashAlgorithm::Crc16, SELECTOR_POLYNOMIAL, &bytes) & SELECTOR_HASH_MASK) as usize % n
    }

    /// Applies table `t`: it matches on and reads `read`, and writes `write`. A stage's
    /// tables all read the PHV as it entered the stage; the interpreter passes a copy of the
    /// PHV as it was before the table.
    pub fn apply_table(&mut self, p: &Checked, t: usize, read: &Phv, write: &mut Phv) {
        let call = Self::lookup(&p.tables[t], read);
        self.run_action(p, t, call, read, write);
    }

    /// Applies one part of a split table: the part's entries only. On a hit it runs the
    /// entry's action and sets the split's hit bit; on a miss the last part runs the
    /// default action. A part does nothing once an earlier part has hit.
    fn apply_part(&mut self, p: &Checked, t: usize, part: &Part, read: &Phv, write: &mut Phv) {
        if read.get(part.hit) == 1 {
            return;
        }
        match Self::find(&part.entries, read) {
            Some(call) => {
                write.set(part.hit, 1);
                self.run_action(p, t, call, read, write);
            }
            None if part.last => self.run_action(p, t, &part.entries.default, read, write),
            None => {}
        }
    }

    /// Runs `call` (an action of table `t` with its arguments).
    fn run_action(&mut self, p: &Checked, t: usize, call: &Call, read: &Phv, write: &mut Phv) {
        let action = &p.actions[call.action];
        let args = &call.args;
        // VLIW: every primitive reads the PHV as it was before the action.
        for op in &action.ops {
            match *op {
                Op::Set { dst, src } => write.set(dst, Self::value(read, src, args)),
                Op::Alu { op, dst, a, b } if op.is_signed() => {
                    let v = op.apply(
                        Self::signed_value(read, a, args),
                        Self::signed_value(read, b, args),
                    );
                    write.set(dst, v);
                }
                Op::Alu { op, dst, a, b } => {
                    let v = op.apply(Self::value(read, a, args), Self::value(read, b, args));
                    write.set(dst, v);
                }
                Op::Hash { dst, hash } => {
                    let h = &p.hashes[hash];
                    let mut bytes = Vec::new();
                    for &f in &h.inputs {
                        field_be_bytes(read, f, &mut bytes);
                    }
                    write.set(dst, crc(h.algorithm, h.polynomial, &bytes));
                }
                Op::SetEgressPort(v) => {
                    write.set(layout::UCAST_EGRESS_PORT, Self::value(read, v, args));
                    write.set(layout::EGRESS_PORT_VALID, 1);
                }
                Op::SetQid(v) => write.set(layout::QID, Self::value(read, v, args)),
                Op::Drop(reason) => write.set(layout::DROP_REASON, reason as u32),
                Op::MarkEcn => {
                    if read.get(layout::IPV4_ECN) != 0 {
                        write.set(layout::IPV4_ECN, 3);
                    }
                }
                Op::Execute {
                    register_action,
                    index,
                } => {
                    let index = Self::value(read, index, args);
                    self.execute(p, register_action, index, read, write);
                }
                Op::Mirror(v) => {
                    write.set(fields::MIRROR_SESSION, Self::value(read, v, args));
                    write.set(fields::MIRROR_VALID, 1);
                }
                Op::Recirculate => write.set(fields::RECIRCULATE, 1),
                Op::Resubmit(header) => {
                    write.set(fields::RESUBMIT, 1);
                    write.set(fields::RESUBMIT_HEADER, header);
                }
                Op::Random { dst } => {
                    let v = self.draw(t);
                    write.set(dst, v);
                }
            }
        }
    }

    fn execute(&mut self, p: &Checked, ra: usize, index: u32, read: &Phv, write: &mut Phv) {
        let ra = &p.register_actions[ra];
        let reg = &p.registers[ra.register];
        let mask = cell_mask(reg.cell_bits);
        let slot = (index % reg.size) as usize;
        let cell = self.registers[ra.register].get(slot);
        // A pair keeps `hi` above `lo` in one stored word.
        let (old, old_hi) = if reg.pair {
            (cell & mask, cell >> reg.cell_bits & mask)
        } else {
            (cell, 0)
        };
        let operand = |o: SOperand| match o {
            SOperand::Cell => old,
            SOperand::CellHi => old_hi,
            SOperand::Field(f) => read.get(f) as u64,
            SOperand::Const(c) => c & mask,
        };
        // A signed array reads every operand as two's complement: a field from its width
        // (at most the cell's), a cell or constant from the cell width.
        let signed = |o: SOperand| -> i64 {
            let (v, bits) = match o {
                SOperand::Field(f) => (operand(o) & mask, (f.bits).min(reg.cell_bits)),
                _ => (operand(o), reg.cell_bits),
            };
            if bits >= 64 {
                v as i64
            } else {
                let shift = 64 - bits as u32;
                ((v << shift) as i64) >> shift
            }
        };
        let conds: Vec<bool> = ra
            .conditions
            .iter()
            .map(|&(a, cmp, b)| match reg.signed {
                true => cmp.holds(signed(a), signed(b)),
                false => cmp.holds(operand(a), operand(b)),
            })
            .collect();
        let half = |h: Half, before: u64| {
            let update = ra
                .updates
                .iter()
                .filter(|u| u.half == h)
                .find(|u| u.when.iter().all(|g| conds[g.condition] == g.holds));
            match update {
                None => before,
                Some(u) => {
                    // Two's complement: the same sums as unsigned ones once extended.
                    let (a, b) = match reg.signed {
                        true => (signed(u.a) as u64, signed(u.b) as u64),
                        false => (operand(u.a), operand(u.b)),
                    };
                    let v = match u.op {
                        SaluOp::Min if reg.signed => signed(u.a).min(signed(u.b)) as u64,
                        SaluOp::Max if reg.signed => signed(u.a).max(signed(u.b)) as u64,
                        SaluOp::Set => a,
                        SaluOp::Add => a.wrapping_add(b),
                        SaluOp::Sub => a.wrapping_sub(b),
                        SaluOp::And => a & b,
                        SaluOp::Or => a | b,
                        SaluOp::Xor => a ^ b,
                        SaluOp::Min => a.min(b),
                        SaluOp::Max => a.max(b),
                    };
                    v & mask
                }
            }
        };
        let new = half(Half::Lo, old);
        let new_hi = half(Half::Hi, old_hi);
        let stored = if reg.pair {
            new_hi << reg.cell_bits | new
        } else {
            new
        };
        self.store(ra.register, slot, stored);
        let predicate = conds
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &c)| acc | ((c as u64) << i));
        for &(dst, what) in &ra.outputs {
            let v = match what {
                SaluOutputValue::Old => old,
                SaluOutputValue::New => new,
                SaluOutputValue::OldHi => old_hi,
                SaluOutputValue::NewHi => new_hi,
                SaluOutputValue::Predicate => predicate,
            };
            write.set(dst, v as u32);
        }
    }

    /// Runs one unit reading `read` and writing `write`; gateways record their outcome in
    /// their PHV bit.
    pub fn run_unit(&mut self, p: &Checked, unit: Unit, read: &Phv, write: &mut Phv) {
        match unit {
            Unit::Table(t) => self.apply_table(p, t, read, write),
            Unit::Gateway(g) => {
                Self::gateway(read, write, &p.gateways[g]);
            }
        }
    }
}

/// Runs a program's controls in program order.
#[derive(Clone, Debug)]
pub struct Interpreter {
    program: Arc<Checked>,
    pub state: State,
}

impl Interpreter {
    pub fn new(program: Arc<Checked>) -> Interpreter {
        let state = State::new(&program);
        Interpreter { program, state }
    }

    /// Parses `bytes` into `phv` with the program's parser, as the gress parser does at
    /// entry; the error is the reason the packet is dropped.
    pub fn parse(&self, bytes: &[u8], phv: &mut Phv) -> Result<(), crate::DropReason> {
        self.program.parser.parse(bytes, phv)
    }

    /// Writes `phv`'s valid headers back into `bytes`, as the gress deparser does at exit
    /// when the program left the parsed headers' validity alone.
    pub fn deparse(&self, phv: &Phv, bytes: &mut [u8]) {
        self.program.parser.deparse(phv, bytes)
    }

    /// [`Interpreter::parse`], returning what the parser found.
    pub fn parse_extent(
        &self,
        bytes: &[u8],
        phv: &mut Phv,
    ) -> Result<crate::hw::parser::Extent, crate::DropReason> {
        self.program.parser.parse_extent(bytes, phv)
    }

    /// The gress deparser at exit, headers made valid or invalid included
    /// ([`crate::hw::parser::Graph::deparse_to`]).
    pub fn deparse_to(&self, phv: &Phv, bytes: &mut Vec<u8>, extent: &crate::hw::parser::Extent) {
        self.program.parser.deparse_to(phv, bytes, extent)
    }

    /// Runs `thread`'s control on `phv`.
    pub fn run(&mut self, thread: Thread, phv: &mut Phv) {
        let p = Arc::clone(&self.program);
        self.block(&p, &p.controls[thread.index()], phv);
    }

    /// Runs the ghost control on a ghost PHV carrying `word`, with the registers ingress
    /// packets use, and returns the PHV. Running updates and packets in the order the chip
    /// runs them in a stage gives the chip's register contents ([`crate::hw::ghost`]).
    pub fn run_ghost(&mut self, word: &GhostWord) -> Phv {
        let mut phv = word.phv(&self.program.phv);
        self.run(Thread::Ghost, &mut phv);
        phv
    }

    fn block(&mut self, p: &Checked, body: &[CStmt], phv: &mut Phv) {
        for s in body {
            match s {
                CStmt::Apply(t) => {
                    let before = phv.clone();
                    self.state.apply_table(p, *t, &before, phv);
                }
                CStmt::If {
                    gateway,
                    then,
                    otherwise,
                } => {
                    let before = phv.clone();
                    if State::gateway(&before, phv, &p.gateways[*gateway]) {
                        self.block(p, then, phv);
                    } else {
                        self.block(p, otherwise, phv);
                    }
                }
            }
        }
    }
}

/// One part of a split table (see [`crate::compile::place::Split`]).
#[derive(Clone, Debug)]
struct Part {
    /// The table with only this part's entries (its default is the table's).
    entries: CTable,
    hit: Field,
    last: bool,
}

/// A unit as one stage runs it: a flat unit, or one part of a split table.
#[derive(Clone, Debug)]
struct StageUnit {
    index: usize,
    part: Option<Arc<Part>>,
    /// The unit's guards as the stage reads them: (gateway outcome bit, outcome it needs,
    /// whether the bit's container is among the stage's writes). Filled in by
    /// [`Stage::plan`].
    guards: Vec<(Field, bool, bool)>,
}

/// What one stage runs: its units in program order, and every container any of them may
/// write, worked out once at placement so that a packet's pass through the stage copies
/// only those (see [`PlacedThread::apply`]).
#[derive(Clone, Debug, Default)]
struct Stage {
    units: Vec<StageUnit>,
    writes: ContainerSet,
    /// `units` compiled (one each, in the same order), which is what runs unless the
    /// thread is told to run the reference.
    compiled: Vec<CompiledUnit>,
    /// Whether no unit reads a bit an earlier unit of the stage may write, so that the
    /// compiled units can run on the packet's PHV itself (see [`PlacedThread::apply`]).
    in_place: bool,
}

impl Stage {
    /// Fills in the stage's write set and its units' guards, and compiles its units, their
    /// action calls going into `compiled`.
    fn plan(
        &mut self,
        p: &Checked,
        flat: &[crate::program::check::FlatUnit],
        compiled: &mut Compiled,
    ) {
        let unit_writes: Vec<Vec<Field>> = self
            .units
            .iter()
            .map(|su| {
                let mut writes = Vec::new();
                match (&su.part, flat[su.index].unit) {
                    (_, Unit::Gateway(g)) => writes.push(p.gateways[g].bit),
                    (Some(part), Unit::Table(_)) => {
                        writes.push(part.hit);
                        table_writes(p, &part.entries, &mut writes);
                    }
                    (None, Unit::Table(t)) => table_writes(p, &p.tables[t], &mut writes),
                }
                writes
            })
            .collect();
        let mut containers: Vec<Container> = Vec::new();
        for &f in unit_writes.iter().flatten() {
            if !containers.contains(&f.container) {
                containers.push(f.container);
            }
        }
        for su in &mut self.units {
            su.guards = flat[su.index]
                .guards
                .iter()
                .map(|&(g, outcome)| {
                    let bit = p.gateways[g].bit;
                    (bit, outcome, containers.contains(&bit.container))
                })
                .collect();
        }
        self.writes = ContainerSet::new(&p.phv, &containers);
        self.compiled = self
            .units
            .iter()
            .map(|su| {
                let guards = su.guards.clone().into_boxed_slice();
                match (&su.part, flat[su.index].unit) {
                    (_, Unit::Gateway(g)) => Compiled::gateway(p, g, guards),
                    (Some(part), Unit::Table(t)) => compiled.table_unit(
                        p,
                        t,
                        Some((&part.entries, part.hit, part.last)),
                        guards,
                    ),
                    (None, Unit::Table(t)) => compiled.table_unit(p, t, None, guards),
                }
            })
            .collect();
        // In place when no unit reads a bit an earlier unit of the stage may write: the units
        // run in program order, and a unit reads all it reads before it writes (a primitive
        // reading what an earlier one of its action writes is refused by the checker), so
        // each read then sees the value the packet entered the stage with. Guards are not
        // reads here: they see the outcomes as they are now either way.
        // A split table's part reads its hit bit first and sets it before its action runs,
        // so its other reads count the bit as written.
        let mut earlier: Vec<Field> = Vec::new();
        let units = self.units.iter().zip(&self.compiled).zip(&unit_writes);
        self.in_place = units.into_iter().all(|((su, cu), writes)| {
            let hit = su.part.as_ref().map(|part| part.hit);
            let hit_clean = hit.is_none_or(|h| !earlier.iter().any(|w| w.overlaps(h)));
            earlier.extend(hit);
            let mut reads = Vec::new();
            cu.reads(compiled, &mut reads);
            let clean = !reads.iter().any(|r| earlier.iter().any(|w| w.overlaps(*r)));
            earlier.extend(writes);
            hit_clean && clean
        });
    }
}

/// Every field table `t` may write: those of each action it can run (its own list, its
/// default and its entries' calls), as [`State::run_action`] writes them.
fn table_writes(p: &Checked, t: &CTable, out: &mut Vec<Field>) {
    let actions = t
        .actions
        .iter()
        .copied()
        .chain([t.default.action])
        .chain(t.entry_calls().map(|c| c.action));
    for a in actions {
        for op in &p.actions[a].ops {
            op_writes(p, op, out);
        }
    }
}

/// The fields primitive `op` writes when [`State::run_action`] runs it (kept beside it:
/// a write missing here is caught by the check in [`PlacedThread::apply`] in debug builds).
fn op_writes(p: &Checked, op: &Op, out: &mut Vec<Field>) {
    match *op {
        Op::Set { dst, .. } | Op::Alu { dst, .. } | Op::Hash { dst, .. } => out.push(dst),
        Op::Random { dst } => out.push(dst),
        Op::SetEgressPort(_) => {
            out.extend([layout::UCAST_EGRESS_PORT, layout::EGRESS_PORT_VALID]);
        }
        Op::SetQid(_) => out.push(layout::QID),
        Op::Drop(_) => out.push(layout::DROP_REASON),
        Op::MarkEcn => out.push(layout::IPV4_ECN),
        Op::Execute {
            register_action, ..
        } => out.extend(
            p.register_actions[register_action]
                .outputs
                .iter()
                .map(|o| o.0),
        ),
        Op::Mirror(_) => out.extend([fields::MIRROR_SESSION, fields::MIRROR_VALID]),
        Op::Recirculate => out.push(fields::RECIRCULATE),
        Op::Resubmit(_) => out.extend([fields::RESUBMIT, fields::RESUBMIT_HEADER]),
    }
}

/// The parts of split table `t`: its exact entries in key order, or its ternary entries in
/// priority order, dealt out by the parts' sizes.
fn parts_of(t: &CTable, split: &Split) -> Vec<Part> {
    let mut exact = t.exact.iter();
    let mut ternary = t.ternary.iter();
    let count = split.parts.len();
    split
        .parts
        .iter()
        .enumerate()
        .map(|(k, &(_, n))| {
            let mut entries = CTable {
                exact: Default::default(),
                ternary: Vec::new(),
                ..t.clone()
            };
            entries.exact = exact
                .by_ref()
                .take(n as usize)
                .map(|(k, c)| (k.clone(), c.clone()))
                .collect();
            entries.ternary = ternary.by_ref().take(n as usize).cloned().collect();
            Part {
                entries,
                hit: split.hit,
                last: k + 1 == count,
            }
        })
        .collect()
}

/// Whether every register array and every table's random generator that `threads`' stages
/// (thread index, its stages) use is used in one stage only.
fn state_in_one_stage(p: &Checked, threads: &[(usize, &Vec<Stage>)]) -> bool {
    // (register array or table, which) -> stage
    let mut owner: std::collections::HashMap<(bool, usize), usize> = Default::default();
    let mut claim = |key, stage| *owner.entry(key).or_insert(stage) == stage;
    for &(k, stages) in threads {
        for (stage, st) in stages.iter().enumerate() {
            for su in &st.units {
                let Unit::Table(t) = p.flat[k][su.index].unit else {
                    continue;
                };
                for &r in &p.tables[t].registers {
                    if !claim((true, r), stage) {
                        return false;
                    }
                }
                let mut draws = false;
                for a in table_calls(p, t) {
                    for op in &p.actions[a].ops {
                        match *op {
                            Op::Random { .. } => draws = true,
                            // The arrays the table's actions execute on, should
                            // `registers` miss one.
                            Op::Execute {
                                register_action, ..
                            } => {
                                let r = p.register_actions[register_action].register;
                                if !claim((true, r), stage) {
                                    return false;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                if draws && !claim((false, t), stage) {
                    return false;
                }
            }
        }
    }
    true
}

/// The actions table `t` can run: those it offers, its default and its entries' (the same
/// set, as the checker makes entries name offered actions; taken together for safety).
fn table_calls(p: &Checked, t: usize) -> impl Iterator<Item = usize> + '_ {
    let table = &p.tables[t];
    table
        .actions
        .iter()
        .copied()
        .chain([table.default.action])
        .chain(table.entry_calls().map(|c| c.action))
}

/// Whether the ghost thread's effect on the registers depends on nothing but the updates it
/// is given: it has units, they draw no random numbers, and every register array they
/// execute on is written by no ingress unit (ingress may read it). Then the ghost thread of
/// every pipe, given the same updates, stores the same words in the same cells.
fn ghost_writes_are_its_own(p: &Checked) -> bool {
    let tables = |thread: Thread| {
        p.flat[thread.index()].iter().filter_map(|u| match u.unit {
            Unit::Table(t) => Some(t),
            Unit::Gateway(_) => None,
        })
    };
    let executes = |t: usize| {
        table_calls(p, t).flat_map(|a| {
            p.actions[a].ops.iter().filter_map(|op| match *op {
                Op::Execute {
                    register_action, ..
                } => Some(register_action),
                _ => None,
            })
        })
    };
    if p.flat[Thread::Ghost.index()].is_empty() {
        return false;
    }
    let mut ghost_arrays = std::collections::HashSet::new();
    for t in tables(Thread::Ghost) {
        let draws = table_calls(p, t).any(|a| {
            p.actions[a]
                .ops
                .iter()
                .any(|op| matches!(op, Op::Random { .. }))
        });
        if draws {
            return false;
        }
        ghost_arrays.extend(p.tables[t].registers.iter().copied());
        ghost_arrays.extend(executes(t).map(|ra| p.register_actions[ra].register));
    }
    tables(Thread::Ingress).all(|t| {
        executes(t).all(|ra| {
            let ra = &p.register_actions[ra];
            !ghost_arrays.contains(&ra.register) || ra.updates.is_empty()
        })
    })
}

/// One thread of a placed program, run stage by stage by a [`crate::GressPipeline`].
#[derive(Clone, Debug)]
pub struct PlacedThread {
    program: Arc<Checked>,
    /// Per stage: the units placed there, in program order, and what they may write.
    /// Shared by the threads made with [`PlacedThread::sibling`].
    stages: Arc<Vec<Stage>>,
    thread: Thread,
    /// Ingress only: per stage, the ghost thread's flat units placed there. The ghost thread
    /// runs with the ingress one because they share the register arrays.
    ghost: Arc<Vec<Stage>>,
    /// The action calls and register actions `stages` were compiled into.
    compiled: Arc<Compiled>,
    /// Those of `ghost`.
    ghost_compiled: Arc<Compiled>,
    /// Run the stages through the reference interpreter instead of their compiled form.
    reference: bool,
    /// Every register array and random generator the stages (ghost ones included) use
    /// belongs to one stage ([`StageProgram::stages_commute`]).
    commute: bool,
    /// Ingress only: [`StageProgram::ghost_writes_are_its_own`].
    ghost_own: bool,
    pub state: State,
    /// The stage's units write here while they read the PHV as it entered the stage (see
    /// [`PlacedThread::apply`]); reused, so running allocates nothing.
    written: Option<Phv>,
}

impl PlacedThread {
    /// The stages with units that run on the packet's PHV itself, no unit of theirs reading
    /// a bit an earlier unit of the stage may write (the rest run on a scratch copy; see
    /// `apply`).
    pub fn in_place_stages(&self) -> Vec<usize> {
        (0..self.stages.len())
            .filter(|&s| self.stages[s].in_place && !self.stages[s].units.is_empty())
            .collect()
    }
    /// The `thread` part of a placed program. `placed` must be a full placement of
    /// `program` (see [`Placed::fits`]); units it left out do not run.
    pub fn new(program: Arc<Checked>, placed: &Placed, thread: Thread) -> PlacedThread {
        let k = thread.index();
        let n = placed.stage_usage.len();
        let mut stages: Vec<Stage> = vec![Stage::default(); n];
        for (i, s) in placed.stage_of[k].iter().enumerate() {
            let Some(s) = *s else { continue };
            match (placed.split_of(thread, i), program.flat[k][i].unit) {
                (Some(split), Unit::Table(t)) => {
                    let parts = parts_of(&program.tables[t], split);
                    for (&(stage, _), part) in split.parts.iter().zip(parts) {
                        stages[stage].units.push(StageUnit {
                            index: i,
                            part: Some(Arc::new(part)),
                            guards: Vec::new(),
                        });
                    }
                }
                _ => stages[s].units.push(StageUnit {
                    index: i,
                    part: None,
                    guards: Vec::new(),
                }),
            }
        }
        // Program order within each stage, whatever order the parts were added in.
        let mut compiled = Compiled::default();
        for stage in &mut stages {
            stage.units.sort_by_key(|u| u.index);
            stage.plan(&program, &program.flat[k], &mut compiled);
        }
        // Ingress also runs the ghost thread's units, laid out as a ghost thread's own (the
        // throw-away thread's state is built once, with the chip).
        let (ghost, ghost_compiled) = match thread {
            Thread::Ingress => {
                let g = PlacedThread::new(Arc::clone(&program), placed, Thread::Ghost);
                (g.stages, g.compiled)
            }
            _ => (Arc::new(Vec::new()), Arc::default()),
        };
        let state = State::new(&program);
        let commute =
            state_in_one_stage(&program, &[(k, &stages), (Thread::Ghost.index(), &ghost)]);
        let ghost_own = thread == Thread::Ingress && ghost_writes_are_its_own(&program);
        PlacedThread {
            program,
            stages: Arc::new(stages),
            thread,
            ghost,
            compiled: Arc::new(compiled),
            ghost_compiled,
            reference: false,
            commute,
            ghost_own,
            state,
            written: None,
        }
    }
}

impl PlacedThread {
    /// The same thread for another pipe: the same program and compiled stages (shared, so
    /// a chip's pipes keep one copy of them in cache), with registers of its own, zero, and
    /// random generators seeded with 0, as [`PlacedThread::new`] makes them.
    pub fn sibling(&self) -> PlacedThread {
        PlacedThread {
            program: Arc::clone(&self.program),
            stages: Arc::clone(&self.stages),
            thread: self.thread,
            ghost: Arc::clone(&self.ghost),
            compiled: Arc::clone(&self.compiled),
            ghost_compiled: Arc::clone(&self.ghost_compiled),
            reference: self.reference,
            commute: self.commute,
            ghost_own: self.ghost_own,
            state: State::new(&self.program),
            written: None,
        }
    }

    /// A gress pipeline timed by `placed` with this thread's stages active: what a chip
    /// needs, with `self` as its `StageProgram`. Ghost is timed with ingress.
    pub fn pipeline(&self, placed: &Placed, params: &PipelineParams) -> GressPipeline {
        let (gress, timing) = match self.thread {
            Thread::Egress => (Gress::Egress, &placed.egress_timing),
            Thread::Ingress | Thread::Ghost => (Gress::Ingress, &placed.ingress_timing),
        };
        let digests = self
            .program
            .digests
            .iter()
            .map(|d| crate::hw::gress::DeparserDigest {
                digest_type: d.digest_type,
                fields: d.fields.iter().map(|(_, pieces)| pieces.clone()).collect(),
            })
            .collect();
        GressPipeline::new(
            gress,
            params,
            timing,
            &self.active_stages(),
            Arc::clone(match gress {
                Gress::Ingress => &self.program.parser,
                _ => &self.program.egress_parser,
            }),
        )
        .with_digests(digests)
        .with_checksums(self.program.checksum_updates[(gress != Gress::Ingress) as usize].clone())
    }

    /// The ghost thread of an ingress thread timed by `placed`, if the program has ghost
    /// units: what a chip runs beside [`PlacedThread::pipeline`], with `self` as its
    /// `StageProgram`.
    pub fn ghost_pipeline(
        &self,
        placed: &Placed,
        params: &PipelineParams,
    ) -> Option<GhostPipeline> {
        GhostPipeline::new(params, &placed.ingress_timing, &self.ghost_stages())
    }
}

impl PlacedThread {
    /// The checked program this thread runs.
    pub fn program(&self) -> &Arc<Checked> {
        &self.program
    }

    /// Runs `program` from now on: the program this thread runs with other table entries
    /// (the control plane's), laid out by the same placement `placed`. Registers and random
    /// generators carry on.
    pub fn reprogram(&mut self, program: Arc<Checked>, placed: &Placed) {
        let mut next = PlacedThread::new(program, placed, self.thread);
        std::mem::swap(&mut next.state, &mut self.state);
        next.reference = self.reference;
        *self = next;
    }

    /// Runs the stages through the reference interpreter ([`State::run_unit`] on the
    /// program's tables) instead of the form compiled at placement (`super::compiled`):
    /// slower, and the same packets, registers and random draws, which the tests check.
    pub fn run_reference(&mut self, reference: bool) {
        self.reference = reference;
    }
}

impl StageProgram for PlacedThread {
    fn active_stages(&self) -> Vec<usize> {
        (0..self.stages.len())
            .filter(|&s| !self.stages[s].units.is_empty())
            .collect()
    }

    fn apply(&mut self, stage: usize, phv: &mut Phv) {
        // Borrow the fields apart: the program is read while the state and scratch change.
        let PlacedThread {
            program: p,
            stages,
            thread,
            state,
            written,
            compiled,
            reference,
            ghost: _,
            ghost_compiled: _,
            commute: _,
            ghost_own: _,
        } = self;
        let Stage {
            units,
            writes,
            compiled: compiled_units,
            in_place,
        } = &stages[stage];
        // A stage none of whose units reads what an earlier one may write runs on the PHV
        // itself: each read still sees the value the packet entered with, with no copies.
        // Guards then read the outcomes as they are now, as below.
        if *in_place && !*reference {
            // Debug builds check here too that nothing outside the write set changed, which
            // the in-place decision relies on as much as the copies below do.
            #[cfg(debug_assertions)]
            let entered = phv.clone();
            for cu in compiled_units {
                if cu
                    .guards
                    .iter()
                    .all(|&(bit, outcome, _)| (phv.get(bit) == 1) == outcome)
                {
                    compiled.run(cu, state, &mut InPlace(phv));
                }
            }
            #[cfg(debug_assertions)]
            {
                let mut allowed = entered;
                allowed.copy_set(phv, writes);
                debug_assert!(
                    allowed == *phv,
                    "stage {stage} wrote a container outside the write set {writes:?}"
                );
            }
            return;
        }
        // Every unit of the stage reads the PHV as it entered the stage, so they read `phv`,
        // which does not change during the stage, and write `written`. That scratch PHV
        // needs the current value of only the containers the stage may write (a write of
        // part of a container keeps the rest); they go back to `phv` at the end. This
        // copies a few containers instead of the whole PHV per stage.
        let written = written.get_or_insert_with(|| phv.clone());
        written.copy_set(phv, writes);
        // Debug builds copy everything, so that the check below sees any write outside
        // the write set.
        #[cfg(debug_assertions)]
        written.copy_from(phv);
        // Gateway outcomes are the exception: a gateway predicates the tables of its own
        // stage, so guards read the outcomes as they are now (in `written` if the stage may
        // write the bit's container, else as they entered).
        let enabled = |guards: &[(Field, bool, bool)], written: &Phv| {
            guards.iter().all(|&(bit, outcome, here)| {
                let now = if here { written } else { &*phv };
                (now.get(bit) == 1) == outcome
            })
        };
        if *reference {
            let flat = &p.flat[thread.index()];
            for su in units {
                if !enabled(&su.guards, written) {
                    continue;
                }
                let u = &flat[su.index];
                match (&su.part, u.unit) {
                    (Some(part), Unit::Table(t)) => state.apply_part(p, t, part, phv, written),
                    _ => state.run_unit(p, u.unit, phv, written),
                }
            }
        } else {
            for cu in compiled_units {
                if enabled(&cu.guards, written) {
                    compiled.run(
                        cu,
                        state,
                        &mut TwoPhvs {
                            read: phv,
                            write: written,
                        },
                    );
                }
            }
        }
        phv.copy_set(written, writes);
        debug_assert!(
            *written == *phv,
            "stage {stage} wrote a container outside the write set {writes:?}"
        );
    }

    fn stages_commute(&self) -> bool {
        self.commute
    }

    fn ghost_stages(&self) -> Vec<usize> {
        (0..self.ghost.len())
            .filter(|&s| !self.ghost[s].units.is_empty())
            .collect()
    }

    fn registers(&self) -> Option<&[Cells]> {
        Some(&self.state.registers)
    }

    fn register_names(&self) -> Vec<String> {
        self.program
            .registers
            .iter()
            .map(|r| r.name.clone())
            .collect()
    }

    fn register_shape(&self, r: usize) -> (u32, u32) {
        let reg = &self.program.registers[r];
        (reg.stored_bits(), reg.size)
    }

    fn write_register(&mut self, r: usize, index: u32, value: u64) {
        self.state.registers[r].set(index as usize, value);
    }

    fn ghost_writes_are_its_own(&self) -> bool {
        self.ghost_own
    }

    fn ghost_uses(&self, name: &str) -> bool {
        let p = &self.program;
        p.flat[Thread::Ghost.index()].iter().any(|u| match u.unit {
            Unit::Gateway(_) => false,
            Unit::Table(t) => {
                let arrays = table_calls(p, t).flat_map(|a| {
                    p.actions[a].ops.iter().filter_map(|op| match *op {
                        Op::Execute {
                            register_action, ..
                        } => Some(p.register_actions[register_action].register),
                        _ => None,
                    })
                });
                p.tables[t].name == name
                    || p.tables[t]
                        .registers
                        .iter()
                        .copied()
                        .chain(arrays)
                        .any(|r| p.registers[r].name == name)
            }
        })
    }

    fn log_register_writes(&mut self, on: bool) {
        self.state.logging = on;
        self.state.writes.clear();
    }

    fn take_register_writes(&mut self, out: &mut Vec<CellWrite>) {
        out.append(&mut self.state.writes);
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn apply_ghost(&mut self, stage: usize, phv: &mut Phv) {
        // The ghost units run exactly as the thread's own do, on the same registers: swap
        // them in for the stage (swapping the vectors moves no units).
        std::mem::swap(&mut self.stages, &mut self.ghost);
        std::mem::swap(&mut self.compiled, &mut self.ghost_compiled);
        let thread = std::mem::replace(&mut self.thread, Thread::Ghost);
        self.apply(stage, phv);
        self.thread = thread;
        std::mem::swap(&mut self.compiled, &mut self.ghost_compiled);
        std::mem::swap(&mut self.stages, &mut self.ghost);
    }
}
