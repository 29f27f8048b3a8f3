//! `Digest<T>`, as TNA programs write it: an ingress action sets
//! `ig_dprsr_md.digest_type = N`, and the ingress deparser has
//!
//! ```p4
//! Digest<learn_t>() learn;
//! apply {
//!     if (ig_dprsr_md.digest_type == N) { learn.pack({hdr.ipv4.src_addr, meta.port}); }
//!     pkt.emit(hdr);
//! }
//! ```
//!
//! Lowered to an IR digest (`ir::Digest`) named `IngressDeparser.learn` of type N whose
//! fields are the list's, named after `learn_t`'s fields (which must match them in number
//! and width); the action is a `set` of the intrinsic field `ig_intr_dprsr_md.digest_type`,
//! which the chip's ingress deparser reads as the packet leaves, recording the fields'
//! values then (`src/chip/digests.rs`). An action setting a type the deparser has no
//! `pack` for is an error, as is a digest in the egress deparser (T2NA's egress deparser
//! metadata has no `digest_type`).

use super::*;

/// Whether `e` names the ingress deparser metadata's `digest_type`.
pub(super) fn is_digest_type(c: &Ctl<'_>, e: &Expr) -> bool {
    let Some(p) = e.path() else { return false };
    let comps: Vec<&str> = p.split('.').collect();
    comps.len() == 2
        && comps[1] == "digest_type"
        && matches!(c.params.get(comps[0]), Some(ParamKind::Intrinsic(pre, ..))
            if *pre == "ig_intr_dprsr_md")
}

/// The IR field an action writes to ask for a digest.
const DIGEST_TYPE_FIELD: &str = "ig_intr_dprsr_md.digest_type";

impl<'a> Lowerer<'a> {
    /// Collects the digests the ingress deparser `d` packs into the IR's `digests`
    /// (`ingress`: the ingress control, whose names of the metadata the digests read).
    pub(super) fn scan_digests(&mut self, d: &'a Decl, ingress: &'a Decl) -> R<()> {
        let c = self.ctl(d, Gress::Ingress)?;
        let ig = self.ctl(ingress, Gress::Ingress)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        for st in apply {
            if let Some((digest, span)) = self.digest_idiom(&c, st, &ig)? {
                if let Some(o) = self
                    .prog
                    .digests
                    .iter()
                    .find(|o| o.digest_type == digest.digest_type)
                {
                    return self.err(
                        span,
                        format!(
                            "digest type {} is packed twice (by `{}` already); a packet's digest_type picks one digest",
                            digest.digest_type, o.name
                        ),
                    );
                }
                self.spans.push((digest.name.clone(), span));
                self.prog.digests.push(digest);
            }
        }
        Ok(())
    }

    /// Refuses a digest in an egress deparser.
    pub(super) fn refuse_egress_digest(&mut self, d: &'a Decl) -> R<()> {
        let c = self.ctl(d, Gress::Egress)?;
        let first = c
            .locals
            .values()
            .filter_map(|l| match l {
                Local::Extern(decl, k) if k == "Digest" => Some(decl.span),
                _ => None,
            })
            .min_by_key(|s| (s.file, s.line, s.col));
        if let Some(span) = first {
            return self.err(
                span,
                "a Digest in the egress deparser: T2NA's egress deparser metadata has no \
                 `digest_type`, so only the ingress deparser sends digests",
            );
        }
        Ok(())
    }

    /// The digest of a deparser statement that is the digest idiom, and where it stands.
    /// A field of the user metadata is named as the ingress control `ig` names it (the IR
    /// names metadata by the control's parameter).
    fn digest_idiom(
        &mut self,
        c: &Ctl<'a>,
        st: &Stmt,
        ig: &Ctl<'a>,
    ) -> R<Option<(ir::Digest, Span)>> {
        let StmtKind::If(cond, then, els) = &st.kind else {
            return Ok(None);
        };
        let ExprKind::Binary(BinOp::Eq, x, t) = &cond.kind else {
            return Ok(None);
        };
        if !is_digest_type(c, x) || !els.is_empty() || then.len() != 1 {
            return Ok(None);
        }
        let StmtKind::Call(e) = &then[0].kind else {
            return Ok(None);
        };
        let Some((obj, "pack", args)) = method_call(e) else {
            return Ok(None);
        };
        let Some((inst, decl)) = obj.path().and_then(|o| match c.locals.get(&o) {
            Some(Local::Extern(d, k)) if k == "Digest" => Some((o, *d)),
            _ => None,
        }) else {
            return Ok(None);
        };
        let (digest_type, _) = self.const_value(t, &c.locals)?;
        if !(1..=7).contains(&digest_type) {
            return self.err(
                t.span,
                format!("digest type {digest_type}: `digest_type` is 3 bits and 0 sends no digest, so a digest's type is 1 to 7"),
            );
        }
        let names = self.digest_struct(decl)?;
        let [arg] = args else {
            return self.err(
                e.span,
                "`pack` takes one argument, the list of the digest's fields (`{hdr.h.f, meta.g}`)",
            );
        };
        let ExprKind::List(items) = &arg.kind else {
            return self.err(
                arg.span,
                "`pack` takes the list of the digest's fields (`{hdr.h.f, meta.g}`)",
            );
        };
        if items.len() != names.len() {
            return self.err(
                arg.span,
                format!(
                    "the digest's struct has {} fields but `pack` is given {}",
                    names.len(),
                    items.len()
                ),
            );
        }
        let mut fields = Vec::new();
        for (item, (name, bits)) in items.iter().zip(&names) {
            let f = match as_ingress_names(c, ig, item) {
                Some((ig, renamed)) => self.field(ig, &renamed)?,
                None => self.field(c, item)?,
            };
            if f.bits != *bits {
                return self.err(
                    item.span,
                    format!(
                        "width mismatch: `{}` is bit<{}> but the digest's field `{name}` is bit<{bits}>",
                        expr_text(item),
                        f.bits
                    ),
                );
            }
            if f.bits > 64 {
                return self.err(item.span, "a digest field is at most 64 bits here");
            }
            fields.push(ir::DigestField {
                name: name.clone(),
                field: f.ir,
            });
        }
        Ok(Some((
            ir::Digest {
                name: format!("{}.{inst}", c.name),
                digest_type: digest_type as u8,
                fields,
            },
            st.span,
        )))
    }

    /// The fields (name, width) of the struct `T` of a `Digest<T>` declaration.
    fn digest_struct(&mut self, decl: &'a Decl) -> R<Vec<(String, u32)>> {
        let DeclKind::Instance {
            ty: Type::Named(_, targs),
            ..
        } = &decl.kind
        else {
            return self.err(decl.span, "a Digest is declared `Digest<T>() name;`");
        };
        let Some(Ty::Struct(s)) = targs
            .first()
            .map(|t| self.resolve(t, decl.span))
            .transpose()?
        else {
            return self.err(
                decl.span,
                "a Digest's type argument is the struct of its fields",
            );
        };
        let fs = self.structs.get(&s).copied().unwrap_or(&[]);
        let mut out = Vec::new();
        for f in fs {
            let Some(w) = self.resolve(&f.ty, f.span)?.width() else {
                return self.err(f.span, "a digest's field is a bit<N>");
            };
            out.push((f.name.clone(), w));
        }
        Ok(out)
    }

    /// The primitive of `ig_dprsr_md.digest_type = rhs` in an action: the `set` the
    /// ingress deparser reads, once the deparser packs a digest of that type.
    pub(super) fn digest_type_for(&mut self, c: &Ctl<'a>, rhs: &Expr, span: Span) -> R<Primitive> {
        let Ok((t, _)) = self.const_value(rhs, &c.locals) else {
            return self.err(rhs.span, "digest_type is set to a constant");
        };
        if !self.prog.digests.iter().any(|d| d.digest_type as u128 == t) {
            return self.err(
                span,
                format!(
                    "digest type {t}: the ingress deparser has no `if (...digest_type == {t}) \
                     digest.pack({{...}});` for it"
                ),
            );
        }
        Ok(Primitive::set(DIGEST_TYPE_FIELD, Operand::Const(t as u64)))
    }
}

/// Whether deparser statement `st` is the digest idiom's `if` (which `scan_digests` has
/// lowered).
pub(super) fn is_digest_idiom(c: &Ctl<'_>, st: &Stmt) -> bool {
    let StmtKind::If(cond, then, els) = &st.kind else {
        return false;
    };
    let ExprKind::Binary(BinOp::Eq, x, _) = &cond.kind else {
        return false;
    };
    if !is_digest_type(c, x) || !els.is_empty() || then.len() != 1 {
        return false;
    }
    let StmtKind::Call(e) = &then[0].kind else {
        return false;
    };
    matches!(method_call(e), Some((obj, "pack", _))
        if obj.path().is_some_and(|o| matches!(c.locals.get(&o), Some(Local::Extern(_, k)) if k == "Digest")))
}

/// `e`, a field of the deparser `c`'s user metadata, as the ingress control `ig` names it
/// (its parameter of the same struct type), with that control; `None` for other fields.
fn as_ingress_names<'c, 'a>(c: &Ctl<'a>, ig: &'c Ctl<'a>, e: &Expr) -> Option<(&'c Ctl<'a>, Expr)> {
    let path = e.path()?;
    let root = path.split('.').next()?;
    let Some(ParamKind::Meta(sty)) = c.params.get(root) else {
        return None;
    };
    let (name, _) = ig
        .params
        .iter()
        .find(|(_, k)| matches!(k, ParamKind::Meta(s) if s == sty))?;
    Some((ig, renamed_root(e, name)))
}

/// `e` (a name or a member path) with its first name replaced by `name`.
fn renamed_root(e: &Expr, name: &str) -> Expr {
    let kind = match &e.kind {
        ExprKind::Name(_) => ExprKind::Name(name.to_string()),
        ExprKind::Member(b, m) => ExprKind::Member(Box::new(renamed_root(b, name)), m.clone()),
        ExprKind::Slice(b, hi, lo) => {
            ExprKind::Slice(Box::new(renamed_root(b, name)), hi.clone(), lo.clone())
        }
        k => k.clone(),
    };
    Expr { kind, span: e.span }
}
