//! Validating a program and lowering it to resolved form.
//!
//! [`check`] turns an [`ir::Program`] into a [`Checked`] program in which every name is
//! resolved: fields to PHV [`Field`]s, actions, tables, registers and hashes to indices,
//! controls to trees of [`CStmt`] plus a flat program-order list of units for placement.
//! Anything wrong is reported as an [`IrError`] naming where (`tables[2] (acl).entries[0]`)
//! and what, never a panic. Tofino2 limits that belong to one object (stateful-ALU
//! comparators, outputs, RegisterActions per array, PHV input width) are checked here;
//! per-stage budgets are placement's job. Header types and the parser graph are checked and
//! resolved by [`crate::program::parser_check`]; their fields join the names tables can use.

use crate::hw::fields::{self, Access, MetadataAllocator};
use crate::hw::layout;
use crate::hw::params::PhvParams;
use crate::hw::parser::{self, Graph};
use crate::hw::phv::Field;
use crate::program::builtin;
pub use crate::program::error::IrError;
use crate::program::error::{err, fits};
use crate::program::ir::{
    self, AluOp, Cmp, HashAlgorithm, MatchKind, Primitive, SaluOp, SaluOutputValue,
};
use crate::program::parser_check;
use crate::DropReason;

mod checksums;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

/// Tofino2 stateful-ALU limits (`bf-p4c/specs/device.cpp`, `bf-asm/target.h`).
pub const SALU_MAX_CONDITIONS: usize = 4;
/// Update ALUs per half of a cell: ALU1 and ALU2 update the low half (the whole cell of an
/// unpaired array), ALU3 and ALU4 the high half of a pair.
pub const SALU_MAX_UPDATES: usize = 2;
pub const SALU_MAX_OUTPUTS: usize = 4;
pub const SALU_MAX_ACTIONS_PER_ARRAY: usize = 4;
/// Bits of PHV a stateful ALU can take in (`MaxPhvInputWidth`).
pub const SALU_MAX_PHV_INPUT_BITS: u32 = 64;
/// Width of the stateful register file's constants.
pub const SALU_CONST_BITS: u32 = 34;

/// A resolved operand of an action primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Field(Field),
    Const(u32),
    /// Index into the action's parameters.
    Param(usize),
}

/// A resolved primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Set {
        dst: Field,
        src: Value,
    },
    Alu {
        op: AluOp,
        dst: Field,
        a: Value,
        b: Value,
    },
    Hash {
        dst: Field,
        hash: usize,
    },
    SetEgressPort(Value),
    SetQid(Value),
    Drop(DropReason),
    MarkEcn,
    Execute {
        register_action: usize,
        index: Value,
    },
    Mirror(Value),
    Recirculate,
    /// `resubmit`, with the resubmit header's place in the parser graph plus 1 (0: none).
    Resubmit(u32),
    Random {
        dst: Field,
    },
}

impl Op {
    /// A deparser control that thread `th` cannot use: its name and the deparsers that
    /// honour it. `mirror` works in ingress and egress (egress-to-egress mirroring); the
    /// ghost thread has no deparser; `recirculate` is an ingress control.
    pub fn refused_in(&self, th: Thread) -> Option<(&'static str, &'static str)> {
        match (self, th) {
            (Op::Mirror(_), Thread::Ghost) => {
                Some(("mirror", "the ingress and egress deparsers honour"))
            }
            (Op::Recirculate, Thread::Egress | Thread::Ghost) => {
                Some(("recirculate", "the ingress deparser honours"))
            }
            (Op::Resubmit(_), Thread::Egress | Thread::Ghost) => {
                Some(("resubmit", "the ingress deparser honours"))
            }
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct CAction {
    pub name: String,
    /// Bits of each action-data slot. A parameter of at most 32 bits is one slot (its own
    /// index); a wider one is cut where the containers of the field it is copied into are
    /// cut, its lowest chunk in its own index and the others in slots past the parameters.
    pub param_bits: Vec<u8>,
    /// Per declared parameter: its slots, least significant chunk first, with their bits.
    pub arg_chunks: Vec<Vec<(usize, u8)>>,
    pub ops: Vec<Op>,
    /// Fields read through the PHV operand path (ALU operands).
    pub operand_reads: Vec<Field>,
    /// Fields read through the input crossbar (hash inputs, stateful-ALU inputs).
    pub xbar_reads: Vec<Field>,
    pub writes: Vec<Field>,
    /// Register arrays the action touches.
    pub registers: Vec<usize>,
    /// Hash units the action uses.
    pub hashes: Vec<usize>,
}

/// A resolved action call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub action: usize,
    pub args: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct CTable {
    pub name: String,
    pub kind: MatchKind,
    pub keys: Vec<Field>,
    pub size: u32,
    pub actions: Vec<usize>,
    pub default: Call,
    /// Exact entries by key.
    pub exact: BTreeMap<Vec<u32>, Target>,
    /// Ternary entries in priority order: (value, mask) per key component.
    pub ternary: Vec<(Vec<(u32, u32)>, Target)>,
    /// `ternary` grouped for lookup, built on the first lookup.
    pub ternary_index: TernaryIndex,
    /// Register arrays the table's actions touch (the table and arrays share a stage).
    pub registers: Vec<usize>,
    pub selector: Option<CSelector>,
    /// The MAU stage the table is pinned to (`@stage`).
    pub stage: Option<usize>,
    /// A table (index) whose stage this one must follow.
    pub after: Option<usize>,
}

/// MAU stages of a Tofino2 pipe: what a `@stage` pin may name.
pub const MAU_STAGES: u32 = 20;

impl CTable {
    pub fn key_bits(&self) -> u32 {
        self.keys.iter().map(|f| f.bits as u32).sum()
    }

    /// Every action call the entries can run (group members included).
    pub fn entry_calls(&self) -> impl Iterator<Item = &Call> {
        self.exact
            .values()
            .chain(self.ternary.iter().map(|e| &e.1))
            .flat_map(Target::calls)
    }
}

/// A ternary table's entries grouped by the value of one key component that every entry
/// matches in full (its mask covers the field), so that a lookup tries only the entries with
/// the packet's value there, still in priority order. A lookup gives the same entry as
/// trying every entry in order: an entry with another value there cannot match. Built on the
/// first lookup; a clone starts empty, because a clone may be given other entries.
#[derive(Default)]
pub struct TernaryIndex(OnceLock<Option<Grouped>>);

/// Entries (indices into `ternary`, ascending) by their value in key component `component`.
struct Grouped {
    component: usize,
    entries: HashMap<u32, Vec<u32>>,
}

/// Below this many entries a table is scanned in order.
const INDEX_FROM_ENTRIES: usize = 16;

impl TernaryIndex {
    /// The entries of `t` (indices into `t.ternary`, in priority order) that can match a
    /// packet whose key component `c` holds `value(c)`; `None` when every entry must be
    /// tried (small tables, or no component every entry matches in full).
    pub fn candidates(&self, t: &CTable, value: impl Fn(usize) -> u32) -> Option<&[u32]> {
        let grouped = self.0.get_or_init(|| Self::group(t)).as_ref()?;
        Some(
            grouped
                .entries
                .get(&value(grouped.component))
                .map_or(&[], |v| v.as_slice()),
        )
    }

    fn group(t: &CTable) -> Option<Grouped> {
        if t.ternary.len() < INDEX_FROM_ENTRIES {
            return None;
        }
        let width = |c: usize| match t.keys[c].bits {
            32.. => u32::MAX,
            b => (1u32 << b) - 1,
        };
        let component = (0..t.keys.len()).find(|&c| {
            t.ternary
                .iter()
                .all(|(pairs, _)| pairs[c].1 & width(c) == width(c))
        })?;
        let mut entries: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, (pairs, _)) in t.ternary.iter().enumerate() {
            let (v, m) = pairs[component];
            // A value with bits outside the field (under the mask) matches no packet.
            if v & m & !width(component) == 0 {
                entries
                    .entry(v & width(component))
                    .or_default()
                    .push(i as u32);
            }
        }
        Some(Grouped { component, entries })
    }
}

impl Clone for TernaryIndex {
    fn clone(&self) -> TernaryIndex {
        TernaryIndex::default()
    }
}

impl std::fmt::Debug for TernaryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TernaryIndex")
    }
}

/// What an entry runs on a hit: one action, or a selector group's member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Call(Call),
    Group(Vec<Call>),
}

impl Target {
    pub fn calls(&self) -> &[Call] {
        match self {
            Target::Call(c) => std::slice::from_ref(c),
            Target::Group(g) => g,
        }
    }
}

/// A resolved action selector.
#[derive(Clone, Debug)]
pub struct CSelector {
    pub inputs: Vec<Field>,
    pub groups: u32,
    pub max_members: u32,
}

/// Most members a selector group may have: 120 per selector RAM word, and a group's words
/// are found by the 14-bit fair-mode hash (`docs/placement.md`).
pub const SELECTOR_MAX_MEMBERS: u32 = 120 * 32;

#[derive(Clone, Debug)]
pub struct CHash {
    pub name: String,
    pub algorithm: HashAlgorithm,
    pub polynomial: u32,
    pub inputs: Vec<Field>,
}

#[derive(Clone, Debug)]
pub struct CRegister {
    pub name: String,
    /// Bits of a cell, or of each half of a pair.
    pub cell_bits: u8,
    pub size: u32,
    pub pair: bool,
    /// Two's-complement cells (`Register<int<N>>`).
    pub signed: bool,
}

impl CRegister {
    /// Bits one stored cell takes: both halves of a pair, or the cell.
    pub fn stored_bits(&self) -> u32 {
        self.cell_bits as u32 * if self.pair { 2 } else { 1 }
    }
}

impl CRegister {
    /// Bits the array occupies in RAM.
    pub fn total_bits(&self) -> u64 {
        self.size as u64 * self.cell_bits as u64 * if self.pair { 2 } else { 1 }
    }
}

/// A resolved stateful-ALU operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SOperand {
    Cell,
    CellHi,
    Field(Field),
    Const(u64),
}

#[derive(Clone, Debug)]
pub struct CUpdate {
    pub when: Vec<ir::Guard>,
    pub half: ir::Half,
    pub op: SaluOp,
    pub a: SOperand,
    pub b: SOperand,
}

#[derive(Clone, Debug)]
pub struct CRegisterAction {
    pub name: String,
    pub register: usize,
    pub conditions: Vec<(SOperand, Cmp, SOperand)>,
    pub updates: Vec<CUpdate>,
    pub outputs: Vec<(Field, SaluOutputValue)>,
    pub inputs: Vec<Field>,
}

#[derive(Clone, Debug)]
pub struct CGateway {
    pub name: String,
    pub field: Field,
    pub cmp: Cmp,
    /// A field or a constant.
    pub value: Value,
    /// Where the outcome is kept for the tables it controls.
    pub bit: Field,
}

impl CGateway {
    pub fn reads(&self) -> Vec<Field> {
        let mut r = vec![self.field];
        if let Value::Field(f) = self.value {
            r.push(f);
        }
        r
    }
}

/// A resolved statement.
#[derive(Clone, Debug)]
pub enum CStmt {
    Apply(usize),
    If {
        gateway: usize,
        then: Vec<CStmt>,
        otherwise: Vec<CStmt>,
    },
}

/// The threads of a pipe that run controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Thread {
    Ingress,
    Egress,
    Ghost,
}

impl Thread {
    pub const ALL: [Thread; 3] = [Thread::Ingress, Thread::Egress, Thread::Ghost];
    pub fn name(self) -> &'static str {
        match self {
            Thread::Ingress => "ingress",
            Thread::Egress => "egress",
            Thread::Ghost => "ghost",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A table or gateway: what placement puts into a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Table(usize),
    Gateway(usize),
}

/// A unit in program order with the gateway outcomes it needs to run.
#[derive(Clone, Debug)]
pub struct FlatUnit {
    pub unit: Unit,
    /// (gateway, outcome) pairs, outermost first.
    pub guards: Vec<(usize, bool)>,
}

/// A validated program with every name resolved.
#[derive(Clone, Debug)]
pub struct Checked {
    pub name: String,
    pub phv: PhvParams,
    pub actions: Vec<CAction>,
    pub tables: Vec<CTable>,
    pub hashes: Vec<CHash>,
    pub registers: Vec<CRegister>,
    pub register_actions: Vec<CRegisterAction>,
    pub gateways: Vec<CGateway>,
    /// Controls per thread (ingress, egress, ghost).
    pub controls: [Vec<CStmt>; 3],
    /// Units per thread in program order.
    pub flat: [Vec<FlatUnit>; 3],
    /// Containers used per width by built-ins and metadata; beyond the normal count when
    /// metadata spilled.
    pub phv_normal_used: [u16; 3],
    /// The first metadata field that found no normal container (the program does not fit).
    pub phv_spill: Option<String>,
    /// Dark 8-bit containers used for gateway outcomes.
    pub phv_dark8_used: u16,
    /// Program metadata fields and where they were put.
    pub metadata: Vec<(String, Field)>,
    /// The parser graph (the built-in one when the program has none), which the gress
    /// parser and deparser and the interpreter run.
    pub parser: Arc<Graph>,
    /// The graph the egress parser runs: the same states, without the ingress parser's
    /// checksum engines.
    pub egress_parser: Arc<Graph>,
    /// The deparsers' checksum units (ingress, egress).
    pub checksum_updates: [Vec<crate::hw::checksum::Update>; 2],
    /// The traffic the program declares it adds per data packet.
    pub overhead: Option<ir::Overhead>,
    /// The ingress deparser's digests.
    pub digests: Vec<CDigest>,
}

/// A checked digest: its name, type, and each value's name and PHV pieces (most significant
/// first).
#[derive(Clone, Debug)]
pub struct CDigest {
    pub name: String,
    pub digest_type: u8,
    pub fields: Vec<(String, Vec<Field>)>,
}

/// Digest types the ingress deparser tells apart: `DigestType_t` is 3 bits, 0 sends none.
pub const DIGEST_TYPES: std::ops::RangeInclusive<u8> = 1..=7;

fn check_digests(p: &ir::Program, r: &Resolver) -> Result<Vec<CDigest>, IrError> {
    let mut out: Vec<CDigest> = Vec::new();
    for (i, d) in p.digests.iter().enumerate() {
        let path = format!("digests[{i}] ({})", d.name);
        if !DIGEST_TYPES.contains(&d.digest_type) {
            return err(
                &path,
                format!(
                    "digest type {} is outside 1..=7 (`ig_intr_dprsr_md.digest_type` is 3 bits, 0 sends no digest)",
                    d.digest_type
                ),
            );
        }
        if let Some(o) = out
            .iter()
            .find(|o| o.digest_type == d.digest_type || o.name == d.name)
        {
            return err(
                &path,
                format!(
                    "digest `{}` already has type {} or this name; each digest has a name and a type of its own",
                    o.name, o.digest_type
                ),
            );
        }
        if d.fields.is_empty() {
            return err(&path, "a digest carries at least one field");
        }
        let mut fields = Vec::new();
        for (k, f) in d.fields.iter().enumerate() {
            let fpath = format!("{path}.fields[{k}]");
            if let Some(th) = fields::only_in(&f.field).filter(|&t| t != "ingress") {
                return err(
                    &fpath,
                    format!(
                        "`{}` is {th} metadata; the ingress deparser sends digests",
                        f.field
                    ),
                );
            }
            fields.push((f.name.clone(), r.pieces(&fpath, &f.field)?));
        }
        out.push(CDigest {
            name: d.name.clone(),
            digest_type: d.digest_type,
            fields,
        });
    }
    Ok(out)
}

/// The smallest frame (FCS included) a declared overhead packet may be.
pub const MIN_FRAME_BYTES: u32 = 64;
/// The largest: `pkt_length` is 16 bits.
pub const MAX_FRAME_BYTES: u32 = 65_535;

fn check_overhead(o: &ir::Overhead) -> Result<(), IrError> {
    if o.recirculated_bytes == 0 && o.mirrored_bytes == 0 {
        return err(
            "overhead",
            "declares neither recirculated nor mirrored bytes",
        );
    }
    for (what, b) in [
        ("recirculated_bytes", o.recirculated_bytes),
        ("mirrored_bytes", o.mirrored_bytes),
    ] {
        if b != 0 && !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&b) {
            return err(
                &format!("overhead.{what}"),
                format!(
                    "{b} B is not a frame size ({MIN_FRAME_BYTES}..={MAX_FRAME_BYTES} B, FCS included; 0 for none)"
                ),
            );
        }
    }
    Ok(())
}

impl Checked {
    pub fn unit_name(&self, u: Unit) -> &str {
        match u {
            Unit::Table(t) => &self.tables[t].name,
            Unit::Gateway(g) => &self.gateways[g].name,
        }
    }
}

/// Validates `p` against Tofino2's default PHV.
impl ir::ProgramBuilder {
    /// The program, if it is valid (here rather than in `ir.rs` so that the language does
    /// not depend on its checks).
    pub fn build(self) -> Result<ir::Program, IrError> {
        check(self.peek())?;
        Ok(self.build_unchecked())
    }
}

pub fn check(p: &ir::Program) -> Result<Checked, IrError> {
    check_with(p, &PhvParams::default())
}

fn unique<'a>(
    what: &str,
    names: impl Iterator<Item = &'a str>,
) -> Result<BTreeMap<String, usize>, IrError> {
    let mut map = BTreeMap::new();
    for (i, n) in names.enumerate() {
        let path = format!("{what}[{i}]");
        if n.is_empty() {
            return err(&path, "the name is empty");
        }
        if map.insert(n.to_string(), i).is_some() {
            return err(&format!("{path} ({n})"), "the name is used twice");
        }
    }
    Ok(map)
}

/// Bytes of resubmit data Tofino2 carries (`[p4c] device.h`, the phase-0 size).
pub const RESUBMIT_BYTES: usize = 16;
/// Resubmit types Tofino2 has (`[p4c] device.h`).
pub const RESUBMIT_TYPES: usize = 8;

struct Resolver {
    fields: BTreeMap<String, (Field, Access)>,
    /// The parser graph's headers, in its order (a mirror header's type is its place + 1),
    /// and their sizes in bytes.
    graph_headers: Vec<String>,
    graph_header_bytes: Vec<usize>,
    /// Header fields wider than 32 bits, which exist but cannot be named.
    wide: Vec<(String, u16)>,
    /// Fields wider than 32 bits (at most 64) in pieces, most significant first: what table
    /// keys, hash inputs and `set` may name whole, and slices may name part of.
    pieces: BTreeMap<String, (Vec<Field>, Access)>,
    /// Header fields over 64 bits in pieces: only checksum lists read them.
    carried: BTreeMap<String, Vec<Field>>,
}

/// Most bits a wide field may have to be named (key values and constants are 64-bit).
pub const WIDE_MAX_BITS: u32 = 64;

impl Resolver {
    fn unknown<T>(&self, path: &str, name: &str) -> Result<T, IrError> {
        if let Some((p, _)) = self.pieces.get(name) {
            let bits: u32 = p.iter().map(|f| f.bits as u32).sum();
            return err(
                path,
                format!(
                    "field `{name}` is {bits} bits over {} containers; an ALU, a gateway and a \
                     stateful ALU see at most 32 bits of one container: name a slice such as \
                     `{name}[31:0]` (table keys, hash inputs and `set` take it whole)",
                    p.len()
                ),
            );
        }
        match self.wide.iter().find(|w| w.0 == name) {
            Some(w) => err(
                path,
                format!(
                    "field `{name}` is {} bits; tables and actions name fields of at most {WIDE_MAX_BITS}",
                    w.1
                ),
            ),
            None => err(path, format!("unknown field `{name}`")),
        }
    }
    /// A slice `base[hi:lo]` of a field: within one container, else an error.
    fn slice(&self, path: &str, name: &str) -> Option<Result<(Field, Access), IrError>> {
        let (base, rest) = name.split_once('[')?;
        let range = rest.strip_suffix(']')?;
        let (hi, lo) = range.split_once(':')?;
        let bad = |why: String| Some(err(path, format!("slice `{name}`: {why}")));
        let (Ok(hi), Ok(lo)) = (hi.trim().parse::<u32>(), lo.trim().parse::<u32>()) else {
            return bad("bounds are not numbers `[hi:lo]`".into());
        };
        let (pieces, access) = match (self.fields.get(base), self.pieces.get(base)) {
            (Some(&(f, a)), _) => (vec![f], a),
            (None, Some((p, a))) => (p.clone(), *a),
            (None, None) => return Some(self.unknown(path, base)),
        };
        let bits: u32 = pieces.iter().map(|f| f.bits as u32).sum();
        if hi < lo || hi >= bits {
            return bad(format!(
                "`{base}` is {bits} bits; a slice needs hi >= lo and hi < {bits}"
            ));
        }
        // Walk the pieces from the least significant one.
        let mut at = 0u32;
        for f in pieces.iter().rev() {
            let top = at + f.bits as u32;
            if lo >= at && hi < top {
                let field = Field::at(f.container, f.shift + (lo - at) as u8, (hi - lo + 1) as u8);
                return Some(Ok((field, access)));
            }
            at = top;
        }
        bad(format!(
            "the bits span two PHV containers of `{base}`; a slice lies within one"
        ))
    }
    fn field(&self, path: &str, name: &str) -> Result<Field, IrError> {
        match self.fields.get(name) {
            Some(&(f, _)) => Ok(f),
            None => match self.slice(path, name) {
                Some(r) => r.map(|(f, _)| f),
                None => self.unknown(path, name),
            },
        }
    }
    fn writable(&self, path: &str, name: &str) -> Result<Field, IrError> {
        match self.fields.get(name) {
            Some(&(f, Access::ReadWrite)) => Ok(f),
            Some(_) => err(path, format!("field `{name}` is read-only")),
            None => match self.slice(path, name) {
                Some(Ok((f, Access::ReadWrite))) => Ok(f),
                Some(Ok(_)) => err(path, format!("field `{name}` is read-only")),
                Some(Err(e)) => Err(e),
                None => self.unknown(path, name),
            },
        }
    }
    /// A field as table keys and hash inputs see it: its pieces, most significant first
    /// (one for a field of at most 32 bits).
    fn pieces(&self, path: &str, name: &str) -> Result<Vec<Field>, IrError> {
        match self.pieces.get(name) {
            Some((p, _)) => Ok(p.clone()),
            None => match self.slice_pieces(name) {
                Some(p) => Ok(p),
                None => self.field(path, name).map(|f| vec![f]),
            },
        }
    }
    /// A slice of a wide field that spans its containers (`ethernet.dst_addr[31:0]`), as
    /// the pieces of those containers it takes, most significant first; `None` for anything
    /// else (a slice within one container is a field).
    fn slice_pieces(&self, name: &str) -> Option<Vec<Field>> {
        let (base, rest) = name.split_once('[')?;
        let (hi, lo) = rest.strip_suffix(']')?.split_once(':')?;
        let (hi, lo) = (
            hi.trim().parse::<u32>().ok()?,
            lo.trim().parse::<u32>().ok()?,
        );
        let (pieces, _) = self.pieces.get(base)?;
        let mut out = Vec::new();
        let mut at = 0u32;
        for f in pieces.iter().rev() {
            let top = at + f.bits as u32;
            let (a, b) = (lo.max(at), hi.min(top - 1));
            if a <= b {
                out.push(Field::at(
                    f.container,
                    f.shift + (a - at) as u8,
                    (b - a + 1) as u8,
                ));
            }
            at = top;
        }
        out.reverse();
        (hi < at && lo <= hi && out.len() > 1).then_some(out)
    }
    fn salu_operand(&self, path: &str, o: &ir::SaluOperand) -> Result<SOperand, IrError> {
        Ok(match o {
            ir::SaluOperand::Cell => SOperand::Cell,
            ir::SaluOperand::CellHi => SOperand::CellHi,
            ir::SaluOperand::Field(n) => SOperand::Field(self.field(path, n)?),
            ir::SaluOperand::Const(c) => {
                if !fits(*c, SALU_CONST_BITS) {
                    return err(path, format!("constant {c} exceeds 34 bits"));
                }
                SOperand::Const(*c)
            }
        })
    }
}

/// Validates `p` for a chip with PHV `phv`.
pub fn check_with(p: &ir::Program, phv: &PhvParams) -> Result<Checked, IrError> {
    let mut alloc = MetadataAllocator::new(phv);
    let ResolvedFields {
        r,
        parser,
        egress_parser,
        metadata,
        phv_spill,
    } = resolve_fields(p, phv, &mut alloc)?;
    let (hash_ids, hashes) = check_hashes(p, &r)?;
    let (reg_ids, registers) = check_registers(p)?;
    let (ra_ids, register_actions) = check_register_actions(p, &r, &reg_ids, &registers)?;
    let (action_ids, actions) =
        check_actions(p, &r, (&hash_ids, &hashes), &ra_ids, &register_actions)?;
    let (table_ids, tables) = check_tables(p, &r, &action_ids, &actions)?;
    let mut lowering = ControlLowering {
        r: &r,
        table_ids: &table_ids,
        applied: vec![None; tables.len()],
        gateways: Vec::new(),
        phv,
    };
    let mut controls: [Vec<CStmt>; 3] = Default::default();
    let bodies = [&p.ingress, &p.egress, &p.ghost];
    for th in Thread::ALL {
        controls[th.index()] = lowering.block(th, th.name(), bodies[th.index()])?;
    }
    for (i, a) in lowering.applied.iter().enumerate() {
        if a.is_none() {
            return err(
                &format!("tables[{i}] ({})", tables[i].name),
                "the table is never applied",
            );
        }
        if let Some(th) = *a {
            for &ai in &tables[i].actions {
                if let Some((op, by)) = actions[ai].ops.iter().find_map(|o| o.refused_in(th)) {
                    return err(
                        &format!("tables[{i}] ({})", tables[i].name),
                        format!(
                            "action `{}` uses `{op}`, which only {by}, \
                             but the table is applied in {}",
                            actions[ai].name,
                            th.name()
                        ),
                    );
                }
            }
        }
    }
    check_register_sharing(&tables, &registers, &lowering.applied)?;
    let digests = check_digests(p, &r)?;
    let checksum_updates = checksums::resolve_deparser(p, &r)?;
    crate::program::scope::check_scopes(p)?;
    if let Some(o) = &p.overhead {
        check_overhead(o)?;
    }
    let gateways = lowering.gateways;
    let mut names: BTreeSet<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    for g in &gateways {
        if !names.insert(&g.name) {
            return err(&format!("gateway {}", g.name), "the name is used twice");
        }
    }
    let flat: [Vec<FlatUnit>; 3] = std::array::from_fn(|k| {
        let mut out = Vec::new();
        flatten(&controls[k], &mut Vec::new(), &mut out);
        out
    });
    check_after(&tables, &flat)?;
    Ok(Checked {
        name: p.name.clone(),
        phv: *phv,
        actions,
        tables,
        hashes,
        registers,
        register_actions,
        phv_dark8_used: fields::gateway_containers(gateways.len()),
        gateways,
        controls,
        flat,
        phv_normal_used: alloc.used(),
        phv_spill,
        metadata,
        parser,
        egress_parser,
        checksum_updates,
        overhead: p.overhead,
        digests,
    })
}

/// Each state's writes (`ir::ParserSet`) resolved onto `graph`'s states of the same name:
/// the destination a field the program may write (a header's valid bit too: the parser sets
/// it), a source field one it may read, packet reads of 1 to 64 bits. A write of a field
/// over 32 bits is one write per run of bits that lies in one container of the destination
/// and one of the source (the parser writes containers).
fn resolve_parser_sets(
    program: &str,
    ir_graph: &ir::ParserGraph,
    graph: &mut parser::Graph,
    r: &Resolver,
) -> Result<(), IrError> {
    for st in &mut graph.states {
        let Some(s) = ir_graph.states.iter().find(|s| s.name == st.name) else {
            continue;
        };
        for (k, w) in s.set.iter().enumerate() {
            let path = format!("{program}: parser.states ({}).set[{k}]", s.name);
            let dst = if r.pieces.contains_key(&w.dst) {
                r.pieces(&path, &w.dst)?
            } else if w.dst.ends_with(".$valid") {
                vec![r.field(&path, &w.dst)?]
            } else {
                vec![r.writable(&path, &w.dst)?]
            };
            let src = match &w.src {
                ir::ParserValue::Field(n) => Some(r.pieces(&path, n)?),
                ir::ParserValue::Packet { bits, .. } if !(1..=64).contains(bits) => {
                    return err(&path, format!("a packet read of {bits} bits (1 to 64)"));
                }
                _ => None,
            };
            let dst_bits: u32 = dst.iter().map(|f| f.bits as u32).sum();
            if let ir::ParserValue::Const(c) = w.src {
                if dst_bits < 64 && c >> dst_bits != 0 {
                    return err(
                        &path,
                        format!("constant {c} does not fit in {dst_bits} bits"),
                    );
                }
            }
            // Runs of bits, from the least significant, cut where a container of either
            // side ends.
            let cuts = |parts: &[Field]| -> Vec<u32> {
                let mut at = 0;
                parts
                    .iter()
                    .rev()
                    .map(|f| {
                        at += f.bits as u32;
                        at
                    })
                    .collect()
            };
            let mut ends = cuts(&dst);
            if let Some(src) = &src {
                ends.extend(cuts(src));
            }
            ends.retain(|&e| e <= dst_bits);
            ends.push(dst_bits);
            ends.sort_unstable();
            ends.dedup();
            let mut lo = 0;
            for hi_end in ends {
                let bits = hi_end - lo;
                let dst_part = sub_field(&dst, lo, bits);
                let src_part = match &w.src {
                    ir::ParserValue::Const(c) => {
                        parser::SetSource::Const(((*c >> lo.min(63)) & ((1u64 << bits) - 1)) as u32)
                    }
                    ir::ParserValue::Field(_) => {
                        let src = src.as_ref().expect("resolved above");
                        let src_bits: u32 = src.iter().map(|f| f.bits as u32).sum();
                        if lo >= src_bits {
                            parser::SetSource::Const(0)
                        } else {
                            parser::SetSource::Field(sub_field(src, lo, bits.min(src_bits - lo)))
                        }
                    }
                    &ir::ParserValue::Packet { offset, bits: n } => {
                        if lo >= n {
                            parser::SetSource::Const(0)
                        } else {
                            let take = bits.min(n - lo);
                            // Most significant bit first: bits [lo + take - 1 : lo] of the
                            // N-bit value start N - lo - take bits in.
                            parser::SetSource::Packet {
                                offset: offset + (n - lo - take),
                                bits: take,
                            }
                        }
                    }
                };
                st.sets.push(parser::Set {
                    dst: dst_part,
                    src: src_part,
                });
                lo = hi_end;
            }
        }
    }
    Ok(())
}

/// Each state's skipped bytes (`ir::ParserSkip`) onto `graph`'s state of the same name: a
/// whole number of bytes, at most a frame's, in order among the state's extracts.
fn resolve_parser_skips(
    program: &str,
    ir_graph: &ir::ParserGraph,
    graph: &mut parser::Graph,
) -> Result<(), IrError> {
    for st in &mut graph.states {
        let Some(s) = ir_graph.states.iter().find(|s| s.name == st.name) else {
            continue;
        };
        let mut last = 0;
        for (k, skip) in s.skip.iter().enumerate() {
            let path = format!("{program}: parser.states ({}).skip[{k}]", s.name);
            if skip.bits == 0 || skip.bits % 8 != 0 || skip.bits > 8 * 9216 {
                return err(
                    &path,
                    format!(
                        "skips {} bits; the parser skips whole bytes, 1 to a frame's 9216",
                        skip.bits
                    ),
                );
            }
            if skip.after_extracts as usize > s.extract.len() || skip.after_extracts < last {
                return err(
                    &path,
                    format!(
                        "comes after {} extracts of a state that has {} (skips in order)",
                        skip.after_extracts,
                        s.extract.len()
                    ),
                );
            }
            last = skip.after_extracts;
            st.skips.push((skip.after_extracts, skip.bits / 8));
        }
    }
    Ok(())
}

/// Bits `lo .. lo + bits` (from the least significant) of the field in `parts` (most
/// significant first), which lie in one of them.
fn sub_field(parts: &[Field], lo: u32, bits: u32) -> Field {
    let mut at = 0;
    for f in parts.iter().rev() {
        let n = f.bits as u32;
        if lo < at + n {
            return Field {
                container: f.container,
                shift: f.shift + (lo - at) as u8,
                bits: bits as u8,
            };
        }
        at += n;
    }
    unreachable!("the cuts lie within the field")
}

/// The PHV fields a program may name: the built-in ones, its headers' (as its parser graph
/// lays them out) and its metadata, allocated to containers; the graph; and the first
/// metadata field that had to go past the normal containers, if any.
fn resolve_fields(
    p: &ir::Program,
    phv: &PhvParams,
    alloc: &mut MetadataAllocator,
) -> Result<ResolvedFields, IrError> {
    let totals = [phv.containers_8, phv.containers_16, phv.containers_32];
    if (0..3).any(|w| totals[w] < fields::FIRST_FREE[w]) {
        return err(
            "phv",
            format!(
                "the PHV ({totals:?} containers of 8, 16, 32 bits) is too small for the \
                 built-in fields, which take {:?}",
                fields::FIRST_FREE
            ),
        );
    }
    let mut fields = BTreeMap::new();
    for b in fields::BUILTINS {
        fields.insert(b.name.to_string(), (b.field, b.access));
    }
    // Headers first: they need normal (parser-visible) containers; metadata may spill.
    let (lowered, egress_graph) = match (&p.parser, &p.egress_parser) {
        (Some(g), eg) => parser_check::lower_pair(&p.name, &p.headers, g, eg.as_ref(), alloc)?,
        (None, None) => (
            parser_check::lower(&p.name, &p.headers, &builtin::graph(), alloc)?,
            None,
        ),
        (None, Some(_)) => {
            return err(
                &format!("{}: egress_parser", p.name),
                "an egress parser of its own needs an ingress `parser` (the built-in graph \
                 parses both gresses)",
            )
        }
    };
    let mut graph = lowered.graph;
    for (name, f, access) in lowered.fields {
        fields.insert(name, (f, access));
    }
    let mut phv_spill = None;
    let mut metadata = Vec::new();
    let mut wide_metadata = Vec::new();
    unique("metadata", p.metadata.iter().map(|m| m.name.as_str()))?;
    for (i, m) in p.metadata.iter().enumerate() {
        let path = format!("metadata[{i}] ({})", m.name);
        if fields::builtin(&m.name).is_some() || fields::wide_builtin(&m.name).is_some() {
            return err(&path, "the name is a built-in field");
        }
        if fields.contains_key(&m.name) || lowered.wide.iter().any(|w| w.0 == m.name) {
            return err(&path, "the name is a header field");
        }
        if !(1..=WIDE_MAX_BITS as u8).contains(&m.bits) {
            return err(
                &path,
                format!("width {} is outside 1..={WIDE_MAX_BITS}", m.bits),
            );
        }
        // A field over 32 bits takes a 32-bit container per 32 bits from its low end, the
        // rest in the narrowest that holds it; it is named whole where a wide header field
        // is (keys, hash inputs, `set`), and by slices elsewhere.
        let mut parts = Vec::new();
        let mut left = m.bits;
        while left > 0 {
            let bits = left.min(32);
            let before = alloc.used();
            let Some(f) = alloc.alloc(bits) else {
                return err(&path, "no PHV container of any kind is left for it");
            };
            let w = fields::width_index(f.container.width);
            if before[w] >= phv.normal[w] && phv_spill.is_none() {
                phv_spill = Some(m.name.clone());
            }
            parts.push(f);
            left -= bits;
        }
        if let [f] = parts[..] {
            fields.insert(m.name.clone(), (f, Access::ReadWrite));
            metadata.push((m.name.clone(), f));
        } else {
            let mut lo = 0;
            for f in &parts {
                let hi = lo + f.bits as u32 - 1;
                metadata.push((format!("{}[{hi}:{lo}]", m.name), *f));
                lo = hi + 1;
            }
            parts.reverse();
            wide_metadata.push((m.name.clone(), parts));
        }
    }
    let mut pieces = BTreeMap::new();
    let mut carried = BTreeMap::new();
    for (name, p) in wide_metadata {
        pieces.insert(name, (p, Access::ReadWrite));
    }
    for b in fields::WIDE_BUILTINS {
        pieces.insert(b.name.to_string(), (b.pieces.to_vec(), b.access));
    }
    for (name, p) in lowered.wide_pieces {
        let bits: u32 = p.iter().map(|f| f.bits as u32).sum();
        if bits <= WIDE_MAX_BITS {
            pieces.insert(name, (p, Access::ReadWrite));
        } else {
            carried.insert(name, p);
        }
    }
    let r = Resolver {
        fields,
        graph_headers: graph.headers.iter().map(|h| h.name.clone()).collect(),
        graph_header_bytes: graph.headers.iter().map(|h| h.bytes).collect(),
        wide: lowered.wide,
        pieces,
        carried,
    };
    if let Some(g) = &p.parser {
        resolve_parser_sets(&p.name, g, &mut graph, &r)?;
        resolve_parser_skips(&p.name, g, &mut graph)?;
        checksums::resolve_parser(&p.name, g, &mut graph, &r)?;
    }
    let own_egress = match (egress_graph, &p.egress_parser) {
        (Some(mut eg), Some(ir_eg)) => {
            let name = format!("{} (egress)", p.name);
            resolve_parser_sets(&name, ir_eg, &mut eg, &r)?;
            resolve_parser_skips(&name, ir_eg, &mut eg)?;
            checksums::resolve_parser(&name, ir_eg, &mut eg, &r)?;
            Some(Arc::new(eg))
        }
        _ => None,
    };
    let (parser, egress_parser) = match &p.parser {
        None => (parser_check::builtin_graph(), parser_check::builtin_graph()),
        Some(_) if own_egress.is_some() => (Arc::new(graph), own_egress.expect("matched")),
        Some(_) if graph.states.iter().all(|s| s.checksums.is_empty()) => {
            let g = Arc::new(graph);
            (Arc::clone(&g), g)
        }
        Some(_) => {
            // The checksum engines are the ingress parser's: the egress runs the same
            // states without them.
            let mut egress = graph.clone();
            for s in &mut egress.states {
                s.checksums.clear();
            }
            (Arc::new(graph), Arc::new(egress))
        }
    };

    Ok(ResolvedFields {
        r,
        parser,
        egress_parser,
        metadata,
        phv_spill,
    })
}

/// What [`resolve_fields`] finds.
struct ResolvedFields {
    r: Resolver,
    parser: Arc<Graph>,
    egress_parser: Arc<Graph>,
    metadata: Vec<(String, Field)>,
    phv_spill: Option<String>,
}

/// The program's hash units, their inputs resolved, and their ids by name.
fn check_hashes(
    p: &ir::Program,
    r: &Resolver,
) -> Result<(BTreeMap<String, usize>, Vec<CHash>), IrError> {
    let hash_ids = unique("hashes", p.hashes.iter().map(|h| h.name.as_str()))?;
    let mut hashes = Vec::new();
    for (i, h) in p.hashes.iter().enumerate() {
        let path = format!("hashes[{i}] ({})", h.name);
        if h.inputs.is_empty() {
            return err(&path, "a hash needs at least one input field");
        }
        let inputs: Vec<Field> = h
            .inputs
            .iter()
            .map(|n| r.pieces(&path, n))
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        let polynomial = h
            .polynomial
            .unwrap_or_else(|| h.algorithm.default_polynomial());
        if polynomial == 0 || !fits(polynomial as u64, h.algorithm.bits()) {
            return err(
                &path,
                format!(
                    "polynomial {polynomial:#x} is not a non-zero {}-bit value",
                    h.algorithm.bits()
                ),
            );
        }
        hashes.push(CHash {
            name: h.name.clone(),
            algorithm: h.algorithm,
            polynomial,
            inputs,
        });
    }

    Ok((hash_ids, hashes))
}

/// The program's register arrays, checked against the cell widths Tofino2 has.
fn check_registers(p: &ir::Program) -> Result<(BTreeMap<String, usize>, Vec<CRegister>), IrError> {
    let reg_ids = unique("registers", p.registers.iter().map(|x| x.name.as_str()))?;
    let mut registers = Vec::new();
    for (i, x) in p.registers.iter().enumerate() {
        let path = format!("registers[{i}] ({})", x.name);
        if ![1, 8, 16, 32, 64].contains(&x.cell_bits) {
            return err(
                &path,
                format!("cell width {} is not 1, 8, 16, 32 or 64", x.cell_bits),
            );
        }
        if x.pair && ![8, 16, 32].contains(&x.cell_bits) {
            return err(
                &path,
                format!(
                    "a pair holds two halves of 8, 16 or 32 bits, not {}",
                    x.cell_bits
                ),
            );
        }
        if x.size == 0 {
            return err(&path, "a register array needs at least one cell");
        }
        if x.signed && x.cell_bits == 1 {
            return err(
                &path,
                "a signed array needs cells of 8, 16, 32 or 64 bits, not 1",
            );
        }
        registers.push(CRegister {
            name: x.name.clone(),
            cell_bits: x.cell_bits,
            size: x.size,
            pair: x.pair,
            signed: x.signed,
        });
    }
    Ok((reg_ids, registers))
}

/// The program's RegisterActions, each within one stateful ALU's limits.
fn check_register_actions(
    p: &ir::Program,
    r: &Resolver,
    reg_ids: &BTreeMap<String, usize>,
    registers: &[CRegister],
) -> Result<(BTreeMap<String, usize>, Vec<CRegisterAction>), IrError> {
    let ra_ids = unique(
        "register_actions",
        p.register_actions.iter().map(|x| x.name.as_str()),
    )?;
    let mut register_actions = Vec::new();
    let mut per_array = vec![0usize; registers.len()];
    for (i, ra) in p.register_actions.iter().enumerate() {
        let path = format!("register_actions[{i}] ({})", ra.name);
        let Some(&register) = reg_ids.get(&ra.register) else {
            return err(&path, format!("unknown register array `{}`", ra.register));
        };
        per_array[register] += 1;
        if per_array[register] > SALU_MAX_ACTIONS_PER_ARRAY {
            return err(
                &path,
                format!(
                    "register array `{}` has more than {SALU_MAX_ACTIONS_PER_ARRAY} RegisterActions",
                    ra.register
                ),
            );
        }
        let halves = |h: ir::Half| ra.updates.iter().filter(|u| u.half == h).count();
        let limits = [
            ("conditions", ra.conditions.len(), SALU_MAX_CONDITIONS),
            (
                "updates of the lo half",
                halves(ir::Half::Lo),
                SALU_MAX_UPDATES,
            ),
            (
                "updates of the hi half",
                halves(ir::Half::Hi),
                SALU_MAX_UPDATES,
            ),
            ("outputs", ra.outputs.len(), SALU_MAX_OUTPUTS),
        ];
        for (what, n, max) in limits {
            if n > max {
                return err(
                    &path,
                    format!("{n} {what}; a Tofino2 stateful ALU has {max}"),
                );
            }
        }
        let mut conditions = Vec::new();
        for (k, c) in ra.conditions.iter().enumerate() {
            let cp = format!("{path}.conditions[{k}]");
            conditions.push((
                r.salu_operand(&cp, &c.a)?,
                c.cmp,
                r.salu_operand(&cp, &c.b)?,
            ));
        }
        let mut updates = Vec::new();
        for (k, u) in ra.updates.iter().enumerate() {
            let up = format!("{path}.updates[{k}]");
            for g in &u.when {
                if g.condition >= conditions.len() {
                    return err(&up, format!("condition {} does not exist", g.condition));
                }
            }
            updates.push(CUpdate {
                when: u.when.clone(),
                half: u.half,
                op: u.op,
                a: r.salu_operand(&up, &u.a)?,
                b: r.salu_operand(&up, &u.b)?,
            });
        }
        let mut outputs = Vec::new();
        for (k, o) in ra.outputs.iter().enumerate() {
            let op = format!("{path}.outputs[{k}]");
            outputs.push((r.writable(&op, &o.dst)?, o.value));
        }
        stateful_mode(&path, &registers[register], &conditions, &updates, &outputs)?;
        let mut inputs: Vec<Field> = Vec::new();
        let operands = conditions
            .iter()
            .flat_map(|c| [c.0, c.2])
            .chain(updates.iter().flat_map(|u| [u.a, u.b]));
        for o in operands {
            if let SOperand::Field(f) = o {
                if !inputs.contains(&f) {
                    inputs.push(f);
                }
            }
        }
        let input_bits: u32 = inputs.iter().map(|f| f.bits as u32).sum();
        if input_bits > SALU_MAX_PHV_INPUT_BITS {
            return err(
                &path,
                format!(
                    "reads {input_bits} PHV bits; a stateful ALU takes {SALU_MAX_PHV_INPUT_BITS}"
                ),
            );
        }
        let written: Vec<Field> = outputs.iter().map(|o| o.0).collect();
        if let Some(w) = duplicate_or_overlap(&written) {
            return err(&path, format!("two outputs write the same bits ({w:?})"));
        }
        register_actions.push(CRegisterAction {
            name: ra.name.clone(),
            register,
            conditions,
            updates,
            outputs,
            inputs,
        });
    }

    Ok((ra_ids, register_actions))
}

/// The program's actions, lowered to micro-ops, within Tofino2's resubmit types.
fn check_actions(
    p: &ir::Program,
    r: &Resolver,
    hashes: (&BTreeMap<String, usize>, &[CHash]),
    ra_ids: &BTreeMap<String, usize>,
    register_actions: &[CRegisterAction],
) -> Result<(BTreeMap<String, usize>, Vec<CAction>), IrError> {
    let action_ids = unique("actions", p.actions.iter().map(|a| a.name.as_str()))?;
    let mut actions = Vec::new();
    for (i, a) in p.actions.iter().enumerate() {
        actions.push(lower_action(
            &format!("actions[{i}] ({})", a.name),
            a,
            r,
            hashes,
            ra_ids,
            register_actions,
        )?);
        // Tofino2 has 8 resubmit types: at most 8 kinds of resubmit (headers, or none).
        let kinds: std::collections::BTreeSet<u32> = actions
            .iter()
            .flat_map(|a: &CAction| &a.ops)
            .filter_map(|o| match o {
                Op::Resubmit(h) => Some(*h),
                _ => None,
            })
            .collect();
        if kinds.len() > RESUBMIT_TYPES {
            return err(
                &format!("actions[{i}] ({})", a.name),
                format!(
                    "makes the program's resubmit kinds (headers, or none) {}; Tofino2 has \
                     {RESUBMIT_TYPES} resubmit types",
                    kinds.len()
                ),
            );
        }
    }

    Ok((action_ids, actions))
}

/// The program's tables, lowered, with their `after` resolved.
fn check_tables(
    p: &ir::Program,
    r: &Resolver,
    action_ids: &BTreeMap<String, usize>,
    actions: &[CAction],
) -> Result<(BTreeMap<String, usize>, Vec<CTable>), IrError> {
    let table_ids = unique("tables", p.tables.iter().map(|t| t.name.as_str()))?;
    let mut tables = Vec::new();
    for (i, t) in p.tables.iter().enumerate() {
        let path = format!("tables[{i}] ({})", t.name);
        tables.push(lower_table(&path, t, r, action_ids, actions)?);
    }

    for (i, t) in p.tables.iter().enumerate() {
        if let Some(a) = &t.after {
            let path = format!("tables[{i}] ({}).after", t.name);
            match table_ids.get(a) {
                Some(&j) if j != i => tables[i].after = Some(j),
                Some(_) => return err(&path, "a table cannot follow itself"),
                None => return err(&path, format!("unknown table `{a}`")),
            }
        }
    }

    Ok((table_ids, tables))
}

/// What a RegisterAction may do given its array's cells: the `hi` half only on a pair, and on
/// a 1-bit array only what Tofino's single-bit stateful instructions do (set, clear or read
/// the bit, with no comparator).
fn stateful_mode(
    path: &str,
    reg: &CRegister,
    conditions: &[(SOperand, Cmp, SOperand)],
    updates: &[CUpdate],
    outputs: &[(Field, SaluOutputValue)],
) -> Result<(), IrError> {
    if !reg.pair {
        let uses_hi = conditions
            .iter()
            .any(|c| c.0 == SOperand::CellHi || c.2 == SOperand::CellHi)
            || updates.iter().any(|u| {
                u.half == ir::Half::Hi || u.a == SOperand::CellHi || u.b == SOperand::CellHi
            })
            || outputs
                .iter()
                .any(|o| matches!(o.1, SaluOutputValue::OldHi | SaluOutputValue::NewHi));
        if uses_hi {
            return err(
                path,
                format!(
                    "uses the hi half of a cell, but register array `{}` is not a pair",
                    reg.name
                ),
            );
        }
    }
    if reg.cell_bits == 1 {
        let single = |why: &str| {
            err(
                path,
                format!(
                    "register array `{}` has 1-bit cells, whose stateful ALU only sets, clears or reads the bit: {why}",
                    reg.name
                ),
            )
        };
        if !conditions.is_empty() {
            return single("it has no comparators");
        }
        if updates.len() > 1 {
            return single("one update at most");
        }
        if let Some(u) = updates.first() {
            let set_or_clear = matches!(u.a, SOperand::Const(0 | 1));
            if u.op != SaluOp::Set || !set_or_clear {
                return single("the update must `set` the constant 0 or 1");
            }
        }
        if outputs.iter().any(|o| o.1 == SaluOutputValue::Predicate) {
            return single("there is no predicate to output");
        }
    }
    Ok(())
}

/// An array is accessed from one table only (one access per packet), except that one
/// ingress table and one ghost table may share it: that is how ingress reads what the ghost
/// thread writes (Tofino2 runs both threads in the same stages; placement puts the two
/// tables in the array's stage). `applied[t]` is the thread that applies table `t`.
fn check_register_sharing(
    tables: &[CTable],
    registers: &[CRegister],
    applied: &[Option<Thread>],
) -> Result<(), IrError> {
    let mut owner: Vec<Option<usize>> = vec![None; registers.len()];
    let mut shared = vec![false; registers.len()];
    for (i, table) in tables.iter().enumerate() {
        for &reg in &table.registers {
            let Some(other) = owner[reg] else {
                owner[reg] = Some(i);
                continue;
            };
            let mut threads = [applied[other], applied[i]];
            threads.sort();
            if shared[reg] || threads != [Some(Thread::Ingress), Some(Thread::Ghost)] {
                return err(
                    &format!("tables[{i}] ({})", table.name),
                    format!(
                        "register array `{}` is already used by table `{}`; an array is \
                         accessed from one table only (one access per packet), or shared by \
                         one ingress and one ghost table",
                        registers[reg].name, tables[other].name
                    ),
                );
            }
            shared[reg] = true;
        }
    }
    Ok(())
}

/// A table placed `after` another must be applied later by the same control.
fn check_after(tables: &[CTable], flat: &[Vec<FlatUnit>; 3]) -> Result<(), IrError> {
    let position = |t: usize| {
        Thread::ALL.iter().find_map(|th| {
            flat[th.index()]
                .iter()
                .position(|u| u.unit == Unit::Table(t))
                .map(|i| (*th, i))
        })
    };
    for (i, t) in tables.iter().enumerate() {
        let Some(a) = t.after else { continue };
        let (me, other) = (position(i), position(a));
        if let (Some((th, at)), Some((oth, oat))) = (me, other) {
            if th != oth || oat > at {
                return err(
                    &format!("tables[{i}] ({}).after", t.name),
                    format!(
                        "table `{}` is applied in {} {}; `after` names a table the same \
                         control applies earlier",
                        tables[a].name,
                        oth.name(),
                        if th != oth { "only" } else { "later" }
                    ),
                );
            }
        }
    }
    Ok(())
}

fn duplicate_or_overlap(fs: &[Field]) -> Option<Field> {
    for (i, a) in fs.iter().enumerate() {
        if fs[i + 1..].iter().any(|b| fields::overlaps(*a, *b)) {
            return Some(*a);
        }
    }
    None
}

fn lower_action(
    path: &str,
    a: &ir::Action,
    r: &Resolver,
    (hash_ids, hashes): (&BTreeMap<String, usize>, &[CHash]),
    ra_ids: &BTreeMap<String, usize>,
    ras: &[CRegisterAction],
) -> Result<CAction, IrError> {
    let mut params = BTreeMap::new();
    let mut param_bits = Vec::new();
    for (k, prm) in a.params.iter().enumerate() {
        let pp = format!("{path}.params[{k}] ({})", prm.name);
        if !(1..=WIDE_MAX_BITS as u8).contains(&prm.bits) {
            return err(
                &pp,
                format!(
                    "width {} is outside 1..={WIDE_MAX_BITS} (over 32 only to `set` a wide field)",
                    prm.bits
                ),
            );
        }
        if params.insert(prm.name.clone(), k).is_some() {
            return err(&pp, "the name is used twice");
        }
        param_bits.push(prm.bits.min(32));
    }
    let cx = ActionContext {
        a,
        r,
        params,
        hash_ids,
        hashes,
        ra_ids,
        ras,
    };
    let mut out = CAction {
        name: a.name.clone(),
        arg_chunks: a
            .params
            .iter()
            .enumerate()
            .map(|(k, prm)| vec![(k, prm.bits.min(32))])
            .collect(),
        param_bits,
        ops: Vec::new(),
        operand_reads: Vec::new(),
        xbar_reads: Vec::new(),
        writes: Vec::new(),
        registers: Vec::new(),
        hashes: Vec::new(),
    };
    for (k, prim) in a.primitives.iter().enumerate() {
        let pp = format!("{path}.primitives[{k}]");
        if let Primitive::Set { dst, src } = prim {
            if r.pieces.contains_key(dst.as_str()) {
                wide_set(&pp, r, dst, src, a, &mut out)?;
                continue;
            }
        }
        let PrimitiveEffect {
            op,
            extra,
            reads,
            xbar,
            writes,
        } = lower_primitive(&cx, &pp, prim, &mut out)?;
        // Primitives act in parallel: no field is written twice or read after an
        // earlier primitive wrote it.
        for rd in reads.iter().chain(&xbar) {
            if out.writes.iter().any(|w| fields::overlaps(*w, *rd)) {
                return err(
                    &pp,
                    "reads a field an earlier primitive of the action writes; VLIW \
                     primitives of one action act in parallel",
                );
            }
        }
        for w in &writes {
            if out.writes.iter().any(|o| fields::overlaps(*o, *w)) {
                return err(
                    &pp,
                    "writes a field an earlier primitive of the action writes",
                );
            }
        }
        out.operand_reads.extend(reads);
        out.xbar_reads.extend(xbar);
        out.writes.extend(writes);
        out.ops.push(op);
        out.ops.extend(extra);
    }
    // A wide parameter no `set` cut: its low 32 bits, then the rest.
    for (k, prm) in a.params.iter().enumerate() {
        if prm.bits > 32 && out.arg_chunks[k].len() == 1 {
            out.arg_chunks[k].push((out.param_bits.len(), prm.bits - 32));
            out.param_bits.push(prm.bits - 32);
        }
    }
    Ok(out)
}

/// What one action sees while its primitives are lowered.
struct ActionContext<'a> {
    a: &'a ir::Action,
    r: &'a Resolver,
    /// The action's parameters' places by name.
    params: BTreeMap<String, usize>,
    hash_ids: &'a BTreeMap<String, usize>,
    hashes: &'a [CHash],
    ra_ids: &'a BTreeMap<String, usize>,
    ras: &'a [CRegisterAction],
}

impl ActionContext<'_> {
    /// Operand `o` of a primitive at `pp`: a field, a 32-bit constant or a parameter of at
    /// most 32 bits.
    fn value(&self, pp: &str, o: &ir::Operand) -> Result<Value, IrError> {
        Ok(match o {
            ir::Operand::Field(n) => Value::Field(self.r.field(pp, n)?),
            ir::Operand::Const(c) => match u32::try_from(*c) {
                Ok(c) => Value::Const(c),
                Err(_) => return err(pp, format!("constant {c} exceeds 32 bits")),
            },
            ir::Operand::Param(n) => match self.params.get(n) {
                Some(&k) if self.a.params[k].bits > 32 => {
                    return err(
                        pp,
                        format!(
                            "parameter `{n}` is {} bits; an ALU sees 32: only `set` of a field \
                                 of its width takes it",
                            self.a.params[k].bits
                        ),
                    )
                }
                Some(&k) => Value::Param(k),
                None => return err(pp, format!("action has no parameter `{n}`")),
            },
        })
    }
}

/// A primitive lowered: its operation (and a second one for `mirror_with_header`) and the
/// fields it reads as operands, reads through the crossbar and writes.
struct PrimitiveEffect {
    op: Op,
    extra: Option<Op>,
    reads: Vec<Field>,
    xbar: Vec<Field>,
    writes: Vec<Field>,
}

/// Lowers primitive `prim` (at `pp`) of an action whose earlier primitives made `out`,
/// noting in `out` the hash units and register arrays it uses.
fn lower_primitive(
    cx: &ActionContext,
    pp: &str,
    prim: &Primitive,
    out: &mut CAction,
) -> Result<PrimitiveEffect, IrError> {
    let mut reads = Vec::new();
    let mut xbar = Vec::new();
    let mut writes = Vec::new();
    // A primitive that lowers to two operations (`mirror_with_header`).
    let mut extra = None;
    let op = if let Some((alu, bin)) = prim.binary() {
        let dst = cx.r.writable(pp, &bin.dst)?;
        let (va, vb) = (cx.value(pp, &bin.a)?, cx.value(pp, &bin.b)?);
        reads.extend([va, vb].iter().filter_map(field_of));
        writes.push(dst);
        Op::Alu {
            op: alu,
            dst,
            a: va,
            b: vb,
        }
    } else {
        match prim {
            Primitive::Set { dst, src } => {
                let dst = cx.r.writable(pp, dst)?;
                let src = cx.value(pp, src)?;
                reads.extend(field_of(&src));
                writes.push(dst);
                Op::Set { dst, src }
            }
            Primitive::Hash { dst, hash } => {
                let dst = cx.r.writable(pp, dst)?;
                let Some(&h) = cx.hash_ids.get(hash) else {
                    return err(pp, format!("unknown hash `{hash}`"));
                };
                xbar.extend(cx.hashes[h].inputs.iter().copied());
                writes.push(dst);
                out.hashes.push(h);
                Op::Hash { dst, hash: h }
            }
            Primitive::SetEgressPort { port } => {
                let v = cx.value(pp, port)?;
                reads.extend(field_of(&v));
                writes.extend([layout::UCAST_EGRESS_PORT, layout::EGRESS_PORT_VALID]);
                Op::SetEgressPort(v)
            }
            Primitive::SetQid { qid } => {
                let v = cx.value(pp, qid)?;
                reads.extend(field_of(&v));
                writes.push(layout::QID);
                Op::SetQid(v)
            }
            Primitive::Drop { reason } => {
                writes.push(layout::DROP_REASON);
                Op::Drop(reason.reason())
            }
            Primitive::MarkEcn => {
                reads.push(layout::IPV4_ECN);
                writes.push(layout::IPV4_ECN);
                Op::MarkEcn
            }
            Primitive::Execute {
                register_action,
                index,
            } => {
                let Some(&ra) = cx.ra_ids.get(register_action) else {
                    return err(pp, format!("unknown register action `{register_action}`"));
                };
                let idx = cx.value(pp, index)?;
                xbar.extend(field_of(&idx));
                xbar.extend(cx.ras[ra].inputs.iter().copied());
                writes.extend(cx.ras[ra].outputs.iter().map(|o| o.0));
                let reg = cx.ras[ra].register;
                if out.registers.contains(&reg) {
                    return err(
                        pp,
                        "the action already accesses this register array (one access per packet)",
                    );
                }
                out.registers.push(reg);
                Op::Execute {
                    register_action: ra,
                    index: idx,
                }
            }
            Primitive::Mirror { session } => {
                let v = cx.value(pp, session)?;
                if let Value::Const(c) = v {
                    if c > 255 {
                        return err(pp, format!("mirror session {c} is outside 0..=255"));
                    }
                }
                reads.extend(field_of(&v));
                writes.extend([fields::MIRROR_SESSION, fields::MIRROR_VALID]);
                Op::Mirror(v)
            }
            Primitive::Recirculate => {
                writes.push(fields::RECIRCULATE);
                Op::Recirculate
            }
            Primitive::Resubmit { header } => {
                let h = match header {
                    None => 0,
                    Some(header) => {
                        let Some(h) = cx.r.graph_headers.iter().position(|n| n == header) else {
                            return err(
                                pp,
                                format!(
                                    "the parser graph never extracts header `{header}`, so \
                                     the second pass could not parse it"
                                ),
                            );
                        };
                        let bytes = cx.r.graph_header_bytes[h];
                        if bytes > RESUBMIT_BYTES {
                            return err(
                                pp,
                                format!(
                                    "resubmit header `{header}` is {bytes} bytes; Tofino2 \
                                     resubmits at most {RESUBMIT_BYTES}"
                                ),
                            );
                        }
                        h as u32 + 1
                    }
                };
                writes.extend([fields::RESUBMIT, fields::RESUBMIT_HEADER]);
                Op::Resubmit(h)
            }
            Primitive::MirrorWithHeader { session, header } => {
                let v = cx.value(pp, session)?;
                if let Value::Const(c) = v {
                    if c > 255 {
                        return err(pp, format!("mirror session {c} is outside 0..=255"));
                    }
                }
                let Some(h) = cx.r.graph_headers.iter().position(|n| n == header) else {
                    return err(
                        pp,
                        format!(
                            "the parser graph never extracts header `{header}`, so the \
                             egress could not parse it in front of the copy"
                        ),
                    );
                };
                if h + 1 > 15 {
                    return err(
                        pp,
                        format!(
                            "header `{header}` is header {} of the parser graph; a mirror \
                             header must be among its first 15 (the 4-bit mirror type is \
                             its place + 1)",
                            h + 1
                        ),
                    );
                }
                reads.extend(field_of(&v));
                writes.extend([
                    fields::MIRROR_SESSION,
                    fields::MIRROR_VALID,
                    fields::MIRROR_TYPE,
                ]);
                extra = Some(Op::Set {
                    dst: fields::MIRROR_TYPE,
                    src: Value::Const(h as u32 + 1),
                });
                Op::Mirror(v)
            }
            Primitive::Random { dst } => {
                let dst = cx.r.writable(pp, dst)?;
                writes.push(dst);
                Op::Random { dst }
            }
            Primitive::SetValid { header } | Primitive::SetInvalid { header } => {
                // The header's valid bit, which only these primitives (and the parser)
                // write; the deparser emits what it says.
                let Some(&(bit, _)) = cx.r.fields.get(&format!("{header}.$valid")) else {
                    return err(pp, format!("unknown header `{header}`"));
                };
                writes.push(bit);
                let valid = matches!(prim, Primitive::SetValid { .. });
                Op::Set {
                    dst: bit,
                    src: Value::Const(valid as u32),
                }
            }
            _ => unreachable!("binary primitives are handled above"),
        }
    };
    Ok(PrimitiveEffect {
        op,
        extra,
        reads,
        xbar,
        writes,
    })
}

/// `set` of a field wider than 32 bits: one move per run of bits that lies in one container
/// of the destination and one of the source (a constant splits by the destination's
/// pieces), as Tofino2's compiler splits a wide assignment over containers.
fn wide_set(
    pp: &str,
    r: &Resolver,
    dst: &str,
    src: &ir::Operand,
    a: &ir::Action,
    out: &mut CAction,
) -> Result<(), IrError> {
    let (dst_pieces, access) = r.pieces[dst].clone();
    if access != Access::ReadWrite {
        return err(pp, format!("field `{dst}` is read-only"));
    }
    let bits: u32 = dst_pieces.iter().map(|f| f.bits as u32).sum();
    // (destination slice, source) pairs, from the least significant bits up.
    let mut moves: Vec<(Field, Value)> = Vec::new();
    let mut reads = Vec::new();
    match src {
        ir::Operand::Const(c) => {
            if !fits(*c, bits) {
                return err(
                    pp,
                    format!("constant {c} does not fit `{dst}`'s {bits} bits"),
                );
            }
            let mut below = 0u32;
            for f in dst_pieces.iter().rev() {
                let v = (*c >> below) & ((1u64 << f.bits) - 1);
                moves.push((*f, Value::Const(v as u32)));
                below += f.bits as u32;
            }
        }
        ir::Operand::Field(n) => {
            let src_pieces = r.pieces(pp, n)?;
            let src_bits: u32 = src_pieces.iter().map(|f| f.bits as u32).sum();
            if src_bits != bits {
                return err(
                    pp,
                    format!(
                        "`{dst}` is {bits} bits but `{n}` is {src_bits}; `set` copies equal widths"
                    ),
                );
            }
            // Two cursors from the least significant bit: cut at every piece boundary of
            // either side.
            let (mut d, mut s) = (dst_pieces.iter().rev(), src_pieces.iter().rev());
            let (mut df, mut sf) = (*d.next().unwrap(), *s.next().unwrap());
            loop {
                let n = df.bits.min(sf.bits);
                let dpart = Field::at(df.container, df.shift, n);
                let spart = Field::at(sf.container, sf.shift, n);
                moves.push((dpart, Value::Field(spart)));
                reads.push(spart);
                df = Field::at(df.container, df.shift + n, df.bits - n);
                sf = Field::at(sf.container, sf.shift + n, sf.bits - n);
                if df.bits == 0 {
                    match d.next() {
                        Some(f) => df = *f,
                        None => break,
                    }
                }
                if sf.bits == 0 {
                    sf = *s.next().expect("equal widths");
                }
            }
        }
        ir::Operand::Param(n) => {
            let Some(k) = a.params.iter().position(|p| &p.name == n) else {
                return err(pp, format!("action has no parameter `{n}`"));
            };
            if a.params[k].bits as u32 != bits {
                return err(
                    pp,
                    format!(
                        "`{dst}` is {bits} bits but parameter `{n}` is {}; `set` copies equal widths",
                        a.params[k].bits
                    ),
                );
            }
            // The parameter's chunks follow the destination's containers (least
            // significant first): its lowest chunk keeps slot k, the others get new slots.
            let cut: Vec<u8> = dst_pieces.iter().rev().map(|f| f.bits).collect();
            let have: Vec<u8> = out.arg_chunks[k].iter().map(|c| c.1).collect();
            if have.len() == 1 && bits > 32 {
                let mut chunks = vec![(k, cut[0])];
                out.param_bits[k] = cut[0];
                for &b in &cut[1..] {
                    chunks.push((out.param_bits.len(), b));
                    out.param_bits.push(b);
                }
                out.arg_chunks[k] = chunks;
            } else if have != cut {
                return err(
                    pp,
                    format!(
                        "parameter `{n}` is already cut as {have:?} bits (least significant \
                         first) for another field; `{dst}` needs {cut:?}"
                    ),
                );
            }
            for (f, &(slot, _)) in dst_pieces.iter().rev().zip(&out.arg_chunks[k]) {
                moves.push((*f, Value::Param(slot)));
            }
        }
    }
    for rd in &reads {
        if out.writes.iter().any(|w| fields::overlaps(*w, *rd)) {
            return err(
                pp,
                "reads a field an earlier primitive of the action writes; VLIW \
                 primitives of one action act in parallel",
            );
        }
    }
    for (w, _) in &moves {
        if out.writes.iter().any(|o| fields::overlaps(*o, *w)) {
            return err(
                pp,
                "writes a field an earlier primitive of the action writes",
            );
        }
    }
    out.operand_reads.extend(reads);
    for (dst, src) in moves {
        out.writes.push(dst);
        out.ops.push(Op::Set { dst, src });
    }
    Ok(())
}

fn field_of(v: &Value) -> Option<Field> {
    match v {
        Value::Field(f) => Some(*f),
        _ => None,
    }
}

fn lower_call(
    path: &str,
    c: &ir::ActionCall,
    allowed: &[usize],
    action_ids: &BTreeMap<String, usize>,
    actions: &[CAction],
) -> Result<Call, IrError> {
    let Some(&action) = action_ids.get(&c.action) else {
        return err(path, format!("unknown action `{}`", c.action));
    };
    if !allowed.contains(&action) {
        return err(
            path,
            format!("action `{}` is not one of the table's actions", c.action),
        );
    }
    let chunks = &actions[action].arg_chunks;
    if c.args.len() != chunks.len() {
        return err(
            path,
            format!(
                "action `{}` takes {} arguments, {} given",
                c.action,
                chunks.len(),
                c.args.len()
            ),
        );
    }
    let mut args = vec![0u32; actions[action].param_bits.len()];
    for (k, (&v, chunk)) in c.args.iter().zip(chunks).enumerate() {
        let b: u32 = chunk.iter().map(|c| c.1 as u32).sum();
        if !fits(v, b) {
            return err(path, format!("argument {k} ({v}) does not fit in {b} bits"));
        }
        // A wide argument is cut into its slots, least significant chunk first.
        let mut below = 0u32;
        for &(slot, bits) in chunk {
            args[slot] = ((v >> below) & ((1u64 << bits) - 1)) as u32;
            below += bits as u32;
        }
    }
    Ok(Call { action, args })
}

fn lower_table(
    path: &str,
    t: &ir::Table,
    r: &Resolver,
    action_ids: &BTreeMap<String, usize>,
    actions: &[CAction],
) -> Result<CTable, IrError> {
    let key_pieces = t
        .keys
        .iter()
        .map(|k| r.pieces(&format!("{path}.keys"), k))
        .collect::<Result<Vec<_>, _>>()?;
    let keys: Vec<Field> = key_pieces.iter().flatten().copied().collect();
    if !keys.is_empty() && t.size == 0 {
        return err(path, "a table with keys needs a size of at least 1");
    }
    if t.entries.len() as u64 > t.size as u64 {
        return err(
            path,
            format!("{} entries do not fit in size {}", t.entries.len(), t.size),
        );
    }
    if t.actions.is_empty() {
        return err(path, "a table needs at least one action");
    }
    let mut allowed = Vec::new();
    for a in &t.actions {
        match action_ids.get(a) {
            Some(&i) if !allowed.contains(&i) => allowed.push(i),
            Some(_) => return err(path, format!("action `{a}` is listed twice")),
            None => return err(path, format!("unknown action `{a}`")),
        }
    }
    let default = lower_call(
        &format!("{path}.default_action"),
        &t.default_action,
        &allowed,
        action_ids,
        actions,
    )?;
    let selector = match &t.selector {
        None => None,
        Some(sel) => {
            let sp = format!("{path}.selector");
            if keys.is_empty() {
                return err(
                    &sp,
                    "a selector needs a keyed table whose entries name groups",
                );
            }
            if sel.inputs.is_empty() {
                return err(&sp, "a selector needs inputs to hash");
            }
            if sel.groups == 0 {
                return err(&sp, "a selector needs at least one group");
            }
            if !(1..=SELECTOR_MAX_MEMBERS).contains(&sel.max_members) {
                return err(
                    &sp,
                    format!(
                        "max_members {} is outside 1..={SELECTOR_MAX_MEMBERS}",
                        sel.max_members
                    ),
                );
            }
            let inputs: Vec<Field> = sel
                .inputs
                .iter()
                .map(|f| r.pieces(&format!("{sp}.inputs"), f))
                .collect::<Result<Vec<_>, _>>()?
                .concat();
            Some(CSelector {
                inputs,
                groups: sel.groups,
                max_members: sel.max_members,
            })
        }
    };
    let mut exact = BTreeMap::new();
    let mut ternary = Vec::new();
    let mut groups = 0u32;
    for (k, e) in t.entries.iter().enumerate() {
        let ep = format!("{path}.entries[{k}]");
        if e.key.len() != key_pieces.len() {
            return err(
                &ep,
                format!("{} key values for {} keys", e.key.len(), key_pieces.len()),
            );
        }
        let call = match (e.members.is_empty(), e.action.is_none(), &selector) {
            (true, _, _) => {
                Target::Call(lower_call(&ep, &e.action, &allowed, action_ids, actions)?)
            }
            (false, false, _) => {
                return err(
                    &ep,
                    "an entry names either an action or a group of members, not both",
                )
            }
            (false, true, None) => {
                return err(&ep, "only a table with a selector has groups of members")
            }
            (false, true, Some(sel)) => {
                groups += 1;
                if groups > sel.groups {
                    return err(
                        &ep,
                        format!("more groups than the selector's {}", sel.groups),
                    );
                }
                if e.members.len() as u32 > sel.max_members {
                    return err(
                        &ep,
                        format!(
                            "{} members; the selector's groups have at most {}",
                            e.members.len(),
                            sel.max_members
                        ),
                    );
                }
                let members = e
                    .members
                    .iter()
                    .enumerate()
                    .map(|(m, c)| {
                        lower_call(
                            &format!("{ep}.members[{m}]"),
                            c,
                            &allowed,
                            action_ids,
                            actions,
                        )
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Target::Group(members)
            }
        };
        let mut pairs = Vec::new();
        for (n, (kv, pieces)) in e.key.iter().zip(&key_pieces).enumerate() {
            // A key wider than 32 bits is matched as its pieces, one per container.
            let bits: u32 = pieces.iter().map(|f| f.bits as u32).sum();
            let full = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            if !fits(kv.value, bits) {
                return err(
                    &ep,
                    format!("value {} does not fit in {} bits", kv.value, bits),
                );
            }
            let last = n + 1 == key_pieces.len();
            let mask =
                match (t.kind, kv.mask) {
                    (MatchKind::Exact, Some(_)) => {
                        return err(&ep, "an exact table's entries have no masks")
                    }
                    (MatchKind::Lpm, Some(_)) if !last => return err(
                        &ep,
                        "only the last key of an lpm table has a prefix; the others match exactly",
                    ),
                    (_, None) => full,
                    (MatchKind::Ternary | MatchKind::Lpm, Some(m)) => {
                        if !fits(m, bits) {
                            return err(&ep, format!("mask {m:#x} does not fit in {} bits", bits));
                        }
                        // A prefix: ones from the field's top bit down, then zeros, so the
                        // bits it leaves out are a run of low ones.
                        let left_out = !m & full;
                        if t.kind == MatchKind::Lpm && left_out & left_out.wrapping_add(1) != 0 {
                            return err(
                                &ep,
                                format!("mask {m:#x} is not a prefix of the {}-bit key", bits),
                            );
                        }
                        m
                    }
                };
            let mut below = bits;
            for f in pieces {
                below -= f.bits as u32;
                let part = |v: u64| ((v >> below) & ((1u64 << f.bits) - 1)) as u32;
                pairs.push((part(kv.value), part(mask)));
            }
        }
        match t.kind {
            MatchKind::Exact => {
                let key: Vec<u32> = pairs.iter().map(|p| p.0).collect();
                if exact.insert(key, call).is_some() {
                    return err(&ep, "an earlier entry has the same key");
                }
            }
            MatchKind::Ternary | MatchKind::Lpm => ternary.push((pairs, call)),
        }
    }
    if t.kind == MatchKind::Lpm {
        if keys.is_empty() {
            return err(path, "an lpm table needs a key to match by prefix");
        }
        // Longest prefix first; entries of equal length keep their order. The TCAM then
        // finds the longest matching prefix as its highest-priority hit.
        // The last key's prefix may span pieces: count its ones over all of them (the
        // other keys' masks are full, the same for every entry).
        ternary.sort_by_key(|(pairs, _)| {
            std::cmp::Reverse(pairs.iter().map(|&(_, m)| m.count_ones()).sum::<u32>())
        });
    }
    let mut registers = Vec::new();
    for &a in &allowed {
        for &reg in &actions[a].registers {
            if !registers.contains(&reg) {
                registers.push(reg);
            }
        }
    }
    Ok(CTable {
        name: t.name.clone(),
        kind: t.kind,
        keys,
        size: t.size,
        actions: allowed,
        default,
        exact,
        ternary,
        ternary_index: TernaryIndex::default(),
        registers,
        selector,
        stage: match t.stage {
            Some(s) if s >= MAU_STAGES => {
                return err(
                    &format!("{path}.stage"),
                    format!("stage {s} is outside 0..{MAU_STAGES} (Tofino2's MAU stages)"),
                )
            }
            s => s.map(|s| s as usize),
        },
        after: None,
    })
}

struct ControlLowering<'a> {
    r: &'a Resolver,
    table_ids: &'a BTreeMap<String, usize>,
    applied: Vec<Option<Thread>>,
    gateways: Vec<CGateway>,
    phv: &'a PhvParams,
}

impl ControlLowering<'_> {
    fn block(&mut self, th: Thread, path: &str, body: &[ir::Stmt]) -> Result<Vec<CStmt>, IrError> {
        let mut out = Vec::new();
        for (k, s) in body.iter().enumerate() {
            let sp = format!("{path}[{k}]");
            match s {
                ir::Stmt::Apply(name) => {
                    let Some(&t) = self.table_ids.get(name) else {
                        return err(&sp, format!("unknown table `{name}`"));
                    };
                    if let Some(prev) = self.applied[t] {
                        return err(
                            &sp,
                            format!(
                                "table `{name}` is already applied in {}; a table is applied once",
                                prev.name()
                            ),
                        );
                    }
                    self.applied[t] = Some(th);
                    out.push(CStmt::Apply(t));
                }
                ir::Stmt::If {
                    name,
                    cond,
                    then,
                    otherwise,
                } => {
                    let gname = name
                        .clone()
                        .unwrap_or_else(|| format!("{}_if{}", th.name(), self.gateways.len()));
                    let gp = format!("{sp} ({gname})");
                    let field = self.r.field(&gp, &cond.field)?;
                    let value = match &cond.value {
                        ir::Operand::Field(n) => Value::Field(self.r.field(&gp, n)?),
                        ir::Operand::Const(c) if fits(*c, field.bits as u32) => {
                            Value::Const(*c as u32)
                        }
                        ir::Operand::Const(c) => {
                            return err(
                                &gp,
                                format!(
                                    "constant {c} does not fit in the field's {} bits",
                                    field.bits
                                ),
                            )
                        }
                        ir::Operand::Param(_) => {
                            return err(&gp, "a gateway compares with a field or a constant")
                        }
                    };
                    let Some(bit) = fields::gateway_bit(self.phv, self.gateways.len()) else {
                        return err(&gp, "too many gateways for the dark PHV containers");
                    };
                    let g = self.gateways.len();
                    self.gateways.push(CGateway {
                        name: gname,
                        field,
                        cmp: cond.cmp,
                        value,
                        bit,
                    });
                    let then = self.block(th, &format!("{sp}.then"), then)?;
                    let otherwise = self.block(th, &format!("{sp}.else"), otherwise)?;
                    out.push(CStmt::If {
                        gateway: g,
                        then,
                        otherwise,
                    });
                }
            }
        }
        Ok(out)
    }
}

fn flatten(body: &[CStmt], guards: &mut Vec<(usize, bool)>, out: &mut Vec<FlatUnit>) {
    for s in body {
        match s {
            CStmt::Apply(t) => out.push(FlatUnit {
                unit: Unit::Table(*t),
                guards: guards.clone(),
            }),
            CStmt::If {
                gateway,
                then,
                otherwise,
            } => {
                out.push(FlatUnit {
                    unit: Unit::Gateway(*gateway),
                    guards: guards.clone(),
                });
                guards.push((*gateway, true));
                flatten(then, guards, out);
                guards.pop();
                guards.push((*gateway, false));
                flatten(otherwise, guards, out);
                guards.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::blocks::{forwarding, forwarding_ingress};
    use crate::program::ir::{Action, Operand, Stmt, Table};

    /// A table with `entries` of (diffserv value, mask, port value, port mask).
    fn table(entries: &[(u64, u64, u64, u64)]) -> CTable {
        let mut t = Table::new(
            "classify",
            MatchKind::Ternary,
            &["ipv4.diffserv", "l4.dst_port"],
            1024,
        )
        .action("set_queue")
        .default_action("set_queue", &[0]);
        for (k, &(d, dm, p, pm)) in entries.iter().enumerate() {
            t = t.ternary_entry(&[(d, dm), (p, pm)], "set_queue", &[k as u64 % 8]);
        }
        let program = forwarding("index")
            .action(
                Action::new("set_queue")
                    .param("qid", 7)
                    .prim(Primitive::SetQid {
                        qid: Operand::param("qid"),
                    }),
            )
            .table(t)
            .ingress(forwarding_ingress(vec![Stmt::apply("classify")]))
            .build_unchecked();
        let checked = check(&program).unwrap();
        let t = checked.tables.iter().find(|t| t.name == "classify");
        t.expect("the table").clone()
    }

    /// The entry a linear scan finds for key values `x`, and the one the index finds.
    fn both(t: &CTable, x: [u32; 2]) -> (Option<usize>, Option<usize>) {
        let hits = |i: &usize| {
            t.ternary[*i]
                .0
                .iter()
                .zip(x)
                .all(|(&(v, m), x)| x & m == v & m)
        };
        let linear = (0..t.ternary.len()).find(hits);
        let indexed = t
            .ternary_index
            .candidates(t, |c| x[c])
            .expect("indexed")
            .iter()
            .map(|&i| i as usize)
            .find(hits);
        (linear, indexed)
    }

    #[test]
    fn the_ternary_index_finds_the_entry_a_scan_in_priority_order_finds() {
        // The port matched in full by every entry (some twice, with different diffserv
        // masks, so priority among them matters); diffserv anywhere from exact to ignored.
        // A small xorshift: the test needs varied values, not good ones.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let entries: Vec<(u64, u64, u64, u64)> = (0..60)
            .map(|_| {
                let port = next() % 12;
                let masks = [0xff, 0xfc, 0xf0, 0];
                (next() % 256, masks[next() as usize % 4], port, 0xffff)
            })
            .collect();
        let t = table(&entries);
        for _ in 0..5_000 {
            let x = [(next() % 256) as u32, (next() % 14) as u32];
            let (linear, indexed) = both(&t, x);
            assert_eq!(linear, indexed, "{x:?}");
        }
        // A clone starts without the index and builds its own.
        let mut fewer = t.clone();
        fewer.ternary.truncate(20);
        for port in 0..14 {
            for d in [0u32, 46 << 2, 255] {
                let (linear, indexed) = both(&fewer, [d, port]);
                assert_eq!(linear, indexed);
            }
        }
    }

    #[test]
    fn small_tables_and_tables_without_a_full_component_are_scanned() {
        let few: Vec<_> = (0..15).map(|k| (k, 0xff, k, 0xffff)).collect();
        let t = table(&few);
        assert!(t.ternary_index.candidates(&t, |_| 0).is_none());
        // Every component partly masked somewhere: no component to group on.
        let mut many: Vec<_> = (0..40).map(|k| (k, 0xff, k, 0xffff)).collect();
        many.push((0, 0, 0, 0xff00));
        let t = table(&many);
        assert!(t.ternary_index.candidates(&t, |_| 0).is_none());
    }
}
