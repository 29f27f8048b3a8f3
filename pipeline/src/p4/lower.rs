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

mod counters;
mod digests;
mod exits;
mod overhead;
mod resubmit;
mod stack_loops;
mod stacks;
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
    let unrolled = stacks::unroll(src, decls)?;
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
        Ok(())
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
        if depth > 32 {
            return self.err(span, "typedefs refer to each other in a loop");
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
                } else if let Some((w, _)) = self.enums.get(n) {
                    Ty::Enum(n.clone(), *w)
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
                let v = match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div if y != 0 => x / y,
                    BinOp::Mod if y != 0 => x % y,
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    BinOp::Shl => x.checked_shl(y as u32).unwrap_or(0),
                    BinOp::Shr => x.checked_shr(y as u32).unwrap_or(0),
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
            let at = decls.last().map_or(
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
        // Parsers first: they declare the header instances.
        let (ig_graph, ig_span) = self.lower_parser(blocks[0], Gress::Ingress)?;
        let (eg_graph, eg_span) = self.lower_parser(blocks[3], Gress::Egress)?;
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
        self.check_deparser(blocks[2], &ig_graph)?;
        self.check_deparser(blocks[5], &eg_graph)?;
        // The model runs one parser graph in both gresses: the egress one when it tells
        // mirrored copies apart first (`mirror_select.rs`).
        let with_copies = self.graph_with_copies(&ig_graph, &eg_graph, eg_span)?;
        let eg_extracts = eg_graph.states.iter().any(|s| !s.extract.is_empty());
        if with_copies.is_none() && eg_extracts && canonical(&eg_graph) != canonical(&ig_graph) {
            return self.err(
                eg_span,
                "the egress parser differs from the ingress parser: the modelled chip runs one \
                 parser graph in both gresses (write the same states, or extract nothing in \
                 egress)",
            );
        }
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
        } else if canonical(&ig_graph) == canonical(&builtin::graph()) {
            None
        } else {
            Some(merge_states(ig_graph, &self.unmerged))
        };
        // Actions and tables in the order the program declares them.
        let place = |n: &str| {
            self.spans
                .iter()
                .find(|x| x.0 == n)
                .map_or(u32::MAX, |x| x.1.pos)
        };
        let mut acts = std::mem::take(&mut self.prog.actions);
        acts.sort_by_key(|a| place(&a.name));
        self.prog.actions = acts;
        let mut tabs = std::mem::take(&mut self.prog.tables);
        tabs.sort_by_key(|t| place(&t.name));
        self.prog.tables = tabs;
        // Program headers, in declaration order of the headers struct.
        let mut hs: Vec<&Instance> = self.instances.values().filter(|i| !i.builtin).collect();
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
        for p in params {
            let ty = self.resolve(&p.ty, p.span)?;
            let kind = match &ty {
                Ty::Extern(n, _) if n == "packet_in" || n == "packet_out" => ParamKind::Packet,
                Ty::Header(n) | Ty::Struct(n) => {
                    if let Some(&(_, prefix, g)) = INTRINSICS.iter().find(|i| i.0 == n) {
                        ParamKind::Intrinsic(prefix, g, n.clone())
                    } else if matches!(ty, Ty::Struct(_)) && self.is_headers_struct(n) {
                        self.declare_instances(n)?;
                        ParamKind::Headers(n.clone())
                    } else if matches!(ty, Ty::Struct(_)) {
                        let mut leaves = Vec::new();
                        self.leaves(n, &p.name, &mut leaves)?;
                        for l in leaves {
                            if !self.meta_order.contains(&l) {
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
                _ => out.push(format!("{prefix}.{}", f.name)),
            }
        }
        Ok(())
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
            match self.resolve(&f.ty, f.span)? {
                Ty::Bits(w, _) if w <= 128 => widths.push(w),
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
                        format!("header field `{}` must be a bit<N>", f.name),
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
                    // A control's variable is what bf-p4c makes of it: a metadata field in
                    // the PHV, here `p4.<control>.<name>`. The Ghost control needs them:
                    // it has no metadata struct of its own to compute an index in.
                    if !matches!(d.kind, DeclKind::Control { .. }) {
                        return self.err(
                            l.span,
                            format!(
                                "variable `{v}` in a parser: the model's parser only extracts \
                                 headers"
                            ),
                        );
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
                        Some(b) if (1..=32).contains(&b) => b,
                        _ => {
                            return self.err(
                                l.span,
                                format!(
                                    "variable `{v}`: a control's variables are bit<1> to \
                                     bit<32> (the IR's metadata fields)"
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
                let mut ty = Ty::Struct(s);
                for (k, comp) in comps.iter().enumerate().skip(1) {
                    let Ty::Struct(sn) = &ty else {
                        return self.err(
                            e.span,
                            format!("`{}` is not a struct", comps[..k].join(".")),
                        );
                    };
                    let fs = self.structs.get(sn).copied().unwrap_or(&[]);
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
                if !(1..=32).contains(&bits) {
                    return self.err(
                        e.span,
                        format!("metadata field `{path}` is {bits} bits; the IR's metadata fields are 1 to 32 bits"),
                    );
                }
                self.meta_used.insert(path.clone(), bits as u8);
                Ok(FieldRef { ir: path, bits })
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
                        && !keep.contains(&s.name) =>
                {
                    g.states.iter().position(|x| &x.name == t).map(|j| (i, j))
                }
                _ => None,
            });
        let Some((i, j)) = found else {
            return g;
        };
        let next = g.states.remove(j);
        let i = if j < i { i - 1 } else { i };
        g.states[i].extract.extend(next.extract);
        g.states[i].transition = next.transition;
    }
}

/// A parser graph in a form where two graphs that parse alike compare equal: states merged
/// through unconditional transitions, named by their path from `start`.
fn canonical(g: &ir::ParserGraph) -> String {
    canonical_from(g, ir::START)
}

/// [`canonical`] of the part of `g` reached from state `from`.
fn canonical_from(g: &ir::ParserGraph, from: &str) -> String {
    fn walk(g: &ir::ParserGraph, name: &str, depth: usize, out: &mut String) {
        if depth > 64 {
            out.push_str("<loop>");
            return;
        }
        let Some(mut s) = g.states.iter().find(|s| s.name == name) else {
            out.push_str(name);
            return;
        };
        let mut extracts = s.extract.clone();
        let mut hops = 0;
        while let ir::Transition::Goto(n) = &s.transition {
            match g.states.iter().find(|x| &x.name == n) {
                Some(next) if hops < 64 => {
                    extracts.extend(next.extract.iter().cloned());
                    s = next;
                    hops += 1;
                }
                _ => break,
            }
        }
        out.push_str(&format!("[{}]", extracts.join(",")));
        match &s.transition {
            ir::Transition::Goto(n) => out.push_str(&format!("->{n}")),
            ir::Transition::Select {
                keys,
                cases,
                default,
            } => {
                out.push_str(&format!("select({})", keys.join(",")));
                for c in cases {
                    out.push_str(&format!("{:?}:(", c.values));
                    walk(g, &c.next, depth + 1, out);
                    out.push(')');
                }
                out.push_str("default:(");
                walk(g, default, depth + 1, out);
                out.push(')');
            }
        }
    }
    let mut out = String::new();
    walk(g, from, 0, &mut out);
    out
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

impl<'a> Lowerer<'a> {
    /// Lowers a parser into an IR graph (state names kept).
    fn lower_parser(&mut self, d: &'a Decl, g: Gress) -> R<(ir::ParserGraph, Span)> {
        let c = self.ctl(d, g)?;
        let DeclKind::Parser { states, .. } = &d.kind else {
            unreachable!()
        };
        let names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
        if !names.contains(&ir::START) {
            return self.err(d.span, format!("parser `{}` has no `start` state", c.name));
        }
        // The states the one extracting the intrinsic metadata goes to: they may skip the
        // port metadata (TNA's resubmit idiom selects on `resubmit_flag` first).
        let after_intrinsic = self.states_after_intrinsic(&c, states);
        let mut out = Vec::new();
        let mut value_sets: Vec<ir::ValueSet> = Vec::new();
        for s in states {
            if s.name == ir::ACCEPT || s.name == ir::REJECT {
                return self.err(s.span, format!("a state cannot be named `{}`", s.name));
            }
            for a in &s.annotations {
                if a.name != "dontmerge" {
                    continue;
                }
                // bf-p4c's `@dontmerge("ingress")`: the model runs one graph in both
                // gresses, so either gress keeps the state apart in both.
                let gress_ok = match a.args.as_slice() {
                    [] => true,
                    [e] => matches!(&e.kind, ExprKind::Str(g) if g == "ingress" || g == "egress"),
                    _ => false,
                };
                if !gress_ok {
                    return self.err(
                        a.span,
                        "@dontmerge takes no argument or \"ingress\" / \"egress\"",
                    );
                }
                self.unmerged.insert(s.name.clone());
            }
            let mut extract = Vec::new();
            let mut intrinsic = after_intrinsic.contains(&s.name);
            for st in &s.body {
                let bad = |l: &Self| {
                    l.err(
                        st.span,
                        "the model's parser only extracts headers and selects on their \
                         fields; this statement has no IR equivalent",
                    )
                };
                match &st.kind {
                    StmtKind::Empty => {}
                    StmtKind::Call(e) => {
                        let Some((obj, m, args)) = method_call(e) else {
                            return bad(self);
                        };
                        let is_pkt = obj
                            .path()
                            .is_some_and(|p| matches!(c.params.get(&p), Some(ParamKind::Packet)));
                        if !is_pkt {
                            return bad(self);
                        }
                        match (m, args) {
                            ("extract", [a]) => {
                                let p = a.path().unwrap_or_default();
                                let comps: Vec<&str> = p.split('.').collect();
                                match c.params.get(comps[0]) {
                                    Some(ParamKind::Intrinsic(..)) if comps.len() == 1 => {
                                        // The chip fills the intrinsic metadata itself.
                                        intrinsic = true;
                                    }
                                    Some(ParamKind::Headers(sname)) if comps.len() == 2 => {
                                        let fs = self.structs.get(sname).copied().unwrap_or(&[]);
                                        let Some(f) = fs.iter().find(|f| f.name == comps[1]) else {
                                            return self.err(
                                                a.span,
                                                format!(
                                                    "`{}` has no header `{}`",
                                                    comps[0], comps[1]
                                                ),
                                            );
                                        };
                                        let Ty::Header(h) = self.resolve(&f.ty, f.span)? else {
                                            return self
                                                .err(a.span, format!("`{p}` is not a header"));
                                        };
                                        let inst = self.instance(&f.name, &h, f.span)?;
                                        extract.push(inst.ir);
                                    }
                                    _ => return self.err(
                                        a.span,
                                        "only a header of the headers struct (or the intrinsic \
                                             metadata) can be extracted",
                                    ),
                                }
                            }
                            ("advance", [_]) if intrinsic && extract.is_empty() => {
                                // Skipping the port metadata after the intrinsic metadata.
                            }
                            ("advance", _) => {
                                return self.err(
                                    st.span,
                                    "`advance` is supported only to skip the port metadata after \
                                     extracting the intrinsic metadata: the model's parser \
                                     extracts whole headers",
                                )
                            }
                            ("lookahead", _) => {
                                return self.err(
                                    st.span,
                                    "`lookahead` is not supported: the model's parser selects on \
                                     extracted fields only",
                                )
                            }
                            _ => return bad(self),
                        }
                    }
                    StmtKind::Var(_) | StmtKind::Assign(..) => {
                        return self.err(
                            st.span,
                            "assignments in a parser are not supported: the model's parser \
                             only extracts headers (set metadata in a control)",
                        )
                    }
                    _ => return bad(self),
                }
            }
            let transition = match &s.transition {
                None => ir::Transition::Goto(ir::REJECT.to_string()),
                Some(Transition::Goto(n, sp)) => {
                    self.state_name(&names, n, *sp)?;
                    ir::Transition::Goto(n.clone())
                }
                Some(Transition::Select { keys, cases, span }) => {
                    let mut kf = Vec::new();
                    for k in keys {
                        let copy_type = self.lookahead_key(&c, k, !extract.is_empty())?;
                        kf.push(match copy_type {
                            Some(f) => f,
                            None => self.select_key_field(&c, k)?,
                        });
                    }
                    let mut out_cases = Vec::new();
                    let mut default = ir::REJECT.to_string();
                    for case in cases {
                        self.state_name(&names, &case.next, case.span)?;
                        if let Some(vs) = self.value_set_case(
                            &c,
                            &case.keysets,
                            &kf,
                            &case.next,
                            &mut value_sets,
                        )? {
                            out_cases.push(vs);
                            continue;
                        }
                        if case.keysets.len() == 1 && case.keysets[0].kind == ExprKind::Default {
                            default = case.next.clone();
                            // Later cases can never match.
                            break;
                        }
                        if case.keysets.len() != kf.len() {
                            return self.err(
                                case.span,
                                format!(
                                    "the case gives {} values for {} select keys",
                                    case.keysets.len(),
                                    kf.len()
                                ),
                            );
                        }
                        let mut values = Vec::new();
                        for (ks, f) in case.keysets.iter().zip(&kf) {
                            values.push(self.key_value(&c, ks, f.bits)?);
                        }
                        out_cases.push(ir::SelectCase {
                            values,
                            next: case.next.clone(),
                            value_set: None,
                        });
                    }
                    let _ = span;
                    ir::Transition::Select {
                        keys: kf.into_iter().map(|f| f.ir).collect(),
                        cases: out_cases,
                        default,
                    }
                }
            };
            out.push(ir::ParserState {
                name: s.name.clone(),
                extract,
                transition,
            });
        }
        Ok((
            ir::ParserGraph {
                states: out,
                value_sets,
            },
            d.span,
        ))
    }

    fn state_name(&self, names: &[&str], n: &str, span: Span) -> R<()> {
        if n == ir::ACCEPT || n == ir::REJECT || names.contains(&n) {
            Ok(())
        } else {
            self.err(span, format!("unknown parser state `{n}`"))
        }
    }

    /// A keyset (of a select case or a table entry) for a key of `bits` bits.
    fn key_value(&self, c: &Ctl<'a>, e: &Expr, bits: u32) -> R<ir::KeyValue> {
        let full = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let num = |l: &Self, x: &Expr| -> R<u64> {
            let (v, _) = l.const_value(x, &c.locals)?;
            if bits < 128 && v >> bits != 0 {
                return l.err(
                    x.span,
                    format!("value {v:#x} does not fit in the {bits}-bit key"),
                );
            }
            Ok(v as u64)
        };
        Ok(match &e.kind {
            ExprKind::Default => ir::KeyValue {
                value: 0,
                mask: Some(0),
            },
            ExprKind::Binary(BinOp::Mask, v, m) => ir::KeyValue {
                value: num(self, v)?,
                mask: Some(num(self, m)? & full),
            },
            ExprKind::Binary(BinOp::Range, ..) => {
                return self.err(
                    e.span,
                    "range keysets are not supported: the model matches value/mask only",
                )
            }
            _ => ir::KeyValue {
                value: num(self, e)?,
                mask: None,
            },
        })
    }

    /// Lowers the apply block of a control.
    fn lower_control(&mut self, d: &'a Decl, g: Gress) -> R<Vec<ir::Stmt>> {
        let c = self.ctl(d, g)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        let body = self.block(&c, apply)?;
        self.resolve_exits(&c, body)
    }

    fn block(&mut self, c: &Ctl<'a>, stmts: &'a [Stmt]) -> R<Vec<ir::Stmt>> {
        let mut out = Vec::new();
        let mut pending: Vec<&'a Stmt> = Vec::new();
        for st in stmts {
            match &st.kind {
                StmtKind::Call(e) => {
                    if let Some((obj, "apply", [])) = method_call(e) {
                        if let Some(t) = obj
                            .path()
                            .filter(|t| matches!(c.locals.get(t), Some(Local::Table(_))))
                        {
                            self.flush(c, &mut pending, &mut out)?;
                            out.push(ir::Stmt::Apply(self.apply_table(c, &t, st.span)?));
                            continue;
                        }
                    }
                    if let ExprKind::Call { func, args, .. } = &e.kind {
                        if let Some(a) = func.path().filter(|a| self.action_decl(c, a).is_some()) {
                            self.flush(c, &mut pending, &mut out)?;
                            out.push(ir::Stmt::Apply(self.action_table(c, &a, args, st.span)?));
                            continue;
                        }
                    }
                    pending.push(st);
                }
                StmtKind::Assign(..) => pending.push(st),
                StmtKind::Empty => {}
                StmtKind::Block(b) => {
                    self.flush(c, &mut pending, &mut out)?;
                    out.extend(self.block(c, b)?);
                }
                StmtKind::If(cond, then, els) => {
                    self.flush(c, &mut pending, &mut out)?;
                    let (negated, inner) = match &cond.kind {
                        ExprKind::Unary(UnOp::Not, x) => (true, &**x),
                        _ => (false, cond),
                    };
                    if let Some((t, m @ ("hit" | "miss"))) = table_result(c, inner) {
                        let (ir, field) = self.apply_flagged(c, &t, st.span, Flag::Hit)?;
                        out.push(ir::Stmt::Apply(ir));
                        let want = (m == "hit") != negated;
                        let k = ir::Condition::new(&field, Cmp::Eq, Operand::Const(want as u64));
                        let then_ir = self.block(c, then)?;
                        let else_ir = self.block(c, els)?;
                        out.push(ir::Stmt::if_(k, then_ir, else_ir));
                    } else {
                        out.extend(self.gateway(c, cond, then, els)?);
                    }
                }
                StmtKind::Switch(e, cases) => {
                    self.flush(c, &mut pending, &mut out)?;
                    let Some((t, "action_run")) = table_result(c, e) else {
                        return self.err(
                            e.span,
                            "a `switch` is supported on `t.apply().action_run` only",
                        );
                    };
                    let (ir, field) = self.apply_flagged(c, &t, st.span, Flag::ActionRun)?;
                    out.push(ir::Stmt::Apply(ir.clone()));
                    out.extend(self.switch_cases(c, &ir, &field, cases)?);
                }
                StmtKind::Exit => {
                    self.flush(c, &mut pending, &mut out)?;
                    out.push(self.exit_mark(st.span));
                }
                StmtKind::Return(_) => {
                    return self.err(st.span, "`return` in an apply block is not supported")
                }
                StmtKind::Var(_) => {
                    return self.err(
                        st.span,
                        "local variables are not supported: the IR keeps values in PHV \
                         fields; use a field of the metadata struct",
                    )
                }
            }
        }
        self.flush(c, &mut pending, &mut out)?;
        Ok(out)
    }

    /// Statements of an apply block outside any table become an action of their own, run
    /// by a keyless table (as p4c does): `act_L<line>` and `tbl_act_L<line>`.
    fn flush(
        &mut self,
        c: &Ctl<'a>,
        pending: &mut Vec<&'a Stmt>,
        out: &mut Vec<ir::Stmt>,
    ) -> R<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let span = pending[0].span;
        let mut name = format!("act_L{}", span.line);
        let mut k = 1;
        while self.prog.actions.iter().any(|a| a.name == name) {
            k += 1;
            name = format!("act_L{}_{k}", span.line);
        }
        let stmts: Vec<Stmt> = pending.drain(..).cloned().collect();
        let prims = self.action_body(c, &name, &HashMap::new(), &stmts, &[])?;
        self.prog.actions.push(ir::Action {
            name: name.clone(),
            params: Vec::new(),
            primitives: prims,
        });
        self.spans.push((name.clone(), span));
        let tname = format!("tbl_{name}");
        self.push_keyless(&tname, &name, &[], span);
        out.push(ir::Stmt::Apply(tname));
        Ok(())
    }

    fn push_keyless(&mut self, tname: &str, action: &str, args: &[u64], span: Span) {
        self.prog.tables.push(
            ir::Table::new(tname, MatchKind::Exact, &[], 0)
                .action(action)
                .default_action(action, args),
        );
        self.spans.push((tname.to_string(), span));
        self.applied.insert(tname.to_string(), span);
    }

    /// An action called directly in an apply block: a keyless table `tbl_<action>`.
    fn action_table(&mut self, c: &Ctl<'a>, a: &str, args: &[Expr], span: Span) -> R<String> {
        let ir = self.ensure_action(c, a, span)?;
        if let Some((dc, t, _)) = self.direct_counted.get(&ir) {
            return self.err(
                span,
                format!("action `{a}` counts DirectCounter `{dc}` of table `{t}`: run it through that table"),
            );
        }
        let vals = self.action_args(c, &ir, args, span)?;
        let mut tname = format!("tbl_{ir}");
        let mut k = 1;
        while self.prog.tables.iter().any(|t| t.name == tname) {
            k += 1;
            tname = format!("tbl_{ir}_{k}");
        }
        self.push_keyless(&tname, &ir, &vals, span);
        Ok(tname)
    }

    fn action_decl(&self, c: &Ctl<'a>, a: &str) -> Option<&'a Decl> {
        match c.locals.get(a) {
            Some(Local::Action(d)) => Some(d),
            _ => self.top_actions.get(a).copied(),
        }
    }

    /// The constant arguments of a call of IR action `ir`.
    fn action_args(&self, c: &Ctl<'a>, ir: &str, args: &[Expr], span: Span) -> R<Vec<u64>> {
        let params = self
            .prog
            .actions
            .iter()
            .find(|a| a.name == ir)
            .map(|a| a.params.clone())
            .unwrap_or_default();
        // A DirectCounter's index is the entry's place, not an argument.
        let params: Vec<ir::Param> = params
            .into_iter()
            .filter(|p| p.name != ENTRY_INDEX_PARAM)
            .collect();
        if params.len() != args.len() {
            return self.err(
                span,
                format!(
                    "action `{ir}` takes {} arguments, {} given",
                    params.len(),
                    args.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let (v, _) = self.const_value(a, &c.locals)?;
            if v >> p.bits != 0 {
                return self.err(
                    a.span,
                    format!(
                        "argument {v} does not fit parameter `{}` (bit<{}>)",
                        p.name, p.bits
                    ),
                );
            }
            out.push(v as u64);
        }
        Ok(out)
    }

    /// `if` in an apply block: IR gateways (a conjunction without `else` nests).
    fn gateway(
        &mut self,
        c: &Ctl<'a>,
        cond: &'a Expr,
        then: &'a [Stmt],
        els: &'a [Stmt],
    ) -> R<Vec<ir::Stmt>> {
        match &cond.kind {
            ExprKind::Binary(BinOp::LAnd, a, b) => {
                if !els.is_empty() {
                    return self.err(
                        cond.span,
                        "`&&` with an `else`: the IR's gateways test one comparison each, and \
                         the `else` would need its tables in two places",
                    );
                }
                let inner_cond = self.condition(c, a)?;
                let inner = self.gateway(c, b, then, &[])?;
                Ok(vec![ir::Stmt::if_(inner_cond, inner, Vec::new())])
            }
            ExprKind::Binary(BinOp::LOr, ..) => self.err(
                cond.span,
                "`||` is not supported: the IR's gateways test one comparison each (and a \
                 table is applied in one place)",
            ),
            ExprKind::Unary(UnOp::Not, inner)
                if matches!(inner.kind, ExprKind::Binary(BinOp::LAnd | BinOp::LOr, ..)) =>
            {
                self.gateway(c, inner, els, then)
            }
            _ => {
                if let Some((obj, m @ ("hit" | "miss"), _)) = match &cond.kind {
                    ExprKind::Member(o, m) => Some((o, m.as_str(), ())),
                    _ => None,
                } {
                    let _ = obj;
                    return self.err(
                        cond.span,
                        format!(
                            "`.{m}` of a table apply is not supported: the IR's gateways test \
                             fields, not table results (set a metadata field in the actions)"
                        ),
                    );
                }
                let k = self.condition(c, cond)?;
                let t = self.block(c, then)?;
                let e = self.block(c, els)?;
                Ok(vec![ir::Stmt::if_(k, t, e)])
            }
        }
    }

    /// A gateway condition: `isValid()`, or a field compared with a constant or a field.
    fn condition(&mut self, c: &Ctl<'a>, e: &Expr) -> R<ir::Condition> {
        let unsupported = |l: &Self| {
            l.err(
                e.span,
                "this condition is not one the model's gateways evaluate: a gateway compares \
                 one field with a constant or another field, or tests `isValid()`",
            )
        };
        if let Some((obj, "isValid", [])) = method_call(e) {
            let h = self.header_of(c, obj)?;
            return Ok(ir::Condition::new(
                &format!("{h}.$valid"),
                Cmp::Eq,
                Operand::Const(1),
            ));
        }
        if let ExprKind::Unary(UnOp::Not, inner) = &e.kind {
            let mut k = self.condition(c, inner)?;
            k.cmp = match k.cmp {
                Cmp::Eq => Cmp::Ne,
                Cmp::Ne => Cmp::Eq,
                Cmp::Lt => Cmp::Ge,
                Cmp::Ge => Cmp::Lt,
                Cmp::Le => Cmp::Gt,
                Cmp::Gt => Cmp::Le,
            };
            // `!isValid()` reads better as `== 0`.
            if k.field.ends_with(".$valid") && k.cmp == Cmp::Ne && k.value == Operand::Const(1) {
                k.cmp = Cmp::Eq;
                k.value = Operand::Const(0);
            }
            return Ok(k);
        }
        match &e.kind {
            ExprKind::Binary(op, a, b) => {
                let Some(cmp) = cmp_of(*op) else {
                    return unsupported(self);
                };
                let is_const = |x: &Expr| self.const_value(x, &c.locals).is_ok();
                let (fa, cmp, other) = if is_const(a) && !is_const(b) {
                    (b, flip(cmp), a)
                } else {
                    (a, cmp, b)
                };
                let f = self.compared_field(c, fa)?;
                if let Ok((v, w)) = self.const_value(other, &c.locals) {
                    if let Some(w) = w.filter(|&w| w != f.bits) {
                        return self.err(
                            other.span,
                            format!(
                                "width mismatch: comparing bit<{}> `{}` with a bit<{w}> constant",
                                f.bits,
                                fa.path().unwrap_or_default()
                            ),
                        );
                    }
                    if f.bits < 128 && v >> f.bits != 0 {
                        return self.err(
                            other.span,
                            format!("constant {v} does not fit in bit<{}>", f.bits),
                        );
                    }
                    return Ok(ir::Condition::new(&f.ir, cmp, Operand::Const(v as u64)));
                }
                let g = self.compared_field(c, other)?;
                if g.bits != f.bits {
                    return self.err(
                        other.span,
                        format!(
                            "width mismatch: comparing bit<{}> with bit<{}>",
                            f.bits, g.bits
                        ),
                    );
                }
                Ok(ir::Condition::new(&f.ir, cmp, Operand::Field(g.ir)))
            }
            ExprKind::Name(_) | ExprKind::Member(..) => {
                let f = self.field(c, e)?;
                if f.bits != 1 {
                    return unsupported(self);
                }
                Ok(ir::Condition::new(&f.ir, Cmp::Eq, Operand::Const(1)))
            }
            _ => unsupported(self),
        }
    }

    /// The IR header an expression (`hdr.ipv4`) names.
    fn header_of(&mut self, c: &Ctl<'a>, obj: &Expr) -> R<String> {
        let p = obj.path().unwrap_or_default();
        let comps: Vec<&str> = p.split('.').collect();
        if let (Some(ParamKind::Headers(s)), 2) = (c.params.get(comps[0]), comps.len()) {
            let fs = self.structs.get(s).copied().unwrap_or(&[]);
            if let Some(f) = fs.iter().find(|f| f.name == comps[1]) {
                if let Ty::Header(h) = self.resolve(&f.ty, f.span)? {
                    return Ok(self.instance(&f.name, &h, f.span)?.ir);
                }
            }
        }
        self.err(
            obj.span,
            format!("`{p}` is not a header of the headers struct"),
        )
    }

    /// Applies table `t` whose result the program tests: its actions become copies that
    /// record it in a hidden 1-bit (`.hit`) or action-index (`.action_run`) metadata field,
    /// since the IR's gateways test fields. Gives the IR table and the field.
    fn apply_flagged(
        &mut self,
        c: &Ctl<'a>,
        t: &str,
        span: Span,
        flag: Flag,
    ) -> R<(String, String)> {
        let ir = self.apply_table(c, t, span)?;
        let (suffix, bits) = match flag {
            Flag::Hit => ("hit", 1u32),
            Flag::ActionRun => {
                let n = self.prog.tables.last().map_or(0, |t| t.actions.len()) as u32;
                ("action_run", 32 - n.leading_zeros())
            }
        };
        let field = format!("p4.{ir}.{suffix}");
        self.meta_used.insert(field.clone(), bits.max(1) as u8);
        self.meta_order.push(field.clone());
        let table_span = self.spans.iter().find(|x| x.0 == ir).map_or(span, |x| x.1);
        let mut table = self.prog.tables.pop().expect("just applied");
        let info = self
            .tables
            .iter_mut()
            .find(|i| i.ir_name == ir)
            .expect("just lowered");
        let mut renamed: Vec<(String, String)> = Vec::new();
        for (k, a) in table.actions.clone().iter().enumerate() {
            let base = self
                .prog
                .actions
                .iter()
                .find(|x| &x.name == a)
                .cloned()
                .expect("lowered");
            let mut copy = base.clone();
            copy.name = format!("{a}@{ir}");
            let value = match flag {
                Flag::Hit => 1,
                Flag::ActionRun => k as u64 + 1,
            };
            copy.primitives
                .push(Primitive::set(&field, Operand::Const(value)));
            renamed.push((a.clone(), copy.name.clone()));
            self.spans.push((copy.name.clone(), table_span));
            self.prog.actions.push(copy);
        }
        let rename = |n: &str| {
            renamed
                .iter()
                .find(|r| r.0 == n)
                .map_or(n.to_string(), |r| r.1.clone())
        };
        for e in &mut table.entries {
            e.action.action = rename(&e.action.action);
        }
        let original_default = table.default_action.action.clone();
        table.actions = renamed.iter().map(|r| r.1.clone()).collect();
        for a in &mut info.actions {
            a.1 = rename(&a.1);
        }
        match flag {
            // A miss runs the default action as written: it records no hit.
            Flag::Hit => {
                if !table.actions.contains(&original_default) {
                    table.actions.push(original_default);
                }
            }
            Flag::ActionRun => {
                table.default_action.action = rename(&original_default);
                for a in &mut info.default_actions {
                    a.1 = rename(&a.1);
                }
            }
        }
        self.prog.tables.push(table);
        Ok((ir, field))
    }

    /// The gateways of `switch (t.apply().action_run)`: one per case, in order.
    fn switch_cases(
        &mut self,
        c: &Ctl<'a>,
        ir: &str,
        field: &str,
        cases: &'a [SwitchCase],
    ) -> R<Vec<ir::Stmt>> {
        let Some((case, rest)) = cases.split_first() else {
            return Ok(Vec::new());
        };
        let (labels, body) = case;
        if labels.len() != 1 {
            return self.err(
                labels[0].1,
                "case labels that share a body are not supported: a gateway tests one value",
            );
        }
        let (label, span) = &labels[0];
        let SwitchLabel::Name(a) = label else {
            if !rest.is_empty() {
                return self.err(*span, "`default` must be the last case");
            }
            return self.block(c, body);
        };
        let info = self
            .tables
            .iter()
            .find(|t| t.ir_name == ir)
            .expect("lowered");
        let Some(k) = info.actions.iter().position(|x| &x.0 == a) else {
            return self.err(
                *span,
                format!("`{a}` is not an action of table `{}`", info.p4_name),
            );
        };
        let then = self.block(c, body)?;
        let otherwise = self.switch_cases(c, ir, field, rest)?;
        Ok(vec![ir::Stmt::if_(
            ir::Condition::new(field, Cmp::Eq, Operand::Const(k as u64 + 1)),
            then,
            otherwise,
        )])
    }

    /// Applies table `t` of control `c` (once in the program).
    fn apply_table(&mut self, c: &Ctl<'a>, t: &str, span: Span) -> R<String> {
        let ir = self.ir_name(&c.name, t);
        if let Some(first) = self.applied.get(&ir) {
            let f = &self.src.files[first.file as usize];
            return self.err(
                span,
                format!(
                    "table `{}.{t}` is applied a second time (first at {f}:{}:{}); a Tofino \
                     table sits in one place of the pipeline, so a program applies it once",
                    c.name, first.line, first.col
                ),
            );
        }
        self.applied.insert(ir.clone(), span);
        let Some(Local::Table(d)) = c.locals.get(t) else {
            unreachable!("checked by the caller")
        };
        let d = *d;
        let table = self.lower_table(c, d, &ir)?;
        self.prog.tables.push(table);
        self.spans.push((ir.clone(), d.span));
        Ok(ir)
    }
}

/// What a field was last set to in the action being lowered (`None`: computed).
type Written = HashMap<String, Option<Operand>>;

impl<'a> Lowerer<'a> {
    fn lower_table(&mut self, c: &Ctl<'a>, d: &'a Decl, ir_name: &str) -> R<ir::Table> {
        let DeclKind::Table { name, props } = &d.kind else {
            unreachable!()
        };
        let mut keys: Vec<KeyInfo> = Vec::new();
        let mut kinds = Vec::new();
        let mut actions: Vec<(String, String)> = Vec::new();
        let mut default: Option<(&Expr, Span)> = None;
        let mut size: Option<u32> = None;
        let mut entries: Option<&Vec<EntryDecl>> = None;
        let mut selector_inputs: Vec<(String, Span)> = Vec::new();
        let mut implementation: Option<(&Expr, Span)> = None;
        let mut counters: Option<(&Expr, Span)> = None;
        for p in props {
            match p {
                TableProp::Key(ks, _) => {
                    for k in ks {
                        let f = match method_call(&k.expr) {
                            Some((obj, "isValid", [])) => FieldRef {
                                ir: format!("{}.$valid", self.header_of(c, obj)?),
                                bits: 1,
                            },
                            _ => self.field(c, &k.expr)?,
                        };
                        if k.kind == "selector" {
                            // Hashed by the table's ActionSelector to pick a group member.
                            selector_inputs.push((f.ir, k.span));
                            continue;
                        }
                        if !["exact", "ternary", "lpm"].contains(&k.kind.as_str()) {
                            let why = match k.kind.as_str() {
                                "range" => "the IR's tables match exact, ternary or lpm (expand a range into ternary entries)",
                                _ => "unknown match kind",
                            };
                            return self.err(k.span, format!("match kind `{}`: {why}", k.kind));
                        }
                        let cp_name = k
                            .annotations
                            .iter()
                            .find(|a| a.name == "name")
                            .and_then(|a| match a.args.first().map(|e| &e.kind) {
                                Some(ExprKind::Str(s)) => Some(s.clone()),
                                _ => None,
                            })
                            .unwrap_or_else(|| expr_text(&k.expr));
                        kinds.push((k.kind.clone(), k.span));
                        keys.push(KeyInfo {
                            name: cp_name,
                            ir_field: f.ir,
                            bits: f.bits,
                            kind: k.kind.clone(),
                        });
                    }
                }
                TableProp::Actions(list, _) => {
                    for (e, sp) in list {
                        let Some(a) = e.path() else {
                            return self.err(*sp, "expected an action name");
                        };
                        let ir = self.ensure_action(c, &a, *sp)?;
                        actions.push((a, ir));
                    }
                }
                TableProp::Entries(list, _) => entries = Some(list),
                TableProp::Value {
                    name: pn,
                    value,
                    span,
                    ..
                } => match pn.as_str() {
                    "default_action" => default = Some((value, *span)),
                    "implementation" => implementation = Some((value, *span)),
                    "counters" => counters = Some((value, *span)),
                    "size" => {
                        let (v, _) = self.const_value(value, &c.locals)?;
                        size = Some(v.min(u32::MAX as u128) as u32);
                    }
                    other => {
                        return self.err(
                            *span,
                            format!(
                                "table property `{other}` is not supported (the IR's tables have \
                                 keys, actions, size, default_action, entries and, through a \
                                 register array, counters)"
                            ),
                        )
                    }
                },
            }
        }
        // The IR's match kind: exact; ternary when any key is ternary; lpm when the last key
        // is lpm and the others exact.
        let n_lpm = kinds.iter().filter(|k| k.0 == "lpm").count();
        let any_ternary = kinds.iter().any(|k| k.0 == "ternary");
        let kind = if any_ternary {
            MatchKind::Ternary
        } else if n_lpm == 0 {
            MatchKind::Exact
        } else if n_lpm == 1 && kinds.last().is_some_and(|k| k.0 == "lpm") {
            MatchKind::Lpm
        } else if n_lpm == 1 {
            let at = kinds.iter().find(|k| k.0 == "lpm").map_or(d.span, |k| k.1);
            return self.err(
                at,
                "an lpm key must be the last key: the IR matches the other keys exactly and the \
                 last by prefix",
            );
        } else {
            MatchKind::Ternary
        };
        let mut t = ir::Table::new(
            ir_name,
            kind,
            &keys.iter().map(|k| k.ir_field.as_str()).collect::<Vec<_>>(),
            if keys.is_empty() {
                0
            } else {
                size.unwrap_or(512)
            },
        );
        for (_, ir) in &actions {
            t.actions.push(ir.clone());
        }
        // The default action: as given, else NoAction.
        let (dname, dargs, dspan) = match default {
            Some((e, sp)) => match &e.kind {
                ExprKind::Call { func, args, .. } => (func.path(), args.as_slice(), sp),
                _ => (e.path(), &[][..], sp),
            },
            None => (Some("NoAction".to_string()), &[][..], d.span),
        };
        let Some(dname) = dname else {
            return self.err(dspan, "expected an action call");
        };
        let dir = match actions.iter().find(|a| a.0 == dname) {
            Some(a) => a.1.clone(),
            None if dname == "NoAction" => {
                let ir = self.ensure_action(c, "NoAction", dspan)?;
                t.actions.push(ir.clone());
                actions.push(("NoAction".into(), ir.clone()));
                ir
            }
            None => {
                return self.err(
                    dspan,
                    format!("default action `{dname}` is not in the table's `actions`"),
                )
            }
        };
        if let Some((e, sp)) = counters {
            self.check_counters_property(c, ir_name, e, sp, &actions)?;
        }
        for (a, ir) in &actions {
            if let Some((dc, table, _)) = self.direct_counted.get(ir) {
                if table != ir_name {
                    return self.err(d.span, format!("action `{a}` counts DirectCounter `{dc}` of table `{table}`; an action of two tables cannot count one table's entries"));
                }
            }
        }
        let mut dvals = self.action_args(c, &dir, dargs, dspan)?;
        // A miss counts in the cell after the entries' (see `counters`).
        dvals.extend(self.entry_index(&dir, t.size));
        t.default_action = ir::ActionCall::new(&dir, &dvals);
        if let Some(list) = entries {
            for en in list {
                if en.keys.len() != keys.len() {
                    return self.err(
                        en.span,
                        format!(
                            "the entry gives {} key values for {} keys",
                            en.keys.len(),
                            keys.len()
                        ),
                    );
                }
                let mut kv = Vec::new();
                for (e, k) in en.keys.iter().zip(&keys) {
                    let mut v = self.key_value(c, e, k.bits)?;
                    if kind != MatchKind::Exact && v.mask.is_none() && k.kind != "exact" {
                        v.mask = Some(if k.bits >= 64 {
                            u64::MAX
                        } else {
                            (1 << k.bits) - 1
                        });
                    }
                    if kind == MatchKind::Exact && v.mask.is_some() {
                        return self.err(e.span, "a mask in an entry of an exact table");
                    }
                    kv.push(v);
                }
                let (aname, aargs) = match &en.action.kind {
                    ExprKind::Call { func, args, .. } => (func.path(), args.as_slice()),
                    _ => (en.action.path(), &[][..]),
                };
                let Some(a) = aname.and_then(|a| actions.iter().find(|x| x.0 == a)) else {
                    return self.err(
                        en.action.span,
                        "the entry's action is not in the table's `actions`",
                    );
                };
                let mut vals = self.action_args(c, &a.1, aargs, en.action.span)?;
                vals.extend(self.entry_index(&a.1, t.entries.len() as u32));
                t.entries.push(ir::Entry {
                    key: kv,
                    action: ir::ActionCall::new(&a.1, &vals),
                    members: Vec::new(),
                });
            }
        }
        // An ActionSelector: the selector keys are what it hashes; its group count and size
        // what placement sizes it for.
        match (implementation, selector_inputs.is_empty()) {
            (None, true) => {}
            (None, false) => {
                return self.err(
                    selector_inputs[0].1,
                    "a `selector` key needs the table's `implementation = <ActionSelector>`",
                )
            }
            (Some((_, sp)), true) => {
                return self.err(sp, "an `implementation` needs `selector` keys to hash")
            }
            (Some((e, sp)), false) => {
                let sel = e.path().and_then(|n| match c.locals.get(&n) {
                    Some(Local::Extern(d, k)) if k == "ActionSelector" => Some(*d),
                    _ => None,
                });
                let Some(DeclKind::Instance { args, .. }) = sel.map(|d| &d.kind) else {
                    return self.err(
                        sp,
                        "`implementation` must be an ActionSelector (action profiles alone are \
                         not lowered)",
                    );
                };
                let [_, _, _, max, groups] = args.as_slice() else {
                    return self.err(
                        sp,
                        "ActionSelector(profile, hash, mode, max_group_size, num_groups) takes \
                         five arguments",
                    );
                };
                let (max, _) = self.const_value(max, &c.locals)?;
                let (groups, _) = self.const_value(groups, &c.locals)?;
                t.selector = Some(ir::Selector {
                    inputs: selector_inputs.into_iter().map(|x| x.0).collect(),
                    groups: groups.min(u32::MAX as u128) as u32,
                    max_members: max.min(u32::MAX as u128) as u32,
                });
            }
        }
        if let Some(a) = d.annotation("stage") {
            let (v, _) = match a.args.first() {
                Some(e) => self.const_value(e, &c.locals)?,
                None => return self.err(a.span, "@stage needs a stage number"),
            };
            t.stage = Some(v as u32);
        }
        for a in &d.annotations {
            if [
                "placement_priority",
                "ignore_table_dependency",
                "pack",
                "ways",
            ]
            .contains(&a.name.as_str())
            {
                return self.err(
                    a.span,
                    format!(
                        "@{} is not supported: the IR's placement has no such control",
                        a.name
                    ),
                );
            }
        }
        self.tables.push(TableInfo {
            p4_name: format!("{}.{name}", c.name),
            local_name: name.clone(),
            ir_name: ir_name.to_string(),
            kind,
            keys,
            default_actions: actions.clone(),
            actions,
        });
        Ok(t)
    }

    /// The IR name of action `a` as control `c` sees it, lowering it the first time.
    fn ensure_action(&mut self, c: &Ctl<'a>, a: &str, span: Span) -> R<String> {
        let local = matches!(c.locals.get(a), Some(Local::Action(_)));
        let key = (
            if local { c.name.clone() } else { String::new() },
            a.to_string(),
        );
        if let Some(ir) = self.lowered_actions.get(&key) {
            self.check_action_exit_control(c, ir, span)?;
            return Ok(ir.clone());
        }
        let Some(d) = self.action_decl(c, a) else {
            return self.err(span, format!("unknown action `{a}`"));
        };
        let DeclKind::Action { name, params, body } = &d.kind else {
            unreachable!()
        };
        let ir = if local {
            self.ir_name(&c.name, name)
        } else {
            name.clone()
        };
        self.lowered_actions.insert(key, ir.clone());
        let mut ps = Vec::new();
        let mut pmap = HashMap::new();
        for p in params {
            if p.dir != Dir::None {
                return self.err(
                    p.span,
                    "directional action parameters are not supported: action data is \
                     directionless",
                );
            }
            let Some(w) = self.resolve(&p.ty, p.span)?.width() else {
                return self.err(p.span, "an action parameter is a bit<N>");
            };
            if !(1..=32).contains(&w) {
                return self.err(
                    p.span,
                    format!(
                        "parameter `{}` is {w} bits; the IR's action data are 1 to 32 bits",
                        p.name
                    ),
                );
            }
            ps.push(ir::Param {
                name: p.name.clone(),
                bits: w as u8,
            });
            pmap.insert(p.name.clone(), w);
        }
        let prims = self.action_body(c, &ir, &pmap, body, &d.annotations)?;
        let mut ir_params = ps.clone();
        if let Some((_, _, bits)) = self.direct_counted.get(&ir) {
            // The entry's place, which a DirectCounter's cell is (see `counters`).
            ir_params.push(ir::Param {
                name: ENTRY_INDEX_PARAM.to_string(),
                bits: *bits as u8,
            });
        }
        self.prog.actions.push(ir::Action {
            name: ir.clone(),
            params: ir_params,
            primitives: prims,
        });
        self.spans.push((ir.clone(), d.span));
        self.actions.push(ActionInfo {
            p4_name: if local {
                format!("{}.{name}", c.name)
            } else {
                name.clone()
            },
            local_name: name.clone(),
            ir_name: ir.clone(),
            params: ps.iter().map(|p| (p.name.clone(), p.bits as u32)).collect(),
        });
        Ok(ir)
    }

    /// The primitives of an action body.
    fn action_body(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        body: &[Stmt],
        annotations: &[Annotation],
    ) -> R<Vec<Primitive>> {
        let mut out = Vec::new();
        let mut written: Written = HashMap::new();
        let mut flat: Vec<&Stmt> = Vec::new();
        fn flatten<'s>(b: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
            for s in b {
                match &s.kind {
                    StmtKind::Block(x) => flatten(x, out),
                    _ => out.push(s),
                }
            }
        }
        flatten(body, &mut flat);
        let reason = match annotations.iter().find(|a| a.name == "drop_reason") {
            None => ir::ProgramDrop::NoRoute,
            Some(a) => match a.args.first().map(|e| &e.kind) {
                Some(ExprKind::Str(s)) => match s.as_str() {
                    "not_ipv4" => ir::ProgramDrop::NotIpv4,
                    "no_route" => ir::ProgramDrop::NoRoute,
                    "ttl_expired" => ir::ProgramDrop::TtlExpired,
                    "consumed" => ir::ProgramDrop::Consumed,
                    other => {
                        return self.err(
                            a.span,
                            format!("@drop_reason(\"{other}\"): expected not_ipv4, no_route, ttl_expired or consumed"),
                        )
                    }
                },
                _ => return self.err(a.span, "@drop_reason takes a string"),
            },
        };
        let mut mirrors: Vec<(MirrorIdiom, Span)> = Vec::new();
        let mut exited = false;
        for st in flat {
            if exited && !matches!(st.kind, StmtKind::Empty) {
                return self.err(
                    st.span,
                    format!("this statement of action `{action}` comes after its `exit`, so it never runs"),
                );
            }
            match &st.kind {
                StmtKind::Empty => {}
                StmtKind::Assign(lhs, rhs) if resubmit::is_resubmit_type(c, lhs) => {
                    out.push(self.resubmit_for(c, rhs, st.span)?);
                }
                StmtKind::Assign(lhs, rhs) if digests::is_digest_type(c, lhs) => {
                    out.push(self.digest_type_for(c, rhs, st.span)?);
                }
                StmtKind::Assign(lhs, rhs) if is_mirror_type(c, lhs) => {
                    let Ok((t, _)) = self.const_value(rhs, &c.locals) else {
                        return self.err(rhs.span, "mirror_type is set to a constant");
                    };
                    let Some(m) = self
                        .mirrors
                        .iter()
                        .find(|m| m.gress == c.gress && m.mirror_type == t)
                        .cloned()
                    else {
                        return self.err(
                            st.span,
                            format!(
                                "mirror type {t}: the {} deparser has no `if (...mirror_type == \
                                 {t}) mirror.emit(session);` for it",
                                c.gress.name()
                            ),
                        );
                    };
                    mirrors.push((m, st.span));
                }
                StmtKind::Assign(lhs, rhs)
                    if matches!(rhs.kind, ExprKind::Binary(BinOp::Concat, ..)) =>
                {
                    // `dst = a ++ b`: each part is a move into its slice of `dst`.
                    let dst = self.field(c, lhs)?;
                    let mut parts = Vec::new();
                    concat_parts(rhs, &mut parts);
                    let mut widths = Vec::new();
                    for p in &parts {
                        let w = match self.const_value(p, &c.locals) {
                            Ok((_, Some(w))) => w,
                            Ok((_, None)) => {
                                return self
                                    .err(p.span, "a constant in `++` needs a width (such as 8w0)")
                            }
                            Err(_) => match self.width_of(c, params, p) {
                                Some(w) => w,
                                None => {
                                    return self.err(
                                        p.span,
                                        "`++` joins fields, action data and sized constants",
                                    )
                                }
                            },
                        };
                        widths.push(w);
                    }
                    let total: u32 = widths.iter().sum();
                    if total != dst.bits {
                        return self.err(
                            rhs.span,
                            format!("width mismatch: the concatenation is bit<{total}> but `{}` is bit<{}>", expr_text(lhs), dst.bits),
                        );
                    }
                    let mut hi = dst.bits;
                    for (p, w) in parts.iter().zip(widths) {
                        let part = FieldRef {
                            ir: slice_name(&dst.ir, hi - 1, hi - w),
                            bits: w,
                        };
                        hi -= w;
                        if let Some(prim) =
                            self.assignment(c, action, params, &part, p, &written, reason)?
                        {
                            written.insert(part.ir.clone(), None);
                            out.push(prim);
                        }
                    }
                }
                StmtKind::Assign(lhs, rhs) => {
                    let dst = self.field(c, lhs)?;
                    let p = self.assignment(c, action, params, &dst, rhs, &written, reason)?;
                    if let Some(p) = p {
                        let simple = match &p {
                            Primitive::Set { src, .. } => Some(src.clone()),
                            _ => None,
                        };
                        written.insert(dst.ir.clone(), simple);
                        out.push(p);
                    }
                }
                StmtKind::Call(e) => {
                    let p = self.call_stmt(c, action, params, e, &written)?;
                    out.extend(p);
                }
                StmtKind::If(cond, then, els) => {
                    // ECN marking: `if (hdr.ipv4.ecn != 0) hdr.ipv4.ecn = 3;`.
                    let ok =
                        els.is_empty() && then.len() == 1 && self.is_ecn_mark(c, cond, &then[0]);
                    if !ok {
                        return self.err(
                            st.span,
                            "an `if` inside an action is not supported: the model's actions \
                             have no conditions (put the `if` in the apply block; only ECN \
                             marking `if (hdr.ipv4.ecn != 0) hdr.ipv4.ecn = 3;` maps onto a \
                             primitive)",
                        );
                    }
                    written.insert("ipv4.ecn".to_string(), None);
                    out.push(Primitive::MarkEcn);
                }
                StmtKind::Exit => {
                    exited = true;
                    out.push(self.action_exit(c, action, st.span));
                }
                _ => {
                    return self.err(
                        st.span,
                        "this statement is not supported in an action (assignments and extern \
                         calls only)",
                    )
                }
            }
        }
        // A mirror reads its session as the action leaves it (the session field may be set
        // after mirror_type).
        for (m, span) in mirrors {
            let session = match m.session {
                MirrorSession::Const(v) => Operand::Const(v),
                MirrorSession::Meta(sty, field) => {
                    let Some(p) = c
                        .params
                        .iter()
                        .find(|(_, k)| matches!(k, ParamKind::Meta(s) if *s == sty))
                        .map(|(n, _)| n.clone())
                    else {
                        return self.err(
                            span,
                            format!("the mirror session is a field of `{sty}`, which `{}` does not take", c.name),
                        );
                    };
                    let e = Expr {
                        kind: ExprKind::Member(
                            Box::new(Expr {
                                kind: ExprKind::Name(p),
                                span,
                            }),
                            field,
                        ),
                        span,
                    };
                    self.operand(c, action, params, &e, None, &written)?
                }
            };
            out.push(match m.header {
                None => Primitive::Mirror { session },
                Some((header, _)) => Primitive::MirrorWithHeader { session, header },
            });
        }
        Ok(out)
    }

    /// Records the mirrors a deparser emits: `if (md.mirror_type == T) { m.emit(S); }`.
    fn scan_mirrors(&mut self, d: &'a Decl, gress: Gress) -> R<()> {
        let c = self.ctl(d, gress)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        for st in apply {
            if let Some(mut m) = self.mirror_idiom(&c, st)? {
                m.gress = gress;
                self.mirrors.push(m);
            }
        }
        Ok(())
    }

    /// The mirror type and session of a deparser statement that is the mirror idiom.
    fn mirror_idiom(&mut self, c: &Ctl<'a>, st: &Stmt) -> R<Option<MirrorIdiom>> {
        let StmtKind::If(cond, then, els) = &st.kind else {
            return Ok(None);
        };
        let ExprKind::Binary(BinOp::Eq, x, t) = &cond.kind else {
            return Ok(None);
        };
        if !is_mirror_type(c, x) || !els.is_empty() || then.len() != 1 {
            return Ok(None);
        }
        let StmtKind::Call(e) = &then[0].kind else {
            return Ok(None);
        };
        let Some((obj, "emit", args)) = method_call(e) else {
            return Ok(None);
        };
        let is_mirror = obj.path().is_some_and(
            |o| matches!(c.locals.get(&o), Some(Local::Extern(_, k)) if k == "Mirror"),
        );
        if !is_mirror {
            return Ok(None);
        }
        let (t, _) = self.const_value(t, &c.locals)?;
        let (arg, header) = match args {
            [arg] => (arg, None),
            [arg, h] => {
                let ir = self.header_of(c, h)?;
                if self.instances.values().any(|i| i.ir == ir && i.builtin) {
                    return self.err(
                        h.span,
                        format!("the mirror header `{}` is one of t2sim's built-in headers; a mirror header is a header of the program's own (its mirror type is its place among them)", expr_text(h)),
                    );
                }
                (arg, Some((ir, h.span)))
            }
            _ => {
                return self.err(
                    e.span,
                    "`emit` of a Mirror takes the session, or the session and a header",
                )
            }
        };
        let session =
            match self.const_value(arg, &c.locals) {
                Ok((v, _)) => MirrorSession::Const(v as u64),
                Err(_) => {
                    let p = arg.path().unwrap_or_default();
                    let comps: Vec<&str> = p.split('.').collect();
                    match (c.params.get(comps[0]), comps.len()) {
                        (Some(ParamKind::Meta(sty)), 2) => {
                            MirrorSession::Meta(sty.clone(), comps[1].to_string())
                        }
                        _ => return self.err(
                            arg.span,
                            "the mirror session is a constant or a field of the metadata struct",
                        ),
                    }
                }
            };
        Ok(Some(MirrorIdiom {
            gress: c.gress,
            mirror_type: t,
            session,
            header,
        }))
    }

    fn is_ecn_mark(&mut self, c: &Ctl<'a>, cond: &Expr, st: &Stmt) -> bool {
        let ExprKind::Binary(op @ (BinOp::Ne | BinOp::Gt), f, z) = &cond.kind else {
            return false;
        };
        let _ = op;
        let StmtKind::Assign(lhs, three) = &st.kind else {
            return false;
        };
        let is_ecn = |l: &mut Self, e: &Expr| {
            // The ECN bits of the built-in IPv4, however the program declares its TOS byte.
            l.field(c, e)
                .is_ok_and(|f| f.ir == "ipv4.ecn" || f.ir == "ipv4.diffserv[1:0]")
        };
        is_ecn(self, f)
            && is_ecn(self, lhs)
            && self.const_value(z, &c.locals).is_ok_and(|v| v.0 == 0)
            && self.const_value(three, &c.locals).is_ok_and(|v| v.0 == 3)
    }

    /// An operand an action reads, checked against the width `want` it must have.
    #[allow(clippy::too_many_arguments)]
    fn operand(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        e: &Expr,
        want: Option<u32>,
        written: &Written,
    ) -> R<Operand> {
        let text = expr_text(e);
        let mismatch = |l: &Self, got: u32| {
            l.err(
                e.span,
                format!(
                    "width mismatch: `{text}` is bit<{got}> but bit<{}> is needed (P4 needs an \
                     explicit cast)",
                    want.unwrap_or(0)
                ),
            )
        };
        if let Ok((v, w)) = self.const_value(e, &c.locals) {
            if let (Some(w), Some(d)) = (w, want) {
                if w != d {
                    return mismatch(self, w);
                }
            }
            if let Some(d) = want {
                if d < 128 && v >> d != 0 {
                    return self.err(e.span, format!("constant {v} does not fit in bit<{d}>"));
                }
            }
            if v > u32::MAX as u128 {
                return self.err(
                    e.span,
                    format!("constant {v:#x} is wider than the ALU's 32 bits"),
                );
            }
            return Ok(Operand::Const(v as u64));
        }
        match &e.kind {
            ExprKind::Name(n) if params.contains_key(n) => {
                let w = params[n];
                if want.is_some_and(|d| d != w) {
                    return mismatch(self, w);
                }
                Ok(Operand::Param(n.clone()))
            }
            ExprKind::Cast(t, inner) => {
                let Some(w) = self.resolve(t, e.span)?.width() else {
                    return self.err(e.span, "a cast to a non-bit type");
                };
                if want.is_some_and(|d| d != w) {
                    return mismatch(self, w);
                }
                // Widening is what the ALU does; narrowing only where the destination
                // truncates the same bits.
                let inner_w = self.width_of(c, params, inner);
                if inner_w.is_some_and(|iw| iw > w) && want.is_none_or(|d| d > w) {
                    return self.err(
                        e.span,
                        "a narrowing cast inside an operation is not supported",
                    );
                }
                self.operand(c, action, params, inner, None, written)
            }
            _ if e.path().is_some() || matches!(e.kind, ExprKind::Slice(..)) => {
                let f = self.field(c, e)?;
                if want.is_some_and(|d| d != f.bits) {
                    return mismatch(self, f.bits);
                }
                let base = |n: &str| n.split('[').next().unwrap_or(n).to_string();
                let overlapping = written.iter().find(|(w, _)| base(w) == base(&f.ir));
                let state = match (written.get(&f.ir), overlapping) {
                    (Some(v), _) => Some(v.clone()),
                    // Part of a field written whole (or the other way round): no copy to
                    // forward.
                    (None, Some(_)) => Some(None),
                    (None, None) => None,
                };
                match state {
                    None => Ok(Operand::Field(f.ir)),
                    Some(Some(v)) => Ok(v),
                    Some(None) => self.err(
                        e.span,
                        format!(
                            "action `{action}` reads `{text}` after computing it: an action's \
                             statements run in parallel in one VLIW instruction, so compute it \
                             in an earlier table's action"
                        ),
                    ),
                }
            }
            _ => self.err(
                e.span,
                format!(
                    "`{text}` is not an operand the VLIW ALU reads (a field, an action \
                     parameter or a constant); one operation per assignment"
                ),
            ),
        }
    }

    fn width_of(&mut self, c: &Ctl<'a>, params: &HashMap<String, u32>, e: &Expr) -> Option<u32> {
        match &e.kind {
            ExprKind::Name(n) if params.contains_key(n) => Some(params[n]),
            _ => self.field(c, e).ok().map(|f| f.bits),
        }
    }

    /// The primitive of `dst = rhs` (`None` when it needs none).
    #[allow(clippy::too_many_arguments)]
    fn assignment(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        dst: &FieldRef,
        rhs: &Expr,
        written: &Written,
        reason: ir::ProgramDrop,
    ) -> R<Option<Primitive>> {
        if let Some((wide, op)) = self.narrowed_operation(c, params, dst, rhs)? {
            return self.assignment(c, action, params, &wide, op, written, reason);
        }
        let w = Some(dst.bits);
        if written.contains_key(&dst.ir) {
            return self.err(
                rhs.span,
                format!(
                    "action `{action}` writes `{}` twice; a VLIW instruction writes a field once",
                    dst.ir
                ),
            );
        }
        match dst.ir.as_str() {
            "ig_intr_tm_md.ucast_egress_port" => {
                let port = self.operand(c, action, params, rhs, w, written)?;
                return Ok(Some(Primitive::SetEgressPort { port }));
            }
            "ig_intr_tm_md.qid" => {
                let qid = self.operand(c, action, params, rhs, w, written)?;
                return Ok(Some(Primitive::SetQid { qid }));
            }
            "ig_intr_dprsr_md.drop_ctl" => {
                let Ok((v, _)) = self.const_value(rhs, &c.locals) else {
                    return self.err(rhs.span, "drop_ctl is set to a constant");
                };
                if v & 1 == 0 {
                    return self.err(
                        rhs.span,
                        "drop_ctl values without bit 0 are not supported: the model only drops \
                         (bit 0)",
                    );
                }
                return Ok(Some(Primitive::Drop { reason }));
            }
            _ => {}
        }
        if let Some((obj, m, args)) = method_call(rhs) {
            let inst = obj.path().unwrap_or_default();
            if let Some(Local::Extern(d, ext)) = c.locals.get(&inst).cloned() {
                return match (ext.as_str(), m) {
                    ("Hash", "get") => self.hash_get(c, d, &inst, args, dst).map(Some),
                    ("Random", "get") if args.is_empty() => {
                        self.check_result_width(c, d, 0, dst, rhs.span)?;
                        Ok(Some(Primitive::Random {
                            dst: dst.ir.clone(),
                        }))
                    }
                    ("RegisterAction", "execute") if args.len() == 1 => {
                        self.check_result_width(c, d, 2, dst, rhs.span)?;
                        let (ra, index) = self.execute(
                            c,
                            action,
                            params,
                            d,
                            &inst,
                            &args[0],
                            Some(dst),
                            written,
                            rhs.span,
                        )?;
                        Ok(Some(Primitive::Execute {
                            register_action: ra,
                            index,
                        }))
                    }
                    _ => self.err(rhs.span, format!("`{inst}.{m}` is not supported here")),
                };
            }
        }
        if let ExprKind::Call { func, args, .. } = &rhs.kind {
            if let (Some(n @ ("min" | "max")), [a, b]) = (func.path().as_deref(), args.as_slice()) {
                let op = if n == "min" {
                    ir::AluOp::Min
                } else {
                    ir::AluOp::Max
                };
                let a = self.operand(c, action, params, a, w, written)?;
                let b = self.operand(c, action, params, b, w, written)?;
                return Ok(Some(Primitive::alu(op, &dst.ir, a, b)));
            }
        }
        match &rhs.kind {
            ExprKind::Binary(op, a, b) => {
                let alu = match op {
                    BinOp::Add => ir::AluOp::Add,
                    BinOp::Sub => ir::AluOp::Sub,
                    BinOp::And => ir::AluOp::And,
                    BinOp::Or => ir::AluOp::Or,
                    BinOp::Xor => ir::AluOp::Xor,
                    BinOp::Shl => ir::AluOp::Shl,
                    BinOp::Shr => ir::AluOp::Shr,
                    other => {
                        let why = match other {
                            BinOp::SatAdd | BinOp::SatSub => {
                                "the IR's VLIW ALU has no saturating arithmetic"
                            }
                            BinOp::Mul | BinOp::Div | BinOp::Mod => {
                                "the VLIW ALU has no multiplier or divider"
                            }
                            BinOp::Concat => {
                                "the IR has no concatenation (assign the two slices separately)"
                            }
                            _ => "it does not compute a value the ALU writes",
                        };
                        return self.err(
                            rhs.span,
                            format!("operator `{}` in an action: {why}", other.text()),
                        );
                    }
                };
                let shift = matches!(op, BinOp::Shl | BinOp::Shr);
                let a = self.operand(c, action, params, a, w, written)?;
                let b =
                    self.operand(c, action, params, b, if shift { None } else { w }, written)?;
                Ok(Some(Primitive::alu(alu, &dst.ir, a, b)))
            }
            ExprKind::Unary(UnOp::BitNot, a) => {
                let a = self.operand(c, action, params, a, w, written)?;
                let ones = if dst.bits >= 32 {
                    u32::MAX as u64
                } else {
                    (1u64 << dst.bits) - 1
                };
                Ok(Some(Primitive::alu(
                    ir::AluOp::Xor,
                    &dst.ir,
                    a,
                    Operand::Const(ones),
                )))
            }
            _ => {
                let src = self.operand(c, action, params, rhs, w, written)?;
                Ok(Some(Primitive::set(&dst.ir, src)))
            }
        }
    }

    /// Checks that type argument `k` of extern instance `d` (its result type) is `dst`'s width.
    fn check_result_width(
        &self,
        _c: &Ctl<'a>,
        d: &Decl,
        k: usize,
        dst: &FieldRef,
        span: Span,
    ) -> R<()> {
        let DeclKind::Instance {
            ty: Type::Named(_, targs),
            ..
        } = &d.kind
        else {
            return Ok(());
        };
        if let Some(t) = targs.get(k) {
            if let Some(w) = self.resolve(t, d.span)?.width() {
                if w != dst.bits {
                    return self.err(
                        span,
                        format!(
                            "width mismatch: the result is bit<{w}> but `{}` is bit<{}>",
                            dst.ir, dst.bits
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// A call statement in an action.
    fn call_stmt(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        e: &Expr,
        written: &Written,
    ) -> R<Vec<Primitive>> {
        if let Some((obj, m, args)) = method_call(e) {
            if m == "setValid" || m == "setInvalid" {
                let header = self.header_of(c, obj)?;
                return Ok(vec![if m == "setValid" {
                    Primitive::SetValid { header }
                } else {
                    Primitive::SetInvalid { header }
                }]);
            }
            let inst = obj.path().unwrap_or_default();
            if let Some(Local::Extern(d, ext)) = c.locals.get(&inst).cloned() {
                if ext == "RegisterAction" && m == "execute" && args.len() == 1 {
                    let (ra, index) =
                        self.execute(c, action, params, d, &inst, &args[0], None, written, e.span)?;
                    return Ok(vec![Primitive::Execute {
                        register_action: ra,
                        index,
                    }]);
                }
                if (ext == "Counter" || ext == "DirectCounter") && m == "count" {
                    return self
                        .counter_count(c, action, params, d, &inst, &ext, args, written, e.span);
                }
                if ext == "Register" {
                    return self.err(
                        e.span,
                        format!("`{inst}.{m}` in the data plane: read and write a Register through a RegisterAction"),
                    );
                }
                return self.err(
                    e.span,
                    format!("`{inst}.{m}(...)` as a statement is not supported"),
                );
            }
        }
        if let ExprKind::Call { func, .. } = &e.kind {
            if func.path().as_deref() == Some("NoAction") {
                return Ok(Vec::new());
            }
            if let Some(n) = func.path() {
                if self.action_decl(c, &n).is_some() {
                    return self.err(
                        e.span,
                        format!("calling action `{n}` from an action is not supported"),
                    );
                }
                return self.err(e.span, format!("unknown function or extern `{n}`"));
            }
        }
        self.err(e.span, "this call is not supported in an action")
    }
}

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

impl<'a> Lowerer<'a> {
    /// `dst = h.get({fields})`: an IR hash unit named after the instance.
    fn hash_get(
        &mut self,
        c: &Ctl<'a>,
        d: &'a Decl,
        inst: &str,
        args: &[Expr],
        dst: &FieldRef,
    ) -> R<Primitive> {
        let DeclKind::Instance {
            ty, args: cargs, ..
        } = &d.kind
        else {
            unreachable!()
        };
        let ir = self.ir_name(&c.name, inst);
        let Type::Named(_, targs) = ty else {
            unreachable!()
        };
        if let Some(w) = targs
            .first()
            .map(|t| self.resolve(t, d.span))
            .transpose()?
            .and_then(|t| t.width())
        {
            if w != dst.bits {
                return self.err(
                    d.span,
                    format!(
                        "width mismatch: hash `{inst}` gives bit<{w}> but `{}` is bit<{}>",
                        dst.ir, dst.bits
                    ),
                );
            }
        }
        let algorithm = match cargs.first().map(|e| &e.kind) {
            Some(ExprKind::Member(b, m)) if b.path().as_deref() == Some("HashAlgorithm_t") => {
                match m.as_str() {
                    "CRC16" => ir::HashAlgorithm::Crc16,
                    "CRC32" => ir::HashAlgorithm::Crc32,
                    other => {
                        return self.err(
                            cargs[0].span,
                            format!(
                            "HashAlgorithm_t.{other}: the IR's hash units compute CRC16 and CRC32"
                        ),
                        )
                    }
                }
            }
            _ => return self.err(d.span, "a Hash takes a HashAlgorithm_t (CRC16 or CRC32)"),
        };
        let items: Vec<&Expr> = match args {
            [Expr {
                kind: ExprKind::List(v),
                ..
            }] => v.iter().collect(),
            [one] => vec![one],
            _ => return self.err(d.span, "`get` takes the list of fields to hash"),
        };
        let mut inputs = Vec::new();
        for it in items {
            inputs.push(self.field(c, it)?.ir);
        }
        match self.hashes.get(&ir) {
            Some(prev) if *prev != inputs => {
                return self.err(
                    args.first().map_or(d.span, |a| a.span),
                    format!("hash `{inst}` is used on two different field lists; one IR hash unit hashes one list"),
                )
            }
            Some(_) => {}
            None => {
                self.hashes.insert(ir.clone(), inputs.clone());
                self.prog.hashes.push(ir::HashUnit {
                    name: ir.clone(),
                    algorithm,
                    polynomial: None,
                    inputs,
                });
                self.spans.push((ir.clone(), d.span));
            }
        }
        Ok(Primitive::Hash {
            dst: dst.ir.clone(),
            hash: ir,
        })
    }

    /// `[dst =] ra.execute(index)`: lowers the RegisterAction (once) and gives its IR name
    /// and the index operand.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        d: &'a Decl,
        inst: &str,
        index: &Expr,
        dst: Option<&FieldRef>,
        written: &Written,
        span: Span,
    ) -> R<(String, Operand)> {
        let ir = self.ir_name(&c.name, inst);
        let index = self.operand(c, action, params, index, None, written)?;
        let out_dst = dst.map(|f| f.ir.clone());
        if let Some(prev) = self.ra_outputs.get(&ir) {
            if *prev != out_dst {
                return self.err(
                    span,
                    format!(
                        "RegisterAction `{inst}` is executed with its result going to two \
                         places; the stateful ALU's output goes to one field"
                    ),
                );
            }
            return Ok((ir, index));
        }
        self.ra_outputs.insert(ir.clone(), out_dst.clone());
        let DeclKind::Instance {
            args: cargs,
            methods,
            ..
        } = &d.kind
        else {
            unreachable!()
        };
        let reg = match cargs.first().and_then(|e| e.path()) {
            Some(r) => r,
            None => return self.err(d.span, "a RegisterAction takes its Register"),
        };
        let Some(Local::Extern(rd, rext)) = c.locals.get(&reg).cloned() else {
            return self.err(d.span, format!("`{reg}` is not a Register of `{}`", c.name));
        };
        if rext != "Register" {
            return self.err(d.span, format!("`{reg}` is a {rext}, not a Register"));
        }
        let reg_ir = self.ensure_register(c, rd, &reg)?;
        let apply = methods.iter().find_map(|m| match &m.kind {
            DeclKind::Function {
                name, params, body, ..
            } if name == "apply" => Some((m, params, body)),
            _ => None,
        });
        let Some((m, aparams, body)) = apply else {
            return self.err(
                d.span,
                format!("RegisterAction `{inst}` has no `apply` method"),
            );
        };
        let value = aparams.first().map(|p| p.name.clone()).unwrap_or_default();
        let halves = match self.prog.registers.iter().find(|r| r.name == reg_ir) {
            Some(r) if r.pair => {
                let ty = aparams
                    .first()
                    .map(|p| self.resolve(&p.ty, p.span))
                    .transpose()?;
                let Some(Ty::Struct(sn)) = ty else {
                    return self.err(m.span, format!("`{reg}` is a pair register: the apply method's cell is its pair struct"));
                };
                let fs = self.structs.get(&sn).copied().unwrap_or(&[]);
                match fs {
                    [lo, hi] => Some((lo.name.clone(), hi.name.clone())),
                    _ => return self.err(m.span, format!("struct `{sn}` is not a pair")),
                }
            }
            _ => None,
        };
        let cell = CellNames { value, halves };
        let rv = aparams.get(1).map(|p| p.name.clone());
        let mut sb = SaluBody {
            conditions: Vec::new(),
            updates: Vec::new(),
            rv: None,
        };
        self.salu_stmts(c, inst, &cell, rv.as_deref(), body, &[], &mut sb)?;
        use crate::program::check::{SALU_MAX_CONDITIONS, SALU_MAX_UPDATES};
        if sb.conditions.len() > SALU_MAX_CONDITIONS {
            return self.err(
                m.span,
                format!(
                    "RegisterAction `{inst}` needs {} conditions; a Tofino2 stateful ALU has {SALU_MAX_CONDITIONS} comparators",
                    sb.conditions.len()
                ),
            );
        }
        for half in [ir::Half::Lo, ir::Half::Hi] {
            let n = sb.updates.iter().filter(|u| u.half == half).count();
            if n > SALU_MAX_UPDATES {
                let what = match (&cell.halves, half) {
                    (None, _) => "the cell".to_string(),
                    (Some((lo, _)), ir::Half::Lo) => format!("`{}.{lo}`", cell.value),
                    (Some((_, hi)), ir::Half::Hi) => format!("`{}.{hi}`", cell.value),
                };
                return self.err(
                    m.span,
                    format!(
                        "RegisterAction `{inst}` writes {what} in {n} different ways; a Tofino2 stateful ALU has {SALU_MAX_UPDATES} update ALUs per half"
                    ),
                );
            }
        }
        let mut ra = ir::RegisterAction::new(&ir, &reg_ir);
        ra.conditions = sb.conditions;
        ra.updates = sb.updates;
        if let Some(dst) = out_dst {
            let Some(v) = sb.rv else {
                return self.err(
                    span,
                    format!(
                        "RegisterAction `{inst}` never sets `rv`, so `execute` returns nothing"
                    ),
                );
            };
            ra.outputs.push(ir::SaluOutput { dst, value: v });
        }
        self.prog.register_actions.push(ra);
        self.spans.push((ir.clone(), d.span));
        Ok((ir, index))
    }

    /// Lowers a RegisterAction body under `guards`.
    #[allow(clippy::too_many_arguments)]
    fn salu_stmts(
        &mut self,
        c: &Ctl<'a>,
        inst: &str,
        cell: &CellNames,
        rv: Option<&str>,
        body: &[Stmt],
        guards: &[ir::Guard],
        sb: &mut SaluBody,
    ) -> R<()> {
        let value = cell.value.as_str();
        for st in body {
            match &st.kind {
                StmtKind::Empty => {}
                StmtKind::Block(b) => self.salu_stmts(c, inst, cell, rv, b, guards, sb)?,
                StmtKind::Assign(lhs, _)
                    if lhs.path().as_deref() == Some(value) && cell.halves.is_some() =>
                {
                    return self.err(
                        lhs.span,
                        format!("the cell of a pair register is written half by half (`{value}.{}`, `{value}.{}`)",
                            cell.halves.as_ref().map_or("", |h| h.0.as_str()),
                            cell.halves.as_ref().map_or("", |h| h.1.as_str())),
                    );
                }
                StmtKind::Assign(lhs, rhs) if cell.half(lhs).is_some() => {
                    let half = cell.half(lhs).unwrap_or(ir::Half::Lo);
                    let exclusive = |u: &ir::SaluUpdate| {
                        u.when.iter().any(|g| {
                            guards
                                .iter()
                                .any(|h| h.condition == g.condition && h.holds != g.holds)
                        })
                    };
                    if sb.updates.iter().any(|u| u.half == half && !exclusive(u)) {
                        return self.err(
                            st.span,
                            format!("RegisterAction `{inst}` writes `{}` twice on one path; a stateful ALU writes the cell once", expr_text(lhs)),
                        );
                    }
                    let (op, a, b) = self.salu_expr(c, cell, rhs)?;
                    sb.updates.push(ir::SaluUpdate {
                        when: guards.to_vec(),
                        half,
                        op,
                        a,
                        b,
                    });
                }
                StmtKind::Assign(lhs, rhs) if rv.is_some() && lhs.path().as_deref() == rv => {
                    if !guards.is_empty() {
                        return self.err(
                            st.span,
                            format!("RegisterAction `{inst}` sets `rv` under a condition; the model's output ALU returns the cell unconditionally"),
                        );
                    }
                    if let Some((obj, "predicate", args)) = method_call(rhs) {
                        if obj.path().as_deref() == Some("this") {
                            sb.rv = Some(self.salu_predicate(c, inst, cell, rhs, args, sb)?);
                            continue;
                        }
                    }
                    let Some(half) = cell.half(rhs) else {
                        return self.err(
                            rhs.span,
                            format!("`rv` is set to the cell (`{value}`, or a pair's half, before or after its update) or to `this.predicate(...)`; other outputs are not supported"),
                        );
                    };
                    let updated = sb.updates.iter().any(|u| u.half == half);
                    sb.rv = Some(match (half, updated) {
                        (ir::Half::Lo, false) => ir::SaluOutputValue::Old,
                        (ir::Half::Lo, true) => ir::SaluOutputValue::New,
                        (ir::Half::Hi, false) => ir::SaluOutputValue::OldHi,
                        (ir::Half::Hi, true) => ir::SaluOutputValue::NewHi,
                    });
                }
                StmtKind::If(cond, then, els) => {
                    let mut conds = Vec::new();
                    let mut e = cond;
                    while let ExprKind::Binary(BinOp::LAnd, a, b) = &e.kind {
                        if !els.is_empty() {
                            return self.err(
                                cond.span,
                                "`&&` with an `else` in a RegisterAction is not supported",
                            );
                        }
                        conds.push(&**a);
                        e = b;
                    }
                    conds.push(e);
                    let mut g = guards.to_vec();
                    let mut last = 0;
                    for k in conds {
                        let idx = self.salu_comparator(c, cell, k, sb)?;
                        g.push(ir::Guard {
                            condition: idx,
                            holds: true,
                        });
                        last = idx;
                    }
                    self.salu_stmts(c, inst, cell, rv, then, &g, sb)?;
                    let mut ge = guards.to_vec();
                    ge.push(ir::Guard {
                        condition: last,
                        holds: false,
                    });
                    self.salu_stmts(c, inst, cell, rv, els, &ge, sb)?;
                }
                _ => {
                    return self.err(
                        st.span,
                        "a RegisterAction body assigns the cell, sets `rv` or branches on a \
                         comparison; this statement has no stateful-ALU equivalent",
                    )
                }
            }
        }
        Ok(())
    }

    /// The comparator of condition `k`, shared with an equal one already in `sb`.
    fn salu_comparator(
        &mut self,
        c: &Ctl<'a>,
        cell: &CellNames,
        k: &Expr,
        sb: &mut SaluBody,
    ) -> R<usize> {
        let sc = self.salu_condition(c, cell, k)?;
        Ok(match sb.conditions.iter().position(|x| *x == sc) {
            Some(i) => i,
            None => {
                sb.conditions.push(sc);
                sb.conditions.len() - 1
            }
        })
    }

    /// `rv = this.predicate(c0, c1, ...)` (T2NA's RegisterAction `predicate`): the
    /// comparators' results as the IR's predicate output, bit i for comparator i. The
    /// arguments must be comparators 0, 1, ... in order, and come before any write of the
    /// cell (the comparators see the cell as read, which in P4's order is the cell before
    /// the writes).
    fn salu_predicate(
        &mut self,
        c: &Ctl<'a>,
        inst: &str,
        cell: &CellNames,
        call: &Expr,
        args: &[Expr],
        sb: &mut SaluBody,
    ) -> R<ir::SaluOutputValue> {
        if args.is_empty() {
            return self.err(
                call.span,
                "`this.predicate()` takes the comparisons it reports (`this.predicate(value >= X)`); the model's predicate output is bit i for comparator i",
            );
        }
        if !sb.updates.is_empty() {
            return self.err(
                call.span,
                format!("RegisterAction `{inst}` takes `this.predicate(...)` after writing the cell; the comparators see the cell as read, so set `rv` before the writes"),
            );
        }
        for (i, a) in args.iter().enumerate() {
            let idx = self.salu_comparator(c, cell, a, sb)?;
            if idx != i {
                return self.err(
                    a.span,
                    format!("argument {} of `this.predicate` is comparator {idx}; the model's predicate output is bit i for comparator i, so its arguments are the comparators in order (first use)", i + 1),
                );
            }
        }
        Ok(ir::SaluOutputValue::Predicate)
    }

    fn salu_operand(&mut self, c: &Ctl<'a>, cell: &CellNames, e: &Expr) -> R<ir::SaluOperand> {
        if let Some(h) = cell.half(e) {
            return Ok(match h {
                ir::Half::Lo => ir::SaluOperand::Cell,
                ir::Half::Hi => ir::SaluOperand::CellHi,
            });
        }
        if cell.halves.is_some() && e.path().as_deref() == Some(cell.value.as_str()) {
            return self.err(e.span, "a pair register's cell is read half by half");
        }
        if let Ok((v, _)) = self.const_value(e, &c.locals) {
            if v >> 34 != 0 {
                return self.err(e.span, "a stateful ALU constant is at most 34 bits");
            }
            return Ok(ir::SaluOperand::Const(v as u64));
        }
        if let ExprKind::Cast(_, inner) = &e.kind {
            return self.salu_operand(c, cell, inner);
        }
        Ok(ir::SaluOperand::Field(self.field(c, e)?.ir))
    }

    fn salu_expr(
        &mut self,
        c: &Ctl<'a>,
        cell: &CellNames,
        e: &Expr,
    ) -> R<(ir::SaluOp, ir::SaluOperand, ir::SaluOperand)> {
        let zero = ir::SaluOperand::Const(0);
        if let ExprKind::Call { func, args, .. } = &e.kind {
            if let (Some(n @ ("min" | "max")), [a, b]) = (func.path().as_deref(), args.as_slice()) {
                let op = if n == "min" {
                    ir::SaluOp::Min
                } else {
                    ir::SaluOp::Max
                };
                return Ok((
                    op,
                    self.salu_operand(c, cell, a)?,
                    self.salu_operand(c, cell, b)?,
                ));
            }
        }
        if let ExprKind::Binary(op, a, b) = &e.kind {
            let op = match op {
                BinOp::Add => ir::SaluOp::Add,
                BinOp::Sub => ir::SaluOp::Sub,
                BinOp::And => ir::SaluOp::And,
                BinOp::Or => ir::SaluOp::Or,
                BinOp::Xor => ir::SaluOp::Xor,
                other => {
                    return self.err(
                        e.span,
                        format!("operator `{}` in a RegisterAction: the stateful ALU adds, subtracts, takes min/max and does bitwise logic", other.text()),
                    )
                }
            };
            return Ok((
                op,
                self.salu_operand(c, cell, a)?,
                self.salu_operand(c, cell, b)?,
            ));
        }
        Ok((ir::SaluOp::Set, self.salu_operand(c, cell, e)?, zero))
    }

    fn salu_condition(&mut self, c: &Ctl<'a>, cell: &CellNames, e: &Expr) -> R<ir::SaluCondition> {
        let ExprKind::Binary(op, a, b) = &e.kind else {
            return self.err(e.span, "a RegisterAction condition compares two operands");
        };
        let Some(cmp) = cmp_of(*op) else {
            return self.err(
                e.span,
                "a RegisterAction condition compares two operands (==, !=, <, <=, >, >=)",
            );
        };
        Ok(ir::SaluCondition {
            a: self.salu_operand(c, cell, a)?,
            cmp,
            b: self.salu_operand(c, cell, b)?,
        })
    }

    /// The halves of a pair register's cell struct `sn`: two fields of one width, the first
    /// the stateful ALU's `lo` half, the second its `hi` (width, signed) each.
    fn pair_halves(&self, sn: &str, span: Span) -> R<((u32, bool), (u32, bool))> {
        let fs = self.structs.get(sn).copied().unwrap_or(&[]);
        let mut ws = Vec::new();
        for f in fs {
            match self.resolve(&f.ty, f.span)? {
                Ty::Bits(w, s) => ws.push((w, s)),
                _ => ws.push((0, false)),
            }
        }
        match ws.as_slice() {
            [lo, hi] if lo.0 == hi.0 && lo.0 != 0 => Ok((*lo, *hi)),
            _ => self.err(
                span,
                format!(
                    "struct `{sn}` as a Register cell: a pair register's cell is a struct of \
                     two bit<N> (or int<N>) fields of the same width (the stateful ALU's lo \
                     and hi halves)"
                ),
            ),
        }
    }

    /// The IR register array of `Register` instance `d` (named `reg`), declared once.
    fn ensure_register(&mut self, c: &Ctl<'a>, d: &'a Decl, reg: &str) -> R<String> {
        let ir = self.ir_name(&c.name, reg);
        if self.prog.registers.iter().any(|r| r.name == ir) {
            return Ok(ir);
        }
        let DeclKind::Instance {
            ty: Type::Named(_, targs),
            args,
            ..
        } = &d.kind
        else {
            unreachable!()
        };
        let cell = match targs.first() {
            Some(t) => self.resolve(t, d.span)?,
            None => return self.err(d.span, "a Register needs its cell type"),
        };
        let (bits, signed, pair) = match cell {
            Ty::Bits(w, s) => (w, s, false),
            Ty::Struct(sn) => {
                let (lo, hi) = self.pair_halves(&sn, d.span)?;
                (lo.0, lo.1 || hi.1, true)
            }
            _ => {
                return self.err(
                    d.span,
                    "a Register's cells are bit<N>, int<N> or a pair struct",
                )
            }
        };
        if pair && ![8, 16, 32].contains(&bits) {
            return self.err(
                d.span,
                format!("a pair Register of bit<{bits}> halves: Tofino2's stateful ALU pairs halves of 8, 16 or 32 bits"),
            );
        }
        if ![1, 8, 16, 32, 64].contains(&bits) {
            return self.err(
                d.span,
                format!("a Register of bit<{bits}>: Tofino2's stateful ALU holds cells of 1, 8, 16, 32 or 64 bits"),
            );
        }
        let size = match args.first() {
            Some(e) => self.const_value(e, &c.locals)?.0,
            None => return self.err(d.span, "a Register needs its size"),
        };
        if let Some(init) = args.get(1) {
            if self.const_value(init, &c.locals)?.0 != 0 {
                return self.err(init.span, "the model's register cells start at 0; a non-zero initial value is not supported");
            }
        }
        self.prog.registers.push(ir::RegisterArray {
            name: ir.clone(),
            cell_bits: bits as u8,
            size: size.min(u32::MAX as u128) as u32,
            pair,
            signed,
        });
        self.spans.push((ir.clone(), d.span));
        self.registers
            .push((format!("{}.{reg}", c.name), ir.clone()));
        Ok(ir)
    }

    /// Checks a deparser: it emits the headers the parser extracts, in parse order, and
    /// updates at most the built-in IPv4 checksum (which the model's deparser recomputes).
    fn check_deparser(&mut self, d: &'a Decl, graph: &ir::ParserGraph) -> R<()> {
        let gress = Gress::Ingress;
        let c = self.ctl(d, gress)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        let mut emitted: Vec<String> = Vec::new();
        for st in apply {
            if self.mirror_idiom(&c, st)?.is_some()
                || self.resubmit_idiom(&c, st)?.is_some()
                || digests::is_digest_idiom(&c, st)
            {
                continue;
            }
            match &st.kind {
                StmtKind::Empty => {}
                StmtKind::Call(e) => {
                    let Some((_, "emit", [arg])) = method_call(e) else {
                        return self.err(
                            st.span,
                            "a deparser here only emits headers (`pkt.emit(hdr)`)",
                        );
                    };
                    let p = arg.path().unwrap_or_default();
                    let comps: Vec<&str> = p.split('.').collect();
                    match (c.params.get(comps[0]).cloned(), comps.len()) {
                        (Some(ParamKind::Headers(s)), 1) => {
                            let fs = self.structs.get(&s).copied().unwrap_or(&[]);
                            for f in fs {
                                if let Ty::Header(h) = self.resolve(&f.ty, f.span)? {
                                    emitted.push(self.instance(&f.name, &h, f.span)?.ir);
                                }
                            }
                        }
                        (Some(ParamKind::Headers(_)), 2) => emitted.push(self.header_of(&c, arg)?),
                        _ => {
                            return self.err(
                                arg.span,
                                "`emit` takes the headers struct or one of its headers",
                            )
                        }
                    }
                }
                StmtKind::Assign(lhs, rhs) => {
                    let ok = matches!(method_call(rhs), Some((obj, "update", _))
                        if obj.path().is_some_and(|o| matches!(c.locals.get(&o), Some(Local::Extern(_, e)) if e == "Checksum")));
                    let f = self.field(&c, lhs)?;
                    if !ok || f.ir != "ipv4.hdr_checksum" {
                        return self.err(
                            st.span,
                            "the only deparser computation supported is the IPv4 header \
                             checksum of the built-in ipv4 header (`hdr.ipv4.hdr_checksum = \
                             csum.update({...})`), which the model's deparser recomputes",
                        );
                    }
                }
                _ => {
                    return self.err(
                        st.span,
                        "this deparser statement is not supported (a deparser here emits \
                         headers, has the mirror, resubmit and digest idioms and updates the \
                         IPv4 checksum)",
                    )
                }
            }
        }
        // Headers in parse order: every header the graph extracts, and which header comes
        // before which on some path from `start` (the graph has no loops; its paths are few).
        let mut order: Vec<String> = Vec::new();
        let mut before: BTreeSet<(String, String)> = BTreeSet::new();
        let mut paths = vec![(ir::START.to_string(), Vec::<String>::new())];
        let mut walked = 0usize;
        while let Some((s, mut prefix)) = paths.pop() {
            walked += 1;
            if walked > 100_000 {
                return self.err(
                    d.span,
                    "the parser has more than 100,000 paths (or a loop); the model's parser graph is a small loop-free one",
                );
            }
            let Some(st) = graph.states.iter().find(|x| x.name == s) else {
                continue;
            };
            for h in &st.extract {
                if !order.contains(h) {
                    order.push(h.clone());
                }
                for g in &prefix {
                    before.insert((g.clone(), h.clone()));
                }
                prefix.push(h.clone());
            }
            match &st.transition {
                ir::Transition::Goto(n) => paths.push((n.clone(), prefix)),
                ir::Transition::Select { cases, default, .. } => {
                    paths.push((default.clone(), prefix.clone()));
                    for cs in cases.iter().rev() {
                        paths.push((cs.next.clone(), prefix.clone()));
                    }
                }
            }
        }
        for h in &order {
            if !emitted.contains(h) {
                return self.err(
                    d.span,
                    format!("header `{h}` is extracted but the deparser never emits it; the model's deparser emits every valid header"),
                );
            }
        }
        let misordered = emitted.iter().enumerate().any(|(i, a)| {
            emitted[i + 1..]
                .iter()
                .any(|b| before.contains(&(b.clone(), a.clone())))
        });
        if misordered {
            return self.err(
                d.span,
                "the deparser emits headers in another order than the parser extracts them; the \
                 model's deparser emits them in parse order",
            );
        }
        Ok(())
    }
}
