//! Type-checking and lowering a parsed P4 program onto the program IR.
//!
//! The `main` package instance names the blocks: `Switch(Pipeline(ingress parser, ingress,
//! ingress deparser, egress parser, egress, egress deparser [, ghost]))`. The ingress
//! parser becomes the IR parser graph (the built-in graph when it is the same), controls
//! become IR control bodies (tables under `if` gateways), actions become VLIW primitives,
//! `RegisterAction` bodies become stateful-ALU programs, `Hash` units and `Random` become
//! their IR primitives. Field references are resolved through the control's parameters:
//! the headers struct (`hdr.ipv4.ttl` -> `ipv4.ttl`), the user metadata struct
//! (`meta.idx` -> `meta.idx`) and the intrinsic metadata structs (`ig_tm_md.qid` ->
//! `ig_intr_tm_md.qid`). Anything the IR cannot express is an error at its place.
//! `docs/p4.md` describes the mapping.
//!
//! This file holds the lowerer's state, declarations, types and field resolution; the rest is
//! by part of a program: `parser` (states, select), `control` (apply blocks, gateways, table
//! applications), `table`, `action` (action bodies onto primitives), `stateful` (Hash,
//! Register and RegisterAction onto the stateful ALU), `deparser` (emits, mirror idiom), and
//! one file per construct that needs more (`exits`, `counters`, `digests`, `value_sets`,
//! `stacks`, `stack_loops`, `mirror_select`, `resubmit`, `casts`, `select_keys`, `overhead`).

use super::ast::*;
use super::preprocess::Source;

mod casts;
mod mirror_select;
mod select_keys;
use super::{Compiled, P4Error};
use crate::hw::fields;
use crate::program::builtin;
use crate::program::ir::{self, Cmp, MatchKind, Operand, Primitive};
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod action;
mod checksums;
mod control;
mod counters;
mod deparser;
mod digests;
mod exits;
mod overhead;
mod parser;
mod parser_sets;
mod resubmit;
mod stack_loops;
mod stacks;
mod stateful;
mod table;
mod value_sets;
pub use counters::{CounterInfo, CounterKind, ENTRY_INDEX_PARAM};

/// A table as the control plane names it.
#[derive(Clone, Debug)]
pub struct TableInfo {
    /// `Control.table`.
    pub p4_name: String,
    pub local_name: String,
    pub ir_name: String,
    pub kind: MatchKind,
    pub keys: Vec<KeyInfo>,
    /// (P4 local name, IR name) of the actions an entry may name.
    pub actions: Vec<(String, String)>,
    /// (P4 local name, IR name) of the actions the default may name: the same, except for
    /// a table whose `.hit` is tested (its entries run copies that record the hit).
    pub default_actions: Vec<(String, String)>,
    /// Whether the program fixes the entries (`const entries`): the control plane adds
    /// none.
    pub const_entries: bool,
}

/// One key of a table: its control-plane name (the key expression as written, or its
/// `@name`), the IR field and its width.
#[derive(Clone, Debug)]
pub struct KeyInfo {
    pub name: String,
    pub ir_field: String,
    pub bits: u32,
    /// `exact`, `ternary` or `lpm`.
    pub kind: String,
}

/// An action as the control plane names it.
#[derive(Clone, Debug)]
pub struct ActionInfo {
    pub p4_name: String,
    pub local_name: String,
    pub ir_name: String,
    pub params: Vec<(String, u32)>,
}

type R<T> = Result<T, P4Error>;

/// Deepest nesting of structs and headers in one another that a program may have.
const MAX_TYPE_NESTING: u32 = 64;

/// Longest chain of typedefs (each naming the next) that resolves.
const MAX_TYPEDEF_CHAIN: u32 = 256;

/// A resolved type.
#[derive(Clone, Debug, PartialEq)]
enum Ty {
    Bits(u32, bool),
    Bool,
    Header(String),
    Struct(String),
    Enum(String, Option<u32>),
    Extern(String, Vec<Type>),
    Error,
    Stack(Box<Ty>, u32),
    Void,
}

impl Ty {
    fn width(&self) -> Option<u32> {
        match self {
            Ty::Bits(w, _) => Some(*w),
            Ty::Bool => Some(1),
            Ty::Enum(_, w) => *w,
            _ => None,
        }
    }
}

/// Which thread a block runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gress {
    Ingress,
    Egress,
    Ghost,
}

impl Gress {
    fn name(self) -> &'static str {
        match self {
            Gress::Ingress => "ingress",
            Gress::Egress => "egress",
            Gress::Ghost => "ghost",
        }
    }
}

/// The intrinsic metadata structs: P4 type, the IR prefix of its fields, its thread.
const INTRINSICS: [(&str, &str, Gress); 8] = [
    ("ingress_intrinsic_metadata_t", "ig_intr_md", Gress::Ingress),
    (
        "ingress_intrinsic_metadata_for_tm_t",
        "ig_intr_tm_md",
        Gress::Ingress,
    ),
    (
        "ingress_intrinsic_metadata_from_parser_t",
        "ig_prsr_md",
        Gress::Ingress,
    ),
    (
        "ingress_intrinsic_metadata_for_deparser_t",
        "ig_intr_dprsr_md",
        Gress::Ingress,
    ),
    ("egress_intrinsic_metadata_t", "eg_intr_md", Gress::Egress),
    (
        "egress_intrinsic_metadata_from_parser_t",
        "eg_prsr_md",
        Gress::Egress,
    ),
    (
        "egress_intrinsic_metadata_for_deparser_t",
        "eg_intr_dprsr_md",
        Gress::Egress,
    ),
    ("ghost_intrinsic_metadata_t", "ghost_md", Gress::Ghost),
];

/// The externs the lowering knows what to do with; other declared externs are refused by
/// name with the reason in `refused_extern`.
const LOWERED_EXTERNS: [&str; 13] = [
    "ActionProfile",
    "Digest",
    "Resubmit",
    "Counter",
    "DirectCounter",
    "ActionSelector",
    "Mirror",
    "Register",
    "RegisterAction",
    "Hash",
    "Random",
    "Checksum",
    "packet_in",
];

fn refused_extern(name: &str) -> String {
    let why = match name {
        "Meter" | "DirectMeter" | "Lpf" | "Wred" => {
            "the modelled MAU has no meter ALU (Tofino2 runs meters, LPF and WRED on its 4 \
             stateful ALUs per stage with rate and color logic the model does not have)"
        }
        "Pktgen" => "the packet generator is configured from the scenario, not from P4",
        "MathUnit" => "the IR's stateful ALU has no math unit",
        "DirectRegister" | "DirectRegisterAction" | "RegisterParam" => {
            "the IR's register arrays are indexed, not direct"
        }
        "ParserCounter" => "the model's parser has no counter",
        "CRCPolynomial" => "custom CRC polynomials are not lowered from P4 yet",
        _ => "t2sim's lowering does not know it",
    };
    format!("extern `{name}` is not supported: {why}")
}

/// The IR's built-in headers by layout: P4 field widths in order, and the IR field name
/// each maps to (by position, so a program may name fields as it likes).
fn builtin_mapping(inst: &str, widths: &[u32]) -> Option<Vec<String>> {
    let b = builtin::headers().into_iter().find(|h| h.name == inst)?;
    let names: Vec<String> = b.fields.iter().map(|f| f.name.clone()).collect();
    let bw: Vec<u32> = b.fields.iter().map(|f| f.bits as u32).collect();
    let l4 = |n: &str| match (inst, n) {
        ("udp" | "tcp", "src_port" | "dst_port") => format!("l4.{n}"),
        _ => format!("{inst}.{n}"),
    };
    if widths == bw.as_slice() {
        return Some(
            names
                .iter()
                .map(|n| match (inst, n.as_str()) {
                    // The IR's `ipv4.diffserv` is the whole TOS byte; the 6-bit DSCP is its
                    // top bits.
                    ("ipv4", "diffserv") => "ipv4.diffserv[7:2]".to_string(),
                    _ => l4(n),
                })
                .collect(),
        );
    }
    // IPv4 with one 8-bit TOS field (diffserv + ECN), as most P4 programs declare it.
    if inst == "ipv4" {
        let mut w8 = bw.clone();
        w8.splice(2..4, [8]);
        if widths == w8.as_slice() {
            let mut n: Vec<String> = names.iter().map(|n| format!("ipv4.{n}")).collect();
            n.splice(2..4, ["ipv4.diffserv".to_string()]);
            return Some(n);
        }
    }
    None
}

/// An enum: its underlying width (if any) and its members' values.
type EnumDef = (Option<u32>, Vec<(String, u128)>);

/// A parameter of a control or parser, by what it gives access to.
#[derive(Clone, Debug)]
enum ParamKind {
    Headers(String),
    Meta(String),
    /// A variable the control declares (`bit<13> index;`): a hidden metadata field, IR
    /// name and width.
    Var(String, u32),
    Intrinsic(&'static str, Gress, String),
    /// A parser's local header (`ingress_skip_t skip;`), extracted only to skip the port
    /// metadata: its width in bits.
    Skip(u32),
    Packet,
    Other,
}

/// A header instance of the headers struct, as the IR knows it.
#[derive(Clone, Debug)]
struct Instance {
    ir: String,
    type_name: String,
    /// (P4 field name, IR field name, width).
    fields: Vec<(String, String, u32)>,
    builtin: bool,
}

/// What a name inside a control stands for.
#[derive(Clone, Debug)]
enum Local<'a> {
    Action(&'a Decl),
    Table(&'a Decl),
    Extern(&'a Decl, String),
    Const(u128, Option<u32>),
}

/// A control being lowered.
struct Ctl<'a> {
    name: String,
    gress: Gress,
    params: HashMap<String, ParamKind>,
    locals: HashMap<String, Local<'a>>,
}

/// How a RegisterAction's body names its cell: the apply method's `value` parameter, and
/// for a pair register the names of its two fields (the struct's first field is the
/// stateful ALU's `lo` half, the second its `hi`).
#[derive(Clone, Debug)]
struct CellNames {
    value: String,
    halves: Option<(String, String)>,
}

impl CellNames {
    /// Which half `e` names: `value` (an unpaired cell), `value.lo` or `value.hi` (a
    /// pair's fields by their names); `None` when `e` is not the cell.
    fn half(&self, e: &Expr) -> Option<ir::Half> {
        let p = e.path()?;
        match &self.halves {
            None => (p == self.value).then_some(ir::Half::Lo),
            Some((lo, hi)) => {
                let (v, f) = p.split_once('.')?;
                if v != self.value {
                    None
                } else if f == lo {
                    Some(ir::Half::Lo)
                } else if f == hi {
                    Some(ir::Half::Hi)
                } else {
                    None
                }
            }
        }
    }
}

/// A RegisterAction's program, before its output is known.
#[derive(Clone, Debug)]
struct SaluBody {
    conditions: Vec<ir::SaluCondition>,
    updates: Vec<ir::SaluUpdate>,
    /// What `rv` gets, if the body sets it.
    rv: Option<ir::SaluOutputValue>,
}

struct Lowerer<'a> {
    src: &'a Source,
    decls: &'a [Decl],
    typedefs: HashMap<String, &'a Type>,
    headers: HashMap<String, &'a [FieldDecl]>,
    structs: HashMap<String, &'a [FieldDecl]>,
    enums: HashMap<String, EnumDef>,
    externs: BTreeSet<String>,
    consts: HashMap<String, (u128, Option<u32>)>,
    blocks: HashMap<String, &'a Decl>,
    top_actions: HashMap<String, &'a Decl>,
    /// Local names declared in more than one control (their IR names are qualified).
    shared_names: BTreeSet<String>,
    prog: ir::Program,
    /// Header instances by P4 instance name.
    instances: BTreeMap<String, Instance>,
    /// Metadata fields used: IR name -> width; declaration order kept in `meta_order`.
    meta_used: BTreeMap<String, u8>,
    meta_order: Vec<String>,
    /// Per user metadata struct type, the parameter name its fields' IR names start with:
    /// the name the controls give it (a parser may call it otherwise; the fields are one).
    meta_names: HashMap<String, String>,
    /// Header instances the program extracts or names beyond declaring and emitting them.
    used_headers: BTreeSet<String>,
    /// Each parser's (ingress, egress) `Checksum` instances, each an engine of its own.
    checksum_engines: [Vec<String>; 2],
    /// IR object names and where they were declared.
    spans: Vec<(String, Span)>,
    /// (control, action) -> IR action name.
    lowered_actions: HashMap<(String, String), String>,
    /// IR table name -> where first applied.
    applied: HashMap<String, Span>,
    /// IR RegisterAction name -> its output field (once executed with a result).
    ra_outputs: HashMap<String, Option<String>>,
    hashes: HashMap<String, Vec<String>>,
    tables: Vec<TableInfo>,
    actions: Vec<ActionInfo>,
    registers: Vec<(String, String)>,
    main_span: Span,
    /// The deparsers' `if (md.mirror_type == T) mirror.emit(SESSION[, hdr.H]);`.
    mirrors: Vec<MirrorIdiom>,
    /// The egress parser's look-ahead at a copy's mirror type (`mirror_select.rs`).
    lookaheads: Vec<mirror_select::Lookahead>,
    /// Parser states marked `@dontmerge`, which keep their own TCAM row.
    unmerged: BTreeSet<String>,
    /// IR action -> (DirectCounter it counts, its IR table, bits of its entry index).
    direct_counted: HashMap<String, (String, String, u32)>,
    counters: Vec<CounterInfo>,
    /// Where each `exit` of an apply block stands (see `exits`).
    exits: Vec<Span>,
    /// IR action -> (its control, where its `exit` stands), for actions that exit.
    action_exits: HashMap<String, (String, Span)>,
    /// Value sets of the ingress parser: (IR name, bits of a value).
    value_sets: Vec<(String, u32)>,
    /// The ingress deparser's `if (md.resubmit_type == T) resubmit.emit(...);`.
    resubmits: Vec<resubmit::ResubmitIdiom>,
}

/// One deparser's `if (md.mirror_type == T) { m.emit(SESSION); }` or, with a mirror header,
/// `m.emit<H>(SESSION, hdr.h)`.
#[derive(Clone, Debug)]
struct MirrorIdiom {
    gress: Gress,
    mirror_type: u128,
    session: MirrorSession,
    /// The IR header the copy starts with, and where the deparser names it.
    header: Option<(String, Span)>,
}

/// Where a mirror's session id comes from: a constant, or a field of the user metadata
/// struct (by struct type and field name, since the deparser names its parameter freely).
#[derive(Clone, Debug)]
enum MirrorSession {
    Const(u64),
    Meta(String, String),
}

/// Lowers the declarations of a parsed program into an IR program called `name`.
pub fn lower(src: &Source, decls: &[Decl], name: &str) -> R<Compiled> {
    let inlined = super::passes::run(src, decls)?;
    let unrolled = stacks::unroll(src, &inlined)?;
    let decls = unrolled.as_slice();
    let mut l = Lowerer {
        src,
        decls,
        typedefs: HashMap::new(),
        headers: HashMap::new(),
        structs: HashMap::new(),
        enums: HashMap::new(),
        externs: BTreeSet::new(),
        consts: HashMap::new(),
        blocks: HashMap::new(),
        top_actions: HashMap::new(),
        shared_names: BTreeSet::new(),
        prog: ir::Program {
            name: name.to_string(),
            ..ir::Program::default()
        },
        instances: BTreeMap::new(),
        meta_used: BTreeMap::new(),
        meta_order: Vec::new(),
        meta_names: HashMap::new(),
        used_headers: BTreeSet::new(),
        checksum_engines: Default::default(),
        spans: Vec::new(),
        lowered_actions: HashMap::new(),
        applied: HashMap::new(),
        ra_outputs: HashMap::new(),
        hashes: HashMap::new(),
        tables: Vec::new(),
        actions: Vec::new(),
        registers: Vec::new(),
        main_span: Span::default(),
        mirrors: Vec::new(),
        lookaheads: Vec::new(),
        unmerged: BTreeSet::new(),
        direct_counted: HashMap::new(),
        counters: Vec::new(),
        exits: Vec::new(),
        action_exits: HashMap::new(),
        value_sets: Vec::new(),
        resubmits: Vec::new(),
    };
    l.collect()?;
    l.run()?;
    Ok(Compiled {
        program: l.prog,
        tables: l.tables,
        actions: l.actions,
        registers: l.registers,
        counters: l.counters,
        value_sets: l.value_sets,
    })
}

impl<'a> Lowerer<'a> {
    fn err<T>(&self, span: Span, msg: impl Into<String>) -> R<T> {
        Err(self.src.error(span, msg))
    }

    /// Gathers the top-level declarations by kind.
    fn collect(&mut self) -> R<()> {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let decls = self.decls;
        for d in decls {
            let name = match &d.kind {
                DeclKind::Typedef { name, ty } => {
                    self.typedefs.insert(name.clone(), ty);
                    Some(name)
                }
                DeclKind::Const { name, ty, value } => {
                    let ty = self.resolve(ty, d.span)?;
                    let v = self.const_value(value, &HashMap::new())?;
                    let w = ty.width();
                    if let Some(w) = w.filter(|&w| w < 128) {
                        if v.0 >> w != 0 {
                            return self.err(
                                value.span,
                                format!("constant `{name}` = {} does not fit in {w} bits", v.0),
                            );
                        }
                    }
                    self.consts.insert(name.clone(), (v.0, w.or(v.1)));
                    Some(name)
                }
                DeclKind::Header { name, fields } => {
                    self.headers.insert(name.clone(), fields);
                    Some(name)
                }
                DeclKind::Struct { name, fields } => {
                    self.structs.insert(name.clone(), fields);
                    Some(name)
                }
                DeclKind::Enum {
                    name,
                    underlying,
                    members,
                } => {
                    let w = match underlying {
                        Some(t) => self.resolve(t, d.span)?.width(),
                        None => None,
                    };
                    let mut ms = Vec::new();
                    for (k, (m, v)) in members.iter().enumerate() {
                        let v = match v {
                            Some(e) => self.const_value(e, &HashMap::new())?.0,
                            None => k as u128,
                        };
                        ms.push((m.clone(), v));
                    }
                    self.enums.insert(name.clone(), (w, ms));
                    Some(name)
                }
                DeclKind::Extern { name } => {
                    self.externs.insert(name.clone());
                    None
                }
                DeclKind::Parser { name, .. } | DeclKind::Control { name, .. } => {
                    self.blocks.insert(name.clone(), d);
                    Some(name)
                }
                DeclKind::Action { name, .. } => {
                    self.top_actions.insert(name.clone(), d);
                    Some(name)
                }
                DeclKind::HeaderUnion { name } => {
                    return self.err(
                        d.span,
                        format!("header_union `{name}` is not supported: the IR has no unions"),
                    )
                }
                DeclKind::Instance { name, .. } => Some(name),
                DeclKind::Table { name, .. } => {
                    return self.err(
                        d.span,
                        format!("table `{name}` is declared outside a control"),
                    )
                }
                _ => None,
            };
            if let Some(n) = name {
                if let Some(prev) = seen.insert(n.clone(), d.span) {
                    if prev != d.span {
                        let f = &self.src.files[prev.file as usize];
                        return self.err(
                            d.span,
                            format!(
                                "`{n}` is declared twice (first at {f}:{}:{})",
                                prev.line, prev.col
                            ),
                        );
                    }
                }
            }
        }
        // Names declared in more than one control get qualified IR names.
        let mut count: HashMap<String, usize> = HashMap::new();
        for d in decls {
            if let DeclKind::Control { locals, .. } = &d.kind {
                for l in locals {
                    if let Some(n) = local_name(l) {
                        *count.entry(n.to_string()).or_default() += 1;
                    }
                }
            }
        }
        self.shared_names = count
            .into_iter()
            .filter(|(_, c)| *c > 1)
            .map(|(n, _)| n)
            .collect();
        self.check_nesting()
    }

    /// Refuses a struct or header that contains itself (directly or through others) and
    /// nesting deeper than [`MAX_TYPE_NESTING`], before anything walks their fields.
    fn check_nesting(&self) -> R<()> {
        // Depth of each type once known; `None` while it is being walked (a cycle).
        let mut depth: HashMap<&str, Option<u32>> = HashMap::new();
        for d in self.decls {
            let (DeclKind::Struct { name, .. } | DeclKind::Header { name, .. }) = &d.kind else {
                continue;
            };
            // An explicit stack instead of recursion: 50,000 nested structs must not
            // overflow ours.
            let mut stack: Vec<(&str, usize)> = vec![(name.as_str(), 0)];
            depth.entry(name.as_str()).or_insert(None);
            while let Some(&(t, next)) = stack.last() {
                let fields = self
                    .structs
                    .get(t)
                    .or_else(|| self.headers.get(t))
                    .copied()
                    .unwrap_or(&[]);
                let Some(f) = fields.get(next) else {
                    stack.pop();
                    let inner = fields
                        .iter()
                        .filter_map(|f| self.named_type(&f.ty))
                        .filter_map(|n| depth.get(n).copied().flatten())
                        .max()
                        .unwrap_or(0);
                    if inner + 1 > MAX_TYPE_NESTING {
                        return self.err(
                            d.span,
                            format!(
                                "`{name}` nests structs and headers more than {MAX_TYPE_NESTING} \
                                 deep"
                            ),
                        );
                    }
                    depth.insert(t, Some(inner + 1));
                    continue;
                };
                stack.last_mut().expect("not empty").1 += 1;
                let Some(n) = self.named_type(&f.ty) else {
                    continue;
                };
                match depth.get(n) {
                    Some(Some(_)) => {}
                    Some(None) => {
                        return self.err(
                            f.span,
                            format!(
                                "`{t}` contains itself through field `{}` (of type `{n}`): a \
                                 struct or header cannot hold itself",
                                f.name
                            ),
                        )
                    }
                    None => {
                        depth.insert(n, None);
                        stack.push((n, 0));
                    }
                }
            }
        }
        Ok(())
    }

    /// The struct or header a field type names, through typedefs (boundedly).
    fn named_type<'t>(&'t self, t: &'t Type) -> Option<&'t str> {
        let mut t = t;
        for _ in 0..MAX_TYPE_NESTING {
            match t {
                Type::Named(n, _) => match self.typedefs.get(n) {
                    Some(inner) => t = inner,
                    None if self.structs.contains_key(n) || self.headers.contains_key(n) => {
                        return Some(n)
                    }
                    None => return None,
                },
                Type::Stack(inner, _) => t = inner,
                _ => return None,
            }
        }
        None
    }

    /// The IR name of local `name` of control `ctl`.
    fn ir_name(&self, ctl: &str, name: &str) -> String {
        if self.shared_names.contains(name) {
            format!("{ctl}.{name}")
        } else {
            name.to_string()
        }
    }

    fn resolve(&self, t: &Type, span: Span) -> R<Ty> {
        self.resolve_depth(t, span, 0)
    }

    fn resolve_depth(&self, t: &Type, span: Span, depth: u32) -> R<Ty> {
        if depth > MAX_TYPEDEF_CHAIN {
            return self.err(
                span,
                format!(
                    "typedefs refer to each other in a loop, or chain more than \
                     {MAX_TYPEDEF_CHAIN} deep"
                ),
            );
        }
        Ok(match t {
            Type::Bit(w) | Type::Int(w) => {
                let (v, _) = self.const_value(w, &HashMap::new())?;
                if v == 0 || v > 2048 {
                    return self.err(w.span, format!("width {v} is outside 1..=2048"));
                }
                Ty::Bits(v as u32, matches!(t, Type::Int(_)))
            }
            Type::Varbit(_) => {
                return self.err(
                    span,
                    "varbit is not supported: the model's headers have fixed widths",
                )
            }
            Type::Bool => Ty::Bool,
            Type::Void => Ty::Void,
            Type::Stack(inner, n) => {
                let (n, _) = self.const_value(n, &HashMap::new())?;
                Ty::Stack(
                    Box::new(self.resolve_depth(inner, span, depth + 1)?),
                    n as u32,
                )
            }
            Type::Named(n, targs) => {
                if let Some(t) = self.typedefs.get(n) {
                    return self.resolve_depth(t, span, depth + 1);
                }
                if self.headers.contains_key(n) {
                    Ty::Header(n.clone())
                } else if self.structs.contains_key(n) {
                    Ty::Struct(n.clone())
                } else if let Some((w, members)) = self.enums.get(n) {
                    // A plain enum is not serializable, so its representation is ours: the
                    // fewest bits that number its members (p4c's `ConvertEnums` chooses too).
                    let plain =
                        (usize::BITS - members.len().saturating_sub(1).leading_zeros()).max(1);
                    Ty::Enum(n.clone(), Some(w.unwrap_or(plain)))
                } else if self.externs.contains(n) || n == "packet_in" || n == "packet_out" {
                    Ty::Extern(n.clone(), targs.clone())
                } else if n == "error" {
                    Ty::Error
                } else if n == "value_set" {
                    // A parser's value sets are taken apart in `ctl` (`value_sets.rs`).
                    return self.err(
                        span,
                        "a `value_set` is declared among a parser's locals: its values are \
                         parser TCAM rows a select case matches",
                    );
                } else {
                    return self.err(span, format!("unknown type `{n}`"));
                }
            }
        })
    }

    /// The value of a constant expression (and its width when it has one); `locals` are
    /// the control's constants.
    fn const_value(&self, e: &Expr, locals: &HashMap<String, Local<'a>>) -> R<(u128, Option<u32>)> {
        let bad = || self.err(e.span, "expected a constant expression");
        match &e.kind {
            ExprKind::Int { value, width } => Ok((*value, width.map(|w| w.0))),
            ExprKind::Bool(b) => Ok((*b as u128, Some(1))),
            ExprKind::Name(n) => match locals.get(n) {
                Some(Local::Const(v, w)) => Ok((*v, *w)),
                _ => match self.consts.get(n) {
                    Some(&(v, w)) => Ok((v, w)),
                    None => self.err(e.span, format!("unknown name `{n}`")),
                },
            },
            ExprKind::Member(b, m) => {
                if let ExprKind::Name(en) = &b.kind {
                    if let Some((w, ms)) = self.enums.get(en) {
                        return match ms.iter().find(|x| &x.0 == m) {
                            Some(x) => Ok((x.1, *w)),
                            None => self.err(e.span, format!("enum `{en}` has no member `{m}`")),
                        };
                    }
                }
                bad()
            }
            ExprKind::Cast(t, inner) => {
                let (v, _) = self.const_value(inner, locals)?;
                let w = self.resolve(t, e.span)?.width();
                let v = match w {
                    Some(w) if w < 128 => v & ((1u128 << w) - 1),
                    _ => v,
                };
                Ok((v, w))
            }
            ExprKind::Unary(UnOp::BitNot, inner) => {
                let (v, w) = self.const_value(inner, locals)?;
                match w {
                    Some(w) if w < 128 => Ok((!v & ((1u128 << w) - 1), Some(w))),
                    _ => self.err(e.span, "`~` on a constant needs a width (such as 8w0)"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (x, wa) = self.const_value(a, locals)?;
                let (y, wb) = self.const_value(b, locals)?;
                let w = wa.or(wb);
                // A sized value wraps at its width as P4's bit<W> does; an unsized one (P4's
                // `int`, of unbounded precision) held in 128 bits must not wrap, or
                // `(1 << 4294967296) + 600` would fold to 601.
                let sized = matches!(w, Some(w) if w < 128);
                let overflow = || -> R<u128> {
                    self.err(
                        e.span,
                        "the constant overflows 128 bits (give it a width, such as 32w1, to \
                         compute modulo that width)",
                    )
                };
                let v = match op {
                    BinOp::Add if sized => x.wrapping_add(y),
                    BinOp::Add => x.checked_add(y).map_or_else(overflow, Ok)?,
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul if sized => x.wrapping_mul(y),
                    BinOp::Mul => x.checked_mul(y).map_or_else(overflow, Ok)?,
                    BinOp::Div if y != 0 => x / y,
                    BinOp::Mod if y != 0 => x % y,
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    // Shifting a sized value by its width or more leaves nothing.
                    BinOp::Shl if sized => u32::try_from(y)
                        .ok()
                        .and_then(|y| x.checked_shl(y))
                        .unwrap_or(0),
                    BinOp::Shl if x == 0 => 0,
                    BinOp::Shl => match u32::try_from(y) {
                        Ok(y) if y <= x.leading_zeros() => x << y,
                        _ => overflow()?,
                    },
                    BinOp::Shr => u32::try_from(y)
                        .ok()
                        .and_then(|y| x.checked_shr(y))
                        .unwrap_or(0),
                    _ => return bad(),
                };
                let v = match w {
                    Some(w) if w < 128 => v & ((1u128 << w) - 1),
                    _ => v,
                };
                Ok((v, w))
            }
            _ => bad(),
        }
    }
}

/// The name a control-local declaration introduces.
fn local_name(d: &Decl) -> Option<&str> {
    match &d.kind {
        DeclKind::Action { name, .. }
        | DeclKind::Table { name, .. }
        | DeclKind::Instance { name, .. } => Some(name),
        _ => None,
    }
}

/// A resolved field: its IR name and width.
#[derive(Clone, Debug)]
struct FieldRef {
    ir: String,
    bits: u32,
}

/// `base[hi:lo]`, composing with a slice `base` already is.
fn slice_name(base: &str, hi: u32, lo: u32) -> String {
    if let Some((b, rest)) = base.split_once('[') {
        if let Some((h0, l0)) = rest.trim_end_matches(']').split_once(':') {
            if let (Ok(_), Ok(l0)) = (h0.parse::<u32>(), l0.parse::<u32>()) {
                return format!("{b}[{}:{}]", hi + l0, lo + l0);
            }
        }
    }
    format!("{base}[{hi}:{lo}]")
}

impl<'a> Lowerer<'a> {
    fn run(&mut self) -> R<()> {
        let decls = self.decls;
        let main = decls
            .iter()
            .find(|d| matches!(&d.kind, DeclKind::Instance { name, .. } if name == "main"));
        let Some(main) = main else {
            // At the main file's last declaration (not an included file's).
            let at = decls.iter().rfind(|d| d.span.file == 0).map_or(
                Span {
                    file: 0,
                    line: 1,
                    col: 1,
                    pos: 0,
                },
                |d| d.span,
            );
            return self.err(
                at,
                "no `main` package instance (a T2NA program ends with `Switch(pipe) main;`)",
            );
        };
        self.main_span = main.span;
        self.prog.overhead = self.declared_overhead(main)?;
        let DeclKind::Instance { ty, args, .. } = &main.kind else {
            unreachable!()
        };
        let tname = match ty {
            Type::Named(n, _) => n.clone(),
            _ => String::new(),
        };
        if tname != "Switch" {
            return self.err(
                main.span,
                format!("`main` is a `{tname}`; t2sim expects the T2NA/TNA `Switch` package"),
            );
        }
        if args.len() != 1 {
            return self.err(
                main.span,
                format!(
                    "a Switch of {} pipelines: t2sim runs one program in every pipe, so give \
                     `Switch` one Pipeline",
                    args.len()
                ),
            );
        }
        let pipe_args: Vec<Expr> = match &args[0].kind {
            ExprKind::Name(p) => {
                let d = decls
                    .iter()
                    .find(|d| matches!(&d.kind, DeclKind::Instance { name, .. } if name == p));
                match d.map(|d| &d.kind) {
                    Some(DeclKind::Instance {
                        ty: Type::Named(t, _),
                        args,
                        ..
                    }) if t == "Pipeline" => args.clone(),
                    _ => {
                        return self.err(args[0].span, format!("`{p}` is not a Pipeline instance"))
                    }
                }
            }
            ExprKind::Call { func, args, .. } if matches!(&func.kind, ExprKind::Name(n) if n == "Pipeline") => {
                args.clone()
            }
            _ => return self.err(args[0].span, "expected a Pipeline"),
        };
        if !(6..=7).contains(&pipe_args.len()) {
            return self.err(
                args[0].span,
                format!(
                    "a Pipeline takes 6 blocks (and an optional ghost control), not {}",
                    pipe_args.len()
                ),
            );
        }
        let mut blocks: Vec<&'a Decl> = Vec::new();
        for (k, a) in pipe_args.iter().enumerate() {
            let name = match &a.kind {
                ExprKind::Call { func, args, .. } if args.is_empty() => func.path(),
                ExprKind::Name(n) => Some(n.clone()),
                _ => None,
            };
            let want_parser = k == 0 || k == 3;
            let Some(d) = name.as_ref().and_then(|n| self.blocks.get(n)) else {
                return self.err(
                    a.span,
                    format!(
                        "expected a {} instantiation such as `{}()`",
                        if want_parser { "parser" } else { "control" },
                        name.unwrap_or_else(|| "Block".into())
                    ),
                );
            };
            let (DeclKind::Parser { ctor_params, .. } | DeclKind::Control { ctor_params, .. }) =
                &d.kind
            else {
                unreachable!("blocks are parsers and controls")
            };
            if !ctor_params.is_empty() {
                return self.err(
                    a.span,
                    "a block of the Pipeline with constructor parameters: bind them in a block \
                     that instantiates it (`Inner(3) inner;`), which is inlined",
                );
            }
            let is_parser = matches!(d.kind, DeclKind::Parser { .. });
            if is_parser != want_parser {
                return self.err(
                    a.span,
                    format!(
                        "Pipeline argument {} must be a {}",
                        k + 1,
                        if want_parser { "parser" } else { "control" }
                    ),
                );
            }
            blocks.push(d);
        }
        self.name_metadata(&blocks)?;
        // Parsers first: they declare the header instances.
        let (ig_graph, ig_span) = self.lower_parser(blocks[0], Gress::Ingress)?;
        let (eg_graph, eg_span) = self.lower_parser(blocks[3], Gress::Egress)?;
        // A loop the stack unrolling did not take apart (an IP-in-IP parser extracting the
        // same header again) is refused here, before anything walks the graph's paths.
        for (graph, span) in [(&ig_graph, ig_span), (&eg_graph, eg_span)] {
            if let Err(cycle) = deparser::parse_walk(graph) {
                return self.err(
                    span,
                    format!(
                        "the parser loops ({}): the model's parser graph is loop-free; a loop \
                         over a header stack is unrolled, but a loop that extracts the same \
                         header again (such as IP in IP) cannot be",
                        cycle.join(" -> ")
                    ),
                );
            }
        }
        self.scan_mirrors(blocks[2], Gress::Ingress)?;
        self.scan_mirrors(blocks[5], Gress::Egress)?;
        self.scan_resubmits(blocks[2])?;
        self.scan_digests(blocks[2], blocks[1])?;
        self.refuse_egress_digest(blocks[5])?;
        let controls = [(blocks[1], Gress::Ingress), (blocks[4], Gress::Egress)];
        for (d, g) in controls {
            let body = self.lower_control(d, g)?;
            match g {
                Gress::Ingress => self.prog.ingress = body,
                _ => self.prog.egress = body,
            }
        }
        if let Some(&d) = blocks.get(6) {
            self.prog.ghost = self.lower_control(d, Gress::Ghost)?;
        }
        let ig_emit = self.check_deparser(blocks[2], &ig_graph, &eg_graph, Gress::Ingress)?;
        let eg_emit = self.check_deparser(blocks[5], &eg_graph, &ig_graph, Gress::Egress)?;
        // The model runs one parser graph in both gresses where the egress parser parses as
        // the ingress one, or tells mirrored copies apart first (`mirror_select.rs`), or
        // extracts nothing; otherwise the egress parser is a graph of its own.
        let with_copies = self.graph_with_copies(&ig_graph, &eg_graph, eg_span)?;
        let eg_extracts = eg_graph.states.iter().any(|s| !s.extract.is_empty());
        // An ingress that branches on the resubmit flag or the ingress port parses in egress,
        // where they read 0, as its 0 branch: that is what an egress parser without the
        // branch means.
        let same_graph = canonical(&eg_graph) == canonical(&ig_graph)
            || canonical(&eg_graph) == canonical(&mirror_select::as_in_egress(&ig_graph));
        let eg_checksums = eg_graph.states.iter().any(|s| !s.checksum.is_empty());
        // An egress deparser that emits otherwise than the ingress one needs a graph of its
        // own too (the emits are the graph's deparse order).
        // An egress parser that extracts nothing parses with the ingress graph, unless that
        // graph skips bytes (the ingress deparser has removed them already) or writes fields
        // (it would make a header valid, or set metadata, a second time in egress).
        let ig_skips = ig_graph
            .states
            .iter()
            .any(|s| !s.skip.is_empty() || !s.set.is_empty());
        let own_egress = with_copies.is_none()
            && if eg_extracts {
                !same_graph || eg_checksums || (eg_emit.is_some() && eg_emit != ig_emit)
            } else {
                ig_skips
            };
        if !eg_extracts && !self.prog.egress.is_empty() {
            if let Some(h) = self.egress_header_use() {
                return self.err(
                    eg_span,
                    format!(
                        "the egress control uses header `{h}` but the egress parser extracts \
                         nothing; the modelled chip parses egress with the ingress graph, so \
                         write the same parser states in egress"
                    ),
                );
            }
        }
        let _ = ig_span;
        self.prog.parser = if let Some(g) = with_copies {
            Some(merge_states(g, &self.unmerged))
        } else if canonical(&ig_graph) == canonical(&builtin::graph())
            && !own_egress
            && ig_emit.is_none()
        {
            None
        } else {
            Some(merge_states(ig_graph, &self.unmerged))
        };
        if let (Some(g), Some(emit)) = (&mut self.prog.parser, ig_emit) {
            g.emit = emit;
        }
        if own_egress {
            let mut g = merge_states(eg_graph, &self.unmerged);
            g.emit = eg_emit.unwrap_or_default();
            self.prog.egress_parser = Some(g);
        }
        // Actions and tables in the order the program declares them.
        // Each name's first span, looked up once per name (a search per name was quadratic
        // in 100,000 tables).
        let mut first: HashMap<&str, u32> = HashMap::new();
        for (n, span) in &self.spans {
            first.entry(n.as_str()).or_insert(span.pos);
        }
        let place = |n: &str| first.get(n).copied().unwrap_or(u32::MAX);
        let mut acts = std::mem::take(&mut self.prog.actions);
        acts.sort_by_key(|a| place(&a.name));
        self.prog.actions = acts;
        let mut tabs = std::mem::take(&mut self.prog.tables);
        tabs.sort_by_key(|t| place(&t.name));
        self.prog.tables = tabs;
        // Program headers, in declaration order of the headers struct.
        // A header that the program only declares (and the deparser emits) is never valid:
        // it is left out, as p4c's dead-code passes leave it.
        if let Some(g) = &self.prog.parser {
            for st in &g.states {
                self.used_headers.extend(st.extract.iter().cloned());
            }
        }
        let mut hs: Vec<&Instance> = self
            .instances
            .values()
            .filter(|i| !i.builtin && self.used_headers.contains(&i.ir))
            .collect();
        hs.sort_by_key(|i| self.header_decl_index(&i.ir).unwrap_or(usize::MAX));
        self.prog.headers = hs
            .iter()
            .map(|i| ir::HeaderType {
                name: i.ir.clone(),
                fields: i
                    .fields
                    .iter()
                    .map(|(_, n, w)| ir::HeaderField {
                        name: n.rsplit('.').next().unwrap_or(n).to_string(),
                        bits: *w as u16,
                    })
                    .collect(),
            })
            .collect();
        // Emits of headers left out (never valid) go too.
        let kept: BTreeSet<String> = self.prog.headers.iter().map(|h| h.name.clone()).collect();
        for g in self
            .prog
            .parser
            .iter_mut()
            .chain(self.prog.egress_parser.iter_mut())
        {
            g.emit
                .retain(|h| kept.contains(h) || builtin::headers().iter().any(|b| &b.name == h));
        }
        // The model gives a copy with a mirror header the mirror type of that header's place
        // among the program's headers (from 1); the P4 must use that type.
        for m in &self.mirrors {
            if let Some((h, span)) = &m.header {
                let place = self
                    .prog
                    .headers
                    .iter()
                    .position(|x| x.name == *h)
                    .map_or(0, |i| i + 1);
                if place as u128 != m.mirror_type {
                    return self.err(
                        *span,
                        format!(
                            "mirror type {}: the modelled chip gives a copy that starts with header `{h}` mirror type {place}, the header's place among the program's headers (declare the headers so, or use mirror type {place})",
                            m.mirror_type
                        ),
                    );
                }
            }
        }
        self.prog.metadata = self
            .meta_order
            .iter()
            .filter_map(|m| {
                self.meta_used.get(m).map(|&bits| ir::MetadataField {
                    name: m.clone(),
                    bits,
                })
            })
            .collect();
        // The IR's own checks (placement-independent): map their errors back to P4.
        if let Err(e) = crate::program::check::check(&self.prog) {
            let at = self
                .spans
                .iter()
                .find(|(n, _)| e.path.contains(&format!("({n})")))
                .map_or(self.main_span, |x| x.1);
            return self.err(
                at,
                format!("{} (in the lowered program: {})", e.problem, e.path),
            );
        }
        Ok(())
    }

    fn header_decl_index(&self, ir: &str) -> Option<usize> {
        self.spans.iter().position(|(n, _)| n == ir)
    }

    /// A header the egress control names, if any.
    fn egress_header_use(&self) -> Option<String> {
        let names = self
            .instances
            .values()
            .map(|i| i.ir.clone())
            .collect::<Vec<_>>();
        let text = serde_json::to_string(&self.prog.egress).unwrap_or_default();
        let mut acts = String::new();
        for t in &self.prog.tables {
            if text.contains(&format!("\"{}\"", t.name)) {
                acts += &serde_json::to_string(t).unwrap_or_default();
                for a in &t.actions {
                    if let Some(x) = self.prog.actions.iter().find(|x| &x.name == a) {
                        acts += &serde_json::to_string(x).unwrap_or_default();
                    }
                }
            }
        }
        let all = text + &acts;
        names
            .into_iter()
            .find(|n| all.contains(&format!("\"{n}.")) || all.contains(&format!("\"{n}\"")))
    }

    /// The parameters of a block, by what they give access to.
    fn params(&mut self, params: &[Param]) -> R<HashMap<String, ParamKind>> {
        let mut out = HashMap::new();
        // The architecture's blocks take the headers struct, then the user metadata struct,
        // before the intrinsic metadata: a metadata struct holding headers is still metadata.
        let mut structs_seen = 0;
        for p in params {
            let ty = self.resolve(&p.ty, p.span)?;
            let kind = match &ty {
                Ty::Extern(n, _) if n == "packet_in" || n == "packet_out" => ParamKind::Packet,
                Ty::Header(n) | Ty::Struct(n) => {
                    if let Some(&(_, prefix, g)) = INTRINSICS.iter().find(|i| i.0 == n) {
                        ParamKind::Intrinsic(prefix, g, n.clone())
                    } else if matches!(ty, Ty::Struct(_))
                        && structs_seen == 0
                        && self.is_headers_struct(n)
                    {
                        structs_seen += 1;
                        self.declare_instances(n)?;
                        ParamKind::Headers(n.clone())
                    } else if matches!(ty, Ty::Struct(_)) {
                        structs_seen += 1;
                        let root = self
                            .meta_names
                            .entry(n.clone())
                            .or_insert_with(|| p.name.clone())
                            .clone();
                        let mut leaves = Vec::new();
                        self.leaves(n, &root, &mut leaves)?;
                        // A set of what is there already, so that 100,000 fields cost no
                        // more than linear time.
                        let known: std::collections::HashSet<&String> =
                            self.meta_order.iter().collect();
                        let new: Vec<String> =
                            leaves.into_iter().filter(|l| !known.contains(l)).collect();
                        let mut added = std::collections::HashSet::new();
                        for l in new {
                            if added.insert(l.clone()) {
                                self.meta_order.push(l);
                            }
                        }
                        ParamKind::Meta(n.clone())
                    } else {
                        ParamKind::Other
                    }
                }
                _ => ParamKind::Other,
            };
            out.insert(p.name.clone(), kind);
        }
        Ok(out)
    }

    /// Fills `meta_names` from the controls' parameters (ingress, egress, ghost), which
    /// name a metadata struct first.
    fn name_metadata(&mut self, blocks: &[&'a Decl]) -> R<()> {
        for &k in &[1usize, 4, 6] {
            let Some(d) = blocks.get(k) else { continue };
            let DeclKind::Control { params, .. } = &d.kind else {
                continue;
            };
            let mut structs_seen = 0;
            for p in params {
                let Ty::Struct(n) = self.resolve(&p.ty, p.span)? else {
                    continue;
                };
                if INTRINSICS.iter().any(|i| i.0 == n) {
                    continue;
                }
                structs_seen += 1;
                if structs_seen == 1 && self.is_headers_struct(&n) {
                    continue;
                }
                self.meta_names.entry(n).or_insert_with(|| p.name.clone());
            }
        }
        Ok(())
    }

    /// Whether struct `n` holds headers (and is not empty of them).
    fn is_headers_struct(&self, n: &str) -> bool {
        let Some(fs) = self.structs.get(n) else {
            return false;
        };
        fs.is_empty()
            || fs.iter().any(|f| {
                matches!(
                    self.resolve(&f.ty, f.span),
                    Ok(Ty::Header(_)) | Ok(Ty::Stack(..))
                )
            })
    }

    /// The dotted names of the scalar fields of struct `n` under `prefix`.
    fn leaves(&self, n: &str, prefix: &str, out: &mut Vec<String>) -> R<()> {
        let fs = self.structs.get(n).copied().unwrap_or(&[]);
        for f in fs {
            match self.resolve(&f.ty, f.span)? {
                Ty::Struct(s) => self.leaves(&s, &format!("{prefix}.{}", f.name), out)?,
                // A header in the metadata is a group of metadata fields.
                Ty::Header(h) => {
                    for hf in self.headers.get(&h).copied().unwrap_or(&[]) {
                        out.push(format!("{prefix}.{}.{}", f.name, hf.name));
                    }
                }
                _ => out.push(format!("{prefix}.{}", f.name)),
            }
        }
        Ok(())
    }

    /// For a header in the user metadata (`meta.m`), the 1-bit metadata field that holds
    /// its validity (`meta.m.$valid`); `None` for anything else.
    fn meta_header_valid(&mut self, c: &Ctl<'a>, obj: &Expr) -> R<Option<String>> {
        let Some(path) = obj.path() else {
            return Ok(None);
        };
        let comps: Vec<&str> = path.split('.').collect();
        let Some(ParamKind::Meta(s)) = c.params.get(comps[0]).cloned() else {
            return Ok(None);
        };
        let mut ty = Ty::Struct(s.clone());
        for comp in &comps[1..] {
            let (Ty::Struct(sn) | Ty::Header(sn)) = &ty else {
                return Ok(None);
            };
            let fs = match &ty {
                Ty::Struct(_) => self.structs.get(sn).copied().unwrap_or(&[]),
                _ => self.headers.get(sn).copied().unwrap_or(&[]),
            };
            let Some(f) = fs.iter().find(|f| f.name == *comp) else {
                return Ok(None);
            };
            ty = self.resolve(&f.ty, f.span)?;
        }
        if !matches!(ty, Ty::Header(_)) {
            return Ok(None);
        }
        let root = self
            .meta_names
            .get(&s)
            .cloned()
            .unwrap_or(comps[0].to_string());
        let ir = format!("{root}{}.$valid", &path[comps[0].len()..]);
        if !self.meta_order.contains(&ir) {
            self.meta_order.push(ir.clone());
        }
        self.meta_used.insert(ir.clone(), 1);
        Ok(Some(ir))
    }

    /// Registers the header instances of headers struct `n`.
    fn declare_instances(&mut self, n: &str) -> R<()> {
        let fs = self.structs.get(n).copied().unwrap_or(&[]);
        for f in fs {
            match self.resolve(&f.ty, f.span)? {
                Ty::Header(h) => {
                    self.instance(&f.name, &h, f.span)?;
                }
                Ty::Stack(..) => {
                    return self.err(
                        f.span,
                        format!(
                            "header stack `{}`: the IR has no header stacks (its parser never \
                             extracts a header twice)",
                            f.name
                        ),
                    )
                }
                _ => {
                    return self.err(
                        f.span,
                        format!(
                            "field `{}` of headers struct `{n}` is not a header; keep metadata \
                             in the metadata struct",
                            f.name
                        ),
                    )
                }
            }
        }
        Ok(())
    }

    /// The IR view of header instance `inst` of header type `h`.
    fn instance(&mut self, inst: &str, h: &str, span: Span) -> R<Instance> {
        if let Some(i) = self.instances.get(inst) {
            if i.type_name != h {
                return self.err(
                    span,
                    format!(
                        "header instance `{inst}` is a `{h}` here but a `{}` elsewhere; the IR \
                         names headers by instance",
                        i.type_name
                    ),
                );
            }
            return Ok(i.clone());
        }
        let decl = self.headers.get(h).copied().unwrap_or(&[]);
        let mut widths = Vec::new();
        for f in decl {
            let ty = self.resolve(&f.ty, f.span)?;
            match ty {
                Ty::Bits(w, _) if w <= 128 => widths.push(w),
                // `bool` and serializable enums (`enum bit<16> ether_type_t`) are their bits.
                Ty::Bool | Ty::Enum(_, Some(_)) => widths.push(ty.width().unwrap_or(1)),
                Ty::Bits(w, _) => {
                    return self.err(
                        f.span,
                        format!(
                            "header field `{}` is {w} bits; the model's fields are at most 128",
                            f.name
                        ),
                    )
                }
                _ => {
                    return self.err(
                        f.span,
                        format!(
                            "header field `{}` must be a bit<N>, int<N>, bool or serializable \
                             enum",
                            f.name
                        ),
                    )
                }
            }
        }
        let (ir, names, is_builtin) = match builtin_mapping(inst, &widths) {
            Some(names) => (inst.to_string(), names, true),
            None => {
                let ir = if builtin::headers().iter().any(|b| b.name == inst) {
                    format!("p4_{inst}")
                } else {
                    inst.to_string()
                };
                let names = decl.iter().map(|f| format!("{ir}.{}", f.name)).collect();
                (ir, names, false)
            }
        };
        let i = Instance {
            ir: ir.clone(),
            type_name: h.to_string(),
            fields: decl
                .iter()
                .zip(names)
                .zip(&widths)
                .map(|((f, n), &w)| (f.name.clone(), n, w))
                .collect(),
            builtin: is_builtin,
        };
        self.spans.push((ir, span));
        self.instances.insert(inst.to_string(), i.clone());
        Ok(i)
    }

    /// The control context of block `d` running in `gress`.
    fn ctl(&mut self, d: &'a Decl, gress: Gress) -> R<Ctl<'a>> {
        let (name, params, locals) = match &d.kind {
            DeclKind::Control {
                name,
                params,
                locals,
                ..
            }
            | DeclKind::Parser {
                name,
                params,
                locals,
                ..
            } => (name, params, locals),
            _ => unreachable!("blocks are parsers and controls"),
        };
        let mut params = self.params(params)?;
        let mut map = HashMap::new();
        for l in locals {
            let (n, v) = match &l.kind {
                DeclKind::Action { name, .. } => (name.clone(), Local::Action(l)),
                DeclKind::Table { name, .. } => (name.clone(), Local::Table(l)),
                DeclKind::Instance { ty, name, .. }
                    if value_sets::is_value_set(ty)
                        && matches!(d.kind, DeclKind::Parser { .. }) =>
                {
                    (
                        name.clone(),
                        Local::Extern(l, value_sets::VALUE_SET.to_string()),
                    )
                }
                DeclKind::Instance { ty, name, .. } => {
                    let ext = match self.resolve(ty, l.span)? {
                        Ty::Extern(e, _) => e,
                        _ => {
                            return self.err(
                                l.span,
                                format!("`{name}`: only externs are instantiated in a block"),
                            )
                        }
                    };
                    if !LOWERED_EXTERNS.contains(&ext.as_str()) {
                        return self.err(l.span, refused_extern(&ext));
                    }
                    (name.clone(), Local::Extern(l, ext))
                }
                DeclKind::Const { name, ty, value } => {
                    let (v, w) = self.const_value(value, &map)?;
                    let w = self.resolve(ty, l.span)?.width().or(w);
                    (name.clone(), Local::Const(v, w))
                }
                DeclKind::Var { name: v, ty, init } => {
                    // A control's (or a parser's) variable is what bf-p4c makes of it: a
                    // metadata field in the PHV, here `p4.<block>.<name>`. The Ghost control
                    // needs them: it has no metadata struct of its own to compute an index in.
                    if !matches!(d.kind, DeclKind::Control { .. }) {
                        // bf-p4c's tests skip the port metadata by extracting a local header
                        // of its width; the chip hands the intrinsic metadata over without
                        // those bytes, so it is `advance(PORT_METADATA_SIZE)`.
                        if let (Ty::Header(h), None) = (self.resolve(ty, l.span)?, init) {
                            let mut bits = 0;
                            for f in self.headers.get(&h).copied().unwrap_or(&[]) {
                                bits += self.resolve(&f.ty, f.span)?.width().unwrap_or(0);
                            }
                            params.insert(v.clone(), ParamKind::Skip(bits));
                            continue;
                        }
                        // Otherwise a parser's variable is a metadata field as a control's
                        // is: the parser writes it (`local = hdr.b.f`) and selects on it.
                    }
                    if init.is_some() {
                        return self.err(
                            l.span,
                            format!(
                                "variable `{v}` with an initial value: the IR sets fields only in \
                                 actions (assign it in one)"
                            ),
                        );
                    }
                    let bits = match self.resolve(ty, l.span)?.width() {
                        Some(b) if (1..=crate::program::check::WIDE_MAX_BITS).contains(&b) => b,
                        _ => {
                            return self.err(
                                l.span,
                                format!(
                                    "variable `{v}`: a control's variables are bit<1> to \
                                     bit<{}> (the IR's metadata fields)",
                                    crate::program::check::WIDE_MAX_BITS
                                ),
                            )
                        }
                    };
                    if params.contains_key(v) || map.contains_key(v) {
                        return self.err(l.span, format!("`{v}` is declared twice in `{name}`"));
                    }
                    let ir = format!("p4.{name}.{v}");
                    if !self.meta_order.contains(&ir) {
                        self.meta_order.push(ir.clone());
                    }
                    params.insert(v.clone(), ParamKind::Var(ir, bits));
                    continue;
                }
                _ => return self.err(l.span, "this declaration is not supported in a block"),
            };
            if map.insert(n.clone(), v).is_some() {
                return self.err(l.span, format!("`{n}` is declared twice in `{name}`"));
            }
        }
        // Extern instances declared at the top level (a Register the ghost thread and the
        // ingress share) are visible in every block that does not declare the name itself.
        for d in self.decls {
            let DeclKind::Instance {
                ty, name: iname, ..
            } = &d.kind
            else {
                continue;
            };
            let Type::Named(tn, _) = ty else { continue };
            if tn == "Pipeline" || tn == "Switch" || map.contains_key(iname) {
                continue;
            }
            match self.resolve(ty, d.span)? {
                Ty::Extern(e, _) if LOWERED_EXTERNS.contains(&e.as_str()) => {
                    map.insert(iname.clone(), Local::Extern(d, e));
                }
                Ty::Extern(e, _) => return self.err(d.span, refused_extern(&e)),
                _ => {
                    return self.err(
                        d.span,
                        format!(
                        "`{iname}`: only externs and packages are instantiated at the top level"
                    ),
                    )
                }
            }
        }
        Ok(Ctl {
            name: name.clone(),
            gress,
            params,
            locals: map,
        })
    }

    /// Whether `e` is a field (or a cast) of a signed type, `int<N>`: its min, max and
    /// right shift are the signed ones.
    fn is_signed(&self, c: &Ctl<'a>, e: &Expr) -> bool {
        if let ExprKind::Cast(t, _) = &e.kind {
            return matches!(self.resolve(t, e.span), Ok(Ty::Bits(_, true)));
        }
        matches!(self.path_type(c, e), Some(Ty::Bits(_, true)))
    }

    /// The type of the header, struct or field that path `e` names through the block's
    /// headers and metadata parameters.
    fn path_type(&self, c: &Ctl<'a>, e: &Expr) -> Option<Ty> {
        let path = e.path()?;
        let mut comps = path.split('.');
        let first = comps.next().unwrap_or_default();
        let mut ty = match c.params.get(first) {
            Some(ParamKind::Headers(n) | ParamKind::Meta(n)) => Ty::Struct(n.clone()),
            _ => return None,
        };
        for comp in comps {
            let fields = match &ty {
                Ty::Struct(n) => self.structs.get(n).copied(),
                Ty::Header(n) => self.headers.get(n).copied(),
                _ => None,
            };
            let f = fields?.iter().find(|f| f.name == comp)?;
            ty = self.resolve(&f.ty, f.span).ok()?;
        }
        Some(ty)
    }

    /// `body` with every assignment of a list to a struct or header (`meta.pair = {0, 0};`,
    /// `hdr.h = {42};`) written out field by field (a header is also made valid), as p4c's
    /// `SimplifyDefUse` front end leaves it; blocks are kept.
    fn expand_list_assigns(&self, c: &Ctl<'a>, body: &[Stmt]) -> R<Vec<Stmt>> {
        let mut out = Vec::new();
        for st in body {
            match &st.kind {
                StmtKind::Block(b) => out.push(Stmt {
                    kind: StmtKind::Block(self.expand_list_assigns(c, b)?),
                    span: st.span,
                }),
                StmtKind::Assign(lhs, rhs) => {
                    let ExprKind::List(items) = &rhs.kind else {
                        out.push(st.clone());
                        continue;
                    };
                    let (fields, header) = match self.path_type(c, lhs) {
                        Some(Ty::Struct(n)) => (self.structs.get(&n).copied(), false),
                        Some(Ty::Header(n)) => (self.headers.get(&n).copied(), true),
                        _ => (None, false),
                    };
                    let Some(fields) = fields else {
                        return self.err(rhs.span, "a list is assigned to a struct or a header");
                    };
                    if fields.len() != items.len() {
                        return self.err(
                            rhs.span,
                            format!(
                                "the list gives {} values for {} fields",
                                items.len(),
                                fields.len()
                            ),
                        );
                    }
                    let member = |name: &str| Expr {
                        kind: ExprKind::Member(Box::new(lhs.clone()), name.to_string()),
                        span: lhs.span,
                    };
                    if header {
                        let call = Expr {
                            kind: ExprKind::Call {
                                func: Box::new(member("setValid")),
                                targs: Vec::new(),
                                args: Vec::new(),
                            },
                            span: st.span,
                        };
                        out.push(Stmt {
                            kind: StmtKind::Call(call),
                            span: st.span,
                        });
                    }
                    for (f, v) in fields.iter().zip(items) {
                        out.push(Stmt {
                            kind: StmtKind::Assign(member(&f.name), v.clone()),
                            span: st.span,
                        });
                    }
                }
                _ => out.push(st.clone()),
            }
        }
        Ok(out)
    }

    /// The field `e` names.
    fn field(&mut self, c: &Ctl<'a>, e: &Expr) -> R<FieldRef> {
        if let ExprKind::Slice(b, hi, lo) = &e.kind {
            let base = self.field(c, b)?;
            let (hi, _) = self.const_value(hi, &c.locals)?;
            let (lo, _) = self.const_value(lo, &c.locals)?;
            if hi < lo || hi >= base.bits as u128 {
                return self.err(
                    e.span,
                    format!(
                        "slice [{hi}:{lo}] of a {}-bit field: need hi >= lo and hi < {}",
                        base.bits, base.bits
                    ),
                );
            }
            return Ok(FieldRef {
                ir: slice_name(&base.ir, hi as u32, lo as u32),
                bits: (hi - lo + 1) as u32,
            });
        }
        let Some(path) = e.path() else {
            return self.err(e.span, "expected a field");
        };
        let comps: Vec<&str> = path.split('.').collect();
        let Some(kind) = c.params.get(comps[0]).cloned() else {
            return self.err(e.span, format!("unknown name `{}`", comps[0]));
        };
        match kind {
            ParamKind::Headers(s) => {
                let fs = self.structs.get(&s).copied().unwrap_or(&[]);
                let Some(hf) = comps.get(1).and_then(|n| fs.iter().find(|f| f.name == *n)) else {
                    return self.err(
                        e.span,
                        format!(
                            "`{}` has no header `{}`",
                            comps[0],
                            comps.get(1).unwrap_or(&"")
                        ),
                    );
                };
                let Ty::Header(h) = self.resolve(&hf.ty, hf.span)? else {
                    return self.err(e.span, format!("`{path}` is not a header"));
                };
                let inst = self.instance(&hf.name, &h, hf.span)?;
                self.used_headers.insert(inst.ir.clone());
                match comps.get(2) {
                    None => self.err(
                        e.span,
                        format!("`{path}` is a header; name one of its fields"),
                    ),
                    Some(f) if comps.len() == 3 => match inst.fields.iter().find(|x| x.0 == *f) {
                        Some((_, ir, w)) => Ok(FieldRef {
                            ir: ir.clone(),
                            bits: *w,
                        }),
                        None => self.err(e.span, format!("header `{h}` has no field `{f}`")),
                    },
                    _ => self.err(e.span, format!("`{path}` is not a field")),
                }
            }
            ParamKind::Meta(s) => {
                let mut ty = Ty::Struct(s.clone());
                for (k, comp) in comps.iter().enumerate().skip(1) {
                    let fs = match &ty {
                        Ty::Struct(sn) => self.structs.get(sn).copied().unwrap_or(&[]),
                        Ty::Header(hn) => self.headers.get(hn).copied().unwrap_or(&[]),
                        _ => {
                            return self.err(
                                e.span,
                                format!("`{}` is not a struct", comps[..k].join(".")),
                            )
                        }
                    };
                    let (Ty::Struct(sn) | Ty::Header(sn)) = &ty else {
                        unreachable!("matched above")
                    };
                    let Some(f) = fs.iter().find(|f| f.name == *comp) else {
                        return self.err(e.span, format!("struct `{sn}` has no field `{comp}`"));
                    };
                    ty = self.resolve(&f.ty, f.span)?;
                }
                let Some(bits) = ty.width() else {
                    return self.err(
                        e.span,
                        format!(
                            "`{path}` is not a scalar field (headers go in the headers struct)"
                        ),
                    );
                };
                if !(1..=crate::program::check::WIDE_MAX_BITS).contains(&bits) {
                    return self.err(
                        e.span,
                        format!(
                            "metadata field `{path}` is {bits} bits; the IR's metadata fields \
                             are 1 to {} bits",
                            crate::program::check::WIDE_MAX_BITS
                        ),
                    );
                }
                // One IR name whatever a block calls its metadata parameter.
                let ir = match self.meta_names.get(&s) {
                    Some(root) => format!("{root}{}", &path[comps[0].len()..]),
                    None => path,
                };
                self.meta_used.insert(ir.clone(), bits as u8);
                Ok(FieldRef { ir, bits })
            }
            ParamKind::Intrinsic(prefix, g, tyname) => {
                if comps.len() != 2 {
                    return self.err(e.span, format!("`{path}` is not a field"));
                }
                let decl = self
                    .headers
                    .get(&tyname)
                    .or_else(|| self.structs.get(&tyname))
                    .copied()
                    .unwrap_or(&[]);
                let Some(f) = decl.iter().find(|f| f.name == comps[1]) else {
                    return self.err(e.span, format!("`{tyname}` has no field `{}`", comps[1]));
                };
                let bits = self.resolve(&f.ty, f.span)?.width().unwrap_or(0);
                if g != c.gress {
                    return self.err(
                        e.span,
                        format!(
                            "`{path}` is {} intrinsic metadata, but `{}` runs in {}",
                            g.name(),
                            c.name,
                            c.gress.name()
                        ),
                    );
                }
                let ir = format!("{prefix}.{}", comps[1]);
                if fields::builtin(&ir).is_none() && fields::wide_builtin(&ir).is_none() {
                    return self.err(
                        e.span,
                        format!(
                            "intrinsic metadata `{path}` (`{ir}`) is not modelled by t2sim's chip"
                        ),
                    );
                }
                Ok(FieldRef { ir, bits })
            }
            ParamKind::Var(ir, bits) => {
                if comps.len() != 1 {
                    return self.err(e.span, format!("`{path}` is not a field"));
                }
                self.meta_used.insert(ir.clone(), bits as u8);
                Ok(FieldRef { ir, bits })
            }
            ParamKind::Skip(_) => self.err(
                e.span,
                format!(
                    "`{path}` is a parser's local header, which the model extracts only to skip \
                     the port metadata"
                ),
            ),
            ParamKind::Packet | ParamKind::Other => {
                self.err(e.span, format!("`{path}` is not a field"))
            }
        }
    }
}

/// The graph with every state that only one unconditional transition reaches merged into
/// the state it comes from (as bf-p4c merges them: fewer parser TCAM rows), so that
/// `start { extract(ig_intr_md); advance(..); transition parse_ethernet; }` becomes a `start`
/// that extracts Ethernet.
/// States named in `keep` (`@dontmerge`) are neither merged away nor merged into.
fn merge_states(mut g: ir::ParserGraph, keep: &BTreeSet<String>) -> ir::ParserGraph {
    loop {
        let refs = |g: &ir::ParserGraph, n: &str| -> usize {
            g.states
                .iter()
                .map(|s| match &s.transition {
                    ir::Transition::Goto(t) => (t == n) as usize,
                    ir::Transition::Select { cases, default, .. } => {
                        cases.iter().filter(|c| c.next == n).count() + (default == n) as usize
                    }
                })
                .sum()
        };
        let found = g
            .states
            .iter()
            .enumerate()
            .find_map(|(i, s)| match &s.transition {
                ir::Transition::Goto(t)
                    if t != &s.name
                        && t != ir::START
                        && refs(&g, t) == 1
                        && !keep.contains(t)
                        && !keep.contains(&s.name)
                        // A state's writes come after its extracts: writes before another
                        // state's extracts, or packet reads from where that one starts,
                        // would mean something else merged.
                        && s.set.is_empty() =>
                {
                    g.states
                        .iter()
                        .position(|x| &x.name == t)
                        .filter(|&j| {
                            !g.states[j]
                                .set
                                .iter()
                                .any(|w| matches!(w.src, ir::ParserValue::Packet { .. }))
                        })
                        .map(|j| (i, j))
                }
                _ => None,
            });
        let Some((i, j)) = found else {
            return g;
        };
        let next = g.states.remove(j);
        let i = if j < i { i - 1 } else { i };
        let before = g.states[i].extract.len() as u32;
        g.states[i].skip.extend(next.skip.into_iter().map(|mut s| {
            s.after_extracts += before;
            s
        }));
        g.states[i]
            .checksum
            .extend(next.checksum.into_iter().map(|mut c| {
                c.after_extracts += before;
                c
            }));
        g.states[i].extract.extend(next.extract);
        g.states[i].set.extend(next.set);
        g.states[i].transition = next.transition;
    }
}

/// A parser graph in a form where two graphs that parse alike compare equal: states merged
/// through unconditional transitions, named by their path from `start`.
fn canonical(g: &ir::ParserGraph) -> String {
    canonical_from(g, ir::START)
}

/// [`canonical`] of the part of `g` reached from state `from`.
///
/// The form is that of the tree of paths from `from` (cut 64 selects deep), but each
/// subtree is written once and named by its number: numbers are given in the order a
/// depth-first walk first meets a subtree's text, so two graphs whose trees are equal give
/// the same form however their states are shared, and the form's size is linear in the
/// graph, not in its number of paths (a chain of 30 two-way selects has 2^30).
fn canonical_from(g: &ir::ParserGraph, from: &str) -> String {
    struct Canon<'g> {
        g: &'g ir::ParserGraph,
        index: HashMap<&'g str, usize>,
        memo: HashMap<(usize, usize), usize>,
        ids: HashMap<String, usize>,
        table: Vec<String>,
    }
    impl Canon<'_> {
        fn id(&mut self, text: String) -> usize {
            if let Some(&i) = self.ids.get(&text) {
                return i;
            }
            self.table.push(text.clone());
            self.ids.insert(text, self.table.len() - 1);
            self.table.len() - 1
        }
        fn node(&mut self, name: &str, depth: usize) -> usize {
            if depth > 64 {
                return self.id("<loop>".to_string());
            }
            let Some(&start) = self.index.get(name) else {
                return self.id(name.to_string());
            };
            if let Some(&i) = self.memo.get(&(start, depth)) {
                return i;
            }
            let g = self.g;
            // Extracts, with the bytes skipped (`+N`) where they are skipped.
            let tokens = |s: &ir::ParserState| -> Vec<String> {
                let mut out = Vec::new();
                for k in 0..=s.extract.len() {
                    for sk in s.skip.iter().filter(|x| x.after_extracts as usize == k) {
                        out.push(format!("+{}", sk.bits));
                    }
                    out.extend(s.extract.get(k).cloned());
                }
                out
            };
            let mut s = &g.states[start];
            let mut extracts = tokens(s);
            let mut sets: Vec<&ir::ParserSet> = s.set.iter().collect();
            let mut hops = 0;
            while let ir::Transition::Goto(n) = &s.transition {
                match self.index.get(n.as_str()) {
                    Some(&next) if hops < 64 => {
                        let next = &g.states[next];
                        extracts.extend(tokens(next));
                        sets.extend(&next.set);
                        s = next;
                        hops += 1;
                    }
                    _ => break,
                }
            }
            let mut out = format!("[{}]", extracts.join(","));
            if !sets.is_empty() {
                out.push_str(&format!("{sets:?}"));
            }
            match &s.transition {
                ir::Transition::Goto(n) => out.push_str(&format!("->{n}")),
                ir::Transition::Select {
                    keys,
                    cases,
                    default,
                } => {
                    out.push_str(&format!("select({})", keys.join(",")));
                    for c in cases {
                        let child = self.node(&c.next, depth + 1);
                        out.push_str(&format!("{:?}:(#{child})", c.values));
                    }
                    let child = self.node(default, depth + 1);
                    out.push_str(&format!("default:(#{child})"));
                }
            }
            let i = self.id(out);
            self.memo.insert((start, depth), i);
            i
        }
    }
    let mut c = Canon {
        g,
        index: g
            .states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect(),
        memo: HashMap::new(),
        ids: HashMap::new(),
        table: Vec::new(),
    };
    let root = c.node(from, 0);
    format!("{}\n#{root}", c.table.join("\n"))
}

/// Whether `e` is `mirror_type` of the deparser intrinsic metadata.
fn is_mirror_type(c: &Ctl<'_>, e: &Expr) -> bool {
    let Some(p) = e.path() else { return false };
    let comps: Vec<&str> = p.split('.').collect();
    comps.len() == 2
        && comps[1] == "mirror_type"
        && matches!(c.params.get(comps[0]), Some(ParamKind::Intrinsic(pre, ..))
            if *pre == "ig_intr_dprsr_md" || *pre == "eg_intr_dprsr_md")
}

/// What a test of a table's result records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flag {
    Hit,
    ActionRun,
}

/// `t.apply().hit` (or `.miss`, `.action_run`) with `t` a table of `c`: the table and the
/// member.
fn table_result<'e>(c: &Ctl<'_>, e: &'e Expr) -> Option<(String, &'e str)> {
    let ExprKind::Member(call, m) = &e.kind else {
        return None;
    };
    let (obj, "apply", []) = method_call(call)? else {
        return None;
    };
    let t = obj.path()?;
    matches!(c.locals.get(&t), Some(Local::Table(_))).then_some((t, m.as_str()))
}

/// `a cmp b` for a P4 comparison operator.
fn cmp_of(op: BinOp) -> Option<Cmp> {
    Some(match op {
        BinOp::Eq => Cmp::Eq,
        BinOp::Ne => Cmp::Ne,
        BinOp::Lt => Cmp::Lt,
        BinOp::Le => Cmp::Le,
        BinOp::Gt => Cmp::Gt,
        BinOp::Ge => Cmp::Ge,
        _ => return None,
    })
}

/// `b cmp' a` equal to `a cmp b`.
fn flip(c: Cmp) -> Cmp {
    match c {
        Cmp::Lt => Cmp::Gt,
        Cmp::Le => Cmp::Ge,
        Cmp::Gt => Cmp::Lt,
        Cmp::Ge => Cmp::Le,
        c => c,
    }
}

/// The method call `obj.method(args)` an expression is, if it is one.
fn method_call(e: &Expr) -> Option<(&Expr, &str, &[Expr])> {
    match &e.kind {
        ExprKind::Call { func, args, .. } => match &func.kind {
            ExprKind::Member(obj, m) => Some((obj, m.as_str(), args.as_slice())),
            _ => None,
        },
        _ => None,
    }
}

/// What a field was last set to in the action being lowered (`None`: computed).
type Written = HashMap<String, Option<Operand>>;

/// The parts of `a ++ b ++ ...`, most significant first.
fn concat_parts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinOp::Concat, a, b) => {
            concat_parts(a, out);
            concat_parts(b, out);
        }
        _ => out.push(e),
    }
}

/// An expression as source text (for key names and messages).
fn expr_text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { value, width } => match width {
            Some((w, s)) => format!("{w}{}{value}", if *s { 's' } else { 'w' }),
            None => value.to_string(),
        },
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("\"{s}\""),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Member(b, m) => format!("{}.{m}", expr_text(b)),
        ExprKind::Index(b, i) => format!("{}[{}]", expr_text(b), expr_text(i)),
        ExprKind::Slice(b, h, l) => format!("{}[{}:{}]", expr_text(b), expr_text(h), expr_text(l)),
        ExprKind::Call { func, args, .. } => format!(
            "{}({})",
            expr_text(func),
            args.iter().map(expr_text).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Unary(op, a) => format!(
            "{}{}",
            match op {
                UnOp::Not => "!",
                UnOp::BitNot => "~",
                UnOp::Neg => "-",
            },
            expr_text(a)
        ),
        ExprKind::Binary(op, a, b) => format!("{} {} {}", expr_text(a), op.text(), expr_text(b)),
        ExprKind::Cast(_, a) => format!("(cast) {}", expr_text(a)),
        ExprKind::Ternary(a, b, c) => {
            format!("{} ? {} : {}", expr_text(a), expr_text(b), expr_text(c))
        }
        ExprKind::List(v) => format!(
            "{{{}}}",
            v.iter().map(expr_text).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Default => "default".to_string(),
    }
}
