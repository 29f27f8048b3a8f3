//! Validating a program's header types and parser graph, and resolving them into a
//! [`parser::Graph`] with PHV containers for the program's headers.
//!
//! Program headers get normal containers (the parser and deparser must reach them and the
//! MAU compute on them) from the allocator that then serves metadata. A header's fields are
//! cut into byte-aligned groups: the shortest runs of fields that end on a byte boundary. A
//! group of at most 4 bytes goes into one container (1 byte: 8-bit, 2: 16-bit, 3 or 4:
//! 32-bit, right-aligned), so no field straddles containers; a group of more than 4 bytes
//! must be one field of whole bytes (a MAC address), which goes into 32-bit containers then
//! one 16- and one 8-bit for the rest, and is carried but not nameable (fields the MAU names
//! are at most 32 bits). Valid bits sit in 8-bit containers, eight headers each.
//!
//! The graph must be a DAG reachable from `start`: a loop would extract a header again (the
//! IR has no header stacks) or extract nothing forever, so loops are refused. On every path
//! a header is extracted at most once, headers that share containers (the built-in `udp` and
//! `tcp` overlay) are not both extracted, and a select reads only fields of headers
//! extracted on every path to it. Headers must come in one order on every path: the
//! deparser emits them in that order. Resource limits (TCAM rows, extractors per state) are
//! counted by [`parser::Graph`] and judged by placement, so that a program over them gets
//! a "does not fit" verdict rather than an error. Rules and sources: `docs/parser.md`.

use crate::hw::fields::{self, Access, MetadataAllocator};
use crate::hw::layout::Extract;
use crate::hw::params::PhvParams;
use crate::hw::parser::{self, Case, Graph, HeaderLayout, Next, State};
use crate::hw::phv::Phv;
use crate::hw::phv::{Container, Field};
use crate::program::builtin;
use crate::program::error::{err, fits, IrError};
use crate::program::ir::{self, HeaderType, ParserGraph, Transition};
use crate::DropReason;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// Widest header field.
pub const MAX_FIELD_BITS: u16 = 128;

/// A resolved parser with the names it adds.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub graph: Graph,
    /// Header fields tables may name (besides `fields::BUILTINS`), with `$valid` bits.
    pub fields: Vec<(String, Field, Access)>,
    /// Header fields wider than 32 bits: carried through the PHV, not nameable.
    pub wide: Vec<(String, u16)>,
    /// The same fields' pieces (one per container they span, most significant first), for
    /// those the checker lets tables and actions name (at most 64 bits).
    pub wide_pieces: Vec<(String, Vec<Field>)>,
}

/// The built-in graph, resolved.
fn resolve_builtin() -> Result<Graph, IrError> {
    let mut alloc = MetadataAllocator::new(&PhvParams::default());
    lower("built-in", &[], &builtin::graph(), &mut alloc).map(|l| l.graph)
}

/// The built-in graph, once resolved.
static BUILTIN: OnceLock<Arc<Graph>> = OnceLock::new();

/// The built-in graph, resolved once.
pub fn builtin_graph() -> Arc<Graph> {
    Arc::clone(BUILTIN.get_or_init(|| {
        let mut g = resolve_builtin().expect("the built-in parser graph is valid");
        g.builtin = true;
        Arc::new(g)
    }))
}

/// Parses `bytes` into `phv` with the built-in graph (see [`Graph::parse`]).
pub fn parse(bytes: &[u8], phv: &mut Phv) -> Result<(), DropReason> {
    builtin_graph().parse(bytes, phv)
}

/// Writes the built-in headers back (see [`Graph::deparse`]).
pub fn deparse(phv: &Phv, bytes: &mut [u8]) {
    builtin_graph().deparse(phv, bytes)
}

/// A header in the graph: its declaration and layout.
struct Hdr {
    decl: HeaderType,
    layout: HeaderLayout,
}

/// The pieces of a field `start` bits into a header, `bits` wide, that spans containers:
/// one per container it touches, most significant first. `None` if some of its bits are in
/// no container (never, for a laid-out header).
fn locate_pieces(extracts: &[Extract], start: u32, bits: u32) -> Option<Vec<Field>> {
    let end = start + bits;
    let mut pieces: Vec<(u32, Field)> = extracts
        .iter()
        .filter_map(|e| {
            let (lo, hi) = (e.offset as u32 * 8, (e.offset + e.len) as u32 * 8);
            let (a, b) = (lo.max(start), hi.min(end));
            (a < b).then(|| (a, Field::at(e.container, (hi - b) as u8, (b - a) as u8)))
        })
        .collect();
    pieces.sort_by_key(|p| p.0);
    let covered: u32 = pieces.iter().map(|p| p.1.bits as u32).sum();
    (covered == bits).then(|| pieces.into_iter().map(|p| p.1).collect())
}

/// Where a field `start` bits into a header, `bits` wide, sits in the header's containers.
fn locate(extracts: &[Extract], start: u32, bits: u32) -> Option<Field> {
    extracts.iter().find_map(|e| {
        let (lo, hi) = (e.offset as u32 * 8, (e.offset + e.len) as u32 * 8);
        (lo <= start && start + bits <= hi && bits <= 32)
            .then(|| Field::at(e.container, (hi - start - bits) as u8, bits as u8))
    })
}

/// Resolves `graph` over the program's `headers` (and the built-in ones), allocating the
/// program headers' containers from `alloc`. `program` names the program in errors.
pub fn lower(
    program: &str,
    headers: &[HeaderType],
    graph: &ParserGraph,
    alloc: &mut MetadataAllocator,
) -> Result<Lowered, IrError> {
    lower_pair(program, headers, graph, None, alloc).map(|(l, _)| l)
}

/// [`lower`] of an ingress graph and, if given, an egress graph of its own: the headers
/// are laid out once (both gresses name a header's fields alike), each graph is checked and
/// resolved apart, and every declared header must be extracted by one of them.
pub fn lower_pair(
    program: &str,
    headers: &[HeaderType],
    graph: &ParserGraph,
    egress: Option<&ParserGraph>,
    alloc: &mut MetadataAllocator,
) -> Result<(Lowered, Option<Graph>), IrError> {
    let (mut hdrs, mut hdr_ids) = declare_headers(program, headers, alloc)?;
    let mut expanded = Vec::new();
    for g in std::iter::once(graph).chain(egress) {
        expanded.push(expand_value_sets(program, g)?);
    }
    let egress_program = format!("{program}: egress parser");
    let mut all_states = Vec::new();
    let mut all_extracts = Vec::new();
    for (k, (states, _)) in expanded.iter().enumerate() {
        let name = if k == 0 { program } else { &egress_program };
        let s = States::new(name, states)?;
        all_extracts.push(s.extracts(&mut hdrs, &mut hdr_ids)?);
        all_states.push(s);
    }
    let HeaderFields {
        fields: fields_out,
        wide,
        wide_pieces,
        field_of,
    } = header_fields(program, &hdrs)?;
    let mut resolved_graphs = Vec::new();
    let mut extracted = 0u128;
    for (k, states) in all_states.iter().enumerate() {
        let reserved = &expanded[k].1;
        let mut resolved = Vec::new();
        let mut select_headers = Vec::new();
        for (r, &i) in states.order.iter().enumerate() {
            let (mut state, key_headers) =
                states.lower_state(i, all_extracts[k][r].clone(), &field_of, &wide)?;
            if let Some((rows, nexts)) = reserved.get(state.name.as_str()) {
                state.reserved_rows = *rows;
                for n in nexts {
                    state.value_set_next.push(states.next(i, n)?);
                }
            }
            resolved.push(state);
            select_headers.push(key_headers);
        }
        let before = check_paths(states, &hdrs, &resolved, &select_headers)?;
        extracted |= resolved
            .iter()
            .flat_map(|s| s.extracts.iter())
            .fold(0u128, |a, &h| a | 1 << h);
        let emit = &[graph]
            .into_iter()
            .chain(egress)
            .nth(k)
            .expect("a graph")
            .emit;
        let deparse_order = match deparse_order(&before) {
            _ if !emit.is_empty() => {
                let path = format!("{}: parser.emit", states.program);
                let mut order = Vec::new();
                for name in emit {
                    let Some(&h) = hdr_ids.get(name) else {
                        return err(&path, format!("emits unknown header `{name}`"));
                    };
                    if order.contains(&h) {
                        return err(&path, format!("emits header `{name}` twice"));
                    }
                    extracted |= 1 << h;
                    order.push(h);
                }
                order
            }
            Ok(order) => order,
            Err((g, h)) => {
                return err(
                    &format!("{}: parser", states.program),
                    format!(
                        "headers `{}` and `{}` are extracted in both orders on different paths; \
                         the deparser emits headers in one order",
                        hdrs[g].decl.name, hdrs[h].decl.name
                    ),
                )
            }
        };
        resolved_graphs.push((resolved, deparse_order));
    }
    if let Some(h) = (0..hdrs.len()).find(|&h| extracted >> h & 1 == 0) {
        return err(
            &format!("{program}: headers ({})", hdrs[h].decl.name),
            "the header is declared but no parser state extracts it",
        );
    }
    let layouts: Vec<HeaderLayout> = hdrs.into_iter().map(|h| h.layout).collect();
    let mut graphs = resolved_graphs
        .into_iter()
        .map(|(states, deparse_order)| Graph {
            builtin: false,
            headers: layouts.clone(),
            states,
            deparse_order,
        });
    let ingress = graphs.next().expect("the ingress graph");
    Ok((
        Lowered {
            graph: ingress,
            fields: fields_out,
            wide,
            wide_pieces,
        },
        graphs.next(),
    ))
}

/// Per state name: the TCAM rows its value sets hold empty, and where its value-set cases go.
type ValueSetRows = BTreeMap<String, (u32, Vec<String>)>;

/// The graph's states with each select case on a value set replaced by one case per value
/// added (in order), and [`ValueSetRows`].
fn expand_value_sets(
    program: &str,
    graph: &ParserGraph,
) -> Result<(Vec<ir::ParserState>, ValueSetRows), IrError> {
    let mut used = vec![false; graph.value_sets.len()];
    let mut reserved = ValueSetRows::new();
    for (k, v) in graph.value_sets.iter().enumerate() {
        let path = format!("{program}: parser.value_sets[{k}] ({})", v.name);
        if graph.value_sets[..k].iter().any(|o| o.name == v.name) {
            return err(&path, "the value set is declared twice");
        }
        if v.size == 0 {
            return err(&path, "a value set holds at least 1 value");
        }
        if v.entries.len() > v.size as usize {
            return err(
                &path,
                format!(
                    "{} values added to a value set of {} rows; its rows are reserved when the program loads, so it holds at most {}",
                    v.entries.len(),
                    v.size,
                    v.size
                ),
            );
        }
    }
    let mut states = graph.states.clone();
    for (i, s) in states.iter_mut().enumerate() {
        let Transition::Select { cases, .. } = &mut s.transition else {
            continue;
        };
        let mut out = Vec::with_capacity(cases.len());
        for (c, case) in cases.drain(..).enumerate() {
            let Some(name) = &case.value_set else {
                out.push(case);
                continue;
            };
            let cp = format!("{program}: parser.states[{i}] ({}).cases[{c}]", s.name);
            let Some(k) = graph.value_sets.iter().position(|v| &v.name == name) else {
                return err(
                    &cp,
                    format!("names value set `{name}`, which the graph does not declare"),
                );
            };
            if !case.values.is_empty() {
                return err(&cp, "a case on a value set gives no values of its own");
            }
            if std::mem::replace(&mut used[k], true) {
                return err(
                    &cp,
                    format!(
                        "value set `{name}` is named by a second case; its rows sit in one place"
                    ),
                );
            }
            let v = &graph.value_sets[k];
            let r = reserved.entry(s.name.clone()).or_default();
            r.0 += v.size - v.entries.len() as u32;
            r.1.push(case.next.clone());
            out.extend(v.entries.iter().map(|values| ir::SelectCase {
                values: values.clone(),
                next: case.next.clone(),
                value_set: None,
            }));
        }
        *cases = out;
    }
    if let Some(k) = used.iter().position(|u| !u) {
        return err(
            &format!(
                "{program}: parser.value_sets[{k}] ({})",
                graph.value_sets[k].name
            ),
            "no select case names the value set",
        );
    }
    Ok((states, reserved))
}

/// The program's declared header types, laid out (a built-in one as the built-in), with
/// their indices by name.
fn declare_headers(
    program: &str,
    headers: &[HeaderType],
    alloc: &mut MetadataAllocator,
) -> Result<(Vec<Hdr>, BTreeMap<String, usize>), IrError> {
    let mut hdrs: Vec<Hdr> = Vec::new();
    let mut hdr_ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut pov: Option<(Container, u8)> = None;
    let builtins = builtin::headers();
    for (i, h) in headers.iter().enumerate() {
        let path = format!("{program}: headers[{i}] ({})", h.name);
        if h.name.is_empty() || h.name.contains('.') {
            return err(&path, "a header name is non-empty and has no `.`");
        }
        if hdr_ids.contains_key(&h.name) {
            return err(&path, "the header is declared twice");
        }
        if let Some(b) = builtins.iter().find(|b| b.name == h.name) {
            if b != h {
                let shape: Vec<String> = b
                    .fields
                    .iter()
                    .map(|f| format!("{}:{}", f.name, f.bits))
                    .collect();
                return err(
                    &path,
                    format!(
                        "`{}` is a built-in header with fixed PHV containers; declare it exactly \
                         as the built-in ({}) or leave it undeclared",
                        h.name,
                        shape.join(", ")
                    ),
                );
            }
            hdr_ids.insert(h.name.clone(), hdrs.len());
            hdrs.push(builtin_hdr(b));
            continue;
        }
        hdr_ids.insert(h.name.clone(), hdrs.len());
        hdrs.push(program_header(&path, h, alloc, &mut pov)?);
    }

    Ok((hdrs, hdr_ids))
}

/// The graph's states in resolved order (the start state first, the others in declaration
/// order), and what names a state and its transitions.
struct States<'a> {
    program: &'a str,
    states: &'a [ir::ParserState],
    /// Declared index of each resolved state.
    order: Vec<usize>,
    /// Resolved index by name.
    resolved_index: BTreeMap<&'a str, usize>,
}

impl<'a> States<'a> {
    fn new(program: &'a str, states: &'a [ir::ParserState]) -> Result<States<'a>, IrError> {
        let state_ids = {
            let mut ids = BTreeMap::new();
            for (i, s) in states.iter().enumerate() {
                let path = format!("{program}: parser.states[{i}] ({})", s.name);
                if s.name.is_empty() || s.name == ir::ACCEPT || s.name == ir::REJECT {
                    return err(
                        &path,
                        "a state name is non-empty and not `accept` or `reject`",
                    );
                }
                if ids.insert(s.name.clone(), i).is_some() {
                    return err(&path, "the state is declared twice");
                }
            }
            ids
        };
        let Some(&start) = state_ids.get(ir::START) else {
            return err(
                &format!("{program}: parser"),
                format!("the parser has no `{}` state to begin in", ir::START),
            );
        };
        let mut order: Vec<usize> = vec![start];
        order.extend((0..states.len()).filter(|&i| i != start));
        let resolved_index: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(r, &i)| (states[i].name.as_str(), r))
            .collect();
        Ok(States {
            program,
            states,
            order,
            resolved_index,
        })
    }

    /// The error path of declared state `i`.
    fn path(&self, i: usize) -> String {
        format!(
            "{}: parser.states[{i}] ({})",
            self.program, self.states[i].name
        )
    }

    /// Where declared state `i`'s transition to `name` goes.
    fn next(&self, i: usize, name: &str) -> Result<Next, IrError> {
        Ok(match name {
            ir::ACCEPT => Next::Accept,
            ir::REJECT => Next::Reject,
            n => match self.resolved_index.get(n) {
                Some(&r) => Next::State(r),
                None => return err(&self.path(i), format!("goes to unknown state `{n}`")),
            },
        })
    }

    /// The headers each resolved state extracts; a built-in header joins `hdrs` when first
    /// extracted.
    fn extracts(
        &self,
        hdrs: &mut Vec<Hdr>,
        hdr_ids: &mut BTreeMap<String, usize>,
    ) -> Result<Vec<Vec<usize>>, IrError> {
        let (program, states) = (self.program, self.states);
        let builtins = builtin::headers();
        let mut extracts: Vec<Vec<usize>> = Vec::new();
        for &i in &self.order {
            let mut out = Vec::new();
            for hname in &states[i].extract {
                let h = match hdr_ids.get(hname) {
                    Some(&h) => h,
                    None => match builtins.iter().find(|b| &b.name == hname) {
                        Some(b) => {
                            hdr_ids.insert(hname.clone(), hdrs.len());
                            hdrs.push(builtin_hdr(b));
                            hdrs.len() - 1
                        }
                        None => {
                            return err(&self.path(i), format!("extracts unknown header `{hname}`"))
                        }
                    },
                };
                out.push(h);
            }
            extracts.push(out);
        }
        if hdrs.len() > parser::POV_BITS {
            return err(
                &format!("{program}: headers"),
                format!(
                    "{} headers; Tofino2 has {} header-valid (POV) bits",
                    hdrs.len(),
                    parser::POV_BITS
                ),
            );
        }
        Ok(extracts)
    }

    /// Declared state `i` as the parser runs it, given its extracted headers, and the
    /// headers (by key name) its select keys read.
    fn lower_state(
        &self,
        i: usize,
        extracts: Vec<usize>,
        field_of: &BTreeMap<String, (Field, usize)>,
        wide: &[(String, u16)],
    ) -> Result<(State, Vec<(String, usize)>), IrError> {
        let s = &self.states[i];
        let (keys, cases, default, key_headers) = match &s.transition {
            Transition::Goto(n) => (Vec::new(), Vec::new(), self.next(i, n)?, Vec::new()),
            Transition::Select {
                keys,
                cases,
                default,
            } => {
                if keys.is_empty() {
                    return err(&self.path(i), "a select needs at least one key");
                }
                let mut kf = Vec::new();
                let mut kh = Vec::new();
                for k in keys {
                    if let Some(&(_, f)) = fields::PARSER_INTRINSICS.iter().find(|i| i.0 == k) {
                        // Set before parsing: no header needs to be extracted first.
                        kf.push(f);
                        continue;
                    }
                    // A slice of a header field (`h.f[7:0]`): those bits of its container.
                    let sliced = k
                        .strip_suffix(']')
                        .and_then(|x| x.rsplit_once('['))
                        .and_then(|(base, range)| {
                            let (hi, lo) = range.split_once(':')?;
                            let (hi, lo): (u8, u8) = (hi.parse().ok()?, lo.parse().ok()?);
                            let &(f, h) = field_of.get(base)?;
                            (lo <= hi && hi < f.bits)
                                .then(|| (Field::at(f.container, f.shift + lo, hi - lo + 1), h))
                        });
                    let Some((f, h)) = field_of.get(k).copied().or(sliced) else {
                        let why = match wide.iter().find(|w| &w.0 == k) {
                            Some(w) => format!(
                                "selects on `{k}`, which is {} bits; keys are at most 32",
                                w.1
                            ),
                            None => format!(
                                "selects on `{k}`, which is not a field of a header the parser \
                                 extracts"
                            ),
                        };
                        return err(&self.path(i), why);
                    };
                    kf.push(f);
                    kh.push((k.clone(), h));
                }
                let key_bits: u32 = kf.iter().map(|f| f.bits as u32).sum();
                if key_bits > parser::SELECT_KEY_BITS {
                    return err(
                        &self.path(i),
                        format!(
                            "selects on {key_bits} bits; the parser matches at most {} \
                             (4 x 8-bit match registers)",
                            parser::SELECT_KEY_BITS
                        ),
                    );
                }
                let mut cs = Vec::new();
                for (c, case) in cases.iter().enumerate() {
                    let cp = format!("{}.cases[{c}]", self.path(i));
                    if case.values.len() != kf.len() {
                        return err(
                            &cp,
                            format!("{} values for {} keys", case.values.len(), kf.len()),
                        );
                    }
                    let mut values = Vec::new();
                    for (kv, f) in case.values.iter().zip(&kf) {
                        let b = f.bits as u32;
                        let m = kv.mask.unwrap_or(u64::MAX >> (64 - b));
                        if !fits(kv.value, b) || !fits(m, b) {
                            return err(
                                &cp,
                                format!(
                                    "value {:#x} or its mask does not fit in {b} bits",
                                    kv.value
                                ),
                            );
                        }
                        values.push((kv.value as u32, m as u32));
                    }
                    let next = match self.next(i, &case.next) {
                        Ok(n) => n,
                        Err(e) => return err(&cp, e.problem),
                    };
                    cs.push(Case { values, next });
                }
                (kf, cs, self.next(i, default)?, kh)
            }
        };
        let state = State {
            name: s.name.clone(),
            extracts,
            keys,
            cases,
            default,
            reserved_rows: 0,
            value_set_next: Vec::new(),
            // Resolved once the metadata has its containers (`check::resolve_fields`).
            sets: Vec::new(),
            checksums: Vec::new(),
            skips: Vec::new(),
        };
        Ok((state, key_headers))
    }
}

/// The named fields of the graph's headers.
struct HeaderFields {
    /// Fields of at most 32 bits, with their access.
    fields: Vec<(String, Field, Access)>,
    /// Fields wider than 32 bits, which exist but cannot be named, and those of them (at most
    /// 64 bits) in pieces.
    wide: Vec<(String, u16)>,
    wide_pieces: Vec<(String, Vec<Field>)>,
    /// Each nameable field and the header it is in.
    field_of: BTreeMap<String, (Field, usize)>,
}

/// The fields of `hdrs` by name (`header.field`, and `header.$valid` for program headers).
fn header_fields(program: &str, hdrs: &[Hdr]) -> Result<HeaderFields, IrError> {
    let mut fields_out = Vec::new();
    let mut wide = Vec::new();
    let mut wide_pieces = Vec::new();
    let mut field_of: BTreeMap<String, (Field, usize)> = BTreeMap::new();
    for (h, hd) in hdrs.iter().enumerate() {
        let is_builtin = parser::builtin_layout(&hd.decl.name).is_some();
        let valid = format!("{}.$valid", hd.decl.name);
        if !is_builtin {
            fields_out.push((valid, hd.layout.valid, Access::ReadOnly));
        }
        let mut start_bit = 0u32;
        for f in &hd.decl.fields {
            let name = format!("{}.{}", hd.decl.name, f.name);
            let located = locate(&hd.layout.extracts, start_bit, f.bits as u32);
            start_bit += f.bits as u32;
            // The built-in names keep their meaning (`ipv4.diffserv` is the whole TOS byte).
            let field = match fields::builtin(&name) {
                Some(b) if is_builtin => Some(b.field),
                Some(_) => {
                    return err(
                        &format!("{program}: headers ({})", hd.decl.name),
                        format!("field `{name}` is already a built-in field"),
                    )
                }
                None => {
                    match located {
                        Some(field) => fields_out.push((name.clone(), field, Access::ReadWrite)),
                        None => {
                            wide.push((name.clone(), f.bits));
                            if let Some(p) = locate_pieces(
                                &hd.layout.extracts,
                                start_bit - f.bits as u32,
                                f.bits as u32,
                            ) {
                                wide_pieces.push((name.clone(), p));
                            }
                        }
                    }
                    located
                }
            };
            if let Some(field) = field {
                field_of.insert(name, (field, h));
            }
        }
    }

    Ok(HeaderFields {
        fields: fields_out,
        wide,
        wide_pieces,
        field_of,
    })
}

/// Checks that every state is reachable with no loop, that no path extracts a header twice
/// or two headers sharing containers, that a select's headers are extracted on every path to
/// it; returns, per header, the headers
/// extracted before it on some path.
fn check_paths(
    states: &States,
    hdrs: &[Hdr],
    resolved: &[State],
    select_headers: &[Vec<(String, usize)>],
) -> Result<Vec<u128>, IrError> {
    let spath = |i: usize| states.path(i);
    let order = &states.order;
    let n = resolved.len();
    let post = match topological_order(resolved) {
        Ok(post) => post,
        Err((r, Some(t))) => {
            return err(
                &spath(order[r]),
                format!(
                    "goes back to state `{}`, making a loop; the parser graph must be acyclic \
                     (a loop would extract a header twice, and the IR has no header stacks)",
                    resolved[t].name
                ),
            )
        }
        Err((r, None)) => return err(&spath(order[r]), "the state is unreachable from `start`"),
    };

    // Headers on the paths into each state: on some path (may) and on every path (must).
    let all = if hdrs.len() == 128 {
        u128::MAX
    } else {
        (1u128 << hdrs.len()) - 1
    };
    let mut may_in = vec![0u128; n];
    let mut must_in = vec![all; n];
    must_in[0] = 0;
    // before[h]: headers extracted before `h` on some path.
    let mut before = vec![0u128; hdrs.len()];
    for &r in &post {
        let (mut may, mut must) = (may_in[r], must_in[r]);
        for &h in &resolved[r].extracts {
            let name = &hdrs[h].decl.name;
            if may >> h & 1 == 1 {
                return err(
                    &spath(order[r]),
                    format!(
                        "extracts header `{name}`, which a path to here has already extracted; \
                         a header is extracted at most once per packet"
                    ),
                );
            }
            for (g, other) in hdrs.iter().enumerate() {
                let shared = other.layout.extracts.iter().any(|a| {
                    hdrs[h]
                        .layout
                        .extracts
                        .iter()
                        .any(|b| a.container == b.container)
                });
                if may >> g & 1 == 1 && shared {
                    return err(
                        &spath(order[r]),
                        format!(
                            "extracts header `{name}`, which shares PHV containers with `{}`, \
                             already extracted on a path to here",
                            other.decl.name
                        ),
                    );
                }
            }
            before[h] |= may;
            may |= 1 << h;
            must |= 1 << h;
        }
        for (k, h) in &select_headers[r] {
            let h = *h;
            if must >> h & 1 == 0 {
                return err(
                    &spath(order[r]),
                    format!(
                        "selects on `{k}`, but header `{}` is not extracted on every path to \
                         this state",
                        hdrs[h].decl.name
                    ),
                );
            }
        }
        for t in successors(&resolved[r]) {
            may_in[t] |= may;
            must_in[t] &= must;
        }
    }
    Ok(before)
}

/// Checks a program-declared header and lays it out in normal containers from `alloc`
/// (byte-aligned groups; see the module doc), with its valid bit in `pov`'s container.
fn program_header(
    path: &str,
    h: &HeaderType,
    alloc: &mut MetadataAllocator,
    pov: &mut Option<(Container, u8)>,
) -> Result<Hdr, IrError> {
    if h.fields.is_empty() {
        return err(path, "a header needs at least one field");
    }
    let mut names = Vec::new();
    for (k, f) in h.fields.iter().enumerate() {
        let fp = format!("{path}.fields[{k}] ({})", f.name);
        if f.name.is_empty() || f.name.contains('.') || f.name.starts_with('$') {
            return err(
                &fp,
                "a field name is non-empty, has no `.` and does not start with `$`",
            );
        }
        if names.contains(&&f.name) {
            return err(&fp, "the field is declared twice");
        }
        names.push(&f.name);
        if f.bits == 0 || f.bits > MAX_FIELD_BITS {
            return err(
                &fp,
                format!("width {} is outside 1..={MAX_FIELD_BITS}", f.bits),
            );
        }
    }
    let bits = h.bits();
    if !bits.is_multiple_of(8) {
        return err(
            path,
            format!("the header is {bits} bits, not a whole number of bytes"),
        );
    }
    let mut extracts = Vec::new();
    let (mut group_start, mut at, mut first) = (0u32, 0u32, 0usize);
    for (k, f) in h.fields.iter().enumerate() {
        at += f.bits as u32;
        if !at.is_multiple_of(8) {
            continue;
        }
        let group_bytes = ((at - group_start) / 8) as usize;
        let offset = (group_start / 8) as usize;
        let no_room = |bytes: usize| IrError {
            path: path.to_string(),
            problem: format!(
                "no normal PHV container is left for its bytes {}..{}",
                offset,
                offset + bytes
            ),
        };
        if group_bytes <= 4 {
            let container = alloc
                .alloc_normal(group_bytes)
                .ok_or_else(|| no_room(group_bytes))?;
            extracts.push(Extract {
                offset,
                container,
                len: group_bytes,
            });
        } else if first == k {
            // One wide field of whole bytes: 32-bit containers, then the rest.
            let mut done = 0;
            while done < group_bytes {
                let len = (group_bytes - done).min(4);
                let len = if len == 3 { 2 } else { len };
                let container = alloc
                    .alloc_normal(len)
                    .ok_or_else(|| no_room(group_bytes))?;
                extracts.push(Extract {
                    offset: offset + done,
                    container,
                    len,
                });
                done += len;
            }
        } else {
            return err(
                path,
                format!(
                    "fields `{}` to `{}` make a {}-bit group with no byte boundary inside; \
                     such a group must fit one 32-bit container",
                    h.fields[first].name,
                    f.name,
                    at - group_start
                ),
            );
        }
        group_start = at;
        first = k + 1;
    }
    let (container, used) = match *pov {
        Some((c, n)) if n < 8 => (c, n),
        _ => {
            let c = alloc.alloc_normal(1).ok_or_else(|| IrError {
                path: path.to_string(),
                problem: "no normal 8-bit PHV container is left for its valid bit".into(),
            })?;
            (c, 0)
        }
    };
    *pov = Some((container, used + 1));
    Ok(Hdr {
        decl: h.clone(),
        layout: HeaderLayout {
            name: h.name.clone(),
            bytes: (bits / 8) as usize,
            extracts,
            valid: Field::at(container, used, 1),
            ipv4: false,
        },
    })
}

/// The states a state may go to, in case order.
fn successors(st: &State) -> Vec<usize> {
    let mut v: Vec<usize> = st
        .cases
        .iter()
        .map(|c| c.next)
        .chain(st.value_set_next.iter().copied())
        .chain([st.default])
        .filter_map(|x| match x {
            Next::State(t) => Some(t),
            _ => None,
        })
        .collect();
    v.dedup();
    v
}

/// The states in a topological order from state 0, by depth-first search. Errors: `(r,
/// Some(t))` when state `r` goes back to `t` (a loop), `(r, None)` when `r` is unreachable.
fn topological_order(states: &[State]) -> Result<Vec<usize>, (usize, Option<usize>)> {
    // 0 = unseen, 1 = on the stack, 2 = done; `post` is the finishing order.
    let mut mark = vec![0u8; states.len()];
    let mut post = Vec::new();
    let mut stack = vec![(0usize, 0usize)];
    mark[0] = 1;
    while let Some(&mut (r, ref mut k)) = stack.last_mut() {
        match successors(&states[r]).get(*k) {
            Some(&t) => {
                *k += 1;
                match mark[t] {
                    0 => {
                        mark[t] = 1;
                        stack.push((t, 0));
                    }
                    1 => return Err((r, Some(t))),
                    _ => {}
                }
            }
            None => {
                mark[r] = 2;
                post.push(r);
                stack.pop();
            }
        }
    }
    if let Some(r) = mark.iter().position(|&m| m == 0) {
        return Err((r, None));
    }
    post.reverse();
    Ok(post)
}

/// The deparse order: each header after every header extracted before it on some path
/// (`before[h]`, a bit set), ties broken by index. Error: `(g, h)`, two headers that come
/// in both orders.
fn deparse_order(before: &[u128]) -> Result<Vec<usize>, (usize, usize)> {
    let mut order = Vec::new();
    let mut placed = 0u128;
    while order.len() < before.len() {
        let left = |h: usize| placed >> h & 1 == 0;
        let Some(h) = (0..before.len()).find(|&h| left(h) && before[h] & !placed == 0) else {
            let h = (0..before.len()).find(|&h| left(h)).expect("one is left");
            let g = (0..before.len())
                .find(|&g| left(g) && before[h] >> g & 1 == 1)
                .expect("a header before it is left");
            return Err((g, h));
        };
        placed |= 1 << h;
        order.push(h);
    }
    Ok(order)
}

fn builtin_hdr(b: &HeaderType) -> Hdr {
    let (extracts, valid, ipv4) =
        parser::builtin_layout(&b.name).expect("a built-in header has a layout");
    Hdr {
        decl: b.clone(),
        layout: HeaderLayout {
            name: b.name.clone(),
            bytes: (b.bits() / 8) as usize,
            extracts: extracts.to_vec(),
            valid,
            ipv4,
        },
    }
}
