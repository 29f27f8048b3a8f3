//! Placed programs compiled once, at placement, into a flat form a stage runs without
//! looking anything up: every action call of every entry becomes a list of micro-ops with
//! its arguments folded in as constants, register actions carry their array's shape and
//! their condition guards as bit masks, exact tables find their entries by a packed 64-bit
//! key in a hash map, gateways are a comparison and a bit. A packet's pass through a stage
//! then touches the stage's own units and the cells it updates, not the program's tables of
//! actions, register actions and registers scattered over the heap.
//!
//! The semantics are those of the reference interpreter in [`super::exec`] (`State`), op by
//! op; `PlacedThread` keeps the reference path, and the tests check that the two give the
//! same packets, registers and random draws on every shipped scheme and on generated
//! programs. Ternary and LPM tables find their entry through the reference's own index
//! (`CTable::ternary_index`), exact keys wider than 64 bits by their values in an ordered
//! map; both then run the entry's compiled call.

use super::hash::{crc_table, field_be_bytes, CrcTable, SELECTOR_HASH_MASK, SELECTOR_POLYNOMIAL};
use super::state::State;
use crate::hw::fields;
use crate::hw::layout;
use crate::hw::phv::{Field, Phv};
use crate::program::check::{CTable, Call, Checked, Op, SOperand, Target, Value};
use crate::program::ir::{sign_extend, AluOp, Cmp, Half, MatchKind, SaluOp, SaluOutputValue};
use std::collections::HashMap;
use std::sync::Arc;

/// An operand with any action parameter folded in.
#[derive(Clone, Copy, Debug)]
enum Src {
    Field(Field),
    Const(u32),
}

impl Src {
    fn new(v: Value, args: &[u32]) -> Src {
        match v {
            Value::Field(f) => Src::Field(f),
            Value::Const(c) => Src::Const(c),
            Value::Param(i) => Src::Const(args[i]),
        }
    }

    #[inline(always)]
    fn get(self, phv: &Phv) -> u32 {
        match self {
            Src::Field(f) => phv.get(f),
            Src::Const(c) => c,
        }
    }

    /// The field it reads, if it is one.
    fn field(self) -> Option<Field> {
        match self {
            Src::Field(f) => Some(f),
            Src::Const(_) => None,
        }
    }

    /// As `State::signed_value`: a field sign-extended from its width, a constant (or a
    /// parameter) as 32 bits.
    #[inline(always)]
    fn get_signed(self, phv: &Phv) -> u32 {
        match self {
            Src::Field(f) => sign_extend(phv.get(f), f.bits),
            Src::Const(c) => c,
        }
    }
}

/// The PHVs a stage's units run on: every unit reads the PHV as it entered the stage and
/// writes the stage's result. That takes two PHVs in general ([`TwoPhvs`]), and one
/// ([`InPlace`]) when no unit of the stage reads a bit an earlier unit of it may write,
/// since then what the units read is still what entered (`PlacedThread::apply`).
pub(crate) trait StagePhv {
    /// The PHV as it entered the stage.
    fn input(&self) -> &Phv;
    /// Writes a field of the stage's result.
    fn set(&mut self, f: Field, v: u32);
}

/// The stage's input and a scratch PHV for its writes.
pub(crate) struct TwoPhvs<'a> {
    pub read: &'a Phv,
    pub write: &'a mut Phv,
}

impl StagePhv for TwoPhvs<'_> {
    #[inline(always)]
    fn input(&self) -> &Phv {
        self.read
    }
    #[inline(always)]
    fn set(&mut self, f: Field, v: u32) {
        self.write.set(f, v)
    }
}

/// One PHV, read and written in place.
pub(crate) struct InPlace<'a>(pub &'a mut Phv);

impl StagePhv for InPlace<'_> {
    #[inline(always)]
    fn input(&self) -> &Phv {
        self.0
    }
    #[inline(always)]
    fn set(&mut self, f: Field, v: u32) {
        self.0.set(f, v)
    }
}

/// A primitive of one action call.
#[derive(Clone, Debug)]
enum MicroOp {
    Set {
        dst: Field,
        src: Src,
    },
    Alu {
        op: AluOp,
        dst: Field,
        a: Src,
        b: Src,
    },
    SignedAlu {
        op: AluOp,
        dst: Field,
        a: Src,
        b: Src,
    },
    Hash {
        dst: Field,
        inputs: Box<[Field]>,
        table: Arc<CrcTable>,
    },
    SetEgressPort(Src),
    SetQid(Src),
    Drop(u32),
    MarkEcn,
    Execute {
        register_action: u32,
        index: Src,
    },
    Mirror(Src),
    Recirculate,
    Resubmit(u32),
    Random {
        dst: Field,
        table: u32,
    },
}

/// A register action with its array's shape beside it.
#[derive(Clone, Debug)]
struct RegisterOp {
    register: usize,
    size: u32,
    cell_bits: u8,
    mask: u64,
    pair: bool,
    signed: bool,
    conditions: Box<[(SOperand, Cmp, SOperand)]>,
    /// Per half (lo, hi): the updates in order, each with the condition bits it looks at
    /// and the values they must have. An update whose guards contradict each other never
    /// runs and is left out.
    updates: [Box<[Update]>; 2],
    outputs: Box<[(Field, SaluOutputValue)]>,
}

#[derive(Clone, Debug)]
struct Update {
    care: u8,
    want: u8,
    op: SaluOp,
    a: SOperand,
    b: SOperand,
}

impl RegisterOp {
    fn new(p: &Checked, ra: usize) -> RegisterOp {
        let ra = &p.register_actions[ra];
        let reg = &p.registers[ra.register];
        let half = |h: Half| -> Box<[Update]> {
            ra.updates
                .iter()
                .filter(|u| u.half == h)
                .filter_map(|u| {
                    let (mut care, mut want) = (0u8, 0u8);
                    for g in &u.when {
                        let bit = 1u8 << g.condition;
                        let value = if g.holds { bit } else { 0 };
                        if care & bit != 0 && want & bit != value {
                            return None;
                        }
                        care |= bit;
                        want |= value;
                    }
                    Some(Update {
                        care,
                        want,
                        op: u.op,
                        a: u.a,
                        b: u.b,
                    })
                })
                .collect()
        };
        RegisterOp {
            register: ra.register,
            size: reg.size,
            cell_bits: reg.cell_bits,
            mask: cell_mask(reg.cell_bits),
            pair: reg.pair,
            signed: reg.signed,
            conditions: ra.conditions.clone().into_boxed_slice(),
            updates: [half(Half::Lo), half(Half::Hi)],
            outputs: ra.outputs.clone().into_boxed_slice(),
        }
    }

    /// As `State::execute`.
    #[inline]
    fn run(&self, state: &mut State, index: u32, io: &mut impl StagePhv) {
        let mask = self.mask;
        // The same slot as `index % size`, without a division for the usual power-of-two size.
        let slot = if self.size.is_power_of_two() {
            index & (self.size - 1)
        } else {
            index % self.size
        } as usize;
        let cell = state.registers[self.register].get(slot);
        let (old, old_hi) = if self.pair {
            (cell & mask, cell >> self.cell_bits & mask)
        } else {
            (cell, 0)
        };
        let operand = |o: SOperand| match o {
            SOperand::Cell => old,
            SOperand::CellHi => old_hi,
            SOperand::Field(f) => io.input().get(f) as u64,
            SOperand::Const(c) => c & mask,
        };
        let cell_bits = self.cell_bits;
        let signed = |o: SOperand| -> i64 {
            let (v, bits) = match o {
                SOperand::Field(f) => (operand(o) & mask, f.bits.min(cell_bits)),
                _ => (operand(o), cell_bits),
            };
            if bits >= 64 {
                v as i64
            } else {
                let shift = 64 - bits as u32;
                ((v << shift) as i64) >> shift
            }
        };
        let mut conds = 0u8;
        for (i, &(a, cmp, b)) in self.conditions.iter().enumerate() {
            let holds = match self.signed {
                true => cmp.holds(signed(a), signed(b)),
                false => cmp.holds(operand(a), operand(b)),
            };
            conds |= (holds as u8) << i;
        }
        let half = |updates: &[Update], before: u64| match updates
            .iter()
            .find(|u| conds & u.care == u.want)
        {
            None => before,
            Some(u) => {
                let (a, b) = match self.signed {
                    true => (signed(u.a) as u64, signed(u.b) as u64),
                    false => (operand(u.a), operand(u.b)),
                };
                let v = match u.op {
                    SaluOp::Min if self.signed => signed(u.a).min(signed(u.b)) as u64,
                    SaluOp::Max if self.signed => signed(u.a).max(signed(u.b)) as u64,
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
        };
        let new = half(&self.updates[0], old);
        let new_hi = half(&self.updates[1], old_hi);
        let stored = if self.pair {
            new_hi << self.cell_bits | new
        } else {
            new
        };
        state.store(self.register, slot, stored);
        for &(dst, what) in self.outputs.iter() {
            let v = match what {
                SaluOutputValue::Old => old,
                SaluOutputValue::New => new,
                SaluOutputValue::OldHi => old_hi,
                SaluOutputValue::NewHi => new_hi,
                SaluOutputValue::Predicate => conds as u64,
            };
            io.set(dst, v as u32);
        }
    }
}

fn cell_mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Index of a compiled action call in [`Compiler::actions`].
type ActionId = u32;

/// What an entry runs: a call, or a selector group's members.
#[derive(Clone, Debug)]
enum CompiledTarget {
    Call(ActionId),
    Group(Box<[ActionId]>),
}

/// How a table finds the entry a packet hits.
#[derive(Clone, Debug)]
enum Lookup {
    /// No entries: every packet misses.
    Empty,
    /// Exact keys of at most 64 bits in all, packed (first key highest) into one word.
    Packed {
        keys: Box<[Field]>,
        entries: HashMap<u64, CompiledTarget, PackedKeyHash>,
    },
    /// Exact keys wider than 64 bits: by the key's values.
    Wide {
        keys: Box<[Field]>,
        entries: std::collections::BTreeMap<Vec<u32>, CompiledTarget>,
    },
    /// Ternary and LPM: the entries in priority order, tried through the reference's index
    /// (`CTable::ternary_index`) of the table they came from.
    Ternary {
        table: Box<CTable>,
        targets: Box<[CompiledTarget]>,
    },
}

/// Hashes a packed key with one multiplication: the keys are the program's own entries, not
/// chosen by an adversary, so the lookup a packet pays for needs no keyed hash (SipHash,
/// the map's default, costs several times more per probe).
#[derive(Clone, Copy, Debug, Default)]
struct PackedKeyHasher(u64);

impl std::hash::Hasher for PackedKeyHasher {
    fn finish(&self) -> u64 {
        // The high bits of the product mix every key bit; fold them into the low ones,
        // which pick the bucket.
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }
}

type PackedKeyHash = std::hash::BuildHasherDefault<PackedKeyHasher>;

/// A table (or one part of a split table) compiled.
#[derive(Clone, Debug)]
struct CompiledTable {
    lookup: Lookup,
    default: ActionId,
    selector: Option<(Box<[Field]>, Arc<CrcTable>)>,
    /// A split table's part: its hit bit and whether it is the last part.
    part: Option<(Field, bool)>,
}

#[derive(Clone, Debug)]
enum UnitKind {
    Gateway {
        field: Field,
        cmp: Cmp,
        value: Src,
        bit: Field,
    },
    Table(CompiledTable),
}

/// A unit of a stage compiled, with its guards as `PlacedThread::apply` reads them.
#[derive(Clone, Debug)]
pub(crate) struct CompiledUnit {
    /// (gateway outcome bit, outcome it needs, whether the bit's container is among the
    /// stage's writes).
    pub guards: Box<[(Field, bool, bool)]>,
    kind: UnitKind,
}

/// The action calls of one thread's program, compiled, shared by its stages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compiled {
    actions: Vec<Box<[MicroOp]>>,
    /// Dedups calls: (table, action, args) -> id; the table matters for `random`.
    ids: HashMap<(usize, usize, Vec<u32>), ActionId>,
    registers: Vec<RegisterOp>,
    register_ids: HashMap<usize, u32>,
}

impl Compiled {
    fn action(&mut self, p: &Checked, table: usize, call: &Call) -> ActionId {
        let key = (table, call.action, call.args.clone());
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let args = &call.args;
        let ops = p.actions[call.action]
            .ops
            .iter()
            .map(|op| match *op {
                Op::Set { dst, src } => MicroOp::Set {
                    dst,
                    src: Src::new(src, args),
                },
                Op::Alu { op, dst, a, b } if op.is_signed() => MicroOp::SignedAlu {
                    op,
                    dst,
                    a: Src::new(a, args),
                    b: Src::new(b, args),
                },
                Op::Alu { op, dst, a, b } => MicroOp::Alu {
                    op,
                    dst,
                    a: Src::new(a, args),
                    b: Src::new(b, args),
                },
                Op::Hash { dst, hash } => {
                    let h = &p.hashes[hash];
                    MicroOp::Hash {
                        dst,
                        inputs: h.inputs.clone().into_boxed_slice(),
                        table: crc_table(h.algorithm, h.polynomial),
                    }
                }
                Op::SetEgressPort(v) => MicroOp::SetEgressPort(Src::new(v, args)),
                Op::SetQid(v) => MicroOp::SetQid(Src::new(v, args)),
                Op::Drop(reason) => MicroOp::Drop(reason as u32),
                Op::MarkEcn => MicroOp::MarkEcn,
                Op::Execute {
                    register_action,
                    index,
                } => {
                    let next = self.registers.len() as u32;
                    let id = *self.register_ids.entry(register_action).or_insert(next);
                    if id == next {
                        self.registers.push(RegisterOp::new(p, register_action));
                    }
                    MicroOp::Execute {
                        register_action: id,
                        index: Src::new(index, args),
                    }
                }
                Op::Mirror(v) => MicroOp::Mirror(Src::new(v, args)),
                Op::Recirculate => MicroOp::Recirculate,
                Op::Resubmit(h) => MicroOp::Resubmit(h),
                Op::Random { dst } => MicroOp::Random {
                    dst,
                    table: table as u32,
                },
            })
            .collect();
        let id = self.actions.len() as ActionId;
        self.actions.push(ops);
        self.ids.insert(key, id);
        id
    }

    fn target(&mut self, p: &Checked, table: usize, target: &Target) -> CompiledTarget {
        match target {
            Target::Call(c) => CompiledTarget::Call(self.action(p, table, c)),
            Target::Group(members) => {
                CompiledTarget::Group(members.iter().map(|c| self.action(p, table, c)).collect())
            }
        }
    }

    /// Compiles table `t` of `p` (or a part of it, `entries` holding the part's entries).
    fn table(
        &mut self,
        p: &Checked,
        t: usize,
        entries: &CTable,
        part: Option<(Field, bool)>,
    ) -> CompiledTable {
        let key_bits: u32 = entries.keys.iter().map(|f| f.bits as u32).sum();
        let empty = entries.exact.is_empty() && entries.ternary.is_empty();
        let lookup = if empty {
            Lookup::Empty
        } else if entries.kind == MatchKind::Exact && key_bits <= 64 {
            let mut packed = HashMap::default();
            for (key, target) in &entries.exact {
                // A value with bits beyond its field matches no packet.
                if let Some(word) = pack_values(&entries.keys, key) {
                    let target = self.target(p, t, target);
                    packed.insert(word, target);
                }
            }
            Lookup::Packed {
                keys: entries.keys.clone().into_boxed_slice(),
                entries: packed,
            }
        } else if entries.kind == MatchKind::Exact {
            let mut wide = std::collections::BTreeMap::new();
            for (key, target) in &entries.exact {
                let target = self.target(p, t, target);
                wide.insert(key.clone(), target);
            }
            Lookup::Wide {
                keys: entries.keys.clone().into_boxed_slice(),
                entries: wide,
            }
        } else {
            let targets = entries
                .ternary
                .iter()
                .map(|(_, target)| self.target(p, t, target))
                .collect();
            Lookup::Ternary {
                table: Box::new(entries.clone()),
                targets,
            }
        };
        CompiledTable {
            lookup,
            default: self.action(p, t, &entries.default),
            selector: entries.selector.as_ref().map(|s| {
                (
                    s.inputs.clone().into_boxed_slice(),
                    crc_table(
                        crate::program::ir::HashAlgorithm::Crc16,
                        SELECTOR_POLYNOMIAL,
                    ),
                )
            }),
            part,
        }
    }

    /// Compiles a gateway.
    pub(crate) fn gateway(
        p: &Checked,
        g: usize,
        guards: Box<[(Field, bool, bool)]>,
    ) -> CompiledUnit {
        let g = &p.gateways[g];
        CompiledUnit {
            guards,
            kind: UnitKind::Gateway {
                field: g.field,
                cmp: g.cmp,
                value: Src::new(g.value, &[]),
                bit: g.bit,
            },
        }
    }

    /// Compiles a table unit: the whole table `t`, or a part of a split one.
    pub(crate) fn table_unit(
        &mut self,
        p: &Checked,
        t: usize,
        part: Option<(&CTable, Field, bool)>,
        guards: Box<[(Field, bool, bool)]>,
    ) -> CompiledUnit {
        let table = match part {
            Some((entries, hit, last)) => self.table(p, t, entries, Some((hit, last))),
            None => self.table(p, t, &p.tables[t], None),
        };
        CompiledUnit {
            guards,
            kind: UnitKind::Table(table),
        }
    }
}

impl CompiledUnit {
    /// Every PHV field the unit may read when it runs, its guards and a split table part's
    /// hit bit aside (`PlacedThread::apply` and `Stage::plan` see to those): a gateway's
    /// operands; a table's keys, selector inputs and every operand of every action call it
    /// can run.
    pub(crate) fn reads(&self, compiled: &Compiled, out: &mut Vec<Field>) {
        let t = match &self.kind {
            UnitKind::Gateway { field, value, .. } => {
                out.push(*field);
                out.extend(value.field());
                return;
            }
            UnitKind::Table(t) => t,
        };
        let mut calls = vec![t.default];
        let mut add = |target: &CompiledTarget| match target {
            CompiledTarget::Call(id) => calls.push(*id),
            CompiledTarget::Group(ids) => calls.extend(ids.iter()),
        };
        match &t.lookup {
            Lookup::Empty => {}
            Lookup::Packed { keys, entries } => {
                out.extend(keys.iter());
                entries.values().for_each(&mut add);
            }
            Lookup::Wide { keys, entries } => {
                out.extend(keys.iter());
                entries.values().for_each(&mut add);
            }
            Lookup::Ternary { table, targets } => {
                out.extend(table.keys.iter());
                targets.iter().for_each(&mut add);
            }
        }
        out.extend(t.selector.iter().flat_map(|(inputs, _)| inputs.iter()));
        calls.sort_unstable();
        calls.dedup();
        for id in calls {
            compiled.action_reads(id, out);
        }
    }
}

impl Compiled {
    /// The fields action call `id` reads, as [`Compiled::run_action`] reads them.
    fn action_reads(&self, id: ActionId, out: &mut Vec<Field>) {
        let operand = |o: &SOperand| match *o {
            SOperand::Field(f) => Some(f),
            _ => None,
        };
        for op in self.actions[id as usize].iter() {
            match op {
                MicroOp::Set { src, .. } => out.extend(src.field()),
                MicroOp::Alu { a, b, .. } | MicroOp::SignedAlu { a, b, .. } => {
                    out.extend(a.field().into_iter().chain(b.field()))
                }
                MicroOp::Hash { inputs, .. } => out.extend(inputs.iter()),
                MicroOp::SetEgressPort(v) | MicroOp::SetQid(v) | MicroOp::Mirror(v) => {
                    out.extend(v.field())
                }
                MicroOp::MarkEcn => out.push(layout::IPV4_ECN),
                MicroOp::Execute {
                    register_action,
                    index,
                } => {
                    out.extend(index.field());
                    let r = &self.registers[*register_action as usize];
                    for (a, _, b) in r.conditions.iter() {
                        out.extend(operand(a).into_iter().chain(operand(b)));
                    }
                    for u in r.updates.iter().flat_map(|half| half.iter()) {
                        out.extend(operand(&u.a).into_iter().chain(operand(&u.b)));
                    }
                }
                MicroOp::Drop(_)
                | MicroOp::Recirculate
                | MicroOp::Resubmit(_)
                | MicroOp::Random { .. } => {}
            }
        }
    }
}

/// `values` packed as [`Lookup::Packed`] packs a packet's key, or `None` if one is wider
/// than its field (no packet's key can equal it).
fn pack_values(keys: &[Field], values: &[u32]) -> Option<u64> {
    let mut word = 0u64;
    for (f, &v) in keys.iter().zip(values) {
        if f.bits < 32 && v >> f.bits != 0 {
            return None;
        }
        word = shift_in(word, f.bits) | v as u64;
    }
    Some(word)
}

/// Calls `f` with `inputs`' values in big-endian bytes, each field in its whole bytes, as
/// the reference's `field_be_bytes` lays them out: on the stack unless they are many.
#[inline]
fn with_key_bytes(phv: &Phv, inputs: &[Field], f: impl FnOnce(&[u8]) -> u32) -> u32 {
    let mut bytes = [0u8; 64];
    let mut len = 0;
    for &field in inputs {
        let n = (field.bits as usize).div_ceil(8);
        if len + n > bytes.len() {
            let mut all = Vec::new();
            for &field in inputs {
                field_be_bytes(phv, field, &mut all);
            }
            return f(&all);
        }
        let v = phv.get(field).to_be_bytes();
        bytes[len..len + n].copy_from_slice(&v[4 - n..]);
        len += n;
    }
    f(&bytes[..len])
}

#[inline(always)]
fn shift_in(word: u64, bits: u8) -> u64 {
    word.checked_shl(bits as u32).unwrap_or(0)
}

impl Compiled {
    /// Runs `unit` reading `read` and writing `write`, as `State::run_unit` (or
    /// `State::apply_part`) runs the unit it was compiled from.
    #[inline]
    pub(crate) fn run(&self, unit: &CompiledUnit, state: &mut State, io: &mut impl StagePhv) {
        match &unit.kind {
            UnitKind::Gateway {
                field,
                cmp,
                value,
                bit,
            } => {
                let read = io.input();
                let holds = cmp.holds(read.get(*field), value.get(read));
                io.set(*bit, holds as u32);
            }
            UnitKind::Table(t) => {
                if let Some((hit, _)) = t.part {
                    if io.input().get(hit) == 1 {
                        return;
                    }
                }
                match self.find(t, io.input()) {
                    Some(id) => {
                        if let Some((hit, _)) = t.part {
                            io.set(hit, 1);
                        }
                        self.run_action(id, state, io);
                    }
                    None => match t.part {
                        Some((_, false)) => {}
                        _ => self.run_action(t.default, state, io),
                    },
                }
            }
        }
    }

    #[inline]
    fn find(&self, t: &CompiledTable, phv: &Phv) -> Option<ActionId> {
        let target = match &t.lookup {
            Lookup::Empty => return None,
            Lookup::Packed { keys, entries } => {
                let mut word = 0u64;
                for &f in keys.iter() {
                    word = shift_in(word, f.bits) | phv.get(f) as u64;
                }
                entries.get(&word)?
            }
            Lookup::Wide { keys, entries } => {
                let key: Vec<u32> = keys.iter().map(|&f| phv.get(f)).collect();
                entries.get(&key)?
            }
            Lookup::Ternary { table, targets } => {
                let hits = |pairs: &[(u32, u32)]| {
                    table
                        .keys
                        .iter()
                        .zip(pairs)
                        .all(|(&f, &(v, m))| phv.get(f) & m == v & m)
                };
                let i = match table
                    .ternary_index
                    .candidates(table, |c| phv.get(table.keys[c]))
                {
                    Some(ids) => ids
                        .iter()
                        .map(|&i| i as usize)
                        .find(|&i| hits(&table.ternary[i].0)),
                    None => (0..table.ternary.len()).find(|&i| hits(&table.ternary[i].0)),
                }?;
                &targets[i]
            }
        };
        Some(match target {
            CompiledTarget::Call(id) => *id,
            CompiledTarget::Group(members) => {
                let (inputs, crc) = t
                    .selector
                    .as_ref()
                    .expect("only selector tables have groups (checked)");
                let h = with_key_bytes(phv, inputs, |bytes| crc.crc(bytes)) & SELECTOR_HASH_MASK;
                members[h as usize % members.len()]
            }
        })
    }

    /// As `State::run_action`: every primitive reads the PHV as it was before the action.
    #[inline]
    fn run_action(&self, id: ActionId, state: &mut State, io: &mut impl StagePhv) {
        for op in self.actions[id as usize].iter() {
            match op {
                MicroOp::Set { dst, src } => io.set(*dst, src.get(io.input())),
                MicroOp::Alu { op, dst, a, b } => {
                    io.set(*dst, op.apply(a.get(io.input()), b.get(io.input())))
                }
                MicroOp::SignedAlu { op, dst, a, b } => io.set(
                    *dst,
                    op.apply(a.get_signed(io.input()), b.get_signed(io.input())),
                ),
                MicroOp::Hash { dst, inputs, table } => {
                    io.set(
                        *dst,
                        with_key_bytes(io.input(), inputs, |bytes| table.crc(bytes)),
                    );
                }
                MicroOp::SetEgressPort(v) => {
                    io.set(layout::UCAST_EGRESS_PORT, v.get(io.input()));
                    io.set(layout::EGRESS_PORT_VALID, 1);
                }
                MicroOp::SetQid(v) => io.set(layout::QID, v.get(io.input())),
                MicroOp::Drop(reason) => io.set(layout::DROP_REASON, *reason),
                MicroOp::MarkEcn => {
                    if io.input().get(layout::IPV4_ECN) != 0 {
                        io.set(layout::IPV4_ECN, 3);
                    }
                }
                MicroOp::Execute {
                    register_action,
                    index,
                } => {
                    let index = index.get(io.input());
                    self.registers[*register_action as usize].run(state, index, io);
                }
                MicroOp::Mirror(v) => {
                    io.set(fields::MIRROR_SESSION, v.get(io.input()));
                    io.set(fields::MIRROR_VALID, 1);
                }
                MicroOp::Recirculate => io.set(fields::RECIRCULATE, 1),
                MicroOp::Resubmit(header) => {
                    io.set(fields::RESUBMIT, 1);
                    io.set(fields::RESUBMIT_HEADER, *header);
                }
                MicroOp::Random { dst, table } => {
                    let v = state.draw(*table as usize);
                    io.set(*dst, v);
                }
            }
        }
    }
}
