//! The egress parser's test of a mirrored copy, as Tofino programs write it: the copy starts
//! with a mirror header whose first field carries the mirror type (the mirroring action
//! writes it), and the egress parser's first `select` looks ahead at that field:
//!
//! ```p4
//! state start {
//!     pkt.extract(eg_intr_md);
//!     transition select(pkt.lookahead<mirror_h>().mirror_type) {
//!         CNM_MIRROR_TYPE: parse_mirror;
//!         default: parse_ethernet;
//!     }
//! }
//! ```
//!
//! The modelled chip hands a copy's mirror type to the egress parser with the copy
//! (`eg_intr_md.mirror_type`, 0 for every other packet), and its parser graph selects on
//! that; so the look-ahead lowers to a select on `eg_intr_md.mirror_type`, which reads what
//! the looked-at byte holds as long as every copy's first field is its mirror type. The
//! lowering holds the program to that: the look-ahead is of a header's first field, before
//! anything is extracted, in the egress parser; every case is the type of copies that start
//! with a header of that type, goes to a state that extracts that header first, and every
//! action that mirrors with such a header sets its first field to the type. Anything else is
//! an error at its place. The same graph runs in ingress, where no packet has a mirror type,
//! so every ingress packet takes the `default` branch, which must parse as the ingress parser.
//!
//! Two forms more, which BFC's switch (`src/schemes/bfc/bfc.p4`) uses:
//!
//! - **A marker.** The looked-at first field may be wider than a mirror type (9 to 32 bits):
//!   a constant that every action mirroring with the header writes there, which tells the
//!   copy from other packets as long as no other packet starts with it (the program's
//!   promise; BFC's dequeue records start with 0xBFC0, the frames of t2sim's networks with
//!   destination MACs 02:00:...). A case is then a marker, and lowers to the mirror type of
//!   the copies whose header carries it.
//! - **An ingress parser that selects on the intrinsic metadata** (`ig_intr_md.ingress_port`,
//!   `ig_intr_md.resubmit_flag`: pktgen and recirculated packets, resubmitted passes). The
//!   egress parser cannot name those fields, and in egress the chip reads them as 0
//!   (`fields.rs`, `PARSER_INTRINSICS`). So the `default` branch may instead parse as the
//!   ingress graph does with those fields 0; the one graph is then the egress start and its
//!   copies' states, with `default` going where the ingress `start` goes (which extracts no
//!   header and goes on unconditionally), then the ingress states.

use super::*;

/// The IR field a look-ahead at a copy's mirror type reads.
pub(super) const MIRROR_TYPE_FIELD: &str = "eg_intr_md.mirror_type";

/// A `pkt.lookahead<H>().f` select key: header type `H`, where it was written.
#[derive(Clone, Debug)]
pub(super) struct Lookahead {
    header_type: String,
    /// The looked-at field is wider than a mirror type: the cases are markers.
    marker: bool,
    span: Span,
}

/// The intrinsic fields an ingress parser may select on that read 0 in egress.
const ZERO_IN_EGRESS: [&str; 2] = ["ig_intr_md.ingress_port", "ig_intr_md.resubmit_flag"];

impl<'a> Lowerer<'a> {
    /// The select key `e` when it is `pkt.lookahead<H>().f` (`None` for any other key):
    /// the copy's mirror type. `extracted` says whether the state extracted a header before
    /// its select.
    pub(super) fn lookahead_key(
        &mut self,
        c: &Ctl<'a>,
        e: &Expr,
        extracted: bool,
    ) -> R<Option<FieldRef>> {
        let ExprKind::Member(call, field) = &e.kind else {
            return Ok(None);
        };
        let ExprKind::Call { func, targs, args } = &call.kind else {
            return Ok(None);
        };
        let ExprKind::Member(obj, m) = &func.kind else {
            return Ok(None);
        };
        let is_pkt = obj
            .path()
            .is_some_and(|p| matches!(c.params.get(&p), Some(ParamKind::Packet)));
        if m != "lookahead" || !is_pkt {
            return Ok(None);
        }
        if c.gress != Gress::Egress {
            return self.err(
                e.span,
                "`lookahead` lowers only in the egress parser's first select, where it reads a \
                 mirrored copy's type: the model's parser selects on extracted fields",
            );
        }
        if extracted {
            return self.err(
                e.span,
                "`lookahead` lowers only before the egress parser extracts a header: it reads \
                 the first field of a mirrored copy's mirror header",
            );
        }
        let ([t], []) = (targs.as_slice(), args.as_slice()) else {
            return self.err(
                e.span,
                "`lookahead` takes one type argument, the mirror header, and no arguments",
            );
        };
        let Ty::Header(h) = self.resolve(t, e.span)? else {
            return self.err(
                e.span,
                "`lookahead<H>()` lowers for a header type H, the mirror header a copy starts with",
            );
        };
        let first = self.headers.get(&h).and_then(|fs| fs.first());
        let Some(first) = first.filter(|f| &f.name == field) else {
            return self.err(
                e.span,
                format!(
                    "the look-ahead reads `{field}`, but a copy's mirror type is the first field \
                     of its mirror header (`{h}` starts with `{}`)",
                    first.map_or("nothing", |f| f.name.as_str())
                ),
            );
        };
        let bits = match self.resolve(&first.ty, first.span)? {
            Ty::Bits(w, false) if (4..=32).contains(&w) => w,
            _ => {
                return self.err(
                    first.span,
                    format!(
                        "`{h}.{field}`, which the egress parser looks ahead at, holds the mirror \
                         type (bit<4> to bit<8>) or a marker (up to bit<32>)"
                    ),
                )
            }
        };
        self.lookaheads.push(Lookahead {
            header_type: h,
            marker: bits > 8,
            span: e.span,
        });
        Ok(Some(FieldRef {
            ir: MIRROR_TYPE_FIELD.to_string(),
            bits,
        }))
    }

    /// The graph of a program whose egress parser begins with a look-ahead at the mirror
    /// type: the egress graph, when its `default` branch parses as the ingress graph (the
    /// one graph the model runs in both gresses). `None` when the egress parser has no such
    /// look-ahead. Checks every case against the mirrors the deparsers emit.
    pub(super) fn graph_with_copies(
        &self,
        ingress: &ir::ParserGraph,
        egress: &ir::ParserGraph,
        egress_span: Span,
    ) -> R<Option<ir::ParserGraph>> {
        let Some(look) = self.lookaheads.first() else {
            return Ok(None);
        };
        let start = egress.states.iter().find(|s| s.name == ir::START);
        let Some(ir::Transition::Select {
            keys,
            cases,
            default,
        }) = start.map(|s| &s.transition)
        else {
            return self.err(
                look.span,
                "the look-ahead at the mirror type is the start state's select",
            );
        };
        if keys.len() != 1 || self.lookaheads.len() != 1 {
            return self.err(
                look.span,
                "the egress parser selects on the mirror type alone, once, in its start state",
            );
        }
        let egress_default = canonical_from(egress, default);
        let ingress_start = ingress.states.iter().find(|s| s.name == ir::START);
        let mut graph = egress.clone();
        if egress_default != canonical_from(ingress, ir::START) {
            let after_start = match ingress_start.map(|s| (&s.extract, &s.transition)) {
                Some((x, ir::Transition::Goto(n))) if x.is_empty() => Some(n.clone()),
                _ => None,
            };
            let same_in_egress =
                egress_default == canonical_from(&as_in_egress(ingress), ir::START);
            let Some(after_start) = after_start.filter(|_| same_in_egress) else {
                return self.err(
                    egress_span,
                    "the egress parser's default branch (packets that are not mirrored copies) \
                     differs from the ingress parser, also with the ingress port and resubmit \
                     flag the ingress selects on read as 0, as in egress: the modelled chip runs \
                     one parser graph in both gresses (an ingress that selects on them goes \
                     from `start` unconditionally to the state that does)",
                );
            };
            graph = self.joined(egress, ingress, &after_start, look.span)?;
        }
        let mut lowered = Vec::new();
        for case in cases {
            let v = case.values[0].value as u128;
            let copies = if look.marker {
                self.mirrors.iter().find(|m| {
                    m.header
                        .as_ref()
                        .is_some_and(|(h, _)| self.first_field_always(h, v))
                })
            } else {
                self.mirrors.iter().find(|m| m.mirror_type == v)
            };
            let t = copies.map_or(v, |m| m.mirror_type);
            lowered.push(t as u64);
            let header = copies.and_then(|m| m.header.as_ref());
            let Some((h, deparser_span)) = header else {
                if look.marker {
                    return self.err(
                        look.span,
                        format!(
                            "case {v:#x}: no action mirroring with a header sets its first \
                             field to this marker, so no copy starts with it"
                        ),
                    );
                }
                return self.err(
                    look.span,
                    format!(
                        "case {t}: no deparser mirrors with a header of mirror type {t}, so no \
                         copy starts with one (0 is every packet that is not a copy)"
                    ),
                );
            };
            let inst = self.instances.values().find(|i| &i.ir == h);
            if inst.is_none_or(|i| i.type_name != look.header_type) {
                return self.err(
                    *deparser_span,
                    format!(
                        "copies of mirror type {t} start with `{h}`, but the egress parser looks \
                         ahead at a `{}`",
                        look.header_type
                    ),
                );
            }
            let next = egress.states.iter().find(|s| s.name == case.next);
            if next.and_then(|s| s.extract.first()) != Some(h) {
                return self.err(
                    look.span,
                    format!(
                        "case {t} goes to `{}`, which must extract the copy's mirror header `{h}` \
                         first",
                        case.next
                    ),
                );
            }
            self.mirror_type_written(h, v, *deparser_span)?;
        }
        if let Some(ir::ParserState {
            transition: ir::Transition::Select { cases, .. },
            ..
        }) = graph.states.iter_mut().find(|s| s.name == ir::START)
        {
            for (c, t) in cases.iter_mut().zip(lowered) {
                c.values[0].value = t;
            }
        }
        Ok(Some(graph))
    }

    /// Whether some action mirrors with header `h` and every one that does sets its first
    /// field to `v`.
    fn first_field_always(&self, h: &str, v: u128) -> bool {
        let inst = self.instances.values().find(|i| i.ir == h);
        let Some((_, dst, _)) = inst.and_then(|i| i.fields.first()) else {
            return false;
        };
        let mut any = false;
        for a in &self.prog.actions {
            let mirrors = a.primitives.iter().any(
                |p| matches!(p, ir::Primitive::MirrorWithHeader { header, .. } if header == h),
            );
            if !mirrors {
                continue;
            }
            any = true;
            let writes = a.primitives.iter().any(|p| {
                matches!(p, ir::Primitive::Set { dst: d, src: Operand::Const(c) }
                    if d == dst && *c as u128 == v)
            });
            if !writes {
                return false;
            }
        }
        any
    }

    /// The one graph of an egress parser that tells copies apart and an ingress parser that
    /// selects on the intrinsic metadata: the egress `start` (its `default` going to
    /// `after_start`, where the ingress `start` goes) and the states its copies reach, then
    /// the ingress states but `start`.
    fn joined(
        &self,
        egress: &ir::ParserGraph,
        ingress: &ir::ParserGraph,
        after_start: &str,
        span: Span,
    ) -> R<ir::ParserGraph> {
        let mut start = egress
            .states
            .iter()
            .find(|s| s.name == ir::START)
            .cloned()
            .expect("the caller found the egress start");
        let ir::Transition::Select { cases, default, .. } = &mut start.transition else {
            unreachable!("the caller matched the start's select")
        };
        *default = after_start.to_string();
        let mut copy_states: Vec<ir::ParserState> = Vec::new();
        let mut todo: Vec<String> = cases.iter().map(|c| c.next.clone()).collect();
        while let Some(n) = todo.pop() {
            let in_ingress = ingress.states.iter().find(|s| s.name == n);
            let Some(s) = egress.states.iter().find(|s| s.name == n) else {
                continue;
            };
            if let Some(i) = in_ingress {
                if i != s {
                    return self.err(
                        span,
                        format!(
                            "state `{n}`, which a copy reaches, differs between the egress and \
                             the ingress parser (the model runs one graph)"
                        ),
                    );
                }
                continue;
            }
            if copy_states.iter().any(|c| c.name == n) {
                continue;
            }
            match &s.transition {
                ir::Transition::Goto(t) => todo.push(t.clone()),
                ir::Transition::Select { cases, default, .. } => {
                    todo.extend(cases.iter().map(|c| c.next.clone()));
                    todo.push(default.clone());
                }
            }
            copy_states.push(s.clone());
        }
        // In the egress parser's order.
        copy_states.sort_by_key(|c| egress.states.iter().position(|s| s.name == c.name));
        let mut states = vec![start];
        states.extend(copy_states);
        states.extend(
            ingress
                .states
                .iter()
                .filter(|s| s.name != ir::START)
                .cloned(),
        );
        // The ingress states keep their value sets (the egress parser has none).
        Ok(ir::ParserGraph {
            states,
            value_sets: ingress.value_sets.clone(),
            emit: Vec::new(),
        })
    }

    /// Every action that mirrors with header `h` sets its first field to `t`, so that the
    /// copy's first byte is what the egress parser looks ahead at.
    fn mirror_type_written(&self, h: &str, t: u128, span: Span) -> R<()> {
        let inst = self.instances.values().find(|i| i.ir == h);
        let Some((_, dst, _)) = inst.and_then(|i| i.fields.first()) else {
            return Ok(());
        };
        for a in &self.prog.actions {
            let mirrors = a.primitives.iter().any(
                |p| matches!(p, ir::Primitive::MirrorWithHeader { header, .. } if header == h),
            );
            let writes = a.primitives.iter().any(|p| {
                matches!(p, ir::Primitive::Set { dst: d, src: Operand::Const(v) }
                    if d == dst && *v as u128 == t)
            });
            if mirrors && !writes {
                return self.err(
                    span,
                    format!(
                        "action `{}` mirrors with `{h}` but does not set `{dst}` to the mirror \
                         type {t}: the egress parser looks ahead at that field to tell the copy",
                        a.name
                    ),
                );
            }
        }
        Ok(())
    }
}

/// The ingress graph as it parses in egress, where the fields of [`ZERO_IN_EGRESS`] read 0:
/// a select on those alone goes where 0 goes.
pub(super) fn as_in_egress(g: &ir::ParserGraph) -> ir::ParserGraph {
    let mut g = g.clone();
    for s in &mut g.states {
        let ir::Transition::Select {
            keys,
            cases,
            default,
        } = &s.transition
        else {
            continue;
        };
        if !keys.iter().all(|k| ZERO_IN_EGRESS.contains(&k.as_str())) {
            continue;
        }
        let zero = cases.iter().find(|c| {
            c.values
                .iter()
                .all(|v| v.value & v.mask.unwrap_or(u64::MAX) == 0)
        });
        let next = zero.map_or(default, |c| &c.next).clone();
        s.transition = ir::Transition::Goto(next);
    }
    g
}
