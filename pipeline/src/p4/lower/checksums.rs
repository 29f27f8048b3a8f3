//! TNA's `Checksum` extern: in a parser, `add`, `subtract`, `subtract_all_and_deposit`,
//! `verify()` and `get()` as operations of a parser checksum engine
//! (`ir::ParserChecksum`); in a deparser, `f = ck.update({...})` (optionally under an `if`
//! on a 1-bit field or a header's validity) as a deparser checksum unit
//! (`ir::ChecksumUpdate`). A list is flattened into fields and constant bits in order: a
//! header gives its fields, `a ++ b` its parts, a cast to a wider `bit<N>` zeros in front.

use super::*;

impl<'a> Lowerer<'a> {
    /// The `Checksum` instance `obj` names in `c`, if it names one.
    fn checksum_instance(c: &Ctl<'a>, obj: &Expr) -> Option<String> {
        let p = obj.path()?;
        matches!(c.locals.get(&p), Some(Local::Extern(_, e)) if e == "Checksum").then_some(p)
    }

    /// A checksum list (or a single item) as the IR's items, most significant first.
    fn checksum_items(&mut self, c: &Ctl<'a>, e: &Expr) -> R<Vec<ir::ChecksumItem>> {
        let mut out = Vec::new();
        self.push_checksum_items(c, e, &mut out)?;
        Ok(out.into_iter().map(|(item, _)| item).collect())
    }

    fn push_checksum_items(
        &mut self,
        c: &Ctl<'a>,
        e: &Expr,
        out: &mut Vec<(ir::ChecksumItem, u32)>,
    ) -> R<()> {
        match &e.kind {
            ExprKind::List(items) => {
                for i in items {
                    self.push_checksum_items(c, i, out)?;
                }
            }
            ExprKind::Binary(BinOp::Concat, a, b) => {
                self.push_checksum_items(c, a, out)?;
                self.push_checksum_items(c, b, out)?;
            }
            ExprKind::Int {
                value,
                width: Some((bits, _)),
            } => out.push((
                ir::ChecksumItem::Const {
                    value: *value as u64,
                    bits: *bits,
                },
                *bits,
            )),
            ExprKind::Int { width: None, .. } => {
                return self.err(
                    e.span,
                    "a constant in a checksum list needs a width (`8w0`): the list is summed as \
                     a string of bits",
                )
            }
            ExprKind::Cast(ty, inner) => {
                let Some(to) = self.resolve(ty, e.span)?.width() else {
                    return self.err(e.span, "a checksum list casts to a bit<N> only");
                };
                let mut inner_items = Vec::new();
                self.push_checksum_items(c, inner, &mut inner_items)?;
                let from: u32 = inner_items.iter().map(|(_, bits)| bits).sum();
                if to < from {
                    return self.err(
                        e.span,
                        format!(
                            "a cast from {from} to {to} bits in a checksum list: a checksum \
                             sums whole fields (name a slice instead)"
                        ),
                    );
                }
                if to > from {
                    out.push((
                        ir::ChecksumItem::Const {
                            value: 0,
                            bits: to - from,
                        },
                        to - from,
                    ));
                }
                out.extend(inner_items);
            }
            _ => {
                let p = e.path().unwrap_or_default();
                let comps: Vec<&str> = p.split('.').collect();
                if let (Some(ParamKind::Headers(_)), 2) = (c.params.get(comps[0]), comps.len()) {
                    let h = self.header_of(c, e)?;
                    let inst = self
                        .instances
                        .values()
                        .find(|i| i.ir == h)
                        .cloned()
                        .expect("header_of declares the instance");
                    for (_, name, bits) in &inst.fields {
                        out.push((ir::ChecksumItem::Field(name.clone()), *bits));
                    }
                    return Ok(());
                }
                let f = self.field(c, e)?;
                out.push((ir::ChecksumItem::Field(f.ir), f.bits));
            }
        }
        Ok(())
    }

    /// A parser statement that calls a `Checksum` method (`ck.add(...)`), as an engine
    /// operation after `after` of the state's extracts.
    pub(super) fn parser_checksum_call(
        &mut self,
        c: &Ctl<'a>,
        e: &Expr,
        after: usize,
    ) -> R<Option<ir::ParserChecksum>> {
        let Some((obj, m, args)) = method_call(e) else {
            return Ok(None);
        };
        let Some(engine) = Self::checksum_instance(c, obj) else {
            return Ok(None);
        };
        self.claim_engine(c, &engine, e.span)?;
        let op = match (m, args) {
            ("add", [l]) => ir::ChecksumOp::Add(self.checksum_items(c, l)?),
            ("subtract", [l]) => ir::ChecksumOp::Subtract(self.checksum_items(c, l)?),
            ("subtract_all_and_deposit", [f]) => ir::ChecksumOp::Deposit(self.field(c, f)?.ir),
            _ => {
                return self.err(
                    e.span,
                    format!(
                        "`{engine}.{m}` with {} arguments: a parser's Checksum has add(list), \
                         subtract(list), subtract_all_and_deposit(field), verify() and get()",
                        args.len()
                    ),
                )
            }
        };
        Ok(Some(ir::ParserChecksum {
            engine,
            after_extracts: after as u32,
            op,
        }))
    }

    /// A parser assignment `f = ck.verify()` or `f = ck.get()`, as an engine operation.
    pub(super) fn parser_checksum_assign(
        &mut self,
        c: &Ctl<'a>,
        lhs: &Expr,
        rhs: &Expr,
        after: usize,
    ) -> R<Option<ir::ParserChecksum>> {
        // `(bit<1>)ck.verify()`, and `ck.verify() || f` / `f | (bit<1>)ck.verify()` with `f`
        // the field written: the error ORed into it.
        fn uncast(e: &Expr) -> &Expr {
            match &e.kind {
                ExprKind::Cast(_, inner) => uncast(inner),
                _ => e,
            }
        }
        let mut call = uncast(rhs);
        let mut or = false;
        if let ExprKind::Binary(BinOp::Or | BinOp::LOr, a, b) = &call.kind {
            let same = |x: &Expr| uncast(x).path().is_some() && uncast(x).path() == lhs.path();
            let (a, b) = (uncast(a), uncast(b));
            if same(b) {
                call = a;
                or = true;
            } else if same(a) {
                call = b;
                or = true;
            }
        }
        let Some((obj, m, args)) = method_call(call) else {
            return Ok(None);
        };
        let Some(engine) = Self::checksum_instance(c, obj) else {
            return Ok(None);
        };
        self.claim_engine(c, &engine, rhs.span)?;
        let dst = self.field(c, lhs)?.ir;
        let op = match (m, args) {
            ("verify", []) if or => ir::ChecksumOp::VerifyOr(dst),
            ("verify", []) => ir::ChecksumOp::Verify(dst),
            ("get", []) => ir::ChecksumOp::Get(dst),
            _ => {
                return self.err(
                    rhs.span,
                    format!("`{engine}.{m}`: a parser assigns a Checksum's verify() or get()"),
                )
            }
        };
        Ok(Some(ir::ParserChecksum {
            engine,
            after_extracts: after as u32,
            op,
        }))
    }

    /// Takes a checksum engine of `c`'s parser for `engine` (Tofino2's parser has 5).
    fn claim_engine(&mut self, c: &Ctl<'a>, engine: &str, span: Span) -> R<()> {
        let engines = &mut self.checksum_engines[(c.gress == Gress::Egress) as usize];
        if !engines.iter().any(|e| e == engine) {
            engines.push(engine.to_string());
        }
        let n = engines.len();
        if n > crate::hw::checksum::PARSER_ENGINES {
            return self.err(
                span,
                format!(
                    "`{engine}` would be the parser's checksum engine number {n}; Tofino2's \
                     parser has {}",
                    crate::hw::checksum::PARSER_ENGINES
                ),
            );
        }
        Ok(())
    }

    /// A deparser statement that is a checksum update: `f = ck.update(list)` (or
    /// `update(list, zeros_as_ones)`), alone or as the only statement of an `if` on a 1-bit
    /// field (`== 1` or bare) or on a header's `isValid()`.
    pub(super) fn deparser_checksum(
        &mut self,
        c: &Ctl<'a>,
        st: &Stmt,
    ) -> R<Option<ir::ChecksumUpdate>> {
        let (assign, when) = match &st.kind {
            StmtKind::Assign(..) => (st, None),
            StmtKind::If(cond, then, els) if els.is_empty() && then.len() == 1 => {
                if !matches!(&then[0].kind, StmtKind::Assign(_, rhs) if self.is_checksum_update(c, rhs))
                {
                    return Ok(None);
                }
                (&then[0], Some(self.checksum_condition(c, cond)?))
            }
            _ => return Ok(None),
        };
        let StmtKind::Assign(lhs, rhs) = &assign.kind else {
            return Ok(None);
        };
        if !self.is_checksum_update(c, rhs) {
            return Ok(None);
        }
        let (_, _, args) = method_call(rhs).expect("an update call");
        let (list, zeros_as_ones) = match args {
            [l] => (l, false),
            [l, z] => (l, self.const_value(z, &c.locals)?.0 != 0),
            _ => {
                return self.err(
                    rhs.span,
                    "`update` takes a list, and optionally whether a zero sum is written as \
                     0xffff",
                )
            }
        };
        let dst = self.field(c, lhs)?;
        if dst.bits != 16 {
            return self.err(
                lhs.span,
                format!(
                    "a checksum is 16 bits; `{}` is {}",
                    expr_text(lhs),
                    dst.bits
                ),
            );
        }
        Ok(Some(ir::ChecksumUpdate {
            gress: c.gress.name().to_string(),
            dst: dst.ir,
            items: self.checksum_items(c, list)?,
            when,
            zeros_as_ones,
        }))
    }

    fn is_checksum_update(&self, c: &Ctl<'a>, rhs: &Expr) -> bool {
        matches!(method_call(rhs), Some((obj, "update", _)) if Self::checksum_instance(c, obj).is_some())
    }

    /// The 1-bit field a deparser checksum's `if` tests.
    fn checksum_condition(&mut self, c: &Ctl<'a>, cond: &Expr) -> R<String> {
        if let Some((h, "isValid", [])) = method_call(cond) {
            return Ok(format!("{}.$valid", self.header_of(c, h)?));
        }
        let field = match &cond.kind {
            ExprKind::Binary(BinOp::Eq, f, one)
                if matches!(self.const_value(one, &c.locals), Ok((1, _))) =>
            {
                self.field(c, f)?
            }
            _ => self.field(c, cond)?,
        };
        if field.bits != 1 {
            return self.err(
                cond.span,
                "a deparser's checksum runs under a 1-bit field (`if (m.f == 1)`) or a header's \
                 `isValid()`",
            );
        }
        Ok(field.ir)
    }
}
