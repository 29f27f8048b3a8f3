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

use super::*;

/// The IR field a look-ahead at a copy's mirror type reads.
pub(super) const MIRROR_TYPE_FIELD: &str = "eg_intr_md.mirror_type";

/// A `pkt.lookahead<H>().f` select key: header type `H`, where it was written.
#[derive(Clone, Debug)]
pub(super) struct Lookahead {
    header_type: String,
    span: Span,
}

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
            Ty::Bits(w, false) if (4..=8).contains(&w) => w,
            _ => {
                return self.err(
                    first.span,
                    format!(
                        "`{h}.{field}`, which the egress parser looks ahead at, holds the mirror \
                         type: bit<4> to bit<8>"
                    ),
                )
            }
        };
        self.lookaheads.push(Lookahead {
            header_type: h,
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
        if canonical_from(egress, default) != canonical_from(ingress, ir::START) {
            return self.err(
                egress_span,
                "the egress parser's default branch (packets that are not mirrored copies) \
                 differs from the ingress parser: the modelled chip runs one parser graph in both \
                 gresses",
            );
        }
        for case in cases {
            let t = case.values[0].value as u128;
            let copies = self.mirrors.iter().find(|m| m.mirror_type == t);
            let header = copies.and_then(|m| m.header.as_ref());
            let Some((h, deparser_span)) = header else {
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
            self.mirror_type_written(h, t, *deparser_span)?;
        }
        Ok(Some(egress.clone()))
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
