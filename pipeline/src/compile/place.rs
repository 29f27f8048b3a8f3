//! Dependency analysis and placement of a checked program onto the 20 MAU stages.
//!
//! Every table and gateway ("unit") gets a per-stage resource demand (sizing rules in
//! `docs/placement.md`). Units are placed greedily in program order, ingress then ghost then
//! egress, each into the earliest stage its dependencies allow that still has room for it:
//! a match or action dependency puts the later unit in a later stage; a reverse-read or
//! control dependency allows the same stage. A stage of a gress is match-dependent when one
//! of its units match-depends on a unit in an earlier stage and no match-dependent stage lies
//! between them (otherwise the result could not be ready in time); the others are
//! action-dependent. A table bigger than a whole stage is split over stages ([`Split`]).
//! That gives a [`Placement`] per gress, whose latency is the existing
//! `Placement::stage_cycles` rule. Ghost units are timed with ingress: the two threads run in
//! lockstep. Anything that does not fit becomes a [`NoFit`] naming resource, stage and unit;
//! so does a parser graph over the parser's TCAM rows or a state's extractors
//! ([`parser_overflow`]), which placement checks first.

use crate::hw::fields;
use crate::hw::parser::{self, Graph};
use crate::hw::phv::Field;
use crate::hw::stage::{Dependency, Placement};
use crate::program::check::{Checked, Thread, Unit};
use crate::program::ir::MatchKind;
use serde::Serialize;

/// A per-stage resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Sram,
    Tcam,
    MapRam,
    Salu,
    LogicalIds,
    TernaryIds,
    Gateways,
    ExactXbarBytes,
    TernaryXbarBytes,
    HashBits,
    ActionDataBytes,
    InstructionRowsIngress,
    InstructionRowsEgress,
}

/// Number of per-stage resources.
pub const RESOURCES: usize = 13;

impl Resource {
    pub const ALL: [Resource; RESOURCES] = [
        Resource::Sram,
        Resource::Tcam,
        Resource::MapRam,
        Resource::Salu,
        Resource::LogicalIds,
        Resource::TernaryIds,
        Resource::Gateways,
        Resource::ExactXbarBytes,
        Resource::TernaryXbarBytes,
        Resource::HashBits,
        Resource::ActionDataBytes,
        Resource::InstructionRowsIngress,
        Resource::InstructionRowsEgress,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Resource::Sram => "sram",
            Resource::Tcam => "tcam",
            Resource::MapRam => "map_ram",
            Resource::Salu => "salu",
            Resource::LogicalIds => "logical_ids",
            Resource::TernaryIds => "ternary_ids",
            Resource::Gateways => "gateways",
            Resource::ExactXbarBytes => "exact_xbar_bytes",
            Resource::TernaryXbarBytes => "ternary_xbar_bytes",
            Resource::HashBits => "hash_bits",
            Resource::ActionDataBytes => "action_data_bytes",
            Resource::InstructionRowsIngress => "instruction_rows_ingress",
            Resource::InstructionRowsEgress => "instruction_rows_egress",
        }
    }
}

/// Amounts of each per-stage resource, indexed by `Resource as usize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage(pub [u32; RESOURCES]);

impl Usage {
    pub fn get(&self, r: Resource) -> u32 {
        self.0[r as usize]
    }
    fn add(&mut self, r: Resource, n: u32) {
        self.0[r as usize] = self.0[r as usize].saturating_add(n);
    }
    pub fn plus(&self, o: &Usage) -> Usage {
        Usage(std::array::from_fn(|i| self.0[i].saturating_add(o.0[i])))
    }
    /// The first resource where `self` exceeds `limit`.
    pub fn first_excess(&self, limit: &Usage) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|&r| self.get(r) > limit.get(r))
    }
}

/// Per-stage budgets and other placement limits of the chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub stages: usize,
    pub per_stage: Usage,
    /// Data RAMs one register array may use (one half of a stage).
    pub register_array_rams: u32,
}

impl Budget {
    /// Tofino2 (JBay). Sources in `docs/placement.md`.
    pub fn tofino2() -> Budget {
        let mut u = Usage::default();
        for (r, n) in [
            (Resource::Sram, 80),
            (Resource::Tcam, 24),
            (Resource::MapRam, 48),
            (Resource::Salu, 4),
            (Resource::LogicalIds, 16),
            (Resource::TernaryIds, 8),
            (Resource::Gateways, 16),
            (Resource::ExactXbarBytes, 128),
            (Resource::TernaryXbarBytes, 66),
            (Resource::HashBits, 8 * 52),
            (Resource::ActionDataBytes, 128),
            (Resource::InstructionRowsIngress, 32),
            (Resource::InstructionRowsEgress, 32),
        ] {
            u.0[r as usize] = n;
        }
        Budget {
            stages: 20,
            per_stage: u,
            register_array_rams: 23,
        }
    }
}

/// SRAM geometry: 1024 words of 128 bits.
pub const SRAM_WORDS: u32 = 1024;
pub const SRAM_BITS: u32 = 128;
/// TCAM geometry: 512 entries of 44 bits.
pub const TCAM_ENTRIES: u32 = 512;
pub const TCAM_BITS: u32 = 44;
/// Most exact-match entries packed into one RAM word.
pub const MAX_ENTRIES_PER_WORD: u32 = 9;
/// Ways the placer gives an exact table at most (the compiler allows up to 8).
pub const MAX_WAYS: u32 = 4;
/// Bits of an exact-match entry besides the key: 4 version/valid bits.
pub const ENTRY_OVERHEAD_BITS: u32 = 4;
/// Action data up to this many bits is kept in the match entry (immediate).
pub const IMMEDIATE_BITS: u32 = 32;
/// Members one selector RAM word holds (`[p4c] bf-asm` `SELECTOR_PORTS_PER_WORD`).
pub const SELECTOR_MEMBERS_PER_WORD: u32 = 120;
/// Hash bits a fair-mode selector uses (p4c `bf-p4c/specs/mau_spec.h`: fair 14, resilient 51).
pub const SELECTOR_HASH_BITS: u32 = 14;

/// How a unit is laid out, for the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Allocation {
    pub name: String,
    pub thread: &'static str,
    /// exact, ternary, keyless or gateway.
    pub kind: &'static str,
    pub stage: usize,
    pub entries: u32,
    pub key_bits: u32,
    /// Bits of one match entry (exact) and entries per RAM word.
    pub entry_bits: u32,
    pub entries_per_word: u32,
    pub ways: u32,
    pub match_rams: u32,
    pub action_data_rams: u32,
    pub ternary_indirection_rams: u32,
    pub tcams: u32,
    pub register_rams: u32,
    /// Action selector RAMs (group membership words).
    pub selector_rams: u32,
    /// Which part of a table split over stages this is (from 1), and of how many; 1 of 1
    /// for a table in one stage.
    pub part: u32,
    pub parts: u32,
    pub usage: Usage,
}

/// Why a program does not fit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NoFit {
    /// A [`Resource`] name, `stages`, `register_array_rams`, `phv_normal_<width>`,
    /// `parser_tcam_rows` or `parser_extractors`.
    pub resource: String,
    pub stage: Option<usize>,
    /// The table or gateway that could not be placed (or the metadata field that found no
    /// PHV container, or the parser state over a parser limit).
    pub unit: String,
    pub needed: u32,
    pub available: u32,
    pub detail: String,
}

impl std::fmt::Display for NoFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` does not fit: {}", self.unit, self.resource)?;
        if let Some(s) = self.stage {
            write!(f, " in stage {s}")?;
        }
        write!(
            f,
            " needs {} of {} ({})",
            self.needed, self.available, self.detail
        )
    }
}

fn ceil_log2(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

fn bytes_of(fs: &[Field]) -> u32 {
    fs.iter().map(|f| fields::field_bytes(*f)).sum()
}

/// Resource demand and layout of one unit.
pub fn allocate(
    p: &Checked,
    unit: Unit,
    thread: Thread,
    budget: &Budget,
) -> Result<Allocation, NoFit> {
    allocate_sized(p, unit, thread, budget, None)
}

/// Resource demand of `unit`, as a table of `size` entries when given (one part of a table
/// split over stages) instead of the table's own size.
fn allocate_sized(
    p: &Checked,
    unit: Unit,
    thread: Thread,
    budget: &Budget,
    size: Option<u32>,
) -> Result<Allocation, NoFit> {
    let mut a = Allocation {
        name: p.unit_name(unit).to_string(),
        thread: thread.name(),
        kind: "gateway",
        stage: 0,
        entries: 0,
        key_bits: 0,
        entry_bits: 0,
        entries_per_word: 0,
        ways: 0,
        match_rams: 0,
        action_data_rams: 0,
        ternary_indirection_rams: 0,
        tcams: 0,
        register_rams: 0,
        selector_rams: 0,
        part: 1,
        parts: 1,
        usage: Usage::default(),
    };
    let u = &mut a.usage;
    let t = match unit {
        Unit::Gateway(g) => {
            u.add(Resource::Gateways, 1);
            u.add(Resource::LogicalIds, 1);
            u.add(Resource::ExactXbarBytes, bytes_of(&p.gateways[g].reads()));
            return Ok(a);
        }
        Unit::Table(t) => &p.tables[t],
    };
    let size = size.unwrap_or(t.size);
    a.entries = size;
    a.key_bits = t.key_bits();
    u.add(Resource::LogicalIds, 1);
    let rows = match thread {
        Thread::Egress => Resource::InstructionRowsEgress,
        _ => Resource::InstructionRowsIngress,
    };
    u.add(rows, t.actions.len() as u32);
    let data_bits = t
        .actions
        .iter()
        .map(|&i| {
            p.actions[i]
                .param_bits
                .iter()
                .map(|&b| b as u32)
                .sum::<u32>()
        })
        .max()
        .unwrap_or(0);
    u.add(Resource::ActionDataBytes, data_bits.div_ceil(8));
    let select_bits = ceil_log2(t.actions.len() as u32);
    let immediate = match &t.selector {
        Some(sel) => {
            // An action profile behind a selector: the entry holds a group pointer, the
            // group's words in the selector RAMs say which members are live, and each
            // member's action data sits in the profile's RAMs.
            let words = sel.max_members.div_ceil(SELECTOR_MEMBERS_PER_WORD);
            a.selector_rams = sel.groups.saturating_mul(words).div_ceil(SRAM_WORDS);
            if data_bits > 0 {
                let slot = data_bits.next_power_of_two().max(8) as u64;
                let members = sel.groups as u64 * sel.max_members as u64;
                let rams = (members * slot).div_ceil((SRAM_WORDS * SRAM_BITS) as u64);
                a.action_data_rams = u32::try_from(rams).unwrap_or(u32::MAX);
            }
            // Each selector RAM is a synthetic two-port RAM with a map RAM; the selection
            // runs in a meter ALU; fair mode hashes 14 bits.
            u.add(Resource::MapRam, a.selector_rams);
            u.add(Resource::Salu, 1);
            u.add(Resource::HashBits, SELECTOR_HASH_BITS);
            u.add(Resource::ExactXbarBytes, bytes_of(&sel.inputs));
            ceil_log2(sel.groups)
        }
        None if data_bits <= IMMEDIATE_BITS => data_bits,
        None => 0,
    };
    if t.selector.is_none() && data_bits > IMMEDIATE_BITS && size > 0 {
        // Direct action data: one slot per entry, slots a power of two of at least 8 bits.
        let slot = data_bits.next_power_of_two().max(8);
        let per_word = (SRAM_BITS / slot).max(1);
        let words = slot.div_ceil(SRAM_BITS);
        a.action_data_rams = size.div_ceil(SRAM_WORDS * per_word).saturating_mul(words);
    }
    let keyed = !t.keys.is_empty() && size > 0;
    match (t.kind, keyed) {
        (_, false) => a.kind = "keyless",
        (MatchKind::Exact, true) => {
            a.kind = "exact";
            a.entry_bits = a.key_bits + ENTRY_OVERHEAD_BITS + select_bits + immediate;
            let words_per_entry = a.entry_bits.div_ceil(SRAM_BITS);
            a.entries_per_word = if words_per_entry > 1 {
                1
            } else {
                (SRAM_BITS / a.entry_bits).min(MAX_ENTRIES_PER_WORD)
            };
            let groups = size.div_ceil(SRAM_WORDS * a.entries_per_word);
            a.match_rams = groups.saturating_mul(words_per_entry);
            a.ways = groups.min(MAX_WAYS);
            let rams_per_way = groups.div_ceil(a.ways);
            // Each way selects a word (10 bits) and a RAM within the way.
            u.add(Resource::HashBits, a.ways * (10 + ceil_log2(rams_per_way)));
            u.add(Resource::ExactXbarBytes, bytes_of(&t.keys));
        }
        (MatchKind::Ternary | MatchKind::Lpm, true) => {
            a.kind = if t.kind == MatchKind::Lpm {
                "lpm"
            } else {
                "ternary"
            };
            u.add(Resource::TernaryIds, 1);
            a.tcams = a
                .key_bits
                .div_ceil(TCAM_BITS)
                .saturating_mul(size.div_ceil(TCAM_ENTRIES));
            u.add(Resource::Tcam, a.tcams);
            u.add(Resource::TernaryXbarBytes, bytes_of(&t.keys));
            let tind_bits = select_bits + immediate;
            if tind_bits > 0 {
                let slot = tind_bits.next_power_of_two();
                a.ternary_indirection_rams = size.div_ceil(SRAM_WORDS * (SRAM_BITS / slot));
            }
        }
    }
    // Hash units and stateful-ALU inputs come in through the exact crossbar.
    let mut xbar: Vec<Field> = Vec::new();
    let mut hash_bits = 0;
    for &ai in &t.actions {
        for f in &p.actions[ai].xbar_reads {
            if !xbar.contains(f) {
                xbar.push(*f);
            }
        }
        for &h in &p.actions[ai].hashes {
            hash_bits += p.hashes[h].algorithm.bits();
        }
    }
    u.add(Resource::ExactXbarBytes, bytes_of(&xbar));
    u.add(Resource::HashBits, hash_bits);
    // A ghost table's arrays shared with an ingress table are that table's: the two sit in
    // one stage and use the array's RAMs and stateful ALU, counted once, with ingress.
    let own_registers: Vec<usize> = t
        .registers
        .iter()
        .copied()
        .filter(|&r| thread != Thread::Ghost || ingress_sharer(p, r).is_none())
        .collect();
    for &r in &own_registers {
        let reg = &p.registers[r];
        let data = reg.total_bits().div_ceil((SRAM_WORDS * SRAM_BITS) as u64);
        let data = u32::try_from(data).unwrap_or(u32::MAX);
        if data > budget.register_array_rams {
            return Err(NoFit {
                resource: "register_array_rams".into(),
                stage: None,
                unit: a.name.clone(),
                needed: data,
                available: budget.register_array_rams,
                detail: format!(
                    "register array `{}` ({} x {} b{}) must fit in one half of a stage",
                    reg.name,
                    reg.size,
                    reg.cell_bits,
                    if reg.pair { " pairs" } else { "" }
                ),
            });
        }
        a.register_rams += data;
        // One spare RAM per array; every stateful RAM needs a map RAM.
        u.add(Resource::MapRam, data + 1);
        u.add(Resource::Salu, 1);
    }
    // Saturating: an absurd size must become a verdict, not an overflow.
    let sram = a
        .match_rams
        .saturating_add(a.action_data_rams)
        .saturating_add(a.ternary_indirection_rams)
        .saturating_add(a.selector_rams);
    let register_srams = a.register_rams + own_registers.len() as u32;
    u.add(Resource::Sram, sram.saturating_add(register_srams));
    Ok(a)
}

/// The ingress flat unit (index into `p.flat[Ingress]`) of the table that accesses register
/// array `r`, when a ghost table shares it (`check` allows one ingress and one ghost table
/// per array).
pub fn ingress_sharer(p: &Checked, r: usize) -> Option<usize> {
    let uses = |t: usize| p.tables[t].registers.contains(&r);
    let ghost_uses = p.flat[Thread::Ghost.index()]
        .iter()
        .any(|fu| matches!(fu.unit, Unit::Table(t) if uses(t)));
    if !ghost_uses {
        return None;
    }
    p.flat[Thread::Ingress.index()]
        .iter()
        .position(|fu| matches!(fu.unit, Unit::Table(t) if uses(t)))
}

/// For a table sharing a register array with an ingress table: the array and the stage that
/// ingress table was placed in (`None` if it was not); `None` for any other unit.
fn shared_stage(p: &Checked, placed: &Placed, unit: Unit) -> Option<(usize, Option<usize>)> {
    let Unit::Table(t) = unit else { return None };
    p.tables[t].registers.iter().find_map(|&r| {
        ingress_sharer(p, r).map(|i| (r, placed.stage_of[Thread::Ingress.index()][i]))
    })
}

/// Kinds of dependency between two units of one thread, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DepKind {
    /// The later unit matches on (or hashes, or feeds a stateful ALU with) a field the
    /// earlier one writes: a later stage, and a match-dependent stage in between.
    Match,
    /// The later unit's actions read or write a field the earlier one writes: a later stage.
    Action,
    /// The later unit writes a field the earlier one reads: the same stage or later.
    ReverseRead,
    /// The later unit runs only on the earlier gateway's outcome: the same stage or later.
    Control,
}

impl DepKind {
    /// Whether the later unit must be in a strictly later stage.
    pub fn needs_later_stage(self) -> bool {
        matches!(self, DepKind::Match | DepKind::Action)
    }
}

/// A dependency between units `from` and `to` (indices into the thread's flat units).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Dep {
    pub from: usize,
    pub to: usize,
    pub kind: DepKind,
}

/// The fields a unit reads through the crossbar and the operand path, and writes.
pub struct FieldAccess {
    pub xbar: Vec<Field>,
    pub operand: Vec<Field>,
    pub writes: Vec<Field>,
}

pub fn field_access(p: &Checked, unit: Unit) -> FieldAccess {
    match unit {
        Unit::Gateway(g) => FieldAccess {
            xbar: p.gateways[g].reads(),
            operand: Vec::new(),
            writes: vec![p.gateways[g].bit],
        },
        Unit::Table(t) => {
            let t = &p.tables[t];
            let mut xbar = t.keys.clone();
            if let Some(sel) = &t.selector {
                xbar.extend(&sel.inputs);
            }
            let mut acc = FieldAccess {
                xbar,
                operand: Vec::new(),
                writes: Vec::new(),
            };
            for &a in &t.actions {
                let a = &p.actions[a];
                acc.xbar.extend(&a.xbar_reads);
                acc.operand.extend(&a.operand_reads);
                acc.writes.extend(&a.writes);
            }
            acc
        }
    }
}

fn any_overlap(a: &[Field], b: &[Field]) -> bool {
    a.iter().any(|x| b.iter().any(|y| fields::overlaps(*x, *y)))
}

fn exclusive(a: &[(usize, bool)], b: &[(usize, bool)]) -> bool {
    a.iter().any(|&(g, o)| b.contains(&(g, !o)))
}

/// Every dependency between units of one thread, in (to, from) order.
pub fn dependencies(p: &Checked, thread: Thread) -> Vec<Dep> {
    let units = &p.flat[thread.index()];
    let access: Vec<FieldAccess> = units.iter().map(|u| field_access(p, u.unit)).collect();
    let mut deps = Vec::new();
    for to in 0..units.len() {
        for from in 0..to {
            if exclusive(&units[from].guards, &units[to].guards) {
                // Opposite branches of one gateway: at most one of them runs per packet.
                continue;
            }
            let (a, b) = (&access[from], &access[to]);
            let kind = if any_overlap(&a.writes, &b.xbar) {
                Some(DepKind::Match)
            } else if any_overlap(&a.writes, &b.operand) || any_overlap(&a.writes, &b.writes) {
                Some(DepKind::Action)
            } else if any_overlap(&a.xbar, &b.writes) || any_overlap(&a.operand, &b.writes) {
                Some(DepKind::ReverseRead)
            } else {
                match units[from].unit {
                    Unit::Gateway(g) if units[to].guards.iter().any(|x| x.0 == g) => {
                        Some(DepKind::Control)
                    }
                    _ => None,
                }
            };
            if let Some(kind) = kind {
                deps.push(Dep { from, to, kind });
            }
        }
    }
    deps
}

/// A unit in its stage.
#[derive(Clone, Debug, Serialize)]
pub struct PlacedUnit {
    #[serde(skip)]
    pub thread: Thread,
    /// Index into the thread's flat units.
    #[serde(skip)]
    pub index: usize,
    #[serde(skip)]
    pub unit: Unit,
    pub allocation: Allocation,
}

/// A table split over several stages because it alone needs more SRAM, TCAM or hash bits
/// than a stage has. Each part holds the next run of the table's entries (exact entries in
/// key order, ternary entries in priority order); a packet that hits in one part skips the
/// later ones, and only the last part runs the default action on a miss.
#[derive(Clone, Debug)]
pub struct Split {
    pub thread: Thread,
    /// Index into the thread's flat units.
    pub index: usize,
    /// (stage, entries) of each part, in stage order.
    pub parts: Vec<(usize, u32)>,
    /// The bit that records a hit in an earlier part. It stands in for the next-table signal
    /// the hardware passes between stages, like the gateway outcome bits it sits after.
    pub hit: Field,
}

/// The result of placement: what went where, and the first thing that did not fit.
#[derive(Clone, Debug)]
pub struct Placed {
    /// Every placed unit; a split table has one entry per part.
    pub units: Vec<PlacedUnit>,
    /// Resource use per stage.
    pub stage_usage: Vec<Usage>,
    /// Stage of each flat unit per thread (`None` if it was not placed); the last part's
    /// stage for a split table, since that is where its result is complete.
    pub stage_of: [Vec<Option<usize>>; 3],
    /// Tables split over stages.
    pub splits: Vec<Split>,
    pub deps: [Vec<Dep>; 3],
    /// Stage timing for ingress (with ghost) and egress.
    pub ingress_timing: Placement,
    pub egress_timing: Placement,
    pub failure: Option<NoFit>,
}

impl Placed {
    pub fn fits(&self) -> bool {
        self.failure.is_none()
    }

    /// The split of flat unit `index` of `thread`, if its table was split.
    pub fn split_of(&self, thread: Thread, index: usize) -> Option<&Split> {
        self.splits
            .iter()
            .find(|s| s.thread == thread && s.index == index)
    }

    /// The first stage of a placed unit (where a split table's first part sits).
    pub fn first_stage_of(&self, thread: Thread, index: usize) -> Option<usize> {
        match self.split_of(thread, index) {
            Some(s) => s.parts.first().map(|&(stage, _)| stage),
            None => self.stage_of[thread.index()][index],
        }
    }

    /// Stages that hold units of `thread`, ascending.
    pub fn active_stages(&self, thread: Thread) -> Vec<usize> {
        let mut s: Vec<usize> = self
            .units
            .iter()
            .filter(|u| u.thread == thread)
            .map(|u| u.allocation.stage)
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    }
}

/// The first parser limit `g` exceeds: the parser's TCAM rows (naming the state at which
/// the running total, in state order, passes the limit), else the 16-bit extractors of one
/// state. Limits and counting rules: `docs/parser.md`.
pub fn parser_overflow(g: &Graph) -> Option<NoFit> {
    let total: u32 = (0..g.states.len()).map(|s| g.state_tcam_rows(s)).sum();
    if total > parser::TCAM_ROWS {
        let mut rows = 0;
        let s = (0..g.states.len())
            .find(|&s| {
                rows += g.state_tcam_rows(s);
                rows > parser::TCAM_ROWS
            })
            .expect("the running total passes the limit");
        return Some(NoFit {
            resource: "parser_tcam_rows".into(),
            stage: None,
            unit: g.states[s].name.clone(),
            needed: total,
            available: parser::TCAM_ROWS,
            detail: "one row per select case, default and unconditional transition; the \
                     states up to this one already pass the parser's rows"
                .into(),
        });
    }
    (0..g.states.len()).find_map(|s| {
        let n = g.state_extractors(s);
        (n > parser::EXTRACTORS_PER_STATE).then(|| NoFit {
            resource: "parser_extractors".into(),
            stage: None,
            unit: g.states[s].name.clone(),
            needed: n,
            available: parser::EXTRACTORS_PER_STATE,
            detail: "16-bit extractors in one parser state".into(),
        })
    })
}

/// The first thread whose applied tables (or gateways) outnumber the logical table IDs (or
/// gateway slots) of all the budget's stages together: such a program cannot fit whatever
/// the dependencies, so it is refused before they are computed (that step is quadratic in
/// the units: 20,000 applied tables took gigabytes to learn they cannot fit 20 stages).
fn too_many_units(p: &Checked, budget: &Budget) -> Option<NoFit> {
    for thread in Thread::ALL {
        let units = &p.flat[thread.index()];
        let tables = units
            .iter()
            .filter(|u| matches!(u.unit, Unit::Table(_)))
            .count();
        for (resource, count, what) in [
            (Resource::LogicalIds, tables, "tables"),
            (Resource::Gateways, units.len() - tables, "gateways"),
        ] {
            let available = budget.stages as u64 * budget.per_stage.0[resource as usize] as u64;
            if count as u64 > available {
                return Some(NoFit {
                    resource: resource.name().into(),
                    stage: None,
                    unit: thread.name().into(),
                    needed: count.min(u32::MAX as usize) as u32,
                    available: available.min(u32::MAX as u64) as u32,
                    detail: format!(
                        "{count} {what} applied in one thread; all {} stages together hold \
                         {available}",
                        budget.stages
                    ),
                });
            }
        }
    }
    None
}

/// Places `p` under `budget`: each thread's units in order, each into the first stage from
/// its earliest (dependencies, `after`, `@stage`, a shared array's stage) with room for it,
/// split over stages when it is too big for one. The first unit that cannot be placed
/// stops placement; [`Placed::failure`] says why.
pub fn place(p: &Checked, budget: &Budget) -> Placed {
    let n = budget.stages;
    let too_many = too_many_units(p, budget);
    let mut placed = Placed {
        units: Vec::new(),
        stage_usage: vec![Usage::default(); n],
        stage_of: std::array::from_fn(|k| vec![None; p.flat[k].len()]),
        deps: std::array::from_fn(|k| {
            if too_many.is_some() {
                Vec::new()
            } else {
                dependencies(p, Thread::ALL[k])
            }
        }),
        ingress_timing: Placement::shortest(n),
        egress_timing: Placement::shortest(n),
        splits: Vec::new(),
        failure: None,
    };
    placed.failure = phv_spill(p)
        .or_else(|| parser_overflow(&p.parser))
        .or_else(|| parser_overflow(&p.egress_parser))
        .or(too_many);
    if placed.failure.is_some() {
        return placed;
    }
    'threads: for thread in [Thread::Ingress, Thread::Ghost, Thread::Egress] {
        for i in 0..p.flat[thread.index()].len() {
            if let Err(e) = place_unit(p, &mut placed, thread, i, budget) {
                placed.failure = Some(e);
                break 'threads;
            }
        }
    }
    placed.ingress_timing = timing(p, &placed, &[Thread::Ingress, Thread::Ghost], n);
    placed.egress_timing = timing(p, &placed, &[Thread::Egress], n);
    placed
}

/// The failure of a program whose metadata does not fit the normal PHV containers.
fn phv_spill(p: &Checked) -> Option<NoFit> {
    let field = p.phv_spill.as_ref()?;
    let widths = ["8", "16", "32"];
    let w = (0..3)
        .find(|&w| p.phv_normal_used[w] > p.phv.normal[w])
        .unwrap_or(2);
    Some(NoFit {
        resource: format!("phv_normal_{}", widths[w]),
        stage: None,
        unit: field.clone(),
        needed: p.phv_normal_used[w] as u32,
        available: p.phv.normal[w] as u32,
        detail: "metadata needs more normal PHV containers than the pipe has".into(),
    })
}

/// Places unit `i` of `thread`, whose earlier units are placed: into its forced stage or
/// the first from its earliest with room, or over several stages when it is a splittable
/// table too big for one.
fn place_unit(
    p: &Checked,
    placed: &mut Placed,
    thread: Thread,
    i: usize,
    budget: &Budget,
) -> Result<(), NoFit> {
    let n = budget.stages;
    let k = thread.index();
    let fu = &p.flat[k][i];
    let mut alloc = allocate(p, fu.unit, thread, budget)?;
    let earliest = earliest_stage(p, placed, thread, i);
    let forced = forced_stage(p, placed, thread, i, earliest, n, &alloc.name)?;
    if earliest >= n {
        return Err(NoFit {
            resource: "stages".into(),
            stage: None,
            unit: alloc.name.clone(),
            needed: earliest as u32 + 1,
            available: n as u32,
            detail: "its chain of match and action dependencies is too long".into(),
        });
    }
    let candidates = match forced {
        Some(s) => s..s + 1,
        None => earliest..n,
    };
    let Some(stage) = candidates.clone().find(|&s| {
        placed.stage_usage[s]
            .plus(&alloc.usage)
            .first_excess(&budget.per_stage)
            .is_none()
    }) else {
        let alone = alloc.usage.first_excess(&budget.per_stage);
        if let (Some(r), Unit::Table(t)) = (alone, fu.unit) {
            if splittable(p, t, r) && forced.is_none() {
                return split(p, placed, thread, i, earliest, budget, r);
            }
        }
        return Err(no_room(placed, &alloc, alone, candidates, budget));
    };
    alloc.stage = stage;
    placed.stage_usage[stage] = placed.stage_usage[stage].plus(&alloc.usage);
    placed.stage_of[k][i] = Some(stage);
    placed.units.push(PlacedUnit {
        thread,
        index: i,
        unit: fu.unit,
        allocation: alloc,
    });
    Ok(())
}

/// The first stage unit `i` of `thread` may go in: past the stages its dependencies need,
/// and past the last stage of the table its `after` names.
fn earliest_stage(p: &Checked, placed: &Placed, thread: Thread, i: usize) -> usize {
    let k = thread.index();
    let by_deps = placed.deps[k]
        .iter()
        .filter(|d| d.to == i)
        .map(|d| {
            let s = placed.stage_of[k][d.from].expect("earlier units are placed first");
            s + d.kind.needs_later_stage() as usize
        })
        .max()
        .unwrap_or(0);
    // `after`: a stage past the other table's last one.
    let after = match p.flat[k][i].unit {
        Unit::Table(t) => p.tables[t].after.and_then(|a| {
            let j = p.flat[k].iter().position(|u| u.unit == Unit::Table(a))?;
            let last = match placed.split_of(thread, j) {
                Some(split) => split.parts.last().map(|part| part.0),
                None => placed.stage_of[k][j],
            };
            last.map(|s| s + 1)
        }),
        Unit::Gateway(_) => None,
    };
    by_deps.max(after.unwrap_or(0))
}

/// The one stage unit `i` of `thread` must go in, if any: its `@stage`, or for a ghost
/// table the stage where ingress accesses the register array it shares; an error when
/// that stage is before `earliest` or past the pipe's `n`.
fn forced_stage(
    p: &Checked,
    placed: &Placed,
    thread: Thread,
    i: usize,
    earliest: usize,
    n: usize,
    name: &str,
) -> Result<Option<usize>, NoFit> {
    let unit = p.flat[thread.index()][i].unit;
    // `@stage`: the table goes in that stage or the program does not fit.
    let pinned = match unit {
        Unit::Table(t) => p.tables[t].stage,
        Unit::Gateway(_) => None,
    };
    if let Some(s) = pinned {
        if s < earliest || s >= n {
            return Err(NoFit {
                resource: "stages".into(),
                stage: Some(s),
                unit: name.into(),
                needed: earliest as u32 + 1,
                available: (s as u32 + 1).min(n as u32),
                detail: if s >= n {
                    format!("@stage({s}) names a stage past the pipe's {n}")
                } else {
                    format!(
                        "@stage({s}) pins it, but its dependencies need stage {earliest} or \
                         later"
                    )
                },
            });
        }
    }
    // A ghost table sharing an array with ingress goes into that array's stage.
    match (thread, shared_stage(p, placed, unit)) {
        (Thread::Ghost, Some((r, Some(s)))) if pinned.is_some_and(|pin| pin != s) => Err(NoFit {
            resource: "stages".into(),
            stage: pinned,
            unit: name.into(),
            needed: s as u32 + 1,
            available: pinned.unwrap_or(0) as u32 + 1,
            detail: format!(
                "@stage pins it away from stage {s}, where ingress accesses the register array \
                 `{}` it shares",
                p.registers[r].name
            ),
        }),
        (Thread::Ghost, Some((_, Some(s)))) if s >= earliest => Ok(Some(s)),
        (Thread::Ghost, Some((r, s))) => Err(NoFit {
            resource: "stages".into(),
            stage: s,
            unit: name.into(),
            needed: earliest as u32 + 1,
            available: s.map_or(0, |s| s as u32 + 1),
            detail: format!(
                "it shares register array `{}` with ingress, which accesses it {}, but the \
                 ghost control's dependencies need stage {earliest} or later",
                p.registers[r].name,
                s.map_or("nowhere (not placed)".to_string(), |s| format!(
                    "in stage {s}"
                ))
            ),
        }),
        _ => Ok(pinned),
    }
}

/// Why `alloc` fits in no stage of `candidates`: more than a whole stage has of resource
/// `alone`, or (with `alone` `None`) the first candidate stage is too full for it.
fn no_room(
    placed: &Placed,
    alloc: &Allocation,
    alone: Option<Resource>,
    candidates: std::ops::Range<usize>,
    budget: &Budget,
) -> NoFit {
    let (stage, r) = match alone {
        Some(r) => (None, r),
        None => {
            let total = placed.stage_usage[candidates.start].plus(&alloc.usage);
            let r = total
                .first_excess(&budget.per_stage)
                .expect("the stage was full");
            (Some(candidates.start), r)
        }
    };
    let used = stage.map_or(0, |s| placed.stage_usage[s].get(r));
    NoFit {
        resource: r.name().into(),
        stage,
        unit: alloc.name.clone(),
        needed: used.saturating_add(alloc.usage.get(r)),
        available: budget.per_stage.get(r),
        detail: if stage.is_some() {
            format!(
                "no stage from {} to {} has room",
                candidates.start,
                candidates.end - 1
            )
        } else {
            "more than a whole stage has".into()
        },
    }
}

/// Whether table `t`, too big for one stage in `r`, may be split over stages: a keyed
/// table without register arrays (an array lives in one stage), over a resource that
/// shrinks with the number of entries.
fn splittable(p: &Checked, t: usize, r: Resource) -> bool {
    let table = &p.tables[t];
    matches!(r, Resource::Sram | Resource::Tcam | Resource::HashBits)
        && !table.keys.is_empty()
        && table.size > 0
        && table.registers.is_empty()
        && table.selector.is_none()
}

/// Splits flat unit `i` of `thread` (a table) over stages from `earliest` on: each stage in
/// turn takes as many of the remaining entries as still fit in it. `r` is the resource the
/// whole table overflows, named if the stages run out.
fn split(
    p: &Checked,
    placed: &mut Placed,
    thread: Thread,
    i: usize,
    earliest: usize,
    budget: &Budget,
    r: Resource,
) -> Result<(), NoFit> {
    let unit = p.flat[thread.index()][i].unit;
    let name = p.unit_name(unit).to_string();
    let total = match unit {
        Unit::Table(t) => p.tables[t].size,
        Unit::Gateway(_) => unreachable!("only tables are split"),
    };
    let hit =
        fields::gateway_bit(&p.phv, p.gateways.len() + placed.splits.len()).ok_or_else(|| {
            NoFit {
                resource: "phv_dark_8".into(),
                stage: None,
                unit: name.clone(),
                needed: fields::gateway_containers(p.gateways.len() + placed.splits.len() + 1)
                    as u32,
                available: p.phv.dark[0] as u32,
                detail: "no dark 8-bit container bit is left for the split table's hit signal"
                    .into(),
            }
        })?;
    // Work on a copy so a split that fails leaves the stages as they were.
    let mut usage = placed.stage_usage.clone();
    let mut parts: Vec<Allocation> = Vec::new();
    let mut left = total;
    for (s, stage_usage) in usage.iter_mut().enumerate().skip(earliest) {
        if left == 0 {
            break;
        }
        let fits = |n: u32| {
            allocate_sized(p, unit, thread, budget, Some(n))
                .ok()
                .filter(|a| {
                    stage_usage
                        .plus(&a.usage)
                        .first_excess(&budget.per_stage)
                        .is_none()
                })
        };
        // Resource use grows with entries, so the largest part that fits is found by
        // bisection between one entry (fits) and all that are left.
        if fits(1).is_none() {
            continue;
        }
        let mut lo = 1;
        if fits(left).is_some() {
            lo = left;
        } else {
            let mut hi = left;
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fits(mid).is_some() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        let mut a = fits(lo).expect("the bisection keeps a size that fits");
        a.stage = s;
        *stage_usage = stage_usage.plus(&a.usage);
        parts.push(a);
        left -= lo;
    }
    if left > 0 {
        let free: u32 = (earliest..budget.stages)
            .map(|s| {
                budget
                    .per_stage
                    .get(r)
                    .saturating_sub(placed.stage_usage[s].get(r))
            })
            .sum();
        let whole = allocate(p, unit, thread, budget)?;
        return Err(NoFit {
            resource: r.name().into(),
            stage: None,
            unit: name,
            needed: whole.usage.get(r),
            available: free,
            detail: format!(
                "split over stages {earliest} to {}, it still leaves {left} of its {total} entries",
                budget.stages - 1
            ),
        });
    }
    placed.stage_usage = usage;
    let count = parts.len() as u32;
    let mut stages = Vec::new();
    for (k, mut a) in parts.into_iter().enumerate() {
        a.part = k as u32 + 1;
        a.parts = count;
        stages.push((a.stage, a.entries));
        placed.units.push(PlacedUnit {
            thread,
            index: i,
            unit,
            allocation: a,
        });
    }
    placed.stage_of[thread.index()][i] = stages.last().map(|&(s, _)| s);
    placed.splits.push(Split {
        thread,
        index: i,
        parts: stages,
        hit,
    });
    Ok(())
}

/// Stage timing of the threads `threads` (which share timing).
fn timing(p: &Checked, placed: &Placed, threads: &[Thread], n: usize) -> Placement {
    let mut out = Placement::shortest(n);
    for u in placed.units.iter().filter(|u| threads.contains(&u.thread)) {
        let s = &mut out.stages[u.allocation.stage];
        if let Unit::Table(t) = u.unit {
            let table = &p.tables[t];
            s.stateful |= !table.registers.is_empty();
            // A selector whose groups take more than one word is a wide selector, which
            // costs what a TCAM does (`docs/timing.md`).
            let wide = table
                .selector
                .as_ref()
                .is_some_and(|sel| sel.max_members > SELECTOR_MEMBERS_PER_WORD);
            s.tcam |= u.allocation.tcams > 0 || wide;
            s.selector |= table.selector.is_some();
        }
    }
    let mut edges = Vec::new();
    for th in threads {
        let k = th.index();
        for d in placed.deps[k].iter().filter(|d| d.kind == DepKind::Match) {
            if let (Some(a), Some(b)) =
                (placed.stage_of[k][d.from], placed.first_stage_of(*th, d.to))
            {
                edges.push((a, b));
            }
        }
    }
    for k in 1..n {
        let needs_match = edges.iter().any(|&(from, to)| {
            to == k && (from + 1..k).all(|m| out.stages[m].dependency != Dependency::Match)
        });
        if needs_match {
            out.stages[k].dependency = Dependency::Match;
        }
    }
    out
}

/// Checks a placement independently of how it was found: every stage within budget, every
/// dependency honoured, every match dependency covered by a match-dependent stage. Returns
/// the first violation.
pub fn verify(p: &Checked, placed: &Placed, budget: &Budget) -> Result<(), String> {
    let mut usage = vec![Usage::default(); budget.stages];
    for u in &placed.units {
        let size = placed
            .split_of(u.thread, u.index)
            .map(|_| u.allocation.entries);
        let a = allocate_sized(p, u.unit, u.thread, budget, size).map_err(|e| e.to_string())?;
        usage[u.allocation.stage] = usage[u.allocation.stage].plus(&a.usage);
    }
    for sp in &placed.splits {
        let name = p.unit_name(p.flat[sp.thread.index()][sp.index].unit);
        if !sp.parts.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err(format!("the parts of `{name}` are not in ascending stages"));
        }
        let entries: u32 = sp.parts.iter().map(|&(_, n)| n).sum();
        let Unit::Table(t) = p.flat[sp.thread.index()][sp.index].unit else {
            return Err(format!("`{name}` is split but is not a table"));
        };
        if entries != p.tables[t].size {
            return Err(format!(
                "the parts of `{name}` hold {entries} entries, not its size"
            ));
        }
    }
    for (s, u) in usage.iter().enumerate() {
        if let Some(r) = u.first_excess(&budget.per_stage) {
            return Err(format!("stage {s} exceeds {}", r.name()));
        }
    }
    // `@stage` pins hold; `after` puts a table past the other's last stage.
    for u in &placed.units {
        let Unit::Table(t) = u.unit else { continue };
        let table = &p.tables[t];
        if let Some(pin) = table.stage {
            if u.allocation.stage != pin {
                return Err(format!(
                    "`{}` is pinned to stage {pin} but placed in {}",
                    table.name, u.allocation.stage
                ));
            }
        }
        if let Some(a) = table.after {
            let last = placed
                .units
                .iter()
                .filter(|o| o.thread == u.thread && o.unit == Unit::Table(a))
                .map(|o| o.allocation.stage)
                .max();
            if last.is_none_or(|l| u.allocation.stage <= l) {
                return Err(format!(
                    "`{}` must follow `{}` ({last:?}) but is in stage {}",
                    table.name, p.tables[a].name, u.allocation.stage
                ));
            }
        }
    }
    // A register array shared by ingress and ghost lives in one stage with both tables.
    for u in placed.units.iter().filter(|u| u.thread == Thread::Ghost) {
        if let Some((r, s)) = shared_stage(p, placed, u.unit) {
            if s != Some(u.allocation.stage) {
                return Err(format!(
                    "register array `{}` is in stage {:?} for ingress but {} for ghost",
                    p.registers[r].name, s, u.allocation.stage
                ));
            }
        }
    }
    for th in Thread::ALL {
        let k = th.index();
        let timing = if th == Thread::Egress {
            &placed.egress_timing
        } else {
            &placed.ingress_timing
        };
        for d in &placed.deps[k] {
            let (Some(a), Some(b)) = (placed.stage_of[k][d.from], placed.first_stage_of(th, d.to))
            else {
                continue;
            };
            let ok = if d.kind.needs_later_stage() {
                b > a
            } else {
                b >= a
            };
            if !ok {
                return Err(format!(
                    "{:?} dependency {} -> {} broken",
                    d.kind, d.from, d.to
                ));
            }
            if d.kind == DepKind::Match
                && !(a + 1..=b).any(|m| timing.stages[m].dependency == Dependency::Match)
            {
                return Err(format!(
                    "match dependency {} -> {} has no match stage",
                    d.from, d.to
                ));
            }
        }
    }
    Ok(())
}
