//! `Resubmit`, as TNA programs write it: an ingress action sets
//! `ig_dprsr_md.resubmit_type = T`, and the ingress deparser has
//! `if (ig_dprsr_md.resubmit_type == T) { resubmit.emit(); }` (or `emit(hdr.h)`, with a
//! resubmit header) for it. Lowered to the IR's `resubmit` primitive in that action: the
//! packet goes through the ingress once more as it came in, with header `h` (its fields as
//! the action leaves them) in front, and `ig_intr_md.resubmit_flag` 1, which the parser
//! selects on to extract `h` where the port metadata would be:
//!
//! ```p4
//! state start {
//!     pkt.extract(ig_intr_md);
//!     transition select(ig_intr_md.resubmit_flag) { 1: parse_resubmit; default: parse_port_metadata; }
//! }
//! state parse_resubmit { pkt.extract(hdr.resub); transition parse_ethernet; }
//! state parse_port_metadata { pkt.advance(PORT_METADATA_SIZE); transition parse_ethernet; }
//! ```
//!
//! TNA keeps the resubmit header in the metadata; here it is a header of the headers struct
//! (the model's parser extracts headers only), so the second pass sets it invalid before the
//! deparser emits the packet.

use super::*;

/// One `if (md.resubmit_type == T) { r.emit([hdr.h]); }` of the ingress deparser.
#[derive(Clone, Debug)]
pub(super) struct ResubmitIdiom {
    resubmit_type: u128,
    header: Option<String>,
}

/// Whether `e` names the ingress deparser metadata's `resubmit_type`.
pub(super) fn is_resubmit_type(c: &Ctl<'_>, e: &Expr) -> bool {
    let Some(p) = e.path() else { return false };
    let comps: Vec<&str> = p.split('.').collect();
    comps.len() == 2
        && comps[1] == "resubmit_type"
        && matches!(c.params.get(comps[0]), Some(ParamKind::Intrinsic(pre, ..))
            if *pre == "ig_intr_dprsr_md")
}

impl<'a> Lowerer<'a> {
    /// Collects the resubmit idioms of the ingress deparser `d`.
    pub(super) fn scan_resubmits(&mut self, d: &'a Decl) -> R<()> {
        let c = self.ctl(d, Gress::Ingress)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        for st in apply {
            if let Some(r) = self.resubmit_idiom(&c, st)? {
                self.resubmits.push(r);
            }
        }
        Ok(())
    }

    /// The resubmit type and header of a deparser statement that is the resubmit idiom.
    pub(super) fn resubmit_idiom(&mut self, c: &Ctl<'a>, st: &Stmt) -> R<Option<ResubmitIdiom>> {
        let StmtKind::If(cond, then, els) = &st.kind else {
            return Ok(None);
        };
        let ExprKind::Binary(BinOp::Eq, x, t) = &cond.kind else {
            return Ok(None);
        };
        if !is_resubmit_type(c, x) || !els.is_empty() || then.len() != 1 {
            return Ok(None);
        }
        let StmtKind::Call(e) = &then[0].kind else {
            return Ok(None);
        };
        let Some((obj, "emit", args)) = method_call(e) else {
            return Ok(None);
        };
        let is_resubmit = obj.path().is_some_and(
            |o| matches!(c.locals.get(&o), Some(Local::Extern(_, k)) if k == "Resubmit"),
        );
        if !is_resubmit {
            return Ok(None);
        }
        let (t, _) = self.const_value(t, &c.locals)?;
        let header = match args {
            [] => None,
            [h] => {
                let ir = self.header_of(c, h)?;
                if self.instances.values().any(|i| i.ir == ir && i.builtin) {
                    return self.err(
                        h.span,
                        format!("the resubmit header `{}` is one of t2sim's built-in headers; a resubmit header is a header of the program's own", expr_text(h)),
                    );
                }
                Some(ir)
            }
            _ => {
                return self.err(
                    e.span,
                    "`emit` of a Resubmit takes nothing, or the resubmit header",
                )
            }
        };
        Ok(Some(ResubmitIdiom {
            resubmit_type: t,
            header,
        }))
    }

    /// The primitive of `ig_dprsr_md.resubmit_type = rhs` in an action.
    pub(super) fn resubmit_for(&mut self, c: &Ctl<'a>, rhs: &Expr, span: Span) -> R<Primitive> {
        if c.gress != Gress::Ingress {
            return self.err(span, "resubmit is the ingress deparser's: an egress or ghost action cannot set `resubmit_type`");
        }
        let Ok((t, _)) = self.const_value(rhs, &c.locals) else {
            return self.err(rhs.span, "resubmit_type is set to a constant");
        };
        let Some(r) = self.resubmits.iter().find(|r| r.resubmit_type == t) else {
            return self.err(
                span,
                format!(
                    "resubmit type {t}: the ingress deparser has no `if (...resubmit_type == {t}) \
                     resubmit.emit(...);` for it"
                ),
            );
        };
        Ok(Primitive::Resubmit {
            header: r.header.clone(),
        })
    }
}

impl<'a> Lowerer<'a> {
    /// The states a state that extracts the intrinsic metadata transitions to.
    pub(super) fn states_after_intrinsic(&self, c: &Ctl<'a>, states: &[State]) -> Vec<String> {
        let mut out = Vec::new();
        for s in states {
            let extracts_intrinsic = s.body.iter().any(|st| match &st.kind {
                StmtKind::Call(e) => match method_call(e) {
                    Some((_, "extract", [a])) => a.path().is_some_and(|p| {
                        matches!(c.params.get(&p), Some(ParamKind::Intrinsic(..)))
                    }),
                    _ => false,
                },
                _ => false,
            });
            if !extracts_intrinsic {
                continue;
            }
            match &s.transition {
                Some(Transition::Goto(n, _)) => out.push(n.clone()),
                Some(Transition::Select { cases, .. }) => {
                    out.extend(cases.iter().map(|k| k.next.clone()))
                }
                None => {}
            }
        }
        out
    }
}
